//! One simulated bring-up: the boot CPU walks every secondary CPU through kick →
//! alive → (calibrate) → (TSC sync) → masks → online, in the order the strategy
//! says, while the APs' own latencies run as events on the queue.

use std::collections::HashSet;

use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};
use serde::Serialize;
use topology::{LevelKind, Topology};

use crate::costs::CostTable;
use crate::engine::{Event, Nanos, Queue};
use crate::masks::{self, Ops};
use crate::strategy::{Calibrate, Strategy};
use crate::SimError;

/// A step of a CPU's bring-up, as drawn on the timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// The boot CPU prepares the AP (cpuhp's prepare states) and sends
    /// the wake-up.
    Kick,
    /// The AP starts (firmware, trampoline) until it can report in.
    ApStart,
    /// The AP loads microcode: on its own before it reports in (Linux 6.5+),
    /// or on the serialized path after the boot CPU releases it (earlier).
    Microcode,
    /// Delay-loop calibration.
    Calibrate,
    /// TSC warp check (x86).
    TscSync,
    /// Topology-mask update, priced from the real code's operation counts.
    Masks,
    /// The rest of the serialized online work.
    Online,
}

impl Phase {
    /// Every phase, in bring-up order.
    pub const ALL: [Phase; 7] = [
        Phase::Kick,
        Phase::ApStart,
        Phase::Microcode,
        Phase::Calibrate,
        Phase::TscSync,
        Phase::Masks,
        Phase::Online,
    ];

    /// Lower-case name for text and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Kick => "kick",
            Phase::ApStart => "ap_start",
            Phase::Microcode => "microcode",
            Phase::Calibrate => "calibrate",
            Phase::TscSync => "tsc_sync",
            Phase::Masks => "masks",
            Phase::Online => "online",
        }
    }
}

/// One interval of one CPU's timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Span {
    /// The phase.
    pub phase: Phase,
    /// Start, virtual ns.
    pub start_ns: Nanos,
    /// End, virtual ns.
    pub end_ns: Nanos,
}

/// One secondary CPU's bring-up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CpuTimeline {
    /// Logical CPU number.
    pub cpu: u32,
    /// NUMA node id, if known.
    pub node: Option<u32>,
    /// When the boot CPU began kicking it.
    pub kicked_ns: Nanos,
    /// When it was marked online.
    pub online_ns: Nanos,
    /// Its spans, in time order.
    pub spans: Vec<Span>,
    /// The mask work its online did.
    pub ops: Ops,
}

/// One kernel log line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LogLine {
    /// Virtual time.
    pub t_ns: Nanos,
    /// The text, without the timestamp.
    pub text: String,
}

impl LogLine {
    /// `[    1.234567] text`, as dmesg prints it.
    pub fn render(&self) -> String {
        format!(
            "[{:5}.{:06}] {}",
            self.t_ns / 1_000_000_000,
            (self.t_ns % 1_000_000_000) / 1000,
            self.text
        )
    }
}

/// Where the time went, per phase.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PhaseTotal {
    /// The phase.
    pub phase: Phase,
    /// Sum over CPUs of time spent in it (CPU-seconds).
    pub cpu_s: f64,
    /// Time the boot CPU spent doing or waiting for it: its share of the wall time.
    pub critical_s: f64,
}

/// The result of a simulated bring-up.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Run {
    /// Platform name.
    pub platform: String,
    /// The strategy.
    pub strategy: Strategy,
    /// The jitter seed.
    pub seed: u64,
    /// CPUs online at the end, boot CPU included.
    pub cpus: usize,
    /// Nodes with CPUs.
    pub nodes: usize,
    /// Virtual seconds from the start of secondary bring-up until every CPU is
    /// online ("Brought up N CPUs").
    pub brought_up_s: f64,
    /// … until every parallel calibration has also finished (x86's "Total of N
    /// processors activated"); equal to `brought_up_s` without parallel calibration.
    pub done_s: f64,
    /// Per-phase totals.
    pub phases: Vec<PhaseTotal>,
    /// Mask work summed over every online.
    pub ops: Ops,
    /// Kernel log.
    pub log: Vec<LogLine>,
    /// Per-CPU timelines in bring-up order.
    pub timeline: Vec<CpuTimeline>,
    /// Said with every report of this run when it kicks in parallel on a
    /// platform whose Linux never does ([`what_if_caveat`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caveat: Option<String>,
}

/// What to say of a run with `strategy` on `platform` if it kicks in
/// parallel where Linux brings CPUs up one at a time
/// ([`crate::Platform::linux_kicks_ahead`]).
pub fn what_if_caveat(platform: crate::Platform, strategy: &Strategy) -> Option<String> {
    let what_if = strategy.kick == crate::Kick::Parallel && !platform.linux_kicks_ahead();
    what_if.then(|| {
        format!(
            "Linux on {platform} kicks one CPU at a time (only x86-64 from Linux 6.5 \
             selects HOTPLUG_PARALLEL, the parallel prefix of kernel/cpu.c): the parallel \
             kick is the model's what-if, not a kernel's"
        )
    })
}

/// Options besides the machine, costs and strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Jitter seed: the same seed gives a bit-identical run.
    pub seed: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options { seed: 1 }
    }
}

/// Uniform multiplicative jitter on hardware costs.
struct Jitter {
    rng: ChaCha8Rng,
    amplitude: f64,
}

