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

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::io::Read;
use std::ops::Range;
use std::path::{Path, PathBuf};

use super::archive::MemTree;
use crate::limits::{file_limit, not_regular, ArchiveLimits};
use crate::Error;

/// How many symbolic links one lookup may follow before we call it a loop
/// (Linux's own limit is 40).
const MAX_SYMLINK_HOPS: usize = 40;

/// What a path names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Kind {
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
    resolved_dirs: RefCell<HashMap<String, Option<String>>>,
    /// Directory listings of a dump directory (physical path → entry kinds),
    /// read once each: looking names up in them replaces a `stat` per file and
    /// makes absent files free.
    listings: RefCell<HashMap<String, Option<HashMap<String, Kind>>>>,
    /// Files and listings already fetched by worker threads ([`Fetcher`]):
    /// each is handed out once, by [`Root::read`] or [`Root::list`], in
    /// place of asking the file system.
    fetched: RefCell<Option<Fetched>>,
    /// The directory the reader listed last, kept open so that the files
    /// beneath it are opened from it: the kernel then walks only the
    /// components below it (a CPU's `cache/` is listed, then its
    /// `indexM/` files are read), for no system call more.
    #[cfg(target_os = "linux")]
    kept: RefCell<Option<in_root::Kept>>,
}

/// What a worker thread fetched, in the order fetched: for each path,
/// exactly what [`Root::read`] or [`Root::list`] would have got from the
/// file system (errors in words). Paths, contents and listings share one
/// buffer, kept from one use to the next: the bytes a worker reads are
/// not one allocation each, made on its thread and freed on the reader's
/// (which makes the allocator's per-thread heaps grow and shrink by
/// `mprotect` and consolidate on every free).
#[derive(Debug, Default)]
pub(crate) struct Fetched {
    data: Vec<u8>,
    items: Vec<Item>,
    /// Where a look-up starts: the reader asks in the order fetched.
    cursor: usize,
}

/// One path fetched, its parts as ranges of [`Fetched::data`].
#[derive(Debug)]
struct Item {
    path: Range<usize>,
    got: Got,
}

#[derive(Debug)]
enum Got {
    File(Result<Option<Range<usize>>, String>),
    /// The sorted names, each followed by a `/` (which no name holds).
    List(Result<Range<usize>, String>),
    /// Whether anything is at the path.
    Exists(Result<bool, String>),
}

/// How many items past the last one asked for a look-up tries: the reader
/// skips the few a worker fetched on a wrong guess (a cache it counts as
/// read already).
const LOOK_AHEAD: usize = 32;

impl Fetched {
    /// Empties it, keeping its buffers.
    pub(crate) fn clear(&mut self) {
        self.data.clear();
        self.items.clear();
        self.cursor = 0;
    }

    fn push_path(&mut self, path: &str) -> Range<usize> {
        let start = self.data.len();
        self.data.extend_from_slice(path.as_bytes());
        start..self.data.len()
    }

    /// Fetches the file `path` through `fetcher`; the item's number when
    /// a file was there.
    pub(crate) fn file(&mut self, fetcher: &Fetcher, path: &str) -> Option<usize> {
        let path_at = self.push_path(path);
        let start = self.data.len();
        let got = fetcher
            .file_into(path, &mut self.data)
            .map(|found| found.then_some(start..self.data.len()));
        if got.is_err() {
            self.data.truncate(start);
        }
        let found = matches!(got, Ok(Some(_)));
        self.items.push(Item {
            path: path_at,
            got: Got::File(got),
        });
        found.then_some(self.items.len() - 1)
    }

    /// The paths fetched, in order.
    #[cfg(test)]
    pub(crate) fn paths(&self) -> Vec<&str> {
        let text = |r: &Range<usize>| std::str::from_utf8(&self.data[r.clone()]).unwrap_or("?");
        self.items.iter().map(|i| text(&i.path)).collect()
    }

    /// The content of the file fetched as item `item`.
    pub(crate) fn content(&self, item: usize) -> Option<&[u8]> {
        match &self.items.get(item)?.got {
            Got::File(Ok(Some(r))) => Some(&self.data[r.clone()]),
            _ => None,
        }
    }

    /// Lists `dir` through `fetcher`; its names (none when it failed).
    pub(crate) fn list(&mut self, fetcher: &Fetcher, dir: &str) -> Vec<String> {
        let path = self.push_path(dir);
        let listed = fetcher.list(dir);
        let names = listed.as_ref().map_or_else(|_| Vec::new(), Clone::clone);
        let got = listed.map(|names| {
            let start = self.data.len();
            for name in &names {
                self.data.extend_from_slice(name.as_bytes());
                self.data.push(b'/');
            }
            start..self.data.len()
        });
        self.items.push(Item {
            path,
            got: Got::List(got),
        });
        names
    }

    /// Looks `path` up through `fetcher`: whether anything is there.
    pub(crate) fn exists(&mut self, fetcher: &Fetcher, path: &str) {
        let path_at = self.push_path(path);
        self.items.push(Item {
            path: path_at,
            got: Got::Exists(fetcher.exists(path)),
        });
    }

