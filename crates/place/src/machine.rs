//! The machine as the placement rules see it: every online CPU's scheduler
//! domains and groups, taken from [`domains::Domains`] (never rebuilt here), in a
//! compact form — CPUs renumbered densely, spans and groups interned as CPU lists
//! — plus the per-CPU facts the rules and the reports need (SMT core, virtual
//! processor, package, node, asym-packing priority).
//!
//! Linux keeps the same facts in `struct sched_domain`, `struct sched_group` and
//! the per-CPU `sd_llc`, `sd_asym_packing` pointers (kernel/sched/topology.c,
//! `update_top_cache_domain()`); the names below follow them.

use alloc::collections::BTreeMap;
use alloc::vec;
use alloc::vec::Vec;

use cpumask::{AsWords, CompactMask, CpuMask};
use domains::{Domains, Flag, Flags};
use topology::{Arch, LevelKind, Topology};

/// One interned scheduler domain (`struct sched_domain` without the per-CPU
/// balancing state, which lives in [`crate::sched::Balance`]).
#[derive(Debug, Clone)]
pub struct Dom {
    /// `sd->name`: SMT, CLS, CACHE, MC, PKG, NODE, NUMA.
    pub name: &'static str,
    /// `sd->flags`.
    pub flags: Flags,
    /// The CPUs it spans (dense numbers, ascending).
    pub span: Vec<u32>,
    /// Its groups (indices into [`Machine::groups`]), in span order.
    pub groups: Vec<u32>,
    /// `sd->min_interval` in ms (`max_interval` is twice it).
    pub min_interval: u32,
    /// `sd->busy_factor`.
    pub busy_factor: u32,
    /// `sd->imbalance_pct`.
    pub imbalance_pct: u32,
    /// `sd->cache_nice_tries`.
    pub cache_nice_tries: u32,
    /// `sd->imb_numa_nr`, as `build_sched_domains()` (v6.8) computes it.
    pub imb_numa_nr: u32,
    /// Some CPU is in more than one of its groups (overlapping NUMA groups),
    /// so the group holding a CPU is not only its local one.
    pub overlapping: bool,
}

impl Dom {
    /// Whether the domain has `f`.
    pub fn has(&self, f: Flag) -> bool {
        self.flags.contains(f)
    }
    /// `sd->span_weight`.
    pub fn span_weight(&self) -> u32 {
        self.span.len() as u32
    }
}

/// [`Machine::local_pos`] of a CPU no group of the domain holds.
pub const NO_GROUP: u32 = u32::MAX;

/// One interned scheduling group (`struct sched_group` + `sched_group_capacity`).
#[derive(Debug, Clone)]
pub struct Group {
    /// Its CPUs (dense, ascending).
    pub cpus: Vec<u32>,
    /// `sg->cores`: SMT cores it holds.
    pub cores: u32,
    /// `sg->asym_prefer_cpu`: its CPU of highest `arch_asym_cpu_priority()`.
    pub asym_prefer_cpu: u32,
    /// `sg->flags & SD_SHARE_CPUCAPACITY`: the group is one SMT core.
    pub smt: bool,
}

