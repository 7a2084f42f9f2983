//! Truth tests for the sysfs reader against the corpus' expected outputs.
//!
//! Every sysfs snapshot in `../shared/corpus` that comes with an expected output
//! written by another tool is read with [`readers::sysfs::read_path`], and the
//! facts we read are compared with that output:
//!
//! - hwloc `tests/hwloc/linux/*.tar.bz2` (+ `x86+linux/`, and the `history/`
//!   ones) against `lstopo -v -` console listings and `lstopo -.xml` exports:
//!   packages, cores, PUs, NUMA nodes with their cpusets, caches (per level and
//!   type: every instance's cpuset and size) and the NUMA distance matrix;
//! - util-linux `tests/ts/lscpu/dumps/*.tar.gz` (+ `history/`) against
//!   `lscpu --parse` (and `--parse --physical`) CSV and the summary's NUMA and
//!   cache-instance lines.
//!
//! Both expected formats are parsed here by small independent parsers. Dumps that
//! cannot be compared are listed in explicit skip tables with a reason; the
//! tests print "N checked, M skipped" and fail if the tables go stale.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;

use cpumask::CpuMask;
use topology::{CacheKind, LevelKind, Topology};

fn corpus() -> PathBuf {
    readers::corpus::dir(env!("CARGO_MANIFEST_DIR"))
}

/// hwloc's Linux test cases in the corpus (console or XML listings of a
/// snapshot, `history/` included).
const HWLOC_CASES: usize = 63;

/// util-linux's lscpu dumps with an expected output (`history/` included).
const LSCPU_CASES: usize = 35;

/// sysfs snapshots in the corpus (hwloc's linux and x86+linux, util-linux's).
const SNAPSHOTS: usize = 60;

/// What comparing a corpus' cases with their expected outputs found; the
/// cases its skip table names are passed over, with the reason printed.
struct Tally {
    skips: &'static [(&'static str, &'static str)],
    checked: usize,
    skipped: Vec<(String, String)>,
    failures: Vec<String>,
}

impl Tally {
    fn new(skips: &'static [(&'static str, &'static str)]) -> Self {
        Tally {
            skips,
            checked: 0,
            skipped: Vec::new(),
            failures: Vec::new(),
        }
    }

    /// Whether the skip table names case `name` (then it is counted skipped).
    fn skips(&mut self, name: &str) -> bool {
        let Some((_, reason)) = self.skips.iter().find(|(n, _)| *n == name) else {
            return false;
        };
        self.skipped.push((name.to_string(), reason.to_string()));
        true
    }

    /// Case `name` could not be read at all.
    fn unread(&mut self, name: &str, error: impl std::fmt::Display) {
        self.failures.push(format!("{name}: read error: {error}"));
    }

    /// Case `name` was compared: `diffs` are its mismatches.
    fn compared(&mut self, name: &str, diffs: &[String]) {
        if diffs.is_empty() {
            self.checked += 1;
        } else {
            self.failures
                .push(format!("{name}:\n    {}", diffs.join("\n    ")));
        }
    }

    /// Prints "N checked, M skipped" and fails on any mismatch, on a skip
    /// table naming a case that does not exist, or when fewer than `min`
    /// `what` were checked.
    fn finish(self, what: &str, min: usize) {
        let checked = self.checked;
        println!(
            "{what}: {checked} checked, {} skipped:\n{}",
            self.skipped.len(),
            self.skipped
                .iter()
                .map(|(n, r)| format!("  skip {n}: {r}"))
                .collect::<Vec<_>>()
                .join("\n")
        );
        assert!(
            self.failures.is_empty(),
            "mismatches:\n{}",
            self.failures.join("\n")
        );
        assert_eq!(
            self.skipped.len(),
            self.skips.len(),
            "the skip table names {what} that do not exist"
        );
        assert!(checked >= min, "only {checked} {what} checked");
    }
}

// ---------------------------------------------------------------------------
// hwloc console listings
// ---------------------------------------------------------------------------

/// hwloc tests we do not compare, by target name (without extension), and why.
const HWLOC_SKIPS: &[(&str, &str)] = &[
    (
        "16amd64-8n2c-cpusets-xml",
        "the process cpuset (proc/self/cpuset + cgroup) hides CPUs and nodes",
    ),
    (
        "32amd64-4s2n4c-cgroup2",
        "the cgroup v2 cpuset (cpuset.cpus.effective) hides CPUs and nodes",
    ),
    (
        "fakeheterocpunuma",
        "nodes share CPUs on purpose and the listing was made with \
         HWLOC_DEBUG_ALLOW_OVERLAPPING_NODE_CPUSETS, which keeps them; without it hwloc (and \
         the reader) leave out nodes 4 and 5, which leaves CPUs 12-19 in no node",
    ),
    // Process restrictions and presentation options we do not model.
    (
        "16amd64-4n4c-cgroup-distance-merge",
        "cgroup cpuset restricts CPUs/nodes, and --filter all:structure drops levels",
    ),
    (
        "16amd64-8n2c-cpusets",
        "the process cpuset (proc/self/cpuset + cgroup) hides CPUs and nodes",
    ),
    (
        "16amd64-8n2c-cpusets-disallowed",
        "--disallowed marks cpuset-excluded objects: a process-restriction view",
    ),
    (
        "16em64t-4s2c2t-merge",
        "--merge removes levels with identical cpusets",
    ),
    (
        "16em64t-4s2ca2c-cpusetreorder-merge",
        "--filter all:structure removes levels with identical cpusets",
    ),
    (
        "nvidiagpunumanodes",
        "hwloc hides NVIDIA GPU NUMA nodes by default; the -kept target checks the same tarball",
    ),
    (
        "4em64t-2c2t-ignore-reorder",
        "history listing made with lstopo --ignore (packages, cores and caches hidden)",
    ),
    (
        "16em64t-4s2ca2c-cpusetreorder",
        "the process cpuset (/dev/cpuset/prout/cpus = 2-11,13) hides the other CPUs",
    ),
    (
        "4fake-4gr1nu1pu",
        "the process cpuset (cgroup) hides CPUs 2-3 and nodes 1 and 3",
    ),
    (
        "40intel64-4n10c+pci-conflicts",
        "tarball edited so a package and an L3 conflict; hwloc drops them, we refuse it \
         (sysfs_captures.rs)",
    ),
    (
        "32ppc-4n4c2c",
        "POWER6 caches come only from proc/device-tree, which the sysfs reader does not read",
    ),
    (
        "4ppc-4c",
        "dump trimmed to the cpu3 directory; hwloc takes CPUs 0-2 from /proc/cpuinfo alone",
    ),
    (
        "64amd64-4s2n4ca2co",
        "hwloc splits AMD Bulldozer compute units, which this kernel reports as SMT \
         siblings (thread_siblings 0-1), into one core per PU",
    ),
    (
        "fakememinitiators-1np2c+1npp+gi",
        "nodes 0-4 have CPUs or initiators but no memory (has_memory = 5-10): hwloc \
         shows memory nodes only and places CPUs by HMAT initiators",
    ),
    (
        "28em64t-2s2n7c-buggycoresiblings",
        "history test removed from hwloc: that hwloc merged per-node core_siblings by \
         physical_package_id; current hwloc (and we) follow the package masks",
    ),
    (
        "64intel64-fakeKNL-A2A-cache",
        "hwloc builds the KNL MCDRAM-cache L3 from its own knl_memoryside_cache file",
    ),
    (
        "64intel64-fakeKNL-SNC4-hybrid",
        "hwloc builds the KNL MCDRAM-cache L3 from its own knl_memoryside_cache file",
    ),
    (
        "64intel64-fakeKNL-SNC4-hybrid-msc",
        "KNL-specific hwloc handling (MCDRAM memory-side caches, no distance matrix)",
    ),
    (
        "64amd64-4p2n4ca2co",
        "same Bulldozer machine through hwloc's CPUID backend: one core per PU, where \
         the kernel reports compute units as SMT siblings",
    ),
];