    /// The item fetched for `path`, once: looked for from the one after
    /// the last found, a few items on.
    fn find_at(&mut self, path: &str) -> Option<usize> {
        let end = self.items.len().min(self.cursor + LOOK_AHEAD);
        let at = (self.cursor..end)
            .find(|&i| &self.data[self.items[i].path.clone()] == path.as_bytes())?;
        self.cursor = at + 1;
        Some(at)
    }

    /// What was fetched for the file `path`, if it was.
    fn take_file(&mut self, path: &str) -> Option<Result<Option<Vec<u8>>, String>> {
        let at = self.find_at(path)?;
        match &self.items[at].got {
            Got::File(got) => Some(match got {
                Ok(found) => Ok(found.clone().map(|r| self.data[r].to_vec())),
                Err(e) => Err(e.clone()),
            }),
            Got::List(_) | Got::Exists(_) => None,
        }
    }

    /// What was fetched for the listing of `dir`, if it was.
    fn take_list(&mut self, dir: &str) -> Option<Result<Vec<String>, String>> {
        let at = self.find_at(dir)?;
        match &self.items[at].got {
            Got::List(got) => Some(match got {
                Ok(r) => Ok(self.data[r.clone()]
                    .split(|&b| b == b'/')
                    .filter(|n| !n.is_empty())
                    .map(|n| String::from_utf8_lossy(n).into_owned())
                    .collect()),
                Err(e) => Err(e.clone()),
            }),
            Got::File(_) | Got::Exists(_) => None,
        }
    }

    /// What was fetched for a look-up of `path`, if it was.
    fn take_exists(&mut self, path: &str) -> Option<Result<bool, String>> {
        let at = self.find_at(path)?;
        match &self.items[at].got {
            Got::Exists(got) => Some(got.clone()),
            Got::File(_) | Got::List(_) => None,
        }
    }
}

/// Reads files and listings of a [`Root`] from worker threads, through the
/// same bounded, non-blocking and confined reads as the root itself; the
/// results go back to the root with [`Root::stash`]. Only roots read from
/// the file system directly have one: an archive is in memory already, and
/// the portable symlink walk keeps per-root caches.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Fetcher<'a> {
    #[cfg(target_os = "linux")]
    InRoot(&'a in_root::RootFd),
    Live(&'a Path),
}

impl Fetcher<'_> {
    /// Appends the file's content to `out`; whether it was there.
    fn file_into(&self, path: &str, out: &mut Vec<u8>) -> Result<bool, String> {
        let limit = file_limit(path);
        match self {
            #[cfg(target_os = "linux")]
            Fetcher::InRoot(fd) => fd.read_into(None, path, limit, out),
            Fetcher::Live(base) => {
                let got = read_small_file(&base.join(normalize(path).join("/")), limit)?;
                Ok(got.map(|bytes| out.extend_from_slice(&bytes)).is_some())
            }
        }
    }

    /// Whether anything is at `path`.
    fn exists(&self, path: &str) -> Result<bool, String> {
        match self {
            #[cfg(target_os = "linux")]
            Fetcher::InRoot(fd) => fd.exists(path).map_err(|e| format!("cannot look up: {e}")),
            Fetcher::Live(base) => Ok(live_exists(base, path)),
        }
    }

    /// A directory's names, sorted.
    fn list(&self, dir: &str) -> Result<Vec<String>, String> {
        match self {
            #[cfg(target_os = "linux")]
            Fetcher::InRoot(fd) => fd.list(dir).map_err(|e| format!("cannot list: {e}")),
            Fetcher::Live(base) => Ok(list_dir_kinds(&base.join(normalize(dir).join("/")))
                .unwrap_or_default()
                .into_keys()
                .collect()),
        }
        .map(|mut names| {
            names.sort();
            names
        })
    }
}

#[derive(Debug)]
enum Backing {
    Dir {
        /// The root directory on disk.
        base: PathBuf,
        /// `true` for the live `/`: the kernel's own links are followed by the OS.
        live: bool,
        /// The dump directory opened once, when the kernel resolves paths
        /// beneath it chroot-style (`openat2` with `RESOLVE_IN_ROOT`, Linux 5.6+):
        /// then each file costs one `openat2` (one failed call when absent)
        /// instead of directory listings and a walk of every path component.
        #[cfg(target_os = "linux")]
        in_root: Option<in_root::RootFd>,
    },
    Mem(MemTree),
}

impl Root {
    /// A directory on disk. `live` disables the in-root symlink confinement, which
    /// only matters for dumps (the live kernel's links point where they should).
    pub(crate) fn dir(base: &Path, live: bool) -> Root {
        Root {
            backing: Backing::Dir {
                base: base.to_path_buf(),
                live,
                #[cfg(target_os = "linux")]
                in_root: if live {
                    None
                } else {
                    in_root::RootFd::open(base, &[super::CPU_DIR, super::NODE_DIR])
                },
            },
            resolved_dirs: RefCell::new(HashMap::new()),
            listings: RefCell::new(HashMap::new()),
            fetched: RefCell::new(None),
            #[cfg(target_os = "linux")]
            kept: RefCell::new(None),
        }
    }

