//! The hostile cases and the small generators they are built from.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use readers::limits::ArchiveLimits;
use readers::Error;

pub type Case = fn() -> Result<(), String>;

mod archives;
mod files;
mod size;
mod xml;

/// Every case, by name.
pub fn cases() -> Vec<(&'static str, Case)> {
    let mut all = Vec::new();
    all.extend(archives::cases());
    all.extend(files::cases());
    all.extend(size::cases());
    all.extend(xml::cases());
    all
}

/// A small, valid sysfs tree: `cpus` CPUs, one core each, one package, one
/// node; path → content.
pub fn small_tree(cpus: usize) -> BTreeMap<String, Vec<u8>> {
    let mut t = BTreeMap::new();
    let all = format!("0-{}\n", cpus - 1);
    let cpu = "sys/devices/system/cpu";
    for f in ["possible", "present", "online"] {
        t.insert(format!("{cpu}/{f}"), all.clone().into_bytes());
    }
    for c in 0..cpus {
        let topo = format!("{cpu}/cpu{c}/topology");
        t.insert(format!("{topo}/physical_package_id"), b"0\n".to_vec());
        t.insert(format!("{topo}/core_id"), format!("{c}\n").into_bytes());
        t.insert(
            format!("{topo}/core_cpus_list"),
            format!("{c}\n").into_bytes(),
        );
        t.insert(
            format!("{topo}/package_cpus_list"),
            all.clone().into_bytes(),
        );
    }
    let node = "sys/devices/system/node/node0";
    t.insert(format!("{node}/cpulist"), all.into_bytes());
    t.insert(format!("{node}/distance"), b"10\n".to_vec());
    t
}

/// A GNU tar header for `path` claiming `size` bytes (base-256 when it does
/// not fit the octal field), of type `kind`; the checksum is right.
pub fn tar_header(path: &str, size: u64, kind: u8) -> [u8; 512] {
    let mut h = [0u8; 512];
    h[..path.len()].copy_from_slice(path.as_bytes());
    h[100..108].copy_from_slice(b"0000444\0");
    h[108..116].copy_from_slice(b"0000000\0");
    h[116..124].copy_from_slice(b"0000000\0");
    if size < 8u64.pow(11) {
        h[124..136].copy_from_slice(format!("{size:011o}\0").as_bytes());
    } else {
        h[124] = 0x80;
        h[128..136].copy_from_slice(&size.to_be_bytes());
    }
    h[136..148].copy_from_slice(b"00000000000\0");
    h[156] = kind;
    h[257..263].copy_from_slice(b"ustar ");
    h[263..265].copy_from_slice(b" \0");
    h[148..156].copy_from_slice(b"        ");
    let sum: u32 = h.iter().map(|&b| u32::from(b)).sum();
    h[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
    h
}

/// A tar stream of `files` under `top/`, not yet ended.
pub fn tar_body(top: &str, files: &BTreeMap<String, Vec<u8>>) -> Vec<u8> {
    let mut out = Vec::new();
    for (path, data) in files {
        out.extend(tar_header(
            &format!("{top}/{path}"),
            data.len() as u64,
            b'0',
        ));
        out.extend(data);
        out.resize(out.len().div_ceil(512) * 512, 0);
    }
    out
}

/// Ends a tar stream.
pub fn tar_end(mut body: Vec<u8>) -> Vec<u8> {
    body.extend([0u8; 1024]);
    body
}

pub fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// A gzip stream of `n` zero bytes, built from one compressed block repeated
/// as concatenated gzip members (which a multi-member reader inflates whole).
pub fn gzip_zeros(n: u64) -> Vec<u8> {
    const BLOCK: u64 = 16 << 20;
    let one = gzip(&vec![0u8; BLOCK as usize]);
    let mut out = Vec::new();
    for _ in 0..n / BLOCK {
        out.extend(&one);
    }
    out
}

/// A fresh directory that lives as long as the case.
pub fn temp_dir() -> tempfile::TempDir {
    tempfile::tempdir().expect("temporary directory")
}

/// Writes `files` under `root`.
pub fn write_tree(root: &Path, files: &BTreeMap<String, Vec<u8>>) {
    for (path, data) in files {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, data).unwrap();
    }
}

/// Makes a FIFO at `path` (with `mkfifo`, so the test needs no unsafe code).
pub fn mkfifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    let ok = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(ok, "mkfifo {}", path.display());
}

/// A sparse file of `len` bytes at `path`.
pub fn sparse(path: &Path, len: u64) {
    let f = std::fs::File::create(path).unwrap();
    f.set_len(len).unwrap();
}

/// Checks that `result` is an error whose source contains `source` and whose
/// message contains every one of `words`.
pub fn expect_error<T: std::fmt::Debug>(
    result: Result<T, Error>,
    source: &str,
    words: &[&str],
) -> Result<(), String> {
    let e = match result {
        Ok(t) => return Err(format!("read succeeded: {t:?}")),
        Err(e) => e,
    };
    if !e.source.contains(source) {
        return Err(format!("error does not name {source:?}: {e}"));
    }
    for w in words {
        if !e.message.contains(w) {
            return Err(format!("error lacks {w:?}: {e}"));
        }
    }
    Ok(())
}

/// Small archive limits, so a case can cross each budget in milliseconds.
pub fn tight_limits() -> ArchiveLimits {
    ArchiveLimits {
        input_bytes: 8 << 20,
        stream_bytes: 8 << 20,
        members: 1000,
        kept_bytes: 1 << 20,
    }
}

pub fn path_str(p: &Path) -> String {
    p.display().to_string()
}

pub fn join(p: &Path, rel: &str) -> PathBuf {
    p.join(rel)
}
