//! The builder groups CPUs and rejects inconsistent input with named errors.
use topology::*;

/// Where the seeds are: readers' one definition, included by path because
/// `topology` sits below `readers` and takes no dependency on it.
#[path = "../../readers/src/corpus.rs"]
#[allow(dead_code)]
mod corpus;

fn spec(id: u32, package: u32, core: u32) -> CpuSpec {
    CpuSpec {
        id,
        online: true,
        package,
        core,
        ..Default::default()
    }
}

#[test]
fn groups_by_id_path() {
    // Two packages whose cores both use core_id 0 and 1: the cores must stay distinct.
    let mut b = TopologyBuilder::new(Arch::X86_64);
    for (id, pkg, core) in [
        (0, 0, 0),
        (1, 0, 1),
        (2, 1, 0),
        (3, 1, 1),
        (4, 0, 0),
        (5, 0, 1),
        (6, 1, 0),
        (7, 1, 1),
    ] {
        b.add_cpu(spec(id, pkg, core));
    }
    let t = b.build().unwrap();
    assert_eq!(t.count(LevelKind::Core), 4);
    assert_eq!(t.count(LevelKind::Package), 2);
    assert_eq!(t.smt_mask(0).to_list_string(), "0,4");
    assert_eq!(t.package_mask(2).to_list_string(), "2-3,6-7");
    assert_eq!(t.cpu(4).unwrap().thread, 1);
    assert_eq!(t.max_threads_per_core(), 2);
    let core_level = t.level(LevelKind::Core).unwrap();
    let pkg = core_level.groups[t.cpu(6).unwrap().group(LevelKind::Core).unwrap() as usize].parent;
    assert_eq!(pkg, t.cpu(6).unwrap().group(LevelKind::Package));
}

/// Seed 001's 320-CPU POWER10 shared-processor LPAR ("40 Entitled cores /
/// 40 Virtual processor" scenario), `lscpu` lines copied verbatim from
/// `shared/seeds/001_*.txt` beside the repository: the four nodes interleave
/// SMT8 cores round-robin, and node ids are sparse (0, 1, 4, 5).
const SEED_001_320_NODES: [(u32, &str); 4] = [
    (
        0,
        "0-7,32-39,64-71,96-103,128-135,160-167,192-199,224-231,256-263,288-295",
    ),
    (
        1,
        "8-15,40-47,72-79,104-111,136-143,168-175,200-207,232-239,264-271,296-303",
    ),
    (
        4,
        "16-23,48-55,80-87,112-119,144-151,176-183,208-215,240-247,272-279,304-311",
    ),
    (
        5,
        "24-31,56-63,88-95,120-127,152-159,184-191,216-223,248-255,280-287,312-319",
    ),
];

/// The constants above really are the seed's text (the seed is the truth, so
/// a missing seed is a failure, not a skip).
#[test]
fn seed_001_node_lists_are_the_seeds() {
    let text = corpus::seed_text(env!("CARGO_MANIFEST_DIR"), "001_");
    // The 320-CPU scenario is the second lscpu in the seed.
    let scenario = &text[text
        .find("CPU(s): 320")
        .expect("seed 001 has no 320-CPU lscpu")..];
    for (id, list) in SEED_001_320_NODES {
        let line = format!("NUMA node{id} CPU(s): {list}");
        assert!(scenario.contains(&line), "seed 001 lacks `{line}`");
    }
}

