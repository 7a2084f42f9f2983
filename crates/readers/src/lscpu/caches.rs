//! Third pass: the caches lscpu names → cache instances over the placed CPUs.
//!
//! Which CPUs share an instance comes from the parsable cache columns where
//! present, else from the summary's instance count (the sharing level with
//! that many groups, else equal runs of cores or CPUs), else from the level's
//! usual sharing. How big one instance is depends on the util-linux that
//! wrote the line (see [`SizeForm`]). A count or a sum that no equal split
//! explains is an error naming the line: an even split that lscpu's figures
//! do not support would be a size no instance has.

use std::collections::BTreeMap;

use cpumask::CpuMask;
use topology::{Cache, CacheKind};

use super::build::Place;
use super::format::SizeText;
use super::scan::{CacheLine, Csv, Scanned};
use crate::Error;

/// Who shares one instance, narrowest first: an instance count is matched
/// against the levels in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sharing {
    SmallCore,
    BigCore,
    Thread,
    Node,
    Socket,
}

const SHARINGS: [Sharing; 5] = [
    Sharing::SmallCore,
    Sharing::BigCore,
    Sharing::Thread,
    Sharing::Node,
    Sharing::Socket,
];

/// The placed CPUs' groups at each sharing level. Groups are counted from
/// their keys; masks (2 KiB each) are built only for the level a cache
/// uses, so a machine of 16384 CPUs with no per-thread cache never builds
/// 16384 of them.
struct Groups<'a> {
    places: &'a [Place],
    nodes: &'a [(u32, CpuMask, usize)],
    all: CpuMask,
}

impl Groups<'_> {
    fn key(p: &Place, sharing: Sharing) -> u64 {
        let package = (p.package as u64) << 32;
        match sharing {
            Sharing::SmallCore => package | p.core as u64,
            Sharing::BigCore => package | p.big_core.unwrap_or(p.core) as u64,
            Sharing::Thread => p.cpu as u64,
            // Nodes are taken from their masks before any key is asked for.
            Sharing::Socket | Sharing::Node => package,
        }
    }

    /// Whether every CPU is on-line and every core has as many as any
    /// other. Only then is a 2.34–2.36 sum (`UncountedSum`) the sum of its
    /// instances: lscpu computed it as `cores / (CPUs sharing one instance
    /// / (on-line CPUs / cores))`, counting present CPUs among the sharers
    /// and rounding the average of threads down (a 4-core i5 with 6 of its
    /// 8 CPUs on-line prints "L1d cache: 64 KiB" for four 32 KiB
    /// instances). Otherwise the instances' size is unknown.
    fn even_cores(&self, s: &Scanned) -> bool {
        if s.any_offline() {
            return false;
        }
        let mut per_core: BTreeMap<u32, usize> = BTreeMap::new();
        for p in self.places {
            *per_core.entry(p.core).or_default() += 1;
        }
        let mut counts = per_core.values();
        let first = counts.next();
        counts.all(|c| Some(c) == first)
    }

    fn count(&self, sharing: Sharing) -> usize {
        if sharing == Sharing::Node {
            return self
                .nodes
                .iter()
                .filter(|n| n.1.intersects(&self.all))
                .count();
        }
        let mut keys: Vec<u64> = self.places.iter().map(|p| Self::key(p, sharing)).collect();
        keys.sort_unstable();
        keys.dedup();
        keys.len()
    }

    /// The groups' CPU sets in order of their first CPU (places are sorted
    /// by CPU, so that is the order keys first appear).
    fn masks(&self, sharing: Sharing) -> Vec<CpuMask> {
        if sharing == Sharing::Node {
            return self
                .nodes
                .iter()
                .map(|(_, m, _)| m.and(&self.all))
                .filter(|m| !m.is_empty())
                .collect();
        }
        let mut index: BTreeMap<u64, usize> = BTreeMap::new();
        let mut out: Vec<CpuMask> = Vec::new();
        for p in self.places {
            let i = *index.entry(Self::key(p, sharing)).or_insert_with(|| {
                out.push(CpuMask::new());
                out.len() - 1
            });
            out[i].set(p.cpu as usize);
        }
        out
    }

    /// `n` instances: the level with `n` groups, else `n` equal runs of
    /// consecutive cores, else of CPUs; None if nothing splits evenly.
    fn split(&self, n: usize) -> Option<Vec<CpuMask>> {
        if let Some(&s) = SHARINGS.iter().find(|&&s| self.count(s) == n) {
            return Some(self.masks(s));
        }
        if n == 1 {
            return Some(vec![self.all]);
        }
        let cores = self.count(Sharing::SmallCore);
        if cores.is_multiple_of(n) {
            let masks = self.masks(Sharing::SmallCore);
            return Some(
                masks
                    .chunks(cores / n)
                    .map(|ch| ch.iter().fold(CpuMask::new(), |a, m| a.or(m)))
                    .collect(),
            );
        }
        if self.places.len().is_multiple_of(n) {
            let cpus: Vec<usize> = self.all.iter().collect();
            return Some(
                cpus.chunks(cpus.len() / n)
                    .map(|ch| ch.iter().copied().collect())
                    .collect(),
            );
        }
        None
    }

    /// Where lscpu names no sharing: L1 per small core, L2 per core (big
    /// core on POWER9/10), L3 per core on POWER and per socket elsewhere, L4
    /// and beyond per machine.
    fn usual(&self, level: u8, power: bool) -> Vec<CpuMask> {
        match level {
            1 => self.masks(Sharing::SmallCore),
            2 => self.masks(Sharing::BigCore),
            3 if power => self.masks(Sharing::BigCore),
            3 => self.masks(Sharing::Socket),
            _ => vec![self.all],
        }
    }
}

