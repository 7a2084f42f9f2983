//! What the firmware tells us about CPUs and memory: MADT processor entries
//! (through the acpi crate), SRAT / SLIT decoded by `acpitables`, and the
//! logical CPU numbering built on them. Whatever the tables get wrong is kept
//! as a [`FirmwareFault`] for the log, never papered over.

use crate::arch::acpi::Tables;
use acpi::madt::MadtEntry;
use acpitables::slit::parse_slit;
use acpitables::srat::{parse_srat, ProximityMap, Srat};
use acpitables::TableFault;
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::vec::Vec;
use core::fmt;

/// One processor entry of the MADT (Local APIC or Local x2APIC structure).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MadtCpu {
    /// APIC id (x2APIC id for type-9 entries).
    pub apic_id: u32,
    /// Flags bit 0: usable now.
    pub enabled: bool,
}

/// A firmware fault: what could not be used as the tables wrote it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FirmwareFault {
    /// The SRAT was malformed here.
    Srat(TableFault),
    /// The SLIT was malformed; no distances from it.
    Slit(TableFault),
    /// The SRAT has processor entries, but none for this APIC id: the CPU is
    /// put on node 0, and the log says so.
    CpuWithoutDomain(u32),
    /// A SLIT locality that is no SRAT proximity domain: its row and column
    /// are ignored rather than read as node 0's.
    UnknownLocality(u32),
}

impl fmt::Display for FirmwareFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FirmwareFault::Srat(e) => write!(f, "SRAT: {e}"),
            FirmwareFault::Slit(e) => write!(f, "SLIT: {e}; no distances from it"),
            FirmwareFault::CpuWithoutDomain(apic) => write!(
                f,
                "SRAT: no proximity domain for APIC id {apic}; placed on node 0"
            ),
            FirmwareFault::UnknownLocality(pxm) => write!(
                f,
                "SLIT: locality {pxm} is no SRAT proximity domain; its distances ignored"
            ),
        }
    }
}

/// Everything discovered from the firmware tables.
#[derive(Debug, Default)]
pub struct Firmware {
    /// MADT processor entries in table order (the BSP first, as QEMU lists it).
    pub cpus: Vec<MadtCpu>,
    /// The SRAT's processor and memory affinities.
    pub srat: Srat,
    /// Its proximity domains numbered as nodes.
    pub numa: ProximityMap,
    /// SLIT: number of localities and the row-major distance matrix.
    pub slit: Option<(usize, Vec<u8>)>,
    /// HPET base address.
    pub hpet: Option<u64>,
    /// What the tables got wrong.
    pub faults: Vec<FirmwareFault>,
}

/// Reads the MADT, SRAT, SLIT and HPET tables.
pub fn discover(tables: &Tables) -> Firmware {
    let mut fw = Firmware {
        hpet: tables.hpet_base(),
        ..Firmware::default()
    };
    if let Some(madt) = tables.madt() {
        for entry in madt.get().entries() {
            match entry {
                MadtEntry::LocalApic(e) => fw.cpus.push(MadtCpu {
                    apic_id: e.apic_id as u32,
                    enabled: { e.flags } & 1 != 0,
                }),
                MadtEntry::LocalX2Apic(e) => fw.cpus.push(MadtCpu {
                    apic_id: e.x2apic_id,
                    enabled: { e.flags } & 1 != 0,
                }),
                _ => {}
            }
        }
    }
    if let Some(bytes) = tables.srat_bytes() {
        fw.srat = parse_srat(bytes);
        fw.faults
            .extend(fw.srat.faults.iter().map(|&e| FirmwareFault::Srat(e)));
        fw.numa = ProximityMap::new(bytes);
    }
    match tables.slit_bytes().map(parse_slit) {
        Some(Ok(slit)) => fw.slit = Some(slit),
        Some(Err(e)) => fw.faults.push(FirmwareFault::Slit(e)),
        None => {}
    }
    if let Some((n, _)) = &fw.slit {
        for pxm in 0..*n as u32 {
            if fw.numa.node(pxm).is_none() {
                fw.faults.push(FirmwareFault::UnknownLocality(pxm));
            }
        }
    }
    fw
}

/// One logical CPU as the kernel numbers it.
#[derive(Clone, Copy, Debug)]
pub struct CpuInfo {
    /// Logical number (0 = boot CPU, then MADT order; disabled entries last).
    pub cpu: u32,
    /// APIC id.
    pub apic_id: u32,
    /// NUMA node (0 without SRAT).
    pub node: u32,
    /// Present (MADT enabled) as opposed to possible only.
    pub present: bool,
}

/// Logical CPU numbers: the boot CPU is 0, then enabled MADT entries in table
/// order, then `ghost` (fault injection: a present CPU with nothing behind
/// it), then disabled entries (possible, not present), as Linux numbers them.
/// A CPU the SRAT forgets is a fault added to `fw.faults`.
pub fn number_cpus(fw: &mut Firmware, bsp_apic: u32, ghost: Option<u32>) -> Vec<CpuInfo> {
    let enabled = fw
        .cpus
        .iter()
        .filter(|c| c.enabled)
        .map(|c| (c.apic_id, true));
    let disabled = fw
        .cpus
        .iter()
        .filter(|c| !c.enabled)
        .map(|c| (c.apic_id, false));
    let order = core::iter::once((bsp_apic, true))
        .chain(enabled)
        .chain(ghost.map(|g| (g, true)))
        .chain(disabled);
    // The first SRAT entry of an APIC id wins, as in a linear search.
    let domain_of: BTreeMap<u32, u32> = fw
        .srat
        .cpus
        .iter()
        .rev()
        .map(|s| (s.apic_id, s.domain))
        .collect();
    let mut out: Vec<CpuInfo> = Vec::with_capacity(fw.cpus.len() + 1);
    let mut seen = BTreeSet::new();
    let mut faults = Vec::new();
    for (apic_id, present) in order {
        if !seen.insert(apic_id) {
            continue;
        }
        let node = domain_of.get(&apic_id).and_then(|&d| fw.numa.node(d));
        if node.is_none() && !fw.srat.cpus.is_empty() {
            faults.push(FirmwareFault::CpuWithoutDomain(apic_id));
        }
        out.push(CpuInfo {
            cpu: out.len() as u32,
            apic_id,
            node: node.unwrap_or(0),
            present,
        });
    }
    fw.faults.extend(faults);
    out
}
