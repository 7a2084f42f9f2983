//! Snapshot archives (`.tar`, `.tar.gz`, `.tar.bz2`, `.tar.xz`, `.tar.zst`) decoded as one stream into
//! an in-memory tree of the members the reader can need, under a budget.
//!
//! Nothing in an archive is trusted: member sizes come from headers anyone can
//! write, and a few kilobytes of compressed zeros inflate to gigabytes. So the
//! decompressed stream is counted as it flows (never held whole), members the
//! reader never looks at are skipped without being kept, every kept member is
//! read through a cap rather than into a buffer sized from its header, hard
//! links share their target's bytes, and the total kept, the member count and
//! the stream length each have a limit past which the answer is one
//! "archive too large" error naming the archive.
//!
//! The formats themselves are decoded by the `tar`, `flate2`, `bzip2`,
//! `xz2` (xz: `tar cJf`, and sosreport's archives, which copy
//! `sys/devices/system/{cpu,node}`) and `ruzstd` (`tar --zstd`) crates,
//! recognized by their leading bytes whatever the file is called; the stream is watched header by header (`crate::tar_stream`)
//! because `tar` reads GNU long-name and pax records whole, at whatever size
//! their header claims.

use std::collections::{HashMap, HashSet};
use std::io::{self, BufRead, Read};
use std::rc::Rc;

use super::NO_CPU_DIR;
use crate::limits::{ArchiveLimits, SYSFS_FILE_LIMIT};
use crate::tar_stream::{Stop, Watched, MAX_LONG_NAME, MAX_META_RECORD, TRUNCATED};
use crate::Error;

/// An archive's contents keyed by normalized path relative to the detected root.
#[derive(Debug, Default)]
pub(super) struct MemTree {
    /// Name of the archive, for error messages.
    pub(super) name: String,
    /// The member-path prefix the root was found under (`16em64t-4s2c2t/`).
    pub(super) prefix: String,
    /// What the reader's paths have above the archive's top directory when
    /// the archive holds less than a whole root: `sys/` for one made inside
    /// `/sys`, `sys/devices/system/cpu/` for one made inside the CPU
    /// directory; empty for a whole root.
    pub(super) graft: &'static str,
    /// File contents; hard links hold the same allocation as their target.
    pub(super) files: HashMap<String, Rc<[u8]>>,
    pub(super) links: HashMap<String, String>,
    /// Directory → sorted names of its entries.
    pub(super) children: HashMap<String, Vec<String>>,
}

/// The most memory the xz decoder may take: `xz -9` and `xz -9e` streams
/// need 65 MiB to decode; past this liblzma stops with a memory-limit error.
const XZ_MEMORY_LIMIT: u64 = 128 << 20;

/// The largest zstd window accepted: `zstd --ultra -22` writes 128 MiB ones
/// (`--long=31` 2 GiB, which the decoder would have to hold); a forged
/// header asking for more is refused before anything is allocated.
const ZSTD_WINDOW_LIMIT: u64 = 128 << 20;

/// A gzip file of one or more members (`gzip` writes one, pigz and
/// `cat a.gz b.gz` several) as `gzip -d` reads it: zero bytes after the
/// last member (a tape's or `dd`'s padding) end it. flate2's
/// `MultiGzDecoder` takes them for a damaged header and has no option to
/// skip them, so each member is decoded by its single-member decoder here.
struct GzMembers<R: BufRead> {
    member: Option<flate2::bufread::GzDecoder<R>>,
}

impl<R: BufRead> GzMembers<R> {
    fn new(input: R) -> Self {
        GzMembers {
            member: Some(flate2::bufread::GzDecoder::new(input)),
        }
    }
}

impl<R: BufRead> Read for GzMembers<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let Some(member) = self.member.as_mut() else {
                return Ok(0);
            };
            let n = member.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            // The member ended, its length and CRC checked: another member
            // follows, or nothing but zero padding.
            let Some(ended) = self.member.take() else {
                return Ok(0);
            };
            let mut rest = ended.into_inner();
            if another_member(&mut rest)? {
                self.member = Some(flate2::bufread::GzDecoder::new(rest));
            }
        }
    }
}

