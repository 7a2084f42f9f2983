//! hwloc synthetic description strings, read and written.
//!
//! A synthetic description lists, outermost first, the type of each level and how
//! many children every object of the previous level has:
//! `package:4 numa:4 l3:1 core:512 pu:2` is 4 packages × 4 NUMA nodes × 1 L3 ×
//! 512 cores × 2 threads = 16384 PUs. This module follows hwloc's syntax (hwloc
//! documentation, "Synthetic topologies", and `hwloc/topology-synthetic.c`).
//!
//! # Accepted syntax
//!
//! - Items separated by spaces or newlines: `type:arity`, optionally followed
//!   without a space by `(attr attr ...)`.
//! - Type names are matched like `hwloc_type_sscanf`: case-insensitive prefixes of
//!   at least two letters of `package`/`socket`, `die`, `group` (optionally
//!   `group<N>`), `numanode`/`node` (so `numa` works), `core`, `pu`; caches as
//!   `l<N>` with an optional `d`/`u`/`i` kind letter and an optional `cache`
//!   suffix (`l3`, `L2Cache`, `l1d`, `l1i`, `L1dCache`): unified by default, data
//!   for `d`, instruction for `i` (L1i..L3i). `tile`/`module` are groups, as in
//!   hwloc. `machine`, `misc` and I/O types are rejected like hwloc does.
//! - Bare arities without types (`"2 3 4 5 6"`): hwloc's default type choice
//!   (groups, package, NUMA, up to 4 caches, core, PU) is applied.
//! - `[numa]` or `[numa(memory=...)]` after a level attaches one NUMA node to every
//!   object of that level (before the first level: to the whole machine); several
//!   may follow one level, as in hwloc's Xeon Phi example
//!   `package:1 group:4 [numa] [numa] core:16 pu:4`.
//! - The last level must be `pu`. At most one package, die, NUMA, core and PU
//!   level; NUMA nodes either as a level or attached, not both. Arities must be
//!   ≥ 1 and the total number of PUs at most [`MAX_CPUS`].
//!
//! Attributes supported (anything else is an error naming the token):
//! - `size=N[unit]` on caches, `memory=N[unit]` on NUMA nodes (level or attached):
//!   units `kB`/`MB`/`GB`/`TB` (powers of 1000) and `kiB`/`MiB`/`GiB`/`TiB`
//!   (powers of 1024), case-insensitive, or plain bytes. Defaults as hwloc:
//!   L1 32 KiB, L*n* `256 KiB << 2n` (L2 4 MiB, L3 16 MiB), NUMA 1 GiB. Cache lines
//!   are 64 bytes, associativity unknown.
//! - `indexes=` on package, die, group, NUMA, core and PU levels (and attached
//!   NUMA nodes): an explicit comma-separated list of OS indexes for every object
//!   of the level, or an interleaving, either `step*count:step*count...` or
//!   `type:type...` (e.g. `pu:2(indexes=numa:core)`), computed like hwloc's
//!   current source (hwloc 2.9 cannot name the PU level in an interleaving).
//!   PU and NUMA indexes must be distinct (they are CPU and node numbers in the
//!   model). Package, die, group and core indexes are only labels, as in hwloc
//!   (`lstopo -i "package:2(indexes=0,0) core:2(indexes=0,0,5,5) pu:1"` shows
//!   two packages P#0 holding cores P#0, P#0 and P#5, P#5): they may repeat
//!   anywhere, and each object stays its own group. Real machines need this:
//!   Linux gives ia64 packages of one node the same id, and AMD Magny-Cours
//!   numbers cores within each node of a package.
//!
//! Rejected on purpose: `memorysidecachesize=` (memory-side caches are not
//! modelled), `indexes=` on caches (the model gives caches no id), `memory=`
//! on non-NUMA levels, `size=` on non-caches, attributes of the root object,
//! `memcache` levels.
//!
//! # Mapping onto the model
//!
//! - A PU's OS index (its position, or `indexes=`) is its logical CPU number, as
//!   hwloc sets PU cpusets from PU OS indexes. Every CPU is online.
//! - `package` → [`LevelKind::Package`], `die` → [`LevelKind::Die`], `core` →
//!   [`LevelKind::Core`]; group ids are the objects' OS indexes (position unless
//!   `indexes=`), as hwloc numbers them.
//! - `group` below the package/die level → [`LevelKind::Cluster`] (the model's
//!   only level between die and core); at most one such group level. Groups
//!   above the outermost package/die level carry no CPU-topology meaning for
//!   the model and are dropped. hwloc itself removes a group whose CPUs are
//!   exactly another object's (`group:2 l2:1`); the model keeps it as a cluster.
//! - Without a package level all CPUs are in package 0; without a core level
//!   every PU is its own core (whose id is the PU's number), as Linux reports
//!   non-SMT CPUs. The model always has these two levels.
//! - NUMA nodes: one [`NumaNode`](topology::NumaNode) per hwloc NUMA node, id =
//!   its OS index. hwloc gives every NUMA node its parent's cpuset, so several
//!   attached nodes may share CPUs; Linux puts each CPU in exactly one node, so a
//!   CPU goes to the node attached closest to it (the smallest cpuset), and among
//!   equals to the first in hwloc's logical order; the others are memory-only
//!   (Xeon Phi's MCDRAM nodes are CPU-less in Linux too). Without any NUMA
//!   level, hwloc adds one node 0 covering the machine, and so does this reader.
//! - Caches → [`Cache`] instances with their sharing sets.
//!
//! The architecture is [`Arch::Other`]`("synthetic")`: a synthetic string names
//! none.

use crate::Error;
use topology::{
    Arch, Cache, CacheKind, CompactMask, CpuMask, CpuSpec, LevelKind, Topology, TopologyBuilder,
    MAX_CPUS,
};

const SOURCE: &str = "synthetic description";
/// hwloc's own limit on the number of levels (`HWLOC_SYNTHETIC_MAX_DEPTH`).
const MAX_LEVELS: usize = 128;
const DEFAULT_NUMA_MEMORY: u64 = 1 << 30;

/// What a level of the description is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Package,
    Die,
    Group,
    Numa,
    Cache { level: u8, kind: CacheKind },
    Core,
    Pu,
}

impl Kind {
    fn hwloc_name(self) -> String {
        match self {
            Kind::Package => "Package".into(),
            Kind::Die => "Die".into(),
            Kind::Group => "Group".into(),
            Kind::Numa => "NUMANode".into(),
            Kind::Cache { level, kind } => {
                let letter = match kind {
                    CacheKind::Data => "d",
                    CacheKind::Instruction => "i",
                    CacheKind::Unified => "",
                };
                format!("L{level}{letter}Cache")
            }
            Kind::Core => "Core".into(),
            Kind::Pu => "PU".into(),
        }
    }
}

/// The `indexes=` attribute, kept as text until every level is known (type
/// interleavings refer to other levels).
#[derive(Debug, Clone)]
struct IndexSpec {
    text: String,
    token: String,
}

