# Sourced by the benchmark scripts: sets `corpus` to the corpus directory,
# the one the Rust tests use (readers::corpus::dir): $CORPUS or
# $MANYCORE_CORPUS when set, else the first shared/corpus beside the
# repository or beside one of its parents (a worktree's checkout). Exits
# with status 2 when there is none. Needs `root`, the repository.
corpus="${CORPUS:-${MANYCORE_CORPUS:-}}"
if [ -z "$corpus" ]; then
    for d in "$root/.." "$root/../.." "$root/../../.."; do
        if [ -d "$d/shared/corpus" ]; then corpus="$(cd "$d/shared/corpus" && pwd)"; break; fi
    done
fi
[ -d "$corpus" ] || { echo "no corpus: set CORPUS=DIR" >&2; exit 2; }
