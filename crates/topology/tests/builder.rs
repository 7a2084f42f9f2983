//! The builder groups CPUs and rejects inconsistent input with named errors.
use topology::*;

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

#[test]
fn rejects_cpu_in_two_nodes() {
    let mut b = TopologyBuilder::new(Arch::X86_64);
    b.add_cpu(spec(0, 0, 0)).add_cpu(spec(1, 0, 1));
    b.add_node(0, CpuMask::parse_list("0-1").unwrap(), None);
    b.add_node(1, CpuMask::parse_list("1").unwrap(), None);
    assert_eq!(
        b.build().unwrap_err(),
        BuildError::CpuInTwoNodes {
            cpu: 1,
            first: 0,
            second: 1
        }
    );
}

#[test]
fn rejects_duplicates_and_bad_distances() {
    let mut b = TopologyBuilder::new(Arch::Arm64);
    b.add_cpu(spec(3, 0, 0)).add_cpu(spec(3, 0, 1));
    assert_eq!(b.build().unwrap_err(), BuildError::DuplicateCpu(3));
    let mut b = TopologyBuilder::new(Arch::Arm64);
    b.add_cpu(spec(0, 0, 0));
    b.add_node(0, CpuMask::single(0), None)
        .add_node(1, CpuMask::new(), Some(1 << 30));
    b.distances(vec![10, 20, 20]);
    assert!(matches!(
        b.build(),
        Err(BuildError::DistanceSize {
            nodes: 2,
            entries: 3
        })
    ));
    b.distances(vec![10, 5, 20, 10]);
    assert!(matches!(
        b.build(),
        Err(BuildError::BadDistance { value: 5, .. })
    ));
    b.distances(vec![10, 20, 20, 10]);
    let t = b.build().unwrap();
    assert_eq!(t.distance(0, 1), 20);
    assert!(t.nodes[1].cpus.is_empty(), "memory-only node keeps no CPUs");
    assert_eq!(
        TopologyBuilder::new(Arch::X86).build().unwrap_err(),
        BuildError::NoCpus
    );
    let mut b = TopologyBuilder::new(Arch::X86);
    b.add_cpu(spec(16384, 0, 0));
    assert_eq!(b.build().unwrap_err(), BuildError::CpuOutOfRange(16384));
}

#[test]
fn interleaved_power10_numbering() {
    // Seed 001: node0 = 0-7,32-39,... node1 = 8-15,40-47,... on 8-thread cores.
    let mut b = TopologyBuilder::new(Arch::PowerPc64);
    let mut n0 = CpuMask::new();
    let mut n1 = CpuMask::new();
    for cpu in 0..64u32 {
        b.add_cpu(spec(cpu, 0, cpu / 8));
        if (cpu / 8) % 2 == 0 {
            n0.set(cpu as usize)
        } else {
            n1.set(cpu as usize)
        }
    }
    b.add_node(0, n0, None).add_node(1, n1, None);
    let t = b.build().unwrap();
    assert_eq!(t.nodes[0].cpus.to_list_string(), "0-7,16-23,32-39,48-55");
    assert_eq!(t.node_of(40).unwrap().id, 1);
    assert_eq!(t.smt_mask(13).to_list_string(), "8-15");
}

#[test]
fn shapes_number_like_linux() {
    let mut s = Shape::simple(Arch::X86_64, 2, 8, 2);
    s.numbering = Numbering::ThreadsLast;
    let t = s.build().unwrap();
    assert_eq!(t.cpus.len(), 32);
    assert_eq!(t.smt_mask(0).to_list_string(), "0,16");
    assert_eq!(t.nodes[1].cpus.to_list_string(), "8-15,24-31");
    assert_eq!(t.llc_mask(3).to_list_string(), "0-7,16-23");
}
