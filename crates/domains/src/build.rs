//! `build_sched_domains()`: domains per CPU, their groups, then `cpu_attach_domain()`'s
//! removal of degenerate domains, following kernel/sched/topology.c step by step.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use cpumask::{CompactMask, CpuMask};
use topology::{Arch, Topology};

use crate::config::KernelConfig;
use crate::flags::{Flag, Flags, KernelVersion};
use crate::levels::{levels_for, ArchRules, LevelDef, LevelSet, Spans};

/// Why domains could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// The topology has no online CPU, so Linux would build no domain at all.
    NoOnlineCpus,
    /// [`Options::deactivating`] names a CPU that is online or unknown.
    NotDeactivating(u32),
    /// `topology_span_sane()` fails: at a non-NUMA level two CPUs' masks overlap
    /// without being equal. Linux warns and builds no domains at all.
    SpanNotSane {
        /// The level's name.
        level: &'static str,
        /// A CPU.
        cpu: u32,
        /// Its mask, as a cpulist.
        mask: String,
        /// Another CPU whose mask overlaps it.
        other: u32,
        /// That CPU's mask, as a cpulist.
        other_mask: String,
    },
}

/// Circumstances of the rebuild being reproduced.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// The CPU whose deactivation (`echo 0 > cpuN/online`, `ppc64_cpu --smt`)
    /// triggered the rebuild. Linux rebuilds the domains from
    /// `sched_cpu_deactivate()`, before that CPU leaves its sibling, LLC and node
    /// masks, so the domains span only active CPUs but `min_interval` and
    /// `max_interval` (the weight of `tl->mask(cpu)`) still count it. The CPU must
    /// be offline in the topology.
    pub deactivating: Option<u32>,
    /// The kernel's build options that decide which levels exist.
    pub config: KernelConfig,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NoOnlineCpus => write!(
                f,
                "the topology has no online CPU, so there are no scheduler domains"
            ),
            Error::SpanNotSane {
                level,
                cpu,
                mask,
                other,
                other_mask,
            } => write!(
                f,
                "the {level} masks overlap without being equal (CPU {cpu}: {mask}, CPU {other}: {other_mask}); Linux's topology_span_sane() refuses them and builds no scheduler domains"
            ),
            Error::NotDeactivating(c) => write!(
                f,
                "CPU {c} cannot be the one being deactivated: it is online or not in the topology"
            ),
        }
    }
}

impl core::error::Error for Error {}

/// A group of a domain: a CPU alone (lowest level) or an interned span.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum GroupSpan {
    Cpu(u32),
    Span(u32),
}

/// One scheduler domain of one CPU, as it stands after `cpu_attach_domain()`.
#[derive(Debug, Clone)]
pub struct Domain {
    /// Index into [`Domains::levels`].
    pub level: u8,
    /// `sd->flags`.
    pub flags: Flags,
    /// Weight of `tl->mask(cpu)`: `min_interval`, and half of `max_interval`.
    pub weight: u32,
    /// `sd->imbalance_pct`.
    pub imbalance_pct: u32,
    /// `sd->cache_nice_tries`.
    pub cache_nice_tries: u32,
    /// `sd->busy_factor`.
    pub busy_factor: u32,
    /// `sd->groups->flags` (v6.x): flags of the first group's child domain.
    pub groups_flags: Flags,
    pub(crate) span: u32,
    pub(crate) groups: u32,
    group_key: GroupKey,
}

impl Domain {
    /// `min_interval` in milliseconds.
    pub fn min_interval(&self) -> u32 {
        self.weight
    }
    /// `max_interval` in milliseconds.
    pub fn max_interval(&self) -> u32 {
        2 * self.weight
    }
}

/// Where a domain's first group stores its flags: shared `sched_group`s of
/// non-overlapping levels are one object per (level, first CPU) as in `sdd->sg`;
/// overlapping levels give each domain private groups.
#[derive(Debug, Clone, Copy)]
enum GroupKey {
    Shared(u8, u32),
    Private(Flags),
}

/// A domain `cpu_attach_domain()` removed, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removed {
    /// Index into [`Domains::levels`].
    pub level: u8,
    /// The reason, in words.
    pub reason: Reason,
}

/// Why a domain was removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// `sd_degenerate`: it spans a single CPU.
    SingleCpu,
    /// `sd_degenerate`: one group, and no flag that works without groups.
    OneGroup,
    /// `sd_parent_degenerate`: same span as the domain below, and no flag that the
    /// domain below lacks (ignoring group-only flags when it has one group).
    SameAsChild {
        /// The level of the domain below.
        child_level: u8,
    },
}

/// The domains of one CPU.
#[derive(Debug, Clone)]
pub struct CpuDomains {
    /// Logical CPU number.
    pub cpu: u32,
    /// Its domains, lowest first (`domain0`, `domain1`...).
    pub domains: Vec<Domain>,
    /// Domains built then removed, in removal order.
    pub removed: Vec<Removed>,
}