impl Jitter {
    fn apply(&mut self, ns: f64) -> Nanos {
        if ns <= 0.0 {
            return 0;
        }
        // 53 random bits → uniform in [-1, 1).
        let u = (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
        (ns * (1.0 + self.amplitude * u)).round().max(0.0) as Nanos
    }
}

/// Simulates the bring-up of every present CPU of `topology`.
pub fn simulate(
    topology: &Topology,
    costs: &CostTable,
    strategy: &Strategy,
    options: &Options,
) -> Result<Run, SimError> {
    simulate_with(topology, costs, strategy, options, &mut |_, _| {})
}

/// The simulated machine as crates/hotplug sees it: the hotplug state machine
/// calls these steps in its own order (serial, or every kick first), and each
/// step advances virtual time or schedules the AP's events.
struct SimPlatform<'a> {
    costs: &'a CostTable,
    strategy: Strategy,
    queue: Queue,
    jitter: Jitter,
    /// Boot-CPU time per phase.
    critical: [u64; Phase::ALL.len()],
    /// Logical CPU → index in `timeline` (u32::MAX for the boot CPU / absent).
    index_of: Vec<u32>,
    timeline: Vec<CpuTimeline>,
    /// Extra AP start-up for the distance from the boot node, per timeline index.
    hop_ns: Vec<f64>,
    /// Package id per timeline index.
    package: Vec<u32>,
    /// Hardware id per timeline index (arm64's log).
    hw_id: Vec<u64>,
    /// Present CPUs x2APIC cluster set-up visits before each CPU's kick.
    x2apic_visits: Vec<u32>,
    /// Whether each CPU is the first of its core to come up (it loads the
    /// core's microcode; its siblings load nothing).
    loads_microcode: Vec<bool>,
    alive_seen: Vec<bool>,
    calibrated_packages: HashSet<u32>,
    /// Packages with a CPU whose TSC has been checked (or that is the boot CPU).
    tsc_packages: HashSet<u32>,
    pending_calibrations: usize,
    tsc_ns: f64,
    log: Vec<LogLine>,
    /// x86's current "Booting Node" line: node, start time, text so far.
    node_run: Option<(Option<u32>, Nanos, String)>,
    onlined: usize,
    progress: &'a mut dyn FnMut(usize, usize),
}

impl SimPlatform<'_> {
    fn idx(&self, cpu: usize) -> Result<usize, String> {
        match self.index_of.get(cpu) {
            Some(&i) if i != u32::MAX => Ok(i as usize),
            _ => Err(format!("CPU {cpu} is not a secondary CPU of this machine")),
        }
    }

    /// Runs `ns` of work on the boot CPU's path, recorded as `phase` on `i`'s timeline.
    fn busy(&mut self, i: usize, phase: Phase, ns: Nanos) {
        if ns == 0 {
            return;
        }
        let start = self.queue.now();
        self.queue.advance(ns);
        self.critical[phase as usize] += ns;
        self.timeline[i].spans.push(Span {
            phase,
            start_ns: start,
            end_ns: start + ns,
        });
    }

    fn close_node_run(&mut self) {
        if let Some((_, t, text)) = self.node_run.take() {
            self.log.push(LogLine {
                t_ns: t,
                text: format!("{text} Ok."),
            });
        }
    }
}

impl hotplug::Platform for SimPlatform<'_> {
    fn kick(&mut self, cpu: usize) -> Result<(), String> {
        let i = self.idx(cpu)?;
        // x86 prints one line per run of consecutive CPUs on the same node.
        if self.costs.platform.is_x86() {
            let node = self.timeline[i].node;
            if !matches!(&self.node_run, Some((nd, _, _)) if *nd == node) {
                self.close_node_run();
                self.node_run = Some((
                    node,
                    self.queue.now(),
                    format!("Booting Node {:3}, Processors ", node.unwrap_or(0)),
                ));
            }
            if let Some((_, _, text)) = self.node_run.as_mut() {
                text.push_str(&format!(" #{cpu}"));
            }
        }
        self.timeline[i].kicked_ns = self.queue.now();
        // The control CPU's prepare states for this AP (the x2APIC cluster
        // prefill among them) run just before its kick, in every order.
        let prepare =
            self.costs.prepare.ns + self.x2apic_visits[i] as f64 * self.costs.x2apic_visit.ns;
        let k = self.jitter.apply(self.costs.kick_ns() + prepare);
        self.busy(i, Phase::Kick, k);
        let start = self
            .jitter
            .apply(self.costs.ap_start.ns + self.hop_ns[i] * self.costs.remote_hop.ns);
        let now = self.queue.now();
        self.timeline[i].spans.push(Span {
            phase: Phase::ApStart,
            start_ns: now,
            end_ns: now + start,
        });
        let mut alive = now + start;
        if self.costs.microcode_before_alive && self.loads_microcode[i] {
            let load = self.jitter.apply(self.costs.microcode.ns);
            if load > 0 {
                self.timeline[i].spans.push(Span {
                    phase: Phase::Microcode,
                    start_ns: alive,
                    end_ns: alive + load,
                });
                alive += load;
            }
        }
        self.queue.schedule(alive, Event::Alive(i as u32));
        Ok(())
    }

    fn wait_alive(&mut self, cpu: usize) -> Result<(), String> {
        let i = self.idx(cpu)?;
        let before = self.queue.now();
        while !self.alive_seen[i] {
            match self.queue.pop() {
                Some((_, Event::Alive(j))) => self.alive_seen[j as usize] = true,
                Some((_, Event::Calibrated(_))) => self.pending_calibrations -= 1,
                None => return Err(format!("CPU {cpu} was never kicked")),
            }
        }
        self.critical[Phase::ApStart as usize] += self.queue.now() - before;
        if !self.costs.microcode_before_alive && self.loads_microcode[i] {
            let load = self.jitter.apply(self.costs.microcode.ns);
            self.busy(i, Phase::Microcode, load);
        }
        Ok(())
    }

    fn calibrate(&mut self, cpu: usize) -> Result<(), String> {
        let i = self.idx(cpu)?;
        let package = self.package[i];
        let now = match self.strategy.calibrate {
            Calibrate::Serial => true,
            Calibrate::OncePerPackage => !self.calibrated_packages.contains(&package),
            Calibrate::Parallel | Calibrate::Skip | Calibrate::Lpj(_) => false,
        };
        self.calibrated_packages.insert(package);
        if now {
            let d = self.jitter.apply(self.costs.calibrate.ns);
            self.busy(i, Phase::Calibrate, d);
        }
        Ok(())
    }

    fn now_ns(&mut self) -> u64 {
        self.queue.now()
    }

    fn masks_updated(&mut self, cpu: usize, work: &hotplug::WorkCounts) {
        let Ok(i) = self.idx(cpu) else { return };
        let ops = work.total();
        self.timeline[i].ops = ops;
        let d = masks::price(&ops, self.costs).round() as Nanos;
        self.busy(i, Phase::Masks, d);
    }
}

