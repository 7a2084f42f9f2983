//! The topology summary (through the shared `topology` crate) and scheduler
//! domains (through the shared `domains` crate).

use crate::firmware::CpuInfo;
use crate::kprintln;
use alloc::vec::Vec;
use bootproto::report::{CacheLine, CpuFacts, DistanceRow, TopologyLine};
use cpumask::CpuMask;
use topology::{Arch, Cache, CpuSpec, HwIdKind, LevelKind, Topology, TopologyBuilder};
use x86desc::shifts::ApicShifts;

/// One NUMA node as the kernel saw it: id, bytes of memory.
pub struct NodeFacts {
    /// Node number.
    pub id: u32,
    /// Memory in bytes (0 for CPU-only nodes).
    pub bytes: u64,
}

/// Builds the shared topology model from APIC ids split by the CPUID shifts,
/// SRAT node membership, SLIT distances and the cache instances CPUID gave
/// (`crate::cacheinfo`). Every CPU the firmware lists is possible;
/// MADT-enabled ones present; those that came up online.
pub fn build(
    cpus: &[CpuInfo],
    online: &CpuMask,
    shifts: ApicShifts,
    nodes: &[NodeFacts],
    distances: &(usize, Vec<u8>),
    caches: Vec<Cache>,
) -> Result<Topology, topology::BuildError> {
    let mut b = TopologyBuilder::new(Arch::X86_64);
    b.source("acpi+cpuid").hw_id_kind(HwIdKind::ApicId);
    add_cpus(&mut b, cpus, online, shifts);
    add_nodes(&mut b, cpus, nodes, distances);
    // Moved, not cloned: a cache is 2 KiB (its CPU mask), and 4096 CPUs with
    // private L1d, L1i and L2 have some 12 000 of them. `add_caches` takes the
    // vector as it is and `finish` moves it into the topology.
    b.add_caches(caches);
    b.finish()
}

/// Every CPU the firmware lists, its package, die and core fields cut from
/// its APIC id by the CPUID shifts.
fn add_cpus(b: &mut TopologyBuilder, cpus: &[CpuInfo], online: &CpuMask, shifts: ApicShifts) {
    let mut present = CpuMask::new();
    let mut possible = CpuMask::new();
    for c in cpus {
        let ids = shifts.ids(c.apic_id);
        b.add_cpu(CpuSpec {
            id: c.cpu,
            hw_id: Some(u64::from(c.apic_id)),
            online: online.contains(c.cpu as usize),
            package: ids.package,
            die: ids.die,
            core: ids.core,
            node: Some(c.node),
            ..CpuSpec::default()
        });
        possible.set(c.cpu as usize);
        if c.present {
            present.set(c.cpu as usize);
        }
    }
    b.possible(possible).present(present);
}

/// Every node with memory or CPUs, and the SLIT when it covers them all.
fn add_nodes(
    b: &mut TopologyBuilder,
    cpus: &[CpuInfo],
    nodes: &[NodeFacts],
    distances: &(usize, Vec<u8>),
) {
    let mut ids: Vec<u32> = nodes.iter().map(|n| n.id).collect();
    for c in cpus {
        if !ids.contains(&c.node) {
            ids.push(c.node);
        }
    }
    ids.sort_unstable();
    for &id in &ids {
        let mut m = CpuMask::new();
        for c in cpus.iter().filter(|c| c.node == id) {
            m.set(c.cpu as usize);
        }
        let bytes = nodes.iter().find(|n| n.id == id).map(|n| n.bytes);
        b.add_node(id, m, bytes);
    }
    let (n, d) = distances;
    if *n == ids.len() && *n > 1 {
        b.distances(d.iter().map(|&x| x as u32).collect());
    }
}

/// Prints one `cputopo:` line per CPU: the facts the model was built from, so
/// that the host can rebuild the same model (and its scheduler domains).
pub fn print_cpu_facts(t: &Topology) {
    for c in t.cpus() {
        let group = |k: LevelKind| {
            t.level(k)
                .zip(c.group(k))
                .and_then(|(l, g)| l.groups.get(g as usize))
                .and_then(|g| g.os_id)
        };
        let line = CpuFacts {
            cpu: c.id,
            apic: c.hw_id.unwrap_or(0) as u32,
            // Every CPU `build` adds names its package and core.
            package: group(LevelKind::Package).unwrap_or_default(),
            die: group(LevelKind::Die),
            core: group(LevelKind::Core).unwrap_or_default(),
            node: c.node.and_then(|n| t.nodes().get(n as usize)).map(|n| n.id),
            online: c.online,
        };
        kprintln!("{line}");
    }
}

