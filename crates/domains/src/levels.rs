//! The topology levels a kernel builds domains from: the architecture's table
//! (`x86_topology`, `powerpc_topology`, `default_topology`) followed by the NUMA
//! levels `sched_init_numa` appends, each with the CPU masks its `tl->mask()` returns.

use alloc::collections::BTreeMap;
use alloc::vec;
use alloc::vec::Vec;

use cpumask::{AsWords, CompactMask, CpuMask};
use topology::{Arch, CacheKind, LevelKind, Topology};

use crate::config::KernelConfig;
use crate::flags::{Flag, Flags, KernelVersion};

/// Interned CPU masks: every span and group in a [`crate::Domains`] is an index
/// here, so that CPUs sharing a span share its storage (Linux shares `sched_group`s
/// the same way) and span equality is an integer comparison.
///
/// Each mask is kept as a [`CompactMask`], which stores only the words its
/// CPUs need: a threads-last core is two words where a [`CpuMask`] is 2 KiB,
/// and on a machine of thousands of CPUs full masks are megabytes of pages
/// touched for the first time. The lookup table maps a fingerprint of the
/// mask's words to an id, so no mask is stored twice; it is a `BTreeMap`
/// rather than a `HashMap` so that the kernel, which builds domains without
/// `std`, needs no further crate.
#[derive(Debug, Default, Clone)]
pub(crate) struct Spans {
    masks: Vec<CompactMask>,
    /// Weight, first and last CPU of each mask, found while fingerprinting it:
    /// domains ask for them per CPU per level.
    weights: Vec<u32>,
    firsts: Vec<u32>,
    lasts: Vec<u32>,
    /// The first id with each fingerprint; `same_fingerprint[id]` is the
    /// next id with the same one (`u32::MAX`: none), as two sets sharing a
    /// fingerprint are possible, if rare.
    index: BTreeMap<u64, u32>,
    same_fingerprint: Vec<u32>,
    /// The non-zero words of the mask being interned, kept between calls.
    scratch: Vec<(usize, u64)>,
}