    /// Decodes a `.tar`, `.tar.gz` or `.tar.bz2` snapshot (detected by its magic
    /// bytes, not its name) into memory, within `limits`, and locates the
    /// directory holding `sys/`.
    pub(crate) fn archive(
        input: impl Read,
        name: &str,
        limits: &ArchiveLimits,
    ) -> Result<Root, Error> {
        let tree = MemTree::load(input, name, limits)?;
        Ok(Root {
            backing: Backing::Mem(tree),
            resolved_dirs: RefCell::new(HashMap::new()),
            listings: RefCell::new(HashMap::new()),
            fetched: RefCell::new(None),
            #[cfg(target_os = "linux")]
            kept: RefCell::new(None),
        })
    }

    /// The name to put in an error about `path`: the file on disk, or
    /// `archive:member` for a snapshot.
    pub(crate) fn describe(&self, path: &str) -> String {
        match &self.backing {
            Backing::Dir { base, .. } => base.join(path).display().to_string(),
            Backing::Mem(t) => t.member_name(path),
        }
    }

    /// The root itself, for errors that concern the whole snapshot.
    pub(crate) fn describe_root(&self) -> String {
        match &self.backing {
            Backing::Dir { base, .. } => base.display().to_string(),
            Backing::Mem(t) => t.name.clone(),
        }
    }

