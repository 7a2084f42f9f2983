//! The record's statements about each kernel's tick rate and preemption
//! model against the quoted text they rest on.
//!
//! A row's `sim.hz` sets how long the model's jiffies last (a delay
//! calibration on x86, the one-jiffy kthread waits of a preemptible arm64
//! kernel before Linux 5.7), so it must rest on a quoted source:
//!
//! - a configuration line `CONFIG_HZ=<n>` quoted between backticks in the
//!   row's `kernel` text, whose text also names the file by an https URL at a
//!   full 40-hex commit, so anyone can read the line there; or
//! - the kernel's own line for its jiffies clocksource, quoted from the
//!   row's log in `kernel` or `measured` (`clocksource: jiffies: mask:
//!   0xffffffff max_cycles: 0xffffffff, max_idle_ns: N ns`, or x86's
//!   `refined-jiffies`): N depends on HZ alone, and this test recomputes it
//!   from Linux's clocksource code for every HZ from 24 to 10000 and takes
//!   the one that prints N.
//!
//! Where several are quoted they agree with each other and with `sim.hz`.
//! A row simulated as a preemptible kernel before Linux 5.7 (`sim.linux =
//! "preempt-pre-5.7"`) states its HZ so, and quotes nothing that says its
//! kernel was not preemptible. Which of those rows also quote their
//! preemption model is checked against a list, so that a row whose
//! preemption becomes sourced, or a new row without a source, shows here.

// Each test binary uses only part of the shared helpers.
#[allow(dead_code)]
mod common;
use common::rows;
use toml::{Table, Value};

/// Linux's `NSEC_PER_SEC`.
const NSEC_PER_SEC: u64 = 1_000_000_000;

/// x86's `CLOCK_TICK_RATE` (`PIT_TICK_RATE`, include/linux/timex.h), which
/// arch/x86/kernel/setup.c hands to `register_refined_jiffies()`.
const PIT_TICK_RATE: u64 = 1_193_182;

/// The HZ values searched: `sim.hz`'s accepted range in `sim::record`.
const HZ_RANGE: std::ops::RangeInclusive<u64> = 24..=10_000;

/// `JIFFIES_SHIFT` (kernel/time/jiffies.c): the largest shift that keeps
/// `TICK_NSEC << shift` in 32 bits at that HZ.
fn jiffies_shift(hz: u64) -> u32 {
    if hz < 34 {
        6
    } else if hz < 67 {
        7
    } else {
        8
    }
}

/// `max_idle_ns` as `clocksource_update_max_deferment()` computes it for a
/// 32-bit jiffies clocksource of this `mult` and `shift`
/// (kernel/time/clocksource.c): `maxadj` is 11 % of `mult`
/// (`clocksource_max_adjustment()`), `clocks_calc_max_nsecs()` takes the
/// cycles that neither overflow 64 bits at `mult + maxadj` nor exceed the
/// mask, converts them at `mult - maxadj`, and halves the result.
fn max_idle_ns(mult: u64, shift: u32) -> u64 {
    let maxadj = mult * 11 / 100;
    let max_cycles = (u64::MAX / (mult + maxadj)).min(0xffff_ffff);
    ((max_cycles * (mult - maxadj)) >> shift) >> 1
}

/// The `jiffies` clocksource's `max_idle_ns` at `hz`: its `mult` is
/// `TICK_NSEC << JIFFIES_SHIFT`, `TICK_NSEC` being `NSEC_PER_SEC / HZ`
/// rounded (include/vdso/jiffies.h, formerly include/linux/jiffies.h).
fn jiffies_max_idle_ns(hz: u64) -> u64 {
    let tick_nsec = (NSEC_PER_SEC + hz / 2) / hz;
    max_idle_ns(tick_nsec << jiffies_shift(hz), jiffies_shift(hz))
}

