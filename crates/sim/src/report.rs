//! Text output, the before/after comparison, and the SVG timeline.

use std::path::Path;

use serde::Serialize;

use crate::run::{Phase, Run};
use crate::SimError;

fn fmt_s(s: f64) -> String {
    if s >= 100.0 {
        format!("{s:.1} s")
    } else if s >= 1.0 {
        format!("{s:.3} s")
    } else {
        format!("{:.1} ms", s * 1e3)
    }
}

/// The log, then where the time went.
pub fn text(run: &Run, machine: &str) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "{machine}: {} CPUs on {} node(s), platform {}, {}, seed {}\n\n",
        run.cpus, run.nodes, run.platform, run.strategy, run.seed
    ));
    for line in &run.log {
        out.push_str(&line.render());
        out.push('\n');
    }
    out.push('\n');
    out.push_str(&phase_table(run));
    let o = &run.ops;
    out.push_str(&format!(
        "\nmask work (real code, {} masks): {} CPUs scanned, {} tree nodes walked, {} property look-ups, {} bit + {} word operations\n",
        run.strategy.masks,
        o.cpus_scanned,
        o.fdt_nodes_visited,
        o.property_lookups,
        o.mask_bit_ops,
        o.mask_word_ops
    ));
    out.push_str(&format!(
        "all {} CPUs online after {} of virtual time",
        run.cpus,
        fmt_s(run.brought_up_s)
    ));
    if run.done_s > run.brought_up_s {
        out.push_str(&format!("; calibrations finished at {}", fmt_s(run.done_s)));
    }
    out.push('\n');
    if let Some(caveat) = &run.caveat {
        out.push_str(&format!("note: {caveat}\n"));
    }
    out
}

/// Per phase: time on the boot CPU's path (what the wall clock sees) and summed
/// over CPUs.
pub fn phase_table(run: &Run) -> String {
    let mut out = format!(
        "{:<10} {:>16} {:>7} {:>16}\n",
        "phase", "boot-CPU path", "share", "summed over CPUs"
    );
    let total: f64 = run.phases.iter().map(|p| p.critical_s).sum();
    for p in &run.phases {
        if p.cpu_s == 0.0 && p.critical_s == 0.0 {
            continue;
        }
        out.push_str(&format!(
            "{:<10} {:>16} {:>6.1}% {:>16}\n",
            p.phase.name(),
            fmt_s(p.critical_s),
            if total > 0.0 {
                100.0 * p.critical_s / total
            } else {
                0.0
            },
            fmt_s(p.cpu_s)
        ));
    }
    out
}

/// Two runs of the same machine side by side (`manycore boot --compare A B`).
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// The first strategy's run, without its per-CPU timeline.
    pub a: Summary,
    /// The second.
    pub b: Summary,
    /// Virtual seconds until every CPU is online under A.
    pub a_s: f64,
    /// … under B.
    pub b_s: f64,
    /// `a_s / b_s`.
    pub speedup: f64,
    /// Said under the table when a run kicks in parallel on a platform
    /// whose Linux never does ([`Run::caveat`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caveat: Option<String>,
}

/// A run without its timeline and log.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// Strategy.
    pub strategy: String,
    /// "Brought up" time.
    pub brought_up_s: f64,
    /// All calibrations finished.
    pub done_s: f64,
    /// Per phase.
    pub phases: Vec<crate::run::PhaseTotal>,
}

impl Summary {
    /// Summarises `run`.
    pub fn of(run: &Run) -> Summary {
        Summary {
            strategy: run.strategy.to_string(),
            brought_up_s: run.brought_up_s,
            done_s: run.done_s,
            phases: run.phases.clone(),
        }
    }
}

impl Comparison {
    /// Compares two runs.
    pub fn new(a: &Run, b: &Run) -> Comparison {
        Comparison {
            a: Summary::of(a),
            b: Summary::of(b),
            a_s: a.brought_up_s,
            b_s: b.brought_up_s,
            speedup: if b.brought_up_s > 0.0 {
                a.brought_up_s / b.brought_up_s
            } else {
                f64::INFINITY
            },
            caveat: a.caveat.clone().or_else(|| b.caveat.clone()),
        }
    }

