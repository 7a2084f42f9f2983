//! `manycore topo`: show a machine's topology in one of several formats.
//!
//! The JSON format is documented in `docs/topology-json.md`; its top level always
//! has `cpus_possible`, `cpus_online`, `packages`, `cores`, `pus`, `numa_nodes`,
//! `distances` and `levels`.

use std::collections::HashMap;
use std::fmt::Write as _;

use std::io::IsTerminal;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use serde::Serialize;
use topology::{CacheKind, CompactMask, CpuMask, LevelKind, Topology};

use crate::source::SourceArgs;

pub mod picture;

/// Output formats of `manycore topo`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum TopoFormat {
    /// An lstopo-like tree that folds identical siblings.
    Text,
    /// The documented JSON schema (docs/topology-json.md).
    Json,
    /// hwloc XML v2, readable by `lstopo --input FILE`.
    Xml,
    /// An hwloc synthetic string (regular machines only).
    Synthetic,
    /// lscpu's summary lines for the fields manycore models.
    Lscpu,
    /// An lstopo-like picture of nested boxes with a NUMA distance heat map
    /// (SVG); large machines fold runs of identical siblings.
    Svg,
    /// The same picture rasterised (PNG; binary, so written with --output or
    /// to a redirected standard output).
    Png,
}

/// Arguments of `manycore topo`.
#[derive(Args, Debug)]
pub struct TopoArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = TopoFormat::Text)]
    pub format: TopoFormat,
    /// List the built-in catalogue of machines and exit.
    #[arg(long)]
    pub list_machines: bool,
    /// Write the output to FILE instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
}

/// Runs `manycore topo`.
pub fn run(args: &TopoArgs) -> Result<()> {
    if args.list_machines {
        let entries = readers::catalogue::list();
        let width = entries.iter().map(|e| e.name.len()).max().unwrap_or(0);
        let mut out = String::new();
        for e in entries {
            let _ = writeln!(out, "{:width$}  {}", e.name, e.summary);
        }
        return crate::write_stdout(&out);
    }
    let topo = args.source.load()?;
    let bytes = match args.format {
        TopoFormat::Png => draw::to_png(&picture::svg(&topo, None))?,
        format => render(&topo, format)?.into_bytes(),
    };
    match &args.output {
        Some(path) => std::fs::write(path, &bytes)
            .with_context(|| format!("{}: cannot write", path.display())),
        None if args.format == TopoFormat::Png && std::io::stdout().is_terminal() => {
            anyhow::bail!("--format png: PNG is binary; name a file with --output FILE or redirect standard output")
        }
        None => crate::write_stdout_bytes(&bytes),
    }
}

/// Renders `topo` in `format`; the whole output, so that nothing partial is
/// printed when rendering fails.
pub fn render(topo: &Topology, format: TopoFormat) -> Result<String> {
    Ok(match format {
        TopoFormat::Text => text_tree(topo),
        TopoFormat::Json => {
            let mut s = serde_json::to_string_pretty(&JsonTopology::from(topo))?;
            s.push('\n');
            s
        }
        TopoFormat::Xml => readers::xml::write(topo),
        TopoFormat::Synthetic => {
            let mut s = readers::synthetic::write(topo)?;
            s.push('\n');
            s
        }
        TopoFormat::Lscpu => readers::lscpu::summary(topo),
        TopoFormat::Svg => picture::svg(topo, None),
        TopoFormat::Png => anyhow::bail!("PNG is binary: use draw::to_png on the SVG"),
    })
}

/// The JSON document; see docs/topology-json.md.
#[derive(Serialize)]
pub struct JsonTopology {
    schema: &'static str,
    source: String,
    arch: String,
    model_name: Option<String>,
    hypervisor: Option<String>,
    shared_processor: bool,
    nr_cpu_ids: usize,
    cpus_possible: String,
    cpus_present: String,
    cpus_online: String,
    packages: usize,
    dies: usize,
    clusters: usize,
    cores: usize,
    pus: usize,
    numa_nodes: usize,
    distances: Vec<Vec<u32>>,
    levels: Vec<JsonLevel>,
    nodes: Vec<JsonNode>,
    caches: Vec<JsonCache>,
    cpus: Vec<JsonCpu>,
}

#[derive(Serialize)]
struct JsonLevel {
    kind: &'static str,
    count: usize,
    groups: Vec<JsonGroup>,
}

#[derive(Serialize)]
struct JsonGroup {
    os_id: Option<u32>,
    cpus: String,
}

#[derive(Serialize)]
struct JsonNode {
    id: u32,
    cpus: String,
    memory_bytes: Option<u64>,
}

#[derive(Serialize)]
struct JsonCache {
    level: u8,
    kind: &'static str,
    size_bytes: Option<u64>,
    line_bytes: Option<u32>,
    ways: Option<u32>,
    cpus: String,
}

#[derive(Serialize)]
struct JsonCpu {
    id: u32,
    hw_id: Option<u64>,
    online: bool,
    thread: u32,
    core: Option<u32>,
    package: Option<u32>,
    node: Option<u32>,
    kind: Option<String>,
    capacity: Option<u32>,
}

