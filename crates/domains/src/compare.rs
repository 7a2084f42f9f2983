//! Reading a dump taken from a live kernel (`cpuN/domainM/<file>` in the procfs
//! or debugfs layout, as a directory, a `.tar.gz` or a `.tar.bz2`) and diffing it against
//! what manycore computes. A `dmesg.txt` next to it, from a `sched_verbose` boot,
//! also gives spans and groups, which the files do not show; they are compared too.

use std::collections::BTreeMap;
use std::fmt;
use std::io::{Read, Seek};
use std::path::Path;

use cpumask::CpuMask;

use crate::build::Domains;
use crate::dumpfs::{
    read_capped, read_file, DUMP_FILE_LIMIT, DUMP_KEPT_LIMIT, DUMP_MEMBER_LIMIT, DUMP_STREAM_LIMIT,
};
use crate::render::{domain_files, Layout};
use readers::tar_stream::{Stop, Watched, MAX_LONG_NAME, MAX_META_RECORD, TRUNCATED};

/// A dump that could not be read; names the file and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DumpError {
    /// The file or directory.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for DumpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

impl std::error::Error for DumpError {}

fn err(path: impl Into<String>, message: impl Into<String>) -> DumpError {
    DumpError {
        path: path.into(),
        message: message.into(),
    }
}

/// One domain as sched_verbose printed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerboseDomain {
    /// `level=` (the domain's name).
    pub name: String,
    /// `span=`.
    pub span: CpuMask,
    /// Each group's `span=`, in printed order.
    pub groups: Vec<CpuMask>,
}

/// A kernel's scheduler-domain dump.
#[derive(Debug, Clone, Default)]
pub struct Dump {
    /// `files["cpu0/domain1/flags"]` = contents.
    pub files: BTreeMap<String, String>,
    /// From `dmesg.txt`: the last "CPUn attaching sched-domain(s)" tree per CPU.
    pub verbose: BTreeMap<u32, Vec<VerboseDomain>>,
}

impl Dump {
    /// Reads a dump from a directory, a `.tar.gz` or a `.tar.bz2`. The domain tree may be at the
    /// top, or under `domains/`, `sys/kernel/debug/sched/domains/` or
    /// `proc/sys/kernel/sched_domain/`.
    ///
    /// Only the domain files and a `dmesg.txt` are read, each through
    /// [`DUMP_FILE_LIMIT`] and together through [`DUMP_KEPT_LIMIT`]; a
    /// directory is read without following a link inside it (a link where
    /// one of those files would be is an error naming it), and a FIFO or
    /// device is an error, never a blocked or endless read.
    pub fn read(path: &Path) -> Result<Dump, DumpError> {
        let shown = path.display().to_string();
        let mut kept = Kept::default();
        if path.is_dir() {
            walk(path, "", &mut kept)?;
        } else {
            read_archive(path, &shown, &mut kept)?;
        }
        let mut raw = kept.files;
        let mut dump = Dump::default();
        for prefix in PREFIXES {
            let keys: Vec<String> = raw
                .keys()
                .filter(|k| k.strip_prefix(prefix).is_some_and(is_domain_file))
                .cloned()
                .collect();
            for k in keys {
                let text = raw.remove(&k).expect("listed");
                dump.files.insert(k[prefix.len()..].to_string(), text);
            }
            if !dump.files.is_empty() {
                break;
            }
        }
        if dump.files.is_empty() {
            return Err(err(&shown, "no cpuN/domainM/<file> entries found"));
        }
        if let Some((name, text)) = raw.iter().find(|(k, _)| is_dmesg(k)) {
            dump.verbose = parse_verbose(text)
                .map_err(|(line, m)| err(format!("{shown}:{name}:{line}"), m))?;
        }
        Ok(dump)
    }

    /// The layout of the dump: procfs when `flags` files hold numbers.
    pub fn layout(&self) -> Layout {
        let numeric = self
            .files
            .iter()
            .find(|(k, _)| k.ends_with("/flags"))
            .is_some_and(|(_, v)| v.trim().chars().all(|c| c.is_ascii_digit()));
        if numeric {
            Layout::Proc
        } else {
            Layout::Debugfs
        }
    }
}

