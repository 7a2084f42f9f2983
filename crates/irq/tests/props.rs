//! Property tests: the firmware parsers never panic on hostile bytes and
//! always name the file; placement matches an independent slot-counting
//! model, and a failed placement leaves the allocator untouched.

mod common;

use irq::acpi::{self, Table};
use irq::place::{place_devices_in, Device, PlaceError, Placed};
use irq::tables::{Geometry, TableKind, QEMU_ITS};
use irq::{Its, MemRange, Platform};
use proptest::prelude::*;

fn real(variant: &str, path: &str) -> Vec<u8> {
    common::capture(variant).files[path].clone()
}

/// `bytes` with up to 8 bytes overwritten, then maybe cut short.
fn mutated(bytes: Vec<u8>) -> impl Strategy<Value = Vec<u8>> {
    let n = bytes.len();
    (
        proptest::collection::vec((0..n, any::<u8>()), 0..8),
        0..=n,
        any::<bool>(),
    )
        .prop_map(move |(edits, cut, truncate)| {
            let mut b = bytes.clone();
            for (at, v) in edits {
                b[at] = v;
            }
            if truncate {
                b.truncate(cut);
            }
            b
        })
}

/// Recomputes an ACPI table's checksum, so mutations reach the structures.
fn fix_checksum(mut b: Vec<u8>) -> Vec<u8> {
    if b.len() >= 10 {
        b[9] = 0;
        let sum = b.iter().fold(0u8, |s, &x| s.wrapping_add(x));
        b[9] = 0u8.wrapping_sub(sum);
    }
    b
}

