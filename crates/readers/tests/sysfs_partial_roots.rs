//! A snapshot archived from inside `/sys` reads as the same tree archived
//! whole. People make such archives by hand (`cd /sys/devices/system && tar
//! czf t.tgz cpu node`, or `tar czf t.tgz .` inside the CPU directory), so
//! the reader takes any archive whose members hold the lower part of
//! `sys/devices/system/cpu` and puts them back where the reader looks.
//!
//! The truth for each corpus snapshot is the same members under their full
//! `sys/...` names in one archive: the two archives hold identical bytes and
//! differ only in the members' names, so they must read to equal topologies
//! (or both fail).

use std::path::{Path, PathBuf};

#[path = "../benches/support/sysfs_tree.rs"]
mod sysfs_tree;

fn corpus() -> PathBuf {
    readers::corpus::dir(env!("CARGO_MANIFEST_DIR"))
}

/// The reader's paths an archive may need: the CPU and node directories and
/// the hybrid PMUs' CPU lists, and the directories above them. The rest of a
/// dump (buses, classes, PCI devices) would only make the archives larger.
fn needed(path: &str) -> bool {
    [
        "sys/devices/system/cpu",
        "sys/devices/system/node",
        "sys/devices/cpu_",
    ]
    .iter()
    .any(|p| path.starts_with(p) || p.starts_with(path))
}

/// A plain tar of what is [`needed`] below `root`'s `base`, each member
/// named `name(rel)` where `rel` is its path below `base`; symlinks are kept
/// as links.
fn archive(root: &Path, base: &str, name: &dyn Fn(&str) -> String) -> Vec<u8> {
    let src = root.join(base);
    let mut b = tar::Builder::new(Vec::new());
    b.follow_symlinks(false);
    let mut walk = vec![PathBuf::new()];
    while let Some(rel) = walk.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(src.join(&rel))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        entries.sort();
        for entry in entries {
            let rel = rel.join(entry);
            let path = src.join(&rel);
            let rel_text = rel.to_string_lossy();
            if !needed(&format!("{base}/{rel_text}")) {
                continue;
            }
            let member = name(&rel_text);
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                b.append_dir(&member, &path).unwrap();
                walk.push(rel);
            } else if meta.is_file() || meta.file_type().is_symlink() {
                b.append_path_with_name(&path, &member).unwrap();
            }
        }
    }
    b.into_inner().unwrap()
}

/// Where an archive made by hand starts, as the reader's path to it, and
/// what the reader calls a directory there.
const BASES: &[(&str, &str)] = &[
    ("sys", "the sys/ directory"),
    ("sys/devices", "the sys/devices directory"),
    ("sys/devices/system", "the sys/devices/system directory"),
    (
        "sys/devices/system/cpu",
        "the sys/devices/system/cpu directory",
    ),
];

/// Calls `f` with each corpus snapshot's file name and the root it extracts
/// to. One snapshot at a time, in memory where the host has a tmpfs:
/// thousands of small files removed from a loaded disk take minutes.
fn each_snapshot(mut f: impl FnMut(&str, &Path)) {
    for snapshot in sysfs_tree::snapshots(&corpus()) {
        let tmp = tempfile::tempdir_in("/dev/shm")
            .or_else(|_| tempfile::tempdir())
            .unwrap();
        if let Some(root) = sysfs_tree::extract(&snapshot, tmp.path()) {
            f(&snapshot.file_name().unwrap().to_string_lossy(), &root);
        }
    }
}

#[test]
fn archives_made_inside_sys_read_as_the_whole_tree() {
    if !readers::corpus::present(&corpus(), "sysfs archives made inside /sys") {
        return;
    }
    let (mut compared, mut both_fail) = (0, 0);
    each_snapshot(|file, root| {
        for (base, _) in BASES {
            if !root.join(base).is_dir() {
                continue;
            }
            let whole = archive(root, base, &|rel| format!("{base}/{rel}"));
            let part = archive(root, base, &|rel| format!("./{rel}"));
            // One name for both: the model keeps it as the source.
            let read = |bytes: &[u8]| readers::sysfs::read_archive_bytes(bytes, file);
            match (read(&whole), read(&part)) {
                (Ok(a), Ok(b)) => {
                    assert!(
                        a == b,
                        "{file}: archived inside {base}, the topology differs"
                    );
                    compared += 1;
                }
                (Err(_), Err(_)) => both_fail += 1,
                (Ok(_), Err(e)) => panic!("{file}: archived inside {base}: {e}"),
                (Err(e), Ok(_)) => panic!("{file}: only the archive made inside {base} reads: {e}"),
            }
        }
    });
    println!("{compared} archives made inside /sys read alike, {both_fail} fail alike");
    // Every snapshot with a CPU directory gives at least one of each base.
    assert!(compared >= 4 * 80, "only {compared} compared");
}

/// A directory that is only part of a root is refused with one error that
/// says which part it is, for each depth of every corpus snapshot that has
/// CPU directories.
#[test]
fn a_directory_inside_sys_is_named_for_what_it_is() {
    if !readers::corpus::present(&corpus(), "sysfs directories inside /sys") {
        return;
    }
    let mut checked = 0;
    each_snapshot(|file, root| {
        if !root.join("sys/devices/system/cpu/cpu0").is_dir() {
            return;
        }
        for (base, part) in BASES {
            let e = readers::sysfs::read_dir(&root.join(base)).unwrap_err();
            assert!(
                e.source.ends_with(base) && e.message.contains(&format!("looks like {part}")),
                "{file}, {base}: {e}"
            );
        }
        checked += 1;
    });
    assert!(
        checked >= 80,
        "only {checked} snapshots with CPU directories"
    );
}