    /// A handle for worker threads to read through, when this root has one.
    pub(crate) fn fetcher(&self) -> Option<Fetcher<'_>> {
        match &self.backing {
            #[cfg(target_os = "linux")]
            Backing::Dir {
                in_root: Some(fd), ..
            } => Some(Fetcher::InRoot(fd)),
            Backing::Dir {
                base, live: true, ..
            } => Some(Fetcher::Live(base)),
            _ => None,
        }
    }

    /// Keeps what worker threads fetched, to be handed out once each, in
    /// place of what was kept before (returned, its buffers to reuse).
    pub(crate) fn stash(&self, fetched: Fetched) -> Option<Fetched> {
        self.fetched.borrow_mut().replace(fetched)
    }

    /// Takes back what was fetched, whatever was not asked for.
    pub(crate) fn unstash(&self) -> Option<Fetched> {
        self.fetched.borrow_mut().take()
    }

    /// What the workers fetched for `path` (`take` says which kind), once,
    /// with an error in words named after the path.
    fn stashed<T>(
        &self,
        path: &str,
        take: fn(&mut Fetched, &str) -> Option<Result<T, String>>,
    ) -> Option<Result<T, Error>> {
        let got = take(self.fetched.borrow_mut().as_mut()?, path)?;
        Some(got.map_err(|why| Error::new(self.describe(path), why)))
    }

    /// Whether this is the live system (`/`).
    pub(crate) fn is_live(&self) -> bool {
        matches!(self.backing, Backing::Dir { live: true, .. })
    }

    /// The contents of a file, or `None` if it does not exist (or is a directory).
    /// A FIFO, device or socket, or a file past its limit (see
    /// [`crate::limits`]), is an error naming it.
    pub(crate) fn read(&self, path: &str) -> Result<Option<Cow<'_, [u8]>>, Error> {
        let limit = file_limit(path);
        let fail = |why: String| Error::new(self.describe(path), why);
        if let Some(got) = self.stashed(path, Fetched::take_file) {
            return Ok(got?.map(Cow::Owned));
        }
        #[cfg(target_os = "linux")]
        if let Backing::Dir {
            in_root: Some(fd), ..
        } = &self.backing
        {
            let kept = self.kept.borrow();
            return Ok(fd
                .read_from(kept.as_ref(), path, limit)
                .map_err(fail)?
                .map(Cow::Owned));
        }
        let Some(real) = self.resolve(path)? else {
            return Ok(None);
        };
        match &self.backing {
            Backing::Dir { base, .. } => Ok(read_small_file(&base.join(&real), limit)
                .map_err(fail)?
                .map(Cow::Owned)),
            Backing::Mem(t) => match t.files.get(&real) {
                Some(v) => Ok(Some(Cow::Borrowed(&v[..]))),
                None if t.children.contains_key(&real) => Err(fail(IS_DIR.into())),
                None => Ok(None),
            },
        }
    }

    /// Names of the entries of a directory (empty if it does not exist), sorted.
    pub(crate) fn list(&self, dir: &str) -> Result<Vec<String>, Error> {
        if let Some(got) = self.stashed(dir, Fetched::take_list) {
            return got;
        }
        #[cfg(target_os = "linux")]
        if let Backing::Dir {
            in_root: Some(fd), ..
        } = &self.backing
        {
            return Ok(self.list_in_root(fd, dir)?.unwrap_or_default());
        }
        let Some(real) = self.resolve(dir)? else {
            return Ok(Vec::new());
        };
        match &self.backing {
            Backing::Dir {
                base, live: true, ..
            } => {
                let listing = list_dir_kinds(&base.join(&real)).unwrap_or_default();
                let mut names: Vec<String> = listing.into_keys().collect();
                names.sort();
                Ok(names)
            }
            Backing::Dir { base, .. } => {
                self.ensure_listing(base, &real);
                let listings = self.listings.borrow();
                let mut names: Vec<String> = listings
                    .get(&real)
                    .and_then(|l| l.as_ref())
                    .map(|l| l.keys().cloned().collect())
                    .unwrap_or_default();
                names.sort();
                Ok(names)
            }
            Backing::Mem(t) => Ok(t.children.get(&real).cloned().unwrap_or_default()),
        }
    }

    /// Names of the entries of a directory, sorted; `None` when nothing is
    /// at `dir`, and empty when something that is not a directory is (as
    /// [`Root::exists`] and [`Root::list`] would say): one system call for a
    /// directory a dump lacks, where asking both would take two.
    pub(crate) fn list_dir(&self, dir: &str) -> Result<Option<Vec<String>>, Error> {
        #[cfg(target_os = "linux")]
        if let Backing::Dir {
            in_root: Some(fd), ..
        } = &self.backing
        {
            if self.fetched.borrow().is_none() {
                return self.list_in_root(fd, dir);
            }
        }
        match self.exists(dir)? {
            true => self.list(dir).map(Some),
            false => Ok(None),
        }
    }

    /// [`in_root::RootFd::list_dir`], sorted, keeping the directory open
    /// for the reads beneath it.
    #[cfg(target_os = "linux")]
    fn list_in_root(&self, fd: &in_root::RootFd, dir: &str) -> Result<Option<Vec<String>>, Error> {
        match fd.list_dir_kept(dir) {
            Ok(Some((mut names, kept))) => {
                names.sort();
                if kept.is_some() {
                    *self.kept.borrow_mut() = kept;
                }
                Ok(Some(names))
            }
            Ok(None) => Ok(None),
            Err(e) => Err(Error::new(self.describe(dir), format!("cannot list: {e}"))),
        }
    }

    /// Whether `path` exists (as anything).
    pub(crate) fn exists(&self, path: &str) -> Result<bool, Error> {
        if let Some(got) = self.stashed(path, Fetched::take_exists) {
            return got;
        }
        #[cfg(target_os = "linux")]
        if let Backing::Dir {
            in_root: Some(fd), ..
        } = &self.backing
        {
            return fd
                .exists(path)
                .map_err(|e| Error::new(self.describe(path), format!("cannot look up: {e}")));
        }
        if let Backing::Dir {
            base, live: true, ..
        } = &self.backing
        {
            // The live kernel's links are followed by the OS, which
            // `resolve` leaves to the read itself.
            return Ok(live_exists(base, path));
        }
        Ok(self.resolve(path)?.is_some())
    }

    /// Lists the physical directory `real` into the cache, once.
    fn ensure_listing(&self, base: &Path, real: &str) {
        if !self.listings.borrow().contains_key(real) {
            let listing = list_dir_kinds(&base.join(real));
            self.listings.borrow_mut().insert(real.to_string(), listing);
        }
    }

    /// What the (already resolved) physical path `real` is.
    fn kind(&self, real: &str) -> Option<Kind> {
        match &self.backing {
            Backing::Dir { base, .. } => {
                if real.is_empty() {
                    return Some(Kind::Dir);
                }
                let (parent, name) = match real.rfind('/') {
                    Some(i) => (&real[..i], &real[i + 1..]),
                    None => ("", real),
                };
                self.ensure_listing(base, parent);
                let listings = self.listings.borrow();
                match listings.get(parent)?.as_ref()?.get(name)? {
                    Kind::Symlink(_) => {
                        let target = std::fs::read_link(base.join(real)).ok()?;
                        Some(Kind::Symlink(target.to_string_lossy().into_owned()))
                    }
                    k => Some(k.clone()),
                }
            }
            Backing::Mem(t) => t.kind(real),
        }
    }

    /// Resolves `path` to a physical path inside the root, following symlinks
    /// chroot-style; `None` if some component does not exist.
    ///
    /// The directory part is resolved once and cached (sysfs readers read many
    /// files per directory); only the last component is looked up per call.
    fn resolve(&self, path: &str) -> Result<Option<String>, Error> {
        if let Backing::Dir { live: true, .. } = self.backing {
            // The live kernel's sysfs links are trustworthy; let the OS follow them.
            return Ok(Some(normalize(path).join("/")));
        }
        let clean = !path.is_empty()
            && !path
                .split('/')
                .any(|c| c.is_empty() || c == "." || c == "..");
        if !clean {
            let comps = normalize(path);
            return if comps.is_empty() {
                Ok(Some(String::new()))
            } else {
                self.resolve(&comps.join("/"))
            };
        }
        let (dir_key, name) = match path.rfind('/') {
            Some(i) => (&path[..i], &path[i + 1..]),
            None => ("", path),
        };
        let Some(dir_real) = self.resolve_dir(dir_key, path)? else {
            return Ok(None);
        };
        let here = if dir_real.is_empty() {
            name.to_string()
        } else {
            format!("{dir_real}/{name}")
        };
        match self.kind(&here) {
            None => Ok(None),
            Some(Kind::Dir) | Some(Kind::File) => Ok(Some(here)),
            Some(Kind::Symlink(_)) => {
                let mut comps: Vec<String> = split_components(&dir_real);
                comps.push(name.to_string());
                self.walk(&comps, path)
            }
        }
    }

    /// Resolves a clean directory path, one new component at a time on top of
    /// its (cached) parent, so each directory costs one lookup.
    fn resolve_dir(&self, dir: &str, original: &str) -> Result<Option<String>, Error> {
        if dir.is_empty() {
            return Ok(Some(String::new()));
        }
        if let Some(d) = self.resolved_dirs.borrow().get(dir) {
            return Ok(d.clone());
        }
        let (parent, last) = match dir.rfind('/') {
            Some(i) => (&dir[..i], &dir[i + 1..]),
            None => ("", dir),
        };
        let real = match self.resolve_dir(parent, original)? {
            None => None,
            Some(parent_real) => {
                let here = if parent_real.is_empty() {
                    last.to_string()
                } else {
                    format!("{parent_real}/{last}")
                };
                match self.kind(&here) {
                    Some(Kind::Dir) => Some(here),
                    Some(Kind::Symlink(_)) => {
                        let mut comps = split_components(&parent_real);
                        comps.push(last.to_string());
                        match self.walk(&comps, original)? {
                            Some(d) if d.is_empty() || self.kind(&d) == Some(Kind::Dir) => Some(d),
                            _ => None,
                        }
                    }
                    _ => None,
                }
            }
        };
        self.resolved_dirs
            .borrow_mut()
            .insert(dir.to_string(), real.clone());
        Ok(real)
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

/// Splits a path into components, dropping empty and `.` ones (keeps `..`).
fn split_components(path: &str) -> Vec<String> {
    path.split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .map(str::to_string)
        .collect()
}

/// Whether anything is at `path` beneath the live root `base`; the OS
/// follows the kernel's own links.
fn live_exists(base: &Path, path: &str) -> bool {
    base.join(normalize(path).join("/")).exists()
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

/// A directory where a file is expected is an error rather than an absent
/// file: the dump is damaged there (or the file unreadable), and reading on
/// would silently drop what the file says.
const IS_DIR: &str = "is a directory, not a regular file";

/// Reads a dump file: `None` if absent, an error (in words) if it is a
/// directory or anything else that is not a regular file, cannot be read, or
/// holds more than `limit` bytes.
///
/// Opened non-blocking, so a FIFO planted in a dump cannot stall the open, and
/// its type checked on the open file (one `fstat`) before reading.
fn read_small_file(path: &Path, limit: u64) -> Result<Option<Vec<u8>>, String> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let flags = rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY;
        options.custom_flags(flags.bits() as i32);
    }
    let mut file = match options.open(path) {
        Ok(f) => f,
        Err(e) if is_absent(&e) => return Ok(None),
        Err(e) => return Err(format!("cannot read: {e}")),
    };
    let kind = file
        .metadata()
        .map_err(|e| format!("cannot stat: {e}"))?
        .file_type();
    if kind.is_dir() {
        return Err(IS_DIR.into());
    }
    if let Some(why) = not_regular(kind) {
        return Err(why.into());
    }
    read_through(|buf| file.read(buf), limit).map(Some)
}

