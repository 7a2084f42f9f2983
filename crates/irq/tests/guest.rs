//! manycore's firmware readers and table placement against Debian's arm64
//! Linux 6.12 booted under QEMU's virt machine (GICv3 + ITS, two or three
//! NUMA nodes): the captures in tests/data, made by scripts/its-capture.sh.
//! Each capture holds the firmware the guest booted with, its dmesg (where
//! Linux allocated the ITS's device and collection tables) and the ITS's
//! registers (GITS_CBASER: where the command queue is).

mod common;

use common::{capture, gits_regs, linux_table};
use irq::tables::{TableKind, QEMU_ITS};

const GITS_TYPER: u64 = 0x08;
const GITS_CBASER: u64 = 0x80;
const GITS_BASER0: u64 = 0x100;
const GITS_BASER1: u64 = 0x108;
/// Physical address bits [51:12] of GITS_CBASER / GITS_BASERn (4K and 16K pages;
/// with 64K pages bits [15:12] hold PA[51:48], zero below 256 TiB).
const ADDR: u64 = ((1 << 52) - 1) & !0xfff;

/// Every capture and the node its dmesg shows the ITS's tables on.
const CASES: &[(&str, u32)] = &[
    ("dt-qemu", 0),   // no numa-node-id: NUMA_NO_NODE, the boot CPU's node
    ("dt-node0", 0),  // numa-node-id = <0> added with dtc
    ("dt-node1", 1),  // numa-node-id = <1> added with dtc
    ("dt-node2", 1),  // ITS on memoryless node 2: fallback to node 1 (distance 15, not 30)
    ("acpi-qemu", 0), // QEMU's SRAT: no GIC ITS Affinity (and Linux's NUMA off)
    ("acpi-its0", 0), // GIC ITS Affinity -> PXM 0, through ACPI table upgrade
    ("acpi-its1", 1), // GIC ITS Affinity -> PXM 1
];

/// Where the guest's Linux put each table.
fn linux_addr(variant: &str, kind: TableKind) -> u64 {
    let c = capture(variant);
    let dmesg = c.text("dmesg.txt");
    match kind {
        TableKind::CommandQueue => gits_regs(&c.text("gits-regs.txt"))[&GITS_CBASER] & ADDR,
        TableKind::Device => linux_table(&dmesg, "Devices").addr,
        TableKind::Collection => linux_table(&dmesg, "Interrupt Collections").addr,
        other => panic!("{other:?} is per device: tests/itt.rs"),
    }
}

#[test]
fn manycore_places_every_table_on_the_node_linux_used() {
    for &(variant, node) in CASES {
        let platform = capture(variant).platform();
        let placed = irq::place::place(&platform, &QEMU_ITS).unwrap();
        assert_eq!(placed.len(), 1, "{variant}: one ITS");
        let kinds: Vec<TableKind> = placed[0].tables.iter().map(|t| t.kind).collect();
        assert_eq!(kinds, TableKind::ALL);
        for t in &placed[0].tables {
            let addr = linux_addr(variant, t.kind);
            // Linux's address, mapped through the firmware's own memory ranges.
            let linux_node = platform.node_of_addr(addr).unwrap_or_else(|| {
                panic!(
                    "{variant}: Linux's {} at {addr:#x} is in no firmware range",
                    t.kind.name()
                )
            });
            assert_eq!(
                linux_node,
                node,
                "{variant}: Linux's {} at {addr:#x}",
                t.kind.name()
            );
            assert_eq!(
                t.node,
                linux_node,
                "{variant}: manycore's {}",
                t.kind.name()
            );
        }
    }
}

#[test]
fn the_tables_move_with_the_its_node() {
    for kind in TableKind::ALL {
        for (a, b) in [("dt-node0", "dt-node1"), ("acpi-its0", "acpi-its1")] {
            let (pa, pb) = (capture(a).platform(), capture(b).platform());
            let (na, nb) = (
                pa.node_of_addr(linux_addr(a, kind)),
                pb.node_of_addr(linux_addr(b, kind)),
            );
            assert_eq!((na, nb), (Some(0), Some(1)), "{}: {a} vs {b}", kind.name());
        }
    }
}

