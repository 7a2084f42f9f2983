#!/usr/bin/env bash
# Turns scripts/bench-bringup.sh's JSON lines into the Markdown table of
# BENCHMARKS.md: median bring-up time (ms) per vCPU count and variant, the
# serial / parallel ratio, and parallel against Linux's default.
#   scripts/bench-bringup-table.sh target/bench-bringup.jsonl [more.jsonl...]
set -euo pipefail
cat "$@" | jq -rs '
  def median: sort | if length == 0 then null
    elif length % 2 == 1 then .[length/2|floor]
    else (.[length/2 - 1] + .[length/2]) / 2 end;
  def ms: if . == null then "–" else (. / 1e6 * 10 | round / 10 | tostring) end;
  def cell($rows; $v): [$rows[] | select(.variant == $v and .cpus_up == .cpus) | .bringup_ns] | median;
  group_by(.cpus)
  | (["| vCPUs | serial | parallel | broadcast | serial / parallel | Linux cpuhp.parallel=0 | Linux default | Linux default / parallel | runs |",
      "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
     + map(. as $rows
       | (cell($rows; "serial")) as $s | (cell($rows; "parallel")) as $p
       | (cell($rows; "broadcast")) as $b | (cell($rows; "linux cpuhp.parallel=0")) as $l0
       | (cell($rows; "linux default")) as $ld
       | "| \($rows[0].cpus) | \($s|ms) | \($p|ms) | \($b|ms) | "
         + (if $s and $p then "\($s / $p * 10 | round / 10)×" else "–" end) + " | \($l0|ms) | \($ld|ms) | "
         + (if $ld and $p then "\($ld / $p * 10 | round / 10)×" else "–" end)
         + " | \([$rows[] | select(.variant == "parallel")] | length) |"))
  | .[]'