/// Whether another gzip member follows in `r`: anything but a run of zero
/// bytes to the end (which is consumed). Data after zero padding is an
/// error.
fn another_member(r: &mut impl BufRead) -> io::Result<bool> {
    let mut padded = false;
    loop {
        let buf = r.fill_buf()?;
        let Some(&first) = buf.first() else {
            return Ok(false);
        };
        if first != 0 && padded {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "data after the zero bytes that end a gzip file",
            ));
        }
        if first != 0 {
            return Ok(true);
        }
        let zeros = buf.iter().take_while(|&&b| b == 0).count();
        r.consume(zeros);
        padded = true;
    }
}

/// A zstd stream of one or more frames: `zstd` writes one, pzstd and
/// `cat a.zst b.zst` several, and skippable frames may stand between them.
/// `ruzstd` decodes it in pure Rust (no C library to find or build, unlike
/// `zstd-sys`) but one frame at a time, so this starts each next frame where
/// the last one ended, skips skippable ones, and checks each frame's
/// content checksum when it carries one.
struct ZstdFrames<R: Read> {
    source: io::BufReader<R>,
    frame: ruzstd::decoding::FrameDecoder,
    in_frame: bool,
}

impl<R: Read> ZstdFrames<R> {
    fn new(source: R) -> ZstdFrames<R> {
        let mut frame = ruzstd::decoding::FrameDecoder::new();
        frame.set_max_window_size(ZSTD_WINDOW_LIMIT);
        ZstdFrames {
            source: io::BufReader::new(source),
            frame,
            in_frame: false,
        }
    }

    /// Starts the next frame; false at the end of the input.
    fn next_frame(&mut self) -> io::Result<bool> {
        use io::BufRead;
        use ruzstd::decoding::errors::{FrameDecoderError, ReadFrameHeaderError};
        loop {
            if self.source.fill_buf()?.is_empty() {
                return Ok(false);
            }
            match self.frame.init(&mut self.source) {
                Ok(()) => return Ok(true),
                Err(FrameDecoderError::ReadFrameHeaderError(ReadFrameHeaderError::SkipFrame {
                    length,
                    ..
                })) => {
                    let want = u64::from(length);
                    let skipped = io::copy(&mut (&mut self.source).take(want), &mut io::sink())?;
                    if skipped < want {
                        return Err(zstd_damage("the input ends inside a skippable frame"));
                    }
                }
                Err(FrameDecoderError::WindowSizeTooBig { requested, .. }) => {
                    return Err(zstd_damage(format!(
                        "a frame asks for a {requested}-byte window, more than the \
                         {ZSTD_WINDOW_LIMIT} bytes `zstd --ultra -22` uses: refused"
                    )))
                }
                Err(e) => return Err(self.damage(e)),
            }
        }
    }

    /// A decoding error, told as truncation when the input is used up.
    fn damage(&mut self, e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> io::Error {
        use io::BufRead;
        match self.source.fill_buf() {
            Ok([]) => zstd_damage("the input ends inside a frame: truncated"),
            _ => zstd_damage(e),
        }
    }
}

/// zstd's own errors as damaged data ("corrupt or truncated").
fn zstd_damage(e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

impl<R: Read> Read for ZstdFrames<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        use ruzstd::decoding::BlockDecodingStrategy;
        loop {
            if !self.in_frame {
                if !self.next_frame()? {
                    return Ok(0);
                }
                self.in_frame = true;
            }
            if self.frame.can_collect() > 0 {
                return self.frame.read(buf);
            }
            if self.frame.is_finished() {
                let read = self.frame.get_checksum_from_data();
                if read.is_some() && read != self.frame.get_calculated_checksum() {
                    return Err(zstd_damage("a frame's content checksum does not match"));
                }
                self.in_frame = false;
                continue;
            }
            if let Err(e) = self
                .frame
                .decode_blocks(&mut self.source, BlockDecodingStrategy::UptoBlocks(1))
            {
                return Err(self.damage(e));
            }
        }
    }
}

/// Reads up to `n` bytes from the front of `r` (fewer only at end of input).
fn read_head(r: &mut impl Read, n: usize) -> io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(n);
    r.take(n as u64).read_to_end(&mut head)?;
    Ok(head)
}

