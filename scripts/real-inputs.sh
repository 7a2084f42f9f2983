#!/bin/bash
# Rebuilds the directory of real inputs from outside the corpus that
# crates/readers/tests/real_inputs.rs reads against lstopo:
#   scripts/real-inputs.sh DIR [MIRRORS]
#   MANYCORE_REAL_INPUTS=DIR cargo test --release -p readers --test real_inputs -- --nocapture
# MIRRORS (default /work/.mirror) holds git snapshots of the source
# repositories named owner+name (the session tool `fetch` makes them); a
# repository that is not there is skipped with a note. Byte-identical files
# are kept once. DIR gets xml/, sysfs/ and lscpu/ (lscpu outputs typed
# from issues by hand are kept, the others rebuilt). Nothing is committed: the
# inputs keep their own repositories' licences.
set -euo pipefail
dir=${1:?usage: real-inputs.sh DIR [MIRRORS]}
mirrors=${2:-/work/.mirror}
# xml/ and sysfs/ are remade; lscpu/ (typed by hand) is kept.
rm -rf "$dir"/xml "$dir"/sysfs
mkdir -p "$dir"/{xml,sysfs,lscpu}

# The git directory of a mirrored repository, or nothing.
gitdir() {
  local g=$mirrors/${1/\//+}/repo
  [[ -d $g/.git ]] && g=$g/.git
  [[ -d $g/objects ]] && echo "$g"
}

# put REPO KIND PATTERN: every regular file of REPO's newest commit whose
# path matches the extended regex PATTERN, copied to DIR/KIND under a name
# made of the repository and the path.
put() {
  local repo=$1 kind=$2 pattern=$3 g mode path name
  if ! g=$(gitdir "$repo"); then
    echo "skipped $repo: not mirrored under $mirrors" >&2
    return
  fi
  # Mode 120000 entries are git links (one snapshot naming another): skipped.
  git --git-dir="$g" ls-tree -r HEAD | grep -E "$pattern" |
    while read -r mode _ _ path; do
      [[ $mode == 100644 || $mode == 100755 ]] || continue
      name="${repo#*/}_${path//\//_}"
      git --git-dir="$g" show "HEAD:$path" >"$dir/$kind/$name"
    done
}

put LLNL/mpibind xml $'\ttopo-xml/[^/]*\\.xml$'
put flux-framework/flux-sched xml $'\tt/data/hwloc-data/.*\\.xml$'
put flux-framework/flux-core xml $'\tt/hwloc-data/[^/]*\\.xml$'

put jaypipes/ghw sysfs $'\ttestdata/snapshots/[^/]*\\.tar\\.gz$'
put containers/nri-plugins sysfs $'\t(pkg/sysfs/test-data-sample[12]\\.tar\\.xz|pkg/resmgr/lib/memory/test-data-sample[12]\\.tar\\.xz|pkg/cpuallocator/testdata/sysfs\\.tar\\.bz2|cmd/plugins/topology-aware/policy/testdata/sysfs\\.tar\\.bz2|pkg/topology/test-data\\.tar\\.gz)$'
put intel/cri-resource-manager sysfs $'\tpkg/cpuallocator/testdata/sysfs\\.tar\\.bz2$'
put performancecopilot/pcp sysfs $'\tqa/linux/(sysdev-root-00[12]|sysfs-numa-001|sysfs-cpufreq-scaling-001|bigsys-root-hpbl920gen8|meminfo-root-008)\\.tgz$'

# prometheus/procfs keeps its fixtures as one "ttar" text archive; only
# what the sysfs reader looks at is unpacked (by this script, not by the
# repository's own ttar program).
if g=$(gitdir prometheus/procfs); then
  git --git-dir="$g" show HEAD:testdata/fixtures.ttar |
    python3 -c '
import os, re, sys
out = sys.argv[1]
keep = re.compile(r"fixtures/(sys/devices/system/(cpu|node)(/|$)|proc(/cpuinfo)?$|sys(/devices(/system)?)?$)")
lines = sys.stdin.read().split("\n")
i = 0
while i < len(lines):
    line = lines[i]; i += 1
    if line.startswith("Directory: "):
        p = line[len("Directory: "):]
        if keep.match(p):
            os.makedirs(os.path.join(out, p), exist_ok=True)
    elif line.startswith("Path: "):
        p = line[len("Path: "):]
        if i < len(lines) and lines[i].startswith("Lines: "):
            n = int(lines[i][len("Lines: "):]); i += 1
            body = lines[i:i + n]; i += n
            text = "\n".join(body) + "\n"
            if text.endswith("EOF\n"):
                text = text[:-4]
            text = text.replace("NULLBYTE", "\0")
            if keep.match(p):
                os.makedirs(os.path.dirname(os.path.join(out, p)), exist_ok=True)
                with open(os.path.join(out, p), "w") as f:
                    f.write(text)
' "$dir/sysfs/.procfs"
  mv "$dir/sysfs/.procfs/fixtures" "$dir/sysfs/procfs_fixtures"
  rmdir "$dir/sysfs/.procfs"
else
  echo "skipped prometheus/procfs: not mirrored under $mirrors" >&2
fi

# iree-org/iree keeps sysfs captures as manifests of `path=content` lines
# (paths below /sys/devices/system, one line per file, newline stripped);
# only the two captured from real machines are expanded, not the synthetic.
if g=$(gitdir iree-org/iree); then
  for name in x86_64_ryzen9_7950x arm64_pixel6_tensor; do
    out="$dir/sysfs/iree_$name"
    git --git-dir="$g" show "HEAD:runtime/src/iree/task/testdata/sysfs/$name.sysfs.txt" |
      python3 -c '
import os, sys
out = sys.argv[1]
for line in sys.stdin.read().split("\n"):
    if not line or line.startswith("#") or "=" not in line:
        continue
    path, value = line.split("=", 1)
    if path.startswith("/") or ".." in path.split("/"):
        sys.exit("iree manifest: bad path " + path)
    full = os.path.join(out, "sys/devices/system", path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as f:
        f.write(value + "\n")
' "$out"
  done
else
  echo "skipped iree-org/iree: not mirrored under $mirrors" >&2
fi

# pytorch/cpuinfo keeps what it read on Android phones and tablets (many
# big.LITTLE, some with CPUs offline) as C headers: one entry per file with
# its path, size and content as C string literals. Only /proc/cpuinfo and
# /sys/devices/system/cpu are written out; where a header has an arm64 and
# an arm branch (#if CPUINFO_ARCH_ARM64 ... #elif), the arm64 one is kept.
if g=$(gitdir pytorch/cpuinfo); then
  git --git-dir="$g" ls-tree -r --name-only HEAD | grep -E '^test/mock/[^/]*\.h$' |
    while read -r path; do
      name=$(basename "$path" .h)
      git --git-dir="$g" show "HEAD:$path" | python3 -c '
import ast, os, re, sys
out = sys.argv[1]
kept, stack = [], []
for line in sys.stdin.read().split("\n"):
    s = line.strip()
    if s.startswith("#if"):
        stack.append(True)
    elif s.startswith(("#elif", "#else")):
        stack[-1] = False
    elif s.startswith("#endif"):
        stack.pop()
    elif all(stack):
        kept.append(line)
lit = r"\"(?:[^\"\\]|\\.)*\""
entry = re.compile(r"\.path\s*=\s*(" + lit + r")\s*,\s*\.size\s*=\s*\d+\s*,\s*(?:\.content\s*=\s*((?:" + lit + r"\s*)+))?", re.S)
n = 0
for m in entry.finditer("\n".join(kept)):
    path = ast.literal_eval(m.group(1))
    if not (path.startswith("/sys/devices/system/cpu/") or path == "/proc/cpuinfo"):
        continue
    parts = path.strip("/").split("/")
    if ".." in parts:
        sys.exit("pytorch/cpuinfo mock: bad path " + path)
    text = "".join(ast.literal_eval(p) for p in re.findall(lit, m.group(2) or ""))
    full = os.path.join(out, *parts)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w", encoding="latin-1") as f:
        f.write(text)
    n += 1
if n == 0:
    sys.exit("pytorch/cpuinfo mock: no file")
' "$dir/sysfs/cpuinfo_$name"
    done
else
  echo "skipped pytorch/cpuinfo: not mirrored under $mirrors" >&2
fi

# lscpu outputs kept as files: a Grace Hopper node (72 Neoverse-V2, 8
# memory-only GPU nodes; its lstopo.txt beside it is the truth) and a
# SpacemiT K3 (riscv64, two model blocks, pasted with its shell prompt).
put ntua-el20062/grace-hopper-benchmark lscpu $'\tlscpu\\.txt$'
put sanderjo/SpacemiT-K3-X100-A100 lscpu $'\tlscpu\\.txt$'
# RedHatInsights/insights-core's lscpu parser tests hold outputs as Python
# triple-quoted strings; each one that starts with "Architecture:" is one.
if g=$(gitdir RedHatInsights/insights-core); then
  git --git-dir="$g" show HEAD:insights/tests/parsers/test_lscpu.py |
    python3 -c '
import re, sys
q = chr(34) * 3
for i, m in enumerate(re.finditer(q + r"\n(.*?)" + q, sys.stdin.read(), re.S)):
    if m.group(1).startswith("Architecture:"):
        with open("%s/insights-core_test_lscpu_%d.txt" % (sys.argv[1], i), "w") as f:
            f.write(m.group(1))
' "$dir/lscpu"
else
  echo "skipped RedHatInsights/insights-core: not mirrored under $mirrors" >&2
fi

# linuxhw/LsCPU: lscpu's summaries from hw-probe reports uploaded to
# linux-hardware.org (168 thousand: x86 of every era, arm, arm64, VIA;
# util-linux 2.2x to 2.3x, some localized, some with CPUs off-line), one file
# per report at VENDOR/PREFIX/MODEL/FAMILY-MODEL-STEPPING/PROBE; the path
# becomes the name. Read through one `git archive` stream: a `git show` per
# file would take an hour.
if g=$(gitdir linuxhw/LsCPU); then
  git --git-dir="$g" archive HEAD | python3 -c '
import os, sys, tarfile
out = sys.argv[1]
with tarfile.open(fileobj=sys.stdin.buffer, mode="r|") as t:
    for m in t:
        if m.isfile() and "/" in m.name:
            name = "LsCPU_" + m.name.replace("/", "_").replace(" ", "-")
            with open(os.path.join(out, name), "wb") as f:
                f.write(t.extractfile(m).read())
' "$dir/lscpu"
else
  echo "skipped linuxhw/LsCPU: not mirrored under $mirrors" >&2
fi

# Byte-identical copies are kept once (the first name in sort order).
for kind in xml sysfs; do
  (cd "$dir/$kind" && find . -maxdepth 1 -type f -printf '%f\n' | sort |
    xargs -r sha256sum | awk 'seen[$1]++ { print $2 }' | xargs -r rm -f)
done
for kind in xml sysfs lscpu; do
  echo "$kind: $(find "$dir/$kind" -mindepth 1 -maxdepth 1 | wc -l)"
done
