//! Every numeric option of every subcommand, given 0, 1, 2^32, 2^53+1,
//! 2^64-1, -1 and 1.5: the command either runs (exit 0) or is refused (exit
//! 2) naming the option, never a panic, and a refusal quotes the value as
//! typed, never as an f64 rounded it (2^53+1 printed back from an f64 is
//! 9007199254740992, 2^64-1 is 18446744073709552000). `qemu` is given only
//! the values that must be refused before QEMU starts.
mod common;

use common::manycore;

const ALL: [&str; 7] = [
    "0",
    "1",
    "4294967296",
    "9007199254740993",
    "18446744073709551615",
    "-1",
    "1.5",
];
const ABSURD: [&str; 5] = [
    "4294967296",
    "9007199254740993",
    "18446744073709551615",
    "-1",
    "1.5",
];

/// A short placement on x86, and one on a shared-processor LPAR.
const PLACE: [&str; 8] = [
    "place",
    "--machine",
    "x86-2s-16",
    "--threads",
    "2",
    "--duration",
    "0.01",
    "--quiet",
];
const SHARED: [&str; 10] = [
    "place",
    "--machine",
    "power10-shared-320",
    "--lpar",
    "shared",
    "--threads",
    "2",
    "--duration",
    "0.01",
    "--quiet",
];

/// Runs `args` with `option WORD`, WORD being `template` with `{}` replaced
/// by `value` (values inside a word: `lpj={}`), and checks the answer.
fn check(args: &[&str], option: &str, template: &str, value: &str, may_run: bool) {
    let word = template.replace("{}", value);
    let mut all: Vec<&str> = args.to_vec();
    all.extend([option, word.as_str()]);
    let out = manycore(&all);
    let stderr = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(0) if may_run => {}
        Some(2) => {
            assert!(stderr.contains(option), "{all:?}: {stderr}");
            assert!(!stderr.contains("panicked"), "{all:?}: {stderr}");
            for rounded in ["9007199254740992", "18446744073709552000"] {
                assert!(!stderr.contains(rounded), "{all:?}: {stderr}");
            }
        }
        other => panic!("{all:?}: exit {other:?}: {stderr}"),
    }
}

#[test]
fn simulating_subcommands_answer_or_name_the_option() {
    let cases: [(&[&str], &str, &str); 18] = [
        (&["domains", "--machine", "x86-2n-128"], "--cpu", "{}"),
        (
            &["domains", "--machine", "x86-2n-128", "--cpu", "0"],
            "--deactivating",
            "{}",
        ),
        (
            &["hotplug", "--synthetic", "pu:4", "--quiet"],
            "--cycles",
            "{}",
        ),
        (
            &["hotplug", "--synthetic", "pu:4", "--quiet"],
            "--seed",
            "{}",
        ),
        (
            &["boot", "--machine", "x86-2s-16", "--quiet"],
            "--calibrate",
            "lpj={}",
        ),
        (
            &["boot", "--machine", "x86-2s-16", "--quiet"],
            "--seed",
            "{}",
        ),
        (&["irq", "--machine", "arm64-d06"], "--local-ns", "{}"),
        (&["irq", "--machine", "arm64-d06"], "--device", "0x18:{}"),
        (&["irq", "--machine", "arm64-d06"], "--device", "{}:1"),
        (&["irq", "--machine", "arm64-d06"], "--device", "{}/0x18:1"),
        (
            &[
                "place",
                "--machine",
                "x86-2s-16",
                "--duration",
                "0.01",
                "--quiet",
            ],
            "--threads",
            "{}",
        ),
        (
            &[
                "place",
                "--machine",
                "x86-2s-16",
                "--threads",
                "2",
                "--quiet",
            ],
            "--duration",
            "{}",
        ),
        (&PLACE, "--seed", "{}"),
        (&SHARED, "--pool", "{}"),
        (&SHARED, "--entitlement", "{}"),
        (&PLACE, "--itmt", "0-15={}"),
        (&PLACE, "--workload", "hackbench:{}"),
        (&PLACE, "--workload", "duty:1:{}"),
    ];
    for (args, option, template) in cases {
        for value in ALL {
            check(args, option, template, value, true);
        }
    }
}

/// Each absurd value is refused before QEMU starts (nothing on standard
/// output, no boot): the sizes by their range, --lpj by what x86 Linux's
/// udelay can multiply, --init-delay-us by --timeout.
#[test]
fn qemu_refuses_absurd_numbers_before_booting() {
    for option in [
        "--cpus",
        "--max-cpus",
        "--nodes",
        "--memory",
        "--lpj",
        "--init-delay-us",
        "--timeout",
    ] {
        // A regression that let a value through would boot QEMU: a short
        // --timeout keeps such a run to seconds (except where --timeout is
        // the option under test).
        let mut args = vec!["qemu", "--quiet"];
        if option != "--cpus" {
            args.extend(["--cpus", "2"]);
        }
        if option != "--timeout" {
            args.extend(["--timeout", "5"]);
        }
        for value in ABSURD {
            check(&args, option, "{}", value, false);
        }
    }
    for (option, others) in [
        ("--sockets", ["--cores", "1", "--threads", "1"]),
        ("--cores", ["--sockets", "1", "--threads", "1"]),
        ("--threads", ["--sockets", "1", "--cores", "1"]),
    ] {
        let mut args = vec!["qemu", "--cpus", "1", "--quiet", "--timeout", "5"];
        args.extend(others);
        for value in ABSURD {
            check(&args, option, "{}", value, false);
        }
    }
}