/// The decompressor for the stream's magic bytes (not its name).
pub(crate) fn decoder<'a, R: Read + 'a>(
    mut input: R,
    name: &str,
) -> Result<(Box<dyn Read + 'a>, &'static str), Error> {
    let head = read_head(&mut input, 512).map_err(|e| read_error(name, "", &e))?;
    let is_gzip = head.starts_with(&[0x1f, 0x8b]);
    let is_bzip2 = head.starts_with(b"BZh");
    let is_xz = head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]);
    // A zstd frame, or a skippable frame (magic 0x184D2A5?) before one.
    let is_zstd = head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd])
        || (head.len() >= 4 && head[0] & 0xf0 == 0x50 && head[1..4] == [0x2a, 0x4d, 0x18]);
    let is_tar = head.len() >= 262 && &head[257..262] == b"ustar";
    let whole = io::Cursor::new(head).chain(input);
    if is_gzip {
        Ok((Box::new(GzMembers::new(io::BufReader::new(whole))), "gzip"))
    } else if is_bzip2 {
        Ok((Box::new(bzip2::read::MultiBzDecoder::new(whole)), "bzip2"))
    } else if is_xz {
        // The header names the dictionary the decoder allocates: a forged
        // one asks for gigabytes, so liblzma is held to what `xz -9` needs.
        let stream =
            xz2::stream::Stream::new_stream_decoder(XZ_MEMORY_LIMIT, xz2::stream::CONCATENATED)
                .map_err(|e| Error::new(name, format!("xz decoder: {e}")))?;
        Ok((
            Box::new(xz2::read::XzDecoder::new_stream(whole, stream)),
            "xz",
        ))
    } else if is_zstd {
        Ok((Box::new(ZstdFrames::new(whole)), "zstd"))
    } else if is_tar {
        Ok((Box::new(whole), "tar"))
    } else {
        Err(Error::new(
            name,
            "not a tar, tar.gz, tar.bz2, tar.xz or tar.zst archive (unrecognized leading bytes)",
        ))
    }
}

/// An I/O failure while decoding, in words that tell damage from a full
/// memory or a failing disk.
pub(crate) fn read_error(name: &str, format: &str, e: &io::Error) -> Error {
    let why = match e.kind() {
        // Our cap, not the machine's memory: the stream's header asks for it.
        _ if format == "xz" && e.to_string().contains("memory limit") => format!(
            "xz data that needs more than {} MiB of decoder memory (a dictionary \
             larger than xz -9 makes): refused",
            XZ_MEMORY_LIMIT >> 20
        ),
        io::ErrorKind::OutOfMemory => {
            format!("out of memory while decompressing ({e}); the archive may be fine")
        }
        io::ErrorKind::InvalidInput | io::ErrorKind::InvalidData | io::ErrorKind::UnexpectedEof => {
            format!("corrupt or truncated {format} data: {e}")
        }
        _ if e.to_string().contains("memory") => {
            format!("out of memory while decompressing ({e}); the archive may be fine")
        }
        _ => format!("corrupt or unreadable {format} data: {e}"),
    };
    Error::new(name, why)
}

/// What was collected from the stream, before the root is located.
#[derive(Default)]
struct Members {
    files: HashMap<String, Rc<[u8]>>,
    links: HashMap<String, String>,
    hard_links: Vec<(String, String)>,
    dirs: Vec<String>,
    kept_bytes: u64,
}

impl MemTree {
    /// Decodes a snapshot from `input` within `limits`; `name` is used in errors.
    pub(super) fn load(
        input: impl Read,
        name: &str,
        limits: &ArchiveLimits,
    ) -> Result<MemTree, Error> {
        let (inner, format) = decoder(input, name)?;
        let (stream, stop) = Watched::new(inner, limits.stream_bytes, limits.members);
        let mut members = Members::default();
        let collected = collect(stream, (name, format), limits, &mut members);
        if let Err(e) = collected {
            return Err(budget_error(name, limits, stop.get()).unwrap_or(e));
        }
        for (path, target) in std::mem::take(&mut members.hard_links) {
            if let Some(data) = members.files.get(&target).cloned() {
                members.files.insert(path, data);
            }
        }
        MemTree::arrange(members, name)
    }

