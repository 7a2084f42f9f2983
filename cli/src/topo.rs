//! `manycore topo`: show a machine's topology in one of several formats.
//!
//! The JSON format is documented in `docs/topology-json.md`; its top level always
//! has `cpus_possible`, `cpus_online`, `packages`, `cores`, `pus`, `numa_nodes`,
//! `distances` and `levels`.

use std::fmt::Write as _;

use anyhow::Result;
use clap::{Args, ValueEnum};
use serde::Serialize;
use topology::{CacheKind, CpuMask, LevelKind, Topology};

use crate::source::SourceArgs;

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
    crate::write_stdout(&render(&topo, args.format)?)
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
        let n = t.nodes.len();
        let distances = if t.has_distances() {
            (0..n)
                .map(|i| (0..n).map(|j| t.distance(i, j)).collect())
                .collect()
        } else {
            Vec::new()
        };
        let os_id = |cpu: &topology::Cpu, kind: LevelKind| {
            let g = cpu.group(kind)?;
            t.level(kind)?.groups[g as usize].os_id
        };
        JsonTopology {
            schema: "manycore-topology/1",
            source: t.source.clone(),
            arch: t.arch.uname().to_string(),
            model_name: t.model_name.clone(),
            hypervisor: t.hypervisor.clone(),
            shared_processor: t.shared_processor,
            nr_cpu_ids: t.nr_cpu_ids(),
            cpus_possible: t.possible.to_list_string(),
            cpus_present: t.present.to_list_string(),
            cpus_online: t.online.to_list_string(),
            packages: t.count(LevelKind::Package),
            dies: t.count(LevelKind::Die),
            clusters: t.count(LevelKind::Cluster),
            cores: t.count(LevelKind::Core),
            pus: t.cpus.len(),
            numa_nodes: n,
            distances,
            levels: t
                .levels
                .iter()
                .map(|l| JsonLevel {
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
                })
                .collect(),
            nodes: t
                .nodes
                .iter()
                .map(|nd| JsonNode {
                    id: nd.id,
                    cpus: nd.cpus.to_list_string(),
                    memory_bytes: nd.memory_bytes,
                })
                .collect(),
            caches: t
                .caches
                .iter()
                .map(|c| JsonCache {
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
                })
                .collect(),
            cpus: t
                .cpus
                .iter()
                .map(|c| JsonCpu {
                    id: c.id,
                    hw_id: c.hw_id,
                    online: c.online,
                    thread: c.thread,
                    core: os_id(c, LevelKind::Core),
                    package: os_id(c, LevelKind::Package),
                    node: c.node.map(|i| t.nodes[i as usize].id),
                    kind: c.kind.map(|k| t.core_kinds[k as usize].name.clone()),
                    capacity: c.capacity,
                })
                .collect(),
        }
    }
}

