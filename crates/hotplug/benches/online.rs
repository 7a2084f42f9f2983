//! Real time to online every CPU's masks, naive and scoped in the same run, on
//! seed 000's machines and a 16384-CPU one; and the cost of one offline/online
//! event on a fully online machine. Results and commands: BENCHMARKS.md.
//!
//! Naive on the 4096-CPU machine takes minutes per run, far beyond a criterion
//! sample; it is measured once by `examples/cost_curve.rs --naive-4096`.

#[path = "../tests/common/mod.rs"]
mod common;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use hotplug::{Algo, MaskEngine};
use topology::Topology;

fn online_every_cpu(c: &mut Criterion, name: &str, topo: &Topology, algos: &[Algo]) {
    let mut group = c.benchmark_group(format!("online_every_cpu/{name}"));
    group.sample_size(10);
    for &algo in algos {
        group.bench_function(algo.name(), |b| {
            b.iter_batched(
                || MaskEngine::new(topo, algo).unwrap(),
                |mut engine| {
                    let boot = engine.boot_cpu();
                    let cpus: Vec<usize> = engine.present().iter().filter(|&c| c != boot).collect();
                    for cpu in cpus {
                        engine.online(cpu).unwrap();
                    }
                    engine
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

fn benches(c: &mut Criterion) {
    online_every_cpu(
        c,
        "power8-lpar-1024",
        &common::power8_lpar_1024(),
        &[Algo::Naive, Algo::Scoped],
    );
    online_every_cpu(
        c,
        "power-4096-1socket",
        &common::power_4096_1socket(),
        &[Algo::Scoped],
    );
    online_every_cpu(
        c,
        "synthetic-16384",
        &common::synthetic_16384(),
        &[Algo::Scoped],
    );
    online_every_cpu(c, "x86-16384", &common::x86_16384(), &[Algo::Scoped]);

    // One event on a full machine: take CPU 517 down and bring it back.
    let topo = common::power8_lpar_1024();
    let mut group = c.benchmark_group("offline_online_one_cpu/power8-lpar-1024");
    for algo in [Algo::Naive, Algo::Scoped] {
        let mut engine = MaskEngine::new(&topo, algo).unwrap();
        for cpu in 1..1024 {
            engine.online(cpu).unwrap();
        }
        group.bench_function(algo.name(), |b| {
            b.iter(|| {
                engine.offline(517).unwrap();
                engine.online(517).unwrap()
            })
        });
    }
    group.finish();
}

criterion_group!(online, benches);
criterion_main!(online);