/// Where a machine's CPUs are and how they are grouped for balancing.
#[derive(Debug, Clone)]
pub struct Machine {
    /// Linux CPU number of each dense CPU.
    pub cpu_id: Vec<u32>,
    /// SMT core (dense index) of each CPU.
    pub core: Vec<u32>,
    /// CPUs of each SMT core.
    pub core_cpus: Vec<Vec<u32>>,
    /// Virtual processor of each CPU: the SMT8 big core on POWER9/10, else the core.
    pub vp: Vec<u32>,
    /// CPUs of each virtual processor.
    pub vp_cpus: Vec<Vec<u32>>,
    /// Package (dense index) of each CPU.
    pub package: Vec<u32>,
    /// NUMA node (dense index) of each CPU.
    pub node: Vec<u32>,
    /// Number of packages and nodes.
    pub packages: u32,
    /// Number of NUMA nodes with CPUs.
    pub nodes: u32,
    /// `arch_asym_cpu_priority()` of each CPU (higher is preferred).
    pub prio: Vec<i64>,
    /// Interned domains.
    pub doms: Vec<Dom>,
    /// Each CPU's domains, lowest first (indices into `doms`).
    pub chain: Vec<Vec<u32>>,
    /// Per CPU, per domain of its chain: the position in the domain's
    /// `groups` of the first group holding the CPU (`sd->groups`, the local
    /// group), [`NO_GROUP`] if none does.
    pub local_pos: Vec<Vec<u32>>,
    /// Interned groups.
    pub groups: Vec<Group>,
    /// The groups holding each CPU (of every domain level), ascending, so that a
    /// change of one runqueue reaches every group statistic it counts in.
    pub cpu_groups: Vec<Vec<u32>>,
    /// `per_cpu(sd_llc)`: index into the CPU's chain of its highest LLC-sharing domain.
    pub llc_level: Vec<Option<u8>>,
    /// An id shared by the CPUs of one LLC (`sd_llc_id`).
    pub llc_id: Vec<u32>,
    /// `per_cpu(sd_asym_packing)`: index into the chain of the highest domain with
    /// `SD_ASYM_PACKING`.
    pub asym_level: Vec<Option<u8>>,
    /// The architecture.
    pub arch: Arch,
    /// Scheduler ticks per second (`CONFIG_HZ` of the distributions' kernels:
    /// 100 on POWER, 250 elsewhere).
    pub hz: u32,
    /// Whether SMT is active (`sched_smt_active()`): some core has two threads.
    pub smt_active: bool,
}

/// How the machine view is made.
#[derive(Debug, Clone, Default)]
pub struct MachineOptions {
    /// x86 ITMT: per-CPU priorities (indexed by Linux CPU number) as
    /// `sched_set_itmt_core_prio()` would set them; when given, the SMT, CLS and
    /// MC levels get `SD_ASYM_PACKING` as `x86_sched_itmt_flags()` gives them.
    /// Every online CPU needs one ([`parse_itmt`] reads them from text).
    pub itmt_priorities: Option<Vec<Option<i64>>>,
}

/// Reads ITMT priorities from `CPULIST=PRIORITY` items (`0-3=70`, `4,6=52`),
/// as firmware gives them to `sched_set_itmt_core_prio()`: one priority per
/// CPU, indexed by Linux CPU number. A CPU named twice is refused (which of the
/// two would Linux keep? the last call — but a typo is likelier).
pub fn parse_itmt<'a>(
    items: impl IntoIterator<Item = &'a str>,
) -> Result<Vec<Option<i64>>, alloc::string::String> {
    use alloc::format;
    let mut prio: Vec<Option<i64>> = Vec::new();
    for item in items {
        let Some((list, p)) = item.split_once('=') else {
            return Err(format!("{item:?}: expected CPULIST=PRIORITY, e.g. 0-3=70"));
        };
        let cpus = CpuMask::parse_list(list).map_err(|e| format!("{item:?}: {e}"))?;
        // `sched_set_itmt_core_prio()` takes an int.
        let p: i64 = p.trim().parse::<i32>().map(i64::from).map_err(|_| {
            format!(
                "{item:?}: priority {:?} is not an integer from {} to {} (Linux keeps it in an int)",
                p.trim(),
                i32::MIN,
                i32::MAX
            )
        })?;
        if cpus.is_empty() {
            return Err(format!("{item:?}: no CPU named"));
        }
        for c in cpus.iter() {
            if prio.len() <= c {
                prio.resize(c + 1, None);
            }
            if let Some(old) = prio[c] {
                return Err(format!("{item:?}: CPU {c} already has priority {old}"));
            }
            prio[c] = Some(p);
        }
    }
    Ok(prio)
}

/// Why the machine view could not be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MachineError {
    /// An online CPU the domains know is missing from the topology.
    UnknownCpu(u32),
    /// An online CPU was given no ITMT priority.
    ItmtMissing(u32),
    /// ITMT priorities are an x86 feature.
    ItmtNotX86,
}

