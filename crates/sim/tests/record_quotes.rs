//! The public record's quoted log lines against the figures derived from
//! them.
//!
//! A row may quote, in its `measured` text and between backticks, the log
//! lines its figures were read from, as the source prints them
//! (`` `[    0.003461] smp: Bringing up secondary CPUs ...` ``). For such a row:
//!
//! - every stamp it lists (`stamps`, `before_stamps`, `after_stamps`,
//!   `ap_stamps`) is the stamp of one of its quoted lines;
//! - the number of CPU bring-ups between its first and last stamp is counted
//!   from the quoted lines themselves ('CPUa: Booted' to 'CPUb: Booted' is
//!   b - a; 'smp: Bringing up secondary CPUs' to 'smp: Brought up ..., M CPUs'
//!   is M - 1; an x86 '.... node  #n, CPUs:    #a' line to it is M - a) and
//!   must be the row's `intervals`, and M its `cpus`;
//! - an `ap_stamps` pair is one CPU's 'Detected ... I-cache on CPUn' and
//!   'CPUn: Booted' lines; a before/after window runs from 'Bringing up' to
//!   'Brought up'.
//!
//! record_stamps.rs checks that each figure is what its stamps give; this
//! checks that the stamps and the CPU count are what the source's lines say,
//! so a wrong `intervals` with a `per_cpu_s` made to agree with it is caught.
//! Every row below the record's marker comment must quote its lines.

mod common;
#[path = "common/quotes.rs"]
mod quotes;
use common::{float, floats, rows};
use quotes::{booted, detected, quoted, Line};
use sim::record::RECORD_TOML;
use toml::{Table, Value};

/// The comment that opens the part of the record whose rows all quote.
const MARKER: &str = "# --- rows whose `measured` quotes the log lines it used";

/// What a quoted line reports.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    /// 'CPUn: Booted secondary processor' (arm64, the AP reporting).
    Booted(u32),
    /// 'Detected ... I-cache on CPUn' (arm64, the AP entering the kernel).
    Detected(u32),
    /// 'smp: Bringing up secondary CPUs ...'.
    BringingUp,
    /// x86 before Linux 6.5: '.... node  #n, CPUs:    #a ...', printed as
    /// the boot CPU starts CPU a, the first of the line.
    NodeLine(u32),
    /// 'smp: Brought up N nodes, M CPUs'.
    BroughtUp(u32),
    /// Anything else (quoted for context).
    Other,
}

fn kind(text: &str) -> Kind {
    if let Some(n) = booted(text) {
        return Kind::Booted(n);
    }
    if let Some(n) = detected(text) {
        return Kind::Detected(n);
    }
    if text.starts_with("smp: Bringing up secondary CPUs") {
        return Kind::BringingUp;
    }
    if text.starts_with(".... node") {
        if let Some((_, cpus)) = text.split_once("CPUs:") {
            if let Some(a) = cpus.trim_start().strip_prefix('#') {
                let end = a.find(|c: char| !c.is_ascii_digit()).unwrap_or(a.len());
                if let Ok(a) = a[..end].parse() {
                    return Kind::NodeLine(a);
                }
            }
        }
    }
    if let Some(rest) = text.strip_prefix("smp: Brought up ") {
        if let Some(count) = rest.strip_suffix(" CPUs") {
            if let Some(m) = count.rsplit(' ').next().and_then(|m| m.parse().ok()) {
                return Kind::BroughtUp(m);
            }
        }
    }
    Kind::Other
}

/// The quoted line with this stamp.
fn line_at(lines: &[Line], stamp: f64) -> Result<&Line, String> {
    lines
        .iter()
        .find(|l| l.stamp == stamp)
        .ok_or_else(|| format!("stamp {stamp} is not the stamp of a quoted line"))
}

/// How many CPU bring-ups lie between two quoted lines, from their text.
fn bring_ups(first: &Line, last: &Line) -> Result<u32, String> {
    match (kind(&first.text), kind(&last.text)) {
        (Kind::Booted(a), Kind::Booted(b)) if b > a => Ok(b - a),
        (Kind::BringingUp, Kind::BroughtUp(m)) if m > 0 => Ok(m - 1),
        // CPUs a, a + 1, ..., m - 1 are brought up after the node line.
        (Kind::NodeLine(a), Kind::BroughtUp(m)) if m > a => Ok(m - a),
        _ => Err(format!(
            "'{}' -> '{}' is not a window whose CPUs the lines count",
            first.text, last.text
        )),
    }
}

