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
use crate::masks::{self, MaskWork, Ops};
use crate::strategy::{Calibrate, Kick, Strategy};
use crate::SimError;

/// A step of a CPU's bring-up, as drawn on the timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// The boot CPU sends the wake-up.
    Kick,
    /// The AP starts (firmware, trampoline, microcode) until it can report in.
    ApStart,
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
    pub const ALL: [Phase; 6] = [
        Phase::Kick,
        Phase::ApStart,
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
    let mut masks = masks::engine(topology, strategy.masks)?;
    simulate_with(
        topology,
        costs,
        strategy,
        options,
        masks.as_mut(),
        &mut |_, _| {},
    )
}

/// [`simulate`] with an explicit mask engine and a progress callback
/// `(CPUs online, CPUs to bring up)`.
pub fn simulate_with(
    topology: &Topology,
    costs: &CostTable,
    strategy: &Strategy,
    options: &Options,
    masks: &mut dyn MaskWork,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Run, SimError> {
    let present: Vec<usize> = topology.present.iter().collect();
    let Some(&boot) = present.first() else {
        return Err(SimError::NoCpus);
    };
    let order: Vec<usize> = present[1..].to_vec();
    let n = order.len();
    let node_of = |cpu: usize| topology.node_of(cpu).map(|node| node.id);
    let boot_node = topology.node_of(boot).map(|node| node.id);

    let mut jitter = Jitter {
        rng: ChaCha8Rng::seed_from_u64(options.seed),
        amplitude: costs.jitter,
    };
    let mut queue = Queue::new();
    let mut critical = [0u64; Phase::ALL.len()];
    let mut log = Vec::new();
    let mut timeline: Vec<CpuTimeline> = order
        .iter()
        .map(|&cpu| CpuTimeline {
            cpu: cpu as u32,
            node: node_of(cpu),
            kicked_ns: 0,
            online_ns: 0,
            spans: Vec::with_capacity(6),
            ops: Ops::default(),
        })
        .collect();

    masks.online(boot)?;
    log.push(LogLine {
        t_ns: 0,
        text: "smp: Bringing up secondary CPUs ...".to_string(),
    });

    let tsc_ns =
        if costs.tsc_sync.ns > 0.0 && !(costs.tsc_skip_clustered && clustered_apic(topology)) {
            costs.tsc_sync.ns
        } else {
            0.0
        };
    // Packages whose delay loop is known (for `Calibrate::Skip`): the boot CPU's.
    let mut calibrated_packages: HashSet<u32> = HashSet::new();
    if let Some(c) = topology.cpu(boot) {
        calibrated_packages.insert(c.group(LevelKind::Package).unwrap_or(0));
    }

    let mut alive_at: Vec<Option<Nanos>> = vec![None; n];
    let mut alive_seen = vec![false; n];
    let kick = |queue: &mut Queue,
                jitter: &mut Jitter,
                critical: &mut [u64; 6],
                t: &mut CpuTimeline,
                alive_at: &mut Vec<Option<Nanos>>,
                i: usize| {
        let start = queue.now();
        let k = jitter.apply(costs.kick_bsp.ns);
        queue.advance(k);
        critical[Phase::Kick as usize] += k;
        t.kicked_ns = start;
        t.spans.push(Span {
            phase: Phase::Kick,
            start_ns: start,
            end_ns: queue.now(),
        });
        let hops = match (boot_node, t.node) {
            (Some(a), Some(b)) => match (topology.node_index(a), topology.node_index(b)) {
                (Some(ia), Some(ib)) if topology.has_distances() => {
                    let d = topology.distances[ia * topology.nodes.len() + ib];
                    (d.saturating_sub(10)) as f64 / 10.0
                }
                _ => 0.0,
            },
            _ => 0.0,
        };
        let start_ns = jitter.apply(costs.ap_start.ns + hops * costs.remote_hop.ns);
        let at = queue.now() + start_ns;
        alive_at[i] = Some(at);
        t.spans.push(Span {
            phase: Phase::ApStart,
            start_ns: queue.now(),
            end_ns: at,
        });
        queue.schedule(at, Event::Alive(i as u32));
    };

    if strategy.kick == Kick::Parallel {
        for (i, t) in timeline.iter_mut().enumerate() {
            kick(&mut queue, &mut jitter, &mut critical, t, &mut alive_at, i);
        }
    }

    let mut node_run: Option<(Option<u32>, Nanos, String)> = None;
    let mut pending_calibrations = 0usize;
    for i in 0..n {
        let cpu = order[i];
        // x86 prints one line per run of consecutive CPUs on the same node.
        if costs.platform.is_x86() {
            let node = timeline[i].node;
            let same = matches!(&node_run, Some((nd, _, _)) if *nd == node);
            if !same {
                if let Some((_, t, text)) = node_run.take() {
                    log.push(LogLine {
                        t_ns: t,
                        text: format!("{text} Ok."),
                    });
                }
                node_run = Some((
                    node,
                    queue.now(),
                    format!("Booting Node {:3}, Processors ", node.unwrap_or(0)),
                ));
            }
            if let Some((_, _, text)) = node_run.as_mut() {
                text.push_str(&format!(" #{cpu}"));
            }
        }
        if strategy.kick == Kick::Serial {
            kick(
                &mut queue,
                &mut jitter,
                &mut critical,
                &mut timeline[i],
                &mut alive_at,
                i,
            );
        }
        // Wait until this AP reports alive, delivering other events meanwhile.
        let before = queue.now();
        while !alive_seen[i] {
            match queue.pop() {
                Some((_, Event::Alive(j))) => alive_seen[j as usize] = true,
                Some((_, Event::Calibrated(_))) => pending_calibrations -= 1,
                None => return Err(SimError::Internal("AP never came alive")),
            }
        }
        critical[Phase::ApStart as usize] += queue.now() - before;

        let package = topology
            .cpu(cpu)
            .and_then(|c| c.group(LevelKind::Package))
            .unwrap_or(0);
        let calibrate_now = match strategy.calibrate {
            Calibrate::Serial => true,
            Calibrate::Skip => !calibrated_packages.contains(&package),
            Calibrate::Parallel | Calibrate::Lpj(_) => false,
        };
        calibrated_packages.insert(package);
        let t = &mut timeline[i];
        if calibrate_now && costs.calibrate.ns > 0.0 {
            let d = jitter.apply(costs.calibrate.ns);
            t.spans.push(Span {
                phase: Phase::Calibrate,
                start_ns: queue.now(),
                end_ns: queue.now() + d,
            });
            queue.advance(d);
            critical[Phase::Calibrate as usize] += d;
        }
        if tsc_ns > 0.0 {
            let d = jitter.apply(tsc_ns);
            t.spans.push(Span {
                phase: Phase::TscSync,
                start_ns: queue.now(),
                end_ns: queue.now() + d,
            });
            queue.advance(d);
            critical[Phase::TscSync as usize] += d;
        }
        let ops = masks.online(cpu)?;
        t.ops = ops;
        let d = masks::price(&ops, costs).round() as Nanos;
        if d > 0 {
            t.spans.push(Span {
                phase: Phase::Masks,
                start_ns: queue.now(),
                end_ns: queue.now() + d,
            });
            queue.advance(d);
            critical[Phase::Masks as usize] += d;
        }
        let d = jitter.apply(costs.online_serial.ns);
        t.spans.push(Span {
            phase: Phase::Online,
            start_ns: queue.now(),
            end_ns: queue.now() + d,
        });
        queue.advance(d);
        critical[Phase::Online as usize] += d;
        t.online_ns = queue.now();
        if strategy.calibrate == Calibrate::Parallel && costs.calibrate.ns > 0.0 {
            let d = jitter.apply(costs.calibrate.ns);
            t.spans.push(Span {
                phase: Phase::Calibrate,
                start_ns: queue.now(),
                end_ns: queue.now() + d,
            });
            queue.schedule(queue.now() + d, Event::Calibrated(i as u32));
            pending_calibrations += 1;
        }
        if costs.platform == crate::Platform::Arm64 {
            let hw = topology
                .cpu(cpu)
                .and_then(|c| c.hw_id)
                .unwrap_or(cpu as u64);
            log.push(LogLine {
                t_ns: queue.now(),
                text: format!("CPU{cpu}: Booted secondary processor 0x{hw:010x}"),
            });
        }
        progress(i + 2, n + 1);
    }
    if let Some((_, t, text)) = node_run.take() {
        log.push(LogLine {
            t_ns: t,
            text: format!("{text} Ok."),
        });
    }
    let brought_up = queue.now();
    let cpus = n + 1;
    let nodes = {
        let mut ids: Vec<u32> = present.iter().filter_map(|&c| node_of(c)).collect();
        ids.sort_unstable();
        ids.dedup();
        ids.len().max(1)
    };
    log.push(LogLine {
        t_ns: brought_up,
        text: if costs.platform.is_x86() {
            format!("Brought up {cpus} CPUs")
        } else {
            format!("smp: Brought up {nodes} nodes, {cpus} CPUs")
        },
    });
    // smp_cpus_done(): wait for the calibrations still running (seed 002's patch).
    while pending_calibrations > 0 {
        match queue.pop() {
            Some((_, Event::Calibrated(_))) => pending_calibrations -= 1,
            Some((_, Event::Alive(_))) => {}
            None => return Err(SimError::Internal("calibration lost")),
        }
    }
    critical[Phase::Calibrate as usize] += queue.now() - brought_up;
    let done = queue.now();
    if costs.platform.is_x86() {
        let per_cpu = match strategy.calibrate {
            Calibrate::Lpj(lpj) => lpj as f64 * 1000.0 / 500_000.0,
            _ => 2.0 * costs.cpu_mhz,
        };
        let total = per_cpu * cpus as f64;
        log.push(LogLine {
            t_ns: done,
            text: format!("Total of {cpus} processors activated ({total:.2} BogoMIPS)."),
        });
    }
    log.sort_by_key(|l| l.t_ns); // stable: equal times keep their order

    let mut cpu_time = [0u64; Phase::ALL.len()];
    let mut ops = Ops::default();
    for t in &timeline {
        for s in &t.spans {
            cpu_time[s.phase as usize] += s.end_ns - s.start_ns;
        }
        ops += t.ops;
    }
    let phases = Phase::ALL
        .iter()
        .map(|&p| PhaseTotal {
            phase: p,
            cpu_s: cpu_time[p as usize] as f64 / 1e9,
            critical_s: critical[p as usize] as f64 / 1e9,
        })
        .collect();
    Ok(Run {
        platform: costs.platform.name().to_string(),
        strategy: *strategy,
        seed: options.seed,
        cpus,
        nodes,
        brought_up_s: brought_up as f64 / 1e9,
        done_s: done as f64 / 1e9,
        phases,
        ops,
        log,
        timeline,
    })
}

/// Linux 2.6.37's `apic_is_clustered_box()`: more than two clusters of 16 APIC
/// ids means a multi-chassis machine whose TSCs are not synchronised, so the TSC
/// warp check is skipped. Uses the CPUs' hardware ids (APIC ids), or their
/// logical numbers when the source gave none.
pub fn clustered_apic(topology: &Topology) -> bool {
    let mut clusters: Vec<u64> = topology
        .cpus
        .iter()
        .filter(|c| topology.present.contains(c.id as usize))
        .map(|c| c.hw_id.unwrap_or(c.id as u64) >> 4)
        .collect();
    clusters.sort_unstable();
    clusters.dedup();
    clusters.len() > 2
}