/// Summary of one level of the table the domains were built from.
#[derive(Debug, Clone)]
pub struct LevelInfo {
    /// `SMT`, `CLS`, `CACHE`, `MC`, `DIE`/`PKG`, `NODE`, `NUMA`.
    pub name: &'static str,
    /// The topology flags the architecture gives it.
    pub topology_flags: Flags,
    /// NUMA levels above NODE overlap.
    pub overlap: bool,
    /// NODE/NUMA levels: the node distance they reach.
    pub numa_distance: Option<u32>,
    /// What its masks are.
    pub mask_source: &'static str,
}

/// Every CPU's scheduler domains as a given kernel builds them on a topology.
#[derive(Debug, Clone)]
pub struct Domains {
    /// The kernel whose rules were followed.
    pub kernel: KernelVersion,
    /// The machine's architecture.
    pub arch: Arch,
    /// The level table, lowest first.
    pub levels: Vec<LevelInfo>,
    /// Architecture facts that shaped the result.
    pub rules: ArchRules,
    /// Online CPUs, in order, with their domains.
    pub cpus: Vec<CpuDomains>,
    /// `nr_cpu_ids`, for hex masks.
    pub nr_cpu_ids: usize,
    /// The CPUs domains were built on (`cpu_active_mask`).
    pub cpu_map: CpuMask,
    spans: Spans,
    group_lists: GroupLists,
    cpu_pos: Vec<u32>,
}

/// Builds the domains `kernel` would build on `topo`'s online CPUs.
pub fn build(topo: &Topology, kernel: KernelVersion) -> Result<Domains, Error> {
    build_with(topo, kernel, &Options::default())
}

/// [`build`], reproducing a particular rebuild (see [`Options`]).
///
/// The phases of Linux's `build_sched_domains()`: the level table and its
/// sanity check, each CPU's chain of domains ([`build_chains`]), the groups
/// of every domain ([`Groups`]), then `cpu_attach_domain()` dropping the
/// degenerate domains ([`attach`]).
pub fn build_with(
    topo: &Topology,
    kernel: KernelVersion,
    options: &Options,
) -> Result<Domains, Error> {
    let cpu_map = *topo.online();
    if cpu_map.is_empty() {
        return Err(Error::NoOnlineCpus);
    }
    let in_masks = cpus_in_masks(topo, &cpu_map, options)?;
    let mut spans = Spans::default();
    let LevelSet { levels, rules } =
        levels_for(topo, kernel, &options.config, &mut spans, in_masks);
    topology_span_sane(&levels)?;
    let full = spans.intern(&cpu_map);
    let nr = levels[0].of_cpu.len();
    let online: Vec<u32> = cpu_map.iter().map(|c| c as u32).collect();
    let mut cpu_pos = vec![u32::MAX; nr];
    for (i, &c) in online.iter().enumerate() {
        cpu_pos[c as usize] = i as u32;
    }

    let capacities = Capacities::new(topo);
    let tl_asym_v59 = if kernel == KernelVersion::V5_9 {
        asym_level_v5_9(&levels, &capacities, &spans, &cpu_map)
    } else {
        None
    };
    let mut cpus = ChainBuilder {
        kernel,
        levels: &levels,
        rules: &rules,
        capacities: &capacities,
        cpu_map,
        deactivating: in_masks != cpu_map,
        full,
        tl_asym_v59,
        subset_memo: vec![Vec::new(); levels.len()],
        active_of: BTreeMap::new(),
    }
    .build_chains(&online, &mut spans);
    let mut groups = Groups::new(levels.len(), spans.len(), nr);
    groups.build(kernel, &levels, &mut cpus, &cpu_pos, &spans);
    let degenerate = Degenerate {
        needs_groups: kernel.degenerate_needs_groups(),
        parent_ignores: kernel.parent_ignores_with_one_group(rules.single_node),
        spans: &spans,
        lists: &groups.lists,
    };
    for c in &mut cpus {
        c.removed = cpu_attach_domain(&mut c.domains, &degenerate, &mut groups.flags);
    }
    for d in cpus.iter_mut().flat_map(|c| &mut c.domains) {
        d.groups_flags = first_group_flags(kernel, d.group_key, &groups.flags);
    }

    spans.forget_index();
    Ok(Domains {
        kernel,
        arch: topo.arch().clone(),
        levels: levels.iter().map(LevelInfo::of).collect(),
        rules,
        cpus,
        nr_cpu_ids: topo.nr_cpu_ids().max(nr),
        cpu_map,
        spans,
        group_lists: groups.lists,
        cpu_pos,
    })
}

/// The CPUs the level masks hold: the online ones, plus the CPU being
/// deactivated, which must be known and offline.
fn cpus_in_masks(topo: &Topology, cpu_map: &CpuMask, options: &Options) -> Result<CpuMask, Error> {
    let mut in_masks = *cpu_map;
    if let Some(x) = options.deactivating {
        if cpu_map.contains(x as usize) || topo.cpu(x as usize).is_none() {
            return Err(Error::NotDeactivating(x));
        }
        in_masks.set(x as usize);
    }
    Ok(in_masks)
}

