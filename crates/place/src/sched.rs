//! Runqueues, tasks and the scheduler tick: the state the fair-class rules
//! ([`crate::fair`]) read and change, and the accounting that turns it into
//! lparstat's columns.
//!
//! Simplifications, each because the placement questions asked here do not
//! depend on it: every task is nice 0 and may run anywhere; a runqueue with
//! several tasks gives each a tick in turn (EEVDF's 3 ms base slice is shorter
//! than the 4–10 ms tick); a task's utilisation and load are one exponentially
//! decaying average of the time it was runnable (PELT's 32 ms half-life); the
//! stopper thread of active balancing moves its task at once.

use alloc::vec;
use alloc::vec::Vec;
use core::cell::Cell;

use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};

use crate::fair::SgStats;
use crate::hv::{HvParams, Hypervisor};
use crate::idlest::{self, IdlestIndex};
use crate::machine::Machine;
use crate::workload::Workload;
use crate::Kernel;

/// `SCHED_CAPACITY_SCALE`.
pub const CAPACITY: u64 = 1024;

/// Per CPU, per domain: `sd->balance_interval`, `sd->last_balance`,
/// `sd->nr_balance_failed`.
#[derive(Debug, Clone, Copy)]
pub struct Balance {
    /// ms.
    pub interval: u32,
    /// jiffies.
    pub last: u64,
    /// Consecutive failed balances.
    pub failed: u32,
}

/// A task.
#[derive(Debug, Clone)]
pub struct Task {
    /// Its CPU (the runqueue it is on, or its previous CPU while asleep).
    pub cpu: u32,
    /// Runnable (on a runqueue) rather than blocked.
    pub runnable: bool,
    /// `p->recent_used_cpu`.
    pub recent_used_cpu: u32,
    /// Utilisation 0..=1024 at `util_at`.
    pub util: u64,
    /// When `util` was last brought up to date (ns).
    pub util_at: u64,
    /// When it last started running (ns), for `task_hot()`.
    pub exec_start: u64,
    /// Times it changed CPU.
    pub migrations: u64,
    /// `p->numa_preferred_nid`: the node of the memory it works on, if any.
    pub numa_pref: Option<u32>,
    /// When NUMA balancing may next try to move it home (ns).
    pub numa_next: u64,
}

/// Which balancing pass is running (`enum cpu_idle_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Idle {
    /// `CPU_IDLE`: periodic balance of an idle CPU (by the nohz idle balancer).
    Idle,
    /// `CPU_NOT_IDLE`: periodic balance of a busy CPU.
    NotIdle,
    /// `CPU_NEWLY_IDLE`: the CPU is about to go idle.
    NewlyIdle,
}

/// Counters over the whole run.
#[derive(Debug, Clone, Copy, Default)]
pub struct Counters {
    /// Task migrations (any path).
    pub migrations: u64,
    /// Of which by active balancing.
    pub active: u64,
    /// Wake-ups placed.
    pub wakeups: u64,
    /// nohz idle-balance kicks.
    pub ilb_kicks: u64,
    /// `load_balance()` calls.
    pub balances: u64,
    /// Moves home by NUMA balancing.
    pub numa: u64,
}

