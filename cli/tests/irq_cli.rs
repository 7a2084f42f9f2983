//! `manycore irq` end to end: the firmware of the committed arm64 Linux 6.12
//! guests (crates/irq/tests/data), whose dmesg put every ITS table on the
//! ITS's node, and the seed-004 D06 catalogue entry.

#[path = "../../crates/irq/tests/common/mod.rs"]
mod capture;
mod common;

use std::path::PathBuf;

use common::{assert_quiet_on_closed_pipe, assert_refused, manycore, stdout};

/// Unpacks `paths` of a guest capture into a fresh directory and returns it.
fn unpack(variant: &str, paths: &[&str]) -> PathBuf {
    unpack_as(variant, variant, paths)
}

/// [`unpack`] into a directory named by `tag`, for a test that edits what it
/// unpacked while another test reads the same capture.
fn unpack_as(tag: &str, variant: &str, paths: &[&str]) -> PathBuf {
    let capture = capture::capture(variant);
    let dir = std::env::temp_dir().join(format!("manycore-irq-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(dir.join("acpi")).unwrap();
    for &p in paths {
        let bytes = capture
            .files
            .get(p)
            .unwrap_or_else(|| panic!("capture {variant} has no {p}"));
        std::fs::write(dir.join(p), bytes).unwrap();
    }
    dir
}

fn json(args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&stdout(args)).unwrap()
}

/// Every table of the one ITS is on `node`, in Linux's allocation order.
fn assert_all_on(v: &serde_json::Value, node: u64) {
    let its = v["its"].as_array().unwrap();
    assert_eq!(its.len(), 1);
    let kinds: Vec<&str> = its[0]["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["command-queue", "device", "collection"]);
    for t in its[0]["tables"].as_array().unwrap() {
        assert_eq!(t["node"], node, "{t}");
    }
}

#[test]
fn device_tree_and_acpi_of_the_guests_give_linux_nodes() {
    // dt-node1 / acpi-its1: the guest's dmesg shows all three tables in node 1's memory.
    let dir = unpack("dt-node1", &["fdt.dtb"]);
    let dtb = dir.join("fdt.dtb");
    let v = json(&["irq", "--dtb", dtb.to_str().unwrap(), "--format", "json"]);
    assert_eq!(v["its"][0]["node"], 1);
    assert_all_on(&v, 1);
    let dir = unpack("acpi-its1", &["acpi/APIC", "acpi/SRAT", "acpi/SLIT"]);
    let acpi = dir.join("acpi");
    let v = json(&["irq", "--acpi", acpi.to_str().unwrap(), "--format", "json"]);
    assert_eq!(v["its"][0]["node"], 1);
    assert_all_on(&v, 1);
    // dt-node2: ITS on memoryless node 2; Linux fell back to node 1.
    let dir = unpack("dt-node2", &["fdt.dtb"]);
    let dtb = dir.join("fdt.dtb");
    let v = json(&["irq", "--dtb", dtb.to_str().unwrap(), "--format", "json"]);
    assert_eq!(
        (
            v["its"][0]["node"].as_u64(),
            v["its"][0]["alloc_node"].as_u64()
        ),
        (Some(2), Some(2))
    );
    assert_all_on(&v, 1);
    let text = manycore(&["irq", "--dtb", dtb.to_str().unwrap()]);
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("numa-node-id = <2> on /intc@8000000/its@8080000"),
        "{text}"
    );
    // QEMU's own ACPI tables: no GIC ITS Affinity, so the boot CPU's node 0.
    let dir = unpack("acpi-qemu", &["acpi/APIC", "acpi/SRAT", "acpi/SLIT"]);
    let acpi = dir.join("acpi");
    let v = json(&["irq", "--acpi", acpi.to_str().unwrap(), "--format", "json"]);
    assert!(v["its"][0]["node"].is_null());
    assert_all_on(&v, 0);
    for variant in ["dt-node1", "acpi-its1", "dt-node2", "acpi-qemu"] {
        let dir =
            std::env::temp_dir().join(format!("manycore-irq-{}-{variant}", std::process::id()));
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[test]
fn d06_its_on_node_0_with_the_seed_consistency_check() {
    // Seed 004: "ITS belongs to numa node 0".
    let v = json(&["irq", "--machine", "arm64-d06", "--format", "json"]);
    assert_eq!(v["its"][0]["node"], 0);
    assert_all_on(&v, 0);
    let s = &v["seed_check"];
    assert_eq!(s["label"], "consistency check, not a prediction");
    let seed = s["seed_saved_ms_per_request"].as_f64().unwrap();
    assert!((seed - (0.02753 - 0.02653)).abs() < 1e-9);
    // The claim is one of order of magnitude, no more.
    for m in s["model_saved_ms_per_request"].as_array().unwrap() {
        let m = m.as_f64().unwrap();
        assert!(
            m > seed / 10.0 && m < seed * 10.0,
            "model {m} ms vs seed {seed} ms"
        );
    }
    let text = String::from_utf8(manycore(&["irq", "--machine", "arm64-d06"]).stdout).unwrap();
    assert!(
        text.contains("seed 004 consistency check (not a prediction)"),
        "{text}"
    );
}

/// A boot CPU that the SRAT places nowhere is on node 0, Linux's fallback
/// (`early_map_cpu_to_node()` in drivers/base/arch_numa.c), and the output
/// says it is a fallback rather than the firmware's word.
#[test]
fn a_boot_cpu_without_a_node_is_a_stated_fallback() {
    let dir = unpack_as(
        "no-boot-node",
        "acpi-its1",
        &["acpi/APIC", "acpi/SRAT", "acpi/SLIT"],
    );
    let acpi = dir.join("acpi");
    let acpi = acpi.to_str().unwrap();
    let v = json(&["irq", "--acpi", acpi, "--format", "json"]);
    assert_eq!(v["boot_node_placed"], true);
    let text = String::from_utf8(manycore(&["irq", "--acpi", acpi]).stdout).unwrap();
    assert!(!text.contains("fallback"), "{text}");
    // Mark every GICC Affinity structure (type 3) of UID 0, the boot CPU,
    // disabled (flags bit 0 clear) and fix the table's checksum.
    let srat_path = dir.join("acpi/SRAT");
    let mut srat = std::fs::read(&srat_path).unwrap();
    let mut at = 48;
    let mut disabled = 0;
    while at + 2 <= srat.len() {
        let len = usize::from(srat[at + 1]);
        assert!(len >= 2, "SRAT structure at {at}");
        if srat[at] == 3 && srat[at + 6..at + 10] == [0, 0, 0, 0] {
            srat[at + 10] &= !1;
            disabled += 1;
        }
        at += len;
    }
    assert_eq!(disabled, 1, "the capture's SRAT places UID 0 once");
    srat[9] = 0;
    let sum = srat.iter().fold(0u8, |s, &b| s.wrapping_add(b));
    srat[9] = sum.wrapping_neg();
    std::fs::write(&srat_path, &srat).unwrap();
    let v = json(&["irq", "--acpi", acpi, "--format", "json"]);
    assert_eq!(
        (v["boot_node"].as_u64(), v["boot_node_placed"].as_bool()),
        (Some(0), Some(false))
    );
    let text = String::from_utf8(manycore(&["irq", "--acpi", acpi]).stdout).unwrap();
    assert!(
        text.contains("boot CPU on node 0 (the firmware gives it no node: the fallback)"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn bad_firmware_is_one_clear_error() {
    let dir = std::env::temp_dir().join(format!("manycore-irq-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let junk = dir.join("junk.dtb");
    std::fs::write(&junk, b"not a device tree at all").unwrap();
    assert_refused(
        &["irq", "--dtb", junk.to_str().unwrap()],
        &["junk.dtb", "header"],
    );
    assert_refused(&["irq", "--acpi", dir.to_str().unwrap()], &["MADT", "APIC"]);
    std::fs::write(dir.join("APIC"), b"APIC\x28\0\0\0").unwrap();
    assert_refused(
        &["irq", "--acpi", dir.to_str().unwrap()],
        &["APIC", "header"],
    );
    assert_refused(
        &["irq", "--machine", "arm64-d06", "--local-ns=-5"],
        &["--local-ns"],
    );
    assert_quiet_on_closed_pipe(&["irq", "--machine", "arm64-d06"], 0);
    let _ = std::fs::remove_dir_all(dir);
}

/// `--device`: each device's ITT and the second-level device-table page go to
/// the node the guest's Linux used (itt-node2: ITS on memoryless node 2, and
/// QEMU's monitor read every ITT and that page out of node 1's memory; see
/// crates/irq/tests/itt.rs), listed in JSON `tables` with their DeviceID.
#[test]
fn device_itts_on_the_node_linux_used() {
    let dir = unpack("itt-node2", &["fdt.dtb"]);
    let dtb = dir.join("fdt.dtb");
    let dtb = dtb.to_str().unwrap();
    let devices = [
        "--device", "0x18:1", "--device", "0x20:1", "--device", "0x100:2",
    ];
    let mut args = vec!["irq", "--dtb", dtb, "--format", "json"];
    args.extend(devices);
    let v = json(&args);
    let tables = v["its"][0]["tables"].as_array().unwrap();
    let kinds: Vec<(&str, Option<u64>)> = tables
        .iter()
        .map(|t| (t["kind"].as_str().unwrap(), t["device"].as_u64()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("command-queue", None),
            ("device", None),
            ("collection", None),
            ("device-l2", Some(0x18)),
            ("itt", Some(0x18)),
            ("itt", Some(0x20)),
            ("itt", Some(0x100)),
        ]
    );
    for t in tables {
        assert_eq!(t["node"], 1, "{t}");
    }
    assert_eq!(tables[4]["entries"], 2);
    let mut args = vec!["irq", "--dtb", dtb];
    args.extend(devices);
    let text = String::from_utf8(manycore(&args).stdout).unwrap();
    assert!(text.contains("(2 entries, device 0x100)"), "{text}");
    assert_refused(
        &["irq", "--dtb", dtb, "--device", "2/0x18:1"],
        &[
            "device 0x18",
            "ITS 2 does not exist",
            "nothing was allocated",
        ],
    );
    assert_refused(
        &["irq", "--dtb", dtb, "--device", "0x10000:1"],
        &["DeviceID 0x10000", "16 DeviceID bits"],
    );
    assert_refused(
        &["irq", "--dtb", dtb, "--device", "0x18"],
        &["--device", "[ITS/]DEVICEID:VECTORS"],
    );
    let _ = std::fs::remove_dir_all(dir);
}