/// `topology_span_sane()`: the first level whose masks overlap without being
/// equal makes Linux build no domains at all.
fn topology_span_sane(levels: &[LevelDef]) -> Result<(), Error> {
    match levels.iter().find_map(|l| Some((l.name, l.not_sane?))) {
        Some((level, (cpu, mask, other, other_mask))) => Err(Error::SpanNotSane {
            level,
            cpu,
            mask: mask.to_list_string(),
            other,
            other_mask: other_mask.to_list_string(),
        }),
        None => Ok(()),
    }
}

impl LevelInfo {
    fn of(l: &LevelDef) -> LevelInfo {
        LevelInfo {
            name: l.name,
            topology_flags: l.topology_flags,
            overlap: l.overlap,
            numa_distance: l.numa_distance,
            mask_source: l.mask_source,
        }
    }
}

/// Phase 1, `build_sched_domain()` for each CPU and level.
struct ChainBuilder<'a> {
    kernel: KernelVersion,
    levels: &'a [LevelDef],
    rules: &'a ArchRules,
    capacities: &'a Capacities,
    cpu_map: CpuMask,
    /// Whether the level masks hold a CPU being deactivated.
    deactivating: bool,
    /// The span of every CPU domains are built on.
    full: u32,
    tl_asym_v59: Option<usize>,
    /// Per level, child span → (level mask, span after the "arch topology
    /// borken" fix-up): the last answer, which every CPU of the child asks
    /// for again (a 2 KiB subset test otherwise).
    subset_memo: Vec<Vec<(u32, u32)>>,
    /// Level mask → the same without the CPU being deactivated.
    active_of: BTreeMap<u32, u32>,
}

impl ChainBuilder<'_> {
    /// Per CPU, one domain per level up to the first spanning every CPU.
    /// They are the CPU's result once [`Groups`] and [`cpu_attach_domain`]
    /// are done with them: nothing is copied into another vector.
    fn build_chains(&mut self, online: &[u32], spans: &mut Spans) -> Vec<CpuDomains> {
        online
            .iter()
            .map(|&cpu| CpuDomains {
                cpu,
                domains: self.chain(cpu, spans),
                removed: Vec::new(),
            })
            .collect()
    }

    fn chain(&mut self, cpu: u32, spans: &mut Spans) -> Vec<Domain> {
        let mut chain: Vec<Domain> = Vec::with_capacity(self.levels.len());
        for (li, level) in self.levels.iter().enumerate() {
            let in_mask = level.of_cpu[cpu as usize];
            let span = self.span(li, in_mask, chain.last(), spans);
            let sd = sd_init(
                self.kernel,
                level,
                li,
                in_mask,
                span,
                spans,
                self.rules,
                self.capacities,
                &self.cpu_map,
                self.tl_asym_v59,
                &mut chain,
            );
            chain.push(sd);
            if span == self.full {
                break;
            }
        }
        chain
    }

    /// The span of a domain whose level mask is `in_mask`: without the CPU
    /// being deactivated (`tl->mask(cpu)` may hold it, the span never does),
    /// and widened to hold the child's span when the architecture's masks do
    /// not nest (`build_sched_domain()`'s "arch topology borken" fix-up).
    fn span(&mut self, li: usize, in_mask: u32, child: Option<&Domain>, spans: &mut Spans) -> u32 {
        let raw = if self.deactivating {
            let cpu_map = &self.cpu_map;
            *self
                .active_of
                .entry(in_mask)
                .or_insert_with(|| spans.intern(&spans.get(in_mask).and(cpu_map)))
        } else {
            in_mask
        };
        let Some(child) = child else { return raw };
        if child.span == raw {
            return raw;
        }
        let memo = &mut self.subset_memo[li];
        if memo.len() <= child.span as usize {
            // Sized for every span known so far at once rather than span by
            // span, which would reallocate it many times per level.
            let len = spans.len().max(child.span as usize + 1);
            memo.resize(len, (u32::MAX, u32::MAX));
        }
        let (last_raw, last) = memo[child.span as usize];
        if last_raw == raw {
            return last;
        }
        let span = if spans.get(child.span).is_subset(spans.get(raw)) {
            raw
        } else {
            let m = spans.get(raw).or(spans.get(child.span));
            spans.intern(&m)
        };
        memo[child.span as usize] = (raw, span);
        span
    }
}

/// A table indexed by (level, id), for ids below a bound known up front:
/// every CPU asks it once per level, so it is a flat array rather than a
/// map. A level's row is allocated when first written: each table is used
/// at overlapping levels only or at the others only, and a row of a
/// 16384-CPU machine is hundreds of kilobytes of fresh pages.
struct PerLevel<T> {
    ids: usize,
    rows: Vec<Vec<Option<T>>>,
}

