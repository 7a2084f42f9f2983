//! powerpc bring-up on the three kinds of firmware Linux runs on, with the
//! topology-mask code of the kernel measured.
//!
//! # What differs per firmware
//!
//! Every powerpc kernel brings CPUs up one at a time: `__cpu_up()`
//! (arch/powerpc/kernel/smp.c) kicks the thread, waits for it to call in
//! and then for it to mark itself online, and the AP updates its topology
//! masks (`add_cpu_to_masks()`) before it does. What the kick is depends on
//! the firmware:
//!
//! - PowerNV (bare metal under OPAL): `pnv_smp_kick_cpu()` asks OPAL where
//!   the thread is (`opal_query_cpu_status()`) and, while it is still held
//!   in skiboot, starts it with `opal_start_cpu()`.
//! - PowerVM LPAR: `smp_pSeries_kick_cpu()` releases a thread that spins in
//!   the kernel's hold loop (`of_spin_mask`: the primary thread of each core
//!   at boot) with a store; every other thread is started by the RTAS
//!   `start-cpu` call, which the partition firmware passes to the
//!   hypervisor.
//! - KVM guest (QEMU's pseries machine): the same pSeries code, but RTAS is
//!   the `H_RTAS` hypercall, which leaves the guest for QEMU's user space
//!   (hw/ppc/spapr_rtas.c `rtas_start_cpu()`) before the vCPU runs.
//!
//! Kernels before 6.1 also poll `cpu_callin_map` every 100 us during boot
//! (`udelay(100)`), so the boot CPU sees each call-in up to 100 us late;
//! Nathan Lynch's "powerpc/smp: poll cpu_callin_map more aggressively in
//! __cpu_up()" (commit b37ac1894ac3, merged for 6.1; v3, Message-ID
//! <20220926220250.157022-1-nathanl@linux.ibm.com>) spins instead. The AP
//! calls in before it updates its masks, and the boot CPU then only waits
//! for it to be online, so the late look costs only what the AP's own walks
//! after its call-in do not cover: 50 us on average on a CPU with no such
//! work, nothing where its walks take 100 us. Every fit machine ran an
//! older kernel, so the fitted per-CPU cost is taken without those waits and
//! a record row whose kernel is 6.1 or later (`sim.linux = "6.1+"`) is
//! charged none ([`Kernel::callin_wait_ns`]).
//!
//! No source times any of these paths, so each firmware's whole per-CPU
//! cost outside the mask code is fitted ([`FirmwareFit`]) on machines of
//! that firmware and carried only to machines of the same firmware; on
//! PowerVM it grows with the CPUs already online.
//!
//! # The mask code of each kernel
//!
//! What the AP's mask update costs is Linux's own `/cpus` walks, counted
//! call by call on the machine's firmware tree by [`crate::linux_walks`]:
//! before seed 000's series (merged for v5.10) every online CPU is walked
//! once or twice per new CPU; after it, only the new CPU and, where CPU
//! nodes have `l2-cache` phandles (PowerVM, PowerNV), one CPU per other L2
//! group of its node. The price of one visit is fitted per firmware with
//! the per-CPU cost, on a machine measured under both kernels (two runs,
//! two unknowns).
//!
//! | firmware | fitted on | why this machine |
//! |---|---|---|
//! | PowerVM | seed 000's 1024-CPU POWER8 LPAR, 233.0 s and 3.71 s | the seed's own log, before and after the series |
//! | KVM guest | the record's 2048-vCPU POWER9 guest, 347.5 s and 5.35 s | the one guest measured before and after the series with log stamps (seed 000's 4096-vCPU figures are prose: "about 30 mins", "6 seconds") |
//! | PowerNV | the record's 80-CPU POWER8 under 5.19 (`powerpc-p8-80-powernv-2022`), one window, its visits priced at POWER8's (PowerVM's fit) | the same machine's 5.3 log (`-2019`, the other mask code) is then a prediction; the 160-CPU POWER9's "after" is the series' first version on a development tree |
//!
//! On PowerNV the walk lengths are as on the other firmwares (a CPU node's
//! place among the CPU nodes): skiboot puts each core's `l2-cache` and
//! `l3-cache` nodes under `/cpus` too (hdata/pcia.c `add_core_cache_info()`),
//! but its device tree keeps a node's children sorted by name
//! (core/device.c `dt_attach_root()`), so every `PowerPC,POWER…@` CPU node
//! comes before the `l2-cache@`/`l3-cache@` nodes.

