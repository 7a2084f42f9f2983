//! The cache hierarchy from CPUID, read on each CPU and grouped into shared
//! instances the way Linux 6.12 does (arch/x86/kernel/cpu/cacheinfo.c,
//! topology_amd.c, smpboot.c), so that the shared topology model's caches —
//! and with them the scheduler's MC level (CPUs sharing the last-level cache)
//! and CLS level (CPUs sharing the L2) — are the ones a Linux guest on the same
//! QEMU machine builds.
//!
//! Which leaves, by vendor (as Linux's `cpuid4_cache_lookup_regs`):
//! - Intel and every vendor other than AMD and Hygon: leaf 4. A cache is shared
//!   by the CPUs whose APIC ids agree above `order(EAX[25:14] + 1)` bits.
//! - AMD and Hygon with TOPOEXT: leaf 0x8000_001D, same fields. Below the fourth
//!   leaf a cache is shared by the aligned block of `EAX[25:14] + 1` APIC ids;
//!   the fourth (the L3) is shared by the CPUs with the same *LLC id* on the
//!   same NUMA node (`cpu_llc_shared_mask`, which `topology_sane()` cuts at the
//!   node).
//! - AMD without TOPOEXT (QEMU TCG's `qemu64` and `max` models): the legacy leaves
//!   0x8000_0005 (L1d, L1i) and 0x8000_0006 (L2, and an L3 when its associativity
//!   field is non-zero). They say nothing about sharing: L1 and L2 are private to
//!   the CPU, the L3 goes by the LLC id as above.
//!
//! The LLC id (`topo.llc_id`): with TOPOEXT and an L3, on Hygon `APIC id >> 3`,
//! on AMD by family — below 0x17 the node id of leaf 0x8000_001E, 0x17 models up
//! to 0x1F `APIC id >> 3`, later ones `APIC id >> order(L3 sharing)`; otherwise
//! (`legacy_set_llc`) the initial APIC id shifted right by the core domain's
//! width, both as [`crate::shifts::read`] finds them.
//!
//! Not modelled, because no CPU QEMU emulates needs it: leaf 2 descriptors (Intel
//! CPUs without leaf 4, where Linux takes the package as the LLC) and the family
//! 10h-16h node-id MSR.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use raw_cpuid::{Associativity, CacheParameter, CacheType, CpuId, CpuIdReader};
use topology::{Cache, CacheKind};

use crate::family_model;
use crate::shifts::CpuTopology;

/// Cache leaves kept per CPU; real CPUs report 4 or 5, leaf 4 allows more, and
/// anything beyond is dropped rather than allocated for.
pub const MAX_LEAVES: usize = 8;

pub use crate::Vendor;

/// The CPUID leaves the caches came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// Leaf 4 (deterministic cache parameters).
    Leaf4,
    /// AMD leaf 0x8000_001D (cache topology, with TOPOEXT).
    Amd8000001d,
    /// AMD legacy leaves 0x8000_0005 and 0x8000_0006 (no TOPOEXT).
    AmdLegacy,
    /// None of them: no caches are known.
    Nothing,
}

impl Source {
    /// How the kernel's log names it.
    pub fn describe(self) -> &'static str {
        match self {
            Source::Leaf4 => "leaf 4",
            Source::Amd8000001d => "leaf 0x8000001d (TOPOEXT)",
            Source::AmdLegacy => "legacy leaves 0x80000005/6 (no TOPOEXT)",
            Source::Nothing => "no cache leaf",
        }
    }
}

/// Which CPUs share one cache leaf with this CPU, as Linux decides it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sharing {
    /// The CPUs whose APIC ids agree above this many low bits (leaf 4).
    ApicShift(u32),
    /// The CPUs whose APIC ids fall in the same aligned block of this many
    /// (AMD leaf 0x8000_001D below the L3).
    ApicBlock(u32),
    /// This CPU only (AMD's legacy L1 and L2 leaves carry no sharing).
    Alone,
    /// AMD's L3: the CPUs on the same NUMA node whose LLC ids agree, the LLC id
    /// being the APIC id shifted right by `bits` — only its low 8 bits when
    /// `low8` (leaf 1's initial APIC id, what Linux shifts when neither leaf
    /// 0xB/0x1F nor TOPOEXT gives a wider one).
    LlcShift {
        /// Bits shifted out.
        bits: u32,
        /// Shift leaf 1's 8-bit initial APIC id, not the full one.
        low8: bool,
    },
    /// AMD's L3 before family 0x17 with TOPOEXT: the CPUs on the same NUMA node
    /// with this LLC id (leaf 0x8000_001E's node id).
    LlcId(u32),
}

