//! POWER truth from the seeds.
//!
//! Seed 000 prints, for the POWER9 2-node 128-CPU PowerVM LPAR on v5.9, cpu0's
//! domains SMT 2391, CACHE 2327, DIE 2071, NUMA 12801, and after
//! `ppc64_cpu --smt=1` DIE 2071, NUMA 12801. Seed 001 describes shared-processor
//! POWER10 LPARs: asym packing onto fewer big cores and no MC level.

use cpumask::CpuMask;
use domains::{Flag, KernelVersion};
use topology::{Arch, Cache, CacheKind, CpuSpec, Topology, TopologyBuilder};

/// The seed-000 machine as lscpu describes it: 2 sockets = 2 nodes (0-63,
/// 64-127), 8 SMT8 cores per socket; POWER9 under PowerVM exposes each SMT8 core
/// as two SMT4 thread groups (even and odd threads) sharing an L2.
/// `online(cpu)` chooses which CPUs are online.
fn power9_lpar_128(online: impl Fn(u32) -> bool) -> Topology {
    let mut b = TopologyBuilder::new(Arch::PowerPc64);
    b.hypervisor("pHyp");
    for cpu in 0..128u32 {
        let big = cpu / 8;
        let thread = cpu % 8;
        b.add_cpu(CpuSpec {
            id: cpu,
            hw_id: Some(cpu as u64),
            online: online(cpu),
            package: big / 8,
            die: None,
            cluster: None,
            big_core: Some(big % 8),
            core: (big % 8) * 2 + thread % 2,
            node: Some(big / 8),
            kind: None,
            capacity: None,
        });
    }
    for node in 0..2u32 {
        b.add_node(node, CpuMask::new(), None);
    }
    b.distances(vec![10, 40, 40, 10]);
    for big in 0..16usize {
        let mut m = CpuMask::new();
        m.set_range(big * 8, big * 8 + 8);
        b.add_cache(Cache {
            level: 2,
            kind: CacheKind::Unified,
            size_bytes: Some(512 << 10),
            line_bytes: Some(128),
            ways: None,
            cpus: m,
        });
    }
    b.build().expect("power9 topology")
}

fn cpu0(topo: &Topology, k: KernelVersion) -> Vec<(String, u32)> {
    let d = domains::build(topo, k).expect("domains");
    let c = d.cpu(0).expect("cpu0 online");
    c.domains
        .iter()
        .map(|x| (d.name(x).to_string(), k.encode(x.flags)))
        .collect()
}

fn named(v: &[(&str, u32)]) -> Vec<(String, u32)> {
    v.iter().map(|(n, f)| (n.to_string(), *f)).collect()
}

#[test]
fn seed000_power9_v5_9_all_threads() {
    let topo = power9_lpar_128(|_| true);
    assert_eq!(
        cpu0(&topo, KernelVersion::V5_9),
        named(&[
            ("SMT", 2391),
            ("CACHE", 2327),
            ("DIE", 2071),
            ("NUMA", 12801)
        ])
    );
}

#[test]
fn seed000_power9_v5_9_after_smt1() {
    let topo = power9_lpar_128(|cpu| cpu % 8 == 0);
    assert_eq!(
        cpu0(&topo, KernelVersion::V5_9),
        named(&[("DIE", 2071), ("NUMA", 12801)])
    );
}

#[test]
fn seed000_machine_from_the_catalogue_when_present() {
    // The catalogue entry is written independently; when it exists it must
    // give the seed's numbers too.
    let Ok(topo) = readers::catalogue::machine("power9-lpar-128") else {
        eprintln!("catalogue has no power9-lpar-128 yet");
        return;
    };
    assert_eq!(
        cpu0(&topo, KernelVersion::V5_9),
        named(&[
            ("SMT", 2391),
            ("CACHE", 2327),
            ("DIE", 2071),
            ("NUMA", 12801)
        ])
    );
}

#[test]
fn power9_on_v6_uses_pkg_and_names() {
    let topo = power9_lpar_128(|_| true);
    let d = domains::build(&topo, KernelVersion::V6_12).unwrap();
    let c = d.cpu(0).unwrap();
    let names: Vec<_> = c.domains.iter().map(|x| d.name(x)).collect();
    assert_eq!(names, ["SMT", "CACHE", "PKG", "NUMA"]);
    let smt: Vec<_> = KernelVersion::V6_12.names(c.domains[0].flags).collect();
    assert_eq!(
        smt,
        [
            "SD_BALANCE_NEWIDLE",
            "SD_BALANCE_EXEC",
            "SD_BALANCE_FORK",
            "SD_WAKE_AFFINE",
            "SD_SHARE_CPUCAPACITY",
            "SD_SHARE_LLC",
            "SD_PREFER_SIBLING"
        ]
    );
    let v68: Vec<_> = KernelVersion::V6_8.names(c.domains[1].flags).collect();
    assert!(v68.contains(&"SD_SHARE_PKG_RESOURCES"));
    // SMT is the small core: threads 0,2,4,6 of the big core.
    assert_eq!(d.span(&c.domains[0]).to_list_string(), "0,2,4,6");
    assert_eq!(d.span(&c.domains[1]).to_list_string(), "0-7");
}
