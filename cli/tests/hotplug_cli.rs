//! End-to-end tests of `manycore hotplug`: the JSON report's fields, refusals,
//! closed pipes.
mod common;

use std::process::Output;

use common::{assert_quiet_on_closed_pipe, manycore};

fn json(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

/// Every CPU of the machine comes online, the masks equal a rebuild, the time
/// is measured, for both algorithms. The CPU count is the machine's own, read
/// from `topo --format json`.
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
            assert_eq!(v["verified"], true, "{v}");
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
    assert_eq!(v["verified"], true);
}

#[test]
fn text_counts_are_singular_when_one() {
    let out = manycore(&["hotplug", "--synthetic", "pu:2", "--cycles", "1"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
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
