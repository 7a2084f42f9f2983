//! Sysfs captures of real phones, tablets and boards that were not made for
//! this project: the mock file systems pytorch/cpuinfo recorded on each
//! device with its dump tool (`tests/data/captures/`, provenance in
//! `tests/data/SOURCES.md`). Such captures are what people's own collection
//! scripts write: Android hotplugs CPUs while the files are read, so a CPU
//! listed online may have lost its `topology/` directory by the time it is
//! read. The truth is the installed lstopo reading the same files.

#[path = "support/extract.rs"]
mod extract;
#[path = "xml_support/truth.rs"]
mod truth;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use extract::extract;
use readers::sysfs;

fn captures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/captures");
    let mut v: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".tar.xz"))
        .collect();
    v.sort();
    v
}

/// lstopo's XML of a sysfs root. The x86 backend is left out: on an x86
/// host it would add the host's own CPUID caches to an Arm phone's capture.
fn lstopo_xml(root: &Path) -> String {
    let out = Command::new(truth::lstopo())
        .env("HWLOC_COMPONENTS", "-x86")
        .arg("--input")
        .arg(root)
        .args(["--no-io", "--of", "xml", "-"])
        .output()
        .expect("running lstopo");
    assert!(
        out.status.success(),
        "lstopo --input {}: {}",
        root.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("lstopo writes UTF-8")
}

/// Captures where lstopo 2.9 is no truth, and why.
const LSTOPO_MISREADS: &[(&str, &str)] = &[
    (
        "meizu-pro-6",
        "CPU 8's capture kept core_siblings but not thread_siblings, the mask hwloc takes cores from",
    ),
    (
        "moto-g-gen2",
        "CPU 3's capture kept core_siblings but not thread_siblings, the mask hwloc takes cores from",
    ),
    (
        "pixel-8",
        "the capture kept the *_list sibling files but not core_siblings, the mask hwloc takes packages from",
    ),
    (
        "scaleway",
        "the capture kept the *_list sibling files but no mask hwloc reads, nor any online file: lstopo shows 2 of 6 CPUs",
    ),
    (
        "nexus-s",
        "one CPU (possible is 0) without topology/: lstopo's fallback shows two PUs",
    ),
];

#[test]
fn captures_read_as_lstopo_reads_them() {
    let all = captures();
    assert_eq!(all.len(), 82, "captures in tests/data/captures");
    if !truth::have_lstopo(&format!("{} device captures against lstopo", all.len())) {
        return;
    }
    for archive in &all {
        let name = archive.file_name().unwrap().to_string_lossy().to_string();
        if LSTOPO_MISREADS
            .iter()
            .any(|(n, _)| name.strip_suffix(".tar.xz") == Some(n))
        {
            continue;
        }
        let tmp = extract(archive);
        let mut want = truth::expected(&truth::parse_xml(&lstopo_xml(tmp.path())));
        // Without a `node/` directory hwloc invents node 0 holding every
        // PU; the model keeps no node the dump does not show.
        if !tmp.path().join("sys/devices/system/node").exists() {
            want.nodes.clear();
        }
        let topo = sysfs::read_dir(tmp.path()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_facts(&name, &topo, &want);
        // The archive itself reads to the same.
        let packed = sysfs::read_path(archive).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_facts(&format!("{name} (archive)"), &packed, &want);
    }
}

/// The captures lstopo misreads are what `LSTOPO_MISREADS` says of each,
/// and the reader reads every one of them.
#[test]
fn captures_lstopo_misreads_are_what_their_reasons_say() {
    let cpu = |root: &Path, rest: &str| root.join("sys/devices/system/cpu").join(rest);
    let topology_files = |root: &Path, n: usize| -> Vec<String> {
        let dir = cpu(root, &format!("cpu{n}/topology"));
        let mut v: Vec<String> = fs::read_dir(&dir)
            .map(|r| {
                r.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    };
    let hwloc_masks = [
        "thread_siblings",
        "core_cpus",
        "core_siblings",
        "package_cpus",
    ];
    let with_lstopo = truth::have_lstopo("the PUs lstopo shows of two misread captures");
    let lstopo_pus = |root: &Path| {
        truth::expected(&truth::parse_xml(&lstopo_xml(root)))
            .pus
            .len()
    };
    for (name, reason) in LSTOPO_MISREADS {
        let archive = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/captures")
            .join(format!("{name}.tar.xz"));
        let tmp = extract(&archive);
        let root = tmp.path();
        let topo = sysfs::read_path(&archive).unwrap_or_else(|e| panic!("{name}: {e}"));
        let what = format!("{name} ({reason})");
        match *name {
            "meizu-pro-6" | "moto-g-gen2" => {
                let n = if *name == "meizu-pro-6" { 8 } else { 3 };
                let files = topology_files(root, n);
                assert!(
                    files.iter().any(|f| f == "core_siblings"),
                    "{what}: {files:?}"
                );
                assert!(
                    !files
                        .iter()
                        .any(|f| f == "thread_siblings" || f == "core_cpus"),
                    "{what}: {files:?}"
                );
            }
            "pixel-8" => {
                for n in topo.possible().iter() {
                    let files = topology_files(root, n);
                    if files.is_empty() {
                        continue;
                    }
                    assert!(
                        files.iter().any(|f| f == "core_siblings_list"),
                        "{what}: {files:?}"
                    );
                    assert!(
                        !files
                            .iter()
                            .any(|f| f == "core_siblings" || f == "package_cpus"),
                        "{what}: {files:?}"
                    );
                }
            }
            "scaleway" => {
                assert!(!cpu(root, "online").exists(), "{what}: cpu/online");
                for n in 0..6 {
                    assert!(!cpu(root, &format!("cpu{n}/online")).exists(), "{what}");
                    let files = topology_files(root, n);
                    assert!(
                        files.iter().any(|f| f.ends_with("_list")),
                        "{what}: {files:?}"
                    );
                    assert!(
                        !files.iter().any(|f| hwloc_masks.contains(&f.as_str())),
                        "{what}: {files:?}"
                    );
                }
                assert_eq!(topo.online().weight(), 6, "{what}: CPUs read");
                if with_lstopo {
                    assert_eq!(lstopo_pus(root), 2, "{what}: lstopo's PUs");
                }
            }
            "nexus-s" => {
                let possible = fs::read_to_string(cpu(root, "possible")).unwrap();
                assert_eq!(possible.trim(), "0", "{what}: possible");
                assert!(!cpu(root, "cpu0/topology").exists(), "{what}");
                assert_eq!(topo.online().weight(), 1, "{what}: CPUs read");
                if with_lstopo {
                    assert_eq!(lstopo_pus(root), 2, "{what}: lstopo's PUs");
                }
            }
            other => panic!("{other}: no check of its reason"),
        }
    }
}

/// The model's facts on its online CPUs: hwloc's PUs, packages, cores and
/// caches hold only online CPUs, while the model keeps the offline CPUs a
/// dump places.
fn assert_facts(what: &str, topo: &topology::Topology, want: &truth::Facts) {
    let online: truth::Set = topo.online().iter().collect();
    let on = |s: &truth::Set| -> truth::Set { s.intersection(&online).copied().collect() };
    let sets = |v: &[truth::Set]| -> Vec<truth::Set> {
        let mut v: Vec<truth::Set> = v.iter().map(on).filter(|s| !s.is_empty()).collect();
        v.sort();
        v
    };
    let mut got = truth::facts_of(topo, want);
    got.pus = on(&got.pus);
    got.packages = sets(&got.packages);
    got.dies = sets(&got.dies);
    got.clusters = sets(&got.clusters);
    got.cores = sets(&got.cores);
    truth::assert_facts(what, &got, want);
}

/// hwloc's `40intel64-4n10c+pci-conflicts` dump is edited so that CPU 3's
/// `core_siblings` says 0-3 while its `core_siblings_list`, and every other
/// CPU of package 3, say 3,7,...,39. hwloc's expected listing (made by
/// hwloc itself) then puts CPUs 3,7,...,39 in no Package at all; a model
/// whose every CPU has a package cannot say that, so the reader refuses the
/// dump: one error naming a CPU whose package mask contradicts another's.
#[test]
fn contradicting_package_masks_are_one_error() {
    let corpus = truth::corpus();
    if !truth::have_corpus("hwloc's pci-conflicts dump against its expected listing") {
        return;
    }
    let dir = corpus.join("hwloc/tests/hwloc/linux");
    let listing = fs::read_to_string(dir.join("40intel64-4n10c+pci-conflicts.console")).unwrap();
    let t = truth::parse_console(&listing);
    let outside: Vec<u32> = t
        .objects
        .iter()
        .filter(|o| o.ty == "PU")
        .filter(|o| {
            let mut p = o.parent;
            while let Some(j) = p {
                if t.objects[j].ty == "Package" {
                    return false;
                }
                p = t.objects[j].parent;
            }
            true
        })
        .filter_map(|o| o.os_index)
        .collect();
    let want: Vec<u32> = (3..40).step_by(4).collect();
    assert_eq!(outside, want, "PUs hwloc places in no Package");
    let text = match sysfs::read_path(&dir.join("40intel64-4n10c+pci-conflicts.tar.bz2")) {
        Ok(_) => panic!("a dump whose package masks contradict each other must not read"),
        Err(e) => e.to_string(),
    };
    // Both CPUs' mask files are named: CPU 3's edited one, and that of a
    // CPU of package 3 whose mask disagrees with it.
    assert!(text.contains("package sibling masks"), "{text}");
    let named: Vec<&str> = text
        .split("sys/devices/system/cpu/cpu")
        .skip(1)
        .map(|rest| rest.split('/').next().unwrap())
        .collect();
    assert!(
        named.len() >= 2 && named.contains(&"3") && named.iter().any(|c| *c != "3"),
        "{text}"
    );
}

/// jaypipes/ghw's snapshots of real machines (`tests/data/ghw/`, provenance
/// in `tests/data/SOURCES.md`): three x86 machines of Linux 5.3+ kernels,
/// whose `die_cpus` equal their `package_cpus` (a level hwloc merges into
/// the package, so lstopo shows no Die), one of them an i7-1270P whose
/// clusters are each a core or an L2 (merged into it, so lstopo shows no
/// cluster), an arm64 board and an s390x guest. Each reads as the installed
/// lstopo reads its files.
#[test]
fn ghw_snapshots_read_as_lstopo_reads_them() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ghw");
    let mut all: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    all.sort();
    assert_eq!(all.len(), 5, "{} snapshots", all.len());
    if !truth::have_lstopo("ghw's sysfs snapshots against lstopo") {
        return;
    }
    for archive in &all {
        let name = archive.file_name().unwrap().to_string_lossy().to_string();
        let tmp = extract(archive);
        let mut want = truth::expected(&truth::parse_xml(&lstopo_xml(tmp.path())));
        if !tmp.path().join("sys/devices/system/node").exists() {
            want.nodes.clear();
        }
        let topo = sysfs::read_path(archive).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_facts(&name, &topo, &want);
    }
}

/// One CPU's place in a hand-made tree: its core's CPUs, its cluster's, and
/// the CPUs of each cache level it has (L1d and L1i are its core's).
struct Place {
    core: Vec<usize>,
    cluster: Vec<usize>,
    l2: Vec<usize>,
}

/// A hand-made sysfs root of 8 CPUs in one package sharing one L3, with
/// the files a 5.16+ kernel writes (hex masks, which hwloc reads, and
/// lists, which lscpu reads) and a cpuinfo of `cpuinfo_block` per CPU.
fn write_cluster_tree(root: &Path, places: fn(usize) -> Place, cpuinfo_block: fn(usize) -> String) {
    let put = |path: String, text: String| {
        let p = root.join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    };
    let hex = |cpus: &[usize]| format!("{:02x}\n", cpus.iter().map(|c| 1u32 << c).sum::<u32>());
    let list = |cpus: &[usize]| {
        let v: Vec<String> = cpus.iter().map(|c| c.to_string()).collect();
        format!("{}\n", v.join(","))
    };
    let cpu_dir = "sys/devices/system/cpu";
    for f in ["online", "possible", "present"] {
        put(format!("{cpu_dir}/{f}"), "0-7\n".into());
    }
    let all: Vec<usize> = (0..8).collect();
    let mut cpuinfo = String::new();
    for cpu in 0..8 {
        let p = places(cpu);
        let t = format!("{cpu_dir}/cpu{cpu}/topology");
        put(format!("{t}/physical_package_id"), "0\n".into());
        put(format!("{t}/core_id"), format!("{}\n", p.core[0]));
        put(format!("{t}/cluster_id"), format!("{}\n", p.cluster[0]));
        for (name, cpus) in [
            ("core_cpus", &p.core),
            ("thread_siblings", &p.core),
            ("cluster_cpus", &p.cluster),
            ("package_cpus", &all),
            ("core_siblings", &all),
        ] {
            put(format!("{t}/{name}"), hex(cpus));
            put(format!("{t}/{name}_list"), list(cpus));
        }
        let caches = [
            (1, "Data", &p.core, "48K"),
            (1, "Instruction", &p.core, "32K"),
            (2, "Unified", &p.l2, "2048K"),
            (3, "Unified", &all, "16384K"),
        ];
        for (i, (level, kind, cpus, size)) in caches.into_iter().enumerate() {
            let d = format!("{cpu_dir}/cpu{cpu}/cache/index{i}");
            put(format!("{d}/level"), format!("{level}\n"));
            put(format!("{d}/type"), format!("{kind}\n"));
            put(format!("{d}/size"), format!("{size}\n"));
            put(format!("{d}/coherency_line_size"), "64\n".into());
            put(format!("{d}/shared_cpu_map"), hex(cpus));
            put(format!("{d}/shared_cpu_list"), list(cpus));
        }
        cpuinfo += &cpuinfo_block(cpu);
        cpuinfo += "\n";
    }
    put("proc/cpuinfo".into(), cpuinfo);
}

/// An x86 hybrid part's shape (as Intel's Alder Lake, the i7-1270P of
/// tests/data/ghw): two P-cores of two threads, each with its own L2, and a
/// module of four E-cores sharing one L2. The kernel's x86 cluster is the L2
/// (`cluster_cpus` = `cpu_l2c_shared_mask`), so each cluster is a core or an
/// L2 of the same CPUs; hwloc merges each into that object.
fn x86_hybrid(cpu: usize) -> Place {
    let (core, l2) = match cpu {
        0..=3 => (vec![cpu & !1, cpu | 1], vec![cpu & !1, cpu | 1]),
        _ => (vec![cpu], vec![4, 5, 6, 7]),
    };
    Place {
        cluster: l2.clone(),
        core,
        l2,
    }
}

fn x86_cpuinfo(cpu: usize) -> String {
    format!(
        "processor\t: {cpu}\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 154\n\
         model name\t: Hand-made hybrid\nphysical id\t: 0\ncore id\t\t: {}\n",
        x86_hybrid(cpu).core[0]
    )
}

/// An arm64 server's shape (as HiSilicon's Kunpeng 920, whose clusters are
/// four cores sharing L3 tags): two clusters of four single-thread cores,
/// each core with its own L2, one L3. A cluster is no core and no cache, so
/// hwloc keeps it, and so does the kernel's CLS domain.
fn arm64_clusters(cpu: usize) -> Place {
    Place {
        core: vec![cpu],
        cluster: (cpu & !3..(cpu & !3) + 4).collect(),
        l2: vec![cpu],
    }
}

fn arm64_cpuinfo(cpu: usize) -> String {
    format!(
        "processor\t: {cpu}\nBogoMIPS\t: 200.00\nFeatures\t: fp asimd evtstrm cpuid\n\
         CPU implementer\t: 0x48\nCPU architecture: 8\nCPU variant\t: 0x1\n\
         CPU part\t: 0xd01\nCPU revision\t: 0\n"
    )
}

/// Clusters read as lstopo reads them: dropped on x86 where each is a core or
/// an L2 of the same CPUs, kept on arm64 where each holds several cores with
/// caches of their own. lstopo's reading of the same hand-made files is the
/// truth, and it is checked to say what the shape is meant to show.
#[test]
fn clusters_of_one_core_or_cache_merge_on_x86_and_stay_on_arm64() {
    if !truth::have_lstopo("hand-made x86 and arm64 cluster trees against lstopo") {
        return;
    }
    // (shape, its CPUs' places, its cpuinfo, the clusters lstopo shows)
    type Shape = (&'static str, fn(usize) -> Place, fn(usize) -> String, usize);
    let cases: [Shape; 2] = [
        ("x86 hybrid", x86_hybrid, x86_cpuinfo, 0),
        ("arm64 clusters", arm64_clusters, arm64_cpuinfo, 2),
    ];
    for (name, places, cpuinfo, clusters) in cases {
        let tmp = tempfile::tempdir().unwrap();
        write_cluster_tree(tmp.path(), places, cpuinfo);
        let mut want = truth::expected(&truth::parse_xml(&lstopo_xml(tmp.path())));
        want.nodes.clear();
        assert_eq!(want.clusters.len(), clusters, "{name}: lstopo's clusters");
        let topo = sysfs::read_dir(tmp.path()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_facts(name, &topo, &want);
    }
}

/// containers/nri-plugins' sysfs-only snapshot of an Intel i7-1270P laptop
/// (`tests/data/nri-plugins/`, provenance in `tests/data/SOURCES.md`): no
/// `proc/` at all, so no cpuinfo names the architecture, yet its clusters
/// are x86's (each a core or an L2). It reads as lstopo reads its files:
/// no cluster, and x86 from the signs only x86 kernels write.
#[test]
fn nri_plugins_sysfs_only_snapshot_reads_as_lstopo_reads_it() {
    let archive = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/nri-plugins/test-data-sample1.tar.xz");
    let topo = sysfs::read_path(&archive).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(topo.arch(), &topology::Arch::X86_64);
    if !truth::have_lstopo("nri-plugins' sysfs-only snapshot against lstopo") {
        return;
    }
    let tmp = extract(&archive);
    let root = extract::top_dir(&tmp);
    // lstopo takes a directory for a Linux root only when it has `proc/`.
    fs::create_dir(root.join("proc")).unwrap();
    let want = truth::expected(&truth::parse_xml(&lstopo_xml(&root)));
    assert_eq!(want.pus.len(), 16, "lstopo's PUs");
    assert_facts("nri-plugins sample1", &topo, &want);
}

/// The hand-made x86 hybrid tree without `proc/cpuinfo`, with one of the
/// signs only x86 kernels write (`cpu/modalias` of type x86, the microcode
/// loader's `cpu/microcode`, a hybrid PMU device) or none: each reads as
/// lstopo reads it (its merge knows no architecture, so no cluster either
/// way), x86 where a sign is and an unknown architecture where none is
/// (another architecture's modalias is no x86 sign).
#[test]
fn dumps_without_cpuinfo_take_x86_from_sysfs_and_merge_clusters_as_lstopo() {
    // (case, the file written, its content)
    let signs: [(&str, &str, &str); 6] = [
        (
            "x86 modalias",
            "sys/devices/system/cpu/modalias",
            "cpu:type:x86,ven0000fam0006mod009A:feature:,0000,0001,0002\n",
        ),
        (
            "old x86 modalias",
            "sys/devices/system/cpu/modalias",
            "x86cpu:vendor:0000:family:0006:model:001A:feature:,0000\n",
        ),
        (
            "microcode loader",
            "sys/devices/system/cpu/microcode/reload",
            "",
        ),
        ("hybrid PMU", "sys/devices/cpu_atom/cpus", "4-7\n"),
        (
            "arm64 modalias",
            "sys/devices/system/cpu/modalias",
            "cpu:type:aarch64:feature:,0000,0001\n",
        ),
        ("no sign", "sys/devices/system/cpu/kernel_max", "8191\n"),
    ];
    for (name, path, text) in signs {
        let tmp = tempfile::tempdir().unwrap();
        write_cluster_tree(tmp.path(), x86_hybrid, x86_cpuinfo);
        fs::remove_file(tmp.path().join("proc/cpuinfo")).unwrap();
        let at = tmp.path().join(path);
        fs::create_dir_all(at.parent().unwrap()).unwrap();
        fs::write(&at, text).unwrap();
        let topo = sysfs::read_dir(tmp.path()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let want_arch = if name.starts_with("arm64") || name == "no sign" {
            topology::Arch::Other("unknown".into())
        } else {
            topology::Arch::X86_64
        };
        assert_eq!(topo.arch(), &want_arch, "{name}");
        if !truth::have_lstopo("x86 trees without cpuinfo against lstopo") {
            continue;
        }
        let mut want = truth::expected(&truth::parse_xml(&lstopo_xml(tmp.path())));
        want.nodes.clear();
        assert!(want.clusters.is_empty(), "{name}: lstopo's clusters");
        assert_facts(name, &topo, &want);
    }
}
