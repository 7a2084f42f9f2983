//! Seed 001's lparstat rows (independent truth: the seed's text) against the
//! engine's predictions. One parameter, the run length at the reading, is
//! fitted on one row ([`FIT_ROW`]); every other row is predicted. Every row
//! must meet its goal (physc within 15 % of the seed's, before/after change
//! within 10 points of the seed's) unless it is a listed known miss with a reason — and a listed
//! miss must really miss, by its documented error within `MISS_BAND`, so the
//! list can neither hide a row that has come right nor let one drift unnoticed.

use place::validate::{
    fit_row, fit_seconds, predict, predict_window, validate, Kind, SeedRow, FIT_ROW, KNOWN_MISSES,
    MISS_BAND, SEED_001,
};
use place::Kernel;

#[test]
fn seed_001_rows_meet_the_goals_or_are_known_misses() {
    let rows = validate(&mut |_| {}).expect("validate");
    assert_eq!(rows.len(), 18);
    let fitted: Vec<_> = rows.iter().filter(|r| r.kind == Kind::Fit).collect();
    assert_eq!(fitted.len(), 1, "exactly one row is fitted: {fitted:?}");
    let (machine, threads, kernel) = FIT_ROW;
    assert_eq!(
        fitted[0].case,
        format!("001 {machine} {threads} threads {kernel}")
    );
    assert!(
        fitted[0].error_pct.abs() < 1.0,
        "the fit reproduces its row: {:?}",
        fitted[0]
    );
    for r in &rows {
        match KNOWN_MISSES.iter().find(|m| m.documented.0 == r.case) {
            Some(m) => {
                assert!(
                    !r.within_goal,
                    "{} is listed as a miss but meets the goal: {r:?}",
                    r.case
                );
                let documented = m.documented.1;
                assert!(
                    (r.error_pct - documented).abs() <= MISS_BAND,
                    "{}: error {:+.1}, documented {documented:+.1} ± {MISS_BAND}: update KNOWN_MISSES and its reason",
                    r.case,
                    r.error_pct
                );
            }
            None => assert!(r.within_goal, "{} misses the goal: {r:?}", r.case),
        }
    }
    for m in KNOWN_MISSES {
        assert!(
            rows.iter().any(|r| r.case == m.documented.0),
            "stale known miss {}",
            m.documented.0
        );
        assert!(m.why.len() > 40, "{}: no reason given", m.documented.0);
    }
    // The seed's direction holds on every light-load row: 6.8 consumes fewer cores.
    for r in rows
        .iter()
        .filter(|r| r.unit == "% change" && r.measured < -10.0)
    {
        assert!(r.predicted < -10.0, "{}: {r:?}", r.case);
    }
}

/// Seed 001's text.
fn seed_001() -> String {
    readers::corpus::seed_text(env!("CARGO_MANIFEST_DIR"), "001")
}

/// The seed's lparstat rows in print order: the ten numbers (%user %sys %wait
/// %idle physc %entc lbusy app vcsw phint) after each kernel label.
fn lparstat_rows(text: &str) -> Vec<[f64; 10]> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut rows = Vec::new();
    for (i, w) in words.iter().enumerate() {
        if !(w.ends_with("6.6.0-rc3") || w.ends_with("+patch")) {
            continue;
        }
        let nums: Vec<f64> = words[i + 1..]
            .iter()
            .map_while(|x| x.parse::<f64>().ok())
            .collect();
        if nums.len() == 10 {
            rows.push(std::array::from_fn(|k| nums[k]));
        }
    }
    rows
}

/// Every seed row's physc and app are the seed's lparstat numbers, in the
/// seed's order, and its pool is what those rows say the partition could
/// draw from: physc + app on each of the partition's rows, within the
/// 0.53 cores the 512-thread rows fall short of it (2-decimal readings of a
/// pool the partition nearly exhausts).
#[test]
fn seed_rows_and_pools_are_the_seeds_lparstat_lines() {
    let lines = lparstat_rows(&seed_001());
    assert_eq!(lines.len(), 2 * SEED_001.len(), "{lines:?}");
    for (row, pair) in SEED_001.iter().zip(lines.chunks(2)) {
        let (b, a) = (pair[0], pair[1]);
        assert_eq!((row.before, row.after), (b[4], a[4]), "{row:?}");
        assert_eq!(row.app, (b[7], a[7]), "{row:?}");
        for l in [b, a] {
            let sum = l[4] + l[7];
            assert!(
                (sum - row.pool).abs() <= 0.6,
                "{} {} threads: physc {} + app {} = {sum:.2}, pool {}",
                row.machine,
                row.threads,
                l[4],
                l[7],
                row.pool
            );
        }
    }
}

