//! The topology summary (through the shared `topology` crate) and scheduler
//! domains (through the shared `domains` crate).

use crate::firmware::CpuInfo;
use crate::kprintln;
use alloc::string::String;
use alloc::vec::Vec;
use bootproto::report::{CacheLine, CpuFacts, DistanceRow};
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
    let mut present = CpuMask::new();
    let mut possible = CpuMask::new();
    for c in cpus {
        let a = c.apic_id;
        let field = |lo: u32, hi: u32| -> u32 {
            if hi <= lo || lo >= 32 {
                0
            } else {
                (a >> lo) & ((1u32 << (hi - lo).min(31)) - 1)
            }
        };
        let package = a.checked_shr(shifts.package).unwrap_or(0);
        let die = (shifts.core < shifts.package).then(|| field(shifts.core, shifts.package));
        b.add_cpu(CpuSpec {
            id: c.cpu,
            hw_id: Some(a as u64),
            online: online.contains(c.cpu as usize),
            package,
            die,
            core: field(shifts.smt, shifts.core),
            node: Some(c.node),
            ..CpuSpec::default()
        });
        possible.set(c.cpu as usize);
        if c.present {
            present.set(c.cpu as usize);
        }
    }
    b.possible(possible).present(present);
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
    // Moved, not cloned: a cache is 2 KiB (its CPU mask), and 4096 CPUs with
    // private L1d, L1i and L2 have some 12 000 of them. `add_caches` takes the
    // vector as it is and `finish` moves it into the topology.
    b.add_caches(caches);
    b.finish()
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

/// `L2`, `L1d`, `L1i`: a cache's name as lscpu and lstopo print it.
fn cache_name(c: &Cache) -> String {
    alloc::format!("L{}{}", c.level, c.kind.suffix())
}

/// Prints one `cputopo: cache` line per cache instance (`topo_dump`), so that
/// the host can rebuild the same model.
pub fn print_cache_facts(t: &Topology) {
    for c in t.caches() {
        kprintln!("{}", CacheLine(c.clone()));
    }
}

/// Prints the topology summary: counts per level, each cache level (how many
/// instances, how many CPUs share one), and each node's CPUs.
pub fn print_topology(t: &Topology) {
    let mut counts = String::new();
    for kind in LevelKind::ALL {
        if let Some(level) = t.level(kind) {
            if !counts.is_empty() {
                counts.push_str(", ");
            }
            counts.push_str(&alloc::format!("{} {}s", level.groups.len(), kind.name()));
        }
    }
    kprintln!(
        "topology: {} possible, {} present, {} online CPUs; {}; {} threads per core",
        t.possible().weight(),
        t.present().weight(),
        t.online().weight(),
        counts,
        t.max_threads_per_core()
    );
    for kind in [LevelKind::Package, LevelKind::Die] {
        if let Some(level) = t.level(kind) {
            for (i, g) in level.groups.iter().enumerate() {
                kprintln!(
                    "topology: {} {} cpus {}",
                    kind.name(),
                    i,
                    g.cpus.to_list_string()
                );
            }
        }
    }
    // Caches, one line per level and kind: instances are listed in the model's
    // order (level, kind, first CPU), so equal ones are adjacent.
    let mut i = 0;
    while let Some(first) = t.caches().get(i) {
        let same = t.caches()[i..]
            .iter()
            .take_while(|c| c.level == first.level && c.kind == first.kind)
            .count();
        let group = &t.caches()[i..i + same];
        let weights = group.iter().map(|c| c.cpus.weight());
        let (least, most) = weights.fold((usize::MAX, 0), |(lo, hi), w| (lo.min(w), hi.max(w)));
        let sharing = if least == most {
            alloc::format!("{most}")
        } else {
            alloc::format!("{least}-{most}")
        };
        kprintln!(
            "topology: cache {} {} KiB, {} instances of {} CPUs{}",
            cache_name(first),
            first.size_bytes.unwrap_or(0) >> 10,
            same,
            sharing,
            if same <= 16 {
                let spans: Vec<String> = group.iter().map(|c| c.cpus.to_list_string()).collect();
                alloc::format!(": {}", spans.join(" "))
            } else {
                String::new()
            }
        );
        i += same;
    }
    for node in t.nodes() {
        let mib = node.memory_bytes.unwrap_or(0) >> 20;
        kprintln!(
            "topology: node {} cpus {} memory {} MiB",
            node.id,
            node.cpus.to_list_string(),
            mib
        );
    }
    if t.has_distances() {
        let k = t.nodes().len();
        for i in 0..k {
            let line = DistanceRow {
                node: t.nodes()[i].id,
                row: (0..k).map(|j| t.distance(i, j)).collect(),
            };
            kprintln!("{line}");
        }
    }
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