/// A 64-bit digest of a set's non-zero words with their indices (a
/// multiply-xorshift mix written here rather than a hasher crate's: it is
/// ten lines, needs no `std`, and its input is words, not bytes).
fn fingerprint(entries: &[(usize, u64)]) -> u64 {
    let mut h: u64 = 0x9e37_79b9_7f4a_7c15;
    for &(i, w) in entries {
        let x = (w ^ (i as u64).wrapping_mul(0xff51_afd7_ed55_8ccd))
            .wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h = (h ^ x ^ (x >> 29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    h ^ (h >> 32)
}

impl Spans {
    /// The id of `set` (a [`CpuMask`] or a [`CompactMask`]), stored in
    /// compact form when it is new.
    pub fn intern(&mut self, set: &impl AsWords) -> u32 {
        let mut entries = core::mem::take(&mut self.scratch);
        entries.clear();
        entries.extend(set.as_words().entries().filter(|&(_, w)| w != 0));
        let id = self.intern_entries(&entries);
        self.scratch = entries;
        id
    }

    /// [`Spans::intern`] of the set whose non-zero words are `entries`.
    fn intern_entries(&mut self, entries: &[(usize, u64)]) -> u32 {
        self.intern_as(fingerprint(entries), entries)
    }

    /// [`Spans::intern_entries`] with the fingerprint given, so that tests
    /// can make two sets share one.
    fn intern_as(&mut self, fp: u64, entries: &[(usize, u64)]) -> u32 {
        let id = self.masks.len() as u32;
        let mut at = *self.index.entry(fp).or_insert(id);
        while at != id {
            let stored = self.masks[at as usize].words().entries();
            if stored.filter(|&(_, w)| w != 0).eq(entries.iter().copied()) {
                return at;
            }
            let next = &mut self.same_fingerprint[at as usize];
            if *next == u32::MAX {
                *next = id;
            }
            at = *next;
        }
        self.same_fingerprint.push(u32::MAX);
        self.masks.push(CompactMask::from_entries(entries));
        let first = entries
            .first()
            .map_or(u32::MAX, |&(i, w)| (i * 64) as u32 + w.trailing_zeros());
        let last = entries
            .last()
            .map_or(u32::MAX, |&(i, w)| (i * 64) as u32 + 63 - w.leading_zeros());
        self.weights
            .push(entries.iter().map(|e| e.1.count_ones()).sum());
        self.firsts.push(first);
        self.lasts.push(last);
        id
    }
    /// Drops the lookup table once nothing more is interned.
    pub fn forget_index(&mut self) {
        self.index = BTreeMap::new();
        self.same_fingerprint = Vec::new();
        self.scratch = Vec::new();
    }
    pub fn get(&self, id: u32) -> &CompactMask {
        &self.masks[id as usize]
    }
    /// Number of CPUs in mask `id`.
    pub fn weight(&self, id: u32) -> u32 {
        self.weights[id as usize]
    }
    /// Lowest CPU of mask `id`, if any.
    pub fn first(&self, id: u32) -> Option<u32> {
        Some(self.firsts[id as usize]).filter(|&f| f != u32::MAX)
    }
    /// Highest CPU of mask `id`, if any.
    pub fn last(&self, id: u32) -> Option<u32> {
        Some(self.lasts[id as usize]).filter(|&l| l != u32::MAX)
    }
    /// Number of masks interned.
    pub fn len(&self) -> usize {
        self.masks.len()
    }
}

/// One topology level (`struct sched_domain_topology_level`).
#[derive(Debug, Clone)]
pub struct LevelDef {
    /// `SD_INIT_NAME`: SMT, CLS, CACHE, MC, DIE/PKG, NODE, NUMA.
    pub name: &'static str,
    /// What `tl->sd_flags()` returns (topology flags only).
    pub topology_flags: Flags,
    /// `SDTL_OVERLAP`: the NUMA levels above NODE.
    pub overlap: bool,
    /// For NODE/NUMA levels, `sched_domains_numa_distance[numa_level]`.
    pub numa_distance: Option<u32>,
    /// What the mask is, in words, for the text output's explanations.
    pub mask_source: &'static str,
    /// `of_cpu[cpu]` = interned `tl->mask(cpu) ∩ online`, `u32::MAX` for CPUs not online.
    pub(crate) of_cpu: Vec<u32>,
    /// Two CPUs whose masks overlap without being equal (cpu, its mask, other,
    /// its mask): topology_span_sane() fails and Linux builds no domains.
    pub(crate) not_sane: Option<(u32, CpuMask, u32, CpuMask)>,
}

impl LevelDef {
    /// A level without `SDTL_OVERLAP` or a NUMA distance (the NUMA levels
    /// set theirs after).
    fn new(
        name: &'static str,
        topology_flags: Flags,
        mask_source: &'static str,
        of_cpu: Vec<u32>,
        not_sane: Option<(u32, CpuMask, u32, CpuMask)>,
    ) -> Self {
        LevelDef {
            name,
            topology_flags,
            overlap: false,
            numa_distance: None,
            mask_source,
            of_cpu,
            not_sane,
        }
    }
}

/// Architecture facts that change domain construction.
#[derive(Debug, Clone)]
pub struct ArchRules {
    /// `node_reclaim_distance`: NUMA levels farther than this lose
    /// `SD_BALANCE_EXEC`, `SD_BALANCE_FORK` and `SD_WAKE_AFFINE`.
    pub reclaim_distance: u32,
    /// powerpc v6.8+ `splpar_asym_pack`: a shared-processor LPAR with big cores.
    pub splpar_asym_pack: bool,
    /// x86 `x86_has_numa_in_package`: a package spans several nodes, so no PKG level.
    pub numa_in_package: bool,
    /// `nr_node_ids == 1` (v5.9 then ignores `SD_SERIALIZE` in degenerate parents).
    pub single_node: bool,
    /// Hardware threads per core for powerpc's asym-packing priority.
    pub threads_per_core: u32,
}

pub(crate) struct LevelSet {
    pub levels: Vec<LevelDef>,
    pub rules: ArchRules,
}

/// Builds the level table for `topo` on `kernel`, interning every mask in `spans`.
/// `online` is the set of CPUs still in the topology masks: the online CPUs, plus
/// a CPU being deactivated (see [`crate::Options::deactivating`]).
pub(crate) fn levels_for(
    topo: &Topology,
    kernel: KernelVersion,
    config: &KernelConfig,
    spans: &mut Spans,
    online: CpuMask,
) -> LevelSet {
    let nr = topo.nr_cpu_ids().max(online.last().map_or(0, |l| l + 1));
    let nodes = NodeMap::new(topo);
    let caches = CacheIndex::new(topo, nr);
    let mut ctx = Ctx {
        topo,
        online,
        nr,
        spans,
    };
    let is_power = topo.arch().is_power();
    let is_x86 = matches!(topo.arch(), Arch::X86_64 | Arch::X86);
    let has_big = topo.level(LevelKind::BigCore).is_some();
    let splpar_asym_pack =
        is_power && kernel >= KernelVersion::V6_8 && topo.shared_processor() && has_big;
    let arch = ArchLevels {
        kernel,
        config,
        nodes: &nodes,
        caches: &caches,
    };
    let (mut levels, numa_in_package) = if is_power {
        (arch.power(&mut ctx, splpar_asym_pack), false)
    } else if is_x86 {
        arch.x86(&mut ctx)
    } else {
        (arch.default(&mut ctx), false)
    };
    levels.extend(numa_levels(&mut ctx, kernel, &nodes));
    let max_node_id = topo.nodes().iter().map(|n| n.id).max().unwrap_or(0);
    LevelSet {
        levels,
        rules: ArchRules {
            reclaim_distance: reclaim_distance(topo, is_power, is_x86),
            splpar_asym_pack,
            numa_in_package,
            single_node: max_node_id == 0,
            threads_per_core: threads_per_core(topo),
        },
    }
}

/// Flags of the SMT level on every architecture (`cpu_smt_flags()`).
fn smt_flags() -> Flags {
    Flags::of(&[Flag::ShareCpuCapacity, Flag::ShareLlc])
}

/// What the architectures' level tables (`set_sched_topology()`) read.
struct ArchLevels<'a> {
    kernel: KernelVersion,
    config: &'a KernelConfig,
    nodes: &'a NodeMap,
    caches: &'a CacheIndex,
}

impl ArchLevels<'_> {
    /// powerpc_topology / build_sched_topology(): SMT is the small core when
    /// thread groups exist; CACHE the L2 (big core); MC the coregroup; then
    /// DIE/PKG. `splpar_asym_pack` gives every level but SMT asym packing.
    fn power(&self, ctx: &mut Ctx, splpar_asym_pack: bool) -> Vec<LevelDef> {
        let (kernel, config, caches) = (self.kernel, self.config, self.caches);
        let (topo, online) = (ctx.topo, ctx.online);
        let asym = if splpar_asym_pack {
            Flags::of(&[Flag::AsymPacking])
        } else {
            Flags::EMPTY
        };
        let mut levels = Vec::new();
        if config.sched_smt {
            levels.push(self.smt_level(ctx, "SMT siblings (small core)"));
        }
        let l2 = |t: &Topology, c: usize| {
            if t.level(LevelKind::BigCore).is_some() {
                t.mask_of(c, LevelKind::BigCore)
            } else {
                caches.l2(t, c).unwrap_or_else(|| t.smt_mask(c))
            }
        };
        // `shared_caches`: some CPU's L2 mask is wider than its SMT mask.
        let shared_caches = online.iter().any(|c| l2(topo, c) != topo.smt_mask(c));
        if shared_caches {
            levels.push(ctx.level(
                "CACHE",
                Flags::of(&[Flag::ShareLlc]).union(asym),
                "CPUs sharing the L2 (big core)",
                |t, c| {
                    [
                        group_key(t, c, LevelKind::BigCore),
                        caches.l2_key(c),
                        group_key(t, c, LevelKind::Core),
                    ]
                },
                l2,
            ));
        }
        let coregroup = topo.level(LevelKind::Cluster).is_some();
        // v6.8 has_coregroup_support(): never on a shared-processor LPAR (seed 001).
        let mc = coregroup && !(kernel >= KernelVersion::V6_8 && topo.shared_processor());
        if mc {
            levels.push(ctx.level(
                "MC",
                asym,
                "coregroup",
                |t, c| [group_key(t, c, LevelKind::Cluster)],
                |t, c| t.mask_of(c, LevelKind::Cluster),
            ));
        }
        levels.push(self.package_level(ctx, asym));
        levels
    }

    /// x86_topology / build_sched_topology(); also whether a package spans
    /// nodes (`x86_has_numa_in_package`), which drops the package level.
    fn x86(&self, ctx: &mut Ctx) -> (Vec<LevelDef>, bool) {
        let (kernel, config, nodes, caches) = (self.kernel, self.config, self.nodes, self.caches);
        let (topo, online) = (ctx.topo, ctx.online);
        let mut levels = Vec::new();
        // x86_topology / build_sched_topology(). set_cpu_sibling_map() only links
        // siblings on the same node (topology_sane()), so every mask stops at the node.
        if config.sched_smt {
            levels.push(ctx.level(
                "SMT",
                smt_flags(),
                "SMT siblings",
                |t, c| [group_key(t, c, LevelKind::Core), nodes.node_of(c) as u32],
                |t, c| t.smt_mask(c).and(nodes.cpus(nodes.node_of(c))),
            ));
        }
        if kernel.has_cluster_level() && config.sched_cluster {
            levels.push(ctx.level(
                "CLS",
                Flags::of(&[Flag::Cluster, Flag::ShareLlc]),
                "CPUs sharing the L2 (cpu_l2c_shared_mask)",
                |t, c| {
                    [
                        caches.l2_key(c),
                        group_key(t, c, LevelKind::Core),
                        nodes.node_of(c) as u32,
                    ]
                },
                // set_cpu_sibling_map() links SMT siblings too (and only
                // them when no L2 id is known).
                |t, c| {
                    caches
                        .l2(t, c)
                        .unwrap_or_else(|| t.smt_mask(c))
                        .or(&t.smt_mask(c))
                        .and(nodes.cpus(nodes.node_of(c)))
                },
            ));
        }
        if config.sched_mc {
            levels.push(ctx.level(
                "MC",
                Flags::of(&[Flag::ShareLlc]),
                "CPUs sharing the LLC on the node (cpu_llc_shared_mask)",
                |t, c| {
                    [
                        caches.llc_key(c),
                        group_key(t, c, LevelKind::Core),
                        nodes.node_of(c) as u32,
                    ]
                },
                |t, c| caches.llc(t, c).and(nodes.cpus(nodes.node_of(c))),
            ));
        }
        // x86_has_numa_in_package: two CPUs of one package on different nodes.
        let numa_in_package = topo.level(LevelKind::Package).is_some_and(|l| {
            l.groups.iter().any(|g| {
                let present = online.and(&g.cpus);
                let mut members = present.iter();
                let first = members.next().map(|c| nodes.node_of(c));
                members.any(|o| Some(nodes.node_of(o)) != first)
            })
        });
        if !numa_in_package {
            levels.push(self.package_level(ctx, Flags::EMPTY));
        }
        (levels, numa_in_package)
    }

    /// default_topology (arm64, riscv, ...), with arm64's arch_topology masks.
    fn default(&self, ctx: &mut Ctx) -> Vec<LevelDef> {
        let (kernel, config, nodes, caches) = (self.kernel, self.config, self.nodes, self.caches);
        let mut levels = Vec::new();
        // default_topology (arm64, riscv, ...), with arm64's arch_topology masks.
        if config.sched_smt {
            levels.push(self.smt_level(ctx, "SMT siblings"));
        }
        let has_cluster_level = kernel.has_cluster_level() && config.sched_cluster;
        let coregroup =
            |t: &Topology, c: usize| arm_coregroup(t, nodes, caches, c, has_cluster_level);
        // Everything arm_coregroup() and cluster_siblings() read.
        let arm_key = |t: &Topology, c: usize| {
            [
                nodes.node_of(c) as u32,
                group_key(t, c, LevelKind::Package),
                group_key(t, c, LevelKind::Cluster),
                group_key(t, c, LevelKind::Core),
                caches.llc_key(c),
            ]
        };
        if has_cluster_level {
            levels.push(ctx.level(
                "CLS",
                Flags::of(&[Flag::Cluster, Flag::ShareLlc]),
                "cluster siblings (cpu_clustergroup_mask)",
                arm_key,
                |t, c| {
                    let cluster = cluster_siblings(t, c);
                    if coregroup(t, c).is_subset(&cluster) {
                        t.smt_mask(c)
                    } else {
                        cluster
                    }
                },
            ));
        }
        if config.sched_mc {
            levels.push(ctx.level(
                "MC",
                Flags::of(&[Flag::ShareLlc]),
                "smallest of node, package, LLC (cpu_coregroup_mask)",
                arm_key,
                coregroup,
            ));
        }
        levels.push(self.package_level(ctx, Flags::EMPTY));
        levels
    }

    /// SMT: a core's threads (`cpu_smt_mask`), on powerpc the small core.
    fn smt_level(&self, ctx: &mut Ctx, mask_source: &'static str) -> LevelDef {
        ctx.level(
            "SMT",
            smt_flags(),
            mask_source,
            |t, c| [group_key(t, c, LevelKind::Core)],
            |t, c| t.smt_mask(c),
        )
    }

    /// The outermost level every architecture ends with (DIE before v6.8,
    /// PKG after): the CPUs of the node (`cpu_cpu_mask`).
    fn package_level(&self, ctx: &mut Ctx, flags: Flags) -> LevelDef {
        let nodes = self.nodes;
        ctx.level(
            self.kernel.package_level_name(),
            flags,
            "NUMA node (cpu_cpu_mask)",
            |_, c| [nodes.node_of(c) as u32],
            |_, c| nodes.node_mask(c),
        )
    }
}

/// sched_init_numa(): a NODE level for the local distance and one overlapping
/// NUMA level for each further distinct distance.
fn numa_levels(ctx: &mut Ctx, kernel: KernelVersion, nodes: &NodeMap) -> Vec<LevelDef> {
    let online = ctx.online;
    let (counted, distances) = numa_distances(kernel, nodes, &online);
    let mut levels = Vec::new();
    for (numa_level, &dist) in distances.iter().enumerate() {
        // masks[level][node] = CPUs of counted nodes within `dist`, interned
        // as each is made.
        let node_masks: Vec<u32> = (0..nodes.len())
            .map(|j| {
                let mut m = CpuMask::new();
                for &k in &counted {
                    if nodes.distance(j, k) <= dist {
                        m.or_assign(nodes.cpus(k));
                    }
                }
                m.and_assign(&online);
                ctx.spans.intern(&m)
            })
            .collect();
        let (name, flags, overlap, source) = if numa_level == 0 {
            ("NODE", Flags::EMPTY, false, "NUMA node (identity distance)")
        } else {
            (
                "NUMA",
                Flags::of(&[Flag::Numa]),
                true,
                "nodes within this distance",
            )
        };
        let mut level = ctx.level_by_node(name, flags, source, &node_masks, nodes);
        level.overlap = overlap;
        level.numa_distance = Some(dist);
        levels.push(level);
    }
    levels
}

/// The nodes sched_init_numa() counts and the distinct distances between
/// them. v6.x takes the distances between every two nodes with CPUs. v5.9
/// (before the v5.12 rewrite with a set) assumed node 0's row holds every
/// distance: it took the local distance and the larger values of row 0
/// only, over every node.
fn numa_distances(
    kernel: KernelVersion,
    nodes: &NodeMap,
    online: &CpuMask,
) -> (Vec<usize>, Vec<u32>) {
    let counted: Vec<usize> = (0..nodes.len())
        .filter(|&n| kernel == KernelVersion::V5_9 || nodes.has_cpus(n, online))
        .collect();
    let mut distances: Vec<u32> = Vec::new();
    if kernel == KernelVersion::V5_9 {
        let local = nodes.distance(0, 0);
        distances.push(local);
        distances.extend(
            counted
                .iter()
                .map(|&k| nodes.distance(0, k))
                .filter(|&d| d > local),
        );
    } else {
        for &i in &counted {
            for &j in &counted {
                distances.push(nodes.distance(i, j));
            }
        }
    }
    distances.sort_unstable();
    distances.dedup();
    if distances.is_empty() {
        distances.push(10);
    }
    (counted, distances)
}

/// `node_reclaim_distance`: NUMA levels beyond it stop balancing on exec,
/// fork and wake.
fn reclaim_distance(topo: &Topology, is_power: bool, is_x86: bool) -> u32 {
    if is_power {
        // arch/powerpc/include/asm/topology.h: RECLAIM_DISTANCE 10.
        10
    } else if is_x86 && is_amd_zen(topo) {
        // arch/x86/kernel/cpu/amd.c sets node_reclaim_distance = 32 on family 17h+.
        32
    } else {
        30
    }
}

/// Threads per core as powerpc's `threads_per_core` counts them: the big
/// core's threads where thread groups exist.
fn threads_per_core(topo: &Topology) -> u32 {
    match topo.level(LevelKind::BigCore) {
        Some(l) => l.groups.iter().map(|g| g.cpus.weight()).max().unwrap_or(1) as u32,
        // The largest rank of a CPU among its known siblings, plus one: the
        // widest core, without counting every core's 2 KiB mask.
        None => topo
            .cpus()
            .iter()
            .filter(|c| c.group(LevelKind::Core).is_some())
            .map(|c| c.thread + 1)
            .max()
            .unwrap_or(1),
    }
}

struct Ctx<'a> {
    topo: &'a Topology,
    online: CpuMask,
    nr: usize,
    spans: &'a mut Spans,
}

