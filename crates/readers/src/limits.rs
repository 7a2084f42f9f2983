//! The readers' input limits, and the one way every reader opens a file.
//!
//! Each limit sits well above what a real kernel, lscpu or hwloc writes for a
//! machine of [`cpumask::MAX_CPUS`] CPUs, and far below what would let a
//! hostile input exhaust memory or time: past it the answer is one error
//! naming the file, given before the data is read.
//!
//! Files are opened non-blocking and checked to be regular files before a byte
//! is read, so a FIFO, a character device such as `/dev/zero` or a socket —
//! inside a dump or named directly on the command line — is refused at once
//! instead of blocking or streaming forever; and a file is read through its
//! limit (never sized from its metadata), so a 10 GiB sparse file is refused
//! from its size alone.
//!
//! The model's own capacities bound every reader too: CPU numbers below
//! [`cpumask::MAX_CPUS`] and NUMA node ids below [`topology::MAX_NODES`]
//! (both 16384); a reader refuses a larger one naming where it is.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use crate::Error;

/// The largest sysfs attribute read. The kernel writes one page for most, and
/// the CPU and node masks and lists grow with the CPU count: a cpulist of
/// every other CPU of 16384 is about 90 KiB.
pub const SYSFS_FILE_LIMIT: u64 = 1 << 20;

/// The largest procfs file read: `/proc/cpuinfo` of a 16384-CPU x86 machine,
/// at about 1.5 KiB a processor, is about 24 MiB.
pub const PROC_FILE_LIMIT: u64 = 64 << 20;

/// The largest lscpu text read (`lscpu -p`/`-e` of 16384 CPUs is under 2 MiB).
pub const LSCPU_FILE_LIMIT: u64 = 64 << 20;

/// The largest hwloc XML read: hwloc's export of 16384 PUs with their caches
/// and NUMA nodes is a few tens of MiB.
pub const XML_FILE_LIMIT: u64 = 256 << 20;

/// The deepest nesting of elements in hwloc XML. hwloc's deepest trees
/// (machine, groups, package, die, caches, core, PU) are a dozen objects; a
/// chain of nested groups deeper than this cannot come from a real machine,
/// and every PU's walk up to its package would cost the chain's length.
pub const XML_DEPTH_LIMIT: usize = 1024;

/// The budget for one snapshot archive. A real dump of a 4096-CPU machine's
/// whole `/sys` is a few hundred MiB of tar stream; the CPU and node trees a
/// reader keeps are a small part of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArchiveLimits {
    /// Compressed (or plain tar) bytes read from the archive file.
    pub input_bytes: u64,
    /// Bytes of tar stream after decompression, kept or skipped.
    pub stream_bytes: u64,
    /// Members (headers) in the tar stream.
    pub members: u64,
    /// Bytes of the members kept (the CPU and node trees and procfs).
    pub kept_bytes: u64,
}

impl Default for ArchiveLimits {
    fn default() -> Self {
        ArchiveLimits {
            input_bytes: 1 << 30,
            stream_bytes: 1 << 30,
            members: 4_000_000,
            kept_bytes: 256 << 20,
        }
    }
}

/// The per-file limit for a path inside a sysfs/procfs root.
pub fn file_limit(path: &str) -> u64 {
    if path.starts_with("proc/") || path.contains("/proc/") {
        PROC_FILE_LIMIT
    } else {
        SYSFS_FILE_LIMIT
    }
}

/// Opens `path` for reading without blocking (a FIFO with no writer opens at
/// once) and without becoming its controlling terminal. Whether a file can be
/// opened at all, asked without the risk of hanging.
pub fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let flags = rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY;
        options.custom_flags(flags.bits() as i32);
    }
    options.open(path)
}

/// Why a file of this type cannot be read as data, or `None` for a regular file.
pub(crate) fn not_regular(kind: std::fs::FileType) -> Option<&'static str> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return Some("is a FIFO, not a regular file");
        }
        if kind.is_char_device() {
            return Some("is a character device, not a regular file");
        }
        if kind.is_block_device() {
            return Some("is a block device, not a regular file");
        }
        if kind.is_socket() {
            return Some("is a socket, not a regular file");
        }
    }
    if kind.is_dir() {
        return Some("is a directory, not a regular file");
    }
    (!kind.is_file()).then_some("is not a regular file")
}

/// Opens a file the user named for a reader: a regular file of at most
/// `limit` bytes, else one error naming it.
pub fn open_input(path: &Path, limit: u64, what: &str) -> Result<File, Error> {
    let name = || path.display().to_string();
    let file =
        open_nonblocking(path).map_err(|e| Error::new(name(), format!("cannot read: {e}")))?;
    let meta = file
        .metadata()
        .map_err(|e| Error::new(name(), format!("cannot stat: {e}")))?;
    if let Some(why) = not_regular(meta.file_type()) {
        return Err(Error::new(name(), why));
    }
    if meta.len() > limit {
        return Err(Error::new(
            name(),
            format!(
                "{} bytes is more than the {limit}-byte limit for {what}",
                meta.len()
            ),
        ));
    }
    Ok(file)
}

/// Reads at most `limit` bytes from `reader`; more is an error naming `name`.
pub(crate) fn read_capped(
    reader: impl Read,
    limit: u64,
    name: &str,
    what: &str,
) -> Result<Vec<u8>, Error> {
    let mut data = Vec::new();
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut data)
        .map_err(|e| Error::new(name, format!("cannot read: {e}")))?;
    if data.len() as u64 > limit {
        return Err(Error::new(
            name,
            format!("more than the {limit}-byte limit for {what}"),
        ));
    }
    Ok(data)
}

/// The whole bytes of a file the user named, checked as above.
pub fn read_input(path: &Path, limit: u64, what: &str) -> Result<Vec<u8>, Error> {
    let file = open_input(path, limit, what)?;
    read_capped(file, limit, &path.display().to_string(), what)
}

/// The whole text of a file the user named (`--lscpu`, `--xml`, a compared
/// dump), checked as above and as UTF-8.
pub fn read_text_input(path: &Path, limit: u64, what: &str) -> Result<String, Error> {
    let name = path.display().to_string();
    let bytes = read_input(path, limit, what)?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        Error::at_line(
            name,
            line,
            format!("not valid UTF-8 text (bad byte at offset {at})"),
        )
    })
}
