//! NUMA levels against the examples kernel/sched/topology.c documents in its
//! comments (one CPU per node, so CPU n is node n).

use cpumask::CpuMask;
use domains::KernelVersion;
use topology::{Arch, CpuSpec, Topology, TopologyBuilder};

fn one_cpu_per_node(distances: &[u32]) -> Topology {
    let n = (distances.len() as f64).sqrt() as u32;
    let mut b = TopologyBuilder::new(Arch::X86_64);
    for c in 0..n {
        b.add_cpu(CpuSpec {
            id: c,
            online: true,
            package: c,
            core: 0,
            node: Some(c),
            ..Default::default()
        });
        b.add_node(c, CpuMask::new(), None);
    }
    b.distances(distances.to_vec());
    b.build().unwrap()
}

fn tree(topo: &Topology) -> Vec<Vec<(String, String, Vec<String>)>> {
    let d = domains::build(topo, KernelVersion::V6_12).unwrap();
    d.cpus
        .iter()
        .map(|c| {
            c.domains
                .iter()
                .map(|x| {
                    (
                        d.name(x).to_string(),
                        d.span(x).to_list_string(),
                        d.groups(c.cpu, x)
                            .iter()
                            .map(|g| g.to_list_string())
                            .collect(),
                    )
                })
                .collect()
        })
        .collect()
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

/// The 4-node ring of the "NUMA topology" comment: NUMA-1 spans and NUMA-2
/// groups {0-1,3},{1-3} / {0-2},{0,2-3} / {1-3},{0-1,3} / {0,2-3},{0-2}.
#[test]
fn four_node_ring() {
    let t = tree(&one_cpu_per_node(&[
        10, 20, 30, 20, //
        20, 10, 20, 30, //
        30, 20, 10, 20, //
        20, 30, 20, 10,
    ]));
    let numa1 = ["0-1,3", "0-2", "1-3", "0,2-3"];
    let numa2 = [
        ["0-1,3", "1-3"],
        ["0-2", "0,2-3"],
        ["1-3", "0-1,3"],
        ["0,2-3", "0-2"],
    ];
    for cpu in 0..4 {
        let doms = &t[cpu];
        assert_eq!(doms.len(), 2, "cpu{cpu}: {doms:?}");
        assert_eq!(doms[0].0, "NUMA");
        assert_eq!(doms[0].1, numa1[cpu]);
        let mut g = doms[0].2.clone();
        g.sort();
        let mut want: Vec<String> = numa1[cpu].split(',').flat_map(expand).collect();
        want.sort();
        assert_eq!(g, want, "cpu{cpu} NUMA-1 groups are the single nodes");
        assert_eq!(doms[1].1, "0-3");
        assert_eq!(doms[1].2, s(&numa2[cpu]), "cpu{cpu} NUMA-2 groups");
    }
}

fn expand(part: &str) -> Vec<String> {
    match part.split_once('-') {
        Some((a, b)) => (a.parse::<u32>().unwrap()..=b.parse().unwrap())
            .map(|x| x.to_string())
            .collect(),
        None => vec![part.to_string()],
    }
}

/// The diameter-3 line 0-1-2-3 of build_overlap_sched_groups(): node 0's
/// NUMA-2 domain (0-2) must not take node 2's child (1-3), which spills out of
/// it, but a descendant inside it: groups {0-1},{2}.
#[test]
fn diameter_three_line_uses_descendants() {
    let t = tree(&one_cpu_per_node(&[
        10, 20, 30, 40, //
        20, 10, 20, 30, //
        30, 20, 10, 20, //
        40, 30, 20, 10,
    ]));
    let numa2 = &t[0][1];
    assert_eq!(numa2.1, "0-2");
    assert_eq!(numa2.2, s(&["0-1", "2"]));
    for (cpu, doms) in t.iter().enumerate() {
        for (name, span, groups) in doms {
            let span = CpuMask::parse_list(span).unwrap();
            for g in groups {
                let g = CpuMask::parse_list(g).unwrap();
                assert!(
                    g.is_subset(&span),
                    "cpu{cpu} {name}: group {g} outside {span}"
                );
            }
        }
    }
}

/// v5.9's sched_init_numa() read the distances from node 0's row only (it
/// assumed that row holds them all); v5.12+ collects them from every pair. With
/// a distance (25) that only nodes 1 and 2 see, v5.9 has one NUMA level fewer.
#[test]
fn v5_9_takes_numa_distances_from_node_0_only() {
    let topo = one_cpu_per_node(&[
        10, 20, 20, //
        20, 10, 25, //
        20, 25, 10,
    ]);
    let levels = |k| -> Vec<Option<u32>> {
        domains::build(&topo, k)
            .unwrap()
            .levels
            .iter()
            .filter(|l| l.numa_distance.is_some())
            .map(|l| l.numa_distance)
            .collect()
    };
    assert_eq!(levels(KernelVersion::V5_9), [Some(10), Some(20)]);
    assert_eq!(levels(KernelVersion::V6_12), [Some(10), Some(20), Some(25)]);
}

/// Before v5.13 the diameter-3 line got the groups topology.c's comment calls
/// "obviously buggered": node 0's NUMA-2 domain 0-2 has groups {0-1},{1-3}.
#[test]
fn v5_9_diameter_three_line_spills_out() {
    let topo = one_cpu_per_node(&[
        10, 20, 30, 40, //
        20, 10, 20, 30, //
        30, 20, 10, 20, //
        40, 30, 20, 10,
    ]);
    let d = domains::build(&topo, KernelVersion::V5_9).unwrap();
    let c = d.cpu(0).unwrap();
    let numa2 = &c.domains[1];
    assert_eq!(d.span(numa2).to_list_string(), "0-2");
    let groups: Vec<String> = d
        .groups(0, numa2)
        .iter()
        .map(|g| g.to_list_string())
        .collect();
    assert_eq!(groups, ["0-1", "1-3"]);
}
