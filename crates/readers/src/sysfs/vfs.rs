//! A read-only view of a sysfs/procfs root: a real directory (the live `/` or an
//! extracted dump) or a snapshot archive held entirely in memory.
//!
//! Both resolve symbolic links *inside the root only*: an absolute link target is
//! taken relative to the root and `..` stops at the root, the way a chroot would
//! see it. An extracted dump can therefore never make us read the host's own
//! `/sys`, and an archive never touches the disk at all.
//!
//! Path handling is written by hand because no crate offers chroot-style symlink
//! resolution over an in-memory tree; the archive formats themselves are decoded
//! by the `tar`, `flate2` and `bzip2` crates.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::Error;

/// How many symbolic links one lookup may follow before we call it a loop
/// (Linux's own limit is 40).
const MAX_SYMLINK_HOPS: usize = 40;

/// What a path names.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    Dir,
    File,
    Symlink(String),
}

/// A sysfs/procfs root. Paths given to its methods are relative to the root and
/// use `/` separators (`sys/devices/system/cpu/online`).
#[derive(Debug)]
pub(crate) struct Root {
    backing: Backing,
    /// Logical directory → resolved physical directory, to resolve each
    /// directory's symlinks once rather than on every file read.
    resolved_dirs: RefCell<HashMap<String, String>>,
}

#[derive(Debug)]
enum Backing {
    Dir {
        /// The root directory on disk.
        base: PathBuf,
        /// `true` for the live `/`: the kernel's own links are followed by the OS.
        live: bool,
    },
    Mem(MemTree),
}

/// An archive's contents keyed by normalized path relative to the detected root.
#[derive(Debug, Default)]
struct MemTree {
    /// Name of the archive, for error messages.
    name: String,
    /// The member-path prefix the root was found under (`16em64t-4s2c2t/`).
    prefix: String,
    files: HashMap<String, Vec<u8>>,
    links: HashMap<String, String>,
    /// Directory → sorted names of its entries.
    children: HashMap<String, Vec<String>>,
}

impl Root {
    /// A directory on disk. `live` disables the in-root symlink confinement, which
    /// only matters for dumps (the live kernel's links point where they should).
    pub(crate) fn dir(base: &Path, live: bool) -> Root {
        Root {
            backing: Backing::Dir {
                base: base.to_path_buf(),
                live,
            },
            resolved_dirs: RefCell::new(HashMap::new()),
        }
    }

    /// Decodes a `.tar`, `.tar.gz` or `.tar.bz2` snapshot (detected by its magic
    /// bytes, not its name) into memory and locates the directory holding `sys/`.
    pub(crate) fn archive(bytes: &[u8], name: &str) -> Result<Root, Error> {
        let tree = MemTree::load(bytes, name)?;
        Ok(Root {
            backing: Backing::Mem(tree),
            resolved_dirs: RefCell::new(HashMap::new()),
        })
    }

    /// The name to put in an error about `path`: the file on disk, or
    /// `archive:member` for a snapshot.
    pub(crate) fn describe(&self, path: &str) -> String {
        match &self.backing {
            Backing::Dir { base, .. } => base.join(path).display().to_string(),
            Backing::Mem(t) => format!("{}:{}{}", t.name, t.prefix, path),
        }
    }

    /// The root itself, for errors that concern the whole snapshot.
    pub(crate) fn describe_root(&self) -> String {
        match &self.backing {
            Backing::Dir { base, .. } => base.display().to_string(),
            Backing::Mem(t) => t.name.clone(),
        }
    }

    /// Whether this is the live system (`/`).
    pub(crate) fn is_live(&self) -> bool {
        matches!(self.backing, Backing::Dir { live: true, .. })
    }

    /// The contents of a file, or `None` if it does not exist (or is a directory).
    pub(crate) fn read(&self, path: &str) -> Result<Option<Vec<u8>>, Error> {
        let Some(real) = self.resolve(path)? else {
            return Ok(None);
        };
        match &self.backing {
            Backing::Dir { base, .. } => match std::fs::read(base.join(&real)) {
                Ok(bytes) => Ok(Some(bytes)),
                Err(e) if is_absent(&e) => Ok(None),
                Err(e) => Err(Error::new(self.describe(path), format!("cannot read: {e}"))),
            },
            Backing::Mem(t) => Ok(t.files.get(&real).cloned()),
        }
    }

