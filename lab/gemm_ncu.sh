#!/bin/bash
# Where a GEMM's cycles go (lab/gemm_ncu_calls.py: fp8 with fast accumulation and with fp32 accumulation on the
# same launch shape, or bf16; --peer adds cuBLAS's kernel of the same problem): time, tensor-pipe use, issue slots,
# FMA-pipe instructions, warp stalls, L2 bytes and throughput, DRAM bytes read (a lever on the clock under the power
# cap: git history of bench/NOTES.md, thirty-second session). Clocks left alone. git history of bench/NOTES.md,
# "Hopper GEMM, eighth session", call 9; ninth session, call 6 (--shape 512x1024x8192 --tune "": the route's
# 64 x 64 tiles); eleventh session (--dtype bf16 --peer: L2 -> SM bytes against cuBLAS's).
#   HK_LIB=build/libhk.so.1 OUT=/tmp/ncu bash lab/gemm_ncu.sh [gemm_ncu_calls.py arguments]
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-/tmp/hk-ncu}
mkdir -p "$OUT"
METRICS=smsp__inst_executed.sum,smsp__inst_executed_pipe_fma.sum,lts__t_bytes.sum,lts__t_bytes.sum.per_second
METRICS=$METRICS,dram__bytes_read.sum
timeout 400 ncu --clock-control none --profile-from-start off --section SpeedOfLight --section ComputeWorkloadAnalysis \
    --section SchedulerStats --section WarpStateStats --section MemoryWorkloadAnalysis --section LaunchStats \
    --metrics "$METRICS" \
    python3 lab/gemm_ncu_calls.py --lib "${HK_LIB:-build/libhk.so.1}" "$@" > "$OUT/ncu_gemm.txt" 2> "$OUT/ncu_gemm.err"
echo "ncu: rc=$?"
grep -E '^  [a-z_]+.*\(|Duration|SM Frequency|Elapsed Cycles|Compute \(SM\)|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|inst_executed|highest-utilized|stalled waiting|L2 Cache Throughput|DRAM Throughput|L2 Hit Rate|lts__t_bytes|dram__bytes_read|Grid Size|Cluster Size|Registers Per' \
    "$OUT/ncu_gemm.txt"
