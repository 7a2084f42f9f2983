//! Nested boxes laid out like lstopo's pictures: each box has a header of text
//! lines, a row of attached boxes stretched to its width (NUMA nodes' memory),
//! and its children packed in rows so that the whole stays roughly twice as
//! wide as tall.

use crate::svg::{Anchor, Style, Svg};
use crate::{text_width, Rect, Rgb};

/// Font size of box labels.
pub const FONT_SIZE: f64 = 10.0;
const LINE_H: f64 = 13.0;
const PAD: f64 = 4.0;
const GAP: f64 = 5.0;
/// Rows wrap to keep a box's content about this many times as wide as tall
/// (wide enough that a core's two threads sit side by side, as lstopo draws
/// them).
const ASPECT: f64 = 3.0;

/// One box of a nested-box picture.
#[derive(Clone, Debug, Default)]
pub struct BoxNode {
    /// Names the box's rectangle in the SVG, so a check can count boxes of a
    /// kind (`pu-3`); ids must be unique within a picture.
    pub id: Option<String>,
    /// Header lines; the first is bold.
    pub lines: Vec<String>,
    /// Fill colour.
    pub fill: Option<Rgb>,
    /// Dashed outline: the box stands for several folded ones.
    pub dashed: bool,
    /// Boxes drawn as one row right under the header, stretched to the width.
    pub attached: Vec<BoxNode>,
    /// Boxes inside, packed in rows.
    pub children: Vec<BoxNode>,
}

/// A laid-out box: its size and where its attached boxes and children go,
/// relative to its top-left corner.
#[derive(Debug)]
pub struct Placed {
    /// Width.
    pub w: f64,
    /// Height.
    pub h: f64,
    attached: Vec<(f64, f64, Placed)>,
    children: Vec<(f64, f64, Placed)>,
}

impl BoxNode {
    /// A box with a header and a fill.
    pub fn new(lines: Vec<String>, fill: Rgb) -> BoxNode {
        BoxNode {
            lines,
            fill: Some(fill),
            ..BoxNode::default()
        }
    }

    /// The number of boxes in this tree, this one included.
    pub fn count(&self) -> usize {
        1 + self
            .attached
            .iter()
            .chain(&self.children)
            .map(BoxNode::count)
            .sum::<usize>()
    }

    fn header_w(&self) -> f64 {
        self.lines
            .iter()
            .map(|l| text_width(l, FONT_SIZE))
            .fold(0.0, f64::max)
    }

    fn header_h(&self) -> f64 {
        self.lines.len() as f64 * LINE_H
    }

    /// Computes every box's size and position.
    pub fn layout(&self) -> Placed {
        let attached: Vec<Placed> = self.attached.iter().map(BoxNode::layout).collect();
        let children: Vec<Placed> = self.children.iter().map(BoxNode::layout).collect();
        let (rows_w, rows_h, child_pos) = pack(&children);
        let attached_w = attached.iter().map(|p| p.w + GAP).sum::<f64>() - GAP;
        let attached_h = attached.iter().map(|p| p.h).fold(0.0, f64::max);
        let inner_w = self.header_w().max(rows_w).max(attached_w).max(12.0);
        let mut y = PAD + self.header_h();
        let mut placed_attached = Vec::new();
        if !attached.is_empty() {
            // Stretch the attached row to the inner width, share and share alike.
            let extra = (inner_w - attached_w) / attached.len() as f64;
            let mut x = PAD;
            for mut p in attached {
                p.w += extra;
                let w = p.w;
                placed_attached.push((x, y, p));
                x += w + GAP;
            }
            y += attached_h + GAP;
        }
        let placed_children = child_pos
            .into_iter()
            .zip(children)
            .map(|((x, cy), child)| (x + PAD, cy + y, child))
            .collect();
        let h = y + rows_h + if rows_h > 0.0 { PAD } else { 0.0 };
        Placed {
            w: inner_w + 2.0 * PAD,
            h: h.max(PAD + self.header_h() + PAD),
            attached: placed_attached,
            children: placed_children,
        }
    }

    /// Draws the box laid out as `placed` with its top-left corner at (x, y).
    pub fn paint(&self, svg: &mut Svg, placed: &Placed, x: f64, y: f64) {
        let mut style = Style::boxed(self.fill.unwrap_or(Rgb::WHITE));
        style.dashed = self.dashed;
        if self.fill.is_none() {
            style.fill = None;
        }
        svg.rect(
            Rect::new(x, y, placed.w, placed.h),
            &style,
            self.id.as_deref(),
        );
        for (k, line) in self.lines.iter().enumerate() {
            let baseline = y + PAD + (k as f64 + 1.0) * LINE_H - 3.0;
            svg.text(x + PAD, baseline, FONT_SIZE, Anchor::Start, k == 0, line);
        }
        for (node, (dx, dy, p)) in self.attached.iter().zip(&placed.attached) {
            node.paint(svg, p, x + dx, y + dy);
        }
        for (node, (dx, dy, p)) in self.children.iter().zip(&placed.children) {
            node.paint(svg, p, x + dx, y + dy);
        }
    }
}

