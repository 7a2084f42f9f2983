//! Engine behaviour against facts independent of the engine's own output.
use place::run::{machine_for, run, Config};
use place::{HvParams, Kernel, Lpar, MachineOptions, Workload};

fn power768(kernel: Kernel) -> place::Machine {
    let topo = readers::catalogue::machine("power10-shared-768").unwrap();
    machine_for(&topo, kernel, true, &MachineOptions::default()).unwrap()
}

/// A run is a pure function of its inputs: the same seed gives the same report.
#[test]
fn same_seed_same_run() {
    let m = power768(Kernel::V6_8);
    let hv = HvParams::defaults(Lpar::Shared, m.vp_cpus.len());
    let cfg = Config::new(Kernel::V6_8, hv, Workload::Ebizzy, 32, 3.0);
    let a = serde_json::to_string(&run(&m, &cfg).unwrap()).unwrap();
    let b = serde_json::to_string(&run(&m, &cfg).unwrap()).unwrap();
    assert_eq!(a, b);
}

/// lbusy is threads / CPUs for always-runnable threads (seed 001's lparstat
/// rows show exactly that: 4.16 for 32 threads on 768 CPUs), once the balancer
/// has given every thread a CPU of its own (fork balancing doubles some up at
/// first; 6 virtual seconds is enough here).
#[test]
fn lbusy_is_threads_over_cpus_for_ebizzy() {
    let m = power768(Kernel::V6_6);
    let hv = HvParams::defaults(Lpar::Shared, m.vp_cpus.len());
    let r = run(
        &m,
        &Config::new(Kernel::V6_6, hv, Workload::Ebizzy, 128, 6.0),
    )
    .unwrap();
    assert!(
        (r.lbusy - 100.0 * 128.0 / 768.0).abs() < 0.01,
        "{}",
        r.lbusy
    );
    assert_eq!(r.busy_cpus, 128.0);
}

/// Asym packing (6.8 on a shared LPAR) uses fewer big cores than 6.6 for a
/// light load: seed 001's claim.
#[test]
fn asym_packing_uses_fewer_big_cores() {
    let cfg = |k| {
        let m = power768(k);
        let hv = HvParams::defaults(Lpar::Shared, m.vp_cpus.len());
        run(&m, &Config::new(k, hv, Workload::Ebizzy, 32, 10.0)).unwrap()
    };
    let (before, after) = (cfg(Kernel::V6_6), cfg(Kernel::V6_8));
    assert!(
        after.busy_vps < before.busy_vps,
        "{} !< {}",
        after.busy_vps,
        before.busy_vps
    );
}
