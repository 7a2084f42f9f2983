//! Files: FIFOs, devices and sparse giants, in a dump or named directly.

use std::path::Path;

use super::*;

pub fn cases() -> Vec<(&'static str, Case)> {
    vec![
        ("dump_fifo_as_sysfs_file", dump_fifo),
        ("dump_sparse_10g_sysfs_file", dump_sparse),
        ("dump_sparse_10g_cpuinfo", dump_sparse_cpuinfo),
        ("dump_char_device", dump_char_device),
        ("named_fifo_as_sysfs_xml_lscpu", named_fifo),
        ("named_dev_zero_as_sysfs_xml_lscpu", named_dev_zero),
        ("named_sparse_10g_as_xml_lscpu", named_sparse),
    ]
}

/// A dump directory with the small tree and `rel` replaced by `make`.
fn dump_with(rel: &str, make: impl Fn(&Path)) -> tempfile::TempDir {
    let dir = temp_dir();
    write_tree(dir.path(), &small_tree(2));
    let p = dir.path().join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    let _ = std::fs::remove_file(&p);
    make(&p);
    dir
}

/// Reading a dump whose `rel` was made by `make` fails naming that file,
/// with every one of `words` in the message.
fn refused_in_dump(rel: &str, make: impl Fn(&Path), words: &[&str]) -> Result<(), String> {
    let dir = dump_with(rel, make);
    let p = dir.path().join(rel);
    expect_error(readers::sysfs::read_dir(dir.path()), &path_str(&p), words)
}

fn dump_fifo() -> Result<(), String> {
    refused_in_dump("sys/devices/system/cpu/online", mkfifo, &["FIFO"])
}

fn dump_sparse() -> Result<(), String> {
    let giant = |p: &Path| sparse(p, 10 << 30);
    refused_in_dump("sys/devices/system/cpu/possible", giant, &["limit"])
}

fn dump_sparse_cpuinfo() -> Result<(), String> {
    refused_in_dump("proc/cpuinfo", |p| sparse(p, 10 << 30), &["limit"])
}

/// A character device node in a dump (needs the right to `mknod`, which CI
/// has; elsewhere the case says so and checks nothing).
fn dump_char_device() -> Result<(), String> {
    let rel = "sys/devices/system/cpu/present";
    let made = std::cell::Cell::new(false);
    let dir = dump_with(rel, |p| {
        let ok = std::process::Command::new("mknod")
            .arg(p)
            .args(["c", "1", "5"])
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        made.set(ok);
    });
    if !made.get() {
        eprintln!("mknod not permitted here: device node case not checked");
        return Ok(());
    }
    let p = dir.path().join(rel);
    expect_error(
        readers::sysfs::read_dir(dir.path()),
        &path_str(&p),
        &["character device"],
    )
}

/// Each file-taking source refuses `p` with `words`.
fn all_sources_refuse(p: &Path, words: &[&str]) -> Result<(), String> {
    let name = path_str(p);
    expect_error(readers::sysfs::read_path(p), &name, words)
        .map_err(|e| format!("--sysfs: {e}"))?;
    expect_error(readers::xml::read_path(p), &name, words).map_err(|e| format!("--xml: {e}"))?;
    expect_error(readers::lscpu::read_path(p), &name, words).map_err(|e| format!("--lscpu: {e}"))
}

fn named_fifo() -> Result<(), String> {
    let dir = temp_dir();
    let p = dir.path().join("pipe");
    mkfifo(&p);
    all_sources_refuse(&p, &["FIFO"])
}

fn named_dev_zero() -> Result<(), String> {
    all_sources_refuse(Path::new("/dev/zero"), &["character device"])
}

fn named_sparse() -> Result<(), String> {
    let dir = temp_dir();
    let p = dir.path().join("huge");
    sparse(&p, 10 << 30);
    let name = path_str(&p);
    expect_error(readers::xml::read_path(&p), &name, &["limit"])?;
    expect_error(readers::lscpu::read_path(&p), &name, &["limit"])
}