/// Environment settings of `.test` files that do not change the facts compared
/// here (error display, I/O locality, CPU-kind heuristics) or that select the raw
/// kernel view (keeping GPU NUMA nodes, as sysfs has them).
const HARMLESS_ENV: &[&str] = &[
    "HWLOC_SHOW_ERRORS",
    "HWLOC_PCI_LOCALITY",
    "HWLOC_CPUKINDS",
    "HWLOC_KEEP_NVIDIA_GPU_NUMA_NODES=1",
    "HWLOC_COMPONENTS=linux,x86,stop",
    // Shows KNL's MCDRAM cache as a memory-side cache rather than an L3; memory-
    // side caches are not compared.
    "HWLOC_KNL_MSCACHE_L3",
];

/// One object line of an `lstopo -v` listing.
#[derive(Debug, Clone)]
struct Obj {
    ty: String,
    os: Option<u32>,
    parent: Option<usize>,
    /// PUs below (filled after parsing).
    pus: CpuMask,
    /// `size=` attribute as printed: (value, unit in bytes). lstopo rounds
    /// to the unit (27.5 MiB prints as 28MiB); XML gives bytes (unit 1).
    size: Option<(u64, u64)>,
    /// The object's own cpuset, when the format states it (XML).
    cpuset: Option<CpuMask>,
    /// Cache level and kind, when the format states them apart from the type
    /// name (XML `L1Cache` with `cache_type`).
    cache: Option<(u8, CacheKind)>,
}

/// What an `lstopo -v` listing says.
#[derive(Debug, Default)]
struct Console {
    objs: Vec<Obj>,
    /// The NUMA latency matrix, if given: (from, to, value) by node OS index.
    distances: Option<Vec<(u32, u32, u32)>>,
    /// NUMA node os index by logical index (order of appearance).
    numa_os: Vec<u32>,
    /// CPU kinds' cpusets (console `CPU kind` lines, XML `<cpukind>`).
    kinds: Vec<CpuMask>,
    /// Every `CPUModel="..."` info value, byte for byte as lstopo prints it.
    models: Vec<String>,
}

fn parse_size_attr(attrs: &str) -> Option<(u64, u64)> {
    let start = attrs.find("size=")?;
    if start > 0 && attrs.as_bytes()[start - 1] != b' ' && attrs.as_bytes()[start - 1] != b'(' {
        return None;
    }
    let rest = &attrs[start + 5..];
    let end = rest.find([' ', ')']).unwrap_or(rest.len());
    let v = &rest[..end];
    let (num, mult) = if let Some(n) = v.strip_suffix("KiB") {
        (n, 1u64 << 10)
    } else if let Some(n) = v.strip_suffix("MiB") {
        (n, 1 << 20)
    } else if let Some(n) = v.strip_suffix("GiB") {
        (n, 1 << 30)
    } else if let Some(n) = v.strip_suffix("KB") {
        // Older hwloc wrote binary kilobytes as "KB".
        (n, 1 << 10)
    } else if let Some(n) = v.strip_suffix("MB") {
        (n, 1 << 20)
    } else if let Some(n) = v.strip_suffix("GB") {
        (n, 1 << 30)
    } else if let Some(n) = v.strip_suffix("B") {
        (n, 1)
    } else {
        (v, 1)
    };
    num.parse::<u64>().ok().map(|n| (n, mult))
}

/// Whether `bytes` prints as `value` in `unit` the way lstopo rounds sizes.
fn size_matches(bytes: u64, (value, unit): (u64, u64)) -> bool {
    (bytes + unit / 2) / unit == value
}

