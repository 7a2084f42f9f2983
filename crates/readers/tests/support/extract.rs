//! Archives of real dumps extracted for tools that read only directories
//! (lstopo, and tests that edit a dump's files).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The archive's files in a fresh directory (tar finds the compression
/// itself: .tar.gz, .tar.bz2 and .tar.xz all occur).
pub fn extract(archive: &Path) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let ok = Command::new("tar")
        .arg("xf")
        .arg(archive)
        .arg("-C")
        .arg(tmp.path())
        .status()
        .expect("running tar")
        .success();
    assert!(ok, "tar {}", archive.display());
    tmp
}

/// The one directory at the top of an extracted archive (hwloc's and
/// util-linux's dumps hold their root in one).
#[allow(dead_code)] // Not every test that extracts needs it.
pub fn top_dir(tmp: &tempfile::TempDir) -> PathBuf {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(
        dirs.len(),
        1,
        "one top directory in {}",
        tmp.path().display()
    );
    dirs.pop().unwrap()
}
