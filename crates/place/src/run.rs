//! One run in virtual time, driven by `sim`'s event queue: the parent forks the
//! tasks, the tick and the workload's wake-ups and blocks are events, and every
//! sample period the occupancy is recorded. The report gives medians over the
//! samples of the measured window and lparstat's columns over that window.

use serde::Serialize;
use sim::engine::Queue;
use topology::{Topology, TopologyBuilder};

use crate::hv::{HvParams, Lpar};
use crate::machine::{Machine, MachineOptions};
use crate::sched::Sched;
use crate::workload::Workload;
use crate::Kernel;

/// NUMA balancing's retry interval: `numa_migrate_retry` is at most `HZ`
/// jiffies (1 s) after a failed attempt, and the first NUMA scan waits
/// `numa_balancing_scan_delay_ms` (1 s) before a preferred node exists.
pub const NUMA_RETRY_NS: u64 = 1_000_000_000;

/// Longest run accepted (virtual seconds): beyond it no placement question
/// changes and the event count only grows.
pub const MAX_DURATION_S: f64 = 3600.0;

/// Most tasks accepted. Every fork reads the load of each busy CPU of the
/// group it lands in, so forking N tasks onto a full machine costs about N²
/// task reads: 65536 spinning tasks on 128 CPUs fork in seconds, and each
/// doubling beyond takes about four times as long.
pub const MAX_THREADS: u32 = 1 << 16;

/// Longest a run may be estimated to take ([`estimated_cost_ns`]) before it
/// is refused: an extra digit in `--threads` or `--duration` must be one
/// error at once, not hours of simulation.
pub const MAX_COST_NS: f64 = 30e9;

/// Host time, in ns, that a tick costs per CPU and per task, a workload
/// event (a block or wake-up) at least and per task, and the fork of N tasks
/// per N² ([`MAX_THREADS`]): upper envelopes of user CPU time measured over
/// x86-2s-16, x86-2n-128, x86-uv-4096 and power10-shared-768 with 64 to 65536
/// tasks, where `perf` shows the runqueue walks (`cpu_load`, `cpu_util`) as
/// the cost; checked on other machines and workloads in BENCHMARKS.md
/// ("place: run cost").
const TICK_NS_PER_CPU: f64 = 140.0;
const TICK_NS_PER_TASK: f64 = 55.0;
const EVENT_NS: f64 = 500.0;
const EVENT_NS_PER_TASK: f64 = 0.6;
const FORK_NS_PER_TASK2: f64 = 0.6;

/// An upper estimate of the host time `cfg` takes on `ncpu` CPUs ticking
/// `hz` times a virtual second, in ns: the forks, then every tick visits
/// each CPU and its tasks and every workload event walks runqueues that grow
/// with the task count, both for the whole virtual duration.
pub fn estimated_cost_ns(ncpu: usize, hz: u32, cfg: &Config) -> f64 {
    let (fork, per_s) = cost_parts(ncpu, hz, cfg);
    fork + per_s * cfg.duration_ns as f64 / 1e9
}