/// Where a dump's domain tree may sit.
const PREFIXES: [&str; 4] = [
    "",
    "domains/",
    "sys/kernel/debug/sched/domains/",
    "proc/sys/kernel/sched_domain/",
];

/// `cpuN/domainM/<file>`.
fn is_domain_file(rest: &str) -> bool {
    rest.starts_with("cpu") && rest.matches('/').count() == 2
}

fn is_dmesg(path: &str) -> bool {
    path.rsplit('/').next() == Some("dmesg.txt")
}

/// A path of the dump that is read: a domain file under one of the
/// [`PREFIXES`], or a `dmesg.txt`.
fn wanted(path: &str) -> bool {
    is_dmesg(path)
        || PREFIXES
            .iter()
            .any(|p| path.strip_prefix(p).is_some_and(is_domain_file))
}

/// A directory of the dump that can hold wanted files: a prefix on the way
/// to a domain tree, or `cpuN` / `cpuN/domainM` inside one.
fn worth_entering(dir: &str) -> bool {
    let with_slash = format!("{dir}/");
    PREFIXES.iter().any(|p| {
        p.starts_with(&with_slash)
            || with_slash
                .strip_prefix(p)
                .is_some_and(|rest| rest.starts_with("cpu") && rest.matches('/').count() <= 2)
    })
}

/// The files read so far and their bytes.
#[derive(Default)]
struct Kept {
    files: BTreeMap<String, String>,
    bytes: u64,
}

impl Kept {
    fn keep(&mut self, rel: String, bytes: Vec<u8>, shown: &str) -> Result<(), DumpError> {
        self.bytes += bytes.len() as u64;
        if self.bytes > DUMP_KEPT_LIMIT {
            return Err(err(
                shown,
                format!("dump too large: its domain files pass {DUMP_KEPT_LIMIT} bytes"),
            ));
        }
        let text = String::from_utf8(bytes).map_err(|_| err(shown, "not UTF-8 text"))?;
        self.files.insert(rel, text);
        Ok(())
    }
}

