//! Bad input and fuzzing for the sysfs reader.
//!
//! Snapshots are built in memory as tar (optionally gzip) archives. A generated
//! machine (regular, or irregular from crates/topology/tests/support) is first
//! read back intact and compared, set for set, with the generator's own model
//! (an independent truth: the generator never calls the reader's grouping code),
//! then mutated (files truncated, garbled, deleted, made non-UTF-8) and read
//! again: the reader must never panic, and must either return a consistent
//! topology or one error naming the archive.

#[path = "support/cases.rs"]
mod cases;

use std::collections::BTreeMap;
use std::io::Write;

use cpumask::CpuMask;
use proptest::prelude::*;
use topology::{CacheKind, LevelKind, Topology};

#[path = "../../topology/tests/support/irregular.rs"]
mod irregular;

use irregular::{irregular, Irregular, CLUSTER, CORE, DIE, PACKAGE};

/// A snapshot under construction: path → content, plus symlinks.
#[derive(Debug, Clone, Default)]
struct Tree {
    files: BTreeMap<String, Vec<u8>>,
    links: BTreeMap<String, String>,
}

impl Tree {
    fn file(&mut self, path: &str, text: impl AsRef<[u8]>) {
        self.files.insert(path.to_string(), text.as_ref().to_vec());
    }

    /// A plain tar archive with every path under `top/`.
    fn tar(&self, top: &str) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        for (path, data) in &self.files {
            let mut h = tar::Header::new_gnu();
            h.set_size(data.len() as u64);
            h.set_mode(0o444);
            h.set_entry_type(tar::EntryType::Regular);
            b.append_data(&mut h, format!("{top}/{path}"), &data[..])
                .unwrap();
        }
        for (path, target) in &self.links {
            let mut h = tar::Header::new_gnu();
            h.set_size(0);
            h.set_entry_type(tar::EntryType::Symlink);
            b.append_link(&mut h, format!("{top}/{path}"), target)
                .unwrap();
        }
        b.into_inner().unwrap()
    }

    fn tar_gz(&self, top: &str) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(&self.tar(top)).unwrap();
        e.finish().unwrap()
    }
}

/// A regular machine as the generator sees it.
#[derive(Debug, Clone)]
struct Machine {
    packages: usize,
    cores: usize,
    threads: usize,
    nodes: usize,
    /// Offline CPUs (their topology directory removed, as old kernels do).
    offline: Vec<usize>,
}

impl Machine {
    fn cpus(&self) -> usize {
        self.packages * self.cores * self.threads
    }

    /// Linux numbering with threads last: CPU = thread * (P*C) + package * C + core.
    fn place(&self, cpu: usize) -> (usize, usize, usize) {
        let per_thread = self.packages * self.cores;
        let thread = cpu / per_thread;
        let rest = cpu % per_thread;
        (rest / self.cores, rest % self.cores, thread)
    }

    fn mask(&self, pred: impl Fn(usize) -> bool) -> CpuMask {
        (0..self.cpus()).filter(|&c| pred(c)).collect()
    }

    /// Node of a package: packages are spread round-robin over the nodes.
    fn node_of_package(&self, p: usize) -> usize {
        p % self.nodes
    }

    fn tree(&self) -> Tree {
        let mut t = Tree::default();
        let n = self.cpus();
        let all = format!("0-{}\n", n - 1);
        t.file("sys/devices/system/cpu/possible", &all);
        t.file("sys/devices/system/cpu/present", &all);
        let online = self.mask(|c| !self.offline.contains(&c));
        t.file(
            "sys/devices/system/cpu/online",
            format!("{}\n", online.to_list_string()),
        );
        for cpu in 0..n {
            let dir = format!("sys/devices/system/cpu/cpu{cpu}");
            if cpu != 0 {
                let on = if self.offline.contains(&cpu) {
                    "0"
                } else {
                    "1"
                };
                t.file(&format!("{dir}/online"), format!("{on}\n"));
            }
            if self.offline.contains(&cpu) {
                continue;
            }
            let (p, c, _) = self.place(cpu);
            let topo = format!("{dir}/topology");
            t.file(&format!("{topo}/physical_package_id"), format!("{p}\n"));
            t.file(&format!("{topo}/core_id"), format!("{c}\n"));
            let core = self.mask(|x| {
                let (px, cx, _) = self.place(x);
                px == p && cx == c
            });
            let pkg = self.mask(|x| self.place(x).0 == p);
            t.file(
                &format!("{topo}/thread_siblings"),
                format!("{}\n", core.to_hex_string(n)),
            );
            t.file(
                &format!("{topo}/thread_siblings_list"),
                format!("{}\n", core.to_list_string()),
            );
            t.file(
                &format!("{topo}/core_siblings_list"),
                format!("{}\n", pkg.to_list_string()),
            );
            // L1d per core, L3 per package.
            for (index, level, ty, size, shared) in [
                (0, 1, "Data", "32K", core),
                (1, 3, "Unified", "16384K", pkg),
            ] {
                let c = format!("{dir}/cache/index{index}");
                t.file(&format!("{c}/level"), format!("{level}\n"));
                t.file(&format!("{c}/type"), format!("{ty}\n"));
                t.file(&format!("{c}/size"), format!("{size}\n"));
                t.file(&format!("{c}/coherency_line_size"), "64\n");
                t.file(&format!("{c}/ways_of_associativity"), "8\n");
                t.file(
                    &format!("{c}/shared_cpu_list"),
                    format!("{}\n", shared.to_list_string()),
                );
            }
        }
        for node in 0..self.nodes {
            let cpus = self.mask(|x| self.node_of_package(self.place(x).0) == node);
            let dir = format!("sys/devices/system/node/node{node}");
            t.file(
                &format!("{dir}/cpulist"),
                format!("{}\n", cpus.to_list_string()),
            );
            let row: Vec<String> = (0..self.nodes)
                .map(|o| if o == node { "10".into() } else { "20".into() })
                .collect();
            t.file(&format!("{dir}/distance"), format!("{}\n", row.join(" ")));
            t.file(
                &format!("{dir}/meminfo"),
                format!("Node {node} MemTotal:       {} kB\n", 1024 * (node + 1)),
            );
            // The kernel's per-node CPU links; must not confuse the reader.
            for cpu in cpus.iter() {
                t.links
                    .insert(format!("{dir}/cpu{cpu}"), format!("../../cpu/cpu{cpu}"));
            }
        }
        t.file(
            "proc/cpuinfo",
            (0..n)
                .map(|c| {
                    format!(
                        "processor\t: {c}\nvendor_id\t: GenuineIntel\nflags\t\t: fpu lm\napicid\t\t: {}\n\n",
                        c * 2
                    )
                })
                .collect::<String>(),
        );
        t
    }
}

