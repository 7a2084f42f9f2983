//! Writing hwloc XML v2: the model's objects placed in a tree by cpuset
//! inclusion, NUMA nodes attached to the object with their exact cpuset, then
//! printed with the NUMA latency matrix and the CPU kinds.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Write as _;

use cpumask::AsWords;
use topology::{CacheKind, CompactMask, CpuMask, LevelKind, Topology, TopologyBuilder, MAX_NODES};

use super::raw::GROUP_KIND_MEMORY;

/// hwloc's bitmap text: 32-bit groups, most significant first; like hwloc, a
/// zero group is written as nothing (`0x00000001,,0x0`), which keeps the cpusets
/// of a 16384-CPU machine from filling the file with zeros. (The commas still
/// make a set's text grow with its highest CPU: that is the format.)
fn bitmap(mask: &impl AsWords) -> String {
    let words = mask.as_words();
    let Some(last) = words.last_cpu() else {
        return "0x0".into();
    };
    // The non-zero 32-bit groups, most significant first.
    let mut groups: Vec<(usize, u32)> = words
        .entries()
        .flat_map(|(i, w)| [(2 * i, w as u32), (2 * i + 1, (w >> 32) as u32)])
        .filter(|&(_, v)| v != 0)
        .collect();
    groups.reverse();
    let mut s = String::with_capacity(last / 32 + 4 + 10 * groups.len());
    // Each group is preceded by one comma per group above it, empty or not.
    let mut above = last / 32;
    for (g, v) in groups {
        push_commas(&mut s, above - g);
        let _ = write!(s, "0x{v:08x}");
        above = g;
    }
    if above > 0 {
        push_commas(&mut s, above);
        s.push_str("0x0");
    }
    s
}

/// `n` commas, many at a time: a high CPU's set is mostly commas.
fn push_commas(s: &mut String, mut n: usize) {
    const COMMAS: &str = ",,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,";
    while n > 0 {
        let k = n.min(COMMAS.len());
        s.push_str(&COMMAS[..k]);
        n -= k;
    }
}

/// Text for an attribute value, as hwloc exports it: only printable ASCII,
/// tab, newline and carriage return are kept (hwloc's
/// `HWLOC_XML_CHAR_VALID`, applied by `hwloc__xml_export_safestrdup` to
/// names and info values), and `<`, `>`, `&`, `"` and the three kept
/// controls become references as hwloc writes them, so a value reads back
/// unchanged (an XML reader turns a literal newline or tab in an attribute
/// into a space). `'` stays literal: hwloc's own importer drops an info
/// whose value holds `&apos;`.
/// Hand-written because quick-xml's escaping neither drops characters nor
/// writes the whitespace references.
fn escape(text: &str) -> Cow<'_, str> {
    let plain = |c: char| matches!(c, ' '..='~') && !matches!(c, '<' | '>' | '&' | '"');
    if text.chars().all(plain) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            c if plain(c) => out.push(c),
            _ => {}
        }
    }
    Cow::Owned(out)
}

#[derive(Debug)]
enum WKind {
    Package(Option<u32>),
    Die(Option<u32>),
    /// A group and its hwloc kind (222 Linux cluster, 1001 memory holder).
    Group(Option<u32>, u32),
    Cache(usize),
    Core(Option<u32>),
    Pu(u32),
}

struct WObj {
    kind: WKind,
    cpus: CompactMask,
    /// Position among objects of equal cpusets: outer first.
    rank: u8,
    children: Vec<usize>,
    numa: Vec<usize>,
}

/// Writes hwloc XML v2 that `lstopo --input` accepts.
pub fn write(topology: &Topology) -> String {
    if topology.nodes().is_empty() {
        if let Some(with_node) = one_node(topology) {
            return write(&with_node);
        }
    }
    let online: Vec<u32> = topology
        .cpus()
        .iter()
        .filter(|c| c.online)
        .map(|c| c.id)
        .collect();
    let online_mask: CpuMask = online.iter().map(|&c| c as usize).collect();
    let mut objs = objects(topology, &online_mask);
    let max_id = online.iter().copied().max().unwrap_or(0) as usize;
    let tree = Tree::build(&mut objs, max_id);
    let root_numa = attach_nodes(topology, &mut objs, &tree, &online_mask);
    let mut w = Writer {
        topology,
        objs: &objs,
        out: String::with_capacity(256 + online.len() * 400),
        gp: 1,
    };
    w.machine(&online_mask, &root_numa, &tree.roots);
    let mut out = w.out;
    distances2(topology, &mut out);
    cpukinds(topology, &mut out);
    out.push_str("</topology>\n");
    out
}

