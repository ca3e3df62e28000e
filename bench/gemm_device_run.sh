#!/bin/sh
# One device call for the Hopper GEMM: SASS facts, correctness of every launch shape, timing vs cuBLAS
# (harness table), then libhk through ctypes vs torch (bench/gemm_bench.py --sweep) when a library is carried.
# Carry .carry/gemm (gemm_harness built here with the nvcc line in bench/gemm_harness.cu, libhk.so.1 from
# a build here); a harness that does not start there is rebuilt with that machine's nvcc.
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp}
H=.carry/gemm/gemm_harness
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv,noheader
if ! $H probe; then
  echo "rebuilding harness"
  H=/tmp/gemm_harness
  nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -Ikernels bench/gemm_harness.cu \
    -lcublas -lcublasLt -lcuda -o $H || exit 1
fi
cuobjdump --dump-sass $H > /tmp/sass.txt 2>&1
awk '/Function :/{f=$3} /HGMMA|QGMMA/{g[f]++} /LDL|STL/{l[f]++} /MEMBAR/{b[f]++} END{for (k in g) if (k ~ /hk_gemm/) printf "sass %-32s gmma=%d ldl/stl=%d membar=%d\n", k, g[k], l[k]+0, b[k]+0}' /tmp/sass.txt | sort > $OUT/sass_summary.txt
wc -l < $OUT/sass_summary.txt; awk '{print $3, $4, $5}' $OUT/sass_summary.txt | sort | uniq -c
grep -o 'HGMMA\.[^ ]*\|QGMMA\.[^ ]*' /tmp/sass.txt | sort | uniq -c | head
timeout 90 $H quick > $OUT/quick.log 2>&1; rc=$?
grep -v " ok$" $OUT/quick.log | head -40; echo "checks rc=$rc, $(grep -c ' ok$' $OUT/quick.log) ok"
[ $rc = 124 ] && exit 1
timeout 120 $H bench > $OUT/bench.log 2>&1; echo "bench rc=$?"
grep -v "^check.* ok$" $OUT/bench.log | grep -v "^$"
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader
if [ -f .carry/gemm/libhk.so.1 ]; then
  HK_LIB=.carry/gemm/libhk.so.1 PYTHONUNBUFFERED=1 timeout 100 python3 bench/gemm_bench.py --reps 20 --sweep \
    > $OUT/libhk.log 2>&1; echo "gemm_bench rc=$?"
  grep -v "ok$" $OUT/libhk.log | tail -80
fi