/// x86's `refined-jiffies` clocksource's `max_idle_ns` at `hz`:
/// `register_refined_jiffies(CLOCK_TICK_RATE)` (kernel/time/jiffies.c)
/// derives the tick's nanoseconds from the PIT's rate, in 1/256 Hz.
fn refined_jiffies_max_idle_ns(hz: u64) -> u64 {
    let cycles_per_tick = (PIT_TICK_RATE + hz / 2) / hz;
    let shift_hz = ((PIT_TICK_RATE << 8) + cycles_per_tick / 2) / cycles_per_tick;
    let nsec_per_tick = ((NSEC_PER_SEC << 8) + shift_hz / 2) / shift_hz;
    max_idle_ns(nsec_per_tick << jiffies_shift(hz), jiffies_shift(hz))
}

/// The backtick-delimited spans of a text.
fn spans(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// A string field of a table, empty when absent.
fn text<'a>(table: &'a Table, key: &str) -> &'a str {
    table.get(key).and_then(Value::as_str).unwrap_or("")
}

/// The HZ a quoted jiffies clocksource line prints, if the span is one.
fn hz_of_clocksource_line(span: &str) -> Option<Result<u64, String>> {
    let line = span.split_once("] ").map_or(span, |(_, rest)| rest);
    let (name, rest) = line
        .strip_prefix("clocksource: ")?
        .split_once(": mask: 0xffffffff max_cycles: 0xffffffff, max_idle_ns: ")?;
    let formula: fn(u64) -> u64 = match name {
        "jiffies" => jiffies_max_idle_ns,
        "refined-jiffies" => refined_jiffies_max_idle_ns,
        _ => return None,
    };
    let printed = rest.strip_suffix(" ns").and_then(|n| n.parse::<u64>().ok());
    Some(match printed {
        None => Err(format!("'{line}' does not end in a nanosecond count")),
        Some(ns) => HZ_RANGE
            .clone()
            .find(|&hz| formula(hz) == ns)
            .ok_or_else(|| format!("no HZ from 24 to 10000 prints '{line}'")),
    })
}

/// The HZ values a row's quotes state, each with where it was read.
fn stated_hz(row: &Table) -> Result<Vec<(u64, String)>, String> {
    let mut out = Vec::new();
    for span in spans(text(row, "kernel")) {
        if let Some(n) = span.strip_prefix("CONFIG_HZ=") {
            let hz = n
                .parse()
                .map_err(|_| format!("'{span}' is not a CONFIG_HZ line"))?;
            out.push((hz, format!("`{span}`")));
        }
    }
    let kernel_and_log = spans(text(row, "kernel")).into_iter();
    for span in kernel_and_log.chain(spans(text(row, "measured"))) {
        if let Some(hz) = hz_of_clocksource_line(span) {
            out.push((hz?, "its jiffies clocksource line".to_string()));
        }
    }
    Ok(out)
}

/// Whether a text names a file by an https URL at a full commit hash.
fn names_a_commit(text: &str) -> bool {
    text.split_whitespace()
        .filter(|word| word.contains("https://"))
        .any(|url| {
            url.split(['/', '?', '=', '&'])
                .any(|part| part.len() == 40 && part.chars().all(|c| c.is_ascii_hexdigit()))
        })
}

/// Quotes that state the kernel was not preemptible.
const NOT_PREEMPTIBLE: [&str; 3] = [
    "# CONFIG_PREEMPT is not set",
    "CONFIG_PREEMPT_NONE=y",
    "CONFIG_PREEMPT_VOLUNTARY=y",
];

/// Whether the row quotes a preemptible kernel: a `CONFIG_PREEMPT=y`
/// configuration line, its own 'Linux version' line with 'SMP PREEMPT', or
/// RCU's boot line for a preemptible kernel (kernel/rcu prints it only under
/// CONFIG_PREEMPT_RCU, which CONFIG_PREEMPT selects).
fn quotes_preemption(row: &Table) -> bool {
    let kernel = text(row, "kernel");
    spans(kernel).contains(&"CONFIG_PREEMPT=y")
        || kernel.contains(" SMP PREEMPT ")
        || spans(text(row, "measured"))
            .iter()
            .any(|s| s.ends_with("Preemptible hierarchical RCU implementation."))
}

