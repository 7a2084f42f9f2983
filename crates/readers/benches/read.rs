//! Reading the corpus' largest sysfs snapshots, against hwloc's `lstopo` on the
//! same input in the same run.
//!
//! For each snapshot:
//! - `manycore/dir`: [`readers::sysfs::read_path`] on the extracted directory
//!   (the same input hwloc gets);
//! - `manycore/archive`: [`readers::sysfs::read_archive_bytes`] on the archive
//!   bytes already in memory (decompression included);
//! - `hwloc/lstopo`: `lstopo-no-graphics --input DIR --no-io --of xml` writing to
//!   a pipe, i.e. hwloc's whole discovery plus process start-up (hwloc has no
//!   Rust binding to call in-process; process start-up is measured alone by
//!   `hwloc/lstopo-version` so the discovery share can be estimated).
//!
//! - `manycore/cli`: the whole `manycore topo --sysfs DIR --format json` process
//!   writing to a pipe, the like-for-like counterpart of `hwloc/lstopo`; run
//!   when the CLI has been built (`cargo build --release -p manycore`) into the
//!   same target directory, skipped otherwise.
//!
//! - `floor/minimal-files`: only opening, reading and closing the fewest files
//!   any reader needs for that topology (see `minimal_files`), in process: the
//!   bound under which no sysfs reader can go on this machine, which tells
//!   whether a ratio against hwloc is limited by our code or by the kernel.
//!
//! Run: `cargo build --release -p manycore && cargo bench -p readers --bench read`.
//! Results go in BENCHMARKS.md.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};

#[path = "support/sysfs_tree.rs"]
mod sysfs_tree;
use sysfs_tree::{extract, minimal_files, read_floor, write_machine};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus")
}

/// The largest snapshots with their archive paths (relative to the corpus).
const SNAPSHOTS: &[(&str, &str)] = &[
    (
        "ia64-512cpus",
        "util-linux/history/a292bbdec-parent/tests/ts/lscpu/dumps/ia64-512cpus.tar.gz",
    ),
    (
        "256ia64-64n2s2c",
        "hwloc/tests/hwloc/linux/256ia64-64n2s2c.tar.bz2",
    ),
    (
        "memorysidecaches",
        "hwloc/tests/hwloc/linux/memorysidecaches.tar.bz2",
    ),
    (
        "x86_64-64cpu",
        "util-linux/tests/ts/lscpu/dumps/x86_64-64cpu.tar.gz",
    ),
];

fn lstopo_available() -> bool {
    Command::new("lstopo-no-graphics")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The release CLI binary next to this bench's target directory, if built.
fn manycore_cli() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    // target/release/deps/read-<hash> → target/release/manycore
    let bin = exe.parent()?.parent()?.join("manycore");
    bin.is_file().then_some(bin)
}

fn cli(bin: &Path, dir: &Path) {
    let out = Command::new(bin)
        .args(["topo", "--format", "json", "--sysfs"])
        .arg(dir)
        .stderr(Stdio::null())
        .output()
        .expect("manycore");
    assert!(out.status.success() && !out.stdout.is_empty());
}

fn lstopo(dir: &Path) {
    let out = Command::new("lstopo-no-graphics")
        .arg("--input")
        .arg(dir)
        .args(["--if", "fsroot", "--no-io", "--of", "xml", "-"])
        .stderr(Stdio::null())
        .output()
        .expect("lstopo-no-graphics");
    assert!(out.status.success() && !out.stdout.is_empty());
}

fn bench(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let with_hwloc = lstopo_available();
    let cli_bin = manycore_cli();
    if cli_bin.is_none() {
        eprintln!("manycore CLI not built in this target directory: manycore/cli skipped");
    }
    if with_hwloc {
        c.bench_function("hwloc/lstopo-version", |b| {
            b.iter(|| {
                Command::new("lstopo-no-graphics")
                    .arg("--version")
                    .stdout(Stdio::null())
                    .status()
                    .unwrap()
            })
        });
    } else {
        eprintln!("lstopo-no-graphics not installed: hwloc baselines skipped");
    }
    for (name, rel) in SNAPSHOTS {
        let archive = corpus().join(rel);
        let bytes = std::fs::read(&archive).unwrap();
        let dir = extract(&archive, &tmp.path().join(name)).expect("a snapshot holding sys/");
        let t = readers::sysfs::read_path(&dir).unwrap();
        let cpus = t.cpus().len();
        let floor = minimal_files(&dir, &t);
        eprintln!("{name}: floor reads {} files", floor.len());
        let mut g = c.benchmark_group(format!("{name} ({cpus} CPUs)"));
        g.bench_function("floor/minimal-files", |b| b.iter(|| read_floor(&floor)));
        g.sample_size(20).measurement_time(Duration::from_secs(4));
        g.bench_function("manycore/dir", |b| {
            b.iter(|| readers::sysfs::read_path(&dir).unwrap())
        });
        g.bench_function("manycore/archive", |b| {
            b.iter(|| readers::sysfs::read_archive_bytes(&bytes, name).unwrap())
        });
        if let Some(bin) = &cli_bin {
            g.bench_function("manycore/cli", |b| b.iter(|| cli(bin, &dir)));
        }
        if with_hwloc {
            g.bench_function("hwloc/lstopo", |b| b.iter(|| lstopo(&dir)));
        }
        g.finish();
    }
}

/// Generated machines of the seeds' sizes: 1024 CPUs (seed 000's bring-up
/// case) and 4096 CPUs (seeds 000 and 002); 16384 CPUs (the model's capacity)
/// when `MANYCORE_BENCH_BIG=1`, as its tree is about 300 MB of sysfs files.
fn bench_generated(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let with_hwloc = lstopo_available();
    let cli_bin = manycore_cli();
    let mut shapes = vec![
        ("1024cpu-4p128c2t", 4, 128, 2),
        ("4096cpu-4p512c2t", 4, 512, 2),
    ];
    if std::env::var("MANYCORE_BENCH_BIG").is_ok_and(|v| v == "1") {
        shapes.push(("16384cpu-4p2048c2t", 4, 2048, 2));
    }
    for (name, packages, cores, threads) in shapes {
        let dir = tmp.path().join(name);
        let n = write_machine(&dir, packages, cores, threads);
        let t = readers::sysfs::read_path(&dir).unwrap();
        assert_eq!(t.cpus().len(), n);
        assert_eq!(t.count(topology::LevelKind::Core), packages * cores);
        let floor = minimal_files(&dir, &t);
        eprintln!("{name}: floor reads {} files", floor.len());
        let mut g = c.benchmark_group(format!("generated {name}"));
        g.bench_function("floor/minimal-files", |b| b.iter(|| read_floor(&floor)));
        g.sample_size(10).measurement_time(Duration::from_secs(8));
        g.bench_function("manycore/dir", |b| {
            b.iter(|| readers::sysfs::read_path(&dir).unwrap())
        });
        if let Some(bin) = &cli_bin {
            g.bench_function("manycore/cli", |b| b.iter(|| cli(bin, &dir)));
        }
        if with_hwloc {
            g.bench_function("hwloc/lstopo", |b| b.iter(|| lstopo(&dir)));
        }
        g.finish();
    }
}

criterion_group!(benches, bench, bench_generated);
criterion_main!(benches);
