//! hwloc XML, read (v1, v2 and v3 files) and written (v2, which every hwloc
//! since 2.0 imports).
//!
//! # Reading
//!
//! The object tree is read with quick-xml and mapped onto the model:
//!
//! - `PU` → a CPU whose number is the PU's `os_index` (its cpuset's bit when the
//!   index is missing). hwloc only lists online PUs; the root's
//!   `complete_cpuset` adds the offline ones to the possible (and present) set.
//! - `Package` (v1: `Socket`) → [`LevelKind::Package`], `Die` →
//!   [`LevelKind::Die`], `Core` → [`LevelKind::Core`], with the objects'
//!   `os_index` as group ids where they are unique within their parents, else
//!   hwloc's logical index. No package: every CPU in package 0; a PU outside any
//!   core is its own core, which has no OS index (`os_id` `None`).
//! - `Group` inside a package or die → [`LevelKind::Cluster`] (the innermost one
//!   when groups nest), except hwloc's helper groups (kinds 900 distances,
//!   1000 I/O, 1001 memory), which describe no CPU grouping. Groups above the
//!   packages are dropped: the model has no level there.
//! - `L1Cache`..`L5Cache`, `L1iCache`..`L3iCache` (v1: `Cache`) → [`Cache`] with
//!   `depth`, `cache_type` (0 unified, 1 data, 2 instruction), `cache_size`,
//!   `cache_linesize` (0 = unknown) and `cache_associativity` (0 = unknown,
//!   -1 = fully associative, stored as 0 as the model says). Memory-side caches
//!   (`MemCache`) are not modelled.
//! - `NUMANode` → a node (`os_index`, `local_memory`). hwloc gives a NUMA node
//!   the cpuset of the object it is attached to, so nodes may share CPUs (DRAM +
//!   HBM, CXL, GPU memory); Linux puts each CPU in one node, so a CPU goes to the
//!   node with the smallest cpuset containing it, the first in document order
//!   among equals; the others are memory-only. Node cpusets that overlap without
//!   nesting cannot come from hwloc and are an error.
//! - `distances2` of type `NUMANode` (latency, not bandwidth; `os` or `gp`
//!   indexing) → the distance matrix; v1 `distances` over the NUMA level too.
//!   Every NUMA `distances2` must have `nbobjs` indexes and nbobjs² values and
//!   name existing nodes, each once, or the file is refused naming the
//!   element's line (hwloc 2.9 drops such a matrix silently). One over a subset
//!   of the nodes (left by restricting a topology) is valid but cannot fill the
//!   model's matrix and is not used. Other distance matrices (packages, cores,
//!   PUs, heterogeneous) are ignored.
//! - `cpukind` → core kinds: the name is the `CoreType` info (IntelAtom,
//!   IntelCore...) or `kind<N>`, the efficiency `forced_efficiency`;
//!   `LinuxCapacity` infos become CPU capacities.
//! - Infos: `Architecture` → arch, `CPUModel` → model name.
//! - I/O and Misc objects are skipped with their children.
//!
//! Errors name the line: malformed XML, an unsupported version, cpusets or PU
//! numbers beyond [`MAX_CPUS`], duplicate PUs, unknown object types.
//!
//! # Writing
//!
//! [`write`] builds the hwloc tree from the model by cpuset inclusion (machine,
//! package, die, cluster as a `Group` of hwloc's Linux-cluster kind marked
//! `dont_merge` so hwloc keeps it, caches, core, PU; NUMA nodes attached to
//! the object with their exact cpuset, under an added memory `Group` if none
//! has it, CPU-less nodes under an empty group) and prints XML v2 with the
//! NUMA latency matrix and CPU kinds. Only online CPUs become PUs, as in hwloc;
//! the offline ones are in the machine's `complete_cpuset`. An object that
//! straddles others (a cache shared across packages) cannot be in a tree and is
//! left out. The tests load the output in lstopo 2.9 for every corpus topology.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;
use topology::{
    Arch, Cache, CacheKind, CoreKind, CpuMask, CpuSpec, LevelKind, Topology, TopologyBuilder,
    MAX_CPUS,
};

use crate::Error;

// hwloc group kinds that are helpers rather than CPU groupings.
const GROUP_KIND_DISTANCE: u32 = 900;
const GROUP_KIND_IO: u32 = 1000;
const GROUP_KIND_MEMORY: u32 = 1001;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ObjType {
    Machine,
    Package,
    Die,
    Group,
    Numa,
    Cache,
    MemCache,
    Core,
    Pu,
    /// I/O and Misc objects: skipped.
    Ignored,
}

fn obj_type(name: &str) -> Option<(ObjType, Option<(u8, CacheKind)>)> {
    let t = match name {
        "Machine" | "System" => ObjType::Machine,
        "Package" | "Socket" => ObjType::Package,
        "Die" => ObjType::Die,
        "Group" => ObjType::Group,
        "NUMANode" => ObjType::Numa,
        "Core" => ObjType::Core,
        "PU" => ObjType::Pu,
        "Cache" => ObjType::Cache,
        "MemCache" => ObjType::MemCache,
        "Misc" | "Bridge" | "PCIDev" | "OSDev" => ObjType::Ignored,
        _ => {
            // L<n>Cache, L<n>iCache
            let rest = name.strip_prefix('L')?.strip_suffix("Cache")?;
            let (digits, kind) = match rest.strip_suffix('i') {
                Some(d) => (d, CacheKind::Instruction),
                None => (rest, CacheKind::Unified),
            };
            let level: u8 = digits.parse().ok()?;
            if !(1..=5).contains(&level) {
                return None;
            }
            return Some((ObjType::Cache, Some((level, kind))));
        }
    };
    Some((t, None))
}

#[derive(Debug)]
struct RawObj {
    ty: ObjType,
    os_index: Option<u32>,
    cpuset: Option<Bits>,
    gp_index: Option<u64>,
    group_kind: Option<u32>,
    cache: Option<(u8, CacheKind)>,
    size: Option<u64>,
    line_size: Option<u32>,
    assoc: Option<i64>,
    parent: Option<usize>,
    depth: usize,
    /// Byte offset of the element, turned into a line only for errors.
    pos: usize,
}

#[derive(Debug, Default)]
struct Distances {
    obj_type: String,
    kind: u64,
    name: String,
    gp_indexing: bool,
    /// The `nbobjs` attribute, checked against the `<indexes>` listed.
    nbobjs: Option<usize>,
    indexes: Vec<u64>,
    values: Vec<u64>,
    pos: usize,
}

#[derive(Debug, Default)]
struct V1Distances {
    depth: usize,
    base: f64,
    values: Vec<f64>,
    pos: usize,
}

#[derive(Debug, Default)]
struct RawKind {
    cpuset: CpuMask,
    efficiency: Option<u32>,
    core_type: Option<String>,
    capacity: Option<u32>,
}

/// Which text the reader is collecting.
#[derive(Clone, Copy, PartialEq, Eq)]
enum TextTarget {
    None,
    Indexes,
    Values,
}

