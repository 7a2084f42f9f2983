//! Hostile tables give one error naming the file and field; a placement with
//! no room is one error and allocates nothing; the cost model's arithmetic
//! against the numbers printed in seed 004.

mod common;

use irq::acpi::{self, Table};
use irq::cost::{self, Read};
use irq::place::{place_in, PlaceError};
use irq::tables::{TableKind, QEMU_ITS};
use irq::{Its, MemRange, Platform};

fn acpi_its1(sig: &str) -> Table {
    common::capture("acpi-its1").table(sig).unwrap()
}

fn resum(t: &mut Table) {
    t.bytes[9] = 0;
    let s = t.bytes.iter().fold(0u8, |a, &b| a.wrapping_add(b));
    t.bytes[9] = 0u8.wrapping_sub(s);
}

#[test]
fn corrupt_tables_name_file_and_field() {
    let (madt, slit) = (acpi_its1("APIC"), acpi_its1("SLIT"));
    let mut srat = acpi_its1("SRAT");
    srat.bytes[100] ^= 1;
    let e = acpi::parse(&madt, Some(&srat), Some(&slit)).unwrap_err();
    assert_eq!(
        (e.file.as_str(), e.field.as_str()),
        ("arm64-its-acpi-its1/acpi/SRAT", "SRAT checksum")
    );

    // The GIC ITS Affinity (last, 12 bytes) claiming 40 bytes runs past the end.
    let mut srat = acpi_its1("SRAT");
    let at = srat.bytes.len() - 12;
    assert_eq!(srat.bytes[at], 4);
    srat.bytes[at + 1] = 40;
    resum(&mut srat);
    let e = acpi::parse(&madt, Some(&srat), Some(&slit)).unwrap_err();
    assert!(e.field.contains(&format!("offset {at} (type 4)")), "{e}");

    // The same structure cut to 8 bytes: too short for a GIC ITS Affinity.
    let mut srat = acpi_its1("SRAT");
    srat.bytes[at + 1] = 8;
    srat.bytes.truncate(at + 8);
    let len = srat.bytes.len() as u32;
    srat.bytes[4..8].copy_from_slice(&len.to_le_bytes());
    resum(&mut srat);
    let e = acpi::parse(&madt, Some(&srat), Some(&slit)).unwrap_err();
    assert_eq!(e.field, format!("SRAT GIC ITS Affinity at offset {at}"));

    // A SLIT saying node 0 is 5 from itself: Linux's slit_valid() refuses it.
    let mut bad = slit.clone();
    bad.bytes[44] = 5;
    resum(&mut bad);
    let e = acpi::parse(&madt, Some(&acpi_its1("SRAT")), Some(&bad)).unwrap_err();
    assert_eq!(e.field, "SLIT entry [0][0]");

    // A MADT passed as the SRAT.
    let e = acpi::parse(&madt, Some(&madt), None).unwrap_err();
    assert_eq!(e.field, "SRAT signature");
}

/// More proximity domains than Linux has node ids (`MAX_NUMNODES`, 1024 on
/// arm64): one error naming the domain that would be node 1024.
#[test]
fn more_domains_than_node_ids_is_one_error_naming_the_domain() {
    let (madt, slit) = (acpi_its1("APIC"), acpi_its1("SLIT"));
    let mut srat = acpi_its1("SRAT");
    let before = acpi::parse(&madt, Some(&srat), None).unwrap().nodes.len() as u32;
    // Enabled, empty Memory Affinity structures, each naming a new domain.
    for pxm in 5000..5000 + irq::MAX_NODES {
        let mut m = [0u8; 40];
        m[0] = 1;
        m[1] = 40;
        m[2..6].copy_from_slice(&pxm.to_le_bytes());
        m[28] = 1;
        srat.bytes.extend_from_slice(&m);
    }
    let len = srat.bytes.len() as u32;
    srat.bytes[4..8].copy_from_slice(&len.to_le_bytes());
    resum(&mut srat);
    let e = acpi::parse(&madt, Some(&srat), Some(&slit)).unwrap_err();
    let first_too_many = 5000 + irq::MAX_NODES - before;
    assert_eq!(e.file, "arm64-its-acpi-its1/acpi/SRAT");
    assert_eq!(e.field, format!("SRAT proximity domain {first_too_many}"));
    assert!(e.to_string().contains("more than 1024 nodes"), "{e}");
}

#[test]
fn a_dtb_without_memory_node_ids_is_one_node() {
    // QEMU's tree with every numa-node-id renamed: Linux's NUMA-off view.
    let mut dtb = common::capture("dt-node1").files["fdt.dtb"].clone();
    let needle = b"numa-node-id\0";
    let at: Vec<usize> = (0..dtb.len() - needle.len())
        .filter(|&i| &dtb[i..i + needle.len()] == needle)
        .collect();
    assert_eq!(at.len(), 1, "one name in the strings block");
    dtb[at[0]] = b'x';
    let p = irq::dt::parse(&dtb, "x.dtb").unwrap();
    assert_eq!(p.nodes, [0]);
    assert!(p.memory.iter().all(|r| r.node == 0));
    assert_eq!(p.its[0].node, None);
}

