//! Seed 001's lparstat rows, predicted by the placement engine.
//!
//! The seed measured ebizzy (`-t N -S 200`) on two POWER10 shared-processor
//! LPARs, each on 6.6.0-rc3 ("before") and with the series ("+patch", which is
//! what [`Kernel::V6_8`] models): the 768-CPU LPAR (96 VPs, ent=64) at 32, 128
//! and 512 threads and the 320-CPU LPAR (40 VPs, ent=40) at 32 and 64 threads —
//! the ten rows the issue names — plus the 320-CPU LPAR at 256 threads, which
//! the seed prints too.
//!
//! Nothing is fitted: every row is a prediction. The partition's configuration
//! is read off the seed's own "System Configuration" lines (`lcpu` VPs, `ent`,
//! `cpus=96` for the pool, uncapped). The one model constant that is not Linux
//! code or seed text is the 100 µs snooze before a cede
//! ([`crate::hv::HvParams::defaults`]); ebizzy's threads never sleep, so it only
//! shapes the idle VPs' brief dispatches for balancing kicks.
//!
//! Known misses are listed in [`KNOWN_MISSES`] with their reasons: the
//! 320-CPU LPAR's light-load 6.6 rows, where the model's spreading over the
//! nodes has not settled when the window closes.

use serde::Serialize;

use crate::hv::{HvParams, Lpar};
use crate::machine::MachineOptions;
use crate::run::{machine_for, run, Config, Report, RunError};
use crate::workload::Workload;
use crate::Kernel;

/// One seed 001 measurement: machine, threads, and lparstat's physc before
/// (6.6.0-rc3) and after (+patch).
#[derive(Debug, Clone, Copy)]
pub struct SeedRow {
    /// Catalogue machine.
    pub machine: &'static str,
    /// Entitled capacity (`ent=`).
    pub entitlement: f64,
    /// ebizzy `-t`.
    pub threads: u32,
    /// physc on 6.6.0-rc3.
    pub before: f64,
    /// physc with the series.
    pub after: f64,
    /// One of the ten rows the issue names (the 256-thread row is extra).
    pub named: bool,
}

/// The shared pool, from the seed's `cpus=96` on both partitions.
pub const POOL: f64 = 96.0;

/// Seed 001's rows, as printed.
pub const SEED_001: [SeedRow; 6] = [
    SeedRow {
        machine: "power10-shared-768",
        entitlement: 64.0,
        threads: 32,
        before: 26.06,
        after: 17.70,
        named: true,
    },
    SeedRow {
        machine: "power10-shared-768",
        entitlement: 64.0,
        threads: 128,
        before: 45.49,
        after: 30.15,
        named: true,
    },
    SeedRow {
        machine: "power10-shared-768",
        entitlement: 64.0,
        threads: 512,
        before: 94.14,
        after: 94.15,
        named: true,
    },
    SeedRow {
        machine: "power10-shared-320",
        entitlement: 40.0,
        threads: 32,
        before: 22.98,
        after: 16.95,
        named: true,
    },
    SeedRow {
        machine: "power10-shared-320",
        entitlement: 40.0,
        threads: 64,
        before: 38.22,
        after: 25.55,
        named: true,
    },
    SeedRow {
        machine: "power10-shared-320",
        entitlement: 40.0,
        threads: 256,
        before: 40.00,
        after: 40.00,
        named: false,
    },
];

/// Virtual seconds per run (the first 20 % not measured). The seed ran 200 s;
/// the model's rows move by less than a core between 30 and 60 s.
pub const SECONDS: f64 = 30.0;

/// Rows whose prediction misses the goals, and why.
pub const KNOWN_MISSES: &[(&str, &str)] = &[
    ("001 power10-shared-320 32 threads 6.6", SPREAD_66),
    (
        "001 power10-shared-320 32 threads physc change 6.6 -> 6.8",
        SPREAD_66,
    ),
    (
        "001 power10-shared-320 64 threads physc change 6.6 -> 6.8",
        OPPOSITE_ERRORS,
    ),
];