impl Ctx<'_> {
    /// Interns `mask(cpu) ∩ online` for every online CPU. `key(cpu)` names
    /// everything `mask(cpu)` reads (group indices, node, cache), so CPUs
    /// with equal keys have equal masks and each distinct mask is computed
    /// once, not a 2 KiB mask copied per CPU and level.
    fn level<K: Ord>(
        &mut self,
        name: &'static str,
        topology_flags: Flags,
        mask_source: &'static str,
        key: impl Fn(&Topology, usize) -> K,
        mask: impl Fn(&Topology, usize) -> CpuMask,
    ) -> LevelDef {
        let (topo, online) = (self.topo, self.online);
        let own = |spans: &mut Spans, cpu: usize| {
            let mut m = mask(topo, cpu);
            m.and_assign(&online);
            let inside = m.contains(cpu);
            m.set(cpu);
            (spans.intern(&m), inside)
        };
        // Sorting CPUs by key puts each key's CPUs together, lowest first,
        // and costs less than a map lookup per CPU.
        let mut keyed: Vec<(K, u32)> = online.iter().map(|c| (key(topo, c), c as u32)).collect();
        keyed.sort_unstable();
        let mut of_cpu = vec![u32::MAX; self.nr];
        // Distinct masks, each with the first CPU that has it.
        let mut distinct: Vec<(u32, u32)> = Vec::new();
        for run in keyed.chunk_by(|a, b| a.0 == b.0) {
            let first = run[0].1;
            let (id, first_inside) = own(self.spans, first as usize);
            distinct.push((id, first));
            of_cpu[first as usize] = id;
            for &(_, cpu) in &run[1..] {
                // The level's mask holds the CPU itself: should the key's
                // mask not hold this CPU, its own mask differs.
                of_cpu[cpu as usize] = if first_inside && self.spans.get(id).contains(cpu as usize)
                {
                    id
                } else {
                    let (other, _) = own(self.spans, cpu as usize);
                    distinct.push((other, cpu));
                    other
                };
            }
        }
        distinct.sort_unstable();
        distinct.dedup_by_key(|d| d.0);
        // Each online CPU lies in its own mask, so the distinct masks cover
        // the online CPUs; they are disjoint exactly when their weights add
        // up to no more than that.
        let total: usize = distinct
            .iter()
            .map(|&(id, _)| self.spans.weight(id) as usize)
            .sum();
        let not_sane = if total == self.online.weight() {
            None
        } else {
            distinct.sort_unstable_by_key(|d| d.1);
            span_not_sane(self.spans, &distinct, self.nr)
        };
        LevelDef::new(name, topology_flags, mask_source, of_cpu, not_sane)
    }
}