impl core::fmt::Display for MachineError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            MachineError::UnknownCpu(c) => {
                write!(
                    f,
                    "CPU {c} has scheduler domains but is not in the topology"
                )
            }
            MachineError::ItmtMissing(c) => write!(
                f,
                "ITMT priorities: online CPU {c} has none (every online CPU needs one)"
            ),
            MachineError::ItmtNotX86 => {
                write!(
                    f,
                    "ITMT priorities only exist on x86 (Intel Turbo Boost Max 3.0)"
                )
            }
        }
    }
}

impl Machine {
    /// The placement view of `doms` (built by `domains::build` on `topo`).
    ///
    /// Phases: the online CPUs numbered densely; each CPU's priority
    /// ([`priorities`]); the CPUs' core, package and node ([`Facts`]); the
    /// domains and their groups interned ([`Machine::intern_domains`]) and
    /// indexed per CPU; then the local groups and the cache domains.
    pub fn new(
        topo: &Topology,
        doms: &Domains,
        options: &MachineOptions,
    ) -> Result<Machine, MachineError> {
        let cpu_id: Vec<u32> = doms.cpus.iter().map(|c| c.cpu).collect();
        let n = cpu_id.len();
        let max_id = cpu_id.iter().copied().max().unwrap_or(0) as usize;
        let mut dense = vec![u32::MAX; max_id + 1];
        for (i, &c) in cpu_id.iter().enumerate() {
            dense[c as usize] = i as u32;
        }
        let prio = priorities(doms, options, &cpu_id)?;
        let facts = Facts::new(topo, &cpu_id, &dense)?;
        let itmt = options.itmt_priorities.is_some();

        let mut m = Machine {
            cpu_id,
            core: facts.core,
            core_cpus: facts.core_cpus,
            vp: facts.vp,
            vp_cpus: facts.vp_cpus,
            package: facts.package,
            node: facts.node,
            packages: facts.packages,
            nodes: facts.nodes,
            prio,
            doms: Vec::new(),
            chain: vec![Vec::new(); n],
            local_pos: Vec::new(),
            groups: Vec::new(),
            cpu_groups: vec![Vec::new(); n],
            llc_level: vec![None; n],
            llc_id: vec![0; n],
            asym_level: vec![None; n],
            arch: doms.arch.clone(),
            hz: if doms.arch.is_power() { 100 } else { 250 },
            smt_active: false,
        };
        m.smt_active = m.core_cpus.iter().any(|c| c.len() > 1);
        m.intern_domains(doms, &dense, itmt);
        for (g, group) in m.groups.iter().enumerate() {
            for &c in &group.cpus {
                m.cpu_groups[c as usize].push(g as u32);
            }
        }
        m.local_groups();
        m.top_cache_domains();
        Ok(m)
    }

    /// Number of online CPUs.
    pub fn ncpu(&self) -> usize {
        self.cpu_id.len()
    }

    /// The domain at position `k` of `cpu`'s chain.
    pub fn dom(&self, cpu: u32, k: usize) -> &Dom {
        &self.doms[self.chain[cpu as usize][k] as usize]
    }

    /// Whether group `g` holds `cpu` (`cpumask_test_cpu(cpu, sched_group_span(g))`).
    pub fn in_group(&self, cpu: u32, g: u32) -> bool {
        self.cpu_groups[cpu as usize].binary_search(&g).is_ok()
    }

