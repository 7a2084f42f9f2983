//! Seed 001's lparstat rows, predicted by the placement engine.
//!
//! The seed measured ebizzy (`-t N -S 200`) on two POWER10 shared-processor
//! LPARs, each on 6.6.0-rc3 ("before") and with the series ("+patch", which is
//! what [`Kernel::V6_8`] models): the 768-CPU LPAR (96 VPs, ent=64) at 32, 128
//! and 512 threads and the 320-CPU LPAR (40 VPs, ent=40) at 32 and 64 threads —
//! the ten rows held to the goals ([`PHYSC_GOAL_PCT`], [`CHANGE_GOAL_POINTS`])
//! — plus the 320-CPU LPAR at 256 threads, which the seed prints too.
//!
//! The partition's configuration comes from the seed's own lines: `lcpu` VPs
//! and `ent` from each "System Configuration" line, uncapped, and the pool each
//! partition can draw from from its lparstat rows ([`SeedRow::pool`]).
//!
//! One parameter is fitted, on one row: the run length at lparstat's reading,
//! [`FIT_ROW`] ([`fit_seconds`]); every other row is predicted with it. Below
//! saturation the model's threads keep spreading from the parent's node for
//! tens of virtual seconds, so physc depends on when it is read
//! ([`WINDOW_NOTE`] says why no steady state explains the seed).
//!
//! Known misses are listed in [`KNOWN_MISSES`] with their documented errors
//! and reasons; the acceptance test holds each to [`MISS_BAND`] around its
//! documented error, so a regression or an accidental improvement shows, and
//! `the_known_misses_reasons_hold_in_the_model` checks each reason's numbers.
//!
//! What was looked for in Linux v6.8 and not found: a rule that would keep
//! the seed's 6.6 light loads at their reading for good. The seed implies
//! about 19 of 32 threads still on the parent's node of the 320-CPU LPAR.
//! There `imb_numa_nr` is 10 (`build_sched_domains()`: PKG spans ten
//! big-core LLCs; the NUMA level spans the machine), but
//! `adjust_numa_imbalance()` forgives at most `NUMA_IMBALANCE_MIN` (2) tasks,
//! both in `calculate_imbalance()` and in `task_numa_find_cpu()`, so neither
//! the load balancer nor NUMA balancing leaves 19 against 4-5 alone; the
//! NUMA level has no `SD_BALANCE_FORK` (powerpc's `RECLAIM_DISTANCE` is 10),
//! so the spread is active balancing one task at a time, which is a rate, not
//! a state. ebizzy's threads never block, so no wake-up path is involved. Not
//! modelled, and the likeliest place for the rest: NUMA balancing's
//! fault-driven preferred node and `numa_group` (the threads share the
//! parent's chunks), which the model reduces to "the parent's node".

use serde::Serialize;
/// Whether a row is fitted or predicted: the simulator's validation rows'
/// kind, so `manycore validate` has one definition of it.
pub use sim::validate::Kind;

use crate::hv::{HvParams, Lpar};
use crate::machine::MachineOptions;
use crate::run::{machine_for, run, Config, Report, RunError};
use crate::workload::Workload;
use crate::Kernel;

/// One seed 001 measurement: machine, threads, and lparstat's physc and app
/// before (6.6.0-rc3) and after (+patch).
#[derive(Debug, Clone, Copy)]
pub struct SeedRow {
    /// Catalogue machine.
    pub machine: &'static str,
    /// Entitled capacity (`ent=`).
    pub entitlement: f64,
    /// Physical cores of the shared pool the partition can draw from: lparstat's
    /// `physc + app` on every row of the partition (`app` is the pool's idle
    /// cores), not the header's `cpus=96`, which powerpc-utils' lparstat prints
    /// from lparcfg's `physical_procs_allocated_to_virtualization`, the
    /// whole system's shared processors.
    pub pool: f64,
    /// ebizzy `-t`.
    pub threads: u32,
    /// physc on 6.6.0-rc3.
    pub before: f64,
    /// physc with the series.
    pub after: f64,
    /// lparstat `app` (idle pool cores) before and after.
    pub app: (f64, f64),
    /// One of the ten rows held to the goals (the 256-thread row is extra).
    pub named: bool,
}

/// The 768-CPU partition's pool: its six lparstat rows give physc + app =
/// 26.06 + 69.88, 17.70 + 78.26, 45.49 + 50.50, 30.15 + 65.76, 94.14 + 1.33,
/// 94.15 + 1.33 = 95.94, 95.96, 95.99, 95.91, 95.47, 95.48.
pub const POOL_768: f64 = 96.0;