fn machines() -> impl Strategy<Value = Machine> {
    (1usize..4, 1usize..5, 1usize..3, 1usize..4)
        .prop_flat_map(|(packages, cores, threads, nodes)| {
            let n = packages * cores * threads;
            let nodes = nodes.min(packages);
            (
                Just((packages, cores, threads, nodes)),
                proptest::collection::vec(1..n.max(2), 0..n.min(3)),
            )
        })
        .prop_map(|((packages, cores, threads, nodes), offline)| {
            let n = packages * cores * threads;
            let mut offline: Vec<usize> = offline.into_iter().filter(|&c| c < n).collect();
            offline.sort_unstable();
            offline.dedup();
            Machine {
                packages,
                cores,
                threads,
                nodes,
                offline,
            }
        })
}

/// Invariants every topology the reader returns must satisfy.
fn assert_consistent(t: &Topology) {
    assert!(t.present().is_subset(t.possible()));
    assert!(t.online().is_subset(t.present()));
    assert!(t.known().is_subset(t.possible()));
    for kind in LevelKind::ALL {
        if let Some(level) = t.level(kind) {
            let mut seen = CpuMask::new();
            for g in &level.groups {
                assert!(!g.cpus.intersects(&seen), "{kind:?} groups overlap");
                seen.or_assign(&g.cpus);
            }
            assert_eq!(seen, t.known(), "{kind:?} groups do not cover the CPUs");
        }
    }
    for c in t.caches() {
        assert!(c.cpus.is_subset(t.possible()));
    }
    let mut in_nodes = CpuMask::new();
    for n in t.nodes() {
        assert!(!n.cpus.intersects(&in_nodes), "a CPU in two nodes");
        in_nodes.or_assign(&n.cpus);
    }
}

fn groups(t: &Topology, kind: LevelKind) -> Vec<CpuMask> {
    let mut v: Vec<CpuMask> = t
        .level(kind)
        .unwrap()
        .groups
        .iter()
        .map(|g| g.cpus.to_cpumask())
        .collect();
    v.sort_by_key(|m| m.first());
    v
}