/// The 1-based line of a byte offset. Only errors need lines, so positions are
/// kept while reading and converted here.
fn line_of(text: &str, pos: usize) -> usize {
    let pos = pos.min(text.len());
    1 + text.as_bytes()[..pos]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
}

/// A cpuset as read: its non-zero 64-bit words. Objects are many and mostly
/// small (a PU has one bit), so they keep this instead of a 2 KiB [`CpuMask`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Bits(Vec<(u16, u64)>);

impl Bits {
    fn first(&self) -> Option<usize> {
        self.0
            .iter()
            .map(|&(w, v)| w as usize * 64 + v.trailing_zeros() as usize)
            .min()
    }

    fn to_mask(&self) -> CpuMask {
        let mut m = CpuMask::new();
        for &(w, v) in &self.0 {
            let mut v = v;
            while v != 0 {
                let bit = v.trailing_zeros() as usize;
                m.set(w as usize * 64 + bit);
                v &= v - 1;
            }
        }
        m
    }
}

/// Parses an hwloc bitmap: comma-separated 32-bit hex groups, most significant
/// first, each with `0x`; a leading `0xf...f` means all higher bits are set
/// (only roots' complete sets use it; the infinite part is ignored). hwloc
/// writes zero groups as nothing (`0x00000001,,0x0`).
fn parse_bitmap(text: &str) -> Result<Bits, String> {
    let mut words: Vec<(u16, u64)> = Vec::new();
    let trimmed = text.trim();
    let bytes = trimmed.as_bytes();
    // Groups from the least significant (last) one; a high PU's cpuset is mostly
    // empty groups, so this is a plain byte scan rather than a string split.
    let mut end = bytes.len();
    let mut index = 0usize;
    loop {
        let start = bytes[..end]
            .iter()
            .rposition(|&b| b == b',')
            .map_or(0, |p| p + 1);
        let g = trimmed[start..end].trim();
        if !g.is_empty() {
            let hex = g.strip_prefix("0x").unwrap_or(g);
            if hex == "f...f" {
                if start != 0 {
                    return Err(format!("bitmap '{text}': 0xf...f must come first"));
                }
            } else {
                let v = u32::from_str_radix(hex, 16)
                    .map_err(|_| format!("bitmap '{text}': invalid group '{g}'"))?;
                if v != 0 {
                    let top = index * 32 + 31 - v.leading_zeros() as usize;
                    if top >= MAX_CPUS {
                        return Err(format!(
                            "bitmap '{text}' has CPU {top}, beyond the supported maximum of {MAX_CPUS} CPUs"
                        ));
                    }
                    let word = (index / 2) as u16;
                    let value = (v as u64) << (32 * (index % 2));
                    match words.last_mut() {
                        Some((w, x)) if *w == word => *x |= value,
                        _ => words.push((word, value)),
                    }
                }
            }
        }
        if start == 0 {
            break;
        }
        end = start - 1;
        index += 1;
    }
    Ok(Bits(words))
}

/// An element's attributes: name and value (unescaped only when it has an
/// entity, which hwloc writes rarely: borrowing keeps reading allocation-light).
type Attrs<'a> = Vec<(&'a str, Cow<'a, str>)>;

fn attrs_of<'a>(e: &'a BytesStart<'a>) -> Result<Attrs<'a>, String> {
    let mut out = Vec::with_capacity(16);
    let mut iter = e.attributes();
    iter.with_checks(false);
    for a in iter {
        let a = a.map_err(|err| format!("malformed attribute: {err}"))?;
        let v = if a.value.contains('&') {
            Cow::Owned(
                a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                    .map_err(|err| format!("malformed attribute value: {err}"))?
                    .into_owned(),
            )
        } else {
            a.value
        };
        out.push((a.key.0, v));
    }
    Ok(out)
}