/// Every rule of the module docs, for one row; `Ok(true)` when the row is
/// simulated as a preemptible pre-5.7 kernel and quotes its preemption.
fn check(row: &Table) -> Result<bool, String> {
    let stated = stated_hz(row)?;
    if let Some((first, from)) = stated.first() {
        if let Some((hz, other)) = stated.iter().find(|(hz, _)| hz != first) {
            return Err(format!("{from} gives HZ={first}, {other} HZ={hz}"));
        }
    }
    let config_quoted = spans(text(row, "kernel"))
        .iter()
        .any(|s| s.starts_with("CONFIG_") || s.starts_with("# CONFIG_"));
    if config_quoted && !names_a_commit(text(row, "kernel")) {
        return Err("quotes configuration lines without a URL at a commit".to_string());
    }
    let Some(sim) = row.get("sim").and_then(Value::as_table) else {
        return Ok(false);
    };
    let hz = sim.get("hz").and_then(Value::as_integer);
    match (hz, stated.first()) {
        (Some(hz), Some((stated, from))) if hz as u64 != *stated => {
            return Err(format!("sim.hz = {hz}, but {from} gives HZ={stated}"));
        }
        (Some(hz), None) => {
            return Err(format!("sim.hz = {hz} rests on no quoted line"));
        }
        _ => {}
    }
    if text(sim, "linux") != "preempt-pre-5.7" {
        return Ok(false);
    }
    if hz.is_none() {
        return Err("a preemptible pre-5.7 kernel without its HZ (sim.hz)".to_string());
    }
    if let Some(q) = spans(text(row, "kernel"))
        .into_iter()
        .find(|s| NOT_PREEMPTIBLE.contains(s))
    {
        return Err(format!("simulated as preemptible, but quotes `{q}`"));
    }
    Ok(quotes_preemption(row))
}

/// The preemptible pre-5.7 rows whose preemption model no quoted line
/// states: the Allwinner H5's HassOS build takes arm64's own defconfig of
/// 4.18.20 (its board config is quoted in the row), and that defconfig was
/// not read.
const PREEMPTION_NOT_QUOTED: &[&str] = &["arm64-h5-4"];

