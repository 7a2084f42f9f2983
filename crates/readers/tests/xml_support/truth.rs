//! Independent truth for the hwloc reader tests: small, line-based parsers of
//! lstopo's XML and console outputs, written separately from the readers under
//! test, and a comparison of what they say with a [`topology::Topology`].
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use topology::{CacheKind, LevelKind, Topology};

pub type Set = BTreeSet<usize>;

/// One hwloc object as the expected output shows it.
#[derive(Debug, Clone)]
pub struct Obj {
    /// hwloc type name, normalised: Machine, Package, Die, Group, NUMANode,
    /// Cache, MemCache, Core, PU, or Other.
    pub ty: String,
    pub os_index: Option<u32>,
    /// Cache level and kind ('u', 'd', 'i') for caches.
    pub cache: Option<(u8, char)>,
    pub size: Option<u64>,
    pub cpuset: Option<Set>,
    /// hwloc group kind, when the XML says.
    pub group_kind: Option<u32>,
    pub parent: Option<usize>,
    pub children: Vec<usize>,
}

#[derive(Debug, Default)]
pub struct Truth {
    pub objects: Vec<Obj>,
    /// NUMA latency matrix by NUMA OS index.
    pub distances: Option<BTreeMap<(u32, u32), u64>>,
}

/// Where lstopo is; fails the test with a clear message if it is missing.
pub fn lstopo() -> PathBuf {
    for dir in std::env::var("PATH")
        .unwrap_or_default()
        .split(':')
        .chain(["/usr/bin"])
    {
        let p = Path::new(dir).join("lstopo-no-graphics");
        if p.is_file() {
            return p;
        }
    }
    panic!(
        "lstopo-no-graphics not found: these tests use hwloc as independent truth; \
         install it (Debian package hwloc-nox, see scripts/install-deps.sh)"
    );
}

