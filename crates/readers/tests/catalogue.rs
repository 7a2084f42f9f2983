//! The catalogue against its seeds: every number a seed prints about a machine
//! must be what the catalogue builds. Where a seed prints lscpu output, that
//! output (cut into lines under tests/data/, checked verbatim against the seed
//! below) is read with the lscpu reader and compared field by field.

use std::path::PathBuf;

use readers::{catalogue, lscpu};
use topology::{CacheKind, LevelKind, Topology};

/// The seed whose file name starts with `prefix` (`000`...), found beside
/// the repository as the corpus is (a worktree's parents hold it too).
fn seed(prefix: &str) -> String {
    readers::corpus::seed_text(env!("CARGO_MANIFEST_DIR"), prefix)
}

fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// (label, value) of every non-comment `Label: value` line.
fn fields(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once(':'))
        .map(|(l, v)| (format!("{}:", l.trim()), v.trim().to_string()))
        .collect()
}

fn build(name: &str) -> Topology {
    catalogue::machine(name).unwrap_or_else(|e| panic!("{e}"))
}

const NAMES: [&str; 11] = [
    "power8-lpar-1024",
    "power-4096-1socket",
    "power9-lpar-128",
    "power10-shared-768",
    "power10-shared-320",
    "x86-2s-12",
    "x86-2s-16",
    "x86-2s-32ht",
    "x86-uv-4096",
    "x86-2n-128",
    "arm64-d06",
];

#[test]
fn the_catalogue_holds_exactly_the_seed_machines() {
    let names: Vec<&str> = catalogue::list().iter().map(|e| e.name).collect();
    assert_eq!(names, NAMES);
    for e in catalogue::list() {
        assert!(e.provenance.contains("Seed"), "{}: no seed facts", e.name);
        assert!(
            e.provenance.contains("Assumed"),
            "{}: no assumptions",
            e.name
        );
        assert!(!e.platform.is_empty() && !e.summary.is_empty());
        let t = build(e.name);
        assert_eq!(t.source(), format!("catalogue:{}", e.name));
        assert!(t.has_distances(), "{}: distances", e.name);
    }
    let err = catalogue::machine("power11-imaginary").unwrap_err();
    assert!(err.to_string().contains("power11-imaginary"), "{err}");
}

#[test]
fn fixtures_are_verbatim_seed_text() {
    for (file, seed_no) in [
        ("seed000-power8-lpar-1024.lscpu", "000"),
        ("seed000-power9-lpar-128.lscpu", "000"),
        ("seed001-power10-shared-768.lscpu", "001"),
        ("seed001-power10-shared-320.lscpu", "001"),
    ] {
        // Seed 001 quotes the lscpu lines with a "# " prefix.
        let text = seed(seed_no).replace("# ", "");
        let mut lines = 0;
        for line in fixture(file).lines().filter(|l| !l.starts_with('#')) {
            assert!(
                text.contains(line),
                "{file}: '{line}' is not in seed {seed_no}"
            );
            lines += 1;
        }
        assert!(lines >= 16, "{file}: only {lines} lines");
    }
}

/// Bytes of an old-style lscpu size (`64K`, `10240K`), parsed independently.
fn old_size(value: &str) -> u64 {
    let kib: u64 = value.strip_suffix('K').expect("K suffix").parse().unwrap();
    kib * 1024
}

fn cache_kind(label: &str) -> (u8, CacheKind) {
    let name = label.strip_suffix(" cache:").unwrap();
    let level = name[1..2].parse().unwrap();
    let kind = match &name[2..] {
        "d" => CacheKind::Data,
        "i" => CacheKind::Instruction,
        _ => CacheKind::Unified,
    };
    (level, kind)
}

