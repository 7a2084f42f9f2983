//! The `topology:` summary lines: how the kernel saw the machine (CPUID
//! shifts, counts per level, packages and dies, cache levels, nodes and their
//! distances), one [`TopologyLine`] per console line.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;
use cpumask::CpuMask;
use topology::{CacheKind, LevelKind};

use super::DistanceRow;

/// What every line starts with.
const PREFIX: &str = "topology: ";

/// One `topology:` line of the kernel's console report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TopologyLine {
    /// `topology: CPUID leaf 0xb: SMT shift 1, core shift 3, package shift 3`:
    /// the APIC-id fields CPUID gave the boot CPU.
    Shifts {
        /// The CPUID leaf read (0xb or 0x1f).
        leaf: u32,
        /// Bits of the APIC id below the core field.
        smt: u32,
        /// Bits below the die (or package) field.
        core: u32,
        /// Bits below the package field.
        package: u32,
    },
    /// `topology: 16 possible, 16 present, 16 online CPUs; 8 cores, 2
    /// packages; 2 threads per core`: CPU counts and groups per level.
    Summary {
        /// Possible CPUs (firmware-listed).
        possible: u32,
        /// Present CPUs.
        present: u32,
        /// Online CPUs.
        online: u32,
        /// Groups per level the machine has, innermost first.
        levels: Vec<(LevelKind, u32)>,
        /// Most hardware threads in one core.
        threads_per_core: u32,
    },
    /// `topology: package 1 cpus 8-15`: one group of a level.
    Group {
        /// The level (the kernel prints packages and dies).
        kind: LevelKind,
        /// The group's index in its level.
        index: u32,
        /// Its CPUs.
        cpus: CpuMask,
    },
    /// `topology: cache L2 1024 KiB, 8 instances of 2 CPUs: 0-1 2-3 ...`: one
    /// cache level and kind.
    Cache {
        /// Cache level (1 = L1).
        level: u8,
        /// Data, instruction or unified.
        kind: CacheKind,
        /// Size of one instance in KiB (0 when unknown).
        size_kib: u64,
        /// How many instances.
        instances: u32,
        /// Fewest and most CPUs sharing one instance.
        sharing: (u32, u32),
        /// Each instance's CPUs, listed only on small machines (empty
        /// otherwise); never an empty mask.
        spans: Vec<CpuMask>,
    },
    /// `topology: node 0 cpus 0-3 memory 256 MiB`: one NUMA node.
    Node {
        /// Node id.
        id: u32,
        /// Its CPUs (may be none: a memory-only node).
        cpus: CpuMask,
        /// Its memory in MiB.
        memory_mib: u64,
    },
    /// `topology: node 0 distances 10 20`: a row of the distance matrix.
    Distances(DistanceRow),
    /// `topology: cannot build the model: WHY`.
    Unbuilt(String),
}

/// `L2`, `L1d`, `L1i`: a cache's name as lscpu and lstopo print it.
struct CacheName(u8, CacheKind);

impl fmt::Display for CacheName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "L{}{}", self.0, self.1.suffix())
    }
}

impl fmt::Display for TopologyLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let TopologyLine::Distances(d) = self {
            return d.fmt(f);
        }
        f.write_str(PREFIX)?;
        match self {
            TopologyLine::Shifts {
                leaf,
                smt,
                core,
                package,
            } => write!(
                f,
                "CPUID leaf {leaf:#x}: SMT shift {smt}, core shift {core}, package shift {package}"
            ),
            TopologyLine::Summary {
                possible,
                present,
                online,
                levels,
                threads_per_core,
            } => {
                write!(
                    f,
                    "{possible} possible, {present} present, {online} online CPUs; "
                )?;
                for (i, (kind, n)) in levels.iter().enumerate() {
                    let sep = if i == 0 { "" } else { ", " };
                    write!(f, "{sep}{n} {}s", kind.name())?;
                }
                write!(f, "; {threads_per_core} threads per core")
            }
            TopologyLine::Group { kind, index, cpus } => {
                write!(f, "{} {index} cpus {}", kind.name(), cpus.to_list_string())
            }
            TopologyLine::Cache {
                level,
                kind,
                size_kib,
                instances,
                sharing: (least, most),
                spans,
            } => {
                write!(f, "cache {} {size_kib} KiB, ", CacheName(*level, *kind))?;
                write!(f, "{instances} instances of {least}")?;
                if least != most {
                    write!(f, "-{most}")?;
                }
                f.write_str(" CPUs")?;
                for (i, s) in spans.iter().enumerate() {
                    let sep = if i == 0 { ": " } else { " " };
                    write!(f, "{sep}{}", s.to_list_string())?;
                }
                Ok(())
            }
            TopologyLine::Node {
                id,
                cpus,
                memory_mib,
            } => write!(
                f,
                "node {id} cpus {} memory {memory_mib} MiB",
                cpus.to_list_string()
            ),
            TopologyLine::Unbuilt(why) => write!(f, "cannot build the model: {why}"),
            TopologyLine::Distances(_) => Ok(()),
        }
    }
}

