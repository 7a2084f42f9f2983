//! Incremental topology masks, updated on every CPU online and offline, with
//! the two algorithms of seed 000.
//!
//! Storage: Linux keeps one mask per CPU per level, but every online member of
//! a group has the same mask (the group ∩ online) and an offline CPU's masks
//! are empty. So the engine stores one mask per *group* ("slot"), shared by its
//! online members, and a per-CPU slot index — 2 KiB per group instead of
//! 2 KiB per CPU per level, which keeps 16384 CPUs at a few MiB. A CPU learns
//! its slot the way Linux learns its mask: by finding, through firmware ids,
//! an online CPU of the same group (or, if none, starting a new one).

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use bootproto::strategy::Algo;
use cpumask::CpuMask;
use topology::{CacheKind, LevelKind, Topology};

use crate::counts::{LevelWork, WorkCounts};
use crate::error::HotplugError;
use crate::fdt::{FirmwareTree, NodeId, NO_ID};
use crate::vocab::MaskLevel;
use crate::x86::X86Description;

/// Where the engine reads each CPU's group ids from.
#[derive(Debug, Clone)]
enum Source {
    /// A POWER-style device tree, queried the way Linux's powerpc code does
    /// (each query a property look-up, finding a CPU's node a walk of /cpus).
    Tree(FirmwareTree),
    /// An x86 machine's per-CPU ids from CPUID and the SRAT: a CPU's "unit"
    /// is the CPU itself, its ids one indexed load.
    X86(X86Description),
}

impl Source {
    /// `of_get_cpu_node`, or the CPU itself on x86.
    fn cpu_unit(&self, cpu: usize, work: &mut LevelWork) -> Option<NodeId> {
        match self {
            Source::Tree(t) => t.of_get_cpu_node(cpu, work),
            Source::X86(d) => d.key(cpu, MaskLevel::Smt).map(|_| cpu as NodeId),
        }
    }

    /// Every CPU's unit, found once (`NO_ID` for CPUs without one).
    fn index(&self, nr: usize, work: &mut LevelWork) -> Vec<NodeId> {
        match self {
            Source::Tree(t) => t.index_cpu_nodes(work),
            Source::X86(d) => {
                let mut units = vec![NO_ID; nr];
                for cpu in d.present().filter(|&c| c < nr) {
                    units[cpu] = cpu as NodeId;
                }
                units
            }
        }
    }

    /// The unit's group key at `level` (`None`: no such group, e.g. no
    /// coregroups).
    fn key(&self, unit: NodeId, level: MaskLevel, work: &mut LevelWork) -> Option<u64> {
        match self {
            Source::Tree(t) => t.key_of_node(unit, level, work),
            Source::X86(d) => d.key(unit as usize, level),
        }
    }

    /// The CPUs of the unit's SMT core.
    fn threads(&self, unit: NodeId, work: &mut LevelWork) -> Vec<usize> {
        match self {
            Source::Tree(t) => t.threads_of(unit, work),
            Source::X86(d) => d.siblings(unit as usize).to_vec(),
        }
    }

    /// The first CPU of the unit's SMT core satisfying `pred`.
    fn find_thread(
        &self,
        unit: NodeId,
        work: &mut LevelWork,
        pred: impl FnMut(usize) -> bool,
    ) -> Option<usize> {
        match self {
            Source::Tree(t) => t.find_thread(unit, work, pred),
            Source::X86(d) => d.find_sibling(unit as usize, work, pred),
        }
    }
}

/// The mask an offline or unknown CPU has at every level.
static EMPTY: CpuMask = CpuMask::new();
const NONE: u32 = u32::MAX;
/// Key used for a coregroup cell of "none" on firmware that has coregroups elsewhere.
const NO_KEY: u64 = u64::MAX;

/// Masks of one level: shared per-group slots.
#[derive(Debug, Clone, Default)]
struct LevelState {
    slots: Vec<CpuMask>,
    /// Lowest and highest word ever set in the slot since it was allocated: a
    /// conservative span that bounds word-wise operations.
    span: Vec<(u16, u16)>,
    free: Vec<u32>,
    /// Scoped, levels with no enclosing scope: firmware id → slot, like Linux's
    /// `node_to_cpumask_map[nid]` and chip-id lookup table.
    by_id: BTreeMap<u64, u32>,
    /// Slot of each CPU (`NONE` when offline).
    slot_of: Vec<u32>,
}

impl LevelState {
    /// A level with `groups` empty slots allocated and written now, as Linux
    /// allocates its cpumasks at boot (`smp_prepare_cpus`), so that onlining
    /// never allocates or first-touches mask memory.
    fn new(nr: usize, groups: usize) -> Self {
        let mut slots = Vec::with_capacity(groups);
        for _ in 0..groups {
            slots.push(CpuMask::new());
        }
        LevelState {
            slots,
            span: vec![(0, 0); groups],
            free: (0..groups as u32).rev().collect(),
            by_id: BTreeMap::new(),
            slot_of: vec![NONE; nr],
        }
    }

    fn alloc(&mut self, cpu: usize, work: &mut LevelWork) -> u32 {
        let word = (cpu / 64) as u16;
        let s = match self.free.pop() {
            Some(s) => {
                self.span[s as usize] = (word, word);
                s
            }
            None => {
                self.slots.push(CpuMask::new());
                self.span.push((word, word));
                (self.slots.len() - 1) as u32
            }
        };
        self.slots[s as usize].set(cpu);
        self.slot_of[cpu] = s;
        work.mask_bit_ops += 1;
        s
    }

