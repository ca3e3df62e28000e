#!/bin/bash
# One device call for the memory-bound Hopper ops (rotary, dropout+residual+LayerNorm fwd/bwd) on an H200:
# build libhk there (nvcc, no clang: AMD objects off), the GPU op tests under each tuning environment asked
# for, memcheck and racecheck over the defaults, then one bench/peers.py process per argument (each string
# is one invocation's arguments, e.g. "--only ln_bwd --reps 50" "--only rotary --libhk-only").
#   carry: .carry (libcmocka0 and libcmocka-dev .debs)
#   TEST_ENVS="A=x;B=y C=z": extra test passes, one per ';'-separated set of assignments
#   SANITIZERS="memcheck racecheck" (default; empty: none); NO_TESTS=1 skips the op tests
cd "$(dirname "$0")/.." || exit 1
. lab/device_env.sh
summary=()

{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
  rm -rf $B
  meson setup $B --buildtype=release -Damd_kernels=disabled && ninja -C $B
} > "$OUT/build.log" 2>&1
rc=$?
summary+=("build rc=$rc")
if [ $rc != 0 ]; then tail -40 "$OUT/build.log"; printf '%s\n' "${summary[@]}"; exit 1; fi

gpu_tests="rotary ln_fused cuda_wide"
IFS=';' read -ra envs <<< "${TEST_ENVS:-}"
: > "$OUT/test.log"
[ -n "${NO_TESTS:-}" ] && envs=() && summary+=("tests skipped (NO_TESTS)")
for e in ${NO_TESTS:+} "" "${envs[@]}"; do
  [ -n "${NO_TESTS:-}" ] && break
  env $e HK_TEST_CONTEXTS=cuda/sm_90a timeout 120 meson test -C $B --print-errorlogs $gpu_tests >> "$OUT/test.log" 2>&1
  rc=$?
  summary+=("meson test [$e] rc=$rc")
done
for tool in ${SANITIZERS-memcheck racecheck}; do
  HK_TEST_CONTEXTS=cuda/sm_90a timeout 120 meson test -C $B --print-errorlogs --timeout-multiplier 20 \
    --wrapper "compute-sanitizer --tool $tool --error-exitcode 99 --print-limit 20" $gpu_tests >> "$OUT/test.log" 2>&1
  summary+=("compute-sanitizer $tool rc=$?")
done

i=0
for a in "$@"; do
  i=$((i + 1))
  echo "=== peers.py $a" >> "$OUT/peers.log"
  # shellcheck disable=SC2086
  timeout 240 python3 bench/peers.py --lib $B/libhk.so --out /tmp/peers$i $a >> "$OUT/peers.log" 2>&1
  summary+=("peers.py [$a] rc=$?")
  cp /tmp/peers$i/peers.json "$OUT/peers$i.json" 2>/dev/null
done

grep -E "FAIL|ERROR SUMMARY: [1-9]|RACECHECK SUMMARY: [1-9]" "$OUT/test.log" | head -20
grep -E "^===|^  (copy|rotary|ln_)|FAIL|Error" "$OUT/peers.log"
printf '%s\n' "${summary[@]}"