impl From<&Topology> for JsonTopology {
    fn from(t: &Topology) -> Self {
        JsonTopology {
            schema: "manycore-topology/1",
            source: t.source().to_string(),
            arch: t.arch().uname().to_string(),
            model_name: t.model_name().map(str::to_string),
            hypervisor: t.hypervisor().map(str::to_string),
            shared_processor: t.shared_processor(),
            nr_cpu_ids: t.nr_cpu_ids(),
            cpus_possible: t.possible().to_list_string(),
            cpus_present: t.present().to_list_string(),
            cpus_online: t.online().to_list_string(),
            packages: t.count(LevelKind::Package),
            dies: t.count(LevelKind::Die),
            clusters: t.count(LevelKind::Cluster),
            cores: t.count(LevelKind::Core),
            pus: t.cpus().len(),
            numa_nodes: t.nodes().len(),
            distances: json_distances(t),
            levels: t.levels().iter().map(json_level).collect(),
            nodes: t
                .nodes()
                .iter()
                .map(|nd| JsonNode {
                    id: nd.id,
                    cpus: nd.cpus.to_list_string(),
                    memory_bytes: nd.memory_bytes,
                })
                .collect(),
            caches: t.caches().iter().map(json_cache).collect(),
            cpus: t.cpus().iter().map(|c| json_cpu(t, c)).collect(),
        }
    }
}

/// The node distance matrix, empty when the source gives none.
fn json_distances(t: &Topology) -> Vec<Vec<u32>> {
    if !t.has_distances() {
        return Vec::new();
    }
    let n = t.nodes().len();
    (0..n)
        .map(|i| (0..n).map(|j| t.distance(i, j)).collect())
        .collect()
}

fn json_level(l: &topology::Level) -> JsonLevel {
    JsonLevel {
        kind: l.kind.name(),
        count: l.groups.len(),
        groups: l
            .groups
            .iter()
            .map(|g| JsonGroup {
                os_id: g.os_id,
                cpus: g.cpus.to_list_string(),
            })
            .collect(),
    }
}

fn json_cache(c: &topology::Cache) -> JsonCache {
    JsonCache {
        level: c.level,
        kind: match c.kind {
            CacheKind::Data => "data",
            CacheKind::Instruction => "instruction",
            CacheKind::Unified => "unified",
        },
        size_bytes: c.size_bytes,
        line_bytes: c.line_bytes,
        ways: c.ways,
        cpus: c.cpus.to_list_string(),
    }
}

/// One CPU, its core and package by their OS ids, its node by id.
fn json_cpu(t: &Topology, c: &topology::Cpu) -> JsonCpu {
    let os_id = |kind: LevelKind| {
        let g = c.group(kind)?;
        t.level(kind)?.groups[g as usize].os_id
    };
    JsonCpu {
        id: c.id,
        hw_id: c.hw_id,
        online: c.online,
        thread: c.thread,
        core: os_id(LevelKind::Core),
        package: os_id(LevelKind::Package),
        node: c.node.map(|i| t.nodes()[i as usize].id),
        kind: c.kind.map(|k| t.core_kinds()[k as usize].name.clone()),
        capacity: c.capacity,
    }
}

/// What one object of the display tree is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum ObjKind {
    Machine,
    Level(LevelKind),
    Cache(u8, CacheKind),
    /// A group made for a NUMA node whose CPUs match no other object, as hwloc
    /// does, so that the node's CPUs sit under it.
    NumaGroup,
    Pu,
}

impl ObjKind {
    /// The type name shown, which also numbers the L# indices.
    fn name(self) -> String {
        match self {
            ObjKind::Machine => "Machine".into(),
            ObjKind::Level(LevelKind::Package) => "Package".into(),
            ObjKind::Level(LevelKind::Die) => "Die".into(),
            ObjKind::Level(LevelKind::Cluster) => "Cluster".into(),
            ObjKind::Level(LevelKind::BigCore) => "BigCore".into(),
            ObjKind::Level(LevelKind::Core) => "Core".into(),
            ObjKind::Cache(level, kind) => format!("L{level}{}", kind.suffix()),
            ObjKind::NumaGroup => "Group".into(),
            ObjKind::Pu => "PU".into(),
        }
    }

    /// Which of two objects with the same CPUs is the outer one: package, die,
    /// L3 and larger caches, cluster, big core, L2, L1, core, PU (hwloc's order,
    /// with clusters where Linux's cluster level sits: above the L2 it shares).
    fn rank(self) -> u32 {
        match self {
            ObjKind::Machine => 0,
            ObjKind::Level(LevelKind::Package) => 10,
            ObjKind::NumaGroup => 15,
            ObjKind::Level(LevelKind::Die) => 20,
            ObjKind::Cache(level, _) if level >= 3 => 40 - u32::from(level.min(9)),
            ObjKind::Level(LevelKind::Cluster) => 50,
            ObjKind::Level(LevelKind::BigCore) => 60,
            ObjKind::Cache(level, kind) => {
                80 - 10 * u32::from(level)
                    + match kind {
                        CacheKind::Unified => 0,
                        CacheKind::Data => 1,
                        CacheKind::Instruction => 2,
                    }
            }
            ObjKind::Level(LevelKind::Core) => 90,
            ObjKind::Pu => 100,
        }
    }
}

/// One object of the display tree (an arena entry; children are indices).
struct Obj {
    kind: ObjKind,
    cpus: CompactMask,
    first_cpu: usize,
    os_id: Option<u32>,
    size_bytes: Option<u64>,
    offline: bool,
    /// Normal children, in order of their first CPU.
    children: Vec<usize>,
    /// Indices into `Topology::nodes` of the NUMA nodes attached here, by id.
    memory: Vec<usize>,
    /// hwloc's logical index: the object's rank among objects of its type in
    /// depth-first order.
    logical: usize,
    /// Equal for two objects exactly when their whole subtrees look the same
    /// (labels without indices, NUMA node ids included): the fold key.
    shape: usize,
}

/// The tree of objects by CPU-set inclusion, with NUMA nodes attached.
struct Tree<'t> {
    topo: &'t Topology,
    objs: Vec<Obj>,
    /// Logical index of each NUMA node (by position in `Topology::nodes`).
    node_logical: Vec<usize>,
}

const ROOT: usize = 0;

