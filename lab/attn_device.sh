#!/bin/bash
# One device call for the Hopper attention forward: the prebuilt library in $HKB (libhk.so.1, tests/, the cubin:
# built on the host with nvcc and carried, which saves the minutes gemm.cu takes; without it, built here),
# tests/test_attention on the CUDA context, lab/attn_check.py (window,
# softcap, head_dim_v, 192/256, packed QKV, ragged varlen against float64 PyTorch), the SASS census of the
# tiled kernels, bench/peers.py's attention rows beside cuDNN, then compute-sanitizer memcheck and racecheck over
# test_attention. Logs land flat in $OUT; a summary is printed last.
#   carry: .carry (the cmocka .debs), and the tree with $HKB inside it
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-/tmp/hk-out}
HKB=${HKB:-.hkb}
mkdir -p "$OUT" /tmp/cm
for f in .carry/*.deb; do dpkg -x "$f" /tmp/cm; done
export LD_LIBRARY_PATH=/tmp/cm/usr/lib/x86_64-linux-gnu PYTHONUNBUFFERED=1 HK_TEST_CONTEXTS=cuda/sm_90a
export PKG_CONFIG_PATH=/tmp/cm/usr/lib/x86_64-linux-gnu/pkgconfig PKG_CONFIG_SYSROOT_DIR=/tmp/cm
summary=()
step() { # step NAME TIMEOUT LOG command...
    local name=$1 limit=$2 log=$3 t0=$SECONDS
    shift 3
    timeout "$limit" "$@" > "$OUT/$log" 2>&1
    local rc=$?
    summary+=("$name: rc=$rc ($((SECONDS - t0)) s)")
    return $rc
}
if [ ! -e "$HKB/libhk.so.1" ]; then
    B=/tmp/hk-build HKB=/tmp/hkb
    step build 420 build.log bash -c "meson setup $B -Damd_kernels=disabled --buildtype=release && ninja -C $B" ||
        { tail -30 "$OUT/build.log"; exit 1; }
    mkdir -p $HKB/tests && cp -L $B/libhk.so.1 $HKB/ && cp $B/tests/test_attention $HKB/tests/ &&
        cp $B/kernels/hopper/attn_fwd.sm_90a.cubin $HKB/
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader | tee "$OUT/gpu.txt"
for k in d64_64 d128_128 d192_128 d256_256; do
    printf '%s: ' "$k"
    cuobjdump -sass -fun "hk_attn_fwd_bf16_$k" "$HKB/attn_fwd.sm_90a.cubin" |
        grep -oE "HGMMA\.[0-9A-Zx.]+|LDL|STL|UTMALDG" | sort | uniq -c | tr '\n' ' '
    echo
done | tee "$OUT/sass.txt"
step test_attention 150 test.log "$HKB/tests/test_attention"
if [ $? -eq 124 ]; then # a hang: the rest would hang too
    tail -40 "$OUT/test.log"; printf '%s\n' "${summary[@]}"; exit 1
fi
step attn_check 150 check.log python3 lab/attn_check.py --lib "$HKB/libhk.so.1"
[ -n "${NO_BENCH:-}" ] || step "peers attn" 180 bench.log python3 bench/peers.py --lib "$HKB/libhk.so.1" --only attn \
    --reps "${REPS:-20}" --warmup 3 --out /tmp/peers
for tool in ${SANITIZE:-memcheck racecheck}; do
    step "sanitizer $tool" 120 "san-$tool.log" compute-sanitizer --tool "$tool" --error-exitcode 99 --print-limit 20 \
        "$HKB/tests/test_attention"
done
grep -E "FAIL|passed|failed" "$OUT/test.log" | head -30
grep -vE "^ok  " "$OUT/check.log" | head -30
grep -E "^  (attn|check attn)|FAIL" "$OUT/bench.log" 2>/dev/null
grep -hE "ERROR SUMMARY|RACECHECK SUMMARY|passed" "$OUT"/san-*.log 2>/dev/null
printf '%s\n' "${summary[@]}"