/// How much the first read of a file asks for: all of any mask file of a
/// machine of [`cpumask::MAX_CPUS`] CPUs (a hex map of 16384 CPUs is 4.6 KB)
/// and of all but the longest cpulists, so that almost every file takes one
/// read. No larger: the buffer is zeroed when a thread first reads, and each
/// page of it is a page fault, which costs more than the further reads of
/// the few longer files (`cpuinfo`) that a larger buffer would save.
const FIRST_READ: usize = 8 << 10;

/// A read shorter than this ends a file even when it did not fill the
/// buffer: some procfs files return at most a page per read.
const PAGE: usize = 4096;

thread_local! {
    /// The first read's buffer, zeroed once per thread and reused.
    static FIRST: RefCell<Vec<u8>> = RefCell::new(vec![0; FIRST_READ]);
}

/// Reads an open regular file to its end, at most `limit` bytes.
///
/// No size query: sysfs and procfs files report a size of 4096 or 0 whatever
/// they hold. A read shorter than a page ends the file, since sysfs and
/// procfs return whole records; so does a longer read that did not fill the
/// buffer (files, seq_file and kernfs give all that fits), while a read of
/// exactly one page may be one page of many. The first read goes to a
/// buffer kept for the thread and only what came is copied out, so a file
/// costs one allocation of its own size.
fn read_through(
    read: impl FnMut(&mut [u8]) -> std::io::Result<usize>,
    limit: u64,
) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    read_through_into(read, limit, &mut out, || Ok(()))?;
    Ok(out)
}

/// [`read_through`], appending the file to `out` (left with a part of it
/// on an error). `check` says whether the file may be read on (an error
/// in words if not), and is asked only when the first read is not what a
/// short regular file gives: a failure, nothing, or no end.
fn read_through_into(
    mut read: impl FnMut(&mut [u8]) -> std::io::Result<usize>,
    limit: u64,
    out: &mut Vec<u8>,
    check: impl FnOnce() -> Result<(), String>,
) -> Result<(), String> {
    let too_large = || format!("larger than the {limit}-byte limit for this file");
    let mut read_retrying = |buf: &mut [u8]| loop {
        match read(buf) {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("cannot read: {e}")),
        }
    };
    let start = out.len();
    let ended = FIRST.with_borrow_mut(|first| -> Result<_, String> {
        let n = read_retrying(first)?;
        out.extend_from_slice(&first[..n]);
        Ok(n > 0 && (n < PAGE || (n > PAGE && n < first.len())))
    });
    let ended = match ended {
        Ok(ended) => ended,
        Err(e) => {
            check()?;
            return Err(e);
        }
    };
    // This file's bytes are `out[start..start + len]`.
    let mut len = out.len() - start;
    if !ended {
        check()?;
    }
    if !ended && len > 0 {
        out.resize(start + len.max(PAGE) * 2, 0);
        loop {
            if start + len == out.len() {
                if len as u64 > limit {
                    return Err(too_large());
                }
                out.resize(start + len * 2, 0);
            }
            let n = read_retrying(&mut out[start + len..])?;
            if n == 0 {
                break;
            }
            len += n;
            if start + len < out.len() && n < PAGE {
                break;
            }
        }
        out.truncate(start + len);
    }
    if len as u64 > limit {
        return Err(too_large());
    }
    Ok(())
}

