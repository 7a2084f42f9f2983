//! Placing every ITS's tables through `nodemem`: on the node Linux asks for
//! (the ITS's, or the boot CPU's when it has none), else on the nearest node
//! by distance that has room — `alloc_pages_node()` without `__GFP_THISNODE`
//! walks the node's zonelist the same way.
//!
//! All or nothing: when a table fits on no node, the error names the ITS and
//! the table, and the allocator is left exactly as it was (seed 004's review
//! asked that a failed allocation be handled, not dereferenced; here nothing
//! half-built survives either).

use std::fmt;

use nodemem::{AllocError, NodeMem};

use crate::tables::{BadGeometry, Geometry, TableKind};
use crate::Platform;

/// One table, placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placed {
    /// Which table.
    pub kind: TableKind,
    /// Its size (also its alignment).
    pub bytes: u64,
    /// Where it starts.
    pub addr: u64,
    /// The node that holds it.
    pub node: u32,
    /// Entries, as Linux's boot log counts them.
    pub entries: u64,
    /// Two-level table.
    pub indirect: bool,
}

/// One ITS's tables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItsTables {
    /// Index into [`Platform::its`].
    pub its: usize,
    /// The node the allocations asked for.
    pub wanted: u32,
    /// The tables, in allocation order.
    pub tables: Vec<Placed>,
}

/// Why the tables could not be placed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlaceError {
    /// The ITS geometry makes no sense.
    Geometry(BadGeometry),
    /// The firmware's memory could not be handed to the allocator.
    Memory(AllocError),
    /// A table fits on no node.
    NoRoom {
        /// The ITS's name.
        its: String,
        /// The table.
        kind: TableKind,
        /// Its size.
        bytes: u64,
        /// The node asked for.
        node: u32,
        /// What the allocator said.
        cause: AllocError,
    },
}

impl fmt::Display for PlaceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlaceError::Geometry(g) => write!(f, "{g}"),
            PlaceError::Memory(e) => write!(f, "firmware memory ranges: {e}"),
            PlaceError::NoRoom { its, kind, bytes, node, cause } => write!(
                f,
                "{its}: no node has room for its {} ({} KiB, asked on node {node}): {cause}; nothing was allocated",
                kind.name(),
                bytes >> 10
            ),
        }
    }
}

impl std::error::Error for PlaceError {}

/// Places every ITS's tables on a fresh allocator over the platform's memory.
pub fn place(platform: &Platform, geometry: &Geometry) -> Result<Vec<ItsTables>, PlaceError> {
    let mut mem = platform.node_memory().map_err(PlaceError::Memory)?;
    place_in(platform, geometry, &mut mem)
}

/// Places every ITS's tables from `mem`. On error `mem` is unchanged.
pub fn place_in(
    platform: &Platform,
    geometry: &Geometry,
    mem: &mut NodeMem,
) -> Result<Vec<ItsTables>, PlaceError> {
    let sizes = geometry.sizes().map_err(PlaceError::Geometry)?;
    let mut work = mem.clone();
    let mut out = Vec::with_capacity(platform.its.len());
    for (i, its) in platform.its.iter().enumerate() {
        let wanted = platform.alloc_node(its);
        let mut tables = Vec::with_capacity(sizes.len());
        for s in &sizes {
            let frame =
                work.alloc(wanted, s.bytes, s.bytes)
                    .map_err(|cause| PlaceError::NoRoom {
                        its: its.name.clone(),
                        kind: s.kind,
                        bytes: s.bytes,
                        node: wanted,
                        cause,
                    })?;
            tables.push(Placed {
                kind: s.kind,
                bytes: s.bytes,
                addr: frame.addr,
                node: frame.node,
                entries: s.entries,
                indirect: s.indirect,
            });
        }
        out.push(ItsTables {
            its: i,
            wanted,
            tables,
        });
    }
    *mem = work;
    Ok(out)
}
