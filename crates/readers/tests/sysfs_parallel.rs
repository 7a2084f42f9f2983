//! The sysfs reader reading ahead on several threads gives exactly the
//! topology (or exactly the error) of the sequential reader, on every sysfs
//! snapshot of the corpus extracted to a directory (the only input the
//! threads read from) and on a generated 1024-CPU tree.
//!
//! The sequential reader is the reference: it is the one the corpus truth
//! tests check against hwloc's and util-linux's expected outputs. Threads
//! are forced (2 and 3, whatever the input's size) so that every snapshot,
//! not only the large ones, goes through the worker threads, the stash and
//! the batch boundaries.

use std::path::{Path, PathBuf};

use readers::sysfs::{read_dir_with, Threads};

#[path = "../benches/support/sysfs_tree.rs"]
mod sysfs_tree;

/// A scratch directory, in memory when the host has a tmpfs at `/dev/shm`:
/// thousands of small files are written, which a loaded disk makes slow.
fn scratch() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    match shm.is_dir() {
        true => tempfile::tempdir_in(shm).unwrap_or_else(|_| tempfile::tempdir().unwrap()),
        false => tempfile::tempdir().unwrap(),
    }
}

fn corpus() -> PathBuf {
    readers::corpus::dir(env!("CARGO_MANIFEST_DIR"))
}

/// Every thread count gives the sequential reader's result.
fn assert_same(dir: &Path, name: &str) {
    let outcome = |threads| read_dir_with(dir, Threads::Fixed(threads)).map_err(|e| e.to_string());
    let sequential = outcome(1);
    for threads in [2, 3] {
        assert!(
            outcome(threads) == sequential,
            "{name}: {threads} threads differ from the sequential read ({})",
            match &sequential {
                Ok(t) => format!("{} CPUs", t.cpus().len()),
                Err(e) => e.clone(),
            }
        );
    }
}

/// The snapshots `sysfs_tree::snapshots` lists: a snapshot added to or lost
/// from the corpus fails the test.
const LISTED: usize = 89;

/// The listed archives that hold no `sys/` tree to read, by file name:
/// hwloc's `linux/allowed/test1.fsroot` has only `dev/cpuset` and `proc`
/// (it tests the allowed-CPU masks, read with another snapshot's sysfs).
const NO_SYS_TREE: &[&str] = &["test1.fsroot.tar.bz2"];

#[test]
fn every_corpus_snapshot_reads_the_same_on_several_threads() {
    if !readers::corpus::present(&corpus(), "reading sysfs snapshots on threads") {
        return;
    }
    let tmp = scratch();
    let listed = sysfs_tree::snapshots(&corpus());
    assert_eq!(listed.len(), LISTED, "corpus sysfs snapshots listed");
    let mut compared = 0;
    let mut no_sys = Vec::new();
    for (i, archive) in listed.iter().enumerate() {
        let name = archive.file_name().unwrap().to_string_lossy().to_string();
        let Some(dir) = sysfs_tree::extract(archive, &tmp.path().join(format!("s{i}"))) else {
            no_sys.push(name);
            continue;
        };
        assert_same(&dir, &name);
        compared += 1;
    }
    println!("{compared} snapshots read alike on 1, 2 and 3 threads");
    no_sys.sort();
    assert_eq!(no_sys, NO_SYS_TREE, "archives without a sys/ tree");
    assert_eq!(compared + NO_SYS_TREE.len(), LISTED);
}

#[test]
fn a_generated_1024_cpu_tree_reads_the_same_on_several_threads() {
    let tmp = scratch();
    let cpus = sysfs_tree::write_machine(tmp.path(), 4, 128, 2);
    assert_eq!(cpus, 1024);
    let t = read_dir_with(tmp.path(), Threads::Fixed(2)).unwrap();
    assert_eq!(t.cpus().len(), 1024);
    assert_same(tmp.path(), "generated 4p×128c×2t");
}