/// One kind of damage applied to one file.
#[derive(Debug, Clone)]
enum Damage {
    Truncate(usize),
    Empty,
    Garble(String),
    NonUtf8,
    Delete,
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        (0usize..8).prop_map(Damage::Truncate),
        Just(Damage::Empty),
        "[-0-9a-zA-Z,:/ \n]{0,12}".prop_map(Damage::Garble),
        Just(Damage::NonUtf8),
        Just(Damage::Delete),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases::fuzz_cases(96), ..ProptestConfig::default() })]

    /// Intact generated snapshots read back as the generator built them.
    #[test]
    fn generated_snapshots_read_back_exactly(m in machines()) {
        let tree = m.tree();
        let t = readers::sysfs::read_archive_bytes(&tree.tar_gz("gen"), "gen.tar.gz")
            .unwrap_or_else(|e| panic!("{m:?}: {e}"));
        assert_consistent(&t);
        let n = m.cpus();
        let online = m.mask(|c| !m.offline.contains(&c));
        prop_assert_eq!(*t.online(), online);
        prop_assert_eq!(*t.possible(), CpuMask::first_n(n));
        prop_assert_eq!(t.known(), online);
        let want_cores: Vec<CpuMask> = {
            let mut v: Vec<CpuMask> = (0..m.packages)
                .flat_map(|p| (0..m.cores).map(move |c| (p, c)))
                .map(|(p, c)| m.mask(|x| {
                    let (px, cx, _) = m.place(x);
                    px == p && cx == c && online.contains(x)
                }))
                .filter(|g| !g.is_empty())
                .collect();
            v.sort_by_key(|g| g.first());
            v
        };
        prop_assert_eq!(groups(&t, LevelKind::Core), want_cores.clone());
        let mut want_packages: Vec<CpuMask> = (0..m.packages)
            .map(|p| m.mask(|x| m.place(x).0 == p && online.contains(x)))
            .filter(|g| !g.is_empty())
            .collect();
        want_packages.sort_by_key(|g| g.first());
        prop_assert_eq!(groups(&t, LevelKind::Package), want_packages);
        prop_assert_eq!(t.nodes().len(), m.nodes);
        for (i, node) in t.nodes().iter().enumerate() {
            prop_assert_eq!(node.id as usize, i);
            prop_assert_eq!(node.memory_bytes, Some(1024 * 1024 * (i as u64 + 1)));
            for j in 0..m.nodes {
                prop_assert_eq!(t.distance(i, j), if i == j { 10 } else { 20 });
            }
        }
        // Caches: one L1d per online core, one L3 per package with online CPUs.
        let l1 = t.caches().iter().filter(|c| c.level == 1).count();
        prop_assert_eq!(l1, want_cores.len());
        let cpu0 = t.cpu(0).unwrap();
        prop_assert_eq!(cpu0.hw_id, Some(0));
    }

    /// Damaged snapshots never panic; they read consistently or fail naming the
    /// archive.
    #[test]
    fn damaged_snapshots_never_panic(
        tree in prop_oneof![
            machines().prop_map(|m| m.tree()),
            (irregular(), arch_source()).prop_map(|(m, arch)| irregular_tree(&m, arch)),
        ],
        hits in proptest::collection::vec((any::<proptest::sample::Index>(), damage()), 1..4),
        gzip in any::<bool>(),
    ) {
        let mut tree = tree;
        for (which, how) in hits {
            let keys: Vec<String> = tree.files.keys().cloned().collect();
            let key = which.get(&keys).clone();
            match how {
                Damage::Truncate(n) => {
                    let f = tree.files.get_mut(&key).unwrap();
                    let keep = n.min(f.len());
                    f.truncate(keep);
                }
                Damage::Empty => tree.file(&key, ""),
                Damage::Garble(s) => tree.file(&key, s),
                Damage::NonUtf8 => tree.file(&key, [0xff, 0xfe, b'1', b'\n']),
                Damage::Delete => {
                    tree.files.remove(&key);
                }
            }
        }
        let bytes = if gzip { tree.tar_gz("dmg") } else { tree.tar("dmg") };
        match readers::sysfs::read_archive_bytes(&bytes, "dmg.tar") {
            Ok(t) => assert_consistent(&t),
            Err(e) => {
                prop_assert!(e.source.starts_with("dmg.tar"), "{e}");
                prop_assert!(!e.message.is_empty());
            }
        }
    }

    /// Arbitrary bytes are rejected, not panicked on.
    #[test]
    fn random_bytes_are_rejected(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let err = readers::sysfs::read_archive_bytes(&bytes, "junk.bin").unwrap_err();
        prop_assert!(err.source.starts_with("junk.bin"));
    }
}

// ---------------------------------------------------------------------------
// Each kind of bad input gets one clear error naming the file and line.
// ---------------------------------------------------------------------------

fn small() -> Tree {
    Machine {
        packages: 2,
        cores: 2,
        threads: 2,
        nodes: 2,
        offline: Vec::new(),
    }
    .tree()
}

fn read(tree: &Tree) -> Result<Topology, readers::Error> {
    readers::sysfs::read_archive_bytes(&tree.tar_gz("m"), "m.tar.gz")
}

#[test]
fn intact_small_machine_reads() {
    let t = read(&small()).unwrap();
    assert_eq!(t.count(LevelKind::Package), 2);
    assert_eq!(t.count(LevelKind::Core), 4);
    assert_eq!(t.nodes().len(), 2);
    assert_eq!(*t.arch(), topology::Arch::X86_64);
}

#[test]
fn truncated_id_file_is_named() {
    let mut tree = small();
    tree.file("sys/devices/system/cpu/cpu3/topology/core_id", "");
    let e = read(&tree).unwrap_err();
    assert_eq!(
        e.source,
        "m.tar.gz:m/sys/devices/system/cpu/cpu3/topology/core_id"
    );
    assert_eq!(e.line, Some(1));
    assert!(e.message.contains("empty"), "{e}");
}

#[test]
fn non_numeric_id_is_named() {
    let mut tree = small();
    tree.file(
        "sys/devices/system/cpu/cpu2/topology/physical_package_id",
        "zero\n",
    );
    let e = read(&tree).unwrap_err();
    assert!(
        e.source.ends_with("cpu2/topology/physical_package_id"),
        "{e}"
    );
    assert!(e.message.contains("\"zero\""), "{e}");
}

#[test]
fn cpu_in_two_nodes_is_named() {
    let mut tree = small();
    tree.file("sys/devices/system/node/node1/cpulist", "0-7\n");
    let e = read(&tree).unwrap_err();
    assert!(e.source.ends_with("node/node1/cpulist"), "{e}");
    assert!(e.message.contains("already in node 0"), "{e}");
}

#[test]
fn reversed_and_huge_cpu_lists_are_named() {
    let mut tree = small();
    tree.file("sys/devices/system/cpu/possible", "3-1\n");
    let e = read(&tree).unwrap_err();
    assert!(e.source.ends_with("cpu/possible"), "{e}");
    assert!(e.message.contains("3-1"), "{e}");

    let mut tree = small();
    tree.file("sys/devices/system/cpu/online", "0-99999999\n");
    let e = read(&tree).unwrap_err();
    assert!(e.source.ends_with("cpu/online"), "{e}");
    assert!(e.message.contains("beyond"), "{e}");
}

