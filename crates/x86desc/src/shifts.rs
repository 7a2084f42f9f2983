//! How an x86 CPU's APIC id splits into SMT, core, die and package fields,
//! and which APIC id the CPU reports, read from CPUID by the rules of Linux
//! 6.12-stable's topology scan (arch/x86/kernel/cpu/topology_common.c
//! `parse_topology`, topology_ext.c, topology_amd.c, with the 2025 fixes
//! that try leaf 0x8000_0026/0xB on AMD and Hygon without TOPOEXT and keep
//! their x2APIC id over 0x8000_001E's):
//!
//! - Intel: leaf 0x1F, else 0x8000_0026, else 0xB (`cpu_parse_topology_ext`);
//!   without any, leaf 1's logical-processor count and leaf 4's core count
//!   (`parse_legacy`).
//! - Centaur and Zhaoxin: always `parse_legacy`.
//! - AMD and Hygon: the extended leaves as Intel; without them 0x8000_0008's
//!   core-id size, then with TOPOEXT 0x8000_001E's extended APIC id and, from
//!   family 0x17, its threads per core. Hygon models up to 3 on bare metal
//!   have a fixed package shift of 6.
//! - Any other vendor: one thread per core, one core per package.
//!
//! Linux keeps a shift per domain (SMT, core, module, tile, die, die group,
//! package); a level read sets its domain and every domain above it, so a
//! domain the CPU does not enumerate has the shift of the one below.

use raw_cpuid::{CpuId, CpuIdReader};

use crate::cacheinfo::count_order;
use crate::{family_model, Vendor};

/// Bit widths that split an APIC id into SMT, core, die and package fields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ApicShifts {
    /// Bits of the APIC id that number threads within a core.
    pub smt: u32,
    /// Bits (from bit 0) that number threads within a package.
    pub package: u32,
    /// Bits (from bit 0) that number threads within the level above cores
    /// (module, tile, die, or the package when CPUID reports none of them):
    /// Linux's core-domain shift, by which AMD's legacy LLC id is cut.
    pub core: u32,
    /// Bits (from bit 0) below the die field, when dies split the package
    /// (a die level of leaf 0x1F, AMD's CCD of leaf 0x8000_0026); `None`
    /// when Linux's die is the package.
    pub die: Option<u32>,
    /// Which CPUID leaf the shifts came from: 0x1F, 0xB or 0x8000_0026,
    /// 0x8000_0008 (AMD without them), 1 (leaves 1 and 4), 0 (none).
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
    /// The package, die and core of the CPU with APIC id `apic`.
    pub fn ids(&self, apic: u32) -> ApicIds {
        ApicIds {
            package: apic.checked_shr(self.package).unwrap_or(0),
            die: self.die.map(|below| field(apic, below, self.package)),
            core: field(apic, self.smt, self.package),
        }
    }
}

/// What one CPU's CPUID says about where it sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuTopology {
    /// How its APIC id splits.
    pub shifts: ApicShifts,
    /// Its initial APIC id (Linux's `topo.initial_apicid`): the x2APIC id of
    /// the extended topology leaf, else AMD's 0x8000_001E extended one, else
    /// leaf 1's 8 bits.
    pub apic_id: u32,
    /// Whether `apic_id` is leaf 1's 8-bit one (nothing wider was read).
    pub apic_id_8bit: bool,
    /// Whose rules were applied.
    pub vendor: Vendor,
}

/// Linux's topology domains, innermost first (`enum x86_topology_domains`).
const SMT: usize = 0;
const CORE: usize = 1;
const MODULE: usize = 2;
const TILE: usize = 3;
const DIE: usize = 4;
const DIEGRP: usize = 5;
const DOMAINS: usize = 7;

/// The sub-leaves read of one extended topology leaf at most: real CPUs
/// have up to six levels; a table that never ends must not loop.
const MAX_LEVELS: u32 = 16;

/// Each domain's shift and CPU count, as Linux's `topo_scan` keeps them.
struct Domains {
    shifts: [u32; DOMAINS],
    ncpus: [u32; DOMAINS],
}

impl Domains {
    /// `topology_update_dom`: this domain only.
    fn update(&mut self, dom: usize, shift: u32, ncpus: u32) {
        self.shifts[dom] = shift;
        self.ncpus[dom] = ncpus;
    }

