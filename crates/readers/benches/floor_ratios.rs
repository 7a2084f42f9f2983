//! Every sysfs snapshot of the corpus, and generated machines of 1024, 4096
//! and 16384 CPUs, each read many times against two baselines measured in
//! the same run, pair by pair:
//!
//! - in process, [`readers::sysfs::read_path`] against the minimal-file floor
//!   (opening, reading and closing only the files any reader needs; see
//!   `support/sysfs_tree.rs`): ratio = ours / floor, the goal being ≤ 1.5;
//! - whole process, `manycore topo --sysfs DIR --format json` against
//!   `lstopo-no-graphics --if fsroot --input DIR --no-io --of xml -` and
//!   `lscpu --sysroot DIR` (when installed): ratio = theirs / ours.
//!
//! The pairs alternate (A B A B …) so that the shared machine's drift hits
//! both sides; the median and the worst pair are printed, rows sorted worst
//! first. Snapshots our reader refuses (the hostile corpus entries) are
//! listed as skipped.
//!
//! Run: `cargo build --release -p manycore && cargo bench -p readers --bench floor_ratios`
//! (`PAIRS=N` pairs per input, default 15; `PROC_PAIRS=N` whole-process
//! pairs, default 5; `MANYCORE_BENCH_BIG=0` leaves out the 16384-CPU tree).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[path = "support/sysfs_tree.rs"]
mod sysfs_tree;
use sysfs_tree::{extract, minimal_files, read_floor, write_machine};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus")
}

/// Every sysfs snapshot archive in the corpus (hwloc's linux tests and
/// history, util-linux's lscpu dumps and history).
fn snapshots() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut walk = vec![corpus()];
    while let Some(dir) = walk.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let name = p.to_string_lossy().to_string();
            if p.is_dir() {
                walk.push(p);
            } else if (name.ends_with(".tar.bz2") || name.ends_with(".tar.gz"))
                && (name.contains("/linux/")
                    || name.contains("x86+linux")
                    || name.contains("lscpu/dumps")
                    || name.contains("hwloc/history"))
            {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// `pairs` alternating timings of `a` and `b`: (median a/b, worst a/b, median a, median b).
fn pairs(n: usize, mut a: impl FnMut(), mut b: impl FnMut()) -> (f64, f64, Duration, Duration) {
    a();
    b();
    let (mut ra, mut ta, mut tb) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..n {
        let t = Instant::now();
        a();
        let da = t.elapsed().as_secs_f64();
        let t = Instant::now();
        b();
        let db = t.elapsed().as_secs_f64();
        ra.push(da / db);
        ta.push(da);
        tb.push(db);
    }
    let worst = ra.iter().copied().fold(0.0, f64::max);
    let secs = |v: &mut Vec<f64>| Duration::from_secs_f64(median(v));
    (median(&mut ra), worst, secs(&mut ta), secs(&mut tb))
}

fn run(cmd: &mut Command) -> bool {
    cmd.stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

struct Row {
    name: String,
    cpus: usize,
    files: usize,
    floor: Duration,
    ours: Duration,
    ratio: f64,
    worst: f64,
    lstopo: Option<f64>,
    lscpu: Option<f64>,
}

fn measure(name: &str, dir: &Path, n: usize, proc_n: usize, cli: Option<&Path>) -> Option<Row> {
    let t = readers::sysfs::read_path(dir).ok()?;
    let floor = minimal_files(dir, &t);
    let (ratio, worst, ours, floor_t) = pairs(
        n,
        || {
            readers::sysfs::read_path(dir).unwrap();
        },
        || {
            read_floor(&floor);
        },
    );
    let ours_cmd = |bin: &Path| {
        let mut c = Command::new(bin);
        c.args(["topo", "--format", "json", "--sysfs"]).arg(dir);
        c
    };
    let versus = |mut other: Command| -> Option<f64> {
        let bin = cli?;
        if !run(&mut other) || !run(&mut ours_cmd(bin)) {
            return None;
        }
        let mut other = Some(other);
        let (r, _, _, _) = pairs(
            proc_n,
            || {
                run(other.as_mut().unwrap());
            },
            || {
                run(&mut ours_cmd(bin));
            },
        );
        Some(r)
    };
    let mut lstopo = Command::new("lstopo-no-graphics");
    lstopo
        .args(["--if", "fsroot", "--input"])
        .arg(dir)
        .args(["--no-io", "--of", "xml", "-"]);
    let mut lscpu = Command::new("lscpu");
    lscpu.arg("--sysroot").arg(dir);
    Some(Row {
        name: name.to_string(),
        cpus: t.cpus().len(),
        files: floor.len(),
        floor: floor_t,
        ours,
        ratio,
        worst,
        lstopo: versus(lstopo),
        lscpu: versus(lscpu),
    })
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let env = |k: &str, d: usize| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let (n, proc_n) = (env("PAIRS", 15), env("PROC_PAIRS", 5));
    let exe = std::env::current_exe().unwrap();
    let cli = exe
        .parent()
        .and_then(Path::parent)
        .map(|d| d.join("manycore"));
    let cli = cli.filter(|p| p.is_file());
    let tmp = tempfile::tempdir().unwrap();
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    for (i, archive) in snapshots().iter().enumerate() {
        let name = archive.file_name().unwrap().to_string_lossy().to_string();
        let into = tmp.path().join(format!("s{i}"));
        let dir = match std::panic::catch_unwind(|| extract(archive, &into)) {
            Ok(d) => d,
            Err(_) => {
                skipped.push(name);
                continue;
            }
        };
        match measure(&name, &dir, n, proc_n, cli.as_deref()) {
            Some(r) => rows.push(r),
            None => skipped.push(name),
        }
    }
    let mut shapes = vec![(4, 128, 2), (4, 512, 2)];
    if env("MANYCORE_BENCH_BIG", 1) == 1 {
        shapes.push((8, 1024, 2));
    }
    for (p, c, th) in shapes {
        let dir = tmp.path().join(format!("gen-{p}-{c}-{th}"));
        let cpus = write_machine(&dir, p, c, th);
        let name = format!("generated {p}p×{c}c×{th}t ({cpus} CPUs)");
        if let Some(r) = measure(&name, &dir, n.min(7), proc_n.min(3), cli.as_deref()) {
            rows.push(r);
        }
        std::fs::remove_dir_all(&dir).ok();
    }
    rows.sort_by(|a, b| b.ratio.total_cmp(&a.ratio));
    print_rows(&rows, n, proc_n);
    println!(
        "\nskipped (our reader refuses them): {}",
        skipped.join(", ")
    );
}

fn print_rows(rows: &[Row], n: usize, proc_n: usize) {
    let ms = |d: Duration| format!("{:.2}", d.as_secs_f64() * 1e3);
    let x = |r: Option<f64>| r.map_or("–".to_string(), |v| format!("{v:.2}×"));
    println!(
        "{} inputs; in process {n} pairs each (ours / floor, median and worst pair); whole process {proc_n} pairs (theirs / ours, median)",
        rows.len()
    );
    println!("| input | CPUs | floor files | floor ms | ours ms | ours / floor | worst pair | lstopo / ours | lscpu / ours |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for r in rows {
        println!(
            "| {} | {} | {} | {} | {} | {:.2}× | {:.2}× | {} | {} |",
            r.name,
            r.cpus,
            r.files,
            ms(r.floor),
            ms(r.ours),
            r.ratio,
            r.worst,
            x(r.lstopo),
            x(r.lscpu)
        );
    }
}
