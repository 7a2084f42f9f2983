//! A CPU taken off-line or brought on-line while the reader reads, built
//! from a real dump as Linux changes the files. Taking CPU N down removes
//! `cpuN/topology/` (drivers/base/topology.c: `topology_remove_dev`, the
//! teardown of its CPU hotplug state) and `cpuN/cache/`
//! (drivers/base/cacheinfo.c: `cacheinfo_cpu_pre_down`), writes 0 to
//! `cpuN/online` and drops N from `cpu/online`; bringing it up does the
//! reverse. A reader that listed `cpu/online` before the change and opens
//! `cpuN/` after it sees the two states mixed. The answer must be one of
//! them or one error naming a file: never CPU N on-line with a place made
//! up for it, never another CPU moved.

#[path = "support/extract.rs"]
mod extract;

use std::fs;
use std::path::{Path, PathBuf};

use readers::{corpus, sysfs};
use topology::{LevelKind, Topology};

/// 8 NUMA nodes of 2 AMD cores; CPU 5 shares its package with CPU 4.
const HOST: &str = "hwloc/tests/hwloc/linux/16amd64-8n2c.tar.bz2";

fn host_dump() -> Option<PathBuf> {
    let root = corpus::dir(env!("CARGO_MANIFEST_DIR"));
    corpus::present(&root, HOST).then(|| root.join(HOST))
}

/// The CPUs of `cpu`'s group at `level` that `on` holds.
fn group(t: &Topology, level: LevelKind, cpu: usize, on: &Topology) -> Vec<usize> {
    let l = t.level(level).expect("level");
    let g = l
        .groups
        .iter()
        .find(|g| g.cpus.contains(cpu))
        .expect("group");
    g.cpus.iter().filter(|&c| on.online().contains(c)).collect()
}

/// `got` read CPU 5 off-line and every other CPU where the host reading
/// places it.
fn assert_cpu5_down(got: &Topology, host: &Topology) {
    let want: Vec<usize> = (0..16).filter(|&c| c != 5).collect();
    assert_eq!(got.online().iter().collect::<Vec<_>>(), want);
    for cpu in want {
        for level in [LevelKind::Package, LevelKind::Core] {
            assert_eq!(
                group(got, level, cpu, got),
                group(host, level, cpu, got),
                "cpu{cpu} {level:?}"
            );
        }
    }
}

/// CPU 5 taken down in `root` as Linux takes it down, `cpu/online` left
/// as it was when the reader read it if `stale_list`.
fn take_down_cpu5(root: &Path, stale_list: bool) {
    let cpu5 = root.join("sys/devices/system/cpu/cpu5");
    let _ = fs::remove_dir_all(cpu5.join("topology"));
    let _ = fs::remove_dir_all(cpu5.join("cache"));
    fs::write(cpu5.join("online"), "0\n").unwrap();
    if !stale_list {
        fs::write(root.join("sys/devices/system/cpu/online"), "0-4,6-15\n").unwrap();
    }
}

#[test]
fn cpu_taken_down_mid_read_is_read_down_or_named() {
    let Some(archive) = host_dump() else {
        eprintln!("SKIPPED sysfs_races: no corpus ({HOST})");
        return;
    };
    let host = sysfs::read_path(&archive).unwrap_or_else(|e| panic!("{e}"));
    // The state after the change, consistent: CPU 5 off-line.
    let tmp = extract::extract(&archive);
    let root = extract::top_dir(&tmp);
    take_down_cpu5(&root, false);
    let after = sysfs::read_path(&root).unwrap_or_else(|e| panic!("{e}"));
    assert_cpu5_down(&after, &host);
    // The list read before, CPU 5's directory after.
    let tmp = extract::extract(&archive);
    let root = extract::top_dir(&tmp);
    take_down_cpu5(&root, true);
    match sysfs::read_path(&root) {
        Ok(t) => {
            println!("list before, cpu5/ after: read with CPU 5 down");
            assert_cpu5_down(&t, &host)
        }
        Err(e) => {
            println!("list before, cpu5/ after: refused: {e}");
            assert!(e.to_string().contains("cpu5"), "{e}")
        }
    }
}

#[test]
fn cpu_brought_up_mid_read_is_read_either_way() {
    let Some(archive) = host_dump() else {
        eprintln!("SKIPPED sysfs_races: no corpus ({HOST})");
        return;
    };
    let host = sysfs::read_path(&archive).unwrap_or_else(|e| panic!("{e}"));
    // `cpu/online` read while CPU 5 was down, its directory after it came
    // back (every file of the host dump).
    let tmp = extract::extract(&archive);
    let root = extract::top_dir(&tmp);
    fs::write(root.join("sys/devices/system/cpu/online"), "0-4,6-15\n").unwrap();
    match sysfs::read_path(&root) {
        Ok(t) if t.online().contains(5) => {
            println!("list before, cpu5/ after coming up: read with CPU 5 up");
            assert_eq!(t.online(), host.online());
            for level in [LevelKind::Package, LevelKind::Core] {
                assert_eq!(group(&t, level, 5, &t), group(&host, level, 5, &t));
            }
        }
        Ok(t) => {
            println!("list before, cpu5/ after coming up: read with CPU 5 down");
            assert_cpu5_down(&t, &host)
        }
        Err(e) => {
            println!("list before, cpu5/ after coming up: refused: {e}");
            assert!(e.to_string().contains("cpu5"), "{e}")
        }
    }
}