    /// Places the collected members under the directory holding `sys/`.
    fn arrange(members: Members, name: &str) -> Result<MemTree, Error> {
        // The root is wherever `sys/devices/system/cpu` lives: hwloc's tarballs
        // have a top directory named after the machine, lscpu's after the test,
        // and some dumps have `sys/` at the top. An archive made by hand inside
        // `/sys` (`tar czf t.tgz devices/system`, or `cpu node` from
        // `/sys/devices/system`, or `.` from the CPU directory) holds only part
        // of that path: the most complete match wins, then the shortest prefix.
        let (prefix, graft) = members
            .files
            .keys()
            .chain(members.links.keys())
            .chain(members.dirs.iter())
            .filter_map(|p| find_root(p))
            .min_by(|(a, ga), (b, gb)| {
                (ga.len(), a.len(), a.as_str()).cmp(&(gb.len(), b.len(), b.as_str()))
            })
            .ok_or_else(|| {
                Error::new(
                    name,
                    format!(
                        "{NO_CPU_DIR} in the archive (nor the part of it below sys/, or a CPU \
                         directory's cpuN entries): not a sysfs snapshot"
                    ),
                )
            })?;
        let mut tree = MemTree {
            name: name.to_string(),
            prefix: prefix.clone(),
            graft,
            ..MemTree::default()
        };
        let strip = |p: &str| {
            p.strip_prefix(prefix.as_str())
                .map(|rel| format!("{graft}{rel}"))
        };
        let mut index = DirIndex::default();
        for (p, data) in members.files {
            if let Some(rel) = strip(&p) {
                index.note(&rel);
                tree.files.insert(rel, data);
            }
        }
        for (p, target) in members.links {
            if let Some(rel) = strip(&p) {
                index.note(&rel);
                tree.links.insert(rel, target);
            }
        }
        for d in members.dirs {
            if let Some(rel) = strip(&d) {
                index.note(&rel);
                index.children.entry(rel).or_default();
            }
        }
        for names in index.children.values_mut() {
            names.sort();
        }
        tree.children = index.children;
        Ok(tree)
    }

    /// The member name a reader's path stands for, for error messages.
    pub(super) fn member_name(&self, path: &str) -> String {
        let below = path.strip_prefix(self.graft).unwrap_or(path);
        format!("{}:{}{below}", self.name, self.prefix)
    }

    /// What the physical path `real` is in the archive.
    pub(super) fn kind(&self, real: &str) -> Option<super::vfs::Kind> {
        use super::vfs::Kind;
        if let Some(t) = self.links.get(real) {
            return Some(Kind::Symlink(t.clone()));
        }
        if real.is_empty() || self.children.contains_key(real) {
            // A directory (possibly only implied by its members' paths).
            return Some(Kind::Dir);
        }
        if self.files.contains_key(real) {
            return Some(Kind::File);
        }
        None
    }
}

/// Directory → entries, each path registered once with its ancestors.
#[derive(Default)]
struct DirIndex {
    children: HashMap<String, Vec<String>>,
    registered: HashSet<String>,
}

impl DirIndex {
    fn note(&mut self, path: &str) {
        let mut p = path;
        while !p.is_empty() && self.registered.insert(p.to_string()) {
            let (parent, leaf) = match p.rfind('/') {
                Some(i) => (&p[..i], &p[i + 1..]),
                None => ("", p),
            };
            self.children
                .entry(parent.to_string())
                .or_default()
                .push(leaf.to_string());
            p = parent;
        }
    }
}

/// The "archive too large" error for a budget the stream ran into.
pub(crate) fn budget_error(name: &str, limits: &ArchiveLimits, stop: Stop) -> Option<Error> {
    let why = match stop {
        Stop::None => return None,
        Stop::StreamTooLong => format!(
            "archive too large: more than {} bytes once decompressed",
            limits.stream_bytes
        ),
        Stop::TooManyMembers => {
            format!("archive too large: more than {} members", limits.members)
        }
        Stop::LongNameTooLarge(size) => format!(
            "a GNU long name of {size} bytes, longer than a path can be \
             (at most {MAX_LONG_NAME})"
        ),
        Stop::MetaRecordTooLarge(size) => format!(
            "archive too large: a long-name or pax record of {size} bytes \
             (at most {MAX_META_RECORD} accepted)"
        ),
        Stop::SparseMember => "GNU sparse members are not accepted in a sysfs snapshot".into(),
        Stop::Truncated => TRUNCATED.into(),
    };
    Some(Error::new(name, why))
}