/// `Stage::Starting` callback: the x86 TSC warp check, boot CPU and AP
/// together: the full check on the first AP of each package other than the
/// boot CPU's, [`CostTable::tsc_sibling`] on the others (none with
/// TSC_ADJUST, 2 ms without it, the full check in 2.6.37).
fn tsc_sync(p: &mut SimPlatform<'_>, cpu: usize) -> Result<(), String> {
    let i = p.idx(cpu)?;
    let first_of_package = p.tsc_packages.insert(p.package[i]);
    if p.tsc_ns > 0.0 {
        let ns = if first_of_package {
            p.tsc_ns
        } else {
            p.costs.tsc_sibling.ns
        };
        if ns > 0.0 {
            let d = p.jitter.apply(ns);
            p.busy(i, Phase::TscSync, d);
        }
    }
    Ok(())
}

/// `Stage::Online` callback: the rest of the serialized online work, then the
/// parallel calibration the AP starts once it is online (seed 002's patch).
fn online(p: &mut SimPlatform<'_>, cpu: usize) -> Result<(), String> {
    let i = p.idx(cpu)?;
    let d = p.jitter.apply(p.costs.online_serial.ns) + p.costs.console.ns.round() as Nanos;
    p.busy(i, Phase::Online, d);
    let now = p.queue.now();
    p.timeline[i].online_ns = now;
    if p.strategy.calibrate == Calibrate::Parallel && p.costs.calibrate.ns > 0.0 {
        let d = p.jitter.apply(p.costs.calibrate.ns);
        p.timeline[i].spans.push(Span {
            phase: Phase::Calibrate,
            start_ns: now,
            end_ns: now + d,
        });
        p.queue.schedule(now + d, Event::Calibrated(i as u32));
        p.pending_calibrations += 1;
    }
    if p.costs.platform == crate::Platform::Arm64 {
        let hw = p.hw_id[i];
        p.log.push(LogLine {
            t_ns: now,
            text: format!("CPU{cpu}: Booted secondary processor 0x{hw:010x}"),
        });
    }
    p.onlined += 1;
    let total = p.timeline.len() + 1;
    (p.progress)(p.onlined + 1, total);
    Ok(())
}

