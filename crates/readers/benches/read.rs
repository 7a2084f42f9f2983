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

/// Extracts an archive into a private temporary directory and returns the
/// directory holding `sys/`.
fn extract(archive: &Path, into: &Path) -> PathBuf {
    let bytes = std::fs::read(archive).unwrap();
    let decoded: Box<dyn std::io::Read> = if bytes.starts_with(&[0x1f, 0x8b]) {
        Box::new(flate2::read::GzDecoder::new(&bytes[..]))
    } else {
        Box::new(bzip2::read::BzDecoder::new(&bytes[..]))
    };
    tar::Archive::new(decoded).unpack(into).unwrap();
    // The root is the one top directory.
    std::fs::read_dir(into)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.join("sys").is_dir())
        .expect("a top directory holding sys/")
}

/// Writes the sysfs tree a Linux kernel would show for a regular machine of
/// `packages` × `cores` × `threads` CPUs (threads numbered last, one NUMA node
/// per package, an L1d per core and an L3 per package), with hex maps sized for
/// the machine's CPU count as the kernel writes them. The topology the seeds
/// talk about (thousands of CPUs) exists in no corpus snapshot, so it is made.
fn write_machine(root: &Path, packages: usize, cores: usize, threads: usize) -> usize {
    let n = packages * cores * threads;
    let per_thread = packages * cores;
    let place = |cpu: usize| ((cpu % per_thread) / cores, cpu % per_thread % cores);
    let hex = |pred: &dyn Fn(usize) -> bool| -> String {
        let mask: cpumask::CpuMask = (0..n).filter(|&c| pred(c)).collect();
        format!("{}\n", mask.to_hex_string(n))
    };
    let write = |path: &str, text: &str| {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    let cpu = "sys/devices/system/cpu";
    let cpuinfo: String = (0..n)
        .map(|c| format!("processor\t: {c}\nvendor_id\t: GenuineIntel\nflags\t\t: fpu lm\n\n"))
        .collect();
    write("proc/cpuinfo", &cpuinfo);
    for f in ["possible", "present", "online"] {
        write(&format!("{cpu}/{f}"), &format!("0-{}\n", n - 1));
    }
    let mut core_maps: Vec<String> = Vec::with_capacity(per_thread);
    for i in 0..per_thread {
        core_maps.push(hex(&|c| c % per_thread == i));
    }
    let package_maps: Vec<String> = (0..packages).map(|p| hex(&|c| place(c).0 == p)).collect();
    for c in 0..n {
        let (p, core) = place(c);
        let d = format!("{cpu}/cpu{c}");
        write(
            &format!("{d}/topology/physical_package_id"),
            &format!("{p}\n"),
        );
        write(&format!("{d}/topology/core_id"), &format!("{core}\n"));
        write(
            &format!("{d}/topology/thread_siblings"),
            &core_maps[c % per_thread],
        );
        write(&format!("{d}/topology/core_siblings"), &package_maps[p]);
        for (index, level, ty, size, map) in [
            (0, 1, "Data", "48K", &core_maps[c % per_thread]),
            (3, 3, "Unified", "32768K", &package_maps[p]),
        ] {
            let i = format!("{d}/cache/index{index}");
            write(&format!("{i}/level"), &format!("{level}\n"));
            write(&format!("{i}/type"), &format!("{ty}\n"));
            write(&format!("{i}/size"), &format!("{size}\n"));
            write(&format!("{i}/coherency_line_size"), "64\n");
            write(&format!("{i}/shared_cpu_map"), map);
        }
    }
    for (p, map) in package_maps.iter().enumerate() {
        let d = format!("sys/devices/system/node/node{p}");
        write(&format!("{d}/cpumap"), map);
        let row: Vec<&str> = (0..packages)
            .map(|q| if q == p { "10" } else { "20" })
            .collect();
        write(&format!("{d}/distance"), &format!("{}\n", row.join(" ")));
        write(
            &format!("{d}/meminfo"),
            &format!("Node {p} MemTotal:       67108864 kB\n"),
        );
    }
    n
}

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

/// The fewest files any sysfs reader must open to learn `t` from `dir`, if it
/// trusted every sibling set completely: per core, one SMT-sibling mask and the
/// core id (of its first CPU); per package, its id and mask; per NUMA node, its
/// CPU map and distances; per distinct cache, the level, type, size and sharing
/// map of one CPU's `indexN`; and the `online` list. Only files present in the
/// dump are kept. Timed with one open, one read and one close each (no parsing),
/// this is a floor under any reader of the same input, ours or hwloc's.
fn minimal_files(dir: &Path, t: &topology::Topology) -> Vec<PathBuf> {
    let cpu = dir.join("sys/devices/system/cpu");
    let first_existing = |candidates: &[PathBuf]| candidates.iter().find(|p| p.is_file()).cloned();
    let mut files: Vec<PathBuf> = Vec::new();
    let mut push = |candidates: &[PathBuf]| {
        if let Some(p) = first_existing(candidates) {
            files.push(p);
        }
    };
    push(&[cpu.join("online")]);
    for level in t.levels() {
        for group in &level.groups {
            let Some(first) = group.cpus.first() else {
                continue;
            };
            let topo = cpu.join(format!("cpu{first}/topology"));
            match level.kind {
                topology::LevelKind::Core => {
                    push(&[topo.join("core_cpus"), topo.join("thread_siblings")]);
                    push(&[topo.join("core_id")]);
                }
                topology::LevelKind::Package => {
                    push(&[topo.join("package_cpus"), topo.join("core_siblings")]);
                    push(&[topo.join("physical_package_id")]);
                }
                _ => {}
            }
        }
    }
    for node in t.nodes() {
        let d = dir.join(format!("sys/devices/system/node/node{}", node.id));
        push(&[d.join("cpumap"), d.join("cpulist")]);
        push(&[d.join("distance")]);
    }
    for cache in t.caches() {
        let Some(first) = cache.cpus.first() else {
            continue;
        };
        let cache_dir = cpu.join(format!("cpu{first}/cache"));
        let Ok(entries) = std::fs::read_dir(&cache_dir) else {
            continue;
        };
        for index in entries.flatten().map(|e| e.path()) {
            let level = std::fs::read_to_string(index.join("level")).unwrap_or_default();
            if level.trim() == cache.level.to_string() {
                for f in ["level", "type", "size", "shared_cpu_map"] {
                    push(&[index.join(f)]);
                }
                break;
            }
        }
    }
    files
}

/// One open, one read, one close per file: the least any reader can do.
fn read_floor(files: &[PathBuf]) -> usize {
    use std::io::Read;
    let mut buf = [0u8; 4096];
    let mut total = 0;
    for p in files {
        let mut f = std::fs::File::open(p).unwrap();
        total += f.read(&mut buf).unwrap();
    }
    total
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
        let dir = extract(&archive, &tmp.path().join(name));
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
