//! Where tests find the corpus — real machines' snapshots (hwloc's and
//! util-linux's test data, Linux captures) kept in `shared/corpus` beside the
//! repository — and what they do without it.
//!
//! A developer without the corpus gets the tests that need it skipped, each
//! saying loudly on the terminal what it skipped and how many items; CI (the
//! `CI` environment variable set) has the corpus, so there a missing corpus is
//! a failure. A corpus that is present but unreadable fails as before: only
//! absence skips.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The corpus directory for a crate whose manifest is `manifest_dir`:
/// `$MANYCORE_CORPUS` when set, else the first `shared/corpus` found beside
/// the repository or one of its parents.
pub fn dir(manifest_dir: &str) -> PathBuf {
    if let Some(d) = std::env::var_os("MANYCORE_CORPUS") {
        return PathBuf::from(d);
    }
    beside_repository(manifest_dir, "shared/corpus")
}

/// The first `rel` directory found beside `manifest_dir` or one of its
/// parents, else where it would be beside the repository.
fn beside_repository(manifest_dir: &str, rel: &str) -> PathBuf {
    let start = Path::new(manifest_dir);
    start
        .ancestors()
        .map(|a| a.join(rel))
        .find(|p| p.is_dir())
        .unwrap_or_else(|| start.join("..").join(rel))
}

/// The text of the seed mail whose file name starts with `prefix` (`"001_"`),
/// from the first `shared/seeds` beside the repository or one of its parents
/// (where the corpus is found). The seeds are the only link between the
/// numbers fitted to them and their text, so a missing seed panics with the
/// place it looked, everywhere, not only under CI.
pub fn seed_text(manifest_dir: &str, prefix: &str) -> String {
    let dir = beside_repository(manifest_dir, "shared/seeds");
    let entry = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| {
            panic!(
                "{}: {e} (the seeds belong beside the repository)",
                dir.display()
            )
        })
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with(prefix))
        .unwrap_or_else(|| panic!("no seed {prefix}* in {}", dir.display()));
    std::fs::read_to_string(entry.path())
        .unwrap_or_else(|e| panic!("{}: {e}", entry.path().display()))
}

/// Whether a test that needs `corpus` (to check `what`, e.g. "15 hwloc
/// snapshots against lstopo's console") can run: true when the directory
/// exists. When it does not, writes one loud line to the terminal (past the
/// test harness's capture, so it shows for passing tests) and returns false;
/// under CI it panics instead.
pub fn present(corpus: &Path, what: &str) -> bool {
    if corpus.is_dir() {
        return true;
    }
    let line = format!(
        "SKIPPED {what}: the corpus {} is missing (real machines' snapshots; see README, \"The corpus\")",
        corpus.display()
    );
    assert!(std::env::var_os("CI").is_none(), "{line}; CI must have it");
    // Straight to the stream: `eprintln!` output of a passing test is hidden.
    let _ = writeln!(std::io::stderr().lock(), "{line}");
    false
}

/// Like [`present`] for a test that needs a program (`lstopo-no-graphics`)
/// installed by scripts/install-deps.sh.
pub fn program_present(program: &str, what: &str) -> bool {
    let found = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(program).is_file()));
    if found {
        return true;
    }
    let line = format!(
        "SKIPPED {what}: {program} is not installed (bash scripts/install-deps.sh installs it)"
    );
    assert!(std::env::var_os("CI").is_none(), "{line}; CI must have it");
    let _ = writeln!(std::io::stderr().lock(), "{line}");
    false
}

/// Every sysfs snapshot archive (`.tar.gz`, `.tar.bz2`) in `corpus` whose
/// directory, relative to the corpus and with `/` separators (for example
/// `hwloc/tests/hwloc/linux`), `keep` accepts; sorted by path. hwloc's
/// `tests/hwloc/x86` archives are CPUID dumps, not sysfs trees, and are
/// never listed. The tests that walk the corpus each choose their
/// directories here and assert how many snapshots they got, so a snapshot
/// added to or lost from the corpus shows in every one of them.
///
/// Panics naming the directory when a directory of a present corpus cannot
/// be read: a corpus that is there must be whole.
pub fn sysfs_snapshots(corpus: &Path, keep: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut walk = vec![PathBuf::new()];
    while let Some(rel) = walk.pop() {
        let dir = corpus.join(&rel);
        let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let rel_name = rel.to_string_lossy().replace('\\', "/");
        for e in entries {
            let e = e.unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
            let name = e.file_name().to_string_lossy().into_owned();
            if e.path().is_dir() {
                if !(rel_name.ends_with("tests/hwloc") && name == "x86") {
                    walk.push(rel.join(&name));
                }
            } else if (name.ends_with(".tar.gz") || name.ends_with(".tar.bz2")) && keep(&rel_name) {
                out.push(e.path());
            }
        }
    }
    out.sort();
    out
}