    fn join(&mut self, cpu: usize, s: u32, work: &mut LevelWork) {
        let word = (cpu / 64) as u16;
        let span = &mut self.span[s as usize];
        span.0 = span.0.min(word);
        span.1 = span.1.max(word);
        self.slots[s as usize].set(cpu);
        self.slot_of[cpu] = s;
        work.mask_bit_ops += 1;
    }

    /// Removes `cpu` from its slot; returns whether the slot became empty (and free).
    fn leave(&mut self, cpu: usize, work: &mut LevelWork) -> bool {
        let s = self.slot_of[cpu];
        if s == NONE {
            return false;
        }
        self.slot_of[cpu] = NONE;
        let slot = &mut self.slots[s as usize];
        slot.clear(cpu);
        work.mask_bit_ops += 1;
        // The slot's span bounds the emptiness check.
        let (lo, hi) = self.span[s as usize];
        let words = &slot.words()[lo as usize..=hi as usize];
        work.mask_word_ops += words.len() as u64;
        let empty = words.iter().all(|&w| w == 0);
        if empty {
            self.free.push(s);
        }
        empty
    }

    fn mask(&self, cpu: usize) -> &CpuMask {
        match self.slot_of.get(cpu) {
            Some(&s) if s != NONE => &self.slots[s as usize],
            _ => &EMPTY,
        }
    }
}

/// A CPU whose incremental mask differs from the from-scratch rebuild.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// The CPU.
    pub cpu: usize,
    /// The level (`None` for the online set).
    pub level: Option<MaskLevel>,
    /// What the rebuild computed.
    pub expected: CpuMask,
    /// What the engine holds.
    pub actual: CpuMask,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "CPU {} {} mask is {{{}}}, rebuild says {{{}}}",
            self.cpu,
            self.level.map_or("online", |l| l.name()),
            self.actual,
            self.expected
        )
    }
}

/// Masks recomputed from the topology alone, for every CPU, given an online set.
#[derive(Debug, Clone)]
pub struct RebuiltMasks {
    online: CpuMask,
    group_of: Vec<[u32; MaskLevel::COUNT]>,
    groups: [Vec<CpuMask>; MaskLevel::COUNT],
}

impl RebuiltMasks {
    /// The rebuilt mask of `cpu` at `level` (empty when offline).
    pub fn mask(&self, cpu: usize, level: MaskLevel) -> &CpuMask {
        if !self.online.contains(cpu) {
            return &EMPTY;
        }
        match self.group_of.get(cpu) {
            Some(g) if g[level as usize] != NONE => {
                &self.groups[level as usize][g[level as usize] as usize]
            }
            _ => &EMPTY,
        }
    }

    /// The online set the rebuild was made for.
    pub fn online(&self) -> &CpuMask {
        &self.online
    }
}

/// Group keys computed straight from the [`Topology`] model — the independent
/// truth the incremental masks are checked against (they never look at the
/// firmware tree). Indexed by CPU number; `NO_KEY` for unknown CPUs.
fn truth_keys(topology: &Topology, nr: usize) -> Vec<[u64; MaskLevel::COUNT]> {
    let tag = |t: u64, v: u32| (t << 32) | v as u64;
    // Per CPU: the first level-2 data/unified cache listed, and the first one
    // listed at the highest level >= 2 (one pass over the caches).
    let mut l2: Vec<Option<u32>> = vec![None; nr];
    let mut llc: Vec<Option<(u8, u32)>> = vec![None; nr];
    for (ci, c) in topology.caches().iter().enumerate() {
        if c.kind == CacheKind::Instruction || c.level < 2 {
            continue;
        }
        for cpu in c.cpus.iter().filter(|&cpu| cpu < nr) {
            if c.level == 2 && l2[cpu].is_none() {
                l2[cpu] = Some(ci as u32);
            }
            if llc[cpu].is_none_or(|(level, _)| c.level > level) {
                llc[cpu] = Some((c.level, ci as u32));
            }
        }
    }
    let has_cluster = topology.level(LevelKind::Cluster).is_some();
    let mut keys = vec![[NO_KEY; MaskLevel::COUNT]; nr];
    for cpu in topology.cpus() {
        let id = cpu.id as usize;
        let core = tag(1, cpu.group(LevelKind::Core).unwrap_or(NO_ID));
        let l2_key = match (l2[id], cpu.group(LevelKind::BigCore)) {
            (Some(ci), _) => tag(2, ci),
            (None, Some(big)) => tag(3, big),
            (None, None) => core,
        };
        let coregroup = if has_cluster {
            tag(4, cpu.group(LevelKind::Cluster).unwrap_or(NO_ID))
        } else {
            l2_key
        };
        let package = tag(5, cpu.group(LevelKind::Package).unwrap_or(NO_ID));
        let node = tag(6, cpu.node.unwrap_or(NO_ID));
        let llc_key = llc[id].map_or(core, |(_, ci)| tag(2, ci));
        keys[id] = [core, l2_key, coregroup, package, node, llc_key];
    }
    keys
}

/// The group keys of the present CPUs at every level, for deciding which
/// levels share storage and in which order the scoped algorithm updates them.
struct LevelShape<'a> {
    present: &'a CpuMask,
    keys: &'a [[u64; MaskLevel::COUNT]],
}

