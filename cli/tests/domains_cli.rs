//! End-to-end tests of `manycore domains`: comparison with a real kernel's dump
//! (crates/domains/tests/data, from Linux 6.12 under QEMU), refusals, closed pipes.
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{assert_quiet_on_closed_pipe, assert_refused, manycore, stdout};

fn data(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../crates/domains/tests/data")
        .join(name);
    assert!(p.exists(), "{}: test data missing", p.display());
    p.to_str().unwrap().to_string()
}

/// `manycore domains --sysfs SYSFS OPTIONS... --compare DUMP`.
fn compare(sysfs: &str, options: &[&str], dump: &str) -> Output {
    let mut args = vec!["domains", "--sysfs", sysfs];
    args.extend_from_slice(options);
    args.extend(["--compare", dump]);
    manycore(&args)
}

#[test]
fn compare_same_machine_is_0_other_machine_is_1() {
    let sysfs = data("x86-2s4c2t-sysfs.tar.gz");
    let out = compare(
        &sysfs,
        &["--kernel", "6.12"],
        &data("x86-2s4c2t-domains.tar.gz"),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.starts_with("no difference"), "{text}");

    // The dump taken with every odd CPU offline has no SMT level anywhere.
    let out = compare(&sysfs, &[], &data("x86-2s4c2t-smtoff-domains.tar.gz"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let last = text.lines().last().unwrap();
    assert!(last.ends_with(" differences"), "{last}");
    assert!(
        text.contains("kernel 'MC PKG', manycore 'SMT MC PKG'"),
        "{text}"
    );
}

/// A `.tar.bz2` of the same dump compares like the `.tar.gz` (recompressed with
/// the system's gzip and bzip2).
#[test]
fn compare_reads_tar_bz2() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("domains_cli");
    std::fs::create_dir_all(&dir).unwrap();
    let bz2 = dir.join("x86-2s4c2t-domains.tar.bz2");
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "gzip -dc '{}' | bzip2 -c > '{}'",
            data("x86-2s4c2t-domains.tar.gz"),
            bz2.display()
        ))
        .status()
        .expect("sh");
    assert!(
        status.success(),
        "gzip and bzip2 are needed to build the .tar.bz2"
    );
    let out = compare(&data("x86-2s4c2t-sysfs.tar.gz"), &[], bz2.to_str().unwrap());
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("480 files"), "{text}");
}

#[test]
fn bad_input_is_refused_by_name() {
    let missing = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("no-such-dump.tar.gz");
    let missing = missing.to_str().unwrap();
    assert_refused(
        &["domains", "--machine", "x86-2s-16", "--compare", missing],
        &[missing],
    );
    let empty = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("empty-dump.tar.gz");
    std::fs::write(&empty, b"").unwrap();
    let empty = empty.to_str().unwrap();
    assert_refused(
        &["domains", "--machine", "x86-2s-16", "--compare", empty],
        &[empty],
    );
    assert_refused(
        &["domains", "--machine", "x86-2s-16", "--cpu", "16"],
        &["--cpu 16", "0-15"],
    );
    assert_refused(&["domains", "--machine", "nope"], &["nope"]);
    assert_refused(
        &["domains", "--machine", "x86-2s-16", "--lpar", "shared"],
        &["--lpar", "x86_64", "POWER"],
    );
    // Each kernel shows its domains in one layout only: the other is refused,
    // naming the flag, the kernel and the layout's path.
    for (kernel, format, path) in [
        ("6.12", "proc", "/proc/sys/kernel/sched_domain"),
        ("5.9", "debugfs", "/sys/kernel/debug/sched/domains"),
    ] {
        let args = [
            "domains",
            "--machine",
            "x86-2s-16",
            "--kernel",
            kernel,
            "--format",
            format,
        ];
        assert_refused(&args, &[&format!("--format {format}"), kernel, path]);
    }
    // --out follows --format, so the same pairs are refused there too.
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("domains_cli_out");
    assert_refused(
        &[
            "domains",
            "--machine",
            "x86-2s-16",
            "--kernel",
            "5.9",
            "--format",
            "debugfs",
            "--out",
            dir.to_str().unwrap(),
        ],
        &["5.9"],
    );
    assert!(!dir.exists(), "a refused --out wrote {}", dir.display());
}

#[test]
fn native_layouts_and_power_lpar_are_accepted() {
    let text = stdout(&[
        "domains",
        "--machine",
        "x86-2s-16",
        "--kernel",
        "5.9",
        "--format",
        "proc",
        "--cpu",
        "0",
    ]);
    assert!(text.contains("cpu0/domain0/"), "{text}");
    stdout(&[
        "domains",
        "--machine",
        "power10-shared-320",
        "--lpar",
        "dedicated",
        "--cpu",
        "0",
    ]);
}

#[test]
fn closed_pipe_is_success() {
    for (args, keep) in [
        (
            &[
                "domains",
                "--machine",
                "power8-lpar-1024",
                "--format",
                "json",
            ][..],
            10,
        ),
        (
            &[
                "domains",
                "--machine",
                "power8-lpar-1024",
                "--format",
                "text",
            ][..],
            10,
        ),
        (
            &["domains", "--machine", "x86-2s-16", "--format", "debugfs"][..],
            0,
        ),
    ] {
        assert_quiet_on_closed_pipe(args, keep);
    }
}

/// `--kernel-config` decides whether the CLS level exists: Debian's arm64
/// config (no CONFIG_SCHED_CLUSTER) matches the guest built from it; without
/// the file every option is on and the comparison fails.
#[test]
fn kernel_config_file_decides_the_cluster_level() {
    let sysfs = data("arm64-dt-2s2cl2c2t-2n-sysfs.tar.gz");
    let dump = data("arm64-dt-2s2cl2c2t-2n-domains.tar.gz");
    let config = data("linux-6.12.117+deb12-arm64.config");
    let with = compare(
        &sysfs,
        &["--kernel", "6.12", "--kernel-config", &config],
        &dump,
    );
    assert!(
        with.status.success(),
        "{}",
        String::from_utf8_lossy(&with.stdout)
    );
    assert!(String::from_utf8_lossy(&with.stdout).starts_with("no difference"));
    let without = compare(&sysfs, &["--kernel", "6.12"], &dump);
    assert_eq!(without.status.code(), Some(1));

    let bad = std::env::temp_dir().join(format!("kcfg-{}", std::process::id()));
    std::fs::write(&bad, "CONFIG_SCHED_CLUSTER=m\n").unwrap();
    let refused = manycore(&[
        "domains",
        "--sysfs",
        &sysfs,
        "--kernel-config",
        bad.to_str().unwrap(),
    ]);
    std::fs::remove_file(&bad).unwrap();
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success());
    assert!(
        err.contains("line 1") && err.contains("CONFIG_SCHED_CLUSTER"),
        "{err}"
    );
}
