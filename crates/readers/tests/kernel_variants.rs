//! Real kernels' ways of writing one machine, generated: every variant is a
//! sysfs tree some Linux version or architecture writes, and the reader must
//! find the machine the generator built, not merely read without error.
//!
//! The truth is the generator's [`Machine`] (packages, dies, clusters, cores,
//! threads, NUMA nodes, memory, distances, which CPUs are offline), from which
//! the expected groups are computed here by index arithmetic. The [`Style`]
//! varies only how the kernel writes it:
//! - sibling files: hex masks only (`thread_siblings`, `core_siblings`,
//!   `shared_cpu_map`, node `cpumap`: kernels before the `_list` files), lists
//!   only, or both; the 5.6 names (`core_cpus`, `package_cpus`) or not;
//! - `die_id`/`die_cpus*` (5.2), `cluster_id`/`cluster_cpus*` (5.16), s390's
//!   `book_*`/`drawer_*`, present or absent;
//! - offline CPUs without `topology/` or `cache/` (Linux removes both when a
//!   CPU goes offline, and drops it from its siblings' masks), CPU 0 offline
//!   or without an `online` file;
//! - `physical_package_id` of -1 (arm64 and VM kernels that know no package),
//!   `core_id` per package, machine-wide, sparse or huge;
//! - `cpu/online`, `cpu/possible`, `cpu/present` present or absent (the
//!   reader falls back to per-CPU `online` files and the `cpuN` directories,
//!   as lscpu does); `possible` wider than the CPUs that exist, up to a
//!   `kernel_max`-sized 8192; CPU numbers with holes (trimmed dumps, CPUs
//!   never present);
//! - NUMA nodes per package, one, with a memory-only node, sparse ids, nodes
//!   whose cpumap keeps offline CPUs, `has_cpu`/`has_memory` files, and
//!   firmware that gave every node every CPU (hwloc's rule: the first node
//!   keeps them, the others are left out), a node offline whose CPUs are in
//!   no node's list (read without a node, as hwloc reads them);
//! - the tree read as a directory or as a `.tar.gz` dump.

use std::collections::{BTreeMap, BTreeSet};

use cpumask::CpuMask;
use proptest::prelude::*;
use topology::{CacheKind, LevelKind, Topology};

#[allow(dead_code)]
mod hostile_support;
use hostile_support::{gzip, tar_body, tar_end, tar_header};

const CPU: &str = "sys/devices/system/cpu";
const NODE: &str = "sys/devices/system/node";

/// How the kernel numbers CPUs.
#[derive(Debug, Clone, Copy)]
enum Numbering {
    /// A core's threads are consecutive (POWER, Arm, s390).
    CoreMajor,
    /// Every core's first thread, then every core's second (x86's ACPI order).
    ThreadMajor,
}

/// `core_id` as different kernels write it.
#[derive(Debug, Clone, Copy)]
enum CoreIds {
    /// 0.. within each package: repeated across packages (x86).
    PerPackage,
    /// Unique over the machine (arm64, POWER).
    MachineWide,
    /// Per package with gaps (x86 with fused-off cores: 0 1 2 8 9 10).
    Sparse,
    /// Near `i32::MAX` (firmware ids passed through).
    Huge,
    /// A different id for each thread of a core (VMware guests): the
    /// sibling masks alone say which threads share a core.
    PerThread,
    /// One id for every core (s390 kernels that number no cores).
    Same,
}

/// `physical_package_id` as different kernels write it.
#[derive(Debug, Clone, Copy)]
enum PackageIds {
    Dense,
    /// 0, 2, 4... or large firmware socket numbers.
    Sparse,
    /// -1 on every CPU: the masks alone say which CPUs share a package.
    Unknown,
}

/// NUMA layout.
#[derive(Debug, Clone, Copy)]
enum Nodes {
    /// No `node/` directory (a kernel without CONFIG_NUMA).
    None,
    One,
    PerPackage,
    /// One per package, then a node with memory and no CPUs.
    PerPackageAndMemoryOnly,
    /// One per package, but every node's cpumap lists every CPU.
    AllListAll,
    /// One per package, the first offline (a POWER LPAR booted with node 0
    /// offline): no directory, absent from `node/online` but in
    /// `node/possible`, its CPUs in no node's list and no distance column.
    FirstOffline,
}

/// The machine: what the tree means.
#[derive(Debug, Clone)]
struct Machine {
    packages: usize,
    dies: usize,
    clusters: usize,
    cores: usize,
    threads: usize,
    numbering: Numbering,
    core_ids: CoreIds,
    package_ids: PackageIds,
    nodes: Nodes,
    /// Added to every node id (sparse node numbers: node0 absent).
    node_base: u32,
    node_stride: u32,
    /// Which CPUs are offline (by CPU number, modulo the CPU count).
    offline: Vec<usize>,
    /// Hot-pluggable slots in `possible` beyond the CPUs that exist.
    extra_possible: usize,
    /// CPU numbers left unused after every `cores * threads` CPUs: a dump
    /// trimmed to some CPUs, or CPUs never present (POWER LPARs, s390).
    gap: usize,
}