#[test]
fn interleaved_power10_numbering() {
    // Per the seed: 4 sockets of 10 SMT8 cores, CPUs 8c..8c+7 form core c,
    // one node per socket. Package = the node's position, core = cpu / 8.
    let mut b = TopologyBuilder::new(Arch::PowerPc64);
    let nodes: Vec<(u32, CpuMask)> = SEED_001_320_NODES
        .iter()
        .map(|&(id, list)| (id, CpuMask::parse_list(list).unwrap()))
        .collect();
    for cpu in 0..320u32 {
        let package = nodes
            .iter()
            .position(|(_, m)| m.contains(cpu as usize))
            .expect("every CPU of the seed's 0-319 is in one node") as u32;
        b.add_cpu(spec(cpu, package, cpu / 8));
    }
    // Added in reverse to check the builder orders nodes by id.
    for (id, cpus) in nodes.iter().rev() {
        b.add_node(*id, *cpus, None);
    }
    let t = b.build().unwrap();

    // Facts the seed's lscpu states besides the lists: CPU(s) 320,
    // Thread(s) per core 8, Core(s) per socket 10, Socket(s) 4, NUMA node(s) 4.
    assert_eq!(t.cpus().len(), 320);
    assert_eq!(t.max_threads_per_core(), 8);
    assert_eq!(t.count(LevelKind::Core), 40);
    assert_eq!(t.count(LevelKind::Package), 4);
    let ids: Vec<u32> = t.nodes().iter().map(|n| n.id).collect();
    assert_eq!(ids, [0, 1, 4, 5], "sparse node ids kept, in id order");
    for node in t.nodes() {
        assert_eq!(node.cpus.weight(), 80, "node {}: 10 cores x 8", node.id);
    }
    let mut all = CpuMask::new();
    all.set_range(0, 320);
    let union = t
        .nodes()
        .iter()
        .fold(CpuMask::new(), |acc, n| acc.or(&n.cpus));
    assert_eq!(union, all);

    // Derived: cores go round-robin over the nodes in id order, so core c
    // sits in node [0, 1, 4, 5][c % 4]; every SMT8 core lies inside one node.
    for cpu in 0..320usize {
        let expected = [0, 1, 4, 5][(cpu / 8) % 4];
        assert_eq!(t.node_of(cpu).unwrap().id, expected, "cpu {cpu}");
        assert_eq!(t.cpu(cpu).unwrap().thread, (cpu % 8) as u32, "cpu {cpu}");
        let smt = t.smt_mask(cpu);
        assert_eq!(smt.weight(), 8);
        assert_eq!(smt.first(), Some(cpu / 8 * 8));
        assert!(smt.is_subset(&t.node_of(cpu).unwrap().cpus));
    }
    // Node 4 is the third node though its id is 4; its first CPU is core 2's.
    assert_eq!(t.node_index(4), Some(2));
    assert_eq!(t.nodes()[2].cpus.first(), Some(16));
    assert_eq!(t.nodes()[3].cpus.last(), Some(319));
    assert_eq!(t.package_mask(300), t.node_of(300).unwrap().cpus);
}

#[test]
fn shapes_number_like_linux() {
    let mut s = Shape::simple(Arch::X86_64, 2, 8, 2);
    s.numbering = Numbering::ThreadsLast;
    let t = s.build().unwrap();
    assert_eq!(t.cpus().len(), 32);
    assert_eq!(t.smt_mask(0).to_list_string(), "0,16");
    assert_eq!(t.nodes()[1].cpus.to_list_string(), "8-15,24-31");
    assert_eq!(t.llc_mask(3).to_list_string(), "0-7,16-23");
}

/// Builds `b` both ways: through `build` (caches copied) and through
/// `finish` (caches moved). Every reader and the kernel use `finish`, so each
/// rejection must hold on that path too.
fn both(b: &TopologyBuilder) -> [Result<Topology, BuildError>; 2] {
    [b.build(), b.clone().finish()]
}

fn assert_rejects(b: &TopologyBuilder, expected: BuildError) {
    for (path, result) in ["build", "finish"].iter().zip(both(b)) {
        assert_eq!(result.unwrap_err(), expected, "through {path}");
    }
}

fn cache(level: u8, list: &str) -> Cache {
    Cache {
        level,
        kind: CacheKind::Unified,
        size_bytes: None,
        line_bytes: None,
        ways: None,
        cpus: CpuMask::parse_list(list).unwrap().into(),
    }
}

#[test]
fn no_cpus_is_refused() {
    assert_rejects(&TopologyBuilder::new(Arch::X86), BuildError::NoCpus);
}