impl<T: Copy> PerLevel<T> {
    fn new(levels: usize, ids: usize) -> Self {
        PerLevel {
            ids,
            rows: (0..levels).map(|_| Vec::new()).collect(),
        }
    }
    fn get(&self, level: u8, id: u32) -> Option<T> {
        self.rows[level as usize]
            .get(id as usize)
            .copied()
            .flatten()
    }
    fn set(&mut self, level: u8, id: u32, value: T) {
        let row = &mut self.rows[level as usize];
        if row.is_empty() {
            *row = vec![None; self.ids];
        }
        row[id as usize] = Some(value);
    }
}

/// Flags of the shared `sched_group`s, by (level, first CPU).
type GroupFlags = PerLevel<Flags>;

/// Every distinct group list, stored end to end: a large machine has
/// thousands of lists of two CPUs, and one allocation each would cost more
/// than the lists.
#[derive(Debug, Clone, Default)]
struct GroupLists {
    items: Vec<GroupSpan>,
    /// Where list `i` ends in `items`; it starts where list `i - 1` ends.
    ends: Vec<u32>,
    /// Whether list `i` is in wrap order from its owner (overlap levels)
    /// rather than sorted by first CPU (shared groups, rotated per CPU on
    /// output).
    built_order: Vec<bool>,
}

impl GroupLists {
    /// Appends the list of `items` added since `start`; returns its id.
    fn close(&mut self, start: usize, built_order: bool) -> u32 {
        debug_assert_eq!(start, self.ends.last().map_or(0, |&e| e as usize));
        self.ends.push(self.items.len() as u32);
        self.built_order.push(built_order);
        (self.ends.len() - 1) as u32
    }
    fn get(&self, id: u32) -> &[GroupSpan] {
        let i = id as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.items[start..self.ends[i] as usize]
    }
    fn built_order(&self, id: u32) -> bool {
        self.built_order[id as usize]
    }
}

/// Phase 2: the groups of every domain, as lists shared between domains
/// with the same groups.
struct Groups {
    lists: GroupLists,
    /// (level, span) → list, for non-overlapping levels.
    shared_lists: PerLevel<u32>,
    /// Each distinct overlapping list, stored once.
    private_lists: BTreeMap<Vec<GroupSpan>, u32>,
    flags: GroupFlags,
    /// (level, span) → the last overlap walk: (from CPU, its child span,
    /// list, first group's flags, whether that child lies inside the span
    /// once known: a subset test every CPU of the child would repeat).
    last_walk: PerLevel<(u32, u32, u32, Flags, Option<bool>)>,
}

impl Groups {
    fn new(levels: usize, spans: usize, nr_cpus: usize) -> Self {
        Groups {
            lists: GroupLists::default(),
            shared_lists: PerLevel::new(levels, spans),
            private_lists: BTreeMap::new(),
            flags: PerLevel::new(levels, nr_cpus),
            last_walk: PerLevel::new(levels, spans),
        }
    }

    fn build(
        &mut self,
        kernel: KernelVersion,
        levels: &[LevelDef],
        cpus: &mut [CpuDomains],
        cpu_pos: &[u32],
        spans: &Spans,
    ) {
        for ci in 0..cpus.len() {
            let chain_len = cpus[ci].domains.len();
            for (li, level) in levels.iter().enumerate().take(chain_len) {
                let (groups, key) = if level.overlap {
                    let descend = kernel >= KernelVersion::V6_8;
                    self.overlapping(descend, li, ci, cpus, cpu_pos, spans)
                } else {
                    self.shared(li, ci, cpus, cpu_pos, spans)
                };
                let d = &mut cpus[ci].domains[li];
                d.groups = groups;
                d.group_key = key;
            }
        }
    }

    /// `build_overlap_sched_groups()` for CPU `cpus[ci]`'s domain at level `li`.
    fn overlapping(
        &mut self,
        descend: bool,
        li: usize,
        ci: usize,
        cpus: &[CpuDomains],
        cpu_pos: &[u32],
        spans: &Spans,
    ) -> (u32, GroupKey) {
        let (cpu, chain) = (cpus[ci].cpu, &cpus[ci].domains);
        let span = chain[li].span;
        // The walk from `cpu` equals the walk from the previous member of the
        // span when nothing lies between them and both start in the same
        // child domain: the walk from the previous one skips straight over
        // `cpu`, already covered by that first group.
        let child = if li > 0 { chain[li - 1].span } else { u32::MAX };
        let memo = self.last_walk.get(li as u8, span);
        let same_child = memo.is_some_and(|m| m.1 == child);
        // Only when the child lies inside the span: otherwise the first
        // group comes from a descendant that may differ.
        let mut inside = memo.filter(|_| same_child).and_then(|m| m.4);
        let reuse = memo.and_then(|(prev, _, id, flags, _)| {
            let adjacent = spans.get(span).next_from(prev as usize + 1) == Some(cpu as usize);
            if !same_child || !adjacent {
                return None;
            }
            let is_inside = *inside
                .get_or_insert_with(|| li > 0 && spans.get(child).is_subset(spans.get(span)));
            is_inside.then_some((id, flags))
        });
        let (id, first_flags) = match reuse {
            Some(x) => x,
            None => {
                let (list, first_flags) =
                    overlap_groups(descend, cpu, li, span, cpus, cpu_pos, spans);
                let lists = &mut self.lists;
                let id = *self.private_lists.entry(list).or_insert_with_key(|list| {
                    let start = lists.items.len();
                    lists.items.extend_from_slice(list);
                    lists.close(start, true)
                });
                (id, first_flags)
            }
        };
        self.last_walk
            .set(li as u8, span, (cpu, child, id, first_flags, inside));
        (id, GroupKey::Private(first_flags))
    }

