//! The bound on a run's cost: a run estimated past `MAX_COST_NS` is refused
//! before its first event, naming the longest duration that is accepted, and
//! the runs README.md shows are accepted.
mod support;

use place::run::{check_cost, check_total_cost, run, Config, RunError};
use place::{Kernel, Lpar, Machine, Workload};
use support::catalogue_machine;

/// A run on `m` under Linux 6.8 (traced: the bound does not depend on it).
fn config(m: &Machine, lpar: Lpar, w: Workload, threads: u32, secs: f64) -> Config {
    support::traced_config(m, Kernel::V6_8, lpar, w, threads, secs)
}

/// The longest accepted duration the refusal names (µs).
fn named_bound(m: &Machine, cfg: &Config) -> u64 {
    match check_cost(m, cfg) {
        Err(RunError::TooLong { max_us, .. }) => max_us,
        other => panic!("expected a refusal for its cost, got {other:?}"),
    }
}

/// 32768 hackbench tasks for an hour would handle about 1.2e12 events:
/// `run` itself refuses, at once, and says by which option.
#[test]
fn an_hour_of_32768_hackbench_tasks_is_refused_by_run() {
    let m = catalogue_machine("x86-2n-128", Kernel::V6_8, Lpar::None);
    let cfg = config(
        &m,
        Lpar::None,
        Workload::Hackbench { burst_us: 50 },
        32768,
        3600.0,
    );
    let e = run(&m, &cfg).unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, RunError::TooLong { .. }), "{text}");
    assert!(text.starts_with("--duration"), "{text}");
    assert!(text.contains("32768 hackbench tasks on 128 CPUs"), "{text}");
    // Even a millisecond of 1 µs bursts is too much: then the tasks are the option to change.
    let cfg = config(
        &m,
        Lpar::None,
        Workload::Hackbench { burst_us: 1 },
        65536,
        0.001,
    );
    assert!(run(&m, &cfg)
        .unwrap_err()
        .to_string()
        .starts_with("--threads"));
}

/// The duration a refusal names is the bound itself: that duration is
/// accepted and 1 % more is refused, on machines of 16 to 4096 CPUs, for
/// spinning tasks (ticks only) and sleeping ones (ticks and events).
#[test]
fn the_named_duration_is_the_bound() {
    for (name, lpar) in [
        ("x86-2s-16", Lpar::None),
        ("x86-uv-4096", Lpar::None),
        ("power10-shared-768", Lpar::Shared),
    ] {
        let m = catalogue_machine(name, Kernel::V6_8, lpar);
        for (w, threads) in [
            (Workload::Spin, 16384),
            (Workload::Hackbench { burst_us: 50 }, 4096),
            (
                Workload::Duty {
                    run_us: 100,
                    sleep_us: 100,
                },
                1024,
            ),
        ] {
            let max_us = named_bound(&m, &config(&m, lpar, w, threads, 3600.0));
            let at = |us: u64| config(&m, lpar, w, threads, us as f64 / 1e6);
            assert!(
                check_cost(&m, &at(max_us)).is_ok(),
                "{name} {w:?} {max_us} µs"
            );
            assert!(
                check_cost(&m, &at(max_us + max_us / 100 + 1)).is_err(),
                "{name} {w:?} {max_us} µs"
            );
        }
    }
}

/// README.md's `manycore place` examples (the default duration is 10 s) and
/// the run the task's brief timed (4096 hackbench tasks for 0.1 s) are
/// accepted.
#[test]
fn the_readme_runs_are_accepted() {
    for (name, lpar, w, threads, secs) in [
        (
            "power10-shared-768",
            Lpar::Shared,
            Workload::Ebizzy,
            32,
            20.0,
        ),
        (
            "power10-shared-320",
            Lpar::Shared,
            Workload::Ebizzy,
            32,
            33.6,
        ),
        (
            "x86-2n-128",
            Lpar::None,
            Workload::Hackbench { burst_us: 50 },
            64,
            10.0,
        ),
        ("x86-2s-16", Lpar::None, Workload::Spin, 2, 10.0),
        (
            "x86-2n-128",
            Lpar::None,
            Workload::Hackbench { burst_us: 50 },
            4096,
            0.1,
        ),
    ] {
        let m = catalogue_machine(name, Kernel::V6_8, lpar);
        let cfg = config(&m, lpar, w, threads, secs);
        assert_eq!(
            check_cost(&m, &cfg),
            Ok(()),
            "{name} {w:?} {threads} x {secs} s"
        );
    }
}

/// Two runs of one command share the bound: each side of a `--compare`
/// pair alone fits at three quarters of the single run's bound, together
/// they do not, and the duration the pair's refusal names is the pair's
/// bound (accepted there, refused 1 % above), half the single one's but for
/// the forks.
#[test]
fn a_compare_pair_shares_one_bound() {
    let m = catalogue_machine("x86-2n-128", Kernel::V6_8, Lpar::None);
    let at = |us: u64| config(&m, Lpar::None, Workload::Spin, 16384, us as f64 / 1e6);
    let single = named_bound(&m, &at(3_600_000_000));
    let three_quarters = at(single * 3 / 4);
    assert_eq!(check_cost(&m, &three_quarters), Ok(()));
    let pair = |cfg: &Config| check_total_cost(&[(&m, cfg), (&m, cfg)]);
    let max_us = match pair(&three_quarters) {
        Err(RunError::TooLong { max_us, run, .. }) => {
            assert!(run.ends_with("twice (--compare)"), "{run}");
            max_us
        }
        other => panic!("expected the pair refused, got {other:?}"),
    };
    assert!(
        max_us < single / 2 && max_us > single * 2 / 5,
        "pair {max_us} µs, single {single} µs"
    );
    assert_eq!(pair(&at(max_us)), Ok(()));
    assert!(pair(&at(max_us + max_us / 100 + 1)).is_err());
}
