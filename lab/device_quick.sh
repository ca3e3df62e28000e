#!/bin/bash
# The integrated Hopper check without building on the device (~8 minutes of device time instead of a build there):
#   here:   lab/device_quick.sh pack [BUILD]   copies BUILD's (default: build) libhk.so.1, cmocka test binaries,
#           hk-info and hk-bench, the sm_90a cubins, and a GEMM harness built from this tree, into .carry/quick
#   device: lab/device_quick.sh run            carry [".carry/quick", ".carry/libcmocka0_*.deb",
#           ".carry/libcmocka-dev_*.deb"]: the GPU tests, memcheck, racecheck and the harness checks in parallel,
#           then the attention checks against float64 PyTorch, the Python package's CUDA tests and training step,
#           the SASS census of the cubins, hk-info, hk-bench, and the GEMM, memory-bound and attention peers
#           (each timed alone).
#           With .carry/alt (a second build's libhk.so.1 and tests, also carried): its GPU op tests, then the
#           rotary/LN rows of both builds in separate processes, alternating (alt, main, main, alt; NO_AB=1: none).
# Every log goes into $OUT/logs.tgz (the device tool returns few files); the summary prints last.
cd "$(dirname "$0")/.." || exit 1
Q=.carry/quick

if [ "$1" = pack ]; then
    B=${2:-build}
    rm -rf $Q && mkdir -p $Q/tests $Q/tools || exit 1
    cp -L "$B/libhk.so.1" $Q/ && cp "$B"/tools/hk-info "$B"/tools/hk-bench $Q/tools/ || exit 1
    mkdir -p $Q/cubins && cp "$B"/kernels/hopper/*.cubin "$B"/kernels/hopper/*.resources.txt $Q/cubins/ || exit 1
    for t in "$B"/tests/test_* "$B"/tests/cuda/test_*; do
        [ -f "$t" ] && [ -x "$t" ] && cp "$t" $Q/tests/
    done
    nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
    (cd lab && $nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -I../kernels gemm_harness.cu \
        -lcublas -lcublasLt -lcuda -o ../$Q/gemm_harness) || echo "gemm_harness does not build: its checks are left out"
    du -sh $Q
    exit 0
fi
[ "$1" = run ] || { echo "usage: $0 pack [BUILD] | run"; exit 2; }

. lab/device_env.sh
F=$PWD/$Q
export LD_LIBRARY_PATH=$F:$LD_LIBRARY_PATH
L=/tmp/quick-logs
rm -rf $L && mkdir -p $L
trap 'tar czf "$OUT/logs.tgz" -C $L .' EXIT
trap 'exit 143' TERM
summary=()
t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv,noheader > $L/gpu.txt

# Correctness, in parallel (CUDA context only: CI covers the CPU and emulator contexts). test_gemm is the longest
# (~90 s alone on the H200's host since its oracle streams B, twenty-sixth session; 420 s before): limits of 300 s.
for t in $F/tests/test_*; do
    n=${t##*/}
    (HK_TEST_CONTEXTS=cuda/sm_90a timeout 300 $t > $L/$n.log 2>&1
     echo "$n: rc=$? ok=$(grep -c '\[       OK \]' $L/$n.log) failed=$(grep -c '\[  FAILED  \]' $L/$n.log)" \
          "skipped=$(grep -c '\[  SKIPPED \]' $L/$n.log)" > $L/$n.sum) &
done
for spec in "memcheck test_gemm" "memcheck test_rotary" "memcheck test_ln_fused" "memcheck test_cuda_wide" \
            "memcheck test_attention" "racecheck test_rotary" "racecheck test_ln_fused" "racecheck test_cuda_wide" \
            "racecheck test_attention"; do
    set -- $spec
    (HK_TEST_CONTEXTS=cuda/sm_90a timeout 300 compute-sanitizer --tool $1 --error-exitcode 99 --print-limit 20 \
        $F/tests/$2 > $L/$1_$2.log 2>&1
     echo "$1 $2: rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $L/$1_$2.log | tail -1)" > $L/$1_$2.sum) &
done
[ -x $F/gemm_harness ] && (timeout 320 $F/gemm_harness quick > $L/harness_quick.log 2>&1
 echo "harness quick: rc=$? ok=$(grep -c ' ok$' $L/harness_quick.log), $(tail -1 $L/harness_quick.log)" > $L/harness.sum) &
wait
summary+=("correctness phase: $((SECONDS - t0)) s")
timeout 120 python3 lab/attn_check.py --lib $F/libhk.so.1 > $L/attn_check.log 2>&1
summary+=("attn_check: rc=$? $(tail -1 $L/attn_check.log)")
for py in tests/python/test_torch.py tests/python/test_numpy.py "examples/train_step.py --device cuda"; do
    n=$(basename "${py%% *}" .py)
    # shellcheck disable=SC2086
    HK_LIBRARY=$F/libhk.so.1 timeout 120 python3 $py > $L/py_$n.log 2>&1
    summary+=("python $py: rc=$? $(tail -1 $L/py_$n.log)")