fn table(file: &str, bytes: Vec<u8>) -> Table {
    Table {
        file: file.to_string(),
        bytes,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn hostile_dtb_is_an_error_naming_the_file(b in mutated(real("dt-node2", "fdt.dtb"))) {
        if let Err(e) = irq::dt::parse(&b, "guest.dtb") {
            prop_assert_eq!(e.file.as_str(), "guest.dtb");
            prop_assert!(!e.reason.is_empty());
        }
    }

    #[test]
    fn random_bytes_are_not_a_dtb(b in proptest::collection::vec(any::<u8>(), 0..256)) {
        prop_assert!(irq::dt::parse(&b, "x.dtb").is_err());
    }

    #[test]
    fn hostile_acpi_tables_are_an_error_naming_the_file(
        madt in mutated(real("acpi-its1", "acpi/APIC")),
        srat in mutated(real("acpi-its1", "acpi/SRAT")),
        slit in mutated(real("acpi-its1", "acpi/SLIT")),
        fix in any::<bool>(),
    ) {
        let f = |b: Vec<u8>| if fix { fix_checksum(b) } else { b };
        let (m, s, l) = (table("APIC", f(madt)), table("SRAT", f(srat)), table("SLIT", f(slit)));
        match acpi::parse(&m, Some(&s), Some(&l)) {
            Err(e) => prop_assert!(["APIC", "SRAT", "SLIT"].contains(&e.file.as_str())),
            Ok(p) => {
                // Whatever parsed is self-consistent: every ITS node and memory
                // node is one of the platform's nodes.
                for its in &p.its {
                    if let Some(n) = its.node { prop_assert!(p.nodes.contains(&n)); }
                }
                for r in &p.memory { prop_assert!(p.nodes.contains(&r.node)); }
                prop_assert!(p.distance.is_empty() || p.distance.len() == p.nodes.len().pow(2));
            }
        }
    }

    /// A generated SRAT: ITS `i` on proximity domain `its_pxm[i]`; the node
    /// ids Linux would give are the domains' order of first appearance among
    /// the GICC affinities, then the memory affinities.
    #[test]
    fn srat_its_affinity_gives_linux_node_ids(
        cpu_pxm in proptest::collection::vec(0u32..6, 1..6),
        mem_pxm in proptest::collection::vec(0u32..6, 1..6),
        its_pxm in proptest::collection::vec(0u32..8, 1..4),
    ) {
        let (madt, srat) = build_tables(&cpu_pxm, &mem_pxm, &its_pxm);
        let p = acpi::parse(&table("APIC", madt), Some(&table("SRAT", srat)), None).unwrap();
        let mut order: Vec<u32> = Vec::new();
        for &x in cpu_pxm.iter().chain(&mem_pxm) {
            if !order.contains(&x) { order.push(x); }
        }
        for (i, &pxm) in its_pxm.iter().enumerate() {
            let want = order.iter().position(|&x| x == pxm).map(|n| n as u32);
            prop_assert_eq!(p.its[i].node, want, "ITS {} on PXM {}", i, pxm);
        }
        prop_assert_eq!(p.boot_node, 0);
    }
}

fn sdt(sig: &[u8; 4], fixed: &[u8], body: &[u8]) -> Vec<u8> {
    let mut t = sig.to_vec();
    t.extend(((36 + fixed.len() + body.len()) as u32).to_le_bytes());
    t.extend([3, 0]);
    t.extend(*b"MNYCORITSTEST "); // OEM ID (6) and OEM table ID (8)
    t.extend([0; 12]);
    t.extend(fixed);
    t.extend(body);
    fix_checksum(t)
}

fn build_tables(cpu_pxm: &[u32], mem_pxm: &[u32], its_pxm: &[u32]) -> (Vec<u8>, Vec<u8>) {
    let mut madt = Vec::new();
    for uid in 0..cpu_pxm.len() as u32 {
        let mut e = vec![0x0b, 80, 0, 0];
        e.extend(uid.to_le_bytes()); // CPU interface number
        e.extend(uid.to_le_bytes()); // ACPI processor UID
        e.extend(1u32.to_le_bytes()); // enabled
        e.resize(80, 0);
        madt.extend(e);
    }
    for id in 0..its_pxm.len() as u32 {
        let mut e = vec![0x0f, 20, 0, 0];
        e.extend(id.to_le_bytes());
        e.extend((0x0808_0000u64 + 0x20000 * id as u64).to_le_bytes());
        e.extend([0; 4]);
        madt.extend(e);
    }
    let mut srat = Vec::new();
    for (i, &pxm) in its_pxm.iter().enumerate() {
        // ITS affinities first: their order must not create nodes.
        srat.extend([4, 12]);
        srat.extend(pxm.to_le_bytes());
        srat.extend([0, 0]);
        srat.extend((i as u32).to_le_bytes());
    }
    for (i, &pxm) in mem_pxm.iter().enumerate() {
        let mut e = vec![1, 40];
        e.extend(pxm.to_le_bytes());
        e.extend([0, 0]);
        e.extend((0x4000_0000u64 * (i as u64 + 1)).to_le_bytes());
        e.extend(0x1000_0000u64.to_le_bytes());
        e.extend([0; 4]);
        e.extend(1u32.to_le_bytes());
        e.extend([0; 8]);
        srat.extend(e);
    }
    for (uid, &pxm) in cpu_pxm.iter().enumerate() {
        let mut e = vec![3, 18];
        e.extend(pxm.to_le_bytes());
        e.extend((uid as u32).to_le_bytes());
        e.extend(1u32.to_le_bytes());
        e.extend([0; 4]);
        srat.extend(e);
    }
    (
        sdt(b"APIC", &[0; 8], &madt),
        sdt(b"SRAT", &[1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], &srat),
    )
}

const SLOT: u64 = 64 << 10;

/// A platform of `slots.len()` nodes, node `i` holding `slots[i]` 64 KiB slots
/// (0: memoryless) in one 4 MiB-aligned range, with symmetric distances.
fn platform(slots: &[u64], dist: &[u8], its_nodes: &[Option<u32>], boot: u32) -> Platform {
    let k = slots.len();
    let mut d = vec![10u8; k * k];
    let mut next = dist.iter().cycle();
    for i in 0..k {
        for j in i + 1..k {
            let v = *next.next().unwrap();
            d[i * k + j] = v;
            d[j * k + i] = v;
        }
    }
    Platform {
        source: "generated".into(),
        its: its_nodes
            .iter()
            .enumerate()
            .map(|(i, &node)| Its {
                name: format!("ITS {i}"),
                id: i as u32,
                base: 0,
                node,
                node_from: String::new(),
            })
            .collect(),
        memory: slots
            .iter()
            .enumerate()
            .filter(|&(_, &s)| s > 0)
            .map(|(i, &s)| MemRange {
                node: i as u32,
                base: (i as u64 + 1) << 32,
                len: s * SLOT,
            })
            .collect(),
        nodes: (0..k as u32).collect(),
        distance: d,
        boot_node: boot,
        boot_node_placed: true,
    }
}

/// The independent model: each 64 KiB table goes to the nearest node (by
/// distance from the node asked for, ties by lower id) with a slot left.
fn model(p: &Platform, slots: &[u64]) -> Option<Vec<u32>> {
    let mut left = slots.to_vec();
    let mut out = Vec::new();
    for its in &p.its {
        let want = p.alloc_node(its);
        for _ in TableKind::ALL {
            let mut order: Vec<u32> = p.nodes.clone();
            order.sort_by_key(|&n| (if n == want { 0 } else { p.distance(want, n) }, n));
            let n = *order.iter().find(|&&n| left[n as usize] > 0)?;
            left[n as usize] -= 1;
            out.push(n);
        }
    }
    Some(out)
}

/// The model with devices: after the ITS-wide tables, each device takes a
/// slot for a second-level device-table page when its first-level slot
/// (DeviceID / 8192 with 64 KiB pages of 8-byte entries) has none yet, then
/// one for its ITT, each from its ITS's node or the nearest with a slot left.
fn model_devices(p: &Platform, slots: &[u64], devices: &[Device]) -> Option<Vec<u32>> {
    let mut left = slots.to_vec();
    let mut per_its: Vec<Vec<u32>> = vec![Vec::new(); p.its.len()];
    let mut take = |want: u32, out: &mut Vec<u32>| -> Option<()> {
        let mut order: Vec<u32> = p.nodes.clone();
        order.sort_by_key(|&n| (if n == want { 0 } else { p.distance(want, n) }, n));
        let n = *order.iter().find(|&&n| left[n as usize] > 0)?;
        left[n as usize] -= 1;
        out.push(n);
        Some(())
    };
    for (i, its) in p.its.iter().enumerate() {
        for _ in TableKind::ALL {
            take(p.alloc_node(its), &mut per_its[i])?;
        }
    }
    let mut filled: Vec<(usize, u32)> = Vec::new();
    for d in devices {
        let want = p.alloc_node(&p.its[d.its]);
        if !filled.contains(&(d.its, d.id / 8192)) {
            filled.push((d.its, d.id / 8192));
            take(want, &mut per_its[d.its])?;
        }
        take(want, &mut per_its[d.its])?;
    }
    Some(per_its.concat())
}

/// Every table 64 KiB, second-level pages and ITTs too: QEMU's ITS (two-level
/// device table) with 32-byte ITT entries, devices asking for 1024 vectors.
const ALL_SLOTS: Geometry = Geometry {
    itt_entry: 32,
    ..QEMU_ITS
};

/// Every table 64 KiB: QEMU's ITS with a small flat device table.
const SMALL: Geometry = Geometry {
    device_id_bits: 13,
    ..QEMU_ITS
};

/// Places `devices` (none: only the ITS tables) and holds the result to the
/// model's answer `want`: the same node for every table, each inside its
/// node's memory and aligned to its size; or, where the model finds no room,
/// `NoRoom` with nothing allocated. The tables placed, if any.
fn place_as_modelled(
    p: &Platform,
    geometry: &Geometry,
    devices: &[Device],
    want: Option<Vec<u32>>,
) -> Result<Option<Vec<Placed>>, TestCaseError> {
    let mut mem = p.node_memory().unwrap();
    let before: Vec<u64> = p.nodes.iter().map(|&n| mem.free_bytes(n)).collect();
    match (place_devices_in(p, geometry, devices, &mut mem), want) {
        (Ok(placed), Some(want)) => {
            let tables: Vec<Placed> = placed.into_iter().flat_map(|t| t.tables).collect();
            let got: Vec<u32> = tables.iter().map(|x| x.node).collect();
            prop_assert_eq!(got, want);
            for t in &tables {
                prop_assert_eq!(p.node_of_addr(t.addr), Some(t.node));
                prop_assert_eq!(t.addr % t.bytes, 0);
            }
            Ok(Some(tables))
        }
        (Err(PlaceError::NoRoom { .. }), None) => {
            let after: Vec<u64> = p.nodes.iter().map(|&n| mem.free_bytes(n)).collect();
            prop_assert_eq!(after, before, "a failed placement allocated something");
            Ok(None)
        }
        (got, want) => {
            prop_assert!(false, "placement {:?}, model {:?}", got, want);
            Ok(None)
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

    #[test]
    fn placement_is_nearest_node_with_room_or_nothing(
        slots in proptest::collection::vec(0u64..7, 1..6),
        dist in proptest::collection::vec(11u8..60, 1..16),
        its in proptest::collection::vec(proptest::option::weighted(0.8, 0u32..6), 0..5),
        boot in 0u32..6,
    ) {
        let k = slots.len() as u32;
        let its: Vec<Option<u32>> = its.into_iter().map(|n| n.map(|n| n % k)).collect();
        let p = platform(&slots, &dist, &its, boot % k);
        prop_assume!(!p.memory.is_empty());
        prop_assert!(SMALL.sizes().unwrap().iter().all(|s| s.bytes == SLOT));
        place_as_modelled(&p, &SMALL, &[], model(&p, &slots))?;
    }

    #[test]
    fn device_tables_are_nearest_node_with_room_or_nothing(
        slots in proptest::collection::vec(0u64..9, 1..5),
        dist in proptest::collection::vec(11u8..60, 1..16),
        its in proptest::collection::vec(proptest::option::weighted(0.8, 0u32..5), 1..3),
        devices in proptest::collection::vec((0usize..3, 0u32..40000), 0..6),
        boot in 0u32..5,
    ) {
        let k = slots.len() as u32;
        let its: Vec<Option<u32>> = its.into_iter().map(|n| n.map(|n| n % k)).collect();
        let p = platform(&slots, &dist, &its, boot % k);
        prop_assume!(!p.memory.is_empty());
        let devices: Vec<Device> = devices
            .into_iter()
            .map(|(i, id)| Device { its: i % p.its.len(), id, vectors: 1024 })
            .collect();
        prop_assert_eq!(ALL_SLOTS.itt(1024).unwrap().0, SLOT);
        let want = model_devices(&p, &slots, &devices);
        if let Some(placed) = place_as_modelled(&p, &ALL_SLOTS, &devices, want)? {
            let itts = placed.iter().filter(|x| x.kind == TableKind::Itt).count();
            prop_assert_eq!(itts, devices.len());
        }
    }

    #[test]
    fn table_sizes_are_linux_shaped(
        bits in 1u32..=32, dev in 1u64..=32, col in 1u64..=32,
        page in prop_oneof![Just(4u64 << 10), Just(16 << 10), Just(64 << 10)],
        two_level in any::<bool>(),
    ) {
        let g = Geometry { device_id_bits: bits, device_entry: dev, collection_entry: col, page, two_level, itt_entry: 12 };
        for s in g.sizes().unwrap() {
            prop_assert!(s.bytes.is_power_of_two() && s.bytes >= 4096);
            // GITS_BASER_PAGES_MAX and the 4 MiB MAX_PAGE_ORDER block.
            prop_assert!(s.bytes <= (256 * page).max(4 << 20));
            prop_assert!(s.kind == TableKind::CommandQueue || s.bytes >= page);
        }
    }
}