#[derive(Debug, Clone)]
struct Attached {
    memory: Option<u64>,
}

#[derive(Debug, Clone)]
struct LevelSpec {
    /// `None` for bare arities, filled in by [`assign_default_types`].
    kind: Option<Kind>,
    arity: u32,
    /// `size=` for caches, `memory=` for NUMA.
    size: Option<u64>,
    /// Which of the two gave `size`.
    size_attr: Option<&'static str>,
    indexes: Option<IndexSpec>,
    /// NUMA nodes attached to every object of this level.
    attached: Vec<Attached>,
    token: String,
}

fn token_error(token: &str, message: impl std::fmt::Display) -> Error {
    Error::new(SOURCE, format!("at '{token}': {message}"))
}

/// Parses a synthetic description such as `package:2 numa:2 core:8 pu:2`.
pub fn parse(text: &str) -> Result<Topology, Error> {
    let parsed = parse_levels(text)?;
    build(text, &parsed)
}

/// The description after parsing: levels outermost first (the machine root is
/// implicit) plus NUMA nodes attached to the root.
struct Parsed {
    levels: Vec<LevelSpec>,
    root_attached: Vec<Attached>,
    attached_indexes: Option<IndexSpec>,
}

/// Reads the description in hwloc's phases: tokens into levels (with NUMA
/// nodes attached through `[...]`), types for bare arities, then the checks
/// of what the model can represent.
fn parse_levels(text: &str) -> Result<Parsed, Error> {
    reject_root_attributes(text)?;
    let mut levels: Vec<LevelSpec> = Vec::new();
    let mut root_attached = Vec::new();
    let mut attached_indexes: Option<IndexSpec> = None;
    let mut total: u64 = 1;
    for token in split_items(text)? {
        if token.starts_with('[') {
            let (attached, indexes) = parse_attached(token)?;
            attached_indexes = indexes.or(attached_indexes);
            match levels.last_mut() {
                Some(level) => level.attached.push(attached),
                None => root_attached.push(attached),
            }
        } else {
            levels.push(parse_level(token, &mut total, levels.len())?);
        }
    }
    if levels.is_empty() {
        return Err(Error::new(
            SOURCE,
            "empty description: expected levels such as 'package:2 core:4 pu:2'",
        ));
    }
    let has_attached = !root_attached.is_empty() || levels.iter().any(|l| !l.attached.is_empty());
    resolve_untyped(&mut levels, has_attached)?;
    check_kinds(&levels, has_attached)?;
    check_nesting(&levels)?;
    Ok(Parsed {
        levels,
        root_attached,
        attached_indexes,
    })
}

/// hwloc accepts `(attrs)` for the machine root; the model has nowhere to keep them.
fn reject_root_attributes(text: &str) -> Result<(), Error> {
    let trimmed = text.trim_start_matches([' ', '\n']);
    if trimmed.starts_with('(') {
        let end = trimmed.find(')').unwrap_or(trimmed.len());
        return Err(token_error(
            &trimmed[..(end + 1).min(trimmed.len())],
            "attributes of the root object are not supported",
        ));
    }
    Ok(())
}

/// `[numa(memory=...,indexes=...)]`: a NUMA node attached to the level before
/// it (or to the root), and the indexes it gives, if any.
fn parse_attached(token: &str) -> Result<(Attached, Option<IndexSpec>), Error> {
    let inner = token[1..]
        .strip_suffix(']')
        .ok_or_else(|| token_error(token, "attached object lacks its closing ']'"))?;
    let (name, attrs) = split_attrs(inner, token)?;
    if parse_type(name, token)? != Some(Kind::Numa) {
        return Err(token_error(
            token,
            "only NUMA nodes can be attached with [...]",
        ));
    }
    let mut attached = Attached { memory: None };
    let mut indexes = None;
    if let Some(attrs) = attrs {
        let a = parse_attrs(attrs, Some(Kind::Numa), token)?;
        attached.memory = a.size;
        indexes = a.indexes;
    }
    Ok((attached, indexes))
}

/// `type:N(attrs)` or a bare `N`: one level below the `depth` already read;
/// `total` is the number of objects so far, bounded by [`MAX_CPUS`].
fn parse_level(token: &str, total: &mut u64, depth: usize) -> Result<LevelSpec, Error> {
    let (head, attrs) = split_attrs(token, token)?;
    let (kind, arity_text) = match head.split_once(':') {
        Some((name, arity)) => (parse_type(name, token)?, arity),
        None if head.starts_with(|c: char| c.is_ascii_digit()) => (None, head),
        None => {
            parse_type(head, token)?;
            return Err(token_error(
                token,
                "missing ':' and number of objects after the type",
            ));
        }
    };
    let arity = parse_number(arity_text)
        .ok_or_else(|| token_error(token, "missing or invalid number of objects"))?;
    if arity == 0 {
        return Err(token_error(
            token,
            "the number of objects must be at least 1",
        ));
    }
    *total = total.saturating_mul(arity);
    if *total > MAX_CPUS as u64 {
        return Err(token_error(
            token,
            format!(
                "the description has more than {MAX_CPUS} objects at this level, \
                 beyond the supported maximum of {MAX_CPUS} CPUs"
            ),
        ));
    }
    if depth + 1 >= MAX_LEVELS {
        return Err(token_error(
            token,
            format!("too many levels (at most {})", MAX_LEVELS - 1),
        ));
    }
    let mut level = LevelSpec {
        kind,
        arity: arity as u32,
        size: None,
        size_attr: None,
        indexes: None,
        attached: Vec::new(),
        token: token.to_string(),
    };
    if let Some(attrs) = attrs {
        let a = parse_attrs(attrs, kind, token)?;
        level.size = a.size;
        level.size_attr = a.size_attr;
        level.indexes = a.indexes;
    }
    Ok(level)
}

/// Types for levels written as bare numbers: hwloc's defaults when all but
/// the last are bare, `pu` for a bare last level; mixing is refused.
fn resolve_untyped(levels: &mut [LevelSpec], numa_attached: bool) -> Result<(), Error> {
    if levels.iter().all(|l| l.kind.is_some()) {
        return Ok(());
    }
    let last = levels.len() - 1;
    let inner_untyped = levels[..last].iter().filter(|l| l.kind.is_none()).count();
    if inner_untyped != 0 && inner_untyped != last {
        return Err(Error::new(
            SOURCE,
            "cannot mix levels with and without types (except an untyped last PU level)",
        ));
    }
    if inner_untyped == last && last > 0 {
        assign_default_types(levels, numa_attached);
    }
    if levels[last].kind.is_none() {
        levels[last].kind = Some(Kind::Pu);
    }
    for level in levels.iter() {
        if let Some(kind) = level.kind {
            check_attr_kind(kind, level.size_attr, level.indexes.is_some(), &level.token)?;
        }
    }
    Ok(())
}

