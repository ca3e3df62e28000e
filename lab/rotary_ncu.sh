#!/bin/bash
# Hardware counters of the rotary contenders (lab/rotary_ncu_calls.py) under ncu, with the L2 flushed and
# invalidated before each kernel (cache-control all) and not (none); clocks left alone. Prints one
# line per kernel: time, DRAM bytes, L2 read sectors and hits, warps active, loads. git history of bench/NOTES.md rotary run 32.
#   HK_LIB=build/libhk.so.1 OUT=/tmp/ncu bash lab/rotary_ncu.sh
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-/tmp/hk-ncu}
mkdir -p "$OUT"
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum
M=$M,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_write.sum
M=$M,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed
M=$M,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
M=$M,launch__grid_size,launch__block_size,launch__registers_per_thread
for cc in all none; do
    timeout 240 ncu --clock-control none --cache-control $cc --profile-from-start off --metrics $M --csv \
        python3 lab/rotary_ncu_calls.py > "$OUT/ncu_rotary_$cc.csv" 2> "$OUT/ncu_rotary_$cc.err"
    echo "ncu cache-control $cc: rc=$?"
done
OUT=$OUT python3 - <<'PY'
import collections, csv, os
short = {'gpu__time_duration.sum': 'ns', 'dram__bytes_read.sum': 'dramR', 'dram__bytes_write.sum': 'dramW',
         'lts__t_sectors_srcunit_tex_op_read.sum': 'l2rd', 'lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum': 'l2rdhit',
         'lts__t_sectors_srcunit_tex_op_write.sum': 'l2wr', 'sm__warps_active.avg.pct_of_peak_sustained_active': 'warps%',
         'dram__throughput.avg.pct_of_peak_sustained_elapsed': 'dram%', 'l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum': 'ldreq',
         'l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum': 'ldsec', 'launch__grid_size': 'grid',
         'launch__block_size': 'block', 'launch__registers_per_thread': 'regs'}
for cc in ('all', 'none'):
    rows = [line for line in open(os.path.join(os.environ['OUT'], f'ncu_rotary_{cc}.csv')) if line.startswith('"')]
    kernels = collections.OrderedDict()
    for r in csv.DictReader(rows):
        kernels.setdefault((r['ID'], r['Kernel Name'][:40]), {})[r['Metric Name']] = r['Metric Value']
    print(f'== cache-control {cc}')
    for (i, name), m in kernels.items():
        print(f'{i:>3} {name:40s} ' + ' '.join(f'{short[k]}={m.get(k, "?")}' for k in short))
PY
