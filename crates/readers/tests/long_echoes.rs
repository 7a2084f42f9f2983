//! One bad token of half a megabyte, in each reader's input: the error names
//! the file and line, says why, and stays short enough to read (the refused
//! text is echoed only in part), instead of a message as long as the input.

use std::path::Path;

use readers::{lscpu, sysfs, xml, Error};

// The hostile suite's tree builders; its cases are not run here.
#[allow(dead_code)]
mod hostile_support;

/// The longest error, in bytes, a person is shown for one bad token.
const READABLE: usize = 2048;

/// A token far longer than any real field.
fn token(c: char) -> String {
    c.to_string().repeat(500_000)
}

/// `e`, shown, is short, names `file` and line `line`, and keeps the words
/// of its reason.
fn readable(e: &Error, file: &Path, line: usize, reason: &str) {
    let shown = e.to_string();
    assert!(
        shown.len() <= READABLE,
        "{} bytes: {}...",
        shown.len(),
        &shown[..200]
    );
    let at = format!("{}:{line}: ", file.display());
    assert!(shown.starts_with(&at), "{shown}");
    assert!(shown.contains(reason), "{shown}");
    assert!(shown.contains("characters left out"), "{shown}");
}

#[test]
fn a_sysfs_core_id_of_half_a_megabyte_is_a_short_error() {
    let dir = tempfile::tempdir().unwrap();
    let cpu = "sys/devices/system/cpu";
    let mut tree = hostile_support::small_tree(2);
    let id = format!("{}\n", token('9'));
    tree.insert(format!("{cpu}/cpu1/topology/core_id"), id.into_bytes());
    hostile_support::write_tree(dir.path(), &tree);
    let e = sysfs::read_dir(dir.path()).unwrap_err();
    let file = dir.path().join(format!("{cpu}/cpu1/topology/core_id"));
    readable(&e, &file, 1, "expected an integer");
}

#[test]
fn an_lscpu_count_of_half_a_megabyte_is_a_short_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("lscpu.txt");
    let text = format!("Architecture: x86_64\nCPU(s): {}\n", token('7'));
    std::fs::write(&file, text).unwrap();
    let e = lscpu::read_path(&file).unwrap_err();
    readable(&e, &file, 2, "expected a whole number");
}

#[test]
fn an_xml_cpuset_of_half_a_megabyte_is_a_short_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("topo.xml");
    let text = format!(
        "<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n\
         <object type=\"Machine\" os_index=\"0\" cpuset=\"{}\"/>\n</topology>\n",
        vec!["0xffffffff"; 50_000].join(",")
    );
    std::fs::write(&file, text).unwrap();
    let e = xml::read_path(&file).unwrap_err();
    readable(&e, &file, 3, "beyond the supported maximum");
}