/// The fold keys given so far, looked up without allocating per object.
#[derive(Default)]
struct Shapes {
    /// Label-without-indices id of each (kind, size, offline) met: two sizes
    /// can print alike, so ids come from the printed label.
    labels: HashMap<(ObjKind, Option<u64>, bool), usize>,
    label_ids: HashMap<String, usize>,
    /// Shape id of each key: label id, count of NUMA nodes, their ids, then
    /// the children's shape ids.
    seen: HashMap<Vec<usize>, usize>,
    /// The key being built, reused from object to object.
    key: Vec<usize>,
}

impl<'t> Tree<'t> {
    fn new(t: &'t Topology) -> Tree<'t> {
        let obj = |kind, cpus: CompactMask, os_id, size_bytes, offline| Obj {
            kind,
            first_cpu: cpus.first().unwrap_or(usize::MAX),
            cpus,
            os_id,
            size_bytes,
            offline,
            children: Vec::new(),
            memory: Vec::new(),
            logical: 0,
            shape: 0,
        };
        let mut objs = vec![obj(ObjKind::Machine, t.known().into(), None, None, false)];
        for level in t.levels() {
            for g in &level.groups {
                if !g.cpus.is_empty() {
                    objs.push(obj(
                        ObjKind::Level(level.kind),
                        g.cpus.clone(),
                        g.os_id,
                        None,
                        false,
                    ));
                }
            }
        }
        for c in t.caches() {
            if !c.cpus.is_empty() {
                objs.push(obj(
                    ObjKind::Cache(c.level, c.kind),
                    c.cpus.clone(),
                    None,
                    c.size_bytes,
                    false,
                ));
            }
        }
        for c in t.cpus() {
            let cpus = CompactMask::single(c.id as usize);
            objs.push(obj(ObjKind::Pu, cpus, Some(c.id), None, !c.online));
        }
        // Outer objects first, so that each one finds its container already placed.
        let weights: Vec<usize> = objs.iter().map(|o| o.cpus.weight()).collect();
        let mut order: Vec<usize> = (1..objs.len()).collect();
        order.sort_by_key(|&i| {
            (
                std::cmp::Reverse(weights[i]),
                objs[i].kind.rank(),
                objs[i].first_cpu,
            )
        });
        // Per CPU, the objects placed so far that hold it, in placement order:
        // a container's children that hold a CPU are found among these few
        // (one per level) instead of by scanning all of its children, which is
        // objects x children (an L3 of a 16384-CPU machine has 1024 L2s).
        let slots = objs
            .iter()
            .filter_map(|o| o.cpus.last())
            .max()
            .map_or(0, |l| l + 1);
        let mut holding: Vec<Vec<usize>> = vec![Vec::new(); slots];
        let mut parent = vec![ROOT; objs.len()];
        for i in order {
            let p = Self::deepest_container(&objs, &parent, &holding, i);
            objs[p].children.push(i);
            parent[i] = p;
            for cpu in objs[i].cpus.iter() {
                holding[cpu].push(i);
            }
        }
        let mut tree = Tree {
            topo: t,
            objs,
            node_logical: vec![0; t.nodes().len()],
        };
        let mut nodes: Vec<usize> = (0..t.nodes().len()).collect();
        nodes.sort_by_key(|&n| t.nodes()[n].id);
        for n in nodes {
            tree.attach_node(n);
        }
        let keys: Vec<(usize, u32)> = tree
            .objs
            .iter()
            .map(|o| (o.first_cpu, o.kind.rank()))
            .collect();
        for o in &mut tree.objs {
            o.children.sort_by_key(|&c| keys[c]);
        }
        tree.number(ROOT, &mut Vec::new(), &mut 0);
        tree.shape_ids(ROOT, &mut Shapes::default());
        tree
    }

    /// Makes every object's fold key unique, so that no run folds.
    fn unfold(&mut self) {
        for (i, o) in self.objs.iter_mut().enumerate() {
            o.shape = i;
        }
    }

    /// The deepest placed object holding all of object `i`'s CPUs (the root at
    /// worst): from the root down, at each step the first child placed that
    /// holds them all. The children of `cur` holding `i`'s first CPU are the
    /// objects in `holding[first]` whose parent is `cur`, in the order they
    /// were placed, which is the order of `cur`'s children.
    fn deepest_container(
        objs: &[Obj],
        parent: &[usize],
        holding: &[Vec<usize>],
        i: usize,
    ) -> usize {
        let (cpus, first) = (&objs[i].cpus, objs[i].first_cpu);
        let candidates = holding.get(first).map_or(&[][..], Vec::as_slice);
        let mut cur = ROOT;
        'down: loop {
            for &c in candidates {
                if parent[c] == cur && cpus.is_subset(&objs[c].cpus) {
                    cur = c;
                    continue 'down;
                }
            }
            return cur;
        }
    }

    /// Attaches NUMA node `n` as a memory child of the outermost object with
    /// exactly its CPUs; failing that, of a new group holding exactly the
    /// objects inside the node (when no object straddles its boundary), or else
    /// of the smallest object containing all its CPUs. Memory-only nodes, and
    /// nodes with CPUs the machine does not list, go to the machine.
    fn attach_node(&mut self, n: usize) {
        let node = &self.topo.nodes()[n];
        let cpus = node.cpus.clone();
        if cpus.is_empty() || !cpus.is_subset(&self.objs[ROOT].cpus) {
            self.objs[ROOT].memory.push(n);
            return;
        }
        let first = cpus.first().expect("not empty");
        let mut cur = ROOT;
        loop {
            if self.objs[cur].cpus == cpus {
                self.objs[cur].memory.push(n);
                return;
            }
            let inner =
                self.objs[cur].children.iter().copied().find(|&c| {
                    self.objs[c].cpus.contains(first) && cpus.is_subset(&self.objs[c].cpus)
                });
            match inner {
                Some(c) => cur = c,
                None => break,
            }
        }
        let children = &self.objs[cur].children;
        let straddles = children.iter().any(|&c| {
            let o = &self.objs[c].cpus;
            o.intersects(&cpus) && !o.is_subset(&cpus)
        });
        if straddles {
            self.objs[cur].memory.push(n);
            return;
        }
        let (inside, outside): (Vec<usize>, Vec<usize>) = children
            .iter()
            .partition(|&&c| self.objs[c].cpus.is_subset(&cpus));
        let group = self.objs.len();
        self.objs.push(Obj {
            kind: ObjKind::NumaGroup,
            cpus,
            first_cpu: first,
            os_id: None,
            size_bytes: None,
            offline: false,
            children: inside,
            memory: vec![n],
            logical: 0,
            shape: 0,
        });
        self.objs[cur].children = outside;
        self.objs[cur].children.push(group);
    }

