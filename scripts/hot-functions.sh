#!/usr/bin/env bash
# Writes cli/hot-functions.txt: the (mangled) functions that short
# `manycore topo --sysfs DIR` runs execute, in the order first executed,
# which cli/build.rs asks the linker to place, in that order, at the start
# of the code: such a run then faults in a few 64-KiB windows of code
# instead of some twenty spread over the whole binary (each such fault maps
# one window, about 4 µs here: BENCHMARKS.md, issue 13 item 1's whole
# process).
#
#   scripts/hot-functions.sh                       # after cargo build --release
#   MANYCORE=/path/to/manycore scripts/hot-functions.sh
#
# The runs: `--format json` of four small corpus snapshots, 4fake-4gr1nu1pu
# (4 CPUs, x86), ppc-qemu (1 CPU, powerpc), vbox-win (x86) and
# nvidia-dgx-gb10 (20 CPUs, arm64, caches), then formats text and lscpu of
# the first and the last: the json runs' functions come first, so the
# shortest and most common run touches only the start of the list. Each run
# is native, under scripts/hot-functions.c (built here with cc: a
# breakpoint on each function's entry), so the list holds the functions
# taken on this CPU and kernel (glibc picks its string functions by the CPU
# at start-up; under valgrind the reader takes another path, as valgrind
# lacks openat2). Names the binary no longer has are skipped by the
# linker, so a stale list costs speed only, but much of it: every code
# change renames some functions (hashes), and each one missing is a window
# more (24 stale names of 666: 19 windows instead of 10), so rerun this
# before measuring. Needs cc, nm and tar; a few seconds.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
manycore="${MANYCORE:-$root/target/release/manycore}"
# shellcheck source=scripts/corpus-dir.sh
. "$root/scripts/corpus-dir.sh"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/trace" "$root/scripts/hot-functions.c"
nm -n "$manycore" > "$work/symbols"
snapshots=(
    hwloc/tests/hwloc/linux/4fake-4gr1nu1pu.tar.bz2
    util-linux/tests/ts/lscpu/dumps/ppc-qemu.tar.gz
    util-linux/tests/ts/lscpu/dumps/vbox-win.tar.gz
    hwloc/tests/hwloc/linux/nvidia-dgx-gb10.tar.bz2
)
runs=()
for snapshot in "${snapshots[@]}"; do
    name="$(basename "${snapshot%%.*}")"
    mkdir -p "$work/$name"
    tar xf "$corpus/$snapshot" -C "$work/$name"
    runs+=("json $name")
done
runs+=("text 4fake-4gr1nu1pu" "lscpu 4fake-4gr1nu1pu" "text nvidia-dgx-gb10" "lscpu nvidia-dgx-gb10")
for run in "${runs[@]}"; do
    read -r format name <<< "$run"
    "$work/trace" "$work/symbols" "$manycore" topo --format "$format" --sysfs "$work/$name"/*
done | awk '!seen[$0]++' > "$root/cli/hot-functions.txt"
wc -l < "$root/cli/hot-functions.txt"
