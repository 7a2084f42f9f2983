//! The SRAT (ACPI 6.5 §5.2.16): which proximity domain each processor,
//! memory range, GIC ITS and generic initiator belongs to; and the kernel's
//! numbering of those domains as nodes.
//!
//! [`entries`] decodes every structure type this project reads, with its
//! offset, in table order; [`parse_srat`] keeps what the x86 kernel uses,
//! and [`ProximityMap`] numbers the domains as nodes by Linux's rule (the
//! kernel and `irq` both number nodes through it).

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use crate::table::{structures, u32_at, u64_at, Structure, Structures, TableFault};

/// SRAT structures start after the 36-byte header and 12 reserved bytes.
pub const SRAT_ENTRIES: usize = 48;

/// The structure types read, each with its layout's length and its name in
/// the specification: the one table the decoder and the error texts share.
const LAYOUTS: [(u8, usize, &str); 6] = [
    (0, 16, "Processor Local APIC Affinity"),
    (1, 40, "Memory Affinity"),
    (2, 24, "x2APIC Affinity"),
    (3, 18, "GICC Affinity"),
    (4, 12, "GIC ITS Affinity"),
    (5, 32, "Generic Initiator Affinity"),
];

/// The specification's name of SRAT structure type `kind`.
pub fn kind_name(kind: u8) -> &'static str {
    LAYOUTS
        .iter()
        .find(|l| l.0 == kind)
        .map_or("structure", |l| l.2)
}

/// What one SRAT structure says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Affinity {
    /// Processor Local APIC (type 0) or Local x2APIC (type 2) affinity.
    Apic {
        /// APIC id (x2APIC id for type 2).
        apic_id: u32,
        /// Proximity domain.
        domain: u32,
        /// Flags bit 0: the entry is in use.
        enabled: bool,
    },
    /// Memory affinity (type 1).
    Memory {
        /// Proximity domain.
        domain: u32,
        /// First byte.
        base: u64,
        /// Length in bytes.
        len: u64,
        /// Flags bit 0: the entry is in use.
        enabled: bool,
        /// Flags bit 1: hot-pluggable (not populated at boot).
        hotplug: bool,
    },
    /// GICC affinity (type 3): an arm64 CPU by its ACPI processor UID.
    Gicc {
        /// ACPI processor UID (the MADT GICC's).
        uid: u32,
        /// Proximity domain.
        domain: u32,
        /// Flags bit 0: the entry is in use.
        enabled: bool,
    },
    /// GIC ITS affinity (type 4); it has no enabled flag.
    GicIts {
        /// The MADT's GIC ITS ID.
        its_id: u32,
        /// Proximity domain.
        domain: u32,
    },
    /// Generic initiator affinity (type 5).
    GenericInitiator {
        /// Proximity domain.
        domain: u32,
        /// Flags bit 0: the entry is in use.
        enabled: bool,
    },
}

/// One decoded SRAT structure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Offset in the table.
    pub offset: usize,
    /// What it says.
    pub affinity: Affinity,
}

/// Every SRAT structure of a type in [`LAYOUTS`], in table order; other
/// types are skipped by their length. A structure shorter than its layout is
/// a [`TableFault::ShortEntry`] item and the walk goes on; a table shorter
/// than its fixed part, or a structure that runs past the end, is the last
/// item. The header is not checked here (see [`crate::table::check_header`]).
pub fn entries(bytes: &[u8]) -> Entries<'_> {
    let short = bytes.len() < SRAT_ENTRIES;
    Entries {
        walk: structures(bytes, if short { bytes.len() } else { SRAT_ENTRIES }),
        no_header: short.then_some(TableFault::NoHeader {
            len: bytes.len(),
            need: SRAT_ENTRIES,
        }),
    }
}

/// Iterator of [`entries`].
#[derive(Clone, Debug)]
pub struct Entries<'a> {
    walk: Structures<'a>,
    no_header: Option<TableFault>,
}

impl Iterator for Entries<'_> {
    type Item = Result<Entry, TableFault>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(fault) = self.no_header.take() {
            return Some(Err(fault));
        }
        loop {
            match self.walk.next()? {
                Ok(s) => {
                    if let Some(decoded) = decode(&s) {
                        return Some(decoded);
                    }
                }
                Err(fault) => return Some(Err(fault)),
            }
        }
    }
}

