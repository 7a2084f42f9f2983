//! What the arm64 rows that `manycore validate` misses by more than 25 %
//! show in their own quoted log lines, and what those lines rule out. The
//! arm64 reason (`sim::validate::known_miss("rec arm64-")`) quotes the
//! figures computed here.
//!
//! - The AP's own GICv3 work: the redistributor and LPI pending-table lines
//!   it prints between 'Detected ... I-cache' and 'Booted' lie in its AP
//!   side, a small share of each missed row's interval.
//! - A serial console. An AP's lines reach no console while it is not yet
//!   online (kernel/printk: `console_is_usable()`, `can_use_console()`
//!   before Linux 6.1, skips a console without `CON_ANYTIME` on such a
//!   CPU), so a console would send them once it is online, in the gap
//!   between its 'Booted' line and the next CPU's first line. The early
//!   8250 console sends one character at a time and waits for the
//!   transmitter to empty after each (`serial_putc()`,
//!   drivers/tty/serial/8250/8250_early.c): a 10-bit frame a character.
//!   Counted without printk's time stamps (the console may print none) and
//!   at 1,500,000 baud (the fastest rate a log of the record names, the
//!   AM60's earlycon), a CPU's lines take longer than that gap on four of
//!   the missed boards: none of them printed on a serial console then.
//! - The Phytium: its gaps differ threefold between CPUs whose lines differ
//!   by a few characters, so its gap is not its console either.

#[path = "common/quotes.rs"]
mod quotes;

use quotes::{booted, detected, quoted, Line};
use sim::costs::UART_FRAME_BITS;
use sim::record;

/// The fastest console rate a log of the record names (the AM60's earlycon,
/// 'earlycon ... 1500000n8').
const FASTEST_BAUD: f64 = 1_500_000.0;
/// The serial rate of the record's server logs that name one.
const SERVER_BAUD: f64 = 115_200.0;

/// The small boards whose every quoted CPU's lines outlast the gap after them.
const NO_CONSOLE: [&str; 4] = [
    "arm64-a55-4",
    "arm64-amlogic-a53-4",
    "arm64-a76-4-rpi",
    "arm64-rk3399-6-gc18-6.6",
];

/// One CPU's bring-up as a row's quoted lines show it whole.
#[derive(Debug)]
struct Cpu {
    /// The characters a console sends for its lines.
    chars: usize,
    /// From its 'Booted' line to the next CPU's first line, seconds.
    gap_s: f64,
}

/// The characters a console sends for a line: its text without printk's
/// time stamp, and "\r\n" (`uart_console_write()` sends '\r' before '\n').
fn console_chars(line: &Line) -> usize {
    line.text.len() + "\r\n".len()
}

/// Each CPU whose lines are quoted from the line after the previous CPU's
/// 'Booted' (or 'smp: Bringing up') to its own 'Booted', its 'Detected'
/// among them, and whose next line is the next CPU's.
fn cpus(lines: &[Line]) -> Vec<Cpu> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, line) in lines.iter().enumerate() {
        if line.text.starts_with("smp: Bringing up") {
            start = i + 1;
            continue;
        }
        let Some(n) = booted(&line.text) else {
            continue;
        };
        let own = &lines[start..=i];
        let next = lines.get(i + 1).filter(|l| !l.text.starts_with("smp: "));
        if let Some(next) = next.filter(|_| own.iter().any(|l| detected(&l.text) == Some(n))) {
            out.push(Cpu {
                chars: own.iter().map(console_chars).sum(),
                gap_s: next.stamp - line.stamp,
            });
        }
        start = i + 1;
    }
    out
}

/// Milliseconds a console at `baud` takes for `chars` characters.
fn console_ms(chars: usize, baud: f64) -> f64 {
    chars as f64 * UART_FRAME_BITS / baud * 1e3
}

fn row_cpus(id: &str) -> Vec<Cpu> {
    let rows = record::load().unwrap();
    let r = record::row(&rows, id).unwrap();
    let c = cpus(&quoted(&r.measured).unwrap());
    assert!(!c.is_empty(), "{id} quotes no whole CPU");
    c
}

/// (least, most) of `xs`.
fn span(xs: impl Iterator<Item = f64>) -> (f64, f64) {
    xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
        (lo.min(x), hi.max(x))
    })
}

fn why() -> &'static str {
    sim::validate::known_miss("rec arm64-").unwrap().why
}

#[test]
fn the_missed_small_boards_printed_on_no_serial_console() {
    for id in NO_CONSOLE {
        let cpus = row_cpus(id);
        for c in &cpus {
            assert!(
                console_ms(c.chars, FASTEST_BAUD) > c.gap_s * 1e3,
                "{id}: {c:?}"
            );
        }
        let (lines_lo, lines_hi) = span(cpus.iter().map(|c| console_ms(c.chars, FASTEST_BAUD)));
        assert!(lines_hi - lines_lo < 0.005, "{id}: one length of lines");
        let (lo, hi) = span(cpus.iter().map(|c| c.gap_s * 1e3));
        let gaps = if hi - lo < 0.005 {
            format!("{lo:.2} ms")
        } else {
            format!("{lo:.2}-{hi:.2} ms")
        };
        let quoted = format!("{id} {lines_hi:.2} ms against {gaps}");
        assert!(why().contains(&quoted), "{quoted:?} not in the reason");
    }
}

