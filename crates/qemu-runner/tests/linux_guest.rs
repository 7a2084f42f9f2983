//! The manycore kernel against a real Linux guest on the same QEMU command
//! line. crates/domains/tests/data (and tests/data here, for an Intel vendor)
//! holds, for each machine, Debian's Linux 6.12 booted under QEMU 10 TCG
//! (scripts/domains-capture.sh): the guest's sysfs
//! snapshot and its scheduler-domain dump (/sys/kernel/debug/sched/domains plus
//! the sched_verbose log). Here the manycore kernel boots with the exact QEMU
//! arguments of that capture (from its README) and must agree with the guest:
//! the caches it reads from CPUID equal the guest's sysfs caches, and every
//! CPU's printed domains — names, spans, flags, groups — equal the guest's.
//! The kernel's model, rebuilt on the host from its `cputopo:` lines, must also
//! reproduce every file of the dump (intervals, imbalance, ...).
//!
//! Needs `qemu-system-x86_64` (10.x, as the captures): without it these tests
//! fail with the install hint rather than pass silently.

mod common;
use common::{assert_domains_match_linux, data, kernel};
use std::time::Duration;

use domains::compare::Dump;

#[path = "../../domains/tests/support/same_as_dump.rs"]
mod same_as_dump;
use qemu_runner::{run_manycore_with_args, Boot, RunOptions, SratRange};
use same_as_dump::assert_same_as_dump;

/// The machine part of the capture's QEMU command line (its README's
/// `command:` line): `-accel ...` and everything after the `-append "..."`
/// string. The kernel, initrd and Linux command line are the capture's own.
fn capture_args(machine: &str) -> Vec<String> {
    let readme_path = data(&format!("{machine}.README"));
    let readme = std::fs::read_to_string(&readme_path)
        .unwrap_or_else(|e| panic!("{}: {e}", readme_path.display()));
    let command = readme
        .lines()
        .find_map(|l| l.strip_prefix("command: "))
        .unwrap_or_else(|| panic!("{}: no 'command:' line", readme_path.display()));
    let words: Vec<&str> = command.split_whitespace().collect();
    let mut args = Vec::new();
    if let Some(i) = words.iter().position(|&w| w == "-accel") {
        args.push("-accel".to_string());
        args.push(words[i + 1].to_string());
    }
    // The -append value is one quoted string without inner quotes.
    let (_, after_append) = command
        .split_once("-append \"")
        .and_then(|(a, rest)| Some((a, rest.split_once('"')?.1)))
        .unwrap_or_else(|| panic!("{}: no -append \"...\"", readme_path.display()));
    args.extend(after_append.split_whitespace().map(str::to_string));
    assert!(
        args.iter().any(|a| a == "-smp"),
        "{machine}: no -smp in {args:?}"
    );
    args
}

fn boot(machine: &str) -> Boot {
    let opts = RunOptions {
        timeout: Duration::from_secs(600),
        ..RunOptions::default()
    };
    let args = capture_args(machine);
    run_manycore_with_args(&kernel(), &args, "calibrate=skip topo_dump", &opts)
        .unwrap_or_else(|e| panic!("{machine}: booting with {args:?}: {e}"))
}

/// Boots the kernel on `machine`'s capture command line and checks it against
/// the guest; returns the boot for further checks.
fn check(machine: &str) -> Boot {
    let b = boot(machine);
    let guest = readers::sysfs::read_path(&data(&format!("{machine}-sysfs.tar.gz")))
        .unwrap_or_else(|e| panic!("{machine}: reading the guest's sysfs: {e}"));
    let dump = Dump::read(&data(&format!("{machine}-domains.tar.gz")))
        .unwrap_or_else(|e| panic!("{machine}: {e}"));
    let ours = qemu_runner::kernel_topology(&b.parsed)
        .unwrap_or_else(|e| panic!("{machine}: the kernel's facts do not build: {e}"));

    // The CPUs and how they group, as both kernels saw them.
    assert_eq!(ours.online(), guest.online(), "{machine}: online CPUs");
    for cpu in guest.online().iter() {
        assert_eq!(
            ours.smt_mask(cpu),
            guest.smt_mask(cpu),
            "{machine}: CPU {cpu} SMT"
        );
        assert_eq!(
            ours.package_mask(cpu),
            guest.package_mask(cpu),
            "{machine}: CPU {cpu} package"
        );
        assert_eq!(
            ours.node_of(cpu).map(|n| (n.id, n.cpus.clone())),
            guest.node_of(cpu).map(|n| (n.id, n.cpus.clone())),
            "{machine}: CPU {cpu} node"
        );
    }
    // Caches from CPUID: every level, size, line, ways and sharing set as
    // the guest's /sys/devices/system/cpu/cpu*/cache shows them.
    assert!(
        !guest.caches().is_empty(),
        "{machine}: the snapshot has caches"
    );
    assert_eq!(
        ours.caches(),
        guest.caches(),
        "{machine}: caches\n{}",
        b.output
    );

    // The hotplug engine kept the boot CPU's masks during bring-up from caches
    // predicted by its own CPUID: its LLC and L2 masks are Linux's
    // cpu_llc_shared_mask and cpu_l2c_shared_mask (the L2 sharers plus the
    // SMT siblings; both cut at the node by topology_sane()).
    let engine_mask = |level: &str| {
        let prefix = format!("hotplug: cpu0 {level} mask ");
        b.output
            .lines()
            .find_map(|l| l.split_once(&prefix).map(|(_, m)| m.trim().to_string()))
            .map(|m| cpumask::CpuMask::parse_list(&m).expect("mask list"))
            .unwrap_or_else(|| {
                panic!(
                    "{machine}: no '{prefix}' line (engine refused?)\n{}",
                    b.output
                )
            })
    };
    let node0 = guest.node_of(0).expect("CPU 0 has a node").cpus.clone();
    assert_eq!(
        engine_mask("llc"),
        guest.llc_mask(0).and(&node0),
        "{machine}: LLC mask"
    );
    let l2 = guest
        .caches_of(0)
        .find(|c| c.level == 2 && c.kind != topology::CacheKind::Instruction)
        .map(|c| c.cpus.clone())
        .expect("an L2");
    assert_eq!(
        engine_mask("l2"),
        l2.or(&guest.smt_mask(0)).and(&node0),
        "{machine}: L2 mask"
    );

    // The domains the kernel printed, CPU by CPU, against the guest's dump.
    let printed = qemu_runner::parse_kernel_domains(&b.parsed.domains)
        .unwrap_or_else(|e| panic!("{machine}: {e}\n{}", b.output));
    let names_seen = assert_domains_match_linux(machine, &printed, &dump);
    // The point of reading caches: x86's MC level (CPUs sharing the LLC),
    // or CLS (sharing the L2) where the L2 spans what the LLC spans.
    assert!(
        names_seen.contains("MC") || names_seen.contains("CLS"),
        "{machine}: {names_seen:?}"
    );

    // Beyond what the kernel prints: its model, rebuilt on the host, gives
    // every file of the dump (min_interval, imbalance_pct, ...).
    let doms = domains::build(&ours, domains::KernelVersion::V6_12).expect("domains");
    assert_same_as_dump(machine, &doms, &dump);
    b
}