    /// Names of the entries of a directory (empty if it does not exist), sorted.
    pub(crate) fn list(&self, dir: &str) -> Result<Vec<String>, Error> {
        let Some(real) = self.resolve(dir)? else {
            return Ok(Vec::new());
        };
        match &self.backing {
            Backing::Dir { base, .. } => {
                let entries = match std::fs::read_dir(base.join(&real)) {
                    Ok(e) => e,
                    Err(e) if is_absent(&e) => return Ok(Vec::new()),
                    Err(e) => {
                        return Err(Error::new(
                            self.describe(dir),
                            format!("cannot list directory: {e}"),
                        ))
                    }
                };
                let mut names = Vec::new();
                for entry in entries {
                    let entry = entry.map_err(|e| {
                        Error::new(self.describe(dir), format!("cannot list directory: {e}"))
                    })?;
                    if let Some(name) = entry.file_name().to_str() {
                        names.push(name.to_string());
                    }
                }
                names.sort();
                Ok(names)
            }
            Backing::Mem(t) => Ok(t.children.get(&real).cloned().unwrap_or_default()),
        }
    }

    /// Whether `path` exists (as anything).
    pub(crate) fn exists(&self, path: &str) -> Result<bool, Error> {
        Ok(self.resolve(path)?.is_some())
    }

    /// What the (already resolved) physical path `real` is.
    fn kind(&self, real: &str) -> Option<Kind> {
        match &self.backing {
            Backing::Dir { base, .. } => {
                let full = base.join(real);
                let meta = std::fs::symlink_metadata(&full).ok()?;
                if meta.file_type().is_symlink() {
                    let target = std::fs::read_link(&full).ok()?;
                    Some(Kind::Symlink(target.to_string_lossy().into_owned()))
                } else if meta.is_dir() {
                    Some(Kind::Dir)
                } else {
                    Some(Kind::File)
                }
            }
            Backing::Mem(t) => t.kind(real),
        }
    }

    /// Resolves `path` to a physical path inside the root, following symlinks
    /// chroot-style; `None` if some component does not exist.
    fn resolve(&self, path: &str) -> Result<Option<String>, Error> {
        if let Backing::Dir { live: true, .. } = self.backing {
            // The live kernel's sysfs links are trustworthy; let the OS follow them.
            return Ok(Some(normalize(path).join("/")));
        }
        let comps = normalize(path);
        let (dir_comps, last) = match comps.split_last() {
            Some((last, dir)) => (dir, Some(last)),
            None => (&comps[..], None),
        };
        let dir_key = dir_comps.join("/");
        let cached = self.resolved_dirs.borrow().get(&dir_key).cloned();
        let dir_real = match cached {
            Some(d) => d,
            None => {
                let Some(d) = self.walk(dir_comps, path)? else {
                    return Ok(None);
                };
                if self.kind(&d) != Some(Kind::Dir) && !d.is_empty() {
                    return Ok(None);
                }
                self.resolved_dirs.borrow_mut().insert(dir_key, d.clone());
                d
            }
        };
        match last {
            None => Ok(Some(dir_real)),
            Some(name) => {
                let mut start: Vec<String> = if dir_real.is_empty() {
                    Vec::new()
                } else {
                    dir_real.split('/').map(str::to_string).collect()
                };
                start.push(name.clone());
                self.walk(&start, path)
            }
        }
    }

    /// Follows `comps` from the root, expanding symlinks as they are met.
    fn walk(&self, comps: &[String], original: &str) -> Result<Option<String>, Error> {
        let mut pending: Vec<String> = comps.iter().rev().cloned().collect();
        let mut done: Vec<String> = Vec::new();
        let mut hops = 0;
        while let Some(comp) = pending.pop() {
            if comp == ".." {
                done.pop();
                continue;
            }
            done.push(comp);
            let here = done.join("/");
            match self.kind(&here) {
                None => return Ok(None),
                Some(Kind::Dir) | Some(Kind::File) => {}
                Some(Kind::Symlink(target)) => {
                    hops += 1;
                    if hops > MAX_SYMLINK_HOPS {
                        return Err(Error::new(
                            self.describe(original),
                            "too many levels of symbolic links",
                        ));
                    }
                    done.pop();
                    if target.starts_with('/') {
                        // Absolute targets are relative to the snapshot root.
                        done.clear();
                    }
                    for part in split_components(&target).into_iter().rev() {
                        pending.push(part);
                    }
                }
            }
        }
        Ok(Some(done.join("/")))
    }
}

