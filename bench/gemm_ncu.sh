#!/bin/bash
# Where the fp8 GEMM's cycles go with fast accumulation and with fp32 accumulation (bench/gemm_ncu_calls.py: one
# kernel each, the same launch shape): time, tensor-pipe use, issue slots, FMA-pipe instructions and warp stalls.
# Clocks left alone (METHOD.md). bench/NOTES.md, "Hopper GEMM, eighth session", call 9; ninth session, call 6
# (--shape 512x1024x8192 --tune "": the route's 64 x 64 tiles).
#   HK_LIB=build/libhk.so.1 OUT=/tmp/ncu bash bench/gemm_ncu.sh [gemm_ncu_calls.py arguments]
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-/tmp/hk-ncu}
mkdir -p "$OUT"
timeout 400 ncu --clock-control none --profile-from-start off --section SpeedOfLight --section ComputeWorkloadAnalysis \
    --section SchedulerStats --section WarpStateStats --metrics smsp__inst_executed.sum,smsp__inst_executed_pipe_fma.sum \
    python3 bench/gemm_ncu_calls.py --lib "${HK_LIB:-build/libhk.so.1}" "$@" > "$OUT/ncu_gemm.txt" 2> "$OUT/ncu_gemm.err"
echo "ncu: rc=$?"
grep -E '^  hk_gemm|Duration|SM Frequency|Elapsed Cycles|Compute \(SM\)|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|inst_executed|highest-utilized|stalled waiting' \
    "$OUT/ncu_gemm.txt"
