//! Per-device tables against Debian's arm64 Linux 6.12 under QEMU: the
//! `arm64-its-itt-*` captures (scripts/its-capture.sh) boot the `dt-*`
//! machines with two PCIe root ports and a virtio-serial device, each an ITS
//! device, and the host reads the ITS's device table out of guest memory
//! through QEMU's monitor (`monitor.txt`): for every device Linux mapped, the
//! ITT address and size the ITS itself was given (QEMU's device table entry:
//! Valid bit 0, Size bits 1-5 = EventID bits - 1, ITT address >> 8 in bits
//! 6-49), and the second-level device-table page that entry lives in.
//!
//! manycore is given the devices the guest's /proc/interrupts shows (DeviceID
//! = PCI requester ID, the identity msi-map of QEMU's virt; vectors = the
//! device's ITS-PCI-MSIX interrupts) and must put each ITT and the
//! second-level page on the node Linux did (Linux's address mapped through the
//! firmware's memory ranges), with the number of ITT entries Linux gave the ITS.

mod common;

use std::collections::BTreeMap;

use common::capture;
use irq::place::{place_with_devices, Device};
use irq::tables::{TableKind, QEMU_ITS};

/// Every capture and the node Linux's per-device tables are on.
const CASES: &[(&str, u32)] = &[
    ("itt-qemu", 0),  // no numa-node-id on the ITS: the boot CPU's node
    ("itt-node1", 1), // numa-node-id = <1>
    ("itt-node2", 1), // memoryless node 2: fallback to node 1 (distance 15, not 30)
];

/// What the ITS holds for one device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Dte {
    itt: u64,
    entries: u64,
}

/// The monitor's `xp` words by address.
fn words(monitor: &str) -> BTreeMap<u64, u64> {
    let mut out = BTreeMap::new();
    for line in monitor.lines().filter(|l| !l.starts_with('#')) {
        let (addr, vals) = line.split_once(':').expect("xp line");
        let addr = u64::from_str_radix(addr, 16).unwrap();
        for (i, v) in vals.split_whitespace().enumerate() {
            let v = u64::from_str_radix(v.trim_start_matches("0x"), 16).unwrap();
            out.insert(addr + 8 * i as u64, v);
        }
    }
    out
}

/// The second-level page and every valid device table entry, by DeviceID.
fn device_table(monitor: &str) -> (u64, BTreeMap<u32, Dte>) {
    let w = words(monitor);
    let baser0 = w[&0x0808_0100];
    let l1 = baser0 & 0x0000_ffff_ffff_0000;
    let l1_entry = w[&l1];
    assert_eq!(l1_entry >> 63, 1, "first-level entry 0 is valid");
    let l2 = l1_entry & ((1 << 51) - 1);
    let dtes = w
        .range(l2..l2 + 768 * 8)
        .filter(|(_, &v)| v & 1 == 1)
        .map(|(&a, &v)| {
            let id = ((a - l2) / 8) as u32;
            let bits = ((v >> 1) & 0x1f) + 1;
            let itt = ((v >> 6) & ((1 << 44) - 1)) << 8;
            (
                id,
                Dte {
                    itt,
                    entries: 1 << bits,
                },
            )
        })
        .collect();
    (l2, dtes)
}

/// The guest's MSI devices: DeviceID (requester ID of `0000:BB:DD.F`) and
/// how many ITS-PCI-MSIX interrupts it has.
fn msi_devices(interrupts: &str) -> BTreeMap<u32, u32> {
    let mut out = BTreeMap::new();
    for l in interrupts.lines() {
        let Some(rest) = l.split("ITS-PCI-MSIX-").nth(1) else {
            continue;
        };
        let bdf = rest.split_whitespace().next().unwrap();
        let parts: Vec<u32> = bdf
            .split([':', '.'])
            .map(|x| u32::from_str_radix(x, 16).unwrap())
            .collect();
        let [_, bus, dev, func] = parts[..] else {
            panic!("{bdf}")
        };
        *out.entry(bus << 8 | dev << 3 | func).or_insert(0) += 1;
    }
    out
}

#[test]
fn manycore_places_each_itt_and_device_page_where_linux_did() {
    for &(variant, node) in CASES {
        let c = capture(variant);
        let platform = c.platform();
        let (l2, dtes) = device_table(&c.text("monitor.txt"));
        let msi = msi_devices(&c.text("interrupts.txt"));
        assert_eq!(
            dtes.keys().collect::<Vec<_>>(),
            msi.keys().collect::<Vec<_>>(),
            "{variant}: the ITS maps exactly the guest's MSI devices"
        );
        assert_eq!(msi.len(), 3, "{variant}: two root ports and virtio-serial");

        let devices: Vec<Device> = msi
            .iter()
            .map(|(&id, &vectors)| Device {
                its: 0,
                id,
                vectors,
            })
            .collect();
        let placed = place_with_devices(&platform, &QEMU_ITS, &devices).unwrap();
        let tables = &placed[0].tables;
        let l2_page: Vec<_> = tables
            .iter()
            .filter(|t| t.kind == TableKind::DeviceL2)
            .collect();
        assert_eq!(
            l2_page.len(),
            1,
            "{variant}: one second-level page serves all"
        );
        assert_eq!(
            platform.node_of_addr(l2),
            Some(node),
            "{variant}: Linux's page"
        );
        assert_eq!(l2_page[0].node, node, "{variant}: manycore's page");

        for (id, dte) in &dtes {
            let itt = tables
                .iter()
                .find(|t| t.kind == TableKind::Itt && t.device == Some(*id))
                .unwrap_or_else(|| panic!("{variant}: no ITT for device {id:#x}"));
            assert_eq!(
                platform.node_of_addr(dte.itt),
                Some(node),
                "{variant}: Linux's ITT of device {id:#x} at {:#x}",
                dte.itt
            );
            assert_eq!(
                itt.node, node,
                "{variant}: manycore's ITT of device {id:#x}"
            );
            assert_eq!(
                itt.entries, dte.entries,
                "{variant}: ITT entries of device {id:#x}"
            );
            assert_eq!(dte.itt % 256, 0, "ITS_ITT_ALIGN");
        }
    }
}

/// The ITTs move with the ITS's node: not where the boot CPU is.
#[test]
fn the_itts_move_with_the_its_node() {
    let nodes = |variant: &str| {
        let c = capture(variant);
        let platform = c.platform();
        let (_, dtes) = device_table(&c.text("monitor.txt"));
        dtes.values()
            .map(|d| platform.node_of_addr(d.itt).unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(nodes("itt-qemu"), [0, 0, 0]);
    assert_eq!(nodes("itt-node1"), [1, 1, 1]);
}