/// The whole scheduler state.
pub struct Sched<'m> {
    /// The machine.
    pub m: &'m Machine,
    /// Kernel whose rules apply.
    pub kernel: Kernel,
    /// The hypervisor.
    pub hv: Hypervisor,
    /// Virtual time (ns).
    pub now: u64,
    /// Tick length (ns).
    pub tick_ns: u64,
    /// Per CPU: runnable tasks, the running one first.
    pub rq: Vec<Vec<u32>>,
    /// Per CPU: when it last went idle (`rq->idle_stamp`).
    pub idle_stamp: Vec<u64>,
    /// Per CPU: `rq->avg_idle` (ns).
    pub avg_idle: Vec<u64>,
    /// Per CPU: `rq->next_balance` (jiffies).
    pub next_balance: Vec<u64>,
    /// Per CPU, per domain of its chain.
    pub bal: Vec<Vec<Balance>>,
    /// Per CPU: time busy before `busy_since` (ns), and since when busy.
    pub busy_acc: Vec<u64>,
    busy_since: Vec<u64>,
    /// Per LLC id: CPUs with work (`sd_llc_shared->nr_busy_cpus`).
    pub llc_busy: Vec<u32>,
    /// CPUs with more than one task (`rd->overload` is this being non-zero).
    pub overloaded: u32,
    /// `nohz.next_balance` (jiffies).
    pub nohz_next: u64,
    /// Tasks; the last one is the parent that forked the others.
    pub tasks: Vec<Task>,
    /// Per task: work done, in "one thread alone on a core for one ns"
    /// units. Apart from the tasks because every tick adds to every running
    /// task's: a dense vector of them stays in cache where the tasks do not.
    pub work: Vec<f64>,
    /// What the tasks do.
    pub workload: Workload,
    /// Counters.
    pub counters: Counters,
    /// CPUs that went idle and owe a newly-idle balance.
    pub newly_idle: Vec<u32>,
    /// Tasks whose runnable state changed and whose next workload event the
    /// driver must schedule (task, became runnable).
    pub changed: Vec<(u32, bool)>,
    /// Automatic NUMA balancing's retry interval (ns); `None`: off.
    pub numa_retry_ns: Option<u64>,
    /// Keep each group's runqueue sums between reads (see [`GroupSums`]);
    /// `false` reads every CPU on every read, the reference the cache is
    /// tested against.
    pub cache_group_sums: bool,
    pub(crate) sums: GroupSums,
    pub(crate) idlest: IdlestIndex,
    pub(crate) rng: ChaCha8Rng,
}

/// Per scheduling group: its runqueue sums (load, utilisation, tasks, idle
/// CPUs) and the instant they were read at.
///
/// This is the model's bookkeeping, not a Linux rule: Linux reads every CPU of
/// every group each time (`update_sg_wakeup_stats()`), and so, by default, does
/// the model's answer — but fork balancing at the top level of a machine with
/// thousands of CPUs reads all of them for each fork, and a run forks
/// thousands of tasks at one instant. At one instant a group's sums change
/// only when one of its runqueues does (utilisation moves only with time), so
/// an entry read at this instant stays valid until time moves on, and an
/// enqueue or dequeue ([`Sched::enqueue`], [`Sched::dequeue`]) shifts the
/// entries of every group holding its CPU by that CPU's change.
pub(crate) struct GroupSums {
    entries: Vec<Cell<Option<(u64, SgStats)>>>,
}

impl GroupSums {
    fn new(groups: usize) -> GroupSums {
        GroupSums {
            entries: vec![Cell::new(None); groups],
        }
    }

    /// The sums of `group` read at `now`, if still valid.
    pub(crate) fn get(&self, group: u32, now: u64) -> Option<SgStats> {
        match self.entries[group as usize].get() {
            Some((at, s)) if at == now => Some(s),
            _ => None,
        }
    }

    pub(crate) fn put(&self, group: u32, now: u64, s: SgStats) {
        self.entries[group as usize].set(Some((now, s)));
    }

    /// One CPU of each of `groups` went from `before` to `after` at `now`.
    fn shift(&self, groups: &[u32], now: u64, before: CpuPart, after: CpuPart) {
        for &g in groups {
            let Some(mut s) = self.get(g, now) else {
                continue;
            };
            s.load = s.load - before.load + after.load;
            s.util = s.util - before.load.min(CAPACITY) + after.load.min(CAPACITY);
            s.runnable = s.runnable - before.load + after.load;
            s.nr_running = s.nr_running - before.nr + after.nr;
            s.idle_cpus = s.idle_cpus - u32::from(before.nr == 0) + u32::from(after.nr == 0);
            self.put(g, now, s);
        }
    }
}

/// What one CPU adds to its groups' sums: its tasks and their load.
#[derive(Debug, Clone, Copy)]
struct CpuPart {
    nr: u32,
    load: u64,
}

