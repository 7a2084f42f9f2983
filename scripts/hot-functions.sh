#!/usr/bin/env bash
# Writes cli/hot-functions.txt: the (mangled) functions that a short
# `manycore topo --sysfs DIR` run executes, which cli/build.rs asks the
# linker to place together at the start of the code, so that such a run
# faults in a few 64-KiB windows of code instead of some fifty spread over
# the whole binary (BENCHMARKS.md: issue 13 item 1, fourteenth session).
#
#   scripts/hot-functions.sh                       # after cargo build --release
#   MANYCORE=/path/to/manycore scripts/hot-functions.sh
#
# The runs (valgrind's callgrind, names not demangled): formats json, text
# and lscpu of two corpus snapshots, 4fake-4gr1nu1pu (4 CPUs, x86) and
# nvidia-dgx-gb10 (20 CPUs, arm64, caches). Names the binary no longer has
# (another compiler or dependency version) are skipped by the linker, so a
# stale list costs speed only; rerun this after such an update. Needs
# valgrind and tar.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
manycore="${MANYCORE:-$root/target/release/manycore}"
# shellcheck source=scripts/corpus-dir.sh
. "$root/scripts/corpus-dir.sh"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
linux="$corpus/hwloc/tests/hwloc/linux"
for snapshot in 4fake-4gr1nu1pu.tar.bz2 nvidia-dgx-gb10.tar.bz2; do
    dir="$work/${snapshot%%.*}"
    mkdir -p "$dir"
    tar xf "$linux/$snapshot" -C "$dir"
    for format in json text lscpu; do
        valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/cg.$snapshot.$format" \
            "$manycore" topo --format "$format" --sysfs "$dir"/* > /dev/null 2> /dev/null
    done
done
# Callgrind names each function once per file, as "fn=(ID) NAME" or
# "cfn=(ID) NAME"; a "'N" suffix marks a recursion depth, and "0x..." or
# "(below main)" are not symbols.
cat "$work"/cg.* | sed -n 's/^c\{0,1\}fn=([0-9]*) //p' | sed "s/'[0-9]*$//" |
    grep -v '^0x\|^(below main)' | LC_ALL=C sort -u > "$root/cli/hot-functions.txt"
wc -l < "$root/cli/hot-functions.txt"