/// The entries of a directory with their kinds (from `d_type`, no `stat` per
/// entry on common file systems); `None` if it cannot be listed. Symlink
/// targets are read only when a lookup goes through them.
fn list_dir_kinds(dir: &Path) -> Option<HashMap<String, Kind>> {
    let mut out = HashMap::new();
    for entry in std::fs::read_dir(dir).ok()? {
        let Ok(entry) = entry else { continue };
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        let Ok(ft) = entry.file_type() else { continue };
        let kind = if ft.is_symlink() {
            Kind::Symlink(String::new())
        } else if ft.is_dir() {
            Kind::Dir
        } else {
            Kind::File
        };
        out.insert(name, kind);
    }
    Some(out)
}

fn is_absent(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
    ) || e.raw_os_error() == Some(20) // ENOTDIR on older toolchains' mapping
        || e.raw_os_error() == Some(21) // EISDIR: asked to read a directory
}

/// Kernel-confined lookups beneath a dump directory: `openat2(2)` with
/// `RESOLVE_IN_ROOT` treats the directory as `/` for every path and symlink it
/// resolves (absolute targets and `..` stay inside), which is exactly the
/// chroot-style rule the hand-written walk implements, done in one system call.
/// `rustix` provides the call safely; std has no `openat2`.
#[cfg(target_os = "linux")]
mod in_root {
    use rustix::fd::{AsFd, OwnedFd};
    use rustix::fs::{openat2, FileType, Mode, OFlags, RawDir, ResolveFlags};
    use rustix::io::Errno;
    use std::io;
    use std::path::Path;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// The dump directory, and the directories beneath it that hold almost
    /// every file a read asks for, each opened once.
    #[derive(Debug)]
    pub(crate) struct RootFd {
        root: OwnedFd,
        /// The directories a path beneath is opened from, so the kernel
        /// walks the components below them only, not the whole path from
        /// the root for every file.
        bases: Vec<Base>,
        /// The bases the dump lacks (no such file), each with a trailing
        /// `/`: nothing beneath them is looked up again.
        absent: Vec<String>,
    }

    /// A directory beneath the root, opened once.
    #[derive(Debug)]
    struct Base {
        /// Its root-relative path with a trailing `/`.
        prefix: String,
        fd: OwnedFd,
        /// Whether `fd` was opened readable and has not been listed yet: its
        /// first listing reads it directly instead of opening it again (two
        /// system calls fewer). The flag is taken once, so two threads never
        /// share the descriptor's position.
        unlisted: AtomicBool,
    }

    const RESOLVE: ResolveFlags = ResolveFlags::IN_ROOT.union(ResolveFlags::NO_MAGICLINKS);
    /// From a base directory: refused (`EXDEV`) wherever the root-relative
    /// walk could resolve differently — an absolute symbolic link, or `..`
    /// above the base — and then the path is opened from the root instead.
    const BENEATH: ResolveFlags = ResolveFlags::BENEATH.union(ResolveFlags::NO_MAGICLINKS);

    /// Whether the open file `fd` is a regular file: an error naming its
    /// kind if not.
    fn regular(fd: &OwnedFd) -> Result<(), String> {
        let stat = rustix::fs::fstat(fd).map_err(|e| format!("cannot stat: {e}"))?;
        match FileType::from_raw_mode(stat.st_mode) {
            FileType::RegularFile => Ok(()),
            FileType::Directory => Err(super::IS_DIR.into()),
            FileType::Fifo => Err("is a FIFO, not a regular file".into()),
            FileType::CharacterDevice => Err("is a character device, not a regular file".into()),
            FileType::BlockDevice => Err("is a block device, not a regular file".into()),
            FileType::Socket => Err("is a socket, not a regular file".into()),
            _ => Err("is not a regular file".into()),
        }
    }

    /// Errors that mean "no such file here" rather than a failure.
    fn absent(e: Errno) -> bool {
        e == Errno::NOENT || e == Errno::NOTDIR || e == Errno::ISDIR
    }

    /// `openat2` of `path` beneath `dir`.
    fn open_retrying(
        dir: &OwnedFd,
        path: &str,
        flags: OFlags,
        resolve: ResolveFlags,
    ) -> Result<OwnedFd, Errno> {
        loop {
            match openat2(dir, path, flags | OFlags::CLOEXEC, Mode::empty(), resolve) {
                // Raised when a rename raced the lookup: retry.
                Err(Errno::AGAIN) | Err(Errno::INTR) => continue,
                got => return got,
            }
        }
    }