fn get<'a>(attrs: &'a [(&str, Cow<'_, str>)], key: &str) -> Option<&'a str> {
    attrs
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v.as_ref())
}

fn num<T: std::str::FromStr>(
    attrs: &[(&str, Cow<'_, str>)],
    key: &str,
) -> Result<Option<T>, String> {
    match get(attrs, key) {
        None => Ok(None),
        Some(v) => v
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| format!("attribute {key}=\"{v}\" is not a valid number")),
    }
}

/// Everything read from the file before mapping.
#[derive(Default)]
struct Raw {
    objects: Vec<RawObj>,
    root_infos: Vec<(String, String)>,
    package_models: Vec<String>,
    distances: Vec<Distances>,
    v1_distances: Vec<V1Distances>,
    kinds: Vec<RawKind>,
}

/// Reads hwloc XML; `source` names the input in errors.
pub fn read(text: &str, source: &str) -> Result<Topology, Error> {
    let raw = parse_raw(text, source)?;
    map_raw(raw, text, source)
}

/// Reads an hwloc XML file, refusing FIFOs, devices and files past
/// [`crate::limits::XML_FILE_LIMIT`] before reading them.
pub fn read_path(path: &std::path::Path) -> Result<Topology, Error> {
    let limit = crate::limits::XML_FILE_LIMIT;
    let text = crate::limits::read_text_input(path, limit, "hwloc XML")?;
    read(&text, &path.display().to_string())
}

fn parse_raw(text: &str, source: &str) -> Result<Raw, Error> {
    let mut reader = Reader::from_str(text);
    reader.config_mut().trim_text(true);
    let mut raw = Raw::default();
    let mut stack: Vec<usize> = Vec::new();
    // Elements opened (by name) to check structure and report truncation.
    let mut open: Vec<(Vec<u8>, usize)> = Vec::new();
    let mut seen_topology = false;
    let mut dist: Option<Distances> = None;
    let mut v1dist: Option<V1Distances> = None;
    let mut kind: Option<RawKind> = None;
    let mut target = TextTarget::None;
    let mut ignored_depth = 0usize;
    loop {
        let start = reader.buffer_position() as usize;
        let event = match reader.read_event() {
            Ok(e) => e,
            Err(err) => {
                let line = line_of(text, reader.error_position() as usize);
                return Err(Error::at_line(
                    source,
                    line,
                    format!("malformed XML: {err}"),
                ));
            }
        };
        // The element starts after any whitespace skipped before it.
        let skip = text.as_bytes()[start.min(text.len())..]
            .iter()
            .take_while(|b| b.is_ascii_whitespace())
            .count();
        let pos = start + skip;
        let err = |m: String| Error::at_line(source, line_of(text, pos), m);
        match event {
            Event::Start(ref e) | Event::Empty(ref e) => {
                let is_empty = matches!(event, Event::Empty(_));
                let name = e.name().as_ref().as_bytes().to_vec();
                let attrs = attrs_of(e).map_err(err)?;
                if !seen_topology {
                    if name != b"topology" {
                        return Err(err(format!(
                            "expected <topology> as the root element, found <{}>",
                            String::from_utf8_lossy(&name)
                        )));
                    }
                    seen_topology = true;
                    if let Some(v) = get(&attrs, "version") {
                        let major = v.split('.').next().unwrap_or("");
                        if !matches!(major, "1" | "2" | "3") {
                            return Err(err(format!(
                                "unsupported hwloc XML version {v} (supported: 1.x, 2.x, 3.x)"
                            )));
                        }
                    }
                    if !is_empty {
                        open.push((name, pos));
                    }
                    continue;
                }
                if open.is_empty() {
                    return Err(err("content after the closing </topology>".into()));
                }
                if ignored_depth > 0 {
                    if !is_empty {
                        ignored_depth += 1;
                        open.push((name, pos));
                    }
                    continue;
                }
                match name.as_slice() {
                    b"object" => {
                        let ty_name = get(&attrs, "type")
                            .ok_or_else(|| err("<object> without a type attribute".into()))?;
                        let (mut ty, mut cache) = obj_type(ty_name)
                            .ok_or_else(|| err(format!("unknown object type '{ty_name}'")))?;
                        if ty == ObjType::Ignored {
                            if !is_empty {
                                ignored_depth = 1;
                                open.push((name, pos));
                            }
                            continue;
                        }
                        if ty == ObjType::Cache {
                            let depth: Option<u8> = num(&attrs, "depth").map_err(err)?;
                            let ctype: Option<u8> = num(&attrs, "cache_type").map_err(err)?;
                            let (level, mut k) = match (cache, depth) {
                                (Some((l, k)), _) => (l, k),
                                (None, Some(d)) => (d, CacheKind::Unified),
                                (None, None) => {
                                    return Err(err("cache without a depth attribute".into()))
                                }
                            };
                            if !(1..=5).contains(&level) {
                                return Err(err(format!("cache depth {level} out of 1..5")));
                            }
                            k = match ctype {
                                Some(1) => CacheKind::Data,
                                Some(2) => CacheKind::Instruction,
                                Some(0) => CacheKind::Unified,
                                Some(other) => {
                                    return Err(err(format!("unknown cache_type {other}")))
                                }
                                None => k,
                            };
                            cache = Some((level, k));
                        }
                        let cpuset = match get(&attrs, "cpuset") {
                            Some(c) => Some(parse_bitmap(c).map_err(err)?),
                            None => None,
                        };
                        if ty == ObjType::Machine && stack.is_empty() {
                            // The root: its complete set gives the offline CPUs.
                            if let Some(c) = get(&attrs, "complete_cpuset") {
                                let complete = parse_bitmap(c).map_err(err)?;
                                raw.root_infos.push(("__complete".into(), String::new()));
                                raw.objects.push(RawObj {
                                    ty: ObjType::Machine,
                                    os_index: None,
                                    cpuset: Some(complete),
                                    gp_index: None,
                                    group_kind: None,
                                    cache: None,
                                    size: None,
                                    line_size: None,
                                    assoc: None,
                                    parent: None,
                                    depth: 0,
                                    pos,
                                });
                                if !is_empty {
                                    stack.push(raw.objects.len() - 1);
                                    open.push((name, pos));
                                }
                                continue;
                            }
                        } else if ty == ObjType::Machine {
                            ty = ObjType::Group;
                        }
                        let size = num::<u64>(&attrs, "cache_size")
                            .map_err(err)?
                            .or(num::<u64>(&attrs, "local_memory").map_err(err)?);
                        raw.objects.push(RawObj {
                            ty,
                            os_index: num(&attrs, "os_index").map_err(err)?,
                            cpuset,
                            gp_index: num(&attrs, "gp_index").map_err(err)?,
                            group_kind: num(&attrs, "kind").map_err(err)?,
                            cache,
                            size,
                            line_size: num(&attrs, "cache_linesize").map_err(err)?,
                            assoc: num(&attrs, "cache_associativity").map_err(err)?,
                            parent: stack.last().copied(),
                            depth: stack.len(),
                            pos,
                        });
                        if !is_empty {
                            stack.push(raw.objects.len() - 1);
                            open.push((name, pos));
                        }
                    }
                    b"info" => {
                        let (Some(n), Some(v)) = (get(&attrs, "name"), get(&attrs, "value")) else {
                            if !is_empty {
                                open.push((name, pos));
                            }
                            continue;
                        };
                        if let Some(k) = kind.as_mut() {
                            match n {
                                "CoreType" => k.core_type = Some(v.to_string()),
                                "LinuxCapacity" => k.capacity = v.trim().parse().ok(),
                                _ => {}
                            }
                        } else {
                            let owner = stack.last().map(|&i| raw.objects[i].ty);
                            match (owner, n) {
                                (Some(ObjType::Package), "CPUModel") => {
                                    raw.package_models.push(v.to_string())
                                }
                                (None | Some(ObjType::Machine), _) => {
                                    raw.root_infos.push((n.to_string(), v.to_string()))
                                }
                                _ => {}
                            }
                        }
                        if !is_empty {
                            open.push((name, pos));
                        }
                    }
                    b"distances2" => {
                        dist = Some(Distances {
                            obj_type: get(&attrs, "type").unwrap_or("").to_string(),
                            kind: num(&attrs, "kind").map_err(err)?.unwrap_or(0),
                            name: get(&attrs, "name").unwrap_or("").to_string(),
                            gp_indexing: get(&attrs, "indexing") == Some("gp"),
                            nbobjs: num(&attrs, "nbobjs").map_err(err)?,
                            pos,
                            ..Default::default()
                        });
                        if !is_empty {
                            open.push((name, pos));
                        } else {
                            raw.distances.extend(dist.take());
                        }
                    }
                    b"indexes" | b"u64values" if dist.is_some() => {
                        target = if name == b"indexes" {
                            TextTarget::Indexes
                        } else {
                            TextTarget::Values
                        };
                        if !is_empty {
                            open.push((name, pos));
                        } else {
                            target = TextTarget::None;
                        }
                    }
                    b"distances" => {
                        // hwloc v1: latencies between the objects at one depth.
                        v1dist = Some(V1Distances {
                            depth: num(&attrs, "relative_depth").map_err(err)?.unwrap_or(0),
                            base: num(&attrs, "latency_base").map_err(err)?.unwrap_or(1.0),
                            values: Vec::new(),
                            pos,
                        });
                        if !is_empty {
                            open.push((name, pos));
                        } else {
                            raw.v1_distances.extend(v1dist.take());
                        }
                    }
                    b"latency" => {
                        if let Some(d) = v1dist.as_mut() {
                            let v: f64 = num(&attrs, "value").map_err(err)?.unwrap_or(0.0);
                            d.values.push(v);
                        }
                        if !is_empty {
                            open.push((name, pos));
                        }
                    }
                    b"cpukind" => {
                        let cpuset = parse_bitmap(get(&attrs, "cpuset").unwrap_or("0x0"))
                            .map_err(err)?
                            .to_mask();
                        let k = RawKind {
                            cpuset,
                            efficiency: num(&attrs, "forced_efficiency").map_err(err)?,
                            ..Default::default()
                        };
                        if is_empty {
                            raw.kinds.push(k);
                        } else {
                            kind = Some(k);
                            open.push((name, pos));
                        }
                    }
                    _ => {
                        if !is_empty {
                            open.push((name, pos));
                        }
                    }
                }
            }
            Event::End(ref e) => {
                let name = e.name().as_ref().as_bytes().to_vec();
                match open.pop() {
                    Some((n, _)) if n == name => {}
                    Some((n, l)) => {
                        return Err(err(format!(
                            "</{}> closes <{}> opened at line {}",
                            String::from_utf8_lossy(&name),
                            String::from_utf8_lossy(&n),
                            line_of(text, l)
                        )))
                    }
                    None => {
                        return Err(err(format!(
                            "unexpected </{}>",
                            String::from_utf8_lossy(&name)
                        )))
                    }
                }
                if ignored_depth > 0 {
                    ignored_depth -= 1;
                    continue;
                }
                match name.as_slice() {
                    b"object" => {
                        stack.pop();
                    }
                    b"distances2" => raw.distances.extend(dist.take()),
                    b"indexes" | b"u64values" => target = TextTarget::None,
                    b"distances" => raw.v1_distances.extend(v1dist.take()),
                    b"cpukind" => raw.kinds.extend(kind.take()),
                    _ => {}
                }
            }
            Event::Text(ref t) => {
                if target == TextTarget::None || ignored_depth > 0 {
                    continue;
                }
                let s: &str = t.as_ref();
                let d = dist.as_mut().expect("target implies distances");
                for word in s.split_whitespace() {
                    let v: u64 = word
                        .parse()
                        .map_err(|_| err(format!("distance value '{word}' is not a number")))?;
                    match target {
                        TextTarget::Indexes => d.indexes.push(v),
                        TextTarget::Values => d.values.push(v),
                        TextTarget::None => {}
                    }
                }
            }
            Event::Eof => {
                if let Some((n, l)) = open.last() {
                    return Err(Error::at_line(
                        source,
                        line_of(text, text.len()),
                        format!(
                            "unexpected end of file: <{}> opened at line {} is not closed",
                            String::from_utf8_lossy(n),
                            line_of(text, *l)
                        ),
                    ));
                }
                if !seen_topology {
                    return Err(Error::new(source, "no <topology> element: not hwloc XML"));
                }
                break;
            }
            _ => {}
        }
    }
    Ok(raw)
}

fn map_raw(raw: Raw, text: &str, source: &str) -> Result<Topology, Error> {
    let objs = &raw.objects;
    let at = |i: usize, m: String| Error::at_line(source, line_of(text, objs[i].pos), m);
    // PUs.
    let mut pu_ids: Vec<(usize, u32)> = Vec::new();
    let mut seen: HashMap<u32, usize> = HashMap::new();
    for (i, o) in objs.iter().enumerate() {
        if o.ty != ObjType::Pu {
            continue;
        }
        let id = match (o.os_index, o.cpuset.as_ref().and_then(|c| c.first())) {
            (Some(id), _) => id,
            (None, Some(first)) => first as u32,
            (None, None) => return Err(at(i, "PU without os_index or cpuset".into())),
        };
        if id as usize >= MAX_CPUS {
            return Err(at(
                i,
                format!("PU P#{id} is beyond the supported maximum of {MAX_CPUS} CPUs"),
            ));
        }
        if let Some(&prev) = seen.get(&id) {
            return Err(at(
                i,
                format!(
                    "PU P#{id} is listed twice (first at line {})",
                    line_of(text, objs[prev].pos)
                ),
            ));
        }
        seen.insert(id, i);
        pu_ids.push((i, id));
    }
    if pu_ids.is_empty() {
        return Err(Error::new(
            source,
            "no PU objects: the topology has no CPUs",
        ));
    }
    let known: CpuMask = pu_ids.iter().map(|&(_, id)| id as usize).collect();

    let ancestor = |mut i: usize, want: &dyn Fn(&RawObj) -> bool| -> Option<usize> {
        while let Some(p) = objs[i].parent {
            if want(&objs[p]) {
                return Some(p);
            }
            i = p;
        }
        None
    };
    let is_cluster_group = |o: &RawObj| {
        o.ty == ObjType::Group
            && !matches!(
                o.group_kind,
                Some(GROUP_KIND_DISTANCE | GROUP_KIND_IO | GROUP_KIND_MEMORY)
            )
    };
    // Per PU: (package, die, cluster, core) objects.
    struct Path {
        pkg: Option<usize>,
        die: Option<usize>,
        cluster: Option<usize>,
        core: Option<usize>,
    }
    let paths: Vec<Path> = pu_ids
        .iter()
        .map(|&(i, _)| {
            let pkg = ancestor(i, &|o| o.ty == ObjType::Package);
            let die = ancestor(i, &|o| o.ty == ObjType::Die);
            let core = ancestor(i, &|o| o.ty == ObjType::Core);
            // The innermost helper-free group that is inside the package or die.
            let outer = die.or(pkg);
            let cluster = outer.and_then(|outer| {
                let g = ancestor(i, &|o| is_cluster_group(o))?;
                let inside = ancestor(g, &|_| true).is_some()
                    && std::iter::successors(objs[g].parent, |&p| objs[p].parent)
                        .any(|p| p == outer);
                inside.then_some(g)
            });
            Path {
                pkg,
                die,
                cluster,
                core,
            }
        })
        .collect();
    // Logical index of every object within its type, in document order.
    let mut logical = vec![0u32; objs.len()];
    let mut counters: HashMap<(u8, bool), u32> = HashMap::new();
    for (i, o) in objs.iter().enumerate() {
        let key = (o.ty as u8, is_cluster_group(o));
        let c = counters.entry(key).or_insert(0);
        logical[i] = *c;
        *c += 1;
    }
    // Group ids: os_index where unique within the parents' ids, else logical.
    let logical = &logical;
    let id_choice = |sel: &dyn Fn(&Path) -> Option<usize>,
                     parent_key: &dyn Fn(&Path) -> Vec<u32>| {
        let mut keys: HashSet<(Vec<u32>, u32)> = HashSet::new();
        let mut objects: HashSet<usize> = HashSet::new();
        let mut ok = true;
        for p in &paths {
            if let Some(o) = sel(p) {
                if objects.insert(o) {
                    match objs[o].os_index {
                        Some(os) => ok &= keys.insert((parent_key(p), os)),
                        None => ok = false,
                    }
                }
            }
        }
        move |o: usize| {
            if ok {
                objs[o].os_index.unwrap_or(0)
            } else {
                logical[o]
            }
        }
    };
    let pkg_id = id_choice(&|p| p.pkg, &|_| vec![]);
    let die_id = id_choice(&|p| p.die, &|p| vec![p.pkg.map_or(0, &pkg_id)]);
    let cluster_id = id_choice(&|p| p.cluster, &|p| {
        vec![p.pkg.map_or(0, &pkg_id), p.die.map_or(0, &die_id)]
    });
    let core_id = id_choice(&|p| p.core, &|p| {
        vec![
            p.pkg.map_or(0, &pkg_id),
            p.die.map_or(0, &die_id),
            p.cluster.map_or(0, &cluster_id),
        ]
    });

    let arch = raw
        .root_infos
        .iter()
        .find(|(n, _)| n == "Architecture")
        .map(|(_, v)| Arch::from_uname(v))
        .unwrap_or_else(|| Arch::Other("unknown".into()));
    let mut b = TopologyBuilder::new(arch);
    b.source(source.to_string());
    if let Some(m) = raw.package_models.first() {
        b.model_name(m.trim());
    }
    // CPU kinds.
    let mut kind_of: HashMap<u32, u16> = HashMap::new();
    let mut capacity_of: HashMap<u32, u32> = HashMap::new();
    for (n, k) in raw.kinds.iter().enumerate() {
        let idx = b.add_core_kind(CoreKind {
            name: k.core_type.clone().unwrap_or_else(|| format!("kind{n}")),
            efficiency: k.efficiency,
        });
        for cpu in k.cpuset.iter() {
            kind_of.insert(cpu as u32, idx);
            if let Some(c) = k.capacity {
                capacity_of.insert(cpu as u32, c);
            }
        }
    }
    // A PU outside any core is its own core. The builder needs a key that no
    // real core id takes; the core itself has no OS index.
    for (&(_, id), p) in pu_ids.iter().zip(&paths) {
        let mut spec = CpuSpec {
            id,
            hw_id: None,
            online: true,
            package: p.pkg.map_or(0, &pkg_id),
            die: p.die.map(&die_id),
            cluster: p.cluster.map(&cluster_id),
            big_core: None,
            core: p.core.map_or(0x8000_0000 | id, &core_id),
            node: None,
            kind: kind_of.get(&id).copied(),
            capacity: capacity_of.get(&id).copied(),
            os_ids: None,
        };
        if p.core.is_none() {
            spec.os_ids = Some([None, None, spec.cluster, spec.die, Some(spec.package)]);
        }
        b.add_cpu(spec);
    }
    let root = objs
        .first()
        .filter(|o| o.ty == ObjType::Machine && o.parent.is_none());
    if let Some(complete) = root.and_then(|r| r.cpuset.as_ref()).map(Bits::to_mask) {
        let possible = complete.or(&known);
        b.possible(possible);
        b.present(possible);
    }

    // NUMA nodes and the CPU → node rule.
    let numa: Vec<usize> = (0..objs.len())
        .filter(|&i| objs[i].ty == ObjType::Numa)
        .collect();
    let mut node_ids: Vec<u32> = Vec::with_capacity(numa.len());
    for (n, &i) in numa.iter().enumerate() {
        let id = objs[i].os_index.unwrap_or(n as u32);
        if let Some(prev) = numa[..n]
            .iter()
            .find(|&&j| objs[j].os_index.unwrap_or(u32::MAX) == id)
        {
            return Err(at(
                i,
                format!(
                    "NUMA node P#{id} is listed twice (first at line {})",
                    line_of(text, objs[*prev].pos)
                ),
            ));
        }
        node_ids.push(id);
    }
    let numa_sets: Vec<CpuMask> = numa
        .iter()
        .map(|&i| {
            objs[i]
                .cpuset
                .as_ref()
                .or_else(|| objs[i].parent.and_then(|p| objs[p].cpuset.as_ref()))
                .map(Bits::to_mask)
                .unwrap_or_default()
                .and(&known)
        })
        .collect();
    if let Some((a, c)) = overlapping_pair(&numa_sets) {
        let cpu = numa_sets[a].and(&numa_sets[c]).first().unwrap_or(0);
        return Err(at(
            numa[c],
            format!(
                "PU P#{cpu} is in NUMA nodes P#{} and P#{}, whose cpusets overlap \
                 without one containing the other",
                node_ids[a], node_ids[c]
            ),
        ));
    }
    let mut node_cpus = vec![CpuMask::new(); numa.len()];
    if !numa.is_empty() {
        // Smallest cpuset first; stable, so document order breaks ties.
        let mut order: Vec<usize> = (0..numa.len()).collect();
        order.sort_by_key(|&n| numa_sets[n].weight());
        let mut assigned = CpuMask::new();
        for n in order {
            let mine = numa_sets[n].and_not(&assigned);
            assigned.or_assign(&mine);
            node_cpus[n] = mine;
        }
    }
    for (n, &i) in numa.iter().enumerate() {
        b.add_node(node_ids[n], node_cpus[n], objs[i].size);
    }
    // Distances among the NUMA nodes (ordered by id in the model).
    if let Some(matrix) = numa_distances(&raw, objs, &numa, &node_ids, text, source)? {
        b.distances(matrix);
    }
    // Caches, added in the model's order so that the builder's sort of these
    // 2 KiB records finds them sorted already.
    let mut cache_objs: Vec<(u8, CacheKind, usize, usize)> = objs
        .iter()
        .enumerate()
        .filter(|(_, o)| o.ty == ObjType::Cache)
        .map(|(i, o)| {
            let (level, kind) = o.cache.expect("caches carry their level");
            let first = o
                .cpuset
                .as_ref()
                .and_then(Bits::first)
                .unwrap_or(usize::MAX);
            (level, kind, first, i)
        })
        .collect();
    cache_objs.sort_unstable();
    for &(_, _, _, i) in &cache_objs {
        let o = &objs[i];
        let (level, kind) = o.cache.expect("caches carry their level");
        let cpus = o
            .cpuset
            .as_ref()
            .ok_or_else(|| at(i, format!("L{level} cache without a cpuset")))?
            .to_mask()
            .and(&known);
        if cpus.is_empty() {
            // Every CPU of it is offline or outside the cgroup.
            continue;
        }
        b.add_cache(Cache {
            level,
            kind,
            size_bytes: o.size,
            line_bytes: o.line_size.filter(|&l| l != 0),
            ways: match o.assoc {
                None | Some(0) => None,
                Some(-1) => Some(0),
                Some(w) => u32::try_from(w).ok(),
            },
            cpus,
        });
    }
    b.finish().map_err(|e| Error::new(source, e.to_string()))
}

/// The NUMA latency matrix, row-major in increasing node-id order.
/// Two sets (in document order) that share a CPU without one containing the
/// other, if any: the sets must nest or be disjoint.
///
/// Sets are taken largest first while `owner[cpu]` remembers the last (so
/// smallest) set taken that holds the CPU. A new set nests in an earlier one
/// exactly when all its CPUs have the same owner; otherwise it and the owner
/// taken last among its CPUs' owners overlap without nesting. This costs the
/// sum of the set sizes, where comparing every pair of thousands of NUMA
/// nodes cost their count squared in 2 KiB mask operations.
fn overlapping_pair(sets: &[CpuMask]) -> Option<(usize, usize)> {
    let mut order: Vec<(usize, usize)> = sets.iter().map(|m| m.weight()).zip(0..).collect();
    order.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    // `owner[cpu]` = (rank in `order`, set index) of the last set taken holding it.
    let mut owner: std::collections::HashMap<usize, (usize, usize)> = Default::default();
    for (rank, &(_, s)) in order.iter().enumerate() {
        let mut owners = sets[s].iter().map(|c| owner.get(&c).copied());
        let first = owners.next().flatten();
        let mut deepest = first;
        let mut uniform = true;
        for o in owners {
            uniform &= o == first;
            deepest = deepest.max(o);
        }
        if !uniform {
            let (_, other) = deepest?;
            return Some((other.min(s), other.max(s)));
        }
        for c in sets[s].iter() {
            owner.insert(c, (rank, s));
        }
    }
    None
}

fn numa_distances(
    raw: &Raw,
    objs: &[RawObj],
    numa: &[usize],
    node_ids: &[u32],
    text: &str,
    source: &str,
) -> Result<Option<Vec<u32>>, Error> {
    let n = numa.len();
    // Every NUMA matrix must name existing nodes, each once: hwloc silently
    // drops such a matrix, which would hide a broken file behind "no distances".
    let mut checked: Vec<(&Distances, Vec<u32>)> = Vec::new();
    for d in raw.distances.iter().filter(|d| d.obj_type == "NUMANode") {
        let ids = distances2_node_ids(d, objs, numa, node_ids, text, source)?;
        checked.push((d, ids));
    }
    if n == 0 {
        return Ok(None);
    }
    let mut sorted: Vec<u32> = node_ids.to_vec();
    sorted.sort_unstable();
    let pos_of = |id: u32| sorted.binary_search(&id).ok();
    // hwloc kind bits: 4 = means latency, 8 = means bandwidth.
    let candidates = checked.iter().filter(|(d, _)| d.kind & 8 == 0);
    let chosen = candidates
        .clone()
        .find(|(d, _)| d.name == "NUMALatency")
        .or_else(|| candidates.clone().next());
    if let Some((d, ids)) = chosen {
        let err = |m: String| Error::at_line(source, line_of(text, d.pos), m);
        let k = ids.len();
        if k != n {
            // A matrix over a subset of the nodes (hwloc keeps those after
            // restricting a topology) cannot fill the model's.
            return Ok(None);
        }
        let mut matrix = vec![0u32; n * n];
        for (a, &ia) in ids.iter().enumerate() {
            for (c, &ic) in ids.iter().enumerate() {
                let (Some(pa), Some(pc)) = (pos_of(ia), pos_of(ic)) else {
                    return Err(err(format!(
                        "distances2 names NUMA node P#{} that does not exist",
                        if pos_of(ia).is_none() { ia } else { ic }
                    )));
                };
                let v = d.values[a * k + c];
                matrix[pa * n + pc] = u32::try_from(v)
                    .map_err(|_| err(format!("distance {v} does not fit 32 bits")))?;
            }
        }
        return Ok(Some(matrix));
    }
    // hwloc v1: a matrix over the objects at one depth, if those are the nodes.
    for d in &raw.v1_distances {
        let at_depth: Vec<usize> = (0..objs.len())
            .filter(|&i| objs[i].depth == d.depth)
            .collect();
        if at_depth.len() != n || at_depth.iter().any(|i| !numa.contains(i)) {
            continue;
        }
        if d.values.len() != n * n {
            return Err(Error::at_line(
                source,
                line_of(text, d.pos),
                format!("distances has {} values for {n} objects", d.values.len()),
            ));
        }
        let mut matrix = vec![0u32; n * n];
        for (a, ia) in at_depth.iter().enumerate() {
            for (c, ic) in at_depth.iter().enumerate() {
                let na = numa.iter().position(|x| x == ia).expect("checked");
                let nc = numa.iter().position(|x| x == ic).expect("checked");
                let (pa, pc) = (
                    pos_of(node_ids[na]).expect("known"),
                    pos_of(node_ids[nc]).expect("known"),
                );
                matrix[pa * n + pc] = (d.values[a * n + c] * d.base).round() as u32;
            }
        }
        return Ok(Some(matrix));
    }
    Ok(None)
}

/// The node ids a NUMA `<distances2>` names, in its order, after checking that
/// `nbobjs`, `<indexes>` and `<u64values>` agree, that every index names a
/// NUMA node of the file, and that none is named twice. Errors name the
/// element's line.
fn distances2_node_ids(
    d: &Distances,
    objs: &[RawObj],
    numa: &[usize],
    node_ids: &[u32],
    text: &str,
    source: &str,
) -> Result<Vec<u32>, Error> {
    let err = |m: String| Error::at_line(source, line_of(text, d.pos), m);
    let k = d.indexes.len();
    if let Some(nb) = d.nbobjs {
        if nb != k {
            return Err(err(format!(
                "distances2 has nbobjs=\"{nb}\" but lists {k} indexes"
            )));
        }
    }
    if d.values.len() != k * k {
        return Err(err(format!(
            "distances2 has {} values for {k} objects (expected {})",
            d.values.len(),
            k * k
        )));
    }
    if k > numa.len() {
        return Err(err(format!(
            "distances2 covers {k} NUMA nodes but the topology has {}",
            numa.len()
        )));
    }
    let mut ids: Vec<u32> = Vec::with_capacity(k);
    for &ix in &d.indexes {
        let id = if d.gp_indexing {
            numa.iter()
                .position(|&i| objs[i].gp_index == Some(ix))
                .map(|p| node_ids[p])
                .ok_or_else(|| err(format!("distances2 names unknown NUMA gp_index {ix}")))?
        } else {
            u32::try_from(ix)
                .ok()
                .filter(|id| node_ids.contains(id))
                .ok_or_else(|| {
                    err(format!(
                        "distances2 names NUMA node P#{ix}, which does not exist"
                    ))
                })?
        };
        if ids.contains(&id) {
            return Err(err(format!("distances2 names NUMA node P#{id} twice")));
        }
        ids.push(id);
    }
    Ok(ids)
}

// ---------------------------------------------------------------------------
// Writing

/// hwloc's bitmap text: 32-bit groups, most significant first; like hwloc, a
/// zero group is written as nothing (`0x00000001,,0x0`), which keeps the cpusets
/// of a 16384-CPU machine from filling the file with zeros.
fn bitmap(mask: &CpuMask) -> String {
    let Some(last) = mask.last() else {
        return "0x0".into();
    };
    let groups = last / 32 + 1;
    let words = mask.words();
    let mut s = String::with_capacity(16 + groups);
    for g in (0..groups).rev() {
        let word = words[g / 2];
        let v = if g % 2 == 0 {
            word as u32
        } else {
            (word >> 32) as u32
        };
        if g + 1 != groups {
            s.push(',');
        }
        if v != 0 {
            let _ = write!(s, "0x{v:08x}");
        } else if g == 0 {
            s.push_str("0x0");
        }
    }
    s
}

fn escape(text: &str) -> Cow<'_, str> {
    quick_xml::escape::escape(text)
}

#[derive(Debug)]
enum WKind {
    Package(Option<u32>),
    Die(Option<u32>),
    /// A group and its hwloc kind (222 Linux cluster, 1001 memory holder).
    Group(Option<u32>, u32),
    Cache(usize),
    Core(Option<u32>),
    Pu(u32),
}

struct WObj {
    kind: WKind,
    cpus: CpuMask,
    /// Position among objects of equal cpusets: outer first.
    rank: u8,
    children: Vec<usize>,
    numa: Vec<usize>,
}

/// Writes hwloc XML v2 that `lstopo --input` accepts.
pub fn write(topology: &Topology) -> String {
    let online: Vec<u32> = topology
        .cpus()
        .iter()
        .filter(|c| c.online)
        .map(|c| c.id)
        .collect();
    let online_mask: CpuMask = online.iter().map(|&c| c as usize).collect();
    let mut objs: Vec<WObj> = Vec::new();
    fn push(objs: &mut Vec<WObj>, online: &CpuMask, kind: WKind, cpus: CpuMask, rank: u8) {
        let cpus = cpus.and(online);
        if !cpus.is_empty() {
            objs.push(WObj {
                kind,
                cpus,
                rank,
                children: Vec::new(),
                numa: Vec::new(),
            });
        }
    }
    for level in topology.levels() {
        for g in &level.groups {
            let (kind, rank) = match level.kind {
                LevelKind::Package => (WKind::Package(g.os_id), 0),
                LevelKind::Die => (WKind::Die(g.os_id), 2),
                LevelKind::Cluster => (WKind::Group(g.os_id, 222), 4),
                LevelKind::BigCore => (WKind::Group(g.os_id, 0), 30),
                LevelKind::Core => (WKind::Core(g.os_id), 40),
            };
            push(&mut objs, &online_mask, kind, g.cpus, rank);
        }
    }
    for (i, c) in topology.caches().iter().enumerate() {
        let rank = 10
            + (5 - c.level.min(5)) * 3
            + if c.kind == CacheKind::Instruction {
                1
            } else {
                0
            };
        push(&mut objs, &online_mask, WKind::Cache(i), c.cpus, rank);
    }
    // NUMA nodes need an object with exactly their CPUs: add a group if none.
    // Objects are looked up by (first CPU, weight), so thousands of nodes do
    // not each compare their mask with every object.
    let mut by_shape: HashMap<(Option<usize>, usize), Vec<usize>> = HashMap::new();
    for (i, o) in objs.iter().enumerate() {
        by_shape
            .entry((o.cpus.first(), o.cpus.weight()))
            .or_default()
            .push(i);
    }
    for n in topology.nodes() {
        let cpus = n.cpus.and(&online_mask);
        if cpus.is_empty() || cpus == online_mask {
            continue;
        }
        let shape = (cpus.first(), cpus.weight());
        let same = by_shape.get(&shape).into_iter().flatten();
        if !same.clone().any(|&i| objs[i].cpus == cpus) {
            by_shape.entry(shape).or_default().push(objs.len());
            push(
                &mut objs,
                &online_mask,
                WKind::Group(None, GROUP_KIND_MEMORY),
                cpus,
                1,
            );
        }
    }
    for &id in &online {
        push(
            &mut objs,
            &online_mask,
            WKind::Pu(id),
            CpuMask::single(id as usize),
            50,
        );
    }
    // Insert by decreasing size: each object's parent is the innermost object so
    // far that holds its first CPU, if it holds all of its CPUs (else the object
    // cannot be placed in a tree and is left out).
    let mut order: Vec<usize> = (0..objs.len()).collect();
    order.sort_by_key(|&i| {
        (
            std::cmp::Reverse(objs[i].cpus.weight()),
            objs[i].rank,
            objs[i].cpus.first(),
        )
    });
    let max_id = online.iter().copied().max().unwrap_or(0) as usize;
    let mut innermost: Vec<usize> = vec![usize::MAX; max_id + 1];
    let mut parent_of: Vec<usize> = vec![usize::MAX; objs.len()];
    let mut roots: Vec<usize> = Vec::new();
    for &i in &order {
        let first = objs[i].cpus.first().unwrap_or(0);
        let parent = innermost[first];
        if parent != usize::MAX && !objs[i].cpus.is_subset(&objs[parent].cpus) {
            continue;
        }
        if parent == usize::MAX {
            // Top-level objects must not straddle each other either.
            if objs[i].cpus.iter().any(|c| innermost[c] != usize::MAX) {
                continue;
            }
            roots.push(i);
        } else {
            if objs[i].cpus.iter().any(|c| innermost[c] != parent) {
                continue;
            }
            objs[parent].children.push(i);
            parent_of[i] = parent;
        }
        for c in objs[i].cpus.iter() {
            innermost[c] = i;
        }
    }
    // NUMA nodes: attached to the innermost object with exactly their CPUs.
    let mut root_numa: Vec<usize> = Vec::new();
    for (ni, n) in topology.nodes().iter().enumerate() {
        let cpus = n.cpus.and(&online_mask);
        let holder = cpus.first().and_then(|f| {
            let mut o = innermost[f];
            while o != usize::MAX {
                if objs[o].cpus == cpus {
                    return Some(o);
                }
                o = parent_of[o];
            }
            None
        });
        match holder {
            Some(o) if cpus != online_mask => objs[o].numa.push(ni),
            _ => root_numa.push(ni),
        }
    }
    let mut out = String::with_capacity(256 + online.len() * 400);
    out.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n<topology version=\"2.0\">\n");
    let mut gp = 1u64;
    let nodeset_all: Vec<u32> = topology.nodes().iter().map(|n| n.id).collect();
    let ns_all = nodeset(&nodeset_all);
    let complete = topology.possible().or(&online_mask);
    let _ = writeln!(
        out,
        "  <object type=\"Machine\" os_index=\"0\" cpuset=\"{}\" complete_cpuset=\"{}\" allowed_cpuset=\"{}\" nodeset=\"{ns_all}\" complete_nodeset=\"{ns_all}\" allowed_nodeset=\"{ns_all}\" gp_index=\"{gp}\">",
        bitmap(&online_mask),
        bitmap(&complete),
        bitmap(&online_mask)
    );
    gp += 1;
    let _ = writeln!(
        out,
        "    <info name=\"Architecture\" value=\"{}\"/>",
        escape(topology.arch().uname())
    );
    let mut w = Writer {
        topology,
        objs: &objs,
        out,
        gp,
    };
    for &ni in &root_numa {
        if topology.nodes()[ni].cpus.and(&online_mask).is_empty() {
            // A CPU-less node attached to the machine would get every CPU as
            // its locality: hwloc keeps such nodes under an empty group.
            let gp = w.gp;
            w.gp += 1;
            let _ = writeln!(
                w.out,
                "    <object type=\"Group\" cpuset=\"0x0\" complete_cpuset=\"0x0\" nodeset=\"{ns}\" complete_nodeset=\"{ns}\" gp_index=\"{gp}\" kind=\"{GROUP_KIND_MEMORY}\" subkind=\"0\">",
                ns = nodeset(&[topology.nodes()[ni].id]),
            );
            w.numa(ni, &CpuMask::new(), 6);
            w.out.push_str("    </object>\n");
        } else {
            w.numa(ni, &online_mask, 4);
        }
    }
    for &r in &roots {
        w.object(r, 4);
    }
    let mut out = w.out;
    out.push_str("  </object>\n");
    // The NUMA latency matrix, by OS index.
    if topology.has_distances() && topology.nodes().len() > 1 {
        let n = topology.nodes().len();
        let _ = writeln!(
            out,
            "  <distances2 type=\"NUMANode\" nbobjs=\"{n}\" kind=\"5\" name=\"NUMALatency\" indexing=\"os\">"
        );
        let idx: Vec<String> = topology.nodes().iter().map(|n| n.id.to_string()).collect();
        let joined = idx.join(" ");
        let _ = writeln!(
            out,
            "    <indexes length=\"{}\">{joined}</indexes>",
            joined.len()
        );
        for row in topology.distances().chunks(n) {
            let vals: Vec<String> = row.iter().map(|v| v.to_string()).collect();
            let joined = vals.join(" ");
            let _ = writeln!(
                out,
                "    <u64values length=\"{}\">{joined}</u64values>",
                joined.len()
            );
        }
        out.push_str("  </distances2>\n");
    }
    for (k, kind) in topology.core_kinds().iter().enumerate() {
        let cpus: CpuMask = topology
            .cpus()
            .iter()
            .filter(|c| c.online && c.kind == Some(k as u16))
            .map(|c| c.id as usize)
            .collect();
        if cpus.is_empty() {
            continue;
        }
        let eff = kind
            .efficiency
            .map(|e| format!(" forced_efficiency=\"{e}\""))
            .unwrap_or_default();
        let _ = writeln!(out, "  <cpukind cpuset=\"{}\"{eff}>", bitmap(&cpus));
        let _ = writeln!(
            out,
            "    <info name=\"CoreType\" value=\"{}\"/>",
            escape(&kind.name)
        );
        out.push_str("  </cpukind>\n");
    }
    out.push_str("</topology>\n");
    out
}

