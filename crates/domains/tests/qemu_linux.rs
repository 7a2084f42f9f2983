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
    let topo = readers::sysfs::read_path(&data(&format!("{machine}-sysfs.tar.gz")))
        .unwrap_or_else(|e| panic!("{machine}: reading the guest's sysfs: {e}"));
    let doms = domains::build(&topo, KernelVersion::V6_12).expect("domains");
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

#[test]
fn four_nodes_inside_two_packages_custom_distances() {
    check("x86-4n-dist");
}

#[test]
fn sixty_four_cpus_eight_nodes_two_remote_distances() {
    check("x86-64c-8n");
}
