#!/bin/bash
# The integrated check on an H200 in one device call: build libhk (nvcc there, no clang: AMD objects skipped),
# the whole cmocka suite (CPU, emulator and CUDA contexts), the GEMM and memory-bound GPU tests under
# compute-sanitizer memcheck, hk-info, hk-bench, and the GEMM peers (torch.matmul, torch._scaled_mm) timed
# in alternation. Logs land flat in $OUT; a summary is printed last.
#   carry: .carry (libcmocka0 and libcmocka-dev .debs: `apt-get download libcmocka0 libcmocka-dev`)
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-/tmp/hk-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
B=/tmp/hk-build
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

mkdir -p /tmp/cm
for f in .carry/*.deb; do dpkg -x "$f" /tmp/cm; done
export PKG_CONFIG_PATH=/tmp/cm/usr/lib/x86_64-linux-gnu/pkgconfig PKG_CONFIG_SYSROOT_DIR=/tmp/cm
export LD_LIBRARY_PATH=/tmp/cm/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv > "$OUT/gpu.txt" 2>&1
if ! step build 240 build.log bash -c "meson setup $B --buildtype=release && ninja -C $B"; then
    tail -30 "$OUT/build.log"; printf '%s\n' "${summary[@]}"; exit 1
fi
step "meson test" 200 test.log meson test -C $B --print-errorlogs --num-processes 12
grep -E "^ *[0-9]+/[0-9]+ " "$OUT/test.log" | grep -v " OK " | head -20
HK_TEST_CONTEXTS=cuda/sm_90a step "memcheck gemm rotary ln_fused" 120 memcheck.log \
    meson test -C $B --print-errorlogs --timeout-multiplier 20 \
    --wrapper "compute-sanitizer --tool memcheck --error-exitcode 99 --print-limit 20" gemm rotary ln_fused
grep -hE "ERROR SUMMARY" $B/meson-logs/testlog.txt | sort | uniq -c > "$OUT/memcheck-summary.txt"
step hk-info 30 hk-info.txt $B/tools/hk-info
step hk-bench 120 hk-bench.txt $B/tools/hk-bench
step "gemm peers" 200 gemm-peers.txt python3 bench/gemm_bench.py --lib $B/libhk.so --reps 30 --warmup 5

cat "$OUT/hk-bench.txt"
grep -E "^  gemm|passed|FAIL" "$OUT/gemm-peers.txt"
cat "$OUT/memcheck-summary.txt"
grep -E "^(Ok|Fail|Skipped|Timeout):" "$OUT/test.log"
printf '%s\n' "${summary[@]}"