impl TopologyLine {
    /// Reads a line written by `Display`; `None` for any other line.
    pub fn parse(line: &str) -> Option<TopologyLine> {
        if let Some(d) = DistanceRow::parse(line) {
            return Some(TopologyLine::Distances(d));
        }
        let rest = line.strip_prefix(PREFIX)?;
        if let Some(why) = rest.strip_prefix("cannot build the model: ") {
            return Some(TopologyLine::Unbuilt(why.to_string()));
        }
        parse_shifts(rest)
            .or_else(|| parse_summary(rest))
            .or_else(|| parse_cache(rest))
            .or_else(|| parse_node(rest))
            .or_else(|| parse_group(rest))
    }
}

/// A decimal number with no sign and no leading `+`.
fn num<T: core::str::FromStr>(s: &str) -> Option<T> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn level_kind(name: &str) -> Option<LevelKind> {
    LevelKind::ALL.into_iter().find(|k| k.name() == name)
}

fn parse_shifts(rest: &str) -> Option<TopologyLine> {
    let rest = rest.strip_prefix("CPUID leaf 0x")?;
    let (leaf, rest) = rest.split_once(": SMT shift ")?;
    let (smt, rest) = rest.split_once(", core shift ")?;
    let (core, package) = rest.split_once(", package shift ")?;
    if leaf.is_empty() || !leaf.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    Some(TopologyLine::Shifts {
        leaf: u32::from_str_radix(leaf, 16).ok()?,
        smt: num(smt)?,
        core: num(core)?,
        package: num(package)?,
    })
}

fn parse_summary(rest: &str) -> Option<TopologyLine> {
    let (possible, rest) = rest.split_once(" possible, ")?;
    let (present, rest) = rest.split_once(" present, ")?;
    let (online, rest) = rest.split_once(" online CPUs; ")?;
    let (levels, tpc) = rest.rsplit_once("; ")?;
    let levels = if levels.is_empty() {
        Vec::new()
    } else {
        levels
            .split(", ")
            .map(|l| {
                let (n, kind) = l.split_once(' ')?;
                Some((level_kind(kind.strip_suffix('s')?)?, num(n)?))
            })
            .collect::<Option<Vec<_>>>()?
    };
    Some(TopologyLine::Summary {
        possible: num(possible)?,
        present: num(present)?,
        online: num(online)?,
        levels,
        threads_per_core: num(tpc.strip_suffix(" threads per core")?)?,
    })
}

fn parse_cache(rest: &str) -> Option<TopologyLine> {
    let (name, rest) = rest.strip_prefix("cache L")?.split_once(' ')?;
    let (level, kind) = super::split_cache_name(name);
    let (size_kib, rest) = rest.split_once(" KiB, ")?;
    let (instances, rest) = rest.split_once(" instances of ")?;
    let (sharing, spans) = match rest.split_once(" CPUs: ") {
        Some((sharing, spans)) => (sharing, spans),
        None => (rest.strip_suffix(" CPUs")?, ""),
    };
    let (least, most) = match sharing.split_once('-') {
        Some((a, b)) => (num(a)?, num(b)?),
        None => (num(sharing)?, num(sharing)?),
    };
    // "a-a" is written "a": refuse it so that each value has one line.
    if sharing.contains('-') && least == most {
        return None;
    }
    let spans = if spans.is_empty() {
        Vec::new()
    } else {
        spans
            .split(' ')
            .map(|s| list(s).filter(|m| !m.is_empty()))
            .collect::<Option<Vec<_>>>()?
    };
    Some(TopologyLine::Cache {
        level: num(level)?,
        kind,
        size_kib: num(size_kib)?,
        instances: num(instances)?,
        sharing: (least, most),
        spans,
    })
}

fn parse_node(rest: &str) -> Option<TopologyLine> {
    let (id, rest) = rest.strip_prefix("node ")?.split_once(" cpus ")?;
    let (cpus, mib) = rest.rsplit_once(" memory ")?;
    Some(TopologyLine::Node {
        id: num(id)?,
        cpus: list(cpus)?,
        memory_mib: num(mib.strip_suffix(" MiB")?)?,
    })
}

fn parse_group(rest: &str) -> Option<TopologyLine> {
    let (kind, rest) = rest.split_once(' ')?;
    let (index, cpus) = rest.split_once(" cpus ")?;
    Some(TopologyLine::Group {
        kind: level_kind(kind)?,
        index: num(index)?,
        cpus: list(cpus)?,
    })
}

/// A cpulist exactly as `to_list_string` writes it (so "0-1" and "0,1" are
/// not both read as one value).
fn list(s: &str) -> Option<CpuMask> {
    let m = CpuMask::parse_list(s).ok()?;
    (m.to_list_string() == s).then_some(m)
}