#[test]
fn cpu_out_of_range_is_refused() {
    let mut b = TopologyBuilder::new(Arch::X86);
    b.add_cpu(spec(0, 0, 0))
        .add_cpu(spec(MAX_CPUS as u32, 0, 1));
    assert_rejects(&b, BuildError::CpuOutOfRange(MAX_CPUS as u32));
}

#[test]
fn duplicate_cpu_is_refused() {
    let mut b = TopologyBuilder::new(Arch::Arm64);
    b.add_cpu(spec(3, 0, 0)).add_cpu(spec(3, 0, 1));
    assert_rejects(&b, BuildError::DuplicateCpu(3));
}

#[test]
fn cpu_in_two_nodes_is_refused() {
    // Once by two node masks, once by a CPU's own node id against another mask.
    let mut b = TopologyBuilder::new(Arch::X86_64);
    b.add_cpu(spec(0, 0, 0)).add_cpu(spec(1, 0, 1));
    b.add_node(0, CpuMask::parse_list("0-1").unwrap(), None);
    b.add_node(1, CpuMask::single(1), None);
    let expected = BuildError::CpuInTwoNodes {
        cpu: 1,
        first: 0,
        second: 1,
    };
    assert_rejects(&b, expected.clone());
    let mut b = TopologyBuilder::new(Arch::X86_64);
    b.add_cpu(spec(0, 0, 0)).add_cpu(CpuSpec {
        node: Some(1),
        ..spec(1, 0, 1)
    });
    b.add_node(0, CpuMask::single(1), None);
    b.add_node(1, CpuMask::new(), None);
    assert_rejects(&b, expected);
}

#[test]
fn duplicate_node_is_refused() {
    let mut b = TopologyBuilder::new(Arch::X86_64);
    b.add_cpu(spec(0, 0, 0)).add_cpu(spec(1, 0, 1));
    b.add_node(2, CpuMask::single(0), None);
    b.add_node(2, CpuMask::single(1), None);
    assert_rejects(&b, BuildError::DuplicateNode(2));
}

/// Node ids stop at MAX_NODES: hwloc nodesets and the model's node sets hold
/// no more, so a larger id is refused instead of vanishing from them.
#[test]
fn node_beyond_the_limit_is_refused() {
    let mut b = TopologyBuilder::new(Arch::X86_64);
    b.add_cpu(spec(0, 0, 0)).add_cpu(spec(1, 0, 1));
    b.add_node(0, CpuMask::single(0), None);
    b.add_node(topology::MAX_NODES as u32, CpuMask::single(1), None);
    assert_rejects(&b, BuildError::NodeOutOfRange(topology::MAX_NODES as u32));
    let mut ok = TopologyBuilder::new(Arch::X86_64);
    ok.add_cpu(spec(0, 0, 0));
    ok.add_node(topology::MAX_NODES as u32 - 1, CpuMask::single(0), None);
    assert!(ok.finish().is_ok());
}

#[test]
fn unknown_node_is_refused() {
    let mut b = TopologyBuilder::new(Arch::X86_64);
    b.add_cpu(spec(0, 0, 0)).add_cpu(CpuSpec {
        node: Some(7),
        ..spec(1, 0, 1)
    });
    b.add_node(0, CpuMask::single(0), None);
    assert_rejects(&b, BuildError::UnknownNode { cpu: 1, node: 7 });
}

#[test]
fn distance_matrix_of_wrong_size_is_refused() {
    let mut b = TopologyBuilder::new(Arch::Arm64);
    b.add_cpu(spec(0, 0, 0));
    b.add_node(0, CpuMask::single(0), None)
        .add_node(1, CpuMask::new(), Some(1 << 30));
    b.distances(vec![10, 20, 20]);
    assert_rejects(
        &b,
        BuildError::DistanceSize {
            nodes: 2,
            entries: 3,
        },
    );
}

