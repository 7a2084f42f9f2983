//! Seed 001's lparstat rows (independent truth: the seed's text) against the
//! engine's predictions. No model constant is fitted to a row. Every row must
//! meet the goal (physc within 15 %, before/after change within 10
//! points) unless it is a listed known miss with a reason — and a listed miss
//! must really miss, by its documented error within `MISS_BAND`, so the list
//! can neither hide a row that has come right nor let one drift unnoticed.
use place::validate::{predict, validate, KNOWN_MISSES, MISS_BAND, SEED_001};
use place::Kernel;

#[test]
fn seed_001_rows_meet_the_goals_or_are_known_misses() {
    let rows = validate(&mut |_| {}).expect("validate");
    assert_eq!(rows.len(), 18);
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

/// The limitation `WINDOW_NOTE` documents: the 768-CPU 128-thread 6.6 row
/// meets the goal at the 30-s window only. Run for 60 virtual s the model has
/// spread the threads over more big cores than the seed's 200-s run ever
/// used, and misses by more than the goal's 15 %. Should the model gain what
/// keeps the real kernel's threads near the parent's node, this fails and the
/// note (and the known misses) need rewriting.
#[test]
fn the_768_cpu_agreement_depends_on_the_window() {
    let row = SEED_001
        .iter()
        .find(|r| r.machine == "power10-shared-768" && r.threads == 128)
        .unwrap();
    let physc = predict(row, Kernel::V6_6, 60.0).unwrap().physc;
    assert!(
        physc > 1.15 * row.before,
        "physc {physc:.2} at 60 s against the seed's {}",
        row.before
    );
}