/// How the kernel writes it.
#[derive(Debug, Clone, Copy)]
struct Style {
    lists: bool,
    maps: bool,
    new_names: bool,
    die_files: bool,
    cluster_files: bool,
    s390_books: bool,
    online_file: bool,
    possible_file: bool,
    present_file: bool,
    cpu0_online_file: bool,
    /// Node cpumaps keep offline CPUs (powerpc) instead of dropping them (x86).
    node_keeps_offline: bool,
    has_files: bool,
    /// Node directories hold only `cpuN` links (kernels before `cpumap`).
    node_links_only: bool,
    /// Read from a `.tar.gz` whose members start with this (`None`: the tree
    /// is written to a directory and read there).
    archive: Option<&'static str>,
}

/// One CPU's place: (package, die, cluster, core, thread) indexes.
type Place = [usize; 5];

impl Machine {
    fn n(&self) -> usize {
        self.packages * self.dies * self.clusters * self.cores * self.threads
    }

    fn cores_total(&self) -> usize {
        self.packages * self.dies * self.clusters * self.cores
    }

    /// The CPU number of the `i`th CPU.
    fn number(&self, i: usize) -> usize {
        i + i / (self.cores * self.threads) * self.gap
    }

    /// Every CPU's number, in order.
    fn numbers(&self) -> Vec<usize> {
        (0..self.n()).map(|i| self.number(i)).collect()
    }

    /// One past the last CPU number `possible` lists (`nr_cpu_ids`).
    fn nr_cpu_ids(&self) -> usize {
        self.number(self.n() - 1) + 1 + self.extra_possible
    }

    /// Every CPU's place, by CPU number.
    fn places(&self) -> BTreeMap<usize, Place> {
        let mut out = BTreeMap::new();
        let per_core = self.threads;
        for core in 0..self.cores_total() {
            let k = core % self.cores;
            let c = core / self.cores % self.clusters;
            let d = core / (self.cores * self.clusters) % self.dies;
            let p = core / (self.cores * self.clusters * self.dies);
            for t in 0..per_core {
                let cpu = match self.numbering {
                    Numbering::CoreMajor => core * per_core + t,
                    Numbering::ThreadMajor => t * self.cores_total() + core,
                };
                out.insert(self.number(cpu), [p, d, c, k, t]);
            }
        }
        out
    }

    fn online(&self) -> BTreeSet<usize> {
        let numbers = self.numbers();
        let off: BTreeSet<usize> = self.offline.iter().map(|c| numbers[c % self.n()]).collect();
        let on: BTreeSet<usize> = numbers
            .iter()
            .copied()
            .filter(|c| !off.contains(c))
            .collect();
        // A kernel always has one CPU online.
        if on.is_empty() {
            return BTreeSet::from([numbers[self.n() - 1]]);
        }
        on
    }

    fn package_id(&self, p: usize) -> i64 {
        match self.package_ids {
            PackageIds::Dense => p as i64,
            PackageIds::Sparse => 1000 + 2 * p as i64,
            PackageIds::Unknown => -1,
        }
    }

    fn core_id(&self, pl: &Place) -> i64 {
        let in_pkg = (pl[1] * self.clusters + pl[2]) * self.cores + pl[3];
        match self.core_ids {
            CoreIds::PerPackage => in_pkg as i64,
            CoreIds::MachineWide => {
                (pl[0] * self.dies * self.clusters * self.cores + in_pkg) as i64
            }
            CoreIds::Sparse => (in_pkg / 3 * 8 + in_pkg % 3) as i64,
            CoreIds::Huge => i32::MAX as i64 - 64 + in_pkg as i64,
            CoreIds::PerThread => (pl[0] * 1000 + in_pkg * self.threads + pl[4]) as i64,
            CoreIds::Same => 0,
        }
    }

    /// The node ids, and which package each node holds (`None`: memory only).
    fn node_list(&self) -> Vec<(u32, Option<usize>)> {
        let id = |i: usize| self.node_base + self.node_stride * i as u32;
        match self.nodes {
            Nodes::None => vec![],
            Nodes::One => vec![(id(0), Some(usize::MAX))],
            Nodes::PerPackage | Nodes::AllListAll | Nodes::FirstOffline => {
                (0..self.packages).map(|p| (id(p), Some(p))).collect()
            }
            Nodes::PerPackageAndMemoryOnly => {
                let mut v: Vec<_> = (0..self.packages).map(|p| (id(p), Some(p))).collect();
                v.push((id(self.packages), None));
                v
            }
        }
    }

