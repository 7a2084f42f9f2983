//! The firmware tree: what it holds and what the engine refuses.

use cpumask::CpuMask;
use hotplug::{Algo, FirmwareTree, HotplugError, LevelWork, MaskEngine, MaskLevel};
use topology::{Arch, CpuSpec, Shape, TopologyBuilder};

#[test]
fn cpu_nodes_are_found_by_walking_cpus() {
    // 2 packages × 4 cores × SMT4 = 32 CPUs; 8 core nodes + 8 L2 + 2 L3 nodes.
    let topo = Shape::simple(Arch::PowerPc64, 2, 4, 4).build().unwrap();
    let fdt = FirmwareTree::from_topology(&topo).unwrap();
    assert_eq!(fdt.node_count(), 2 + 8 + 8 + 2);
    let mut work = LevelWork::default();
    let node = fdt.of_get_cpu_node(13, &mut work).unwrap();
    assert_eq!(fdt.node_name(node), "PowerPC,manycore@c");
    // The walk visited the first four core nodes (CPUs 0-15 live in nodes 1-4).
    assert_eq!(work.fdt_nodes_visited, 4);
    assert_eq!(fdt.threads_of(node, &mut work), vec![12, 13, 14, 15]);
    assert_eq!(fdt.read_u32(node, "ibm,chip-id", 0, &mut work), Some(0));
    assert_eq!(fdt.read_u32(node, "no-such-property", 0, &mut work), None);
    // The last core is found only after walking all of them.
    let mut far = LevelWork::default();
    fdt.of_get_cpu_node(31, &mut far).unwrap();
    assert_eq!(far.fdt_nodes_visited, 8);
    assert!(fdt.of_get_cpu_node(32, &mut far).is_none());
    // L2 keys differ between cores, LLC keys are shared by a package.
    let key = |cpu, level| {
        let mut w = LevelWork::default();
        let n = fdt.of_get_cpu_node(cpu, &mut w).unwrap();
        fdt.key_of_node(n, level, &mut w).unwrap()
    };
    assert_ne!(key(0, MaskLevel::L2), key(4, MaskLevel::L2));
    assert_eq!(key(0, MaskLevel::Llc), key(15, MaskLevel::Llc));
    assert_ne!(key(0, MaskLevel::Llc), key(16, MaskLevel::Llc));
    // No clusters in this shape: the firmware has no coregroup ids.
    assert_eq!(fdt.key_of_node(node, MaskLevel::Coregroup, &mut work), None);
}

#[test]
fn duplicate_firmware_ids_fall_back_to_logical_numbers() {
    let mut b = TopologyBuilder::new(Arch::PowerPc64);
    for cpu in 0..4 {
        b.add_cpu(CpuSpec {
            id: cpu,
            hw_id: Some(7), // every CPU claims the same PIR
            online: true,
            core: cpu / 2,
            ..CpuSpec::default()
        });
    }
    let topo = b.build().unwrap();
    let fdt = FirmwareTree::from_topology(&topo).unwrap();
    assert_eq!(
        (0..4).map(|c| fdt.hard_id(c)).collect::<Vec<_>>(),
        [Some(0), Some(1), Some(2), Some(3)]
    );
    let mut e = MaskEngine::new(&topo, Algo::Naive).unwrap();
    e.online(3).unwrap();
    assert_eq!(e.masks(3, MaskLevel::Smt).to_list_string(), "3");
    e.online(2).unwrap();
    assert_eq!(e.masks(3, MaskLevel::Smt).to_list_string(), "2-3");
}

/// SMT siblings in different nodes cannot be one per-core firmware node: a
/// clear error naming the CPU and level, not wrong masks.
#[test]
fn siblings_split_across_nodes_are_refused() {
    let mut b = TopologyBuilder::new(Arch::PowerPc64);
    for cpu in 0..4 {
        b.add_cpu(CpuSpec {
            id: cpu,
            hw_id: Some(cpu as u64),
            online: true,
            core: cpu / 2,
            ..CpuSpec::default()
        });
    }
    b.add_node(0, CpuMask::try_from_cpus([0, 2]).unwrap(), None);
    b.add_node(1, CpuMask::try_from_cpus([1, 3]).unwrap(), None);
    let topo = b.build().unwrap();
    let err = MaskEngine::new(&topo, Algo::Scoped).unwrap_err();
    assert_eq!(
        err,
        HotplugError::Unsupported {
            cpu: 1,
            level: MaskLevel::Node,
            reason: "SMT siblings in different NUMA nodes"
        }
    );
    assert_eq!(
        err.to_string(),
        "CPU 1: node masks cannot be maintained incrementally: SMT siblings in different NUMA nodes"
    );
}
