//! End-to-end tests of `manycore hotplug`: the JSON report's fields, refusals,
//! closed pipes.
mod common;

use std::process::Output;

use common::{assert_quiet_on_closed_pipe, assert_refused, manycore, stdout};

fn json(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

/// Every CPU of the machine comes online and the time is measured, for both
/// algorithms. The CPU count is the machine's own, read from `topo --format
/// json`. `matches_rebuild` is the CLI's own consistency check (incremental
/// masks against a rebuild from the same topology), not truth: the masks are
/// checked against real kernels' lists in hotplug_corpus.rs.
#[test]
fn json_report_fields() {
    for machine in ["x86-2s-16", "power9-lpar-128"] {
        let topo = json(&manycore(&[
            "topo",
            "--machine",
            machine,
            "--format",
            "json",
        ]));
        let pus = topo["pus"].as_u64().unwrap();
        for algo in ["naive", "scoped"] {
            let v = json(&manycore(&[
                "hotplug",
                "--machine",
                machine,
                "--algo",
                algo,
                "--format",
                "json",
            ]));
            assert_eq!(v["algo"], algo, "{v}");
            assert_eq!(v["cpus"].as_u64(), Some(pus), "{machine}: {v}");
            assert!(v["mask_update_ns"].as_u64().unwrap() > 0, "{v}");
            assert_eq!(v["matches_rebuild"], true, "{v}");
            assert_eq!(v["mismatch"], serde_json::Value::Null, "{v}");
        }
    }
    let v = json(&manycore(&[
        "hotplug",
        "--synthetic",
        "package:2 core:2 pu:2",
        "--cycles",
        "7",
        "--format",
        "json",
    ]));
    assert_eq!(v["cycles"], 7);
    assert_eq!(v["cpus"], 8);
    assert_eq!(v["matches_rebuild"], true);
}

/// On a real machine's snapshot with offline CPUs, exactly the CPUs the
/// kernel listed in `cpu/online` come up (read here from the tarball itself).
#[test]
fn a_snapshot_brings_up_the_kernels_online_cpus() {
    let corpus = readers::corpus::dir(env!("CARGO_MANIFEST_DIR"));
    if !readers::corpus::present(&corpus, "hotplug of a snapshot with offline CPUs") {
        return;
    }
    let path = corpus.join("hwloc/tests/hwloc/linux/16em64t-4s2c2t-offlines.tar.bz2");
    let raw = std::fs::read(&path).unwrap();
    let mut archive = tar::Archive::new(bzip2::read::BzDecoder::new(&raw[..]));
    // Every cpuN directory is a CPU; it is online unless its cpuN/online says 0
    // (CPU 0 has no such file).
    let mut online = cpumask::CpuMask::new();
    let mut offline = cpumask::CpuMask::new();
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let name = entry.path().unwrap().to_string_lossy().to_string();
        let Some(rest) = name.split("sys/devices/system/cpu/cpu").nth(1) else {
            continue;
        };
        let (n, tail) = rest.split_once('/').unwrap_or((rest, ""));
        let Ok(cpu) = n.parse::<usize>() else {
            continue;
        };
        online.set(cpu);
        if tail == "online" {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut entry, &mut text).unwrap();
            if text.trim() == "0" {
                offline.set(cpu);
            }
        }
    }
    let online = online.and_not(&offline);
    assert!(!offline.is_empty(), "the snapshot has offline CPUs");
    for algo in ["naive", "scoped"] {
        let v = json(&manycore(&[
            "hotplug",
            "--sysfs",
            path.to_str().unwrap(),
            "--algo",
            algo,
            "--cycles",
            "20",
            "--format",
            "json",
        ]));
        assert_eq!(v["cpus"].as_u64(), Some(online.weight() as u64), "{v}");
        assert_eq!(v["boot_cpu"].as_u64(), online.first().map(|c| c as u64));
    }
}

#[test]
fn text_counts_are_singular_when_one() {
    let text = stdout(&["hotplug", "--synthetic", "pu:2", "--cycles", "1"]);
    assert!(text.contains("bring-up of 1 CPU,"), "{text}");
    assert!(text.contains("for 1 cycle)"), "{text}");
    assert!(text.contains("2 CPUs online"), "{text}");
}

