//! The public record's derived figures against the log stamps they were
//! derived from.
//!
//! - Every derived figure (`per_cpu_s`, `before_s`/`after_s` given with
//!   their window stamps, `ap_side_s` given with its stamp pairs) is
//!   recomputed here from the stamps, reading the file as plain TOML rather
//!   than through `sim::record`, so a fault in the record's own checks cannot
//!   hide a wrong figure.
//! - Moving one stamp of any row makes `sim::record::parse` refuse the file
//!   with an error naming that row: no derived figure is left unchecked.
//! - Each new rule (window stamps, AP stamp pairs, finite stamps, the
//!   powerpc arch) rejects the row that breaks it, by name.
//! - The LKP Cascade Lake row's console characters per CPU are recounted
//!   from the log's formats.

mod common;
use common::{float, floats, rows};
use sim::record::{self, RECORD_TOML};
use toml::{Table, Value};

/// How far a stated figure may be from what its stamps give: the file writes
/// derived figures to at least four significant digits.
const TOLERANCE: f64 = 1e-3;

fn id(row: &Table) -> &str {
    row["id"].as_str().unwrap()
}

fn agrees(stated: f64, derived: f64) -> bool {
    (stated / derived - 1.0).abs() <= TOLERANCE
}

/// What each derived figure of `row` should be, from its stamps:
/// (field, stated, derived).
fn derived(row: &Table) -> Vec<(&'static str, f64, f64)> {
    let mut out = Vec::new();
    if let Some(stated) = row.get("per_cpu_s").map(float) {
        let stamps = floats(row, "stamps");
        let gaps = row
            .get("intervals")
            .map(float)
            .unwrap_or((stamps.len() - 1) as f64);
        let span = stamps[stamps.len() - 1] - stamps[0];
        out.push(("per_cpu_s", stated, span / gaps));
    }
    for (figure, key) in [("before_s", "before_stamps"), ("after_s", "after_stamps")] {
        let stamps = floats(row, key);
        if !stamps.is_empty() {
            let stated = float(&row[figure]);
            out.push((figure, stated, stamps[1] - stamps[0]));
        }
    }
    if let Some(Value::Array(pairs)) = row.get("ap_stamps") {
        let sum: f64 = pairs
            .iter()
            .map(|p| {
                let p = p.as_array().unwrap();
                float(&p[1]) - float(&p[0])
            })
            .sum();
        let stated = float(&row["ap_side_s"]);
        out.push(("ap_side_s", stated, sum / pairs.len() as f64));
    }
    out
}

