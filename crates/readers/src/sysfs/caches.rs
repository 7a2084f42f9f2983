//! Caches: one [`Cache`] per distinct (level, type, sharing set), from the
//! CPUs' `cache/indexM/` directories (or sparc64's per-CPU size files).
//!
//! The phases, per CPU in order: skip it when every index name of the
//! common layout (the first CPU's with any) already covers it
//! ([`CacheScan::covered_for_all`]); list its `indexM` names
//! ([`CacheScan::index_names`]), stopping at once when the first online
//! CPU and the last have none ([`CacheScan::nobody_has_caches`]); read
//! each index not yet covered, or every index of a CPU of another layout
//! ([`CacheScan::read_index`]); keep the caches not already kept
//! ([`CacheScan::keep`]).

use std::collections::{HashMap, HashSet};

use cpumask::{CompactMask, CpuMask};
use topology::{Cache, CacheKind};

use super::readahead::Started;
use super::{entry_number, join, numbered, Files, RawCpu, CORE, CPU_DIR};
use crate::Error;

/// One [`Cache`] per distinct (level, type, sharing set), from every known
/// CPU's `cache/indexM` directories; `sparc_files` also probes sparc64's
/// per-CPU size files for CPUs without a `cache/` directory.
pub(super) fn read_caches(
    files: &Files,
    raws: &[RawCpu],
    possible: &CpuMask,
    sparc_files: bool,
    ahead: &Started,
) -> Result<Vec<Cache>, Error> {
    let mut scan = CacheScan {
        files,
        possible,
        caches: Vec::new(),
        seen: HashMap::new(),
        names: Vec::new(),
        first_asked: false,
        no_sparc_files: false,
        sparc_found: false,
    };
    // The first CPUs are read directly until one shows cache entries: a
    // machine without any is found out on its first CPUs.
    let mut start = 0;
    while start < raws.len() && scan.names.is_empty() {
        if !scan.read_cpu(start, raws, sparc_files)? {
            return Ok(scan.caches);
        }
        start += 1;
    }
    ahead.caches(files.root, raws, start, |i| {
        scan.read_cpu(i, raws, sparc_files)
    })?;
    Ok(scan.caches)
}

/// What the scan over the CPUs has learnt so far.
struct CacheScan<'a> {
    files: &'a Files<'a>,
    possible: &'a CpuMask,
    caches: Vec<Cache>,
    /// Caches kept so far, indexed by (level, kind, first CPU) so that
    /// duplicates are found without hashing 2 KiB masks.
    seen: HashMap<(u8, CacheKind, Option<usize>), Vec<usize>>,
    /// The `indexN` names of the first CPU with any (the common layout),
    /// by number: a few per machine, looked up by position or number, not
    /// hashed, several times per CPU.
    names: Vec<IndexName>,
    /// Whether [`CacheScan::nobody_has_caches`] was asked.
    first_asked: bool,
    /// Whether an online CPU lacked sparc64's cache files.
    no_sparc_files: bool,
    /// Whether a CPU had sparc64's cache files.
    sparc_found: bool,
}

/// What the scan has learnt of one `indexN` name.
struct IndexName {
    name: String,
    number: u64,
    /// The union of the sharing sets read from it so far. A CPU inside it
    /// has that cache already counted: its `indexN` is not read again
    /// (hwloc skips them the same way).
    covered: CpuMask,
    /// The optional files ([`SIZE`], [`LINE`], [`WAYS`]) it lacked on the
    /// first CPU read in full (`None` before). The kernel shows each of
    /// them per cache leaf when the leaf's value is known (cacheinfo's
    /// `is_visible`: size, line size, and ways with the size), and one
    /// index number of every CPU of the layout is the same level and type of cache,
    /// whose values the same firmware tables or CPUID leaf give: a file one
    /// CPU lacks, the others lack too, and asking them is a failed open
    /// each (old kernels and most dumps lack one or two of these).
    lacking: Option<u8>,
    /// The sharing maps already read from it, as sets: ia64 prints the
    /// same map in every CPU of a shared cache, whose other files are then
    /// read once. Compact sets, not the texts: a hex map of a 16384-CPU
    /// machine is 4.6 KB of text and a core's set one or two words.
    read: HashSet<CompactMask>,
}