    /// Numbers objects of each type, and NUMA nodes, in depth-first order.
    /// A type is counted by its kind: no two kinds share a name (`ObjKind::name`),
    /// and the few kinds of a tree are found by a scan without a name per object.
    fn number(&mut self, i: usize, counters: &mut Vec<(ObjKind, usize)>, nodes: &mut usize) {
        let kind = self.objs[i].kind;
        let k = match counters.iter().position(|&(c, _)| c == kind) {
            Some(k) => k,
            None => {
                counters.push((kind, 0));
                counters.len() - 1
            }
        };
        self.objs[i].logical = counters[k].1;
        counters[k].1 += 1;
        for &m in &self.objs[i].memory {
            self.node_logical[m] = *nodes;
            *nodes += 1;
        }
        for k in 0..self.objs[i].children.len() {
            let c = self.objs[i].children[k];
            self.number(c, counters, nodes);
        }
    }

    /// Gives every object its fold key: the same small number for the same
    /// label-without-indices, NUMA node ids and children's keys.
    fn shape_ids(&mut self, i: usize, shapes: &mut Shapes) {
        for k in 0..self.objs[i].children.len() {
            let c = self.objs[i].children[k];
            self.shape_ids(c, shapes);
        }
        let o = &self.objs[i];
        let label = match shapes.labels.get(&(o.kind, o.size_bytes, o.offline)) {
            Some(&label) => label,
            None => {
                let next = shapes.label_ids.len();
                let label = *shapes.label_ids.entry(self.shape_label(i)).or_insert(next);
                shapes
                    .labels
                    .insert((o.kind, o.size_bytes, o.offline), label);
                label
            }
        };
        let key = &mut shapes.key;
        key.clear();
        key.extend([label, o.memory.len()]);
        key.extend(o.memory.iter().map(|&m| self.topo.nodes()[m].id as usize));
        key.extend(o.children.iter().map(|&c| self.objs[c].shape));
        let shape = match shapes.seen.get(key.as_slice()) {
            Some(&shape) => shape,
            None => {
                let next = shapes.seen.len();
                shapes.seen.insert(key.clone(), next);
                next
            }
        };
        self.objs[i].shape = shape;
    }

    /// "L2 (1MB)", "PU (offline)", "Core": what identical siblings share.
    fn shape_label(&self, i: usize) -> String {
        let o = &self.objs[i];
        let mut s = o.kind.name();
        if let Some(size) = o.size_bytes {
            let _ = write!(s, " ({})", human_size(size));
        }
        if o.offline {
            s.push_str(" (offline)");
        }
        s
    }

    /// "Core L#3 P#3", "L2 L#0 (1MB)", "PU L#5 P#9 (offline)".
    fn label(&self, i: usize) -> String {
        let o = &self.objs[i];
        let mut s = format!("{} L#{}", o.kind.name(), o.logical);
        if let Some(os) = o.os_id {
            let _ = write!(s, " P#{os}");
        }
        if let Some(size) = o.size_bytes {
            let _ = write!(s, " ({})", human_size(size));
        }
        if o.offline {
            s.push_str(" (offline)");
        }
        s
    }

    fn node_label(&self, n: usize, with_index: bool) -> String {
        let node = &self.topo.nodes()[n];
        let mut s = if with_index {
            format!("NUMANode L#{} P#{}", self.node_logical[n], node.id)
        } else {
            format!("NUMANode P#{}", node.id)
        };
        if let Some(m) = node.memory_bytes {
            let _ = write!(s, " ({})", human_size(m));
        }
        if node.cpus.is_empty() {
            s.push_str(" (memory only)");
        }
        s
    }

    /// The objects printed on one line from `i` down: while an object has a
    /// single child with the same CPUs and no memory, the child joins the line
    /// (hwloc's `L2 L#0 (1MB) + L1d L#0 (32KB) + Core L#0 + PU L#0`).
    fn chain(&self, i: usize) -> Vec<usize> {
        let mut chain = vec![i];
        let mut cur = i;
        while let [only] = self.objs[cur].children[..] {
            if !self.objs[cur].memory.is_empty() || self.objs[only].cpus != self.objs[cur].cpus {
                break;
            }
            chain.push(only);
            cur = only;
        }
        chain
    }

