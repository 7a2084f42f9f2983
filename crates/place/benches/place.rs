//! Placement runs against the domain build alone on the same machine (the
//! baseline): the 768-CPU POWER10 shared LPAR with 512 ebizzy threads for 10
//! virtual seconds, and 16384 CPUs with 16384 spinning threads for 1 virtual
//! second. `cargo bench -p place`.
use criterion::{criterion_group, criterion_main, Criterion};
use place::run::{machine_for, run, Config};
use place::{HvParams, Kernel, Lpar, MachineOptions, Workload};

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("place");
    g.sample_size(10);
    let lpar = readers::catalogue::machine("power10-shared-768").unwrap();
    let big = readers::synthetic::parse("package:16 numa:1 core:512 pu:2").unwrap();
    for (name, topo, kernel, lp, w, threads, secs) in [
        (
            "power10-shared-768 ebizzy 512 x 10 s",
            &lpar,
            Kernel::V6_8,
            Lpar::Shared,
            Workload::Ebizzy,
            512,
            10.0,
        ),
        (
            "16384 CPUs spin 16384 x 1 s",
            &big,
            Kernel::V6_12,
            Lpar::None,
            Workload::Spin,
            16384,
            1.0,
        ),
    ] {
        g.bench_function(format!("domains only: {name}"), |b| {
            b.iter(|| domains::build(topo, kernel.domains_version()).unwrap())
        });
        g.bench_function(format!("place: {name}"), |b| {
            b.iter(|| {
                let m = machine_for(topo, kernel, lp == Lpar::Shared, &MachineOptions::default())
                    .unwrap();
                let hv = HvParams::defaults(lp, m.vp_cpus.len());
                run(&m, &Config::new(kernel, hv, w, threads, secs)).unwrap()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