fn parse_console(text: &str) -> Console {
    let mut c = Console::default();
    let mut stack: Vec<(usize, usize)> = Vec::new(); // (indent, obj index)
    let mut lines = text.lines();
    for line in lines.by_ref() {
        if line.starts_with("depth ") || line.trim_start().starts_with("depth ") {
            break;
        }
        if line.trim().is_empty() {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        let body = line.trim_start();
        if let Some((_, rest)) = body.split_once("CPUModel=\"") {
            let model = rest.split_once('"').map_or(rest, |(m, _)| m);
            c.models.push(model.to_string());
        }
        let ty: String = body
            .chars()
            .take_while(|ch| !ch.is_whitespace() && *ch != '(')
            .collect();
        let attrs = body.find('(').map(|i| &body[i..]).unwrap_or("");
        // `P#n` is inside the parentheses today, after the type in older hwloc.
        let os = body.find("P#").and_then(|i| {
            let digits: String = body[i + 2..]
                .chars()
                .take_while(|ch| ch.is_ascii_digit())
                .collect();
            digits.parse().ok()
        });
        while stack.last().is_some_and(|&(ind, _)| ind >= indent) {
            stack.pop();
        }
        let parent = stack.last().map(|&(_, i)| i);
        c.objs.push(Obj {
            ty: ty.clone(),
            os,
            parent,
            pus: CpuMask::new(),
            size: parse_size_attr(attrs),
            cpuset: None,
            cache: None,
        });
        let idx = c.objs.len() - 1;
        if ty == "NUMANode" {
            // Memory objects are numbered (L#) in their own order, not in the
            // order the tree lists them; the matrix is by that number.
            let logical = body.find("L#").map(|i| {
                body[i + 2..]
                    .chars()
                    .take_while(|ch| ch.is_ascii_digit())
                    .collect::<String>()
                    .parse::<usize>()
                    .expect("L# index")
            });
            let logical = logical.unwrap_or(c.numa_os.len());
            if c.numa_os.len() <= logical {
                c.numa_os.resize(logical + 1, u32::MAX);
            }
            c.numa_os[logical] = os.expect("NUMANode without P#");
        }
        stack.push((indent, idx));
    }
    // PUs propagate up to every ancestor.
    for i in 0..c.objs.len() {
        if c.objs[i].ty == "PU" {
            let cpu = c.objs[i].os.expect("PU without P#") as usize;
            let mut at = Some(i);
            while let Some(j) = at {
                c.objs[j].pus.set(cpu);
                at = c.objs[j].parent;
            }
        }
    }
    // CPU kinds ("CPU kind #0 efficiency 0 cpuset 0x000ff000").
    for line in text.lines().filter(|l| l.starts_with("CPU kind #")) {
        if let Some((_, set)) = line.split_once(" cpuset ") {
            c.kinds.push(xml_cpuset(set.trim()));
        }
    }
    // The NUMA latency matrix, by logical index.
    for line in lines.by_ref() {
        if line.starts_with("Relative latency matrix") && line.contains("NUMANode") {
            if line.contains("(name") && !line.contains("name NUMALatency") {
                continue;
            }
            // Header " index  0 2 1 3" then one row per node, each starting with
            // its label. Labels are the NUMA nodes' logical indexes (L#), in
            // the order hwloc stores the matrix, which need not be L# order.
            let mut columns: Vec<usize> = Vec::new();
            let mut rows: Vec<(usize, Vec<u32>)> = Vec::new();
            for row in text.lines().skip_while(|l| *l != line).skip(1) {
                let t = row.trim();
                if let Some(h) = t.strip_prefix("index") {
                    columns = h.split_whitespace().map(|w| w.parse().unwrap()).collect();
                    continue;
                }
                if columns.is_empty()
                    || t.is_empty()
                    || !t.starts_with(|ch: char| ch.is_ascii_digit())
                {
                    break;
                }
                let mut nums = t.split_whitespace().map(|w| w.parse::<u32>().unwrap());
                let label = nums.next().unwrap() as usize;
                rows.push((label, nums.collect()));
            }
            let mut triples = Vec::new();
            for (row_label, row) in rows {
                for (col_label, &d) in columns.iter().zip(&row) {
                    triples.push((c.numa_os[row_label], c.numa_os[*col_label], d));
                }
            }
            c.distances = Some(triples);
            break;
        }
    }
    c
}

/// The value of `name="..."` in an XML start tag.
fn xml_attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let start = tag.find(&key)? + key.len();
    let end = tag[start..].find('"')? + start;
    Some(&tag[start..end])
}

/// An hwloc cpuset string (`0x000000ff,0xffffffff`) as a mask.
fn xml_cpuset(text: &str) -> CpuMask {
    let groups: Vec<&str> = text
        .split(',')
        .map(|g| g.trim().trim_start_matches("0x"))
        .collect();
    CpuMask::parse_hex(&groups.join(",")).expect("cpuset")
}

/// Parses hwloc's XML export (v2 layout, one element per line as hwloc writes
/// it) into the same object list as a console listing, with each object's own
/// cpuset and the NUMA latency matrix by OS index.
fn parse_xml(text: &str) -> Console {
    let mut c = Console::default();
    let mut stack: Vec<usize> = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let l = line.trim();
        if l.starts_with("<object ") {
            let ty = xml_attr(l, "type").unwrap_or("").to_string();
            let os = xml_attr(l, "os_index").and_then(|v| v.parse().ok());
            let cpuset = xml_attr(l, "cpuset").map(xml_cpuset);
            let size = xml_attr(l, "cache_size")
                .and_then(|v| v.parse::<u64>().ok())
                .map(|b| (b, 1));
            let cache = cache_type(&ty).map(|(level, kind)| {
                // `L1Cache` + cache_type: 0 unified, 1 data, 2 instruction.
                let kind = match (kind, xml_attr(l, "cache_type")) {
                    (CacheKind::Unified, Some("1")) => CacheKind::Data,
                    (CacheKind::Unified, Some("2")) => CacheKind::Instruction,
                    (k, _) => k,
                };
                (level, kind)
            });
            if ty == "NUMANode" {
                c.numa_os.push(os.expect("NUMANode os_index"));
            }
            c.objs.push(Obj {
                ty,
                os,
                parent: stack.last().copied(),
                pus: cpuset.unwrap_or_default(),
                size,
                cpuset,
                cache,
            });
            if !l.ends_with("/>") {
                stack.push(c.objs.len() - 1);
            }
        } else if l.starts_with("</object>") {
            stack.pop();
        } else if l.starts_with("<cpukind ") {
            if let Some(set) = xml_attr(l, "cpuset") {
                c.kinds.push(xml_cpuset(set));
            }
        } else if l.starts_with("<distances2 ")
            && xml_attr(l, "type") == Some("NUMANode")
            && xml_attr(l, "name").is_none_or(|n| n == "NUMALatency")
            && c.distances.is_none()
        {
            let n: usize = xml_attr(l, "nbobjs").unwrap().parse().unwrap();
            let mut indexes: Vec<u32> = Vec::new();
            let mut values: Vec<u32> = Vec::new();
            for inner in lines.by_ref() {
                let il = inner.trim();
                if il.starts_with("</distances2>") {
                    break;
                }
                let body = il
                    .split_once('>')
                    .map(|(_, b)| b.split('<').next().unwrap_or(""))
                    .unwrap_or("");
                let nums = body.split_whitespace().map(|w| w.parse::<u32>().unwrap());
                if il.starts_with("<indexes") {
                    indexes.extend(nums);
                } else if il.starts_with("<u64values") {
                    values.extend(nums);
                }
            }
            assert_eq!(indexes.len(), n);
            assert_eq!(values.len(), n * n);
            let triples = (0..n * n)
                .map(|k| (indexes[k / n], indexes[k % n], values[k]))
                .collect();
            c.distances = Some(triples);
        }
    }
    // Cpusets are given per object: no propagation from the PUs is needed.
    c
}