#[test]
fn qemu_its_geometry_and_table_sizes_match_the_guest() {
    let c = capture("dt-node1");
    let regs = gits_regs(&c.text("gits-regs.txt"));
    let dmesg = c.text("dmesg.txt");
    let g = QEMU_ITS;
    assert_eq!(
        ((regs[&GITS_TYPER] >> 13) & 0x1f) as u32 + 1,
        g.device_id_bits
    );
    let field = |v: u64, shift: u32, bits: u32| (v >> shift) & ((1 << bits) - 1);
    let page = |v: u64| [4u64 << 10, 16 << 10, 64 << 10][field(v, 8, 2) as usize];
    let (dev, col) = (regs[&GITS_BASER0], regs[&GITS_BASER1]);
    assert_eq!(field(dev, 56, 3), 1, "BASER0 is the device table");
    assert_eq!(field(col, 56, 3), 4, "BASER1 is the collection table");
    assert_eq!(field(regs[&GITS_TYPER], 4, 4) + 1, g.itt_entry);
    assert_eq!(field(dev, 48, 5) + 1, g.device_entry);
    assert_eq!(field(col, 48, 5) + 1, g.collection_entry);
    assert_eq!(field(dev, 62, 1) == 1, g.two_level);
    assert_eq!(page(dev), g.page);

    let [cmdq, device, collection] = g.sizes().unwrap();
    // GITS_CBASER.Size: 4 KiB pages minus one; GITS_BASERn.Size: ITS pages minus one.
    assert_eq!((field(regs[&GITS_CBASER], 0, 8) + 1) * 4096, cmdq.bytes);
    assert_eq!((field(dev, 0, 8) + 1) * page(dev), device.bytes);
    assert_eq!((field(col, 0, 8) + 1) * page(col), collection.bytes);
    let d = linux_table(&dmesg, "Devices");
    let k = linux_table(&dmesg, "Interrupt Collections");
    assert_eq!(
        (d.entries, d.indirect, d.esz, d.psz_kib),
        (device.entries, device.indirect, 8, 64)
    );
    assert_eq!(
        (k.entries, k.indirect, k.esz, k.psz_kib),
        (collection.entries, false, 8, 64)
    );
}

#[test]
fn the_readers_see_the_its_node_where_linux_does() {
    let node = |v: &str| capture(v).platform().its[0].clone();
    let its = node("dt-qemu");
    assert_eq!((its.node, its.base), (None, 0x0808_0000));
    assert!(
        its.node_from.contains("no numa-node-id"),
        "{}",
        its.node_from
    );
    let its = node("dt-node1");
    assert_eq!(its.node, Some(1));
    assert_eq!(
        its.node_from,
        "numa-node-id = <1> on /intc@8000000/its@8080000"
    );
    assert_eq!(node("dt-node2").node, Some(2));
    let its = node("acpi-qemu");
    assert_eq!(its.node, None);
    assert!(
        its.node_from.contains("no GIC ITS Affinity names ITS 0"),
        "{}",
        its.node_from
    );
    // Linux's own line: "SRAT: PXM 1 -> ITS 0 -> Node 1".
    for (v, n) in [("acpi-its0", 0), ("acpi-its1", 1)] {
        let c = capture(v);
        assert!(c
            .text("dmesg.txt")
            .contains(&format!("SRAT: PXM {n} -> ITS 0 -> Node {n}")));
        assert_eq!(c.platform().its[0].node, Some(n));
    }
}

/// "ACPI: SRAT: Node 1 PXM 1 [mem 0x60000000-0x7fffffff]" (ACPI) or, under
/// "Early memory node ranges", "node   1: [mem 0x...-0x...]" (device tree).
fn linux_node_ranges(dmesg: &str, acpi: bool) -> Vec<(u32, u64, u64)> {
    let range = |l: &str| {
        let m = l.split("[mem ").nth(1)?.trim_end_matches(']');
        let (a, b) = m.split_once('-')?;
        let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).ok();
        Some((hex(a)?, hex(b)? + 1))
    };
    let mut out = Vec::new();
    for l in dmesg.lines() {
        let node = if acpi {
            l.split("ACPI: SRAT: Node ")
                .nth(1)
                .and_then(|r| r.split(' ').next())
        } else {
            l.split("  node ")
                .nth(1)
                .and_then(|r| r.trim().split(':').next())
        };
        if let (Some(n), Some((a, b))) = (node.and_then(|n| n.trim().parse().ok()), range(l)) {
            out.push((n, a, b - a));
        }
    }
    out.sort_unstable();
    out
}

#[test]
fn the_readers_memory_ranges_are_linux_node_ranges() {
    for &(variant, _) in CASES {
        if variant == "acpi-qemu" {
            continue; // Linux turned NUMA off there: no per-node ranges to compare
        }
        let c = capture(variant);
        let p = c.platform();
        let mut ours: Vec<(u32, u64, u64)> =
            p.memory.iter().map(|r| (r.node, r.base, r.len)).collect();
        ours.sort_unstable();
        let acpi = variant.starts_with("acpi");
        assert_eq!(
            ours,
            linux_node_ranges(&c.text("dmesg.txt"), acpi),
            "{variant}"
        );
    }
}