/// One object in the display tree.
struct TreeNode {
    /// The label without indices, used to detect identical siblings.
    shape_label: String,
    /// The label with indices, for the first of a run.
    label: String,
    cpus: CpuMask,
    children: Vec<TreeNode>,
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

/// Caches whose sharing set equals `cpus`, outermost first, as " + L2 (1MB)" text.
fn caches_for(t: &Topology, cpus: &CpuMask, used: &mut [bool]) -> String {
    let mut idx: Vec<usize> = (0..t.caches.len())
        .filter(|&i| !used[i] && t.caches[i].cpus == *cpus)
        .collect();
    idx.sort_by_key(|&i| (std::cmp::Reverse(t.caches[i].level), t.caches[i].kind));
    let mut s = String::new();
    for i in idx {
        used[i] = true;
        let c = &t.caches[i];
        let _ = write!(s, " + L{}{}", c.level, c.kind.suffix());
        if let Some(size) = c.size_bytes {
            let _ = write!(s, " ({})", human_size(size));
        }
    }
    s
}

/// Builds the lstopo-like tree: Machine → Package → Die → Cluster → BigCore →
/// Core → PU, with NUMA nodes under the smallest object holding all their CPUs
/// and caches attached to the object whose CPUs they are shared by.
fn build_tree(t: &Topology) -> TreeNode {
    let mut used = vec![false; t.caches.len()];
    // Levels from the outermost down.
    let kinds: Vec<LevelKind> = t.levels.iter().rev().map(|l| l.kind).collect();
    let all = t.known();
    let mut root = TreeNode {
        shape_label: String::new(),
        label: String::new(),
        cpus: all,
        children: Vec::new(),
    };
    fn fill(t: &Topology, node: &mut TreeNode, kinds: &[LevelKind], used: &mut [bool]) {
        let Some((&kind, rest)) = kinds.split_first() else {
            // PUs.
            for cpu in node.cpus.iter() {
                let c = t.cpu(cpu).expect("known CPU");
                let off = if c.online { "" } else { " (offline)" };
                node.children.push(TreeNode {
                    shape_label: format!("PU{off}"),
                    label: format!("PU P#{cpu}{off}"),
                    cpus: CpuMask::single(cpu),
                    children: Vec::new(),
                });
            }
            return;
        };
        let level = t.level(kind).expect("level exists");
        let name = match kind {
            LevelKind::Core => "Core",
            LevelKind::BigCore => "BigCore",
            LevelKind::Cluster => "Cluster",
            LevelKind::Die => "Die",
            LevelKind::Package => "Package",
        };
        for (i, g) in level.groups.iter().enumerate() {
            if !g.cpus.is_subset(&node.cpus) {
                continue;
            }
            let caches = caches_for(t, &g.cpus, used);
            let os = g.os_id.map(|o| format!(" P#{o}")).unwrap_or_default();
            let mut child = TreeNode {
                shape_label: format!("{name}{caches}"),
                label: format!("{name} L#{i}{os}{caches}"),
                cpus: g.cpus,
                children: Vec::new(),
            };
            fill(t, &mut child, rest, used);
            node.children.push(child);
        }
    }
    fill(t, &mut root, &kinds, &mut used);
    // Attach NUMA nodes to the smallest object containing all their CPUs.
    fn attach(node: &mut TreeNode, numa: &topology::NumaNode) -> bool {
        if numa.cpus.is_empty() || !numa.cpus.is_subset(&node.cpus) {
            return false;
        }
        for child in node.children.iter_mut() {
            if attach(child, numa) {
                return true;
            }
        }
        let mem = numa
            .memory_bytes
            .map(|m| format!(" {}", human_size(m)))
            .unwrap_or_default();
        node.children.insert(
            0,
            TreeNode {
                shape_label: format!("NUMANode{mem}"),
                label: format!("NUMANode P#{}{mem}", numa.id),
                cpus: numa.cpus,
                children: Vec::new(),
            },
        );
        true
    }
    let mut memory_only = Vec::new();
    for numa in &t.nodes {
        if !attach(&mut root, numa) {
            memory_only.push(numa);
        }
    }
    for numa in memory_only {
        let mem = numa
            .memory_bytes
            .map(|m| format!(" {}", human_size(m)))
            .unwrap_or_default();
        root.children.insert(
            0,
            TreeNode {
                shape_label: format!("NUMANode{mem} (memory only)"),
                label: format!("NUMANode P#{}{mem} (memory only)", numa.id),
                cpus: CpuMask::new(),
                children: Vec::new(),
            },
        );
    }
    root
}

fn shape_of(node: &TreeNode) -> String {
    let mut s = node.shape_label.clone();
    s.push('{');
    for c in &node.children {
        s.push_str(&shape_of(c));
        s.push(',');
    }
    s.push('}');
    s
}

fn print_children(node: &TreeNode, depth: usize, out: &mut String) {
    let shapes: Vec<String> = node.children.iter().map(shape_of).collect();
    let mut i = 0;
    while i < node.children.len() {
        let mut j = i + 1;
        while j < node.children.len() && shapes[j] == shapes[i] {
            j += 1;
        }
        let child = &node.children[i];
        let indent = "  ".repeat(depth);
        if j - i > 1 {
            let span: CpuMask = node.children[i..j]
                .iter()
                .fold(CpuMask::new(), |a, c| a.or(&c.cpus));
            if child.children.is_empty() && child.shape_label.starts_with("PU") {
                // A run of identical PUs: their numbers say everything.
                let _ = writeln!(out, "{indent}{} × {} (P#{span})", j - i, child.shape_label);
                i = j;
                continue;
            }
            let first = child.label.split(" + ").next().unwrap_or_default();
            let last = node.children[j - 1]
                .label
                .split(" + ")
                .next()
                .unwrap_or_default();
            let cpus = if span.is_empty() {
                String::new()
            } else {
                format!(", PUs {span}")
            };
            let _ = writeln!(
                out,
                "{indent}{} × {} ({first} .. {last}{cpus}); each:",
                j - i,
                child.shape_label
            );
        } else {
            let _ = writeln!(out, "{indent}{}", child.label);
        }
        print_children(child, depth + 1, out);
        i = j;
    }
}

/// The lstopo-like text tree.
pub fn text_tree(t: &Topology) -> String {
    let mut out = String::new();
    let offline = t.possible.and_not(&t.online).weight();
    let _ = write!(
        out,
        "Machine ({}, {} online of {} possible",
        t.arch.uname(),
        crate::plural(t.online.weight(), "PU"),
        t.possible.weight()
    );
    if offline > 0 {
        let _ = write!(out, ", offline {}", t.possible.and_not(&t.online));
    }
    if !t.nodes.is_empty() {
        let _ = write!(out, ", {}", crate::plural(t.nodes.len(), "NUMA node"));
    }
    if t.shared_processor {
        out.push_str(", shared-processor LPAR");
    }
    out.push(')');
    if let Some(m) = &t.model_name {
        let _ = write!(out, " {m}");
    }
    out.push('\n');
    let tree = build_tree(t);
    print_children(&tree, 1, &mut out);
    if t.has_distances() {
        out.push_str("Distances between NUMA nodes:\n");
        let _ = write!(out, "  {:>5}", "");
        for n in &t.nodes {
            let _ = write!(out, " {:>5}", format!("#{}", n.id));
        }
        out.push('\n');
        for (i, a) in t.nodes.iter().enumerate() {
            let _ = write!(out, "  {:>5}", format!("#{}", a.id));
            for j in 0..t.nodes.len() {
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
    use topology::{Arch, Numbering, Shape};

    #[test]
    fn tree_folds_identical_cores() {
        let mut s = Shape::simple(Arch::X86_64, 2, 4, 2);
        s.numbering = Numbering::ThreadsLast;
        let t = s.build().unwrap();
        let text = text_tree(&t);
        assert!(text.contains("2 × Package + L3 (32MB)"), "{text}");
        assert!(
            text.contains("4 × Core + L2 (1MB) + L1d (32KB) + L1i (32KB)"),
            "{text}"
        );
        assert!(text.contains("2 × PU (P#0,8)"), "{text}");
        assert!(
            text.contains("(Core L#0 P#0 .. Core L#3 P#3, PUs 0-3,8-11); each:"),
            "{text}"
        );
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