    /// `sd->groups` order for `cpu` at position `k` of its chain: from its
    /// local group on, wrapping, each group with whether it holds `cpu`.
    pub fn groups_from(&self, cpu: u32, k: usize) -> impl Iterator<Item = (u32, bool)> + '_ {
        let d = self.dom(cpu, k);
        let pos = self.local_pos[cpu as usize][k];
        let start = if pos == NO_GROUP { 0 } else { pos as usize };
        let (tail, head) = (&d.groups[start..], &d.groups[..start]);
        tail.iter().chain(head).enumerate().map(move |(i, &g)| {
            let holds = if i == 0 && pos != NO_GROUP {
                true
            } else {
                (d.overlapping || pos == NO_GROUP) && self.in_group(cpu, g)
            };
            (g, holds)
        })
    }

    /// The local group of `cpu` at position `k` of its chain: the first of
    /// the domain's groups holding it.
    pub fn local_group(&self, cpu: u32, k: usize) -> Option<u32> {
        match self.local_pos[cpu as usize][k] {
            NO_GROUP => None,
            pos => Some(self.dom(cpu, k).groups[pos as usize]),
        }
    }

    /// [`Machine::local_pos`] of every CPU, and each domain's `overlapping`:
    /// domain by domain, each CPU's first group, for the CPUs whose chain
    /// holds the domain.
    fn local_groups(&mut self) {
        for d in &mut self.doms {
            let covered: usize = d
                .groups
                .iter()
                .map(|&g| self.groups[g as usize].cpus.len())
                .sum();
            d.overlapping = covered > d.span.len();
        }
        let mut users: Vec<Vec<(u32, u32)>> = vec![Vec::new(); self.doms.len()];
        for (cpu, chain) in self.chain.iter().enumerate() {
            for (k, &d) in chain.iter().enumerate() {
                users[d as usize].push((cpu as u32, k as u32));
            }
        }
        self.local_pos = self.chain.iter().map(|c| vec![NO_GROUP; c.len()]).collect();
        let mut first = vec![NO_GROUP; self.ncpu()];
        for (d, dom) in self.doms.iter().enumerate() {
            let cpus = |pos: usize| &self.groups[dom.groups[pos] as usize].cpus;
            // Backwards, so that the first group holding a CPU is the one kept.
            for pos in (0..dom.groups.len()).rev() {
                for &c in cpus(pos) {
                    first[c as usize] = pos as u32;
                }
            }
            for &(cpu, k) in &users[d] {
                self.local_pos[cpu as usize][k as usize] = first[cpu as usize];
            }
            for pos in 0..dom.groups.len() {
                for &c in cpus(pos) {
                    first[c as usize] = NO_GROUP;
                }
            }
        }
    }

    /// `cpus_share_cache()`: same LLC.
    pub fn share_cache(&self, a: u32, b: u32) -> bool {
        self.llc_id[a as usize] == self.llc_id[b as usize]
    }

    /// `sched_asym_prefer(a, b)`: `a` has a higher priority than `b`.
    pub fn asym_prefer(&self, a: u32, b: u32) -> bool {
        self.prio[a as usize] > self.prio[b as usize]
    }

    fn intern_domains(&mut self, doms: &Domains, dense: &[u32], itmt: bool) {
        let mut dom_ids: BTreeMap<DomKey, u32> = BTreeMap::new();
        let mut group_ids: BTreeMap<Vec<u32>, u32> = BTreeMap::new();
        let mut imb_memo: BTreeMap<Vec<(u8, usize, u32)>, Vec<u32>> = BTreeMap::new();
        for (ci, cd) in doms.cpus.iter().enumerate() {
            let imb_by_level = imb_memo
                .entry(chain_key(doms, cd))
                .or_insert_with(|| imb_numa_nr(doms, cd))
                .clone();
            let mut child_key = 0;
            for d in &cd.domains {
                let span_key = doms.span(d) as *const CompactMask as usize;
                let mut flags = d.flags;
                if itmt && matches!(doms.name(d), "SMT" | "CLS" | "MC") {
                    flags.insert(Flag::AsymPacking);
                }
                // A domain is a function of (level, span, flags, imb_numa_nr,
                // tuning) where its groups do not overlap (`build_sched_groups()`: the
                // children's spans partition the span, whichever CPU of it
                // asks); where they do (`build_overlap_sched_groups()`) the
                // group list depends on the asking CPU's child span too. One
                // domain per key: on a machine of thousands of CPUs the CPUs
                // of one LLC share one MC domain, not one copy per SMT core.
                let overlap = doms.level(d).overlap || flags.contains(Flag::Overlap);
                let key = DomKey {
                    level: d.level,
                    span: span_key,
                    flags: flags_key(doms, flags),
                    child: if overlap { child_key } else { 0 },
                    imb_numa_nr: imb_by_level[d.level as usize],
                    tuning: [
                        d.min_interval(),
                        d.busy_factor,
                        d.imbalance_pct,
                        d.cache_nice_tries,
                    ],
                };
                let id = match dom_ids.get(&key) {
                    Some(&id) => id,
                    None => {
                        let (cpu, imb) = (cd.cpu, key.imb_numa_nr);
                        let id = self.new_dom(doms, (cpu, d, flags, imb), dense, &mut group_ids);
                        dom_ids.insert(key, id);
                        id
                    }
                };
                self.chain[ci].push(id);
                child_key = span_key;
            }
        }
    }

    /// Adds domain `d` as CPU `cpu` sees it, with `flags` and `imb_numa_nr`,
    /// its groups interned in `group_ids`; returns its id.
    fn new_dom(
        &mut self,
        doms: &Domains,
        (cpu, d, flags, imb_numa_nr): (u32, &domains::Domain, Flags, u32),
        dense: &[u32],
        group_ids: &mut BTreeMap<Vec<u32>, u32>,
    ) -> u32 {
        let mut groups: Vec<u32> = doms
            .groups(cpu, d)
            .iter()
            .map(|g| {
                let cpus = to_dense(g, dense);
                self.intern_group(group_ids, cpus)
            })
            .collect();
        groups.sort_by_key(|&g| self.groups[g as usize].cpus[0]);
        self.doms.push(Dom {
            name: doms.name(d),
            flags,
            span: to_dense(doms.span(d), dense),
            groups,
            min_interval: d.min_interval(),
            busy_factor: d.busy_factor,
            imbalance_pct: d.imbalance_pct,
            cache_nice_tries: d.cache_nice_tries,
            imb_numa_nr,
            overlapping: false,
        });
        (self.doms.len() - 1) as u32
    }

    fn intern_group(&mut self, ids: &mut BTreeMap<Vec<u32>, u32>, cpus: Vec<u32>) -> u32 {
        if let Some(&id) = ids.get(&cpus) {
            return id;
        }
        let mut cores: Vec<u32> = cpus.iter().map(|&c| self.core[c as usize]).collect();
        cores.sort_unstable();
        cores.dedup();
        let mut best = cpus[0];
        for &c in &cpus {
            if self.prio[c as usize] > self.prio[best as usize] {
                best = c;
            }
        }
        let smt = cpus.len() > 1 && cores.len() == 1;
        self.groups.push(Group {
            cores: cores.len() as u32,
            asym_prefer_cpu: best,
            smt,
            cpus: cpus.clone(),
        });
        let id = (self.groups.len() - 1) as u32;
        ids.insert(cpus, id);
        id
    }

    /// `update_top_cache_domain()`: `sd_llc` and `sd_asym_packing` per CPU,
    /// and one LLC id per distinct LLC span (looked up once per domain, not
    /// once per CPU: an LLC spans up to thousands of CPUs).
    fn top_cache_domains(&mut self) {
        let mut llc_of_dom: BTreeMap<u32, u32> = BTreeMap::new();
        let mut span_ids: BTreeMap<&[u32], u32> = BTreeMap::new();
        let mut next_id = 0u32;
        for cpu in 0..self.ncpu() {
            let chain = &self.chain[cpu];
            let mut llc = None;
            let mut asym = None;
            for (k, &d) in chain.iter().enumerate() {
                let dom = &self.doms[d as usize];
                // highest_flag_domain(): the highest of a run of domains with the flag.
                if dom.has(Flag::ShareLlc) && (k == 0 || llc == Some(k as u8 - 1)) {
                    llc = Some(k as u8);
                }
                if dom.has(Flag::AsymPacking) {
                    asym = Some(k as u8);
                }
            }
            self.llc_level[cpu] = llc;
            self.asym_level[cpu] = asym;
            self.llc_id[cpu] = match llc {
                Some(k) => {
                    let d = chain[k as usize];
                    *llc_of_dom.entry(d).or_insert_with(|| {
                        *span_ids
                            .entry(self.doms[d as usize].span.as_slice())
                            .or_insert_with(|| {
                                next_id += 1;
                                next_id - 1
                            })
                    })
                }
                None => {
                    next_id += 1;
                    next_id - 1
                }
            };
        }
    }
}

