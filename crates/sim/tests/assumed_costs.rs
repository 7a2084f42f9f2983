//! Content checks of the cost tables' sources: what an assumed value can
//! move, and where a fitted value comes from.
//!
//! - Every assumed cost is perturbed (×0.5 and ×2, the fit redone with it),
//!   and `manycore validate` re-run: a *predicted* row that moves by more than
//!   1 % must name that assumption in its `assumes` list (the "depends on
//!   assumed" line the table prints under it), and a row that names one must
//!   move with it. The moved rows are printed (`-- --nocapture`).
//! - Every non-zero assumed cost is one the perturbation reaches (an assumed
//!   value hard-coded elsewhere would escape the check above), and every cost
//!   marked assumed but "folded" into another (zero here) names a parameter
//!   that is fitted on that platform, or, for the VM-exit cost, a platform
//!   with no virtual machine among its simulated record rows.
//! - Every fitted value traces to its data: a parameter fitted on the public
//!   record names a row of `data/bringup-record.toml` whose role is `fit` (and
//!   every such row is used), its values are the row's figures; a parameter
//!   fitted on a seed quotes the seed figures the fit holds.

use sim::costs::{Assumptions, Basis, Name, Value, TABLE};
use sim::fit::{self, Fitted};
use sim::record::{self, Role};
use sim::validate::{self, Kind, Row, Tables};
use sim::{CostTable, Platform, Source};

/// A row has moved when its prediction changes by more than this fraction.
const MOVED: f64 = 0.01;

/// The factors each assumed cost is multiplied by.
const FACTORS: [f64; 2] = [0.5, 2.0];

/// Every simulated row of `manycore validate` (its other rows, seed 000's
/// counted Linux walks, take no cost table and cannot move).
fn rows(fit: Fitted) -> Vec<Row> {
    validate::simulated_rows(&Tables::new(fit), &Platform::ALL, &mut |_| {}).unwrap()
}