#[test]
fn every_derived_figure_is_what_its_stamps_give() {
    let rows = rows();
    let mut checked = 0;
    let mut wrong = Vec::new();
    for row in &rows {
        // A figure with stamps must be recomputed here; one without any
        // stamps is a published figure, not a derived one.
        if row.contains_key("per_cpu_s") {
            assert!(floats(row, "stamps").len() >= 2, "{}", id(row));
        }
        for (field, stated, derived) in derived(row) {
            checked += 1;
            if !agrees(stated, derived) {
                wrong.push(format!(
                    "{} {field}: {stated} but the stamps give {derived:.9}",
                    id(row)
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    // Per-CPU rows of x86, arm64 and powerpc, window pairs and AP stamps.
    assert!(checked >= 45, "only {checked} derived figures");
    for arch in ["x86_64", "arm64", "powerpc"] {
        assert!(
            rows.iter()
                .any(|r| r["arch"].as_str() == Some(arch) && !derived(r).is_empty()),
            "no derived figure for {arch}"
        );
    }
}

/// The byte range of `key = ...` (one line) inside the row with this id.
fn line_of(text: &str, row_id: &str, key: &str) -> Option<(usize, usize)> {
    let start = text.find(&format!("\nid = \"{row_id}\"\n"))?;
    let end = text[start + 1..]
        .find("\n[[row]]")
        .map_or(text.len(), |e| start + 1 + e);
    let at = start + text[start..end].find(&format!("\n{key} = "))? + 1;
    let eol = at + text[at..].find('\n')?;
    Some((at, eol))
}

/// The record with the last stamp of `key` in row `row_id` moved so that the
/// figure derived from it doubles.
fn with_moved_stamp(row_id: &str, key: &str, row: &Table) -> String {
    let (at, eol) = line_of(RECORD_TOML, row_id, key).unwrap();
    let new_line = match key {
        "ap_stamps" => {
            let Value::Array(pairs) = &row[key] else {
                unreachable!()
            };
            let pairs: Vec<[f64; 2]> = pairs
                .iter()
                .map(|p| {
                    let p = p.as_array().unwrap();
                    [float(&p[0]), float(&p[1])]
                })
                .collect();
            let sum: f64 = pairs.iter().map(|[d, b]| b - d).sum();
            let last = pairs.len() - 1;
            let text: Vec<String> = pairs
                .iter()
                .enumerate()
                .map(|(i, [d, b])| {
                    let b = if i == last { b + sum } else { *b };
                    format!("[{d:?}, {b:?}]")
                })
                .collect();
            format!("{key} = [{}]", text.join(", "))
        }
        _ => {
            let mut stamps = floats(row, key);
            let last = stamps.len() - 1;
            stamps[last] += stamps[last] - stamps[0];
            let text: Vec<String> = stamps.iter().map(|s| format!("{s:?}")).collect();
            format!("{key} = [{}]", text.join(", "))
        }
    };
    format!("{}{new_line}{}", &RECORD_TOML[..at], &RECORD_TOML[eol..])
}

#[test]
fn moving_any_stamp_is_refused_naming_the_row() {
    record::parse(RECORD_TOML).unwrap();
    let mut moved = 0;
    for row in rows() {
        for key in ["stamps", "before_stamps", "after_stamps", "ap_stamps"] {
            if !row.contains_key(key) {
                continue;
            }
            let text = with_moved_stamp(id(&row), key, &row);
            let e = record::parse(&text).unwrap_err().to_string();
            assert!(
                e.contains(&format!("'{}'", id(&row))) && e.contains("stamps give"),
                "{} {key}: {e}",
                id(&row)
            );
            moved += 1;
        }
    }
    assert!(moved >= 45, "only {moved} stamp lists");
}

#[test]
fn the_stamp_rules_reject_the_row_that_breaks_them() {
    let kunpeng = "arm64-kunpeng920-128";
    let p9 = "powerpc-p9-160-powernv";
    let cases: [(&str, &str, &str, &str); 6] = [
        (
            p9,
            "before_stamps",
            "before_stamps = [0.099347, 0.2, 0.832513]",
            "not a start and an end",
        ),
        (
            p9,
            "after_stamps",
            "after_stamps = [0.528457, 0.097232]",
            "not increasing",
        ),
        (
            p9,
            "before_stamps",
            "before_stamps = [nan, 0.832513]",
            "not finite",
        ),
        (
            p9,
            "arch",
            "arch = \"sparc\"",
            "not x86_64, arm64 or powerpc",
        ),
        (
            kunpeng,
            "ap_stamps",
            "ap_stamps = [[0.027673, 0.027609]]",
            "not increasing",
        ),
        (
            kunpeng,
            "ap_stamps",
            "ap_stamps = [[0.027609, inf]]",
            "not finite",
        ),
    ];
    for (row_id, key, replacement, message) in cases {
        let (at, eol) = line_of(RECORD_TOML, row_id, key).unwrap();
        let text = format!("{}{replacement}{}", &RECORD_TOML[..at], &RECORD_TOML[eol..]);
        let e = record::parse(&text).unwrap_err().to_string();
        assert!(
            e.contains(message) && e.contains(&format!("'{row_id}'")),
            "{row_id} {replacement}: {e}"
        );
    }
    // Stamp pairs without the figure they were derived from.
    let (at, eol) = line_of(RECORD_TOML, kunpeng, "ap_side_s").unwrap();
    let text = format!("{}{}", &RECORD_TOML[..at], &RECORD_TOML[eol + 1..]);
    let e = record::parse(&text).unwrap_err().to_string();
    assert!(
        e.contains(kunpeng) && e.contains("without ap_side_s"),
        "{e}"
    );
}

/// The LKP Cascade Lake's console characters per CPU, from the formats its
/// log shows: each CPU's '#N' on a line of its own and the AP's 'masked
/// ExtINT on CPU#N', each with a printk stamp and the 8250 console's \r\n.
#[test]
fn lkp_csl_console_chars_follow_the_formats() {
    let stamp = "[    3.516126] ".len() as f64;
    let crlf = 2.0;
    let digits = |n: u32| n.to_string().len() as f64;
    // announce_cpu()'s '%*s#%d' pads to width - num_digits(cpu), width =
    // num_digits(96) + 1, so every '#N' takes width + 1 characters.
    let hash_n = digits(96) + 2.0;
    let ap_digits = (1..=95).map(digits).sum::<f64>() / 95.0;
    let chars =
        stamp + hash_n + crlf + stamp + "masked ExtINT on CPU#".len() as f64 + ap_digits + crlf;
    let row = rows()
        .into_iter()
        .find(|r| id(r) == "x86-csl-96-lkp")
        .expect("the LKP Cascade Lake row");
    let sim = row["sim"].as_table().expect("its sim spec");
    assert_eq!(sim["console_baud"].as_integer(), Some(115_200));
    let stated = float(&sim["console_chars_per_cpu"]);
    assert!(
        (stated - chars).abs() < 0.05,
        "{stated} stated, {chars} from the formats"
    );
}
