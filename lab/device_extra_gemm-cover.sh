#!/bin/bash
# Integration-call extra for the gemm-cover branch (run from the repository root on the GPU machine): $F holds the
# carried build, $OUT takes the logs. The new GEMM cubins' resources (ptxas: registers, spills) and the unaligned,
# f16 and f32 rows beside torch.matmul in one process (bench/gemm_bench.py --cover); the test cases themselves run
# with the GPU suites.
set -u
F=${F:?folder of the carried build}
OUT=${OUT:?folder for logs}
summary=()
for f in "$F"/cubins/gemm_any.sm_90a.resources.txt "$F"/cubins/gemm_f16.sm_90a.resources.txt; do
    [ -f "$f" ] || { summary+=("$(basename "$f"): missing"); continue; }
    cp "$f" "$OUT"/
    summary+=("$(basename "$f"): $(grep -c 'spill st/ld 0/0' "$f") of $(grep -c ' regs ' "$f") kernels without spills")
done
HK_LIB="$F"/libhk.so.1 timeout 50 python3 bench/gemm_bench.py --cover --reps 5 --warmup 2 \
    > "$OUT"/gemm_cover_bench.log 2>&1
summary+=("gemm_bench.py --cover: rc $?")
tail -25 "$OUT"/gemm_cover_bench.log
printf '%s\n' "${summary[@]}"
