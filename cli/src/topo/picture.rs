//! `manycore topo --format svg|png`: the display tree of the text format drawn
//! as lstopo-like nested boxes, with the NUMA distances as a heat map beside it.
//!
//! Both formats come from one tree (`super::Tree`), so the picture shows the
//! same objects, L# and P# as the text. Small machines are drawn whole; past
//! [`UNFOLDED_BOXES`] boxes, runs of identical siblings are folded as the text
//! folds them, except that siblings differing only in their NUMA node ids fold
//! too (a 256-node machine's packages would otherwise be drawn one by one): the
//! first of a run is drawn, and one dashed box stands for the others and names
//! their indices and NUMA nodes.

use std::collections::HashMap;

use std::fmt::Write as _;

use draw::boxes::BoxNode;
use draw::heat::HeatMap;
use draw::svg::Anchor;
use draw::{Rgb, Svg};
use topology::{LevelKind, Topology};

use super::{ObjKind, Tree, ROOT};

/// Machines up to this many boxes are drawn whole; larger ones fold.
pub const UNFOLDED_BOXES: usize = 1500;

/// Shortest run of identical siblings that folds.
const MIN_FOLD: usize = 3;

const MARGIN: f64 = 10.0;
const TITLE_H: f64 = 24.0;

/// Fill of each kind of object, after lstopo's palette: the larger the
/// object, the darker; caches pale blue; memory pale red.
fn fill(kind: ObjKind, offline: bool) -> Rgb {
    if offline {
        return Rgb(190, 190, 190);
    }
    match kind {
        ObjKind::Machine => Rgb::WHITE,
        ObjKind::Level(LevelKind::Package) => Rgb(214, 214, 214),
        ObjKind::NumaGroup => Rgb(238, 238, 238),
        ObjKind::Level(LevelKind::Die) => Rgb(228, 228, 228),
        ObjKind::Level(LevelKind::Cluster) => Rgb(236, 236, 228),
        ObjKind::Level(LevelKind::BigCore) => Rgb(200, 200, 200),
        ObjKind::Cache(..) => Rgb(232, 242, 252),
        ObjKind::Level(LevelKind::Core) => Rgb(190, 190, 190),
        ObjKind::Pu => Rgb::WHITE,
    }
}

const NUMA_FILL: Rgb = Rgb(242, 222, 220);

/// The SVG id prefix of a kind: `pu`, `core`, `l2`, `package`...
fn id_prefix(kind: ObjKind) -> String {
    kind.name().to_ascii_lowercase()
}

