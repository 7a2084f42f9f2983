//! Reading a dump taken from a live kernel (`cpuN/domainM/<file>` in the procfs
//! or debugfs layout, as a directory, a `.tar.gz` or a `.tar.bz2`) and diffing it against
//! what manycore computes. A `dmesg.txt` next to it, from a `sched_verbose` boot,
//! also gives spans and groups, which the files do not show; they are compared too.

use std::collections::BTreeMap;
use std::fmt;
use std::io::{Read, Seek};
use std::path::{Path, PathBuf};

use cpumask::CpuMask;

use crate::build::Domains;
use crate::render::{domain_files, Layout};

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
    pub fn read(path: &Path) -> Result<Dump, DumpError> {
        let shown = path.display().to_string();
        let mut raw: BTreeMap<String, String> = BTreeMap::new();
        if path.is_dir() {
            walk(path, path, &mut raw)?;
        } else {
            let mut file =
                std::fs::File::open(path).map_err(|e| err(&shown, format!("cannot open: {e}")))?;
            // The compression is told by the first bytes, not the file name:
            // snapshots get renamed, and `--sysfs` already takes both.
            let mut magic = [0u8; 3];
            let got = read_prefix(&mut file, &mut magic)
                .map_err(|e| err(&shown, format!("cannot read: {e}")))?;
            file.seek(std::io::SeekFrom::Start(0))
                .map_err(|e| err(&shown, format!("cannot read: {e}")))?;
            let (reader, what): (Box<dyn Read>, &str) = match &magic[..got] {
                [0x1f, 0x8b, ..] => (Box::new(flate2::read::GzDecoder::new(file)), ".tar.gz"),
                b"BZh" => (Box::new(bzip2::read::BzDecoder::new(file)), ".tar.bz2"),
                _ => {
                    return Err(err(
                        &shown,
                        "neither a directory nor a .tar.gz/.tar.bz2 archive",
                    ))
                }
            };
            let mut archive = tar::Archive::new(reader);
            let entries = archive
                .entries()
                .map_err(|e| err(&shown, format!("not a {what}: {e}")))?;
            for entry in entries {
                let mut entry =
                    entry.map_err(|e| err(&shown, format!("bad archive entry: {e}")))?;
                if !entry.header().entry_type().is_file() {
                    continue;
                }
                let name = entry
                    .path()
                    .map_err(|e| err(&shown, format!("bad path in archive: {e}")))?
                    .to_string_lossy()
                    .trim_start_matches("./")
                    .to_string();
                let mut text = String::new();
                entry
                    .read_to_string(&mut text)
                    .map_err(|e| err(format!("{shown}:{name}"), format!("not text: {e}")))?;
                raw.insert(name, text);
            }
        }
        let mut dump = Dump::default();
        for prefix in [
            "",
            "domains/",
            "sys/kernel/debug/sched/domains/",
            "proc/sys/kernel/sched_domain/",
        ] {
            for (k, v) in &raw {
                if let Some(rest) = k.strip_prefix(prefix) {
                    if rest.starts_with("cpu") && rest.matches('/').count() == 2 {
                        dump.files.insert(rest.to_string(), v.clone());
                    }
                }
            }
            if !dump.files.is_empty() {
                break;
            }
        }
        if dump.files.is_empty() {
            return Err(err(&shown, "no cpuN/domainM/<file> entries found"));
        }
        if let Some((name, text)) = raw
            .iter()
            .find(|(k, _)| k.rsplit('/').next() == Some("dmesg.txt"))
        {
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

fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) -> Result<(), DumpError> {
    let rd = std::fs::read_dir(dir)
        .map_err(|e| err(dir.display().to_string(), format!("cannot list: {e}")))?;
    for entry in rd {
        let entry = entry.map_err(|e| err(dir.display().to_string(), e.to_string()))?;
        let p: PathBuf = entry.path();
        if p.is_dir() {
            walk(root, &p, out)?;
        } else {
            let rel = p
                .strip_prefix(root)
                .unwrap_or(&p)
                .to_string_lossy()
                .replace('\\', "/");
            let bytes = std::fs::read(&p)
                .map_err(|e| err(p.display().to_string(), format!("cannot read: {e}")))?;
            let text = String::from_utf8(bytes)
                .map_err(|_| err(p.display().to_string(), "not UTF-8 text"))?;
            out.insert(rel, text);
        }
    }
    Ok(())
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
    let layout = dump.layout();
    let mut ours: BTreeMap<String, String> = BTreeMap::new();
    for c in &domains.cpus {
        for (m, d) in c.domains.iter().enumerate() {
            for (file, text) in domain_files(domains, layout, d) {
                ours.insert(format!("cpu{}/domain{m}/{file}", c.cpu), text);
            }
        }
    }
    let missing = "<missing>".to_string();
    let mut diffs = Vec::new();
    let dump_dirs: std::collections::BTreeSet<String> = dump
        .files
        .keys()
        .map(|k| k.rsplit_once('/').map_or(k.clone(), |(d, _)| d.to_string()))
        .collect();
    let our_dirs: std::collections::BTreeSet<String> = ours
        .keys()
        .map(|k| k.rsplit_once('/').map_or(k.clone(), |(d, _)| d.to_string()))
        .collect();
    for dir in dump_dirs.difference(&our_dirs) {
        diffs.push(Difference {
            what: dir.clone(),
            kernel: "present".into(),
            manycore: missing.clone(),
        });
    }
    for dir in our_dirs.difference(&dump_dirs) {
        diffs.push(Difference {
            what: dir.clone(),
            kernel: missing.clone(),
            manycore: "present".into(),
        });
    }
    for (path, kernel_text) in &dump.files {
        let file = path.rsplit('/').next().unwrap_or("");
        if RUNTIME_FILES.contains(&file) {
            continue;
        }
        let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
        if !our_dirs.contains(dir) {
            continue;
        }
        match ours.get(path) {
            Some(our_text) if our_text.trim_end() == kernel_text.trim_end() => {}
            Some(our_text) => diffs.push(Difference {
                what: path.clone(),
                kernel: kernel_text.trim_end().to_string(),
                manycore: our_text.trim_end().to_string(),
            }),
            None => diffs.push(Difference {
                what: path.clone(),
                kernel: kernel_text.trim_end().to_string(),
                manycore: missing.clone(),
            }),
        }
    }
    for (&cpu, tree) in &dump.verbose {
        let Some(c) = domains.cpu(cpu as usize) else {
            diffs.push(Difference {
                what: format!("cpu{cpu} (dmesg)"),
                kernel: "present".into(),
                manycore: missing.clone(),
            });
            continue;
        };
        if tree.len() != c.domains.len() {
            diffs.push(Difference {
                what: format!("cpu{cpu} (dmesg) domains"),
                kernel: tree
                    .iter()
                    .map(|d| d.name.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
                manycore: c
                    .domains
                    .iter()
                    .map(|d| domains.name(d))
                    .collect::<Vec<_>>()
                    .join(" "),
            });
            continue;
        }
        for (m, (v, d)) in tree.iter().zip(&c.domains).enumerate() {
            let what = |x: &str| format!("cpu{cpu}/domain{m} (dmesg) {x}");
            if v.name != domains.name(d) {
                diffs.push(Difference {
                    what: what("level"),
                    kernel: v.name.clone(),
                    manycore: domains.name(d).to_string(),
                });
            }
            if &v.span != domains.span(d) {
                diffs.push(Difference {
                    what: what("span"),
                    kernel: v.span.to_list_string(),
                    manycore: domains.span(d).to_list_string(),
                });
            }
            let ours = domains.groups(cpu, d);
            if v.groups != ours {
                let show = |g: &[CpuMask]| {
                    g.iter()
                        .map(|m| format!("{{{m}}}"))
                        .collect::<Vec<_>>()
                        .join(",")
                };
                diffs.push(Difference {
                    what: what("groups"),
                    kernel: show(&v.groups),
                    manycore: show(&ours),
                });
            }
        }
    }
    diffs
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