/// [`estimated_cost_ns`] as the forks' cost and the cost of a virtual second.
fn cost_parts(ncpu: usize, hz: u32, cfg: &Config) -> (f64, f64) {
    let tasks = cfg.threads as f64;
    let per_tick = TICK_NS_PER_CPU * ncpu as f64 + TICK_NS_PER_TASK * tasks;
    let per_event = EVENT_NS + EVENT_NS_PER_TASK * tasks;
    let events_per_s = tasks * cfg.workload.max_events_per_task_s();
    let per_s = hz as f64 * per_tick + events_per_s * per_event;
    (FORK_NS_PER_TASK2 * tasks * tasks, per_s)
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Config {
    /// Kernel.
    pub kernel: Kernel,
    /// Partition configuration; `lpar` decides the hypervisor mode.
    pub hv: HvParams,
    /// Workload.
    pub workload: Workload,
    /// Tasks the parent creates.
    pub threads: u32,
    /// Virtual duration (ns).
    pub duration_ns: u64,
    /// Seed of every random choice (start CPU, jitter).
    pub seed: u64,
    /// Sample period (ns).
    pub sample_ns: u64,
    /// Fraction of the run before measuring (the workload settling, as seed
    /// 001 read lparstat "when the workload stabilized").
    pub warmup: f64,
    /// CPU the parent starts on (Linux number); `None`: chosen by the seed.
    pub start_cpu: Option<u32>,
    /// Record per-core occupancy for the SVG.
    pub trace: bool,
    /// Automatic NUMA balancing's retry interval for moving a task back to its
    /// preferred node (ns); `None`: NUMA balancing off. Linux retries from the
    /// NUMA hinting faults of each scan, whose period adapts between
    /// `numa_balancing_scan_period_min_ms` (1 s) and `_max_ms` (60 s).
    pub numa_retry_ns: Option<u64>,
    /// Keep group runqueue sums between reads at one instant, and rank each
    /// domain's groups for fork balancing in a tree (module `idlest`)
    /// (the model's bookkeeping; decisions are the same either way, which a
    /// test checks).
    pub cache_group_sums: bool,
}

impl Config {
    /// A run of `workload` with `threads` tasks for `seconds` with defaults:
    /// 100 ms samples, the first 20 % not measured.
    pub fn new(
        kernel: Kernel,
        hv: HvParams,
        workload: Workload,
        threads: u32,
        seconds: f64,
    ) -> Config {
        Config {
            kernel,
            hv,
            workload,
            threads,
            duration_ns: (seconds * 1e9) as u64,
            seed: 1,
            sample_ns: 100_000_000,
            warmup: 0.2,
            start_cpu: None,
            trace: false,
            numa_retry_ns: Some(NUMA_RETRY_NS),
            cache_group_sums: true,
        }
    }
}

/// Why a run was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunError {
    /// No task to run.
    NoThreads,
    /// Too many tasks for the model's bookkeeping.
    TooManyThreads(u32),
    /// Duration not in [1 ms, [`MAX_DURATION_S`]].
    Duration(String),
    /// The run would take longer than [`MAX_COST_NS`].
    TooLong {
        /// What was asked: tasks, workload, CPUs, virtual seconds.
        run: String,
        /// The estimated host time of that run (s).
        cost_s: u64,
        /// The longest duration accepted with these tasks on this machine
        /// (virtual µs).
        max_us: u64,
    },
    /// `--lpar` on a machine that is not POWER.
    LparNotPower(String),
    /// hackbench needs pairs.
    OddPairs(u32),
    /// The domains could not be built.
    Domains(String),
    /// The machine view could not be made.
    Machine(String),
    /// The start CPU is not online.
    StartCpu(u32),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::NoThreads => write!(f, "--threads must be at least 1"),
            RunError::TooManyThreads(n) => {
                write!(f, "--threads {n}: at most {MAX_THREADS} tasks are modelled")
            }
            RunError::Duration(s) => write!(
                f,
                "--duration {s}: must be a number of virtual seconds from 0.001 to {MAX_DURATION_S}"
            ),
            RunError::TooLong {
                run,
                cost_s,
                max_us,
            } => {
                let bound = MAX_COST_NS / 1e9;
                if *max_us < 1000 {
                    write!(
                        f,
                        "--threads: {run} would take about {cost_s} s; even 1 virtual ms takes more than {bound} s, so fewer --threads (or longer workload times)"
                    )
                } else {
                    write!(
                        f,
                        "--duration: {run} would take about {cost_s} s; at most {} virtual s run within {bound} s, or fewer --threads",
                        *max_us as f64 / 1e6
                    )
                }
            }
            RunError::LparNotPower(a) => write!(
                f,
                "--lpar: the machine is {a}, not POWER; only POWER LPARs are shared or dedicated"
            ),
            RunError::OddPairs(n) => {
                write!(
                    f,
                    "--threads {n}: hackbench runs pairs, so the count must be even"
                )
            }
            RunError::Domains(e) => write!(f, "scheduler domains: {e}"),
            RunError::Machine(e) => write!(f, "{e}"),
            RunError::StartCpu(c) => write!(f, "start CPU {c} is not online"),
        }
    }
}

impl std::error::Error for RunError {}

