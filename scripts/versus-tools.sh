#!/usr/bin/env bash
# manycore's tool-like commands against the tools they stand in for, whole
# process, per input, in one run (issue 13 item 6):
#
#   manycore topo --format json  --sysfs DIR  vs  lstopo-no-graphics --if fsroot --input DIR --no-io --of xml -
#   manycore topo --format lscpu --sysfs DIR  vs  lscpu --sysroot DIR
#
# on every sysfs snapshot of the corpus and on generated trees of 1024, 4096
# and 16384 CPUs; and on the live host `manycore topo --format json` against
# `numactl -H`, lstopo and lscpu (numactl has no option to read a snapshot:
# it asks the running kernel through system calls, so it is compared on the
# live host only).
#
# Each comparison runs PAIRS pairs, theirs then ours, each command under
# `perf stat -e task-clock,duration_time`: CPU time of the whole process
# (every thread) and its wall time. Printed per input: each side's median,
# the median of the per-pair ratios theirs / ours (above 1: ours is faster)
# and the lowest pair's ratio; rows worst first by the CPU ratio against
# lstopo. Also measured in the same run, PAIRS times: the CPU time of an
# empty `fn main` built and linked as the release `manycore` is (the floor
# of any process of that link on this machine), printed once and per input
# as the share of lstopo's half it takes.
#
#   scripts/versus-tools.sh > table.md
#   PAIRS=21 ONLY=ia64 scripts/versus-tools.sh
#   MANYCORE=/path/to/manycore TREES="1024" scripts/versus-tools.sh
#
# MANYCORE: the binary (default target/release/manycore, built if missing);
# BEFORE: an earlier manycore binary, also timed per input against
# MANYCORE (`topo --format json`, PAIRS pairs, before then ours; two more
# columns: its median CPU ms and before / ours), so a change is measured
# in the same run as lstopo;
# PAIRS (default 11; BIG_PAIRS, default 3, for trees of 4096 CPUs or more,
# where lstopo runs for seconds); ONLY=TEXT: only inputs whose name contains
# TEXT; TREES: the generated sizes (default "1024 4096 16384"; empty: none;
# written by the floor_ratios bench's --write-tree: FLOOR_RATIOS=its binary,
# else it is built);
# SCRATCH: where snapshots are extracted (default /dev/shm, else TMPDIR);
# CORPUS (default shared/corpus beside the repository or a parent). Needs perf, tar,
# lstopo-no-graphics, lscpu, rustc (the empty program); jq when it builds the
# floor_ratios bench itself; numactl for the live row (else "–"). The CPU
# ratio is printed to three decimals, so ">= 2" below is never a rounded 1.995.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
pairs="${PAIRS:-11}"
big_pairs="${BIG_PAIRS:-3}"
only="${ONLY:-}"
trees="${TREES-1024 4096 16384}"
# shellcheck source=scripts/corpus-dir.sh
. "$root/scripts/corpus-dir.sh"
if [ -z "${SCRATCH:-}" ]; then
    if [ -d /dev/shm ]; then SCRATCH=/dev/shm; else SCRATCH="${TMPDIR:-/tmp}"; fi
fi
work="$(mktemp -d "$SCRATCH/versus-tools.XXXXXX")"
trap 'rm -rf "$work"' EXIT

manycore="${MANYCORE:-$root/target/release/manycore}"
if [ ! -x "$manycore" ]; then
    (cd "$root" && cargo build --release -p manycore >&2)
fi

# The empty program, linked as cli/build.rs links manycore: static, not
# position-independent.
printf 'fn main() {}\n' > "$work/empty.rs"
rustc -O -C target-feature=+crt-static -C relocation-model=static "$work/empty.rs" -o "$work/empty"

# One run of a command: "CPU_MS WALL_MS" on stdout, or "fail".
run() {
    local out="$work/perf.out"
    if perf stat -x, -e task-clock,duration_time -o "$out" -- "$@" > /dev/null 2>&1; then
        awk -F, '$3 ~ /^task-clock/ { cpu = $1 } $3 ~ /^duration_time/ { wall = $1 / 1e6 }
                 END { if (cpu == "" || wall == "") print "fail"; else print cpu, wall }' "$out"
    else
        echo fail
    fi
}