impl Tree<'_> {
    /// Header lines of object `i`: type, L# and size on the first, P# on the
    /// second, so that PU boxes stay narrow.
    fn box_lines(&self, i: usize) -> Vec<String> {
        let o = &self.objs[i];
        let mut first = format!("{} L#{}", o.kind.name(), o.logical);
        if let Some(size) = o.size_bytes {
            let _ = write!(first, " ({})", super::human_size(size));
        }
        let mut lines = vec![first];
        if let Some(os) = o.os_id {
            lines.push(format!("P#{os}"));
        }
        if o.offline {
            lines.push("offline".into());
        }
        lines
    }

    fn memory_box(&self, n: usize) -> BoxNode {
        let mut b = BoxNode::new(vec![self.node_label(n, true)], NUMA_FILL);
        b.id = Some(format!("numanode-{}", self.node_logical[n]));
        b
    }

    /// Fold keys for the picture: like `Obj::shape`, without NUMA node ids.
    fn loose_shapes(&self) -> Vec<usize> {
        fn walk(
            t: &Tree,
            i: usize,
            seen: &mut HashMap<(String, usize, Vec<usize>), usize>,
            out: &mut [usize],
        ) {
            for &c in &t.objs[i].children {
                walk(t, c, seen, out);
            }
            let o = &t.objs[i];
            let key = (
                t.shape_label(i),
                o.memory.len(),
                o.children.iter().map(|&c| out[c]).collect(),
            );
            let next = seen.len();
            out[i] = *seen.entry(key).or_insert(next);
        }
        let mut out = vec![0; self.objs.len()];
        walk(self, ROOT, &mut HashMap::new(), &mut out);
        out
    }

    /// Object `i` and everything under it as boxes, runs of equal `shapes`
    /// folded when `fold` is given.
    fn boxes(&self, i: usize, fold: Option<&[usize]>) -> BoxNode {
        let o = &self.objs[i];
        let mut b = BoxNode::new(self.box_lines(i), fill(o.kind, o.offline));
        b.id = Some(format!("{}-{}", id_prefix(o.kind), o.logical));
        b.attached = o.memory.iter().map(|&m| self.memory_box(m)).collect();
        let children = &o.children;
        let mut a = 0;
        while a < children.len() {
            let mut end = a + 1;
            // A run of two is drawn whole: a fold box would save nothing.
            if let Some(shapes) = fold {
                let shape = shapes[children[a]];
                while end < children.len() && shapes[children[end]] == shape {
                    end += 1;
                }
                if end - a < MIN_FOLD {
                    end = a + 1;
                }
            }
            b.children.push(self.boxes(children[a], fold));
            if end - a > 1 {
                b.children.push(self.fold_box(&children[a + 1..end]));
            }
            a = end;
        }
        b
    }

    /// The ids of the NUMA nodes attached in the subtrees of `objs`.
    fn nodes_under(&self, objs: &[usize], out: &mut Vec<u32>) {
        for &i in objs {
            out.extend(self.objs[i].memory.iter().map(|&m| self.topo.nodes()[m].id));
            self.nodes_under(&self.objs[i].children, out);
        }
    }

    /// The dashed box standing for the folded rest of a run.
    fn fold_box(&self, run: &[usize]) -> BoxNode {
        let head = &self.objs[run[0]];
        let mut lines = vec![format!("+ {} × the same", run.len())];
        lines.push(self.run_indices(run, self.chain(run[0]).len()));
        let mut nodes = Vec::new();
        self.nodes_under(run, &mut nodes);
        if !nodes.is_empty() {
            lines.push(format!("NUMANode P#{}", super::id_list(&nodes)));
        }
        let mut b = BoxNode::new(lines, fill(head.kind, head.offline).mix(Rgb::WHITE, 0.5));
        b.dashed = true;
        b.id = Some(format!("fold-{}-{}", id_prefix(head.kind), head.logical));
        b
    }
}

/// The picture as SVG text; `fold` forces folding on (`Some(true)`), off, or
/// leaves it to the size of the machine.
pub fn svg(t: &Topology, fold: Option<bool>) -> String {
    let tree = Tree::new(t);
    let whole = tree.boxes(ROOT, None);
    let fold = fold.unwrap_or(whole.count() > UNFOLDED_BOXES);
    let mut machine = if fold {
        tree.boxes(ROOT, Some(&tree.loose_shapes()))
    } else {
        whole
    };
    machine.lines = vec![format!("Machine ({})", t.arch().uname())];
    let placed = machine.layout();

    let labels: Vec<String> = t.nodes().iter().map(|n| format!("#{}", n.id)).collect();
    let values: Vec<Vec<u32>> = (0..t.nodes().len())
        .map(|i| (0..t.nodes().len()).map(|j| t.distance(i, j)).collect())
        .collect();
    let heat = HeatMap {
        title: "NUMA distances",
        labels: &labels,
        values: &values,
    };
    let heat_size = if t.has_distances() {
        Some(heat.size())
    } else {
        None
    };
    let title = super::summary_line(t);
    let (hw, hh) = heat_size.map_or((0.0, 0.0), |(w, h)| (w + 2.0 * MARGIN, h));
    let width = (2.0 * MARGIN + placed.w + hw).max(draw::text_width(&title, 12.0) + 2.0 * MARGIN);
    let height = TITLE_H + MARGIN + placed.h.max(hh);
    let mut svg = Svg::new(width, height);
    svg.text(MARGIN, 17.0, 12.0, Anchor::Start, true, &title);
    if fold {
        let note = "dashed boxes stand for runs of identical siblings";
        svg.text(width - MARGIN, 17.0, 10.0, Anchor::End, false, note);
    }
    machine.paint(&mut svg, &placed, MARGIN, TITLE_H);
    if heat_size.is_some() {
        heat.draw(&mut svg, MARGIN + placed.w + 2.0 * MARGIN, TITLE_H);
    }
    svg.finish()
}
