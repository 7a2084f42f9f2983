//! The same text in a cpulist file and in a hex map names different CPUs
//! (`1,3` is CPUs 1 and 3 as a list, CPUs 0, 1 and 32 as a map of 32-bit
//! groups, the kernel's `%*pbl` and `%*pb` formats): a sharing map is never
//! taken for the core mask it reads like when their forms differ. Truth: the
//! two formats as the kernel's `bitmap_print_to_pagebuf` writes them,
//! applied by hand to a four-CPU dump written here.

use std::path::Path;

use topology::CacheKind;

const CPU: &str = "sys/devices/system/cpu";

fn write(root: &Path, path: &str, text: &str) {
    let p = root.join(path);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

#[test]
fn a_cache_map_reading_like_the_core_list_is_read_as_a_map() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "proc/cpuinfo", "");
    for f in ["possible", "present", "online"] {
        write(d, &format!("{CPU}/{f}"), "0-3\n");
    }
    // CPU 1's core as a list: CPUs 1 and 3. Each CPU's L1d map as hex:
    // CPU 1's is the same text, CPUs 0, 1 (and 32, not possible).
    let cores = ["0", "1,3", "2", "1,3"];
    let maps = ["1", "1,3", "4", "8"];
    for cpu in 0..4 {
        let topo = format!("{CPU}/cpu{cpu}/topology");
        write(d, &format!("{topo}/physical_package_id"), "0\n");
        write(d, &format!("{topo}/core_id"), &format!("{cpu}\n"));
        write(
            d,
            &format!("{topo}/core_cpus_list"),
            &format!("{}\n", cores[cpu]),
        );
        let index = format!("{CPU}/cpu{cpu}/cache/index0");
        write(d, &format!("{index}/level"), "1\n");
        write(d, &format!("{index}/type"), "Data\n");
        write(d, &format!("{index}/size"), "32K\n");
        write(
            d,
            &format!("{index}/shared_cpu_map"),
            &format!("{}\n", maps[cpu]),
        );
    }
    let t = readers::sysfs::read_dir(d).unwrap();
    let mut l1: Vec<Vec<usize>> = t
        .caches()
        .iter()
        .filter(|c| c.level == 1 && c.kind == CacheKind::Data)
        .map(|c| c.cpus.iter().collect())
        .collect();
    l1.sort();
    assert_eq!(l1, [vec![0], vec![0, 1], vec![2], vec![3]]);
}