#[test]
fn predicted_rows_move_only_with_the_assumptions_they_name() {
    let base = rows(fit::fitted().unwrap());
    let mut problems = Vec::new();
    let mut moved_by: Vec<(usize, &str)> = Vec::new();
    for name in Assumptions::NAMES {
        for factor in FACTORS {
            let a = Assumptions::default().scaled(name, factor).unwrap();
            let perturbed = rows(fit::fitted_with(&a).unwrap());
            assert_eq!(perturbed.len(), base.len());
            println!("{name} ×{factor}:");
            for (i, (b, m)) in base.iter().zip(&perturbed).enumerate() {
                assert_eq!(b.case, m.case);
                let shift = m.predicted_s / b.predicted_s - 1.0;
                if shift.abs() <= MOVED {
                    continue;
                }
                moved_by.push((i, name));
                let kind = if b.kind == Kind::Predict {
                    "predicted"
                } else {
                    "fit, in-sample"
                };
                println!("  {:+7.2} %  {} ({kind})", 100.0 * shift, b.case);
                if b.kind == Kind::Predict && !b.assumes.iter().any(|x| x == name) {
                    problems.push(format!(
                        "{name} ×{factor} moves predicted row {} by {:+.2} % but its \
                         assumes list {:?} does not name it",
                        b.case,
                        100.0 * shift,
                        b.assumes
                    ));
                }
            }
        }
    }
    // The converse: a named dependence must be a real one.
    for (i, b) in base.iter().enumerate() {
        for name in &b.assumes {
            if !moved_by.contains(&(i, name.as_str())) {
                problems.push(format!(
                    "{} names {name} but neither ×0.5 nor ×2 moves it by 1 %",
                    b.case
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

/// The assumption whose perturbation changes `table`'s parameter `name`
/// exactly in proportion, if any.
fn reaching(platform: Platform, name: Name, base: f64) -> Option<&'static str> {
    Assumptions::NAMES.into_iter().find(|a| {
        let scaled = Assumptions::default().scaled(a, 2.0).unwrap();
        let t = CostTable::for_platform(platform, &fit::fitted_with(&scaled).unwrap());
        (t.param(name).ns - 2.0 * base).abs() <= 1e-9 * base
    })
}

#[test]
fn every_assumed_cost_is_perturbed_or_folded_into_a_fitted_one() {
    let fit = fit::fitted().unwrap();
    let record = record::load().unwrap();
    let mut problems = Vec::new();
    for (p, platform) in Platform::ALL.into_iter().enumerate() {
        let table = CostTable::for_platform(platform, &fit);
        let rows = &TABLE[p];
        for row in rows {
            let param = table.param(row.name);
            let what = format!("{platform} {}", row.name.as_str());
            match row.value {
                Value::Assumed(..) => {
                    if param.ns != 0.0 && reaching(platform, row.name, param.ns).is_none() {
                        problems.push(format!("{what}: no assumption's perturbation reaches it"));
                    }
                }
                Value::Fixed(ns, Basis::Folded(why)) => {
                    assert!(param.source.is_assumed(), "{what}");
                    if ns != 0.0 {
                        problems.push(format!("{what}: folded but {ns} ns, not 0"));
                    }
                    let into_fitted = rows.iter().any(|r| {
                        matches!(r.value, Value::Fitted(_)) && why.contains(r.name.as_str())
                    });
                    let no_vm = row.name == Name::VmExit
                        && !record.iter().any(|r| {
                            r.virtual_machine
                                && r.sim
                                    .as_ref()
                                    .is_some_and(|s| s.platform().ok() == Some(platform))
                        });
                    if !into_fitted && !no_vm {
                        problems.push(format!(
                            "{what}: folded ({why:?}) into nothing fitted on {platform}"
                        ));
                    }
                }
                Value::Fixed(..) | Value::Fitted(_) => {
                    if param.source.is_assumed() {
                        problems.push(format!("{what}: marked assumed outside the table"));
                    }
                }
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

/// The record row a fitted source names (`record ID: ...`).
fn record_id(source: &str) -> Option<&str> {
    let rest = source.strip_prefix("record ")?;
    Some(rest.split([':', ' ', ',']).next().unwrap_or(rest))
}

#[test]
fn fitted_values_trace_to_the_record_and_the_seeds() {
    let fit = fit::fitted().unwrap();
    let record = record::load().unwrap();
    let mut named = Vec::new();
    for platform in Platform::ALL {
        let table = CostTable::for_platform(platform, &fit);
        for (name, param) in table.params() {
            let Source::Fitted(text) = &param.source else {
                continue;
            };
            let what = format!("{platform} {name}: {text}");
            if let Some(id) = record_id(text) {
                let row = record::row(&record, id).unwrap_or_else(|e| panic!("{what}: {e}"));
                let spec = row.sim.as_ref().unwrap_or_else(|| panic!("{what}"));
                assert_eq!(spec.role, Role::Fit, "{what}");
                assert_eq!(spec.platform(), Ok(platform), "{what}");
                named.push(id.to_string());
            } else {
                assert!(
                    text.starts_with("seed 00"),
                    "{what}: names no record row or seed"
                );
            }
        }
    }
    // The arm64 firmware families' costs are fitted on record rows too.
    for family in &fit.arm64_firmware {
        for param in [&family.ap_start, &family.online] {
            // A family fitted on several rows names them all: "record A, B: ...".
            let text = param.source.to_string();
            let ids = text
                .trim_start_matches("fitted: ")
                .strip_prefix("record ")
                .and_then(|rest| rest.split(':').next())
                .unwrap_or_else(|| panic!("arm64 {}: {text}", family.firmware));
            assert_eq!(ids, family.row, "{text}");
            for id in ids.split(", ") {
                let spec = record::row(&record, id).unwrap().sim.as_ref().unwrap();
                assert_eq!(spec.role, Role::Fit, "{text}");
                assert_eq!(spec.firmware.as_deref(), Some(family.firmware.as_str()));
                named.push(id.to_string());
            }
        }
    }
    // The powerpc firmwares' costs are fitted on record rows of their own
    // firmware (PowerVM's on seed 000's LPAR).
    for f in &sim::powerpc::fits().unwrap().firmwares {
        let text = f.per_cpu.source.to_string();
        let ids: Vec<&str> = text
            .match_indices("record ")
            .filter_map(|(at, _)| record_id(&text[at..]))
            .collect();
        assert!(!ids.is_empty() || text.contains("seed 000"), "{text}");
        for id in ids {
            let spec = record::row(&record, id).unwrap().sim.as_ref().unwrap();
            assert_eq!(spec.role, Role::Fit, "{text}");
            assert_eq!(spec.platform(), Ok(Platform::PowerPc), "{text}");
            assert_eq!(spec.firmware.as_deref(), Some(f.firmware.name()), "{text}");
            named.push(id.to_string());
        }
    }
    // AMD's x86 AP start-up is fitted on a record row too.
    let text = fit.x86_amd_ap_start.source.to_string();
    let id = record_id(text.trim_start_matches("fitted: ")).unwrap_or_else(|| panic!("{text}"));
    assert_eq!(id, fit.x86_amd_row, "{text}");
    let spec = record::row(&record, id).unwrap().sim.as_ref().unwrap();
    assert_eq!(spec.role, Role::Fit, "{text}");
    assert_eq!(spec.vendor(), Ok(sim::x86::Vendor::Amd), "{text}");
    named.push(id.to_string());
    // Every record row the fit claims is used, and only those.
    for r in &record {
        if r.sim.as_ref().is_some_and(|s| s.role == Role::Fit) && !r.id.contains("seed003") {
            assert!(
                named.contains(&r.id),
                "{} is a fit row no parameter uses",
                r.id
            );
        }
    }
    arm64_values_are_the_rows_figures(&fit, &record);
    seed_figures_are_the_fits(&fit);
}

/// The arm64 fit, per firmware family: `online_serial` is the fit rows' mean
/// AP side; `ap_start` is the rest of their mean per-CPU interval after the published
/// SMC cost, less the (small) mask work. The platform's default is
/// [`fit::ARM64_FIT_ROW`]'s.
fn arm64_values_are_the_rows_figures(fit: &Fitted, record: &[record::Row]) {
    let default = fit.arm64_for("ampere-altra").unwrap();
    assert_eq!(default.row, fit::ARM64_FIT_ROW);
    assert_eq!(
        (&default.ap_start, &default.online),
        (&fit.arm64_ap_start, &fit.arm64_online)
    );
    for family in &fit.arm64_firmware {
        // A family fitted on several rows takes the mean of their figures.
        let rows: Vec<&record::Row> = family
            .row
            .split(", ")
            .map(|id| record::row(record, id).unwrap())
            .collect();
        let k = rows.len() as f64;
        // A row that times each socket apart is fitted on the boot CPU's.
        let local = |r: &record::Row| {
            record::package_per_cpu_s(r)
                .first()
                .copied()
                .unwrap_or_else(|| r.per_cpu_s.unwrap())
        };
        let per_cpu = rows.iter().map(|r| local(r)).sum::<f64>() * 1e9 / k;
        let ap_side = rows.iter().map(|r| r.ap_side_s.unwrap()).sum::<f64>() * 1e9 / k;
        assert!(
            (family.online.ns - ap_side).abs() < 1e-6,
            "{}",
            family.online.ns
        );
        let mask_work = per_cpu - ap_side - sim::costs::ARM64_KICK_NS - family.ap_start.ns;
        assert!(
            (0.0..0.01 * per_cpu).contains(&mask_work),
            "arm64 {} ap_start {} ns leaves {mask_work} ns of {per_cpu} ns for the mask work",
            family.firmware,
            family.ap_start.ns
        );
        let text = family.ap_start.source.to_string();
        for r in rows {
            for quoted in [
                format!("{:.1} us", local(r) * 1e6),
                format!("{:.1} us", r.ap_side_s.unwrap() * 1e6),
            ] {
                assert!(text.contains(&quoted), "{quoted} not in {text}");
            }
        }
    }
    arm64_remote_factor_is_the_far_sockets_interval(fit, record);
}

/// The remote-socket factor is the far socket's per-CPU interval over the
/// boot socket's in the fit rows that time both, from the quoted stamps
/// (the KASAN ThunderX2's 'CPU1: Booted' 0.182036 -> 'CPU127: Booted'
/// 8.577188 over 126 CPUs, 'CPU128: Booted' 8.725212 -> 'CPU255: Booted'
/// 27.452424 over 127), and every family's remote hop reproduces that
/// factor where it is charged: in a simulated bring-up of a two-socket
/// machine with the family's costs (SLIT 10 near, 20 far), the mean
/// interval between consecutive onlines on the far socket over the boot
/// socket's. Each source names the fit row.
fn arm64_remote_factor_is_the_far_sockets_interval(fit: &Fitted, record: &[record::Row]) {
    let rows: Vec<&record::Row> = record
        .iter()
        .filter(|r| r.sim.as_ref().is_some_and(|s| s.role == Role::Fit))
        .filter(|r| r.arch == "arm64" && !r.package_stamps.is_empty())
        .collect();
    assert_eq!(
        rows.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
        vec!["arm64-thunderx2-256-kasan"]
    );
    let kasan = ((27.452424 - 8.725212) / 127.0) / ((8.577188 - 0.182036) / 126.0);
    assert!(
        (fit.arm64_remote.factor - kasan).abs() < 1e-9,
        "{} against {kasan}",
        fit.arm64_remote.factor
    );
    assert_eq!(fit.arm64_remote.row, "arm64-thunderx2-256-kasan");
    let topology = topology::Shape::simple(topology::Arch::Arm64, 2, 32, 1)
        .build()
        .unwrap();
    let strategy = sim::Strategy {
        kick: sim::Kick::Serial,
        calibrate: sim::Calibrate::Skip,
        masks: sim::Algo::Scoped,
    };
    for family in &fit.arm64_firmware {
        let costs = CostTable::for_platform(Platform::Arm64, fit).with_firmware(family);
        let run = sim::simulate(&topology, &costs, &strategy, &sim::Options::default()).unwrap();
        // Mean gap between consecutive onlines of CPUs on `node`.
        let mean_gap = |node: u32| {
            let gaps: Vec<f64> = run
                .timeline
                .windows(2)
                .filter(|w| w[0].node == Some(node) && w[1].node == Some(node))
                .map(|w| (w[1].online_ns - w[0].online_ns) as f64)
                .collect();
            assert!(gaps.len() >= 30, "{}: {} gaps", family.firmware, gaps.len());
            gaps.iter().sum::<f64>() / gaps.len() as f64
        };
        let ratio = mean_gap(1) / mean_gap(0);
        assert!(
            (ratio / kasan - 1.0).abs() < 0.02,
            "{}: far over near {ratio} against {kasan}",
            family.firmware
        );
        let text = family.remote_hop.source.to_string();
        assert!(text.contains("record arm64-thunderx2-256-kasan:"), "{text}");
    }
}

/// The seed figures quoted in the fitted sources are the fit's constants.
fn seed_figures_are_the_fits(fit: &Fitted) {
    let lookup = fit.ppc_lookup.source.to_string();
    for quoted in [
        format!("{:.1} s", fit::SEED_000_LPAR_NAIVE_S),
        format!("{:.2} s", fit::SEED_000_LPAR_SCOPED_S),
    ] {
        assert!(lookup.contains(&quoted), "{quoted} not in {lookup}");
    }
    let online = fit.ppc_online.source.to_string();
    let scoped = format!("{:.2} s", fit::SEED_000_LPAR_SCOPED_S);
    assert!(online.contains(&scoped), "{scoped} not in {online}");
    let x86 = fit.x86_ap_start.source.to_string();
    for quoted in [
        format!("{:.0} ms serial", fit::SEED_003_SERIAL_S * 1e3),
        format!("{:.0} ms parallel", fit::SEED_003_REUSE_S * 1e3),
    ] {
        assert!(x86.contains(&quoted), "{quoted} not in {x86}");
    }
}
