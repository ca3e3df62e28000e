#!/bin/bash
# The integrated check on an H200 in one device call: build libhk (nvcc there, no clang: AMD objects skipped),
# the whole cmocka suite (CPU, emulator and CUDA contexts), the GPU op tests under compute-sanitizer memcheck
# and racecheck, hk-info, hk-bench, the GEMM peers (torch.matmul, torch._scaled_mm) timed in alternation, the
# memory-bound peers (bench/peers.py: torch.compile, eager, copy) and, with NCU=1, ncu counters of the rotary
# and LN-backward kernels. Logs land flat in $OUT (8 files at most); a summary is printed last.
#   carry: .carry (libcmocka0 and libcmocka-dev .debs: `apt-get download libcmocka0 libcmocka-dev`)
cd "$(dirname "$0")/.." || exit 1
. lab/device_env.sh
summary=()
step() { # step NAME TIMEOUT LOG command...
    local name=$1 limit=$2 log=$3
    shift 3
    local t0=$SECONDS
    timeout "$limit" "$@" > "$OUT/$log" 2>&1
    local rc=$?
    summary+=("$name: rc=$rc ($((SECONDS - t0)) s)")
    return $rc
}


nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
if ! step build 300 build.log bash -c "meson setup $B --buildtype=release && ninja -C $B"; then
    tail -30 "$OUT/build.log"; printf '%s\n' "${summary[@]}"; exit 1
fi
step "meson test" 240 test.log meson test -C $B --print-errorlogs --num-processes 12
grep -E "^ *[0-9]+/[0-9]+ " "$OUT/test.log" | grep -v " OK " | head -20
# The GPU op tests under the sanitizer, CUDA contexts only (racecheck: shared-memory hazards of the
# memory-bound kernels; the GEMM's shared memory is written by TMA, which racecheck does not model).
: > "$OUT/sanitizer.log"
for run in "memcheck gemm rotary ln_fused cuda_wide" "racecheck rotary ln_fused cuda_wide"; do
    set -- $run
    tool=$1
    shift
    HK_TEST_CONTEXTS=cuda/sm_90a timeout 150 meson test -C $B --print-errorlogs --timeout-multiplier 20 \
        --wrapper "compute-sanitizer --tool $tool --error-exitcode 99 --print-limit 20" "$@" >> "$OUT/sanitizer.log" 2>&1
    summary+=("compute-sanitizer $tool [$*]: rc=$?")
    grep -hE "ERROR SUMMARY|RACECHECK SUMMARY" $B/meson-logs/testlog.txt | sort | uniq -c >> "$OUT/sanitizer.log"
done
step hk-info 30 hk-info.txt $B/tools/hk-info
step hk-bench 120 hk-bench.txt $B/tools/hk-bench
step "gemm peers" 200 gemm-peers.txt python3 bench/gemm_bench.py --lib $B/libhk.so --reps 30 --warmup 5
step "memory-bound peers" 240 peers.log python3 bench/peers.py --lib $B/libhk.so --out /tmp/peers --reps 50 \
    --only rotary,ln_fwd,ln_bwd
# NCU=1: hardware counters of the rotary and LN-backward kernels (one call each per shape and check)
if [ -n "${NCU:-}" ]; then
    step ncu 150 ncu.txt ncu --clock-control none -k regex:"hk_ln_bwd_bf16|hk_rotary_bf16" --launch-count 13 \
        --section SpeedOfLight --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis \
        --section SchedulerStats --section LaunchStats \
        python3 bench/peers.py --lib $B/libhk.so --out /tmp/peers-ncu --reps 1 --warmup 0 --libhk-only --only rotary,ln_bwd
fi

cat "$OUT/hk-bench.txt"
grep -E "^  gemm|passed|FAIL" "$OUT/gemm-peers.txt"
grep -E "^  (copy|rotary|ln_)|FAIL" "$OUT/peers.log"
grep -E "SUMMARY" "$OUT/sanitizer.log"
grep -E "^(Ok|Fail|Skipped|Timeout):" "$OUT/test.log"
printf '%s\n' "${summary[@]}"