impl CacheScan<'_> {
    /// The caches of CPU `raws[i]` not counted yet; `false` when no CPU has
    /// any.
    fn read_cpu(&mut self, i: usize, raws: &[RawCpu], sparc_files: bool) -> Result<bool, Error> {
        let r = &raws[i];
        if self.covered_for_all(r.id) {
            return Ok(true);
        }
        let dir = cache_dir(r.id);
        if self.read_known(r, &dir)? {
            return Ok(true);
        }
        // A kernel that wrote sparc64's files wrote no `cache/`: sparc64
        // has no cacheinfo code (no arch/sparc cacheinfo.c), so
        // drivers/base/cacheinfo.c's weak `init_cache_level` says -ENOENT
        // and no CPU gets the directory. Once one CPU had those files, the
        // others are not listed (a failed open each); a dump holding both
        // kinds reads the first CPU's kind only.
        let indices = match self.sparc_found {
            true => Vec::new(),
            false => self.index_names(&dir)?,
        };
        if indices.is_empty() && sparc_files && !self.no_sparc_files {
            match sparc_caches(self.files, r.id)? {
                Some(caches) => {
                    self.sparc_found = true;
                    caches.into_iter().for_each(|c| self.keep(c));
                }
                // sparc64 gives every online CPU these files (and takes
                // them from a CPU going offline): an online CPU without
                // them says that no CPU has them.
                None => self.no_sparc_files = r.online,
            }
        }
        // Once sparc64's files are known absent (or not asked for), a first
        // online CPU without `cache/` entries may say that nobody has caches.
        let no_sparc = !sparc_files || (self.no_sparc_files && self.caches.is_empty());
        if indices.is_empty() && self.names.is_empty() && r.online && no_sparc {
            if !self.first_asked && self.nobody_has_caches(raws, r.id)? {
                return Ok(false);
            }
            self.first_asked = true;
        }
        if self.names.is_empty() {
            // The first CPU with indices sets the common layout.
            self.names = indices
                .into_iter()
                .map(|(number, name)| IndexName {
                    name,
                    number,
                    covered: CpuMask::new(),
                    lacking: None,
                    read: HashSet::new(),
                })
                .collect();
        } else if !self.has_common_layout(&indices) {
            for (_, name) in indices {
                let idx = join(&dir, &name);
                let map = self.map(&idx)?;
                self.read_index(r, &idx, None, map)?;
            }
            return Ok(true);
        }
        for k in 0..self.names.len() {
            if !self.names[k].covered.contains(r.id as usize) {
                let idx = join(&dir, &self.names[k].name);
                let map = self.map(&idx)?;
                self.read_index(r, &idx, Some(k), map)?;
            }
        }
        Ok(true)
    }

    /// Whether a CPU's `indexN` entries are the common layout's (the first
    /// CPU's with any): the same numbers.
    fn has_common_layout(&self, indices: &[(u64, String)]) -> bool {
        indices.len() == self.names.len()
            && indices
                .iter()
                .zip(&self.names)
                .all(|(&(n, _), name)| n == name.number)
    }

    /// Reads the caches of CPU `r` from the common layout's index names,
    /// without listing its `cache/` (four system calls): the kernel
    /// numbers a CPU's indices from 0 without gaps, so a CPU has exactly
    /// those names when each of those it is not yet covered for has a
    /// sharing map and the next number is absent. `false` when that does
    /// not hold (a CPU with more caches, an index without a map): the CPU
    /// is then listed and read as the listing says; what was read here is
    /// read again without effect (a cache already kept is not kept
    /// twice).
    fn read_known(&mut self, r: &RawCpu, dir: &str) -> Result<bool, Error> {
        let Some(last) = self.names.last().map(|n| n.number) else {
            return Ok(false);
        };
        for k in 0..self.names.len() {
            if self.names[k].covered.contains(r.id as usize) {
                continue;
            }
            let idx = join(dir, &self.names[k].name);
            let Some(map) = self.map(&idx)? else {
                return Ok(false);
            };
            self.read_index(r, &idx, Some(k), Some(map))?;
        }
        // After the largest number there is none to ask for: the CPU is
        // listed.
        let Some(next) = last.checked_add(1) else {
            return Ok(false);
        };
        let next = format!("{dir}/index{next}");
        Ok(!self.files.root.exists(&next)?)
    }

    /// The sharing map of the index directory `idx` (the hex form first,
    /// as [`Files::mask`] prefers it).
    fn map(&self, idx: &str) -> Result<Option<CompactMask>, Error> {
        self.files.mask(idx, "shared_cpu_list", "shared_cpu_map")
    }

    /// Whether `cpu` is covered for every index name of the common layout
    /// (SMT siblings, once their core's first thread was read): it is then
    /// skipped without even listing its `cache/`, as it could only add an
    /// index name the layout lacks, which kernels do not produce for a
    /// sibling (the threads of a core share its caches; CPUs with fewer
    /// caches, as in hwloc's asymcaches test, are still listed).
    fn covered_for_all(&self, cpu: u32) -> bool {
        !self.names.is_empty() && self.names.iter().all(|n| n.covered.contains(cpu as usize))
    }

    /// The `indexN` entries of a CPU's `cache/` with their numbers, in
    /// index order.
    fn index_names(&self, dir: &str) -> Result<Vec<(u64, String)>, Error> {
        let root = self.files.root;
        let mut indices: Vec<(u64, String)> = Vec::new();
        for n in root.list(dir)? {
            if let Some(i) = entry_number(root, dir, &n, "index")? {
                indices.push((i, n));
            }
        }
        indices.sort();
        Ok(indices)
    }

    /// Asked when the first online CPU has no `cache/` entries. The kernel
    /// builds every online CPU's `cache/` the same way (its cacheinfo support
    /// is per architecture, not per CPU): when the first online CPU has none,
    /// no CPU has, and probing the others would only cost a failed open
    /// each. The last online CPU is asked too (one listing), so that a dump
    /// missing only the first CPU's directory, or a RISC-V hart without
    /// cache nodes in its device tree, does not hide everyone's caches.
    fn nobody_has_caches(&self, raws: &[RawCpu], first: u32) -> Result<bool, Error> {
        let Some(last) = raws.iter().rev().find(|l| l.online && l.id != first) else {
            return Ok(true);
        };
        Ok(!has_index(&self.files.root.list(&cache_dir(last.id))?))
    }

    /// Reads one `indexN` of CPU `r` and keeps its cache. The kernel builds
    /// the sharing maps in pairs: x86 sets the same index of both CPUs
    /// (arch/x86/kernel/cpu/cacheinfo.c, `__cache_cpumap_setup`), and
    /// drivers/base/cacheinfo.c (`cache_shared_cpu_map_setup`) the leaf
    /// of the same index before Linux 6.3, and since (commit 198102c9103f)
    /// the leaf of the same level and type, wherever it is. So the CPUs a
    /// map names hold that very cache, at the same index when they have
    /// the same indices; on CPUs of the common layout only the first of a
    /// cache needs reading in full (hwloc reads them the same way), which
    /// saves most file reads on big machines. The map is read once, both
    /// as the key that recognises a cache already read and as its sharing
    /// set. `k` is the index name's place in [`CacheScan::names`], `None`
    /// for a CPU of another layout (a core without an L2 beside cores
    /// with one: its L3 is at another index), which is read whole and
    /// says nothing of the others. A dump whose maps disagree (CPU 1 in
    /// CPU 0's map, but another cache at that index of CPU 1) reads the
    /// cache of the CPU first read, every time.
    fn read_index(
        &mut self,
        r: &RawCpu,
        idx: &str,
        k: Option<usize>,
        map: Option<CompactMask>,
    ) -> Result<(), Error> {
        let shared_mask = map.unwrap_or_default();
        // An all-zero map (ia64) means "the core", which differs per CPU;
        // a map this index name showed before is a cache counted.
        if let Some(k) = k {
            if !shared_mask.is_empty() && !self.names[k].read.insert(shared_mask.clone()) {
                return Ok(());
            }
        }
        let Some((level, kind)) = self.level_and_kind(idx)? else {
            return Ok(());
        };
        let cpus = sharing_set(r, &shared_mask, self.possible);
        // The CPUs of the set have this cache counted, whether the map
        // named them or an all-zero map meant the core: each would read
        // the same set from its own `indexN` (a core's threads have one
        // core mask, as the kernel builds it for both), a cache kept.
        if let Some(k) = k {
            self.names[k].covered.or_assign(&cpus);
        }
        if self.is_kept(level, kind, &cpus) {
            // A second index of the same level, type and CPUs (VirtualBox
            // reports the L1i as a second L1d) is one cache, which `keep`
            // would drop: its size, line and ways files are not read.
            return Ok(());
        }
        let files = self.files;
        // The optional files this index name lacked on the CPU first read
        // are not asked of later CPUs (see `IndexName::lacking`).
        let state = k.map(|k| self.names[k].lacking);
        let first_read = state.is_some_and(|l| l.is_none());
        let lacking = state.flatten().unwrap_or(0);
        let wanted = |bit: u8| lacking & bit == 0;
        let size_path = join(idx, "size");
        let size_text = match wanted(SIZE) {
            true => files.value(&size_path)?,
            false => None,
        };
        let size_bytes = match size_text {
            Some(v) => Some(parse_size(&v).ok_or_else(|| {
                Error::at_line(
                    files.root.describe(&size_path),
                    1,
                    format!("expected a size such as 32K, found {v:?}"),
                )
            })?),
            None => None,
        };
        let line_bytes = match wanted(LINE) {
            true => files.uint(&join(idx, "coherency_line_size"))?,
            false => None,
        };
        let ways = match wanted(WAYS) {
            true => files.uint(&join(idx, "ways_of_associativity"))?,
            false => None,
        };
        if let (Some(k), true) = (k, first_read) {
            let lacks = [(size_bytes.is_none(), SIZE), (line_bytes.is_none(), LINE)]
                .into_iter()
                .chain([(ways.is_none(), WAYS)])
                .filter(|(absent, _)| *absent)
                .fold(0, |m, (_, bit)| m | bit);
            self.names[k].lacking = Some(lacks);
        }
        self.keep(Cache {
            level,
            kind,
            size_bytes,
            line_bytes: line_bytes.filter(|&v| v > 0),
            ways,
            cpus,
        });
        Ok(())
    }

    /// An index's level and type; `None` for a type that is no sharing level.
    /// The kernel hides `level` when it does not know it (and a dump may say
    /// 0): such a cache cannot be placed, so it is an error rather than a
    /// silent drop.
    fn level_and_kind(&self, idx: &str) -> Result<Option<(u8, CacheKind)>, Error> {
        let files = self.files;
        let level_path = join(idx, "level");
        let level = match files.uint(&level_path)? {
            Some(0) => {
                return Err(Error::at_line(
                    files.root.describe(&level_path),
                    1,
                    "cache level 0: the kernel did not know this cache's level",
                ))
            }
            Some(l) => l,
            None => {
                return Err(Error::new(
                    files.root.describe(&level_path),
                    "missing: a cache without a level cannot be placed",
                ))
            }
        };
        let Some(kind_text) = files.value(&join(idx, "type"))? else {
            return Ok(None);
        };
        let kind = match kind_text.as_str() {
            "Data" => CacheKind::Data,
            "Instruction" => CacheKind::Instruction,
            "Unified" => CacheKind::Unified,
            _ => return Ok(None), // e.g. "Trace" caches on old Pentium 4s: not a sharing level.
        };
        let level = u8::try_from(level).map_err(|_| {
            Error::at_line(
                files.root.describe(&level_path),
                1,
                format!("cache level {level} is out of range"),
            )
        })?;
        Ok(Some((level, kind)))
    }

    /// Whether a cache of `level`, `kind` and `cpus` is kept.
    fn is_kept(&self, level: u8, kind: CacheKind, cpus: &CompactMask) -> bool {
        self.seen
            .get(&(level, kind, cpus.first()))
            .is_some_and(|slots| slots.iter().any(|&i| self.caches[i].cpus == *cpus))
    }

    /// Keeps `cache` unless one with the same level, type and CPUs is kept.
    fn keep(&mut self, cache: Cache) {
        let slots = self
            .seen
            .entry((cache.level, cache.kind, cache.cpus.first()))
            .or_default();
        if slots.iter().all(|&i| self.caches[i].cpus != cache.cpus) {
            slots.push(self.caches.len());
            self.caches.push(cache);
        }
    }
}