/// `topology` with one NUMA node 0 of every CPU, for a model read without
/// NUMA information (a sysfs dump without `node*` directories, an lscpu
/// output without node columns): hwloc's XML needs a node in the machine's
/// nodeset (lstopo refuses "invalid root object with empty nodeset"), and
/// hwloc itself gives such a machine one node of all its CPUs and memory.
fn one_node(topology: &Topology) -> Option<Topology> {
    let cpus: CpuMask = topology.cpus().iter().map(|c| c.id as usize).collect();
    let mut builder = TopologyBuilder::from_topology(topology);
    builder.add_node(0, cpus, None);
    builder.finish().ok()
}

/// The online CPUs of `cpus`: the set itself when all are online (no
/// full mask per object).
fn online_part(cpus: &CompactMask, online: &CpuMask) -> CompactMask {
    if cpus.is_subset(online) {
        cpus.clone()
    } else {
        CompactMask::from(cpus.and(online))
    }
}

/// Adds `cpus` (restricted to the online CPUs) as an object unless empty.
fn push(objs: &mut Vec<WObj>, online: &CpuMask, kind: WKind, cpus: &CompactMask, rank: u8) {
    let cpus = online_part(cpus, online);
    if !cpus.is_empty() {
        objs.push(WObj {
            kind,
            cpus,
            rank,
            children: Vec::new(),
            numa: Vec::new(),
        });
    }
}

/// Every object of the tree, unordered: the levels' groups, the caches, a
/// memory group for each NUMA node no other object matches, and the PUs.
fn objects(topology: &Topology, online_mask: &CpuMask) -> Vec<WObj> {
    let mut objs: Vec<WObj> = Vec::new();
    for level in topology.levels() {
        for g in &level.groups {
            let (kind, rank) = match level.kind {
                LevelKind::Package => (WKind::Package(g.os_id), 0),
                LevelKind::Die => (WKind::Die(g.os_id), 2),
                LevelKind::Cluster => (WKind::Group(g.os_id, 222), 4),
                LevelKind::BigCore => (WKind::Group(g.os_id, 0), 30),
                LevelKind::Core => (WKind::Core(g.os_id), 40),
            };
            push(&mut objs, online_mask, kind, &g.cpus, rank);
        }
    }
    for (i, c) in topology.caches().iter().enumerate() {
        let rank = 10
            + (5 - c.level.min(5)) * 3
            + if c.kind == CacheKind::Instruction {
                1
            } else {
                0
            };
        push(&mut objs, online_mask, WKind::Cache(i), &c.cpus, rank);
    }
    add_memory_groups(topology, &mut objs, online_mask);
    for c in topology.cpus().iter().filter(|c| c.online) {
        push(
            &mut objs,
            online_mask,
            WKind::Pu(c.id),
            &CompactMask::single(c.id as usize),
            50,
        );
    }
    objs
}

/// NUMA nodes need an object with exactly their CPUs: adds a group if none.
/// Objects are looked up by (first CPU, weight), so thousands of nodes do
/// not each compare their mask with every object.
fn add_memory_groups(topology: &Topology, objs: &mut Vec<WObj>, online_mask: &CpuMask) {
    let mut by_shape: HashMap<(Option<usize>, usize), Vec<usize>> = HashMap::new();
    for (i, o) in objs.iter().enumerate() {
        by_shape
            .entry((o.cpus.first(), o.cpus.weight()))
            .or_default()
            .push(i);
    }
    for n in topology.nodes() {
        let cpus = online_part(&n.cpus, online_mask);
        if cpus.is_empty() || cpus == *online_mask {
            continue;
        }
        let shape = (cpus.first(), cpus.weight());
        let same = by_shape.get(&shape).into_iter().flatten();
        if !same.clone().any(|&i| objs[i].cpus == cpus) {
            by_shape.entry(shape).or_default().push(objs.len());
            push(
                objs,
                online_mask,
                WKind::Group(None, GROUP_KIND_MEMORY),
                &cpus,
                1,
            );
        }
    }
}

