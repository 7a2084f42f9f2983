//! Per-VP (big core on POWER, core elsewhere) occupancy over time as a plain SVG
//! heat map: one row per VP, one column per sample, darker for more busy
//! threads. Kept to this one function so shared drawing code can replace it.

use std::fmt::Write as _;

use crate::run::Report;

/// The SVG text for `r` (which must have been run with `trace`).
pub fn occupancy_svg(r: &Report, threads_per_vp: usize) -> String {
    let rows = r.trace.first().map_or(0, |s| s.len());
    let cols = r.trace.len();
    let (cw, ch) = (4usize, if rows > 200 { 1 } else { 3 });
    let (w, h) = (cols * cw + 80, rows * ch + 40);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="10">"#
    );
    let _ = writeln!(
        s,
        r#"<text x="4" y="12">Linux {} {} LPAR, {} x {}: busy threads per VP (rows) over time (columns, {} ms)</text>"#,
        r.kernel,
        r.lpar,
        r.threads,
        r.workload,
        r.sample_ns / 1_000_000
    );
    let full = threads_per_vp.max(1) as f64;
    for (x, sample) in r.trace.iter().enumerate() {
        for (y, &busy) in sample.iter().enumerate() {
            if busy == 0 {
                continue;
            }
            let shade = 255 - (200.0 * (busy as f64 / full).min(1.0)) as u8;
            let _ = writeln!(
                s,
                r#"<rect x="{}" y="{}" width="{cw}" height="{ch}" fill="rgb({shade},{shade},255)"/>"#,
                70 + x * cw,
                20 + y * ch
            );
        }
    }
    let _ = writeln!(
        s,
        r#"<text x="4" y="{}">VP 0..{}</text>"#,
        30,
        rows.saturating_sub(1)
    );
    s.push_str("</svg>\n");
    s
}