/// Runs lstopo on `input` (a synthetic string or a file) and returns its stdout.
pub fn run_lstopo(input: &str, args: &[&str]) -> String {
    let out = Command::new(lstopo())
        .arg("--input")
        .arg(input)
        .args(args)
        .output()
        .expect("running lstopo-no-graphics");
    assert!(
        out.status.success(),
        "lstopo --input {input:?} {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("lstopo output is UTF-8")
}

/// The corpus root (`shared/corpus` beside the repository, or `$MANYCORE_CORPUS`).
pub fn corpus() -> PathBuf {
    readers::corpus::dir(env!("CARGO_MANIFEST_DIR"))
}

/// Whether the corpus is here; when not, one loud line says what the test
/// skips (`what`, with its count), and under CI the test fails.
pub fn have_corpus(what: &str) -> bool {
    readers::corpus::present(&corpus(), what)
}

/// Whether lstopo is installed; when not, as [`have_corpus`].
pub fn have_lstopo(what: &str) -> bool {
    readers::corpus::program_present("lstopo-no-graphics", what)
}

fn hwloc_bitmap(text: &str) -> Set {
    let mut set = Set::new();
    let groups: Vec<&str> = text.split(',').collect();
    for (i, g) in groups.iter().rev().enumerate() {
        let g = g.trim().trim_start_matches("0x");
        if g == "f...f" || g.is_empty() {
            // Infinite prefix (ignored), or an empty group: hwloc's zero group.
            continue;
        }
        let v = u32::from_str_radix(g, 16).unwrap_or_else(|_| panic!("bad bitmap {text}"));
        for b in 0..32 {
            if v & (1 << b) != 0 {
                set.insert(i * 32 + b);
            }
        }
    }
    set
}

fn attrs(line: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    let mut rest = line;
    while let Some(eq) = rest.find("=\"") {
        let key = rest[..eq].rsplit(' ').next().unwrap_or("").to_string();
        let after = &rest[eq + 2..];
        let end = after.find('"').unwrap_or(after.len());
        map.insert(key, after[..end].to_string());
        rest = &after[(end + 1).min(after.len())..];
    }
    map
}

fn normalise(ty: &str) -> (String, Option<(u8, char)>) {
    let t = ty;
    let cache = |rest: &str| -> Option<(u8, char)> {
        let level: u8 = rest.chars().next()?.to_digit(10)? as u8;
        let kind = match rest.chars().nth(1) {
            Some('d') => 'd',
            Some('i') => 'i',
            _ => 'u',
        };
        Some((level, kind))
    };
    if let Some(rest) = t.strip_prefix('L') {
        if let Some(c) = cache(rest) {
            return ("Cache".into(), Some(c));
        }
    }
    let norm = match t {
        "Machine" | "System" => "Machine",
        "Package" | "Socket" => "Package",
        "Die" => "Die",
        "NUMANode" => "NUMANode",
        "Core" => "Core",
        "PU" => "PU",
        "MemCache" => "MemCache",
        "Cache" => "Cache",
        g if g.starts_with("Group") => "Group",
        _ => "Other",
    };
    (norm.into(), None)
}

/// A distances2 element: attributes, indexes, values.
type RawDist = (BTreeMap<String, String>, Vec<u32>, Vec<u64>);

/// Parses hwloc XML (one element per line, as hwloc writes it).
pub fn parse_xml(text: &str) -> Truth {
    let mut truth = Truth::default();
    let mut stack: Vec<usize> = Vec::new();
    let mut dist: Option<RawDist> = None;
    let mut gp_to_os: BTreeMap<String, u32> = BTreeMap::new();
    let mut numa_dists: Vec<RawDist> = Vec::new();
    for line in text.lines() {
        let l = line.trim();
        if l.starts_with("<object ") {
            let a = attrs(l);
            let (mut ty, mut cache) = normalise(a.get("type").map(String::as_str).unwrap_or(""));
            if ty == "Cache" {
                let level = a.get("depth").and_then(|d| d.parse().ok()).unwrap_or(0);
                let kind = match a.get("cache_type").map(String::as_str) {
                    Some("1") => 'd',
                    Some("2") => 'i',
                    _ => 'u',
                };
                cache = Some((level, kind));
            }
            if a.get("type").map(String::as_str) == Some("MemCache") {
                ty = "MemCache".into();
                cache = None;
            }
            let size = a
                .get("cache_size")
                .or(a.get("local_memory"))
                .and_then(|v| v.parse().ok());
            let os_index = a.get("os_index").and_then(|v| v.parse().ok());
            if let (Some(gp), Some(os)) = (a.get("gp_index"), os_index) {
                if ty == "NUMANode" {
                    gp_to_os.insert(gp.clone(), os);
                }
            }
            let idx = truth.add(Obj {
                ty,
                os_index,
                cache,
                size,
                cpuset: a.get("cpuset").map(|c| hwloc_bitmap(c)),
                group_kind: a.get("kind").and_then(|k| k.parse().ok()),
                parent: stack.last().copied(),
                children: Vec::new(),
            });
            if !l.ends_with("/>") {
                stack.push(idx);
            }
        } else if l.starts_with("</object>") {
            stack.pop();
        } else if l.starts_with("<distances2 ") {
            dist = Some((attrs(l), Vec::new(), Vec::new()));
        } else if let Some(d) = dist.as_mut() {
            let inner = |l: &str| -> Vec<u64> {
                let start = l.find('>').unwrap() + 1;
                let end = l.rfind("</").unwrap();
                l[start..end]
                    .split_whitespace()
                    .map(|v| v.parse().unwrap())
                    .collect()
            };
            if l.starts_with("<indexes") {
                d.1.extend(inner(l).into_iter().map(|v| v as u32));
            } else if l.starts_with("<u64values") {
                d.2.extend(inner(l));
            } else if l.starts_with("</distances2>") {
                numa_dists.push(dist.take().unwrap());
            }
        }
    }
    // The NUMA latency matrix: type NUMANode, latency (kind bit 4) or unnamed.
    if let Some((a, idx, vals)) = numa_dists.into_iter().find(|(a, _, _)| {
        a.get("type").map(String::as_str) == Some("NUMANode")
            && a.get("kind")
                .and_then(|k| k.parse::<u32>().ok())
                .unwrap_or(0)
                & 8
                == 0
    }) {
        let ids: Vec<u32> = if a.get("indexing").map(String::as_str) == Some("gp") {
            idx.iter().map(|g| gp_to_os[&g.to_string()]).collect()
        } else {
            idx
        };
        let n = ids.len();
        let mut m = BTreeMap::new();
        for i in 0..n {
            for j in 0..n {
                m.insert((ids[i], ids[j]), vals[i * n + j]);
            }
        }
        truth.distances = Some(m);
    }
    truth.fill_cpusets();
    truth
}

fn console_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let digits: String = t.chars().take_while(|c| c.is_ascii_digit()).collect();
    let v: u64 = digits.parse().ok()?;
    let unit = &t[digits.len()..];
    let mul = match unit {
        "KiB" | "KB" | "kB" => 1 << 10,
        "MiB" | "MB" => 1 << 20,
        "GiB" | "GB" => 1 << 30,
        "TiB" | "TB" => 1 << 40,
        "B" | "" => 1,
        _ => return None,
    };
    Some(v * mul)
}

