//! Helpers shared by the CLI's end-to-end tests: run the built binary, check a
//! refusal, check that a closed pipe is not an error.
#![allow(dead_code)] // each test binary uses a different subset

use std::io::Read;
use std::process::{Command, Output, Stdio};

/// Runs the built `manycore` with `args` and collects its output.
pub fn manycore(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_manycore"))
        .args(args)
        .output()
        .expect("run manycore")
}

/// Runs manycore with `args`, which must succeed; returns its stdout.
pub fn stdout(args: &[&str]) -> String {
    let out = manycore(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("stdout is UTF-8")
}

/// Exit status 2, nothing on stdout, exactly one stderr line, no panic, and
/// every one of `needles` in that line.
pub fn assert_refused(args: &[&str], needles: &[&str]) {
    let out = manycore(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(out.stdout.is_empty(), "{args:?} wrote to stdout");
    assert_eq!(
        stderr.lines().count(),
        1,
        "{args:?}: not one line: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    for n in needles {
        assert!(stderr.contains(n), "{args:?}: {n:?} missing from {stderr}");
    }
}

/// Spawns manycore with stdout piped, reads `keep` bytes (0: none), closes the
/// pipe and waits: the exit status must be 0 and stderr empty.
pub fn assert_quiet_on_closed_pipe(args: &[&str], keep: usize) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_manycore"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run manycore");
    let mut stdout = child.stdout.take().unwrap();
    if keep > 0 {
        let mut buf = vec![0; keep];
        stdout.read_exact(&mut buf).unwrap();
    }
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
    assert!(stderr.is_empty(), "{args:?}: {stderr}");
}