    /// A before / after table like the seeds'.
    pub fn to_text(&self, label_a: &str, label_b: &str) -> String {
        let mut out = format!("{:<24} {:>16} {:>16}\n", "", label_a, label_b);
        out.push_str(&format!(
            "{:<24} {:>16} {:>16}\n",
            "all CPUs online",
            fmt_s(self.a_s),
            fmt_s(self.b_s)
        ));
        for (pa, pb) in self.a.phases.iter().zip(&self.b.phases) {
            if pa.critical_s == 0.0 && pb.critical_s == 0.0 {
                continue;
            }
            out.push_str(&format!(
                "{:<24} {:>16} {:>16}\n",
                format!("  {} (boot path)", pa.phase.name()),
                fmt_s(pa.critical_s),
                fmt_s(pb.critical_s)
            ));
        }
        out.push_str(&format!(
            "{:<24} {:>16} {:>16}\n",
            "calibrations done",
            fmt_s(self.a.done_s),
            fmt_s(self.b.done_s)
        ));
        out.push_str(&format!(
            "\n{} → {}: {:.2}× faster ({:+.1}%)\n",
            fmt_s(self.a_s),
            fmt_s(self.b_s),
            self.speedup,
            100.0 * (self.b_s - self.a_s) / self.a_s
        ));
        if let Some(caveat) = &self.caveat {
            out.push_str(&format!("note: {caveat}\n"));
        }
        out
    }
}

/// One colour per phase, the same in every picture.
fn phase_rgb(p: Phase) -> draw::Rgb {
    match p {
        Phase::Kick => draw::Rgb(214, 39, 40),
        Phase::ApStart => draw::Rgb(255, 187, 120),
        Phase::Microcode => draw::Rgb(140, 86, 75),
        Phase::Calibrate => draw::Rgb(31, 119, 180),
        Phase::TscSync => draw::Rgb(148, 103, 189),
        Phase::Masks => draw::Rgb(44, 160, 44),
        Phase::Online => draw::Rgb(127, 127, 127),
    }
}

/// Rows and columns of the picture's raster: at most this many CPU rows (CPUs
/// are grouped when there are more) and time columns.
const MAX_ROWS: usize = 512;
const COLUMNS: usize = 1000;

/// One drawn rectangle: row, first and last column (exclusive), phase.
type Bar = (usize, usize, usize, Phase);

/// Reduces the per-CPU timeline to at most `MAX_ROWS` × `COLUMNS` cells, each
/// coloured by the phase that filled most of it, then merges equal neighbours:
/// a 16384-CPU run stays a picture of a few thousand rectangles.
fn raster(run: &Run, end_ns: u64) -> (usize, Vec<Bar>) {
    let n = run.timeline.len().max(1);
    let rows = n.min(MAX_ROWS);
    let mut cells = vec![[0u64; Phase::ALL.len()]; rows * COLUMNS];
    let ns_per_col = (end_ns as f64 / COLUMNS as f64).max(1.0);
    for (i, t) in run.timeline.iter().enumerate() {
        let row = i * rows / n;
        for s in &t.spans {
            let c0 = ((s.start_ns as f64 / ns_per_col) as usize).min(COLUMNS - 1);
            let c1 = ((s.end_ns as f64 / ns_per_col) as usize).min(COLUMNS - 1);
            for c in c0..=c1 {
                let lo = (c as f64 * ns_per_col).max(s.start_ns as f64);
                let hi = ((c + 1) as f64 * ns_per_col).min(s.end_ns as f64);
                if hi > lo {
                    cells[row * COLUMNS + c][s.phase as usize] += (hi - lo) as u64;
                }
            }
        }
    }
    let mut bars = Vec::new();
    for row in 0..rows {
        let mut current: Option<(usize, Phase)> = None;
        for c in 0..=COLUMNS {
            let dominant = if c < COLUMNS {
                let cell = &cells[row * COLUMNS + c];
                Phase::ALL
                    .iter()
                    .copied()
                    .filter(|&p| cell[p as usize] > 0)
                    .max_by_key(|&p| (cell[p as usize], std::cmp::Reverse(p as usize)))
            } else {
                None
            };
            match (current, dominant) {
                (Some((_, p)), Some(d)) if p == d => {}
                _ => {
                    if let Some((start, p)) = current.take() {
                        bars.push((row, start, c, p));
                    }
                    current = dominant.map(|d| (c, d));
                }
            }
        }
    }
    (rows, bars)
}

