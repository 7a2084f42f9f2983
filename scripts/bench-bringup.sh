#!/usr/bin/env bash
# Issue 5's benchmark: bring-up time of the manycore kernel (serial, parallel,
# broadcast; MP-spec delays on) and of Debian's Linux 6.12 (cpuhp.parallel=0 and
# default) on the same QEMU command lines, at 8, 64, 255 and 1024 vCPUs (TCG).
# Appends one JSON object per boot to $OUT (default target/bench-bringup.jsonl).
#
#   scripts/bench-bringup.sh                 # everything (about an hour on 2 cores)
#   SIZES="8 64" REPS=1 scripts/bench-bringup.sh
#   MANYCORE=/path/to/manycore scripts/bench-bringup.sh
#
# Both kernels get lpj= so neither spends time calibrating delay loops; the
# numbers compare bring-up itself. Needs jq.
#
# Above 255 vCPUs (APIC ids > 254) `manycore qemu` adds an intel-iommu with
# interrupt remapping in x2APIC mode and boots SeaBIOS instead of qboot, for
# both kernels: Linux needs the firmware to hand over in x2APIC mode and IR to
# stay in it (qemu-runner's Machine::beyond_xapic says why). SeaBIOS starts
# every vCPU once, which adds minutes of wall time at 1024, not bring-up time.
# TIMEOUT (seconds per QEMU run, default 1800) bounds each boot; Linux's
# spinning APs make its default (parallel) bring-up slow in wall time at 1024.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${OUT:-$root/target/bench-bringup.jsonl}"
sizes="${SIZES:-8 64 255 1024}"
reps="${REPS:-3}"
timeout="${TIMEOUT:-1800}"
lpj=1000000
if [ -n "${MANYCORE:-}" ]; then
  mc=("$MANYCORE")
else
  cargo build -q --release -p manycore --manifest-path "$root/Cargo.toml"
  mc=("$root/target/release/manycore")
fi
vmlinuz="$("$root/scripts/fetch-linux.sh")"
mkdir -p "$(dirname "$out")"

mem_for() { # same memory for both kernels; Linux needs more with many CPUs
  if [ "$1" -ge 1024 ]; then echo 4096; elif [ "$1" -ge 255 ]; then echo 2048; else echo 1024; fi
}

for n in $sizes; do
  mem="$(mem_for "$n")"
  r=1; [ "$n" -lt 1024 ] && r="$reps"
  for i in $(seq "$r"); do
    "${mc[@]}" qemu --cpus "$n" --memory "$mem" --bringup serial,parallel,broadcast \
      --calibrate skip --lpj "$lpj" --timeout "$timeout" --format json |
      jq -c --arg rep "$i" '.[] | . + {rep: ($rep|tonumber), variant: .bringup}' >>"$out"
    for variant in "cpuhp.parallel=0" ""; do
      "${mc[@]}" qemu --cpus "$n" --memory "$mem" --linux "$vmlinuz" --linux-only \
        --linux-append "$variant" --lpj "$lpj" --timeout "$timeout" --format json |
        jq -c --arg rep "$i" --arg v "linux ${variant:-default}" \
          '.[] | . + {rep: ($rep|tonumber), variant: $v}' >>"$out"
    done
  done
done
echo "results in $out" >&2
