//! How an x86 APIC id splits into SMT, core, die and package fields: CPUID
//! leaf 0x1F (preferred) or 0xB, else leaf 1's logical-processor count.

use raw_cpuid::{CpuId, CpuIdReader};

/// Bit widths that split an APIC id into SMT, core, die and package fields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ApicShifts {
    /// Bits of the APIC id that number threads within a core.
    pub smt: u32,
    /// Bits (from bit 0) that number threads within a package.
    pub package: u32,
    /// Bits (from bit 0) that number threads within the level above cores
    /// (module, tile, die, or the package when CPUID reports none of them).
    pub core: u32,
    /// Bits (from bit 0) below the die field, when leaf 0x1F enumerates a
    /// die level (type 5); `None` when it does not, as then Linux's die is
    /// the package.
    pub die: Option<u32>,
    /// Which CPUID leaf the shifts came from.
    pub leaf: u32,
}

/// Where one APIC id sits, as Linux numbers it (topology_common.c
/// `topo_set_ids`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ApicIds {
    /// The package: the id above the package shift.
    pub package: u32,
    /// The die within the package, on CPUs that enumerate dies.
    pub die: Option<u32>,
    /// The core within the package: every bit between the SMT and the
    /// package fields (module, tile and die bits included), so that cores
    /// of different modules or dies never share a number.
    pub core: u32,
}

/// `value`'s bits from `lo` up to (not including) `hi`; 0 when empty.
fn field(value: u32, lo: u32, hi: u32) -> u32 {
    if hi <= lo || lo >= 32 {
        0
    } else {
        value.checked_shr(lo).unwrap_or(0) & (u32::MAX >> (32 - (hi - lo).min(32)))
    }
}

impl ApicShifts {
    /// Leaf 0x1F/0xB's core-level shift, when the shifts came from either
    /// (what the AMD cache rules shift LLC ids by).
    pub fn xtopology_core_shift(&self) -> Option<u32> {
        (self.leaf != 1).then_some(self.core)
    }

    /// The package, die and core of the CPU with APIC id `apic`.
    pub fn ids(&self, apic: u32) -> ApicIds {
        ApicIds {
            package: apic.checked_shr(self.package).unwrap_or(0),
            die: self.die.map(|below| field(apic, below, self.package)),
            core: field(apic, self.smt, self.package),
        }
    }
}

/// Leaf 0x1F's level type for a die (Intel SDM vol. 2A, CPUID leaf 1FH;
/// Linux's topology_ext.c `DIE_TYPE`).
const DIE_TYPE: u32 = 5;

/// Reads the shifts through `reader` (the executing CPU, or a recorded table).
///
/// The sub-leaves are read raw rather than through raw-cpuid's
/// `ExtendedTopologyLevel::level_type`, which panics on level types newer
/// than the crate knows (a kernel must not panic on what a CPU reports).
pub fn apic_shifts<R: CpuIdReader>(reader: R) -> ApicShifts {
    let max_leaf = reader.cpuid1(0).eax;
    let mut out = ApicShifts::default();
    for leaf in [0x1f_u32, 0xb] {
        if max_leaf < leaf {
            continue;
        }
        let mut any = false;
        for sub in 0..8 {
            let r = reader.cpuid2(leaf, sub);
            let kind = (r.ecx >> 8) & 0xff;
            if kind == 0 {
                break;
            }
            let shift = r.eax & 0x1f;
            match kind {
                1 => out.smt = shift,
                2 => out.core = shift,
                // The die field starts where the level below it ends.
                DIE_TYPE if leaf == 0x1f => out.die = Some(out.package),
                _ => {}
            }
            any = true;
            out.package = shift;
        }
        if any {
            if out.core == 0 {
                out.core = out.package;
            }
            out.leaf = leaf;
            return out;
        }
    }
    let per_pkg = CpuId::with_cpuid_reader(reader)
        .get_feature_info()
        .map(|f| u32::from(f.max_logical_processor_ids()).max(1))
        .unwrap_or(1);
    out.package = 32 - (per_pkg.next_power_of_two() - 1).leading_zeros();
    out.core = out.package;
    out.leaf = 1;
    out
}