/// Splits `A + B (x + y)` at top-level ` + `.
fn split_plus(line: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut quote = false;
    let mut start = 0;
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => quote = !quote,
            b'(' if !quote => depth += 1,
            b')' if !quote => depth -= 1,
            b'+' if !quote
                && depth == 0
                && i > 0
                && b[i - 1] == b' '
                && b.get(i + 1) == Some(&b' ') =>
            {
                parts.push(line[start..i - 1].trim());
                start = i + 2;
            }
            _ => {}
        }
        i += 1;
    }
    parts.push(line[start..].trim());
    parts
}

/// Parses lstopo's console output (`lstopo -`, with or without `-v`/`-c`).
pub fn parse_console(text: &str) -> Truth {
    let mut truth = Truth::default();
    // (indent, object index) of the last object on each open line.
    let mut stack: Vec<(usize, usize)> = Vec::new();
    let mut lines = text.lines().peekable();
    let mut numa_by_logical: BTreeMap<u32, u32> = BTreeMap::new();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        if t.is_empty() {
            continue;
        }
        if t.starts_with("depth ") || t.starts_with("Special depth") || t.starts_with("Topology ") {
            continue;
        }
        if t.starts_with("Relative latency matrix") {
            if !t.contains("NUMANodes") {
                continue;
            }
            let by_os = t.contains("by os indexes");
            let header = lines.next().unwrap();
            let labels: Vec<u32> = header
                .split_whitespace()
                .skip(1)
                .map(|v| v.parse().unwrap())
                .collect();
            let to_os = |l: u32| if by_os { l } else { numa_by_logical[&l] };
            let mut m = BTreeMap::new();
            for _ in 0..labels.len() {
                let row: Vec<u64> = lines
                    .next()
                    .unwrap()
                    .split_whitespace()
                    .map(|v| v.parse().unwrap())
                    .collect();
                for (j, v) in row[1..].iter().enumerate() {
                    m.insert((to_os(row[0] as u32), to_os(labels[j])), *v);
                }
            }
            if truth.distances.is_none() {
                truth.distances = Some(m);
            }
            continue;
        }
        let indent = line.len() - t.len();
        while stack.last().is_some_and(|&(i, _)| i >= indent) {
            stack.pop();
        }
        let mut parent = stack.last().map(|&(_, o)| o);
        for part in split_plus(t) {
            let name = part.split([' ', '(']).next().unwrap_or("");
            let (ty, cache) = normalise(name);
            let paren = part
                .find('(')
                .map(|s| &part[s + 1..part.rfind(')').unwrap_or(part.len())]);
            let mut os_index = None;
            let mut size = None;
            let mut logical = None;
            if let Some(l) = part.split_whitespace().find_map(|w| w.strip_prefix("L#")) {
                logical = l.parse::<u32>().ok();
            }
            if let Some(p) = paren {
                for w in p.split_whitespace() {
                    // "(P#16) (disallowed)" spans two parentheses.
                    let w = w.trim_matches(|c| c == '(' || c == ')');
                    if let Some(v) = w.strip_prefix("P#") {
                        os_index = v.parse().ok();
                    } else if let Some(v) = w.strip_prefix("size=") {
                        size = console_size(v);
                    // NUMA memory is printed rounded (8190MiB): not compared.
                    } else if ty == "Cache" && size.is_none() {
                        size = console_size(w);
                    }
                }
            }
            let cpuset = part
                .split_whitespace()
                .find_map(|w| w.strip_prefix("cpuset="))
                .map(hwloc_bitmap);
            if ty == "NUMANode" {
                if let (Some(l), Some(o)) = (logical, os_index) {
                    numa_by_logical.insert(l, o);
                }
            }
            parent = Some(truth.add(Obj {
                ty,
                os_index,
                cache,
                size,
                cpuset,
                group_kind: None,
                parent,
                children: Vec::new(),
            }));
        }
        stack.push((indent, parent.unwrap()));
    }
    truth.fill_cpusets();
    truth
}