/// What `WINDOW_NOTE` documents: the rows depend on the fitted run length.
/// Run for 60 virtual s the fitted row's threads have spread over more big
/// cores than the seed's reading shows, by more than the goal's 15 %. Should
/// the model gain a steady state near the seed, this fails and the note (and
/// the known misses) need rewriting.
#[test]
fn the_rows_depend_on_the_run_length() {
    let row = fit_row();
    let physc = predict(row, FIT_ROW.2, 60.0).unwrap().physc;
    assert!(
        physc > 1.15 * row.before,
        "physc {physc:.2} at 60 s against the seed's {}",
        row.before
    );
}

/// The seed row of `machine` at `threads`.
fn seed_row(machine: &str, threads: u32) -> &'static SeedRow {
    SEED_001
        .iter()
        .find(|r| r.machine == machine && r.threads == threads)
        .unwrap()
}

/// Each known miss's reason, as numbers of the model checked against the
/// seed's (so a model change that makes a reason untrue fails here, not only
/// a drift of the error). At the fitted run length L:
/// - `SPREAD_RATE` (the 32-thread 6.6 rows): in the last tenth of the run the
///   model's 32 threads are one per big core (32 busy VPs, physc 32), while
///   the fitted 128-thread row is still below three quarters of its full
///   spread (96 VPs); the seed's two 6.6 rows are below their full spread of
///   32 by more than the goal, so the real light load was read mid-spread.
/// - `SPREAD_RATE` (the 320-CPU 32-thread change): the 6.8 rows meet the goal
///   at L and at L/2 (asym packing holds the busy big cores whatever the
///   spread), and the model's 6.8 physc against the seed's own 6.6 physc gives
///   a change within the goal: the miss is the 6.6 row's.
/// - `SPREAD_RATE_64` (the 320-CPU 64-thread change): the 6.6 row errs low and
///   the 6.8 row high, both within the goal, and in the last tenth of the run
///   both are at their full spread (40 VPs; 32 = one thread per SMT4 core).
#[test]
fn the_known_misses_reasons_hold_in_the_model() {
    let l = fit_seconds().unwrap();
    let tail = |r: &SeedRow, k: Kernel| predict_window(r, k, l, 0.9).unwrap();
    let err = |p: f64, m: f64| 100.0 * (p - m) / m;
    for machine in ["power10-shared-768", "power10-shared-320"] {
        let r = seed_row(machine, 32);
        let end = tail(r, Kernel::V6_6);
        assert_eq!(
            end.busy_vps, 32.0,
            "SPREAD_RATE: {machine} 32 threads 6.6 at {l:.1} s: {end:?}"
        );
        assert!(end.physc > 31.5, "SPREAD_RATE: {machine}: {end:?}");
        assert!(
            r.before < 0.85 * 32.0,
            "SPREAD_RATE: the seed's {machine} row is mid-spread"
        );
        for secs in [l / 2.0, l] {
            let after = predict(r, Kernel::V6_8, secs).unwrap().physc;
            assert!(
                err(after, r.after).abs() <= 15.0,
                "SPREAD_RATE: {machine} 6.8 at {secs:.1} s: {after:.2} against {}",
                r.after
            );
        }
    }
    let fitted = seed_row(FIT_ROW.0, FIT_ROW.1);
    let end = tail(fitted, FIT_ROW.2);
    assert!(
        end.physc < 0.75 * 96.0,
        "SPREAD_RATE: the fitted row has spread too far at {l:.1} s: {end:?}"
    );

    let r = seed_row("power10-shared-320", 32);
    let after = predict(r, Kernel::V6_8, l).unwrap().physc;
    let with_seeds_before = err(after, r.before) - err(r.after, r.before);
    assert!(with_seeds_before.abs() <= 10.0, "SPREAD_RATE: the 320-CPU 32-thread change is not the 6.6 row's miss: {with_seeds_before:+.1} pt");

    let r = seed_row("power10-shared-320", 64);
    let (before, after) = (
        predict(r, Kernel::V6_6, l).unwrap().physc,
        predict(r, Kernel::V6_8, l).unwrap().physc,
    );
    let (eb, ea) = (err(before, r.before), err(after, r.after));
    assert!(
        (-15.0..0.0).contains(&eb) && (0.0..=15.0).contains(&ea),
        "SPREAD_RATE_64: errors {eb:+.1} % (6.6), {ea:+.1} % (6.8)"
    );
    let (b_end, a_end) = (tail(r, Kernel::V6_6), tail(r, Kernel::V6_8));
    assert!(
        b_end.physc > 39.5 && b_end.busy_vps == 40.0,
        "SPREAD_RATE_64: 6.6 not at its full spread: {b_end:?}"
    );
    assert!(
        (a_end.physc - 32.0).abs() < 0.5,
        "SPREAD_RATE_64: 6.8 not at one thread per SMT4 core: {a_end:?}"
    );
}