/// The objects placed in a tree by cpuset inclusion.
struct Tree {
    /// Per CPU, the innermost object holding it (`usize::MAX`: none).
    innermost: Vec<usize>,
    /// Per object, its parent (`usize::MAX`: a root or left out).
    parent_of: Vec<usize>,
    roots: Vec<usize>,
}

impl Tree {
    /// Inserts the objects by decreasing size: each object's parent is the
    /// innermost object so far that holds its first CPU, if it holds all of
    /// its CPUs (else the object cannot be placed in a tree and is left out).
    fn build(objs: &mut [WObj], max_id: usize) -> Tree {
        let mut order: Vec<usize> = (0..objs.len()).collect();
        order.sort_by_key(|&i| {
            (
                std::cmp::Reverse(objs[i].cpus.weight()),
                objs[i].rank,
                objs[i].cpus.first(),
            )
        });
        let mut innermost: Vec<usize> = vec![usize::MAX; max_id + 1];
        let mut parent_of: Vec<usize> = vec![usize::MAX; objs.len()];
        let mut roots: Vec<usize> = Vec::new();
        for &i in &order {
            let first = objs[i].cpus.first().unwrap_or(0);
            let parent = innermost[first];
            if parent != usize::MAX && !objs[i].cpus.is_subset(&objs[parent].cpus) {
                continue;
            }
            if parent == usize::MAX {
                // Top-level objects must not straddle each other either.
                if objs[i].cpus.iter().any(|c| innermost[c] != usize::MAX) {
                    continue;
                }
                roots.push(i);
            } else {
                if objs[i].cpus.iter().any(|c| innermost[c] != parent) {
                    continue;
                }
                objs[parent].children.push(i);
                parent_of[i] = parent;
            }
            for c in objs[i].cpus.iter() {
                innermost[c] = i;
            }
        }
        Tree {
            innermost,
            parent_of,
            roots,
        }
    }
}

/// Attaches each NUMA node to the innermost object with exactly its CPUs;
/// returns the nodes left for the machine (CPU-less ones, or one holding
/// every CPU).
fn attach_nodes(
    topology: &Topology,
    objs: &mut [WObj],
    tree: &Tree,
    online_mask: &CpuMask,
) -> Vec<usize> {
    let mut root_numa: Vec<usize> = Vec::new();
    for (ni, n) in topology.nodes().iter().enumerate() {
        let cpus = online_part(&n.cpus, online_mask);
        let holder = cpus.first().and_then(|f| {
            let mut o = tree.innermost[f];
            while o != usize::MAX {
                if objs[o].cpus == cpus {
                    return Some(o);
                }
                o = tree.parent_of[o];
            }
            None
        });
        match holder {
            Some(o) if cpus != *online_mask => objs[o].numa.push(ni),
            _ => root_numa.push(ni),
        }
    }
    root_numa
}

/// The NUMA latency matrix, by OS index.
fn distances2(topology: &Topology, out: &mut String) {
    if !topology.has_distances() || topology.nodes().len() <= 1 {
        return;
    }
    let n = topology.nodes().len();
    let _ = writeln!(
        out,
        "  <distances2 type=\"NUMANode\" nbobjs=\"{n}\" kind=\"5\" name=\"NUMALatency\" indexing=\"os\">"
    );
    let idx: Vec<String> = topology.nodes().iter().map(|n| n.id.to_string()).collect();
    let joined = idx.join(" ");
    let _ = writeln!(
        out,
        "    <indexes length=\"{}\">{joined}</indexes>",
        joined.len()
    );
    for row in topology.distances().chunks(n) {
        let vals: Vec<String> = row.iter().map(|v| v.to_string()).collect();
        let joined = vals.join(" ");
        let _ = writeln!(
            out,
            "    <u64values length=\"{}\">{joined}</u64values>",
            joined.len()
        );
    }
    out.push_str("  </distances2>\n");
}

