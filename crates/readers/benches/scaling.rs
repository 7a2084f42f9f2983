//! Cost of every reader as the machine grows: 1024, 4096 and 16384 CPUs
//! (sysfs tree, `lscpu --parse` CSV, hwloc synthetic string, hwloc XML), and
//! 256, 1024 and 4096 NUMA nodes (synthetic and XML, the formats that carry
//! a distance matrix). Each input is made from one `topology::Shape`, written
//! by our writers (sysfs by the benchmarks' tree writer), and read back.
//!
//! Printed per reader: the median of several reads at each size, the cost
//! per CPU (or per node), and the growth against the smallest size divided
//! by the growth of the input (1.0 = linear; above 1 grows faster than the
//! input). A distance matrix is quadratic in nodes by nature: the node rows
//! also give the growth against nodes², the input's real size there.
//!
//! Run: `cargo bench -p readers --bench scaling` (`SYSFS=0` skips the sysfs
//! trees, which take longest to write).

use std::path::Path;
use std::time::{Duration, Instant};

use machines::{lscpu_csv, machine};
use topology::Numbering;

#[path = "support/machines.rs"]
mod machines;
#[path = "support/sysfs_tree.rs"]
mod sysfs_tree;

fn median_time(runs: usize, mut f: impl FnMut()) -> Duration {
    f();
    let mut v: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    v.sort();
    v[v.len() / 2]
}

/// One row: a reader at several sizes, (size, median).
fn print_row(reader: &str, unit: &str, points: &[(usize, Duration)], square: bool) {
    let (n0, t0) = points[0];
    let mut cells = Vec::new();
    for &(n, t) in points {
        let growth = t.as_secs_f64() / t0.as_secs_f64();
        let input = n as f64 / n0 as f64;
        let mut cell = format!(
            "{n} {unit}: {:.2} ms ({:.0} ns/{unit}, growth/input {:.2}",
            t.as_secs_f64() * 1e3,
            t.as_secs_f64() * 1e9 / n as f64,
            growth / input
        );
        if square {
            cell.push_str(&format!(", growth/input² {:.2}", growth / (input * input)));
        }
        cell.push(')');
        cells.push(cell);
    }
    println!("| {reader} | {} |", cells.join(" | "));
}

fn cpus_dimension(with_sysfs: bool) {
    let sizes = [(4u32, 128u32), (4, 512), (8, 1024)];
    let mut rows: Vec<(&str, Vec<(usize, Duration)>)> = vec![
        ("synthetic", Vec::new()),
        ("xml", Vec::new()),
        ("lscpu --parse", Vec::new()),
        ("sysfs (dir)", Vec::new()),
    ];
    let tmp = tempfile::tempdir().unwrap();
    for (packages, cores) in sizes {
        let t = machine(packages, cores, 1, Numbering::ThreadsLast).expect("shape");
        let n = t.cpus().len();
        let runs = if n > 8192 { 3 } else { 7 };
        let syn = readers::synthetic::write(&t).expect("synthetic");
        rows[0].1.push((
            n,
            median_time(runs, || drop(readers::synthetic::parse(&syn).unwrap())),
        ));
        let xml = readers::xml::write(&t);
        rows[1].1.push((
            n,
            median_time(runs, || drop(readers::xml::read(&xml, "x").unwrap())),
        ));
        let csv = lscpu_csv(&t);
        rows[2].1.push((
            n,
            median_time(runs, || drop(readers::lscpu::parse(&csv, "l").unwrap())),
        ));
        if with_sysfs {
            let dir = tmp.path().join(format!("{n}"));
            sysfs_tree::write_machine(&dir, packages as usize, cores as usize, 2);
            let read = || drop(readers::sysfs::read_path(Path::new(&dir)).unwrap());
            rows[3].1.push((n, median_time(runs.min(3), read)));
            std::fs::remove_dir_all(&dir).ok();
        }
    }
    println!("| reader | 1024 CPUs | 4096 CPUs | 16384 CPUs |\n|---|---|---|---|");
    for (reader, points) in rows.iter().filter(|r| !r.1.is_empty()) {
        print_row(reader, "CPU", points, false);
    }
}

fn nodes_dimension() {
    let mut rows: Vec<(&str, Vec<(usize, Duration)>)> =
        vec![("synthetic", Vec::new()), ("xml", Vec::new())];
    // One core (two threads) per node: nodes, not CPUs, grow.
    for nodes in [256u32, 1024, 4096] {
        let t = machine(nodes / 16, 16, 16, Numbering::ThreadsLast).expect("shape");
        let n = t.nodes().len();
        let syn = readers::synthetic::write(&t).expect("synthetic");
        rows[0].1.push((
            n,
            median_time(3, || drop(readers::synthetic::parse(&syn).unwrap())),
        ));
        let xml = readers::xml::write(&t);
        rows[1].1.push((
            n,
            median_time(3, || drop(readers::xml::read(&xml, "x").unwrap())),
        ));
    }
    println!("\n| reader | 256 nodes | 1024 nodes | 4096 nodes |\n|---|---|---|---|");
    for (reader, points) in &rows {
        print_row(reader, "node", points, true);
    }
}

fn main() {
    let with_sysfs = std::env::var("SYSFS").map_or(true, |v| v != "0");
    cpus_dimension(with_sysfs);
    nodes_dimension();
}