/// Walks the archive's members, keeping the ones the reader can need.
fn collect(
    stream: impl Read,
    (name, format): (&str, &str),
    limits: &ArchiveLimits,
    out: &mut Members,
) -> Result<(), Error> {
    let mut archive = tar::Archive::new(stream);
    let entries = archive
        .entries()
        .map_err(|e| read_error(name, format, &e))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| read_error(name, format, &e))?;
        let raw = entry.path_bytes().into_owned();
        let member = String::from_utf8_lossy(&raw).into_owned();
        let where_ = || format!("{name}:{member}");
        let path = member_path(&member).map_err(|why| Error::new(where_(), why))?;
        if !wanted(&path) {
            // Skipped without keeping its data (hwloc dumps carry megabytes
            // of PCI and DMI files the reader never looks at).
            continue;
        }
        let kind = entry.header().entry_type();
        if kind.is_dir() {
            out.dirs.push(path);
        } else if kind.is_symlink() || kind.is_hard_link() {
            let target = entry
                .link_name_bytes()
                .map(|t| String::from_utf8_lossy(&t).into_owned())
                .unwrap_or_default();
            if kind.is_symlink() {
                out.links.insert(path, target);
            } else {
                // Hard link targets are member names; the data is shared below.
                let target = member_path(&target)
                    .map_err(|why| Error::new(where_(), format!("link target: {why}")))?;
                out.hard_links.push((path, target));
            }
        } else if kind.is_file() || kind == tar::EntryType::Continuous {
            let data = read_member(&mut entry, &path, (&where_(), format))?;
            out.kept_bytes += data.len() as u64;
            if out.kept_bytes > limits.kept_bytes {
                return Err(Error::new(
                    name,
                    format!(
                        "archive too large: more than {} bytes in the members a sysfs reader reads",
                        limits.kept_bytes
                    ),
                ));
            }
            out.files.insert(path, data.into());
        }
        // Device nodes and FIFOs in an archive are names only: never kept, so
        // reading one finds nothing there.
    }
    read_to_end_of_stream(archive.into_inner()).map_err(|e| read_error(name, format, &e))
}

/// Reads the rest of an archive's stream after the tar's end blocks (the
/// end padding, the compressed format's trailer and checksum), so that
/// damage there is found, not passed unseen.
pub(crate) fn read_to_end_of_stream(mut rest: impl Read) -> io::Result<()> {
    io::copy(&mut rest, &mut io::sink()).map(drop)
}

/// One member's bytes, read through the per-file limit whatever its header
/// says its size is.
fn read_member(
    entry: &mut impl Read,
    path: &str,
    (where_, format): (&str, &str),
) -> Result<Vec<u8>, Error> {
    let limit = crate::limits::file_limit(path);
    let mut data = Vec::new();
    entry
        .take(limit + 1)
        .read_to_end(&mut data)
        .map_err(|e| read_error(where_, format, &e))?;
    if data.len() as u64 > limit {
        return Err(Error::new(
            where_,
            format!(
                "larger than the {limit}-byte limit for a {} file",
                if limit == SYSFS_FILE_LIMIT {
                    "sysfs"
                } else {
                    "procfs"
                }
            ),
        ));
    }
    Ok(data)
}

/// Whether an archive member can matter to the reader: the CPU and node trees,
/// the hybrid-PMU CPU lists, and procfs. Everything else (devices, buses,
/// classes) is neither read nor on the way to anything read, since the links
/// the reader follows (`cpuN/nodeM`, `nodeM/cpuN`) stay within these trees.
/// An archive made inside `/sys` starts lower down the same trees: its first
/// or second component is the CPU or node directory, or a CPU's own.
fn wanted(path: &str) -> bool {
    let tree = |c: &str| matches!(c, "cpu" | "node") || numbered(c, "cpu") || numbered(c, "node");
    let mut top = path.split('/').take(2);
    path.contains("system/cpu")
        || path.contains("system/node")
        || path.contains("sys/devices/cpu_")
        || path.contains("proc/")
        || !path.contains('/')
        || top.any(tree)
        || path.ends_with("/sys")
        || path.ends_with("/proc")
        || path.ends_with("/devices")
        || path.ends_with("/devices/system")
        || path == "sys"
        || path == "proc"
}