use std::sync::OnceLock;

use serde::Serialize;
use topology::Shape;

use crate::costs::{Param, Source, PPC_CALLIN_POLL_NS, PPC_KICK_NS};
pub use crate::linux_walks::{Firmware, Kernel};

use crate::linux_walks;
use crate::machines::SeedMachine;
use crate::record::{self, RecordError, Role};
use crate::SimError;

impl Firmware {
    /// The spelling of the record's `sim.firmware` on powerpc rows.
    pub fn name(self) -> &'static str {
        match self {
            Firmware::PowerNv => "powernv",
            Firmware::PowerVm => "powervm",
            Firmware::KvmGuest => "kvm",
        }
    }

    /// Every firmware, in the order the fits are made.
    pub const ALL: [Firmware; 3] = [Firmware::PowerVm, Firmware::KvmGuest, Firmware::PowerNv];

    /// The firmware a record row's `sim.firmware` names.
    pub fn parse(text: &str) -> Result<Firmware, String> {
        Firmware::ALL
            .into_iter()
            .find(|f| f.name() == text)
            .ok_or_else(|| {
                format!("sim.firmware = '{text}' is not one of powernv, powervm, kvm on powerpc")
            })
    }
}

impl Kernel {
    /// The spelling of the record's `sim.linux` / `sim.after_linux` on
    /// powerpc rows.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::V5_9 => "pre-5.10",
            Kernel::V5_10 => "5.10+",
            Kernel::V6_1 => "6.1+",
        }
    }

    /// The kernel a record row's `sim.linux` names: `"pre-5.10"` before
    /// seed 000's series, `"5.10+"` (the default) with it, `"6.1+"` from
    /// Linux 6.1 on.
    pub fn parse(text: Option<&str>) -> Result<Kernel, String> {
        match text {
            None => Ok(Kernel::V5_10),
            Some(t) => [Kernel::V5_9, Kernel::V5_10, Kernel::V6_1]
                .into_iter()
                .find(|k| k.name() == t)
                .ok_or_else(|| {
                    format!(
                        "sim.linux = '{t}' is not \"pre-5.10\", \"5.10+\" or \"6.1+\" on powerpc"
                    )
                }),
        }
    }

    /// How long the boot CPU waits between two looks at a kicked CPU's
    /// call-in: [`PPC_CALLIN_POLL_NS`] before Linux 6.1, none once it spins.
    pub fn callin_poll_ns(self) -> f64 {
        match self {
            Kernel::V5_9 | Kernel::V5_10 => PPC_CALLIN_POLL_NS,
            Kernel::V6_1 => 0.0,
        }
    }

    /// What the poll adds, on average, to one CPU's bring-up when the AP
    /// still works `after_callin_ns` between its call-in and marking itself
    /// online. `start_secondary()` (arch/powerpc/kernel/smp.c) sets
    /// `cpu_callin_map` before `smp_ops->setup_cpu()`, `add_cpu_to_masks()`
    /// and `notify_cpu_starting()`, and `__cpu_up()`, once it has seen the
    /// call-in, only spins until the CPU is online. The call-in falls
    /// anywhere in a poll interval `P`, so the next look comes `U` later, `U`
    /// uniform over `[0, P)`, and delays the end by `max(0, U - W)`:
    /// `(P - W)^2 / 2P` on average while `W < P`, `P / 2` with no work after
    /// the call-in, nothing once the work covers the interval.
    pub fn callin_wait_ns(self, after_callin_ns: f64) -> f64 {
        let p = self.callin_poll_ns();
        let gap = (p - after_callin_ns.max(0.0)).max(0.0);
        if p > 0.0 {
            gap * gap / (2.0 * p)
        } else {
            0.0
        }
    }
}