/// topology_span_sane(): the distinct masks of a non-NUMA level (each with
/// the first CPU that has it, in CPU order) must be pairwise disjoint. The
/// first overlap found, as (cpu, its mask, the other CPU, its mask).
fn span_not_sane(
    spans: &Spans,
    distinct: &[(u32, u32)],
    nr: usize,
) -> Option<(u32, CpuMask, u32, CpuMask)> {
    let mut owner = vec![u32::MAX; nr.max(cpumask::MAX_CPUS)];
    for &(id, cpu) in distinct {
        for member in spans.get(id).iter() {
            match owner[member] {
                u32::MAX => owner[member] = cpu,
                other => {
                    let other_mask = spans.get(distinct.iter().find(|d| d.1 == other)?.0);
                    return Some((
                        cpu,
                        spans.get(id).to_cpumask(),
                        other,
                        other_mask.to_cpumask(),
                    ));
                }
            }
        }
    }
    None
}

impl Ctx<'_> {
    /// A NUMA level: one interned mask per node, `ids[node]` (they overlap,
    /// so no partition short-cut).
    fn level_by_node(
        &mut self,
        name: &'static str,
        topology_flags: Flags,
        mask_source: &'static str,
        ids: &[u32],
        nodes: &NodeMap,
    ) -> LevelDef {
        let mut of_cpu = vec![u32::MAX; self.nr];
        for cpu in self.online.iter() {
            of_cpu[cpu] = ids[nodes.node_of(cpu)];
        }
        LevelDef::new(name, topology_flags, mask_source, of_cpu, None)
    }
}