    /// How many of [`Self::node_list`]'s first nodes are offline.
    fn offline_nodes(&self) -> usize {
        usize::from(matches!(self.nodes, Nodes::FirstOffline))
    }

    fn node_memory(&self, i: usize) -> u64 {
        (1 + i as u64) << 30
    }

    fn distance(i: usize, j: usize) -> u32 {
        if i == j {
            10
        } else {
            20 + (i.abs_diff(j) as u32)
        }
    }
}

/// The CPUs of `all` whose places agree on the first `depth` indexes with
/// `pl`'s, restricted to `among`.
fn group(
    places: &BTreeMap<usize, Place>,
    pl: &Place,
    depth: usize,
    among: &BTreeSet<usize>,
) -> Vec<usize> {
    among
        .iter()
        .copied()
        .filter(|c| places[c][..depth] == pl[..depth])
        .collect()
}

/// The kernel's cpulist text.
fn list(cpus: &[usize]) -> String {
    let mut out = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let start = cpus[i];
        while i + 1 < cpus.len() && cpus[i + 1] == cpus[i] + 1 {
            i += 1;
        }
        out.push(match cpus[i] == start {
            true => start.to_string(),
            false => format!("{start}-{}", cpus[i]),
        });
        i += 1;
    }
    out.join(",") + "\n"
}

/// The kernel's hex mask text: 32-bit groups of eight digits, most
/// significant first, comma-separated, as many as `nr_cpu_ids` needs.
fn map(cpus: &[usize], nr_cpu_ids: usize) -> String {
    let groups = nr_cpu_ids.div_ceil(32).max(1);
    let mut words = vec![0u32; groups];
    for &c in cpus {
        words[c / 32] |= 1 << (c % 32);
    }
    let text: Vec<String> = words.iter().rev().map(|w| format!("{w:08x}")).collect();
    text.join(",") + "\n"
}

/// The sysfs (and procfs) tree the kernel writes for `m` in `style`.
fn tree(m: &Machine, s: &Style) -> BTreeMap<String, Vec<u8>> {
    let mut t: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    let mut put = |path: String, text: String| {
        t.insert(path, text.into_bytes());
    };
    let nr = m.nr_cpu_ids();
    let places = m.places();
    let online = m.online();
    let all = m.numbers();
    let on: Vec<usize> = online.iter().copied().collect();
    let off: Vec<usize> = all
        .iter()
        .copied()
        .filter(|c| !online.contains(c))
        .collect();
    if s.possible_file {
        put(
            format!("{CPU}/possible"),
            list(&(0..nr).collect::<Vec<_>>()),
        );
    }
    if s.present_file {
        put(format!("{CPU}/present"), list(&all));
    }
    if s.online_file {
        put(format!("{CPU}/online"), list(&on));
    }
    put(format!("{CPU}/offline"), list(&off));
    put(format!("{CPU}/kernel_max"), "8191\n".into());
    // Mask files: (list name, map name) pairs, each written as the style says.
    let masks =
        |put: &mut dyn FnMut(String, String), dir: &str, names: (&str, &str), cpus: &[usize]| {
            if s.lists {
                put(format!("{dir}/{}", names.0), list(cpus));
            }
            if s.maps {
                put(format!("{dir}/{}", names.1), map(cpus, nr));
            }
        };
    for &cpu in &all {
        let dir = format!("{CPU}/cpu{cpu}");
        let is_on = online.contains(&cpu);
        if cpu != 0 || s.cpu0_online_file || !is_on {
            put(format!("{dir}/online"), format!("{}\n", is_on as u8));
        }
        if !is_on {
            // Linux removes an offline CPU's topology and cache directories.
            put(format!("{dir}/uevent"), String::new());
            continue;
        }
        let pl = &places[&cpu];
        let topo = format!("{dir}/topology");
        let (p, d, c) = (pl[0], pl[1], pl[2]);
        put(
            format!("{topo}/physical_package_id"),
            format!("{}\n", m.package_id(p)),
        );
        put(format!("{topo}/core_id"), format!("{}\n", m.core_id(pl)));
        let core = group(&places, pl, 4, &online);
        let package = group(&places, pl, 1, &online);
        masks(
            &mut put,
            &topo,
            ("thread_siblings_list", "thread_siblings"),
            &core,
        );
        masks(
            &mut put,
            &topo,
            ("core_siblings_list", "core_siblings"),
            &package,
        );
        if s.new_names {
            masks(&mut put, &topo, ("core_cpus_list", "core_cpus"), &core);
            masks(
                &mut put,
                &topo,
                ("package_cpus_list", "package_cpus"),
                &package,
            );
        }
        if s.die_files {
            put(format!("{topo}/die_id"), format!("{d}\n"));
            let die = group(&places, pl, 2, &online);
            masks(&mut put, &topo, ("die_cpus_list", "die_cpus"), &die);
        }
        if s.cluster_files {
            let cluster_id = (p * m.dies + d) * m.clusters + c;
            put(format!("{topo}/cluster_id"), format!("{cluster_id}\n"));
            let cluster = group(&places, pl, 3, &online);
            masks(
                &mut put,
                &topo,
                ("cluster_cpus_list", "cluster_cpus"),
                &cluster,
            );
        }
        if s.s390_books {
            // Books and drawers hold packages; the reader has no such level
            // and must read the machine the same with them.
            put(format!("{topo}/book_id"), format!("{}\n", p / 2));
            put(format!("{topo}/drawer_id"), "0\n".into());
            let book: Vec<usize> = on
                .iter()
                .copied()
                .filter(|o| places[o][0] / 2 == p / 2)
                .collect();
            masks(
                &mut put,
                &topo,
                ("book_siblings_list", "book_siblings"),
                &book,
            );
            masks(
                &mut put,
                &topo,
                ("drawer_siblings_list", "drawer_siblings"),
                &on,
            );
        }
        // An L1d per core and an L3 per package, shared among online CPUs.
        let caches = [
            (1, "Data", "32K", &core),
            (3, "Unified", "16384K", &package),
        ];
        for (i, (level, ty, size, cpus)) in caches.iter().enumerate() {
            let idx = format!("{dir}/cache/index{i}");
            put(format!("{idx}/level"), format!("{level}\n"));
            put(format!("{idx}/type"), format!("{ty}\n"));
            put(format!("{idx}/size"), format!("{size}\n"));
            masks(&mut put, &idx, ("shared_cpu_list", "shared_cpu_map"), cpus);
        }
    }
    write_nodes(m, s, &places, &online, &mut put);
    let mut cpuinfo = String::new();
    for cpu in &on {
        cpuinfo += &format!("processor\t: {cpu}\nmodel name\t: Generated CPU\n\n");
    }
    put("proc/cpuinfo".into(), cpuinfo);
    t
}

