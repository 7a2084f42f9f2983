//! The fair class's placement rules, function by function after Linux v6.8
//! `kernel/sched/fair.c` (written from reading it; the names are Linux's so the
//! two can be read side by side). Where 6.6 or 6.12 differ in a way that
//! matters here, [`Kernel`] says so at the rule.

use alloc::vec::Vec;

use domains::Flag;

use crate::idlest;
use crate::machine::{Dom, NO_GROUP};
use crate::sched::{Idle, Sched, CAPACITY};
use crate::Kernel;

/// Why a task is being placed (`SD_BALANCE_FORK`, `SD_BALANCE_EXEC`, `WF_TTWU`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WakeKind {
    /// `wake_up_new_task()`.
    Fork,
    /// `sched_exec()`.
    Exec,
    /// `try_to_wake_up()`, `sync` for `WF_SYNC`.
    Wake {
        /// The waker is about to sleep.
        sync: bool,
    },
}

impl WakeKind {
    fn sd_flag(self) -> Flag {
        match self {
            WakeKind::Fork => Flag::BalanceFork,
            WakeKind::Exec => Flag::BalanceExec,
            WakeKind::Wake { .. } => Flag::BalanceWake,
        }
    }
}

/// `enum group_type` (v6.6+ order: the later, the busier).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum GroupType {
    /// Spare capacity.
    #[default]
    HasSpare,
    /// No spare capacity, not overloaded.
    FullyBusy,
    /// A task does not fit its CPU's capacity. Never reached here: Linux sets
    /// it only under `SD_ASYM_CPUCAPACITY` (`update_misfit_status()` needs
    /// `sd_asym_cpucapacity`), and no machine the readers build has CPUs of
    /// different capacity (no `cpu_capacity`/`capacity-dmips-mhz` input).
    Misfit,
    /// An SMT core with more than one busy sibling, seen by an idle CPU (v6.6+).
    SmtBalance,
    /// Work on CPUs of lower priority than the idle destination (`SD_ASYM_PACKING`).
    AsymPacking,
    /// Affinity left the group imbalanced (`sg_imbalanced()`). Never reached
    /// here: Linux sets `sgc->imbalance` only when `load_balance()` met tasks
    /// pinned away from the destination (`LBF_SOME_PINNED`), and every workload
    /// here may run anywhere (no `taskset`/`sched_setaffinity()` input).
    Imbalanced,
    /// More tasks than CPUs and no capacity left.
    Overloaded,
}

/// `enum migration_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Migration {
    /// Move load.
    Load,
    /// Move utilisation.
    Util,
    /// Move a number of tasks.
    Task,
    /// Move the misfit task.
    Misfit,
}

/// `struct sg_lb_stats`.
#[derive(Debug, Clone, Copy, Default)]
pub struct SgStats {
    /// Σ cpu_load.
    pub load: u64,
    /// Σ cpu_util.
    pub util: u64,
    /// Σ runnable.
    pub runnable: u64,
    /// Σ nr_running.
    pub nr_running: u32,
    /// Idle CPUs.
    pub idle_cpus: u32,
    /// CPUs.
    pub weight: u32,
    /// Σ capacity.
    pub capacity: u64,
    /// Classification.
    pub group_type: GroupType,
    /// Load per capacity (overloaded or fully busy groups).
    pub avg_load: u64,
    /// `group_asym_packing`.
    pub asym_packing: bool,
    /// `group_smt_balance`.
    pub smt_balance: bool,
    /// A task that does not fit (`group_misfit_task_load`).
    pub misfit: u64,
}

/// `struct lb_env` plus what `find_busiest_group()` returns.
struct Env {
    dst: u32,
    k: usize,
    idle: Idle,
    imbalance: i64,
    migration: Migration,
    src: u32,
}