/// (level, kind) of an hwloc cache type name: `L2Cache`, `L1dCache`, `L2iCache`.
fn cache_type(ty: &str) -> Option<(u8, CacheKind)> {
    let rest = ty.strip_prefix('L')?.strip_suffix("Cache")?;
    let (digits, kind) = match rest.as_bytes().last()? {
        b'd' => (&rest[..rest.len() - 1], CacheKind::Data),
        b'i' => (&rest[..rest.len() - 1], CacheKind::Instruction),
        _ => (rest, CacheKind::Unified),
    };
    Some((digits.parse().ok()?, kind))
}

/// Our groups at `kind`, restricted to `cpus`, empty ones dropped.
fn groups_within(t: &Topology, kind: LevelKind, cpus: &CpuMask) -> BTreeSet<Vec<usize>> {
    t.level(kind)
        .map(|l| {
            l.groups
                .iter()
                .map(|g| g.cpus.and(cpus).iter().collect::<Vec<_>>())
                .filter(|v| !v.is_empty())
                .collect()
        })
        .unwrap_or_default()
}

fn set_of(m: &CpuMask) -> Vec<usize> {
    m.iter().collect()
}

/// "only in hwloc: ..., only in ours: ..." for two sets of cpusets.
fn set_diff<T: Ord + std::fmt::Debug>(hwloc: &BTreeSet<T>, ours: &BTreeSet<T>) -> String {
    let only_h: Vec<&T> = hwloc.difference(ours).collect();
    let only_o: Vec<&T> = ours.difference(hwloc).collect();
    format!("only in hwloc {only_h:?}, only in ours {only_o:?}")
}