impl Truth {
    /// Adds `obj` as the last child of its parent; returns its index.
    fn add(&mut self, obj: Obj) -> usize {
        let idx = self.objects.len();
        if let Some(p) = obj.parent {
            self.objects[p].children.push(idx);
        }
        self.objects.push(obj);
        idx
    }

    /// Objects without an explicit cpuset get the PUs below them; memory
    /// children (NUMA nodes, memory-side caches) their parent's.
    fn fill_cpusets(&mut self) {
        fn below(t: &Truth, i: usize) -> Set {
            let o = &t.objects[i];
            if o.ty == "PU" {
                return o
                    .os_index
                    .map(|p| Set::from([p as usize]))
                    .unwrap_or_default();
            }
            o.children.iter().flat_map(|&c| below(t, c)).collect()
        }
        for i in 0..self.objects.len() {
            if self.objects[i].cpuset.is_none() {
                let o = &self.objects[i];
                let set = if o.ty == "NUMANode" || o.ty == "MemCache" {
                    o.parent.map(|p| below(self, p)).unwrap_or_default()
                } else {
                    below(self, i)
                };
                self.objects[i].cpuset = Some(set);
            }
        }
    }

    fn has_ancestor(&self, i: usize, tys: &[&str]) -> bool {
        let mut p = self.objects[i].parent;
        while let Some(j) = p {
            if tys.contains(&self.objects[j].ty.as_str()) {
                return true;
            }
            p = self.objects[j].parent;
        }
        false
    }

    /// The cpusets of the objects of a type; objects without CPUs (fully
    /// disallowed by a cgroup) do not exist in the model.
    fn sets(&self, ty: &str) -> Vec<Set> {
        let mut v: Vec<Set> = self
            .objects
            .iter()
            .filter(|o| o.ty == ty)
            .map(|o| o.cpuset.clone().unwrap())
            .filter(|s| !s.is_empty())
            .collect();
        v.sort();
        v
    }
}

/// What is compared between the truth and the model.
#[derive(Debug, PartialEq, Eq)]
pub struct Facts {
    pub pus: Set,
    pub packages: Vec<Set>,
    pub dies: Vec<Set>,
    pub clusters: Vec<Set>,
    pub cores: Vec<Set>,
    /// (level, kind, cpus, size)
    pub caches: Vec<(u8, char, Set, Option<u64>)>,
    /// NUMA os index → (Linux cpus, memory)
    pub nodes: BTreeMap<u32, (Set, Option<u64>)>,
    pub distances: Option<BTreeMap<(u32, u32), u64>>,
}

/// The facts the truth implies for the model, under the mapping documented in
/// the readers: no package → one package of all PUs, a PU in no core → a core
/// of its own, groups inside a package/die without NUMA children → clusters, a PU in the
/// NUMA node with the smallest cpuset (ties: first listed).
pub fn expected(t: &Truth) -> Facts {
    let pus: Set = t
        .objects
        .iter()
        .filter(|o| o.ty == "PU")
        .filter_map(|o| o.os_index.map(|p| p as usize))
        .collect();
    let mut packages = t.sets("Package");
    if packages.is_empty() {
        packages = vec![pus.clone()];
    }
    // hwloc leaves a PU outside every Core when it found no core mask for
    // it (a partial sysfs capture); the model gives every CPU a core.
    let mut cores = t.sets("Core");
    let in_cores: Set = cores.iter().flatten().copied().collect();
    cores.extend(pus.difference(&in_cores).map(|&p| Set::from([p])));
    cores.sort();
    let mut clusters: Vec<Set> = (0..t.objects.len())
        .filter(|&i| {
            let o = &t.objects[i];
            // hwloc's helper groups (900 distances, 1000 I/O, 1001 memory) are not
            // CPU groupings; console output has no kinds, so there a group holding
            // a NUMA node is taken for a memory helper.
            let helper = match o.group_kind {
                Some(k) => matches!(k, 900 | 1000 | 1001),
                None => o.children.iter().any(|&c| t.objects[c].ty == "NUMANode"),
            };
            o.ty == "Group" && t.has_ancestor(i, &["Package", "Die"]) && !helper
        })
        .map(|i| t.objects[i].cpuset.clone().unwrap())
        .filter(|s| !s.is_empty())
        .collect();
    clusters.sort();
    let mut caches: Vec<(u8, char, Set, Option<u64>)> = t
        .objects
        .iter()
        .filter(|o| o.ty == "Cache" && !o.cpuset.as_ref().unwrap().is_empty())
        .map(|o| {
            let (l, k) = o.cache.unwrap();
            (l, k, o.cpuset.clone().unwrap(), o.size)
        })
        .collect();
    caches.sort();
    let numa: Vec<&Obj> = t.objects.iter().filter(|o| o.ty == "NUMANode").collect();
    let mut nodes: BTreeMap<u32, (Set, Option<u64>)> = numa
        .iter()
        .map(|o| (o.os_index.unwrap(), (Set::new(), o.size)))
        .collect();
    for &p in &pus {
        let best = numa
            .iter()
            .filter(|o| o.cpuset.as_ref().unwrap().contains(&p))
            .min_by_key(|o| o.cpuset.as_ref().unwrap().len());
        if let Some(o) = best {
            nodes.get_mut(&o.os_index.unwrap()).unwrap().0.insert(p);
        }
    }
    Facts {
        pus,
        packages,
        dies: t.sets("Die"),
        clusters,
        cores,
        caches,
        nodes,
        distances: t.distances.clone(),
    }
}