fn nodeset(ids: &[u32]) -> String {
    let mut m = CpuMask::new();
    for &id in ids {
        let _ = m.try_set(id as usize);
    }
    bitmap(&m)
}

struct Writer<'a> {
    topology: &'a Topology,
    objs: &'a [WObj],
    out: String,
    gp: u64,
}

impl Writer<'_> {
    /// The nodes holding some of `cpus`, looked up per CPU (a CPU is in one
    /// node): the sum over all objects is CPUs × depth, where testing every
    /// node against every object was objects × nodes mask intersections.
    fn nodes_of(&self, cpus: &CpuMask) -> String {
        let ids: std::collections::BTreeSet<u32> = cpus
            .iter()
            .filter_map(|c| self.topology.node_of(c))
            .map(|n| n.id)
            .collect();
        nodeset(&ids.into_iter().collect::<Vec<_>>())
    }

    fn numa(&mut self, ni: usize, cpus: &CpuMask, indent: usize) {
        let node = &self.topology.nodes()[ni];
        let ns = nodeset(&[node.id]);
        let mem = node
            .memory_bytes
            .map(|m| format!(" local_memory=\"{m}\""))
            .unwrap_or_default();
        let _ = writeln!(
            self.out,
            "{:indent$}<object type=\"NUMANode\" os_index=\"{}\" cpuset=\"{cs}\" complete_cpuset=\"{cs}\" nodeset=\"{ns}\" complete_nodeset=\"{ns}\" gp_index=\"{}\"{mem}/>",
            "",
            node.id,
            self.gp,
            cs = bitmap(cpus),
        );
        self.gp += 1;
    }

    fn object(&mut self, i: usize, indent: usize) {
        let o = &self.objs[i];
        let cs = bitmap(&o.cpus);
        let ns = self.nodes_of(&o.cpus);
        let os = |id: &Option<u32>| id.map(|v| format!(" os_index=\"{v}\"")).unwrap_or_default();
        let (ty, extra) = match &o.kind {
            WKind::Package(id) => ("Package".to_string(), os(id)),
            WKind::Die(id) => ("Die".to_string(), os(id)),
            WKind::Group(id, _) => ("Group".to_string(), os(id)),
            WKind::Core(id) => ("Core".to_string(), os(id)),
            WKind::Pu(id) => ("PU".to_string(), format!(" os_index=\"{id}\"")),
            WKind::Cache(ci) => {
                let c = &self.topology.caches()[*ci];
                let ty = format!(
                    "L{}{}Cache",
                    c.level,
                    if c.kind == CacheKind::Instruction {
                        "i"
                    } else {
                        ""
                    }
                );
                let ctype = match c.kind {
                    CacheKind::Unified => 0,
                    CacheKind::Data => 1,
                    CacheKind::Instruction => 2,
                };
                let assoc: i64 = match c.ways {
                    None => 0,
                    Some(0) => -1,
                    Some(w) => w as i64,
                };
                (
                    ty,
                    format!(
                        " cache_size=\"{}\" depth=\"{}\" cache_linesize=\"{}\" cache_associativity=\"{assoc}\" cache_type=\"{ctype}\"",
                        c.size_bytes.unwrap_or(0),
                        c.level,
                        c.line_bytes.unwrap_or(0),
                    ),
                )
            }
        };
        let (os_part, attrs_part) = match &o.kind {
            WKind::Cache(_) => (String::new(), extra),
            WKind::Group(_, kind) => (
                extra,
                // Keep groups that share a cpuset with another object: hwloc
                // would otherwise merge them away.
                format!(" kind=\"{kind}\" subkind=\"0\" dont_merge=\"1\""),
            ),
            _ => (extra, String::new()),
        };
        let leaf = o.children.is_empty() && o.numa.is_empty();
        let _ = write!(
            self.out,
            "{:indent$}<object type=\"{ty}\"{os_part} cpuset=\"{cs}\" complete_cpuset=\"{cs}\" nodeset=\"{ns}\" complete_nodeset=\"{ns}\" gp_index=\"{}\"{attrs_part}",
            "",
            self.gp
        );
        self.gp += 1;
        if matches!(o.kind, WKind::Package(_)) {
            if let Some(m) = &self.topology.model_name() {
                let _ = write!(
                    self.out,
                    ">\n{:w$}<info name=\"CPUModel\" value=\"{}\"/",
                    "",
                    escape(m),
                    w = indent + 2
                );
                if leaf {
                    let _ = writeln!(self.out, ">\n{:indent$}</object>", "");
                    return;
                }
            }
        }
        if leaf {
            self.out.push_str("/>\n");
            return;
        }
        self.out.push_str(">\n");
        let cpus = o.cpus;
        for ni in o.numa.clone() {
            self.numa(ni, &cpus, indent + 2);
        }
        for c in o.children.clone() {
            self.object(c, indent + 2);
        }
        let _ = writeln!(self.out, "{:indent$}</object>", "");
    }
}
