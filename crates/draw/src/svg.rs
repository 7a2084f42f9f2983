//! A writer for the few SVG elements the pictures use. SVG is text; the writer
//! only has to get escaping and number formatting right, which `quick-xml`'s
//! escaping and fixed decimals do.

use std::fmt::{self, Write as _};

use crate::{Rect, FONT};

/// An sRGB colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rgb(pub u8, pub u8, pub u8);

impl Rgb {
    /// White.
    pub const WHITE: Rgb = Rgb(255, 255, 255);
    /// Black.
    pub const BLACK: Rgb = Rgb(0, 0, 0);
    /// The grey of axes and box outlines.
    pub const GREY: Rgb = Rgb(110, 110, 110);

    /// The colour `t` of the way from `self` to `other` (`t` in 0..=1).
    pub fn mix(self, other: Rgb, t: f64) -> Rgb {
        let t = t.clamp(0.0, 1.0);
        let f = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * t).round() as u8;
        Rgb(f(self.0, other.0), f(self.1, other.1), f(self.2, other.2))
    }
}

impl fmt::Display for Rgb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{:02x}{:02x}{:02x}", self.0, self.1, self.2)
    }
}

/// How text is anchored at its x coordinate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Anchor {
    /// x is the left end.
    Start,
    /// x is the middle.
    Middle,
    /// x is the right end.
    End,
}

/// Outline and fill of a shape.
#[derive(Clone, Copy, Debug)]
pub struct Style {
    /// Fill colour; `None` leaves the inside transparent.
    pub fill: Option<Rgb>,
    /// Outline colour; `None` draws no outline.
    pub stroke: Option<Rgb>,
    /// Outline width.
    pub stroke_width: f64,
    /// Draw the outline dashed (folded runs of boxes).
    pub dashed: bool,
}

impl Style {
    /// Filled, no outline.
    pub fn fill(color: Rgb) -> Style {
        Style {
            fill: Some(color),
            stroke: None,
            stroke_width: 0.0,
            dashed: false,
        }
    }

    /// Filled with a thin grey outline.
    pub fn boxed(color: Rgb) -> Style {
        Style {
            fill: Some(color),
            stroke: Some(Rgb::GREY),
            stroke_width: 1.0,
            dashed: false,
        }
    }

    /// An outline of `color` and `width`, not filled.
    pub fn stroke(color: Rgb, width: f64) -> Style {
        Style {
            fill: None,
            stroke: Some(color),
            stroke_width: width,
            dashed: false,
        }
    }

    fn attributes(&self) -> String {
        let mut s = String::new();
        match self.fill {
            Some(c) => {
                let _ = write!(s, " fill=\"{c}\"");
            }
            None => s.push_str(" fill=\"none\""),
        }
        if let Some(c) = self.stroke {
            let _ = write!(
                s,
                " stroke=\"{c}\" stroke-width=\"{}\"",
                num(self.stroke_width)
            );
            if self.dashed {
                s.push_str(" stroke-dasharray=\"4 3\"");
            }
        }
        s
    }
}

/// A number with at most two decimals and no trailing zeros: SVG files stay
/// small and byte-identical across runs.
pub fn num(v: f64) -> String {
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

fn escape(text: &str) -> std::borrow::Cow<'_, str> {
    quick_xml::escape::escape(text)
}

/// An SVG document being written.
pub struct Svg {
    width: f64,
    height: f64,
    body: String,
}

impl Svg {
    /// An empty picture of `width` × `height` with a white background.
    pub fn new(width: f64, height: f64) -> Svg {
        let mut svg = Svg {
            width,
            height,
            body: String::new(),
        };
        svg.rect(
            Rect::new(0.0, 0.0, width, height),
            &Style::fill(Rgb::WHITE),
            None,
        );
        svg
    }

    /// Picture width.
    pub fn width(&self) -> f64 {
        self.width
    }

    /// Picture height.
    pub fn height(&self) -> f64 {
        self.height
    }

    /// A rectangle; `id` names it so that a check can count shapes of a kind.
    pub fn rect(&mut self, r: Rect, style: &Style, id: Option<&str>) {
        let id = id.map_or(String::new(), |i| format!(" id=\"{}\"", escape(i)));
        let _ = writeln!(
            self.body,
            "<rect{id} x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"{}/>",
            num(r.x),
            num(r.y),
            num(r.w.max(0.0)),
            num(r.h.max(0.0)),
            style.attributes()
        );
    }

    /// One line of text with its baseline at `y`.
    pub fn text(&mut self, x: f64, y: f64, size: f64, anchor: Anchor, bold: bool, text: &str) {
        self.text_colored(x, y, size, anchor, bold, Rgb::BLACK, text);
    }

    /// Like [`Svg::text`] in `color`.
    #[allow(clippy::too_many_arguments)]
    pub fn text_colored(
        &mut self,
        x: f64,
        y: f64,
        size: f64,
        anchor: Anchor,
        bold: bool,
        color: Rgb,
        text: &str,
    ) {
        let anchor = match anchor {
            Anchor::Start => "start",
            Anchor::Middle => "middle",
            Anchor::End => "end",
        };
        let weight = if bold { " font-weight=\"bold\"" } else { "" };
        let _ = writeln!(
            self.body,
            "<text x=\"{}\" y=\"{}\" font-family=\"{FONT}\" font-size=\"{}\" text-anchor=\"{anchor}\" fill=\"{color}\"{weight}>{}</text>",
            num(x),
            num(y),
            num(size),
            escape(text)
        );
    }

    /// A straight line.
    pub fn line(&mut self, from: (f64, f64), to: (f64, f64), style: &Style) {
        let _ = writeln!(
            self.body,
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"{}/>",
            num(from.0),
            num(from.1),
            num(to.0),
            num(to.1),
            style.attributes()
        );
    }

    /// A polyline through `points`; `id` names it for checks.
    pub fn polyline(&mut self, points: &[(f64, f64)], style: &Style, id: Option<&str>) {
        if points.is_empty() {
            return;
        }
        let id = id.map_or(String::new(), |i| format!(" id=\"{}\"", escape(i)));
        let mut d = String::new();
        for (k, (x, y)) in points.iter().enumerate() {
            let _ = write!(
                d,
                "{}{},{}",
                if k == 0 { "M" } else { " L" },
                num(*x),
                num(*y)
            );
        }
        let _ = writeln!(
            self.body,
            "<path{id} d=\"{d}\"{} stroke-linejoin=\"round\"/>",
            style.attributes()
        );
    }

    /// The finished document.
    pub fn finish(self) -> String {
        format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\">\n{}</svg>\n",
            self.body,
            w = num(self.width),
            h = num(self.height),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_short_and_text_is_escaped() {
        assert_eq!(num(1.0), "1");
        assert_eq!(num(1.256), "1.26");
        assert_eq!(num(-0.001), "0");
        let mut s = Svg::new(10.0, 10.0);
        s.text(1.0, 1.0, 10.0, Anchor::Start, false, "a<b & \"c\"");
        let doc = s.finish();
        assert!(doc.contains("a&lt;b &amp; &quot;c&quot;"), "{doc}");
    }
}