/// Compares one topology with one console listing; returns the differences.
fn compare_console(t: &Topology, c: &Console, options: &str) -> Vec<String> {
    let mut diffs = Vec::new();
    // hwloc ignores offline CPUs entirely, so every cpuset we compare is
    // restricted to the online CPUs whose topology we know.
    let online = t.online().and(&t.known());
    let console_pus: CpuMask = c
        .objs
        .iter()
        .filter(|o| o.ty == "PU")
        .map(|o| o.os.unwrap() as usize)
        .collect();
    if console_pus != online {
        diffs.push(format!(
            "PUs: hwloc {} vs ours {}",
            console_pus.to_list_string(),
            online.to_list_string()
        ));
    }
    let of_type = |ty: &str| -> BTreeSet<Vec<usize>> {
        c.objs
            .iter()
            .filter(|o| o.ty == ty)
            .map(|o| set_of(&o.pus))
            .collect()
    };

    // Packages. hwloc shows none when sysfs gives no package information at all
    // (we then model one package holding every CPU): compare only when shown.
    let packages = of_type("Package");
    let ours = groups_within(t, LevelKind::Package, &online);
    if !packages.is_empty() && packages != ours {
        diffs.push(format!("packages: {}", set_diff(&packages, &ours)));
    }
    if packages.is_empty() && ours.len() != 1 {
        diffs.push(format!("hwloc shows no package, we have {}", ours.len()));
    }
    // Package OS ids where hwloc prints them.
    for o in c.objs.iter().filter(|o| o.ty == "Package") {
        let first = o.pus.first().unwrap();
        let our_os = t
            .cpu(first)
            .and_then(|cpu| cpu.group(LevelKind::Package))
            .map(|g| t.level(LevelKind::Package).unwrap().groups[g as usize].os_id);
        if let (Some(os), Some(ours)) = (o.os, our_os) {
            if Some(os) != ours {
                diffs.push(format!(
                    "package of CPU {first}: hwloc P#{os} vs ours {ours:?}"
                ));
            }
        }
    }

    // Cores (same rule: hwloc shows Core objects whenever sysfs has cores).
    let cores = of_type("Core");
    let ours = groups_within(t, LevelKind::Core, &online);
    if !cores.is_empty() && cores != ours {
        diffs.push(format!("cores: {}", set_diff(&cores, &ours)));
    }
    if cores.is_empty() && ours.iter().any(|g| g.len() > 1) {
        diffs.push("hwloc shows no cores, we have multi-thread cores".to_string());
    }

    // NUMA nodes. In a console listing a node's cpuset is its parent's (hwloc
    // attaches each memory object to the object with the same cpuset), except
    // that CPU-less nodes are attached by distance or HMAT initiators, which
    // sysfs `cpulist` does not give: those are compared by presence only.
    let mut hwloc_nodes: BTreeMap<u32, CpuMask> = BTreeMap::new();
    for o in c.objs.iter().filter(|o| o.ty == "NUMANode") {
        // A memory-side cache sits between a node and its CPU-side parent.
        let mut parent = o.parent;
        while let Some(p) = parent.filter(|&p| c.objs[p].ty == "MemCache") {
            parent = c.objs[p].parent;
        }
        let pus = o
            .cpuset
            .unwrap_or_else(|| parent.map(|p| c.objs[p].pus).unwrap_or_default());
        hwloc_nodes.insert(o.os.unwrap(), pus);
    }
    let our_ids: BTreeSet<u32> = t.nodes().iter().map(|n| n.id).collect();
    let hwloc_ids: BTreeSet<u32> = hwloc_nodes.keys().copied().collect();
    if t.nodes().is_empty() {
        // Without sysfs nodes hwloc makes one node with all memory.
        if hwloc_ids.len() > 1 {
            diffs.push(format!("nodes: hwloc {hwloc_ids:?}, we read none"));
        }
    } else {
        if our_ids != hwloc_ids {
            diffs.push(format!("node ids: hwloc {hwloc_ids:?} vs ours {our_ids:?}"));
        }
        for n in t.nodes() {
            let ours = n.cpus.and(&online);
            if ours.is_empty() {
                continue;
            }
            if let Some(h) = hwloc_nodes.get(&n.id) {
                if *h != ours {
                    diffs.push(format!(
                        "node {} cpus: hwloc {} vs ours {}",
                        n.id,
                        h.to_list_string(),
                        ours.to_list_string()
                    ));
                }
            }
        }
    }

    // Caches: for every (level, kind), the set of instance cpusets, and sizes.
    if !options.contains("--no-caches") {
        type BySet<T> = BTreeMap<(u8, CacheKind), BTreeMap<Vec<usize>, Option<T>>>;
        let mut hwloc_caches: BySet<(u64, u64)> = BTreeMap::new();
        for o in &c.objs {
            if let Some(key) = o.cache.or_else(|| cache_type(&o.ty)) {
                hwloc_caches
                    .entry(key)
                    .or_default()
                    .insert(set_of(&o.pus), o.size);
            }
        }
        let mut our_caches: BySet<u64> = BTreeMap::new();
        for cache in t.caches() {
            if options.contains("--no-icaches") && cache.kind == CacheKind::Instruction {
                continue;
            }
            let cpus = set_of(&cache.cpus.and(&online));
            if cpus.is_empty() {
                continue;
            }
            our_caches
                .entry((cache.level, cache.kind))
                .or_default()
                .insert(cpus, cache.size_bytes);
        }
        for key in hwloc_caches
            .keys()
            .chain(our_caches.keys())
            .collect::<BTreeSet<_>>()
        {
            let h = hwloc_caches.get(key);
            let o = our_caches.get(key);
            let hs: Option<BTreeSet<&Vec<usize>>> = h.map(|m| m.keys().collect());
            let os: Option<BTreeSet<&Vec<usize>>> = o.map(|m| m.keys().collect());
            if hs != os {
                diffs.push(format!(
                    "L{}{:?} caches: {}",
                    key.0,
                    key.1,
                    set_diff(&hs.unwrap_or_default(), &os.unwrap_or_default())
                ));
                continue;
            }
            for (cpus, size) in h.unwrap() {
                let ours = o.unwrap()[cpus];
                let fine = match (size, ours) {
                    (None, _) => true,
                    (Some(printed), Some(bytes)) => size_matches(bytes, *printed),
                    (Some(_), None) => false,
                };
                if !fine {
                    diffs.push(format!(
                        "L{}{:?} cache of {cpus:?}: hwloc size {size:?} vs ours {ours:?}",
                        key.0, key.1
                    ));
                }
            }
        }
    }

    // CPU kinds, where we find some (Intel PMU devices, Arm MIDR parts): hwloc
    // must list the same sets. hwloc also ranks kinds by frequency and
    // capacity, which we do not, so a machine where only hwloc finds kinds
    // (x86 hybrids without PMU directories) is not compared.
    if !t.core_kinds().is_empty() && !options.contains("no-midr") {
        let ours: BTreeSet<Vec<usize>> = (0..t.core_kinds().len())
            .map(|k| {
                t.cpus()
                    .iter()
                    .filter(|c| c.kind == Some(k as u16) && online.contains(c.id as usize))
                    .map(|c| c.id as usize)
                    .collect()
            })
            .collect();
        let hwloc: BTreeSet<Vec<usize>> = c.kinds.iter().map(set_of).collect();
        if ours != hwloc {
            diffs.push(format!("CPU kinds: {}", set_diff(&hwloc, &ours)));
        }
    }

    // The CPU model, kept as hwloc keeps an info value (runs of spaces and
    // all), wherever the listing names one and we found one.
    if let Some(ours) = t.model_name() {
        for theirs in c.models.iter().filter(|m| *m != ours) {
            diffs.push(format!("CPUModel: hwloc {theirs:?}, ours {ours:?}"));
        }
    }

    // Distances, by logical index → os index.
    if let Some(triples) = &c.distances {
        let n = c.numa_os.len();
        if triples.len() != n * n || !t.has_distances() {
            diffs.push(format!(
                "distances: hwloc {} entries for {n} nodes; ours present: {}",
                triples.len(),
                t.has_distances()
            ));
        } else {
            for &(from, to, d) in triples {
                let ours = t
                    .node_index(from)
                    .zip(t.node_index(to))
                    .map(|(a, b)| t.distance(a, b));
                if ours != Some(d) {
                    diffs.push(format!(
                        "distance node {from} -> {to}: hwloc {d}, ours {ours:?}"
                    ));
                }
            }
        }
    } else if t.nodes().len() > 1 && t.has_distances() {
        // hwloc omits a matrix only when it is uninformative (all equal).
        let all_same = (0..t.nodes().len())
            .all(|i| (0..t.nodes().len()).all(|j| i == j || t.distance(i, j) == t.distance(0, 1)));
        if !all_same {
            diffs.push("hwloc printed no distance matrix but ours is informative".into());
        }
    }
    diffs
}