impl MemTree {
    fn load(bytes: &[u8], name: &str) -> Result<MemTree, Error> {
        let decoded: Vec<u8> = if bytes.starts_with(&[0x1f, 0x8b]) {
            let mut out = Vec::new();
            flate2::read::MultiGzDecoder::new(bytes)
                .read_to_end(&mut out)
                .map_err(|e| Error::new(name, format!("corrupt gzip data: {e}")))?;
            out
        } else if bytes.starts_with(b"BZh") {
            let mut out = Vec::new();
            bzip2::read::MultiBzDecoder::new(bytes)
                .read_to_end(&mut out)
                .map_err(|e| Error::new(name, format!("corrupt bzip2 data: {e}")))?;
            out
        } else if bytes.len() > 262 && &bytes[257..262] == b"ustar" {
            bytes.to_vec()
        } else {
            return Err(Error::new(
                name,
                "not a tar, tar.gz or tar.bz2 archive (unrecognized leading bytes)",
            ));
        };

        let mut all_files: HashMap<String, Vec<u8>> = HashMap::new();
        let mut all_links: HashMap<String, String> = HashMap::new();
        let mut hard_links: Vec<(String, String)> = Vec::new();
        let mut dirs: Vec<String> = Vec::new();
        let mut archive = tar::Archive::new(&decoded[..]);
        let entries = archive
            .entries()
            .map_err(|e| Error::new(name, format!("corrupt tar archive: {e}")))?;
        for entry in entries {
            let mut entry =
                entry.map_err(|e| Error::new(name, format!("corrupt tar archive: {e}")))?;
            let raw = entry.path_bytes().into_owned();
            let member = String::from_utf8_lossy(&raw).into_owned();
            let path =
                member_path(&member).map_err(|why| Error::new(format!("{name}:{member}"), why))?;
            let kind = entry.header().entry_type();
            if kind.is_dir() {
                dirs.push(path);
            } else if kind.is_symlink() || kind.is_hard_link() {
                let target = entry
                    .link_name_bytes()
                    .map(|t| String::from_utf8_lossy(&t).into_owned())
                    .unwrap_or_default();
                if kind.is_symlink() {
                    all_links.insert(path, target);
                } else {
                    // Hard link targets are member names; copy the bytes below.
                    let target = member_path(&target).map_err(|why| {
                        Error::new(format!("{name}:{member}"), format!("link target: {why}"))
                    })?;
                    hard_links.push((path, target));
                }
            } else if kind.is_file() || kind == tar::EntryType::Continuous {
                let mut data = Vec::with_capacity(entry.size() as usize);
                entry.read_to_end(&mut data).map_err(|e| {
                    Error::new(format!("{name}:{member}"), format!("truncated member: {e}"))
                })?;
                all_files.insert(path, data);
            }
        }
        for (path, target) in hard_links {
            if let Some(data) = all_files.get(&target).cloned() {
                all_files.insert(path, data);
            }
        }

        // The root is wherever `sys/devices/system/cpu` lives: hwloc's tarballs
        // have a top directory named after the machine, lscpu's after the test,
        // and some dumps have `sys/` at the top.
        let prefix = all_files
            .keys()
            .chain(all_links.keys())
            .chain(dirs.iter())
            .filter_map(|p| find_root_prefix(p))
            .min_by_key(|p| (p.len(), p.clone()))
            .ok_or_else(|| {
                Error::new(
                    name,
                    "no sys/devices/system/cpu directory in the archive: not a sysfs snapshot",
                )
            })?;

        let mut tree = MemTree {
            name: name.to_string(),
            prefix: prefix.clone(),
            ..MemTree::default()
        };
        let strip = |p: &str| -> Option<String> {
            if prefix.is_empty() {
                Some(p.to_string())
            } else {
                p.strip_prefix(prefix.as_str()).map(str::to_string)
            }
        };
        let mut children: BTreeMap<String, std::collections::BTreeSet<String>> = BTreeMap::new();
        let note = |path: &str, children: &mut BTreeMap<_, std::collections::BTreeSet<_>>| {
            // Register the path and all its ancestors as directory entries.
            let mut p = path.to_string();
            while !p.is_empty() {
                let (parent, leaf) = match p.rfind('/') {
                    Some(i) => (p[..i].to_string(), p[i + 1..].to_string()),
                    None => (String::new(), p.clone()),
                };
                let fresh = children.entry(parent.clone()).or_default().insert(leaf);
                if !fresh {
                    break;
                }
                p = parent;
            }
        };
        for (p, data) in all_files {
            if let Some(rel) = strip(&p) {
                note(&rel, &mut children);
                tree.files.insert(rel, data);
            }
        }
        for (p, target) in all_links {
            if let Some(rel) = strip(&p) {
                note(&rel, &mut children);
                tree.links.insert(rel, target);
            }
        }
        for d in dirs {
            if let Some(rel) = strip(&d) {
                note(&rel, &mut children);
                children.entry(rel).or_default();
            }
        }
        tree.children = children
            .into_iter()
            .map(|(k, v)| (k, v.into_iter().collect()))
            .collect();
        Ok(tree)
    }

