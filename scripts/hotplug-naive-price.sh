#!/usr/bin/env bash
# Naive against scoped hotplug bring-up in the same run, and the naive
# price's host nanoseconds per unit of mask work (BENCHMARKS.md, "hotplug
# and place, seventeenth session").
#
# For each round and input, `hotplug --algo naive` then `--algo scoped` run
# back to back, so both sides of a ratio share the host's load. CPU time is
# perf's task-clock of the whole command; units are the naive report's
# bring-up level counters plus one online bit per CPU the bring-up onlined,
# every CPU but the boot CPU (what MaskEngine::naive_price().bringup
# counts). Prints one TSV line per round:
#   input  round  cpus  units  naive_ms  scoped_ms  naive/scoped  ns/unit
# where ns/unit = (naive_ms - scoped_ms) / units.
#
# Usage: ROUNDS=5 MANYCORE=target/release/manycore scripts/hotplug-naive-price.sh
# Needs perf and jq.
set -euo pipefail
unset RUST_BACKTRACE RUST_LIB_BACKTRACE
MANYCORE=${MANYCORE:-target/release/manycore}
ROUNDS=${ROUNDS:-5}
INPUTS=(
    "--machine power10-shared-320"
    "--machine power10-shared-768"
    "--machine power8-lpar-1024"
    "--synthetic package:8,core:32,pu:4"
    "--synthetic package:4,numa:2,core:32,pu:4"
    "--synthetic package:2,numa:2,core:128,pu:2"
    "--synthetic package:16,core:16,pu:4"
    "--synthetic package:4,numa:2,core:48,pu:4"
)
scratch=$(mktemp -d /dev/shm/hotplug-naive-price.XXXXXX)
trap 'rm -rf "$scratch"' EXIT

# CPU ms of one command (perf's task-clock), its stdout kept in $scratch/out.
cpu_ms() {
    perf stat -x, -e task-clock -o "$scratch/perf" -- "$@" >"$scratch/out"
    awk -F, '$3 == "task-clock" { print $1; exit }' "$scratch/perf"
}

printf 'input\tround\tcpus\tunits\tnaive_ms\tscoped_ms\tnaive/scoped\tns/unit\n'
for input in "${INPUTS[@]}"; do
    read -r flag value <<<"$input"
    # The synthetic description's words are written with commas above so the
    # list stays one word per input; the reader takes them space separated.
    value=${value//,/ }
    for round in $(seq 1 "$ROUNDS"); do
        naive=$(cpu_ms "$MANYCORE" hotplug "$flag" "$value" --algo naive --quiet --format json)
        units=$(jq '([.bringup_levels[] | .cpus_scanned + .fdt_nodes_visited
            + .property_lookups + .mask_bit_ops + .mask_word_ops] | add) + .cpus - 1' \
            "$scratch/out")
        cpus=$(jq .cpus "$scratch/out")
        scoped=$(cpu_ms "$MANYCORE" hotplug "$flag" "$value" --algo scoped --quiet --format json)
        awk -v i="$flag $value" -v r="$round" -v c="$cpus" -v u="$units" \
            -v n="$naive" -v s="$scoped" 'BEGIN {
                printf "%s\t%d\t%d\t%d\t%.1f\t%.1f\t%.1f\t%.2f\n",
                    i, r, c, u, n, s, n / s, (n - s) * 1e6 / u }'
    done
done