#[test]
fn cpu_numbers_beyond_capacity_are_named() {
    let mut tree = small();
    tree.file("sys/devices/system/cpu/cpu16384/topology/core_id", "0\n");
    let e = read(&tree).unwrap_err();
    assert!(e.source.ends_with("cpu/cpu16384"), "{e}");
    assert!(e.message.contains("16384"), "{e}");
}

#[test]
fn non_utf8_file_is_named_with_its_line() {
    let mut tree = small();
    tree.file("proc/cpuinfo", b"processor\t: 0\n\xff\xfe\n".as_slice());
    let e = read(&tree).unwrap_err();
    assert_eq!(e.source, "m.tar.gz:m/proc/cpuinfo");
    assert_eq!(e.line, Some(2));
    assert!(e.message.contains("UTF-8"), "{e}");
}

#[test]
fn bad_distance_row_is_named() {
    let mut tree = small();
    tree.file("sys/devices/system/node/node1/distance", "20\n");
    let e = read(&tree).unwrap_err();
    assert!(e.source.ends_with("node1/distance"), "{e}");
    assert!(e.message.contains("1 distances for 2 nodes"), "{e}");
}

/// A tar header written by hand, so the member name can be one the `tar`
/// crate's builder refuses to write.
fn raw_member(name: &str, data: &[u8]) -> Vec<u8> {
    let mut h = tar::Header::new_old();
    h.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
    h.set_size(data.len() as u64);
    h.set_mode(0o644);
    h.set_entry_type(tar::EntryType::Regular);
    h.set_cksum();
    let mut out = h.as_bytes().to_vec();
    out.extend_from_slice(data);
    out.resize(out.len().div_ceil(512) * 512, 0);
    out
}

fn with_member(name: &str) -> Vec<u8> {
    let mut bytes = small().tar("m");
    // Drop the two zero end-of-archive blocks, append, and close again.
    let end = bytes.len() - 1024;
    bytes.truncate(end);
    bytes.extend(raw_member(name, b"1\n"));
    bytes.extend([0u8; 1024]);
    bytes
}

#[test]
fn absolute_member_paths_are_rejected_by_name() {
    let e = readers::sysfs::read_archive_bytes(&with_member("/etc/evil"), "abs.tar").unwrap_err();
    assert_eq!(e.source, "abs.tar:/etc/evil");
    assert!(e.message.contains("absolute"), "{e}");
}

#[test]
fn dot_dot_member_paths_are_rejected_by_name() {
    let e =
        readers::sysfs::read_archive_bytes(&with_member("m/../../escape"), "up.tar").unwrap_err();
    assert_eq!(e.source, "up.tar:m/../../escape");
    assert!(e.message.contains(".."), "{e}");
}

#[test]
fn corrupt_compression_is_named() {
    let mut gz = small().tar_gz("m");
    let mid = gz.len() / 2;
    gz.truncate(mid);
    let e = readers::sysfs::read_archive_bytes(&gz, "cut.tar.gz").unwrap_err();
    assert_eq!(e.source, "cut.tar.gz");

    let mut bz = b"BZh9".to_vec();
    bz.extend([0x31, 0x41, 0x59, 0x26, 0x53, 0x59, 1, 2, 3, 4, 5]);
    let e = readers::sysfs::read_archive_bytes(&bz, "bad.tar.bz2").unwrap_err();
    assert_eq!(e.source, "bad.tar.bz2");
    assert!(e.message.contains("bzip2"), "{e}");
}

#[test]
fn archive_without_sysfs_is_rejected() {
    let mut tree = Tree::default();
    tree.file("etc/hostname", "x\n");
    let e = readers::sysfs::read_archive_bytes(&tree.tar("x"), "x.tar").unwrap_err();
    assert!(e.message.contains("sys/devices/system/cpu"), "{e}");
}

#[test]
fn symlink_loops_are_errors_not_hangs() {
    let mut tree = small();
    tree.files.remove("sys/devices/system/cpu/possible");
    tree.links
        .insert("sys/devices/system/cpu/possible".into(), "present2".into());
    tree.links
        .insert("sys/devices/system/cpu/present2".into(), "possible".into());
    let e = read(&tree).unwrap_err();
    assert!(e.message.contains("symbolic links"), "{e}");
}

#[test]
fn archive_symlinks_resolve_inside_the_archive() {
    // An absolute link is taken relative to the snapshot root, and `..` stops
    // at the root: `possible` here resolves to the snapshot's own `spare` file.
    let mut tree = small();
    tree.files.remove("sys/devices/system/cpu/possible");
    tree.file("sys/devices/system/cpu/spare", "0-15\n");
    tree.links.insert(
        "sys/devices/system/cpu/possible".into(),
        "/../../../sys/devices/system/cpu/spare".into(),
    );
    let t = read(&tree).unwrap();
    assert_eq!(*t.possible(), CpuMask::first_n(16));
}