    impl RootFd {
        /// Opens `base`, or `None` when `openat2` is unavailable (old kernels,
        /// seccomp filters) or refuses a base (a link loop), in which case
        /// the portable walk is used. The `bases` that exist are opened too:
        /// their opens are the probe of the call.
        pub(super) fn open(base: &Path, bases: &[&str]) -> Option<RootFd> {
            let fd = rustix::fs::open(
                base,
                OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .ok()?;
            let mut root = RootFd {
                root: fd,
                bases: Vec::new(),
                absent: Vec::new(),
            };
            // With no base, the root itself is opened once as the probe.
            let probe = bases.is_empty().then_some(".");
            for dir in bases.iter().copied().chain(probe) {
                // Readable, so that its one listing needs no open of its
                // own; a directory that can be searched but not read is
                // opened as a path only, and listed (and refused) as before.
                let (fd, unlisted) = match root.open_errno(dir, OFlags::RDONLY | OFlags::DIRECTORY)
                {
                    Ok(fd) => (Some(fd), true),
                    Err(Errno::NOENT) => {
                        root.absent.push(format!("{dir}/"));
                        (None, false)
                    }
                    Err(e) if absent(e) => (None, false),
                    Err(_) => (
                        root.open_at(dir, OFlags::PATH | OFlags::DIRECTORY).ok()?,
                        false,
                    ),
                };
                if let (Some(fd), false) = (fd, probe.is_some()) {
                    root.bases.push(Base {
                        prefix: format!("{dir}/"),
                        fd,
                        unlisted: AtomicBool::new(unlisted),
                    });
                }
            }
            Some(root)
        }

        /// `path` opened, `None` when absent.
        fn open_at(&self, path: &str, flags: OFlags) -> Result<Option<OwnedFd>, Errno> {
            match self.open_errno(path, flags) {
                Ok(fd) => Ok(Some(fd)),
                Err(e) if absent(e) => Ok(None),
                Err(e) => Err(e),
            }
        }

        /// `path` opened, or the error the kernel gave.
        fn open_errno(&self, path: &str, flags: OFlags) -> Result<OwnedFd, Errno> {
            // `path` is root-relative; a leading `/` would also stay inside.
            let path = if path.is_empty() { "." } else { path };
            let missing = |prefix: &String| {
                prefix.strip_suffix('/') == Some(path) || beneath(path, prefix).is_some()
            };
            if self.absent.iter().any(missing) {
                return Err(Errno::NOENT);
            }
            let below = self
                .bases
                .iter()
                .find_map(|base| Some((&base.fd, beneath(path, &base.prefix)?)));
            self.open_below(below, path, flags)
        }

        /// `path` opened from the directory `below` gives with the rest of
        /// the path, or from the root where that walk could resolve
        /// differently.
        fn open_below(
            &self,
            below: Option<(&OwnedFd, &str)>,
            path: &str,
            flags: OFlags,
        ) -> Result<OwnedFd, Errno> {
            if let Some((fd, rest)) = below {
                match open_retrying(fd, rest, flags, BENEATH) {
                    Err(Errno::XDEV) => {}
                    got => return got,
                }
            }
            open_retrying(&self.root, path, flags, RESOLVE)
        }

        /// A whole file, or `None` if absent; an error in words if it is a
        /// directory or another kind of non-regular file, or is past `limit` (see
        /// [`super::read_small_file`], whose rules this follows).
        pub(super) fn read_from(
            &self,
            kept: Option<&Kept>,
            path: &str,
            limit: u64,
        ) -> Result<Option<Vec<u8>>, String> {
            let mut out = Vec::new();
            Ok(self.read_into(kept, path, limit, &mut out)?.then_some(out))
        }

        /// [`RootFd::read_from`], appending the content to `out`; whether
        /// the file was there.
        pub(super) fn read_into(
            &self,
            kept: Option<&Kept>,
            path: &str,
            limit: u64,
            out: &mut Vec<u8>,
        ) -> Result<bool, String> {
            let flags = OFlags::RDONLY | OFlags::NOCTTY | OFlags::NONBLOCK;
            let opened = match kept.and_then(|k| Some((&k.fd, beneath(path, &k.prefix)?))) {
                Some(below) => self.open_below(Some(below), path, flags),
                None => self.open_errno(path, flags),
            };
            let fd = match opened {
                Ok(fd) => fd,
                Err(e) if absent(e) => return Ok(false),
                Err(e) => return Err(format!("cannot read: {}", io::Error::from(e))),
            };
            // Read from an offset: a FIFO, a terminal and most devices
            // refuse that (`ESPIPE`) without giving a byte.
            let mut at = 0;
            super::read_through_into(
                |buf| {
                    let n = rustix::io::pread(&fd, buf, at)?;
                    at += n as u64;
                    Ok(n)
                },
                limit,
                out,
                || regular(&fd),
            )
            .map(|()| true)
        }

        /// The base opened for `path` itself, if any.
        fn base(&self, path: &str) -> Option<&Base> {
            self.bases
                .iter()
                .find(|b| b.prefix.strip_suffix('/') == Some(path))
        }

        pub(super) fn exists(&self, path: &str) -> io::Result<bool> {
            if self.base(path).is_some() {
                return Ok(true);
            }
            Ok(self.open_at(path, OFlags::PATH)?.is_some())
        }

        /// Entry names of a directory (unsorted; empty if absent).
        pub(super) fn list(&self, dir: &str) -> io::Result<Vec<String>> {
            Ok(self.list_dir(dir)?.unwrap_or_default())
        }

        /// Entry names of a directory (unsorted), `None` when nothing is at
        /// `dir`; something that is not a directory lists as empty, as
        /// [`RootFd::list`] and [`RootFd::exists`] together would say.
        pub(super) fn list_dir(&self, dir: &str) -> io::Result<Option<Vec<String>>> {
            Ok(self.list_dir_kept(dir)?.map(|(names, _)| names))
        }

        /// [`RootFd::list_dir`], with the directory it opened to list (none
        /// for a base, open already).
        pub(super) fn list_dir_kept(
            &self,
            dir: &str,
        ) -> io::Result<Option<(Vec<String>, Option<Kept>)>> {
            if let Some(base) = self.base(dir) {
                if base.unlisted.swap(false, Ordering::Relaxed) {
                    return Ok(Some((names(&base.fd)?, None)));
                }
            }
            let fd = match self.open_errno(dir, OFlags::RDONLY | OFlags::DIRECTORY) {
                Ok(fd) => fd,
                // There but no directory, or under something that is not
                // one: rare enough to ask once more which.
                Err(Errno::NOTDIR) => return Ok(self.exists(dir)?.then(|| (Vec::new(), None))),
                Err(e) if absent(e) => return Ok(None),
                Err(e) => return Err(e.into()),
            };
            let names = names(&fd)?;
            let kept = Kept {
                prefix: format!("{dir}/"),
                fd,
            };
            Ok(Some((names, Some(kept))))
        }
    }