/// Nodes as the scheduler sees them: the topology's nodes, or one node 0 holding
/// every CPU when the topology has none. CPUs without a node go to the first node.
/// Masks are computed once: level masks ask for them once per CPU group.
struct NodeMap {
    masks: Vec<CpuMask>,
    of: Vec<u32>,
    distances: Vec<u32>,
}

impl NodeMap {
    fn new(topo: &Topology) -> Self {
        let n = topo.nodes().len().max(1);
        let mut masks: Vec<CpuMask> = if topo.nodes().is_empty() {
            vec![topo.known()]
        } else {
            topo.nodes().iter().map(|x| x.cpus.to_cpumask()).collect()
        };
        let mut of = vec![0u32; topo.cpus().last().map_or(0, |c| c.id as usize + 1)];
        for c in topo.cpus() {
            match c.node {
                Some(i) if !topo.nodes().is_empty() => of[c.id as usize] = i,
                _ => {
                    of[c.id as usize] = 0;
                    masks[0].set(c.id as usize);
                }
            }
        }
        let mut distances = Vec::with_capacity(n * n);
        for a in 0..n {
            for b in 0..n {
                distances.push(if topo.nodes().is_empty() {
                    10
                } else {
                    topo.distance(a, b)
                });
            }
        }
        NodeMap {
            masks,
            of,
            distances,
        }
    }
    fn len(&self) -> usize {
        self.masks.len()
    }
    fn node_of(&self, cpu: usize) -> usize {
        self.of.get(cpu).copied().unwrap_or(0) as usize
    }
    fn cpus(&self, node: usize) -> &CpuMask {
        &self.masks[node]
    }
    fn node_mask(&self, cpu: usize) -> CpuMask {
        self.masks[self.node_of(cpu)]
    }
    fn has_cpus(&self, node: usize, online: &CpuMask) -> bool {
        self.masks[node].intersects(online)
    }
    fn distance(&self, a: usize, b: usize) -> u32 {
        self.distances[a * self.len() + b]
    }
}