#[cfg(unix)]
#[test]
fn directory_symlinks_never_leave_the_root() {
    // Extract the small machine to a directory and point `possible` at a host
    // file: inside the root that path does not exist, so the reader falls back
    // to the CPU directories instead of reading the host's file.
    let dir = tempfile::tempdir().unwrap();
    let tree = small();
    for (path, data) in &tree.files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, data).unwrap();
    }
    let possible = dir.path().join("sys/devices/system/cpu/possible");
    std::fs::remove_file(&possible).unwrap();
    std::os::unix::fs::symlink("/etc/hostname", &possible).unwrap();
    let t = readers::sysfs::read_path(dir.path()).unwrap();
    assert_eq!(*t.possible(), CpuMask::first_n(8));

    // And a relative link climbing out of the root is clamped at the root.
    std::fs::remove_file(&possible).unwrap();
    std::os::unix::fs::symlink("../../../../../../../../../etc/hostname", &possible).unwrap();
    let t = readers::sysfs::read_path(dir.path()).unwrap();
    assert_eq!(*t.possible(), CpuMask::first_n(8));
}

#[test]
fn missing_path_is_named() {
    let e =
        readers::sysfs::read_path(std::path::Path::new("/nonexistent/dump.tar.gz")).unwrap_err();
    assert!(e.source.contains("/nonexistent/dump.tar.gz"));
}

#[test]
fn live_host_matches_proc_cpuinfo() {
    if !std::path::Path::new("/sys/devices/system/cpu").is_dir() {
        println!("skipped: no /sys on this host");
        return;
    }
    let t = readers::sysfs::read_live().unwrap();
    assert_consistent(&t);
    // /proc/cpuinfo has one `processor` block per online CPU: an independent
    // count of what the reader took from sysfs.
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap();
    let processors = cpuinfo
        .lines()
        .filter(|l| l.split(':').next().is_some_and(|k| k.trim() == "processor"))
        .count();
    if processors > 0 {
        assert_eq!(t.online().weight(), processors);
    }
    assert!(!t.cpus().is_empty());
}

#[test]
fn power_shared_processor_lpar_is_detected() {
    let mut tree = small();
    tree.file(
        "proc/cpuinfo",
        "processor\t: 0\ncpu\t\t: POWER10 (architected), altivec supported\nplatform\t: pSeries\n\n",
    );
    tree.file(
        "proc/powerpc/lparcfg",
        "lparcfg 1.9\nshared_processor_mode=1\npartition_entitled_capacity=400\n",
    );
    for cpu in 0..8 {
        // Hardware thread ids, unrelated to the logical numbers.
        tree.file(
            &format!("sys/devices/system/cpu/cpu{cpu}/physical_id"),
            format!("{}\n", 0x100 + cpu),
        );
    }
    let t = read(&tree).unwrap();
    assert_eq!(*t.arch(), topology::Arch::PowerPc64);
    assert_eq!(t.hw_id_kind(), topology::HwIdKind::PowerPir);
    assert_eq!(t.cpu(5).unwrap().hw_id, Some(0x105));
    assert!(t.shared_processor());
    assert_eq!(t.hypervisor(), Some("pHyp"));

    tree.file(
        "proc/powerpc/lparcfg",
        "lparcfg 1.9\nshared_processor_mode=0\n",
    );
    assert!(!read(&tree).unwrap().shared_processor());
}

#[test]
fn hybrid_core_kinds_are_read() {
    let mut tree = small();
    tree.file("sys/devices/cpu_core/cpus", "0-3\n");
    tree.file("sys/devices/cpu_atom/cpus", "4-7\n");
    let t = read(&tree).unwrap();
    let kind = |cpu: usize| {
        let k = t.cpu(cpu).unwrap().kind.unwrap();
        t.core_kinds()[k as usize].name.clone()
    };
    assert_eq!(kind(0), "intel_core");
    assert_eq!(kind(7), "intel_atom");
}

#[test]
fn arm64_capacity_is_read() {
    // `cpu_capacity` comes from the generic arch_topology driver (Arm,
    // RISC-V), so it is read on those architectures.
    let mut tree = small();
    tree.file(
        "proc/cpuinfo",
        (0..8)
            .map(|c| format!("processor\t: {c}\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU part\t: 0xd0c\n\n"))
            .collect::<String>(),
    );
    for cpu in 0..8 {
        let cap = if cpu < 4 { 1024 } else { 512 };
        tree.file(
            &format!("sys/devices/system/cpu/cpu{cpu}/cpu_capacity"),
            format!("{cap}\n"),
        );
    }
    let t = read(&tree).unwrap();
    assert_eq!(*t.arch(), topology::Arch::Arm64);
    assert_eq!(t.cpu(1).unwrap().capacity, Some(1024));
    assert_eq!(t.cpu(6).unwrap().capacity, Some(512));
}

#[test]
fn s390_hypervisor_comes_from_sysinfo() {
    let mut tree = small();
    tree.file(
        "proc/cpuinfo",
        "vendor_id       : IBM/S390\n# processors    : 8\n",
    );
    tree.file(
        "proc/sysinfo",
        "LPAR Number:          1\nVM00 Control Program: z/VM    7.2.0\n",
    );
    let t = read(&tree).unwrap();
    assert_eq!(*t.arch(), topology::Arch::S390x);
    assert_eq!(t.hypervisor(), Some("z/VM"));
}

