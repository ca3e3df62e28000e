#!/bin/bash
# The walk's group size against where the operands lie (git history of bench/NOTES.md, thirty-second session: groups of 12 gained 12%
# at 1216^3 and lost 1-3% on some rows, in two processes at one placement). Times the library's walk beside other
# groups (HK_BENCH_GROUPS) at five offsets of A and B (HK_BENCH_OFFSET) on the rows that moved most, PROCS processes.
#   H=path/to/gemm_harness OUT=/tmp/walk bash lab/gemm_walk_offsets.sh   (the harness: nvcc line in gemm_harness.cu)
OUT=${OUT:-/tmp/hk-walk}
mkdir -p "$OUT"
ROWS=${ROWS:-1216x1216x1216nt,1216x1216x1216tt,1216x1216x1216tn,1216x1216x1216nn,1216x1216x1216e4m3fastnt,\
1088x1088x1088nt,3328x3328x3328nn,1536x1536x1536tt,1536x1536x1536nn,4096x1024x4096nt,1152x1152x1152tn,\
1152x1152x1152nt,2304x2304x2304nt,8192x2048x2048nt}
for i in $(seq "${PROCS:-2}"); do
    HK_BENCH_ROWS=$ROWS HK_BENCH_DEFAULT_ONLY=1 HK_BENCH_GROUPS=${GROUPS_TRY:-8,16} \
        HK_BENCH_OFFSET=0,4096,1048576,2097280,3145728 timeout 200 "${H:?the harness binary}" bench > "$OUT/walk$i.txt" 2>&1
    echo "process $i: rc=$?"
done
grep -h "^offset\|^row hk" "$OUT"/walk*.txt
