//! SRAT and SLIT from raw table bytes (ACPI 6.5 §5.2.16, §5.2.17), and the
//! proximity-domain → node numbering built on them.
//!
//! Bounds-checked: a malformed table yields the entries that fit whole plus a
//! [`TableFault`] for what was cut or refused, never a panic and never a
//! silent default. The caller reports faults; the kernel prints them.

use alloc::vec::Vec;
use core::fmt;

/// SRAT processor affinity (types 0 and 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SratCpu {
    /// APIC id the entry is about.
    pub apic_id: u32,
    /// Proximity domain.
    pub domain: u32,
}

/// SRAT memory affinity (type 1), enabled entries only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SratMem {
    /// Proximity domain.
    pub domain: u32,
    /// First byte.
    pub base: u64,
    /// Length in bytes.
    pub len: u64,
    /// Hot-pluggable range (not populated at boot).
    pub hotplug: bool,
}

/// Something in a firmware table that could not be used as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableFault {
    /// The table is shorter than its fixed part.
    NoHeader {
        /// Bytes present.
        len: usize,
        /// Bytes the fixed part needs.
        need: usize,
    },
    /// An entry (or its two-byte header) runs past the end of the table;
    /// the walk stops there.
    Truncated {
        /// Offset of the entry in the table.
        offset: usize,
        /// Bytes the entry claims (0 when even its header is cut).
        len: usize,
        /// The table's length.
        table_len: usize,
    },
    /// An entry claims a length below its own two-byte header; the walk
    /// cannot go on past it.
    BadLength {
        /// Offset of the entry.
        offset: usize,
        /// The claimed length.
        len: usize,
    },
    /// An entry of a known type is shorter than that type's layout: skipped.
    ShortEntry {
        /// Offset of the entry.
        offset: usize,
        /// Its type.
        kind: u8,
        /// Its length.
        len: usize,
        /// The layout's length.
        need: usize,
    },
    /// The SLIT's locality count is 0, above 256, or more than its bytes hold.
    BadLocalityCount {
        /// The count as written.
        count: u64,
    },
}

impl fmt::Display for TableFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            TableFault::NoHeader { len, need } => {
                write!(f, "table of {len} bytes, shorter than its {need}-byte fixed part")
            }
            TableFault::Truncated {
                offset,
                len,
                table_len,
            } => write!(
                f,
                "entry at offset {offset} ({len} bytes) runs past the table's end at {table_len}; rest ignored"
            ),
            TableFault::BadLength { offset, len } => write!(
                f,
                "entry at offset {offset} claims length {len}; rest of the table ignored"
            ),
            TableFault::ShortEntry {
                offset,
                kind,
                len,
                need,
            } => write!(
                f,
                "type {kind} entry at offset {offset} is {len} bytes, its layout needs {need}; skipped"
            ),
            TableFault::BadLocalityCount { count } => {
                write!(f, "locality count {count} does not fit the table (1-256)")
            }
        }
    }
}

/// A parsed SRAT: enabled processor and memory affinities, in table order,
/// and every fault met on the way.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Srat {
    /// Processor affinities (local APIC and local x2APIC).
    pub cpus: Vec<SratCpu>,
    /// Memory affinities.
    pub mem: Vec<SratMem>,
    /// What was cut, refused or skipped.
    pub faults: Vec<TableFault>,
}

fn u32_at(b: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(off..off + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], off: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(off..off + 8)?.try_into().ok()?))
}

/// SRAT entries start after the 36-byte header and 12 reserved bytes.
const SRAT_ENTRIES: usize = 48;

/// Parses SRAT affinity structures (ACPI 6.5 §5.2.16): type 0 (local APIC),
/// 1 (memory), 2 (local x2APIC). Disabled entries are skipped (they are not
/// faults); other types are skipped by their length.
pub fn parse_srat(bytes: &[u8]) -> Srat {
    let mut out = Srat::default();
    if bytes.len() < SRAT_ENTRIES {
        out.faults.push(TableFault::NoHeader {
            len: bytes.len(),
            need: SRAT_ENTRIES,
        });
        return out;
    }
    let mut off = SRAT_ENTRIES;
    while off < bytes.len() {
        let Some(&[kind, len]) = bytes.get(off..off + 2) else {
            out.faults.push(TableFault::Truncated {
                offset: off,
                len: 0,
                table_len: bytes.len(),
            });
            break;
        };
        let len = len as usize;
        if len < 2 {
            out.faults.push(TableFault::BadLength { offset: off, len });
            break;
        }
        let Some(e) = bytes.get(off..off + len) else {
            out.faults.push(TableFault::Truncated {
                offset: off,
                len,
                table_len: bytes.len(),
            });
            break;
        };
        entry(&mut out, off, kind, e);
        off += len;
    }
    out
}