/// The 320-CPU partition's pool: its six lparstat rows give physc + app =
/// 22.98 + 41.01, 16.95 + 47.05, 38.22 + 25.77, 25.55 + 38.44, 40.00 + 24.00,
/// 40.00 + 23.99 = 63.99, 64.00, 63.99, 63.99, 64.00, 63.99. Its 40 VPs never
/// reach it, so it bounds nothing here and only sets `app`.
pub const POOL_320: f64 = 64.0;

/// Seed 001's rows, as printed.
pub const SEED_001: [SeedRow; 6] = [
    SeedRow {
        machine: "power10-shared-768",
        entitlement: 64.0,
        pool: POOL_768,
        threads: 32,
        before: 26.06,
        after: 17.70,
        app: (69.88, 78.26),
        named: true,
    },
    SeedRow {
        machine: "power10-shared-768",
        entitlement: 64.0,
        pool: POOL_768,
        threads: 128,
        before: 45.49,
        after: 30.15,
        app: (50.50, 65.76),
        named: true,
    },
    SeedRow {
        machine: "power10-shared-768",
        entitlement: 64.0,
        pool: POOL_768,
        threads: 512,
        before: 94.14,
        after: 94.15,
        app: (1.33, 1.33),
        named: true,
    },
    SeedRow {
        machine: "power10-shared-320",
        entitlement: 40.0,
        pool: POOL_320,
        threads: 32,
        before: 22.98,
        after: 16.95,
        app: (41.01, 47.05),
        named: true,
    },
    SeedRow {
        machine: "power10-shared-320",
        entitlement: 40.0,
        pool: POOL_320,
        threads: 64,
        before: 38.22,
        after: 25.55,
        app: (25.77, 38.44),
        named: true,
    },
    SeedRow {
        machine: "power10-shared-320",
        entitlement: 40.0,
        pool: POOL_320,
        threads: 256,
        before: 40.00,
        after: 40.00,
        app: (24.00, 23.99),
        named: false,
    },
];

/// The row the one free parameter is fitted on: the 768-CPU LPAR, 128
/// threads, 6.6 — the row whose model physc depends most on the run length
/// (from 25 cores after 5 virtual s to 96 once the threads have spread over
/// every node), so it pins that length best, and a 6.6 row, where no asym
/// packing is involved: the spread from the parent's node is the only thing
/// that moves physc.
pub const FIT_ROW: (&str, u32, Kernel) = ("power10-shared-768", 128, Kernel::V6_6);

/// How far a predicted physc may be from the seed's, in percent of the seed's.
pub const PHYSC_GOAL_PCT: f64 = 15.0;

/// How far a predicted before/after physc change may be from the seed's, in
/// percentage points.
pub const CHANGE_GOAL_POINTS: f64 = 10.0;

/// The range the run length is fitted in (virtual seconds): from a tenth of
/// the seed's 200-s runs to its 200 s.
pub const FIT_RANGE: (f64, f64) = (20.0, 200.0);

/// Why the rows depend on the fitted run length, printed with them.
pub const WINDOW_NOTE: &str = "the run length is fitted because the model has no steady state near the seed below saturation: the fork path puts every thread on the parent's node (the NUMA level has no SD_BALANCE_FORK) and the NUMA-level balancer then moves them out one active balance at a time until the nodes are even, where the model stays (long-run physc 32 / 19, 96 / 66, 32 / 17, 40 / 32 for the 768-CPU 32- and 128-thread and the 320-CPU 32- and 64-thread rows, 6.6 / 6.8). No placement the 6.6 rules leave alone fits the seed's 768-CPU 128-thread 6.6 row: 45.49 cores means about 45 of 96 big cores busy, so 128 threads on three nodes or fewer, a NUMA imbalance of 40 or more tasks that find_busiest_group() and task_numa_find_cpu() both refuse to leave. The seed's own rows say the same thing another way: each big core busy on 6.6 holds one thread outside the parent's node (prefer-sibling spreads them), and on 6.8 two (asym packing, one per SMT4 half), so each pair of rows gives the threads that had left the parent's node — 29.5 (6.6) and 28.3 (6.8) of 128 on the 768-CPU LPAR, 13 and 13 of 32 and 28 and 31 of 64 on the 320-CPU one: the series changed packing within a node, not how far the spread had got, which is what reading a transient at the same moment of both runs gives. What sets that moment in the real runs (lparstat was read \"when the workload stabilized\") is not in the seed";