#[test]
fn bad_distances_are_refused() {
    let mut b = TopologyBuilder::new(Arch::Arm64);
    b.add_cpu(spec(0, 0, 0));
    b.add_node(0, CpuMask::single(0), None)
        .add_node(3, CpuMask::new(), Some(1 << 30));
    // A remote distance below the local one...
    b.distances(vec![10, 5, 20, 10]);
    assert_rejects(
        &b,
        BuildError::BadDistance {
            from: 0,
            to: 3,
            value: 5,
        },
    );
    // ...and a zero, named by node id (3), not by position.
    b.distances(vec![10, 20, 20, 0]);
    assert_rejects(
        &b,
        BuildError::BadDistance {
            from: 3,
            to: 3,
            value: 0,
        },
    );
    b.distances(vec![10, 20, 20, 10]);
    for t in both(&b) {
        let t = t.unwrap();
        assert_eq!(t.distance(0, 1), 20);
        assert!(
            t.nodes()[1].cpus.is_empty(),
            "memory-only node keeps no CPUs"
        );
    }
}

#[test]
fn present_outside_possible_is_refused() {
    // Possible is widened to every described CPU, so a present CPU that is
    // neither described nor possible is the case to refuse.
    let mut b = TopologyBuilder::new(Arch::X86_64);
    b.add_cpu(spec(0, 0, 0)).add_cpu(spec(1, 0, 1));
    b.possible(CpuMask::parse_list("0-3").unwrap());
    b.present(CpuMask::parse_list("0-4").unwrap());
    assert_rejects(
        &b,
        BuildError::MaskNotSubset("present CPUs are not all possible"),
    );
}

#[test]
fn online_outside_present_is_refused() {
    let mut b = TopologyBuilder::new(Arch::X86_64);
    b.add_cpu(spec(0, 0, 0)).add_cpu(spec(1, 0, 1));
    b.present(CpuMask::single(0));
    assert_rejects(
        &b,
        BuildError::MaskNotSubset("online CPUs are not all present"),
    );
    // The same CPU offline is fine: present but not online is the norm.
    let mut b = TopologyBuilder::new(Arch::X86_64);
    b.add_cpu(spec(0, 0, 0)).add_cpu(CpuSpec {
        online: false,
        ..spec(1, 0, 1)
    });
    b.possible(CpuMask::parse_list("0-1").unwrap());
    b.present(CpuMask::single(0));
    for t in both(&b) {
        assert_eq!(t.unwrap().online().to_list_string(), "0");
    }
}

#[test]
fn unknown_core_kind_is_refused() {
    let mut b = TopologyBuilder::new(Arch::X86_64);
    let p = b.add_core_kind(CoreKind {
        name: "intel_core".into(),
        efficiency: Some(1),
    });
    b.add_cpu(CpuSpec {
        kind: Some(p),
        ..spec(0, 0, 0)
    });
    b.add_cpu(CpuSpec {
        kind: Some(p + 1),
        ..spec(1, 0, 1)
    });
    assert_rejects(&b, BuildError::UnknownKind { cpu: 1, kind: 1 });
}

/// A cache naming CPU 900 on a 2-CPU machine: refused whether the caches are
/// copied (`build`) or moved (`finish`) into the topology, and whether they
/// were added one by one or as a list.
#[test]
fn cache_outside_possible_is_refused() {
    let mut b = TopologyBuilder::new(Arch::X86_64);
    b.add_cpu(spec(0, 0, 0)).add_cpu(spec(1, 0, 1));
    b.add_cache(cache(1, "0"));
    b.add_cache(cache(3, "0-1,900"));
    assert_rejects(&b, BuildError::CacheOutsidePossible { level: 3, cpu: 900 });
    let mut b = TopologyBuilder::new(Arch::X86_64);
    b.add_cpu(spec(0, 0, 0)).add_cpu(spec(1, 0, 1));
    b.add_caches(vec![cache(2, "0-1"), cache(3, "0-1,900")]);
    assert_rejects(&b, BuildError::CacheOutsidePossible { level: 3, cpu: 900 });
    // A cache over possible-but-absent CPUs is fine (hot-pluggable sockets).
    let mut b = TopologyBuilder::new(Arch::X86_64);
    b.add_cpu(spec(0, 0, 0)).add_cpu(spec(1, 0, 1));
    b.possible(CpuMask::parse_list("0-3").unwrap());
    b.add_cache(cache(3, "0-3"));
    for t in both(&b) {
        assert_eq!(t.unwrap().llc_mask(0).to_list_string(), "0-3");
    }
}