# pairs N THEIRS... -- OURS...: N alternating pairs; prints one line:
# "theirs_cpu ours_cpu cpu_ratio cpu_ratio_lowest theirs_wall ours_wall wall_ratio"
# (medians of the N runs and of the N per-pair ratios), or "fail".
pairs() {
    local n=$1; shift
    local theirs=() ours=()
    while [ "$1" != -- ]; do theirs+=("$1"); shift; done
    shift
    ours=("$@")
    local log="$work/pairs.log" t o i
    : > "$log"
    # One warm-up of each, outside perf (which reports a child killed by a
    # signal as a success): its exit status says whether the input is read;
    # it also warms the page cache and dentries, as every later pair has.
    if ! "${theirs[@]}" > /dev/null 2>&1 || ! "${ours[@]}" > /dev/null 2>&1; then
        echo fail
        return
    fi
    for ((i = 0; i < n; i++)); do
        t=$(run "${theirs[@]}"); o=$(run "${ours[@]}")
        if [ "$t" = fail ] || [ "$o" = fail ]; then echo fail; return; fi
        echo "$t $o" >> "$log"
    done
    awk '
        function median(a, n,   i, j, t) {
            for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
            return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
        }
        { tc[NR] = $1; tw[NR] = $2; oc[NR] = $3; ow[NR] = $4; rc[NR] = $1 / $3; rw[NR] = $2 / $4
          if (NR == 1 || $1 / $3 < low) low = $1 / $3 }
        END { printf "%.3f %.3f %.3f %.2f %.3f %.3f %.2f\n",
                median(tc, NR), median(oc, NR), median(rc, NR), low, median(tw, NR), median(ow, NR), median(rw, NR) }
    ' "$log"
}

# The empty program's median CPU time over PAIRS runs (ms).
floor_ms() {
    for ((i = 0; i < pairs; i++)); do run "$work/empty"; done |
        awk '{ print $1 }' | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
}

