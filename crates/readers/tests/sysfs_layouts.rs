//! The reader learns a kernel's layout from the first CPUs it reads and
//! asks later CPUs only what that layout leaves open. These trees are
//! written the way Linux writes them where it matters: a CPU's cache
//! indices numbered from 0 without gaps (drivers/base/cacheinfo.c makes
//! `index0` … `index<num_leaves - 1>`), SMT sibling masks equal on online
//! siblings (x86's `link_mask` sets both CPUs' bits), and `core_id` per CPU
//! (x86 with TOPOEXT matches siblings by compute unit, not core id, so
//! siblings may report different ones). Each expected reading is the
//! tree's own numbers, written by hand.

use std::collections::BTreeMap;

use topology::{CacheKind, LevelKind, Topology};

const CPU: &str = "sys/devices/system/cpu";

/// One package of two cores with two threads each (CPUs 0-1 and 2-3),
/// an L1d per core, and an L2 per core on the cores listed in `l2_on`.
fn tree(l2_on: &[u32]) -> BTreeMap<String, String> {
    let mut t = BTreeMap::new();
    for f in ["possible", "present", "online"] {
        t.insert(format!("{CPU}/{f}"), "0-3\n".into());
    }
    for c in 0..4u32 {
        let core = c / 2;
        let topo = format!("{CPU}/cpu{c}/topology");
        t.insert(format!("{topo}/physical_package_id"), "0\n".into());
        t.insert(format!("{topo}/core_id"), format!("{core}\n"));
        let siblings = format!("{}-{}\n", core * 2, core * 2 + 1);
        t.insert(format!("{topo}/core_cpus_list"), siblings.clone());
        t.insert(format!("{topo}/package_cpus_list"), "0-3\n".into());
        let mut caches = vec![(1, "Data", "32K")];
        if l2_on.contains(&core) {
            caches.push((2, "Unified", "1024K"));
        }
        for (i, (level, kind, size)) in caches.into_iter().enumerate() {
            let idx = format!("{CPU}/cpu{c}/cache/index{i}");
            t.insert(format!("{idx}/level"), format!("{level}\n"));
            t.insert(format!("{idx}/type"), format!("{kind}\n"));
            t.insert(format!("{idx}/size"), format!("{size}\n"));
            t.insert(format!("{idx}/shared_cpu_list"), siblings.clone());
        }
    }
    t
}