fn tiny(node_bytes: &[u64], its_node: u32) -> Platform {
    Platform {
        source: "tiny".into(),
        its: vec![Its {
            name: "its@8080000".into(),
            id: 0,
            base: 0,
            node: Some(its_node),
            node_from: String::new(),
        }],
        memory: node_bytes
            .iter()
            .enumerate()
            .map(|(i, &len)| MemRange {
                node: i as u32,
                base: (i as u64 + 1) << 30,
                len,
            })
            .collect(),
        nodes: (0..node_bytes.len() as u32).collect(),
        distance: Vec::new(),
        boot_node: 0,
        boot_node_placed: true,
    }
}

#[test]
fn no_room_anywhere_is_one_error_and_nothing_allocated() {
    // Three 64 KiB tables; 128 KiB in all: the third fits nowhere.
    let p = tiny(&[64 << 10, 64 << 10], 1);
    let mut mem = p.node_memory().unwrap();
    let e = place_in(&p, &QEMU_ITS, &mut mem).unwrap_err();
    assert!(
        matches!(
            e,
            PlaceError::NoRoom {
                kind: TableKind::Collection,
                node: 1,
                ..
            }
        ),
        "{e:?}"
    );
    let text = e.to_string();
    assert!(
        text.starts_with(
            "its@8080000: no node has room for its collection (64 KiB, asked on node 1)"
        ),
        "{text}"
    );
    assert!(text.ends_with("nothing was allocated"), "{text}");
    assert_eq!((mem.free_bytes(0), mem.free_bytes(1)), (64 << 10, 64 << 10));
    // With room for exactly three: the ITS's node first, then the other.
    let p = tiny(&[64 << 10, 128 << 10], 1);
    let placed = irq::place::place(&p, &QEMU_ITS).unwrap();
    let nodes: Vec<u32> = placed[0].tables.iter().map(|t| t.node).collect();
    assert_eq!(nodes, [1, 1, 0]);
}

/// A device whose ITT fits nowhere: one error naming the ITS, the device and
/// the table; the ITS-wide tables placed before it are not kept either.
#[test]
fn no_room_for_a_device_itt_is_one_error_and_nothing_allocated() {
    // Room for the three ITS-wide tables and one second-level page, not the ITT.
    let p = tiny(&[128 << 10, 128 << 10], 1);
    let mut mem = p.node_memory().unwrap();
    let dev = irq::place::Device {
        its: 0,
        id: 0x18,
        vectors: 1,
    };
    let e = irq::place::place_devices_in(&p, &QEMU_ITS, &[dev], &mut mem).unwrap_err();
    assert!(
        matches!(
            e,
            PlaceError::NoRoom {
                kind: TableKind::Itt,
                device: Some(0x18),
                ..
            }
        ),
        "{e:?}"
    );
    let text = e.to_string();
    assert!(
        text.starts_with(
            "its@8080000: no node has room for device 0x18's itt (512 bytes, asked on node 1)"
        ),
        "{text}"
    );
    assert_eq!(
        (mem.free_bytes(0), mem.free_bytes(1)),
        (128 << 10, 128 << 10)
    );
    // A device on an ITS that does not exist.
    let bad = irq::place::Device { its: 3, ..dev };
    let e = irq::place::place_devices_in(&p, &QEMU_ITS, &[bad], &mut mem).unwrap_err();
    assert_eq!(
        e.to_string(),
        "device 0x18: ITS 3 does not exist (1 ITSes found); nothing was allocated"
    );
}

#[test]
fn cost_model_arithmetic_on_the_seed_figures() {
    // A read at SLIT distance d costs d/10 of a local one.
    assert_eq!(cost::read_ns(90.0, 10), 90.0);
    assert_eq!(cost::read_ns(90.0, 22), 198.0);
    // Two-level device table: L1 entry, L2 entry, ITT entry, collection entry.
    assert_eq!(
        cost::reads(true),
        [Read::DeviceL1, Read::Device, Read::Itt, Read::Collection]
    );
    // What Linux allocated at device-probe time before seed 004's patch: the
    // second-level device page and the ITT (its_alloc_table_entry, its_create_device).
    let moved: Vec<Read> = cost::reads(true)
        .into_iter()
        .filter(|r| !r.at_boot(true))
        .collect();
    assert_eq!(moved, [Read::Device, Read::Itt]);
    let s = cost::seed_check(90.0, 22, true);
    assert!((s.saved_ns_per_interrupt - 2.0 * (198.0 - 90.0)).abs() < 1e-9);
    // Seed: 0.02753 ms per request is 36324 requests/s; 170K-200K interrupts/s.
    assert!((s.interrupts_per_request.0 - 170_000.0 * 0.02753e-3).abs() < 1e-9);
    assert!((s.interrupts_per_request.1 - 200_000.0 * 0.02753e-3).abs() < 1e-9);
    assert!((s.seed_ms - 0.001).abs() < 1e-12);
    assert!((s.model_ms.0 - 216.0 * 170_000.0 * 0.02753e-3 * 1e-6).abs() < 1e-12);
    // A flat device table: only the ITT moves.
    assert_eq!(
        cost::seed_check(90.0, 22, false).saved_ns_per_interrupt,
        198.0 - 90.0
    );
}
