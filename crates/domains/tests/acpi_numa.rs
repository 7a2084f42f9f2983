//! The arm64 UEFI + ACPI captures keep their NUMA nodes, so the exact-domains
//! comparison (tests/qemu_linux.rs) covers NUMA levels built from an SRAT and a
//! SLIT, not only from a device tree.
//!
//! Independent truth: each ACPI guest's own kernel log (Linux upgraded the
//! SRAT from the initrd, initialised one distance-table entry per node, faked
//! no node) and the same machine booted through the device tree (same
//! QEMU -numa options, read by Linux from the DT's numa-node-id and
//! distance-map): nodes, CPU-to-node map and distances must agree.

use std::io::Read;
use std::path::PathBuf;

use domains::compare::Dump;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// `dmesg.txt` from a domains capture.
fn dmesg(machine: &str) -> String {
    let path = data(&format!("{machine}-domains.tar.gz"));
    let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(file));
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        if entry.path().unwrap().ends_with("dmesg.txt") {
            let mut text = String::new();
            entry.read_to_string(&mut text).unwrap();
            return text;
        }
    }
    panic!("{path:?}: no dmesg.txt");
}

/// (node of each CPU, node ids, distances) as the guest's sysfs shows them.
fn numa(machine: &str) -> (Vec<Option<u32>>, Vec<u32>, Vec<u32>) {
    let topo = readers::sysfs::read_path(&data(&format!("{machine}-sysfs.tar.gz")))
        .unwrap_or_else(|e| panic!("{machine}: {e}"));
    let node_id = |i: u32| topo.nodes()[i as usize].id;
    (
        topo.cpus().iter().map(|c| c.node.map(node_id)).collect(),
        topo.nodes().iter().map(|n| n.id).collect(),
        topo.distances().to_vec(),
    )
}

fn check(shape: &str, nodes: usize) {
    let acpi = format!("arm64-acpi-{shape}");
    let log = dmesg(&acpi);
    assert!(
        log.contains("ACPI: Table Upgrade: override [SRAT-BOCHS -BXPC    ]"),
        "{acpi}: Linux took the SRAT from the initrd"
    );
    assert!(
        log.contains(&format!("NUMA: Initialized distance table, cnt={nodes}")),
        "{acpi}: Linux read a {nodes}-node SLIT"
    );
    assert!(
        !log.contains("Faking a node") && !log.contains("no nodes coverage"),
        "{acpi}: Linux kept the SRAT"
    );
    for n in 0..nodes {
        assert!(
            log.contains(&format!("ACPI: SRAT: Node {n} PXM {n} [mem ")),
            "{acpi}: SRAT memory of node {n}"
        );
    }

    let (cpu_node, ids, dist) = numa(&acpi);
    assert_eq!(ids.len(), nodes, "{acpi}: nodes in sysfs");
    assert_eq!(
        (cpu_node, ids, dist),
        numa(&format!("arm64-dt-{shape}")),
        "{acpi}: the same nodes, CPU-to-node map and distances as the device-tree boot"
    );

    // Linux built NUMA domains from them: the top domain of cpu0 is NUMA.
    let dump = Dump::read(&data(&format!("{acpi}-domains.tar.gz"))).unwrap();
    let level = |k: &str| {
        k.strip_prefix("cpu0/domain")?
            .strip_suffix("/name")?
            .parse::<u32>()
            .ok()
    };
    let top = dump
        .files
        .iter()
        .filter_map(|(k, v)| Some((level(k)?, v.trim().to_string())))
        .max()
        .map(|(_, name)| name);
    assert_eq!(top.as_deref(), Some("NUMA"), "{acpi}: cpu0's top domain");
}

#[test]
fn acpi_two_sockets_two_nodes() {
    check("2s2cl2c2t-2n", 2);
}

#[test]
fn acpi_two_nodes_inside_one_package() {
    check("1s4cl4c-2n", 2);
}

#[test]
fn acpi_four_nodes_three_distances() {
    check("4s2cl2c-4n", 4);
}
