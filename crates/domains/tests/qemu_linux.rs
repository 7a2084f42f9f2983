//! Real-kernel truth: Debian's Linux 6.12 booted under QEMU with `sched_verbose`
//! (see scripts/domains-capture.sh and tests/data/*.README for the exact commands).
//! manycore reads the guest's own sysfs snapshot and must reproduce every file of
//! the guest's /sys/kernel/debug/sched/domains and every span and group of its
//! sched_verbose log.

use std::path::PathBuf;

use domains::compare::{compare, Dump};
use domains::KernelVersion;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn check(machine: &str) {
    check_with(machine, &domains::Options::default());
}

fn check_with(machine: &str, options: &domains::Options) {
    let topo = readers::sysfs::read_path(&data(&format!("{machine}-sysfs.tar.gz")))
        .unwrap_or_else(|e| panic!("{machine}: reading the guest's sysfs: {e}"));
    let doms = domains::build_with(&topo, KernelVersion::V6_12, options).expect("domains");
    let dump = Dump::read(&data(&format!("{machine}-domains.tar.gz"))).expect("dump");
    assert!(
        !dump.verbose.is_empty(),
        "{machine}: the dump has a sched_verbose log"
    );
    assert_eq!(
        dump.verbose.len(),
        doms.cpus.len(),
        "{machine}: every CPU is in the log"
    );
    let diffs = compare(&doms, &dump);
    let shown: Vec<String> = diffs.iter().take(20).map(|d| d.to_string()).collect();
    assert!(
        diffs.is_empty(),
        "{machine}: {} differences:\n{}",
        diffs.len(),
        shown.join("\n")
    );
}

#[test]
fn two_sockets_smt2_one_node() {
    check("x86-2s4c2t");
}

/// Every second SMT thread taken offline in the guest (`echo 0 > .../online`,
/// CPUs 1, 3, ... 15 in that order): the kernel's last rebuild ran while CPU 15
/// was being deactivated, so the spans hold the 8 remaining CPUs but the
/// intervals of CPU 15's socket still count it (min_interval 5 and 9, not 4 and 8).
/// An offline CPU has no topology in sysfs, so CPU 15's comes from the same
/// machine's snapshot with every CPU online.
#[test]
fn two_sockets_with_smt_threads_offline() {
    let after = readers::sysfs::read_path(&data("x86-2s4c2t-smtoff-sysfs.tar.gz")).unwrap();
    let mut topo = readers::sysfs::read_path(&data("x86-2s4c2t-sysfs.tar.gz")).unwrap();
    topo.online = (0..16).filter(|c| c % 2 == 0).collect();
    assert_eq!(topo.online, after.online);
    let dump = Dump::read(&data("x86-2s4c2t-smtoff-domains.tar.gz")).unwrap();
    assert_eq!(
        dump.verbose.len(),
        8,
        "CPUs 1, 3, ... 15 attach NULL domains"
    );

    let options = domains::Options {
        deactivating: Some(15),
    };
    let doms = domains::build_with(&topo, KernelVersion::V6_12, &options).unwrap();
    let diffs = compare(&doms, &dump);
    assert!(diffs.is_empty(), "{diffs:#?}");

    // Without knowing which CPU went last, only those intervals differ.
    let diffs = compare(
        &domains::build(&after, KernelVersion::V6_12).unwrap(),
        &dump,
    );
    assert!(!diffs.is_empty());
    assert!(
        diffs.iter().all(|d| d.what.ends_with("_interval")),
        "{diffs:#?}"
    );
}

/// `-cpu max` (AuthenticAMD under TCG), one socket, per-thread L2 in sysfs:
/// CLS and PKG fold into SMT and MC.
#[test]
fn one_socket_amd_max_cpu() {
    check("x86-max-modules");
}

#[test]
fn four_nodes_inside_two_packages_custom_distances() {
    check("x86-4n-dist");
}

#[test]
fn sixty_four_cpus_eight_nodes_two_remote_distances() {
    check("x86-64c-8n");
}

/// The comparison is not vacuous: the same dump against another kernel's rules,
/// or against a machine with a different distance matrix, shows differences.
#[test]
fn compare_reports_real_differences() {
    let topo = readers::sysfs::read_path(&data("x86-4n-dist-sysfs.tar.gz")).unwrap();
    let dump = Dump::read(&data("x86-4n-dist-domains.tar.gz")).unwrap();

    let v68 = domains::build(&topo, KernelVersion::V6_8).unwrap();
    let diffs = compare(&v68, &dump);
    assert!(diffs.iter().any(|d| d.what == "cpu0/domain1/flags"
        && d.manycore.contains("SD_SHARE_PKG_RESOURCES")
        && d.kernel.contains("SD_SHARE_LLC")));
    assert!(diffs
        .iter()
        .any(|d| d.what == "cpu0/domain0/level" && d.manycore == "<missing>"));

    // Make every remote distance equal: one NUMA level instead of three.
    let mut flat = topo.clone();
    let n = flat.nodes.len();
    for i in 0..n * n {
        if i / n != i % n {
            flat.distances[i] = 20;
        }
    }
    let diffs = compare(&domains::build(&flat, KernelVersion::V6_12).unwrap(), &dump);
    assert!(diffs.iter().any(|d| d.what.ends_with("(dmesg) domains")));
}

/// `--out` then `--compare` on the same machine finds nothing, in both layouts.
#[test]
fn written_tree_reads_back_identical() {
    let topo = readers::sysfs::read_path(&data("x86-64c-8n-sysfs.tar.gz")).unwrap();
    for k in KernelVersion::ALL {
        let doms = domains::build(&topo, k).unwrap();
        let dir =
            std::env::temp_dir().join(format!("domains-roundtrip-{}-{k}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        domains::render::write_tree(&doms, domains::render::native_layout(k), &dir).unwrap();
        let dump = Dump::read(&dir).unwrap();
        assert_eq!(
            dump.layout(),
            domains::render::native_layout(k),
            "kernel {k}: layout detected from the flags files"
        );
        assert!(compare(&doms, &dump).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// The streamed JSON is the same document as the in-memory one.
#[test]
fn streamed_json_equals_tree() {
    let topo = readers::sysfs::read_path(&data("x86-4n-dist-sysfs.tar.gz")).unwrap();
    let doms = domains::build(&topo, KernelVersion::V6_12).unwrap();
    let cpus: Vec<&domains::CpuDomains> = doms.cpus.iter().collect();
    let mut buf = Vec::new();
    domains::render::write_json(&doms, &cpus, &mut buf).unwrap();
    let streamed: serde_json::Value = serde_json::from_slice(&buf).unwrap();
    assert_eq!(streamed, domains::render::render_json(&doms, &cpus));
    assert_eq!(streamed["cpus"][4]["domains"][3]["span"], "0-7,12-15");
}