    fn kind(&self, real: &str) -> Option<Kind> {
        if real.is_empty() || self.children.contains_key(real) {
            // A directory (possibly only implied by its members' paths).
            if let Some(t) = self.links.get(real) {
                return Some(Kind::Symlink(t.clone()));
            }
            return Some(Kind::Dir);
        }
        if let Some(t) = self.links.get(real) {
            return Some(Kind::Symlink(t.clone()));
        }
        if self.files.contains_key(real) {
            return Some(Kind::File);
        }
        None
    }
}

/// Validates and normalizes an archive member name: relative, no `..`, no empty
/// or `.` components.
fn member_path(member: &str) -> Result<String, String> {
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

/// If `path` contains `sys/devices/system/cpu` as whole components, the prefix
/// before `sys/` (with its trailing slash, or empty).
fn find_root_prefix(path: &str) -> Option<String> {
    const MARK: &str = "sys/devices/system/cpu";
    let mut from = 0;
    while let Some(i) = path[from..].find(MARK) {
        let at = from + i;
        let starts_ok = at == 0 || path.as_bytes()[at - 1] == b'/';
        let end = at + MARK.len();
        let ends_ok = end == path.len() || path.as_bytes()[end] == b'/';
        if starts_ok && ends_ok {
            return Some(path[..at].to_string());
        }
        from = at + 1;
    }
    None
}

/// Splits a path into components, dropping empty and `.` ones (keeps `..`).
fn split_components(path: &str) -> Vec<String> {
    path.split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .map(str::to_string)
        .collect()
}

/// Normalizes a root-relative lookup path, applying `..` lexically (clamped at
/// the root).
fn normalize(path: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in split_components(path) {
        if c == ".." {
            out.pop();
        } else {
            out.push(c);
        }
    }
    out
}

fn is_absent(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
    ) || e.raw_os_error() == Some(20) // ENOTDIR on older toolchains' mapping
        || e.raw_os_error() == Some(21) // EISDIR: asked to read a directory
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_prefix_is_found_at_component_boundaries() {
        assert_eq!(
            find_root_prefix("x/sys/devices/system/cpu/online"),
            Some("x/".into())
        );
        assert_eq!(find_root_prefix("sys/devices/system/cpu"), Some("".into()));
        assert_eq!(find_root_prefix("x/sys/devices/system/cpufreq"), None);
    }

    #[test]
    fn member_paths_are_confined() {
        assert!(member_path("/etc/passwd").is_err());
        assert!(member_path("a/../../b").is_err());
        assert_eq!(member_path("./a//b/").unwrap(), "a/b");
    }
}