/// One cache leaf as this CPU reported it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Leaf {
    /// 1 for L1...
    pub level: u8,
    /// Data, instruction or unified.
    pub kind: CacheKind,
    /// Size in bytes.
    pub size_bytes: u64,
    /// Line size in bytes.
    pub line_bytes: u32,
    /// Ways (0 = fully associative), if the leaf encodes a known value.
    pub ways: Option<u32>,
    /// Which CPUs share it.
    pub sharing: Sharing,
}

/// What one CPU's CPUID says about its caches: fixed-size, so that an AP can
/// store it in its per-CPU area without allocating.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuCaches {
    /// Vendor whose rules were applied.
    pub vendor: Vendor,
    /// Leaves read.
    pub source: Source,
    /// The APIC id the sharing rules were applied to.
    pub apic_id: u32,
    leaves: [Option<Leaf>; MAX_LEAVES],
    count: usize,
}

impl CpuCaches {
    fn new(vendor: Vendor, source: Source, apic_id: u32) -> Self {
        Self {
            vendor,
            source,
            apic_id,
            leaves: [None; MAX_LEAVES],
            count: 0,
        }
    }

    fn push(&mut self, leaf: Leaf) {
        if let Some(slot) = self.leaves.get_mut(self.count) {
            *slot = Some(leaf);
            self.count += 1;
        }
    }

    /// The leaves in CPUID order (Linux's cache `index0`, `index1`...).
    pub fn leaves(&self) -> impl Iterator<Item = &Leaf> {
        self.leaves.iter().flatten()
    }

    /// What a CPU with APIC id `apic_id` and otherwise the same CPUID would
    /// report: the prediction for CPUs not yet started (homogeneous machines).
    /// An `LlcId` read from leaf 0x8000_001E is kept as it is.
    pub fn for_apic_id(&self, apic_id: u32) -> CpuCaches {
        CpuCaches { apic_id, ..*self }
    }
}

/// `get_count_order`: the bits needed to number `n` things (0 for 0 or 1).
pub fn count_order(n: u32) -> u32 {
    if n <= 1 {
        0
    } else {
        32 - (n - 1).leading_zeros()
    }
}

fn kind_of(t: CacheType) -> Option<CacheKind> {
    match t {
        CacheType::Data => Some(CacheKind::Data),
        CacheType::Instruction => Some(CacheKind::Instruction),
        CacheType::Unified => Some(CacheKind::Unified),
        CacheType::Null | CacheType::Reserved => None,
    }
}

fn ways_of(a: Associativity) -> Option<u32> {
    match a {
        Associativity::DirectMapped => Some(1),
        Associativity::NWay(n) => Some(u32::from(n)),
        Associativity::FullyAssociative => Some(0),
        Associativity::Disabled | Associativity::Unknown => None,
    }
}

/// Reads this CPU's caches through `cpuid` (the CPU executing it, or recorded
/// values on the host). `apic_id` is the CPU's APIC id (x2APIC id when it has
/// one); `topology` is what [`crate::shifts::read`] found on the same CPU
/// (its vendor, and for AMD's legacy LLC id its core-domain shift and
/// initial APIC id's width).
pub fn read<R: CpuIdReader>(cpuid: &CpuId<R>, apic_id: u32, topology: &CpuTopology) -> CpuCaches {
    if topology.vendor.amd_like() {
        read_amd(cpuid, apic_id, topology)
    } else {
        read_leaf4(cpuid, topology.vendor, apic_id)
    }
}

/// A leaf 4 / 0x8000_001D entry; `sharing` gets the number of logical
/// processors sharing it (`EAX[25:14] + 1`).
fn leaf_from_parameters(
    p: &CacheParameter,
    kind: CacheKind,
    sharing: impl Fn(u32) -> Sharing,
) -> Leaf {
    // Linux: (sets) * (line) * (partitions) * (ways), each field plus one.
    // Saturating, as CPUID may hold anything.
    let size_bytes = [
        p.coherency_line_size(),
        p.physical_line_partitions(),
        p.associativity(),
    ]
    .iter()
    .fold(p.sets() as u64, |acc, &f| acc.saturating_mul(f as u64));
    Leaf {
        level: p.level(),
        kind,
        size_bytes,
        line_bytes: p.coherency_line_size() as u32,
        ways: Some(if p.is_fully_associative() {
            0
        } else {
            p.associativity() as u32
        }),
        sharing: sharing(p.max_cores_for_cache() as u32),
    }
}

fn read_leaf4<R: CpuIdReader>(cpuid: &CpuId<R>, vendor: Vendor, apic_id: u32) -> CpuCaches {
    let Some(params) = cpuid.get_cache_parameters() else {
        return CpuCaches::new(vendor, Source::Nothing, apic_id);
    };
    let mut out = CpuCaches::new(vendor, Source::Leaf4, apic_id);
    // Bounded: a CPU (or a hypervisor) that never reports a null leaf must not
    // keep this loop going; Linux's find_num_cache_leaves() would spin.
    for p in params.take(MAX_LEAVES) {
        let Some(kind) = kind_of(p.cache_type()) else {
            break;
        };
        out.push(leaf_from_parameters(&p, kind, |n| {
            Sharing::ApicShift(count_order(n))
        }));
    }
    if out.count == 0 {
        out.source = Source::Nothing;
    }
    out
}