# Inputs: "name<TAB>dir" lines.
inputs="$work/inputs"
: > "$inputs"
i=0
while read -r archive; do
    name="$(basename "$archive")"
    case "$name" in *"$only"*) ;; *) continue ;; esac
    i=$((i + 1))
    dir="$work/s$i"
    mkdir -p "$dir"
    tar xf "$archive" -C "$dir" 2> /dev/null || continue
    for top in "$dir"/*; do
        for r in "$top" "$top/fsroot"; do
            if [ -d "$r/sys" ]; then
                printf '%s\t%s\n' "$name" "$r" >> "$inputs"
                break 2
            fi
        done
    done
done < <(cd "$corpus" && find hwloc util-linux -type f \( -name '*.tar.gz' -o -name '*.tar.bz2' \) |
    grep -v '^hwloc/tests/hwloc/x86/' |
    grep -E '/linux/|x86\+linux/|lscpu/dumps/|^hwloc/history/' | sort | sed "s|^|$corpus/|")

if [ -n "$trees" ]; then
    bench="${FLOOR_RATIOS:-}"
    [ -n "$bench" ] || bench="$(cd "$root" && cargo bench --no-run -p readers --bench floor_ratios --message-format=json 2> /dev/null |
        jq -r 'select(.executable != null and .target.name == "floor_ratios") | .executable' | tail -1)"
    for cpus in $trees; do
        case $cpus in
            1024) shape="4 128 2" ;;
            4096) shape="4 512 2" ;;
            16384) shape="8 1024 2" ;;
            *) echo "TREES: $cpus: one of 1024, 4096, 16384" >&2; exit 2 ;;
        esac
        name="generated ${shape// /×} ($cpus CPUs)"
        case "$name" in *"$only"*) ;; *) continue ;; esac
        # shellcheck disable=SC2086
        "$bench" --write-tree $shape "$work/gen-$cpus" > /dev/null
        printf '%s\t%s\n' "$name" "$work/gen-$cpus" >> "$inputs"
    done
fi

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg) at the start"
echo "# manycore: $manycore"
before="${BEFORE:-}"
[ -z "$before" ] || echo "# before: $before"
floor="$(floor_ms)"
echo "# empty fn main, same link: $floor ms CPU (median of $pairs runs)"
echo
header="| input | lstopo ms | ours ms | lstopo / ours CPU (lowest pair) | wall | empty process / (lstopo / 2) | lscpu ms | ours --format lscpu ms | lscpu / ours CPU (lowest pair) | wall |"
rule="|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
if [ -n "$before" ]; then
    header="$header before ms | before / ours CPU (lowest pair) |"
    rule="$rule---:|---:|"
fi
echo "$header"
echo "$rule"
rows="$work/rows"
: > "$rows"
fmt() { # a pairs line as table cells
    if [ "$1" = fail ]; then echo "– | – | – | –"; else
        set -- $1
        echo "$1 | $2 | $3× ($4×) | $7×"
    fi
}
failed=()
lscpu_failed=()
while IFS=$'\t' read -r name dir; do
    n=$pairs
    case "$name" in *"(4096 CPUs)"* | *"(16384 CPUs)"*) n=$big_pairs ;; esac
    l=$(pairs "$n" lstopo-no-graphics --if fsroot --input "$dir" --no-io --of xml - -- "$manycore" topo --format json --sysfs "$dir")
    c=$(pairs "$n" lscpu --sysroot "$dir" -- "$manycore" topo --format lscpu --sysfs "$dir")
    [ "$c" != fail ] || lscpu_failed+=("$name")
    if [ "$l" = fail ]; then
        failed+=("$name")
        key=0
        share="–"
    else
        key=$(echo "$l" | awk '{ print $3 }')
        share=$(echo "$l" | awk -v f="$floor" '{ printf "%.2f", f / ($1 / 2) }')
    fi
    extra=""
    if [ -n "$before" ]; then
        b=$(pairs "$n" "$before" topo --format json --sysfs "$dir" -- "$manycore" topo --format json --sysfs "$dir")
        if [ "$b" = fail ]; then extra=" – | – |"; else
            extra=" $(echo "$b" | awk '{ printf "%s | %s× (%s×)", $1, $3, $4 }') |"
            echo "$b" | awk '{ print $3 }' >> "$work/before-ratios"
        fi
    fi
    printf '%s\t| %s | %s | %s | %s |%s\n' "$key" "$name" "$(fmt "$l")" "$share" "$(fmt "$c")" "$extra" >> "$rows"
done < "$inputs"
sort -t$'\t' -k1,1g "$rows" | cut -f2-
echo
n_met=$(awk -F'\t' '$1 >= 2' "$rows" | wc -l)
echo "lstopo / ours >= 2 (CPU, median pair) on $n_met of $(wc -l < "$rows") inputs."
if [ -s "$work/before-ratios" ]; then
    echo
    sort -g "$work/before-ratios" | awk '{ a[NR] = $1; if ($1 > 1) up++ }
        END { printf "before / ours (CPU, median pair): median over inputs %.3f, lowest %.3f, highest %.3f; above 1 on %d of %d inputs.\n",
              (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2), a[1], a[NR], up, NR }'
fi
echo
echo "lstopo or ours failed on: ${failed[*]:-none}."
echo
echo "lscpu --sysroot or ours failed on: ${lscpu_failed[*]:-none}."
echo
echo "Live host ($(nproc) CPUs), manycore topo --format json against each:"
echo
echo "| tool | theirs ms | ours ms | theirs / ours CPU (lowest pair) | wall |"
echo "|---|---:|---:|---:|---:|"
if command -v numactl > /dev/null; then
    echo "| numactl -H | $(fmt "$(pairs "$pairs" numactl -H -- "$manycore" topo --format json)") |"
else
    echo "| numactl -H | – | – | – | – |"
fi
echo "| lstopo-no-graphics --no-io --of xml - | $(fmt "$(pairs "$pairs" lstopo-no-graphics --no-io --of xml - -- "$manycore" topo --format json)") |"
echo "| lscpu (against --format lscpu) | $(fmt "$(pairs "$pairs" lscpu -- "$manycore" topo --format lscpu)") |"
echo
echo "# load $(cut -d' ' -f1-3 /proc/loadavg) at the end, $(date -u '+%H:%M UTC')"