impl<'m> Sched<'m> {
    /// An idle machine at time 0.
    pub fn new(
        m: &'m Machine,
        kernel: Kernel,
        hv: HvParams,
        workload: Workload,
        seed: u64,
    ) -> Sched<'m> {
        let n = m.ncpu();
        let bal = (0..n)
            .map(|c| {
                m.chain[c]
                    .iter()
                    .map(|&d| Balance {
                        interval: m.doms[d as usize].min_interval,
                        last: 0,
                        failed: 0,
                    })
                    .collect()
            })
            .collect();
        let nllc = m.llc_id.iter().copied().max().map_or(0, |x| x as usize + 1);
        Sched {
            m,
            kernel,
            hv: Hypervisor::new(hv, m.vp_cpus.len()),
            now: 0,
            tick_ns: 1_000_000_000 / m.hz as u64,
            rq: vec![Vec::new(); n],
            idle_stamp: vec![0; n],
            avg_idle: vec![1_000_000; n],
            next_balance: vec![0; n],
            bal,
            busy_acc: vec![0; n],
            busy_since: vec![0; n],
            llc_busy: vec![0; nllc],
            overloaded: 0,
            nohz_next: 0,
            tasks: Vec::new(),
            work: Vec::new(),
            workload,
            counters: Counters::default(),
            newly_idle: Vec::new(),
            changed: Vec::new(),
            numa_retry_ns: None,
            cache_group_sums: true,
            sums: GroupSums::new(m.groups.len()),
            idlest: IdlestIndex::new(m.doms.iter().map(|d| d.groups.as_slice()), m.groups.len()),
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }

    /// jiffies.
    pub fn jiffies(&self) -> u64 {
        self.now / self.tick_ns
    }