fn read_amd<R: CpuIdReader>(cpuid: &CpuId<R>, apic_id: u32, topology: &CpuTopology) -> CpuCaches {
    let topoext = cpuid
        .get_extended_processor_and_feature_identifiers()
        .is_some_and(|f| f.has_topology_extensions());
    // legacy_set_llc(): the initial APIC id shifted right by the core
    // domain's width, when no other rule set the LLC id.
    let legacy_llc = Sharing::LlcShift {
        bits: topology.shifts.core,
        low8: topology.apic_id_8bit,
    };
    let out = if topoext {
        read_amd_topoext(cpuid, apic_id, topology.vendor, legacy_llc)
    } else {
        read_amd_legacy(cpuid, apic_id, topology.vendor, legacy_llc)
    };
    if out.count == 0 {
        CpuCaches {
            source: Source::Nothing,
            ..out
        }
    } else {
        out
    }
}

/// TOPOEXT: leaf 0x8000_001D lists the caches as leaf 4 does; the L3's
/// sharing is cacheinfo_amd_init_llc_id()'s, from parse_8000_001e().
fn read_amd_topoext<R: CpuIdReader>(
    cpuid: &CpuId<R>,
    apic_id: u32,
    vendor: Vendor,
    legacy_llc: Sharing,
) -> CpuCaches {
    let mut out = CpuCaches::new(vendor, Source::Amd8000001d, apic_id);
    let mut last_sharing = 1;
    if let Some(params) = cpuid.get_cache_parameters() {
        for p in params.take(MAX_LEAVES) {
            let Some(kind) = kind_of(p.cache_type()) else {
                break;
            };
            last_sharing = p.max_cores_for_cache() as u32;
            out.push(leaf_from_parameters(&p, kind, |n| {
                Sharing::ApicBlock(n.max(1))
            }));
        }
    }
    // `cpuid_edx(0x80000006) != 0`: Linux's test for "this CPU has an L3".
    let l3_leaf_nonzero = cpuid.get_l2_l3_cache_and_tlb_info().is_some_and(|c| {
        c.l3cache_size() != 0
            || c.l3cache_line_size() != 0
            || c.l3cache_lines_per_tag() != 0
            || c.l3cache_associativity() != Associativity::Disabled
    });
    let (family, model) = family_model(cpuid);
    let llc = if !l3_leaf_nonzero {
        legacy_llc
    } else if vendor == Vendor::Hygon {
        // cacheinfo_hygon_init_llc_id(): a CCX of 8 threads.
        Sharing::LlcShift {
            bits: 3,
            low8: false,
        }
    } else if family < 0x17 {
        cpuid
            .get_processor_topology_info()
            .map_or(legacy_llc, |t| Sharing::LlcId(u32::from(t.node_id())))
    } else if family == 0x17 && model <= 0x1f {
        Sharing::LlcShift {
            bits: 3,
            low8: false,
        }
    } else {
        Sharing::LlcShift {
            bits: count_order(last_sharing),
            low8: false,
        }
    };
    // __cache_amd_cpumap_setup(): index 3 always takes cpu_llc_shared_mask.
    if let Some(Some(l3)) = out.leaves.get_mut(3) {
        l3.sharing = llc;
    }
    out
}

/// Without TOPOEXT: the L1s from 0x8000_0005, the L2 and L3 from
/// 0x8000_0006 (init_amd_cacheinfo()); only the L3 is shared.
fn read_amd_legacy<R: CpuIdReader>(
    cpuid: &CpuId<R>,
    apic_id: u32,
    vendor: Vendor,
    legacy_llc: Sharing,
) -> CpuCaches {
    let mut out = CpuCaches::new(vendor, Source::AmdLegacy, apic_id);
    if let Some(l1) = cpuid.get_l1_cache_and_tlb_info() {
        let d = (
            CacheKind::Data,
            l1.dcache_size(),
            l1.dcache_line_size(),
            l1.dcache_associativity(),
        );
        let i = (
            CacheKind::Instruction,
            l1.icache_size(),
            l1.icache_line_size(),
            l1.icache_associativity(),
        );
        for (kind, kib, line, assoc) in [d, i] {
            if kib != 0 {
                out.push(Leaf {
                    level: 1,
                    kind,
                    size_bytes: u64::from(kib) * 1024,
                    line_bytes: u32::from(line),
                    ways: ways_of(assoc),
                    sharing: Sharing::Alone,
                });
            }
        }
    }
    if let Some(c) = cpuid.get_l2_l3_cache_and_tlb_info() {
        if c.l2cache_size() != 0 {
            out.push(Leaf {
                level: 2,
                kind: CacheKind::Unified,
                size_bytes: u64::from(c.l2cache_size()) * 1024,
                line_bytes: u32::from(c.l2cache_line_size()),
                ways: ways_of(c.l2cache_associativity()),
                sharing: Sharing::Alone,
            });
        }
        // init_amd_cacheinfo(): a fourth leaf when EDX[15:12] is non-zero.
        if c.l3cache_associativity() != Associativity::Disabled {
            out.push(Leaf {
                level: 3,
                kind: CacheKind::Unified,
                size_bytes: u64::from(c.l3cache_size()) * 512 * 1024,
                line_bytes: u32::from(c.l3cache_line_size()),
                ways: ways_of(c.l3cache_associativity()),
                sharing: legacy_llc,
            });
        }
    }
    out
}

