//! Interrupt translation units and where their tables live (seed 004).
//!
//! A GICv3 ITS translates every MSI by reading tables in memory: the device
//! table, the collection table, and commands from its command queue. Linux
//! allocates them on the ITS's NUMA node (`alloc_pages_node(its->numa_node,
//! ...)`), falling back to the nearest node that has room. This crate does the
//! same in three phases, as Linux does at boot:
//!
//! 1. **read** the firmware: ACPI ([`acpi`]: MADT GIC ITS entries matched with
//!    SRAT GIC ITS Affinity structures, SRAT memory and SLIT distances) or a
//!    device tree ([`dt`]: `numa-node-id` on the ITS node or an ancestor,
//!    memory nodes, the distance map), into one [`Platform`];
//! 2. **size** each ITS's tables as `its_probe_one` / `its_alloc_tables` do
//!    ([`tables`]);
//! 3. **place** them through `nodemem`, on the ITS's node first, then nearest
//!    first by distance; then, for each device given, its ITT and any
//!    second-level device-table page it needs, as `its_create_device` does;
//!    all of them or none ([`place`]).
//!
//! [`cost`] turns a placement into memory time per interrupt.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod acpi;
pub mod cost;
pub mod dt;
pub mod place;
pub mod tables;

use std::fmt;
use std::path::Path;

/// Linux's distance to the node itself, and to any other node when the
/// firmware gives no distances (`LOCAL_DISTANCE`, `REMOTE_DISTANCE`).
pub const LOCAL_DISTANCE: u8 = 10;
/// See [`LOCAL_DISTANCE`].
pub const REMOTE_DISTANCE: u8 = 20;

/// The most NUMA nodes a firmware description may name (Linux's largest
/// `MAX_NUMNODES`, `NODES_SHIFT` = 10). Bounds every per-node allocation.
pub const MAX_NODES: u32 = 1024;

/// Largest firmware file read (a 16384-CPU MADT is 1.3 MiB).
pub const MAX_FILE_BYTES: u64 = 16 << 20;

/// Bad firmware input: which file, which field, what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// The file (or description) read.
    pub file: String,
    /// The table, structure or property at fault.
    pub field: String,
    /// What is wrong with it.
    pub reason: String,
}

impl Error {
    pub(crate) fn new(file: &str, field: impl Into<String>, reason: impl Into<String>) -> Self {
        Error {
            file: file.to_string(),
            field: field.into(),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.file, self.field, self.reason)
    }
}

impl std::error::Error for Error {}

/// One interrupt translation unit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Its {
    /// Name for people: `its@8080000` (device tree) or `ITS 0` (ACPI).
    pub name: String,
    /// The MADT's GIC ITS ID (ACPI) or the ITS's index in tree order (DT).
    pub id: u32,
    /// Physical base of its registers.
    pub base: u64,
    /// Its NUMA node as Linux reads it; `None` is Linux's `NUMA_NO_NODE`.
    pub node: Option<u32>,
    /// Where `node` comes from, or why there is none.
    pub node_from: String,
}

/// Memory of one node: `[base, base + len)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemRange {
    /// The node it belongs to.
    pub node: u32,
    /// Physical start.
    pub base: u64,
    /// Length in bytes.
    pub len: u64,
}

/// What a firmware description says about interrupt translation and memory.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Platform {
    /// The files it was read from.
    pub source: String,
    /// Every ITS, in firmware order (the order Linux probes them).
    pub its: Vec<Its>,
    /// Memory that Linux may allocate from, by node.
    pub memory: Vec<MemRange>,
    /// Every node named (with memory, CPUs or both), ascending.
    pub nodes: Vec<u32>,
    /// Distances between `nodes`, row-major; empty when the firmware gives
    /// none (then 10 to itself and 20 to any other, as Linux assumes).
    pub distance: Vec<u8>,
    /// The boot CPU's node: where Linux allocates for an ITS without a node
    /// (`alloc_pages_node(NUMA_NO_NODE)` is the running CPU's memory node, and
    /// the ITSes are probed on the boot CPU).
    pub boot_node: u32,
    /// Whether the firmware (or topology) places the boot CPU on a node. When
    /// it does not, `boot_node` is a fallback: node 0 from ACPI, as Linux maps
    /// a CPU without a node to node 0 (`early_map_cpu_to_node()` in
    /// drivers/base/arch_numa.c); the lowest node named by a device tree.
    pub boot_node_placed: bool,
}

impl Platform {
    /// Distance from node `a` to node `b`.
    pub fn distance(&self, a: u32, b: u32) -> u8 {
        let at = |n| self.nodes.iter().position(|&x| x == n);
        match (at(a), at(b)) {
            (Some(i), Some(j)) if !self.distance.is_empty() => {
                self.distance[i * self.nodes.len() + j]
            }
            _ if a == b => LOCAL_DISTANCE,
            _ => REMOTE_DISTANCE,
        }
    }

    /// The node Linux allocates `its`'s tables for: its own, or the boot
    /// CPU's when the firmware gives it none.
    pub fn alloc_node(&self, its: &Its) -> u32 {
        its.node.unwrap_or(self.boot_node)
    }

    /// Bytes of memory on `node`.
    pub fn node_bytes(&self, node: u32) -> u64 {
        self.memory
            .iter()
            .filter(|r| r.node == node)
            .map(|r| r.len)
            .sum()
    }

    /// The node whose memory holds physical address `addr`, if any.
    pub fn node_of_addr(&self, addr: u64) -> Option<u32> {
        self.memory
            .iter()
            .find(|r| addr >= r.base && addr - r.base < r.len)
            .map(|r| r.node)
    }

    /// A node allocator over this platform's memory and distances: every
    /// node is known to it, memoryless ones too, so that an ITS on a
    /// memoryless node falls back by distance as Linux's zonelist does.
    pub fn node_memory(&self) -> Result<nodemem::NodeMem, nodemem::AllocError> {
        let mut mem = nodemem::NodeMem::new();
        for r in &self.memory {
            mem.add_range(r.node, r.base, r.len)?;
        }
        for &n in &self.nodes {
            mem.add_node(n);
        }
        if !self.distance.is_empty() {
            mem.set_distances(&self.nodes, &self.distance);
        }
        Ok(mem)
    }
}

/// Reads a whole firmware file through the readers' one guarded open: a
/// regular file of at most [`MAX_FILE_BYTES`], opened without blocking, so
/// that a FIFO, `/dev/zero` or a huge sparse file named as a table is one
/// error naming it instead of a hang or an unbounded read.
pub(crate) fn read_file(path: &Path) -> Result<Vec<u8>, Error> {
    readers::limits::read_input(path, MAX_FILE_BYTES, "a firmware table")
        .map_err(|e| Error::new(&e.source, "file", e.message))
}

/// Whether `path` can be opened for reading: false when it is absent or this
/// user may not read it (a live `/sys/firmware/acpi/tables` is root's), so
/// the caller can look elsewhere. Opened without blocking, so asking never
/// hangs on a FIFO; a FIFO or device answers true, and reading it then says
/// what it is.
pub fn can_open(path: &Path) -> bool {
    readers::limits::open_nonblocking(path).is_ok()
}