#[test]
fn memory_only_and_sparse_nodes_are_kept() {
    let mut tree = small();
    // Node 4: memory, no CPUs; node ids 0, 1, 4.
    tree.file("sys/devices/system/node/node4/cpulist", "\n");
    tree.file(
        "sys/devices/system/node/node4/meminfo",
        "Node 4 MemTotal:       2048 kB\n",
    );
    tree.file("sys/devices/system/node/node0/distance", "10 20 40\n");
    tree.file("sys/devices/system/node/node1/distance", "20 10 40\n");
    tree.file("sys/devices/system/node/node4/distance", "40 40 10\n");
    let t = read(&tree).unwrap();
    let ids: Vec<u32> = t.nodes().iter().map(|n| n.id).collect();
    assert_eq!(ids, [0, 1, 4]);
    assert!(t.nodes()[2].cpus.is_empty());
    assert_eq!(t.nodes()[2].memory_bytes, Some(2048 * 1024));
    assert_eq!(t.distance(0, 2), 40);
    assert_eq!(t.distance(2, 2), 10);
}

#[test]
fn cpus_at_the_top_of_capacity_read() {
    // A sparse machine whose only CPUs are the last two the model can hold.
    let mut tree = Tree::default();
    tree.file("sys/devices/system/cpu/possible", "0-16383\n");
    tree.file("sys/devices/system/cpu/present", "16382-16383\n");
    tree.file("sys/devices/system/cpu/online", "16382-16383\n");
    for cpu in [16382, 16383] {
        let d = format!("sys/devices/system/cpu/cpu{cpu}/topology");
        tree.file(&format!("{d}/physical_package_id"), "7\n");
        tree.file(&format!("{d}/core_id"), "1\n");
        tree.file(&format!("{d}/thread_siblings_list"), "16382-16383\n");
        tree.file(&format!("{d}/core_siblings_list"), "16382-16383\n");
    }
    let t = read(&tree).unwrap();
    assert_eq!(t.nr_cpu_ids(), 16384);
    assert_eq!(t.online().to_list_string(), "16382-16383");
    assert_eq!(t.count(LevelKind::Core), 1);
    let pkg = &t.level(LevelKind::Package).unwrap().groups[0];
    assert_eq!(pkg.os_id, Some(7));
}

#[test]
fn single_cpu_clusters_and_per_cpu_dies_are_not_levels() {
    // x86 VMs: cluster_id 65535 and each CPU its own cluster; riscv/arm64: die_id
    // -1 and each CPU its own die. Neither is a level; real clusters are.
    let mut tree = small();
    for cpu in 0..8 {
        let d = format!("sys/devices/system/cpu/cpu{cpu}/topology");
        tree.file(&format!("{d}/cluster_id"), "65535\n");
        tree.file(&format!("{d}/cluster_cpus_list"), format!("{cpu}\n"));
        tree.file(&format!("{d}/die_id"), "-1\n");
        tree.file(&format!("{d}/die_cpus_list"), format!("{cpu}\n"));
    }
    let t = read(&tree).unwrap();
    assert!(t.level(LevelKind::Cluster).is_none());
    assert!(t.level(LevelKind::Die).is_none());

    // Two-core clusters inside each package (package p holds cores p*2..p*2+1
    // in the generator; core c has CPUs c and c+4).
    for cpu in 0..8usize {
        let d = format!("sys/devices/system/cpu/cpu{cpu}/topology");
        let package = (cpu % 4) / 2;
        tree.file(&format!("{d}/cluster_id"), format!("{package}\n"));
        let members = format!(
            "{},{},{},{}",
            package * 2,
            package * 2 + 1,
            package * 2 + 4,
            package * 2 + 5
        );
        tree.file(&format!("{d}/cluster_cpus_list"), format!("{members}\n"));
    }
    let t = read(&tree).unwrap();
    // Here each cluster is its package's CPUs, and its L3's: hwloc merges
    // such a Group into the package, and an x86 cluster that is a cache of
    // the same CPUs is no level either (sysfs_captures' hand-made trees show
    // arm64 clusters that stay).
    assert!(t.level(LevelKind::Cluster).is_none());
}

#[test]
fn empty_online_file_is_named() {
    // An empty `online` would otherwise read as "CPU 0 offline".
    let mut tree = small();
    tree.file("sys/devices/system/cpu/online", "\n");
    let e = read(&tree).unwrap_err();
    assert_eq!(e.source, "m.tar.gz:m/sys/devices/system/cpu/online");
    assert_eq!(e.line, Some(1));
    assert!(e.message.contains("empty CPU list"), "{e}");
}

#[test]
fn online_cpu_outside_possible_is_named() {
    let mut tree = small();
    tree.file("sys/devices/system/cpu/possible", "0-7\n");
    tree.file("sys/devices/system/cpu/online", "0-16383\n");
    let e = read(&tree).unwrap_err();
    assert_eq!(e.source, "m.tar.gz:m/sys/devices/system/cpu/online");
    assert!(e.message.contains("CPU 8 is online but not in"), "{e}");
}

#[test]
fn caches_are_read_when_only_the_first_cpus_cache_directory_is_missing() {
    // A dump that lost cpu0/cache (a partial capture): the other CPUs still
    // describe their caches, so they must not be dropped along with it.
    let mut tree = small();
    tree.files
        .retain(|path, _| !path.starts_with("sys/devices/system/cpu/cpu0/cache/"));
    let t = read(&tree).unwrap();
    // 2 packages x 2 cores: an L3 per package and an L1d per core; cpu0's core
    // keeps its L1d through its SMT sibling.
    let count = |level: u8| t.caches().iter().filter(|c| c.level == level).count();
    assert_eq!(count(3), 2, "{:?}", t.caches());
    assert_eq!(count(1), 4, "{:?}", t.caches());
}