/// 2 sockets x 4 cores x 2 threads, one node: MC is the socket's L3.
#[test]
fn two_sockets_smt2_one_node_matches_linux() {
    check("x86-2s4c2t");
}

/// The same CPUs on 4 nodes, two per socket: Linux cuts the socket's L3 at the
/// node (topology_sane), so MC spans 4 CPUs and NUMA levels follow.
#[test]
fn numa_inside_the_package_matches_linux() {
    check("x86-4n-dist");
}

/// `-cpu max` (AuthenticAMD under TCG), one socket of 2 modules x 4 cores x 2
/// threads with the L2 asked per module: the legacy leaves still give a
/// per-CPU L2 (CLS folds into SMT) and a socket-wide L3 (MC = the socket).
#[test]
fn max_cpu_with_modules_matches_linux() {
    check("x86-max-modules");
}

/// 64 CPUs, 8 sockets of 8 cores, one node per socket, distances 16/32.
#[test]
fn sixty_four_cpus_eight_nodes_matches_linux() {
    check("x86-64c-8n");
}

/// vendor=GenuineIntel: caches from leaf 4 (L1 and L2 per core, L3 per
/// socket), so MC is the socket as with AMD, through the other reader.
#[test]
fn intel_leaf_4_two_sockets_matches_linux() {
    check("x86-intel-2s4c2t");
}

/// vendor=GenuineIntel with the L2 asked per socket: leaf 4 says 8 threads
/// share it, Linux's CLS spans the socket and MC (same span) folds away.
#[test]
fn intel_l2_per_socket_gives_linuxs_cls() {
    let b = check("x86-intel-l2socket");
    let printed = qemu_runner::parse_kernel_domains(&b.parsed.domains).expect("domains");
    let names: Vec<&str> = printed.cpus[&0].iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["SMT", "CLS", "PKG"]);
}

/// Proximity domains that run against the CPU order: PXM 1 holds CPUs 0-3
/// (the boot CPU), PXM 0 CPUs 4-7 and the low memory. Linux 6.12 numbers a
/// domain as a node the first time the SRAT names it, CPU entries first
/// (`acpi_map_pxm_to_node`), not by the domain's value, so its node 0 is
/// PXM 1. The kernel's nodes must be the guest's: each CPU's (in `check`)
/// and each memory range's, as both kernels print their SRAT reading.
#[test]
fn nodes_are_numbered_as_linux_numbers_the_srats_domains() {
    let machine = "x86-2n-pxm-reversed";
    let b = check(machine);
    let dmesg = file_in_capture(&format!("{machine}-domains.tar.gz"), "dmesg.txt");
    let linux: Vec<SratRange> = dmesg
        .lines()
        .filter_map(|l| SratRange::parse(l.split_once("] ")?.1))
        .collect();
    assert_eq!(linux.len(), 3, "{machine}: the guest's SRAT lines");
    assert_eq!(b.parsed.srat, linux, "{machine}: SRAT ranges by node");
}

/// The text of the file named `name` (in any directory) inside the capture
/// tarball `capture`.
fn file_in_capture(capture: &str, name: &str) -> String {
    use std::io::Read;
    let path = data(capture);
    let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(file));
    for entry in archive.entries().expect("a tar archive") {
        let mut entry = entry.expect("a tar entry");
        let is_it = entry
            .path()
            .is_ok_and(|p| p.file_name() == Some(name.as_ref()));
        if is_it {
            let mut text = String::new();
            entry.read_to_string(&mut text).expect("UTF-8 text");
            return text;
        }
    }
    panic!("{}: no {name}", path.display())
}
