//! The group-sum cache and the idlest-group trees built on it are bookkeeping
//! only: a run that keeps each group's runqueue sums between reads, and each
//! domain's groups ranked for `find_idlest_group()` while forks come at one
//! instant, makes exactly the decisions of a run that reads every CPU of every
//! group each time (Linux's way, and the reference here), on
//! machines whose top-level groups are big (fork balancing reads them for every
//! fork), overlapping (NUMA), or shared-LPAR, and for workloads that fork, wake
//! and balance.
mod support;

use place::run::{run, Report};
use place::{Kernel, Lpar, Workload};

fn both(machine: &str, kernel: Kernel, lpar: Lpar, w: Workload, threads: u32, secs: f64) {
    let m = support::catalogue_machine(machine, kernel, lpar);
    let go = |cache: bool| -> Report {
        let mut cfg = support::traced_config(&m, kernel, lpar, w, threads, secs);
        cfg.cache_group_sums = cache;
        run(&m, &cfg).unwrap()
    };
    let (read, cached) = (go(false), go(true));
    let what = format!("{machine} {kernel} {} x {threads}", w.name());
    assert_eq!(read.final_cpus, cached.final_cpus, "{what}: tasks' CPUs");
    assert_eq!(read.trace, cached.trace, "{what}: occupancy trace");
    assert_eq!(
        serde_json::to_string(&read).unwrap(),
        serde_json::to_string(&cached).unwrap(),
        "{what}: report"
    );
}

#[test]
fn shared_lpar_ebizzy_same_decisions() {
    both(
        "power10-shared-768",
        Kernel::V6_6,
        Lpar::Shared,
        Workload::Ebizzy,
        128,
        3.0,
    );
    both(
        "power10-shared-320",
        Kernel::V6_8,
        Lpar::Shared,
        Workload::Ebizzy,
        32,
        3.0,
    );
}

#[test]
fn numa_and_wakeups_same_decisions() {
    both(
        "x86-2n-128",
        Kernel::V6_12,
        Lpar::None,
        Workload::Hackbench { burst_us: 100 },
        100,
        1.0,
    );
    both(
        "arm64-d06",
        Kernel::V6_12,
        Lpar::None,
        Workload::Duty {
            run_us: 2000,
            sleep_us: 3000,
        },
        70,
        1.0,
    );
    both(
        "x86-uv-4096",
        Kernel::V6_12,
        Lpar::None,
        Workload::Spin,
        600,
        0.3,
    );
}