    /// `topology_set_dom`: this domain and, by propagation, every one above.
    fn set(&mut self, dom: usize, shift: u32, ncpus: u32) {
        for d in dom..DOMAINS {
            self.update(d, shift, ncpus);
        }
    }
}

/// One extended topology leaf (`parse_topology_leaf`): the domains it
/// enumerates and its x2APIC id; false when its sub-leaf 0 is empty.
fn parse_ext_leaf<R: CpuIdReader>(
    reader: &R,
    leaf: u32,
    doms: &mut Domains,
    apic_id: &mut Option<u32>,
) -> bool {
    // Level type → domain; a type past the table takes the domain above
    // the last known one, as Linux does.
    let map: &[usize] = match leaf {
        0xb => &[SMT, CORE],
        0x1f => &[SMT, CORE, MODULE, TILE, DIE, DIEGRP],
        // AMD's CCD is Linux's tile, its socket Linux's die.
        _ => &[SMT, CORE, TILE, DIE],
    };
    let (mut last, mut levels) = (SMT, 0);
    for sub in 0..MAX_LEVELS {
        let r = reader.cpuid2(leaf, sub);
        let kind = (r.ecx >> 8) & 0xff;
        let ncpus = r.ebx & 0xffff;
        if kind == 0 || ncpus == 0 {
            break;
        }
        // At most DIEGRP + 1, the package domain: `last` is a known one.
        let dom = match map.get(kind as usize - 1) {
            Some(&d) => {
                last = d;
                d
            }
            None => last + 1,
        };
        if dom == SMT {
            *apic_id = Some(r.edx);
        }
        doms.set(dom, r.eax & 0x1f, ncpus);
        levels += 1;
    }
    if levels == 0 {
        return false;
    }
    // Some CPUs say shift 0 for an SMT level of two threads: they are SMT.
    if doms.shifts[SMT] == 0 && doms.ncpus[SMT] > 1 {
        doms.update(SMT, count_order(doms.ncpus[SMT]), doms.ncpus[SMT]);
    }
    true
}

/// `cpu_parse_topology_ext`: the first of leaves 0x1F, 0x8000_0026, 0xB the
/// CPU has, or `None`.
fn parse_ext<R: CpuIdReader>(
    reader: &R,
    doms: &mut Domains,
    apic_id: &mut Option<u32>,
) -> Option<u32> {
    let max_leaf = reader.cpuid1(0).eax;
    // Compared as a number, as Linux compares `extended_cpuid_level`, even
    // when it is no 0x8000_xxxx leaf.
    let max_ext = reader.cpuid1(0x8000_0000).eax;
    let candidates = [
        (0x1f, max_leaf >= 0x1f),
        (0x8000_0026, max_ext >= 0x8000_0026),
        (0xb, max_leaf >= 0xb),
    ];
    candidates
        .into_iter()
        .filter(|&(_, present)| present)
        .find(|&(leaf, _)| parse_ext_leaf(reader, leaf, doms, apic_id))
        .map(|(leaf, _)| leaf)
}

/// `parse_legacy`: leaf 4's cores per package, and with HTT leaf 1's
/// logical processors per package, the surplus numbering threads.
fn parse_legacy<R: CpuIdReader>(cpuid: &CpuId<R>, doms: &mut Domains) {
    let cores = cpuid
        .get_cache_parameters()
        .and_then(|mut leaves| leaves.next())
        .map_or(1, |l| l.max_cores_for_package() as u32);
    let mut core_shift = count_order(cores);
    let mut smt_shift = 0;
    if let Some(f) = cpuid.get_feature_info().filter(|f| f.has_htt()) {
        let nproc_shift = count_order(u32::from(f.max_logical_processor_ids()));
        smt_shift = nproc_shift.saturating_sub(core_shift);
        core_shift += smt_shift;
    }
    doms.set(SMT, smt_shift, 1 << smt_shift);
    doms.set(CORE, core_shift, cores << smt_shift);
}

/// `cpu_parse_topology_amd` (AMD and Hygon), after the extended leaves
/// failed: 0x8000_0008's core-id size; false when the CPU lacks it.
fn parse_8000_0008<R: CpuIdReader>(cpuid: &CpuId<R>, doms: &mut Domains) -> bool {
    let Some(c) = cpuid.get_processor_capacity_feature_info() else {
        return false;
    };
    let nthreads = c.num_phys_threads() as u32;
    let shift = match u32::from(c.apic_id_size()) {
        0 => count_order(nthreads),
        size => size,
    };
    doms.update(SMT, 0, 1);
    doms.set(CORE, shift, nthreads);
    true
}

