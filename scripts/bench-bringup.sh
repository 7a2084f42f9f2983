#!/usr/bin/env bash
# Bring-up benchmark: time of the manycore kernel (serial, parallel,
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

# QEMU 10's TCG at 1024 vCPUs held ~21 GiB of heap for a minute while the
# guest booted (measured: 16-21 GiB RSS whichever firmware) when the machine
# had SMM: one address space per vCPU, rendered per vCPU at every memory-map
# change. `manycore qemu` now turns SMM off beyond APIC id 254 (qemu-runner's
# Machine::beyond_xapic; BENCHMARKS.md has the manycore kernel's peak), but
# Linux at 1024 vCPUs was not remeasured without it, so the wait stays: on a
# 24 GiB host a second big guest could get one of them OOM-killed. Before each boot of
# $big_cpus vCPUs or more, wait (up to $mem_wait s) until MemAvailable reaches
# $min_avail_mib.
big_cpus="${BIG_CPUS:-1024}"
min_avail_mib="${MIN_AVAIL_MIB:-22000}"
mem_wait="${MEM_WAIT:-3600}"
wait_for_memory() {
  [ "$1" -ge "$big_cpus" ] || return 0
  local waited=0 avail
  while :; do
    avail=$(awk '/^MemAvailable:/ {print int($2 / 1024)}' /proc/meminfo)
    [ "$avail" -ge "$min_avail_mib" ] && return 0
    if [ "$waited" -ge "$mem_wait" ]; then
      echo "bench-bringup: only ${avail} MiB available after ${waited} s; booting anyway" >&2
      return 0
    fi
    [ "$waited" -eq 0 ] && echo "bench-bringup: waiting for ${min_avail_mib} MiB free (${avail} MiB now)" >&2
    sleep 10; waited=$((waited + 10))
  done
}

mem_for() { # same memory for both kernels; Linux needs more with many CPUs
  if [ "$1" -ge 1024 ]; then echo 4096; elif [ "$1" -ge 255 ]; then echo 2048; else echo 1024; fi
}

for n in $sizes; do
  mem="$(mem_for "$n")"
  r=1; [ "$n" -lt 1024 ] && r="$reps"
  for i in $(seq "$r"); do
    for strategy in serial parallel broadcast; do
      wait_for_memory "$n"
      "${mc[@]}" qemu --cpus "$n" --memory "$mem" --bringup "$strategy" \
        --calibrate skip --lpj "$lpj" --timeout "$timeout" --format json |
        jq -c --arg rep "$i" '.[] | . + {rep: ($rep|tonumber), variant: .bringup}' >>"$out" ||
        echo "bench-bringup: $n vCPUs, $strategy: no result (see above); going on" >&2
    done
    for variant in "cpuhp.parallel=0" ""; do
      wait_for_memory "$n"
      "${mc[@]}" qemu --cpus "$n" --memory "$mem" --linux "$vmlinuz" --linux-only \
        --linux-append "$variant" --lpj "$lpj" --timeout "$timeout" --format json |
        jq -c --arg rep "$i" --arg v "linux ${variant:-default}" \
          '.[] | . + {rep: ($rep|tonumber), variant: $v}' >>"$out" ||
        echo "bench-bringup: $n vCPUs, Linux ${variant:-default}: no result (see above); going on" >&2
    done
  done
done
echo "results in $out" >&2