/// What `imb_numa_nr()` depends on: the CPU's built chain (its domains'
/// levels, spans and flags) and its removed levels; most CPUs share one, so
/// it is computed once per distinct key.
fn chain_key(doms: &Domains, cd: &domains::CpuDomains) -> Vec<(u8, usize, u32)> {
    cd.domains
        .iter()
        .map(|d| {
            let span = doms.span(d) as *const CompactMask as usize;
            (d.level, span, flags_key(doms, d.flags))
        })
        .chain(cd.removed.iter().map(|r| {
            let single = matches!(r.reason, domains::Reason::SingleCpu);
            (r.level, usize::from(single), u32::MAX)
        }))
        .collect()
}

/// `sd->imb_numa_nr` of each level of one CPU's domains, as
/// `build_sched_domains()` (v6.8, unchanged to v6.12) computes it: before
/// `cpu_attach_domain()` removes degenerate domains, so over every level built,
/// including those removed later. The first domain above the LLC gets the
/// number of LLCs it spans (or 1/8 of its CPUs when it spans one LLC); each
/// domain above gets that times how many first-NUMA-domain spans it covers.
fn imb_numa_nr(doms: &Domains, cd: &domains::CpuDomains) -> Vec<u32> {
    // The built chain: surviving domains with their flags, removed ones with
    // their level's topology flags and the span of the domain below (a removed
    // domain spans one CPU, or its only group, which is its child's span).
    let mut built: Vec<(u8, Option<u32>, Flags)> = cd
        .domains
        .iter()
        .map(|d| (d.level, Some(doms.span(d).weight() as u32), d.flags))
        .chain(cd.removed.iter().map(|r| match r.reason {
            domains::Reason::SingleCpu => (
                r.level,
                Some(1),
                doms.levels[r.level as usize].topology_flags,
            ),
            _ => (r.level, None, doms.levels[r.level as usize].topology_flags),
        }))
        .collect();
    built.sort_by_key(|b| b.0);
    let mut weight = 1;
    let chain: Vec<(u8, u32, Flags)> = built
        .into_iter()
        .map(|(level, w, flags)| {
            weight = w.unwrap_or(weight);
            (level, weight, flags)
        })
        .collect();
    let mut out = vec![0; doms.levels.len()];
    let (mut imb, mut imb_span) = (0u32, 1u32);
    for (i, &(level, weight, flags)) in chain.iter().enumerate() {
        let child_llc = i > 0 && chain[i - 1].2.contains(Flag::ShareLlc);
        out[level as usize] = if !flags.contains(Flag::ShareLlc) && child_llc {
            let nr_llcs = weight / chain[i - 1].1.max(1);
            imb = if nr_llcs == 1 { weight >> 3 } else { nr_llcs }.max(1);
            imb_span = chain[i + 1..]
                .iter()
                .find(|c| c.2.contains(Flag::Numa))
                .map_or(weight, |c| c.1);
            imb
        } else {
            imb * (weight / imb_span.max(1)).max(1)
        };
    }
    out
}