/// Reads the wanted files under `root/rel`, by each entry's own type: a
/// link is never followed.
fn walk(root: &Path, rel: &str, kept: &mut Kept) -> Result<(), DumpError> {
    let dir = root.join(rel);
    let shown_dir = dir.display().to_string();
    let rd = std::fs::read_dir(&dir).map_err(|e| err(&shown_dir, format!("cannot list: {e}")))?;
    for entry in rd {
        let entry = entry.map_err(|e| err(&shown_dir, e.to_string()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let child = if rel.is_empty() {
            name
        } else {
            format!("{rel}/{name}")
        };
        let kind = entry
            .file_type()
            .map_err(|e| err(entry.path().display().to_string(), e.to_string()))?;
        if kind.is_symlink() && (wanted(&child) || worth_entering(&child)) {
            return Err(err(
                entry.path().display().to_string(),
                "is a symbolic link: a dump is read without following links",
            ));
        } else if kind.is_dir() {
            if worth_entering(&child) {
                walk(root, &child, kept)?;
            }
        } else if wanted(&child) {
            let p = entry.path();
            let shown = p.display().to_string();
            let bytes = read_file(&p, DUMP_FILE_LIMIT).map_err(|m| err(&shown, m))?;
            kept.keep(child, bytes, &shown)?;
        }
    }
    Ok(())
}

/// Reads the wanted members of a `.tar.gz` or `.tar.bz2` dump: the stream
/// and member count within their budgets, each member through the file
/// limit (its header's size is not trusted), links and special members
/// skipped.
fn read_archive(path: &Path, shown: &str, kept: &mut Kept) -> Result<(), DumpError> {
    let mut file = open_archive(path).map_err(|m| err(shown, m))?;
    // The compression is told by the first bytes, not the file name:
    // snapshots get renamed, and `--sysfs` already takes both.
    let mut magic = [0u8; 3];
    let got =
        read_prefix(&mut file, &mut magic).map_err(|e| err(shown, format!("cannot read: {e}")))?;
    file.seek(std::io::SeekFrom::Start(0))
        .map_err(|e| err(shown, format!("cannot read: {e}")))?;
    let (reader, what): (Box<dyn Read>, &str) = match &magic[..got] {
        [0x1f, 0x8b, ..] => (Box::new(flate2::read::GzDecoder::new(file)), ".tar.gz"),
        b"BZh" => (Box::new(bzip2::read::BzDecoder::new(file)), ".tar.bz2"),
        _ => {
            return Err(err(
                shown,
                "neither a directory nor a .tar.gz/.tar.bz2 archive",
            ))
        }
    };
    let (stream, stop) = Watched::new(reader, DUMP_STREAM_LIMIT, DUMP_MEMBER_LIMIT);
    // The watch stops the stream with its own reason; `tar` words it its way.
    let failed = |what: &str, e: std::io::Error| match stop.get() {
        Stop::None => err(shown, format!("{what}: {e}")),
        why => err(shown, stopped(why)),
    };
    let mut archive = tar::Archive::new(stream);
    let entries = archive
        .entries()
        .map_err(|e| failed(&format!("not a {what}"), e))?;
    for entry in entries {
        let entry = entry.map_err(|e| failed("bad archive entry", e))?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let name = entry
            .path()
            .map_err(|e| failed("bad path in archive", e))?
            .to_string_lossy()
            .trim_start_matches("./")
            .to_string();
        if !wanted(&name) {
            continue;
        }
        let member = format!("{shown}:{name}");
        let bytes = read_capped(entry, DUMP_FILE_LIMIT).map_err(|m| match stop.get() {
            Stop::None => err(&member, m),
            why => err(shown, stopped(why)),
        })?;
        kept.keep(name, bytes, &member)?;
    }
    Ok(())
}

/// Why the watched stream stopped, in the dump's words.
fn stopped(why: Stop) -> String {
    match why {
        Stop::StreamTooLong => {
            format!("dump too large: more than {DUMP_STREAM_LIMIT} bytes of tar stream")
        }
        Stop::TooManyMembers => format!("dump too large: more than {DUMP_MEMBER_LIMIT} members"),
        Stop::LongNameTooLarge(size) => format!(
            "a GNU long name of {size} bytes, longer than a path can be (at most {MAX_LONG_NAME})"
        ),
        Stop::MetaRecordTooLarge(size) => {
            format!("a pax record of {size} bytes (at most {MAX_META_RECORD} accepted)")
        }
        Stop::SparseMember => "GNU sparse members are not accepted in a domains dump".into(),
        Stop::Truncated => TRUNCATED.into(),
        Stop::None => String::from("archive read failed"),
    }
}

/// The archive file itself: named by the user, so a link to it is fine, but
/// it must be a regular file (a FIFO would block, a device never end).
fn open_archive(path: &Path) -> Result<std::fs::File, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot open: {e}"))?;
    if !meta.is_file() {
        return Err("is a FIFO, device or socket, not a directory or archive".into());
    }
    std::fs::File::open(path).map_err(|e| format!("cannot open: {e}"))
}

/// Parses sched_verbose's "CPUn attaching sched-domain(s):" trees out of a kernel
/// log; a later tree for the same CPU (domains are rebuilt) replaces an earlier one.
pub fn parse_verbose(text: &str) -> Result<BTreeMap<u32, Vec<VerboseDomain>>, (usize, String)> {
    let mut out: BTreeMap<u32, Vec<VerboseDomain>> = BTreeMap::new();
    let mut current: Option<u32> = None;
    for (n, line) in text.lines().enumerate() {
        let lineno = n + 1;
        // Drop the "[    1.963031] " timestamp.
        let body = match line.find("] ") {
            Some(i) if line.starts_with('[') => &line[i + 2..],
            _ => line,
        }
        .trim();
        if let Some(rest) = body.strip_prefix("CPU") {
            if let Some(num) = rest.strip_suffix(" attaching sched-domain(s):") {
                let cpu: u32 = num
                    .parse()
                    .map_err(|_| (lineno, format!("bad CPU number in '{body}'")))?;
                out.insert(cpu, Vec::new());
                current = Some(cpu);
            } else if let Some(num) = rest.strip_suffix(" attaching NULL sched-domain.") {
                // Detached (offline, or its domains torn down): no tree any more.
                let cpu: u32 = num
                    .parse()
                    .map_err(|_| (lineno, format!("bad CPU number in '{body}'")))?;
                out.remove(&cpu);
                current = None;
            } else {
                current = None;
            }
            continue;
        }
        let Some(cpu) = current else { continue };
        if body.starts_with("domain-") {
            let span =
                field(body, "span=").ok_or((lineno, "domain line without span=".to_string()))?;
            let name =
                field(body, "level=").ok_or((lineno, "domain line without level=".to_string()))?;
            let span = CpuMask::parse_list(span)
                .map_err(|e| (lineno, format!("bad span '{span}': {e:?}")))?;
            out.get_mut(&cpu).expect("inserted").push(VerboseDomain {
                name: name.to_string(),
                span,
                groups: Vec::new(),
            });
        } else if let Some(groups) = body.strip_prefix("groups:") {
            let dom = out
                .get_mut(&cpu)
                .and_then(|v| v.last_mut())
                .ok_or((lineno, "groups: before any domain".to_string()))?;
            for part in groups.split("{ ").skip(1) {
                let span =
                    field(part, "span=").ok_or((lineno, "group without span=".to_string()))?;
                let m = CpuMask::parse_list(span)
                    .map_err(|e| (lineno, format!("bad group span '{span}': {e:?}")))?;
                dom.groups.push(m);
            }
        } else if !body.starts_with("ERROR") {
            current = None;
        }
    }
    Ok(out)
}

fn field<'a>(s: &'a str, key: &str) -> Option<&'a str> {
    let start = s.find(key)? + key.len();
    let rest = &s[start..];
    let end = rest.find([' ', '}']).unwrap_or(rest.len());
    Some(&rest[..end])
}