/// What a summary cache line's size means, by the util-linux that wrote it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SizeForm {
    /// Before 2.34: one instance's size (`32K`).
    OneInstance,
    /// 2.37 and later: the sum over the stated instances (`1.1 MiB (36 instances)`).
    CountedSum(u32),
    /// 2.34–2.36: the sum over `cores / cores sharing one instance`
    /// instances (`get_cache_full_size`), count not printed (`1.1 MiB`).
    UncountedSum,
    /// A 2.37+ line without a count: s390's external caches, one per machine.
    External,
}

fn size_form(line: &CacheLine, counted_output: bool) -> SizeForm {
    match (line.size.instances, line.size.modern_unit) {
        (Some(n), _) => SizeForm::CountedSum(n),
        (None, true) if counted_output => SizeForm::External,
        (None, true) => SizeForm::UncountedSum,
        (None, false) => SizeForm::OneInstance,
    }
}

/// Cache instances for every cache the summary or the parsable columns name.
pub(super) fn caches(
    s: &Scanned,
    places: &[Place],
    nodes: &[(u32, CpuMask, usize)],
    power: bool,
    source: &str,
) -> Result<Vec<Cache>, Error> {
    let groups = Groups {
        places,
        nodes,
        all: places.iter().map(|p| p.cpu as usize).collect(),
    };
    // Any count on any line marks a 2.37+ output (see `SizeForm`).
    let counted_output = s.caches.iter().any(|c| c.size.instances.is_some());
    let mut out = Vec::new();
    for name in cache_names(s) {
        let (level, kind) = level_and_kind(&name);
        let line = s.caches.iter().find(|c| c.name == name);
        let form = line.map(|l| size_form(l, counted_output));
        let column = s.csv.as_ref().and_then(|c| {
            let col = c.cache_names.iter().position(|n| *n == name)?;
            Some((c, col))
        });
        let instances = match (column, line, form) {
            (Some((csv, col)), _, _) => csv_instances(csv, col, &groups.all),
            (None, Some(l), Some(SizeForm::CountedSum(n))) => groups
                .split(n as usize)
                .ok_or_else(|| unsplittable(l, n, &groups, source))?,
            (None, _, Some(SizeForm::External)) => vec![groups.all],
            (None, Some(_), _) => groups.usual(level, power),
            (None, None, _) => Vec::new(),
        };
        let size_bytes = match (line, form) {
            (Some(_), Some(SizeForm::UncountedSum)) if !groups.even_cores(s) => None,
            (Some(l), Some(f)) => Some(instance_size(l, f, instances.len(), source)?),
            _ => None,
        };
        out.extend(instances.into_iter().map(|cpus| Cache {
            level,
            kind,
            size_bytes,
            line_bytes: None,
            ways: None,
            cpus: cpus.into(),
        }));
    }
    Ok(out)
}

