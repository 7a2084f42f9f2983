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
//!   `depth`, `cache_type` (0 unified, 1 data, 2 instruction), `cache_size`
//!   (0 = unknown), `cache_linesize` (0 = unknown) and `cache_associativity` (0 = unknown,
//!   -1 = fully associative, stored as 0 as the model says). Memory-side caches
//!   (`MemCache`) are not modelled.
//! - `NUMANode` → a node (`os_index`, `local_memory`). hwloc gives a NUMA node
//!   the cpuset of the object it is attached to, so nodes may share CPUs (DRAM +
//!   HBM, CXL, GPU memory); Linux puts each CPU in one node, so a CPU goes to the
//!   node with the smallest cpuset containing it, the first in document order
//!   among equals; the others are memory-only. Node cpusets that overlap without
//!   nesting cannot come from hwloc and are an error.
//! - `distances2` of type `NUMANode` (latency, not bandwidth; `os` or `gp`
//!   indexing) → the distance matrix; else a v1 `distances` with one row
//!   per NUMA node (the one at the nodes' depth first: hwloc 1.x wrote
//!   `relative_depth` in the file's tree, hwloc 2 writing v1 in its own).
//!   A matrix over more than [`MAX_DISTANCE_NODES`] nodes is refused naming
//!   its line, before its values are kept.
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
//! numbers beyond [`MAX_CPUS`], NUMA node ids beyond [`MAX_NODES`], duplicate
//! PUs or nodes, unknown object types, elements where hwloc never writes them
//! or nested deeper than [`XML_DEPTH_LIMIT`], numbers an attribute cannot
//! hold (negative, infinite, not a number, too large), entities other than
//! XML's own.
//!
//! [`MAX_CPUS`]: topology::MAX_CPUS
//! [`MAX_NODES`]: topology::MAX_NODES
//! [`MAX_DISTANCE_NODES`]: topology::MAX_DISTANCE_NODES
//! [`LevelKind::Package`]: topology::LevelKind::Package
//! [`LevelKind::Die`]: topology::LevelKind::Die
//! [`LevelKind::Core`]: topology::LevelKind::Core
//! [`LevelKind::Cluster`]: topology::LevelKind::Cluster
//! [`Cache`]: topology::Cache
//! [`XML_DEPTH_LIMIT`]: crate::limits::XML_DEPTH_LIMIT
//!
//! # Writing
//!
//! [`write()`] builds the hwloc tree from the model by cpuset inclusion (machine,
//! package, die, cluster as a `Group` of hwloc's Linux-cluster kind marked
//! `dont_merge` so hwloc keeps it, caches, core, PU; NUMA nodes attached to
//! the object with their exact cpuset, under an added memory `Group` if none
//! has it, CPU-less nodes under an empty group) and prints XML v2 with the
//! NUMA latency matrix and CPU kinds. Only online CPUs become PUs, as in hwloc;
//! the offline ones are in the machine's `complete_cpuset`. An object that
//! straddles others (a cache shared across packages) cannot be in a tree and is
//! left out. The tests load the output in lstopo 2.9 for every corpus topology.

//!
//! # Layout
//!
//! Reading is two phases: `parse` walks the XML events once and keeps the
//! objects, distances and kinds (`raw`); `map` turns them into `CpuSpec`s,
//! nodes and caches for the builder, with the distance matrices checked in
//! `distances`. The `write` module is the other direction.

mod distances;
mod map;
mod parse;
mod raw;
mod write;

use topology::Topology;

use crate::Error;

pub use write::write;

/// The 1-based line of a byte offset. Only errors need lines, so positions are
/// kept while reading and converted here.
fn line_of(text: &str, pos: usize) -> usize {
    let pos = pos.min(text.len());
    1 + text.as_bytes()[..pos]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
}

/// Reads hwloc XML; `source` names the input in errors.
pub fn read(text: &str, source: &str) -> Result<Topology, Error> {
    let raw = parse::parse_raw(text, source)?;
    map::map_raw(raw, text, source)
}

/// Reads an hwloc XML file, refusing FIFOs, devices and files past
/// [`crate::limits::XML_FILE_LIMIT`] before reading them.
pub fn read_path(path: &std::path::Path) -> Result<Topology, Error> {
    let limit = crate::limits::XML_FILE_LIMIT;
    let text = crate::limits::read_text_input(path, limit, "hwloc XML")?;
    read(&text, &path.display().to_string())
}
