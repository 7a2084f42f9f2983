//! A labelled heat map of a square matrix (NUMA distances).

use crate::svg::{Anchor, Style, Svg};
use crate::{text_width, Rect, Rgb};

const FONT: f64 = 10.0;
/// The colour of the smallest and of the largest value.
const LOW: Rgb = Rgb(255, 247, 236);
const HIGH: Rgb = Rgb(179, 0, 0);

/// A square matrix with row and column labels.
pub struct HeatMap<'a> {
    /// Title above the map.
    pub title: &'a str,
    /// One label per row (and column).
    pub labels: &'a [String],
    /// `values[i][j]`.
    pub values: &'a [Vec<u32>],
}

impl HeatMap<'_> {
    /// Cell side: readable numbers up to 16 rows, then smaller cells down to a
    /// few pixels for hundreds of nodes.
    fn cell(&self) -> f64 {
        let n = self.labels.len().max(1) as f64;
        (420.0 / n).clamp(2.0, 26.0)
    }

    fn shows_labels(&self) -> bool {
        self.cell() >= 12.0
    }

    fn margin(&self) -> f64 {
        if self.shows_labels() {
            let widest = self
                .labels
                .iter()
                .map(|l| text_width(l, FONT))
                .fold(0.0, f64::max);
            widest + 6.0
        } else {
            6.0
        }
    }

    /// Width and height of the drawn map.
    pub fn size(&self) -> (f64, f64) {
        let side = self.cell() * self.labels.len() as f64;
        let m = self.margin();
        let caption = text_width("100 (light) to 100 (dark)", FONT);
        let w = (m + side)
            .max(text_width(self.title, FONT + 1.0))
            .max(m + caption);
        (w, 18.0 + m.min(20.0) + side + 20.0)
    }

    /// Draws the map with its top-left corner at (x, y). Each cell is a
    /// rectangle named `dist-I-J` when the map is small enough to label;
    /// larger maps merge runs of equal cells in a row.
    ///
    /// Phases: the title; each row's labels ([`Self::draw_labels`]) and cells
    /// ([`Self::draw_row`]); the frame and the colour scale's caption.
    pub fn draw(&self, svg: &mut Svg, x: f64, y: f64) {
        let n = self.labels.len();
        let m = self.margin();
        svg.text(x, y + 12.0, FONT + 1.0, Anchor::Start, true, self.title);
        let corner = (x + m, y + 18.0 + m.min(20.0));
        let scale = Scale::of(self.values);
        for (i, row) in self.values.iter().enumerate().take(n) {
            if self.shows_labels() {
                self.draw_labels(svg, corner, i);
            }
            self.draw_row(svg, corner, i, row, &scale);
        }
        let (left, top) = corner;
        let side = self.cell() * n as f64;
        svg.rect(
            Rect::new(left, top, side, side),
            &Style::stroke(Rgb::GREY, 1.0),
            None,
        );
        svg.text(
            left,
            top + side + 14.0,
            FONT,
            Anchor::Start,
            false,
            &format!("{} (light) to {} (dark)", scale.lo, scale.hi),
        );
    }

    /// Row `i`'s label left of the grid whose top-left corner is `corner`,
    /// and column `i`'s above it.
    fn draw_labels(&self, svg: &mut Svg, (left, top): (f64, f64), i: usize) {
        let cell = self.cell();
        let label = &self.labels[i];
        let cy = top + i as f64 * cell;
        svg.text(
            left - 4.0,
            cy + cell / 2.0 + 3.5,
            FONT,
            Anchor::End,
            false,
            label,
        );
        svg.text(
            left + (i as f64 + 0.5) * cell,
            top - 4.0,
            FONT,
            Anchor::Middle,
            false,
            label,
        );
    }

    /// Row `i`'s cells in the grid whose top-left corner is `corner`: one
    /// named rectangle a cell (with its value when the cells are large
    /// enough) on a labelled map, else one rectangle a run of equal values.
    fn draw_row(
        &self,
        svg: &mut Svg,
        (left, top): (f64, f64),
        i: usize,
        row: &[u32],
        scale: &Scale,
    ) {
        let n = self.labels.len();
        let cell = self.cell();
        let labelled = self.shows_labels();
        let cy = top + i as f64 * cell;
        let mut j = 0;
        while j < n.min(row.len()) {
            let mut end = j + 1;
            if !labelled {
                while end < n.min(row.len()) && row[end] == row[j] {
                    end += 1;
                }
            }
            let r = Rect::new(left + j as f64 * cell, cy, (end - j) as f64 * cell, cell);
            let id = labelled.then(|| format!("dist-{i}-{j}"));
            svg.rect(r, &Style::fill(scale.shade(row[j])), id.as_deref());
            if labelled && cell >= 20.0 {
                let color = if scale.is_dark(row[j]) {
                    Rgb::WHITE
                } else {
                    Rgb::BLACK
                };
                svg.text_colored(
                    r.x + cell / 2.0,
                    cy + cell / 2.0 + 3.5,
                    FONT - 1.0,
                    Anchor::Middle,
                    false,
                    color,
                    &row[j].to_string(),
                );
            }
            j = end;
        }
    }
}

/// The range of a map's values and the colour each value gets in it.
struct Scale {
    lo: u32,
    hi: u32,
}

impl Scale {
    fn of(values: &[Vec<u32>]) -> Scale {
        let flat = values.iter().flatten().copied();
        Scale {
            lo: flat.clone().min().unwrap_or(0),
            hi: flat.max().unwrap_or(0),
        }
    }

    /// `v`'s colour: from [`LOW`] at the smallest value to [`HIGH`] at the
    /// largest.
    fn shade(&self, v: u32) -> Rgb {
        let t = if self.hi > self.lo {
            f64::from(v - self.lo) / f64::from(self.hi - self.lo)
        } else {
            0.0
        };
        LOW.mix(HIGH, t)
    }

    /// Whether `v`'s cell is dark enough to want white text.
    fn is_dark(&self, v: u32) -> bool {
        v > self.lo + (self.hi - self.lo) / 2
    }
}