#[test]
fn nodemem_falls_back_in_linux_zonelist_order() {
    // "Fallback order for Node 2: 1 0": Linux lists the nodes with memory.
    for &(variant, _) in CASES {
        let c = capture(variant);
        let p = c.platform();
        let mem = p.node_memory().unwrap();
        let mut seen = 0;
        for l in c.text("dmesg.txt").lines() {
            let Some(rest) = l.split("Fallback order for Node ").nth(1) else {
                continue;
            };
            let (node, order) = rest.split_once(':').unwrap();
            let node: u32 = node.parse().unwrap();
            let linux: Vec<u32> = order
                .split_whitespace()
                .map(|n| n.parse().unwrap())
                .collect();
            if variant == "acpi-qemu" {
                assert_eq!(linux, [0]); // NUMA off in the guest
                continue;
            }
            let ours: Vec<u32> = mem
                .fallback_order(node)
                .unwrap()
                .into_iter()
                .filter(|&n| mem.total_bytes(n) > 0)
                .collect();
            assert_eq!(ours, linux, "{variant}: node {node}");
            seen += 1;
        }
        assert!(
            seen >= 1 || variant == "acpi-qemu",
            "{variant}: no fallback order in dmesg"
        );
    }
}

/// The ACPI tables of the 16-CPU arm64 domains guests (crates/domains/tests/data,
/// `arm64-acpi-*-acpi.tar.gz`: QEMU's MADT and SLIT, the SRAT upgraded from
/// the initrd): manycore's ACPI reader gives Linux's node memory ranges, the
/// distances QEMU was asked for (`-numa dist` in each capture's README), and
/// nodemem's fallback order is Linux's.
#[test]
fn the_readers_on_the_acpi_domains_guests() {
    let cases: &[(&str, &[u8])] = &[
        ("arm64-acpi-2s2cl2c2t-2n", &[10, 25, 25, 10]),
        ("arm64-acpi-1s4cl4c-2n", &[10, 16, 16, 10]),
        (
            "arm64-acpi-4s2cl2c-4n",
            &[
                10, 15, 25, 30, 15, 10, 30, 25, 25, 30, 10, 15, 30, 25, 15, 10,
            ],
        ),
    ];
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../domains/tests/data");
    let untar = |path: &str| {
        let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(file));
        let mut files = std::collections::BTreeMap::new();
        for entry in archive.entries().unwrap() {
            let mut entry = entry.unwrap();
            let name = entry.path().unwrap().to_string_lossy().to_string();
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut entry, &mut bytes).unwrap();
            files.insert(name.trim_start_matches("./").to_string(), bytes);
        }
        files
    };
    for &(machine, distance) in cases {
        let tables = untar(&format!("{dir}/{machine}-acpi.tar.gz"));
        let table = |sig: &str| irq::acpi::Table {
            file: format!("{machine}/acpi/{sig}"),
            bytes: tables[&format!("acpi/{sig}")].clone(),
        };
        let p = irq::acpi::parse(&table("APIC"), Some(&table("SRAT")), Some(&table("SLIT")))
            .unwrap_or_else(|e| panic!("{machine}: {e}"));
        let dmesg = untar(&format!("{dir}/{machine}-domains.tar.gz"));
        let dmesg = String::from_utf8(dmesg["dmesg.txt"].clone()).unwrap();
        let mut ours: Vec<(u32, u64, u64)> =
            p.memory.iter().map(|r| (r.node, r.base, r.len)).collect();
        ours.sort_unstable();
        assert_eq!(ours, linux_node_ranges(&dmesg, true), "{machine}");
        assert_eq!(p.distance, distance, "{machine}: SLIT");
        assert_eq!(p.its.len(), 1, "{machine}: QEMU's one ITS");
        assert_eq!(p.its[0].node, None, "{machine}: no GIC ITS Affinity");
        let mem = p.node_memory().unwrap();
        for l in dmesg.lines() {
            let Some(rest) = l.split("Fallback order for Node ").nth(1) else {
                continue;
            };
            let (node, order) = rest.split_once(':').unwrap();
            let linux: Vec<u32> = order
                .split_whitespace()
                .map(|n| n.parse().unwrap())
                .collect();
            assert_eq!(
                mem.fallback_order(node.parse().unwrap()).unwrap(),
                linux,
                "{machine}: node {node}"
            );
        }
    }
}