impl Sched<'_> {
    fn sd(&self, cpu: u32, k: usize) -> &Dom {
        self.m.dom(cpu, k)
    }

    // ---------------------------------------------------------------- wake-up

    /// `select_task_rq_fair()` (v6.8) run on CPU `this`: the slow path
    /// (`find_idlest_cpu()`) for fork and exec over the highest domain with the
    /// balance flag, the fast path (`wake_affine()` then `select_idle_sibling()`)
    /// for wake-ups.
    pub fn select_task_rq(&mut self, p: u32, prev: u32, this: u32, kind: WakeKind) -> u32 {
        let wake = matches!(kind, WakeKind::Wake { .. });
        let sync = matches!(kind, WakeKind::Wake { sync: true });
        let want_affine = wake; // wake_wide(): no task here wakes many others.
        let mut new_cpu = prev;
        let mut sd: Option<usize> = None;
        let flag = kind.sd_flag();
        let chain_len = self.m.chain[this as usize].len();
        for k in 0..chain_len {
            let d = self.sd(this, k);
            if want_affine && d.has(Flag::WakeAffine) && d.span.binary_search(&prev).is_ok() {
                if this != prev {
                    new_cpu = self.wake_affine(k, p, this, prev, sync);
                }
                sd = None;
                break;
            }
            if d.has(flag) {
                sd = Some(k);
            } else if !want_affine {
                break;
            }
        }
        match sd {
            Some(k) => self.find_idlest_cpu(k, p, this, prev, flag),
            None if wake => self.select_idle_sibling(p, prev, new_cpu, this),
            None => new_cpu,
        }
    }

    /// `wake_affine()`: `wake_affine_idle()`, then `wake_affine_weight()`.
    fn wake_affine(&self, k: usize, p: u32, this: u32, prev: u32, sync: bool) -> u32 {
        // wake_affine_idle()
        let m = self.m;
        if self.available_idle_cpu(this, this) && m.share_cache(this, prev) {
            return if self.available_idle_cpu(prev, this) {
                prev
            } else {
                this
            };
        }
        if sync && self.rq[this as usize].len() == 1 {
            return this;
        }
        if self.available_idle_cpu(prev, this) {
            return prev;
        }
        // wake_affine_weight()
        let mut this_eff = self.cpu_load(this) as i64;
        if sync {
            let current = self.rq[this as usize]
                .first()
                .map_or(0, |&t| self.task_util(t) as i64);
            if current > this_eff {
                return this;
            }
            this_eff -= current;
        }
        let task_load = self.task_util(p) as i64;
        this_eff += task_load;
        this_eff *= 100 * CAPACITY as i64;
        let mut prev_eff = self.cpu_load(prev) as i64 - task_load;
        prev_eff *= (100 + (self.sd(this, k).imbalance_pct as i64 - 100) / 2) * CAPACITY as i64;
        if sync {
            prev_eff += 1;
        }
        if this_eff < prev_eff {
            this
        } else {
            prev
        }
    }

    /// `select_idle_sibling()` (v6.8): the target, the previous CPU or the
    /// recently used one if idle and cache-affine; then, in the target's LLC,
    /// an idle SMT sibling of `prev` when no core is idle, else the LLC scan.
    /// "Idle" is `available_idle_cpu()`: on a shared LPAR a CPU of a ceded VP
    /// does not count.
    fn select_idle_sibling(&mut self, p: u32, prev: u32, target: u32, this: u32) -> u32 {
        let m = self.m;
        if self.available_idle_cpu(target, this) {
            return target;
        }
        if prev != target && m.share_cache(prev, target) && self.available_idle_cpu(prev, this) {
            return prev;
        }
        let recent = self.tasks[p as usize].recent_used_cpu;
        self.tasks[p as usize].recent_used_cpu = prev;
        if recent != prev
            && recent != target
            && m.share_cache(recent, target)
            && self.available_idle_cpu(recent, this)
        {
            return recent;
        }
        let Some(llc_k) = m.llc_level[target as usize] else {
            return target;
        };
        let mut has_idle_core = false;
        if m.smt_active {
            has_idle_core = self.test_idle_cores(target, llc_k, this);
            if !has_idle_core && m.share_cache(prev, target) {
                if let Some(i) = self.select_idle_smt(prev, this) {
                    return i;
                }
            }
        }
        self.select_idle_cpu(target, llc_k, has_idle_core, this)
            .unwrap_or(target)
    }

    /// `test_idle_cores()`: does the LLC have a core whose threads are all idle?
    fn test_idle_cores(&self, target: u32, llc_k: u8, this: u32) -> bool {
        let span = &self.sd(target, llc_k as usize).span;
        span.iter().any(|&c| {
            self.m.core_cpus[self.m.core[c as usize] as usize]
                .iter()
                .all(|&s| self.available_idle_cpu(s, this))
        })
    }

    /// `select_idle_smt()`: an idle SMT sibling of `target`.
    fn select_idle_smt(&self, target: u32, this: u32) -> Option<u32> {
        self.m.core_cpus[self.m.core[target as usize] as usize]
            .iter()
            .copied()
            .find(|&c| c != target && self.available_idle_cpu(c, this))
    }

    /// `select_idle_cpu()` with `select_idle_core()` and `SIS_UTIL`'s scan
    /// limit: walk the LLC from `target + 1`, wrapping.
    fn select_idle_cpu(
        &self,
        target: u32,
        llc_k: u8,
        has_idle_core: bool,
        this: u32,
    ) -> Option<u32> {
        let d = self.sd(target, llc_k as usize);
        let span = &d.span;
        let mut nr = self.nr_idle_scan(target, llc_k) + 1;
        if nr == 1 && !has_idle_core {
            return None;
        }
        let start = span.partition_point(|&c| c <= target);
        let mut skip_core: Vec<u32> = Vec::new();
        let mut idle_cpu = None;
        for i in 0..span.len() {
            let cpu = span[(start + i) % span.len()];
            if has_idle_core {
                let core = self.m.core[cpu as usize];
                if skip_core.contains(&core) {
                    continue;
                }
                let cpus = &self.m.core_cpus[core as usize];
                let mut idle = true;
                for &s in cpus {
                    if self.available_idle_cpu(s, this) {
                        if idle_cpu.is_none() {
                            idle_cpu = Some(s);
                        }
                    } else {
                        idle = false;
                    }
                }
                if idle {
                    return Some(cpu);
                }
                skip_core.push(core);
            } else {
                nr -= 1;
                if nr == 0 {
                    return None;
                }
                if self.available_idle_cpu(cpu, this) {
                    return Some(cpu);
                }
            }
        }
        idle_cpu
    }

    /// `update_idle_cpu_scan()` (`SIS_UTIL`): how many CPUs of the LLC a wake-up
    /// may scan, falling to 0 as the LLC's utilisation reaches 85 %.
    fn nr_idle_scan(&self, target: u32, llc_k: u8) -> u32 {
        let d = self.sd(target, llc_k as usize);
        let w = d.span.len() as u64;
        let pct = if (llc_k as usize) + 1 < self.m.chain[target as usize].len() {
            self.sd(target, llc_k as usize + 1).imbalance_pct as u64
        } else {
            d.imbalance_pct as u64
        };
        let sum: u64 = d.span.iter().map(|&c| self.cpu_util(c)).sum();
        let x = sum / w.max(1);
        let y = (CAPACITY as i64 - (x * x * pct * pct / (10_000 * CAPACITY)) as i64).max(0) as u64;
        (w * y / CAPACITY) as u32
    }

    /// `find_idlest_cpu()`: from the top domain with the flag down, the idlest
    /// group, then its idlest CPU, then the domains below that CPU.
    fn find_idlest_cpu(&self, top: usize, p: u32, this: u32, prev: u32, flag: Flag) -> u32 {
        let _ = prev;
        let mut cpu = this;
        let mut new_cpu = this;
        let mut k = Some(top);
        while let Some(kk) = k {
            let d = self.sd(cpu, kk);
            if !d.has(flag) {
                k = kk.checked_sub(1);
                continue;
            }
            let Some(group) = self.find_idlest_group(cpu, kk, p) else {
                k = kk.checked_sub(1);
                continue;
            };
            new_cpu = self.find_idlest_group_cpu(group, this);
            if new_cpu == cpu {
                k = kk.checked_sub(1);
                continue;
            }
            cpu = new_cpu;
            let weight = d.span.len();
            k = None;
            for (j, &id) in self.m.chain[cpu as usize].iter().enumerate() {
                let t = &self.m.doms[id as usize];
                if weight <= t.span.len() {
                    break;
                }
                if t.has(flag) {
                    k = Some(j);
                }
            }
        }
        new_cpu
    }

    /// `find_idlest_group_cpu()`: an idle CPU of the group (the one idle the
    /// shortest time: shallowest state), else the least loaded.
    fn find_idlest_group_cpu(&self, group: u32, this: u32) -> u32 {
        let g = &self.m.groups[group as usize];
        if g.cpus.len() == 1 {
            return g.cpus[0];
        }
        // Linux reads each busy CPU's load in the same pass, until the first
        // idle CPU; the load only decides when no CPU is idle, so it is read
        // in a second pass then (the same answer without a load per busy CPU
        // on every fork into a filling group).
        let mut shallowest: Option<u32> = None;
        let mut latest = 0u64;
        for &i in &g.cpus {
            if self.available_idle_cpu(i, this) {
                let stamp = self.idle_stamp[i as usize];
                if shallowest.is_none() || stamp > latest {
                    latest = stamp;
                    shallowest = Some(i);
                }
            }
        }
        if let Some(i) = shallowest {
            return i;
        }
        let mut least = g.cpus[0];
        let mut min_load = u64::MAX;
        for &i in &g.cpus {
            let load = self.cpu_load(i);
            if load < min_load {
                min_load = load;
                least = i;
            }
        }
        least
    }

    /// The per-CPU sums both `update_sg_wakeup_stats()` and
    /// `update_sg_lb_stats()` start from: load, utilisation, runnable tasks and
    /// idle CPUs over the group, and its weight and capacity.
    fn group_sums(&self, group: u32) -> SgStats {
        if self.cache_group_sums {
            if let Some(s) = self.sums.get(group, self.now) {
                return s;
            }
        }
        let s = self.read_group_sums(group);
        if self.cache_group_sums {
            self.sums.put(group, self.now, s);
        }
        s
    }

    /// [`Sched::group_sums`] read from every CPU of the group.
    fn read_group_sums(&self, group: u32) -> SgStats {
        let g = &self.m.groups[group as usize];
        let mut s = SgStats::default();
        for &i in &g.cpus {
            let nr = self.rq[i as usize].len() as u32;
            if nr == 0 {
                s.idle_cpus += 1;
                continue;
            }
            let load = self.cpu_load(i);
            s.load += load;
            s.util += load.min(CAPACITY);
            s.runnable += load;
            s.nr_running += nr;
        }
        s.weight = g.cpus.len() as u32;
        s.capacity = CAPACITY * s.weight as u64;
        s
    }

    /// `update_sg_wakeup_stats()`.
    pub(crate) fn wakeup_stats(&self, d: &Dom, group: u32) -> SgStats {
        let mut s = self.group_sums(group);
        s.group_type = classify(d.imbalance_pct, &s);
        if matches!(s.group_type, GroupType::FullyBusy | GroupType::Overloaded) {
            s.avg_load = s.load * CAPACITY / s.capacity;
        }
        s
    }

    /// Whether a group has a whole idle SMT core: where `SD_ASYM_PACKING` would
    /// let a task run at the group's priority (`sched_use_asym_prio()`).
    fn has_idle_core(&self, group: u32) -> bool {
        self.m.groups[group as usize]
            .cpus
            .iter()
            .any(|&c| self.idle_cpu(c) && self.is_core_idle(c))
    }

    /// The local group and the idlest other group of `this`'s domain `k`,
    /// compared group by group as `find_idlest_group()` does.
    #[allow(clippy::type_complexity)]
    fn idlest_by_scan(
        &self,
        this: u32,
        k: usize,
        asym: bool,
    ) -> (Option<(u32, SgStats)>, Option<(u32, SgStats)>) {
        let d = self.sd(this, k);
        let mut local: Option<(u32, SgStats)> = None;
        let mut idlest: Option<(u32, SgStats)> = None;
        for (g, holds_this) in self.m.groups_from(this, k) {
            let s = self.wakeup_stats(d, g);
            if holds_this {
                local = Some((g, s));
                continue;
            }
            let better = match &idlest {
                None => true,
                Some((ig, is)) => {
                    if asym
                        && s.group_type == GroupType::HasSpare
                        && is.group_type == GroupType::HasSpare
                    {
                        let (gi, ii) = (self.has_idle_core(g), self.has_idle_core(*ig));
                        let (gp, ip) = (
                            self.m.groups[g as usize].asym_prefer_cpu,
                            self.m.groups[*ig as usize].asym_prefer_cpu,
                        );
                        if gi && (!ii || self.m.asym_prefer(gp, ip)) {
                            true
                        } else if ii && (!gi || self.m.asym_prefer(ip, gp)) {
                            false
                        } else {
                            update_pick_idlest(is, &s)
                        }
                    } else {
                        update_pick_idlest(is, &s)
                    }
                }
            };
            if better {
                idlest = Some((g, s));
            }
        }
        (local, idlest)
    }

    /// What [`Sched::idlest_by_scan`] finds, from the domain's tree of group
    /// standings ([`crate::idlest`]) when it holds this instant: not with asym
    /// packing (a pairwise preference, not an order), not where groups
    /// overlap, not when group sums are read afresh each time (the reference).
    #[allow(clippy::type_complexity)]
    fn idlest_from_tree(
        &self,
        this: u32,
        k: usize,
        asym: bool,
    ) -> Option<(Option<(u32, SgStats)>, Option<(u32, SgStats)>)> {
        let d = self.sd(this, k);
        let pos = self.m.local_pos[this as usize][k];
        if asym || d.overlapping || !self.cache_group_sums || pos == NO_GROUP {
            return None;
        }
        let id = self.m.chain[this as usize][k];
        let (valid, build) = self.idlest.ready(id, self.now);
        if !valid && !build {
            return None;
        }
        if build {
            let keys: Vec<idlest::Key> = d
                .groups
                .iter()
                .map(|&g| idlest::key(&self.wakeup_stats(d, g)))
                .collect();
            self.idlest.build(id, self.now, &keys);
        }
        let stats = |g: u32| (g, self.wakeup_stats(d, g));
        let local = stats(d.groups[pos as usize]);
        let idlest = self
            .idlest
            .idlest(id, pos as usize)
            .map(|i| stats(d.groups[i]));
        Some((Some(local), idlest))
    }

    /// `find_idlest_group()` (v6.8), with the asym-packing preference of the
    /// "sched/fair: Enable group_asym_packing in find_idlest_group" patch that
    /// seed 001's numbers include (6.8 and later here): on an `SD_ASYM_PACKING`
    /// domain a group of higher priority with an idle core wins among groups
    /// with spare capacity.
    fn find_idlest_group(&self, this: u32, k: usize, p: u32) -> Option<u32> {
        let _ = p;
        let d = self.sd(this, k);
        let asym = d.has(Flag::AsymPacking) && self.kernel >= Kernel::V6_8;
        let (local, idlest) = match self.idlest_from_tree(this, k, asym) {
            Some(found) => found,
            None => self.idlest_by_scan(this, k, asym),
        };
        let (ig, is) = idlest?;
        let Some((lg, ls)) = local else {
            return Some(ig);
        };
        if ls.group_type < is.group_type {
            return None;
        }
        if ls.group_type > is.group_type {
            return Some(ig);
        }
        match ls.group_type {
            GroupType::Overloaded | GroupType::FullyBusy => {
                let imb = CAPACITY * (d.imbalance_pct as u64 - 100) / 100;
                if d.has(Flag::Numa) && is.avg_load + imb >= ls.avg_load {
                    return None;
                }
                if is.avg_load >= ls.avg_load + imb {
                    return None;
                }
                if 100 * ls.avg_load <= d.imbalance_pct as u64 * is.avg_load {
                    return None;
                }
            }
            GroupType::HasSpare => {
                if asym {
                    let gp = self.m.groups[ig as usize].asym_prefer_cpu;
                    let lp = self.m.groups[lg as usize].asym_prefer_cpu;
                    if self.has_idle_core(ig) && self.m.asym_prefer(gp, lp) {
                        return Some(ig);
                    }
                    if self.has_idle_core(lg) && self.m.asym_prefer(lp, gp) {
                        return None;
                    }
                }
                if d.has(Flag::Numa) {
                    // A task not allowed on exactly NR_CPUS CPUs (every task
                    // here: no machine has exactly the distributions' NR_CPUS)
                    // gets at most the local group's weight as allowance (v5.19+).
                    let lw = self.m.groups[lg as usize].cpus.len() as i64;
                    let imb_numa_nr = (d.imb_numa_nr as i64).min(lw);
                    let imb = (ls.idle_cpus as i64 - is.idle_cpus as i64).abs();
                    if adjust_numa_imbalance(imb, ls.nr_running as i64 + 1, imb_numa_nr) == 0 {
                        return None;
                    }
                }
                if ls.idle_cpus >= is.idle_cpus {
                    return None;
                }
            }
            _ => return None,
        }
        Some(ig)
    }

    // ------------------------------------------------------- load balancing

    /// `rebalance_domains()`: each domain of `cpu` whose interval has passed
    /// (`balance_interval`, times `busy_factor` when busy) is balanced; stops
    /// going up when `should_we_balance()` says another CPU balances for the group.
    pub fn rebalance_domains(&mut self, cpu: u32, mut idle: Idle) {
        let j = self.jiffies();
        let mut next = j + self.m.hz as u64 * 60;
        let mut busy = idle != Idle::Idle;
        let mut go_on = true;
        for k in 0..self.m.chain[cpu as usize].len() {
            if !go_on {
                break;
            }
            let mut interval = self.balance_interval(cpu, k, busy);
            if j >= self.bal[cpu as usize][k].last + interval {
                let (moved, cont) = self.load_balance(cpu, k, idle);
                go_on = cont;
                if moved {
                    idle = if self.idle_cpu(cpu) {
                        Idle::Idle
                    } else {
                        Idle::NotIdle
                    };
                    busy = idle != Idle::Idle;
                }
                self.bal[cpu as usize][k].last = j;
                interval = self.balance_interval(cpu, k, busy);
            }
            next = next.min(self.bal[cpu as usize][k].last + interval);
        }
        self.next_balance[cpu as usize] = next;
    }

    /// `get_sd_balance_interval()` in jiffies.
    fn balance_interval(&self, cpu: u32, k: usize, busy: bool) -> u64 {
        let d = self.sd(cpu, k);
        let mut ms = self.bal[cpu as usize][k].interval as u64;
        if busy {
            ms *= d.busy_factor as u64;
        }
        let mut j = (ms * self.m.hz as u64).div_ceil(1000);
        if busy {
            j = j.saturating_sub(1);
        }
        let max = (self.m.hz as u64 * self.m.ncpu() as u64 / 10).max(1);
        j.clamp(1, max)
    }

    /// `load_balance()`: find the busiest group and runqueue, pull tasks, and
    /// fall back to active balancing after `cache_nice_tries + 2` failures.
    /// Returns (tasks moved, whether to continue to the parent domain).
    fn load_balance(&mut self, cpu: u32, k: usize, idle: Idle) -> (bool, bool) {
        self.counters.balances += 1;
        let mut env = Env {
            dst: cpu,
            k,
            idle,
            imbalance: 0,
            migration: Migration::Task,
            src: cpu,
        };
        if !self.should_we_balance(&env) {
            self.out_balanced(cpu, k, idle);
            return (false, false);
        }
        let Some(busiest_group) = self.find_busiest_group(&mut env) else {
            self.out_balanced(cpu, k, idle);
            return (false, true);
        };
        let Some(src) = self.find_busiest_queue(&env, busiest_group) else {
            self.out_balanced(cpu, k, idle);
            return (false, true);
        };
        env.src = src;
        let moved = if self.rq[src as usize].len() > 1 {
            self.detach_attach(&mut env)
        } else {
            0
        };
        let bal = &mut self.bal[cpu as usize][k];
        let mut active = false;
        let mut want = false;
        if moved == 0 {
            if idle != Idle::NewlyIdle {
                bal.failed += 1;
            }
            want = self.need_active_balance(&env);
            if want && !self.rq[src as usize].is_empty() {
                // active_load_balance_cpu_stop(): the stopper on `src` pushes
                // its task (at once here; later in Linux, so the checks below
                // still see the state before the push), and a successful push
                // resets the destination's failure count (v5.13+: the reset
                // belongs to the stopper, and load_balance() leaves the count
                // alone when it kicks it).
                let t = self.rq[src as usize][0];
                self.move_task(t, cpu);
                self.counters.active += 1;
                active = true;
                self.bal[cpu as usize][k].failed = 0;
            }
        } else {
            bal.failed = 0;
        }
        if !active || want {
            let min = self.sd(cpu, k).min_interval;
            self.bal[cpu as usize][k].interval = min;
        }
        (moved > 0 || active, true)
    }

    /// The `out_balanced` / `out_one_pinned` tail of `load_balance()`.
    fn out_balanced(&mut self, cpu: u32, k: usize, idle: Idle) {
        let max = 2 * self.sd(cpu, k).min_interval;
        let b = &mut self.bal[cpu as usize][k];
        b.failed = 0;
        if idle != Idle::NewlyIdle && b.interval < max {
            b.interval *= 2;
        }
    }

    /// `should_we_balance()` (v6.8): newly idle CPUs always may; otherwise only
    /// the first idle CPU of the local group (preferring one on an idle core),
    /// or its first CPU when none is idle.
    fn should_we_balance(&self, env: &Env) -> bool {
        if env.idle == Idle::NewlyIdle {
            return self.rq[env.dst as usize].is_empty();
        }
        let d = self.sd(env.dst, env.k);
        let Some(local) = self.m.local_group(env.dst, env.k) else {
            return false;
        };
        let cpus = &self.m.groups[local as usize].cpus;
        let mut idle_smt = None;
        for &c in cpus {
            if !self.idle_cpu(c) {
                continue;
            }
            if !d.has(Flag::ShareCpuCapacity) && !self.is_core_idle(c) {
                if idle_smt.is_none() {
                    idle_smt = Some(c);
                }
                continue;
            }
            return c == env.dst;
        }
        if let Some(c) = idle_smt {
            return c == env.dst;
        }
        cpus[0] == env.dst
    }

    /// `update_sg_lb_stats()`.
    fn lb_stats(&self, env: &Env, d: &Dom, group: u32, local: bool) -> SgStats {
        let mut s = self.group_sums(group);
        if !local
            && d.has(Flag::AsymPacking)
            && env.idle != Idle::NotIdle
            && s.nr_running > 0
            && self.sched_asym(d, env.dst, &s, group)
        {
            s.asym_packing = true;
        }
        if !local
            && env.idle != Idle::NotIdle
            && self.m.groups[group as usize].smt
            && s.nr_running > 1
        {
            s.smt_balance = true;
        }
        s.group_type = classify(d.imbalance_pct, &s);
        if s.group_type == GroupType::Overloaded {
            s.avg_load = s.load * CAPACITY / s.capacity;
        }
        s
    }

    /// `sched_use_asym_prio()` (v6.5+): priorities only count for a CPU whose
    /// whole SMT core is idle, unless balancing between SMT siblings.
    fn use_asym_prio(&self, d: &Dom, cpu: u32) -> bool {
        !self.m.smt_active || d.has(Flag::ShareCpuCapacity) || self.is_core_idle(cpu)
    }

    /// `sched_asym()` (v6.8): may idle `dst` pull from `group` by priority?
    fn sched_asym(&self, d: &Dom, dst: u32, s: &SgStats, group: u32) -> bool {
        if !self.use_asym_prio(d, dst) {
            return false;
        }
        let g = &self.m.groups[group as usize];
        if g.smt && s.weight - s.idle_cpus != 1 {
            return false;
        }
        self.m.asym_prefer(dst, g.asym_prefer_cpu)
    }

    /// `find_busiest_group()` (v6.8) with `update_sd_lb_stats()`,
    /// `update_sd_pick_busiest()` and `calculate_imbalance()`.
    fn find_busiest_group(&mut self, env: &mut Env) -> Option<u32> {
        let m = self.m;
        let d = m.dom(env.dst, env.k);
        let prefer_sibling = env.k > 0 && m.dom(env.dst, env.k - 1).has(Flag::PreferSibling);
        let mut local: Option<(u32, SgStats)> = None;
        let mut busiest: Option<(u32, SgStats)> = None;
        let mut total_load = 0u64;
        let mut total_cap = 0u64;
        for (g, is_local) in m.groups_from(env.dst, env.k) {
            let s = self.lb_stats(env, d, g, is_local);
            total_load += s.load;
            total_cap += s.capacity;
            if is_local {
                local = Some((g, s));
                continue;
            }
            if self.pick_busiest(busiest.as_ref(), g, &s) {
                busiest = Some((g, s));
            }
        }
        let (bg, b) = busiest?;
        let (lg, mut l) = local?;
        let _ = lg;
        let sds = Sds {
            prefer_sibling,
            total_load,
            total_cap,
            busiest_cores: m.groups[bg as usize].cores,
            local_cores: m.groups[lg as usize].cores,
        };
        let force = matches!(
            b.group_type,
            GroupType::Misfit | GroupType::AsymPacking | GroupType::Imbalanced
        );
        if !force {
            if l.group_type > b.group_type {
                return None;
            }
            if l.group_type == GroupType::Overloaded {
                if l.avg_load >= b.avg_load {
                    return None;
                }
                let avg = total_load * CAPACITY / total_cap.max(1);
                if l.avg_load >= avg {
                    return None;
                }
                if 100 * b.avg_load <= d.imbalance_pct as u64 * l.avg_load {
                    return None;
                }
            }
            let sibling = sds.prefer_sibling
                && l.group_type == GroupType::HasSpare
                && sibling_imbalance(env.idle, &sds, &b, &l) > 1;
            if !sibling && b.group_type != GroupType::Overloaded {
                if env.idle == Idle::NotIdle {
                    return None;
                }
                let smt_pull = b.group_type == GroupType::SmtBalance
                    && m.groups[bg as usize].smt
                    && !m.groups[lg as usize].smt;
                if !smt_pull {
                    if b.weight > 1 && l.idle_cpus <= b.idle_cpus + 1 {
                        return None;
                    }
                    if b.nr_running == 1 {
                        return None;
                    }
                }
            }
        }
        self.calculate_imbalance(env, d, &sds, &b, &mut l);
        (env.imbalance > 0).then_some(bg)
    }

    /// `update_sd_pick_busiest()` (v6.8).
    fn pick_busiest(&self, cur: Option<&(u32, SgStats)>, g: u32, s: &SgStats) -> bool {
        if s.nr_running == 0 {
            return false;
        }
        let Some((bg, b)) = cur else {
            return true;
        };
        if s.group_type != b.group_type {
            return s.group_type > b.group_type;
        }
        let has_spare = |s: &SgStats, b: &SgStats| {
            !(s.idle_cpus > b.idle_cpus
                || (s.idle_cpus == b.idle_cpus && s.nr_running <= b.nr_running))
        };
        match s.group_type {
            GroupType::Overloaded => s.avg_load > b.avg_load,
            GroupType::Imbalanced => false,
            GroupType::AsymPacking => {
                // Prefer to move from the lowest-priority CPU's work.
                self.m.asym_prefer(
                    self.m.groups[*bg as usize].asym_prefer_cpu,
                    self.m.groups[g as usize].asym_prefer_cpu,
                )
            }
            GroupType::Misfit => s.misfit > b.misfit,
            GroupType::SmtBalance if s.idle_cpus != 0 || b.idle_cpus != 0 => has_spare(s, b),
            GroupType::SmtBalance | GroupType::FullyBusy => {
                if s.avg_load < b.avg_load {
                    return false;
                }
                !(s.avg_load == b.avg_load && self.m.groups[*bg as usize].smt)
            }
            GroupType::HasSpare => has_spare(s, b),
        }
    }

    /// `calculate_imbalance()` (v6.8): how much to move, and as what.
    fn calculate_imbalance(&self, env: &mut Env, d: &Dom, sds: &Sds, b: &SgStats, l: &mut SgStats) {
        match b.group_type {
            GroupType::Misfit => {
                env.migration = Migration::Misfit;
                env.imbalance = 1;
                return;
            }
            GroupType::AsymPacking => {
                env.migration = Migration::Task;
                env.imbalance = b.nr_running as i64;
                return;
            }
            GroupType::SmtBalance | GroupType::Imbalanced => {
                env.migration = Migration::Task;
                env.imbalance = 1;
                return;
            }
            _ => {}
        }
        if l.group_type == GroupType::HasSpare {
            if b.group_type > GroupType::FullyBusy && !d.has(Flag::ShareLlc) {
                env.migration = Migration::Util;
                env.imbalance = (l.capacity.max(l.util) - l.util) as i64;
                if env.idle != Idle::NotIdle && env.imbalance == 0 {
                    env.migration = Migration::Task;
                    env.imbalance = 1;
                }
                return;
            }
            env.migration = Migration::Task;
            env.imbalance = if b.weight == 1 || sds.prefer_sibling {
                sibling_imbalance(env.idle, sds, b, l)
            } else {
                (l.idle_cpus as i64 - b.idle_cpus as i64).max(0)
            };
            if d.has(Flag::Numa) {
                env.imbalance = adjust_numa_imbalance(
                    env.imbalance,
                    l.nr_running as i64 + 1,
                    d.imb_numa_nr as i64,
                );
            }
            env.imbalance >>= 1;
            return;
        }
        let avg = sds.total_load * CAPACITY / sds.total_cap.max(1);
        if l.group_type < GroupType::Overloaded {
            l.avg_load = l.load * CAPACITY / l.capacity.max(1);
            if l.avg_load >= b.avg_load || l.avg_load >= avg {
                env.imbalance = 0;
                return;
            }
        }
        env.migration = Migration::Load;
        let a = b.avg_load.saturating_sub(avg) * b.capacity;
        let c = avg.saturating_sub(l.avg_load) * l.capacity;
        env.imbalance = (a.min(c) / CAPACITY) as i64;
    }

    /// `find_busiest_queue()` (v6.8): the runqueue to pull from, by migration type;
    /// with asym packing, a lone task on a CPU preferred to the destination stays.
    fn find_busiest_queue(&self, env: &Env, group: u32) -> Option<u32> {
        let d = self.sd(env.dst, env.k);
        let mut busiest = None;
        let mut best_nr = 0usize;
        let mut best_load = 0u64;
        let mut best_util = 0u64;
        for &i in &self.m.groups[group as usize].cpus {
            let nr = self.rq[i as usize].len();
            if nr == 0 {
                continue;
            }
            if d.has(Flag::AsymPacking)
                && self.use_asym_prio(d, i)
                && self.m.asym_prefer(i, env.dst)
                && nr == 1
            {
                continue;
            }
            match env.migration {
                Migration::Load => {
                    let load = self.cpu_load(i);
                    if nr == 1 && load as i64 > env.imbalance {
                        continue;
                    }
                    if load > best_load {
                        best_load = load;
                        busiest = Some(i);
                    }
                }
                Migration::Util => {
                    if nr <= 1 {
                        continue;
                    }
                    let u = self.cpu_util(i);
                    if u > best_util {
                        best_util = u;
                        busiest = Some(i);
                    }
                }
                Migration::Task | Migration::Misfit => {
                    if nr > best_nr {
                        best_nr = nr;
                        busiest = Some(i);
                    }
                }
            }
        }
        busiest
    }

    /// `detach_tasks()` + `attach_tasks()`: queued (not running) tasks, from the
    /// back of the queue, until the imbalance is met. `task_hot()`: a task that
    /// ran in the last 0.5 ms stays unless balancing has failed often.
    fn detach_attach(&mut self, env: &mut Env) -> u32 {
        let src = env.src;
        let failed = self.bal[env.dst as usize][env.k].failed;
        let nice_tries = self.sd(env.dst, env.k).cache_nice_tries;
        let mut moved = 0;
        let loop_max = self.rq[src as usize].len().min(32);
        let mut idx = self.rq[src as usize].len();
        for _ in 0..loop_max {
            if env.imbalance <= 0 {
                break;
            }
            if env.idle != Idle::NotIdle && self.rq[src as usize].len() <= 1 {
                break;
            }
            if idx <= 1 {
                break;
            }
            idx -= 1;
            let t = self.rq[src as usize][idx];
            // migrate_degrades_locality() (v6.8): leaving the preferred node
            // is "hot" only while the source runqueue also holds a task that
            // does not prefer that node; then task_hot() (0.5 ms).
            let task = &self.tasks[t as usize];
            let src_node = self.m.node[src as usize];
            let degrades = self.sd(env.dst, env.k).has(Flag::Numa)
                && task.numa_pref == Some(src_node)
                && self.m.node[env.dst as usize] != src_node
                && self.rq[src as usize]
                    .iter()
                    .any(|&o| self.tasks[o as usize].numa_pref != Some(src_node));
            let hot = degrades || self.now.saturating_sub(task.exec_start) < 500_000;
            if hot && failed <= nice_tries {
                continue;
            }
            let load = self.task_util(t).max(1) as i64;
            match env.migration {
                Migration::Load => {
                    if (load >> failed.min(63)) > env.imbalance {
                        continue;
                    }
                    env.imbalance -= load;
                }
                Migration::Util => {
                    if load > env.imbalance {
                        continue;
                    }
                    env.imbalance -= load;
                }
                Migration::Task => env.imbalance -= 1,
                Migration::Misfit => env.imbalance = 0,
            }
            self.move_task(t, env.dst);
            moved += 1;
            if env.idle == Idle::NewlyIdle {
                break;
            }
        }
        moved
    }

    /// `need_active_balance()` (v6.8): asym packing toward a preferred idle core,
    /// or a task-count imbalance that failed `cache_nice_tries + 2` times.
    fn need_active_balance(&self, env: &Env) -> bool {
        let d = self.sd(env.dst, env.k);
        if env.idle != Idle::NotIdle
            && d.has(Flag::AsymPacking)
            && self.use_asym_prio(d, env.dst)
            && (self.m.asym_prefer(env.dst, env.src) || !self.use_asym_prio(d, env.src))
        {
            return true;
        }
        let failed = self.bal[env.dst as usize][env.k].failed;
        if env.migration == Migration::Task && failed > d.cache_nice_tries + 2 {
            return true;
        }
        env.migration == Migration::Misfit
    }

    /// `newidle_balance()` (v6.8): a CPU about to idle pulls work, domain by
    /// domain, if some CPU is overloaded and its average idle time is long
    /// enough to pay for the search.
    pub fn newidle_balance(&mut self, cpu: u32) -> bool {
        if !self.rq[cpu as usize].is_empty() {
            return false;
        }
        if self.avg_idle[cpu as usize] < 500_000 || self.overloaded == 0 {
            return false;
        }
        let mut cost = 0u64;
        for k in 0..self.m.chain[cpu as usize].len() {
            let d = self.sd(cpu, k);
            // max_newidle_lb_cost: assumed 50 ns per CPU of the span.
            let dcost = 50 * d.span.len() as u64;
            if self.avg_idle[cpu as usize] < cost + dcost {
                break;
            }
            cost += dcost;
            if d.has(Flag::BalanceNewidle) {
                let (moved, _) = self.load_balance(cpu, k, Idle::NewlyIdle);
                if moved {
                    return true;
                }
            }
            if !self.rq[cpu as usize].is_empty() {
                return true;
            }
        }
        false
    }

    /// `nohz_balancer_kick()` (v6.8) on busy CPU `cpu`'s tick: kick the idle
    /// load balancer when this CPU has two tasks, when a preferred CPU of its
    /// asym-packing domain sits idle on an idle core, or when its LLC has more
    /// than one busy CPU.
    pub(crate) fn nohz_balancer_kick(&self, cpu: u32) -> bool {
        if self.jiffies() < self.nohz_next {
            return false;
        }
        if self.rq[cpu as usize].len() >= 2 {
            return true;
        }
        if let Some(k) = self.m.asym_level[cpu as usize] {
            let d = self.sd(cpu, k as usize);
            let found = d.span.iter().any(|&i| {
                self.idle_cpu(i) && self.use_asym_prio(d, i) && self.m.asym_prefer(i, cpu)
            });
            if found {
                return true;
            }
        }
        self.llc_busy[self.m.llc_id[cpu as usize] as usize] > 1
    }

    /// `kick_ilb()` + `_nohz_idle_balance()`: the first idle CPU balances, in
    /// turn, every idle CPU whose `next_balance` has come, from itself onward.
    pub(crate) fn nohz_idle_balance(&mut self) {
        let n = self.rq.len() as u32;
        let Some(ilb) = (0..n).find(|&c| self.idle_cpu(c)) else {
            return;
        };
        self.counters.ilb_kicks += 1;
        let j = self.jiffies();
        let mut next = j + self.m.hz as u64 * 60;
        let mut visited = 0u64;
        for i in 0..n {
            let c = (ilb + 1 + i) % n;
            if !self.idle_cpu(c) {
                continue;
            }
            if !self.idle_cpu(ilb) {
                break;
            }
            visited += 1;
            if j >= self.next_balance[c as usize] {
                self.rebalance_domains(c, Idle::Idle);
            }
            next = next.min(self.next_balance[c as usize]);
        }
        self.nohz_next = next;
        let ns = self.hv.params.ilb_ns + 200 * visited;
        self.hv.touch(self.m.vp[ilb as usize], self.now, ns);
    }
}