#[test]
fn no_cache_directories_at_all_gives_no_caches() {
    let mut tree = small();
    tree.files.retain(|path, _| !path.contains("/cache/"));
    let t = read(&tree).unwrap();
    assert!(t.caches().is_empty());
    assert_eq!(t.count(LevelKind::Core), 4);
}

// ---------------------------------------------------------------------------
// Irregular machines: every set read back
// ---------------------------------------------------------------------------

/// Where a snapshot's architecture shows.
#[derive(Debug, Clone, Copy, PartialEq)]
enum ArchSource {
    /// x86 `proc/cpuinfo` (with APIC ids).
    X86Cpuinfo,
    /// No cpuinfo; the x86 `cpu/modalias` Linux writes.
    X86Modalias,
    /// No cpuinfo and no sign of any architecture.
    Unknown,
    /// arm64 `proc/cpuinfo`.
    Arm64Cpuinfo,
}

fn arch_source() -> impl Strategy<Value = ArchSource> {
    prop_oneof![
        2 => Just(ArchSource::X86Cpuinfo),
        1 => Just(ArchSource::X86Modalias),
        1 => Just(ArchSource::Unknown),
        1 => Just(ArchSource::Arm64Cpuinfo),
    ]
}

/// `m` as a snapshot written the way Linux writes one: an offline CPU keeps
/// only its `online` file (0, CPU 0 included), and the sibling lists, the
/// caches' `shared_cpu_list` and the nodes' `cpulist` hold online CPUs only
/// (x86 takes a CPU out of them when it goes offline).
fn irregular_tree(m: &Irregular, arch: ArchSource) -> Tree {
    let mut t = Tree::default();
    let cpu_dir = "sys/devices/system/cpu";
    let line = |mask: CpuMask| format!("{}\n", mask.to_list_string());
    t.file(
        &format!("{cpu_dir}/possible"),
        format!("0-{}\n", m.nr_possible - 1),
    );
    t.file(&format!("{cpu_dir}/present"), line(m.present()));
    t.file(&format!("{cpu_dir}/online"), line(m.online()));
    let mut cpuinfo = String::new();
    for pos in 0..m.len() {
        let id = m.ids[pos] as usize;
        let dir = format!("{cpu_dir}/cpu{id}");
        let online = !m.offline.contains(id);
        if id != 0 || !online {
            t.file(&format!("{dir}/online"), if online { "1\n" } else { "0\n" });
        }
        if !online {
            continue;
        }
        cpuinfo.push_str(&match arch {
            ArchSource::Arm64Cpuinfo => format!(
                "processor\t: {id}\nFeatures\t: fp asimd\nCPU implementer\t: 0x41\n\
                 CPU architecture: 8\nCPU part\t: 0xd0c\n\n"
            ),
            _ => format!(
                "processor\t: {id}\nvendor_id\t: GenuineIntel\nflags\t\t: fpu lm\napicid\t\t: {}\n\n",
                pos * 2
            ),
        });
        let topo = format!("{dir}/topology");
        let [p, d, ..] = m.place(pos);
        let list = |level: usize| line(m.group(pos, level, true));
        t.file(&format!("{topo}/physical_package_id"), format!("{p}\n"));
        t.file(&format!("{topo}/core_id"), format!("{}\n", m.core_id(pos)));
        t.file(&format!("{topo}/thread_siblings_list"), list(CORE));
        t.file(&format!("{topo}/core_cpus_list"), list(CORE));
        t.file(&format!("{topo}/core_siblings_list"), list(PACKAGE));
        t.file(&format!("{topo}/package_cpus_list"), list(PACKAGE));
        if m.has_dies {
            t.file(&format!("{topo}/die_id"), format!("{d}\n"));
            t.file(&format!("{topo}/die_cpus_list"), list(DIE));
        }
        if m.has_clusters {
            t.file(
                &format!("{topo}/cluster_id"),
                format!("{}\n", m.cluster_id(pos)),
            );
            t.file(&format!("{topo}/cluster_cpus_list"), list(CLUSTER));
        }
        for (index, level, kind, kb, at) in m.cache_layout() {
            let c = format!("{dir}/cache/index{index}");
            let ty = match kind {
                CacheKind::Data => "Data",
                CacheKind::Instruction => "Instruction",
                CacheKind::Unified => "Unified",
            };
            t.file(&format!("{c}/level"), format!("{level}\n"));
            t.file(&format!("{c}/type"), format!("{ty}\n"));
            t.file(&format!("{c}/size"), format!("{kb}K\n"));
            t.file(&format!("{c}/coherency_line_size"), "64\n");
            t.file(&format!("{c}/ways_of_associativity"), "8\n");
            t.file(&format!("{c}/shared_cpu_list"), list(at));
        }
    }
    match arch {
        ArchSource::X86Cpuinfo | ArchSource::Arm64Cpuinfo => t.file("proc/cpuinfo", cpuinfo),
        ArchSource::X86Modalias => t.file(
            &format!("{cpu_dir}/modalias"),
            "cpu:type:x86,ven0000fam0006mod009A:feature:,0000,0001\n",
        ),
        ArchSource::Unknown => {}
    }
    let nodes = m.node_ids.len();
    for (i, &id) in m.node_ids.iter().enumerate() {
        let dir = format!("sys/devices/system/node/node{id}");
        t.file(&format!("{dir}/cpulist"), line(m.node_cpus(i, true)));
        let row: Vec<String> = (0..nodes).map(|j| m.distance(i, j).to_string()).collect();
        t.file(&format!("{dir}/distance"), format!("{}\n", row.join(" ")));
        t.file(
            &format!("{dir}/meminfo"),
            format!("Node {id} MemTotal:       {} kB\n", m.memory_kb[i]),
        );
    }
    t
}