/// Draws the timeline: time across, CPUs (in bring-up order) down, one
/// colour per phase; bars are named `bar-ROW-COLUMN`.
pub fn timeline_svg(run: &Run, title: &str) -> String {
    use draw::chart::{legend, Axis, Frame};
    use draw::svg::{Anchor, Style};
    use draw::{Rect, Svg};
    let end_ns = ((run.done_s.max(run.brought_up_s)) * 1e9).ceil().max(1.0) as u64;
    let end = end_ns as f64 / 1e9;
    let (rows, bars) = raster(run, end_ns);
    let n = run.timeline.len().max(1);
    let mut svg = Svg::new(1200.0, 720.0);
    svg.text(70.0, 22.0, 13.0, Anchor::Start, true, title);
    let frame = Frame {
        area: Rect::new(70.0, 60.0, 1100.0, 590.0),
        x: Axis {
            min: 0.0,
            max: end,
            label: format!(
                "virtual time since \"Bringing up secondary CPUs\" ({})",
                if end >= 2.0 { "s" } else { "ms" }
            ),
        },
        y: Axis {
            min: n as f64,
            max: 0.0,
            label: "CPUs (bring-up order, first at the top)".into(),
        },
    };
    frame.draw_axes(&mut svg, &|s| tick_label(s, end), true);
    let col_s = end / COLUMNS as f64;
    let row_h = frame.area.h / rows as f64;
    for &(row, c0, c1, phase) in &bars {
        let x0 = frame.px(c0 as f64 * col_s);
        let x1 = frame.px(c1 as f64 * col_s);
        let r = Rect::new(x0, frame.area.y + row as f64 * row_h, x1 - x0, row_h);
        svg.rect(
            r,
            &Style::fill(phase_rgb(phase)),
            Some(&format!("bar-{row}-{c0}")),
        );
    }
    let items: Vec<(draw::Rgb, String)> = Phase::ALL
        .iter()
        .map(|&p| (phase_rgb(p), p.name().to_string()))
        .collect();
    legend(&mut svg, 70.0, 710.0, &items);
    svg.finish()
}

/// Writes [`timeline_svg`] to `path`.
pub fn svg(run: &Run, title: &str, path: &Path) -> Result<(), SimError> {
    std::fs::write(path, timeline_svg(run, title)).map_err(|e| SimError::Output {
        path: path.display().to_string(),
        message: e.to_string(),
    })
}

/// How the comparison picture names the two runs, and their colours.
const RUN_COLORS: [draw::Rgb; 2] = [draw::Rgb(214, 39, 40), draw::Rgb(31, 119, 180)];

/// "1.5 s" or "250 ms" for a tick at `s` seconds on an axis ending at `end`.
fn tick_label(s: f64, end: f64) -> String {
    if end >= 2.0 {
        draw::svg::num(s)
    } else {
        draw::svg::num(s * 1e3)
    }
}

/// The number of CPUs online against virtual time: the sorted online times as
/// a step curve, thinned to about a thousand steps for large machines.
fn online_curve(run: &Run) -> Vec<(f64, f64)> {
    let mut times: Vec<u64> = run.timeline.iter().map(|t| t.online_ns).collect();
    times.sort_unstable();
    let stride = times.len().div_ceil(1000).max(1);
    let mut points = vec![(0.0, 0.0)];
    for (k, &t) in times.iter().enumerate() {
        if (k + 1) % stride == 0 || k + 1 == times.len() {
            let s = t as f64 / 1e9;
            let prev = points.last().map_or(0.0, |p| p.1);
            points.push((s, prev));
            points.push((s, (k + 1) as f64));
        }
    }
    points
}