fn write_nodes(
    m: &Machine,
    s: &Style,
    places: &BTreeMap<usize, Place>,
    online: &BTreeSet<usize>,
    put: &mut dyn FnMut(String, String),
) {
    let nodes = m.node_list();
    if nodes.is_empty() {
        return;
    }
    let nr = m.nr_cpu_ids();
    let off = m.offline_nodes();
    let possible: Vec<usize> = nodes.iter().map(|&(id, _)| id as usize).collect();
    put(format!("{NODE}/possible"), list(&possible));
    let nodes = &nodes[off..];
    let ids: Vec<usize> = nodes.iter().map(|&(id, _)| id as usize).collect();
    put(format!("{NODE}/online"), list(&ids));
    if s.has_files {
        let with_cpus: Vec<usize> = nodes
            .iter()
            .filter(|n| n.1.is_some())
            .map(|n| n.0 as usize)
            .collect();
        put(format!("{NODE}/has_cpu"), list(&with_cpus));
        put(format!("{NODE}/has_memory"), list(&ids));
        put(format!("{NODE}/has_normal_memory"), list(&ids));
    }
    for (i, &(id, holds)) in nodes.iter().enumerate() {
        let i = i + off;
        let dir = format!("{NODE}/node{id}");
        let among: Vec<usize> = m
            .numbers()
            .into_iter()
            .filter(|c| s.node_keeps_offline || online.contains(c))
            .collect();
        let cpus: Vec<usize> = match (m.nodes, holds) {
            (Nodes::AllListAll, _) => among,
            (_, None) => vec![],
            (_, Some(usize::MAX)) => among,
            (_, Some(p)) => among.into_iter().filter(|c| places[c][0] == p).collect(),
        };
        if s.node_links_only {
            // Links to ../../cpu/cpuN in sysfs; only their names are read.
            for c in &cpus {
                put(format!("{dir}/cpu{c}"), String::new());
            }
        } else {
            if s.lists {
                put(format!("{dir}/cpulist"), list(&cpus));
            }
            if s.maps {
                put(format!("{dir}/cpumap"), map(&cpus, nr));
            }
        }
        put(
            format!("{dir}/meminfo"),
            format!(
                "Node {id} MemTotal:       {} kB\nNode {id} MemFree:        1024 kB\n",
                m.node_memory(i) >> 10
            ),
        );
        let row: Vec<String> = (off..off + nodes.len())
            .map(|j| Machine::distance(i, j).to_string())
            .collect();
        put(format!("{dir}/distance"), row.join(" ") + "\n");
    }
}

/// A topology's groups at `kind`, restricted to `online`, as sorted CPU lists.
fn partition(t: &Topology, kind: LevelKind, online: &CpuMask) -> Option<BTreeSet<Vec<usize>>> {
    let level = t.level(kind)?;
    Some(
        level
            .groups
            .iter()
            .map(|g| g.cpus.and(online).iter().collect::<Vec<_>>())
            .filter(|g| !g.is_empty())
            .collect(),
    )
}

