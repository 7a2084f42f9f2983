//! Files of a domains dump, read and written without leaving the directory
//! the user named.
//!
//! A dump is data anyone can hand over: a symbolic link planted in it could
//! make `--compare` print `/etc/passwd`, or make `--out` overwrite a file
//! elsewhere; a FIFO would block a read or a write forever, `/dev/zero`
//! would stream forever, and a sparse file claims any size. So links inside
//! the tree are never followed (the final component is opened with
//! `O_NOFOLLOW`, and directories are walked by their entries' own types),
//! files are opened non-blocking and checked to be regular before a byte
//! moves, and every read goes through a limit.

use std::io::Read;
use std::path::Path;

/// The largest file of a dump read (a `domains` or `dmesg.txt` file of a
/// 16384-CPU machine is far smaller).
pub const DUMP_FILE_LIMIT: u64 = 64 << 20;

/// The most bytes of wanted files kept from one dump.
pub const DUMP_KEPT_LIMIT: u64 = 512 << 20;

/// The most decompressed bytes read from a dump archive: 16384 CPUs with
/// a handful of domains and their debugfs files are under a million members
/// of 1 KiB of tar each.
pub const DUMP_STREAM_LIMIT: u64 = 1 << 30;

/// The most members read from a dump archive.
pub const DUMP_MEMBER_LIMIT: u64 = 4_000_000;

/// Opening flags that never block on a FIFO, never follow a link in the last
/// component and never take a terminal.
#[cfg(target_os = "linux")]
fn guarded(options: &mut std::fs::OpenOptions) {
    use std::os::unix::fs::OpenOptionsExt;
    let flags =
        rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NOCTTY;
    options.custom_flags(flags.bits() as i32);
}

#[cfg(not(target_os = "linux"))]
fn guarded(_options: &mut std::fs::OpenOptions) {}

/// Why a file of this type is not dump data, or `None` for a regular file.
fn not_regular(kind: std::fs::FileType) -> Option<&'static str> {
    if kind.is_symlink() {
        return Some(LINK);
    }
    if kind.is_dir() {
        return Some("is a directory, not a regular file");
    }
    (!kind.is_file()).then_some("is a FIFO, device or socket, not a regular file")
}

/// An error from the OS, in words that say a planted link when it is one
/// (`O_NOFOLLOW` fails with `ELOOP` on a link).
fn os_error(e: &std::io::Error) -> String {
    #[cfg(target_os = "linux")]
    if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) {
        return LINK.to_string();
    }
    e.to_string()
}

const LINK: &str = "is a symbolic link: a dump is read and written without following links";

/// Reads the regular file `path` (not through a link), at most `limit` bytes.
pub(crate) fn read_file(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    guarded(&mut options);
    let file = options
        .open(path)
        .map_err(|e| format!("cannot read: {}", os_error(&e)))?;
    let meta = file.metadata().map_err(|e| format!("cannot stat: {e}"))?;
    if let Some(why) = not_regular(meta.file_type()) {
        return Err(why.into());
    }
    read_capped(file, limit)
}

/// At most `limit` bytes of `reader`; more is an error.
pub(crate) fn read_capped(reader: impl Read, limit: u64) -> Result<Vec<u8>, String> {
    let mut data = Vec::new();
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut data)
        .map_err(|e| format!("cannot read: {e}"))?;
    if data.len() as u64 > limit {
        return Err(format!("more than the {limit}-byte limit for a dump file"));
    }
    Ok(data)
}

/// Makes `dir` a directory of its own: created if absent, refused when it is
/// a link or anything but a directory.
pub(crate) fn ensure_dir(dir: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(dir) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(meta) => Err(refused(dir, not_regular(meta.file_type()).unwrap_or(""))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => std::fs::create_dir(dir),
        Err(e) => Err(e),
    }
}

/// Writes `text` to the file `path`, never through a link and never into a
/// FIFO or device (checked before opening, and again on the open file).
pub(crate) fn write_file(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    match std::fs::symlink_metadata(path) {
        Ok(meta) => {
            if let Some(why) = not_regular(meta.file_type()) {
                return Err(refused(path, why));
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(false);
    guarded(&mut options);
    let mut file = options
        .open(path)
        .map_err(|e| refused(path, &os_error(&e)))?;
    let meta = file.metadata()?;
    if let Some(why) = not_regular(meta.file_type()) {
        return Err(refused(path, why));
    }
    // Truncated only once known to be a regular file.
    file.set_len(0)?;
    file.write_all(text.as_bytes())
}

fn refused(path: &Path, why: &str) -> std::io::Error {
    std::io::Error::other(format!("{}: {why}", path.display()))
}