/// The CPUs an index of CPU `r` with the sharing map `shared` covers:
/// the map's CPUs, or for an all-zero map (ia64 kernels print one for the
/// L2i and L3) the CPU's core (hwloc makes the same assumption); always
/// `r` itself, and only possible CPUs (kernels size these maps by
/// NR_CPUS).
fn sharing_set(r: &RawCpu, shared: &CompactMask, possible: &CpuMask) -> CompactMask {
    let empty = CompactMask::new();
    let cpus = match shared.is_empty() {
        false => shared,
        true => r.masks[CORE].as_deref().unwrap_or(&empty),
    };
    // A map holds its own CPU and only possible ones, as the kernel
    // writes it: kept as it is, without a 2 KiB mask per cache read.
    if cpus.contains(r.id as usize) && cpus.is_subset(possible) {
        return cpus.clone();
    }
    let mut cpus = cpus.to_cpumask();
    cpus.set(r.id as usize);
    cpus.and(possible).into()
}

/// A CPU's `cache/` directory.
pub(super) fn cache_dir(id: u32) -> String {
    format!("{CPU_DIR}/cpu{id}/cache")
}

/// Whether a `cache/` listing names an `indexN` entry.
pub(super) fn has_index(names: &[String]) -> bool {
    names
        .iter()
        .any(|n| matches!(numbered(n, "index"), Some(Ok(_))))
}

