//! Truth from a running Linux: Debian's Linux 6.12 under QEMU ran k CPU-bound
//! loops for k = 1..CPUs and sampled each loop's CPU (/proc/PID/stat field 39)
//! five times (scripts/place-capture.sh; data in tests/data). The engine, run on
//! the guest's own sysfs snapshot with Linux 6.12's rules, must give the same
//! number of busy cores, packages and nodes for every k. The only tolerance is
//! the guest's own variation: the engine's median must lie within the range of
//! the guest's samples for that k.
use std::path::Path;

use place::run::{machine_for, run, Config};
use place::{HvParams, Kernel, Lpar, MachineOptions, Workload};

struct Sample {
    k: u32,
    shell_cpu: u32,
    cpus: Vec<u32>,
}

fn samples(text: &str) -> Vec<Sample> {
    text.lines()
        .filter(|l| l.starts_with("k="))
        .map(|l| {
            let field = |name: &str| {
                l.split_whitespace()
                    .find_map(|f| f.strip_prefix(name))
                    .unwrap_or_else(|| panic!("{name} missing in {l}"))
            };
            Sample {
                k: field("k=").parse().unwrap(),
                shell_cpu: field("shell_cpu=").parse().unwrap(),
                cpus: field("cpus=")
                    .split(',')
                    .map(|c| c.parse().unwrap())
                    .collect(),
            }
        })
        .collect()
}

/// Where the engine and the guest disagree, found by these tests and not
/// explained yet: (machine, k, what). The test requires this list to be exact,
/// so a new disagreement fails and a fixed one must be removed from it.
///
/// Empty: x86-4n-slit at k = 4 and 5 (the guest runs a loop on every node)
/// came right once `imb_numa_nr` was computed as `build_sched_domains()` does,
/// over every domain built (PKG, removed later as a copy of MC, spans one LLC:
/// allowance 1, so 2 at the top NUMA level), not over the surviving ones
/// (which gave 4 and let fork balancing keep a fourth loop on a busy node pair).
const KNOWN_DISAGREEMENTS: &[(&str, u32, &str)] = &[];

fn check(name: &str) {
    let mut found: Vec<(u32, &str)> = Vec::new();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let topo = readers::sysfs::read_path(&dir.join(format!("{name}-sysfs.tar.gz"))).unwrap();
    let text = std::fs::read_to_string(dir.join(format!("{name}-place.txt"))).unwrap();
    let all = samples(&text);
    let m = machine_for(&topo, Kernel::V6_12, false, &MachineOptions::default()).unwrap();
    let dense = |c: u32| m.cpu_id.iter().position(|&x| x == c).unwrap();
    let count = |v: &[u32], of: &dyn Fn(usize) -> u32| {
        let mut s: Vec<u32> = v.iter().map(|&c| of(dense(c))).collect();
        s.sort_unstable();
        s.dedup();
        s.len() as f64
    };
    let ncpu = m.ncpu() as u32;
    assert_eq!(
        all.iter().map(|s| s.k).max(),
        Some(ncpu),
        "{name}: k up to CPUs"
    );
    for k in 1..=ncpu {
        let ks: Vec<&Sample> = all.iter().filter(|s| s.k == k).collect();
        assert!(ks.len() >= 3, "{name} k={k}: too few samples");
        let range = |of: &dyn Fn(usize) -> u32| {
            let v: Vec<f64> = ks.iter().map(|s| count(&s.cpus, of)).collect();
            (
                v.iter().cloned().fold(f64::MAX, f64::min),
                v.iter().cloned().fold(0.0, f64::max),
            )
        };
        let cores = range(&|c| m.core[c]);
        let packages = range(&|c| m.package[c]);
        let nodes = range(&|c| m.node[c]);
        // As in the guest: k loops from one shell, 3 s to settle, then 5 samples
        // 1 s apart.
        let mut cfg = Config::new(
            Kernel::V6_12,
            HvParams::defaults(Lpar::None, m.vp_cpus.len()),
            Workload::Spin,
            k,
            8.0,
        );
        cfg.sample_ns = 1_000_000_000;
        cfg.warmup = 3.0 / 8.0;
        cfg.start_cpu = Some(ks[0].shell_cpu);
        let r = run(&m, &cfg).unwrap();
        for (what, got, (lo, hi)) in [
            ("cores", r.busy_cores, cores),
            ("packages", r.busy_packages, packages),
            ("nodes", r.busy_nodes, nodes),
        ] {
            if !(lo <= got && got <= hi) {
                eprintln!("{name} k={k}: engine {got} busy {what}, guest {lo}..{hi}");
                found.push((k, what));
            }
        }
    }
    let known: Vec<(u32, &str)> = KNOWN_DISAGREEMENTS
        .iter()
        .filter(|(m, _, _)| *m == name)
        .map(|&(_, k, w)| (k, w))
        .collect();
    assert_eq!(found, known, "{name}: disagreements with the guest changed");
}

#[test]
fn two_sockets_two_nodes_smt() {
    check("x86-2s2c2t-2n");
}

#[test]
fn four_nodes_custom_slit() {
    check("x86-4n-slit");
}

#[test]
fn one_socket_smt() {
    check("x86-1s4c2t");
}

/// A fourth topology — one where x86 asym packing
/// applies — cannot come from a QEMU guest: Linux turns ITMT on only when a
/// cpufreq driver finds per-core highest performance (intel_pstate from HWP,
/// or ACPI CPPC's `_CPC`) and calls `sched_set_itmt_support()`, which also
/// creates /proc/sys/kernel/sched_itmt_enabled. The committed probe
/// (`scripts/place-capture.sh x86-itmt-probe`: Debian's 6.12 on QEMU's
/// `-cpu max`) shows none of that and no SD_ASYM_PACKING in CPU 0's domains.
/// ITMT is checked against its definition instead (`itmt.rs`). Should a
/// QEMU ever give a guest ITMT, this fails and the fourth capture is due.
#[test]
fn qemu_guests_have_no_itmt() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/x86-itmt-probe.txt");
    let text = std::fs::read_to_string(&path).unwrap();
    let line = |key: &str| {
        text.lines()
            .find(|l| l.starts_with(key))
            .unwrap_or_else(|| panic!("{key} missing in {}", path.display()))
    };
    assert!(line("sched_itmt_enabled:").contains("No such file"));
    assert!(line("cpu0 acpi_cppc:").contains("No such file"));
    assert_eq!(line("cpuinfo hwp flags:"), "cpuinfo hwp flags: 0");
    let domains: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("cpu0 domain"))
        .collect();
    assert!(domains.len() >= 2, "{domains:?}");
    for d in &domains {
        assert!(d.contains("SD_BALANCE_NEWIDLE"), "{d}");
        assert!(!d.contains("SD_ASYM_PACKING"), "{d}");
    }
}
