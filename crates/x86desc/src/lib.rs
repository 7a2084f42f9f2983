//! What an x86 machine's CPUID says about its CPUs, decoded without touching
//! hardware: the vendor, the APIC-id fields and the CPU's own APIC id
//! (`shifts`), the cache hierarchy (`cacheinfo`) and the hybrid core type,
//! by Linux 6.12's rules. The bare-metal kernel reads the registers and
//! hands them here; the CPUID-dump reader and the host tests feed recorded
//! or generated ones. (Its firmware tables, SRAT and SLIT, are decoded by
//! `acpitables`, which `irq` shares.) `no_std` + `alloc`, no unsafe code.
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

extern crate alloc;

pub mod cacheinfo;
pub mod shifts;

use raw_cpuid::{CpuId, CpuIdReader};

/// Whose rules apply: Linux picks its topology and cache parsers by the
/// vendor string of leaf 0 (`get_cpu_vendor`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Vendor {
    /// `GenuineIntel`.
    Intel,
    /// `AuthenticAMD`.
    Amd,
    /// `HygonGenuine`: AMD's rules, with its own quirks.
    Hygon,
    /// `CentaurHauls`.
    Centaur,
    /// `  Shanghai  ` (Zhaoxin).
    Zhaoxin,
    /// Anything else.
    Other,
}

impl Vendor {
    /// The vendor of the CPU `cpuid` reads.
    pub fn of<R: CpuIdReader>(cpuid: &CpuId<R>) -> Vendor {
        match cpuid.get_vendor_info().as_ref().map(|v| v.as_str()) {
            Some("GenuineIntel") => Vendor::Intel,
            Some("AuthenticAMD") => Vendor::Amd,
            Some("HygonGenuine") => Vendor::Hygon,
            Some("CentaurHauls") => Vendor::Centaur,
            Some("  Shanghai  ") => Vendor::Zhaoxin,
            _ => Vendor::Other,
        }
    }

    /// AMD or Hygon, whose topology and cache leaves Linux reads alike.
    pub fn amd_like(self) -> bool {
        matches!(self, Vendor::Amd | Vendor::Hygon)
    }
}

/// Linux's x86_family()/x86_model(), in u32: raw-cpuid's family_id() adds
/// the two u8 fields and overflows on an extended family above 0xf0 (found
/// by the host fuzz test).
pub fn family_model<R: CpuIdReader>(cpuid: &CpuId<R>) -> (u32, u32) {
    let Some(f) = cpuid.get_feature_info() else {
        return (0, 0);
    };
    let base_family = u32::from(f.base_family_id());
    let family = if base_family == 0xf {
        base_family + u32::from(f.extended_family_id())
    } else {
        base_family
    };
    let base_model = u32::from(f.base_model_id());
    let model = if family >= 6 {
        base_model | u32::from(f.extended_model_id()) << 4
    } else {
        base_model
    };
    (family, model)
}

/// An Intel hybrid CPU's core type (leaf 0x1A EAX[31:24]: 0x20 Atom, 0x40
/// Core), or `None` on a CPU that is not hybrid (leaf 7 EDX[15]) or gives
/// type 0. Leaf 0x1A is read whatever leaf 0 says, as Linux's
/// `get_this_hybrid_cpu_type()` does. Decoded by hand: raw-cpuid 11 knows
/// neither the hybrid flag nor leaf 0x1A.
pub fn hybrid_core_type<R: CpuIdReader>(reader: &R) -> Option<u8> {
    let max_leaf = reader.cpuid1(0).eax;
    let hybrid = max_leaf >= 7 && reader.cpuid2(7, 0).edx & (1 << 15) != 0;
    let core_type = (reader.cpuid1(0x1a).eax >> 24) as u8;
    (hybrid && core_type != 0).then_some(core_type)
}
