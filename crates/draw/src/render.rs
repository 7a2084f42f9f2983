//! Rendering with a real SVG renderer: `usvg` parses (and so checks) the
//! document, `resvg` rasterises it. PNG output and the pictures' tests both
//! come through here.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use resvg::{tiny_skia, usvg};

/// Why a picture could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// The SVG renderer refused the document.
    #[error("not a valid SVG document: {0}")]
    Parse(String),
    /// The picture has no area or is too large to rasterise.
    #[error("cannot rasterise a {0} x {1} picture")]
    Size(f64, f64),
    /// PNG encoding failed.
    #[error("PNG encoding failed: {0}")]
    Png(String),
}

/// What a real renderer made of a picture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    /// Rasterised width in pixels.
    pub width: u32,
    /// Rasterised height in pixels.
    pub height: u32,
    /// Rendered shapes by id prefix (the id up to its first `-`), as the
    /// renderer's tree has them: `{"pu": 16, "core": 8}`.
    pub ids: BTreeMap<String, usize>,
    /// Text elements the renderer laid out.
    pub texts: usize,
    /// Pixels that are not white.
    pub inked: usize,
}

impl Checked {
    /// Shapes whose id starts with `prefix-`.
    pub fn count(&self, prefix: &str) -> usize {
        self.ids.get(prefix).copied().unwrap_or(0)
    }
}

/// The system's fonts, loaded once (the picture's text needs a face to be
/// rendered; without one `usvg` drops the text, and the check says so).
fn fonts() -> Arc<usvg::fontdb::Database> {
    static FONTS: OnceLock<Arc<usvg::fontdb::Database>> = OnceLock::new();
    FONTS
        .get_or_init(|| {
            let mut db = usvg::fontdb::Database::new();
            db.load_system_fonts();
            db.set_sans_serif_family("DejaVu Sans");
            Arc::new(db)
        })
        .clone()
}

fn parse(svg: &str) -> Result<usvg::Tree, RenderError> {
    let options = usvg::Options {
        fontdb: fonts(),
        ..usvg::Options::default()
    };
    usvg::Tree::from_str(svg, &options).map_err(|e| RenderError::Parse(e.to_string()))
}

/// Pictures larger than this many pixels on a side are refused rather than
/// allocated.
const MAX_SIDE: f32 = 20_000.0;

fn rasterise(tree: &usvg::Tree) -> Result<tiny_skia::Pixmap, RenderError> {
    let size = tree.size();
    let (w, h) = (size.width().ceil(), size.height().ceil());
    let err = || RenderError::Size(f64::from(w), f64::from(h));
    if w > MAX_SIDE || h > MAX_SIDE {
        return Err(err());
    }
    let mut pixmap = tiny_skia::Pixmap::new(w as u32, h as u32).ok_or_else(err)?;
    resvg::render(tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    Ok(pixmap)
}

/// The picture as PNG.
pub fn to_png(svg: &str) -> Result<Vec<u8>, RenderError> {
    rasterise(&parse(svg)?)?
        .encode_png()
        .map_err(|e| RenderError::Png(e.to_string()))
}

fn walk(group: &usvg::Group, ids: &mut BTreeMap<String, usize>, texts: &mut usize) {
    for node in group.children() {
        let id = node.id();
        if !id.is_empty() {
            let prefix = id.split('-').next().unwrap_or(id);
            *ids.entry(prefix.to_string()).or_insert(0) += 1;
        }
        match node {
            usvg::Node::Group(g) => walk(g, ids, texts),
            usvg::Node::Text(_) => *texts += 1,
            usvg::Node::Path(_) | usvg::Node::Image(_) => {}
        }
    }
}

/// Parses and rasterises `svg` with a real renderer and reports what it drew.
pub fn check(svg: &str) -> Result<Checked, RenderError> {
    let tree = parse(svg)?;
    let pixmap = rasterise(&tree)?;
    let mut ids = BTreeMap::new();
    let mut texts = 0;
    walk(tree.root(), &mut ids, &mut texts);
    let inked = pixmap
        .pixels()
        .iter()
        .filter(|p| (p.red(), p.green(), p.blue(), p.alpha()) != (255, 255, 255, 255))
        .count();
    Ok(Checked {
        width: pixmap.width(),
        height: pixmap.height(),
        ids,
        texts,
        inked,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::svg::{Anchor, Style, Svg};
    use crate::{Rect, Rgb};

    #[test]
    fn renderer_sees_named_shapes_text_and_ink() {
        let mut s = Svg::new(100.0, 50.0);
        s.rect(
            Rect::new(10.0, 10.0, 20.0, 20.0),
            &Style::fill(Rgb::BLACK),
            Some("pu-0"),
        );
        s.rect(
            Rect::new(40.0, 10.0, 20.0, 20.0),
            &Style::fill(Rgb::BLACK),
            Some("pu-1"),
        );
        s.text(5.0, 45.0, 10.0, Anchor::Start, false, "PU");
        let c = check(&s.finish()).unwrap();
        assert_eq!((c.width, c.height), (100, 50));
        assert_eq!(c.count("pu"), 2);
        assert_eq!(c.texts, 1, "no font found: install fonts-dejavu-core");
        assert!(c.inked >= 800, "{c:?}");
        assert!(to_png(&Svg::new(10.0, 10.0).finish())
            .unwrap()
            .starts_with(b"\x89PNG"));
    }

    #[test]
    fn broken_documents_are_refused() {
        assert!(matches!(check("<svg"), Err(RenderError::Parse(_))));
        assert!(check("not svg at all").is_err());
    }
}