/// What `update_sd_lb_stats()` keeps beside the two groups.
struct Sds {
    prefer_sibling: bool,
    total_load: u64,
    total_cap: u64,
    busiest_cores: u32,
    local_cores: u32,
}

/// `group_classify()` with `group_is_overloaded()` and `group_has_capacity()`.
fn classify(imbalance_pct: u32, s: &SgStats) -> GroupType {
    let pct = imbalance_pct as u64;
    let overloaded = s.nr_running > s.weight
        && (s.capacity * 100 < s.util * pct || s.capacity * pct < s.runnable * 100);
    if overloaded {
        return GroupType::Overloaded;
    }
    if s.asym_packing {
        return GroupType::AsymPacking;
    }
    if s.smt_balance {
        return GroupType::SmtBalance;
    }
    if s.misfit > 0 {
        return GroupType::Misfit;
    }
    let has_capacity = s.nr_running < s.weight
        || (s.capacity * pct >= s.runnable * 100 && s.capacity * 100 > s.util * pct);
    if !has_capacity {
        return GroupType::FullyBusy;
    }
    GroupType::HasSpare
}

/// `update_pick_idlest()` (v6.8).
fn update_pick_idlest(idlest: &SgStats, s: &SgStats) -> bool {
    if s.group_type != idlest.group_type {
        return s.group_type < idlest.group_type;
    }
    match s.group_type {
        GroupType::Overloaded | GroupType::FullyBusy => idlest.avg_load > s.avg_load,
        GroupType::HasSpare => {
            !(idlest.idle_cpus > s.idle_cpus
                || (idlest.idle_cpus == s.idle_cpus && idlest.util <= s.util))
        }
        _ => false,
    }
}