/// The last level is `pu`; PU, package, die, NUMA and core levels and each
/// cache level appear at most once; NUMA nodes are a level or attached, not both.
fn check_kinds(levels: &[LevelSpec], has_attached: bool) -> Result<(), Error> {
    let last = levels.last().expect("non-empty");
    if last.kind != Some(Kind::Pu) {
        return Err(token_error(&last.token, "the last level must be 'pu'"));
    }
    let count = |k: fn(Kind) -> bool| levels.iter().filter(|l| l.kind.is_some_and(k)).count();
    type KindTest = fn(Kind) -> bool;
    let once: [(&str, KindTest); 5] = [
        ("PU", |k| k == Kind::Pu),
        ("package", |k| k == Kind::Package),
        ("die", |k| k == Kind::Die),
        ("NUMA node", |k| k == Kind::Numa),
        ("core", |k| k == Kind::Core),
    ];
    for (name, pred) in once {
        if count(pred) > 1 {
            return Err(Error::new(
                SOURCE,
                format!("the description has several {name} levels"),
            ));
        }
    }
    if count(|k| k == Kind::Numa) > 0 && has_attached {
        return Err(Error::new(
            SOURCE,
            "NUMA nodes cannot be both a level and attached with [...]",
        ));
    }
    for (i, a) in levels.iter().enumerate() {
        if let Some(Kind::Cache { level, kind }) = a.kind {
            if levels[..i].iter().any(|b| b.kind == a.kind) {
                return Err(token_error(
                    &a.token,
                    format!(
                        "the description has several L{level}{} levels",
                        kind.suffix()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Nesting the model can express: package ⊇ die ⊇ cluster ⊇ core ⊇ PU, with
/// at most one group level below the package (the cluster level) and none
/// below the core.
fn check_nesting(levels: &[LevelSpec]) -> Result<(), Error> {
    let pos = |k: Kind| levels.iter().position(|l| l.kind == Some(k));
    let order = [Kind::Package, Kind::Die, Kind::Core, Kind::Pu];
    let mut prev: Option<(usize, Kind)> = None;
    for k in order {
        let Some(p) = pos(k) else { continue };
        if let Some((_, outer)) = prev.filter(|&(q, _)| p < q) {
            return Err(token_error(
                &levels[p].token,
                format!(
                    "a {} level must be below the {} level",
                    k.hwloc_name(),
                    outer.hwloc_name()
                ),
            ));
        }
        prev = Some((p, k));
    }
    let outer_cpu_level = pos(Kind::Package).or(pos(Kind::Die));
    let core_or_pu = pos(Kind::Core).unwrap_or(levels.len() - 1);
    let mut clusters = 0;
    for (i, l) in levels.iter().enumerate() {
        if l.kind != Some(Kind::Group) {
            continue;
        }
        if i > core_or_pu {
            return Err(token_error(
                &l.token,
                "a group below the core level cannot be represented",
            ));
        }
        if outer_cpu_level.is_none_or(|o| i > o) {
            clusters += 1;
            if clusters > 1 {
                return Err(token_error(
                    &l.token,
                    "only one group level below the package can be represented \
                     (as the cluster level)",
                ));
            }
        }
    }
    Ok(())
}

/// hwloc's choice of types for a description made of bare arities: in priority
/// NUMA, package, core, up to four caches, then groups; placed as groups,
/// package, NUMA, caches (L3, L2, L1d, L1i), core.
fn assign_default_types(levels: &mut [LevelSpec], numa_attached: bool) {
    let mut remaining = levels.len() - 1;
    let need_numa = usize::from(remaining >= 1 && !numa_attached);
    remaining -= need_numa;
    let need_pack = usize::from(remaining >= 1);
    remaining -= need_pack;
    let need_core = usize::from(remaining >= 1);
    remaining -= need_core;
    let need_caches = remaining.min(4);
    remaining -= need_caches;
    let need_groups = remaining;
    let mut kinds: Vec<Kind> = Vec::new();
    kinds.extend(std::iter::repeat_n(Kind::Group, need_groups));
    if need_pack == 1 {
        kinds.push(Kind::Package);
    }
    if need_numa == 1 {
        kinds.push(Kind::Numa);
    }
    let unified = |level| Kind::Cache {
        level,
        kind: CacheKind::Unified,
    };
    if need_caches >= 3 {
        kinds.push(unified(3));
    }
    if need_caches >= 1 {
        kinds.push(unified(2));
    }
    if need_caches >= 2 {
        kinds.push(Kind::Cache {
            level: 1,
            kind: CacheKind::Data,
        });
    }
    if need_caches >= 4 {
        kinds.push(Kind::Cache {
            level: 1,
            kind: CacheKind::Instruction,
        });
    }
    if need_core == 1 {
        kinds.push(Kind::Core);
    }
    for (level, kind) in levels.iter_mut().zip(kinds) {
        level.kind = Some(kind);
    }
}

/// Splits the description into items, keeping parenthesised attributes and
/// bracketed attached objects (which may contain spaces) whole.
fn split_items(text: &str) -> Result<Vec<&str>, Error> {
    let bytes = text.as_bytes();
    let mut items = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b' ' || bytes[i] == b'\n' || bytes[i] == b'\t' || bytes[i] == b'\r' {
            i += 1;
            continue;
        }
        let start = i;
        let mut depth_paren = 0usize;
        let mut in_bracket = false;
        while i < bytes.len() {
            match bytes[i] {
                b'(' => depth_paren += 1,
                b')' => {
                    if depth_paren == 0 {
                        return Err(token_error(&text[start..=i], "')' without a matching '('"));
                    }
                    depth_paren -= 1;
                }
                b'[' if i == start => in_bracket = true,
                b']' if in_bracket && depth_paren == 0 => {
                    i += 1;
                    break;
                }
                b' ' | b'\n' | b'\t' | b'\r' if depth_paren == 0 && !in_bracket => break,
                _ => {}
            }
            i += 1;
        }
        let item = &text[start..i];
        if depth_paren > 0 {
            return Err(token_error(item, "missing ')' closing the attributes"));
        }
        if in_bracket && !item.ends_with(']') {
            return Err(token_error(item, "attached object lacks its closing ']'"));
        }
        items.push(item);
    }
    Ok(items)
}

/// Splits `type:arity(attrs)` into the head and the attribute text, if any.
fn split_attrs<'a>(item: &'a str, token: &str) -> Result<(&'a str, Option<&'a str>), Error> {
    match item.find('(') {
        None => Ok((item, None)),
        Some(open) => {
            let rest = &item[open + 1..];
            let close = rest
                .rfind(')')
                .ok_or_else(|| token_error(token, "missing ')' closing the attributes"))?;
            if !rest[close + 1..].is_empty() {
                return Err(token_error(
                    token,
                    format!("unexpected '{}' after the attributes", &rest[close + 1..]),
                ));
            }
            Ok((&item[..open], Some(&rest[..close])))
        }
    }
}

/// hwloc's `hwloc__type_match`: `text` starts with a prefix (case-insensitive, at
/// least `min` letters) of `name`, followed by the end or a non-letter.
/// Returns the rest of `text`.
fn type_match<'a>(text: &'a str, name: &str, min: usize) -> Option<&'a str> {
    let tb = text.as_bytes();
    let nb = name.as_bytes();
    let mut i = 0;
    loop {
        let Some(&c) = tb.get(i) else {
            return (i >= min).then_some(&text[i..]);
        };
        let expected = nb.get(i).copied();
        if expected != Some(c.to_ascii_lowercase()) {
            if c.is_ascii_alphabetic() || c == b'-' {
                return None;
            }
            return (i >= min).then_some(&text[i..]);
        }
        i += 1;
    }
}

/// Parses a type name; `Ok(None)` is never returned for a non-empty name (kept
/// as `Option` so callers can share the bare-arity path).
fn parse_type(name: &str, token: &str) -> Result<Option<Kind>, Error> {
    let lower = name.to_ascii_lowercase();
    let unsupported = |what: &str| Err(token_error(token, what.to_string()));
    let kind = if type_match(name, "machine", 2).is_some() {
        return unsupported("the machine is the implicit root and cannot be a level");
    } else if type_match(name, "numanode", 2).is_some() || type_match(name, "node", 2).is_some() {
        Kind::Numa
    } else if type_match(name, "memcache", 5).is_some() {
        return unsupported("memory-side caches are not modelled");
    } else if type_match(name, "package", 2).is_some() || type_match(name, "socket", 2).is_some() {
        Kind::Package
    } else if type_match(name, "die", 2).is_some() {
        Kind::Die
    } else if type_match(name, "core", 2).is_some() {
        Kind::Core
    } else if type_match(name, "pu", 2).is_some() {
        Kind::Pu
    } else if type_match(name, "misc", 4).is_some()
        || type_match(name, "bridge", 4).is_some()
        || type_match(name, "pcidev", 3).is_some()
        || type_match(name, "osdev", 2).is_some()
    {
        return unsupported("Misc and I/O objects cannot be synthetic levels");
    } else if lower.starts_with('l') && lower[1..].starts_with(|c: char| c.is_ascii_digit()) {
        let digits = lower[1..]
            .bytes()
            .take_while(|c| c.is_ascii_digit())
            .count();
        let level: u8 = lower[1..1 + digits]
            .parse()
            .map_err(|_| token_error(token, "invalid cache level"))?;
        let rest = &name[1 + digits..];
        let (kind, suffix) = match rest.as_bytes().first().map(u8::to_ascii_lowercase) {
            Some(b'i') => (CacheKind::Instruction, &rest[1..]),
            Some(b'd') => (CacheKind::Data, &rest[1..]),
            Some(b'u') => (CacheKind::Unified, &rest[1..]),
            _ => (CacheKind::Unified, rest),
        };
        let max = if kind == CacheKind::Instruction { 3 } else { 5 };
        if level == 0 || level > max {
            return unsupported("cache levels go from L1 to L5 (L1i to L3i)");
        }
        if type_match(suffix, "cache", 0).is_none() {
            return unsupported("unknown object type");
        }
        Kind::Cache { level, kind }
    } else if let Some(rest) = type_match(name, "group", 2) {
        if !rest.is_empty() && !rest.bytes().all(|c| c.is_ascii_digit()) {
            return unsupported("unknown object type");
        }
        Kind::Group
    } else if name.starts_with("Tile") || name.starts_with("Module") {
        Kind::Group
    } else {
        return unsupported("unknown object type");
    };
    Ok(Some(kind))
}

/// A number as C's `strtoul(.., 0)` reads it: decimal, `0x` hex or `0` octal.
fn parse_number(text: &str) -> Option<u64> {
    if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        u64::from_str_radix(hex, 16).ok()
    } else if text.len() > 1 && text.starts_with('0') {
        u64::from_str_radix(&text[1..], 8).ok()
    } else {
        text.parse().ok()
    }
}

/// A size with an optional unit, as `hwloc_synthetic_parse_memory_attr` reads it.
fn parse_size(text: &str, token: &str) -> Result<u64, Error> {
    let digits_end = if text.starts_with("0x") || text.starts_with("0X") {
        2 + text[2..]
            .bytes()
            .take_while(|c| c.is_ascii_hexdigit())
            .count()
    } else {
        text.bytes().take_while(|c| c.is_ascii_digit()).count()
    };
    let (number, unit) = text.split_at(digits_end);
    let value =
        parse_number(number).ok_or_else(|| token_error(token, format!("invalid size '{text}'")))?;
    let multiplier: u64 = match unit.to_ascii_lowercase().as_str() {
        "" => 1,
        "kb" => 1_000,
        "kib" => 1 << 10,
        "mb" => 1_000_000,
        "mib" => 1 << 20,
        "gb" => 1_000_000_000,
        "gib" => 1 << 30,
        "tb" => 1_000_000_000_000,
        "tib" => 1 << 40,
        _ => {
            return Err(token_error(
                token,
                format!("unknown size unit '{unit}' (use kB, MB, GB, TB, kiB, MiB, GiB, TiB)"),
            ))
        }
    };
    value
        .checked_mul(multiplier)
        .ok_or_else(|| token_error(token, format!("size '{text}' overflows 64 bits")))
}

struct Attrs {
    size: Option<u64>,
    /// Which attribute gave `size`: `size=` (caches) or `memory=` (NUMA).
    size_attr: Option<&'static str>,
    indexes: Option<IndexSpec>,
}

/// Parses the text between parentheses. `kind` is `None` for bare arities, whose
/// type is only known later: [`check_attr_kind`] runs again then.
fn parse_attrs(text: &str, kind: Option<Kind>, token: &str) -> Result<Attrs, Error> {
    let mut attrs = Attrs {
        size: None,
        size_attr: None,
        indexes: None,
    };
    for attr in text.split(' ').filter(|a| !a.is_empty()) {
        if let Some(v) = attr.strip_prefix("size=") {
            attrs.size = Some(parse_size(v, token)?);
            attrs.size_attr = Some("size");
        } else if let Some(v) = attr.strip_prefix("memory=") {
            attrs.size = Some(parse_size(v, token)?);
            attrs.size_attr = Some("memory");
        } else if let Some(v) = attr.strip_prefix("indexes=") {
            if v.is_empty() {
                return Err(token_error(token, "empty indexes= attribute"));
            }
            attrs.indexes = Some(IndexSpec {
                text: v.to_string(),
                token: token.to_string(),
            });
        } else if attr.starts_with("memorysidecachesize=") {
            return Err(token_error(
                token,
                "attribute 'memorysidecachesize' is not supported: memory-side caches are not modelled",
            ));
        } else {
            let name = attr.split('=').next().unwrap_or(attr);
            return Err(token_error(
                token,
                format!("unsupported attribute '{name}' (supported: size=, memory=, indexes=)"),
            ));
        }
    }
    if let Some(kind) = kind {
        check_attr_kind(kind, attrs.size_attr, attrs.indexes.is_some(), token)?;
    }
    Ok(attrs)
}

fn check_attr_kind(
    kind: Kind,
    size_attr: Option<&str>,
    has_indexes: bool,
    token: &str,
) -> Result<(), Error> {
    let is_cache = matches!(kind, Kind::Cache { .. });
    match size_attr {
        Some("size") if !is_cache => {
            return Err(token_error(token, "size= applies to caches only"));
        }
        Some("memory") if kind != Kind::Numa => {
            return Err(token_error(
                token,
                "memory= applies to NUMA nodes only (caches take size=)",
            ));
        }
        _ => {}
    }
    if has_indexes && is_cache {
        return Err(token_error(
            token,
            "indexes= on caches is not supported: the model gives caches no id",
        ));
    }
    Ok(())
}

/// Computes the OS indexes of the `total` objects of a level from its
/// `indexes=` text, as hwloc's `hwloc_synthetic_process_indexes` does: an
/// explicit list, or an interleaving of loops. `widths[k]` is the number of
/// objects at level `k` (`widths[0]` = 1 for the root), `kinds[k]` its type.
fn process_indexes(
    spec: &IndexSpec,
    total: usize,
    widths: &[usize],
    kinds: &[Option<Kind>],
    max_value: Option<usize>,
    distinct: bool,
) -> Result<Vec<u32>, Error> {
    let text = spec.text.as_str();
    let explicit = text.bytes().all(|c| c.is_ascii_digit() || c == b',');
    let values = if explicit {
        explicit_indexes(spec, total)?
    } else {
        let mut loops = if text.starts_with(|c: char| c.is_ascii_digit()) {
            step_loops(spec, total)?
        } else {
            type_loops(spec, total, widths, kinds)?
        };
        complete_loops(spec, &mut loops, total)?;
        interleave(&loops, total)
    };
    // PU and NUMA indexes must be distinct, as must any interleaving's (hwloc
    // checks that too); explicit lists of other levels may repeat values, which
    // hwloc keeps as mere labels (Linux core ids restart in every package).
    check_indexes(spec, &values, max_value, distinct || !explicit)?;
    Ok(values)
}

/// `indexes=0,4,1,5`: one value per object.
fn explicit_indexes(spec: &IndexSpec, total: usize) -> Result<Vec<u32>, Error> {
    let err = |m: String| token_error(&spec.token, m);
    let list: Vec<&str> = spec.text.split(',').collect();
    if list.len() != total {
        return Err(err(format!(
            "indexes= lists {} values for {total} objects",
            list.len()
        )));
    }
    list.iter()
        .map(|v| {
            v.parse::<u32>()
                .map_err(|_| err(format!("invalid index '{v}' in indexes=")))
        })
        .collect()
}

/// One interleaving loop: object `j` contributes `(j / step) % nb`.
type Loop = (usize, usize);

/// `indexes=2*4:1*2`: loops given as `step*count`.
fn step_loops(spec: &IndexSpec, total: usize) -> Result<Vec<Loop>, Error> {
    let err = |m: String| token_error(&spec.token, m);
    let in_range = |n: &u64| *n > 0 && *n <= total as u64;
    spec.text
        .split(':')
        .map(|part| {
            let (step, nb) = part
                .split_once('*')
                .ok_or_else(|| err(format!("interleaving loop '{part}' lacks '*'")))?;
            let step = parse_number(step)
                .filter(in_range)
                .ok_or_else(|| err(format!("invalid interleaving step in '{part}'")))?;
            let nb = parse_number(nb)
                .filter(in_range)
                .ok_or_else(|| err(format!("invalid interleaving count in '{part}'")))?;
            Ok((step as usize, nb as usize))
        })
        .collect()
}

/// `indexes=numa:core`: loops given by the levels whose objects the indexes
/// go through, innermost first.
fn type_loops(
    spec: &IndexSpec,
    total: usize,
    widths: &[usize],
    kinds: &[Option<Kind>],
) -> Result<Vec<Loop>, Error> {
    let err = |m: String| token_error(&spec.token, m);
    let mut depths: Vec<usize> = Vec::new();
    for part in spec.text.split(':') {
        let kind = parse_type(part, &spec.token)?
            .ok_or_else(|| err(format!("unknown type '{part}' in indexes=")))?;
        let depth = kinds
            .iter()
            .position(|k| *k == Some(kind))
            .ok_or_else(|| err(format!("no '{part}' level for indexes= interleaving")))?;
        if depths.contains(&depth) {
            return Err(err(format!("duplicate '{part}' in indexes= interleaving")));
        }
        depths.push(depth);
    }
    let mut loops = Vec::with_capacity(depths.len());
    for &depth in &depths {
        let prev = depths
            .iter()
            .copied()
            .filter(|&d| d < depth)
            .max()
            .unwrap_or(0);
        let width = widths[depth];
        if width == 0 || !total.is_multiple_of(width) || !width.is_multiple_of(widths[prev]) {
            return Err(err(format!(
                "the '{}' level does not divide this level in indexes=",
                kinds[depth].map(|k| k.hwloc_name()).unwrap_or_default()
            )));
        }
        loops.push((total / width, width / widths[prev]));
    }
    Ok(loops)
}

/// Checks that the loops cover `total` objects; when they cover a divisor
/// of it and leave the innermost step free, hwloc adds the missing loop.
fn complete_loops(spec: &IndexSpec, loops: &mut Vec<Loop>, total: usize) -> Result<(), Error> {
    let product = loops
        .iter()
        .try_fold(1usize, |acc, &(_, nb)| acc.checked_mul(nb))
        .unwrap_or(usize::MAX);
    if product == total {
        return Ok(());
    }
    let min_step = loops.iter().map(|&(s, _)| s).min().unwrap_or(total);
    if product != 0 && total.is_multiple_of(product) && min_step == total / product {
        loops.push((1, total / product));
        return Ok(());
    }
    Err(token_error(
        &spec.token,
        format!("index interleaving covers {product} objects instead of {total}"),
    ))
}

/// The index of object `j`: Σ ((j / step) % nb) · mul over the loops, each
/// loop's `mul` the product of the counts before it.
fn interleave(loops: &[Loop], total: usize) -> Vec<u32> {
    let mut values = vec![0u32; total];
    let mut mul = 1usize;
    for &(step, nb) in loops {
        for (j, v) in values.iter_mut().enumerate() {
            *v += (((j / step) % nb) * mul) as u32;
        }
        mul *= nb;
    }
    values
}

/// Every index below `max_value`, and each once when `distinct`.
fn check_indexes(
    spec: &IndexSpec,
    values: &[u32],
    max_value: Option<usize>,
    distinct: bool,
) -> Result<(), Error> {
    let mut seen = std::collections::HashSet::with_capacity(values.len());
    for &v in values {
        if let Some(max) = max_value {
            if v as usize >= max {
                return Err(token_error(
                    &spec.token,
                    format!("index {v} is beyond the supported maximum of {max} CPUs"),
                ));
            }
        }
        if distinct && !seen.insert(v) {
            return Err(token_error(
                &spec.token,
                format!("index {v} appears twice in indexes="),
            ));
        }
    }
    Ok(())
}

/// The objects of every level, as hwloc's synthetic backend lays them out:
/// object `j` at depth `k` holds PUs `j * span .. (j + 1) * span`.
struct Tree<'a> {
    levels: &'a [LevelSpec],
    /// widths[k]: objects at depth k (depth 0 = machine root).
    widths: Vec<usize>,
    /// os_indexes[k]: OS index of each object at depth k+1, when given by indexes=.
    os_indexes: Vec<Option<Vec<u32>>>,
    /// Each PU's CPU number (its OS index), in depth-first order.
    cpu_ids: Vec<u32>,
}

impl<'a> Tree<'a> {
    /// Widths, then every level's `indexes=`, then the PUs' numbers.
    fn new(levels: &'a [LevelSpec]) -> Result<Self, Error> {
        let kinds: Vec<Option<Kind>> = std::iter::once(None)
            .chain(levels.iter().map(|l| l.kind))
            .collect();
        let mut widths = vec![1usize];
        for l in levels {
            widths.push(widths.last().copied().unwrap_or(1) * l.arity as usize);
        }
        let mut os_indexes = Vec::with_capacity(levels.len());
        for (k, l) in levels.iter().enumerate() {
            let max = (l.kind == Some(Kind::Pu)).then_some(MAX_CPUS);
            let distinct = matches!(l.kind, Some(Kind::Pu | Kind::Numa));
            os_indexes.push(match &l.indexes {
                Some(spec) => Some(process_indexes(
                    spec,
                    widths[k + 1],
                    &widths,
                    &kinds,
                    max,
                    distinct,
                )?),
                None => None,
            });
        }
        let mut tree = Tree {
            levels,
            widths,
            os_indexes,
            cpu_ids: Vec::new(),
        };
        let pu_level = levels.len() - 1;
        tree.cpu_ids = (0..tree.n_pu()).map(|i| tree.os_of(pu_level, i)).collect();
        Ok(tree)
    }

    fn n_pu(&self) -> usize {
        self.widths.last().copied().unwrap_or(1)
    }

    /// The OS index of object `j` at depth `k + 1`.
    fn os_of(&self, k: usize, j: usize) -> u32 {
        match &self.os_indexes[k] {
            Some(v) => v[j],
            None => j as u32,
        }
    }

    /// PUs below one object at depth `k + 1`.
    fn span(&self, k: usize) -> usize {
        self.n_pu() / self.widths[k + 1]
    }

    fn depth_of(&self, kind: Kind) -> Option<usize> {
        self.levels.iter().position(|l| l.kind == Some(kind))
    }

    /// The CPU mask of object `j` at depth `k + 1`, from the PUs' OS indexes.
    fn mask_of(&self, k: usize, j: usize) -> CompactMask {
        let s = self.span(k);
        if self.os_indexes[self.levels.len() - 1].is_none() {
            CompactMask::from_range(j * s, (j + 1) * s)
        } else {
            let ids = &self.cpu_ids[j * s..(j + 1) * s];
            ids.iter().map(|&id| id as usize).collect()
        }
    }
}

/// The topology of a parsed description, in hwloc's phases: lay out the
/// objects, add the PUs with their groups, the caches and NUMA levels, then
/// the NUMA nodes attached (or hwloc's one machine-wide node).
fn build(text: &str, parsed: &Parsed) -> Result<Topology, Error> {
    let tree = Tree::new(&parsed.levels)?;
    let mut b = TopologyBuilder::new(Arch::Other("synthetic".into()));
    b.source(format!("synthetic:{}", text.trim()));
    add_cpus(&mut b, &tree);
    add_cache_and_numa_levels(&mut b, &tree);
    let has_numa_level = tree.depth_of(Kind::Numa).is_some();
    let has_attached =
        !parsed.root_attached.is_empty() || parsed.levels.iter().any(|l| !l.attached.is_empty());
    if !has_numa_level && !has_attached {
        // hwloc inserts one machine-wide NUMA node when none is described.
        b.add_node(
            0,
            tree.cpu_ids
                .iter()
                .map(|&c| c as usize)
                .collect::<CompactMask>(),
            Some(DEFAULT_NUMA_MEMORY),
        );
    } else if has_attached {
        add_attached_nodes(&mut b, parsed, &tree.widths, &tree.cpu_ids)?;
    }
    b.finish().map_err(|e| Error::new(SOURCE, e.to_string()))
}

/// Every PU as a CPU, with its package, die, cluster and core.
///
/// Groups are keyed by the object's position in its level, not by its OS
/// index: hwloc treats `indexes=` of non-PU levels as mere labels that may
/// repeat anywhere (Linux ia64 gives two packages of one node the id 0, AMD
/// numbers cores within each node of a package), while the builder merges
/// CPUs whose ids agree. The OS indexes go in `os_ids`; levels the
/// description lacks keep the builder's ids: package 0, and cores numbered
/// like their only PU.
fn add_cpus(b: &mut TopologyBuilder, tree: &Tree<'_>) {
    let pkg = tree.depth_of(Kind::Package);
    let die = tree.depth_of(Kind::Die);
    let core = tree.depth_of(Kind::Core);
    let outer = pkg.or(die);
    let cluster = tree
        .levels
        .iter()
        .enumerate()
        .position(|(i, l)| l.kind == Some(Kind::Group) && outer.is_none_or(|o| i > o));
    for (i, &id) in tree.cpu_ids.iter().enumerate() {
        let at = |k: usize| (i / tree.span(k)) as u32;
        let os = |k: usize| tree.os_of(k, i / tree.span(k));
        b.add_cpu(CpuSpec {
            id,
            hw_id: None,
            online: true,
            package: pkg.map_or(0, at),
            die: die.map(at),
            cluster: cluster.map(at),
            big_core: None,
            core: core.map_or(id, at),
            node: None,
            kind: None,
            capacity: None,
            os_ids: Some([
                Some(core.map_or(id, os)),
                None,
                cluster.map(os),
                die.map(os),
                Some(pkg.map_or(0, os)),
            ]),
        });
    }
}

/// A cache per object of each cache level (hwloc's default sizes when none
/// is given) and a node per object of a NUMA level.
///
/// The caches go to the builder in one list, made at its final size in the
/// order the model keeps them (level, kind, first CPU: objects in order have
/// growing first CPUs unless `indexes=` numbers the PUs otherwise, and then
/// the builder sorts them), so that no list of 2 KiB masks is grown cache by
/// cache or sorted.
fn add_cache_and_numa_levels(b: &mut TopologyBuilder, tree: &Tree<'_>) {
    let mut cache_levels: Vec<(u8, CacheKind, usize, u64)> = Vec::new();
    for (k, l) in tree.levels.iter().enumerate() {
        match l.kind {
            Some(Kind::Cache { level, kind }) => {
                let size = l.size.unwrap_or(if level == 1 {
                    32 << 10
                } else {
                    (256u64 << 10) << (2 * level as u64)
                });
                cache_levels.push((level, kind, k, size));
            }
            Some(Kind::Numa) => {
                let memory = l.size.unwrap_or(DEFAULT_NUMA_MEMORY);
                for j in 0..tree.widths[k + 1] {
                    b.add_node(tree.os_of(k, j), tree.mask_of(k, j), Some(memory));
                }
            }
            _ => {}
        }
    }
    cache_levels.sort_by_key(|&(level, kind, _, _)| (level, kind));
    let total = cache_levels
        .iter()
        .map(|&(_, _, k, _)| tree.widths[k + 1])
        .sum();
    let mut caches = Vec::with_capacity(total);
    for (level, kind, k, size) in cache_levels {
        caches.extend((0..tree.widths[k + 1]).map(|j| Cache {
            level,
            kind,
            size_bytes: Some(size),
            line_bytes: Some(64),
            ways: None,
            cpus: tree.mask_of(k, j),
        }));
    }
    b.add_caches(caches);
}

/// Adds NUMA nodes attached with `[numa]`, numbered in hwloc's order (depth-first,
/// an object's attached nodes after those of its children). Each CPU goes to the
/// first node attached to its innermost object that has any.
fn add_attached_nodes(
    b: &mut TopologyBuilder,
    parsed: &Parsed,
    widths: &[usize],
    cpu_ids: &[u32],
) -> Result<(), Error> {
    let levels = &parsed.levels;
    let n_pu = cpu_ids.len();
    // (depth, object index, attached item) in hwloc's numbering order. Only
    // levels down to the deepest one with attached nodes need walking.
    let deepest = levels
        .iter()
        .rposition(|l| !l.attached.is_empty())
        .map_or(0, |p| p + 1);
    let mut order: Vec<(usize, usize, usize)> = Vec::new();
    walk_attached(
        0,
        0,
        &levels[..deepest],
        parsed.root_attached.len(),
        &mut order,
    );
    let total = order.len();
    let ids: Vec<u32> = match &parsed.attached_indexes {
        Some(spec) => process_indexes(spec, total, widths, &[], None, true)?,
        None => (0..total as u32).collect(),
    };
    let mut node_of_cpu: Vec<Option<(usize, u32)>> = vec![None; n_pu];
    // Each node's CPUs as a list, not a full mask: thousands of nodes of a
    // CPU or two each would otherwise cost 2 KiB apiece.
    let mut nodes: Vec<(u32, Vec<usize>, Option<u64>)> = Vec::with_capacity(total);
    for (&(depth, j, a), &id) in order.iter().zip(&ids) {
        let memory = if depth == 0 {
            parsed.root_attached[a].memory
        } else {
            levels[depth - 1].attached[a].memory
        };
        nodes.push((id, Vec::new(), Some(memory.unwrap_or(DEFAULT_NUMA_MEMORY))));
        if a == 0 {
            let span = n_pu / widths[depth];
            for slot in &mut node_of_cpu[j * span..(j + 1) * span] {
                // Deeper objects win: they are visited before their ancestors.
                if slot.is_none_or(|(d, _)| d < depth) {
                    *slot = Some((depth, (nodes.len() - 1) as u32));
                }
            }
        }
    }
    for (i, slot) in node_of_cpu.iter().enumerate() {
        if let Some((_, n)) = slot {
            nodes[*n as usize].1.push(cpu_ids[i] as usize);
        }
    }
    for (id, cpus, memory) in nodes {
        b.add_node(id, cpus.into_iter().collect::<CompactMask>(), memory);
    }
    Ok(())
}

/// Post-order walk: an object's attached nodes come after its children's.
fn walk_attached(
    depth: usize,
    j: usize,
    levels: &[LevelSpec],
    root_attached: usize,
    order: &mut Vec<(usize, usize, usize)>,
) {
    if depth < levels.len() {
        let arity = levels[depth].arity as usize;
        for c in 0..arity {
            walk_attached(depth + 1, j * arity + c, levels, root_attached, order);
        }
    }
    let n = if depth == 0 {
        root_attached
    } else {
        levels[depth - 1].attached.len()
    };
    order.extend((0..n).map(|a| (depth, j, a)));
}

/// Describes a topology as a synthetic string, when it is regular enough: every
/// CPU online and known, every object of a level with the same number of children,
/// caches of one level and kind all the same size, levels nested. PU numbering
/// other than hwloc's depth-first order is written as `pu:N(indexes=...)`; other
/// levels' ids as `indexes=` when they are not 0, 1, 2... Cache line sizes and
/// associativities, CPU kinds and distances are not expressible and are dropped.
pub fn write(topology: &Topology) -> Result<String, Error> {
    write_items(topology)
        .map(|items| items.join(" "))
        .map_err(|m| Error::new("synthetic export", m))
}

/// The phases of [`write`]: candidate levels, each a partition of the CPUs,
/// ordered from fewest to most objects and numbered depth-first; then one
/// item per level, each checked to nest evenly in the one above; then the PUs.
fn write_items(topology: &Topology) -> Result<Vec<String>, String> {
    if *topology.online() != topology.known() || *topology.possible() != topology.known() {
        return Err(
            "only topologies whose possible CPUs are all known and online can be described".into(),
        );
    }
    let all = topology.known();
    let n = all.weight();
    if n == 0 {
        return Err("no CPUs".into());
    }
    let mut cands = cpu_level_candidates(topology)?;
    cands.extend(numa_candidate(topology)?);
    cands.extend(cache_candidates(topology));
    for c in &cands {
        check_partition(c, &all, n)?;
    }
    cands.sort_by_key(|c| (c.objects.len(), c.rank));
    let max_id = topology.cpus().last().map_or(0, |c| c.id as usize);
    let index_at = number_depth_first(&mut cands, max_id);
    let mut items: Vec<String> = Vec::new();
    let mut prev_count = 1usize;
    for (k, c) in cands.iter().enumerate() {
        let count = c.objects.len();
        if count % prev_count != 0 {
            return Err(format!(
                "{} {} objects cannot be spread evenly over {prev_count} parents",
                count,
                c.kind.hwloc_name()
            ));
        }
        let arity = count / prev_count;
        if k > 0 {
            check_children(&cands[k - 1], c, &index_at[k - 1], arity)?;
        }
        items.push(level_item(c, arity));
        prev_count = count;
    }
    items.push(pu_item(&all, &index_at, n / prev_count));
    // A single NUMA node covering the machine is what hwloc adds by default.
    Ok(items)
}

/// A candidate level of the written description: its hwloc kind, a tie-break
/// rank among levels with as many objects, its objects (OS id, CPUs), and
/// the size attribute shared by all of them, if any.
struct Cand {
    kind: Kind,
    rank: u8,
    objects: Vec<(Option<u32>, CompactMask)>,
    size: Option<u64>,
}

/// The model's CPU levels (package, die, cluster as a group, core).
fn cpu_level_candidates(topology: &Topology) -> Result<Vec<Cand>, String> {
    let mut cands = Vec::new();
    for level in topology.levels() {
        let (kind, rank) = match level.kind {
            LevelKind::Package => (Kind::Package, 0),
            LevelKind::Die => (Kind::Die, 2),
            LevelKind::Cluster => (Kind::Group, 3),
            LevelKind::Core => (Kind::Core, 20),
            LevelKind::BigCore => return Err("POWER big cores cannot be described".into()),
        };
        cands.push(Cand {
            kind,
            rank,
            objects: level
                .groups
                .iter()
                .map(|g| (g.os_id, g.cpus.clone()))
                .collect(),
            size: None,
        });
    }
    Ok(cands)
}

/// The NUMA nodes as a level, with one `memory=` for all nodes; left out when
/// they differ (hwloc's default then applies), as the structure is what a
/// synthetic string describes.
fn numa_candidate(topology: &Topology) -> Result<Option<Cand>, String> {
    let nodes = topology.nodes();
    if nodes.is_empty() {
        return Ok(None);
    }
    if nodes.iter().any(|nd| nd.cpus.is_empty()) {
        return Err("memory-only NUMA nodes cannot be described".into());
    }
    let mems: Vec<Option<u64>> = nodes.iter().map(|nd| nd.memory_bytes).collect();
    let uniform = mems.iter().all(|m| *m == mems[0]);
    Ok(Some(Cand {
        kind: Kind::Numa,
        rank: 1,
        objects: nodes
            .iter()
            .map(|nd| (Some(nd.id), nd.cpus.clone()))
            .collect(),
        size: if uniform { mems[0] } else { None },
    }))
}

/// One level per cache level and kind, outer caches first and data before
/// instruction (hwloc's L1d above L1i); sizes that differ between instances
/// are left out, like NUMA memory.
fn cache_candidates(topology: &Topology) -> Vec<Cand> {
    let mut cache_kinds: Vec<(u8, CacheKind)> = topology
        .caches()
        .iter()
        .map(|c| (c.level, c.kind))
        .collect();
    cache_kinds.sort();
    cache_kinds.dedup();
    cache_kinds
        .into_iter()
        .map(|(level, kind)| {
            let instances: Vec<&Cache> = topology
                .caches()
                .iter()
                .filter(|c| c.level == level && c.kind == kind)
                .collect();
            let size = instances[0].size_bytes;
            let size = instances
                .iter()
                .all(|c| c.size_bytes == size)
                .then_some(size)
                .flatten();
            let rank = 10 + (5 - level.min(5)) * 2 + u8::from(kind == CacheKind::Instruction);
            Cand {
                kind: Kind::Cache { level, kind },
                rank,
                objects: instances.iter().map(|c| (None, c.cpus.clone())).collect(),
                size,
            }
        })
        .collect()
}

/// Each level must cover every CPU exactly once.
fn check_partition(c: &Cand, all: &CpuMask, n: usize) -> Result<(), String> {
    let mut union = CpuMask::new();
    let mut total = 0;
    for (_, m) in &c.objects {
        total += m.weight();
        union.or_assign(m);
    }
    if union != *all || total != n {
        return Err(format!(
            "the {} objects do not cover every CPU exactly once",
            c.kind.hwloc_name()
        ));
    }
    Ok(())
}

/// Sorts each level's objects in hwloc's logical (depth-first) order: by
/// parent, then first CPU. Returns `index_at[k][cpu]`, the logical index of
/// the level-k object holding `cpu`.
fn number_depth_first(cands: &mut [Cand], max_id: usize) -> Vec<Vec<u32>> {
    let mut index_at: Vec<Vec<u32>> = Vec::with_capacity(cands.len());
    for c in cands.iter_mut() {
        let parent_of = |m: &CompactMask| -> u32 {
            let first = m.first().unwrap_or(0);
            index_at.last().map_or(0, |idx| idx[first])
        };
        c.objects.sort_by_key(|(_, m)| (parent_of(m), m.first()));
        let mut idx = vec![u32::MAX; max_id + 1];
        for (j, (_, m)) in c.objects.iter().enumerate() {
            for cpu in m.iter() {
                idx[cpu] = j as u32;
            }
        }
        index_at.push(idx);
    }
    index_at
}

/// Every object of `c` lies in one object of `parent` (numbered by
/// `parent_index`), and every parent holds `arity` of them.
fn check_children(
    parent: &Cand,
    c: &Cand,
    parent_index: &[u32],
    arity: usize,
) -> Result<(), String> {
    let mut per_parent = vec![0usize; parent.objects.len()];
    for (_, m) in &c.objects {
        let first = m.first().unwrap_or(0);
        let p = parent_index[first];
        if m.iter().any(|cpu| parent_index[cpu] != p) {
            return Err(format!(
                "{} objects are not nested in {} objects",
                c.kind.hwloc_name(),
                parent.kind.hwloc_name()
            ));
        }
        per_parent[p as usize] += 1;
    }
    if per_parent.iter().any(|&p| p != arity) {
        return Err(format!(
            "{} objects do not all have the same number of {} children",
            parent.kind.hwloc_name(),
            c.kind.hwloc_name()
        ));
    }
    Ok(())
}

/// `name:arity(attrs)`: a cache's `size=`, the nodes' `memory=`, and other
/// levels' `indexes=` when their ids are known and not 0, 1, 2...
fn level_item(c: &Cand, arity: usize) -> String {
    let mut attrs: Vec<String> = Vec::new();
    match (c.kind, c.size) {
        (Kind::Cache { .. }, Some(s)) => attrs.push(format!("size={s}")),
        (Kind::Numa, Some(s)) => attrs.push(format!("memory={s}")),
        _ => {}
    }
    if !matches!(c.kind, Kind::Cache { .. }) {
        let ids: Option<Vec<u32>> = c.objects.iter().map(|(id, _)| *id).collect();
        // Unknown ids (any None): let the reader number them.
        if let Some(ids) = ids {
            if ids.iter().enumerate().any(|(j, &id)| id != j as u32) {
                let list: Vec<String> = ids.iter().map(|id| id.to_string()).collect();
                attrs.push(format!("indexes={}", list.join(",")));
            }
        }
    }
    let name = match c.kind {
        Kind::Cache { level, kind } => format!("L{level}{}", kind.suffix()),
        Kind::Numa => "NUMANode".into(),
        other => other.hwloc_name(),
    };
    if attrs.is_empty() {
        format!("{name}:{arity}")
    } else {
        format!("{name}:{arity}({})", attrs.join(" "))
    }
}

/// The PUs, in depth-first order (sorted by the object index at every
/// level); `indexes=` when that order is not 0, 1, 2...
fn pu_item(all: &CpuMask, index_at: &[Vec<u32>], arity: usize) -> String {
    let mut cpus: Vec<usize> = all.iter().collect();
    cpus.sort_by(|&a, &b| {
        index_at
            .iter()
            .map(|idx| idx[a].cmp(&idx[b]))
            .find(|o| o.is_ne())
            .unwrap_or(a.cmp(&b))
    });
    if cpus.iter().enumerate().all(|(i, &c)| i == c) {
        format!("PU:{arity}")
    } else {
        let list: Vec<String> = cpus.iter().map(|c| c.to_string()).collect();
        format!("PU:{arity}(indexes={})", list.join(","))
    }
}