/// What identifies one interned domain: its level, span (the domain
/// builder's interned mask), flags, `imb_numa_nr`, tuning (intervals, busy
/// factor, imbalance percentage, cache-nice tries), and for overlapping
/// groups the span of the asking CPU's child domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct DomKey {
    level: u8,
    span: usize,
    flags: u32,
    child: usize,
    imb_numa_nr: u32,
    tuning: [u32; 4],
}

fn flags_key(doms: &Domains, flags: Flags) -> u32 {
    // The kernel's own encoding, plus the ITMT bit that encoding may lack.
    doms.kernel.encode(flags)
        ^ if flags.contains(Flag::AsymPacking) {
            1 << 31
        } else {
            0
        }
}

fn to_dense(mask: &impl AsWords, dense: &[u32]) -> Vec<u32> {
    mask.as_words()
        .iter()
        .filter_map(|c| dense.get(c).copied().filter(|&d| d != u32::MAX))
        .collect()
}

/// Each CPU's (in `cpu_id` order) asym-packing priority: the `--itmt`
/// priorities when given, which only x86 has and which must name every
/// online CPU, else the one the domains give it.
fn priorities(
    doms: &Domains,
    options: &MachineOptions,
    cpu_id: &[u32],
) -> Result<Vec<i64>, MachineError> {
    let is_x86 = matches!(doms.arch, Arch::X86_64 | Arch::X86);
    if options.itmt_priorities.is_some() && !is_x86 {
        return Err(MachineError::ItmtNotX86);
    }
    if let Some(p) = &options.itmt_priorities {
        if let Some(&c) = cpu_id
            .iter()
            .find(|&&c| p.get(c as usize).copied().flatten().is_none())
        {
            return Err(MachineError::ItmtMissing(c));
        }
    }
    Ok(cpu_id
        .iter()
        .map(|&c| match &options.itmt_priorities {
            Some(p) => p[c as usize].unwrap_or_default(),
            None => doms.asym_priority(c),
        })
        .collect())
}