impl LevelShape<'_> {
    /// Whether every `inner` group lies inside one `outer` group.
    fn nests(&self, inner: MaskLevel, outer: MaskLevel) -> bool {
        let mut map: BTreeMap<u64, u64> = BTreeMap::new();
        self.present.iter().all(|cpu| {
            let (i, o) = (
                self.keys[cpu][inner as usize],
                self.keys[cpu][outer as usize],
            );
            *map.entry(i).or_insert(o) == o
        })
    }

    /// Number of groups at `level`.
    fn groups(&self, level: MaskLevel) -> usize {
        let mut ks: Vec<u64> = self
            .present
            .iter()
            .map(|c| self.keys[c][level as usize])
            .collect();
        ks.sort_unstable();
        ks.dedup();
        ks.len()
    }

    /// Consolidates: a level with the same groups as another shares its
    /// storage (seed 000's "check for duplicate topologies"). SMT comes first
    /// so that levels equal to it (an L2 per core) are kept through the node's
    /// thread list rather than a scan. Chains (coregroup → L2 → SMT) are
    /// followed to the level really stored.
    fn consolidate(&self, storage: &mut [MaskLevel; MaskLevel::COUNT]) {
        let representative_first = [
            MaskLevel::Smt,
            MaskLevel::Node,
            MaskLevel::Package,
            MaskLevel::Llc,
            MaskLevel::Coregroup,
            MaskLevel::L2,
        ];
        for (i, &level) in representative_first.iter().enumerate() {
            if storage[level as usize] != level {
                continue;
            }
            for &earlier in &representative_first[..i] {
                if storage[earlier as usize] == earlier
                    && self.nests(level, earlier)
                    && self.nests(earlier, level)
                {
                    storage[level as usize] = earlier;
                    break;
                }
            }
        }
        for level in MaskLevel::ALL {
            let mut target = storage[level as usize];
            while storage[target as usize] != target {
                target = storage[target as usize];
            }
            storage[level as usize] = target;
        }
    }

    /// The scoped update order: coarsest first, so each level scans only
    /// inside the tightest already-updated level that encloses it (`scope`);
    /// SMT last (from the thread list).
    fn scoped_order(
        &self,
        storage: &[MaskLevel; MaskLevel::COUNT],
        scope: &mut [Option<MaskLevel>; MaskLevel::COUNT],
    ) -> Vec<MaskLevel> {
        let coarse_first = [
            MaskLevel::Node,
            MaskLevel::Package,
            MaskLevel::Llc,
            MaskLevel::Coregroup,
            MaskLevel::L2,
            MaskLevel::Smt,
        ];
        let mut rest: Vec<(usize, MaskLevel)> = coarse_first
            .into_iter()
            .filter(|&l| storage[l as usize] == l && l != MaskLevel::Smt)
            .map(|l| (self.groups(l), l))
            .collect();
        rest.sort();
        let mut order: Vec<MaskLevel> = rest.into_iter().map(|(_, l)| l).collect();
        for i in 0..order.len() {
            scope[order[i] as usize] = order[..i]
                .iter()
                .rev()
                .copied()
                .find(|&m| self.nests(order[i], m));
        }
        if storage[MaskLevel::Smt as usize] == MaskLevel::Smt {
            order.push(MaskLevel::Smt);
        }
        order
    }
}

/// What [`MaskEngine::assemble`] builds an engine from.
struct Parts {
    algo: Algo,
    source: Source,
    nr: usize,
    present: CpuMask,
    boot_cpu: usize,
    cpu_node: Vec<NodeId>,
    keys: Vec<[u64; MaskLevel::COUNT]>,
    truth: Vec<[u64; MaskLevel::COUNT]>,
    has_coregroup: bool,
    setup: WorkCounts,
}

/// The incremental mask engine. See the crate documentation for an example.
#[derive(Debug, Clone)]
pub struct MaskEngine {
    algo: Algo,
    source: Source,
    nr: usize,
    boot_cpu: usize,
    allow_boot_offline: bool,
    present: CpuMask,
    online: CpuMask,
    levels: [LevelState; MaskLevel::COUNT],
    /// Level whose slots hold this level's masks (itself when not consolidated).
    storage: [MaskLevel; MaskLevel::COUNT],
    /// Levels updated on online, in order.
    order: Vec<MaskLevel>,
    /// Scoped: the level whose mask bounds the scan (`None` = all online CPUs).
    scope: [Option<MaskLevel>; MaskLevel::COUNT],
    /// Scoped: CPU → its firmware node, indexed once at construction.
    cpu_node: Vec<NodeId>,
    /// Scoped: firmware ids cached at a CPU's first online.
    ids: Vec<[u64; MaskLevel::COUNT]>,
    ids_cached: CpuMask,
    /// Truth keys per CPU, from the topology model, for `rebuild_from_scratch`.
    truth: Vec<[u64; MaskLevel::COUNT]>,
    scan_buf: Vec<u64>,
    setup_work: WorkCounts,
}