/// Structure `s` decoded, `None` for a type not in [`LAYOUTS`].
fn decode(s: &Structure<'_>) -> Option<Result<Entry, TableFault>> {
    let need = LAYOUTS.iter().find(|l| l.0 == s.kind)?.1;
    if let Err(fault) = s.needs(need) {
        return Some(Err(fault));
    }
    // Every field read below lies inside `need` bytes.
    let e = s.bytes;
    let at32 = |o: usize| u32_at(e, o).unwrap_or(0);
    let affinity = match s.kind {
        0 => Affinity::Apic {
            apic_id: u32::from(e[3]),
            // Proximity domain bits 7:0 at byte 2, bits 31:8 at bytes 9-11.
            domain: u32::from_le_bytes([e[2], e[9], e[10], e[11]]),
            enabled: at32(4) & 1 != 0,
        },
        1 => Affinity::Memory {
            domain: at32(2),
            base: u64_at(e, 8).unwrap_or(0),
            len: u64_at(e, 16).unwrap_or(0),
            enabled: at32(28) & 1 != 0,
            hotplug: at32(28) & 2 != 0,
        },
        2 => Affinity::Apic {
            apic_id: at32(8),
            domain: at32(4),
            enabled: at32(12) & 1 != 0,
        },
        3 => Affinity::Gicc {
            uid: at32(6),
            domain: at32(2),
            enabled: at32(10) & 1 != 0,
        },
        4 => Affinity::GicIts {
            its_id: at32(8),
            domain: at32(2),
        },
        _ => Affinity::GenericInitiator {
            domain: at32(4),
            enabled: at32(24) & 1 != 0,
        },
    };
    Some(Ok(Entry {
        offset: s.offset,
        affinity,
    }))
}

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

/// What the x86 kernel uses of an SRAT: enabled processor and memory
/// affinities, in table order, and every fault met on the way.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Srat {
    /// Processor affinities (local APIC and local x2APIC).
    pub cpus: Vec<SratCpu>,
    /// Memory affinities.
    pub mem: Vec<SratMem>,
    /// What was cut, refused or skipped.
    pub faults: Vec<TableFault>,
}

/// The enabled processor (APIC, x2APIC) and memory affinities of an SRAT
/// (disabled entries are not faults), and its faults.
pub fn parse_srat(bytes: &[u8]) -> Srat {
    let mut out = Srat::default();
    for entry in entries(bytes) {
        match entry.map(|e| e.affinity) {
            Ok(Affinity::Apic {
                apic_id,
                domain,
                enabled: true,
            }) => out.cpus.push(SratCpu { apic_id, domain }),
            Ok(Affinity::Memory {
                domain,
                base,
                len,
                enabled: true,
                hotplug,
            }) => out.mem.push(SratMem {
                domain,
                base,
                len,
                hotplug,
            }),
            Ok(_) => {}
            Err(fault) => out.faults.push(fault),
        }
    }
    out
}

/// Proximity domains numbered as nodes the way Linux 6.12 numbers them
/// (drivers/acpi/numa/srat.c: `acpi_numa_init` and
/// `acpi_map_pxm_to_node`): a domain becomes the next node id the first
/// time an enabled structure names it, over two walks of the table — first
/// the initiators (Local APIC, x2APIC, GICC and Generic Initiator affinity,
/// in table order), then Memory Affinity. Node ids thus follow the firmware's
/// order, not the domains' values: a machine whose first CPU entry is in
/// domain 1 has that domain as node 0. A GIC ITS affinity or a disabled
/// structure makes no node. Only domains the SRAT names are nodes: anything
/// else is unknown, and the caller says so.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProximityMap {
    /// The node of each domain named.
    nodes: BTreeMap<u32, u32>,
}

impl ProximityMap {
    /// The nodes of the SRAT in `bytes`. Structures that do not decode name
    /// no domain ([`parse_srat`] reports them as faults).
    pub fn new(bytes: &[u8]) -> Self {
        let named: Vec<Affinity> = entries(bytes)
            .filter_map(Result::ok)
            .map(|e| e.affinity)
            .collect();
        Self::from_affinities(&named)
    }

    /// The nodes named by structures already decoded, in table order (for a
    /// caller that walks the table itself and need not decode it twice).
    pub fn from_affinities(named: &[Affinity]) -> Self {
        let initiator = |a: &Affinity| match *a {
            Affinity::Apic {
                domain,
                enabled: true,
                ..
            }
            | Affinity::Gicc {
                domain,
                enabled: true,
                ..
            }
            | Affinity::GenericInitiator {
                domain,
                enabled: true,
            } => Some(domain),
            _ => None,
        };
        let memory = |a: &Affinity| match *a {
            Affinity::Memory {
                domain,
                enabled: true,
                ..
            } => Some(domain),
            _ => None,
        };
        let mut map = ProximityMap::default();
        let in_order = named.iter().filter_map(initiator);
        for domain in in_order.chain(named.iter().filter_map(memory)) {
            let next = map.nodes.len() as u32;
            map.nodes.entry(domain).or_insert(next);
        }
        map
    }

    /// The node of proximity domain `pxm`; `None` if the SRAT never names it.
    pub fn node(&self, pxm: u32) -> Option<u32> {
        self.nodes.get(&pxm).copied()
    }

    /// Number of nodes (0 without a SRAT).
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the SRAT named no domain at all.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Every (proximity domain, node) pair, by increasing domain.
    pub fn iter(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.nodes.iter().map(|(&pxm, &node)| (pxm, node))
    }
}