/// The generator's groups at `depth` place indexes, over the online CPUs.
fn expected_partition(
    places: &BTreeMap<usize, Place>,
    online: &BTreeSet<usize>,
    depth: usize,
) -> BTreeSet<Vec<usize>> {
    online
        .iter()
        .map(|c| group(places, &places[c], depth, online))
        .collect()
}

/// Whether the reading of `m` written in `s` is the machine `m`.
fn check(t: &Topology, m: &Machine, s: &Style) -> Result<(), String> {
    let places = m.places();
    let online = m.online();
    let on_mask: CpuMask = online.iter().copied().collect();
    let same = |what: &str, got: String, want: String| match got == want {
        true => Ok(()),
        false => Err(format!("{what}: read {got}, generated {want}")),
    };
    same(
        "online",
        t.online().to_list_string(),
        on_mask.to_list_string(),
    )?;
    // Without `possible`, the CPUs that exist (`present`, else the `cpuN`
    // directories) are all the reader can know of.
    let possible = match s.possible_file {
        true => CpuMask::first_n(m.nr_cpu_ids()),
        false => m.numbers().into_iter().collect(),
    };
    same(
        "possible",
        t.possible().to_list_string(),
        possible.to_list_string(),
    )?;

    // Levels: package (1 index), die (2), cluster (3), core (4). A middle
    // level whose groups are the package's or the core's carries nothing and
    // may be left out; any other must be read exactly.
    let want = |depth| expected_partition(&places, &online, depth);
    let got = |kind| partition(t, kind, &on_mask);
    for (kind, depth) in [(LevelKind::Package, 1), (LevelKind::Core, 4)] {
        if got(kind) != Some(want(depth)) {
            return Err(format!(
                "{kind:?}: read {:?}, generated {:?}",
                got(kind),
                want(depth)
            ));
        }
    }
    for (kind, depth, written) in [
        (LevelKind::Die, 2, s.die_files),
        (LevelKind::Cluster, 3, s.cluster_files),
    ] {
        let w = want(depth);
        let optional = w == want(1) || w == want(4) || !written;
        match got(kind) {
            None if optional => {}
            Some(g) if g == w && written => {}
            other => {
                return Err(format!(
                    "{kind:?}: read {other:?}, generated {w:?} (written: {written})"
                ))
            }
        }
    }
    check_os_ids(t, m, &places, &on_mask)?;
    check_nodes(t, m, &places, &online)?;
    check_caches(t, &places, &online)
}

/// The kernel's id of a CPU's group at some level.
type IdOf<'a> = &'a dyn Fn(&Place) -> i64;

/// Package and core groups keep the kernel's id when all their CPUs report
/// the same one (none for -1, or for threads of one core with different ids).
fn check_os_ids(
    t: &Topology,
    m: &Machine,
    places: &BTreeMap<usize, Place>,
    online: &CpuMask,
) -> Result<(), String> {
    let package = |pl: &Place| m.package_id(pl[0]);
    let core = |pl: &Place| m.core_id(pl);
    let levels: [(LevelKind, IdOf); 2] = [(LevelKind::Package, &package), (LevelKind::Core, &core)];
    for (kind, id_of) in levels {
        for g in &t.level(kind).expect("checked above").groups {
            let ids: BTreeSet<i64> = g
                .cpus
                .and(online)
                .iter()
                .map(|c| id_of(&places[&c]))
                .collect();
            let want = match ids.len() {
                1 => ids.first().and_then(|&id| u32::try_from(id).ok()),
                _ => None,
            };
            if !ids.is_empty() && g.os_id != want {
                return Err(format!(
                    "{kind:?} {}: id {:?}, generated {want:?}",
                    g.cpus.to_list_string(),
                    g.os_id
                ));
            }
        }
    }
    Ok(())
}

