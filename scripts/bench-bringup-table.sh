#!/usr/bin/env bash
# Turns scripts/bench-bringup.sh's JSON lines into the Markdown table of
# BENCHMARKS.md: median bring-up time (ms) per vCPU count and variant, and the
# median over runs of each run's own ratios (serial / parallel, Linux / parallel:
# same-run baselines, since host load differs between runs).
#   scripts/bench-bringup-table.sh target/bench-bringup.jsonl [more.jsonl...]
set -euo pipefail
cat "$@" | jq -rs '
  def median: sort | if length == 0 then null
    elif length % 2 == 1 then .[length/2|floor]
    else (.[length/2 - 1] + .[length/2]) / 2 end;
  def ms: if . == null then "–" else (. / 1e6 * 10 | round / 10 | tostring) end;
  def x: if . == null then "–" else "\(. * 10 | round / 10)×" end;
  def ok: select(.cpus_up == .cpus);
  def cell($rows; $v): [$rows[] | ok | select(.variant == $v) | .bringup_ns] | median;
  def ratio($rows; $a; $b): [$rows | group_by(.rep)[]
      | ([.[] | ok | select(.variant == $a) | .bringup_ns][0]) as $x
      | ([.[] | ok | select(.variant == $b) | .bringup_ns][0]) as $y
      | select($x != null and $y != null and $y > 0) | $x / $y] | median;
  group_by(.cpus)
  | (["| vCPUs | serial | parallel | broadcast | serial / parallel | serial / broadcast | Linux cpuhp.parallel=0 | Linux default | Linux best / parallel | runs |",
      "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
     + map(. as $rows
       | "| \($rows[0].cpus) | \(cell($rows; "serial")|ms) | \(cell($rows; "parallel")|ms) | \(cell($rows; "broadcast")|ms) | "
         + "\(ratio($rows; "serial"; "parallel")|x) | \(ratio($rows; "serial"; "broadcast")|x) | "
         + "\(cell($rows; "linux cpuhp.parallel=0")|ms) | \(cell($rows; "linux default")|ms) | "
         + "\([ratio($rows; "linux cpuhp.parallel=0"; "parallel"), ratio($rows; "linux default"; "parallel")] | map(select(. != null)) | if length == 0 then null else min end | x) | "
         + "\([$rows[] | select(.variant == "parallel")] | length) |"))
  | .[]'