/// One hwloc test: tarball, expected console, lstopo options, env lines.
struct HwlocCase {
    name: String,
    tarball: PathBuf,
    target: PathBuf,
    options: String,
    env: Vec<String>,
}

fn hwloc_cases() -> Vec<HwlocCase> {
    let mut cases = Vec::new();
    let base = corpus().join("hwloc");
    let mut dirs = vec![
        base.join("tests/hwloc/linux"),
        base.join("tests/hwloc/x86+linux"),
    ];
    for h in std::fs::read_dir(base.join("history")).expect("corpus history") {
        dirs.push(h.unwrap().path().join("tests/hwloc/linux"));
    }
    for dir in dirs {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in &entries {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if let Some(stem) = name.strip_suffix(".test") {
                let text = std::fs::read_to_string(p).unwrap();
                let mut source = None;
                let mut target = None;
                let mut options = String::from("-v -");
                let mut env = Vec::new();
                for line in text.lines() {
                    let Some((k, v)) = line.split_once(':') else {
                        continue;
                    };
                    let v = v.trim().to_string();
                    match k.trim() {
                        "source" => source = Some(v),
                        "target" => target = Some(v),
                        "options" => options = v,
                        "env" if !v.starts_with("export ") => env.push(v),
                        "exclude" => env.push(format!("exclude={v}")),
                        _ => {}
                    }
                }
                let target = target.unwrap_or_else(|| panic!("{stem}: no target"));
                cases.push(HwlocCase {
                    name: target
                        .rsplit_once('.')
                        .map(|(a, _)| a.to_string())
                        .unwrap_or(target.clone()),
                    tarball: dir.join(source.unwrap_or_else(|| panic!("{stem}: no source"))),
                    target: dir.join(&target),
                    options,
                    env,
                });
            } else if let Some(stem) = name.strip_suffix(".output") {
                // history/: no .test descriptors; `name.output` is the default
                // `lstopo -v` listing of `name.tar.bz2`.
                cases.push(HwlocCase {
                    name: stem.to_string(),
                    tarball: dir.join(format!("{stem}.tar.bz2")),
                    target: p.clone(),
                    options: "-v -".into(),
                    env: Vec::new(),
                });
            }
        }
    }
    cases
}

#[test]
fn hwloc_console_listings_match() {
    let what = format!("{HWLOC_CASES} hwloc Linux snapshots against lstopo's listings");
    if !readers::corpus::present(&corpus(), &what) {
        return;
    }
    let cases = hwloc_cases();
    assert_eq!(cases.len(), HWLOC_CASES, "hwloc Linux test cases");
    let mut tally = Tally::new(HWLOC_SKIPS);
    for case in cases {
        if tally.skips(&case.name) {
            continue;
        }
        let harmful: Vec<&String> = case
            .env
            .iter()
            .filter(|e| !HARMLESS_ENV.iter().any(|h| e.starts_with(h)))
            .collect();
        assert!(
            harmful.is_empty(),
            "{}: env {harmful:?} not understood: add a skip with a reason",
            case.name
        );
        assert!(
            case.target
                .extension()
                .is_some_and(|e| e == "console" || e == "output" || e == "xml"),
            "{}: target is neither a console listing nor XML: add a skip",
            case.name
        );
        assert!(
            case.tarball.exists(),
            "{}: missing {}",
            case.name,
            case.tarball.display()
        );
        let t = match readers::sysfs::read_path(&case.tarball) {
            Ok(t) => t,
            Err(e) => {
                tally.unread(&case.name, e);
                continue;
            }
        };
        let text = std::fs::read_to_string(&case.target).unwrap();
        let console = if case.target.extension().is_some_and(|e| e == "xml") {
            parse_xml(&text)
        } else {
            parse_console(&text)
        };
        // `HWLOC_CPUKINDS=midr=0` turns off the MIDR source our Arm kinds
        // come from: kinds are then not comparable.
        let mut options = case.options.clone();
        if case.env.iter().any(|e| e.contains("midr=0")) {
            options.push_str(" no-midr");
        }
        tally.compared(&case.name, &compare_console(&t, &console, &options));
    }
    tally.finish("hwloc listings", 30);
}

// ---------------------------------------------------------------------------
// lscpu --parse output
// ---------------------------------------------------------------------------

/// util-linux dumps we do not compare, and why.
const LSCPU_SKIPS: &[(&str, &str)] = &[(
    "arm-A510-A710-A715-X3",
    "lscpu renumbers arm64 sockets and cores by its own heuristics (one socket, cores by \
     core_id across packages); sysfs, which we report, gives packages 0-2, 3-6 and 7",
)];

/// One `--parse` CSV block: column names and rows (None = `-` or empty).
#[derive(Debug, Default)]
struct ParseBlock {
    columns: Vec<String>,
    rows: Vec<Vec<Option<u64>>>,
}

/// What an lscpu expected file says that we compare.
#[derive(Debug, Default)]
struct LscpuExpected {
    /// NUMA node id → CPU list, from the summary.
    numa: BTreeMap<u32, CpuMask>,
    /// "NUMA node(s):" count.
    numa_count: Option<usize>,
    /// Cache name (`L1d`) → instance count, when the summary gives one.
    instances: BTreeMap<String, usize>,
    blocks: Vec<ParseBlock>,
}

