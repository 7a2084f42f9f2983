//! Wall time to simulate a full bring-up (goal: 16384 CPUs in under 1 s), against
//! a baseline measured in the same run: crates/hotplug's scoped mask engine
//! onlining the same CPUs with no simulation around it.
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use sim::{Algo, Calibrate, CostTable, Kick, Options, Platform, Strategy};
use topology::{Arch, Shape};

fn machines() -> Vec<(&'static str, Platform, topology::Topology)> {
    vec![
        (
            "x86-16384",
            Platform::X86,
            Shape::simple(Arch::X86_64, 8, 1024, 2).build().unwrap(),
        ),
        (
            "power-16384",
            Platform::PowerPc,
            Shape::simple(Arch::PowerPc64, 16, 128, 8).build().unwrap(),
        ),
    ]
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("bringup-16384");
    group.sample_size(10);
    for (name, platform, topo) in machines() {
        assert_eq!(topo.present().weight(), 16384);
        let costs = CostTable::for_platform(platform, &sim::fit::fitted().unwrap());
        group.bench_with_input(BenchmarkId::new("masks-only", name), &topo, |b, topo| {
            b.iter(|| sim::masks::total_ops(topo, Algo::Scoped).unwrap())
        });
        for kick in [Kick::Serial, Kick::Parallel] {
            let strategy = Strategy {
                kick,
                calibrate: Calibrate::Parallel,
                masks: Algo::Scoped,
            };
            group.bench_with_input(
                BenchmarkId::new(format!("simulate-{kick}"), name),
                &topo,
                |b, topo| {
                    b.iter(|| sim::simulate(topo, &costs, &strategy, &Options::default()).unwrap())
                },
            );
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
