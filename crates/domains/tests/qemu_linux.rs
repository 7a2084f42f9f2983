//! Real-kernel truth: Debian's Linux 6.12 booted under QEMU with `sched_verbose`
//! (see scripts/domains-capture.sh and tests/data/*.README for the exact commands).
//! manycore reads the guest's own sysfs snapshot and must reproduce every file of
//! the guest's /sys/kernel/debug/sched/domains and every span and group of its
//! sched_verbose log.

use std::path::PathBuf;

use domains::compare::{compare, Dump};
use domains::KernelVersion;
use topology::TopologyBuilder;

#[path = "support/same_as_dump.rs"]
mod same_as_dump;
use same_as_dump::assert_same_as_dump;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// An x86 capture, under Debian's amd64 build options (every CONFIG_SCHED_* on).
fn check(machine: &str) {
    check_debian(machine, "amd64");
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
    assert_same_as_dump(machine, &doms, &dump);
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
    let topo = readers::sysfs::read_path(&data("x86-2s4c2t-sysfs.tar.gz")).unwrap();
    let mut b = TopologyBuilder::from_topology(&topo);
    b.online((0..16).filter(|c| c % 2 == 0).collect());
    let topo = b.finish().unwrap();
    assert_eq!(topo.online(), after.online());
    let dump = Dump::read(&data("x86-2s4c2t-smtoff-domains.tar.gz")).unwrap();
    assert_eq!(
        dump.verbose.len(),
        8,
        "CPUs 1, 3, ... 15 attach NULL domains"
    );

    let options = domains::Options {
        deactivating: Some(15),
        config: debian_config("amd64"),
    };
    let doms = domains::build_with(&topo, KernelVersion::V6_12, &options).unwrap();
    assert_same_as_dump("x86-2s4c2t-smtoff", &doms, &dump);

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
    let n = topo.nodes().len();
    let mut flat = TopologyBuilder::from_topology(&topo);
    let diagonal_kept = |i: usize| {
        if i / n == i % n {
            topo.distances()[i]
        } else {
            20
        }
    };
    flat.distances((0..n * n).map(diagonal_kept).collect());
    let flat = flat.finish().unwrap();
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
        assert_same_as_dump(&format!("kernel {k}"), &doms, &dump);
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

/// Debian's 6.12 build options (the scheduler-topology lines of its config,
/// tests/data/linux-*.config), which decide which levels exist.
fn debian_config(flavour: &str) -> domains::KernelConfig {
    let name = format!("linux-6.12.117+deb12-{flavour}.config");
    let text = std::fs::read_to_string(data(&name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    domains::KernelConfig::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn check_debian(machine: &str, flavour: &str) {
    let options = domains::Options {
        config: debian_config(flavour),
        ..Default::default()
    };
    check_with(machine, &options);
}

/// arm64 virt (GICv3 + ITS, `-cpu neoverse-n1`) booted from QEMU's device tree:
/// its cpu-map gives sockets, clusters, cores and threads; its distance-map the
/// SLIT. Debian builds without CONFIG_SCHED_CLUSTER: SMT, MC (the package), NUMA.
#[test]
fn arm64_dt_two_sockets_clusters_smt2_two_nodes() {
    check_debian("arm64-dt-2s2cl2c2t-2n", "arm64");
}

/// One package split over two nodes (two clusters each): cpu_coregroup_mask()
/// takes the node, the smaller of node and package.
#[test]
fn arm64_dt_one_socket_two_nodes_inside() {
    check_debian("arm64-dt-1s4cl4c-2n", "arm64");
}

/// Four nodes, three remote distances: three overlapping NUMA levels.
#[test]
fn arm64_dt_four_sockets_four_nodes_three_distances() {
    check_debian("arm64-dt-4s2cl2c-4n", "arm64");
}

/// The same machines booted through UEFI, so Linux reads ACPI: PPTT for the
/// topology, SRAT and SLIT for the nodes (the SRAT upgraded from the initrd so
/// that it covers the firmware's flash bank: see tests/data/README.md and
/// tests/acpi_numa.rs).
#[test]
fn arm64_acpi_two_sockets_clusters_smt2() {
    check_debian("arm64-acpi-2s2cl2c2t-2n", "arm64");
}

#[test]
fn arm64_acpi_one_socket_four_clusters() {
    check_debian("arm64-acpi-1s4cl4c-2n", "arm64");
}

#[test]
fn arm64_acpi_four_sockets() {
    check_debian("arm64-acpi-4s2cl2c-4n", "arm64");
}

/// pseries, SMT8 (the most QEMU's TCG allows on pseries), one core per node,
/// FORM2 distance 40: SMT is the whole 8-thread core (QEMU gives no
/// ibm,thread-groups, so no small cores) and the next level is NUMA.
#[test]
fn ppc64_smt8_two_nodes() {
    check_debian("ppc64-1s2c8t-2n", "powerpc64le");
}

/// pseries, SMT4, two cores per node, distance 25 (not a power of two: FORM2).
#[test]
fn ppc64_smt4_two_nodes_form2_distance() {
    check_debian("ppc64-2s2c4t-2n", "powerpc64le");
}

/// pseries, four nodes with distances 15/25/30: three overlapping NUMA levels.
#[test]
fn ppc64_four_nodes_three_distances() {
    check_debian("ppc64-4s1c4t-4n", "powerpc64le");
}

/// The kernel configuration is an input, not an assumption: the same arm64
/// snapshot with CONFIG_SCHED_CLUSTER=y would have had a CLS domain over each
/// cluster and an MC widened to nothing new; the guest (built without it) has
/// none, so every CPU's domain list differs.
#[test]
fn arm64_cluster_level_follows_the_kernel_config() {
    let machine = "arm64-dt-2s2cl2c2t-2n";
    let topo = readers::sysfs::read_path(&data(&format!("{machine}-sysfs.tar.gz"))).unwrap();
    let dump = Dump::read(&data(&format!("{machine}-domains.tar.gz"))).unwrap();
    let config = debian_config("arm64");
    assert!(!config.sched_cluster && config.sched_mc && config.sched_smt);

    let with_cluster = domains::build_with(
        &topo,
        KernelVersion::V6_12,
        &domains::Options {
            config: domains::KernelConfig::ALL_ON,
            ..Default::default()
        },
    )
    .unwrap();
    let cpu0 = with_cluster.cpu(0).unwrap();
    let names: Vec<_> = cpu0.domains.iter().map(|x| with_cluster.name(x)).collect();
    assert_eq!(names, ["SMT", "CLS", "MC", "NUMA"]);
    assert_eq!(with_cluster.span(&cpu0.domains[1]).to_list_string(), "0-3");
    let diffs = compare(&with_cluster, &dump);
    assert!(
        diffs.iter().any(|d| d.what.starts_with("cpu0/domain1/")),
        "{diffs:#?}"
    );
}

/// pseries SMT4, then threads 1-3 of every core taken offline in the guest
/// (1, 2, 3, 5, ... 15 in that order, as `ppc64_cpu --smt=1` does): seed 000's
/// smt=1 step on a real powerpc kernel. As on x86, the last rebuild ran while
/// CPU 15 was being deactivated, so only the intervals of its node's domains
/// still count it; the offline CPUs' topology comes from the all-online snapshot.
#[test]
fn ppc64_smt1_after_boot() {
    let after = readers::sysfs::read_path(&data("ppc64-2s2c4t-2n-smt1-sysfs.tar.gz")).unwrap();
    let topo = readers::sysfs::read_path(&data("ppc64-2s2c4t-2n-sysfs.tar.gz")).unwrap();
    let mut b = TopologyBuilder::from_topology(&topo);
    b.online((0..16).filter(|c| c % 4 == 0).collect());
    let topo = b.finish().unwrap();
    assert_eq!(topo.online(), after.online());
    let dump = Dump::read(&data("ppc64-2s2c4t-2n-smt1-domains.tar.gz")).unwrap();
    assert_eq!(dump.verbose.len(), 4, "CPUs 0, 4, 8, 12 keep domains");

    let config = debian_config("powerpc64le");
    let options = domains::Options {
        deactivating: Some(15),
        config,
    };
    let doms = domains::build_with(&topo, KernelVersion::V6_12, &options).unwrap();
    assert_same_as_dump("ppc64-2s2c4t-2n-smt1", &doms, &dump);
    let names: Vec<_> = doms
        .cpu(0)
        .unwrap()
        .domains
        .iter()
        .map(|x| doms.name(x))
        .collect();
    assert_eq!(
        names,
        ["PKG", "NUMA"],
        "SMT folds away with one thread per core"
    );

    // Without knowing which CPU went last, only intervals differ.
    let options = domains::Options {
        config,
        ..Default::default()
    };
    let diffs = compare(
        &domains::build_with(&after, KernelVersion::V6_12, &options).unwrap(),
        &dump,
    );
    assert!(!diffs.is_empty());
    assert!(
        diffs.iter().all(|d| d.what.ends_with("_interval")),
        "{diffs:#?}"
    );
}