/// Node ids, CPUs (on the online CPUs), memory and distances. With every
/// node listing every CPU, the lowest-numbered node keeps them and the
/// others are left out (hwloc's rule).
fn check_nodes(
    t: &Topology,
    m: &Machine,
    places: &BTreeMap<usize, Place>,
    online: &BTreeSet<usize>,
) -> Result<(), String> {
    let mut nodes = m.node_list();
    if matches!(m.nodes, Nodes::AllListAll) {
        nodes.truncate(1);
        nodes[0].1 = Some(usize::MAX);
    }
    // An offline node's CPUs read without a node.
    let off = m.offline_nodes();
    let orphans: Vec<usize> = nodes[..off]
        .iter()
        .flat_map(|&(_, holds)| {
            online
                .iter()
                .filter(move |&&c| holds == Some(places[&c][0]))
        })
        .copied()
        .filter(|&c| t.node_of(c).is_some())
        .collect();
    if !orphans.is_empty() {
        return Err(format!(
            "CPUs {orphans:?} of an offline node read with a node"
        ));
    }
    let nodes = &nodes[off..];
    let got: Vec<(u32, Vec<usize>, Option<u64>)> = t
        .nodes()
        .iter()
        .map(|n| {
            (
                n.id,
                n.cpus.iter().filter(|c| online.contains(c)).collect(),
                n.memory_bytes,
            )
        })
        .collect();
    let want: Vec<(u32, Vec<usize>, Option<u64>)> = nodes
        .iter()
        .enumerate()
        .map(|(i, &(id, holds))| {
            let i = i + off;
            let cpus = online
                .iter()
                .copied()
                .filter(|&c| match holds {
                    None => false,
                    Some(usize::MAX) => true,
                    Some(p) => places[&c][0] == p,
                })
                .collect();
            (id, cpus, Some(m.node_memory(i)))
        })
        .collect();
    if got != want {
        return Err(format!("nodes: read {got:?}, generated {want:?}"));
    }
    if !want.is_empty() {
        let k = want.len();
        let got: Vec<u32> = (0..k * k).map(|x| t.distance(x / k, x % k)).collect();
        let want: Vec<u32> = (0..k * k)
            .map(|x| Machine::distance(off + x / k, off + x % k))
            .collect();
        if got != want {
            return Err(format!("distances: read {got:?}, generated {want:?}"));
        }
    }
    Ok(())
}

/// An L1d per core and an L3 per package, over the online CPUs.
fn check_caches(
    t: &Topology,
    places: &BTreeMap<usize, Place>,
    online: &BTreeSet<usize>,
) -> Result<(), String> {
    for (level, kind, depth, size) in [
        (1, CacheKind::Data, 4, 32 << 10),
        (3, CacheKind::Unified, 1, 16 << 20),
    ] {
        let got: BTreeSet<(Vec<usize>, Option<u64>)> = t
            .caches()
            .iter()
            .filter(|c| c.level == level && c.kind == kind)
            .map(|c| {
                (
                    c.cpus
                        .iter()
                        .filter(|x| online.contains(x))
                        .collect::<Vec<_>>(),
                    c.size_bytes,
                )
            })
            .filter(|(cpus, _)| !cpus.is_empty())
            .collect();
        let want: BTreeSet<(Vec<usize>, Option<u64>)> = expected_partition(places, online, depth)
            .into_iter()
            .map(|g| (g, Some(size)))
            .collect();
        if got != want {
            return Err(format!(
                "L{level} {kind:?}: read {got:?}, generated {want:?}"
            ));
        }
    }
    Ok(())
}

/// Reads `m` written in `s`, from a directory or a `.tar.gz` dump.
fn read(m: &Machine, s: &Style) -> Result<Topology, readers::Error> {
    let files = tree(m, s);
    if let Some(top) = s.archive {
        let mut body = Vec::new();
        for (path, data) in &files {
            body.extend(tar_header(&format!("{top}{path}"), data.len() as u64, b'0'));
            body.extend(data);
            body.resize(body.len().div_ceil(512) * 512, 0);
        }
        return readers::sysfs::read_archive_bytes(&gzip(&tar_end(body)), "dump.tar.gz");
    }
    readers::sysfs::read_dir(write_dir(&files).path())
}

fn machines() -> impl Strategy<Value = Machine> {
    (
        (1..=3usize, 1..=2usize, 1..=2usize, 1..=3usize, 1..=2usize),
        (
            prop_oneof![Just(Numbering::CoreMajor), Just(Numbering::ThreadMajor)],
            prop_oneof![
                Just(CoreIds::PerPackage),
                Just(CoreIds::MachineWide),
                Just(CoreIds::Sparse),
                Just(CoreIds::Huge),
                Just(CoreIds::PerThread),
                Just(CoreIds::Same)
            ],
            prop_oneof![
                Just(PackageIds::Dense),
                Just(PackageIds::Sparse),
                Just(PackageIds::Unknown)
            ],
        ),
        (
            prop_oneof![
                Just(Nodes::None),
                Just(Nodes::One),
                Just(Nodes::PerPackage),
                Just(Nodes::PerPackageAndMemoryOnly),
                Just(Nodes::AllListAll),
                Just(Nodes::FirstOffline)
            ],
            0..=2u32,
            1..=3u32,
        ),
        proptest::collection::vec(0..64usize, 0..4),
        prop_oneof![Just(0usize), Just(5), Just(40), Just(8000)],
        prop_oneof![Just(0usize), Just(0), Just(1), Just(4), Just(100)],
    )
        .prop_map(
            |(
                (packages, dies, clusters, cores, threads),
                (numbering, core_ids, package_ids),
                (nodes, node_base, node_stride),
                offline,
                extra_possible,
                gap,
            )| Machine {
                packages,
                dies,
                clusters,
                cores,
                threads,
                numbering,
                core_ids,
                package_ids,
                nodes,
                node_base,
                node_stride,
                offline,
                extra_possible,
                gap,
            },
        )
}