/// Which instance of a cache a CPU with APIC id `apic` is in under
/// `sharing`: the rule (so ids of different rules never meet) and the id, or
/// `None` for a cache the CPU has alone (Linux then has no id for it).
/// `LlcShift` and `LlcId` caches are further cut at the node by the caller.
pub fn sharing_id(apic: u32, sharing: Sharing) -> Option<(u8, u64)> {
    match sharing {
        Sharing::ApicShift(bits) => Some((0, u64::from(apic.checked_shr(bits).unwrap_or(0)))),
        Sharing::ApicBlock(n) => Some((1, u64::from(apic / n.max(1)))),
        Sharing::Alone => None,
        Sharing::LlcShift { bits, low8 } => {
            let id = if low8 { apic & 0xff } else { apic };
            Some((3, u64::from(id.checked_shr(bits).unwrap_or(0))))
        }
        Sharing::LlcId(id) => Some((4, u64::from(id))),
    }
}

/// One CPU's caches with where it sits.
#[derive(Clone, Copy, Debug)]
pub struct Placed {
    /// Logical CPU number.
    pub cpu: u32,
    /// Its NUMA node.
    pub node: u32,
    /// What its CPUID said.
    pub caches: CpuCaches,
}

/// What tells one cache instance from another: (leaf index, level, kind,
/// rule, width, id, node).
type InstanceKey = (usize, u8, CacheKind, u8, u32, u64, u32);

/// Groups every CPU's leaves of level `min_level` and up into shared cache
/// instances for the topology model: CPUs share an instance when they report
/// it at the same leaf index with the same level and kind, and their sharing
/// rule, with the same width, puts them together. Each instance keeps the description of its first
/// CPU; instances come in the order first seen.
pub fn shared_instances(cpus: impl IntoIterator<Item = Placed>, min_level: u8) -> Vec<Cache> {
    let mut index_of: BTreeMap<InstanceKey, usize> = BTreeMap::new();
    // Each instance's description, from its first CPU, and its CPUs.
    let mut descriptions: Vec<(u8, CacheKind, u64, u32, Option<u32>)> = Vec::new();
    let mut members: Vec<Vec<usize>> = Vec::new();
    for p in cpus {
        let apic = p.caches.apic_id;
        for (index, leaf) in p.caches.leaves().enumerate() {
            if leaf.level < min_level {
                continue;
            }
            // Linux compares APIC ids by each CPU's own width, so CPUs
            // whose leaves share by different widths (a hybrid part's big
            // and small cores) never share an instance.
            let width = match leaf.sharing {
                Sharing::ApicShift(bits) | Sharing::LlcShift { bits, .. } => bits,
                Sharing::ApicBlock(n) => n,
                Sharing::Alone | Sharing::LlcId(_) => 0,
            };
            let (rule, id, node) = match sharing_id(apic, leaf.sharing) {
                None => (2, u64::from(p.cpu), 0),
                Some((rule, id)) if rule >= 3 => (rule, id, p.node),
                Some((rule, id)) => (rule, id, 0),
            };
            let at = *index_of
                .entry((index, leaf.level, leaf.kind, rule, width, id, node))
                .or_insert_with(|| {
                    descriptions.push((
                        leaf.level,
                        leaf.kind,
                        leaf.size_bytes,
                        leaf.line_bytes,
                        leaf.ways,
                    ));
                    members.push(Vec::new());
                    descriptions.len() - 1
                });
            members[at].push(p.cpu as usize);
        }
    }
    descriptions
        .into_iter()
        .zip(members)
        .map(
            |((level, kind, size_bytes, line_bytes, ways), cpus)| Cache {
                level,
                kind,
                size_bytes: Some(size_bytes),
                line_bytes: Some(line_bytes).filter(|&l| l > 0),
                ways,
                cpus: cpus.into_iter().collect(),
            },
        )
        .collect()
}