/// `manycore boot --compare A B --svg FILE`: both runs on one time axis. Above,
/// the CPUs online over time; below, one bar per run splitting the boot CPU's
/// path into its phases (kick, AP start, calibrate, masks, online), so that a
/// seed's before/after reads in one look. The step curves are named
/// `online-a`/`online-b` and the phase segments `phase-a-<name>`.
pub fn compare_svg(a: &Run, b: &Run, labels: [&str; 2], title: &str) -> String {
    let runs = [a, b];
    let page = ComparePage::new(&runs);
    let mut svg = draw::Svg::new(page.width, 520.0);
    svg.text(page.left, 22.0, 13.0, draw::svg::Anchor::Start, true, title);
    online_curves(&mut svg, &page, &runs, labels);
    phase_bars(&mut svg, &page, &runs, labels);
    svg.finish()
}

/// The comparison picture's shared time axis and margins.
struct ComparePage {
    /// The later run's end, seconds.
    end: f64,
    /// The most CPUs either run brings up.
    cpus: usize,
    width: f64,
    left: f64,
    right: f64,
    x: draw::chart::Axis,
}

impl ComparePage {
    fn new(runs: &[&Run; 2]) -> ComparePage {
        let end = runs
            .iter()
            .map(|r| r.done_s.max(r.brought_up_s))
            .fold(0.0, f64::max)
            .max(1e-9);
        let unit = if end >= 2.0 { "s" } else { "ms" };
        let cpus = runs
            .iter()
            .map(|r| r.timeline.len())
            .max()
            .unwrap_or(0)
            .max(1);
        ComparePage {
            end,
            cpus,
            width: 1000.0,
            left: 70.0,
            right: 30.0,
            x: draw::chart::Axis {
                min: 0.0,
                max: end,
                label: format!("virtual time since \"Bringing up secondary CPUs\" ({unit})"),
            },
        }
    }

    /// A frame `height` tall at `top`, spanning the page, on the time axis.
    fn frame(&self, top: f64, height: f64, y: draw::chart::Axis) -> draw::chart::Frame {
        draw::chart::Frame {
            area: draw::Rect::new(self.left, top, self.width - self.left - self.right, height),
            x: self.x.clone(),
            y,
        }
    }
}

/// The upper panel: CPUs online over time, one step curve per run, and a
/// legend saying when each run had all its CPUs up.
fn online_curves(svg: &mut draw::Svg, page: &ComparePage, runs: &[&Run; 2], labels: [&str; 2]) {
    use draw::svg::Style;
    let online = page.frame(
        80.0,
        200.0,
        draw::chart::Axis {
            min: 0.0,
            max: page.cpus as f64,
            label: "CPUs online".into(),
        },
    );
    online.draw_axes(svg, &|s| tick_label(s, page.end), true);
    for (k, run) in runs.iter().enumerate() {
        let points: Vec<(f64, f64)> = online_curve(run)
            .into_iter()
            .map(|(x, y)| (online.px(x), online.py(y)))
            .collect();
        let id = format!("online-{}", ["a", "b"][k]);
        svg.polyline(&points, &Style::stroke(RUN_COLORS[k], 2.0), Some(&id));
    }
    let items: Vec<(draw::Rgb, String)> = (0..2)
        .map(|k| {
            let r = runs[k];
            let text = format!(
                "{}: all {} online at {}",
                labels[k],
                r.cpus,
                fmt_s(r.brought_up_s)
            );
            (RUN_COLORS[k], text)
        })
        .collect();
    draw::chart::legend(svg, page.left, 46.0, &items);
}