    /// Prints the memory and normal children of `i`, folding runs of identical
    /// siblings. `indexed` is false inside a fold, where only shapes are shown.
    fn print_children(&self, i: usize, depth: usize, indexed: bool, out: &mut String) {
        let indent = "  ".repeat(depth);
        for &m in &self.objs[i].memory {
            let _ = writeln!(out, "{indent}{}", self.node_label(m, indexed));
        }
        let children = &self.objs[i].children;
        let mut a = 0;
        while a < children.len() {
            let shape = self.objs[children[a]].shape;
            let mut b = a + 1;
            while b < children.len() && self.objs[children[b]].shape == shape {
                b += 1;
            }
            let run = &children[a..b];
            let chain = self.chain(run[0]);
            let last = *chain.last().expect("chain has its head");
            let has_children =
                !self.objs[last].children.is_empty() || !self.objs[last].memory.is_empty();
            if run.len() == 1 {
                let labels: Vec<String> = chain
                    .iter()
                    .map(|&c| {
                        if indexed {
                            self.label(c)
                        } else {
                            self.shape_label(c)
                        }
                    })
                    .collect();
                let _ = writeln!(out, "{indent}{}", labels.join(" + "));
                self.print_children(last, depth + 1, indexed, out);
            } else {
                let shapes: Vec<String> = chain.iter().map(|&c| self.shape_label(c)).collect();
                let _ = write!(out, "{indent}{} × {}", run.len(), shapes.join(" + "));
                if indexed {
                    let _ = write!(out, " ({})", self.run_indices(run, chain.len()));
                }
                out.push_str(if has_children {
                    ", each:
"
                } else {
                    "
"
                });
                if has_children {
                    self.print_children(last, depth + 1, false, out);
                }
            }
            a = b;
        }
    }

    /// For a folded run: the first type's L# range, every type's P# list, and
    /// the PUs the run spans.
    fn run_indices(&self, run: &[usize], chain_len: usize) -> String {
        let chains: Vec<Vec<usize>> = run.iter().map(|&r| self.chain(r)).collect();
        let head = &self.objs[run[0]];
        let logical: Vec<u32> = run.iter().map(|&r| self.objs[r].logical as u32).collect();
        let mut parts = vec![format!("{} L#{}", head.kind.name(), id_list(&logical))];
        for pos in 0..chain_len {
            let kind = self.objs[chains[0][pos]].kind;
            let os: Vec<u32> = chains
                .iter()
                .filter_map(|c| self.objs[c[pos]].os_id)
                .collect();
            if !os.is_empty() {
                parts.push(format!("{} P#{}", kind.name(), id_list(&os)));
            }
        }
        let last_kind = self.objs[*chains[0].last().expect("chain")].kind;
        if last_kind != ObjKind::Pu {
            let span = run
                .iter()
                .fold(CpuMask::new(), |acc, &r| acc.or(&self.objs[r].cpus));
            parts.push(format!("PUs {span}"));
        }
        parts.join(", ")
    }
}

/// "0-3,8,10-11" for a list of ids in any order.
fn id_list(ids: &[u32]) -> String {
    let mut ids = ids.to_vec();
    ids.sort_unstable();
    ids.dedup();
    let mut parts = Vec::new();
    let mut k = 0;
    while k < ids.len() {
        let mut end = k;
        while end + 1 < ids.len() && ids[end + 1] == ids[end] + 1 {
            end += 1;
        }
        parts.push(if end == k {
            ids[k].to_string()
        } else {
            format!("{}-{}", ids[k], ids[end])
        });
        k = end + 1;
    }
    parts.join(",")
}

/// Formats a byte size like lstopo: KB / MB / GB with no decimals when exact.
fn human_size(bytes: u64) -> String {
    const K: u64 = 1024;
    if bytes >= K * K * K && bytes.is_multiple_of(K * K * K) {
        format!("{}GB", bytes / (K * K * K))
    } else if bytes >= K * K && bytes.is_multiple_of(K * K) {
        format!("{}MB", bytes / (K * K))
    } else if bytes >= K {
        format!("{}KB", bytes / K)
    } else {
        format!("{bytes}B")
    }
}

/// The first line of the text tree and the picture's title: "Machine (x86_64,
/// 16 PUs online of 16 possible, 2 NUMA nodes)".
pub fn summary_line(t: &Topology) -> String {
    let mut out = String::new();
    let offline = t.possible().and_not(t.online()).weight();
    let _ = write!(
        out,
        "Machine ({}, {} online of {} possible",
        t.arch().uname(),
        crate::plural(t.online().weight(), "PU"),
        t.possible().weight()
    );
    if offline > 0 {
        let _ = write!(out, ", offline {}", t.possible().and_not(t.online()));
    }
    if !t.nodes().is_empty() {
        let _ = write!(out, ", {}", crate::plural(t.nodes().len(), "NUMA node"));
    }
    if t.shared_processor() {
        out.push_str(", shared-processor LPAR");
    }
    out.push(')');
    if let Some(m) = &t.model_name() {
        let _ = write!(out, " {m}");
    }
    out
}

/// The lstopo-like text tree.
pub fn text_tree(t: &Topology) -> String {
    text_tree_with(t, true)
}