/// One SRAT structure `e` (whole, its length checked) of type `kind`.
fn entry(out: &mut Srat, offset: usize, kind: u8, e: &[u8]) {
    let need = match kind {
        0 => 16,
        1 => 40,
        2 => 24,
        _ => return,
    };
    if e.len() < need {
        out.faults.push(TableFault::ShortEntry {
            offset,
            kind,
            len: e.len(),
            need,
        });
        return;
    }
    // Every field read below lies inside `need` bytes.
    let at32 = |o: usize| u32_at(e, o).unwrap_or(0);
    match kind {
        0 if at32(4) & 1 != 0 => out.cpus.push(SratCpu {
            apic_id: u32::from(e[3]),
            // Proximity domain bits 7:0 at byte 2, bits 31:8 at bytes 9-11.
            domain: u32::from_le_bytes([e[2], e[9], e[10], e[11]]),
        }),
        1 if at32(28) & 1 != 0 => out.mem.push(SratMem {
            domain: at32(2),
            base: u64_at(e, 8).unwrap_or(0),
            len: u64_at(e, 16).unwrap_or(0),
            hotplug: at32(28) & 2 != 0,
        }),
        2 if at32(12) & 1 != 0 => out.cpus.push(SratCpu {
            apic_id: at32(8),
            domain: at32(4),
        }),
        _ => {}
    }
}

/// The SLIT's first byte after the header: a u64 locality count.
const SLIT_COUNT: usize = 36;
/// The SLIT's matrix.
const SLIT_MATRIX: usize = 44;

/// Parses the SLIT (ACPI 6.5 §5.2.17): a u64 locality count at offset 36 and
/// an N×N byte matrix after it, row-major by locality (= proximity domain).
pub fn parse_slit(bytes: &[u8]) -> Result<(usize, Vec<u8>), TableFault> {
    let count = u64_at(bytes, SLIT_COUNT).ok_or(TableFault::NoHeader {
        len: bytes.len(),
        need: SLIT_MATRIX,
    })?;
    let n = usize::try_from(count)
        .ok()
        .filter(|&n| n > 0 && n <= 256)
        .ok_or(TableFault::BadLocalityCount { count })?;
    let matrix = bytes
        .get(SLIT_MATRIX..SLIT_MATRIX + n * n)
        .ok_or(TableFault::BadLocalityCount { count })?;
    Ok((n, matrix.to_vec()))
}

/// Proximity domains numbered as nodes 0..K-1 in increasing PXM order (what
/// Linux yields for QEMU's tables, whose PXMs are 0..K-1). Only domains the
/// SRAT names are nodes: anything else is unknown, and the caller says so.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProximityMap {
    pxms: Vec<u32>,
}

impl ProximityMap {
    /// The domains named by `srat`'s processor and memory affinities.
    pub fn new(srat: &Srat) -> Self {
        let mut pxms: Vec<u32> = srat
            .cpus
            .iter()
            .map(|c| c.domain)
            .chain(srat.mem.iter().map(|m| m.domain))
            .collect();
        pxms.sort_unstable();
        pxms.dedup();
        ProximityMap { pxms }
    }

    /// The node of proximity domain `pxm`; `None` if the SRAT never names it.
    pub fn node(&self, pxm: u32) -> Option<u32> {
        self.pxms
            .binary_search(&pxm)
            .ok()
            .and_then(|i| u32::try_from(i).ok())
    }

    /// Number of nodes (0 without a SRAT).
    pub fn len(&self) -> usize {
        self.pxms.len()
    }

    /// Whether the SRAT named no domain at all.
    pub fn is_empty(&self) -> bool {
        self.pxms.is_empty()
    }
}