/// The call-in poll's waits summed over a bring-up ([`Kernel::callin_wait_ns`]),
/// each AP's work after its call-in being its own `/cpus` walks priced at
/// `visit_ns`. The rest of that work (the interrupt controller's and the
/// VPA's set-up in `setup_cpu()`, the starting states) is in no count, so
/// this is the most the poll can add.
pub fn callin_waits_ns(kernel: Kernel, each: &[linux_walks::Walks], visit_ns: f64) -> f64 {
    each.iter()
        .map(|w| kernel.callin_wait_ns(w.visits as f64 * visit_ns))
        .sum()
}

/// The POWER processor a machine runs on: a `/cpus` visit is priced per
/// processor, since the same walk code costs 3.4-3.9 us on both POWER8
/// machines fitted or checked (a PowerVM LPAR, a PowerNV box) and 0.9 us on
/// both POWER9 ones (a KVM guest, a PowerNV box).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Processor {
    /// POWER8.
    Power8,
    /// POWER9.
    Power9,
    /// POWER10: no machine of the record was measured under both mask
    /// codes, so its visit is priced as its predecessor's (POWER9).
    Power10,
}

impl Processor {
    /// Every processor.
    pub const ALL: [Processor; 3] = [Processor::Power8, Processor::Power9, Processor::Power10];

    /// The spelling of the record's `sim.processor`.
    pub fn name(self) -> &'static str {
        match self {
            Processor::Power8 => "power8",
            Processor::Power9 => "power9",
            Processor::Power10 => "power10",
        }
    }

    /// The processor a record row's `sim.processor` names.
    pub fn parse(text: Option<&str>) -> Result<Processor, String> {
        let text = text.unwrap_or("");
        Processor::ALL
            .into_iter()
            .find(|p| p.name() == text)
            .ok_or_else(|| {
                format!("sim.processor = '{text}' is not one of power8, power9, power10 on powerpc")
            })
    }

    /// The processor whose fitted visit price this one takes.
    fn priced_as(self) -> Processor {
        match self {
            Processor::Power10 => Processor::Power9,
            p => p,
        }
    }
}

/// The fitted costs: a per-CPU cost per firmware, a visit price per
/// processor.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fits {
    /// Each firmware's per-CPU cost.
    pub firmwares: Vec<FirmwareFit>,
    /// Each fitted processor's price of one `/cpus` child visited.
    pub visits: Vec<(Processor, Param)>,
}

/// One firmware's fitted per-CPU cost.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FirmwareFit {
    /// The firmware.
    pub firmware: Firmware,
    /// The machine and runs fitted on.
    pub on: String,
    /// Everything one secondary CPU costs besides the walks and the wait for
    /// the boot CPU's next look at the call-in ([`Kernel::callin_wait_ns`]):
    /// the kick, the AP's start-up and online states, the kick's code
    /// constant included.
    pub per_cpu: Param,
    /// What each CPU already online adds to that, where the fit machines
    /// differ in size (0 where they do not).
    pub per_online: Param,
}

impl Fits {
    /// `firmware`'s per-CPU cost.
    pub fn firmware(&self, firmware: Firmware) -> Result<&FirmwareFit, SimError> {
        self.firmwares
            .iter()
            .find(|f| f.firmware == firmware)
            .ok_or(SimError::Internal("a powerpc firmware without a fit"))
    }