/// On the RK3566 box the lines fit in the gap: the reason says a console at
/// that rate is not ruled out there.
#[test]
fn the_rk3566_gap_leaves_room_for_a_console() {
    let cpus = row_cpus("arm64-rk3566-4-x96");
    for c in &cpus {
        let lines = console_ms(c.chars, FASTEST_BAUD);
        assert!(lines < c.gap_s * 1e3, "{c:?}");
        let quoted = format!("take {lines:.2} ms of its {:.2} ms gap", c.gap_s * 1e3);
        assert!(why().contains(&quoted), "{quoted:?} not in the reason");
    }
}

/// The Phytium's gaps differ threefold while its CPUs' lines differ by a
/// few characters; at a server's 115200 baud the lines alone would take
/// longer than any of its gaps.
#[test]
fn the_phytium_gap_does_not_follow_its_lines() {
    let cpus = row_cpus("arm64-phytium-64");
    assert!(cpus.len() >= 8, "{cpus:?}");
    let (lo, hi) = span(cpus.iter().map(|c| c.gap_s * 1e3));
    let (few, most) = span(cpus.iter().map(|c| c.chars as f64));
    assert!(hi / lo > 3.0 && most / few < 1.05, "{cpus:?}");
    let at_server = console_ms(few as usize, SERVER_BAUD);
    assert!(at_server > hi);
    let quoted = format!(
        "gaps range {lo:.1}-{hi:.1} ms between CPUs whose lines are {few}-{most} \
         characters long, and at 115200 baud those lines alone would take {at_server:.1} ms"
    );
    assert!(why().contains(&quoted), "{quoted:?} not in the reason");
}

/// Every missed row's AP side, which holds the AP's GICv3 redistributor and
/// LPI lines, is a small share of its interval.
#[test]
fn the_missed_rows_ap_side_is_a_small_share() {
    let rows = record::load().unwrap();
    let miss = sim::validate::known_miss("rec arm64-").unwrap();
    let shares: Vec<f64> = miss
        .errors
        .iter()
        .map(|(case, _)| {
            let id = case
                .strip_prefix("rec ")
                .and_then(|c| c.strip_suffix(" per-CPU interval"))
                .unwrap();
            let r = record::row(&rows, id).unwrap();
            100.0 * r.ap_side_s.unwrap() / r.per_cpu_s.unwrap()
        })
        .collect();
    assert_eq!(shares.len(), 7);
    let (lo, hi) = span(shares.into_iter());
    assert!(hi < 15.0, "{hi}");
    let quoted = format!("{lo:.1}-{hi:.0} % of each missed row's interval");
    assert!(why().contains(&quoted), "{quoted:?} not in the reason");
}

/// The parser finds the whole CPUs a quote holds, and no partial one.
#[test]
fn only_whole_cpus_are_counted() {
    let line = |stamp: f64, text: &str| Line {
        stamp,
        text: text.to_string(),
    };
    let lines = [
        line(0.1, "GICv3: CPU1: using allocated LPI pending table @0x0"),
        line(0.2, "CPU1: Booted secondary processor 0x1 [0x410fd034]"),
        line(0.5, "Detected VIPT I-cache on CPU2"),
        line(0.6, "CPU2: Booted secondary processor 0x2 [0x410fd034]"),
        line(0.9, "Detected VIPT I-cache on CPU3"),
        line(1.0, "CPU3: Booted secondary processor 0x3 [0x410fd034]"),
        line(1.1, "smp: Brought up 1 node, 4 CPUs"),
    ];
    let c = cpus(&lines);
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!(c[0].chars, 29 + 2 + 49 + 2);
    assert!((c[0].gap_s - 0.3).abs() < 1e-12);
}

/// The record's Raspberry Pi 5 logs, the family's fit row first.
const PI5: [&str; 5] = [
    "arm64-a76-4-ra028",
    "arm64-a76-4-rpi",
    "arm64-a76-4-rpi5-review",
    "arm64-a76-4-rpi-6049",
    "arm64-a76-4-rpi-6444",
];

/// Five logs of one SoC (Cortex-A76 r4p1) and one firmware spread further
/// than any one per-CPU figure can cover within 25 %.
#[test]
fn the_pi5_logs_spread_beyond_one_figure() {
    let rows = record::load().unwrap();
    let logs: Vec<&record::Row> = PI5
        .iter()
        .map(|id| record::row(&rows, id).unwrap())
        .collect();
    assert!(logs.iter().all(|r| r.machine.contains("MIDR 0x414fd0b1")));
    let ms = |r: &record::Row| r.per_cpu_s.unwrap() * 1e3;
    let extra: Vec<String> = logs
        .iter()
        .filter(|r| r.sim.is_none())
        .map(|r| format!("{:.2}", ms(r)))
        .collect();
    assert_eq!(extra.len(), 3);
    let (lo, hi) = span(logs.iter().map(|r| ms(r)));
    assert!(hi * 0.75 > lo * 1.25, "{lo} {hi}");
    for quoted in [
        format!("take {}, {} and {} ms a CPU", extra[0], extra[1], extra[2]),
        format!(
            "span {lo:.2}-{hi:.2} ms, {:.2}x, so no per-CPU figure is within 25 % of all five \
             (it would have to be below {:.3} ms and above {:.3} ms)",
            hi / lo,
            lo * 1.25,
            hi * 0.75
        ),
    ] {
        assert!(why().contains(&quoted), "{quoted:?} not in the reason");
    }
}
