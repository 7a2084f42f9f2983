//! What the firmware tells us about CPUs and memory: MADT processor entries
//! (through the acpi crate), and SRAT / SLIT parsed from raw bytes. Parsing is
//! bounds-checked: a malformed table yields fewer entries, never a panic.

use crate::arch::acpi::Tables;
pub use crate::srat::{parse_slit, parse_srat, SratCpu, SratMem};
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
