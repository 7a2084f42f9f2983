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

/// Both sides of the guest/hypervisor loop against their definitions.
/// The guest: `available_idle_cpu()` is `idle_cpu() && !vcpu_is_preempted()`
/// (kernel/sched/core.c), and powerpc's `vcpu_is_preempted()`
/// (arch/powerpc/include/asm/paravirt.h, v6.8) is false on a dedicated
/// partition and for a thread of the caller's own core (PowerVM dispatches
/// whole cores), true for a thread of a core that is not dispatched. The
/// hypervisor: a VP whose last busy thread went idle keeps its core through
/// the snooze and then cedes it; the next busy thread costs one dispatch
/// (lparstat's vcsw), and physc counts dispatched time only.
#[test]
fn the_guest_sees_which_vps_are_dispatched() {
    use place::sched::Sched;
    let m = power768(Kernel::V6_8);
    let vp_of = |c: u32| m.vp[c as usize];
    let (a, b) = (0u32, m.vp_cpus[1][0]); // CPUs of two different VPs
    assert_ne!(vp_of(a), vp_of(b));
    let sibling = m.vp_cpus[vp_of(a) as usize][1];
    for lpar in [Lpar::Shared, Lpar::Dedicated] {
        let hv = HvParams::defaults(lpar, m.vp_cpus.len());
        let snooze = hv.snooze_ns;
        let mut s = Sched::new(&m, Kernel::V6_8, hv, Workload::Spin, 1);
        let t = s.add_task(a);
        s.tasks[t as usize].runnable = true;
        s.now = 1_000_000_000;
        s.enqueue(t, a); // VP of `a` dispatched from now on
        let shared = lpar == Lpar::Shared;
        // From a busy CPU of a dispatched VP: its own idle sibling is
        // available, an idle CPU of a never-dispatched VP only when dedicated.
        assert!(s.available_idle_cpu(sibling, a), "{lpar:?}");
        assert_eq!(s.available_idle_cpu(b, a), !shared, "{lpar:?}");
        // From that never-dispatched VP, asking about its own thread: no.
        assert!(s.available_idle_cpu(b, b), "{lpar:?}");
        // The task blocks: the VP keeps its core through the snooze, then cedes.
        s.now += 1_000_000_000;
        s.block(t);
        s.now += snooze / 2;
        assert!(s.available_idle_cpu(a, b), "{lpar:?} within the snooze");
        s.now += snooze;
        assert_eq!(
            s.available_idle_cpu(a, b),
            !shared,
            "{lpar:?} after the cede"
        );
        if shared {
            // One dispatch so far, and physc is the dispatched time: 1 s of
            // running plus the snooze, of the 2.00015 s elapsed.
            let (dispatched, dispatches) = s.hv.totals(s.now);
            assert_eq!(dispatches, 1);
            assert_eq!(dispatched, 1_000_000_000 + snooze);
            // Work again on the ceded VP: a second dispatch.
            s.wake(t, b, false);
            assert_eq!(s.hv.totals(s.now).1, 2);
        }
    }
}

/// Exec balancing (`sched_exec()` → `select_task_rq_fair(SD_BALANCE_EXEC)`,
/// v6.8): the slow path from the highest domain with the flag. On x86-2s-16
/// (two 8-CPU packages, a node each; the NUMA level keeps SD_BALANCE_EXEC at
/// x86's distance) `find_idlest_group()` at the NUMA level compares the two
/// nodes: with nothing running the local node is as idle as the other and
/// the task stays home; with one task at home it leaves, because the NUMA
/// allowance is `imb_numa_nr` = 1 there (`build_sched_domains()`: the PKG
/// level above the 8-CPU LLC spans one LLC, so 8 >> 3) and the home node
/// would run 2 (`adjust_numa_imbalance()` keeps the imbalance of 1 idle CPU);
/// with the home node full it leaves too (fully busy against spare capacity).
#[test]
fn exec_balancing_follows_the_numa_allowance() {
    use place::fair::WakeKind;
    use place::sched::Sched;
    let topo = readers::catalogue::machine("x86-2s-16").unwrap();
    let m = machine_for(&topo, Kernel::V6_12, false, &MachineOptions::default()).unwrap();
    let hv = HvParams::defaults(Lpar::None, m.vp_cpus.len());
    let mut s = Sched::new(&m, Kernel::V6_12, hv, Workload::Spin, 1);
    let home: Vec<u32> = (0..m.ncpu() as u32)
        .filter(|&c| m.package[c as usize] == m.package[0])
        .collect();
    let exec_from_0 = |s: &mut Sched<'_>| {
        let t = s.add_task(0);
        let c = s.select_task_rq(t, 0, 0, WakeKind::Exec);
        m.package[c as usize] == m.package[0]
    };
    let busy = |s: &mut Sched<'_>, c: u32| {
        let t = s.add_task(c);
        s.tasks[t as usize].runnable = true;
        s.enqueue(t, c);
    };
    assert!(exec_from_0(&mut s), "idle machine: stays home");
    busy(&mut s, home[1]);
    assert!(!exec_from_0(&mut s), "one task at home: leaves");
    for &c in home.iter().filter(|&&c| c != home[1]) {
        busy(&mut s, c);
    }
    assert!(!exec_from_0(&mut s), "home full: leaves");
}
