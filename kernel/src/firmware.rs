//! What the firmware tells us about CPUs and memory: MADT processor entries
//! (through the acpi crate), and SRAT / SLIT parsed from raw bytes. Parsing is
//! bounds-checked: a malformed table yields fewer entries, never a panic.

use crate::arch::acpi::Tables;
use acpi::madt::MadtEntry;
use alloc::vec::Vec;

/// One processor entry of the MADT (Local APIC or Local x2APIC structure).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MadtCpu {
    /// APIC id (x2APIC id for type-9 entries).
    pub apic_id: u32,
    /// ACPI processor UID.
    pub uid: u32,
    /// Flags bit 0: usable now.
    pub enabled: bool,
    /// Flags bit 1: may be hot-added later (possible but not present).
    pub online_capable: bool,
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

/// Everything discovered from the firmware tables.
#[derive(Debug, Default)]
pub struct Firmware {
    /// MADT processor entries in table order (the BSP first, as QEMU lists it).
    pub cpus: Vec<MadtCpu>,
    /// Local APIC MMIO base from the MADT.
    pub lapic_base: u64,
    /// SRAT processor affinities.
    pub srat_cpus: Vec<SratCpu>,
    /// SRAT memory ranges.
    pub srat_mem: Vec<SratMem>,
    /// SLIT: number of localities and the row-major distance matrix.
    pub slit: Option<(usize, Vec<u8>)>,
    /// HPET base address.
    pub hpet: Option<u64>,
}

/// Reads the MADT, SRAT, SLIT and HPET tables.
pub fn discover(tables: &Tables) -> Firmware {
    let mut fw = Firmware {
        lapic_base: 0xfee0_0000,
        hpet: tables.hpet_base(),
        ..Firmware::default()
    };
    if let Some(madt) = tables.madt() {
        fw.lapic_base = { madt.get().local_apic_address } as u64;
        for entry in madt.get().entries() {
            match entry {
                MadtEntry::LocalApic(e) => fw.cpus.push(MadtCpu {
                    apic_id: e.apic_id as u32,
                    uid: e.processor_id as u32,
                    enabled: { e.flags } & 1 != 0,
                    online_capable: { e.flags } & 2 != 0,
                }),
                MadtEntry::LocalX2Apic(e) => fw.cpus.push(MadtCpu {
                    apic_id: e.x2apic_id,
                    uid: e.processor_uid,
                    enabled: { e.flags } & 1 != 0,
                    online_capable: { e.flags } & 2 != 0,
                }),
                MadtEntry::LocalApicAddressOverride(e) => fw.lapic_base = e.local_apic_address,
                _ => {}
            }
        }
    }
    if let Some(bytes) = tables.srat_bytes() {
        parse_srat(bytes, &mut fw.srat_cpus, &mut fw.srat_mem);
    }
    fw.slit = tables.slit_bytes().and_then(parse_slit);
    fw
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
/// 1 (memory), 2 (local x2APIC). Disabled entries are skipped.
pub fn parse_srat(bytes: &[u8], cpus: &mut Vec<SratCpu>, mem: &mut Vec<SratMem>) {
    let mut off = SRAT_ENTRIES;
    while off + 2 <= bytes.len() {
        let kind = bytes[off];
        let len = bytes[off + 1] as usize;
        if len < 2 || off + len > bytes.len() {
            break;
        }
        let e = &bytes[off..off + len];
        match kind {
            0 if len >= 16 => {
                let flags = u32_at(e, 4).unwrap_or(0);
                if flags & 1 != 0 {
                    let domain = e[2] as u32
                        | (e[9] as u32) << 8
                        | (e[10] as u32) << 16
                        | (e[11] as u32) << 24;
                    cpus.push(SratCpu {
                        apic_id: e[3] as u32,
                        domain,
                    });
                }
            }
            1 if len >= 40 => {
                let flags = u32_at(e, 28).unwrap_or(0);
                if flags & 1 != 0 {
                    let base = u32_at(e, 8).unwrap_or(0) as u64
                        | (u32_at(e, 12).unwrap_or(0) as u64) << 32;
                    let size = u32_at(e, 16).unwrap_or(0) as u64
                        | (u32_at(e, 20).unwrap_or(0) as u64) << 32;
                    mem.push(SratMem {
                        domain: u32_at(e, 2).unwrap_or(0),
                        base,
                        len: size,
                        hotplug: flags & 2 != 0,
                    });
                }
            }
            2 if len >= 24 => {
                let flags = u32_at(e, 12).unwrap_or(0);
                if flags & 1 != 0 {
                    cpus.push(SratCpu {
                        apic_id: u32_at(e, 8).unwrap_or(0),
                        domain: u32_at(e, 4).unwrap_or(0),
                    });
                }
            }
            _ => {}
        }
        off += len;
    }
}

/// Parses the SLIT (ACPI 6.5 §5.2.17): a u64 locality count at offset 36 and
/// an N×N byte matrix after it.
pub fn parse_slit(bytes: &[u8]) -> Option<(usize, Vec<u8>)> {
    let n = u64_at(bytes, 36)?;
    let n = usize::try_from(n).ok().filter(|&n| n > 0 && n <= 256)?;
    let matrix = bytes.get(44..44 + n * n)?;
    Some((n, matrix.to_vec()))
}