/// Whether `name` is `stem` followed by a decimal number (`cpu12`, `node0`).
fn numbered(name: &str, stem: &str) -> bool {
    name.strip_prefix(stem)
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Validates and normalizes an archive member name: relative, no `..`, no empty
/// or `.` components.
pub(crate) fn member_path(member: &str) -> Result<String, String> {
    if member.starts_with('/') {
        return Err("absolute member path rejected (must stay inside the archive)".into());
    }
    let mut parts = Vec::new();
    for comp in member.split('/') {
        match comp {
            "" | "." => {}
            ".." => {
                return Err("member path with '..' rejected (must stay inside the archive)".into())
            }
            c => parts.push(c),
        }
    }
    Ok(parts.join("/"))
}

/// Where `path` places the snapshot's root: the member-name prefix of the
/// root and what the reader's paths have above that prefix (see
/// [`MemTree::graft`]), from the most complete mark `path` holds as whole
/// components.
fn find_root(path: &str) -> Option<(String, &'static str)> {
    const MARKS: [(&str, &str); 3] = [
        ("sys/devices/system/cpu", ""),
        ("devices/system/cpu", "sys/"),
        ("system/cpu", "sys/devices/"),
    ];
    if let Some(found) = MARKS
        .iter()
        .find_map(|&(mark, graft)| Some((find_mark(path, mark)?, graft)))
    {
        return Some(found);
    }
    // Lower still: `cpu/cpuN` (made inside /sys/devices/system) or `cpuN`
    // (made inside the CPU directory itself; a CPU's directory may be empty
    // or, on old kernels, hold no `topology/`).
    let comps: Vec<&str> = path.split('/').collect();
    let prefix = |i: usize| comps[..i].iter().map(|c| format!("{c}/")).collect();
    comps
        .iter()
        .enumerate()
        .find_map(|(i, c)| match comps.get(i + 1) {
            Some(next) if *c == "cpu" && numbered(next, "cpu") => {
                Some((prefix(i), "sys/devices/system/"))
            }
            _ if numbered(c, "cpu") => Some((prefix(i), "sys/devices/system/cpu/")),
            _ => None,
        })
}

/// If `path` contains `mark` as whole components, the prefix before it (with
/// its trailing slash, or empty).
fn find_mark(path: &str, mark: &str) -> Option<String> {
    let mut from = 0;
    while let Some(i) = path[from..].find(mark) {
        let at = from + i;
        let starts_ok = at == 0 || path.as_bytes()[at - 1] == b'/';
        let end = at + mark.len();
        let ends_ok = end == path.len() || path.as_bytes()[end] == b'/';
        if starts_ok && ends_ok {
            return Some(path[..at].to_string());
        }
        from = at + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_is_found_at_component_boundaries() {
        let root = |p: &str| find_root(p).map(|(prefix, graft)| (prefix, graft.to_string()));
        let at = |p: &str, g: &str| Some((p.to_string(), g.to_string()));
        assert_eq!(root("x/sys/devices/system/cpu/online"), at("x/", ""));
        assert_eq!(root("sys/devices/system/cpu"), at("", ""));
        assert_eq!(root("x/sys/devices/system/cpufreq"), None);
        assert_eq!(root("devices/system/cpu/online"), at("", "sys/"));
        assert_eq!(root("h/system/cpu/cpu0"), at("h/", "sys/devices/"));
        assert_eq!(root("cpu/cpu3/online"), at("", "sys/devices/system/"));
        assert_eq!(
            root("cpu12/topology/core_id"),
            at("", "sys/devices/system/cpu/")
        );
        assert_eq!(root("cpu7/online"), at("", "sys/devices/system/cpu/"));
        assert_eq!(root("cpufreq/policy0/topology"), None);
        assert_eq!(
            root("x/cpus/cpu0"),
            at("x/cpus/", "sys/devices/system/cpu/")
        );
        assert_eq!(root("x/cpus/cpuset"), None);
    }

    #[test]
    fn member_paths_are_confined() {
        assert!(member_path("/etc/passwd").is_err());
        assert!(member_path("a/../../b").is_err());
        assert_eq!(member_path("./a//b/").unwrap(), "a/b");
    }
}