/// Per CPU, its L2 and its last-level cache (indices into `Topology::caches`),
/// found once: asking `Topology` per CPU scans every cache each time.
struct CacheIndex {
    l2: Vec<u32>,
    llc: Vec<u32>,
}

impl CacheIndex {
    fn new(topo: &Topology, nr: usize) -> Self {
        let mut index = CacheIndex {
            l2: vec![u32::MAX; nr],
            llc: vec![u32::MAX; nr],
        };
        let mut llc_level = vec![0u8; nr];
        index.add(topo, |level| level >= 2, &mut llc_level);
        // An L1 is the last level only for a CPU with no larger cache: most
        // machines skip the pass (its masks are half of all caches).
        let known = |c: &usize| topo.cpu(*c).is_some();
        if (0..nr).filter(known).any(|c| index.llc[c] == u32::MAX) {
            index.add(topo, |level| level < 2, &mut llc_level);
        }
        index
    }
    /// Takes the data and unified caches whose level passes `wanted`.
    fn add(&mut self, topo: &Topology, wanted: impl Fn(u8) -> bool, llc_level: &mut [u8]) {
        let nr = self.llc.len();
        for (i, cache) in topo.caches().iter().enumerate() {
            if cache.kind == CacheKind::Instruction || !wanted(cache.level) {
                continue;
            }
            for cpu in cache.cpus.iter().filter(|&c| c < nr) {
                if cache.level == 2 && self.l2[cpu] == u32::MAX {
                    self.l2[cpu] = i as u32;
                }
                // The last of the highest level, as Topology::llc_mask picks.
                if cache.level >= llc_level[cpu] {
                    llc_level[cpu] = cache.level;
                    self.llc[cpu] = i as u32;
                }
            }
        }
    }
    fn get(topo: &Topology, v: &[u32], cpu: usize) -> Option<CpuMask> {
        match v.get(cpu) {
            Some(&i) if i != u32::MAX => Some(topo.caches()[i as usize].cpus.to_cpumask()),
            _ => None,
        }
    }
    /// The CPUs sharing `cpu`'s L2, if an L2 is described.
    fn l2(&self, topo: &Topology, cpu: usize) -> Option<CpuMask> {
        Self::get(topo, &self.l2, cpu)
    }
    /// `Topology::llc_mask`: the last-level cache's CPUs, else the SMT siblings.
    fn llc(&self, topo: &Topology, cpu: usize) -> CpuMask {
        Self::get(topo, &self.llc, cpu).unwrap_or_else(|| topo.smt_mask(cpu))
    }
    /// Which L2 `cpu` has, for level keys (none: `u32::MAX`).
    fn l2_key(&self, cpu: usize) -> u32 {
        self.l2.get(cpu).copied().unwrap_or(u32::MAX)
    }
    /// Which last-level cache `cpu` has, for level keys (none: `u32::MAX`).
    fn llc_key(&self, cpu: usize) -> u32 {
        self.llc.get(cpu).copied().unwrap_or(u32::MAX)
    }
    fn has_any(&self, cpu: usize) -> bool {
        self.llc.get(cpu).is_some_and(|&i| i != u32::MAX)
    }
}

