//! `domains --compare DIR` and `--out DIR` stay inside DIR: links planted in
//! a dump are never followed (reading one would print another file's text;
//! writing through one would overwrite it), FIFOs and huge sparse files are
//! errors at once, and only the domain files and `dmesg.txt` are opened.
//! Every dump here is generated: manycore's own domains of a small machine,
//! written by `render::write_tree`, then tampered with.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use domains::compare::{compare, Dump};
use domains::render::{write_tree, Layout};
use domains::{build, Domains, KernelVersion};

/// A scratch directory removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let p = std::env::temp_dir().join(format!("domains-confine-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        Scratch(p)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn machine() -> Domains {
    let t = readers::synthetic::parse("package:2 core:2 pu:2").unwrap();
    build(&t, KernelVersion::V6_8).unwrap()
}

/// A good dump of `machine()` under `scratch/dump`, and the outside file a
/// planted link points at (holding a marker that must never be printed).
fn dump(scratch: &Scratch) -> (PathBuf, PathBuf) {
    let dir = scratch.0.join("dump");
    std::fs::create_dir_all(&dir).unwrap();
    write_tree(&machine(), Layout::Debugfs, &dir).unwrap();
    let secret = scratch.0.join("secret");
    std::fs::write(&secret, "SECRET-MARKER\n").unwrap();
    (dir, secret)
}

fn mkfifo(p: &Path) {
    let ok = std::process::Command::new("mkfifo")
        .arg(p)
        .status()
        .unwrap();
    assert!(ok.success(), "mkfifo {}", p.display());
}

/// Runs `f` on a thread and fails the test if it does not finish in time (a
/// blocked open of a FIFO would hang the test otherwise).
fn within<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(20))
        .expect("blocked: the FIFO was opened as if it were a file")
}

#[test]
fn the_generated_dump_compares_clean() {
    let s = Scratch::new("clean");
    let (dir, _) = dump(&s);
    let d = Dump::read(&dir).unwrap();
    assert!(compare(&machine(), &d).is_empty());
}

#[test]
fn a_planted_file_link_is_refused_and_not_read() {
    let s = Scratch::new("filelink");
    let (dir, secret) = dump(&s);
    let flags = dir.join("cpu0/domain0/flags");
    std::fs::remove_file(&flags).unwrap();
    std::os::unix::fs::symlink(&secret, &flags).unwrap();
    let e = Dump::read(&dir).unwrap_err();
    assert!(e.path.ends_with("cpu0/domain0/flags"), "{e}");
    assert!(e.message.contains("symbolic link"), "{e}");
    assert!(!e.to_string().contains("SECRET"), "{e}");
}

#[test]
fn a_planted_directory_link_is_refused() {
    let s = Scratch::new("dirlink");
    let (dir, _) = dump(&s);
    let outside = s.0.join("outside");
    std::fs::rename(dir.join("cpu1"), &outside).unwrap();
    std::fs::write(outside.join("domain0/flags"), "SECRET-MARKER\n").unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("cpu1")).unwrap();
    let e = Dump::read(&dir).unwrap_err();
    assert!(
        e.path.ends_with("cpu1") && e.message.contains("symbolic link"),
        "{e}"
    );
}

#[test]
fn fifos_and_sparse_files_in_a_dump_are_errors_at_once() {
    let s = Scratch::new("special");
    let (dir, _) = dump(&s);
    // A FIFO where a domain file is.
    let name = dir.join("cpu0/domain0/name");
    std::fs::remove_file(&name).unwrap();
    mkfifo(&name);
    let d = dir.clone();
    let e = within(move || Dump::read(&d)).unwrap_err();
    assert!(e.path.ends_with("cpu0/domain0/name"), "{e}");
    assert!(e.message.contains("FIFO"), "{e}");
    std::fs::remove_file(&name).unwrap();
    // A 100 GiB sparse file: refused from the limit, not read.
    let f = std::fs::File::create(&name).unwrap();
    f.set_len(100 << 30).unwrap();
    let d = dir.clone();
    let e = within(move || Dump::read(&d)).unwrap_err();
    assert!(e.message.contains("limit"), "{e}");
    std::fs::remove_file(&name).unwrap();
    std::fs::write(&name, "MC\n").unwrap();
    // A FIFO that no wanted path names is never opened.
    mkfifo(&dir.join("unrelated-fifo"));
    mkfifo(&dir.join("cpu0/unrelated-fifo"));
    let d = dir.clone();
    assert!(within(move || Dump::read(&d)).is_ok());
}

