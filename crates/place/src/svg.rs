//! Per-VP occupancy over time (a VP is the SMT8 big core on POWER, the core
//! elsewhere), drawn with the pictures' shared code (`draw`): one panel per run,
//! one row per VP, time along the x axis, each cell shaded by how many of the
//! VP's threads were busy at that sample. With `--compare` the two runs stack
//! on one time axis, so seed 001's "fewer big cores" shows at a glance.
//!
//! Each VP's runs of equal occupancy are one rectangle, named
//! `busy-<panel>-<vp>-<first sample>-<samples>-<threads>` so a check can rebuild
//! the occupancy from the picture.

use draw::chart::{legend, Axis, Frame};
use draw::svg::{Anchor, Style};
use draw::{Rect, Rgb, Svg};

use crate::run::Report;

const LEFT: f64 = 70.0;
const PANEL_GAP: f64 = 70.0;
const TOP: f64 = 50.0;
/// Colours of one busy thread and of a full VP.
const FEW: Rgb = Rgb(198, 219, 239);
const FULL: Rgb = Rgb(8, 48, 107);

/// Height of one VP's row: readable for a few dozen VPs, at least a pixel for
/// thousands.
fn row_height(vps: usize) -> f64 {
    (480.0 / vps.max(1) as f64).clamp(1.0, 8.0)
}

fn shade(busy: u8, threads_per_vp: usize) -> Rgb {
    let full = threads_per_vp.max(1) as f64;
    let t = if full > 1.0 {
        (f64::from(busy) - 1.0) / (full - 1.0)
    } else {
        1.0
    };
    FEW.mix(FULL, t.clamp(0.0, 1.0))
}

/// The picture of `runs` (each a report made with `trace` on, and the most
/// threads a VP of its machine has).
pub fn occupancy_svg(runs: &[(&Report, usize)]) -> String {
    let samples = runs.iter().map(|(r, _)| r.trace.len()).max().unwrap_or(0);
    let cell_w = (720.0 / samples.max(1) as f64).clamp(1.0, 12.0);
    let width = LEFT + samples.max(1) as f64 * cell_w + 30.0;
    let heights: Vec<f64> = runs
        .iter()
        .map(|(r, _)| row_height(vps(r)) * vps(r).max(1) as f64)
        .collect();
    let height = TOP + heights.iter().map(|h| h + PANEL_GAP).sum::<f64>() + 20.0;
    let mut svg = Svg::new(width.max(420.0), height);
    let tpv = runs.iter().map(|(_, t)| *t).max().unwrap_or(1);
    svg.text(
        8.0,
        18.0,
        12.0,
        Anchor::Start,
        true,
        "Busy threads per VP (big core on POWER, core elsewhere) over time",
    );
    let items: Vec<(Rgb, String)> = [1, tpv.div_ceil(2), tpv]
        .iter()
        .filter(|&&b| b >= 1)
        .map(|&b| (shade(b as u8, tpv), format!("{b} busy")))
        .collect();
    legend(&mut svg, 8.0, 36.0, &items);
    let mut y = TOP;
    for (panel, ((r, tpv), h)) in runs.iter().zip(&heights).enumerate() {
        draw_panel(
            &mut svg,
            panel,
            r,
            *tpv,
            Rect::new(LEFT, y + 14.0, samples as f64 * cell_w, *h),
        );
        y += h + PANEL_GAP;
    }
    svg.finish()
}

fn vps(r: &Report) -> usize {
    r.trace.first().map_or(0, |s| s.len())
}

/// One run's panel in `area`: title, axes, cells.
fn draw_panel(svg: &mut Svg, panel: usize, r: &Report, tpv: usize, area: Rect) {
    let title = format!(
        "Linux {}, {} LPAR, {} x {}: median {} busy VPs, physc {:.2}",
        r.kernel, r.lpar, r.threads, r.workload, r.busy_vps, r.physc
    );
    svg.text(area.x, area.y - 6.0, 11.0, Anchor::Start, true, &title);
    let start = r.trace_start_ns as f64 / 1e9;
    let step = r.sample_ns as f64 / 1e9;
    let n = vps(r);
    let frame = Frame {
        area,
        x: Axis {
            min: start,
            max: start + r.trace.len() as f64 * step,
            label: "virtual time (s)".into(),
        },
        y: Axis {
            min: n as f64,
            max: 0.0,
            label: String::new(),
        },
    };
    frame.draw_axes(svg, &|t| draw::svg::num(t), false);
    svg.text(area.x - 6.0, area.y + 9.0, 10.0, Anchor::End, false, "VP 0");
    svg.text(
        area.x - 6.0,
        area.bottom(),
        10.0,
        Anchor::End,
        false,
        &format!("VP {}", n.saturating_sub(1)),
    );
    let row = area.h / n.max(1) as f64;
    let col = area.w / r.trace.len().max(1) as f64;
    for vp in 0..n {
        let mut i = 0;
        while i < r.trace.len() {
            let busy = r.trace[i][vp];
            let mut end = i + 1;
            while end < r.trace.len() && r.trace[end][vp] == busy {
                end += 1;
            }
            if busy > 0 {
                let cell = Rect::new(
                    area.x + i as f64 * col,
                    area.y + vp as f64 * row,
                    (end - i) as f64 * col,
                    row,
                );
                let id = format!("busy-{panel}-{vp}-{i}-{}-{busy}", end - i);
                svg.rect(cell, &Style::fill(shade(busy, tpv)), Some(&id));
            }
            i = end;
        }
    }
}
