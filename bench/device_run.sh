#!/bin/bash
# One device call on an H200: build libhk there (nvcc present, no clang: the AMD objects are skipped), run
# the cmocka suite, the GPU op tests again under compute-sanitizer memcheck and racecheck, then
# bench/peers.py. Everything lands flat in $OUT (8 files at most); the summary is printed last.
#   carry: .carry (libcmocka0 and libcmocka-dev .debs, from `apt-get download` on a Debian machine)
#   usage: [QUICK=1] bench/device_run.sh [peers.py args...]     e.g. --only rotary
#   QUICK=1 runs only this backend's op tests (rotary, ln_fused, cuda_wide), without the sanitizer.
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-/tmp/hk-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
B=/tmp/hk-build
summary=()

# cmocka travels as .debs: unpack them aside and point pkg-config and the loader there.
mkdir -p /tmp/cm
for f in .carry/*.deb; do dpkg -x "$f" /tmp/cm; done
export PKG_CONFIG_PATH=/tmp/cm/usr/lib/x86_64-linux-gnu/pkgconfig PKG_CONFIG_SYSROOT_DIR=/tmp/cm
export LD_LIBRARY_PATH=/tmp/cm/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv
  rm -rf $B
  meson setup $B --buildtype=release && ninja -C $B
} > "$OUT/build.log" 2>&1
rc=$?
cat $B/kernels/hopper/*.resources.txt > "$OUT/resources.txt" 2>/dev/null
summary+=("build rc=$rc")
if [ $rc != 0 ]; then
  tail -40 "$OUT/build.log"
  printf '%s\n' "${summary[@]}"
  exit 1
fi

# The whole suite: every op on every context the machine has (CPU, emulator, CUDA).
gpu_tests="rotary ln_fused cuda_wide"
timeout 150 meson test -C $B --print-errorlogs --num-processes 8 ${QUICK:+$gpu_tests} > "$OUT/test.log" 2>&1
rc=$?
summary+=("meson test rc=$rc: $(grep -E '^(Ok|Fail|Timeout|Skipped|Expected Fail|Unexpected Pass):' "$OUT/test.log" | tr -s ' ' | paste -sd' ')")

# The GPU op tests of this backend's ops under the sanitizer's memcheck and racecheck, CUDA contexts only.
: > "$OUT/sanitizer.log"
tools="memcheck racecheck"
[ -n "${QUICK:-}" ] && tools=""
for tool in $tools; do
  HK_TEST_CONTEXTS=cuda/sm_90a timeout 75 meson test -C $B --print-errorlogs --timeout-multiplier 20 \
    --wrapper "compute-sanitizer --tool $tool --error-exitcode 99 --print-limit 20" $gpu_tests >> "$OUT/sanitizer.log" 2>&1
  rc=$?
  summary+=("compute-sanitizer $tool on [$gpu_tests] rc=$rc")
done
grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $B/meson-logs/testlog.txt | sort | uniq -c >> "$OUT/sanitizer.log"

timeout 270 python3 bench/peers.py --lib $B/libhk.so --out "$OUT" "$@" > "$OUT/peers.log" 2>&1
rc=$?
summary+=("peers.py rc=$rc")

grep -E "check .*FAIL|FAILED|Error|error:" "$OUT/peers.log" | head -20
grep -E "^  (copy|rotary|ln_)" "$OUT/peers.log"
grep -E "FAIL|ERROR SUMMARY: [1-9]|RACECHECK SUMMARY: [1-9]" "$OUT/test.log" "$OUT/sanitizer.log" | head -20
printf '%s\n' "${summary[@]}"