/// One difference between the kernel's dump and manycore.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// `cpu3/domain1/flags`, or `cpu3/domain1 (dmesg) groups`.
    pub what: String,
    /// The kernel's value (`<missing>` if absent).
    pub kernel: String,
    /// manycore's value (`<missing>` if absent).
    pub manycore: String,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: kernel '{}', manycore '{}'",
            self.what, self.kernel, self.manycore
        )
    }
}

/// Files whose values the kernel measures at run time rather than derives.
const RUNTIME_FILES: &[&str] = &["max_newidle_lb_cost"];

/// Every difference between `dump` and `domains`. Compares each file of the dump
/// (except run-time measurements), CPUs or domains present on one side only,
/// and, when the dump has a sched_verbose log, each domain's span and groups.
pub fn compare(domains: &Domains, dump: &Dump) -> Vec<Difference> {
    let ours = our_files(domains, dump.layout());
    let (dump_dirs, our_dirs) = (dirs_of(&dump.files), dirs_of(&ours));
    let mut diffs = Vec::new();
    for dir in dump_dirs.difference(&our_dirs) {
        diffs.push(Difference::new(dir, "present", MISSING));
    }
    for dir in our_dirs.difference(&dump_dirs) {
        diffs.push(Difference::new(dir, MISSING, "present"));
    }
    compare_files(&dump.files, &ours, &our_dirs, &mut diffs);
    for (&cpu, tree) in &dump.verbose {
        compare_verbose(domains, cpu, tree, &mut diffs);
    }
    diffs
}

/// How a side's absent value is shown.
const MISSING: &str = "<missing>";

impl Difference {
    fn new(
        what: impl Into<String>,
        kernel: impl Into<String>,
        manycore: impl Into<String>,
    ) -> Self {
        Difference {
            what: what.into(),
            kernel: kernel.into(),
            manycore: manycore.into(),
        }
    }
}

/// The files a kernel of `layout` would show for `domains`, by path
/// (`cpu3/domain1/flags`).
fn our_files(domains: &Domains, layout: Layout) -> BTreeMap<String, String> {
    let mut ours = BTreeMap::new();
    for c in &domains.cpus {
        for (m, d) in c.domains.iter().enumerate() {
            for (file, text) in domain_files(domains, layout, d) {
                ours.insert(format!("cpu{}/domain{m}/{file}", c.cpu), text);
            }
        }
    }
    ours
}