/// The lower panel: per run, the boot CPU's path split into its phases, and
/// the phases' legend.
fn phase_bars(svg: &mut draw::Svg, page: &ComparePage, runs: &[&Run; 2], labels: [&str; 2]) {
    use draw::svg::{Anchor, Style};
    let bars = page.frame(
        350.0,
        80.0,
        draw::chart::Axis {
            min: 0.0,
            max: 2.0,
            label: String::new(),
        },
    );
    let heading = "where the time goes on the boot CPU's path";
    svg.text(page.left, 340.0, 11.0, Anchor::Start, true, heading);
    bars.draw_axes(svg, &|s| tick_label(s, page.end), false);
    for (k, run) in runs.iter().enumerate() {
        let y = bars.area.y + 8.0 + k as f64 * 36.0;
        svg.text(
            page.left - 6.0,
            y + 17.0,
            10.0,
            Anchor::End,
            false,
            labels[k],
        );
        let mut t = 0.0;
        for p in run.phases.iter().filter(|p| p.critical_s > 0.0) {
            let (x0, x1) = (bars.px(t), bars.px(t + p.critical_s));
            let id = format!("phase-{}-{}", ["a", "b"][k], p.phase.name());
            let area = draw::Rect::new(x0, y, x1 - x0, 26.0);
            svg.rect(area, &Style::fill(phase_rgb(p.phase)), Some(&id));
            let name = p.phase.name();
            if x1 - x0 > draw::text_width(name, 9.0) + 4.0 {
                svg.text(x0 + 2.0, y + 17.0, 9.0, Anchor::Start, false, name);
            }
            t += p.critical_s;
        }
    }
    let items: Vec<(draw::Rgb, String)> = Phase::ALL
        .iter()
        .map(|&p| (phase_rgb(p), p.name().to_string()))
        .collect();
    draw::chart::legend(svg, page.left, 500.0, &items);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Algo, Calibrate, CostTable, Kick, Options, Platform, Strategy};
    use topology::{Arch, Shape};

    /// `manycore boot --compare serial parallel` flags the parallel column
    /// on every platform whose Linux has no parallel prefix. Which do is
    /// Linux's Kconfig: `select HOTPLUG_PARALLEL if SMP && X86_64` in
    /// arch/x86/Kconfig from 6.5, no such line in arch/powerpc or
    /// arch/arm64, and 2.6.37 (x86-2010) long before the option existed.
    #[test]
    fn a_parallel_kick_is_flagged_where_linux_has_none() {
        let kicks_ahead_in_linux = [Platform::X86];
        for platform in Platform::ALL {
            let arch = match platform {
                Platform::PowerPc => Arch::PowerPc64,
                Platform::Arm64 => Arch::Arm64,
                _ => Arch::X86_64,
            };
            let topo = Shape::simple(arch, 2, 4, 2).build().unwrap();
            let costs = CostTable::for_platform(platform, &crate::fit::fitted().unwrap());
            let run = |kick| {
                let s = Strategy {
                    kick,
                    calibrate: Calibrate::Skip,
                    masks: Algo::Scoped,
                };
                crate::simulate(&topo, &costs, &s, &Options { seed: 1 }).unwrap()
            };
            let (serial, parallel) = (run(Kick::Serial), run(Kick::Parallel));
            let flagged = !kicks_ahead_in_linux.contains(&platform);
            let cmp = Comparison::new(&serial, &parallel);
            assert_eq!(cmp.caveat.is_some(), flagged, "{platform}");
            let text = cmp.to_text("serial kick", "parallel kick");
            assert_eq!(text.contains("note: "), flagged, "{platform}: {text}");
            // The parallel run alone (`boot --strategy parallel`) says the
            // same, in its text and in its JSON.
            let single = super::text(&parallel, "m");
            assert_eq!(single.contains("note: "), flagged, "{platform}: {single}");
            let json = serde_json::to_value(&parallel).unwrap();
            assert_eq!(json.get("caveat").is_some(), flagged, "{platform}");
            // Two serial runs are what every Linux does: nothing to flag.
            assert!(Comparison::new(&serial, &serial).caveat.is_none());
            assert!(!super::text(&serial, "m").contains("note: "));
        }
    }
}