/// X86_FEATURE_TOPOEXT (0x8000_0001 ECX bit 22) as `get_cpu_cap` sets it:
/// the flags are read only when 0x8000_0000 names a 0x8000_xxxx leaf.
fn has_topoext<R: CpuIdReader>(reader: &R) -> bool {
    let max_ext = reader.cpuid1(0x8000_0000).eax;
    max_ext & 0xffff_0000 == 0x8000_0000
        && max_ext >= 0x8000_0001
        && reader.cpuid1(0x8000_0001).ecx & (1 << 22) != 0
}

/// Reads one CPU's topology through `reader` (the executing CPU, or a
/// recorded table).
///
/// The extended topology sub-leaves are read raw rather than through
/// raw-cpuid's `ExtendedTopologyLevel::level_type`, which panics on level
/// types newer than the crate knows (a kernel must not panic on what a CPU
/// reports); leaf 4's first sub-leaf counts cores even when it is not a
/// cache, as Linux's `parse_num_cores_legacy` reads it.
pub fn read<R: CpuIdReader>(reader: R) -> CpuTopology {
    let cpuid = CpuId::with_cpuid_reader(reader.clone());
    let vendor = Vendor::of(&cpuid);
    // fake_topology(): one thread per core, one core per package.
    let mut doms = Domains {
        shifts: [0; DOMAINS],
        ncpus: [1; DOMAINS],
    };
    let leaf1 = cpuid.get_feature_info();
    let mut apic_id = None;
    let mut leaf = 0;
    match vendor {
        Vendor::Intel => {
            if let Some(l) = parse_ext(&reader, &mut doms, &mut apic_id) {
                leaf = l;
            } else if leaf1.is_some() {
                parse_legacy(&cpuid, &mut doms);
                leaf = 1;
            }
        }
        Vendor::Centaur | Vendor::Zhaoxin if leaf1.is_some() => {
            parse_legacy(&cpuid, &mut doms);
            leaf = 1;
        }
        Vendor::Amd | Vendor::Hygon => {
            let xtopology = parse_ext(&reader, &mut doms, &mut apic_id);
            if let Some(l) = xtopology {
                leaf = l;
            } else if parse_8000_0008(&cpuid, &mut doms) {
                leaf = 0x8000_0008;
            }
            if leaf != 0 && has_topoext(&reader) {
                // parse_8000_001e reads the leaf on TOPOEXT alone, whatever
                // 0x8000_0000 says; raw, as raw-cpuid's threads_per_core()
                // adds EBX[15:8]'s 1 in u8 and overflows at 0xff.
                let topoext = reader.cpuid1(0x8000_001e);
                let (family, model) = family_model(&cpuid);
                if xtopology.is_none() {
                    apic_id = Some(topoext.eax);
                    if family >= 0x17 {
                        let n = ((topoext.ebx >> 8) & 0xff) + 1;
                        doms.update(SMT, count_order(n), n);
                    }
                }
                let hypervisor = leaf1.as_ref().is_some_and(|f| f.has_hypervisor());
                if vendor == Vendor::Hygon && !hypervisor && model <= 3 {
                    // Hygon's package is ApicId[6..] whatever CPUID says.
                    doms.set(CORE, 6, doms.ncpus[CORE]);
                }
            }
        }
        _ => {}
    }
    let apic_id_8bit = apic_id.is_none();
    let apic_id = apic_id.unwrap_or_else(|| {
        leaf1
            .as_ref()
            .map_or(0, |f| u32::from(f.initial_local_apic_id()))
    });
    CpuTopology {
        shifts: ApicShifts {
            smt: doms.shifts[SMT],
            core: doms.shifts[CORE],
            // topo_set_ids(): the die id is the APIC id above the tile
            // domain, the package id above the die group's; dies exist
            // when the first is narrower.
            die: (doms.shifts[TILE] < doms.shifts[DIEGRP]).then_some(doms.shifts[TILE]),
            package: doms.shifts[DIEGRP],
            leaf,
        },
        apic_id,
        apic_id_8bit,
        vendor,
    }
}
