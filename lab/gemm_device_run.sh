#!/bin/sh
# One device call for the Hopper GEMM: SASS facts, correctness of every launch shape, ncu profiles of the
# default kernels against cuBLAS's (PROFILE=1), timing vs cuBLAS (harness table), then libhk through ctypes vs
# torch (bench/gemm_bench.py --sweep, or GEMM_BENCH) when a library is carried (LIBHK=1).
# CARRY (default: .carry/gemm under the tree this script sits in) holds gemm_harness, built with the nvcc line
# in lab/gemm_harness.cu, and libhk.so.1 from a build here; a harness that does not start there is rebuilt
# with that machine's nvcc. HK_CHECK_SHAPES (e.g. P144,M64N64) limits the checks to those shapes' kernels,
# HK_BENCH_ROWS (e.g. 1152x1152x1152nt,1536x1536x1536nn) the timed rows; LIBHK=checks runs only gemm_bench.py's
# correctness checks. ROOT: the source tree (default: the one this script sits in).
ROOT=${ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$ROOT"
OUT=${OUT:-/tmp}
CARRY=${CARRY:-$ROOT/.carry/gemm}
H=$CARRY/gemm_harness
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv,noheader
if ! $H probe; then
  echo "rebuilding harness"
  H=/tmp/gemm_harness
  nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -Ikernels lab/gemm_harness.cu \
    -lcublas -lcublasLt -lcuda -o $H || exit 1
fi
cuobjdump --dump-sass $H > /tmp/sass.txt 2>&1
awk '/Function :/{f=$3} /HGMMA|QGMMA/{g[f]++} /LDL|STL/{l[f]++} /MEMBAR/{b[f]++} END{for (k in g) if (k ~ /hk_gemm/) printf "sass %-36s gmma=%d ldl/stl=%d membar=%d\n", k, g[k], l[k]+0, b[k]+0}' /tmp/sass.txt | sort > $OUT/sass_summary.txt
echo "kernels with gmma: $(wc -l < $OUT/sass_summary.txt) of $(grep -c 'Function : hk_gemm' /tmp/sass.txt), with local memory: $(grep -vc 'ldl/stl=0 ' $OUT/sass_summary.txt)"
grep -o 'HGMMA\.[0-9x]*\.[A-Z0-9]*\|QGMMA\.[0-9x]*\.[A-Z0-9]*' /tmp/sass.txt | sort | uniq -c
timeout ${QUICK_S:-110} $H quick > $OUT/quick.log 2>&1; rc=$?
grep -v " ok$" $OUT/quick.log | head -30; echo "checks rc=$rc, $(grep -c ' ok$' $OUT/quick.log) ok"
[ $rc = 124 ] && exit 1
if [ "${PROFILE:-0}" = 1 ]; then
  timeout ${NCU_S:-150} ncu --clock-control none --profile-from-start off --section SpeedOfLight --section LaunchStats \
    --section Occupancy --section WarpStateStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    --metrics dram__bytes_read.sum,lts__t_bytes.sum,sm__cycles_active.avg,gpc__cycles_elapsed.max \
    -f --log-file $OUT/ncu.txt $H profile > $OUT/ncu_stdout.txt 2>&1; echo "ncu rc=$?"
  # compact: kernel, duration, DRAM/L2/SM throughput, occupancy, grid/cluster/smem, top stall
  awk '/^  [^ ].*\)x\(/{print "== " substr($0, 3, 150)}
       / Duration |DRAM Throughput|L2 Cache Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Cluster Size  |Dynamic Shared Memory Per Block|dram__bytes_read.sum|lts__t_bytes.sum|sm__cycles_active.avg|gpc__cycles_elapsed.max|One or More Eligible/{gsub(/  +/, " "); print}' \
    $OUT/ncu.txt > $OUT/ncu_summary.txt
  grep -c "^==" $OUT/ncu_summary.txt
fi
timeout ${BENCH_S:-200} $H bench > $OUT/bench.log 2>&1; echo "bench rc=$?"
grep -v "^check.* ok$" $OUT/bench.log | grep -v "^$" | grep -v "^max active"
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader
if [ "${LIBHK:-0}" != 0 ] && [ -f $CARRY/libhk.so.1 ]; then
  [ "$LIBHK" = checks ] && ARGS=--checks || ARGS="--reps 20 --sweep"
  HK_LIB=$CARRY/libhk.so.1 PYTHONUNBUFFERED=1 timeout ${LIBHK_S:-100} python3 ${GEMM_BENCH:-bench/gemm_bench.py} $ARGS \
    > $OUT/libhk.log 2>&1; echo "gemm_bench rc=$?"
  grep -v "ok$" $OUT/libhk.log | tail -60
fi