#[test]
fn every_hz_and_preemption_rests_on_a_quoted_line() {
    let mut wrong = Vec::new();
    let mut unquoted = Vec::new();
    let mut with_hz = 0;
    for row in rows() {
        let id = text(&row, "id").to_string();
        let sim = row.get("sim").and_then(Value::as_table);
        with_hz += usize::from(sim.is_some_and(|s| s.contains_key("hz")));
        match check(&row) {
            Err(e) => wrong.push(format!("{id}: {e}")),
            Ok(false) if sim.is_some_and(|s| text(s, "linux") == "preempt-pre-5.7") => {
                unquoted.push(id)
            }
            Ok(_) => {}
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    assert_eq!(unquoted, PREEMPTION_NOT_QUOTED);
    assert!(with_hz >= 5, "only {with_hz} rows state their HZ");
}

/// Linux's formulas against kernels whose HZ their published configuration
/// states, each printing the line in a log of its own:
/// - WSL2's kernel, `CONFIG_HZ=100` in Microsoft/config-wsl (the record's
///   x86-wsl2-ryzen-6 row), prints 'clocksource: refined-jiffies: mask:
///   0xffffffff max_cycles: 0xffffffff, max_idle_ns: 19112604462750000 ns'
///   (https://github.com/microsoft/WSL/issues/9313);
/// - LKP's kernels built with its x86_64-rhel-8.3 kconfig (RHEL 8's HZ=1000)
///   print 'max_idle_ns: 1910969940391419 ns' for refined-jiffies (the
///   record's x86-csl-96-lkp log).
///
/// and the HZ each printed value gives back is the one and only.
#[test]
fn jiffies_formulas_reproduce_printed_values() {
    assert_eq!(refined_jiffies_max_idle_ns(100), 19_112_604_462_750_000);
    assert_eq!(refined_jiffies_max_idle_ns(1000), 1_910_969_940_391_419);
    // At HZ=100 the PIT's rate gives exactly 10 ms a tick, so both
    // clocksources print the same value.
    assert_eq!(jiffies_max_idle_ns(100), 19_112_604_462_750_000);
    for hz in [100, 250, 300, 1000] {
        let line = format!(
            "clocksource: jiffies: mask: 0xffffffff max_cycles: 0xffffffff, max_idle_ns: {} ns",
            jiffies_max_idle_ns(hz)
        );
        assert_eq!(hz_of_clocksource_line(&line), Some(Ok(hz)), "{line}");
        let refined = line.replace("jiffies:", "refined-jiffies:").replace(
            &jiffies_max_idle_ns(hz).to_string(),
            &refined_jiffies_max_idle_ns(hz).to_string(),
        );
        assert_eq!(hz_of_clocksource_line(&refined), Some(Ok(hz)), "{refined}");
    }
    // The value is unique: no two HZ print the same.
    let mut seen: Vec<u64> = HZ_RANGE.map(jiffies_max_idle_ns).collect();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen.len(), HZ_RANGE.count());
}

/// Each rule refuses a copy of a real row that breaks it.
#[test]
fn each_rule_refuses_a_row_that_breaks_it() {
    let rows = rows();
    let get = |id: &str| {
        rows.iter()
            .find(|r| text(r, "id") == id)
            .unwrap_or_else(|| panic!("row {id}"))
            .clone()
    };
    let h5 = get("arm64-h5-4");
    let pinebook = get("arm64-rk3399-6-armbian-5.6");
    assert_eq!(check(&h5), Ok(false));
    assert_eq!(check(&pinebook), Ok(true));
    let edit = |row: &Table, key: &str, from: &str, to: &str| {
        let mut row = row.clone();
        let old = text(&row, key).to_string();
        assert!(old.contains(from), "{key} lacks {from}");
        row.insert(key.to_string(), Value::String(old.replacen(from, to, 1)));
        row
    };
    let with_sim = |row: &Table, from: &str, to: &str| {
        let mut row = row.clone();
        let mut sim = row["sim"].as_table().unwrap().clone();
        match to {
            "" => sim.remove(from),
            _ => sim.insert(
                from.to_string(),
                toml::from_str::<Table>(to).unwrap()["v"].clone(),
            ),
        };
        row.insert("sim".to_string(), Value::Table(sim));
        row
    };
    let cases: Vec<(Table, &str)> = vec![
        (
            edit(&pinebook, "kernel", "`CONFIG_HZ=250`", "`CONFIG_HZ=300`"),
            "sim.hz = 250, but `CONFIG_HZ=300` gives HZ=300",
        ),
        (
            edit(&h5, "measured", "7645041785100000", "7645041785100001"),
            "no HZ from 24 to 10000 prints",
        ),
        (
            edit(&h5, "measured", "7645041785100000", "1911260446275000"),
            "sim.hz = 250, but its jiffies clocksource line gives HZ=1000",
        ),
        (with_sim(&h5, "hz", ""), "without its HZ"),
        (
            with_sim(&get("x86-hyperv-32"), "hz", "v = 250"),
            "sim.hz = 250 rests on no quoted line",
        ),
        (
            edit(
                &pinebook,
                "kernel",
                "`CONFIG_PREEMPT=y`",
                "`# CONFIG_PREEMPT is not set`",
            ),
            "quotes `# CONFIG_PREEMPT is not set`",
        ),
        (
            edit(
                &pinebook,
                "kernel",
                "d230c3d15db200e81ddb3149f4a46198be2d9d20",
                "master",
            ),
            "without a URL at a commit",
        ),
        (
            edit(&pinebook, "kernel", "`CONFIG_HZ_250=y`", "`CONFIG_HZ=1000`"),
            "`CONFIG_HZ=1000` gives HZ=1000, `CONFIG_HZ=250` HZ=250",
        ),
    ];
    for (row, message) in cases {
        let e = check(&row).expect_err(message);
        assert!(e.contains(message), "{message}: {e}");
    }
    // Preemption quoted by the kernel's own version line alone.
    let rocpc = edit(
        &get("arm64-rk3399-6-rocpc-5.4"),
        "kernel",
        "`CONFIG_PREEMPT=y`",
        "`CONFIG_PREEMPTION=y`",
    );
    assert_eq!(check(&rocpc), Ok(true));
    let stripped = edit(&rocpc, "kernel", " SMP PREEMPT ", " SMP ");
    assert_eq!(check(&stripped), Ok(false));
}