fn parse_lscpu(text: &str) -> LscpuExpected {
    let mut e = LscpuExpected::default();
    let mut block: Option<ParseBlock> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# CPU") {
            let cols = format!("CPU{rest}");
            block = Some(ParseBlock {
                columns: cols.split(',').map(str::to_string).collect(),
                rows: Vec::new(),
            });
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        if line.trim().is_empty() {
            if let Some(b) = block.take() {
                e.blocks.push(b);
            }
            continue;
        }
        if let Some(b) = block.as_mut() {
            b.rows.push(
                line.split(',')
                    .map(|f| f.trim().parse::<u64>().ok())
                    .collect(),
            );
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        if key == "NUMA node(s)" {
            e.numa_count = value.parse().ok();
        } else if let Some(id) = key
            .strip_prefix("NUMA node")
            .and_then(|r| r.strip_suffix(" CPU(s)"))
        {
            let mask = parse_lscpu_list(value);
            e.numa.insert(id.parse().unwrap(), mask);
        } else if let Some(name) = key.strip_suffix(" cache") {
            if let Some(open) = value.rfind('(') {
                let inner = &value[open + 1..];
                if let Some(n) = inner.split_whitespace().next().and_then(|n| n.parse().ok()) {
                    if inner.contains("instance") {
                        e.instances.insert(name.to_string(), n);
                    }
                }
            }
        }
    }
    if let Some(b) = block.take() {
        e.blocks.push(b);
    }
    e
}

/// lscpu's own CPU list syntax: the kernel's `a-b` ranges plus a `a-b:s` stride
/// form (`0-62:2` = every other CPU from 0 to 62) that the kernel never writes.
fn parse_lscpu_list(text: &str) -> CpuMask {
    let mut m = CpuMask::new();
    for item in text.split(',').filter(|s| !s.trim().is_empty()) {
        let (range, stride) = match item.split_once(':') {
            Some((r, s)) => (r, s.trim().parse::<usize>().expect("stride")),
            None => (item, 1),
        };
        let (a, b) = match range.split_once('-') {
            Some((a, b)) => (
                a.trim().parse::<usize>().unwrap(),
                b.trim().parse::<usize>().unwrap(),
            ),
            None => {
                let a = range.trim().parse::<usize>().unwrap();
                (a, a)
            }
        };
        for cpu in (a..=b).step_by(stride) {
            m.set(cpu);
        }
    }
    m
}

/// (level, kind) of an lscpu cache column: `L1d`, `L2`, `L2i`.
fn lscpu_cache(name: &str) -> Option<(u8, CacheKind)> {
    let rest = name.strip_prefix('L')?;
    let (digits, kind) = match rest.as_bytes().last()? {
        b'd' => (&rest[..rest.len() - 1], CacheKind::Data),
        b'i' => (&rest[..rest.len() - 1], CacheKind::Instruction),
        _ => (rest, CacheKind::Unified),
    };
    Some((digits.parse().ok()?, kind))
}

/// The CPUs sharing `cpu`'s `(level, kind)` cache, if we know one.
fn our_cache(t: &Topology, cpu: usize, key: (u8, CacheKind)) -> Option<CpuMask> {
    t.caches()
        .iter()
        .find(|c| (c.level, c.kind) == key && c.cpus.contains(cpu))
        .map(|c| c.cpus.to_cpumask())
}

fn compare_lscpu(t: &Topology, e: &LscpuExpected) -> Vec<String> {
    let mut diffs = Vec::new();
    let Some(logical) = e.blocks.first() else {
        return vec!["no --parse block in the expected output".into()];
    };
    let col = |b: &ParseBlock, name: &str| b.columns.iter().position(|c| c == name);
    let cpu_col = col(logical, "CPU").unwrap();
    // The CPUs lscpu describes (offline ones have `-` fields and are skipped per
    // column below).
    for (ci, name) in logical.columns.iter().enumerate() {
        if ci == cpu_col || name.is_empty() {
            continue;
        }
        // Partition check: two listed CPUs share a value in this column exactly
        // when they share our group/cache (lscpu numbers items by first use, so
        // only the partition is comparable in the logical block).
        let mut by_value: HashMap<u64, CpuMask> = HashMap::new();
        let mut listed = CpuMask::new();
        for row in &logical.rows {
            if let (Some(cpu), Some(v)) = (row[cpu_col], row.get(ci).copied().flatten()) {
                by_value.entry(v).or_default().set(cpu as usize);
                listed.set(cpu as usize);
            }
        }
        for row in &logical.rows {
            let (Some(cpu), Some(v)) = (row[cpu_col], row.get(ci).copied().flatten()) else {
                continue;
            };
            let cpu = cpu as usize;
            let expected = by_value[&v];
            let ours: Option<CpuMask> = match name.as_str() {
                "Core" => Some(t.mask_of(cpu, LevelKind::Core)),
                "Socket" => Some(t.mask_of(cpu, LevelKind::Package)),
                "Node" => {
                    // Node ids are the kernel's own: compare them directly.
                    let ours = t.node_of(cpu).map(|n| n.id as u64);
                    if ours != Some(v) {
                        diffs.push(format!("CPU {cpu} node: lscpu {v}, ours {ours:?}"));
                    }
                    None
                }
                other => lscpu_cache(other).map(|key| our_cache(t, cpu, key).unwrap_or_default()),
            };
            if let Some(ours) = ours {
                let ours = ours.and(&listed);
                if ours != expected {
                    diffs.push(format!(
                        "CPU {cpu} {name}: lscpu shares with {}, ours {}",
                        expected.to_list_string(),
                        ours.to_list_string()
                    ));
                }
            }
        }
    }
    // `--parse --physical`: Core and Socket are the kernel's own ids.
    if let Some(physical) = e.blocks.get(1) {
        let cpu_col = col(physical, "CPU").unwrap();
        for (name, kind) in [("Core", LevelKind::Core), ("Socket", LevelKind::Package)] {
            let Some(ci) = col(physical, name) else {
                continue;
            };
            for row in &physical.rows {
                let (Some(cpu), Some(v)) = (row[cpu_col], row.get(ci).copied().flatten()) else {
                    continue;
                };
                let group = t
                    .cpu(cpu as usize)
                    .and_then(|c| c.group(kind))
                    .map(|g| &t.level(kind).unwrap().groups[g as usize]);
                let Some(group) = group else {
                    diffs.push(format!("CPU {cpu}: no {name} group"));
                    continue;
                };
                match group.os_id {
                    Some(os) if os as u64 == v => {}
                    Some(os) => {
                        diffs.push(format!("CPU {cpu} physical {name}: lscpu {v}, ours {os}"))
                    }
                    None => {
                        // We keep no id for a group whose CPUs the kernel gives
                        // different ids (lscpu prints each CPU's own): check
                        // that lscpu's ids do differ within the group.
                        let values: BTreeSet<u64> = physical
                            .rows
                            .iter()
                            .filter(|r| r[cpu_col].is_some_and(|c| group.cpus.contains(c as usize)))
                            .filter_map(|r| r.get(ci).copied().flatten())
                            .collect();
                        if values.len() < 2 {
                            diffs.push(format!("CPU {cpu} physical {name}: lscpu {v}, ours none"));
                        }
                    }
                }
            }
        }
    }
    // Summary: NUMA nodes and their CPU lists.
    if let Some(n) = e.numa_count {
        if n != t.nodes().len() {
            diffs.push(format!("NUMA node(s): lscpu {n}, ours {}", t.nodes().len()));
        }
    }
    for (id, mask) in &e.numa {
        match t.node_index(*id) {
            Some(i) if t.nodes()[i].cpus == *mask => {}
            Some(i) => diffs.push(format!(
                "node {id}: lscpu {}, ours {}",
                mask.to_list_string(),
                t.nodes()[i].cpus.to_list_string()
            )),
            None => diffs.push(format!("node {id}: missing")),
        }
    }
    // Summary: cache instance counts.
    for (name, n) in &e.instances {
        let Some(key) = lscpu_cache(name) else {
            continue;
        };
        let ours = t
            .caches()
            .iter()
            .filter(|c| (c.level, c.kind) == key)
            .count();
        if ours != *n {
            diffs.push(format!("{name} instances: lscpu {n}, ours {ours}"));
        }
    }
    diffs
}