    /// `build_sched_groups()` for CPU `cpus[ci]`'s domain at level `li`: one
    /// list per (level, span), and `get_group()`'s `sched_group` of the first
    /// CPU of the child span, initialised with the child's flags on first
    /// visit.
    fn shared(
        &mut self,
        li: usize,
        ci: usize,
        cpus: &[CpuDomains],
        cpu_pos: &[u32],
        spans: &Spans,
    ) -> (u32, GroupKey) {
        let (cpu, chain) = (cpus[ci].cpu, &cpus[ci].domains);
        let span = chain[li].span;
        let id = match self.shared_lists.get(li as u8, span) {
            Some(id) => id,
            None => {
                let start = self.lists.items.len();
                shared_groups(li, span, cpus, cpu_pos, spans, &mut self.lists.items);
                let id = self.lists.close(start, false);
                self.shared_lists.set(li as u8, span, id);
                id
            }
        };
        let (first, flags) = if li == 0 {
            (cpu, Flags::EMPTY)
        } else {
            let child = &chain[li - 1];
            (spans.first(child.span).unwrap_or(0), child.flags)
        };
        if self.flags.get(li as u8, first).is_none() {
            self.flags.set(li as u8, first, flags);
        }
        (id, GroupKey::Shared(li as u8, first))
    }
}

/// `sd_degenerate()` and `sd_parent_degenerate()` with what they read.
struct Degenerate<'a> {
    /// Flags that keep a domain only when it has more than one group.
    needs_groups: Flags,
    /// Flags a parent with one group is not compared on.
    parent_ignores: Flags,
    spans: &'a Spans,
    lists: &'a GroupLists,
}

impl Degenerate<'_> {
    fn ngroups(&self, sd: &Domain) -> usize {
        self.lists.get(sd.groups).len()
    }

    /// `sd_degenerate()`: why `sd` is useless on its own, if it is.
    fn sd(&self, sd: &Domain) -> Option<Reason> {
        if self.spans.weight(sd.span) == 1 {
            return Some(Reason::SingleCpu);
        }
        if sd.flags.intersects(self.needs_groups) && self.ngroups(sd) > 1 {
            return None;
        }
        if sd.flags.contains(Flag::WakeAffine) {
            return None;
        }
        Some(Reason::OneGroup)
    }

    /// `sd_parent_degenerate()`: why `parent` adds nothing to `child`, if so.
    fn parent(&self, child: &Domain, parent: &Domain) -> Option<Reason> {
        if let Some(r) = self.sd(parent) {
            return Some(r);
        }
        if child.span != parent.span {
            return None;
        }
        let mut pflags = parent.flags;
        if self.ngroups(parent) == 1 {
            pflags = pflags.without(self.parent_ignores);
        }
        pflags
            .is_subset(child.flags)
            .then_some(Reason::SameAsChild {
                child_level: child.level,
            })
    }
}

/// Phase 3, `cpu_attach_domain()`: drops each degenerate parent, bottom up,
/// then a degenerate lowest domain; returns what was removed.
fn cpu_attach_domain(
    chain: &mut Vec<Domain>,
    degenerate: &Degenerate,
    group_flags: &mut GroupFlags,
) -> Vec<Removed> {
    let mut removed = Vec::new();
    let mut t = 0;
    while t + 1 < chain.len() {
        let p = t + 1;
        let Some(reason) = degenerate.parent(&chain[t], &chain[p]) else {
            t += 1;
            continue;
        };
        if p + 1 < chain.len() {
            // parent->parent->groups->flags = tmp->flags (v6.6+).
            let f = chain[t].flags;
            set_first_group_flags(&mut chain[p + 1], group_flags, f);
        }
        if chain[p].flags.contains(Flag::PreferSibling) {
            chain[t].flags.insert(Flag::PreferSibling);
        }
        removed.push(Removed {
            level: chain[p].level,
            reason,
        });
        chain.remove(p);
    }
    if let Some(reason) = chain.first().and_then(|sd| degenerate.sd(sd)) {
        removed.push(Removed {
            level: chain[0].level,
            reason,
        });
        chain.remove(0);
        if let Some(sd) = chain.first_mut() {
            // The child is gone: clear the (first) group's flags.
            set_first_group_flags(sd, group_flags, Flags::EMPTY);
        }
    }
    removed
}

/// A domain's first group's flags where the kernel has them: its own
/// (overlapping levels) or its shared group's.
fn first_group_flags(kernel: KernelVersion, key: GroupKey, group_flags: &GroupFlags) -> Flags {
    match key {
        _ if !kernel.has_group_flags() => Flags::EMPTY,
        GroupKey::Shared(l, f) => group_flags.get(l, f).unwrap_or_default(),
        GroupKey::Private(f) => f,
    }
}