fn styles() -> impl Strategy<Value = Style> {
    (
        prop_oneof![Just((true, false)), Just((false, true)), Just((true, true))],
        any::<[bool; 12]>(),
        // Four reads in five go through a `.tar.gz` dump (writing a tree of
        // files costs far more than reading it), with the top directories
        // real dumps have: one named directory, `./`, none, or both.
        prop_oneof![
            Just(None),
            Just(Some("dump/")),
            Just(Some("./")),
            Just(Some("")),
            Just(Some("./x86_64-64cpu/"))
        ],
    )
        .prop_map(|((lists, maps), b, via)| Style {
            lists,
            maps,
            new_names: b[0],
            die_files: b[1],
            cluster_files: b[2],
            s390_books: b[3],
            online_file: b[4],
            possible_file: b[5],
            present_file: b[6],
            cpu0_online_file: b[7],
            node_keeps_offline: b[8],
            has_files: b[9],
            node_links_only: b[10] && b[11],
            archive: via,
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

    /// Every generated variant reads as the machine it was generated from.
    #[test]
    fn every_kernel_variant_reads_as_the_machine(m in machines(), s in styles()) {
        let t = read(&m, &s).map_err(|e| TestCaseError::fail(format!("{e}")))?;
        check(&t, &m, &s).map_err(TestCaseError::fail)?;
    }
}

/// A small machine every fixed case below starts from: 2 packages of 2
/// cores of 2 threads, a node per package, written by a 6.x kernel.
fn plain() -> (Machine, Style) {
    let m = Machine {
        packages: 2,
        dies: 1,
        clusters: 1,
        cores: 2,
        threads: 2,
        numbering: Numbering::ThreadMajor,
        core_ids: CoreIds::PerPackage,
        package_ids: PackageIds::Dense,
        nodes: Nodes::PerPackage,
        node_base: 0,
        node_stride: 1,
        offline: vec![],
        extra_possible: 0,
        gap: 0,
    };
    let s = Style {
        lists: true,
        maps: true,
        new_names: true,
        die_files: true,
        cluster_files: true,
        s390_books: false,
        online_file: true,
        possible_file: true,
        present_file: true,
        cpu0_online_file: false,
        node_keeps_offline: false,
        has_files: true,
        node_links_only: false,
        archive: None,
    };
    (m, s)
}

/// Writes `files` under a new directory.
fn write_dir(files: &BTreeMap<String, Vec<u8>>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, data) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, data).unwrap();
    }
    dir
}