fn lscpu_cases() -> Vec<(String, PathBuf, PathBuf)> {
    let base = corpus().join("util-linux");
    let mut cases = Vec::new();
    let mut pairs = vec![(
        base.join("tests/ts/lscpu/dumps"),
        base.join("tests/expected/lscpu"),
    )];
    // history/: dumps and expected outputs were removed in different commits.
    let mut hist_dumps = Vec::new();
    let mut hist_expected = Vec::new();
    for h in std::fs::read_dir(base.join("history")).unwrap() {
        let h = h.unwrap().path();
        if h.join("tests/ts/lscpu/dumps").is_dir() {
            hist_dumps.push(h.join("tests/ts/lscpu/dumps"));
        }
        if h.join("tests/expected/lscpu").is_dir() {
            hist_expected.push(h.join("tests/expected/lscpu"));
        }
    }
    for d in &hist_dumps {
        for x in &hist_expected {
            pairs.push((d.clone(), x.clone()));
        }
    }
    for (dumps, expected) in pairs {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&dumps)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            let file = p.file_name().unwrap().to_string_lossy().into_owned();
            let Some(name) = file.strip_suffix(".tar.gz") else {
                continue;
            };
            let exp = expected.join(format!("lscpu-{name}"));
            if exp.exists() {
                cases.push((name.to_string(), p.clone(), exp));
            }
        }
    }
    cases
}

#[test]
fn lscpu_parse_outputs_match() {
    let what = format!("{LSCPU_CASES} util-linux dumps against lscpu --parse");
    if !readers::corpus::present(&corpus(), &what) {
        return;
    }
    let cases = lscpu_cases();
    assert_eq!(
        cases.len(),
        LSCPU_CASES,
        "util-linux dumps with expected output"
    );
    let mut tally = Tally::new(LSCPU_SKIPS);
    for (name, dump, expected) in cases {
        if tally.skips(&name) {
            continue;
        }
        let t = match readers::sysfs::read_path(&dump) {
            Ok(t) => t,
            Err(e) => {
                tally.unread(&name, e);
                continue;
            }
        };
        let e = parse_lscpu(&std::fs::read_to_string(&expected).unwrap());
        tally.compared(&name, &compare_lscpu(&t, &e));
    }
    tally.finish("lscpu outputs", 20);
}

// ---------------------------------------------------------------------------
// Every snapshot reads (or fails with a clear error we expect)
// ---------------------------------------------------------------------------

/// Snapshots that must be rejected, and a fragment of the expected message.
const EXPECTED_REJECTIONS: &[(&str, &str)] = &[
    ("fakeheterocpunuma.tar.bz2", "already in node"),
    (
        "40intel64-4n10c+pci-conflicts.tar.bz2",
        "package sibling masks of CPU 0",
    ),
];

#[test]
fn every_snapshot_reads() {
    if !readers::corpus::present(&corpus(), &format!("reading {SNAPSHOTS} sysfs snapshots")) {
        return;
    }
    let all = readers::corpus::sysfs_snapshots(&corpus(), |dir| {
        [
            "hwloc/tests/hwloc/linux",
            "hwloc/tests/hwloc/x86+linux",
            "util-linux/tests/ts/lscpu/dumps",
        ]
        .contains(&dir)
    });
    assert_eq!(all.len(), SNAPSHOTS, "sysfs snapshots in the corpus");
    let mut ok = 0;
    for p in &all {
        let file = p.file_name().unwrap().to_string_lossy().into_owned();
        match (
            readers::sysfs::read_path(p),
            EXPECTED_REJECTIONS.iter().find(|(n, _)| *n == file),
        ) {
            (Ok(t), None) => {
                assert!(!t.cpus().is_empty(), "{file}: no CPUs");
                ok += 1;
            }
            (Err(e), Some((_, fragment))) => {
                let text = e.to_string();
                assert!(text.contains(fragment), "{file}: {text}");
                assert!(
                    text.contains(&file),
                    "{file}: error does not name the archive: {text}"
                );
            }
            (Ok(_), Some(_)) => panic!("{file}: expected a rejection"),
            (Err(e), None) => panic!("{file}: {e}"),
        }
    }
    println!(
        "{ok} snapshots read, {} rejected as expected",
        EXPECTED_REJECTIONS.len()
    );
    assert!(ok >= 50);
}