fn set_first_group_flags(sd: &mut Domain, shared: &mut GroupFlags, flags: Flags) {
    match &mut sd.group_key {
        GroupKey::Shared(l, f) => shared.set(*l, *f, flags),
        GroupKey::Private(f) => *f = flags,
    }
}

/// `sd_init()` plus the SD_OVERLAP marking done by build_sched_domains().
#[allow(clippy::too_many_arguments)]
fn sd_init(
    kernel: KernelVersion,
    level: &LevelDef,
    li: usize,
    raw: u32,
    span: u32,
    spans: &Spans,
    rules: &ArchRules,
    capacities: &Capacities,
    cpu_map: &CpuMask,
    tl_asym_v59: Option<usize>,
    chain: &mut [Domain],
) -> Domain {
    let v59 = kernel == KernelVersion::V5_9;
    let mut flags = Flags::of(&[
        Flag::BalanceNewidle,
        Flag::BalanceExec,
        Flag::BalanceFork,
        Flag::WakeAffine,
        Flag::PreferSibling,
    ])
    .union(level.topology_flags);
    // v5.9 marks the one level the capacities asked for; later kernels
    // classify each span.
    let asym = if !v59 {
        capacities.classify(spans.get(span), cpu_map)
    } else if tl_asym_v59 == Some(li) {
        Flags::of(&[Flag::AsymCpuCapacity])
    } else {
        Flags::EMPTY
    };
    flags = flags.union(asym);
    if flags.contains(Flag::AsymCpuCapacity) {
        asym_capacity_below(v59, chain);
    }
    // v5.10 lowered imbalance_pct from 125 to 117 and busy_factor from 32 to 16.
    let (default_pct, busy_factor) = if v59 { (125, 32) } else { (117, 16) };
    let tuning = SHARING_TUNING
        .iter()
        .find(|t| t.shares.is_none_or(|f| flags.contains(f)))
        .unwrap_or(&SHARING_TUNING[SHARING_TUNING.len() - 1]);
    let imbalance_pct = tuning.imbalance_pct.unwrap_or(default_pct);
    let cache_nice_tries = tuning.cache_nice_tries;
    if tuning.shares == Some(Flag::Numa) {
        numa_flags(
            &mut flags,
            level.numa_distance.unwrap_or(0) > rules.reclaim_distance,
        );
    }
    if level.overlap {
        flags.insert(Flag::Overlap);
    }
    Domain {
        level: li as u8,
        span,
        weight: spans.weight(raw),
        flags,
        imbalance_pct,
        cache_nice_tries,
        busy_factor,
        groups_flags: Flags::EMPTY,
        groups: 0,
        group_key: GroupKey::Private(Flags::EMPTY),
    }
}

/// sd_init()'s tuning by what a level's CPUs share, the first row that
/// matches wins: how unbalanced a domain may get before balancing
/// (`imbalance_pct`, the version's default when `None`) and how often a
/// cache-hot task is left alone (`cache_nice_tries`). A NUMA level also
/// serializes balancing and stops preferring siblings (see [`sd_init`]).
const SHARING_TUNING: [Tuning; 4] = [
    Tuning {
        shares: Some(Flag::ShareCpuCapacity),
        imbalance_pct: Some(110),
        cache_nice_tries: 0,
    },
    Tuning {
        shares: Some(Flag::ShareLlc),
        imbalance_pct: Some(117),
        cache_nice_tries: 1,
    },
    Tuning {
        shares: Some(Flag::Numa),
        imbalance_pct: None,
        cache_nice_tries: 2,
    },
    Tuning {
        shares: None,
        imbalance_pct: None,
        cache_nice_tries: 1,
    },
];

/// One row of [`SHARING_TUNING`].
struct Tuning {
    /// The flag a level must have (`None`: any level).
    shares: Option<Flag>,
    imbalance_pct: Option<u32>,
    cache_nice_tries: u32,
}

/// A NUMA level serializes its balancing and stops preferring siblings;
/// beyond the reclaim distance a task is not pulled across it on exec, fork
/// or wakeup either.
fn numa_flags(flags: &mut Flags, beyond_reclaim: bool) {
    flags.remove(Flag::PreferSibling);
    flags.insert(Flag::Serialize);
    if beyond_reclaim {
        flags.remove(Flag::BalanceExec);
        flags.remove(Flag::BalanceFork);
        flags.remove(Flag::WakeAffine);
    }
}

/// A level that spans CPUs of different capacities: the level below stops
/// spreading across them (no PREFER_SIBLING), and v5.9 also made every lower
/// domain balance on wakeup.
fn asym_capacity_below(v59: bool, chain: &mut [Domain]) {
    if let Some(child) = chain.last_mut() {
        child.flags.remove(Flag::PreferSibling);
    }
    if v59 {
        for lower in chain.iter_mut() {
            lower.flags.insert(Flag::BalanceWake);
        }
    }
}