/// A row whose prediction misses its goal: its case, its documented
/// error (percent for physc rows, points for change rows) and why.
#[derive(Debug, Clone, Copy)]
pub struct KnownMiss {
    /// The row's `case` and its error when the reason was written.
    pub documented: (&'static str, f64),
    /// Why it misses.
    pub why: &'static str,
}

/// How far a known miss's error may drift from the documented one (percent or
/// points) before the acceptance test says so. The runs are deterministic, so
/// any drift is a change of the model.
pub const MISS_BAND: f64 = 2.0;

/// Rows whose prediction misses its goal, and why.
pub const KNOWN_MISSES: &[KnownMiss] = &[
    KnownMiss {
        documented: ("001 power10-shared-768 32 threads 6.6", 15.5),
        why: SPREAD_RATE,
    },
    KnownMiss {
        documented: ("001 power10-shared-320 32 threads 6.6", 33.1),
        why: SPREAD_RATE,
    },
    KnownMiss {
        documented: (
            "001 power10-shared-320 32 threads physc change 6.6 -> 6.8",
            -18.0,
        ),
        why: SPREAD_RATE,
    },
    KnownMiss {
        documented: (
            "001 power10-shared-320 64 threads physc change 6.6 -> 6.8",
            12.8,
        ),
        why: SPREAD_RATE_64,
    },
];

const SPREAD_RATE: &str = "on 6.6 (no asym packing) the model's light load finishes spreading long before its heavy load: in the last tenth of the fitted run length the 32 threads are one per big core (32 busy VPs, physc 32, on both LPARs; complete by about 20 virtual s on the 768-CPU LPAR and 15 s on the 320-CPU one), while the fitted 128-thread row is still below three quarters of its full spread of 96. The seed's 6.6 rows (26.06, 22.98) are below the full spread of 32 by more than the goal: about 10 of 32 (768 CPUs) and 13 of 32 (320 CPUs) threads had left the parent's node against 29.5 of 128 — the real light load spread slower, relative to the heavy one, than the model's. The 6.8 rows meet the goal at the fitted length and at half of it, because asym packing holds the busy big cores near 18 (768) and 17 (320) however far the spread has got; so the 320-CPU change row inherits the 6.6 row's error (the model's 6.8 physc against the seed's own 6.6 physc gives a change within the goal). Checked by the_known_misses_reasons_hold_in_the_model";

const SPREAD_RATE_64: &str = "both physc rows meet the goal but err in opposite directions (6.6 low, 6.8 high), so the change is understated: in the last tenth of the fitted run length the model's 64 threads have finished spreading over the 320-CPU LPAR's four nodes (6.6: all 40 VPs busy, physc 40; 6.8: physc 32, one thread per SMT4 core), so over the measured window 6.6 is already near 40 and 6.8 near 32, while the seed's pair of rows says about 28-31 of 64 threads had left the parent's node and 6.8 packed them at 2.5 threads per busy big core — the same difference of spread rates as the 32-thread rows. Checked by the_known_misses_reasons_hold_in_the_model";

/// One validation row.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// e.g. `001 power10-shared-768 32 threads 6.6`.
    pub case: String,
    /// The model's value.
    pub predicted: f64,
    /// The seed's value.
    pub measured: f64,
    /// 100 · (predicted − measured) / measured for physc rows; for change rows,
    /// predicted − measured in percentage points.
    pub error_pct: f64,
    /// `cores` (physc) or `% change`.
    pub unit: &'static str,
    /// Whether it meets its goal: [`PHYSC_GOAL_PCT`] on physc rows,
    /// [`CHANGE_GOAL_POINTS`] on change rows.
    pub within_goal: bool,
    /// [`Kind::Fit`] for the row the run length is fitted on, else
    /// [`Kind::Predict`] (the simulator's rows' kinds: one definition).
    pub kind: Kind,
    /// The run length every row is predicted at (virtual seconds, the first
    /// 20 % not measured), fitted on [`FIT_ROW`].
    pub run_s: f64,
}

/// The model's run of seed row `row` on `kernel` for `seconds` virtual
/// seconds, the first 20 % not measured.
pub fn predict(row: &SeedRow, kernel: Kernel, seconds: f64) -> Result<Report, RunError> {
    predict_window(row, kernel, seconds, 0.2)
}