/// Prints one `cputopo: cache` line per cache instance (`topo_dump`), so that
/// the host can rebuild the same model.
pub fn print_cache_facts(t: &Topology) {
    for c in t.caches() {
        kprintln!("{}", CacheLine(c.clone()));
    }
}

/// Prints the topology summary: counts per level, the packages and dies,
/// each cache level (how many instances, how many CPUs share one), each node's
/// CPUs and memory, and the distance matrix.
pub fn print_topology(t: &Topology) {
    let lines = core::iter::once(summary_line(t))
        .chain(group_lines(t))
        .chain(cache_lines(t))
        .chain(node_lines(t));
    for line in lines {
        kprintln!("{line}");
    }
}

/// CPU counts and the number of groups per level.
fn summary_line(t: &Topology) -> TopologyLine {
    let levels = LevelKind::ALL
        .into_iter()
        .filter_map(|kind| Some((kind, t.level(kind)?.groups.len() as u32)))
        .collect();
    TopologyLine::Summary {
        possible: t.possible().weight() as u32,
        present: t.present().weight() as u32,
        online: t.online().weight() as u32,
        levels,
        threads_per_core: t.max_threads_per_core() as u32,
    }
}

/// Every package and die with its CPUs.
fn group_lines(t: &Topology) -> impl Iterator<Item = TopologyLine> + '_ {
    [LevelKind::Package, LevelKind::Die]
        .into_iter()
        .filter_map(|kind| Some((kind, t.level(kind)?)))
        .flat_map(|(kind, level)| {
            level
                .groups
                .iter()
                .enumerate()
                .map(move |(i, g)| TopologyLine::Group {
                    kind,
                    index: i as u32,
                    cpus: g.cpus.to_cpumask(),
                })
        })
}

/// One line per cache level and kind. The model lists instances by (level,
/// kind, first CPU), so equal ones are adjacent; their spans are listed only
/// up to 16 instances, to keep big machines' reports short.
fn cache_lines(t: &Topology) -> Vec<TopologyLine> {
    let caches = t.caches();
    let mut lines = Vec::new();
    let mut i = 0;
    while let Some(first) = caches.get(i) {
        let same = caches[i..]
            .iter()
            .take_while(|c| c.level == first.level && c.kind == first.kind)
            .count();
        let group = &caches[i..i + same];
        let weights = group.iter().map(|c| c.cpus.weight() as u32);
        let sharing = weights.fold((u32::MAX, 0), |(lo, hi), w| (lo.min(w), hi.max(w)));
        lines.push(TopologyLine::Cache {
            level: first.level,
            kind: first.kind,
            size_kib: first.size_bytes.unwrap_or(0) >> 10,
            instances: same as u32,
            sharing,
            spans: if same <= 16 {
                group.iter().map(|c| c.cpus.to_cpumask()).collect()
            } else {
                Vec::new()
            },
        });
        i += same;
    }
    lines
}

/// Each node's CPUs and memory, then the distance matrix row by row.
fn node_lines(t: &Topology) -> impl Iterator<Item = TopologyLine> + '_ {
    let nodes = t.nodes().iter().map(|node| TopologyLine::Node {
        id: node.id,
        cpus: node.cpus.to_cpumask(),
        memory_mib: node.memory_bytes.unwrap_or(0) >> 20,
    });
    let k = if t.has_distances() {
        t.nodes().len()
    } else {
        0
    };
    let rows = (0..k).map(move |i| {
        TopologyLine::Distances(DistanceRow {
            node: t.nodes()[i].id,
            row: (0..k).map(|j| t.distance(i, j)).collect(),
        })
    });
    nodes.chain(rows)
}

/// Prints the scheduler domains of every online CPU, as Linux 6.12 builds them
/// on the topology model above (the shared `domains` crate, `no_std`).
///
/// The form is `domains::render::compact_lines`: a `sched_domains:` header, one
/// `sched_domain:` line per distinct domain (id, name, span, flag names, groups)
/// and one `sched_domain_cpu:` line per CPU listing its domains' ids lowest
/// first, so 300 vCPUs print a few hundred short lines, not one block per CPU.
/// The host runner parses them and compares with `domains::build` on the QEMU
/// topology. `sched_domains=off` on the command line skips this.
pub fn print_domains(t: &Topology) {
    let started = crate::arch::timer::now_ns();
    match domains::build(t, domains::KernelVersion::V6_12) {
        Ok(d) => {
            let built_us = (crate::arch::timer::now_ns() - started) / 1000;
            for line in domains::render::compact_lines(&d) {
                kprintln!("{line}");
            }
            kprintln!(
                "sched_domains: built for {} CPUs in {} us (not part of bringup_ns)",
                d.cpus.len(),
                built_us
            );
        }
        Err(e) => kprintln!("sched_domains: none: {e}"),
    }
}