/// Checks a duration given in seconds.
pub fn check_duration(seconds: f64) -> Result<u64, RunError> {
    if !seconds.is_finite() || seconds <= 0.0 || seconds > MAX_DURATION_S {
        return Err(RunError::Duration(format!("{seconds}")));
    }
    let ns = (seconds * 1e9) as u64;
    if ns < 1_000_000 {
        return Err(RunError::Duration(format!("{seconds}")));
    }
    Ok(ns)
}

/// The report of one run.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Kernel.
    pub kernel: String,
    /// "shared", "dedicated" or "none".
    pub lpar: String,
    /// Workload name.
    pub workload: String,
    /// Tasks.
    pub threads: u32,
    /// Virtual seconds.
    pub duration_s: f64,
    /// Seed.
    pub seed: u64,
    /// Physical cores consumed (lparstat `physc`) over the measured window.
    pub physc: f64,
    /// physc / entitlement × 100.
    pub entc_pct: f64,
    /// Busy share of the logical CPUs × 100 (lparstat `lbusy`).
    pub lbusy: f64,
    /// VP dispatches per second over the window.
    pub vcsw_per_s: f64,
    /// Pool cores left idle (lparstat `app`), shared LPAR only.
    pub app: Option<f64>,
    /// Median busy CPUs over the samples.
    pub busy_cpus: f64,
    /// Median SMT cores with a busy CPU.
    pub busy_cores: f64,
    /// Median packages with a busy CPU.
    pub busy_packages: f64,
    /// Median nodes with a busy CPU.
    pub busy_nodes: f64,
    /// Median VPs (big cores on POWER) with a busy CPU.
    pub busy_vps: f64,
    /// Work per second over the window, in single-thread-on-a-core units
    /// (relative: the SMT throughput curve is assumed).
    pub throughput: f64,
    /// Task migrations over the whole run.
    pub migrations: u64,
    /// Of which by active balancing.
    pub active_migrations: u64,
    /// nohz idle-balance kicks.
    pub ilb_kicks: u64,
    /// Samples the medians are over.
    pub samples: usize,
    /// Per-sample busy CPUs per VP (for the SVG), when traced.
    #[serde(skip)]
    pub trace: Vec<Vec<u8>>,
    /// Sample period (ns).
    #[serde(skip)]
    pub sample_ns: u64,
    /// Virtual time of the first traced sample (ns).
    #[serde(skip)]
    pub trace_start_ns: u64,
    /// Each task's CPU (Linux number) and migrations at the end of the run.
    #[serde(skip)]
    pub final_cpus: Vec<(u32, u64)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    Tick,
    Sample,
    Block(u32),
    Wake(u32),
}

/// Builds the domains `kernel` builds on `topo` (pre-6.8 powerpc: as a
/// dedicated partition, which is what the shared-processor series changed) and
/// the machine view.
pub fn machine_for(
    topo: &Topology,
    kernel: Kernel,
    shared: bool,
    options: &MachineOptions,
) -> Result<Machine, RunError> {
    let splpar = shared && kernel.splpar_topology();
    // Rebuilt only when the partition mode differs from the source's: a
    // rebuild of thousands of CPUs costs as much as reading them.
    let rebuilt;
    let t = if topo.shared_processor() == splpar {
        topo
    } else {
        let mut b = TopologyBuilder::from_topology(topo);
        b.shared_processor(splpar);
        rebuilt = b.finish().map_err(|e| RunError::Domains(e.to_string()))?;
        &rebuilt
    };
    let doms = domains::build(t, kernel.domains_version())
        .map_err(|e| RunError::Domains(e.to_string()))?;
    Machine::new(t, &doms, options).map_err(|e| RunError::Machine(e.to_string()))
}

/// Checks `lpar` against the machine's architecture.
pub fn check_lpar(topo: &Topology, lpar: Lpar) -> Result<(), RunError> {
    let power = topo.arch().is_power();
    if lpar != Lpar::None && !power {
        return Err(RunError::LparNotPower(topo.arch().uname().to_string()));
    }
    Ok(())
}