/// The text tree, with runs of identical siblings folded or every object on
/// its own line (as lstopo prints it).
pub fn text_tree_with(t: &Topology, fold: bool) -> String {
    let mut out = summary_line(t);
    out.push('\n');
    let mut tree = Tree::new(t);
    if !fold {
        tree.unfold();
    }
    tree.print_children(ROOT, 1, true, &mut out);
    if t.has_distances() {
        out.push_str("Distances between NUMA nodes:\n");
        let _ = write!(out, "  {:>5}", "");
        for n in t.nodes() {
            let _ = write!(out, " {:>5}", format!("#{}", n.id));
        }
        out.push('\n');
        for (i, a) in t.nodes().iter().enumerate() {
            let _ = write!(out, "  {:>5}", format!("#{}", a.id));
            for j in 0..t.nodes().len() {
                let _ = write!(out, " {:>5}", t.distance(i, j));
            }
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::{Path, PathBuf};
    use topology::{Arch, Numbering, Shape};

    /// Object types whose counts are compared with lstopo.
    const COUNTED: [&str; 6] = ["Package", "NUMANode", "L3", "L2", "Core", "PU"];

    /// Counts objects in our text tree with every fold unrolled (a line
    /// `4 × A + B` under a `2 × C` line stands for 8 A and 8 B), and the NUMA
    /// node ids in order of appearance.
    fn unfolded_counts(text: &str) -> (BTreeMap<String, usize>, Vec<u32>) {
        let mut counts = BTreeMap::new();
        let mut node_ids = Vec::new();
        let mut multipliers: Vec<usize> = Vec::new();
        for line in text.lines().skip(1) {
            if line.starts_with("Distances") {
                break;
            }
            let body = line.trim_start();
            let depth = (line.len() - body.len()) / 2;
            assert!(depth >= 1, "unexpected line {line:?} in\n{text}");
            multipliers.truncate(depth - 1);
            let (k, rest) = match body.split_once(" × ") {
                Some((n, rest)) if n.chars().all(|c| c.is_ascii_digit()) => {
                    (n.parse::<usize>().unwrap(), rest)
                }
                _ => (1, body),
            };
            let times = multipliers.iter().product::<usize>() * k;
            for segment in rest.split(" + ") {
                let word = segment.split_whitespace().next().unwrap_or_default();
                let kind = word.trim_end_matches(',');
                *counts.entry(kind.to_string()).or_insert(0) += times;
                if kind == "NUMANode" {
                    let id = segment
                        .split_whitespace()
                        .find_map(|w| w.strip_prefix("P#"))
                        .unwrap_or_else(|| panic!("NUMA node without P#: {line:?}"));
                    node_ids.push(id.parse().unwrap());
                }
            }
            multipliers.push(k);
        }
        (counts, node_ids)
    }

    /// Counts of the same object types in lstopo's console output, and its NUMA
    /// node ids in order of appearance (`NUMANode L#0 (P#1 8GB)`).
    fn console_counts(console: &str) -> (BTreeMap<String, usize>, Vec<u32>) {
        // Verbose consoles (`lstopo -v`) spell caches `L2Cache L#0`.
        let counts = COUNTED
            .iter()
            .map(|k| {
                let n = console.matches(&format!("{k} L#")).count()
                    + console.matches(&format!("{k}Cache L#")).count();
                (k.to_string(), n)
            })
            .collect();
        let node_ids = console
            .split("NUMANode L#")
            .skip(1)
            .map(|rest| {
                let p = &rest[rest.find("(P#").expect("NUMANode (P#") + 3..];
                let end = p.find(|c: char| !c.is_ascii_digit()).unwrap_or(p.len());
                p[..end].parse().unwrap()
            })
            .collect();
        (counts, node_ids)
    }

    /// One line of a console-style tree: its parent line, its objects, its
    /// NUMA nodes, its PUs' P# (after [`gather_pus`], every PU below it).
    struct Line {
        parent: Option<usize>,
        objs: Vec<(String, usize)>,
        numa: Vec<usize>,
        pus: BTreeSet<u32>,
    }

    /// Each object of a console-style tree (ours unfolded, or lstopo's) by type
    /// and L#, with the P# of the PUs under it; a NUMA node, which lstopo
    /// prints as a child line of the object it is attached to, gets that
    /// object's PUs. Objects without an L# (the machine) are left out.
    fn cpusets(text: &str) -> BTreeMap<(String, usize), BTreeSet<u32>> {
        let mut lines = console_lines(text);
        let all = gather_pus(&mut lines);
        // hwloc hangs a node behind its memory-side cache: the node's CPUs
        // are those of the normal object above the cache.
        let memory_side = |l: &Line| l.objs.iter().any(|(k, _)| k == "MemCache");
        let mut out = BTreeMap::new();
        for line in &lines {
            for obj in &line.objs {
                out.insert(obj.clone(), line.pus.clone());
            }
            let mut parent = line.parent;
            while let Some(p) = parent.filter(|&p| memory_side(&lines[p])) {
                parent = lines[p].parent;
            }
            let attached = parent.map_or(&all, |p| &lines[p].pus);
            for &n in &line.numa {
                out.insert(("NUMANode".to_string(), n), attached.clone());
            }
        }
        out
    }

    /// The tree's lines (up to the distance matrices), each with its parent
    /// by indentation.
    fn console_lines(text: &str) -> Vec<Line> {
        let mut lines: Vec<Line> = Vec::new();
        let mut stack: Vec<(usize, usize)> = Vec::new(); // (depth, line)
        for text_line in text.lines() {
            if text_line.starts_with("Distances") {
                break;
            }
            let body = text_line.trim_start();
            let depth = (text_line.len() - body.len()) / 2;
            while stack.last().is_some_and(|&(d, _)| d >= depth) {
                stack.pop();
            }
            let mut line = Line {
                parent: stack.last().map(|&(_, l)| l),
                objs: Vec::new(),
                numa: Vec::new(),
                pus: BTreeSet::new(),
            };
            for segment in body.split(" + ") {
                console_object(segment, &mut line);
            }
            stack.push((depth, lines.len()));
            lines.push(line);
        }
        lines
    }

    /// One object of a line (`L2 L#0 (1024KB)`, `PU L#3 (P#7)`), recorded in
    /// `line` by its type and L#.
    fn console_object(segment: &str, line: &mut Line) {
        let words: Vec<&str> = segment.split_whitespace().collect();
        // Verbose consoles spell CPU caches `L2Cache`; `MemCache` stays.
        let word = words.first().unwrap_or(&"");
        let kind = if word.starts_with('L') {
            word.trim_end_matches("Cache")
        } else {
            word
        };
        let Some(l) = words.iter().find_map(|w| w.strip_prefix("L#")) else {
            return;
        };
        let l: usize = l
            .trim_end_matches(|c: char| !c.is_ascii_digit())
            .parse()
            .unwrap();
        match kind {
            "NUMANode" => line.numa.push(l),
            "PU" => {
                let d = &segment[segment.find("P#").expect("PU with P#") + 2..];
                let end = d.find(|c: char| !c.is_ascii_digit()).unwrap_or(d.len());
                line.pus.insert(d[..end].parse().unwrap());
                line.objs.push((kind.to_string(), l));
            }
            _ => line.objs.push((kind.to_string(), l)),
        }
    }

    /// Gives every line the PUs below it; returns all PUs. Children come
    /// after their parent, so PUs are gathered upwards in reverse.
    fn gather_pus(lines: &mut [Line]) -> BTreeSet<u32> {
        let mut all = BTreeSet::new();
        for i in (0..lines.len()).rev() {
            let pus = lines[i].pus.clone();
            match lines[i].parent {
                Some(p) => lines[p].pus.extend(pus),
                None => all.extend(pus),
            }
        }
        all
    }

    /// Our unfolded tree and lstopo's console output have the same objects of
    /// the compared types, by L#, each over the same PUs (P#).
    fn assert_same_cpusets(t: &Topology, console: &str, what: &str) {
        let text = text_tree_with(t, false);
        let keep = |m: BTreeMap<(String, usize), BTreeSet<u32>>| -> BTreeMap<_, _> {
            m.into_iter()
                .filter(|((k, _), _)| COUNTED.contains(&k.as_str()))
                .collect()
        };
        let ours = keep(cpusets(&text));
        let theirs = keep(cpusets(console));
        let differ: Vec<String> = ours
            .keys()
            .chain(theirs.keys())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .filter(|k| ours.get(k) != theirs.get(k))
            .take(5)
            .map(|k| {
                format!(
                    "{} L#{}: ours {:?}, lstopo {:?}",
                    k.0,
                    k.1,
                    ours.get(k),
                    theirs.get(k)
                )
            })
            .collect();
        assert!(
            differ.is_empty(),
            "{what}: objects over different PUs than lstopo's:\n{}\n{text}\n{console}",
            differ.join("\n")
        );
        assert!(!ours.is_empty(), "{what}: no objects compared");
    }

    /// `lstopo-no-graphics --of console` on `xml_file`.
    fn lstopo_console(xml_file: &Path) -> String {
        let out = std::process::Command::new("lstopo-no-graphics")
            .arg("--input")
            .arg(xml_file)
            .args(["--of", "console"])
            .output()
            .unwrap_or_else(|e| {
                panic!("lstopo-no-graphics cannot run ({e}); install hwloc-nox (Debian/Ubuntu) to test the text tree against hwloc")
            });
        assert!(
            out.status.success(),
            "lstopo failed on {}: {}",
            xml_file.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    fn corpus() -> PathBuf {
        readers::corpus::dir(env!("CARGO_MANIFEST_DIR"))
    }

    fn corpus_xml(name: &str) -> PathBuf {
        corpus().join("hwloc/tests/hwloc/xml").join(name)
    }

    fn has_lstopo(what: &str) -> bool {
        readers::corpus::program_present("lstopo-no-graphics", what)
    }

    /// Our unfolded tree has as many packages, NUMA nodes, L3, L2, cores and PUs
    /// as hwloc's console output, never drops one, shows the NUMA nodes in the
    /// same order (depth first, by id among siblings), each exactly once, and
    /// each of those objects, by L#, over the same PUs as hwloc's.
    fn assert_matches_console(t: &Topology, console: &str, what: &str) {
        let text = text_tree(t);
        let (ours, our_nodes) = unfolded_counts(&text);
        let (theirs, their_nodes) = console_counts(console);
        for k in COUNTED {
            assert_eq!(
                ours.get(k).copied().unwrap_or(0),
                theirs[k],
                "{what}: {k} count differs from lstopo's\n{text}\n{console}"
            );
        }
        assert_eq!(
            our_nodes, their_nodes,
            "{what}: NUMA node order\n{text}\n{console}"
        );
        assert_same_cpusets(t, console, what);
        let mut ids = our_nodes.clone();
        ids.sort_unstable();
        let mut all: Vec<u32> = t.nodes().iter().map(|n| n.id).collect();
        all.sort_unstable();
        assert_eq!(ids, all, "{what}: every NUMA node exactly once\n{text}");
    }

    /// Writes our XML for `t` and compares the text tree with lstopo's reading of it.
    fn check_via_our_xml(t: &Topology, what: &str) {
        let dir = std::env::temp_dir().join(format!("manycore-topo-tree-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(format!(
            "{}.xml",
            what.replace(|c: char| !c.is_ascii_alphanumeric(), "_")
        ));
        std::fs::write(&file, readers::xml::write(t)).unwrap();
        assert_matches_console(t, &lstopo_console(&file), what);
        std::fs::remove_file(&file).unwrap();
    }

    #[test]
    fn tree_objects_cover_the_pus_lstopo_gives_on_catalogue_and_synthetic() {
        if !has_lstopo("7 text trees of catalogue and synthetic machines against lstopo") {
            return;
        }
        for name in ["arm64-d06", "power10-shared-320", "x86-2s-16"] {
            let t = readers::catalogue::machine(name).unwrap();
            check_via_our_xml(&t, name);
        }
        for s in [
            "package:1 l3:2 core:2 pu:1",
            "numa:2 pu:2",
            "package:2 numa:2 l2:3 core:2 pu:2",
        ] {
            let t = readers::synthetic::parse(s).unwrap();
            check_via_our_xml(&t, s);
        }
        let mut shape = Shape::simple(Arch::X86_64, 2, 4, 2);
        shape.numbering = Numbering::ThreadsLast;
        check_via_our_xml(&shape.build().unwrap(), "shape 2x4x2 threads last");
    }

    /// hwloc's own test files: against lstopo reading our XML of them (the
    /// installed hwloc 2 cannot read their XML v3), and against the console
    /// output hwloc's test suite expects where the corpus has one.
    #[test]
    fn tree_objects_cover_the_pus_lstopo_gives_on_corpus_xml() {
        let what = "4 hwloc XML test files' text trees against lstopo";
        if !readers::corpus::present(&corpus(), what) || !has_lstopo(what) {
            return;
        }
        for (name, console) in [
            ("16em64t-4s2c2t", true),
            ("16amd64-4distances", true),
            ("96em64t-4n4d3ca2co-pci", false),
            ("192em64t-12gr2n8c2t", false),
        ] {
            let file = corpus_xml(&format!("{name}.xml"));
            let text = std::fs::read_to_string(&file)
                .unwrap_or_else(|e| panic!("{}: {e} (the corpus is required)", file.display()));
            let t = readers::xml::read(&text, name).unwrap();
            check_via_our_xml(&t, name);
            if console {
                let expected =
                    std::fs::read_to_string(corpus_xml(&format!("{name}.console"))).unwrap();
                assert_matches_console(&t, &expected, &format!("{name}.console"));
            }
        }
    }

    /// hwloc's Linux test snapshots read by our sysfs reader, against the
    /// console output hwloc's test suite expects from the same snapshot. Left
    /// out: snapshots where the reader's model differs from hwloc's on purpose
    /// or not yet (AMD modules as one core with two threads, cgroup cpusets,
    /// s390 books, memory tiers, nodes hwloc regroups by distance), which are
    /// reader questions, not the tree's.
    #[test]
    fn tree_objects_match_hwloc_console_on_linux_snapshots() {
        let what = "16 hwloc Linux snapshots' text trees against hwloc's expected console";
        if !readers::corpus::present(&corpus(), what) {
            return;
        }
        let dir = corpus().join("hwloc/tests/hwloc/linux");
        for stem in [
            "16amd64-8n2c",
            "16em64t-4s2c2t-offlines",
            "16ia64-8n2s",
            "20em64t-hybrid-1p6c2t+2ca4co1t",
            "256ia64-64n2s2c",
            "2pa-pcidomain32bits",
            "32intel64-2p8co2t+8ve",
            "48amd64-4pa2n6c-sparse",
            "64fake-4n2s2ca2c2t",
            "8em64t-2s2ca2c",
            "8em64t-2s2ca2c-buggynuma",
            "8em64t-2s4c-asymcaches",
            "8ia64-2n2s2c",
            "8ia64-2s2c2t",
            "fakecpuid1f-64intel64-2p4d2n2c2t",
            "memorysidecaches",
        ] {
            let snapshot = dir.join(format!("{stem}.tar.bz2"));
            let console = dir.join(format!("{stem}.console"));
            let expected = std::fs::read_to_string(&console)
                .unwrap_or_else(|e| panic!("{}: {e} (the corpus is required)", console.display()));
            let t = readers::sysfs::read_path(&snapshot)
                .unwrap_or_else(|e| panic!("{}: {e}", snapshot.display()));
            assert_matches_console(&t, &expected, stem);
        }
    }

    /// No object of the model is dropped or duplicated by placement or folding:
    /// the unfolded text has every group of every level, every cache, PU and
    /// NUMA node, for every catalogue machine and a few synthetic ones.
    #[test]
    fn unfolded_tree_has_every_object_of_the_model() {
        let mut machines: Vec<Topology> = readers::catalogue::list()
            .iter()
            .map(|e| readers::catalogue::machine(e.name).unwrap())
            .collect();
        for s in [
            "numa:2 pu:2",
            "package:1 l3:2 core:2 pu:1",
            "package:2 numa:3 core:2 pu:3",
        ] {
            machines.push(readers::synthetic::parse(s).unwrap());
        }
        for t in &machines {
            let text = text_tree(t);
            let (counts, _) = unfolded_counts(&text);
            let mut want: BTreeMap<String, usize> = BTreeMap::new();
            for level in t.levels() {
                want.insert(ObjKind::Level(level.kind).name(), level.groups.len());
            }
            for c in t.caches() {
                *want
                    .entry(ObjKind::Cache(c.level, c.kind).name())
                    .or_insert(0) += 1;
            }
            want.insert("PU".into(), t.cpus().len());
            want.insert("NUMANode".into(), t.nodes().len());
            for (kind, n) in &want {
                assert_eq!(counts.get(kind), Some(n), "{}: {kind}\n{text}", t.source());
            }
        }
    }

    /// Folds show how many objects they stand for and which; the parser
    /// above is itself checked on a tree whose counts are known by construction.
    #[test]
    fn folds_name_their_range_and_keep_nodes_apart() {
        let mut s = Shape::simple(Arch::X86_64, 2, 4, 2);
        s.numbering = Numbering::ThreadsLast;
        let t = s.build().unwrap();
        let text = text_tree(&t);
        let (counts, nodes) = unfolded_counts(&text);
        assert_eq!(counts["Package"], 2, "{text}");
        assert_eq!(counts["Core"], 8, "{text}");
        assert_eq!(counts["PU"], 16, "{text}");
        assert_eq!(nodes, [0, 1], "{text}");
        // One package per node: the packages differ by node and must not fold.
        assert!(!text.contains("2 × Package"), "{text}");
        // PU span of package 1's cores, with ThreadsLast numbering.
        assert!(text.contains("PUs 4-7,12-15"), "{text}");
        let json: serde_json::Value =
            serde_json::from_str(&render(&t, TopoFormat::Json).unwrap()).unwrap();
        assert_eq!(json["pus"], 16);
        assert_eq!(json["cores"], 8);
        assert_eq!(json["packages"], 2);
        assert_eq!(json["numa_nodes"], 2);
        assert_eq!(json["cpus_online"], "0-15");
        assert_eq!(json["distances"][0][1], 20);
        assert_eq!(json["nodes"][1]["cpus"], "4-7,12-15");
    }
}
