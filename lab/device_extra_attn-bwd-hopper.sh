#!/bin/bash
# The attention backward's extra checks in an integration call (60 s): the SASS census of the attn_bwd cubin (HGMMA
# and reductions per kernel, no local memory), lab/attn_bwd_check.py against float64 PyTorch autograd (the tiled
# kernel where it applies; then a few cases forced onto the row kernels), and bench/peers.py's backward rows beside
# cuDNN. $F: the carried build (libhk.so.1, cubins/), $OUT: logs. The summary prints last.
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-/tmp/attn-bwd-out}
mkdir -p "$OUT"
summary=()
c=$F/cubins/attn_bwd.sm_90a.cubin
for k in $(cuobjdump -sass "$c" | grep -oE "Function : hk_attn_bwd_[a-z0-9_]+" | cut -d' ' -f3); do
    echo "$k: $(cuobjdump -sass -fun "$k" "$c" | grep -oE "HGMMA\.[0-9A-Zx.]+|LDL|STL|REDG?\.[A-Z0-9.]+" | sort |
        uniq -c | tr -s ' ' | tr '\n' ' ')"
done > "$OUT/attn_bwd_sass.txt" 2>&1
summary+=("sass: $(grep -c HGMMA "$OUT/attn_bwd_sass.txt") kernels with HGMMA," \
          "$(grep -cE 'LDL|STL' "$OUT/attn_bwd_sass.txt") with local memory")
timeout 26 python3 lab/attn_bwd_check.py --lib "$F/libhk.so.1" > "$OUT/attn_bwd_check.log" 2>&1
summary+=("attn_bwd_check: rc=$? $(tail -1 "$OUT/attn_bwd_check.log")")
HK_CUDA_TUNE_ATTN_BWD=rows timeout 10 python3 lab/attn_bwd_check.py --lib "$F/libhk.so.1" \
    --only n129_gqa4_d64,window_causal_gqa4,softcap,varlen_ragged,packed_qkv > "$OUT/attn_bwd_check_rows.log" 2>&1
summary+=("attn_bwd_check (row kernels): rc=$? $(tail -1 "$OUT/attn_bwd_check_rows.log")")
timeout 18 python3 bench/peers.py --lib "$F/libhk.so.1" --out /tmp/peers_attn_bwd --reps 3 --warmup 1 \
    --only attn_bwd > "$OUT/peers_attn_bwd.log" 2>&1
summary+=("peers attn_bwd: rc=$?")
cat "$OUT/attn_bwd_sass.txt"
grep -hvE "^ok  " "$OUT/attn_bwd_check.log" "$OUT/attn_bwd_check_rows.log" | head -30
grep -E "^  (attn_bwd|check attn_bwd)|FAIL|Error" "$OUT/peers_attn_bwd.log" | head -30
printf '%s\n' "${summary[@]}"