/// Runs `cfg` on `m`, in phases: check the configuration, fork the tasks
/// from the parent's CPU, start the workload's first blocks, then drive the
/// tick, samples, blocks and wake-ups through the event queue to the end, and
/// report over the measured window.
pub fn run(m: &Machine, cfg: &Config) -> Result<Report, RunError> {
    check_config(cfg)?;
    check_cost(m, cfg)?;
    let mut s = Sched::new(m, cfg.kernel, cfg.hv, cfg.workload, cfg.seed);
    if m.nodes > 1 {
        s.numa_retry_ns = cfg.numa_retry_ns;
    }
    s.cache_group_sums = cfg.cache_group_sums;
    let start = start_cpu(m, cfg, &mut s)?;
    let first_child = fork_tasks(&mut s, cfg, start);
    let mut q: Queue<Ev> = Queue::new();
    start_workload(&mut s, &mut q, cfg, first_child);
    settle_idle(&mut s);
    q.schedule(s.tick_ns, Ev::Tick);
    q.schedule(cfg.sample_ns, Ev::Sample);
    let (acc, warm) = drive(&mut s, &mut q, cfg, first_child);
    s.now = cfg.duration_ns;
    let warm = warm.unwrap_or_else(|| Snapshot::take(&s, first_child));
    Ok(report(m, cfg, &s, &warm, acc, first_child))
}

/// Refuses what the model cannot run: no tasks, more than it keeps books
/// for, odd hackbench pairs, a duration outside (0, [`MAX_DURATION_S`]].
fn check_config(cfg: &Config) -> Result<(), RunError> {
    if cfg.threads == 0 {
        return Err(RunError::NoThreads);
    }
    if cfg.threads > MAX_THREADS {
        return Err(RunError::TooManyThreads(cfg.threads));
    }
    if matches!(cfg.workload, Workload::Hackbench { .. }) && cfg.threads % 2 == 1 {
        return Err(RunError::OddPairs(cfg.threads));
    }
    if cfg.duration_ns == 0 || cfg.duration_ns as f64 > MAX_DURATION_S * 1e9 {
        return Err(RunError::Duration(format!(
            "{}",
            cfg.duration_ns as f64 / 1e9
        )));
    }
    Ok(())
}

/// Refuses a run estimated to take longer than [`MAX_COST_NS`], naming the
/// longest duration that would not.
pub fn check_cost(m: &Machine, cfg: &Config) -> Result<(), RunError> {
    check_total_cost(&[(m, cfg)])
}

/// Refuses runs made by one command (`--compare` makes two) whose estimated
/// costs together exceed [`MAX_COST_NS`], naming the longest duration at
/// which all of them fit. The runs share their duration, so the bound is the
/// budget left after every fork, over the sum of their costs per virtual
/// second.
pub fn check_total_cost(runs: &[(&Machine, &Config)]) -> Result<(), RunError> {
    let (mut cost, mut fork, mut per_s) = (0.0, 0.0, 0.0);
    for (m, cfg) in runs {
        cost += estimated_cost_ns(m.ncpu(), m.hz, cfg);
        let (f, p) = cost_parts(m.ncpu(), m.hz, cfg);
        fork += f;
        per_s += p;
    }
    if cost <= MAX_COST_NS {
        return Ok(());
    }
    let (m, cfg) = runs[0];
    let times = match runs.len() {
        1 => String::new(),
        2 => ", twice (--compare)".to_string(),
        n => format!(", {n} times"),
    };
    Err(RunError::TooLong {
        run: format!(
            "{} {} tasks on {} CPUs for {} virtual s{times}",
            cfg.threads,
            cfg.workload.name(),
            m.ncpu(),
            cfg.duration_ns as f64 / 1e9
        ),
        cost_s: (cost / 1e9).ceil() as u64,
        max_us: ((MAX_COST_NS - fork).max(0.0) / per_s * 1e6) as u64,
    })
}

/// The parent's CPU (index into the machine view): the configured one, or
/// one drawn from the seed.
fn start_cpu(m: &Machine, cfg: &Config, s: &mut Sched<'_>) -> Result<u32, RunError> {
    Ok(match cfg.start_cpu {
        Some(c) => m
            .cpu_id
            .iter()
            .position(|&x| x == c)
            .ok_or(RunError::StartCpu(c))? as u32,
        None => (s.uniform() * m.ncpu() as f64) as u32 % m.ncpu() as u32,
    })
}