impl MaskEngine {
    /// Builds the firmware tree for `topology` and an engine in which only the
    /// boot CPU (the first online CPU of the topology, else the first present
    /// one) is online.
    ///
    /// Set-up (once): the firmware tree is indexed, every CPU's firmware ids are
    /// read once and checked against the topology model (an irregularity that
    /// one-node-per-core firmware cannot express is an [`HotplugError::Unsupported`]
    /// error rather than silently wrong masks), and, for [`Algo::Scoped`],
    /// levels with identical masks are consolidated and each level's scan scope
    /// chosen. The cost is in [`MaskEngine::setup_work`].
    pub fn new(topology: &Topology, algo: Algo) -> Result<MaskEngine, HotplugError> {
        let nr = topology.cpus().last().map_or(0, |c| c.id as usize + 1);
        let mut setup = WorkCounts::default();
        let present: CpuMask = topology
            .cpus()
            .iter()
            .map(|c| c.id as usize)
            .filter(|&c| topology.present().contains(c))
            .collect();
        let boot_cpu = topology
            .online()
            .and(&present)
            .first()
            .or_else(|| present.first())
            .ok_or(HotplugError::UnknownCpu(0))?;

        let source = Source::Tree(FirmwareTree::from_topology(topology)?);
        let cpu_node = source.index(nr, &mut setup.other);
        let truth = truth_keys(topology, nr);

        let (keys, has_coregroup) = firmware_keys(&source, &cpu_node, &present, nr, &mut setup)?;
        check_same_groups(&keys, &truth, &present)?;

        Self::assemble(Parts {
            algo,
            source,
            nr,
            present,
            boot_cpu,
            cpu_node,
            keys,
            truth,
            has_coregroup,
            setup,
        })
    }

    /// An engine for an x86 machine described by its CPUs' CPUID and ACPI ids
    /// ([`X86Description`]), with `boot_cpu` online. It cannot disagree with
    /// itself, so it refuses no shape of machine: what the description says
    /// is both the firmware's word and the truth `verify` checks against.
    pub fn for_x86(
        description: X86Description,
        boot_cpu: usize,
        algo: Algo,
    ) -> Result<MaskEngine, HotplugError> {
        let nr = description.nr();
        let present: CpuMask = description.present().collect();
        if !present.contains(boot_cpu) {
            return Err(HotplugError::UnknownCpu(boot_cpu));
        }
        let mut keys = vec![[NO_KEY; MaskLevel::COUNT]; nr];
        for cpu in present.iter() {
            for level in MaskLevel::ALL {
                keys[cpu][level as usize] = description.key(cpu, level).unwrap_or(NO_KEY);
            }
            // No coregroups: the MC level uses the L2 mask, as in `new`.
            keys[cpu][MaskLevel::Coregroup as usize] = keys[cpu][MaskLevel::L2 as usize];
        }
        let mut setup = WorkCounts::default();
        let source = Source::X86(description);
        let cpu_node = source.index(nr, &mut setup.other);
        Self::assemble(Parts {
            algo,
            source,
            nr,
            present,
            boot_cpu,
            cpu_node,
            truth: keys.clone(),
            keys,
            has_coregroup: false,
            setup,
        })
    }

    /// The engine from every present CPU's keys: consolidation and scan
    /// scopes (scoped), storage, then the boot CPU online.
    fn assemble(parts: Parts) -> Result<MaskEngine, HotplugError> {
        let (algo, nr) = (parts.algo, parts.nr);
        let shape = LevelShape {
            present: &parts.present,
            keys: &parts.keys,
        };
        let mut storage = MaskLevel::ALL;
        let mut scope = [None; MaskLevel::COUNT];
        if !parts.has_coregroup {
            storage[MaskLevel::Coregroup as usize] = MaskLevel::L2;
        }
        let order: Vec<MaskLevel> = match algo {
            Algo::Naive => MaskLevel::ALL
                .into_iter()
                .filter(|&l| storage[l as usize] == l)
                .collect(),
            Algo::Scoped => {
                shape.consolidate(&mut storage);
                shape.scoped_order(&storage, &mut scope)
            }
        };
        let levels = core::array::from_fn(|li| {
            let level = MaskLevel::ALL[li];
            let stored = storage[li] == level && order.contains(&level);
            LevelState::new(nr, if stored { shape.groups(level) } else { 0 })
        });
        let mut engine = MaskEngine {
            algo,
            source: parts.source,
            nr,
            boot_cpu: parts.boot_cpu,
            allow_boot_offline: false,
            present: parts.present,
            online: CpuMask::new(),
            levels,
            storage,
            order,
            scope,
            cpu_node: parts.cpu_node,
            ids: vec![[NO_KEY; MaskLevel::COUNT]; nr],
            ids_cached: CpuMask::new(),
            truth: parts.truth,
            scan_buf: vec![0; cpumask::MAX_CPUS / 64],
            setup_work: parts.setup,
        };
        let boot_work = engine.online(parts.boot_cpu)?;
        engine.setup_work += boot_work;
        Ok(engine)
    }

    /// The algorithm in use.
    pub fn algo(&self) -> Algo {
        self.algo
    }

    /// The firmware tree the engine queries (`None` for an x86 description).
    pub fn firmware(&self) -> Option<&FirmwareTree> {
        match &self.source {
            Source::Tree(t) => Some(t),
            Source::X86(_) => None,
        }
    }

    /// The boot CPU (online from construction, refuses to go offline unless
    /// [`MaskEngine::allow_boot_cpu_offline`]).
    pub fn boot_cpu(&self) -> usize {
        self.boot_cpu
    }

    /// Allows offlining the boot CPU (x86 `cpu0_hotplug`); the last online CPU
    /// still cannot go.
    pub fn allow_boot_cpu_offline(&mut self, allow: bool) {
        self.allow_boot_offline = allow;
    }

    /// CPUs that can be onlined: present and with known topology.
    pub fn present(&self) -> &CpuMask {
        &self.present
    }

    /// The online set.
    pub fn online_mask(&self) -> &CpuMask {
        &self.online
    }

    /// Work done once at construction (tree indexing, id checks, boot CPU).
    pub fn setup_work(&self) -> &WorkCounts {
        &self.setup_work
    }