/// The summary's cache names in order, then any only the parsable columns name.
fn cache_names(s: &Scanned) -> Vec<String> {
    let mut names: Vec<String> = s.caches.iter().map(|c| c.name.clone()).collect();
    if let Some(csv) = &s.csv {
        for n in &csv.cache_names {
            if !names.contains(n) {
                names.push(n.clone());
            }
        }
    }
    names
}

/// `L1d` → (1, data); the scanner only passes names of this form.
fn level_and_kind(name: &str) -> (u8, CacheKind) {
    let level = name[1..].trim_end_matches(['d', 'i']).parse().unwrap_or(0);
    let kind = if name.ends_with('d') {
        CacheKind::Data
    } else if name.ends_with('i') {
        CacheKind::Instruction
    } else {
        CacheKind::Unified
    };
    (level, kind)
}

/// The instances a parsable cache column names, over the placed CPUs.
fn csv_instances(csv: &Csv, col: usize, all: &CpuMask) -> Vec<CpuMask> {
    let mut index: BTreeMap<u32, usize> = BTreeMap::new();
    let mut out: Vec<CpuMask> = Vec::new();
    for r in &csv.rows {
        if let (Some(id), true) = (r.caches[col], all.contains(r.cpu as usize)) {
            let i = *index.entry(id).or_insert_with(|| {
                out.push(CpuMask::new());
                out.len() - 1
            });
            out[i].set(r.cpu as usize);
        }
    }
    out
}

fn unsplittable(l: &CacheLine, n: u32, groups: &Groups, source: &str) -> Error {
    Error::at_line(
        source,
        l.line,
        format!(
            "{} cache: {n} instances, but no sharing level has {n} groups and they do not \
             divide the {} cores or {} on-line CPUs evenly: which CPUs share each is unknown \
             (`lscpu -p` lists them)",
            l.name,
            groups.count(Sharing::SmallCore),
            groups.places.len()
        ),
    )
}

/// One instance's size in bytes; `groups` instances when the line is a sum
/// without a count.
fn instance_size(l: &CacheLine, form: SizeForm, groups: usize, source: &str) -> Result<u64, Error> {
    let n = match form {
        SizeForm::OneInstance | SizeForm::External => return Ok(l.size.approx_bytes.round() as u64),
        SizeForm::CountedSum(n) => n as u64,
        SizeForm::UncountedSum => groups.max(1) as u64,
    };
    split_size(&l.size, n).ok_or_else(|| {
        let counted = if matches!(form, SizeForm::UncountedSum) {
            " (util-linux 2.34–2.36 sums over instances without printing their count)"
        } else {
            ""
        };
        Error::at_line(
            source,
            l.line,
            format!(
                "{} cache: {} is not {n} instances of one whole number of KiB{counted}; \
                 instances of different sizes cannot be told apart here (`lscpu -C` or \
                 --sysfs gives each)",
                l.name, l.size.text
            ),
        )
    })
}

/// The size of each of `n` equal instances whose sum `size` states, or None
/// if there is none.
///
/// An exact figure (`lscpu --bytes`) must divide by `n`. A human-readable
/// one is rounded, so any whole number of KiB (sysfs states cache sizes in
/// KiB) whose `n`-fold sum lscpu would print the same way fits; among
/// those, the one with the most trailing zero bits wins (caches are built
/// of power-of-two blocks: 48 KiB, not 49 KiB), then the one nearest the
/// plain quotient. Searched by block size, largest first, so a TiB figure
/// costs no more than a KiB one.
fn split_size(size: &SizeText, n: u64) -> Option<u64> {
    if size.exact && !size.modern_unit {
        let total = size.approx_bytes.round() as u64;
        return total.is_multiple_of(n).then_some(total / n);
    }
    let estimate_kib = size.approx_bytes / n as f64 / 1024.0;
    for zeros in (0..=40u32).rev() {
        let step = 1u64 << zeros;
        let below = (estimate_kib / step as f64).floor() as u64 * step;
        let mut candidates = [below, below.saturating_add(step)];
        candidates.sort_by(|a, b| {
            let da = (*a as f64 - estimate_kib).abs();
            let db = (*b as f64 - estimate_kib).abs();
            da.total_cmp(&db)
        });
        for kib in candidates {
            let Some(total) = kib.checked_mul(1024).and_then(|b| b.checked_mul(n)) else {
                continue;
            };
            if kib > 0 && size.prints_as(total) {
                return Some(kib * 1024);
            }
        }
    }
    None
}