/// The parent, runnable on `start`, forks every task (fork balancing places
/// each) and then blocks. Tasks working on the parent's memory prefer its node
/// for NUMA balancing. Returns the first child's task id.
fn fork_tasks(s: &mut Sched<'_>, cfg: &Config, start: u32) -> u32 {
    let parent = s.add_task(start);
    s.tasks[parent as usize].runnable = true;
    s.enqueue(parent, start);
    let home = s.m.node[start as usize];
    for _ in 0..cfg.threads {
        let t = s.fork(parent);
        if cfg.workload.shares_parent_memory() {
            s.tasks[t as usize].numa_pref = Some(home);
            s.tasks[t as usize].numa_next = NUMA_RETRY_NS;
        }
    }
    s.block(parent);
    s.changed.clear();
    parent + 1
}

/// A sleeping workload's first events: hackbench receivers block at once,
/// every other task runs its first burst.
fn start_workload(s: &mut Sched<'_>, q: &mut Queue<Ev>, cfg: &Config, first_child: u32) {
    let w = cfg.workload;
    if !w.sleeps() {
        return;
    }
    for i in 0..cfg.threads {
        let t = first_child + i;
        let receiver = matches!(w, Workload::Hackbench { .. }) && i % 2 == 1;
        if receiver {
            s.block(t);
        } else {
            let j = s.uniform();
            q.schedule(w.run_ns(j), Ev::Block(t));
        }
    }
    s.changed.clear();
}

/// The event loop to the end of the run: each event at its virtual time, the
/// tasks it made runnable given their next block, then the newly idle CPUs'
/// balancing. Returns the samples and the snapshot where measuring began.
fn drive(
    s: &mut Sched<'_>,
    q: &mut Queue<Ev>,
    cfg: &Config,
    first_child: u32,
) -> (Acc, Option<Snapshot>) {
    let w = cfg.workload;
    let warm_ns = (cfg.duration_ns as f64 * cfg.warmup) as u64;
    let mut acc = Acc::default();
    let mut warm: Option<Snapshot> = None;
    while let Some((at, ev)) = q.pop() {
        if at > cfg.duration_ns {
            break;
        }
        s.now = at;
        if warm.is_none() && at >= warm_ns {
            warm = Some(Snapshot::take(s, first_child));
        }
        match ev {
            Ev::Tick => {
                s.tick();
                q.schedule(at + s.tick_ns, Ev::Tick);
            }
            Ev::Sample => {
                if at >= warm_ns {
                    acc.sample(s, cfg.trace);
                }
                q.schedule(at + cfg.sample_ns, Ev::Sample);
            }
            Ev::Block(t) => block_event(s, q, w, t, first_child),
            Ev::Wake(t) => {
                let prev = s.tasks[t as usize].cpu;
                s.wake(t, prev, false);
            }
        }
        for (t, runnable) in std::mem::take(&mut s.changed) {
            if runnable && w.sleeps() {
                let j = s.uniform();
                q.schedule(at + w.run_ns(j), Ev::Block(t));
            }
        }
        settle_idle(s);
    }
    (acc, warm)
}

/// Task `t` blocks: it wakes its partner (hackbench, synchronously from its
/// own CPU) or sets its sleep timer (duty cycle).
fn block_event(s: &mut Sched<'_>, q: &mut Queue<Ev>, w: Workload, t: u32, first_child: u32) {
    let cpu = s.tasks[t as usize].cpu;
    s.block(t);
    if let Some(p) = w.partner(t - first_child) {
        s.wake(first_child + p, cpu, true);
    }
    let j = s.uniform();
    if let Some(ns) = w.sleep_ns(j) {
        q.schedule(s.now + ns, Ev::Wake(t));
    }
}