/// [`predict`] measuring only after the first `warmup` share of the run: the
/// state near its end, for the checks of the known misses' reasons.
pub fn predict_window(
    row: &SeedRow,
    kernel: Kernel,
    seconds: f64,
    warmup: f64,
) -> Result<Report, RunError> {
    let topo =
        readers::catalogue::machine(row.machine).map_err(|e| RunError::Machine(e.to_string()))?;
    let m = machine_for(&topo, kernel, true, &MachineOptions::default())?;
    let mut hv = HvParams::defaults(Lpar::Shared, m.vp_cpus.len());
    hv.entitlement = row.entitlement;
    hv.pool = row.pool;
    let mut cfg = Config::new(kernel, hv, Workload::Ebizzy, row.threads, seconds);
    cfg.warmup = warmup;
    run(&m, &cfg)
}

/// The seed row [`FIT_ROW`] names.
pub fn fit_row() -> &'static SeedRow {
    SEED_001
        .iter()
        .find(|r| r.machine == FIT_ROW.0 && r.threads == FIT_ROW.1)
        .expect("FIT_ROW is a seed row")
}

/// Fits the run length on [`FIT_ROW`]: the length in [`FIT_RANGE`] whose
/// predicted physc equals the seed's, by bisection to a quarter of a virtual
/// second (the model's physc there rises with the length as the threads
/// spread). Returns the length.
pub fn fit_seconds() -> Result<f64, RunError> {
    let row = fit_row();
    let target = match FIT_ROW.2 {
        Kernel::V6_6 => row.before,
        _ => row.after,
    };
    let (mut lo, mut hi) = FIT_RANGE;
    while hi - lo > 0.25 {
        let mid = 0.5 * (lo + hi);
        if predict(row, FIT_ROW.2, mid)?.physc < target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(0.5 * (lo + hi))
}

/// Fits the run length on [`FIT_ROW`], then predicts every seed row at it:
/// physc before and after, and the change.
pub fn validate(progress: &mut dyn FnMut(&str)) -> Result<Vec<Row>, RunError> {
    progress("fitting the run length");
    let seconds = fit_seconds()?;
    let mut rows = Vec::new();
    for r in &SEED_001 {
        let base = format!("001 {} {} threads", r.machine, r.threads);
        progress(&base);
        let before = predict(r, Kernel::V6_6, seconds)?.physc;
        let after = predict(r, Kernel::V6_8, seconds)?.physc;
        for (kernel, p, meas) in [
            (Kernel::V6_6, before, r.before),
            (Kernel::V6_8, after, r.after),
        ] {
            let err = 100.0 * (p - meas) / meas;
            let fitted = (r.machine, r.threads, kernel) == FIT_ROW;
            rows.push(Row {
                case: format!("{base} {kernel}"),
                predicted: p,
                measured: meas,
                error_pct: err,
                unit: "cores",
                within_goal: err.abs() <= PHYSC_GOAL_PCT,
                kind: if fitted { Kind::Fit } else { Kind::Predict },
                run_s: seconds,
            });
        }
        let pc = 100.0 * (after - before) / before;
        let mc = 100.0 * (r.after - r.before) / r.before;
        rows.push(Row {
            case: format!("{base} physc change 6.6 -> 6.8"),
            predicted: pc,
            measured: mc,
            error_pct: pc - mc,
            unit: "% change",
            within_goal: (pc - mc).abs() <= CHANGE_GOAL_POINTS,
            kind: Kind::Predict,
            run_s: seconds,
        });
    }
    Ok(rows)
}

/// A plain-text table of `rows`: the fitted row first, then the predicted ones.
pub fn to_text(rows: &[Row]) -> String {
    use std::fmt::Write as _;
    let run_s = rows.first().map_or(0.0, |r| r.run_s);
    let mut s = format!(
        "seed 001: ebizzy on POWER10 shared LPARs, lparstat physc\n\
         one parameter fitted on one row: run length at the reading {run_s:.2} virtual s (first 20 % not measured)\n"
    );
    for (kind, group) in [(Kind::Fit, "fitted"), (Kind::Predict, "predicted")] {
        let _ = writeln!(
            s,
            "{group}:\n{:<55} {:>10} {:>10} {:>9}  unit",
            "case", "predicted", "measured", "error"
        );
        for r in rows.iter().filter(|r| r.kind == kind) {
            let _ = writeln!(
                s,
                "{:<55} {:>10.2} {:>10.2} {:>+8.1}{} {}{}",
                r.case,
                r.predicted,
                r.measured,
                r.error_pct,
                if r.unit == "cores" { "%" } else { "pp" },
                r.unit,
                if r.within_goal { "" } else { "  (miss)" }
            );
        }
    }
    for m in KNOWN_MISSES {
        let (case, error) = m.documented;
        let _ = writeln!(s, "known miss: {case} ({error:+.1}): {}", m.why);
    }
    let _ = writeln!(s, "note: {WINDOW_NOTE}");
    s
}