/// Every set the reader gives back against the generator's own: online,
/// present and possible CPUs; the groups of each level (core and package
/// siblings, dies and clusters where some has two CPUs, as the reader drops
/// levels of single CPUs like hwloc, and dies only where some die is not its
/// package); each node's CPUs, memory and distance
/// row; each cache's CPUs and size; each CPU's node and (from x86 cpuinfo)
/// APIC id.
fn assert_reads_back(m: &Irregular, arch: ArchSource, t: &Topology) -> Result<(), TestCaseError> {
    let online = m.online();
    prop_assert_eq!(*t.online(), online);
    prop_assert_eq!(*t.present(), m.present());
    prop_assert_eq!(*t.possible(), CpuMask::first_n(m.nr_possible as usize));
    prop_assert_eq!(t.known(), online);
    for (kind, level, reported) in [
        (LevelKind::Core, CORE, true),
        (LevelKind::Cluster, CLUSTER, m.has_clusters),
        (LevelKind::Die, DIE, m.has_dies),
        (LevelKind::Package, PACKAGE, true),
    ] {
        let want = m.groups(level);
        // A die level whose every die is its package is merged into the
        // packages, as hwloc does.
        let merged = kind == LevelKind::Die && want == m.groups(PACKAGE);
        // So is a cluster level whose every cluster is a core or a cache
        // of the same CPUs, as hwloc merges it, except on a known
        // architecture other than x86 (arm64's CLS domain is the cluster).
        let cores = m.groups(CORE);
        let caches = m.caches(true);
        let one_core_or_cache = kind == LevelKind::Cluster
            && arch != ArchSource::Arm64Cpuinfo
            && want
                .iter()
                .all(|g| cores.contains(g) || caches.iter().any(|(.., c)| c == g));
        let kept = matches!(kind, LevelKind::Core | LevelKind::Package)
            || (reported && want.iter().any(|g| g.weight() > 1) && !merged && !one_core_or_cache);
        prop_assert_eq!(t.level(kind).is_some(), kept, "{:?} level", kind);
        if kept {
            prop_assert_eq!(groups(t, kind), want, "{:?} groups", kind);
        }
    }
    let ids: Vec<u32> = t.nodes().iter().map(|n| n.id).collect();
    prop_assert_eq!(&ids, &m.node_ids);
    for (i, node) in t.nodes().iter().enumerate() {
        prop_assert_eq!(&node.cpus, &m.node_cpus(i, true), "node {} CPUs", node.id);
        prop_assert_eq!(
            node.memory_bytes,
            Some(m.memory_kb[i] * 1024),
            "node {}",
            node.id
        );
        for j in 0..ids.len() {
            prop_assert_eq!(
                t.distance(i, j),
                m.distance(i, j),
                "distance {} -> {}",
                i,
                j
            );
        }
    }
    let mut got: Vec<(u8, CacheKind, u64, CpuMask)> = t
        .caches()
        .iter()
        .map(|c| {
            (
                c.level,
                c.kind,
                c.size_bytes.unwrap_or(0),
                c.cpus.to_cpumask(),
            )
        })
        .collect();
    got.sort_by_key(|c| (c.0, c.1, c.3.first()));
    prop_assert_eq!(got, m.caches(true), "caches");
    for pos in 0..m.len() {
        let id = m.ids[pos] as usize;
        if !online.contains(id) {
            continue;
        }
        let cpu = t.cpu(id).unwrap();
        prop_assert_eq!(cpu.node, Some(m.node_of(pos) as u32), "cpu{} node", id);
        if arch == ArchSource::X86Cpuinfo {
            prop_assert_eq!(cpu.hw_id, Some(pos as u64 * 2), "cpu{} APIC id", id);
        }
        prop_assert_eq!(
            t.smt_mask(id),
            m.group(pos, CORE, true),
            "cpu{} SMT siblings",
            id
        );
        prop_assert_eq!(
            t.package_mask(id),
            m.group(pos, PACKAGE, true),
            "cpu{} package",
            id
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases::fuzz_cases(128), ..ProptestConfig::default() })]

    /// Irregular snapshots (CPU numbers shuffled and with holes, CPU 0 and
    /// others offline, dies, clusters, sparse interleaved nodes, memory-less
    /// and memory-only nodes, asymmetric SLITs) read back set for set.
    #[test]
    fn irregular_snapshots_read_back_every_set(m in irregular(), arch in arch_source()) {
        let tree = irregular_tree(&m, arch);
        let t = readers::sysfs::read_archive_bytes(&tree.tar_gz("irr"), "irr.tar.gz")
            .map_err(|e| TestCaseError::fail(format!("{e}")))?;
        assert_consistent(&t);
        let want_arch = match arch {
            ArchSource::X86Cpuinfo | ArchSource::X86Modalias => topology::Arch::X86_64,
            ArchSource::Unknown => topology::Arch::Other("unknown".into()),
            ArchSource::Arm64Cpuinfo => topology::Arch::Arm64,
        };
        prop_assert_eq!(t.arch(), &want_arch);
        assert_reads_back(&m, arch, &t)?;
    }
}