/// `cpu`'s group at `kind` for level keys: the group's index, or the CPU
/// itself (high bit set) when it has none and `mask_of` is the CPU alone.
fn group_key(topo: &Topology, cpu: usize, kind: LevelKind) -> u32 {
    match topo.cpu(cpu).and_then(|c| c.group(kind)) {
        Some(g) if topo.level(kind).is_some() => g,
        _ => ALONE | cpu as u32,
    }
}

/// Marks a key part that stands for one CPU rather than a group or cache.
const ALONE: u32 = 1 << 31;

/// arm64 `cluster_sibling`: the cluster, or the SMT siblings where none is described.
fn cluster_siblings(topo: &Topology, cpu: usize) -> CpuMask {
    if topo.level(LevelKind::Cluster).is_some() {
        topo.mask_of(cpu, LevelKind::Cluster)
    } else {
        topo.smt_mask(cpu)
    }
}

/// drivers/base/arch_topology.c cpu_coregroup_mask(): the smallest of the node,
/// the package and the LLC, widened to the cluster when the LLC is narrower.
fn arm_coregroup(
    topo: &Topology,
    nodes: &NodeMap,
    caches: &CacheIndex,
    cpu: usize,
    cluster_enabled: bool,
) -> CpuMask {
    let mut core = nodes.node_mask(cpu);
    let pkg = topo.package_mask(cpu);
    if pkg.is_subset(&core) {
        core = pkg;
    }
    if caches.has_any(cpu) {
        let llc = caches.llc(topo, cpu);
        if llc.is_subset(&core) {
            core = llc;
        }
    }
    let cluster = cluster_siblings(topo, cpu);
    if cluster_enabled && core.is_subset(&cluster) {
        core = cluster;
    }
    core
}