    /// The price of one visit on `processor`.
    pub fn visit(&self, processor: Processor) -> Result<&Param, SimError> {
        let p = processor.priced_as();
        self.visits
            .iter()
            .find(|(q, _)| *q == p)
            .map(|(_, v)| v)
            .ok_or(SimError::Internal(
                "a POWER processor without a visit price",
            ))
    }
}

/// One measured bring-up window a fit uses.
struct Measurement {
    /// The machine and run, as the fit's text names them.
    label: String,
    /// The machine simulated.
    shape: Shape,
    /// Which processor's visit price its walks take.
    processor: Processor,
    /// The kernel the run measured: seed 000's LPAR ran powerpc/next of
    /// September 2020 before the series ([`Kernel::V5_9`]) and with it
    /// ([`Kernel::V5_10`]); a record row names its kernel in `sim.linux`
    /// (and `sim.after_linux` for its second window), "5.10+" when unset.
    kernel: Kernel,
    /// The bring-up window, seconds.
    window_s: f64,
}

/// The fitted costs (computed once per process).
pub fn fits() -> Result<&'static Fits, SimError> {
    static FITS: OnceLock<Result<Fits, SimError>> = OnceLock::new();
    FITS.get_or_init(fit_all).as_ref().map_err(Clone::clone)
}

/// Each firmware's fit machine: measured under both mask codes (two
/// windows: the visit price of its processor and the firmware's per-CPU
/// cost), or once on a processor already priced (one window: the per-CPU
/// cost). PowerVM (seed 000's LPAR, POWER8) and KVM (POWER9) come first.
fn fit_all() -> Result<Fits, SimError> {
    let rows = record::load()?;
    let mut fits = Fits {
        firmwares: Vec::new(),
        visits: Vec::new(),
    };
    // KVM first: its guest prices POWER9, which PowerVM's small LPAR needs.
    for firmware in [Firmware::KvmGuest, Firmware::PowerVm, Firmware::PowerNv] {
        let mut runs = Vec::new();
        if firmware == Firmware::PowerVm {
            let shape = SeedMachine::Power8Lpar1024.shape();
            for (label, kernel, window_s) in [
                (
                    "seed 000 power8-lpar-1024 before",
                    Kernel::V5_9,
                    crate::fit::SEED_000_LPAR_NAIVE_S,
                ),
                ("after", Kernel::V5_10, crate::fit::SEED_000_LPAR_SCOPED_S),
            ] {
                runs.push(Measurement {
                    label: label.to_string(),
                    shape: shape.clone(),
                    processor: Processor::Power8,
                    kernel,
                    window_s,
                });
            }
        }
        for r in &rows {
            let Some(spec) = &r.sim else { continue };
            if spec.role != Role::Fit || spec.platform != "powerpc" {
                continue;
            }
            let fw = Firmware::parse(spec.firmware.as_deref().unwrap_or(""))
                .map_err(|m| row_error(r, m))?;
            if fw == firmware {
                runs.extend(measurements(r, spec)?);
            }
        }
        solve(firmware, &runs, &mut fits)?;
    }
    Ok(fits)
}

fn row_error(r: &record::Row, message: String) -> SimError {
    SimError::Record(RecordError::Row {
        id: r.id.clone(),
        message,
    })
}

/// The shape a powerpc record row is simulated on.
pub fn shape_of(spec: &record::SimSpec) -> Shape {
    let [packages, cores, threads] = spec.shape;
    Shape::simple(topology::Arch::PowerPc64, packages, cores, threads)
}