/// build_sched_groups(): the child spans covering `span`, sorted by first CPU
/// (each CPU's list is this one rotated to start at its own group), appended
/// to `out`.
fn shared_groups(
    li: usize,
    span: u32,
    cpus: &[CpuDomains],
    cpu_pos: &[u32],
    spans: &Spans,
    out: &mut Vec<GroupSpan>,
) {
    let mask = spans.get(span);
    if li == 0 {
        out.extend(mask.iter().map(|c| GroupSpan::Cpu(c as u32)));
        return;
    }
    let mut covered = CpuMask::new();
    for cpu in mask.iter() {
        if covered.contains(cpu) {
            continue;
        }
        // A sane topology gives every CPU of the span a domain one level down;
        // should one not have it, the CPU stands alone rather than panicking.
        match cpus[cpu_pos[cpu] as usize].domains.get(li - 1) {
            Some(child) => {
                covered.or_assign(spans.get(child.span));
                out.push(GroupSpan::Span(child.span));
            }
            None => {
                covered.set(cpu);
                out.push(GroupSpan::Cpu(cpu as u32));
            }
        }
    }
}

/// build_overlap_sched_groups(): walk the span from `cpu` (wrapping), taking each
/// not-yet-covered CPU's child domain (or a proper descendant's, when the child
/// spills out of the span) as the next group. Returns the groups and the first
/// group's flags.
fn overlap_groups(
    descend: bool,
    cpu: u32,
    li: usize,
    span: u32,
    cpus: &[CpuDomains],
    cpu_pos: &[u32],
    spans: &Spans,
) -> (Vec<GroupSpan>, Flags) {
    let span_mask = spans.get(span);
    let mut covered = CpuMask::new();
    let mut out = Vec::new();
    let mut first_flags = Flags::EMPTY;
    let mut from = cpu as usize;
    loop {
        let rest = span_mask.and_not(&covered);
        let next = rest.next_from(from).or_else(|| rest.first());
        let Some(i) = next else { break };
        let chain = &cpus[cpu_pos[i] as usize].domains;
        // A CPU whose tree stopped below this level has no domain here: skip it
        // (mark it so the walk moves on).
        if chain.len() <= li || !spans.get(chain[li].span).contains(i) {
            covered.set(i);
            from = i + 1;
            continue;
        }
        let mut sib = li;
        // find_descended_sibling() arrived in v5.13; older kernels took the
        // sibling's child even when it spilled out of the span.
        if descend && sib > 0 && !spans.get(chain[sib - 1].span).is_subset(span_mask) {
            // find_descended_sibling()
            while sib > 0 && !spans.get(chain[sib - 1].span).is_subset(span_mask) {
                sib -= 1;
            }
            while sib > 0 && chain[sib - 1].span == chain[sib].span {
                sib -= 1;
            }
        }
        let (group, flags) = if sib > 0 {
            (chain[sib - 1].span, chain[sib - 1].flags)
        } else {
            (chain[sib].span, Flags::EMPTY)
        };
        if out.is_empty() {
            first_flags = flags;
        }
        covered.or_assign(spans.get(group));
        covered.set(i);
        out.push(GroupSpan::Span(group));
        from = i + 1;
        if from >= cpumask::MAX_CPUS {
            from = 0;
        }
    }
    (out, first_flags)
}

/// CPU capacities (`arch_scale_cpu_capacity`), 1024 when unknown.
struct Capacities {
    /// Distinct capacities with their CPUs, largest first (`asym_cap_list`);
    /// empty when the machine is symmetric.
    classes: Vec<(u32, CpuMask)>,
    of: Vec<u32>,
}

impl Capacities {
    fn new(topo: &Topology) -> Self {
        let mut by_cap: Vec<(u32, CpuMask)> = Vec::new();
        let mut of = Vec::new();
        for c in topo.cpus() {
            let cap = c.capacity.unwrap_or(1024);
            if of.len() <= c.id as usize {
                of.resize(c.id as usize + 1, 1024);
            }
            of[c.id as usize] = cap;
            match by_cap.iter_mut().find(|(k, _)| *k == cap) {
                Some((_, m)) => m.set(c.id as usize),
                None => by_cap.push((cap, CpuMask::single(c.id as usize))),
            }
        }
        by_cap.sort_by_key(|c| core::cmp::Reverse(c.0));
        if by_cap.len() < 2 {
            by_cap.clear();
        }
        Capacities {
            classes: by_cap,
            of,
        }
    }

    fn of(&self, cpu: usize) -> u32 {
        self.of.get(cpu).copied().unwrap_or(1024)
    }

    /// v6.x asym_cpu_capacity_classify().
    fn classify(&self, span: &CompactMask, cpu_map: &CpuMask) -> Flags {
        let mut count = 0;
        let mut miss = 0;
        for (_, cpus) in &self.classes {
            if span.intersects(cpus) {
                count += 1;
            } else if cpu_map.intersects(cpus) {
                miss += 1;
            }
        }
        if count < 2 {
            Flags::EMPTY
        } else if miss > 0 {
            Flags::of(&[Flag::AsymCpuCapacity])
        } else {
            Flags::of(&[Flag::AsymCpuCapacity, Flag::AsymCpuCapacityFull])
        }
    }
}