/// Newly idle CPUs balance; then `nohz.next_balance` takes them in.
fn settle_idle(s: &mut Sched<'_>) {
    let mut guard = 0;
    while let Some(c) = s.newly_idle.pop() {
        guard += 1;
        if guard > 1_000_000 {
            break;
        }
        if s.idle_cpu(c) {
            s.newidle_balance(c);
            if s.idle_cpu(c) {
                s.nohz_next = s.nohz_next.min(s.next_balance[c as usize]);
            }
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Snapshot {
    now: u64,
    dispatched: u64,
    dispatches: u64,
    busy: u64,
    work: f64,
}

impl Snapshot {
    fn take(s: &Sched<'_>, first_child: u32) -> Snapshot {
        let (dispatched, dispatches) = s.hv.totals(s.now);
        Snapshot {
            now: s.now,
            dispatched,
            dispatches,
            busy: s.busy_total(),
            work: s.work[first_child as usize..].iter().sum(),
        }
    }
}

#[derive(Debug, Default)]
struct Acc {
    cpus: Vec<f64>,
    cores: Vec<f64>,
    packages: Vec<f64>,
    nodes: Vec<f64>,
    vps: Vec<f64>,
    trace: Vec<Vec<u8>>,
    first_at: Option<u64>,
}

impl Acc {
    fn sample(&mut self, s: &Sched<'_>, trace: bool) {
        let m = s.m;
        let mut cores = vec![false; m.core_cpus.len()];
        let mut vps = vec![0u8; m.vp_cpus.len()];
        let mut pk = vec![false; m.packages as usize];
        let mut nd = vec![false; m.nodes as usize];
        let mut cpus = 0;
        for c in 0..m.ncpu() {
            if s.rq[c].is_empty() {
                continue;
            }
            cpus += 1;
            cores[m.core[c] as usize] = true;
            vps[m.vp[c] as usize] = vps[m.vp[c] as usize].saturating_add(1);
            pk[m.package[c] as usize] = true;
            nd[m.node[c] as usize] = true;
        }
        let count = |v: &[bool]| v.iter().filter(|&&x| x).count() as f64;
        self.cpus.push(cpus as f64);
        self.cores.push(count(&cores));
        self.packages.push(count(&pk));
        self.nodes.push(count(&nd));
        self.vps.push(vps.iter().filter(|&&x| x > 0).count() as f64);
        if trace {
            self.first_at.get_or_insert(s.now);
            self.trace.push(vps);
        }
    }
}

/// The median of `v` (mean of the middle two when even); 0 when empty.
pub fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

fn report(
    m: &Machine,
    cfg: &Config,
    s: &Sched<'_>,
    warm: &Snapshot,
    acc: Acc,
    first_child: u32,
) -> Report {
    let end = Snapshot::take(s, first_child);
    let window = (end.now - warm.now).max(1) as f64;
    let cap = cfg.hv.cap(m.vp_cpus.len());
    let physc = ((end.dispatched - warm.dispatched) as f64 / window).min(cap);
    let lpar = cfg.hv.lpar;
    Report {
        kernel: cfg.kernel.to_string(),
        lpar: match lpar {
            Lpar::Shared => "shared",
            Lpar::Dedicated => "dedicated",
            Lpar::None => "none",
        }
        .to_string(),
        workload: cfg.workload.name().to_string(),
        threads: cfg.threads,
        duration_s: cfg.duration_ns as f64 / 1e9,
        seed: cfg.seed,
        physc,
        entc_pct: 100.0 * physc / cfg.hv.entitlement.max(f64::MIN_POSITIVE),
        lbusy: 100.0 * (end.busy - warm.busy) as f64 / (window * m.ncpu() as f64),
        vcsw_per_s: (end.dispatches - warm.dispatches) as f64 / (window / 1e9),
        app: (lpar == Lpar::Shared).then(|| (cfg.hv.pool - physc).max(0.0)),
        busy_cpus: median(&acc.cpus),
        busy_cores: median(&acc.cores),
        busy_packages: median(&acc.packages),
        busy_nodes: median(&acc.nodes),
        busy_vps: median(&acc.vps),
        throughput: (end.work - warm.work) / window,
        migrations: s.counters.migrations,
        active_migrations: s.counters.active,
        ilb_kicks: s.counters.ilb_kicks,
        samples: acc.cpus.len(),
        trace: acc.trace,
        sample_ns: cfg.sample_ns,
        trace_start_ns: acc.first_at.unwrap_or(0),
        final_cpus: s.tasks[first_child as usize..]
            .iter()
            .map(|t| (m.cpu_id[t.cpu as usize], t.migrations))
            .collect(),
    }
}