/// The optional files of an index directory, as bits of
/// [`IndexName::lacking`].
const SIZE: u8 = 1;
const LINE: u8 = 2;
const WAYS: u8 = 4;

/// Those files' names with their bits, for the read-ahead's workers.
pub(super) const OPTIONAL: [(&str, u8); 3] = [
    ("size", SIZE),
    ("coherency_line_size", LINE),
    ("ways_of_associativity", WAYS),
];

/// sparc64 kernels have no `cache/` directory but per-CPU `l1_dcache_size`,
/// `l1_icache_size`, `l2_cache_size` (bytes) and `*_line_size` files; sharing is
/// not reported, so each is taken as private to its CPU (as lscpu does).
/// `None` when the CPU has no `l1_dcache_size`: the kernel adds and removes
/// these files together (arch/sparc/kernel/sysfs.c, `cpu_core_attrs`), so
/// the others are not asked for.
fn sparc_caches(files: &Files, cpu: u32) -> Result<Option<Vec<Cache>>, Error> {
    let dir = format!("{CPU_DIR}/cpu{cpu}");
    let mut out = Vec::new();
    for (stem, level, kind) in [
        ("l1_dcache", 1, CacheKind::Data),
        ("l1_icache", 1, CacheKind::Instruction),
        ("l2_cache", 2, CacheKind::Unified),
    ] {
        let size = files.int(&format!("{dir}/{stem}_size"))?;
        if size.is_none() && level == 1 && kind == CacheKind::Data {
            return Ok(None);
        }
        let Some(size) = size.filter(|&s| s > 0) else {
            continue;
        };
        let line = files.uint(&format!("{dir}/{stem}_line_size"))?;
        out.push(Cache {
            level,
            kind,
            size_bytes: Some(size as u64),
            line_bytes: line.filter(|&v| v > 0),
            ways: None,
            cpus: CompactMask::single(cpu as usize),
        });
    }
    Ok(Some(out))
}