fn is_amd_zen(topo: &Topology) -> bool {
    topo.model_name()
        .is_some_and(|m| m.contains("EPYC") || m.contains("Ryzen") || m.contains("Threadripper"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sets that share a fingerprint (2^-64 by chance; forced here) get
    /// their own ids, and each is found again by its words.
    #[test]
    fn sets_sharing_a_fingerprint_stay_apart() {
        let sets: [&[(usize, u64)]; 4] =
            [&[(0, 0b11)], &[(0, 0b1), (128, 0b1)], &[(3, 1 << 63)], &[]];
        let mut spans = Spans::default();
        let ids: Vec<u32> = sets.iter().map(|e| spans.intern_as(7, e)).collect();
        assert_eq!(ids, [0, 1, 2, 3]);
        for (e, &id) in sets.iter().zip(&ids).rev() {
            assert_eq!(spans.intern_as(7, e), id);
            let mask: CpuMask = e
                .iter()
                .flat_map(|&(i, w)| {
                    (0..64)
                        .filter(move |b| w >> b & 1 == 1)
                        .map(move |b| i * 64 + b)
                })
                .collect();
            assert_eq!(*spans.get(id), mask);
            assert_eq!(spans.weight(id) as usize, mask.weight());
            assert_eq!(spans.first(id).map(|f| f as usize), mask.first());
            assert_eq!(spans.last(id).map(|l| l as usize), mask.last());
        }
        // The same sets through the public path: their real fingerprints.
        let mut real = Spans::default();
        let masks = [
            CpuMask::parse_list("0-1").unwrap(),
            CpuMask::parse_list("0,8192").unwrap(),
        ];
        let a = real.intern(&masks[0]);
        let b = real.intern(&CompactMask::from(&masks[1]));
        assert_eq!((a, b), (0, 1));
        assert_eq!(real.intern(&CompactMask::from(&masks[0])), a);
        assert_eq!(real.intern(&masks[1]), b);
        assert_eq!(real.len(), 2);
    }
}
