#!/bin/bash
# Extra step of the integration device call for the house-rest branch: what the GPU varlen offsets check costs
# hk_attn_fwd (lab/attn_varlen_cost.py), fixed-length batch vs the same problem as varlen. Runs from the
# repository root with $F = the carried build (libhk.so.1) and $OUT for logs; at most 50 s.
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-/tmp/hk-out}
mkdir -p "$OUT"
timeout 50 python3 lab/attn_varlen_cost.py --lib "$F/libhk.so.1" > "$OUT/attn_varlen_cost.log" 2>&1
rc=$?
tail -8 "$OUT/attn_varlen_cost.log"
echo "attn_varlen_cost: rc=$rc"