fn read(t: &BTreeMap<String, String>) -> Topology {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in t {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    readers::sysfs::read_dir(dir.path()).unwrap()
}

/// The CPU lists of the caches of `level`, sorted.
fn caches(t: &Topology, level: u8) -> Vec<String> {
    let mut v: Vec<String> = t
        .caches()
        .iter()
        .filter(|c| c.level == level)
        .map(|c| c.cpus.to_list_string())
        .collect();
    v.sort();
    v
}

#[test]
fn a_later_cpu_with_more_cache_indices_has_them_read() {
    let t = read(&tree(&[1]));
    assert_eq!(caches(&t, 1), ["0-1", "2-3"]);
    assert_eq!(caches(&t, 2), ["2-3"]);
    let l2 = t.caches().iter().find(|c| c.level == 2).unwrap();
    assert_eq!(
        (l2.kind, l2.size_bytes),
        (CacheKind::Unified, Some(1 << 20))
    );
}

#[test]
fn a_later_cpu_with_fewer_cache_indices_reads_without_them() {
    let t = read(&tree(&[0]));
    assert_eq!(caches(&t, 1), ["0-1", "2-3"]);
    assert_eq!(caches(&t, 2), ["0-1"]);
}

#[test]
fn siblings_keep_their_own_core_ids() {
    let mut t = tree(&[]);
    // CPU 1 shares CPU 0's core but reports another core id; CPUs 2 and 3
    // agree.
    t.insert(format!("{CPU}/cpu1/topology/core_id"), "7\n".into());
    let t = read(&t);
    let core = |cpu: usize| {
        let g = t.cpu(cpu).unwrap().group(LevelKind::Core).unwrap();
        &t.level(LevelKind::Core).unwrap().groups[g as usize]
    };
    assert_eq!(core(0).cpus.to_list_string(), "0-1");
    assert_eq!(core(0).os_id, None, "ids 0 and 7 differ: no one id");
    assert_eq!(core(2).cpus.to_list_string(), "2-3");
    assert_eq!(core(2).os_id, Some(1));
}

/// `t` with an x86 cpuinfo giving CPU `c` the package and core ids
/// `ids[c]` (`physical id`, `core id`), as `show_cpuinfo_core` prints them.
fn with_x86_cpuinfo(mut t: BTreeMap<String, String>, ids: [(u32, u32); 4]) -> Topology {
    let text: String = ids
        .iter()
        .enumerate()
        .map(|(c, (package, core))| {
            format!(
                "processor\t: {c}\nvendor_id\t: GenuineIntel\nphysical id\t: {package}\n\
                 siblings\t: 4\ncore id\t\t: {core}\ncpu cores\t: 2\napicid\t\t: {c}\n\n"
            )
        })
        .collect();
    t.insert("proc/cpuinfo".into(), text);
    read(&t)
}

/// The kernel's core ids of the cores of CPUs 0 and 2.
fn core_os_ids(t: &Topology) -> [Option<u32>; 2] {
    [0, 2].map(|cpu| {
        let g = t.cpu(cpu).unwrap().group(LevelKind::Core).unwrap();
        t.level(LevelKind::Core).unwrap().groups[g as usize].os_id
    })
}

#[test]
fn x86_siblings_core_ids_are_what_cpuinfo_and_sysfs_both_say() {
    // CPU 1 shares CPU 0's core but reports core id 7 in both files, as a
    // VMware guest's kernel does.
    let mut t = tree(&[]);
    t.insert(format!("{CPU}/cpu1/topology/core_id"), "7\n".into());
    let t = with_x86_cpuinfo(t, [(0, 0), (0, 7), (0, 1), (0, 1)]);
    assert_eq!(core_os_ids(&t), [None, Some(1)], "ids 0 and 7 differ");
}

#[test]
fn x86_siblings_core_ids_come_from_sysfs_when_cpuinfo_says_otherwise() {
    // Another machine's cpuinfo beside this sysfs tree (hwloc's fakeKNL
    // dumps are made so): CPU 0, read in full, shows that cpuinfo's ids
    // are not sysfs's, so its sibling's are not taken from there.
    let t = with_x86_cpuinfo(tree(&[]), [(0, 5), (0, 5), (0, 6), (0, 6)]);
    assert_eq!(core_os_ids(&t), [Some(0), Some(1)]);
}

#[test]
fn an_x86_siblings_core_id_comes_from_sysfs_when_its_cpuinfo_package_differs() {
    // CPUs 0 and 2 agree in both files; CPU 1's cpuinfo block names another
    // package than the one it shares with CPU 0, so it is not CPU 1's.
    let t = with_x86_cpuinfo(tree(&[]), [(0, 0), (1, 9), (0, 1), (0, 1)]);
    assert_eq!(core_os_ids(&t), [Some(0), Some(1)]);
}

#[test]
fn an_offline_first_cpu_without_capacity_does_not_hide_the_others() {
    // arch_topology may add `cpu_capacity` to a CPU as it comes online and
    // remove it as it goes offline (its "topology/cpu-capacity" hotplug
    // state): an offline CPU 0 then lacks the file the online CPUs have.
    let mut t = tree(&[]);
    t.insert(format!("{CPU}/online"), "1-3\n".into());
    for c in 1..4 {
        let capacity = if c < 2 { "1024\n" } else { "512\n" };
        t.insert(format!("{CPU}/cpu{c}/cpu_capacity"), capacity.into());
    }
    let t = read(&t);
    assert_eq!(t.cpu(0).unwrap().capacity, None);
    assert_eq!(t.cpu(1).unwrap().capacity, Some(1024));
    assert_eq!(t.cpu(3).unwrap().capacity, Some(512));
}

#[test]
fn a_cache_index_numbered_at_the_largest_number_is_read() {
    // No kernel writes such a name (the leaves are numbered from 0), but a
    // dump may hold one: the number after it is not asked for, each CPU's
    // cache directory is listed instead.
    let mut t = BTreeMap::new();
    for (path, text) in tree(&[]) {
        let path = path.replace("/index0/", "/index18446744073709551615/");
        t.insert(path, text);
    }
    let t = read(&t);
    assert_eq!(caches(&t, 1), ["0-1", "2-3"]);
}

#[test]
fn an_offline_first_cpu_without_sparc_cache_files_does_not_hide_the_others() {
    // sparc64 adds its per-CPU cache files as a CPU comes online and removes
    // them as it goes offline (arch/sparc/kernel/sysfs.c): an offline CPU 0
    // lacks the files that the online CPU 1 has. No cpuinfo: the
    // architecture is unknown, so sparc64's files are looked for.
    let mut t = BTreeMap::new();
    for (f, list) in [("possible", "0-1"), ("present", "0-1"), ("online", "1")] {
        t.insert(format!("{CPU}/{f}"), format!("{list}\n"));
    }
    for c in 0..2 {
        let topo = format!("{CPU}/cpu{c}/topology");
        t.insert(format!("{topo}/physical_package_id"), "0\n".into());
        t.insert(format!("{topo}/core_id"), format!("{c}\n"));
        t.insert(format!("{topo}/thread_siblings_list"), format!("{c}\n"));
        t.insert(format!("{topo}/core_siblings_list"), "0-1\n".into());
    }
    t.insert(format!("{CPU}/cpu0/online"), "0\n".into());
    t.insert(format!("{CPU}/cpu1/online"), "1\n".into());
    for (f, v) in [
        ("l1_dcache_size", "8192"),
        ("l1_dcache_line_size", "16"),
        ("l1_icache_size", "16384"),
        ("l1_icache_line_size", "32"),
        ("l2_cache_size", "3145728"),
        ("l2_cache_line_size", "64"),
    ] {
        t.insert(format!("{CPU}/cpu1/{f}"), format!("{v}\n"));
    }
    let t = read(&t);
    assert_eq!(caches(&t, 1), ["1", "1"]);
    assert_eq!(caches(&t, 2), ["1"]);
    let l2 = t.caches().iter().find(|c| c.level == 2).unwrap();
    assert_eq!((l2.size_bytes, l2.line_bytes), (Some(3 << 20), Some(64)));
}

/// A CPU read in full takes the core mask of the earlier CPU whose mask
/// lists it only when its own file names the same CPUs. Here offline CPU 2
/// kept the mask it had (itself and CPU 3), while online CPU 3's file names
/// CPU 3 alone, as the kernel rewrites a CPU's sibling masks when a
/// sibling leaves (x86's `remove_siblinginfo` clears the leaving CPU from
/// them); without core ids the masks decide the cores.
#[test]
fn a_cpu_whose_core_mask_differs_from_the_one_listing_it_keeps_its_own() {
    let mut t = tree(&[]);
    t.insert(format!("{CPU}/online"), "0-1,3\n".into());
    for c in 0..4 {
        t.remove(&format!("{CPU}/cpu{c}/topology/core_id"));
    }
    t.insert(format!("{CPU}/cpu3/topology/core_cpus_list"), "3\n".into());
    let t = read(&t);
    let core = |cpu: usize| {
        let g = t.cpu(cpu).unwrap().group(LevelKind::Core).unwrap();
        t.level(LevelKind::Core).unwrap().groups[g as usize]
            .cpus
            .to_list_string()
    };
    assert_eq!(core(3), "3");
    assert_eq!(core(0), "0-1");
}

/// A CPU listed in an earlier CPU's cluster mask takes that CPU's cluster
/// id and mask (arm64's and RISC-V's `update_siblings_masks` set both
/// CPUs' bits when their `cluster_id`s match): two clusters of two
/// single-thread cores, each read with its own id.
#[test]
fn clusters_are_read_from_their_first_cpu_and_kept_apart() {
    let mut t = BTreeMap::new();
    for f in ["possible", "present", "online"] {
        t.insert(format!("{CPU}/{f}"), "0-3\n".into());
    }
    for c in 0..4u32 {
        let topo = format!("{CPU}/cpu{c}/topology");
        let cluster = c / 2;
        t.insert(format!("{topo}/physical_package_id"), "0\n".into());
        t.insert(format!("{topo}/package_cpus_list"), "0-3\n".into());
        t.insert(format!("{topo}/cluster_id"), format!("{}\n", 10 + cluster));
        t.insert(
            format!("{topo}/cluster_cpus_list"),
            format!("{}-{}\n", cluster * 2, cluster * 2 + 1),
        );
        t.insert(format!("{topo}/core_id"), format!("{c}\n"));
        t.insert(format!("{topo}/core_cpus_list"), format!("{c}\n"));
    }
    let t = read(&t);
    let cluster = |cpu: usize| {
        let g = t.cpu(cpu).unwrap().group(LevelKind::Cluster).unwrap();
        let g = &t.level(LevelKind::Cluster).unwrap().groups[g as usize];
        (g.cpus.to_list_string(), g.os_id)
    };
    for cpu in 0..2 {
        assert_eq!(cluster(cpu), ("0-1".to_string(), Some(10)));
    }
    for cpu in 2..4 {
        assert_eq!(cluster(cpu), ("2-3".to_string(), Some(11)));
    }
}

/// `tree` with every CPU's `cache/` replaced by `indices`: (level, type,
/// size, sharing set: `"cpu"`, `"core"`, a cpulist, or `None` for an
/// all-zero map), the same on each CPU as a kernel writes them.
fn with_caches(
    mut t: BTreeMap<String, String>,
    indices: &[(u8, &str, &str, Option<&str>)],
) -> BTreeMap<String, String> {
    t.retain(|path, _| !path.contains("/cache/"));
    for c in 0..4u32 {
        let core = format!("{}-{}\n", c / 2 * 2, c / 2 * 2 + 1);
        for (i, (level, kind, size, map)) in indices.iter().enumerate() {
            let idx = format!("{CPU}/cpu{c}/cache/index{i}");
            t.insert(format!("{idx}/level"), format!("{level}\n"));
            t.insert(format!("{idx}/type"), format!("{kind}\n"));
            t.insert(format!("{idx}/size"), format!("{size}\n"));
            // The all-zero map is written in hex, as ia64 kernels print it;
            // the others as cpulists.
            let (name, text) = match map {
                None => ("shared_cpu_map", "00000000\n".to_string()),
                Some("cpu") => ("shared_cpu_list", format!("{c}\n")),
                Some("core") => ("shared_cpu_list", core.clone()),
                Some(list) => ("shared_cpu_list", format!("{list}\n")),
            };
            t.insert(format!("{idx}/{name}"), text);
        }
    }
    t
}

#[test]
fn an_all_zero_cache_map_is_each_core_s_own_cache() {
    // ia64 kernels print an all-zero map for the L2i and L3, which are the
    // core's: each of the two cores has its own, whichever thread is read.
    let t = read(&with_caches(
        tree(&[]),
        &[
            (1, "Data", "16K", Some("cpu")),
            (3, "Unified", "9216K", None),
        ],
    ));
    assert_eq!(caches(&t, 1), ["0", "1", "2", "3"]);
    assert_eq!(caches(&t, 3), ["0-1", "2-3"]);
}

#[test]
fn a_second_index_of_the_same_cache_is_one_cache_and_others_are_kept() {
    // VirtualBox shows the L1i as a second L1 Data index with the L1d's
    // map: one cache (the first index's size). An L1i of the same CPUs and
    // an L2 of the same level elsewhere are other caches.
    let t = read(&with_caches(
        tree(&[]),
        &[
            (1, "Data", "32K", Some("cpu")),
            (1, "Data", "64K", Some("cpu")),
            (1, "Instruction", "32K", Some("cpu")),
            (2, "Unified", "1024K", Some("core")),
            (2, "Unified", "512K", Some("0-3")),
        ],
    ));
    let l1: Vec<(CacheKind, String, Option<u64>)> = {
        let mut v: Vec<_> = t
            .caches()
            .iter()
            .filter(|c| c.level == 1)
            .map(|c| (c.kind, c.cpus.to_list_string(), c.size_bytes))
            .collect();
        v.sort_by_key(|(k, cpus, _)| (cpus.clone(), *k == CacheKind::Data));
        v
    };
    let expected: Vec<(CacheKind, String, Option<u64>)> = (0..4)
        .flat_map(|c| {
            [
                (CacheKind::Instruction, c.to_string(), Some(32 << 10)),
                (CacheKind::Data, c.to_string(), Some(32 << 10)),
            ]
        })
        .collect();
    assert_eq!(l1, expected);
    assert_eq!(caches(&t, 2), ["0-1", "0-3", "2-3"]);
}

#[test]
fn without_cpuinfo_a_first_cpu_without_caches_does_not_hide_the_others() {
    // No cpuinfo: the architecture is unknown, so sparc64's per-CPU files
    // are looked for too. CPU 0's `cache/` is missing from the dump; the
    // last CPU has one, so the others are read.
    let mut t = tree(&[]);
    t.retain(|path, _| !path.starts_with(&format!("{CPU}/cpu0/cache/")));
    let t = read(&t);
    assert_eq!(caches(&t, 1), ["0-1", "2-3"]);
}
