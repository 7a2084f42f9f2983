//! Firmware files that are no regular file, or far too big to be a table:
//! one error naming the file, at once. Against plain `File::open` a FIFO
//! blocks the open forever and `/dev/zero` streams without end; the readers'
//! guarded open refuses both before a byte is read, and refuses a sparse file
//! from its size alone.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

/// `f` on its own thread: a hang fails the test instead of stalling it.
fn in_time<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(30))
        .expect("reading the firmware file hung")
}

fn mkfifo(path: &Path) {
    let ok = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(ok.success(), "mkfifo {}", path.display());
}

/// A file of `irq::MAX_FILE_BYTES + 1` bytes that takes no disk.
fn sparse(path: &Path) {
    let f = std::fs::File::create(path).unwrap();
    f.set_len(irq::MAX_FILE_BYTES + 1).unwrap();
}

/// Makes a file at the path given.
type Make = fn(&Path);

/// The three hostile kinds of file, each with a word its error must contain.
const KINDS: [(&str, Make); 3] = [
    ("FIFO", mkfifo),
    ("character device", |p| {
        std::os::unix::fs::symlink("/dev/zero", p).unwrap()
    }),
    ("limit", sparse),
];

#[test]
fn a_hostile_device_tree_blob_is_one_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    for (i, (word, make)) in KINDS.iter().enumerate() {
        let path = dir.path().join(format!("fdt{i}"));
        make(&path);
        let p = path.clone();
        let e = in_time(move || irq::dt::read_file(&p)).unwrap_err();
        assert_eq!(e.file, path.display().to_string());
        assert!(e.reason.contains(word), "{word}: {e}");
    }
    // /dev/zero named directly.
    let e = in_time(|| irq::dt::read_file(Path::new("/dev/zero"))).unwrap_err();
    assert_eq!(e.file, "/dev/zero");
    assert!(e.reason.contains("character device"), "{e}");
}

#[test]
fn a_hostile_acpi_table_is_one_error_naming_it() {
    let apic = common::capture("acpi-its1").table("APIC").unwrap().bytes;
    for sig in ["APIC", "SRAT", "SLIT"] {
        for (word, make) in KINDS {
            let dir = tempfile::tempdir().unwrap();
            if sig != "APIC" {
                std::fs::write(dir.path().join("APIC"), &apic).unwrap();
            }
            let path = dir.path().join(sig);
            make(&path);
            let d: PathBuf = dir.path().into();
            let e = in_time(move || irq::acpi::read_dir(&d)).unwrap_err();
            assert_eq!(e.file, path.display().to_string(), "{sig} {word}");
            assert!(e.reason.contains(word), "{sig} {word}: {e}");
        }
    }
}