/// Parses a sysfs cache size: a number with an optional K, M or G suffix.
fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let (digits, mult) = match t.as_bytes().last()? {
        b'K' | b'k' => (&t[..t.len() - 1], 1u64 << 10),
        b'M' | b'm' => (&t[..t.len() - 1], 1u64 << 20),
        b'G' | b'g' => (&t[..t.len() - 1], 1u64 << 30),
        _ => (t, 1),
    };
    digits.trim().parse::<u64>().ok()?.checked_mul(mult)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// sparc64 writes its per-CPU cache files and never a `cache/`
    /// (it has no cacheinfo code): once a CPU had those files, later CPUs'
    /// `cache/` is not listed. A dump holding both kinds (CPU 1 here) reads
    /// the kind of the first CPU read, on every CPU.
    #[test]
    fn after_sparc64_cache_files_no_cache_directory_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let write = |path: String, text: &str| {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        for f in ["possible", "present", "online"] {
            write(format!("{CPU_DIR}/{f}"), "0-1\n");
        }
        for c in 0..2 {
            let topo = format!("{CPU_DIR}/cpu{c}/topology");
            write(format!("{topo}/physical_package_id"), "0\n");
            write(format!("{topo}/core_id"), &format!("{c}\n"));
            write(format!("{topo}/thread_siblings_list"), &format!("{c}\n"));
            write(format!("{topo}/core_siblings_list"), "0-1\n");
            for (f, v) in [("l1_dcache_size", "8192"), ("l1_dcache_line_size", "16")] {
                write(format!("{CPU_DIR}/cpu{c}/{f}"), &format!("{v}\n"));
            }
        }
        let idx = format!("{CPU_DIR}/cpu1/cache/index0");
        for (f, v) in [("level", "1"), ("type", "Data"), ("size", "64K")] {
            write(format!("{idx}/{f}"), &format!("{v}\n"));
        }
        write(format!("{idx}/shared_cpu_list"), "1\n");
        let t = crate::sysfs::read_dir(dir.path()).unwrap();
        let l1: Vec<(String, Option<u64>)> = t
            .caches()
            .iter()
            .map(|c| (c.cpus.to_list_string(), c.size_bytes))
            .collect();
        let want = [("0", Some(8192)), ("1", Some(8192))].map(|(c, s)| (c.to_string(), s));
        assert_eq!(l1, want);
    }

    /// Since Linux 6.3 (commit 198102c9103f, "cacheinfo: Fix
    /// shared_cpu_map to handle shared caches at different levels"),
    /// drivers/base/cacheinfo.c matches a CPU's leaf with any leaf of the
    /// same level and type of another CPU, not the leaf of the same index:
    /// a little core without an L2 (L1d, L1i, L3) and a big core with one
    /// (L1d, L1i, L2, L3) share the L3 at index 2 of one and index 3 of the
    /// other. Each big core's L2 is read, in every order of the two kinds.
    #[test]
    fn cores_with_other_cache_indices_keep_their_own_caches() {
        for bigs in [
            [false, false, true, true],
            [true, true, false, false],
            [false, true, true, false],
        ] {
            let dir = tempfile::tempdir().unwrap();
            let write = |path: String, text: &str| {
                let p = dir.path().join(path);
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(p, text).unwrap();
            };
            for f in ["possible", "present", "online"] {
                write(format!("{CPU_DIR}/{f}"), "0-3\n");
            }
            for (c, &big) in bigs.iter().enumerate() {
                let topo = format!("{CPU_DIR}/cpu{c}/topology");
                write(format!("{topo}/physical_package_id"), "0\n");
                write(format!("{topo}/core_id"), &format!("{c}\n"));
                write(format!("{topo}/core_cpus_list"), &format!("{c}\n"));
                write(format!("{topo}/package_cpus_list"), "0-3\n");
                let own = format!("{c}");
                let mut leaves = vec![(1, "Data", own.as_str()), (1, "Instruction", &own)];
                if big {
                    leaves.push((2, "Unified", &own));
                }
                leaves.push((3, "Unified", "0-3"));
                for (i, (level, kind, cpus)) in leaves.into_iter().enumerate() {
                    let idx = format!("{CPU_DIR}/cpu{c}/cache/index{i}");
                    write(format!("{idx}/level"), &format!("{level}\n"));
                    write(format!("{idx}/type"), &format!("{kind}\n"));
                    write(format!("{idx}/size"), &format!("{}K\n", 32 << level));
                    write(format!("{idx}/shared_cpu_list"), &format!("{cpus}\n"));
                }
            }
            let t = crate::sysfs::read_dir(dir.path()).unwrap();
            let of_level = |level: u8| -> Vec<String> {
                let cpus = t.caches().iter().filter(|c| c.level == level);
                cpus.map(|c| c.cpus.to_list_string()).collect()
            };
            let big_cpus: Vec<String> =
                (0..4).filter(|&c| bigs[c]).map(|c| c.to_string()).collect();
            assert_eq!(of_level(2), big_cpus, "bigs {bigs:?}");
            assert_eq!(of_level(3), ["0-3"], "bigs {bigs:?}");
            assert_eq!(of_level(1).len(), 8, "bigs {bigs:?}");
        }
    }

    #[test]
    fn cache_sizes_use_binary_units() {
        assert_eq!(parse_size("32K"), Some(32 * 1024));
        assert_eq!(parse_size("8M\n"), Some(8 << 20));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("K"), None);
        assert_eq!(parse_size("x2K"), None);
    }
}