#[test]
fn impossible_cycles_are_refused() {
    // One CPU: nothing but the boot CPU to cycle.
    let out = manycore(&["hotplug", "--synthetic", "pu:1", "--cycles", "5"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(out.stdout.is_empty());
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("--cycles 5") && stderr.contains("boot CPU"),
        "{stderr}"
    );
    // Unbounded counts are a typo, refused by the argument parser.
    let out = manycore(&["hotplug", "--synthetic", "pu:2", "--cycles", "1000001"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--cycles"));
    assert!(out.stdout.is_empty());
}

/// The number after `word` in `text` (`"does 12 units"` with `"does"`: 12).
fn number_after(text: &str, word: &str) -> u64 {
    let rest = &text[text.find(word).unwrap_or_else(|| panic!("{word}: {text}")) + word.len()..];
    rest.split_whitespace().next().unwrap().parse().unwrap()
}

/// A million naive cycles of the 1024-CPU LPAR would scan every online CPU
/// a million times (hours): refused before the bring-up, with the bring-up's
/// price, the dearest cycle's and the most cycles that fit. The prices are
/// a real run's: the bring-up's is the JSON report's bring-up counters
/// exactly (with the 1023 online-set bits), and 20 random cycles average at most the dearest cycle's and
/// within 1 % of it (every CPU scans nearly the same online set).
#[test]
fn a_million_naive_cycles_are_refused_by_their_price() {
    let m = [
        "hotplug",
        "--machine",
        "power8-lpar-1024",
        "--algo",
        "naive",
    ];
    let out = manycore(&[&m[..], &["--cycles", "1000000"]].concat());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(out.stdout.is_empty());
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--cycles 1000000"), "{stderr}");
    let bringup = number_after(&stderr, "bring-up's");
    let cycle = number_after(&stderr, "up to");
    let bound = number_after(&stderr, "fit in");
    assert_eq!(
        number_after(&stderr, "at most"),
        (bound - bringup) / cycle,
        "{stderr}"
    );

    let v = json(&manycore(
        &[&m[..], &["--cycles", "20", "--format", "json"]].concat(),
    ));
    let sum = |key: &str| -> u64 {
        let levels = v[key].as_array().unwrap();
        levels
            .iter()
            .flat_map(|l| l.as_object().unwrap().values())
            .filter_map(|x| x.as_u64())
            .sum()
    };
    // Each online also writes the online set's bit, counted outside the levels.
    assert_eq!(sum("bringup_levels") + 1023, bringup);
    let per_cycle = (sum("levels") - sum("bringup_levels")) as f64 / 20.0;
    assert!(
        per_cycle <= cycle as f64 && per_cycle > 0.99 * cycle as f64,
        "dearest cycle {cycle}, mean of 20 {per_cycle}"
    );
}

/// The naive bring-up of a 4096-CPU machine is minutes of work (seed 000's
/// quadratic walks): refused before any CPU comes online, naming --algo.
#[test]
fn a_naive_bring_up_of_4096_cpus_is_refused_by_its_price() {
    for machine in ["power-4096-1socket", "x86-uv-4096"] {
        assert_refused(
            &["hotplug", "--machine", machine, "--algo", "naive"],
            &[
                "--algo naive",
                "4096 CPUs",
                "units of mask work",
                "--algo scoped",
            ],
        );
    }
}

#[test]
fn bad_source_is_refused_by_name() {
    let path = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hotplug-empty.xml");
    std::fs::write(&path, b"").unwrap();
    for args in [
        vec!["hotplug", "--xml", path.to_str().unwrap()],
        vec!["hotplug", "--machine", "nope"],
    ] {
        let out = manycore(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(out.stdout.is_empty());
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(args[2]), "{stderr}");
    }
}

#[test]
fn closed_pipe_is_success() {
    for format in ["json", "text"] {
        // Closed before the report (written in one go after the bring-up).
        assert_quiet_on_closed_pipe(
            &["hotplug", "--machine", "x86-uv-4096", "--format", format],
            0,
        );
    }
}
