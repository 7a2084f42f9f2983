//! The drawing code every manycore picture uses: an SVG document writer, nested
//! boxes laid out like lstopo's, a heat map, a time chart, and rendering to PNG
//! through a real SVG renderer (`resvg`), which also checks a picture.
//!
//! Pictures are built as SVG text first; PNG is the same SVG rasterised, so the
//! two formats can never disagree.
#![forbid(unsafe_code)]

pub mod boxes;
pub mod chart;
pub mod heat;
pub mod render;
pub mod svg;

pub use render::{check, to_png, Checked, RenderError};
pub use svg::{Rgb, Svg};

/// The typeface every picture asks for; `render` loads the system's fonts and
/// falls back to any sans-serif face.
pub const FONT: &str = "DejaVu Sans, sans-serif";

/// An axis-aligned rectangle in picture units (1 unit = 1 CSS pixel).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rect {
    /// Left edge.
    pub x: f64,
    /// Top edge.
    pub y: f64,
    /// Width.
    pub w: f64,
    /// Height.
    pub h: f64,
}

impl Rect {
    /// A rectangle from its top-left corner and size.
    pub fn new(x: f64, y: f64, w: f64, h: f64) -> Rect {
        Rect { x, y, w, h }
    }

    /// Right edge.
    pub fn right(&self) -> f64 {
        self.x + self.w
    }

    /// Bottom edge.
    pub fn bottom(&self) -> f64 {
        self.y + self.h
    }
}

/// Width of `text` at `size` in the sans-serif face, estimated: DejaVu Sans
/// averages a little over half an em per character for digits and labels. The
/// layouts only need a box a label fits in, not exact metrics, and measuring
/// real glyphs would tie the SVG to the fonts of the machine that made it.
pub fn text_width(text: &str, size: f64) -> f64 {
    text.chars().count() as f64 * size * 0.62
}