const SPREAD_66: &str = "light load on 6.6 (no asym packing): fork balancing puts the 32 threads on the parent's node (10 big cores, over 3 threads each); the idle nodes' CPUs then pull threads apart by active balancing (NUMA level: sibling_imbalance, one push each time the destination's failure count passes cache_nice_tries + 2, the count starting again from 0 after each push), and the model is still spreading when the window closes (physc 30.0 against the seed's 23.0), where the real 6.6.0-rc3 settled. Ruled out as the cause: the LLC (on a shared LPAR PowerVM gives no L2 property, so 6.6's update_mask_by_l2() falls back to cpu_sibling_mask, the SMT8 big core, as the model has it) and automatic NUMA balancing toward ebizzy's memory node (modelled; its moves home are refused by the same imbalance rule, and swaps within one NUMA group are refused while the node has spare capacity)";

const OPPOSITE_ERRORS: &str = "both physc rows are within the goal but err in opposite directions (6.6 predicted 8 % low, 6.8 9 % high), so the change is understated by about 13 points. The 6.6 row is low because the model's spreading over the nodes, unsettled at the window as on the 32-thread rows, has moved fewer threads apart here than the real kernel had; what settled the real 6.6.0-rc3 where it did is not found";

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
    /// Whether it meets the goal (15 % on physc, 10 points on changes).
    pub within_goal: bool,
}

fn simulate(row: &SeedRow, kernel: Kernel) -> Result<Report, RunError> {
    simulate_with(row, kernel, crate::run::NUMA_RETRY_NS)
}

fn simulate_with(row: &SeedRow, kernel: Kernel, numa_retry_ns: u64) -> Result<Report, RunError> {
    let topo =
        readers::catalogue::machine(row.machine).map_err(|e| RunError::Machine(e.to_string()))?;
    let m = machine_for(&topo, kernel, true, &MachineOptions::default())?;
    let mut hv = HvParams::defaults(Lpar::Shared, m.vp_cpus.len());
    hv.entitlement = row.entitlement;
    hv.pool = POOL;
    let mut cfg = Config::new(kernel, hv, Workload::Ebizzy, row.threads, SECONDS);
    cfg.numa_retry_ns = Some(numa_retry_ns);
    run(&m, &cfg)
}

/// Predicts every seed row: physc before and after, and the change.
pub fn validate(progress: &mut dyn FnMut(&str)) -> Result<Vec<Row>, RunError> {
    let mut rows = Vec::new();
    for r in &SEED_001 {
        let base = format!("001 {} {} threads", r.machine, r.threads);
        progress(&base);
        let before = simulate(r, Kernel::V6_6)?.physc;
        let after = simulate(r, Kernel::V6_8)?.physc;
        for (k, p, meas) in [("6.6", before, r.before), ("6.8", after, r.after)] {
            let err = 100.0 * (p - meas) / meas;
            rows.push(Row {
                case: format!("{base} {k}"),
                predicted: p,
                measured: meas,
                error_pct: err,
                unit: "cores",
                within_goal: err.abs() <= 15.0,
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
            within_goal: (pc - mc).abs() <= 10.0,
        });
    }
    Ok(rows)
}

/// A plain-text table of `rows`.
pub fn to_text(rows: &[Row]) -> String {
    use std::fmt::Write as _;
    let mut s =
        String::from("seed 001: ebizzy on POWER10 shared LPARs, lparstat physc (nothing fitted)\n");
    let _ = writeln!(
        s,
        "{:<55} {:>10} {:>10} {:>9}  unit",
        "case", "predicted", "measured", "error"
    );
    for r in rows {
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
    for (case, why) in KNOWN_MISSES {
        let _ = writeln!(s, "known miss: {case}: {why}");
    }
    s
}
