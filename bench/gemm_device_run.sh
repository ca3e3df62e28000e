#!/bin/sh
# One device call for the Hopper GEMM: SASS facts, correctness, timing vs cuBLAS (table last).
# Uses the carried bench/gemm_harness when it runs there, else rebuilds it with the local nvcc.
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv,noheader
if ! ./bench/gemm_harness probe; then
  echo "rebuilding harness"
  nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -Ikernels bench/gemm_harness.cu \
    -lcublas -lcublasLt -lcuda -o bench/gemm_harness || exit 1
fi
cuobjdump --dump-sass bench/gemm_harness > $OUT/sass.txt 2>&1
awk '/Function :/{f=$3} /HGMMA|QGMMA/{g[f]++} /LDL|STL/{l[f]++} END{for (k in g) if (k ~ /hk_gemm/) printf "sass %-28s gmma=%d ldl/stl=%d\n", k, g[k], l[k]+0}' $OUT/sass.txt
grep -m3 -o 'HGMMA[^;]*\|QGMMA[^;]*' $OUT/sass.txt | sort | uniq -c | head
timeout 120 ./bench/gemm_harness quick > $OUT/quick.log 2>&1; rc=$?
grep -v " ok$" $OUT/quick.log; echo "checks rc=$rc"
[ $rc = 124 ] && exit 1
timeout 240 ./bench/gemm_harness bench 2>&1 | tee $OUT/log