/// A record row's measured windows: before and after, or the per-CPU
/// interval over its secondary CPUs.
fn measurements(r: &record::Row, spec: &record::SimSpec) -> Result<Vec<Measurement>, SimError> {
    let before = Kernel::parse(spec.linux.as_deref()).map_err(|m| row_error(r, m))?;
    let after = match spec.after_linux.as_deref() {
        Some(t) => Kernel::parse(Some(t)).map_err(|m| row_error(r, m))?,
        None => before,
    };
    let processor = Processor::parse(spec.processor.as_deref()).map_err(|m| row_error(r, m))?;
    let shape = shape_of(spec);
    let mut out = Vec::new();
    if let (Some(b), Some(a)) = (r.before_s, r.after_s) {
        out.push(Measurement {
            label: format!("record {} before", r.id),
            shape: shape.clone(),
            processor,
            kernel: before,
            window_s: b,
        });
        out.push(Measurement {
            label: "after".to_string(),
            shape: shape.clone(),
            processor,
            kernel: after,
            window_s: a,
        });
    }
    if let Some(per_cpu) = r.per_cpu_s {
        out.push(Measurement {
            label: format!("record {}", r.id),
            shape,
            processor,
            kernel: before,
            window_s: per_cpu * (r.cpus.max(2) - 1) as f64,
        });
    }
    Ok(out)
}

/// The call-in poll's mean wait per secondary CPU of a machine of `shape`
/// on `firmware` under `kernel`, its walks priced at `processor`'s visit
/// ([`callin_waits_ns`]).
pub fn mean_callin_wait_ns(
    shape: &Shape,
    firmware: Firmware,
    processor: Processor,
    kernel: Kernel,
) -> Result<f64, SimError> {
    let topo = shape
        .build()
        .map_err(|e| SimError::Masks(format!("{e:?}")))?;
    let each = linux_walks::each(&topo, firmware, kernel)?;
    let visit = fits()?.visit(processor)?.ns;
    Ok(callin_waits_ns(kernel, &each, visit) / each.len().max(1) as f64)
}

/// One measured window counted: its secondary CPUs, Linux's `/cpus` visits
/// in all and each AP's walks.
struct Counted<'a> {
    m: &'a Measurement,
    n: f64,
    visits: f64,
    each: Vec<linux_walks::Walks>,
}

fn count(firmware: Firmware, m: &Measurement) -> Result<Counted<'_>, SimError> {
    let topo = m
        .shape
        .build()
        .map_err(|e| SimError::Masks(format!("{e:?}")))?;
    let n = (topo.present().weight().max(2) - 1) as f64;
    let each = linux_walks::each(&topo, firmware, m.kernel)?;
    let visits = each.iter().map(|w| w.visits as f64).sum();
    Ok(Counted { m, n, visits, each })
}

/// CPUs online summed over the bring-up of `n` secondary CPUs: the `k`-th
/// comes up with `k` online (the boot CPU and the `k - 1` before it).
pub fn online_sum(n: f64) -> f64 {
    n * (n + 1.0) / 2.0
}