/// Packs boxes left to right in rows: a few in one row, more in rows about
/// `ASPECT` times as wide as the whole is tall. Returns the rows' width and
/// height and each box's offset.
fn pack(boxes: &[Placed]) -> (f64, f64, Vec<(f64, f64)>) {
    if boxes.is_empty() {
        return (0.0, 0.0, Vec::new());
    }
    let widest = boxes.iter().map(|b| b.w).fold(0.0, f64::max);
    let tallest = boxes.iter().map(|b| b.h).fold(0.0, f64::max);
    if let Some(c) = grid_columns(boxes, widest, tallest) {
        // Near-equal boxes go on a grid of the largest one's cells, so that
        // columns line up.
        let pos = (0..boxes.len())
            .map(|k| {
                (
                    (k % c) as f64 * (widest + GAP),
                    (k / c) as f64 * (tallest + GAP),
                )
            })
            .collect();
        let rows = boxes.len().div_ceil(c) as f64;
        let cols = c.min(boxes.len()) as f64;
        return (
            cols * (widest + GAP) - GAP,
            rows * (tallest + GAP) - GAP,
            pos,
        );
    }
    let area: f64 = boxes.iter().map(|b| (b.w + GAP) * (b.h + GAP)).sum();
    let target = (area * ASPECT).sqrt().max(widest);
    let mut pos = Vec::with_capacity(boxes.len());
    let (mut x, mut y, mut row_h, mut width) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    for b in boxes {
        if x > 0.0 && x + b.w > target {
            y += row_h + GAP;
            x = 0.0;
            row_h = 0.0;
        }
        pos.push((x, y));
        x += b.w + GAP;
        width = width.max(x - GAP);
        row_h = row_h.max(b.h);
    }
    (width, y + row_h, pos)
}

/// For boxes of nearly one size (labels differ by a digit or two), the
/// number of grid columns whose shape comes nearest to `ASPECT`, preferring
/// full rows (4 cores as 2 × 2 or 4 × 1, not 3 + 1).
fn grid_columns(boxes: &[Placed], widest: f64, tallest: f64) -> Option<usize> {
    let near = |a: f64, b: f64| a >= 0.8 * b;
    if !boxes
        .iter()
        .all(|b| near(b.w, widest) && near(b.h, tallest))
    {
        return None;
    }
    let (w, h) = (widest + GAP, tallest + GAP);
    let n = boxes.len();
    let score = |c: usize| {
        let rows = n.div_ceil(c);
        let ratio = (c as f64 * w) / (rows as f64 * h);
        (ratio.ln() - ASPECT.ln()).abs() + if n.is_multiple_of(c) { 0.0 } else { 0.7 }
    };
    (1..=n).min_by(|&a, &b| score(a).total_cmp(&score(b)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaf(label: &str) -> BoxNode {
        BoxNode::new(vec![label.into()], Rgb::WHITE)
    }

    /// Children never overlap and stay inside their parent, at any count.
    #[test]
    fn children_are_disjoint_and_inside() {
        for n in [1, 2, 4, 5, 17, 64] {
            let mut parent = leaf("Package L#0");
            parent.attached.push(leaf("NUMANode P#0"));
            parent.children = (0..n).map(|i| leaf(&format!("Core L#{i}"))).collect();
            let p = parent.layout();
            let rects: Vec<Rect> = p
                .children
                .iter()
                .chain(&p.attached)
                .map(|(x, y, c)| Rect::new(*x, *y, c.w, c.h))
                .collect();
            for (i, a) in rects.iter().enumerate() {
                assert!(a.x >= 0.0 && a.y > 0.0 && a.right() <= p.w && a.bottom() <= p.h);
                for b in &rects[i + 1..] {
                    let apart = a.right() <= b.x
                        || b.right() <= a.x
                        || a.bottom() <= b.y
                        || b.bottom() <= a.y;
                    assert!(apart, "{n} children: {a:?} overlaps {b:?}");
                }
            }
            if n > 4 {
                assert!(p.w < p.h * 6.0, "{n} children: {} x {}", p.w, p.h);
            }
        }
    }
}