/// v5.9 asym_cpu_capacity_level(): the lowest level at which every CPU sees the
/// largest capacity.
fn asym_level_v5_9(
    levels: &[LevelDef],
    caps: &Capacities,
    spans: &Spans,
    cpu_map: &CpuMask,
) -> Option<usize> {
    let first = cpu_map.first()?;
    let cap0 = caps.of(first);
    if cpu_map.iter().all(|c| caps.of(c) == cap0) {
        return None;
    }
    let mut asym_level = 0;
    let mut asym_tl = None;
    for i in cpu_map.iter() {
        let mut max_capacity = caps.of(i);
        for (tl_id, level) in levels.iter().enumerate() {
            if tl_id < asym_level {
                continue;
            }
            for j in spans.get(level.of_cpu[i]).iter() {
                let c = caps.of(j);
                if c <= max_capacity {
                    continue;
                }
                max_capacity = c;
                asym_level = tl_id;
                asym_tl = Some(tl_id);
            }
        }
    }
    asym_tl
}

impl Domains {
    /// The domains of `cpu`, if it is online.
    pub fn cpu(&self, cpu: usize) -> Option<&CpuDomains> {
        let pos = *self.cpu_pos.get(cpu)?;
        self.cpus.get(pos as usize)
    }

    /// The CPUs a domain spans.
    pub fn span(&self, d: &Domain) -> &CompactMask {
        self.spans.get(d.span)
    }

    /// The level a domain was built at.
    pub fn level(&self, d: &Domain) -> &LevelInfo {
        &self.levels[d.level as usize]
    }

    /// The domain's name (`sd->name`).
    pub fn name(&self, d: &Domain) -> &'static str {
        self.levels[d.level as usize].name
    }

    /// Number of groups of a domain.
    pub fn group_count(&self, d: &Domain) -> usize {
        self.group_lists.get(d.groups).len()
    }

    /// The groups of `cpu`'s domain `d` in the kernel's list order (the group
    /// holding `cpu` first, then wrapping through the span).
    pub fn groups(&self, cpu: u32, d: &Domain) -> Vec<CpuMask> {
        self.group_order(cpu, d)
            .into_iter()
            .map(|g| match g {
                GroupSpan::Cpu(c) => CpuMask::single(c as usize),
                GroupSpan::Span(s) => self.spans.get(s).to_cpumask(),
            })
            .collect()
    }

    /// [`Domains::groups`] as references to the shared groups, without
    /// copying a mask: renderers of every CPU's domains ask this per CPU
    /// and domain.
    pub(crate) fn group_order(&self, cpu: u32, d: &Domain) -> Vec<GroupSpan> {
        let mut list = self.group_lists.get(d.groups).to_vec();
        if !self.group_lists.built_order(d.groups) {
            // for_each_cpu_wrap order: by the first member at or after `cpu`.
            list.sort_by_key(|&g| self.wrap_key(g, cpu as usize));
        }
        list
    }

    /// An interned span's mask, with its first CPU and weight.
    pub(crate) fn span_of(&self, s: u32) -> (&CompactMask, Option<u32>, u32) {
        (self.spans.get(s), self.spans.first(s), self.spans.weight(s))
    }

    /// The group's first member at or after `cpu`, else its first plus
    /// `MAX_CPUS`: the order `for_each_cpu_wrap` meets the groups in. The
    /// span's bounds answer most groups without scanning the mask.
    fn wrap_key(&self, g: GroupSpan, cpu: usize) -> usize {
        let n = cpumask::MAX_CPUS;
        match g {
            GroupSpan::Cpu(c) if c as usize >= cpu => c as usize,
            GroupSpan::Cpu(c) => c as usize + n,
            GroupSpan::Span(s) => {
                let first = self.spans.first(s).map_or(0, |f| f as usize);
                match self.spans.last(s) {
                    None => n,
                    Some(_) if first >= cpu => first,
                    Some(l) if l as usize >= cpu => {
                        self.spans.get(s).next_from(cpu).unwrap_or(first + n)
                    }
                    Some(_) => first + n,
                }
            }
        }
    }

    /// Number of distinct spans stored (shared between CPUs).
    pub fn distinct_spans(&self) -> usize {
        self.spans.len()
    }

    /// Whether `d`'s first group flags live in a shared sched_group.
    pub fn shares_groups(&self, d: &Domain) -> bool {
        matches!(d.group_key, GroupKey::Shared(..))
    }

    /// powerpc's `arch_asym_cpu_priority()` (default: `-cpu`), for asym packing.
    pub fn asym_priority(&self, cpu: u32) -> i64 {
        if self.rules.splpar_asym_pack {
            -((cpu / self.rules.threads_per_core.max(1)) as i64)
        } else {
            -(cpu as i64)
        }
    }
}