/// The same facts read from the model. Sizes are kept only where `truth` has
/// them, so console outputs (which may omit sizes) still compare.
pub fn facts_of(topo: &Topology, truth: &Facts) -> Facts {
    let set = |m: &topology::CompactMask| -> Set { m.iter().collect() };
    let level = |k: LevelKind| -> Vec<Set> {
        let mut v: Vec<Set> = topo
            .level(k)
            .map(|l| l.groups.iter().map(|g| set(&g.cpus)).collect())
            .unwrap_or_default();
        v.sort();
        v
    };
    let mut caches: Vec<(u8, char, Set, Option<u64>)> = topo
        .caches()
        .iter()
        .map(|c| {
            let k = match c.kind {
                CacheKind::Data => 'd',
                CacheKind::Instruction => 'i',
                CacheKind::Unified => 'u',
            };
            (c.level, k, set(&c.cpus), c.size_bytes)
        })
        .collect();
    caches.sort();
    for (i, c) in caches.iter_mut().enumerate() {
        if truth.caches.get(i).is_some_and(|t| t.3.is_none()) {
            c.3 = None;
        }
    }
    let nodes = topo
        .nodes()
        .iter()
        .map(|n| {
            let mem = if truth.nodes.get(&n.id).is_some_and(|t| t.1.is_none()) {
                None
            } else {
                n.memory_bytes
            };
            (n.id, (set(&n.cpus), mem))
        })
        .collect();
    let distances = truth.distances.as_ref().map(|_| {
        let mut m = BTreeMap::new();
        for (i, a) in topo.nodes().iter().enumerate() {
            for (j, b) in topo.nodes().iter().enumerate() {
                m.insert((a.id, b.id), topo.distance(i, j) as u64);
            }
        }
        m
    });
    Facts {
        pus: topo.known().iter().collect(),
        packages: level(LevelKind::Package),
        dies: level(LevelKind::Die),
        clusters: level(LevelKind::Cluster),
        cores: level(LevelKind::Core),
        caches,
        nodes,
        distances,
    }
}

/// Asserts field by field, so a failure says which part differs.
pub fn assert_facts(what: &str, got: &Facts, want: &Facts) {
    assert_eq!(got.pus, want.pus, "{what}: PUs");
    assert_eq!(got.packages, want.packages, "{what}: packages");
    assert_eq!(got.dies, want.dies, "{what}: dies");
    assert_eq!(got.clusters, want.clusters, "{what}: clusters (groups)");
    assert_eq!(got.cores, want.cores, "{what}: cores");
    assert_eq!(
        got.caches.len(),
        want.caches.len(),
        "{what}: number of caches"
    );
    assert_eq!(got.caches, want.caches, "{what}: caches");
    assert_eq!(got.nodes, want.nodes, "{what}: NUMA nodes");
    assert_eq!(got.distances, want.distances, "{what}: NUMA distances");
}
