#!/usr/bin/env bash
# Run every libFuzzer target of a -Dfuzzers=true build for SECONDS each, two at a time, from fuzz/corpus/<target>
# (new inputs go to a scratch copy, never into the repository). A finding stops its target, leaves the input as
# BUILD/fuzz-findings/<target>/crash-* and makes the script exit 1; each target's last lines are printed.
#   scripts/fuzz.sh [SECONDS=20] [BUILD=build-fuzz]
# A longer campaign: scripts/fuzz.sh 3600 (about 10^6 executions per target take 1-10 minutes on one core).
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
build=${2:-build-fuzz}
targets=(context memory gemm attn_fwd attn_bwd rotary ln_fused ln_fused_bwd)
work=$build/fuzz-work
rm -rf "$work" "$build/fuzz-findings"
run_one() {
    local t=$1
    mkdir -p "$work/$t" "$build/fuzz-findings/$t"
    cp fuzz/corpus/$t/* "$work/$t/" 2>/dev/null
    "$build/fuzz/fuzz_$t" -max_total_time="$seconds" -max_len=512 -print_final_stats=1 \
        -artifact_prefix="$build/fuzz-findings/$t/" "$work/$t" >"$work/$t.log" 2>&1
    local rc=$?
    grep -E '^(Done|stat::number_of_executed_units)|ERROR|SUMMARY|^fuzz:' "$work/$t.log" | sed "s/^/fuzz_$t: /"
    [ $rc -eq 0 ] && echo "fuzz_$t: no finding" || echo "fuzz_$t: FINDING (exit $rc), see $work/$t.log"
    return $rc
}
status=0
for ((i = 0; i < ${#targets[@]}; i += 2)); do
    run_one "${targets[i]}" & a=$!
    run_one "${targets[i + 1]}" & b=$!
    wait $a || status=1
    wait $b || status=1
done
exit $status
