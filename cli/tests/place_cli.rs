//! End-to-end tests of `manycore place`: refusals of bad input (one clear line
//! each), the JSON fields a placement reports (physc, busy CPUs, cores,
//! packages and nodes, throughput, migrations), and `--compare`'s two objects.
mod common;

use common::{assert_refused, manycore};

#[test]
fn bad_input_is_refused_with_one_clear_line() {
    let m = ["place", "--machine", "x86-2n-128"];
    let with = |extra: &[&'static str]| -> Vec<&'static str> {
        m.iter().copied().chain(extra.iter().copied()).collect()
    };
    assert_refused(&with(&["--threads", "0"]), &["--threads", "at least 1"]);
    // Past 65536 tasks the fork path alone runs for minutes: it grows as
    // the square of the task count.
    assert_refused(
        &with(&["--threads", "65537", "--duration", "0.001"]),
        &["--threads 65537", "65536"],
    );
    assert_refused(
        &with(&["--threads", "4", "--duration", "1e9"]),
        &["--duration", "3600"],
    );
    // An hour of 32768 hackbench tasks would be years of simulation: refused
    // at once with the longest duration that runs within the bound; with 1 µs
    // bursts not even a millisecond fits, and the tasks are what to change.
    assert_refused(
        &with(&[
            "--threads",
            "32768",
            "--workload",
            "hackbench",
            "--duration",
            "3600",
        ]),
        &["--duration", "would take about", "at most", "virtual s"],
    );
    assert_refused(
        &with(&[
            "--threads",
            "65536",
            "--workload",
            "hackbench:1",
            "--duration",
            "0.001",
        ]),
        &["--threads", "fewer --threads"],
    );
    assert_refused(
        &with(&["--threads", "4", "--duration", "-1"]),
        &["--duration"],
    );
    assert_refused(
        &with(&["--threads", "4", "--duration", "0"]),
        &["--duration"],
    );
    for absurd in ["nan", "inf", "1e400", "0.0000001"] {
        assert_refused(
            &with(&["--threads", "4", "--duration", absurd]),
            &["--duration", "virtual seconds"],
        );
    }
    assert_refused(
        &with(&["--threads", "4", "--duration", "soon"]),
        &["--duration", "not a number"],
    );
    assert_refused(
        &with(&["--threads", "4", "--kernel", "5.1"]),
        &["--kernel 5.1", "6.6, 6.8 or 6.12"],
    );
    assert_refused(
        &with(&["--threads", "4", "--lpar", "shared"]),
        &["--lpar", "x86_64", "not POWER"],
    );
    assert_refused(
        &with(&["--threads", "4", "--workload", "bogus"]),
        &["--workload bogus", "unknown workload"],
    );
    assert_refused(
        &with(&["--threads", "3", "--workload", "hackbench"]),
        &["--threads 3", "even"],
    );
    assert_refused(
        &with(&["--threads", "4", "--compare", "6.6", "shared"]),
        &["--compare shared", "POWER"],
    );
    assert_refused(
        &with(&["--threads", "4", "--itmt", "0-63"]),
        &["--itmt", "CPULIST=PRIORITY"],
    );
    assert_refused(
        &with(&["--threads", "4", "--itmt", "0-126=5"]),
        &["ITMT", "CPU 127"],
    );
    assert_refused(
        &with(&["--threads", "4", "--pool", "8"]),
        &["--pool", "shared-processor LPAR"],
    );
    let shared = |extra: &[&'static str]| -> Vec<&'static str> {
        ["place", "--machine", "power10-shared-320", "--threads", "4"]
            .iter()
            .copied()
            .chain(extra.iter().copied())
            .collect()
    };
    assert_refused(
        &shared(&["--lpar", "dedicated", "--capped"]),
        &["--capped", "shared-processor LPAR"],
    );
    assert_refused(&shared(&["--pool", "0"]), &["--pool 0", "positive"]);
    // power10-shared-320 has 40 VPs.
    assert_refused(
        &shared(&["--entitlement", "41"]),
        &["--entitlement 41", "virtual processor (40)"],
    );
    assert_refused(
        &shared(&["--pool", "16", "--entitlement", "20"]),
        &["--entitlement 20", "pool (16)"],
    );
    assert_refused(
        &[
            "place",
            "--machine",
            "power9-lpar-128",
            "--threads",
            "4",
            "--itmt",
            "0-127=1",
        ],
        &["ITMT", "x86"],
    );
}

/// `--compare` runs two simulations under one bound: at three quarters of
/// the longest duration a single run is allowed, the pair is refused at once
/// with a duration that fits both, about half the single run's.
#[test]
fn a_compare_pair_is_bounded_as_one_command() {
    let base = [
        "place",
        "--machine",
        "x86-2n-128",
        "--kernel",
        "6.8",
        "--workload",
        "spin",
        "--threads",
        "16384",
        "--duration",
    ];
    let at_most = |args: &[&str]| -> f64 {
        let out = manycore(args);
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        let tail = err.split("at most ").nth(1).expect("a bound named");
        tail.split(' ').next().unwrap().parse().expect("a number")
    };
    let single = at_most(&[&base[..], &["3600"]].concat());
    let three_quarters = format!("{}", single * 0.75);
    let args = [&base[..], &[&three_quarters, "--compare", "6.8", "6.12"]].concat();
    assert_refused(&args, &["--duration", "twice (--compare)", "at most"]);
    let pair = at_most(&args);
    assert!(
        pair < single / 2.0 && pair > single * 0.4,
        "pair {pair} s, single {single} s"
    );
}

/// `--itmt` reaches the engine: two spinning tasks settle on the two
/// favoured cores of x86-2s-16 (7 and 15; one per package, as fork balancing
/// spreads them over the nodes), read back from the occupancy picture's cells.
#[test]
fn itmt_priorities_steer_the_tasks() {
    let svg = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("place-itmt.svg");
    let out = manycore(&[
        "place",
        "--machine",
        "x86-2s-16",
        "--kernel",
        "6.12",
        "--workload",
        "spin",
        "--threads",
        "2",
        "--duration",
        "2",
        "--svg",
        svg.to_str().unwrap(),
        "--itmt",
        "0-6,8-14=1",
        "--itmt",
        "7,15=9",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    let mut cores: Vec<u32> = text
        .split("id=\"busy-0-")
        .skip(1)
        .map(|id| id.split('-').next().unwrap().parse().unwrap())
        .collect();
    cores.sort_unstable();
    cores.dedup();
    assert_eq!(cores, [7, 15]);
}

#[test]
fn json_has_the_placement_fields_and_compare_has_a_and_b() {
    let out = manycore(&[
        "place",
        "--machine",
        "power10-shared-320",
        "--lpar",
        "shared",
        "--workload",
        "ebizzy",
        "--threads",
        "16",
        "--duration",
        "2",
        "--format",
        "json",
        "--compare",
        "6.6",
        "6.8",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for side in ["a", "b"] {
        for f in [
            "physc",
            "busy_cpus",
            "busy_cores",
            "busy_packages",
            "busy_nodes",
            "throughput",
            "migrations",
        ] {
            assert!(v[side][f].is_number(), "{side}.{f} missing: {v}");
        }
        // 16 always-runnable threads: the busy-CPU median is the thread count.
        assert_eq!(v[side]["busy_cpus"], 16.0);
    }
    assert_eq!(v["a"]["kernel"], "6.6");
    assert_eq!(v["b"]["kernel"], "6.8");
}

/// `--svg FILE.png` writes the occupancy picture rasterised, as every other
/// picture option does, not SVG text under a .png name.
#[test]
fn a_png_name_gets_the_picture_rasterised() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let run = |name: &str| {
        let path = dir.join(name);
        let out = manycore(&[
            "place",
            "--machine",
            "x86-2s-16",
            "--workload",
            "spin",
            "--threads",
            "2",
            "--duration",
            "1",
            "--quiet",
            "--svg",
            path.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::read(&path).unwrap()
    };
    let png = run("place-occupancy.png");
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    let svg = run("place-occupancy.svg");
    let expected = draw::to_png(std::str::from_utf8(&svg).unwrap()).unwrap();
    assert_eq!(png, expected);
}