done
cuobjdump --dump-sass $F/gemm_harness 2>/dev/null | awk '/Function :/{f=$3} /HGMMA|QGMMA/{g[f]++} /LDL|STL/{l[f]++}
    END{n = 0; s = 0; for (k in g) if (k ~ /hk_gemm/) {n++; if (l[k]) s++}
        print "harness SASS: kernels with HGMMA/QGMMA " n ", with local memory " s}' > $L/sass.sum
for c in $F/cubins/*.cubin; do
    cuobjdump --dump-sass "$c" | awk -v c="${c##*/}" '/Function :/{f=$3; n++} /[HQ]GMMA/{g[f]++} /LDL|STL/{l[f]++}
        END{s = 0; m = 0; for (k in l) s++; for (k in g) m++
            print c ": " n " kernels, " m " with HGMMA/QGMMA, " s " with local memory"}' >> $L/sass.sum
done

# Timing, one thing at a time, most recent work first; each step starts only while the call has time left for it
# (BUDGET seconds in all, default 540; TIMING: the comma-separated groups to time, default attn,gemm,membound,hkbench,
# none of them with SKIP_TIMING=1, which leaves the A/B below).
fits() { [ $((SECONDS - t0 + $1)) -le "${BUDGET:-540}" ]; }
timeout 30 $F/tools/hk-info > $L/hk-info.txt 2>&1
for x in lab/device_extra_*.sh; do
    [ -f "$x" ] && fits 90 || continue
    F=$F OUT=$L timeout 90 bash "$x" > "$L/${x##*/}.log" 2>&1
    summary+=("${x##*/}: rc=$? $(tail -1 "$L/${x##*/}.log")")
done
timing=",${TIMING:-attn,gemm,membound,hkbench},"
[ -n "${SKIP_TIMING:-}" ] && timing=,
timed() { [[ $timing == *",$1,"* ]] && fits "$2"; }
timed attn 150 && { timeout 150 python3 bench/peers.py --lib $F/libhk.so.1 --out /tmp/peers_attn --reps 20 --warmup 3 \
    --only attn > $L/peers_attn.log 2>&1; summary+=("attention peers: rc=$?"); }
cp /tmp/peers_attn/peers.json $L/peers_attn.json 2>/dev/null
timed gemm 60 && { timeout 60 python3 bench/gemm_bench.py --lib $F/libhk.so.1 --checks > $L/gemm-checks.txt 2>&1
    summary+=("gemm_bench --checks: rc=$? $(tail -1 $L/gemm-checks.txt)"); }
timed gemm 150 && { timeout 150 python3 bench/gemm_bench.py --lib $F/libhk.so.1 --reps 30 --warmup 5 \
    > $L/gemm-peers.txt 2>&1; summary+=("gemm peers: rc=$? $(tail -1 $L/gemm-peers.txt)"); }
timed membound 150 && { timeout 150 python3 bench/peers.py --lib $F/libhk.so.1 --out /tmp/peers --reps 50 \
    --only rotary,ln_fwd,ln_bwd > $L/peers.log 2>&1; summary+=("memory-bound peers: rc=$?"); }
cp /tmp/peers/peers.png /tmp/peers/peers.json $L/ 2>/dev/null
timed hkbench 60 && { timeout 60 $F/tools/hk-bench > $L/hk-bench.txt 2>&1; summary+=("hk-bench: rc=$?"); }
A=$PWD/.carry/alt
if [ -f $A/libhk.so.1 ]; then
    for t in $A/tests/test_*; do
        [ -x "$t" ] || continue
        n=${t##*/}
        LD_LIBRARY_PATH=$A:$LD_LIBRARY_PATH HK_TEST_CONTEXTS=cuda/sm_90a timeout 200 $t > $L/alt_$n.log 2>&1
        echo "alt $n: rc=$? ok=$(grep -c '\[       OK \]' $L/alt_$n.log) failed=$(grep -c '\[  FAILED  \]' $L/alt_$n.log)" \
            > $L/alt_$n.sum
    done
    i=0
    for lib in $A $F $F $A; do
        [ -n "${NO_AB:-}" ] && break
        fits 60 || break
        i=$((i + 1))
        timeout 120 python3 bench/peers.py --lib $lib/libhk.so.1 --out /tmp/ab$i --reps 50 --libhk-only \
            --only ${ALT_ONLY:-rotary} > $L/ab$i.log 2>&1
        summary+=("A/B $i ${lib##*/}: rc=$? $(grep -E '^  (copy|rotary|ln_|attn)' $L/ab$i.log | tr -s ' ' | tr '\n' ';')")
    done
fi

cat $L/hk-bench.txt 2>/dev/null
grep -E "^  gemm" $L/gemm-peers.txt 2>/dev/null
grep -E "^  (copy|rotary|ln_)|Checks before timing" $L/peers.log 2>/dev/null
grep -E "^  (attn|check attn)|FAIL" $L/peers_attn.log 2>/dev/null
grep -vE "^ok  " $L/attn_check.log | head -30
cat $L/*.sum
printf '%s\n' "${summary[@]}" "total: $((SECONDS - t0)) s"
