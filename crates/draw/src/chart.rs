//! A chart frame with linear axes, for time charts: the caller maps values to
//! picture coordinates through the frame and draws lines and bars in it.

use crate::svg::{num, Anchor, Style, Svg};
use crate::{Rect, Rgb};

const FONT: f64 = 10.0;

/// One axis: its range and what it measures.
#[derive(Clone, Debug)]
pub struct Axis {
    /// Value at the start of the axis.
    pub min: f64,
    /// Value at the end.
    pub max: f64,
    /// What the axis measures, with unit.
    pub label: String,
}

/// Tick values between `min` and `max`: steps of 1, 2 or 5 times a power of
/// ten, about `target` of them.
pub fn ticks(min: f64, max: f64, target: usize) -> Vec<f64> {
    let span = max - min;
    if span.is_nan() || span <= 0.0 || !span.is_finite() {
        return vec![min];
    }
    let raw = span / target.max(1) as f64;
    let power = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * power)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * power);
    let first = (min / step).ceil() as i64;
    let last = (max / step + 1e-9).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

/// How far `v` lies from the axis's start to its end; an axis of no length
/// puts everything at its start.
fn fraction(axis: &Axis, v: f64) -> f64 {
    let span = axis.max - axis.min;
    if span == 0.0 {
        0.0
    } else {
        (v - axis.min) / span
    }
}

/// Ticks of an axis whichever way it runs.
fn axis_ticks(axis: &Axis, target: usize) -> Vec<f64> {
    ticks(axis.min.min(axis.max), axis.min.max(axis.max), target)
}

/// A plotting area and the two axes that map values into it.
#[derive(Clone, Debug)]
pub struct Frame {
    /// Where the data goes (axes are drawn along its left and bottom edges).
    pub area: Rect,
    /// Horizontal axis.
    pub x: Axis,
    /// Vertical axis (`min` at the bottom).
    pub y: Axis,
}

impl Frame {
    /// Picture x of value `v`.
    pub fn px(&self, v: f64) -> f64 {
        self.area.x + fraction(&self.x, v) * self.area.w
    }

    /// Picture y of value `v` (an axis with `min` above `max` runs downwards).
    pub fn py(&self, v: f64) -> f64 {
        self.area.bottom() - fraction(&self.y, v) * self.area.h
    }

    /// Draws both axes with ticks, labels and light grid lines; `y_ticks`
    /// false leaves the vertical axis bare (for a panel of labelled bars).
    pub fn draw_axes(&self, svg: &mut Svg, fmt_x: &dyn Fn(f64) -> String, y_ticks: bool) {
        let a = self.area;
        let axis = Style::stroke(Rgb::GREY, 1.0);
        let grid = Style::stroke(Rgb(225, 225, 225), 1.0);
        for t in axis_ticks(&self.x, 8) {
            let x = self.px(t);
            svg.line((x, a.y), (x, a.bottom()), &grid);
            svg.line((x, a.bottom()), (x, a.bottom() + 4.0), &axis);
            svg.text(x, a.bottom() + 15.0, FONT, Anchor::Middle, false, &fmt_x(t));
        }
        svg.text(
            a.x + a.w / 2.0,
            a.bottom() + 30.0,
            FONT,
            Anchor::Middle,
            false,
            &self.x.label,
        );
        if y_ticks {
            for t in axis_ticks(&self.y, 5) {
                let y = self.py(t);
                svg.line((a.x, y), (a.right(), y), &grid);
                svg.line((a.x - 4.0, y), (a.x, y), &axis);
                svg.text(a.x - 6.0, y + 3.5, FONT, Anchor::End, false, &num(t));
            }
            svg.text(a.x, a.y - 8.0, FONT, Anchor::Start, false, &self.y.label);
        }
        svg.line((a.x, a.y), (a.x, a.bottom()), &axis);
        svg.line((a.x, a.bottom()), (a.right(), a.bottom()), &axis);
    }
}

/// A row of coloured squares with names, left to right from (x, y); returns
/// the width used.
pub fn legend(svg: &mut Svg, x: f64, y: f64, items: &[(Rgb, String)]) -> f64 {
    let mut cx = x;
    for (color, name) in items {
        svg.rect(
            Rect::new(cx, y - 9.0, 10.0, 10.0),
            &Style::boxed(*color),
            None,
        );
        svg.text(cx + 14.0, y, FONT, Anchor::Start, false, name);
        cx += 14.0 + crate::text_width(name, FONT) + 14.0;
    }
    cx - x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_inside() {
        assert_eq!(ticks(0.0, 10.0, 5), [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        let t = ticks(0.0, 0.7, 7);
        assert_eq!(t.len(), 8, "{t:?}");
        assert!(t
            .iter()
            .enumerate()
            .all(|(k, v)| (v - k as f64 / 10.0).abs() < 1e-9));
        assert_eq!(ticks(0.0, 128.0, 5), [0.0, 50.0, 100.0]);
        assert_eq!(ticks(3.0, 3.0, 5), [3.0]);
    }
}
