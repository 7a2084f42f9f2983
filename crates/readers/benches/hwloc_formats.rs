//! hwloc formats: our readers against hwloc's own `lstopo-no-graphics`, measured
//! in the same run.
//!
//! - `synthetic/manycore-parse`: `readers::synthetic::parse` of the 16384-PU
//!   description `package:4 numa:4 l3:1 core:512 pu:2`, in process.
//! - `xml/manycore-read-v3` and `-v2`: `readers::xml::read` of the largest
//!   corpus XML (`192em64t-12gr2n8c2t.xml`, 348 KB, hwloc 3.0 format) and of our
//!   v2 re-export of it, in process.
//! - `xml-16384/*`: the 16384-PU machine as XML (our v2 export, 17 MB), read
//!   in process, by our CLI and by lstopo.
//! - Baselines, whole processes (spawned in a loop): `lstopo-no-graphics
//!   --input <same> --of xml -` with output discarded (lstopo 2.9 cannot read
//!   3.0 files, so it reads the v2 re-export); and, for a fair whole-process
//!   comparison, our CLI `manycore topo --synthetic/--xml <same> --format json`
//!   when a release build of it exists (`cargo build --release -p cli`).
//!
//! Run: `cargo bench -p readers --bench hwloc_formats`. The process baselines are
//! skipped with a message when lstopo or the CLI binary is missing.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use criterion::{black_box, criterion_group, criterion_main, Criterion};

const SYNTHETIC: &str = "package:4 numa:4 l3:1 core:512 pu:2";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn largest_xml() -> PathBuf {
    repo().join("../shared/corpus/hwloc/tests/hwloc/xml/192em64t-12gr2n8c2t.xml")
}

fn lstopo() -> Option<PathBuf> {
    std::env::var("PATH")
        .unwrap_or_default()
        .split(':')
        .chain(["/usr/bin"])
        .map(|d| Path::new(d).join("lstopo-no-graphics"))
        .find(|p| p.is_file())
}

fn cli() -> Option<PathBuf> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("target"));
    let p = target.join("release/manycore");
    p.is_file().then_some(p)
}

fn run(cmd: &mut Command) {
    let status = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("spawn");
    assert!(status.success(), "{cmd:?} failed");
}

fn benches(c: &mut Criterion) {
    let xml_text = std::fs::read_to_string(largest_xml()).expect("corpus XML");
    let topo = readers::xml::read(&xml_text, "largest").expect("largest corpus XML reads");
    let v2_text = readers::xml::write(&topo);
    let v2_path = std::env::temp_dir().join("manycore-bench-largest-v2.xml");
    std::fs::write(&v2_path, &v2_text).unwrap();

    let mut g = c.benchmark_group("synthetic");
    g.bench_function("manycore-parse-16384", |b| {
        b.iter(|| readers::synthetic::parse(black_box(SYNTHETIC)).unwrap())
    });
    g.sample_size(10).measurement_time(Duration::from_secs(5));
    if let Some(cli) = cli() {
        g.bench_function("manycore-cli-process-16384", |b| {
            b.iter(|| {
                run(Command::new(&cli).args(["topo", "--synthetic", SYNTHETIC, "--format", "json"]))
            })
        });
    } else {
        eprintln!("note: no release CLI binary; build it with `cargo build --release -p cli`");
    }
    if let Some(lstopo) = lstopo() {
        g.bench_function("lstopo-process-16384", |b| {
            b.iter(|| run(Command::new(&lstopo).args(["--input", SYNTHETIC, "--of", "xml", "-"])))
        });
    } else {
        eprintln!("note: lstopo-no-graphics missing: no hwloc baseline");
    }
    g.finish();

    let mut g = c.benchmark_group("xml");
    g.bench_function("manycore-read-v3-348KB", |b| {
        b.iter(|| readers::xml::read(black_box(&xml_text), "largest").unwrap())
    });
    g.bench_function("manycore-read-v2", |b| {
        b.iter(|| readers::xml::read(black_box(&v2_text), "largest").unwrap())
    });
    g.sample_size(10).measurement_time(Duration::from_secs(5));
    if let Some(cli) = cli() {
        g.bench_function("manycore-cli-process-v2", |b| {
            b.iter(|| {
                run(Command::new(&cli)
                    .args(["topo", "--format", "json", "--xml"])
                    .arg(&v2_path))
            })
        });
    }
    if let Some(lstopo) = lstopo() {
        g.bench_function("lstopo-process-v2", |b| {
            b.iter(|| {
                run(Command::new(&lstopo)
                    .arg("--input")
                    .arg(&v2_path)
                    .args(["--of", "xml", "-"]))
            })
        });
    }
    g.finish();

    // The 16384-PU machine as XML (our v2 export, 17 MB, as large as lstopo's
    // own export of it): where hwloc's per-object insertion cost shows.
    let big = readers::synthetic::parse(SYNTHETIC).unwrap();
    let big_text = readers::xml::write(&big);
    let big_path = std::env::temp_dir().join("manycore-bench-16384.xml");
    std::fs::write(&big_path, &big_text).unwrap();
    let mut g = c.benchmark_group("xml-16384");
    g.sample_size(10).measurement_time(Duration::from_secs(5));
    g.bench_function("manycore-read", |b| {
        b.iter(|| readers::xml::read(black_box(&big_text), "16384").unwrap())
    });
    if let Some(cli) = cli() {
        g.bench_function("manycore-cli-process", |b| {
            b.iter(|| {
                run(Command::new(&cli)
                    .args(["topo", "--format", "json", "--xml"])
                    .arg(&big_path))
            })
        });
    }
    if let Some(lstopo) = lstopo() {
        g.bench_function("lstopo-process", |b| {
            b.iter(|| {
                run(Command::new(&lstopo)
                    .arg("--input")
                    .arg(&big_path)
                    .args(["--of", "xml", "-"]))
            })
        });
    }
    g.finish();
}

criterion_group!(hwloc, benches);
criterion_main!(hwloc);
