//! Seed 002's `lpj=` run (75 s, from the mail's prose) is a known miss; its
//! reason (`sim::validate::known_miss("002 x86-uv-4096 lpj=")`) says what
//! the model does with it and why the prose's figure is on another footing
//! than the logs'. These checks hold each claim against the model and the
//! mail's text (`shared/seeds/002_*.txt` beside the repository), so the reason cannot drift
//! from either.
use sim::fit::{SEED_002, SEED_002_UV_LPJ_S};
use sim::machines::SeedMachine;
use sim::validate::{known_miss, validate, Row};
use sim::{CostTable, Platform, Source};

fn seed_002() -> String {
    readers::corpus::seed_text(env!("CARGO_MANIFEST_DIR"), "002_")
}

/// The numbers written before " seconds" in the mail's paragraph about
/// `lpj=`, in order (a line break may stand for the space).
fn prose_seconds(text: &str) -> Vec<f64> {
    let paragraph = text
        .split("\n\n")
        .find(|p| p.contains("lpj="))
        .expect("the mail's paragraph about lpj=");
    let words: Vec<&str> = paragraph.split_whitespace().collect();
    words
        .windows(2)
        .filter(|w| w[1].starts_with("seconds"))
        .filter_map(|w| w[0].parse().ok())
        .collect()
}

fn row<'a>(rows: &'a [Row], case: &str) -> &'a Row {
    rows.iter()
        .find(|r| r.case == case)
        .unwrap_or_else(|| panic!("no row {case}"))
}

#[test]
fn lpj_reason_holds_in_the_model_and_the_mail() {
    // The mail: 318 s serial, 75 s with lpj=, 61 s with the patch.
    let prose = prose_seconds(&seed_002());
    assert_eq!(prose, [318.0, 75.0, 61.0]);
    assert_eq!(SEED_002_UV_LPJ_S, prose[1]);
    let uv = SEED_002
        .iter()
        .find(|c| c.machine == SeedMachine::X86Uv4096)
        .unwrap();
    let (before_s, after_s) = (uv.before.window_s(), uv.after.window_s());
    // The prose runs longer than the logs' windows, by a second or two.
    let offsets = [prose[0] - before_s, prose[2] - after_s];
    for o in offsets {
        assert!((1.0..2.0).contains(&o), "{offsets:?}");
    }

    let report = validate(&mut |_| {}).unwrap();
    let lpj = row(&report.rows, "002 x86-uv-4096 lpj= (no calibration)");
    let parallel = row(&report.rows, "002 x86-uv-4096 parallel calibration (after)");
    // The model: lpj= skips calibrate_delay(), so it is as fast as the
    // parallel calibration (which never waits for a calibration), one CPU
    // kicked at a time, and 2.6.37 loads no microcode.
    assert!(
        (lpj.predicted_s / parallel.predicted_s - 1.0).abs() < 1e-3,
        "{} {}",
        lpj.predicted_s,
        parallel.predicted_s
    );
    assert!(lpj.strategy.starts_with("kick=serial"), "{}", lpj.strategy);
    let fit = sim::fit::fitted().unwrap();
    let old = CostTable::for_platform(Platform::X86_2010, &fit);
    assert_eq!(old.microcode.ns, 0.0);
    assert!(matches!(old.microcode.source, Source::Code(_)));
    // On the logs' footing the row still misses by more than 25 %.
    let shifted: Vec<f64> = offsets
        .iter()
        .map(|o| 100.0 * (lpj.predicted_s / (prose[1] - o) - 1.0))
        .collect();
    assert!(shifted.iter().all(|e| *e < -25.0), "{shifted:?}");

    let why = known_miss("002 x86-uv-4096 lpj=").unwrap().why;
    let missing: Vec<String> = [
        format!("{:.0} s and {:.0} s for the two runs", prose[0], prose[2]),
        format!("{:.1} s and {:.1} s more", offsets[0], offsets[1]),
        format!("({before_s:.1} s, {after_s:.1} s)"),
        format!(
            "would be {:.1}-{:.1} s",
            prose[1] - offsets[1],
            prose[1] - offsets[0]
        ),
        format!("at {:.0} % to {:.0} %", shifted[0], shifted[1]),
    ]
    .into_iter()
    .filter(|q| !why.contains(q.as_str()))
    .collect();
    assert!(missing.is_empty(), "{missing:#?} not in {why}");
}
