//! x86 ITMT priorities as an input. Independent truth: what ITMT is for
//! (Intel Turbo Boost Max 3.0, `sched_set_itmt_core_prio()`; asym packing at
//! the SMT/CLS/MC levels): once settled, no task runs while a CPU of higher
//! priority in its package sits idle. And the priorities' text parser, by
//! property.
use place::run::{machine_for, run, Config};
use place::{parse_itmt, HvParams, Kernel, Lpar, MachineOptions, Workload};
use proptest::prelude::*;

/// Spinning tasks from CPU 0 on x86-2s-16 (2 packages x 8 cores, a node
/// each); returns, per task, whether an idle CPU of higher priority in its
/// package was left idle at the end.
fn passed_over(itmt: Option<Vec<Option<i64>>>, threads: u32) -> Vec<bool> {
    let topo = readers::catalogue::machine("x86-2s-16").unwrap();
    let prio = itmt.clone();
    let m = machine_for(
        &topo,
        Kernel::V6_12,
        false,
        &MachineOptions {
            itmt_priorities: itmt,
        },
    )
    .unwrap();
    let mut cfg = Config::new(
        Kernel::V6_12,
        HvParams::defaults(Lpar::None, m.vp_cpus.len()),
        Workload::Spin,
        threads,
        3.0,
    );
    cfg.start_cpu = Some(0);
    let r = run(&m, &cfg).unwrap();
    let prio_of = |c: u32| prio.as_ref().map_or(0, |p| p[c as usize].unwrap());
    let busy: Vec<u32> = r.final_cpus.iter().map(|&(c, _)| c).collect();
    busy.iter()
        .map(|&c| {
            (0..16u32).any(|o| o / 8 == c / 8 && !busy.contains(&o) && prio_of(o) > prio_of(c))
        })
        .collect()
}

/// Priorities rising with the core number inside each package: the last
/// cores of each package are the favoured ones.
fn rising() -> Vec<Option<i64>> {
    parse_itmt([
        "0,8=1", "1,9=2", "2,10=3", "3,11=4", "4,12=5", "5,13=6", "6,14=7", "7,15=8",
    ])
    .unwrap()
}

#[test]
fn tasks_settle_on_the_highest_priority_cores() {
    for threads in [1, 2, 3] {
        let over = passed_over(Some(rising()), threads);
        assert!(over.iter().all(|&o| !o), "{threads} tasks: {over:?}");
    }
}

/// Without the priorities the same runs stay near CPU 0, so the test above
/// shows the input at work, not a coincidence of the start CPU.
#[test]
fn without_itmt_the_favoured_cores_are_not_sought() {
    let topo_prio = rising();
    let topo = readers::catalogue::machine("x86-2s-16").unwrap();
    let m = machine_for(&topo, Kernel::V6_12, false, &MachineOptions::default()).unwrap();
    let mut cfg = Config::new(
        Kernel::V6_12,
        HvParams::defaults(Lpar::None, m.vp_cpus.len()),
        Workload::Spin,
        2,
        3.0,
    );
    cfg.start_cpu = Some(0);
    let r = run(&m, &cfg).unwrap();
    let best = r
        .final_cpus
        .iter()
        .all(|&(c, _)| topo_prio[c as usize] == Some(8) || topo_prio[c as usize] == Some(7));
    assert!(!best, "{:?}", r.final_cpus);
}

#[test]
fn refusals_name_the_item() {
    for (bad, says) in [
        ("0-3", "CPULIST=PRIORITY"),
        ("0-3=high", "not an integer"),
        (
            "0-3=2147483648",
            "not an integer from -2147483648 to 2147483647",
        ),
        ("0-3=18446744073709551615", "(Linux keeps it in an int)"),
        ("3-1=5", "3-1"),
        ("=5", "no CPU"),
    ] {
        let e = parse_itmt([bad]).unwrap_err();
        assert!(e.contains(bad) && e.contains(says), "{bad}: {e}");
    }
    assert_eq!(
        parse_itmt(["0=-2147483648", "1=2147483647"]).unwrap(),
        [Some(i32::MIN as i64), Some(i32::MAX as i64)]
    );
    let e = parse_itmt(["0-3=5", "3=6"]).unwrap_err();
    assert!(e.contains("CPU 3 already has priority 5"), "{e}");
    let topo = readers::catalogue::machine("x86-2s-16").unwrap();
    let short = parse_itmt(["0-14=1"]).unwrap();
    let e = machine_for(
        &topo,
        Kernel::V6_12,
        false,
        &MachineOptions {
            itmt_priorities: Some(short),
        },
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("CPU 15"), "{e}");
    let power = readers::catalogue::machine("power9-lpar-128").unwrap();
    let all = parse_itmt(["0-127=1"]).unwrap();
    let e = machine_for(
        &power,
        Kernel::V6_12,
        false,
        &MachineOptions {
            itmt_priorities: Some(all),
        },
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("x86"), "{e}");
}

proptest! {
    /// Disjoint CPU ranges with priorities, written as text, read back as
    /// exactly that mapping.
    #[test]
    fn written_priorities_read_back(ranges in prop::collection::vec((0usize..64, 1usize..8, -100i64..100), 1..8)) {
        let mut next = 0;
        let mut want: Vec<Option<i64>> = Vec::new();
        let mut items = Vec::new();
        for (gap, len, p) in ranges {
            let first = next + gap;
            let last = first + len - 1;
            want.resize(last + 1, None);
            for w in &mut want[first..=last] {
                *w = Some(p);
            }
            items.push(format!("{first}-{last}={p}"));
            next = last + 1;
        }
        let got = parse_itmt(items.iter().map(|s| s.as_str())).unwrap();
        prop_assert_eq!(got, want);
    }

    /// Any text is read or refused, never a panic, and never more than the
    /// cpumask's CPUs.
    #[test]
    fn any_text_is_read_or_refused(items in prop::collection::vec(".{0,24}", 0..4)) {
        if let Ok(p) = parse_itmt(items.iter().map(|s| s.as_str())) {
            prop_assert!(p.len() <= cpumask::MAX_CPUS);
        }
    }
}