#[test]
fn out_never_writes_through_a_planted_link_or_into_a_fifo() {
    let s = Scratch::new("out");
    let (dir, secret) = dump(&s);
    // A link where a file will be written.
    let flags = dir.join("cpu0/domain0/flags");
    std::fs::remove_file(&flags).unwrap();
    std::os::unix::fs::symlink(&secret, &flags).unwrap();
    let e = write_tree(&machine(), Layout::Debugfs, &dir).unwrap_err();
    assert!(e.to_string().contains("cpu0/domain0/flags"), "{e}");
    assert!(e.to_string().contains("symbolic link"), "{e}");
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "SECRET-MARKER\n");
    std::fs::remove_file(&flags).unwrap();
    // A link where a directory will be.
    let outside = s.0.join("elsewhere");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::remove_dir_all(dir.join("cpu1")).unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("cpu1")).unwrap();
    let e = write_tree(&machine(), Layout::Debugfs, &dir).unwrap_err();
    assert!(
        e.to_string().contains("cpu1") && e.to_string().contains("symbolic link"),
        "{e}"
    );
    assert_eq!(
        std::fs::read_dir(&outside).unwrap().count(),
        0,
        "wrote through the link"
    );
    std::fs::remove_file(dir.join("cpu1")).unwrap();
    // A FIFO where a file will be written: an error, not a blocked open.
    let name = dir.join("cpu0/domain0/name");
    std::fs::remove_file(&name).unwrap();
    mkfifo(&name);
    let d = dir.clone();
    let e = within(move || write_tree(&machine(), Layout::Debugfs, &d)).unwrap_err();
    assert!(e.to_string().contains("cpu0/domain0/name"), "{e}");
    assert!(e.to_string().contains("FIFO"), "{e}");
}

#[test]
fn archive_members_are_read_through_the_file_limit() {
    let s = Scratch::new("archive");
    // A wanted member of 64 MiB + 1 of zeros (64 KiB compressed) and the
    // domain files of a good dump.
    let (dir, _) = dump(&s);
    let mut tar = tar::Builder::new(Vec::new());
    tar.append_dir_all("domains", &dir).unwrap();
    let big = domains::dumpfs::DUMP_FILE_LIMIT as usize + 1;
    let mut h = tar::Header::new_gnu();
    h.set_size(big as u64);
    h.set_mode(0o644);
    h.set_cksum();
    tar.append_data(
        &mut h,
        "domains/cpu0/domain0/flags",
        std::io::repeat(b'0').take_bytes(big),
    )
    .unwrap();
    let raw = tar.into_inner().unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &raw).unwrap();
    let path = s.0.join("dump.tar.gz");
    std::fs::write(&path, gz.finish().unwrap()).unwrap();
    let e = Dump::read(&path).unwrap_err();
    assert!(
        e.path.ends_with("dump.tar.gz:domains/cpu0/domain0/flags"),
        "{e}"
    );
    assert!(e.message.contains("limit"), "{e}");
    // Named directly, a FIFO is refused before it is opened.
    let fifo = s.0.join("fifo.tar.gz");
    mkfifo(&fifo);
    let e = within(move || Dump::read(&fifo)).unwrap_err();
    assert!(e.message.contains("FIFO"), "{e}");
}

/// A GNU long-name record is one path: `tar` reads it whole at the size its
/// header claims, so one longer than Linux's `PATH_MAX` (4096 bytes with its
/// NUL) is refused before it is buffered, naming the archive. A name of
/// exactly 4095 bytes, the longest path Linux has, is read as usual.
#[test]
fn a_gnu_long_name_longer_than_a_path_is_refused() {
    let s = Scratch::new("longname");
    let (dir, _) = dump(&s);
    let archive = |name_len: usize, file: &str| {
        let mut tar = tar::Builder::new(Vec::new());
        tar.append_dir_all("domains", &dir).unwrap();
        // `tar` writes a path past 100 bytes as a GNU long-name record
        // (`././@LongLink`, type L) of the path and its NUL.
        let prefix = "domains/cpu0/";
        let name = format!("{prefix}{}", "x".repeat(name_len - prefix.len()));
        let mut h = tar::Header::new_gnu();
        h.set_size(2);
        h.set_mode(0o644);
        tar.append_data(&mut h, &name, &b"0\n"[..]).unwrap();
        let raw = tar.into_inner().unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, &raw).unwrap();
        let path = s.0.join(file);
        std::fs::write(&path, gz.finish().unwrap()).unwrap();
        path
    };
    let ok = archive(4095, "longest.tar.gz");
    let d = Dump::read(&ok).unwrap();
    assert!(compare(&machine(), &d).is_empty());

    let bad = archive(64 << 10, "long.tar.gz");
    let e = Dump::read(&bad).unwrap_err();
    assert!(e.path.ends_with("long.tar.gz"), "{e}");
    assert!(
        e.message.contains("long name") && e.message.contains("65537 bytes"),
        "{e}"
    );
}

trait TakeBytes: std::io::Read + Sized {
    fn take_bytes(self, n: usize) -> std::io::Take<Self> {
        self.take(n as u64)
    }
}
impl<R: std::io::Read> TakeBytes for R {}