/// Two equal caches with a different cache of the same level, kind and first
/// CPU between them are still one cache afterwards.
#[test]
fn equal_caches_apart_in_sort_order_are_merged() {
    let mut b = TopologyBuilder::new(Arch::X86_64);
    b.add_cpu(spec(0, 0, 0)).add_cpu(spec(1, 0, 1));
    b.add_caches(vec![cache(2, "0-1"), cache(2, "0"), cache(2, "0-1")]);
    for t in both(&b) {
        let lists: Vec<String> = t
            .unwrap()
            .caches()
            .iter()
            .map(|c| c.cpus.to_list_string())
            .collect();
        assert_eq!(lists, ["0-1", "0"]);
    }
}

proptest::proptest! {
    /// Caches come out sorted by (level, kind, first CPU) with exact duplicates
    /// removed, whatever order they were added in. The oracle does not sort:
    /// it checks the output is in key order, holds every input cache, holds
    /// nothing that was not an input, and never the same cache twice.
    #[test]
    fn caches_come_out_sorted_and_deduplicated(
        raw in proptest::collection::vec((1u8..4, 0u8..3, 0u32..8, 1u32..4), 0..40)
    ) {
        let mut b = TopologyBuilder::new(Arch::X86_64);
        for cpu in 0..8 {
            b.add_cpu(spec(cpu, 0, cpu));
        }
        let caches: Vec<Cache> = raw
            .iter()
            .map(|&(level, kind, first, width)| Cache {
                level,
                kind: [CacheKind::Data, CacheKind::Instruction, CacheKind::Unified][kind as usize],
                size_bytes: Some(u64::from(level) << 15),
                line_bytes: Some(64),
                ways: None,
                cpus: (first..(first + width).min(8)).map(|c| c as usize).collect(),
            })
            .collect();
        let (half, rest) = caches.split_at(caches.len() / 2);
        b.add_caches(half.to_vec());
        for c in rest {
            b.add_cache(c.clone());
        }
        for t in both(&b) {
            let t = t.unwrap();
            let out = t.caches();
            for w in out.windows(2) {
                let key = |c: &Cache| (c.level, c.kind, c.cpus.first());
                proptest::prop_assert!(key(&w[0]) <= key(&w[1]), "out of order: {:?}", w);
            }
            for c in &caches {
                proptest::prop_assert_eq!(out.iter().filter(|o| *o == c).count(), 1);
            }
            proptest::prop_assert!(out.iter().all(|o| caches.contains(o)));
        }
    }
}

/// Rebuilding a topology through `from_topology` gives it back unchanged,
/// on machines with every optional part: dies, clusters, big cores, sparse
/// node ids with a memory-only node, offline and absent CPUs, core kinds,
/// capacities, caches and OS ids that differ from the grouping keys.
#[test]
fn rebuilding_gives_the_same_topology() {
    let mut shapes = [
        Shape::simple(Arch::X86_64, 2, 8, 2),
        Shape::simple(Arch::PowerPc64, 4, 10, 8),
    ];
    shapes[0].numbering = Numbering::ThreadsLast;
    let mut machines: Vec<Topology> = shapes.iter().map(|s| s.build().unwrap()).collect();

    let mut b = TopologyBuilder::new(Arch::Arm64);
    b.source("hand-made").model_name("m").hypervisor("KVM");
    let little = b.add_core_kind(CoreKind {
        name: "a520".into(),
        efficiency: Some(0),
    });
    for id in [0u32, 1, 2, 3, 8, 9] {
        b.add_cpu(CpuSpec {
            id,
            hw_id: Some(u64::from(id) << 8),
            online: id != 3,
            die: Some(0),
            cluster: Some(id / 2),
            big_core: Some(id / 4),
            node: Some(if id < 4 { 2 } else { 5 }),
            kind: (id < 2).then_some(little),
            capacity: Some(if id < 2 { 512 } else { 1024 }),
            os_ids: Some([Some(100 + id), None, Some(7), Some(0), Some(3)]),
            ..spec(id, 0, id)
        });
    }
    b.add_node(2, CpuMask::new(), Some(1 << 30))
        .add_node(5, CpuMask::new(), None)
        .add_node(6, CpuMask::new(), Some(1 << 20));
    b.distances(vec![10, 20, 30, 21, 10, 40, 31, 41, 10]);
    b.possible(CpuMask::parse_list("0-15").unwrap());
    b.add_caches(vec![cache(2, "0-3"), cache(3, "0-15"), cache(1, "8")]);
    machines.push(b.build().unwrap());

    for t in machines {
        let again = TopologyBuilder::from_topology(&t).finish().unwrap();
        assert_eq!(again, t, "{}", t.source());
    }
}