/// The CPU kinds, with their core type and efficiency.
fn cpukinds(topology: &Topology, out: &mut String) {
    for (k, kind) in topology.core_kinds().iter().enumerate() {
        let cpus: CpuMask = topology
            .cpus()
            .iter()
            .filter(|c| c.online && c.kind == Some(k as u16))
            .map(|c| c.id as usize)
            .collect();
        if cpus.is_empty() {
            continue;
        }
        let eff = kind
            .efficiency
            .map(|e| format!(" forced_efficiency=\"{e}\""))
            .unwrap_or_default();
        let _ = writeln!(out, "  <cpukind cpuset=\"{}\"{eff}>", bitmap(&cpus));
        let _ = writeln!(
            out,
            "    <info name=\"CoreType\" value=\"{}\"/>",
            escape(&kind.name)
        );
        out.push_str("  </cpukind>\n");
    }
}

/// A nodeset's text; ids beyond a set's capacity are left out (the model
/// holds none).
fn nodeset(ids: &[u32]) -> String {
    let ids = ids
        .iter()
        .map(|&id| id as usize)
        .filter(|&id| id < MAX_NODES);
    bitmap(&CompactMask::try_from_cpus(ids).unwrap_or_default())
}

struct Writer<'a> {
    topology: &'a Topology,
    objs: &'a [WObj],
    out: String,
    gp: u64,
}