/// [`simulate`] with a progress callback `(CPUs online, CPUs in all)`: the
/// machine's per-CPU facts, the platform the hotplug state machine drives, the
/// bring-up itself, the log's closing lines, and the totals.
pub fn simulate_with(
    topology: &Topology,
    costs: &CostTable,
    strategy: &Strategy,
    options: &Options,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Run, SimError> {
    let engine = masks::mask_engine(topology, strategy.masks)?;
    let machine = Machine::read(topology, &engine, costs, strategy)?;
    let platform = SimPlatform::new(&machine, costs, strategy, options, progress);
    let mut p = bring_up(platform, engine, &machine)?;
    let brought_up = p.queue.now();
    close_log(&mut p, &machine, strategy, brought_up)?;
    Ok(totals(p, &machine, strategy, options, brought_up))
}

/// What the simulation needs to know about each secondary CPU, in bring-up order.
struct Machine {
    /// Secondary CPUs in bring-up order.
    order: Vec<usize>,
    /// Logical CPU → index in `order` (u32::MAX for the boot CPU / absent).
    index_of: Vec<u32>,
    node: Vec<Option<u32>>,
    hops: Vec<f64>,
    package: Vec<u32>,
    hw_id: Vec<u64>,
    x2apic_visits: Vec<u32>,
    /// Whether each CPU is the first of its core to come up.
    loads_microcode: Vec<bool>,
    /// The kick waves: every CPU in one (the whole parallel or serial
    /// order), or primary threads then their siblings (Linux 6.5's
    /// SMT-aware parallel bring-up).
    waves: Vec<Vec<usize>>,
    /// Whether each wave is kicked whole before any of it is completed.
    kick_ahead: bool,
    boot_package: u32,
    /// Nodes with CPUs.
    nodes: usize,
    /// The TSC warp check's length on this machine (0: not run).
    tsc_ns: f64,
}

impl Machine {
    fn read(
        topology: &Topology,
        engine: &hotplug::MaskEngine,
        costs: &CostTable,
        strategy: &Strategy,
    ) -> Result<Machine, SimError> {
        let boot = engine.boot_cpu();
        let present: Vec<usize> = engine.present().iter().collect();
        if present.is_empty() {
            return Err(SimError::NoCpus);
        }
        let order: Vec<usize> = present.iter().copied().filter(|&c| c != boot).collect();
        let node_of = |cpu: usize| topology.node_of(cpu).map(|node| node.id);
        let package_of = |cpu: usize| {
            topology
                .cpu(cpu)
                .and_then(|c| c.group(LevelKind::Package))
                .unwrap_or(0)
        };
        let hw_id = |c: usize| topology.cpu(c).and_then(|x| x.hw_id).unwrap_or(c as u64);
        let mut index_of = vec![u32::MAX; present.last().map_or(0, |&l| l + 1)];
        for (i, &cpu) in order.iter().enumerate() {
            index_of[cpu] = i as u32;
        }
        let mut nodes: Vec<u32> = present.iter().filter_map(|&c| node_of(c)).collect();
        nodes.sort_unstable();
        nodes.dedup();
        let tsc_ns =
            if costs.tsc_sync.ns > 0.0 && !(costs.tsc_skip_clustered && clustered_apic(topology)) {
                costs.tsc_sync.ns
            } else {
                0.0
            };
        let x2apic_visits = if costs.platform == crate::Platform::X86 {
            x2apic_prefill_visits(
                hw_id(boot),
                &order.iter().map(|&c| hw_id(c)).collect::<Vec<_>>(),
            )
        } else {
            vec![0; order.len()]
        };
        let kick_ahead = strategy.kick == hotplug::Kick::Parallel;
        let waves = kick_waves(topology, &order, kick_ahead && costs.primary_threads_first);
        let loads_microcode = first_of_core(topology, boot, &waves, &index_of);
        Ok(Machine {
            loads_microcode,
            waves,
            kick_ahead,
            node: order.iter().map(|&c| node_of(c)).collect(),
            hops: order
                .iter()
                .map(|&c| hops(topology, node_of(boot), node_of(c)))
                .collect(),
            package: order.iter().map(|&c| package_of(c)).collect(),
            hw_id: order.iter().map(|&c| hw_id(c)).collect(),
            x2apic_visits,
            boot_package: package_of(boot),
            nodes: nodes.len().max(1),
            tsc_ns,
            order,
            index_of,
        })
    }
}

/// The order CPUs are kicked in: one wave of every secondary CPU, or, for
/// Linux 6.5's SMT-aware parallel bring-up (`cpuhp_bringup_cpus_parallel()`),
/// the primary threads (first thread of each core) and then the others. A
/// machine without SMT has one wave either way.
fn kick_waves(topology: &Topology, order: &[usize], primaries_first: bool) -> Vec<Vec<usize>> {
    let primary = |c: usize| topology.cpu(c).is_none_or(|x| x.thread == 0);
    let (first, rest): (Vec<usize>, Vec<usize>) = if primaries_first {
        order.iter().partition(|&&c| primary(c))
    } else {
        (order.to_vec(), Vec::new())
    };
    [first, rest]
        .into_iter()
        .filter(|w| !w.is_empty())
        .collect()
}

/// Per CPU of `order` (by `index_of`): whether it is the first of its core to
/// come up in `waves`, and so loads the core's microcode. The boot CPU's core
/// has its microcode before bring-up starts; a CPU of no known core is its
/// own core.
fn first_of_core(
    topology: &Topology,
    boot: usize,
    waves: &[Vec<usize>],
    index_of: &[u32],
) -> Vec<bool> {
    let core = |c: usize| topology.cpu(c).and_then(|x| x.group(LevelKind::Core));
    let mut seen: HashSet<u32> = core(boot).into_iter().collect();
    let mut loads = vec![false; waves.iter().map(Vec::len).sum()];
    for &c in waves.iter().flatten() {
        loads[index_of[c] as usize] = core(c).is_none_or(|k| seen.insert(k));
    }
    loads
}

/// SLIT distance from the boot node to `node`, in units of 10 above local.
fn hops(topology: &Topology, boot: Option<u32>, node: Option<u32>) -> f64 {
    let (Some(a), Some(b)) = (boot, node) else {
        return 0.0;
    };
    match (topology.node_index(a), topology.node_index(b)) {
        (Some(ia), Some(ib)) if topology.has_distances() => {
            let d = topology.distances()[ia * topology.nodes().len() + ib];
            d.saturating_sub(10) as f64 / 10.0
        }
        _ => 0.0,
    }
}

/// x2APIC cluster set-up as Linux 6.5's `x2apic_prepare_cpu()` does it on the
/// boot CPU: the first CPU of each cluster of 16 APIC ids to be prepared walks
/// every present CPU to prefill the cluster's mask; later CPUs of the cluster
/// find it set. The boot CPU's cluster is set up before SMP bring-up. Applies
/// only where x2APIC is required (an APIC id above 254); smaller machines may
/// run the physical or xAPIC drivers, which keep no cluster masks.
pub fn x2apic_prefill_visits(boot_apic: u64, apic_ids: &[u64]) -> Vec<u32> {
    if apic_ids.iter().all(|&id| id <= 254) {
        return vec![0; apic_ids.len()];
    }
    let present = (apic_ids.len() + 1) as u32;
    let mut seen = HashSet::from([boot_apic >> 4]);
    apic_ids
        .iter()
        .map(|&id| if seen.insert(id >> 4) { present } else { 0 })
        .collect()
}

impl<'a> SimPlatform<'a> {
    fn new(
        m: &Machine,
        costs: &'a CostTable,
        strategy: &Strategy,
        options: &Options,
        progress: &'a mut dyn FnMut(usize, usize),
    ) -> SimPlatform<'a> {
        let timeline = m
            .order
            .iter()
            .zip(&m.node)
            .map(|(&cpu, &node)| CpuTimeline {
                cpu: cpu as u32,
                node,
                kicked_ns: 0,
                online_ns: 0,
                spans: Vec::with_capacity(6),
                ops: Ops::default(),
            })
            .collect();
        SimPlatform {
            costs,
            strategy: *strategy,
            queue: Queue::new(),
            jitter: Jitter {
                rng: ChaCha8Rng::seed_from_u64(options.seed),
                amplitude: costs.jitter,
            },
            critical: [0; Phase::ALL.len()],
            index_of: m.index_of.clone(),
            timeline,
            hop_ns: m.hops.clone(),
            package: m.package.clone(),
            hw_id: m.hw_id.clone(),
            x2apic_visits: m.x2apic_visits.clone(),
            loads_microcode: m.loads_microcode.clone(),
            alive_seen: vec![false; m.order.len()],
            calibrated_packages: HashSet::from([m.boot_package]),
            tsc_packages: HashSet::from([m.boot_package]),
            pending_calibrations: 0,
            tsc_ns: m.tsc_ns,
            log: vec![LogLine {
                t_ns: 0,
                text: "smp: Bringing up secondary CPUs ...".to_string(),
            }],
            node_run: None,
            onlined: 0,
            progress,
        }
    }
}

