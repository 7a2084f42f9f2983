//! A real machine's dump as a container sees it through lxcfs, built the way
//! lxcfs writes its files (lxc/lxcfs at e1c5a7d, LGPL-2.1):
//! - `sys/devices/system/cpu/online` is the container's cpuset
//!   (`do_cpuset_read` in src/sysfs_fuse.c), or `0-(N-1)` when lxcfs runs
//!   with `--enable-cfs` and the CPU quota allows N CPUs (`use_view`);
//! - `/proc/cpuinfo` holds only the cpuset's CPUs, in order, renumbered
//!   `processor : 0, 1, ...` whatever their numbers (`proc_cpuinfo_read` in
//!   src/proc_cpuview.c, `curcpu`), and with the view only the first N;
//! - the `cpuN/` directories are the host's, every one of them
//!   (`filler_sys_devices_system_cpu` lists the real directory), and so are
//!   `present`, `possible` and every file below `cpuN/`.
//!
//! The truth is the host dump itself (read as the corpus tests check it
//! against hwloc): each CPU's place is what its host `cpuN/` says, and a
//! CPU's firmware id (x86 `apicid` in cpuinfo) is its own or unknown, never
//! another CPU's record moved onto it by the renumbering.

#[path = "support/extract.rs"]
mod extract;

use std::fs;
use std::path::{Path, PathBuf};

use cpumask::CpuMask;
use readers::{corpus, sysfs};
use topology::{LevelKind, Topology};

/// 8 NUMA nodes of 2 AMD cores, every cpuinfo record with its `apicid`.
const HOST: &str = "hwloc/tests/hwloc/linux/16amd64-8n2c.tar.bz2";

fn host_dump() -> Option<PathBuf> {
    let root = corpus::dir(env!("CARGO_MANIFEST_DIR"));
    corpus::present(&root, HOST).then(|| root.join(HOST))
}

/// The cpuinfo records of `cpus`, in order, numbered from 0 as lxcfs
/// numbers them.
fn lxcfs_cpuinfo(host: &str, cpus: &[usize]) -> String {
    let mut out = String::new();
    let mut next = 0;
    for block in host.split("\n\n").filter(|b| !b.trim().is_empty()) {
        let (first, rest) = block.split_once('\n').unwrap_or((block, ""));
        let n: usize = first.split(':').nth(1).unwrap().trim().parse().unwrap();
        assert!(first.starts_with("processor"), "{first}");
        if cpus.contains(&n) {
            out.push_str(&format!("processor\t: {next}\n{rest}\n\n"));
            next += 1;
        }
    }
    out
}

/// The extracted host dump made into what a container sees through lxcfs
/// with the cpuset `cpus`; `view` is the CPU count the quota allows when
/// lxcfs runs with its CPU view.
fn lxcfs_root(archive: &Path, cpus: &[usize], view: Option<usize>) -> tempfile::TempDir {
    let tmp = extract::extract(archive);
    let root = extract::top_dir(&tmp);
    let cpuinfo = root.join("proc/cpuinfo");
    let host = fs::read_to_string(&cpuinfo).unwrap();
    let shown = &cpus[..view.unwrap_or(cpus.len()).min(cpus.len())];
    fs::write(&cpuinfo, lxcfs_cpuinfo(&host, shown)).unwrap();
    let online = match view {
        Some(n) => readers::lscpu::cpulist(&CpuMask::first_n(n)),
        None => readers::lscpu::cpulist(&cpus.iter().copied().collect()),
    };
    fs::write(root.join("sys/devices/system/cpu/online"), online + "\n").unwrap();
    tmp
}

fn apicids(text: &str) -> Vec<u64> {
    text.lines()
        .filter_map(|l| l.strip_prefix("apicid"))
        .map(|v| v.split(':').nth(1).unwrap().trim().parse().unwrap())
        .collect()
}

/// The CPUs of `cpu`'s group at `level`.
fn group(t: &Topology, level: LevelKind, cpu: usize) -> Vec<usize> {
    let l = t.level(level).expect("level");
    let g = l
        .groups
        .iter()
        .find(|g| g.cpus.contains(cpu))
        .expect("group");
    g.cpus.iter().collect()
}

/// Each CPU of `cpus` read from `got` as the host reading places it, with
/// its own firmware id or none.
fn assert_host_places(got: &Topology, host: &Topology, cpus: &[usize]) {
    for &cpu in cpus {
        // Compared on the container's on-line CPUs: the others' host
        // directories may place them too.
        let on = |t: &Topology, level| -> Vec<usize> {
            group(t, level, cpu)
                .into_iter()
                .filter(|&c| got.online().contains(c))
                .collect()
        };
        for level in [LevelKind::Package, LevelKind::Core] {
            assert_eq!(on(got, level), on(host, level), "cpu{cpu} {level:?}");
        }
        let (hw, own) = (got.cpu(cpu).unwrap().hw_id, host.cpu(cpu).unwrap().hw_id);
        assert!(
            hw.is_none() || hw == own,
            "cpu{cpu}: firmware id {hw:?}, its own is {own:?}"
        );
    }
}

#[test]
fn lxcfs_cpuset_reads_the_cpuset_on_line_with_the_host_places() {
    let Some(archive) = host_dump() else {
        eprintln!("SKIPPED sysfs_containers: no corpus ({HOST})");
        return;
    };
    let host = sysfs::read_path(&archive).unwrap_or_else(|e| panic!("{e}"));
    // The host's apicids are not the CPU numbers, so a record moved onto
    // another CPU shows.
    let host_text = {
        let tmp = extract::extract(&archive);
        fs::read_to_string(extract::top_dir(&tmp).join("proc/cpuinfo")).unwrap()
    };
    let ids = apicids(&host_text);
    assert_eq!(ids.len(), 16);
    assert!((0..16).any(|c| ids[c] != ids[(c + 4) % 16]), "{ids:?}");

    let cpus = [4, 5, 6, 7, 12];
    let tmp = lxcfs_root(&archive, &cpus, None);
    let t = sysfs::read_path(&extract::top_dir(&tmp)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(t.online().iter().collect::<Vec<_>>(), cpus);
    assert_eq!(t.present(), host.present(), "every host cpuN/ is present");
    assert_host_places(&t, &host, &cpus);
}

#[test]
fn lxcfs_cpu_view_reads_the_first_cpus_with_their_own_directories() {
    let Some(archive) = host_dump() else {
        eprintln!("SKIPPED sysfs_containers: no corpus ({HOST})");
        return;
    };
    let host = sysfs::read_path(&archive).unwrap_or_else(|e| panic!("{e}"));
    // A cpuset of 4-7 with a quota of 2 CPUs: on-line says 0-1, and
    // cpuinfo holds CPUs 4 and 5's records as processors 0 and 1.
    let tmp = lxcfs_root(&archive, &[4, 5, 6, 7], Some(2));
    let t = sysfs::read_path(&extract::top_dir(&tmp)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(t.online().iter().collect::<Vec<_>>(), [0, 1]);
    assert_host_places(&t, &host, &[0, 1]);
}