    /// Bytes held for masks and per-CPU bookkeeping: the group slots of every
    /// stored level, the per-CPU slot indexes and id cache. (Per-CPU masks as
    /// Linux keeps them would be 2 KiB × CPUs × levels.)
    pub fn mask_storage_bytes(&self) -> usize {
        let per_level: usize = self
            .levels
            .iter()
            .map(|l| {
                l.slots.capacity() * core::mem::size_of::<CpuMask>()
                    + l.span.capacity() * 4
                    + l.free.capacity() * 4
                    + l.slot_of.capacity() * 4
                    + l.by_id.len() * 12
            })
            .sum();
        per_level + self.ids.capacity() * core::mem::size_of::<[u64; MaskLevel::COUNT]>()
    }

    /// The level whose storage `level` shares after consolidation (itself when
    /// it is maintained separately).
    pub fn consolidated_into(&self, level: MaskLevel) -> MaskLevel {
        self.storage[level as usize]
    }

    /// Levels actually updated on each online, in update order.
    pub fn update_order(&self) -> &[MaskLevel] {
        &self.order
    }

    /// `cpu`'s mask at `level`: the online CPUs of its group, itself included;
    /// empty when `cpu` is offline or unknown.
    pub fn masks(&self, cpu: usize, level: MaskLevel) -> &CpuMask {
        self.levels[self.storage[level as usize] as usize].mask(cpu)
    }

    fn check_known(&self, cpu: usize) -> Result<(), HotplugError> {
        if cpu < self.nr && self.present.contains(cpu) {
            Ok(())
        } else {
            Err(HotplugError::UnknownCpu(cpu))
        }
    }

    /// Brings `cpu`'s masks online (Linux's `add_cpu_to_masks` plus
    /// `set_cpu_online`) and returns the work it took. On error nothing changes.
    pub fn online(&mut self, cpu: usize) -> Result<WorkCounts, HotplugError> {
        self.check_known(cpu)?;
        if self.online.contains(cpu) {
            return Err(HotplugError::AlreadyOnline(cpu));
        }
        let mut work = WorkCounts::default();
        match self.algo {
            Algo::Naive => self.online_naive(cpu, &mut work),
            Algo::Scoped => self.online_scoped(cpu, &mut work),
        }
        self.online.set(cpu);
        work.other.mask_bit_ops += 1;
        Ok(work)
    }

    /// Whether [`MaskEngine::offline`] would accept `cpu`, and if not, why.
    pub fn can_offline(&self, cpu: usize) -> Result<(), HotplugError> {
        self.check_known(cpu)?;
        if !self.online.contains(cpu) {
            return Err(HotplugError::AlreadyOffline(cpu));
        }
        if cpu == self.boot_cpu && !self.allow_boot_offline {
            return Err(HotplugError::BootCpu(cpu));
        }
        if self.online.weight() == 1 {
            return Err(HotplugError::LastOnline(cpu));
        }
        Ok(())
    }

    /// Takes `cpu` out of every mask (Linux's `remove_cpu_from_masks` plus
    /// `set_cpu_online(false)`). Refuses the boot CPU and the last online CPU.
    /// On error nothing changes.
    pub fn offline(&mut self, cpu: usize) -> Result<WorkCounts, HotplugError> {
        self.can_offline(cpu)?;
        let mut work = WorkCounts::default();
        if self.algo == Algo::Naive {
            // Pre-5.10: walk the package mask (a superset of the others) and
            // unrelate the CPU pairwise at every level.
            let package = *self.masks(cpu, MaskLevel::Package);
            for i in package.iter() {
                for &level in &self.order {
                    let lw = &mut work.levels[level as usize];
                    lw.cpus_scanned += 1;
                    if self.levels[level as usize].mask(cpu).contains(i) {
                        lw.mask_bit_ops += 2;
                    }
                }
            }
        }
        for &level in &self.order {
            let li = level as usize;
            let emptied = self.levels[li].leave(cpu, &mut work.levels[li]);
            if emptied && self.algo == Algo::Scoped && self.scope[li].is_none() {
                self.levels[li].by_id.remove(&self.ids[cpu][li]);
            }
        }
        self.online.clear(cpu);
        work.other.mask_bit_ops += 1;
        Ok(work)
    }

    /// The firmware key of `cpu` at `level` the slow way: find the CPU node by
    /// walking `/cpus`, then read the property.
    fn key_by_walk(&self, cpu: usize, level: MaskLevel, work: &mut LevelWork) -> u64 {
        let Some(node) = self.source.cpu_unit(cpu, work) else {
            return NO_KEY;
        };
        let level = if self.storage[MaskLevel::Coregroup as usize] == MaskLevel::L2
            && level == MaskLevel::Coregroup
        {
            MaskLevel::L2
        } else {
            level
        };
        self.source.key(node, level, work).unwrap_or(NO_KEY)
    }

    fn online_naive(&mut self, cpu: usize, work: &mut WorkCounts) {
        let order = self.order.clone();
        for level in order {
            let li = level as usize;
            let lw = &mut work.levels[li];
            if level == MaskLevel::Smt {
                // Threads of this CPU's node: the node is found by walking /cpus.
                let node = self.source.cpu_unit(cpu, lw);
                let threads = node.map(|n| self.source.threads(n, lw)).unwrap_or_default();
                for t in threads {
                    lw.cpus_scanned += 1;
                    if t != cpu && self.online.contains(t) {
                        relate(&mut self.levels[li], cpu, t, lw);
                    }
                }
            } else {
                let mine = self.key_by_walk(cpu, level, lw);
                let online = self.online;
                for i in online.iter() {
                    lw.cpus_scanned += 1;
                    if self.key_by_walk(i, level, lw) == mine {
                        relate(&mut self.levels[li], cpu, i, lw);
                    }
                }
            }
            if self.levels[li].slot_of[cpu] == NONE {
                self.levels[li].alloc(cpu, lw);
            }
        }
    }