/// Runs crates/hotplug's state machine over the platform: the TSC check at
/// the starting stage, the rest of the online at the online stage.
fn bring_up<'a>(
    platform: SimPlatform<'a>,
    engine: hotplug::MaskEngine,
    m: &Machine,
) -> Result<SimPlatform<'a>, SimError> {
    let mut hp = hotplug::Hotplug::new(platform, engine);
    hp.register(
        "x86/tsc:sync",
        hotplug::Stage::Starting,
        Some(Box::new(tsc_sync)),
        None,
    );
    hp.register(
        "sim:online",
        hotplug::Stage::Online,
        Some(Box::new(online)),
        None,
    );
    for wave in &m.waves {
        run_wave(&mut hp, wave, m.kick_ahead)
            .map_err(|(cpu, e)| SimError::Masks(format!("CPU {cpu}: {e}")))?;
    }
    let (mut p, _engine) = hp.into_parts();
    p.close_node_run();
    Ok(p)
}

/// One wave of CPUs through the hotplug state machine: each kicked and
/// completed in turn (serial), or every one kicked before the first is
/// completed (`kick_ahead`, the parallel prefix up to `CPUHP_BP_KICK_AP`).
fn run_wave(
    hp: &mut hotplug::Hotplug<SimPlatform<'_>>,
    wave: &[usize],
    kick_ahead: bool,
) -> Result<(), (usize, hotplug::HotplugError)> {
    if kick_ahead {
        for &cpu in wave {
            hp.kick(cpu).map_err(|e| (cpu, e))?;
        }
        for &cpu in wave {
            hp.finish_up(cpu).map_err(|e| (cpu, e))?;
        }
    } else {
        for &cpu in wave {
            hp.cpu_up(cpu).map_err(|e| (cpu, e))?;
        }
    }
    Ok(())
}

/// "Brought up", then (seed 002's patch) the wait for the calibrations still
/// running in `smp_cpus_done()`, then x86's BogoMIPS total; the log in time order.
fn close_log(
    p: &mut SimPlatform<'_>,
    m: &Machine,
    strategy: &Strategy,
    brought_up: Nanos,
) -> Result<(), SimError> {
    let cpus = m.order.len() + 1;
    let x86 = p.costs.platform.is_x86();
    p.log.push(LogLine {
        t_ns: brought_up,
        text: if x86 {
            format!("Brought up {cpus} CPUs")
        } else {
            format!(
                "smp: Brought up {} node{}, {cpus} CPU{}",
                m.nodes,
                if m.nodes == 1 { "" } else { "s" },
                if cpus == 1 { "" } else { "s" }
            )
        },
    });
    while p.pending_calibrations > 0 {
        match p.queue.pop() {
            Some((_, Event::Calibrated(_))) => p.pending_calibrations -= 1,
            Some((_, Event::Alive(_))) => {}
            None => return Err(SimError::Internal("calibration lost")),
        }
    }
    p.critical[Phase::Calibrate as usize] += p.queue.now() - brought_up;
    if x86 {
        let per_cpu = match strategy.calibrate {
            Calibrate::Lpj(lpj) => lpj as f64 * 1000.0 / 500_000.0,
            _ => 2.0 * p.costs.cpu_mhz,
        };
        let total = per_cpu * cpus as f64;
        p.log.push(LogLine {
            t_ns: p.queue.now(),
            text: format!("Total of {cpus} processors activated ({total:.2} BogoMIPS)."),
        });
    }
    // Stable: lines with equal times keep the order they were printed in.
    p.log.sort_by_key(|l| l.t_ns);
    Ok(())
}

