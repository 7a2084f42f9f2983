//! All scheduler domains of a 16384-CPU, 64-node synthetic x86 machine
//! (16 packages x 4 clusters x 128 cores x 2 threads, 4 nodes per package,
//! distances 10/12/32), timed with criterion. Peak memory is measured on the
//! `domains_16384` example with /usr/bin/time -v (see BENCHMARKS.md).
//!
//! Baseline, measured in the same run: materialising one CpuMask per CPU per
//! level (what a naive per-CPU domain array would hold before any group).
//!
//!   cargo bench -p domains --bench build
use std::hint::black_box;
use std::time::Instant;

use cpumask::CpuMask;
use criterion::{criterion_group, criterion_main, Criterion};
use domains::KernelVersion;
use topology::Topology;

mod common;

/// The naive baseline: one 2 KiB mask per CPU per level, nothing shared.
fn naive_masks(topo: &Topology, levels: usize) -> Vec<CpuMask> {
    let mut v = Vec::with_capacity(topo.online().weight() * levels);
    for cpu in topo.online().iter() {
        for _ in 0..levels {
            v.push(topo.package_mask(cpu));
        }
    }
    v
}

fn bench(c: &mut Criterion) {
    let topo = common::machine_16384();
    assert_eq!(topo.online().weight(), 16384);
    assert_eq!(topo.nodes().len(), 64);

    let t = Instant::now();
    let doms = domains::build(&topo, KernelVersion::V6_12).unwrap();
    let once = t.elapsed();
    let levels = doms.cpus[0].domains.len();
    eprintln!(
        "16384 CPUs / 64 nodes: {} domains on cpu0 ({}), {} distinct spans; first build {:.1} ms",
        levels,
        doms.cpus[0]
            .domains
            .iter()
            .map(|d| doms.name(d))
            .collect::<Vec<_>>()
            .join(" "),
        doms.distinct_spans(),
        once.as_secs_f64() * 1e3,
    );
    drop(doms);

    let mut g = c.benchmark_group("domains-16384cpu-64node");
    g.sample_size(10);
    g.bench_function("build v6.12", |b| {
        b.iter(|| black_box(domains::build(black_box(&topo), KernelVersion::V6_12).unwrap()))
    });
    g.bench_function("baseline: naive per-CPU masks", |b| {
        b.iter(|| black_box(naive_masks(black_box(&topo), levels)))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