/// `T = n·per_cpu + Σk·per_online + visits·visit`, solved exactly: the
/// per-CPU cost always, the growth with CPUs online when the machines
/// differ in size, and the visit price of a processor no earlier fit
/// priced. As many windows as unknowns. Each window is counted under the
/// kernel it ran ([`Measurement::kernel`]: which `/cpus` walks the AP makes,
/// and whether the boot CPU still polls its call-in), and the fit's text
/// names that kernel beside the window.
fn solve(firmware: Firmware, runs: &[Measurement], fits: &mut Fits) -> Result<(), SimError> {
    let counted = runs
        .iter()
        .map(|m| count(firmware, m))
        .collect::<Result<Vec<_>, _>>()?;
    let unknowns = Unknowns::of(firmware, &counted, fits)?;
    let x = unknowns.settle(firmware, &counted, fits)?;
    let on = runs
        .iter()
        .map(|m| m.label.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let text = provenance(firmware, &on, &counted);
    let per_online = if unknowns.per_online { x[1] } else { 0.0 };
    if let Some(p) = unknowns.unpriced {
        let visit = x[unknowns.len() - 1];
        positive(&format!("{} visit", p.name()), visit, 0.0, &on)?;
        fits.visits
            .push((p, Param::new(visit, Source::Fitted(text.clone()))));
    }
    // The per-CPU cost holds the kick's code constant, so it must exceed it.
    positive(
        &format!("{} per-CPU cost", firmware.name()),
        x[0],
        PPC_KICK_NS,
        &on,
    )?;
    if !(per_online.is_finite() && per_online >= 0.0) {
        return Err(SimError::Fit(format!(
            "powerpc {}: the growth per CPU online comes out at {per_online} ns on {on}",
            firmware.name()
        )));
    }
    fits.firmwares.push(FirmwareFit {
        firmware,
        on,
        per_cpu: Param::new(x[0], Source::Fitted(text.clone())),
        per_online: Param::new(per_online, Source::Fitted(text)),
    });
    Ok(())
}

/// What one firmware's fit solves for besides its per-CPU cost.
struct Unknowns {
    /// The growth per CPU online: only where the windows' machines differ
    /// in size.
    per_online: bool,
    /// The one processor among the windows that no earlier fit priced.
    unpriced: Option<Processor>,
}

impl Unknowns {
    /// The unknowns `counted` has to separate; an error unless there are
    /// exactly as many windows as unknowns, with at most one unpriced
    /// processor.
    fn of(firmware: Firmware, counted: &[Counted], fits: &Fits) -> Result<Unknowns, SimError> {
        let per_online = counted.windows(2).any(|w| w[0].n != w[1].n);
        let mut unpriced: Vec<Processor> = counted
            .iter()
            .map(|c| c.m.processor.priced_as())
            .filter(|p| fits.visit(*p).is_err())
            .collect();
        unpriced.dedup();
        let u = Unknowns {
            per_online,
            unpriced: unpriced.first().copied(),
        };
        if counted.len() != u.len() || unpriced.len() > 1 {
            return Err(SimError::Fit(format!(
                "powerpc {}: {} windows for {} unknowns (per-CPU cost{}{})",
                firmware.name(),
                counted.len(),
                u.len() + unpriced.len().saturating_sub(1),
                if per_online {
                    ", growth per CPU online"
                } else {
                    ""
                },
                if unpriced.is_empty() {
                    ""
                } else {
                    ", a processor's visit price"
                },
            )));
        }
        Ok(u)
    }

    /// How many: the per-CPU cost and whichever of the others apply.
    fn len(&self) -> usize {
        1 + usize::from(self.per_online) + usize::from(self.unpriced.is_some())
    }

    /// One window's row `[n, Σk, visits of the unpriced processor, T −
    /// priced visits − the call-in poll's waits]`, the visits of an
    /// unpriced processor priced at `guess` for the waits only.
    fn row(&self, c: &Counted, fits: &Fits, guess: f64) -> Vec<f64> {
        let p = c.m.processor.priced_as();
        let price = fits.visit(p).map_or(guess, |v| v.ns);
        let unpriced_here = self.unpriced == Some(p);
        let mut row = vec![c.n];
        if self.per_online {
            row.push(online_sum(c.n));
        }
        if self.unpriced.is_some() {
            row.push(if unpriced_here { c.visits } else { 0.0 });
        }
        let known = if unpriced_here { 0.0 } else { c.visits * price };
        let waits = callin_waits_ns(c.m.kernel, &c.each, price);
        row.push(c.m.window_s * 1e9 - known - waits);
        row
    }

    /// Solves the windows' rows. The poll's waits depend on the visit price
    /// (the AP's walks hide part of the poll), so an unpriced processor's
    /// price is found by iterating from none: each step changes the waits by
    /// a fraction of the price's change, so it settles in a few.
    fn settle(
        &self,
        firmware: Firmware,
        counted: &[Counted],
        fits: &Fits,
    ) -> Result<Vec<f64>, SimError> {
        let fw = firmware.name();
        let mut guess = 0.0;
        for _ in 0..FIT_STEPS {
            let rows = counted.iter().map(|c| self.row(c, fits, guess)).collect();
            let x = gauss(rows).ok_or_else(|| {
                SimError::Fit(format!(
                    "powerpc {fw}: the windows do not separate the unknowns"
                ))
            })?;
            if self.unpriced.is_none() {
                return Ok(x);
            }
            let next = x[self.len() - 1];
            if (next - guess).abs() <= 1e-9 * next.abs().max(1.0) {
                return Ok(x);
            }
            guess = next;
        }
        Err(SimError::Fit(format!(
            "powerpc {fw}: the visit price did not settle in {FIT_STEPS} steps"
        )))
    }
}

/// Where a firmware's fitted costs come from: the windows, each with the
/// kernel it ran, and Linux's `/cpus` visits counted in each.
fn provenance(firmware: Firmware, on: &str, counted: &[Counted]) -> String {
    let windows = counted
        .iter()
        .map(|c| format!("{:.3} s under {}", c.m.window_s, c.m.kernel.name()))
        .collect::<Vec<_>>()
        .join(", ");
    let visits = counted
        .iter()
        .map(|c| format!("{:.0}", c.visits))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "{on}: {} window{} ({windows}), as many unknowns, with Linux's /cpus visits counted \
         for {} ({visits})",
        counted.len(),
        if counted.len() == 1 { "" } else { "s" },
        firmware.name(),
    )
}

