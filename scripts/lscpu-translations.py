#!/usr/bin/env python3
"""Writes crates/readers/src/lscpu/translated.rs: every translation that
util-linux's po files have shipped (release tags v2.17 to the newest) of the
lscpu summary labels the lscpu reader reads, so that a translated summary is
refused by name instead of read as if those lines were absent.

    scripts/lscpu-translations.py UTIL_LINUX_GIT_DIR > crates/readers/src/lscpu/translated.rs

Fuzzy and empty translations are left out (gettext prints the English label
for them), as are translations equal to the English label (they read as
English) and ones a legacy 8-bit po file no longer decodes as UTF-8.
"""
import json
import re
import subprocess
import sys

git_dir = sys.argv[1]
# The labels machine_field, TypeBlocks and node_or_cache_field (scan.rs) read.
LABELS = [
    "Architecture:", "CPU op-mode(s):", "Byte Order:", "CPU(s):",
    "On-line CPU(s) list:", "On-line CPU(s) mask:", "Off-line CPU(s) list:",
    "Off-line CPU(s) mask:", "Vendor ID:", "ISA:", "Flags:",
    "Hypervisor vendor:", "NUMA node(s):", "Model name:",
    "Thread(s) per core:", "Core(s) per socket:", "Core(s) per cluster:",
    "Socket(s):", "CPU socket(s):", "Cluster(s):", "Socket(s) per book:",
    "Book(s) per drawer:", "Book(s):", "Drawer(s):", "NUMA node%d CPU(s):",
    "%s cache:",
]


def git(*args):
    return subprocess.run(["git", "--git-dir", git_dir, *args],
                          capture_output=True, check=True).stdout


def strings(block):
    return "".join(json.loads('"' + s + '"')
                   for s in re.findall(r'"((?:[^"\\]|\\.)*)"', block))


def norm(label):
    # The label as the reader sees it: before the colon, trimmed (also of
    # the no-break space French puts before it).
    return re.sub(r"[:\uff1a][\s\u00a0]*$", "", label).strip(" \t\u00a0")


tags = [t for t in git("tag").decode().split()
        if re.fullmatch(r"v2\.(1[7-9]|[2-9][0-9])", t)]
tags.sort(key=lambda t: int(t.split(".")[1]))
head = git("rev-parse", tags[-1] + "^{commit}").decode().strip()
found = {}  # (english, translated) -> set of languages
for tag in tags:
    for path in git("ls-tree", "--name-only", tag, "po/").decode().split():
        if not path.endswith(".po"):
            continue
        lang = path[3:-3]
        text = git("show", f"{tag}:{path}").decode("utf-8", "replace")
        for entry in text.split("\n\n"):
            if "#, fuzzy" in entry or entry.lstrip().startswith("#~"):
                continue
            m = re.search(r'^msgid ((?:"(?:[^"\\]|\\.)*"\s*)+)msgstr ((?:"(?:[^"\\]|\\.)*"\s*)+)',
                          entry, re.M)
            if not m:
                continue
            english, translated = strings(m.group(1)), strings(m.group(2))
            if english not in LABELS or not translated.strip() or "\ufffd" in translated:
                continue
            e, t = norm(english), norm(translated)
            if t and t != e:
                found.setdefault((e, t), set()).add(lang)

# No translation may be a label English lscpu prints (any of lscpu's
# msgids ending in a colon at the newest tag, and the ones read here):
# an English summary holding it would be refused.
pot = git("show", f"{tags[-1]}:po/util-linux.pot").decode()
english = {norm(l) for l in LABELS}
for entry in pot.split("\n\n"):
    m = re.search(r'^msgid ((?:"(?:[^"\\]|\\.)*"\s*)+)', entry, re.M)
    if m and "lscpu" in entry and strings(m.group(1)).endswith(":"):
        english.add(norm(strings(m.group(1))))
for (e, t) in found:
    if t in english:
        sys.exit(f"{t!r} translates {e!r} but is itself an English label")

print(f"""//! util-linux's translations of the lscpu labels the reader reads, from
//! the po files of util-linux's releases v2.17 to {tags[-1]} (commit {head[:12]},
//! LGPL/GPL translations; labels only, as facts to recognise), written by
//! `scripts/lscpu-translations.py`: do not edit by hand. `%d` stands for a
//! node number, `%s` for a cache name.

/// (languages, English label, translated label), sorted by English label.
pub(super) const TRANSLATIONS: &[(&str, &str, &str)] = &[""")
for (e, t) in sorted(found, key=lambda k: (k[0], k[1])):
    langs = ",".join(sorted(found[(e, t)]))
    print(f"    ({json.dumps(langs)}, {json.dumps(e)}, {json.dumps(t, ensure_ascii=False)}),")
print("];")