    /// A directory beneath the root, opened (and listed) by the reader.
    #[derive(Debug)]
    pub(crate) struct Kept {
        /// Its root-relative path with a trailing `/`.
        prefix: String,
        fd: OwnedFd,
    }

    /// The part of `path` beneath the directory `prefix` (with its trailing
    /// `/`), when it names something there without `.` or `..` (which the
    /// walk from that directory could resolve differently).
    fn beneath<'p>(path: &'p str, prefix: &str) -> Option<&'p str> {
        let rest = path.strip_prefix(prefix)?;
        let clean = !rest.is_empty() && rest.split('/').all(|c| !matches!(c, "" | "." | ".."));
        clean.then_some(rest)
    }

    /// The entry names of an open directory, read from its current position
    /// through one buffer (no allocation per entry but its name). The buffer
    /// is on the heap, uninitialised: the kernel writes only what it returns,
    /// so a small directory touches a few hundred bytes of it, where 8 KiB on
    /// the stack cost two page faults of stack probes in every short run, on
    /// top of the reader's deepest frames (BENCHMARKS.md).
    fn names(fd: impl AsFd) -> io::Result<Vec<String>> {
        let mut buf = Vec::<u8>::with_capacity(8192);
        let mut entries = RawDir::new(fd, buf.spare_capacity_mut());
        let mut names = Vec::new();
        while let Some(entry) = entries.next() {
            let entry = entry?;
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            if let Ok(name) = std::str::from_utf8(name) {
                names.push(name.to_string());
            }
        }
        Ok(names)
    }
}

#[cfg(test)]
mod tests {
    use super::read_through;

    /// A file of `len` bytes served `chunk` bytes at most per read, counting
    /// the reads.
    fn source(
        len: usize,
        chunk: usize,
    ) -> (
        impl FnMut(&mut [u8]) -> std::io::Result<usize>,
        std::rc::Rc<std::cell::Cell<usize>>,
    ) {
        let calls = std::rc::Rc::new(std::cell::Cell::new(0));
        let counted = calls.clone();
        let mut at = 0;
        let read = move |buf: &mut [u8]| {
            counted.set(counted.get() + 1);
            let n = buf.len().min(chunk).min(len - at);
            for (i, b) in buf[..n].iter_mut().enumerate() {
                *b = ((at + i) % 251) as u8;
            }
            at += n;
            Ok(n)
        };
        (read, calls)
    }

    fn expected(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i % 251) as u8).collect()
    }

    #[test]
    fn a_mask_of_16384_cpus_takes_one_read() {
        let (read, calls) = source(4608, usize::MAX);
        assert_eq!(read_through(read, 1 << 20).unwrap(), expected(4608));
        assert_eq!(calls.get(), 1);
    }

    #[test]
    fn a_file_served_a_page_at_a_time_is_read_to_its_end() {
        let len = 3 * 4096 + 100;
        let (read, calls) = source(len, 4096);
        assert_eq!(read_through(read, 1 << 20).unwrap(), expected(len));
        assert_eq!(calls.get(), 4);
        // Exactly one page: the next read must say whether there is more.
        let (read, calls) = source(4096, 4096);
        assert_eq!(read_through(read, 1 << 20).unwrap(), expected(4096));
        assert_eq!(calls.get(), 2);
    }

    #[test]
    fn a_file_past_the_first_buffer_or_the_limit() {
        let len = 200_000;
        let (read, _) = source(len, usize::MAX);
        assert_eq!(read_through(read, 1 << 20).unwrap(), expected(len));
        let (read, _) = source(len, usize::MAX);
        assert!(read_through(read, 100_000).unwrap_err().contains("limit"));
        let (read, _) = source(5000, usize::MAX);
        assert!(read_through(read, 4999).unwrap_err().contains("limit"));
    }
}