/// The directories (`cpu3/domain1`) the files are in.
fn dirs_of(files: &BTreeMap<String, String>) -> std::collections::BTreeSet<String> {
    files
        .keys()
        .map(|k| k.rsplit_once('/').map_or(k.clone(), |(d, _)| d.to_string()))
        .collect()
}

/// Each file of the dump in a domain both sides have, against ours (run-time
/// measurements skipped).
fn compare_files(
    dump: &BTreeMap<String, String>,
    ours: &BTreeMap<String, String>,
    our_dirs: &std::collections::BTreeSet<String>,
    diffs: &mut Vec<Difference>,
) {
    for (path, kernel_text) in dump {
        let file = path.rsplit('/').next().unwrap_or("");
        if RUNTIME_FILES.contains(&file) {
            continue;
        }
        let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
        if !our_dirs.contains(dir) {
            continue;
        }
        let kernel = kernel_text.trim_end();
        match ours.get(path) {
            Some(our_text) if our_text.trim_end() == kernel => {}
            Some(our_text) => diffs.push(Difference::new(path, kernel, our_text.trim_end())),
            None => diffs.push(Difference::new(path, kernel, MISSING)),
        }
    }
}

/// One CPU's sched_verbose domains against ours: the chain's levels, then
/// each domain's level name, span and groups.
fn compare_verbose(
    domains: &Domains,
    cpu: u32,
    tree: &[VerboseDomain],
    diffs: &mut Vec<Difference>,
) {
    let Some(c) = domains.cpu(cpu as usize) else {
        diffs.push(Difference::new(
            format!("cpu{cpu} (dmesg)"),
            "present",
            MISSING,
        ));
        return;
    };
    if tree.len() != c.domains.len() {
        let kernel: Vec<&str> = tree.iter().map(|d| d.name.as_str()).collect();
        let ours: Vec<&str> = c.domains.iter().map(|d| domains.name(d)).collect();
        diffs.push(Difference::new(
            format!("cpu{cpu} (dmesg) domains"),
            kernel.join(" "),
            ours.join(" "),
        ));
        return;
    }
    let show = |g: &[CpuMask]| {
        g.iter()
            .map(|m| format!("{{{m}}}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    for (m, (v, d)) in tree.iter().zip(&c.domains).enumerate() {
        let what = |x: &str| format!("cpu{cpu}/domain{m} (dmesg) {x}");
        if v.name != domains.name(d) {
            diffs.push(Difference::new(what("level"), &v.name, domains.name(d)));
        }
        if v.span != *domains.span(d) {
            diffs.push(Difference::new(
                what("span"),
                v.span.to_list_string(),
                domains.span(d).to_list_string(),
            ));
        }
        let ours = domains.groups(cpu, d);
        if v.groups != ours {
            diffs.push(Difference::new(
                what("groups"),
                show(&v.groups),
                show(&ours),
            ));
        }
    }
}

/// Reads up to `buf.len()` bytes, fewer only at end of file; returns how many.
fn read_prefix(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same archive read as .tar.gz and recompressed as .tar.bz2 gives the
    /// same dump; a file that is neither is refused by name.
    #[test]
    fn reads_bz2_like_gz() {
        let gz = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/x86-2s4c2t-domains.tar.gz");
        let mut tar_bytes = Vec::new();
        flate2::read::GzDecoder::new(std::fs::File::open(&gz).unwrap())
            .read_to_end(&mut tar_bytes)
            .unwrap();
        let dir = std::env::temp_dir().join(format!("domains-compare-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bz2 = dir.join("dump.tar.bz2");
        let mut enc = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
        std::io::Write::write_all(&mut enc, &tar_bytes).unwrap();
        std::fs::write(&bz2, enc.finish().unwrap()).unwrap();
        let plain = dir.join("dump.tar");
        std::fs::write(&plain, &tar_bytes).unwrap();

        let from_gz = Dump::read(&gz).unwrap();
        let from_bz2 = Dump::read(&bz2).unwrap();
        assert!(!from_gz.files.is_empty());
        assert_eq!(from_gz.files, from_bz2.files);
        assert_eq!(from_gz.verbose.len(), from_bz2.verbose.len());
        let e = Dump::read(&plain).unwrap_err().to_string();
        assert!(e.contains("dump.tar") && e.contains(".tar.bz2"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