/// Solves a square system given as rows `[coefficients…, right-hand side]`
/// by Gaussian elimination with partial pivoting (at most three unknowns
/// here, so no crate is worth it); `None` when it is singular.
fn gauss(mut a: Vec<Vec<f64>>) -> Option<Vec<f64>> {
    let n = a.len();
    if a.iter().any(|row| row.len() != n + 1) {
        return None;
    }
    for col in 0..n {
        let pivot = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col].abs() < f64::MIN_POSITIVE {
            return None;
        }
        a.swap(col, pivot);
        let top = a[col].clone();
        for (r, row) in a.iter_mut().enumerate() {
            if r != col {
                let f = row[col] / top[col];
                for (x, t) in row.iter_mut().zip(&top).skip(col) {
                    *x -= f * t;
                }
            }
        }
    }
    Some((0..n).map(|i| a[i][n] / a[i][i]).collect())
}

/// Steps of the visit price's iteration in [`solve`]; it settles in a few.
const FIT_STEPS: usize = 100;

fn positive(what: &str, ns: f64, floor: f64, on: &str) -> Result<(), SimError> {
    if ns.is_finite() && ns > floor {
        Ok(())
    } else {
        Err(SimError::Fit(format!(
            "powerpc {what} comes out at {ns} ns on {on}: not a positive cost"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first Linux version `text` names ("6.2.0-rc8ssh", "before: v6.5",
    /// "5.13.0-05357-g…"): a major of 2 to 9 and a minor of one or two digits,
    /// not preceded by a digit or a dot (so "0.099241" is no version).
    fn first_version(text: &str) -> Option<(u32, u32)> {
        let b = text.as_bytes();
        (0..b.len()).find_map(|i| {
            let fresh = i == 0 || !(b[i - 1].is_ascii_digit() || b[i - 1] == b'.');
            if !fresh || !(b'2'..=b'9').contains(&b[i]) || b.get(i + 1) != Some(&b'.') {
                return None;
            }
            let minor: String = text[i + 2..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            let next = text[i + 2 + minor.len()..].chars().next();
            if minor.is_empty() || minor.len() > 2 || next.is_some_and(|c| c.is_ascii_digit()) {
                return None;
            }
            Some((u32::from(b[i] - b'0'), minor.parse().ok()?))
        })
    }

    /// A record row is simulated as "6.1+" (no call-in poll) exactly when the
    /// kernel its `kernel` text names first is 6.1 or later; rows naming no
    /// version (a powerpc/next tree of 2020) are older.
    #[test]
    fn rows_marked_6_1_name_a_kernel_from_6_1_on() {
        assert_eq!(first_version("6.2.0-rc8ssh (the log's"), Some((6, 2)));
        assert_eq!(first_version("before: v6.5; after"), Some((6, 5)));
        assert_eq!(first_version("6.15.0-0.rc2.22.fc43"), Some((6, 15)));
        assert_eq!(first_version("alone as 0.099241 -> 0.835627"), None);
        let mut marked = 0;
        for r in record::load()
            .unwrap()
            .iter()
            .filter(|r| r.arch == "powerpc")
        {
            let Some(spec) = &r.sim else { continue };
            let spins = Kernel::parse(spec.linux.as_deref()).unwrap() == Kernel::V6_1;
            let from_6_1 = first_version(&r.kernel).is_some_and(|v| v >= (6, 1));
            assert_eq!(spins, from_6_1, "{}: {}", r.id, r.kernel);
            marked += usize::from(spins);
        }
        assert_eq!(marked, 5);
    }

    /// The call-in wait's closed form against the poll loop itself: the
    /// boot CPU looks at the kick and every poll interval after it, and a CPU
    /// calling in at `t` and online at `t + w` is done at the later of its
    /// online time and the first look at or after `t`. Averaged over call-ins
    /// spread evenly across an interval, that is the formula's extra time.
    #[test]
    fn callin_wait_is_what_the_poll_loop_adds() {
        let p = Kernel::V5_10.callin_poll_ns();
        assert_eq!(p, PPC_CALLIN_POLL_NS);
        let n = 100_000;
        for w in [0.0, 10e3, 37.5e3, 99e3, 100e3, 250e3] {
            let extra: f64 = (0..n)
                .map(|i| {
                    // A call-in somewhere in the fourth interval after the kick.
                    let t = (3.0 + (i as f64 + 0.5) / n as f64) * p;
                    let look = (t / p).ceil() * p;
                    look.max(t + w) - (t + w)
                })
                .sum();
            let mean = extra / n as f64;
            let formula = Kernel::V5_10.callin_wait_ns(w);
            assert!(
                (mean - formula).abs() < 1.0,
                "w {w}: loop {mean} ns, formula {formula} ns"
            );
        }
        assert_eq!(Kernel::V5_9.callin_wait_ns(0.0), p / 2.0);
        assert_eq!(Kernel::V6_1.callin_wait_ns(0.0), 0.0);
        assert_eq!(Kernel::V6_1.callin_poll_ns(), 0.0);
    }

    /// Every firmware and processor is priced, and the names round-trip.
    #[test]
    fn every_firmware_and_processor_is_priced() {
        let fits = fits().unwrap();
        for f in Firmware::ALL {
            assert_eq!(Firmware::parse(f.name()), Ok(f));
            assert!(fits.firmware(f).unwrap().per_cpu.ns > PPC_KICK_NS);
        }
        for p in Processor::ALL {
            assert_eq!(Processor::parse(Some(p.name())), Ok(p));
            assert!(fits.visit(p).unwrap().ns > 0.0);
        }
        assert!(Processor::parse(None).is_err());
        // The elimination solves what it is given.
        let x = gauss(vec![vec![2.0, 1.0, 5.0], vec![1.0, 3.0, 10.0]]).unwrap();
        assert!(
            (x[0] - 1.0).abs() < 1e-12 && (x[1] - 3.0).abs() < 1e-12,
            "{x:?}"
        );
        assert!(gauss(vec![vec![1.0, 2.0, 3.0], vec![2.0, 4.0, 6.0]]).is_none());
        assert!(Firmware::parse("opal").unwrap_err().contains("'opal'"));
        assert_eq!(Kernel::parse(None), Ok(Kernel::V5_10));
        assert_eq!(Kernel::parse(Some("pre-5.10")), Ok(Kernel::V5_9));
        assert!(Kernel::parse(Some("5.9")).is_err());
        assert_eq!(Kernel::parse(Some("6.1+")), Ok(Kernel::V6_1));
    }
}