    /// A uniform number in [0, 1) from the run's generator.
    pub fn uniform(&mut self) -> f64 {
        (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// `idle_cpu()`.
    pub fn idle_cpu(&self, c: u32) -> bool {
        self.rq[c as usize].is_empty()
    }

    /// `available_idle_cpu()` asked on CPU `from`: idle, and its VP not preempted.
    pub fn available_idle_cpu(&self, c: u32, from: u32) -> bool {
        self.idle_cpu(c)
            && !self
                .hv
                .preempted(self.m.vp[c as usize], self.m.vp[from as usize], self.now)
    }

    /// `is_core_idle()`: every SMT sibling of `c` other than `c` is idle.
    pub fn is_core_idle(&self, c: u32) -> bool {
        self.m.core_cpus[self.m.core[c as usize] as usize]
            .iter()
            .all(|&s| s == c || self.idle_cpu(s))
    }

    /// Task utilisation now (PELT-like decay toward 1024 while runnable, 0 while
    /// blocked, half-life 32 ms).
    pub fn task_util(&self, t: u32) -> u64 {
        let task = &self.tasks[t as usize];
        if task.runnable && task.util >= CAPACITY {
            return CAPACITY;
        }
        let ms = (self.now.saturating_sub(task.util_at) / 1_000_000).min(2048);
        let keep = decay_q16(ms);
        let target = if task.runnable { CAPACITY } else { 0 };
        (task.util * keep + target * (65536 - keep)) >> 16
    }

    fn settle_util(&mut self, t: u32) {
        let u = self.task_util(t);
        let task = &mut self.tasks[t as usize];
        task.util = u;
        task.util_at = self.now;
    }

    /// A queued task's share of its CPU's load and utilisation: its
    /// utilisation, at least 1 (a task just woken still counts).
    fn task_load(&self, t: u32) -> u64 {
        self.task_util(t).max(1)
    }

    /// `cpu_load()`: the loads of its tasks.
    pub fn cpu_load(&self, c: u32) -> u64 {
        self.rq[c as usize].iter().map(|&t| self.task_load(t)).sum()
    }

    /// `cpu_util_cfs()`: utilisation, at most the capacity.
    pub fn cpu_util(&self, c: u32) -> u64 {
        // The sum only grows, so it stops at the capacity: a wake-up's scan
        // reads every CPU of the LLC, and a CPU queueing many tasks would
        // otherwise cost one read per task each time.
        let mut sum = 0;
        for &t in &self.rq[c as usize] {
            sum += self.task_load(t);
            if sum >= CAPACITY {
                return CAPACITY;
            }
        }
        sum
    }

    /// Puts `t` on `c`'s runqueue.
    pub fn enqueue(&mut self, t: u32, c: u32) {
        let parts = self.parts_around(c, t, true);
        self.rq[c as usize].push(t);
        self.sums_shift(c, parts);
        let n = self.rq[c as usize].len();
        if n == 1 {
            self.tasks[t as usize].exec_start = self.now;
            self.cpu_became_busy(c);
        } else if n == 2 {
            self.overloaded += 1;
        }
        let task = &mut self.tasks[t as usize];
        if task.cpu != c {
            task.migrations += 1;
            self.counters.migrations += 1;
        }
        task.cpu = c;
    }

    /// Takes `t` off its runqueue.
    pub fn dequeue(&mut self, t: u32) {
        let c = self.tasks[t as usize].cpu;
        let parts = self.parts_around(c, t, false);
        let q = &mut self.rq[c as usize];
        let pos = q
            .iter()
            .position(|&x| x == t)
            .expect("task on its runqueue");
        q.remove(pos);
        self.sums_shift(c, parts);
        let n = self.rq[c as usize].len();
        if n == 0 {
            self.cpu_became_idle(c);
        } else if n == 1 {
            self.overloaded -= 1;
        }
        if pos == 0 {
            if let Some(&next) = self.rq[c as usize].first() {
                self.tasks[next as usize].exec_start = self.now;
            }
        }
    }

    fn cpu_part(&self, c: u32) -> CpuPart {
        CpuPart {
            nr: self.rq[c as usize].len() as u32,
            load: self.cpu_load(c),
        }
    }

    /// `c`'s runqueue before and after `t` joins or leaves it, read before
    /// the change: one walk of the runqueue (the cost of a run with long
    /// runqueues), the other side by `t`'s own load, which the change does
    /// not alter. `None` without cached sums, which need neither.
    fn parts_around(&self, c: u32, t: u32, joins: bool) -> Option<(CpuPart, CpuPart)> {
        if !self.cache_group_sums {
            return None;
        }
        let now = self.cpu_part(c);
        let load = self.task_load(t);
        let moved = if joins {
            CpuPart {
                nr: now.nr + 1,
                load: now.load + load,
            }
        } else {
            CpuPart {
                nr: now.nr - 1,
                load: now.load - load,
            }
        };
        Some((now, moved))
    }

    /// `c`'s runqueue changed from `before` to `after` ([`Self::parts_around`]):
    /// the cached sums follow, and so do the standings of its groups in the
    /// idlest-group trees.
    fn sums_shift(&self, c: u32, parts: Option<(CpuPart, CpuPart)>) {
        if let Some((before, after)) = parts {
            let groups = &self.m.cpu_groups[c as usize];
            self.sums.shift(groups, self.now, before, after);
            for &g in groups {
                self.idlest.update(g, self.now, |d| {
                    idlest::key(&self.wakeup_stats(&self.m.doms[d as usize], g))
                });
            }
        }
    }

    /// Moves a runnable task to `dst` (a migration).
    pub fn move_task(&mut self, t: u32, dst: u32) {
        self.dequeue(t);
        self.enqueue(t, dst);
    }

    fn cpu_became_busy(&mut self, c: u32) {
        let m = self.m;
        self.busy_since[c as usize] = self.now;
        self.hv.thread_busy(m.vp[c as usize], self.now);
        self.llc_busy[m.llc_id[c as usize] as usize] += 1;
        // ttwu_do_activate(): the idle period ends; update_avg(&rq->avg_idle).
        let idle = self.now - self.idle_stamp[c as usize];
        let a = &mut self.avg_idle[c as usize];
        let sample = idle.min(2 * 500_000 * 2);
        *a = ((*a as i64) + ((sample as i64 - *a as i64) >> 3)) as u64;
    }

    fn cpu_became_idle(&mut self, c: u32) {
        let m = self.m;
        self.busy_acc[c as usize] += self.now - self.busy_since[c as usize];
        self.hv.thread_idle(m.vp[c as usize], self.now);
        self.llc_busy[m.llc_id[c as usize] as usize] -= 1;
        self.idle_stamp[c as usize] = self.now;
        self.newly_idle.push(c);
    }

    /// Busy time of every CPU up to now (ns).
    pub fn busy_total(&self) -> u64 {
        let mut t: u64 = self.busy_acc.iter().sum();
        for c in 0..self.rq.len() {
            if !self.rq[c].is_empty() {
                t += self.now - self.busy_since[c];
            }
        }
        t
    }

    /// Adds a task on no CPU yet (it is placed by [`Sched::fork`]).
    pub fn add_task(&mut self, cpu: u32) -> u32 {
        self.tasks.push(Task {
            cpu,
            runnable: false,
            recent_used_cpu: cpu,
            util: 0,
            util_at: self.now,
            exec_start: 0,
            migrations: 0,
            numa_pref: None,
            numa_next: 0,
        });
        self.work.push(0.0);
        (self.tasks.len() - 1) as u32
    }

    /// The parent on `cpu` forks a new task: `wake_up_new_task()`.
    pub fn fork(&mut self, parent: u32) -> u32 {
        let pcpu = self.tasks[parent as usize].cpu;
        let t = self.add_task(pcpu);
        // A new task starts with half the capacity as utilisation (post_init_entity_util_avg).
        self.tasks[t as usize].util = CAPACITY / 2;
        let cpu = self.select_task_rq(t, pcpu, pcpu, crate::fair::WakeKind::Fork);
        self.tasks[t as usize].cpu = cpu;
        self.tasks[t as usize].runnable = true;
        self.enqueue(t, cpu);
        t
    }

    /// `try_to_wake_up()` of a blocked task by CPU `waker`.
    pub fn wake(&mut self, t: u32, waker: u32, sync: bool) {
        if self.tasks[t as usize].runnable {
            return;
        }
        self.settle_util(t);
        let prev = self.tasks[t as usize].cpu;
        let cpu = self.select_task_rq(t, prev, waker, crate::fair::WakeKind::Wake { sync });
        self.counters.wakeups += 1;
        self.tasks[t as usize].runnable = true;
        self.enqueue(t, cpu);
        self.changed.push((t, true));
    }

    /// A running task blocks.
    pub fn block(&mut self, t: u32) {
        if !self.tasks[t as usize].runnable {
            return;
        }
        self.settle_util(t);
        self.dequeue(t);
        self.tasks[t as usize].runnable = false;
        self.changed.push((t, false));
    }

    /// One scheduler tick on every CPU (`scheduler_tick()` →
    /// `trigger_load_balance()`), then the nohz idle balance if a busy CPU
    /// kicked it. Also accrues each task's work for the tick just ended.
    pub fn tick(&mut self) {
        self.accrue_work();
        let j = self.jiffies();
        let mut kick = false;
        for c in 0..self.rq.len() as u32 {
            let n = self.rq[c as usize].len();
            if n == 0 {
                continue;
            }
            // Only tasks working on their parent's memory have a preferred node.
            if self.numa_retry_ns.is_some() && self.workload.shares_parent_memory() {
                self.numa_migrate_preferred(self.rq[c as usize][0]);
            }
            if n >= 2 {
                // The slice is over: the next task runs.
                let q = &mut self.rq[c as usize];
                q.rotate_left(1);
                let first = q[0];
                self.tasks[first as usize].exec_start = self.now;
            }
            if j >= self.next_balance[c as usize] {
                self.rebalance_domains(c, Idle::NotIdle);
            }
            if !kick && self.nohz_balancer_kick(c) {
                kick = true;
            }
        }
        if kick {
            self.nohz_idle_balance();
        }
    }

    /// `numa_migrate_preferred()` → `task_numa_migrate()` →
    /// `task_numa_find_cpu()` (v6.8), reduced to what matters here: a task
    /// running off its preferred node moves to an idle CPU there (one on an
    /// idle core first), at most once per retry interval, and only if the
    /// home node has spare capacity and the move leaves no imbalance the load
    /// balancer would undo (`adjust_numa_imbalance()` with the lowest NUMA
    /// domain's `imb_numa_nr`). Swaps with tasks on a full node are not modelled.
    pub fn numa_migrate_preferred(&mut self, t: u32) {
        let m = self.m;
        let Some(retry) = self.numa_retry_ns else {
            return;
        };
        let task = &self.tasks[t as usize];
        let Some(pref) = task.numa_pref else {
            return;
        };
        let from = task.cpu;
        let src_node = m.node[from as usize];
        if src_node == pref || self.now < task.numa_next {
            return;
        }
        self.tasks[t as usize].numa_next = self.now + retry;
        let imb_numa_nr = m.chain[from as usize]
            .iter()
            .map(|&d| &m.doms[d as usize])
            .find(|d| d.has(domains::Flag::Numa))
            .map_or(0, |d| d.imb_numa_nr as i64);
        let (mut src_running, mut dst_running, mut dst_weight) = (0i64, 0i64, 0i64);
        let mut best = None;
        for c in 0..m.ncpu() as u32 {
            let node = m.node[c as usize];
            if node == src_node {
                src_running += self.rq[c as usize].len() as i64;
            } else if node == pref {
                dst_running += self.rq[c as usize].len() as i64;
                dst_weight += 1;
                let better =
                    best.is_none() || (self.is_core_idle(c) && !best.is_some_and(|(_, core)| core));
                if better && self.available_idle_cpu(c, from) {
                    best = Some((c, self.is_core_idle(c)));
                }
            }
        }
        if dst_running >= dst_weight {
            return;
        }
        let (src_running, dst_running) = (src_running - 1, dst_running + 1);
        let mut imbalance = (dst_running - src_running).max(0);
        if dst_running <= imb_numa_nr && imbalance <= 2 {
            imbalance = 0;
        }
        if imbalance != 0 {
            return;
        }
        if let Some((c, _)) = best {
            self.move_task(t, c);
            self.counters.numa += 1;
        }
    }

    /// Work done in the tick just ended: each busy CPU gives its running task
    /// the core's throughput share for its busy SMT siblings, scaled by the
    /// share of time its VP could be dispatched from the pool.
    fn accrue_work(&mut self) {
        let m = self.m;
        let cap = self.hv.params.cap(self.hv.len());
        let wanting = self.hv.wanting(self.now).max(1) as f64;
        let pool_share = (cap / wanting).min(1.0);
        let tick = self.tick_ns as f64;
        for (core, cpus) in m.core_cpus.iter().enumerate() {
            let busy = cpus.iter().filter(|&&c| !self.idle_cpu(c)).count();
            if busy == 0 {
                continue;
            }
            let per_thread = smt_throughput(busy, cpus.len()) / busy as f64;
            let _ = core;
            for &c in cpus {
                if let Some(&t) = self.rq[c as usize].first() {
                    self.work[t as usize] += tick * per_thread * pool_share;
                }
            }
        }
    }
}

/// Throughput of a core with `busy` of its `threads` hardware threads busy, in
/// single-thread units. An assumption, not measured here: each further thread
/// adds half of what the first gives.
fn smt_throughput(busy: usize, _threads: usize) -> f64 {
    1.0 + 0.5 * (busy.saturating_sub(1)) as f64
}

/// 2^(−ms/32) in Q16 (PELT's half-life), by squaring.
fn decay_q16(ms: u64) -> u64 {
    // y^1 with y^32 = 1/2: 0.978572 in Q16.
    let mut result: u64 = 65536;
    let mut base: u64 = 64132;
    let mut e = ms;
    while e > 0 {
        if e & 1 == 1 {
            result = (result * base) >> 16;
        }
        base = (base * base) >> 16;
        e >>= 1;
    }
    result
}