/// Where the time went, per phase and in all.
fn totals(
    p: SimPlatform<'_>,
    m: &Machine,
    strategy: &Strategy,
    options: &Options,
    brought_up: Nanos,
) -> Run {
    let mut cpu_time = [0u64; Phase::ALL.len()];
    let mut ops = Ops::default();
    for t in &p.timeline {
        for s in &t.spans {
            cpu_time[s.phase as usize] += s.end_ns - s.start_ns;
        }
        ops += t.ops;
    }
    let phases = Phase::ALL
        .iter()
        .map(|&ph| PhaseTotal {
            phase: ph,
            cpu_s: cpu_time[ph as usize] as f64 / 1e9,
            critical_s: p.critical[ph as usize] as f64 / 1e9,
        })
        .collect();
    Run {
        platform: p.costs.platform.name().to_string(),
        strategy: *strategy,
        seed: options.seed,
        cpus: m.order.len() + 1,
        nodes: m.nodes,
        brought_up_s: brought_up as f64 / 1e9,
        done_s: p.queue.now() as f64 / 1e9,
        phases,
        ops,
        log: p.log,
        timeline: p.timeline,
        caveat: what_if_caveat(p.costs.platform, strategy),
    }
}

/// Linux 2.6.37's `apic_is_clustered_box()`: more than two clusters of 16 APIC
/// ids means a multi-chassis machine whose TSCs are not synchronised, so the TSC
/// warp check is skipped. Uses the CPUs' hardware ids (APIC ids), or their
/// logical numbers when the source gave none.
pub fn clustered_apic(topology: &Topology) -> bool {
    let mut clusters: Vec<u64> = topology
        .cpus()
        .iter()
        .filter(|c| topology.present().contains(c.id as usize))
        .map(|c| c.hw_id.unwrap_or(c.id as u64) >> 4)
        .collect();
    clusters.sort_unstable();
    clusters.dedup();
    clusters.len() > 2
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machines::SeedMachine;
    use crate::{Algo, Kick, Platform};

    fn strategy(kick: Kick, calibrate: Calibrate) -> Strategy {
        Strategy {
            kick,
            calibrate,
            masks: Algo::Scoped,
        }
    }

    fn run(machine: SeedMachine, platform: Platform, s: Strategy, seed: u64) -> Run {
        simulate(
            &machine.topology(),
            &CostTable::for_platform(platform, &crate::fit::fitted().unwrap()),
            &s,
            &Options { seed },
        )
        .unwrap()
    }

    #[test]
    fn same_seed_same_run_bit_for_bit() {
        let s = strategy(Kick::Parallel, Calibrate::Parallel);
        let a = run(SeedMachine::X86_2n128, Platform::X86, s, 7);
        let b = run(SeedMachine::X86_2n128, Platform::X86, s, 7);
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            serde_json::to_string(&b).unwrap()
        );
        let c = run(SeedMachine::X86_2n128, Platform::X86, s, 8);
        assert_ne!(a.timeline, c.timeline, "the seed must drive the jitter");
    }

    /// The "Booting Node" lines carry the same CPUs, in the same groups and order,
    /// as the seed's logs of the 16- and 32-CPU boxes.
    #[test]
    fn booting_node_lines_match_seed_002() {
        let lines = |m| -> Vec<String> {
            run(m, Platform::X86_2010, Strategy::default(), 1)
                .log
                .into_iter()
                .filter(|l| l.text.starts_with("Booting Node"))
                .map(|l| l.text)
                .collect()
        };
        assert_eq!(
            lines(SeedMachine::X86_2s16),
            [
                "Booting Node   0, Processors  #1 #2 #3 #4 #5 #6 #7 Ok.",
                "Booting Node   1, Processors  #8 #9 #10 #11 #12 #13 #14 #15 Ok.",
            ]
        );
        assert_eq!(
            lines(SeedMachine::X86_2s32ht),
            [
                "Booting Node   0, Processors  #1 #2 #3 #4 #5 #6 #7 Ok.",
                "Booting Node   1, Processors  #8 #9 #10 #11 #12 #13 #14 #15 Ok.",
                "Booting Node   0, Processors  #16 #17 #18 #19 #20 #21 #22 #23 Ok.",
                "Booting Node   1, Processors  #24 #25 #26 #27 #28 #29 #30 #31 Ok.",
            ]
        );
    }

    #[test]
    fn parallel_calibration_finishes_after_the_last_online() {
        let r = run(
            SeedMachine::X86_2s16,
            Platform::X86_2010,
            strategy(Kick::Serial, Calibrate::Parallel),
            1,
        );
        let cal = CostTable::for_platform(Platform::X86_2010, &crate::fit::fitted().unwrap())
            .calibrate
            .ns
            / 1e9;
        assert!(r.done_s > r.brought_up_s + 0.9 * cal);
        assert!(r
            .log
            .last()
            .unwrap()
            .text
            .starts_with("Total of 16 processors"));
    }

    #[test]
    fn once_per_package_calibrates_once_per_package_and_lpj_never() {
        let count = |c| {
            run(
                SeedMachine::X86_2s32ht,
                Platform::X86_2010,
                strategy(Kick::Serial, c),
                1,
            )
            .timeline
            .iter()
            .flat_map(|t| &t.spans)
            .filter(|s| s.phase == Phase::Calibrate)
            .count()
        };
        assert_eq!(count(Calibrate::Serial), 31);
        // The boot CPU's package is known; package 1 calibrates once.
        assert_eq!(count(Calibrate::OncePerPackage), 1);
        assert_eq!(count(Calibrate::Lpj(4_532_810)), 0);
    }

    /// Seed 003's kernel (the series before 6.5) kicks every CPU first.
    #[test]
    fn parallel_kick_overlaps_ap_start() {
        let costs = CostTable::for_platform(Platform::X86, &crate::fit::fitted().unwrap())
            .for_era(crate::costs::Era::Pre65);
        let topo = SeedMachine::X86_2n128.topology();
        let go = |kick| {
            let s = strategy(kick, Calibrate::Lpj(1));
            simulate(&topo, &costs, &s, &Options { seed: 1 }).unwrap()
        };
        let (serial, parallel) = (go(Kick::Serial), go(Kick::Parallel));
        assert!(parallel.brought_up_s < serial.brought_up_s / 3.0);
        // Every kick happens before the first CPU goes online.
        let first_online = parallel.timeline.iter().map(|t| t.online_ns).min().unwrap();
        assert!(parallel.timeline.iter().all(|t| t.kicked_ns < first_online));
    }

    /// Linux 2.6.37 runs the 20 ms TSC warp check on every AP; today's x86
    /// (4.10+, CPUs with TSC_ADJUST) only on the first AP of each package
    /// other than the boot CPU's, and for the full 20 ms there.
    #[test]
    fn tsc_check_on_every_ap_in_2010_and_once_per_further_package_today() {
        let tsc_cpus = |r: &Run| -> Vec<u32> {
            r.timeline
                .iter()
                .filter(|t| t.spans.iter().any(|s| s.phase == Phase::TscSync))
                .map(|t| t.cpu)
                .collect()
        };
        let s = strategy(Kick::Serial, Calibrate::Skip);
        let old = run(SeedMachine::X86_2s32ht, Platform::X86_2010, s, 1);
        assert_eq!(tsc_cpus(&old).len(), 31);
        let today = run(SeedMachine::X86_2s32ht, Platform::X86, s, 1);
        // Package 1 of this box is CPUs 8-15 and 24-31; 8 comes up first.
        assert_eq!(tsc_cpus(&today), [8]);
        let topo = topology::Shape::simple(topology::Arch::X86_64, 4, 4, 2)
            .build()
            .unwrap();
        let costs = CostTable::for_platform(Platform::X86, &crate::fit::fitted().unwrap());
        let four = simulate(&topo, &costs, &s, &Options { seed: 1 }).unwrap();
        let checked = tsc_cpus(&four);
        assert_eq!(checked.len(), 3, "{checked:?}");
        let packages: HashSet<_> = checked
            .iter()
            .map(|&c| topo.cpu(c as usize).unwrap().group(LevelKind::Package))
            .collect();
        assert_eq!(packages.len(), 3);
        let spent: u64 = four
            .timeline
            .iter()
            .flat_map(|t| &t.spans)
            .filter(|s| s.phase == Phase::TscSync)
            .map(|s| s.end_ns - s.start_ns)
            .sum();
        let want = 3.0 * crate::costs::X86_TSC_NS;
        assert!((spent as f64 / want - 1.0).abs() < 0.02, "{spent} ns");
    }

    /// Without TSC_ADJUST (an AMD table) every AP runs the warp check:
    /// the full 20 ms on the first AP of each further package,
    /// loop_timeout()'s 2 ms on every other AP, the boot package's included.
    #[test]
    fn amd_runs_the_short_tsc_check_on_every_other_ap() {
        let topo = topology::Shape::simple(topology::Arch::X86_64, 4, 4, 2)
            .build()
            .unwrap();
        let fit = crate::fit::fitted().unwrap();
        let amd = CostTable::for_platform(Platform::X86, &fit).for_vendor(
            crate::x86::Vendor::Amd,
            &fit,
            crate::costs::DEFAULT_HZ,
        );
        let s = strategy(Kick::Serial, Calibrate::Skip);
        let r = simulate(&topo, &amd, &s, &Options { seed: 1 }).unwrap();
        let mut checks: Vec<u64> = r
            .timeline
            .iter()
            .flat_map(|t| &t.spans)
            .filter(|s| s.phase == Phase::TscSync)
            .map(|s| s.end_ns - s.start_ns)
            .collect();
        assert_eq!(checks.len(), 31);
        checks.sort_unstable();
        let near = |ns: u64, want: f64| (ns as f64 / want - 1.0).abs() < 0.02;
        assert!(checks[..28]
            .iter()
            .all(|&ns| near(ns, crate::costs::X86_TSC_SIBLING_NS)));
        assert!(checks[28..]
            .iter()
            .all(|&ns| near(ns, crate::costs::X86_TSC_NS)));
        // tsc=reliable skips both.
        let reliable = amd.with_tsc_reliable();
        let r = simulate(&topo, &reliable, &s, &Options { seed: 1 }).unwrap();
        assert!(r
            .timeline
            .iter()
            .flat_map(|t| &t.spans)
            .all(|s| s.phase != Phase::TscSync));
    }

    /// A 2-package, 4-core, 2-thread x86 box numbered as x86 numbers it
    /// (every first thread, then their siblings), under `era`'s kernel.
    fn smt_box(era: crate::costs::Era, microcode_ns: f64, kick: Kick) -> (Topology, Run) {
        let topo = topology::Shape {
            numbering: topology::Numbering::ThreadsLast,
            ..topology::Shape::simple(topology::Arch::X86_64, 2, 4, 2)
        }
        .build()
        .unwrap();
        let costs = CostTable::for_platform(Platform::X86, &crate::fit::fitted().unwrap())
            .for_era(era)
            .with_microcode(microcode_ns, crate::Source::Assumed("test"));
        let s = strategy(kick, Calibrate::Skip);
        let r = simulate(&topo, &costs, &s, &Options { seed: 1 }).unwrap();
        (topo, r)
    }

    /// kernel/cpu.c's `cpuhp_bringup_cpus_parallel()` (Linux 6.5): kick the
    /// primary threads, bring them online, then kick the siblings and bring
    /// them online. The series before 6.5 kicked every CPU first.
    #[test]
    fn linux_6_5_onlines_every_primary_thread_before_kicking_a_sibling() {
        use crate::costs::Era;
        let (topo, r) = smt_box(Era::Current, 0.0, Kick::Parallel);
        let thread = |t: &CpuTimeline| topo.cpu(t.cpu as usize).unwrap().thread;
        let (primaries, siblings): (Vec<&CpuTimeline>, Vec<&CpuTimeline>) =
            r.timeline.iter().partition(|t| thread(t) == 0);
        assert_eq!((primaries.len(), siblings.len()), (7, 8));
        let last_primary_online = primaries.iter().map(|t| t.online_ns).max().unwrap();
        let first_primary_online = primaries.iter().map(|t| t.online_ns).min().unwrap();
        assert!(primaries.iter().all(|t| t.kicked_ns < first_primary_online));
        assert!(siblings.iter().all(|t| t.kicked_ns >= last_primary_online));
        let first_sibling_online = siblings.iter().map(|t| t.online_ns).min().unwrap();
        assert!(siblings.iter().all(|t| t.kicked_ns < first_sibling_online));
        let (_, old) = smt_box(Era::Pre65, 0.0, Kick::Parallel);
        let first_online = old.timeline.iter().map(|t| t.online_ns).min().unwrap();
        assert!(old.timeline.iter().all(|t| t.kicked_ns < first_online));
        // Two waves wait out the AP start-up twice.
        let ap_start = CostTable::for_platform(Platform::X86, &crate::fit::fitted().unwrap())
            .ap_start
            .ns;
        let extra = (r.brought_up_s - old.brought_up_s) * 1e9;
        assert!(extra > 0.5 * ap_start, "{extra} ns");
    }

    /// Microcode is loaded once per core, by the first thread of the core to
    /// come up (not on the boot CPU's core): on the AP before it reports in
    /// (6.5), or on the boot CPU's serialized path (earlier kernels).
    #[test]
    fn microcode_loads_once_per_core_where_the_kernel_puts_it() {
        use crate::costs::Era;
        const LOAD: f64 = 1e6;
        let loads = |r: &Run| -> Vec<u32> {
            r.timeline
                .iter()
                .filter(|t| t.spans.iter().any(|s| s.phase == Phase::Microcode))
                .map(|t| t.cpu)
                .collect()
        };
        let critical = |r: &Run| {
            r.phases
                .iter()
                .find(|p| p.phase == Phase::Microcode)
                .unwrap()
                .critical_s
        };
        let (topo, new) = smt_box(Era::Current, LOAD, Kick::Parallel);
        // Cores 1-7's first threads: CPUs 1-7; the boot CPU's core (CPU 0 and
        // its sibling 8) has its microcode already; no sibling loads.
        assert_eq!(loads(&new), (1..8).collect::<Vec<_>>());
        assert!(loads(&new)
            .iter()
            .all(|&c| topo.cpu(c as usize).unwrap().thread == 0));
        assert_eq!(critical(&new), 0.0);
        let (_, none) = smt_box(Era::Current, 0.0, Kick::Parallel);
        let overlap = new.brought_up_s - none.brought_up_s;
        assert!(
            overlap < 1.1 * LOAD / 1e9,
            "{overlap} s for 7 loads in parallel"
        );
        let (_, old) = smt_box(Era::Pre65, LOAD, Kick::Parallel);
        assert_eq!(loads(&old), (1..8).collect::<Vec<_>>());
        assert!((critical(&old) / (7.0 * LOAD / 1e9) - 1.0).abs() < 0.02);
        let (_, serial) = smt_box(Era::Current, LOAD, Kick::Serial);
        assert_eq!(loads(&serial), (1..8).collect::<Vec<_>>());
    }

    #[test]
    fn clustered_apic_rule() {
        assert!(!clustered_apic(&SeedMachine::X86_2s32ht.topology()));
        assert!(clustered_apic(&SeedMachine::X86Uv4096.topology()));
    }

    #[test]
    fn arm64_logs_each_secondary() {
        let topo = topology::Shape::simple(topology::Arch::Arm64, 2, 4, 1)
            .build()
            .unwrap();
        let r = simulate(
            &topo,
            &CostTable::for_platform(Platform::Arm64, &crate::fit::fitted().unwrap()),
            &Strategy::default(),
            &Options::default(),
        )
        .unwrap();
        let booted = r
            .log
            .iter()
            .filter(|l| l.text.contains("Booted secondary"))
            .count();
        assert_eq!(booted, 7);
        assert_eq!(
            r.log.last().unwrap().text,
            "smp: Brought up 2 nodes, 8 CPUs"
        );
    }

    /// Linux 6.5's x2APIC cluster prefill: a cluster is 16 consecutive APIC
    /// ids (`apic_cluster(apicid) = apicid >> 4`); the boot CPU's cluster is
    /// set up before SMP, and the first CPU prepared in each other cluster
    /// walks every present CPU. Machines whose APIC ids all fit xAPIC pay
    /// nothing.
    #[test]
    fn x2apic_prefill_walks_once_per_new_cluster() {
        let ids: Vec<u64> = (1..512).collect();
        let visits = x2apic_prefill_visits(0, &ids);
        let walkers: Vec<u64> = ids
            .iter()
            .zip(&visits)
            .filter(|(_, &v)| v > 0)
            .map(|(&id, _)| id)
            .collect();
        assert_eq!(walkers, (1..32).map(|c| c * 16).collect::<Vec<_>>());
        assert!(visits.iter().all(|&v| v == 0 || v == 512));
        let small: Vec<u64> = (1..=254).collect();
        assert!(x2apic_prefill_visits(0, &small).iter().all(|&v| v == 0));
    }
}
