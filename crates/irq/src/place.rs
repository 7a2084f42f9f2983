//! Placing every ITS's tables through `nodemem`: on the node Linux asks for
//! (the ITS's, or the boot CPU's when it has none), else on the nearest node
//! by distance that has room — `alloc_pages_node()` without `__GFP_THISNODE`
//! walks the node's zonelist the same way. First the ITS-wide tables, as
//! `its_probe_one` allocates them at boot; then, for each [`Device`] in the
//! order given, what `its_create_device` allocates when the device asks for
//! MSIs: a second-level device-table page when its slot has none yet, and its
//! ITT. Linux's slab packs small ITTs several to a page; here each gets whole
//! frames of its own, on the node the slab page would come from.
//!
//! All or nothing: when a table fits on no node, the error names the ITS and
//! the table, and the allocator is left exactly as it was (seed 004's review
//! asked that a failed allocation be handled, not dereferenced; here nothing
//! half-built survives either).

use std::fmt;

use nodemem::{AllocError, NodeMem};

use crate::tables::{BadGeometry, Geometry, TableKind};
use crate::{Its, Platform};

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
    /// The DeviceID an ITT or second-level page was allocated for.
    pub device: Option<u32>,
}

/// A device that sends MSIs through an ITS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Device {
    /// Index into [`Platform::its`].
    pub its: usize,
    /// Its DeviceID (for PCI, the requester ID through the firmware's map).
    pub id: u32,
    /// MSIs it asks for.
    pub vectors: u32,
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
    /// A device names an ITS the platform does not have.
    NoSuchIts {
        /// The DeviceID.
        device: u32,
        /// The ITS index asked for.
        its: usize,
        /// How many ITSes there are.
        count: usize,
    },
    /// A table fits on no node.
    NoRoom {
        /// The ITS's name.
        its: String,
        /// The table.
        kind: TableKind,
        /// Its size.
        bytes: u64,
        /// The device it was for (ITTs, second-level device-table pages).
        device: Option<u32>,
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
            PlaceError::NoSuchIts { device, its, count } => write!(
                f,
                "device {device:#x}: ITS {its} does not exist ({count} ITSes found); nothing was allocated"
            ),
            PlaceError::NoRoom {
                its,
                kind,
                bytes,
                device,
                node,
                cause,
            } => {
                let whose = device.map_or("its".to_string(), |d| format!("device {d:#x}'s"));
                let size = if *bytes >= 1024 {
                    format!("{} KiB", bytes >> 10)
                } else {
                    format!("{bytes} bytes")
                };
                write!(
                    f,
                    "{its}: no node has room for {whose} {} ({size}, asked on node {node}): {cause}; nothing was allocated",
                    kind.name()
                )
            }
        }
    }
}

impl std::error::Error for PlaceError {}

/// Places every ITS's tables on a fresh allocator over the platform's memory.
pub fn place(platform: &Platform, geometry: &Geometry) -> Result<Vec<ItsTables>, PlaceError> {
    place_with_devices(platform, geometry, &[])
}

/// Places every ITS's tables, then each device's, on a fresh allocator.
pub fn place_with_devices(
    platform: &Platform,
    geometry: &Geometry,
    devices: &[Device],
) -> Result<Vec<ItsTables>, PlaceError> {
    let mut mem = platform.node_memory().map_err(PlaceError::Memory)?;
    place_devices_in(platform, geometry, devices, &mut mem)
}

/// Places every ITS's tables from `mem`. On error `mem` is unchanged.
pub fn place_in(
    platform: &Platform,
    geometry: &Geometry,
    mem: &mut NodeMem,
) -> Result<Vec<ItsTables>, PlaceError> {
    place_devices_in(platform, geometry, &[], mem)
}

/// One allocation to make: what, how big, for which device.
struct Want {
    kind: TableKind,
    bytes: u64,
    entries: u64,
    indirect: bool,
    device: Option<u32>,
}

/// Places every ITS's tables, then each device's, from `mem`. On error `mem`
/// is unchanged.
pub fn place_devices_in(
    platform: &Platform,
    geometry: &Geometry,
    devices: &[Device],
    mem: &mut NodeMem,
) -> Result<Vec<ItsTables>, PlaceError> {
    let mut work = mem.clone();
    let mut out = Vec::with_capacity(platform.its.len());
    for (i, its) in platform.its.iter().enumerate() {
        let wanted = platform.alloc_node(its);
        let mut tables = Vec::new();
        for w in its_wants(geometry)? {
            tables.push(alloc(&mut work, its, wanted, w)?);
        }
        out.push(ItsTables {
            its: i,
            wanted,
            tables,
        });
    }
    // Which second-level device-table slots each ITS has filled.
    let mut slots: Vec<Vec<u64>> = vec![Vec::new(); platform.its.len()];
    for d in devices {
        let (Some(its), Some(t)) = (platform.its.get(d.its), out.get_mut(d.its)) else {
            return Err(PlaceError::NoSuchIts {
                device: d.id,
                its: d.its,
                count: platform.its.len(),
            });
        };
        for w in device_wants(geometry, d, &mut slots[d.its])? {
            t.tables.push(alloc(&mut work, its, t.wanted, w)?);
        }
    }
    *mem = work;
    Ok(out)
}

/// The ITS-wide tables, in `its_probe_one`'s order.
fn its_wants(geometry: &Geometry) -> Result<Vec<Want>, PlaceError> {
    let sizes = geometry.sizes().map_err(PlaceError::Geometry)?;
    Ok(sizes
        .iter()
        .map(|s| Want {
            kind: s.kind,
            bytes: s.bytes,
            entries: s.entries,
            indirect: s.indirect,
            device: None,
        })
        .collect())
}

/// What `its_create_device` allocates for `d`: a second-level device-table
/// page if its slot (recorded in `filled`) has none yet, then its ITT.
fn device_wants(
    geometry: &Geometry,
    d: &Device,
    filled: &mut Vec<u64>,
) -> Result<Vec<Want>, PlaceError> {
    let mut wants = Vec::with_capacity(2);
    if let Some(slot) = geometry
        .device_l2_slot(d.id)
        .map_err(PlaceError::Geometry)?
    {
        if !filled.contains(&slot) {
            filled.push(slot);
            wants.push(Want {
                kind: TableKind::DeviceL2,
                bytes: geometry.page,
                entries: geometry.page / geometry.device_entry,
                indirect: false,
                device: Some(d.id),
            });
        }
    }
    let (bytes, entries) = geometry.itt(d.vectors).map_err(PlaceError::Geometry)?;
    wants.push(Want {
        kind: TableKind::Itt,
        bytes,
        entries,
        indirect: false,
        device: Some(d.id),
    });
    Ok(wants)
}

/// One allocation on `node` or the nearest node with room; the whole-frame
/// alignment `nodemem` gives is at least what Linux's allocators give.
fn alloc(work: &mut NodeMem, its: &Its, node: u32, w: Want) -> Result<Placed, PlaceError> {
    let align = w.bytes.max(FRAME);
    let frame = work
        .alloc(node, w.bytes, align)
        .map_err(|cause| PlaceError::NoRoom {
            its: its.name.clone(),
            kind: w.kind,
            bytes: w.bytes,
            device: w.device,
            node,
            cause,
        })?;
    Ok(Placed {
        kind: w.kind,
        bytes: w.bytes,
        addr: frame.addr,
        node: frame.node,
        entries: w.entries,
        indirect: w.indirect,
        device: w.device,
    })
}

/// `nodemem`'s frame: the smallest alignment it takes.
const FRAME: u64 = 4096;
