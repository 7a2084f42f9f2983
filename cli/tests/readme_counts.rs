//! The README's line for `manycore validate` states how many rows are fitted
//! and predicted, on how many machines, and how many predictions fall within
//! the 25 % goal. Those counts change whenever the record or the model does,
//! so they are taken from the command's own JSON here rather than trusted.
use std::collections::BTreeSet;
use std::process::Command;

fn validate_json() -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_manycore"))
        .args(["validate", "--format", "json", "--quiet"])
        .output()
        .expect("run manycore validate");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("validate's JSON")
}

/// Rows of `list` whose `kind` is `kind`.
fn of_kind<'a>(list: &'a serde_json::Value, kind: &str) -> Vec<&'a serde_json::Value> {
    list.as_array()
        .expect("an array")
        .iter()
        .filter(|r| r["kind"] == kind)
        .collect()
}

fn machines(rows: &[&serde_json::Value]) -> usize {
    rows.iter()
        .map(|r| r["machine"].as_str().expect("machine"))
        .collect::<BTreeSet<_>>()
        .len()
}

#[test]
fn readme_validate_counts_are_current() {
    let v = validate_json();
    let (fit, predict) = (of_kind(&v["rows"], "fit"), of_kind(&v["rows"], "predict"));
    let within = predict
        .iter()
        .filter(|r| r["error_pct"].as_f64().expect("error_pct").abs() <= 25.0)
        .count();
    let bring_up = format!(
        "{} rows fitted on {} machines, {} predicted on {}, {within} of them within 25 %",
        fit.len(),
        machines(&fit),
        predict.len(),
        machines(&predict),
    );
    let placement = format!(
        "seed 001's lparstat rows: {} fitted, {} predicted",
        of_kind(&v["placement"], "fit").len(),
        of_kind(&v["placement"], "predict").len(),
    );
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("README.md");
    let line = readme
        .lines()
        .find(|l| l.starts_with("$M validate "))
        .expect("README has a `$M validate` line");
    for want in [&bring_up, &placement] {
        assert!(
            line.contains(want.as_str()),
            "README's validate line should say \"{want}\"; it says:\n{line}"
        );
    }
}