/// `sibling_imbalance()` (v6.6+): with `SD_PREFER_SIBLING`, spread tasks so the
/// two groups have the same tasks per SMT core (doubled; the caller halves it).
fn sibling_imbalance(idle: Idle, sds: &Sds, b: &SgStats, l: &SgStats) -> i64 {
    if idle == Idle::NotIdle || b.nr_running == 0 {
        return 0;
    }
    let (nb, nl) = (sds.busiest_cores as i64, sds.local_cores as i64);
    if nb == nl {
        return (b.nr_running as i64 - l.nr_running as i64).max(0);
    }
    let mut imb = (nl * b.nr_running as i64 - nb * l.nr_running as i64).max(0);
    imb = (2 * imb + nl + nb) / (nl + nb);
    if imb <= 1 && l.nr_running == 0 && b.nr_running > 1 {
        imb = 2;
    }
    imb
}

/// `adjust_numa_imbalance()`: a destination node running at most `imb_numa_nr`
/// tasks may stay up to `NUMA_IMBALANCE_MIN` (2) tasks behind.
fn adjust_numa_imbalance(imbalance: i64, dst_running: i64, imb_numa_nr: i64) -> i64 {
    if dst_running > imb_numa_nr {
        return imbalance;
    }
    if imbalance <= 2 {
        return 0;
    }
    imbalance
}
