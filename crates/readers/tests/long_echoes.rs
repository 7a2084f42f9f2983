//! One bad token of half a megabyte, in each reader's input: the error names
//! the file and line, says why, and stays short enough to read (the refused
//! text is echoed only in part), instead of a message as long as the input.

use std::path::Path;

use readers::{lscpu, sysfs, xml, Error};

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

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

#[test]
fn a_sysfs_core_id_of_half_a_megabyte_is_a_short_error() {
    let dir = tempfile::tempdir().unwrap();
    let cpu = "sys/devices/system/cpu";
    for f in ["possible", "present", "online"] {
        write(dir.path(), &format!("{cpu}/{f}"), "0-1\n");
    }
    for c in 0..2 {
        let topo = format!("{cpu}/cpu{c}/topology");
        write(dir.path(), &format!("{topo}/physical_package_id"), "0\n");
        write(
            dir.path(),
            &format!("{topo}/core_cpus_list"),
            &format!("{c}\n"),
        );
        write(dir.path(), &format!("{topo}/package_cpus_list"), "0-1\n");
        let id = if c == 1 { token('9') } else { "0".into() };
        write(dir.path(), &format!("{topo}/core_id"), &format!("{id}\n"));
    }
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