/// Per-CPU topology facts, read from the topology in this one place.
struct Facts {
    core: Vec<u32>,
    core_cpus: Vec<Vec<u32>>,
    vp: Vec<u32>,
    vp_cpus: Vec<Vec<u32>>,
    package: Vec<u32>,
    node: Vec<u32>,
    packages: u32,
    nodes: u32,
}

impl Facts {
    fn new(topo: &Topology, cpu_id: &[u32], dense: &[u32]) -> Result<Facts, MachineError> {
        let has_big = topo.level(LevelKind::BigCore).is_some();
        let mut core = Vec::with_capacity(cpu_id.len());
        let mut vp = Vec::with_capacity(cpu_id.len());
        let mut package = Vec::with_capacity(cpu_id.len());
        let mut node = Vec::with_capacity(cpu_id.len());
        let mut core_ids: BTreeMap<(u32, u32), u32> = BTreeMap::new();
        let mut vp_ids: BTreeMap<(u32, u32), u32> = BTreeMap::new();
        let mut pkg_ids: BTreeMap<u32, u32> = BTreeMap::new();
        let mut node_ids: BTreeMap<u32, u32> = BTreeMap::new();
        for &c in cpu_id {
            let cpu = topo.cpu(c as usize).ok_or(MachineError::UnknownCpu(c))?;
            // A CPU with no core of its own is its own core.
            let core_key = cpu.group(LevelKind::Core).map_or((1, c), |g| (0, g));
            let vp_key = if has_big {
                cpu.group(LevelKind::BigCore).map_or(core_key, |g| (2, g))
            } else {
                core_key
            };
            let pkg_key = cpu.group(LevelKind::Package).unwrap_or(0);
            let node_key = cpu.node.unwrap_or(0);
            for (ids, key, out) in [
                (&mut core_ids, core_key, &mut core),
                (&mut vp_ids, vp_key, &mut vp),
            ] {
                let next = ids.len() as u32;
                out.push(*ids.entry(key).or_insert(next));
            }
            for (ids, key, out) in [
                (&mut pkg_ids, pkg_key, &mut package),
                (&mut node_ids, node_key, &mut node),
            ] {
                let next = ids.len() as u32;
                out.push(*ids.entry(key).or_insert(next));
            }
        }
        let members = |of: &[u32], count: usize| {
            let mut v = vec![Vec::new(); count];
            for (i, &g) in of.iter().enumerate() {
                v[g as usize].push(i as u32);
            }
            v
        };
        let _ = dense;
        Ok(Facts {
            core_cpus: members(&core, core_ids.len()),
            vp_cpus: members(&vp, vp_ids.len()),
            core,
            vp,
            package,
            node,
            packages: pkg_ids.len() as u32,
            nodes: node_ids.len() as u32,
        })
    }
}