#[test]
fn power_lpars_match_the_lscpu_output_in_their_seeds() {
    for (name, file) in [
        ("power8-lpar-1024", "seed000-power8-lpar-1024.lscpu"),
        ("power9-lpar-128", "seed000-power9-lpar-128.lscpu"),
        ("power10-shared-768", "seed001-power10-shared-768.lscpu"),
        ("power10-shared-320", "seed001-power10-shared-320.lscpu"),
    ] {
        let text = fixture(file);
        let ours = build(name);
        let seed_fields = fields(&text);
        let written = lscpu::summary_fields(&ours);
        let mut compared = 0;
        for (label, value) in &seed_fields {
            if label.ends_with(" cache:") && !value.contains("instance") {
                // Old lscpu prints one instance's size.
                let (level, kind) = cache_kind(label);
                let sizes: Vec<Option<u64>> = ours
                    .caches()
                    .iter()
                    .filter(|c| c.level == level && c.kind == kind)
                    .map(|c| c.size_bytes)
                    .collect();
                assert!(!sizes.is_empty(), "{name}: no {label}");
                assert!(
                    sizes.iter().all(|s| *s == Some(old_size(value))),
                    "{name}: {label} {value}"
                );
                compared += 1;
            } else if let Some((_, v)) = written.iter().find(|(l, _)| l == label) {
                assert_eq!(v, value, "{name}: {label}");
                compared += 1;
            }
        }
        // Everything the seed prints that the model holds was compared.
        assert!(
            compared >= seed_fields.len() - 3,
            "{name}: {compared} fields"
        );

        // Reading the seed's lscpu output gives the catalogue's machine.
        let read = lscpu::parse(&text, file).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(lscpu::counts(&read), lscpu::counts(&ours), "{name}: counts");
        assert_eq!(read.nodes().len(), ours.nodes().len());
        for (a, b) in read.nodes().iter().zip(ours.nodes()) {
            assert_eq!((a.id, &a.cpus), (b.id, &b.cpus), "{name}: node");
        }
        for level in [LevelKind::Core, LevelKind::BigCore, LevelKind::Package] {
            let groups = |t: &Topology| {
                t.level(level)
                    .map(|l| l.groups.iter().map(|g| g.cpus.clone()).collect::<Vec<_>>())
            };
            assert_eq!(groups(&read), groups(&ours), "{name}: {level:?} groups");
        }
        assert_eq!(read.model_name(), ours.model_name());
        assert_eq!(read.hypervisor(), ours.hypervisor());
    }
}

#[test]
fn power10_lpars_are_shared_and_power9_has_big_cores() {
    assert!(build("power10-shared-768").shared_processor());
    assert!(build("power10-shared-320").shared_processor());
    let p9 = build("power9-lpar-128");
    assert!(!p9.shared_processor());
    // 2 sockets × 8 SMT8 cores, each two SMT4 thread groups.
    assert_eq!(p9.count(LevelKind::BigCore), 16);
    assert_eq!(p9.count(LevelKind::Core), 32);
    assert_eq!(p9.smt_mask(0).to_list_string(), "0,2,4,6");
    // L2 shared by the big core: the CACHE domain the seed shows above SMT.
    assert_eq!(p9.llc_mask(5).to_list_string(), "0-7");
}

#[test]
fn power_machines_match_seed_000_numbers() {
    let text = seed("000");
    // "Brought up 16 nodes, 1024 CPUs"
    assert!(text.contains("Brought up 16 nodes, 1024 CPUs"));
    let p8 = build("power8-lpar-1024");
    assert_eq!((p8.nodes().len(), p8.online().weight()), (16, 1024));
    // "his 4096 cpu (1024 cores in a socket)"
    assert!(text.contains("4096 cpu (1024 cores in a socket)"));
    let big = build("power-4096-1socket");
    let c = lscpu::counts(&big);
    assert_eq!((c.cpus, c.cores, c.sockets), (4096, 1024, 1));
    assert_eq!(c.threads_per_core, 4096 / 1024);
}

/// One machine's boot log in seed 002.
struct BootLog {
    sockets: u32,
    cores: u32,
    hyperthreads: bool,
    /// (node, CPUs) per "Booting Node" line.
    booted: Vec<(u32, Vec<u32>)>,
    brought_up: Vec<u32>,
}