/// The OS ids a reader gives per CPU: a group keeps the id its CPUs agree
/// on and gets none where they differ; without them the grouping ids serve.
#[test]
fn groups_take_the_os_id_their_cpus_agree_on() {
    let mut b = TopologyBuilder::new(Arch::X86_64);
    // Core key 0 holds CPUs 0-1 whose OS core ids differ (a VMware guest);
    // core key 1 holds CPUs 2-3 that agree on OS id 40.
    for (id, core, os) in [(0, 0, 10), (1, 0, 11), (2, 1, 40), (3, 1, 40)] {
        b.add_cpu(CpuSpec {
            os_ids: Some([Some(os), None, None, None, Some(9)]),
            ..spec(id, 0, core)
        });
    }
    b.add_cpu(spec(4, 1, 7));
    for t in both(&b) {
        let t = t.unwrap();
        let core = |cpu: usize| {
            let g = t.cpu(cpu).unwrap().group(LevelKind::Core).unwrap();
            t.level(LevelKind::Core).unwrap().groups[g as usize].os_id
        };
        let package = |cpu: usize| {
            let g = t.cpu(cpu).unwrap().group(LevelKind::Package).unwrap();
            t.level(LevelKind::Package).unwrap().groups[g as usize].os_id
        };
        assert_eq!(core(0), None);
        assert_eq!(core(2), Some(40));
        assert_eq!(core(4), Some(7), "grouping id when no OS ids are given");
        assert_eq!(package(0), Some(9));
        assert_eq!(package(4), Some(1));
    }
}

/// `online` overrides the per-CPU flags, and every online CPU must be one
/// the builder knows.
#[test]
fn online_mask_overrides_the_cpus() {
    let mut b = TopologyBuilder::new(Arch::X86_64);
    for id in 0..4 {
        b.add_cpu(spec(id, 0, id));
    }
    b.online(CpuMask::parse_list("0,2").unwrap());
    for t in both(&b) {
        let t = t.unwrap();
        assert_eq!(t.online().to_list_string(), "0,2");
        let flags: Vec<bool> = t.cpus().iter().map(|c| c.online).collect();
        assert_eq!(flags, [true, false, true, false]);
    }
    b.online(CpuMask::parse_list("0,5").unwrap());
    assert_rejects(
        &b,
        BuildError::MaskNotSubset("online CPUs are not all described"),
    );
}

/// A distance matrix over more nodes than the model keeps one for is refused
/// by name; a shape of that many nodes is built without one.
#[test]
fn distances_over_too_many_nodes_are_refused() {
    let n = topology::MAX_DISTANCE_NODES + 1;
    let mut b = TopologyBuilder::new(Arch::Arm64);
    b.add_cpu(spec(0, 0, 0));
    b.add_node(0, CpuMask::single(0), None);
    for id in 1..n as u32 {
        b.add_node(id, CpuMask::new(), None);
    }
    b.distances(vec![10; n * n]);
    assert_rejects(&b, BuildError::TooManyDistanceNodes(n));

    let shape = topology::Shape::simple(Arch::Arm64, n as u32, 1, 1);
    let t = shape.build().unwrap();
    assert_eq!((t.nodes().len(), t.distances().len()), (n, 0));
}