/// Every rule of the module docs, for one row that quotes its lines.
fn check(row: &Table) -> Result<(), String> {
    let lines = quoted(row["measured"].as_str().unwrap())?;
    if lines.is_empty() {
        return Err("quotes no log line".to_string());
    }
    let stamps = floats(row, "stamps");
    if !stamps.is_empty() {
        let at: Vec<&Line> = stamps
            .iter()
            .map(|&s| line_at(&lines, s))
            .collect::<Result<_, _>>()?;
        let counted = bring_ups(at[0], at[at.len() - 1])?;
        let stated = match row.get("intervals") {
            Some(v) => float(v) as u32,
            None => {
                // One gap per listed stamp: each must be the next CPU's line.
                for pair in at.windows(2) {
                    bring_ups(pair[0], pair[1])
                        .ok()
                        .filter(|&n| n == 1)
                        .ok_or_else(|| {
                            format!(
                                "'{}' -> '{}' is not one CPU's bring-up",
                                pair[0].text, pair[1].text
                            )
                        })?;
                }
                (stamps.len() - 1) as u32
            }
        };
        if counted != stated {
            return Err(format!(
                "the quoted lines hold {counted} bring-ups, the row says {stated}"
            ));
        }
        if let Kind::BroughtUp(m) = kind(&at[at.len() - 1].text) {
            let cpus = float(&row["cpus"]) as u32;
            if cpus != 0 && cpus != m {
                return Err(format!("the log brought up {m} CPUs, the row says {cpus}"));
            }
        }
    }
    for key in ["before_stamps", "after_stamps"] {
        let window = floats(row, key);
        if window.is_empty() {
            continue;
        }
        let (start, end) = (line_at(&lines, window[0])?, line_at(&lines, window[1])?);
        if !matches!(
            (kind(&start.text), kind(&end.text)),
            (Kind::BringingUp, Kind::BroughtUp(_))
        ) {
            return Err(format!(
                "{key} are not a 'Bringing up' -> 'Brought up' window"
            ));
        }
    }
    if let Some(Value::Array(pairs)) = row.get("ap_stamps") {
        for pair in pairs {
            let pair = pair.as_array().unwrap();
            let detected = line_at(&lines, float(&pair[0]))?;
            let booted = line_at(&lines, float(&pair[1]))?;
            match (kind(&detected.text), kind(&booted.text)) {
                (Kind::Detected(d), Kind::Booted(b)) if d == b => {}
                _ => {
                    return Err(format!(
                        "ap_stamps pair '{}' -> '{}' is not one CPU's 'Detected' and 'Booted'",
                        detected.text, booted.text
                    ))
                }
            }
        }
    }
    Ok(())
}

/// The ids of the rows below the marker comment.
fn marked_ids() -> Vec<String> {
    let at = RECORD_TOML
        .find(MARKER)
        .expect("the record's marker comment");
    RECORD_TOML[at..]
        .lines()
        .filter_map(|l| l.strip_prefix("id = \""))
        .map(|id| id.trim_end_matches('"').to_string())
        .collect()
}