impl Writer<'_> {
    /// The document's head and the machine object with everything in it.
    fn machine(&mut self, online_mask: &CpuMask, root_numa: &[usize], roots: &[usize]) {
        let topology = self.topology;
        self.out.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n<topology version=\"2.0\">\n");
        let nodeset_all: Vec<u32> = topology.nodes().iter().map(|n| n.id).collect();
        let ns_all = nodeset(&nodeset_all);
        let complete = topology.possible().or(online_mask);
        let _ = writeln!(
            self.out,
            "  <object type=\"Machine\" os_index=\"0\" cpuset=\"{}\" complete_cpuset=\"{}\" allowed_cpuset=\"{}\" nodeset=\"{ns_all}\" complete_nodeset=\"{ns_all}\" allowed_nodeset=\"{ns_all}\" gp_index=\"{}\">",
            bitmap(online_mask),
            bitmap(&complete),
            bitmap(online_mask),
            self.gp
        );
        self.gp += 1;
        let _ = writeln!(
            self.out,
            "    <info name=\"Architecture\" value=\"{}\"/>",
            escape(topology.arch().uname())
        );
        for &ni in root_numa {
            if !topology.nodes()[ni].cpus.intersects(online_mask) {
                // A CPU-less node attached to the machine would get every CPU
                // as its locality: hwloc keeps such nodes under an empty group.
                let _ = writeln!(
                    self.out,
                    "    <object type=\"Group\" cpuset=\"0x0\" complete_cpuset=\"0x0\" nodeset=\"{ns}\" complete_nodeset=\"{ns}\" gp_index=\"{gp}\" kind=\"{GROUP_KIND_MEMORY}\" subkind=\"0\">",
                    ns = nodeset(&[topology.nodes()[ni].id]),
                    gp = self.gp,
                );
                self.gp += 1;
                self.numa(ni, &CompactMask::new(), 6);
                self.out.push_str("    </object>\n");
            } else {
                self.numa(ni, online_mask, 4);
            }
        }
        for &r in roots {
            self.object(r, 4);
        }
        self.out.push_str("  </object>\n");
    }

    /// The nodes holding some of `cpus`, looked up per CPU (a CPU is in one
    /// node): the sum over all objects is CPUs × depth, where testing every
    /// node against every object was objects × nodes mask intersections.
    fn nodes_of(&self, cpus: &CompactMask) -> String {
        let ids: std::collections::BTreeSet<u32> = cpus
            .iter()
            .filter_map(|c| self.topology.node_of(c))
            .map(|n| n.id)
            .collect();
        nodeset(&ids.into_iter().collect::<Vec<_>>())
    }

    fn numa(&mut self, ni: usize, cpus: &impl AsWords, indent: usize) {
        let node = &self.topology.nodes()[ni];
        let ns = nodeset(&[node.id]);
        let mem = node
            .memory_bytes
            .map(|m| format!(" local_memory=\"{m}\""))
            .unwrap_or_default();
        let _ = writeln!(
            self.out,
            "{:indent$}<object type=\"NUMANode\" os_index=\"{}\" cpuset=\"{cs}\" complete_cpuset=\"{cs}\" nodeset=\"{ns}\" complete_nodeset=\"{ns}\" gp_index=\"{}\"{mem}/>",
            "",
            node.id,
            self.gp,
            cs = bitmap(cpus),
        );
        self.gp += 1;
    }

    /// Object `i` with its NUMA nodes and children.
    fn object(&mut self, i: usize, indent: usize) {
        let objs = self.objs;
        let o = &objs[i];
        let cs = bitmap(&o.cpus);
        let ns = self.nodes_of(&o.cpus);
        let (ty, os_part, attrs_part) = self.type_and_attributes(&o.kind);
        let leaf = o.children.is_empty() && o.numa.is_empty();
        let _ = write!(
            self.out,
            "{:indent$}<object type=\"{ty}\"{os_part} cpuset=\"{cs}\" complete_cpuset=\"{cs}\" nodeset=\"{ns}\" complete_nodeset=\"{ns}\" gp_index=\"{}\"{attrs_part}",
            "",
            self.gp
        );
        self.gp += 1;
        if matches!(o.kind, WKind::Package(_)) {
            if let Some(m) = &self.topology.model_name() {
                let _ = write!(
                    self.out,
                    ">\n{:w$}<info name=\"CPUModel\" value=\"{}\"/",
                    "",
                    escape(m),
                    w = indent + 2
                );
                if leaf {
                    let _ = writeln!(self.out, ">\n{:indent$}</object>", "");
                    return;
                }
            }
        }
        if leaf {
            self.out.push_str("/>\n");
            return;
        }
        self.out.push_str(">\n");
        for &ni in &o.numa {
            self.numa(ni, &o.cpus, indent + 2);
        }
        for &c in &o.children {
            self.object(c, indent + 2);
        }
        let _ = writeln!(self.out, "{:indent$}</object>", "");
    }

    /// An object's hwloc type, its ` os_index` attribute (if any) and the
    /// attributes that follow its sets (a cache's geometry, a group's kind).
    fn type_and_attributes(&self, kind: &WKind) -> (String, String, String) {
        let os = |id: &Option<u32>| id.map(|v| format!(" os_index=\"{v}\"")).unwrap_or_default();
        match kind {
            WKind::Package(id) => ("Package".into(), os(id), String::new()),
            WKind::Die(id) => ("Die".into(), os(id), String::new()),
            // Keep groups that share a cpuset with another object: hwloc
            // would otherwise merge them away.
            WKind::Group(id, kind) => (
                "Group".into(),
                os(id),
                format!(" kind=\"{kind}\" subkind=\"0\" dont_merge=\"1\""),
            ),
            WKind::Core(id) => ("Core".into(), os(id), String::new()),
            WKind::Pu(id) => ("PU".into(), format!(" os_index=\"{id}\""), String::new()),
            WKind::Cache(ci) => {
                let c = &self.topology.caches()[*ci];
                let i = if c.kind == CacheKind::Instruction {
                    "i"
                } else {
                    ""
                };
                let ctype = match c.kind {
                    CacheKind::Unified => 0,
                    CacheKind::Data => 1,
                    CacheKind::Instruction => 2,
                };
                let assoc: i64 = match c.ways {
                    None => 0,
                    Some(0) => -1,
                    Some(w) => w as i64,
                };
                let attrs = format!(
                    " cache_size=\"{}\" depth=\"{}\" cache_linesize=\"{}\" cache_associativity=\"{assoc}\" cache_type=\"{ctype}\"",
                    c.size_bytes.unwrap_or(0),
                    c.level,
                    c.line_bytes.unwrap_or(0),
                );
                (format!("L{}{i}Cache", c.level), String::new(), attrs)
            }
        }
    }
}
