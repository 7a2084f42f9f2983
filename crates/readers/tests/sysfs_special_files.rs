//! A FIFO or a device node where a dump has a sysfs file is refused as
//! such, naming the file, promptly, and without a byte of it being taken,
//! whether the reader reads it itself or a read-ahead thread fetched it.
//!
//! Truth: what the kernel does with these files (pipe(7): reading a pipe
//! takes its bytes, and a pipe cannot be read at an offset; mem(4)/null(4):
//! `/dev/null` reads as empty, `/dev/zero` and `/dev/urandom` never end),
//! not anything the reader wrote. The device cases need the right to
//! `mknod`; without it they say so and check nothing.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use readers::sysfs::{read_dir_with, Threads};

#[path = "../benches/support/sysfs_tree.rs"]
mod sysfs_tree;

const CPU: &str = "sys/devices/system/cpu";

/// Longer than any read of these small trees takes on a loaded host; a
/// read blocked on a FIFO or streaming a device never ends.
const PROMPTLY: Duration = Duration::from_secs(30);

/// A 2-package, 64-core, 2-thread tree (threads numbered last, so CPU
/// `c + 128` is CPU `c`'s sibling) with `rel` taken away: 256 CPUs, more
/// than one chunk of the reading ahead, so a second thread has CPUs to
/// fetch.
fn tree_without(rel: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    sysfs_tree::write_machine(dir.path(), 2, 64, 2);
    let p = dir.path().join(rel);
    std::fs::remove_file(&p).unwrap();
    (dir, p)
}

/// The error of reading `dir` on `threads`, within [`PROMPTLY`].
fn error_of(dir: &Path, threads: usize) -> String {
    let (tx, rx) = mpsc::channel();
    let dir = dir.to_path_buf();
    std::thread::spawn(move || {
        let got = read_dir_with(&dir, Threads::Fixed(threads)).map(|t| t.cpus().len());
        let _ = tx.send(got.map_err(|e| e.to_string()));
    });
    match rx.recv_timeout(PROMPTLY) {
        Ok(Ok(cpus)) => panic!("read as {cpus} CPUs, not refused"),
        Ok(Err(e)) => e,
        Err(_) => panic!("no answer in {PROMPTLY:?}: the read hangs"),
    }
}

fn assert_refused(dir: &Path, file: &Path, kind: &str) {
    for threads in [1, 2] {
        let e = error_of(dir, threads);
        assert!(
            e.contains(&file.display().to_string()) && e.contains(kind),
            "{threads} thread(s): {e:?} should name {} as a {kind}",
            file.display()
        );
    }
}

fn mkfifo(path: &Path) {
    let ok = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "mkfifo {}", path.display());
}

/// A FIFO holding bytes a plain read would take, with a writer that keeps
/// it open (a blocking read would wait for more): refused, and its bytes
/// are still there afterwards. Once as a file read before the CPUs, once
/// as one read per CPU (on 2 threads, by a read-ahead thread when one
/// took that CPU's chunk).
#[test]
fn a_fifo_is_refused_without_taking_its_bytes() {
    for rel in [
        format!("{CPU}/online"),
        format!("{CPU}/cpu100/topology/core_id"),
    ] {
        let (dir, p) = tree_without(&rel);
        mkfifo(&p);
        // Read and write: opening a FIFO so does not wait for a reader.
        let mut pipe = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&p)
            .unwrap();
        pipe.write_all(b"0-7\n").unwrap();
        assert_refused(dir.path(), &p, "FIFO");
        let mut left = [0u8; 4];
        pipe.read_exact(&mut left).unwrap();
        assert_eq!(&left, b"0-7\n", "{rel}: the reader took the FIFO's bytes");
    }
}

/// Device nodes of the memory devices (major 1) in place of sysfs files:
/// `/dev/null` (minor 3) reads as empty, `/dev/zero` (5) and `/dev/urandom`
/// (9) never end. Each is refused as a character device, promptly.
#[test]
fn memory_devices_are_refused_as_devices() {
    for (minor, rel) in [
        ("3", format!("{CPU}/online")),
        ("5", format!("{CPU}/cpu100/topology/core_id")),
        ("9", format!("{CPU}/cpu100/cache/index0/shared_cpu_map")),
        ("3", format!("{CPU}/cpu90/topology/thread_siblings")),
    ] {
        let (dir, p) = tree_without(&rel);
        let made = std::process::Command::new("mknod")
            .arg(&p)
            .args(["c", "1", minor])
            .status()
            .is_ok_and(|s| s.success());
        if !made {
            eprintln!("mknod not permitted here: device nodes not checked");
            return;
        }
        assert_refused(dir.path(), &p, "character device");
    }
}