#[test]
fn quoted_lines_give_every_stamp_and_the_cpu_count() {
    let marked = marked_ids();
    let mut checked = 0;
    let mut wrong = Vec::new();
    for row in rows() {
        let id = row["id"].as_str().unwrap().to_string();
        let measured = row["measured"].as_str().unwrap();
        if !measured.contains('`') && !marked.contains(&id) {
            continue;
        }
        checked += 1;
        if let Err(e) = check(&row) {
            wrong.push(format!("{id}: {e}"));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    assert!(
        marked.len() >= 4,
        "only {} rows below the marker",
        marked.len()
    );
    assert!(checked >= marked.len(), "{checked} rows checked");
}

/// Each rule refuses the row that breaks it, on a copy of a real row.
#[test]
fn each_rule_refuses_a_row_that_breaks_it() {
    let rows = rows();
    let get = |id: &str| {
        rows.iter()
            .find(|r| r["id"].as_str() == Some(id))
            .unwrap_or_else(|| panic!("row {id}"))
            .clone()
    };
    let tx2 = get("arm64-thunderx2-255-debug");
    let p10 = get("powerpc-p10-lpar-32-2022");
    let a55 = get("arm64-a55-4");
    check(&tx2).unwrap();
    check(&p10).unwrap();
    check(&a55).unwrap();
    let with = |row: &Table, key: &str, value: Value| {
        let mut row = row.clone();
        row.insert(key.to_string(), value);
        row
    };
    let floats = |v: &[f64]| Value::Array(v.iter().map(|&f| Value::Float(f)).collect());
    let cases: Vec<(Table, &str)> = vec![
        // One interval fewer than the lines hold, per_cpu_s aside.
        (
            with(&tx2, "intervals", Value::Integer(252)),
            "the quoted lines hold 253 bring-ups, the row says 252",
        ),
        (
            with(&p10, "intervals", Value::Integer(32)),
            "the quoted lines hold 31 bring-ups, the row says 32",
        ),
        (
            with(&p10, "cpus", Value::Integer(31)),
            "the log brought up 32 CPUs, the row says 31",
        ),
        // A stamp no quoted line carries.
        (
            with(&tx2, "stamps", floats(&[0.124654, 29.137738])),
            "stamp 29.137738 is not the stamp of a quoted line",
        ),
        // A window from an AP's line to the boot CPU's.
        (
            with(&tx2, "stamps", floats(&[0.124561, 29.137737])),
            "is not a window whose CPUs the lines count",
        ),
        // Listed stamps skipping a CPU.
        (
            with(&a55, "stamps", floats(&[0.014688, 0.015997])),
            "is not one CPU's bring-up",
        ),
        (
            with(
                &a55,
                "ap_stamps",
                Value::Array(vec![floats(&[0.014608, 0.015352])]),
            ),
            "is not one CPU's 'Detected' and 'Booted'",
        ),
        (
            with(&p10, "before_stamps", floats(&[0.010771, 0.003221])),
            "are not a 'Bringing up' -> 'Brought up' window",
        ),
        (
            with(
                &p10,
                "measured",
                Value::String("`[    0.003221] smp: Bringing up".to_string()),
            ),
            "an unpaired backtick",
        ),
        (
            with(
                &p10,
                "measured",
                Value::String("`smp: Brought up 1 node, 32 CPUs`".to_string()),
            ),
            "is not a stamped log line",
        ),
    ];
    for (row, message) in cases {
        let e = check(&row).expect_err(message);
        assert!(e.contains(message), "{message}: {e}");
    }
}

#[test]
fn line_kinds_follow_the_kernels_formats() {
    // arch/arm64/kernel/smp.c: "CPU%u: Booted secondary processor 0x%010lx [0x%08x]".
    assert_eq!(
        kind("CPU254: Booted secondary processor 0x0000011e03 [0x431f0af1]"),
        Kind::Booted(254)
    );
    // arch/arm64/kernel/cpuinfo.c: "Detected %s I-cache on CPU%d".
    assert_eq!(kind("Detected PIPT I-cache on CPU1"), Kind::Detected(1));
    assert_eq!(kind("Detected VIPT I-cache on CPU12"), Kind::Detected(12));
    // kernel/smp.c: "Bringing up secondary CPUs ..." and
    // "Brought up %d node%s, %d CPU%s" (pr_fmt "smp: ").
    assert_eq!(
        kind("smp: Bringing up secondary CPUs ..."),
        Kind::BringingUp
    );
    assert_eq!(
        kind("smp: Brought up 2 nodes, 255 CPUs"),
        Kind::BroughtUp(255)
    );
    // arch/x86/kernel/smpboot.c announce_cpu(): ".... node %*s#%d, CPUs:  "
    // before the first CPU of each node, then "%*s#%d" per CPU.
    assert_eq!(
        kind(".... node  #2, CPUs:    #48  #49  #50"),
        Kind::NodeLine(48)
    );
    assert_eq!(kind(".... node  #0, CPUs:        #1"), Kind::NodeLine(1));
    assert_eq!(kind("GICv3: CPU1: found redistributor 100"), Kind::Other);
    assert_eq!(kind("CPU1: Booted"), Kind::Other);
}