    /// Linux 5.10's `add_cpu_to_masks`: each level in scoped order, `cpu`
    /// joins the group of an online CPU with its id, found through the
    /// cheapest means the level has, or starts the group.
    fn online_scoped(&mut self, cpu: usize, work: &mut WorkCounts) {
        let node = self.cpu_node[cpu];
        self.cache_ids(cpu, node, work);
        for oi in 0..self.order.len() {
            let level = self.order[oi];
            let li = level as usize;
            let lw = &mut work.levels[li];
            let found = if level == MaskLevel::Smt {
                self.online_sibling(cpu, node, lw)
                    .map(|t| self.levels[li].slot_of[t])
            } else if let Some(outer) = self.scope[li] {
                self.scan_scope(cpu, li, outer, lw)
            } else {
                // Outermost levels: the id table (Linux indexes node masks by
                // node id).
                self.levels[li].by_id.get(&self.ids[cpu][li]).copied()
            };
            let state = &mut self.levels[li];
            match found {
                Some(s) => state.join(cpu, s, lw),
                None => {
                    let s = state.alloc(cpu, lw);
                    if level != MaskLevel::Smt && self.scope[li].is_none() {
                        state.by_id.insert(self.ids[cpu][li], s);
                    }
                }
            }
        }
    }

    /// Reads `cpu`'s firmware id at every stored level once, the first time
    /// it comes online.
    fn cache_ids(&mut self, cpu: usize, node: NodeId, work: &mut WorkCounts) {
        if self.ids_cached.contains(cpu) {
            return;
        }
        for &level in &self.order {
            let lw = &mut work.levels[level as usize];
            let key = self.source.key(node, level, lw).unwrap_or(NO_KEY);
            self.ids[cpu][level as usize] = key;
        }
        self.ids_cached.set(cpu);
    }

    /// The SMT level takes the whole sibling set at once: the first online
    /// thread listed in the node's interrupt-server list.
    fn online_sibling(&self, cpu: usize, node: NodeId, lw: &mut LevelWork) -> Option<usize> {
        let online = &self.online;
        self.source
            .find_thread(node, lw, |t| t != cpu && online.contains(t))
    }

    /// The slot of `cpu`'s group at level `li`, found among the online CPUs
    /// of its group at the enclosing level `outer`; a CPU of another group
    /// rules out all of that group's members at once.
    fn scan_scope(
        &mut self,
        cpu: usize,
        li: usize,
        outer: MaskLevel,
        lw: &mut LevelWork,
    ) -> Option<u32> {
        let (lo, hi) = self.load_scope(cpu, outer, lw);
        let n = hi - lo + 1;
        let key = self.ids[cpu][li];
        let state = &self.levels[li];
        let mut w = 0;
        while w < n {
            let bits = self.scan_buf[w];
            if bits == 0 {
                w += 1;
                lw.mask_word_ops += 1;
                continue;
            }
            let i = (lo + w) * 64 + bits.trailing_zeros() as usize;
            lw.cpus_scanned += 1;
            let s = state.slot_of[i];
            if self.ids[i][li] == key {
                return Some(s).filter(|&s| s != NONE);
            }
            let (slo, shi) = state.span[s as usize];
            let (from, to) = ((slo as usize).max(lo), (shi as usize).min(hi));
            let words = state.slots[s as usize].words();
            for (b, w) in self.scan_buf[from - lo..=to - lo]
                .iter_mut()
                .zip(&words[from..=to])
            {
                *b &= !w;
            }
            lw.mask_word_ops += (to + 1 - from) as u64;
        }
        None
    }

    /// Copies the words `lo..=hi` of `cpu`'s group mask at level `outer`
    /// (the candidates), without `cpu` itself, into the scan buffer.
    fn load_scope(&mut self, cpu: usize, outer: MaskLevel, lw: &mut LevelWork) -> (usize, usize) {
        let st = &self.levels[outer as usize];
        let s = st.slot_of[cpu] as usize;
        let (lo, hi) = (st.span[s].0 as usize, st.span[s].1 as usize);
        let n = hi - lo + 1;
        self.scan_buf[..n].copy_from_slice(&st.slots[s].words()[lo..=hi]);
        lw.mask_word_ops += n as u64;
        if cpu / 64 >= lo && cpu / 64 <= hi {
            self.scan_buf[cpu / 64 - lo] &= !(1u64 << (cpu % 64));
        }
        (lo, hi)
    }

    /// What [`Algo::Naive`] would cost, in [`WorkCounts`] units, priced from
    /// each CPU's firmware walk and ids without onlining anything; `None`
    /// for [`Algo::Scoped`]. See [`NaivePrice`].
    pub fn naive_price(&self) -> Option<NaivePrice> {
        (self.algo == Algo::Naive).then(|| NaivePricing::new(self).price())
    }