fn seed_002_logs() -> Vec<BootLog> {
    let mut logs: Vec<BootLog> = Vec::new();
    for line in seed("002").lines() {
        if let Some(head) = line
            .strip_suffix(':')
            .filter(|l| l.contains("cores per socket"))
        {
            // "2 socket, 8 cores per socket, hyperthreaded"
            let words: Vec<&str> = head.split(' ').collect();
            logs.push(BootLog {
                sockets: words[0].parse().unwrap(),
                cores: words[2].parse().unwrap(),
                hyperthreads: !head.ends_with("no hyperthreads"),
                booted: Vec::new(),
                brought_up: Vec::new(),
            });
        } else if let Some(rest) = line.split("Booting Node").nth(1) {
            let (node, cpus) = rest.split_once(", Processors").unwrap();
            let cpus = cpus
                .split_whitespace()
                .filter_map(|w| w.strip_prefix('#'))
                .map(|n| n.parse().unwrap())
                .collect();
            let log = logs.last_mut().unwrap();
            log.booted.push((node.trim().parse().unwrap(), cpus));
        } else if let Some(rest) = line.split("Brought up ").nth(1) {
            let n = rest.split(' ').next().unwrap().parse().unwrap();
            logs.last_mut().unwrap().brought_up.push(n);
        }
    }
    logs
}

#[test]
fn x86_machines_match_seed_002_boot_logs() {
    let logs = seed_002_logs();
    assert_eq!(logs.len(), 4, "four machines in seed 002");
    for log in logs {
        let name = match (log.sockets, log.cores, log.hyperthreads) {
            (2, 6, false) => "x86-2s-12",
            (2, 8, false) => "x86-2s-16",
            (2, 8, true) => "x86-2s-32ht",
            (256, 8, true) => "x86-uv-4096",
            other => panic!("unexpected machine {other:?}"),
        };
        let t = build(name);
        let c = lscpu::counts(&t);
        let threads = if log.hyperthreads { 2 } else { 1 };
        assert_eq!(
            (c.sockets, c.cores_per_socket, c.threads_per_core),
            (log.sockets as usize, log.cores as usize, threads),
            "{name}"
        );
        assert!(!log.brought_up.is_empty());
        for n in &log.brought_up {
            assert_eq!(c.cpus, *n as usize, "{name}: Brought up {n} CPUs");
        }
        assert!(log.booted.len() >= 2);
        // The boot CPU 0 is on node 0; each "Booting Node N" CPU is on node N.
        assert_eq!(t.node_of(0).unwrap().id, 0);
        for (node, cpus) in &log.booted {
            for cpu in cpus {
                assert_eq!(
                    t.node_of(*cpu as usize).map(|n| n.id),
                    Some(*node),
                    "{name}: CPU {cpu} booted on node {node}"
                );
            }
        }
    }
}

#[test]
fn x86_2n_128_matches_seed_003() {
    let text = seed("003");
    let at = text.find(" CPUs split across ").expect("seed 003 sentence");
    let cpus: usize = text[..at].rsplit(' ').next().unwrap().parse().unwrap();
    let nodes: usize = text[at + " CPUs split across ".len()..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let t = build("x86-2n-128");
    assert_eq!((t.online().weight(), t.nodes().len()), (cpus, nodes));
    assert_eq!((cpus, nodes), (128, 2));
}

#[test]
fn arm64_d06_matches_seed_004() {
    let text = seed("004");
    assert!(text.contains("D06 with dimm on node 0(Sock#0) and 3 (Sock#1)"));
    assert!(text.contains("ITS belongs to numa node 0"));
    let t = build("arm64-d06");
    let pkg_of_node = |id: u32| {
        let node = &t.nodes()[t.node_index(id).unwrap()];
        t.cpu(node.cpus.first().unwrap())
            .unwrap()
            .group(LevelKind::Package)
    };
    assert_eq!(pkg_of_node(0), Some(0), "node 0 on socket 0");
    assert_eq!(pkg_of_node(3), Some(1), "node 3 on socket 1");
    let with_memory: Vec<u32> = t
        .nodes()
        .iter()
        .filter(|n| n.memory_bytes.unwrap_or(0) > 0)
        .map(|n| n.id)
        .collect();
    assert_eq!(with_memory, [0, 3]);
    let entry = catalogue::entry("arm64-d06").unwrap();
    assert_eq!(entry.devices.len(), 1);
    assert_eq!(
        (entry.devices[0].kind, entry.devices[0].node),
        ("gicv3-its", 0)
    );
    assert_eq!(t.count(LevelKind::Package), 2);
    assert_eq!(t.max_threads_per_core(), 1);
}
