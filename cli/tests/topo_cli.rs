//! End-to-end tests of `manycore topo`: bad input gives exit status 2, one line
//! on stderr naming the file or field and nothing on stdout; a reader that
//! closes the pipe early (`| head`) is not an error.
mod common;

use std::path::PathBuf;

use common::{assert_quiet_on_closed_pipe, assert_refused, manycore};

/// A scratch file under Cargo's per-test-target temporary directory.
fn scratch(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("topo_cli");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn unreadable_and_malformed_files_are_refused_by_name() {
    let missing = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("no-such-file.xml");
    let missing = missing.to_str().unwrap();
    let empty = scratch("empty.xml", b"");
    let binary = scratch("binary.xml", b"\xff\xfe<topology>\x00");
    let broken = scratch(
        "broken.xml",
        b"<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n<object type=\"Machine\">\n",
    );
    let empty_lscpu = scratch("empty.lscpu", b"");
    let binary_lscpu = scratch("binary.lscpu", b"CPU(s): \xc3\x28\n");
    let not_tar = scratch("not-a-snapshot.tar.gz", b"hello");
    for (flag, path, extra) in [
        ("--xml", missing, "cannot read"),
        ("--xml", empty.to_str().unwrap(), "topology"),
        ("--xml", binary.to_str().unwrap(), "UTF-8"),
        ("--xml", broken.to_str().unwrap(), "broken.xml:"),
        ("--lscpu", missing, "cannot read"),
        ("--lscpu", empty_lscpu.to_str().unwrap(), "CPU(s)"),
        ("--lscpu", binary_lscpu.to_str().unwrap(), "UTF-8"),
        ("--sysfs", missing, "no-such-file.xml"),
        ("--sysfs", not_tar.to_str().unwrap(), "archive"),
    ] {
        assert_refused(&["topo", flag, path], &[path, extra]);
        assert_refused(&["topo", flag, path, "--format", "json"], &[path]);
    }
}

#[test]
fn bad_machine_and_synthetic_are_refused_by_name() {
    assert_refused(
        &["topo", "--machine", "no-such-box"],
        &["no-such-box", "--list-machines"],
    );
    assert_refused(&["topo", "--synthetic", "pu:0"], &["pu:0"]);
    assert_refused(&["topo", "--synthetic", "package:2 banana:3"], &["banana"]);
}

#[test]
fn closed_pipe_is_success() {
    // Far more than a pipe buffer: the write fails part way through.
    assert_quiet_on_closed_pipe(
        &["topo", "--machine", "x86-uv-4096", "--format", "json"],
        10,
    );
    assert_quiet_on_closed_pipe(
        &["topo", "--machine", "x86-uv-4096", "--format", "text"],
        10,
    );
    // Closed before anything is written: the first write fails.
    assert_quiet_on_closed_pipe(&["topo", "--list-machines"], 0);
    assert_quiet_on_closed_pipe(&["topo", "--machine", "x86-2s-16", "--format", "xml"], 0);
    assert_quiet_on_closed_pipe(&["topo", "--synthetic", "package:2 core:2 pu:2"], 0);
}

/// The text tree of `numa:2 pu:2` puts each node's PUs under it (hwloc makes
/// a group per node), nodes in id order; counts are singular when 1.
#[test]
fn text_tree_nodes_and_plurals() {
    let out = manycore(&["topo", "--synthetic", "numa:2 pu:2"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let first = text.find("NUMANode L#0 P#0").expect(&text);
    let second = text.find("NUMANode L#1 P#1").expect(&text);
    assert!(first < second, "{text}");
    // Each group holds its node and two PUs.
    assert_eq!(text.matches("Group L#").count(), 2, "{text}");
    let out = manycore(&["topo", "--synthetic", "pu:1"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("Machine (") && text.contains(" 1 PU online of 1 possible"),
        "{text}"
    );
    assert!(
        !text.contains("1 PUs") && !text.contains("1 NUMA nodes"),
        "{text}"
    );
}