    /// Recomputes every CPU's masks from the topology model alone for the
    /// current online set: the reference the incremental masks must equal.
    pub fn rebuild_from_scratch(&self) -> RebuiltMasks {
        let mut group_of = vec![[NONE; MaskLevel::COUNT]; self.nr];
        let mut groups: [Vec<CpuMask>; MaskLevel::COUNT] = Default::default();
        for level in MaskLevel::ALL {
            let li = level as usize;
            let mut index: BTreeMap<u64, u32> = BTreeMap::new();
            for cpu in self.online.iter() {
                let g = *index.entry(self.truth[cpu][li]).or_insert_with(|| {
                    groups[li].push(CpuMask::new());
                    (groups[li].len() - 1) as u32
                });
                groups[li][g as usize].set(cpu);
                group_of[cpu][li] = g;
            }
        }
        RebuiltMasks {
            online: self.online,
            group_of,
            groups,
        }
    }

    /// Compares every present CPU's masks, and the online set, with
    /// [`MaskEngine::rebuild_from_scratch`]; returns the first difference.
    pub fn verify(&self) -> Result<(), Box<Mismatch>> {
        let rebuilt = self.rebuild_from_scratch();
        for cpu in self.present.iter() {
            for level in MaskLevel::ALL {
                let (expected, actual) = (rebuilt.mask(cpu, level), self.masks(cpu, level));
                if expected != actual {
                    return Err(Box::new(Mismatch {
                        cpu,
                        level: Some(level),
                        expected: *expected,
                        actual: *actual,
                    }));
                }
            }
        }
        Ok(())
    }
}

/// The mask work, in [`WorkCounts`] units (the sum of every counter), of
/// [`Algo::Naive`] on one engine, for refusing a run before it starts: the
/// naive online walks `/cpus` once per online CPU per level, so onlining
/// thousands of CPUs is minutes of work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NaivePrice {
    /// Onlining every present offline CPU in ascending order, as both
    /// bring-up orders do.
    pub bringup: u64,
    /// The dearest offline/online cycle of one non-boot CPU once every
    /// present CPU is online (0 when there is none to cycle).
    pub cycle: u64,
}

/// The inputs of [`NaivePrice`]: per present CPU, what finding its firmware
/// node costs, and per stored level its key and what reading the key costs.
/// Every term of the sums below is one counter increment of
/// `online_naive`, `offline` or `relate`, so the price is those functions'
/// count, not an estimate of it (tests/naive_price.rs holds it to real runs).
struct NaivePricing<'a> {
    engine: &'a MaskEngine,
    /// Per CPU: the node walk's units.
    walk: Vec<u64>,
    /// Per CPU and stored level: (key, units of reading it after the walk).
    keys: Vec<Vec<(u64, u64)>>,
    /// Per CPU: units of listing its node's threads, and how many it lists.
    threads: Vec<(u64, u64)>,
}

impl<'a> NaivePricing<'a> {
    fn new(engine: &'a MaskEngine) -> Self {
        let walks = match &engine.source {
            Source::Tree(t) => t.cpu_node_walks(),
            Source::X86(_) => Vec::new(),
        };
        let mut walk = vec![0; engine.nr];
        let mut keys = vec![Vec::new(); engine.nr];
        let mut threads = vec![(0, 0); engine.nr];
        for cpu in engine.present.iter() {
            walk[cpu] = walks.get(cpu).map_or(0, |w| w.total());
            let node = engine.cpu_node[cpu];
            keys[cpu] = engine
                .order
                .iter()
                .map(|&level| {
                    let mut w = LevelWork::default();
                    let key = engine.source.key(node, level, &mut w).unwrap_or(NO_KEY);
                    (key, w.total())
                })
                .collect();
            let mut w = LevelWork::default();
            let n = engine.source.threads(node, &mut w).len() as u64;
            threads[cpu] = (w.total(), n);
        }
        NaivePricing {
            engine,
            walk,
            keys,
            threads,
        }
    }

    /// A CPU's group at stored level `li` (index into `order`).
    fn group(&self, cpu: usize, li: usize) -> u64 {
        self.keys[cpu][li].0
    }

    /// What onlining `cpu` costs at level `li` beyond the scan of the other
    /// online CPUs: its own walk and id (or thread list), and the bit
    /// writes, one per online CPU of its group plus one.
    fn own(&self, cpu: usize, li: usize, related: u64) -> u64 {
        let reading = if self.engine.order[li] == MaskLevel::Smt {
            self.threads[cpu].0 + self.threads[cpu].1
        } else {
            self.keys[cpu][li].1
        };
        self.walk[cpu] + reading + related + 1
    }

    /// What each online CPU costs the scan of level `li` (one scan, its walk
    /// and its id; the SMT level scans the thread list instead).
    fn scanned(&self, cpu: usize, li: usize) -> u64 {
        if self.engine.order[li] == MaskLevel::Smt {
            0
        } else {
            1 + self.walk[cpu] + self.keys[cpu][li].1
        }
    }

    fn price(&self) -> NaivePrice {
        let e = self.engine;
        let levels = e.order.len();
        let mut scan = vec![0u64; levels];
        let mut online: Vec<BTreeMap<u64, u64>> = vec![BTreeMap::new(); levels];
        let add = |cpu: usize, scan: &mut [u64], online: &mut [BTreeMap<u64, u64>]| {
            for li in 0..levels {
                scan[li] += self.scanned(cpu, li);
                *online[li].entry(self.group(cpu, li)).or_default() += 1;
            }
        };
        for cpu in e.online.iter() {
            add(cpu, &mut scan, &mut online);
        }
        let mut bringup = 0;
        for cpu in e.present.iter().filter(|&c| !e.online.contains(c)) {
            for li in 0..levels {
                let related = online[li].get(&self.group(cpu, li)).copied().unwrap_or(0);
                bringup += scan[li] + self.own(cpu, li, related);
            }
            bringup += 1;
            add(cpu, &mut scan, &mut online);
        }
        let all = Groups::new(self);
        let cycle = e
            .present
            .iter()
            .filter(|&c| c != e.boot_cpu)
            .map(|c| self.cycle(c, &scan, &online, &all))
            .max()
            .unwrap_or(0);
        NaivePrice { bringup, cycle }
    }