/// hwloc's `8em64t-2s2ca2c-buggynuma`: all 8 nodes list all 8 CPUs. hwloc's
/// expected listing shows one node, P#0, with node 0's memory: the reader
/// must give the same (the corpus test compares its CPUs; here its memory).
#[test]
fn every_node_listing_every_cpu_reads_as_hwloc_reads_it() {
    let corpus = readers::corpus::dir(env!("CARGO_MANIFEST_DIR"));
    if !readers::corpus::present(&corpus, "hwloc's buggynuma snapshot") {
        return;
    }
    let base = corpus.join("hwloc/tests/hwloc/linux/8em64t-2s2ca2c-buggynuma");
    let t = readers::sysfs::read_path(&base.with_extension("tar.bz2")).unwrap();
    let console = std::fs::read_to_string(base.with_extension("console")).unwrap();
    let line = console.lines().find(|l| l.contains("NUMANode")).unwrap();
    let mib: u64 = line
        .split("local=")
        .nth(1)
        .and_then(|r| r.split("MiB").next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no local= in {line:?}"));
    assert_eq!(console.matches("NUMANode L#").count(), 1);
    assert_eq!(t.nodes().len(), 1);
    let n = &t.nodes()[0];
    assert!(line.contains(&format!("P#{} ", n.id)), "{line}");
    assert_eq!(n.cpus.to_list_string(), "0-7");
    // lstopo prints memory rounded to the nearest MiB.
    let ours = n.memory_bytes.unwrap();
    assert_eq!((ours + (1 << 19)) >> 20, mib, "{ours} bytes vs {line}");
}

/// `node01` or `cpu01` is no name a kernel writes: one error naming the
/// entry, never a silent `node1` (or a CPU left in no node).
#[test]
fn leading_zero_entries_are_refused_by_name() {
    let (m, s) = plain();
    for (from, to) in [
        (format!("{NODE}/node1/"), format!("{NODE}/node01/")),
        (format!("{CPU}/cpu3/"), format!("{CPU}/cpu03/")),
    ] {
        let files: BTreeMap<String, Vec<u8>> = tree(&m, &s)
            .into_iter()
            .map(|(p, d)| (p.replacen(&from, &to, 1), d))
            .collect();
        let dir = write_dir(&files);
        let e = readers::sysfs::read_dir(dir.path()).unwrap_err();
        let name = to.trim_end_matches('/').rsplit('/').next().unwrap();
        assert!(e.source.ends_with(&to.trim_end_matches('/')), "{e}");
        assert!(
            e.message.contains("leading zero") && e.message.contains(name),
            "{e}"
        );
    }
}

/// A file the reader needs that cannot be read is one error naming it (the
/// hex maps are the ones read when both forms exist). As
/// root (which this suite often runs as) permission bits do not stop a read,
/// so the unreadable file is made a directory, which no user can read as a
/// file; a mode-000 file is tried as well when the permissions bind.
#[test]
fn unreadable_files_are_named() {
    let (m, s) = plain();
    let needed = [
        format!("{CPU}/online"),
        format!("{CPU}/cpu2/topology/core_id"),
        format!("{CPU}/cpu2/topology/core_cpus"),
        format!("{CPU}/cpu1/cache/index0/size"),
        format!("{NODE}/node1/cpumap"),
        format!("{NODE}/node1/distance"),
        format!("{NODE}/node0/meminfo"),
        "proc/cpuinfo".to_string(),
    ];
    let mut wrong = Vec::new();
    for file in &needed {
        let mut files = tree(&m, &s);
        assert!(files.remove(file).is_some(), "{file} is not generated");
        files.insert(format!("{file}/inside"), b"1\n".to_vec());
        let dir = write_dir(&files);
        let want = dir.path().join(file).display().to_string();
        match readers::sysfs::read_dir(dir.path()) {
            Err(e) if e.source == want => {}
            Err(e) => wrong.push(format!("{file}: error names another file: {e}")),
            Ok(_) => wrong.push(format!("{file}: a directory read as if absent")),
        }
        let dump = gzip(&tar_end(tar_body("dump", &files)));
        match readers::sysfs::read_archive_bytes(&dump, "dump.tar.gz") {
            Err(e) if e.source == format!("dump.tar.gz:dump/{file}") => {}
            Err(e) => wrong.push(format!("{file} in a dump: error names another file: {e}")),
            Ok(_) => wrong.push(format!("{file} in a dump: a directory read as if absent")),
        }

        let files = tree(&m, &s);
        let dir = write_dir(&files);
        let path = dir.path().join(file);
        let mut perms = std::fs::metadata(&path).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o000);
        std::fs::set_permissions(&path, perms).unwrap();
        if std::fs::read(&path).is_ok() {
            continue; // privileged: mode 000 does not stop this process
        }
        match readers::sysfs::read_dir(dir.path()) {
            Err(e) if e.source == path.display().to_string() => {}
            other => wrong.push(format!("{file} (mode 000): {:?}", other.err())),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Overlapping nodes that cannot be read as one node per CPU: the error
/// blames the node left out only for the CPUs it listed. Node 1 repeating
/// CPU 0 is left out and takes its own CPUs with it; a CPU that no node
/// lists is the generic error, even next to a node left out.
#[test]
fn overlapping_nodes_that_orphan_cpus_are_named() {
    let (m, s) = plain();
    let node1 = format!("{NODE}/node1/cpumap");
    let mut files = tree(&m, &s);
    // Node 0 holds 0-1,4-5 (package 0); node 1 lists 2-3,6-7 and CPU 0.
    files.insert(node1.clone(), b"000000cd\n".to_vec());
    let dir = write_dir(&files);
    let e = readers::sysfs::read_dir(dir.path()).unwrap_err();
    assert_eq!(
        e.source,
        dir.path().join(&node1).display().to_string(),
        "{e}"
    );
    for words in [
        "CPU 0 is already in node 0",
        "node 1 is left out",
        "online CPU 2 in no node",
    ] {
        assert!(e.message.contains(words), "{words:?}: {e}");
    }

    // Node 1 lists 0 and 2-3 only: it is left out, but CPUs 6-7 were in no
    // node's file at all, and the lowest such CPU (2) came from node 1.
    files.insert(node1.clone(), b"0000000d\n".to_vec());
    let dir = write_dir(&files);
    let e = readers::sysfs::read_dir(dir.path()).unwrap_err();
    assert!(e.message.contains("online CPU 2 in no node"), "{e}");

    // Node 1 lists CPU 0 alone: left out, and CPUs 2-3,6-7 are in no file.
    files.insert(node1.clone(), b"00000001\n".to_vec());
    let dir = write_dir(&files);
    let e = readers::sysfs::read_dir(dir.path()).unwrap_err();
    assert_eq!(e.source, dir.path().join(NODE).display().to_string(), "{e}");
    assert!(e.message.contains("online CPU 2 is in no node's"), "{e}");
}