    /// One offline/online cycle of `cpu` with every present CPU online
    /// (`scan` and `online` cover all of them).
    fn cycle(&self, cpu: usize, scan: &[u64], online: &[BTreeMap<u64, u64>], all: &Groups) -> u64 {
        let levels = self.engine.order.len();
        let package = all.package_of(self, cpu);
        // Offline: every CPU of the package at every level, two bit writes
        // for each that shares the level's group; then each level's slot
        // left (one bit, its span's words) and the online bit.
        let mut down = 1 + all.package_size[&package] * levels as u64;
        for li in 0..levels {
            let group = self.group(cpu, li);
            down += 2 * all.in_package[&(package, li, group)];
            let (lo, hi) = all.span[li][&group];
            down += 1 + (hi + 1 - lo) as u64;
        }
        // Online again: the scan of every other CPU, then its own part.
        let mut up = 1;
        for li in 0..levels {
            let related = online[li][&self.group(cpu, li)] - 1;
            up += scan[li] - self.scanned(cpu, li) + self.own(cpu, li, related);
        }
        down + up
    }
}

/// The groups of every present CPU, for pricing a cycle: the package's
/// size, each level group's CPUs inside each package, each group's span of
/// mask words.
struct Groups {
    package: Option<usize>,
    package_size: BTreeMap<u64, u64>,
    in_package: BTreeMap<(u64, usize, u64), u64>,
    span: Vec<BTreeMap<u64, (usize, usize)>>,
}

impl Groups {
    fn new(p: &NaivePricing) -> Groups {
        let e = p.engine;
        let levels = e.order.len();
        let mut g = Groups {
            package: e.order.iter().position(|&l| l == MaskLevel::Package),
            package_size: BTreeMap::new(),
            in_package: BTreeMap::new(),
            span: vec![BTreeMap::new(); levels],
        };
        for cpu in e.present.iter() {
            let package = g.package_of(p, cpu);
            *g.package_size.entry(package).or_default() += 1;
            for li in 0..levels {
                let group = p.group(cpu, li);
                *g.in_package.entry((package, li, group)).or_default() += 1;
                let word = cpu / 64;
                let span = g.span[li].entry(group).or_insert((word, word));
                *span = (span.0.min(word), span.1.max(word));
            }
        }
        g
    }

    /// `cpu`'s package key (one package for all when no level is one).
    fn package_of(&self, p: &NaivePricing, cpu: usize) -> u64 {
        self.package.map_or(0, |li| p.group(cpu, li))
    }
}

/// Every present CPU's firmware key at every level, read once; and whether
/// the firmware has coregroups. Without them the MC level uses the L2 mask
/// (Linux's fixup_topology), for both algorithms.
fn firmware_keys(
    source: &Source,
    cpu_node: &[NodeId],
    present: &CpuMask,
    nr: usize,
    setup: &mut WorkCounts,
) -> Result<(Vec<[u64; MaskLevel::COUNT]>, bool), HotplugError> {
    let mut keys = vec![[NO_KEY; MaskLevel::COUNT]; nr];
    let mut has_coregroup = false;
    for cpu in present.iter() {
        let node = cpu_node[cpu];
        if node == NO_ID {
            return Err(HotplugError::UnknownCpu(cpu));
        }
        for level in MaskLevel::ALL {
            let key = source.key(node, level, &mut setup.levels[level as usize]);
            has_coregroup |= level == MaskLevel::Coregroup && key.is_some();
            keys[cpu][level as usize] = key.unwrap_or(NO_KEY);
        }
    }
    if !has_coregroup {
        for cpu in present.iter() {
            keys[cpu][MaskLevel::Coregroup as usize] = keys[cpu][MaskLevel::L2 as usize];
        }
    }
    Ok((keys, has_coregroup))
}

/// Firmware and model must describe the same groups: at every level, one
/// firmware key per model group and the other way round.
fn check_same_groups(
    keys: &[[u64; MaskLevel::COUNT]],
    truth: &[[u64; MaskLevel::COUNT]],
    present: &CpuMask,
) -> Result<(), HotplugError> {
    for level in MaskLevel::ALL {
        let li = level as usize;
        let mut fw_to_truth: BTreeMap<u64, u64> = BTreeMap::new();
        let mut truth_to_fw: BTreeMap<u64, u64> = BTreeMap::new();
        for cpu in present.iter() {
            let (k, t) = (keys[cpu][li], truth[cpu][li]);
            if *fw_to_truth.entry(k).or_insert(t) != t || *truth_to_fw.entry(t).or_insert(k) != k {
                return Err(HotplugError::Unsupported {
                    cpu,
                    level,
                    reason: "firmware ids do not describe the same groups as the topology",
                });
            }
        }
    }
    Ok(())
}

/// `set_cpus_related`: puts `cpu` in `other`'s group (its first related CPU
/// decides the slot; later ones are the same group and only cost bit writes).
fn relate(state: &mut LevelState, cpu: usize, other: usize, work: &mut LevelWork) {
    let s = state.slot_of[other];
    if state.slot_of[cpu] == NONE {
        state.join(cpu, s, work);
    } else {
        state.slots[state.slot_of[cpu] as usize].set(other);
    }
    work.mask_bit_ops += 1;
}
