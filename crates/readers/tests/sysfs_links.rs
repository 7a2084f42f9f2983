//! Symbolic links inside a dump directory resolve as they would if the dump
//! were the root, wherever they point, even though most files are opened
//! from the CPU, node and listed `cache/` directories rather than from the
//! root: a link whose target is absolute, or climbs above the directory a
//! file is opened from, is followed from the root instead. Truth: the same
//! machine written without links (a 2-package, 2-core, 2-thread tree of the
//! benchmarks' writer, with nodes and caches), whose shape is known by
//! construction.

use std::os::unix::fs::symlink;
use std::path::Path;

use readers::sysfs::{read_dir_with, Threads};

#[path = "../benches/support/sysfs_tree.rs"]
mod sysfs_tree;

const CPU: &str = "sys/devices/system/cpu";

/// What the test compares: everything but the source path.
fn shape(dir: &Path) -> String {
    let t = read_dir_with(dir, Threads::Fixed(1)).unwrap();
    format!(
        "{:?}\n{:?}\n{:?}\n{:?}\n{:?}",
        t.cpus(),
        t.levels(),
        t.nodes(),
        t.caches(),
        t.online()
    )
}

/// Moves `dir/from` to `dir/to` and leaves a link `target` in its place.
fn relink(dir: &Path, from: &str, to: &str, target: &str) {
    std::fs::create_dir_all(dir.join(to).parent().unwrap()).unwrap();
    std::fs::rename(dir.join(from), dir.join(to)).unwrap();
    symlink(target, dir.join(from)).unwrap();
}

#[test]
fn links_out_of_the_cpu_and_node_directories_resolve_inside_the_dump() {
    let plain = tempfile::tempdir().unwrap();
    let cpus = sysfs_tree::write_machine(plain.path(), 2, 2, 2);
    assert_eq!(cpus, 8);
    let expected = shape(plain.path());
    let t = read_dir_with(plain.path(), Threads::Fixed(1)).unwrap();
    assert_eq!(
        (t.count(topology::LevelKind::Package), t.cpus().len()),
        (2, 8)
    );

    let linked = tempfile::tempdir().unwrap();
    sysfs_tree::write_machine(linked.path(), 2, 2, 2);
    let d = linked.path();
    // Absolute: taken from the dump's root, never the host's.
    relink(
        d,
        &format!("{CPU}/cpu1"),
        "elsewhere/cpu1",
        "/elsewhere/cpu1",
    );
    // Relative, climbing above the CPU directory.
    relink(d, &format!("{CPU}/cpu2"), "sys/devices/cpu2", "../../cpu2");
    // A file's own link, absolute, under the CPU directory.
    relink(
        d,
        &format!("{CPU}/cpu3/topology/core_id"),
        "ids/core3",
        "/ids/core3",
    );
    // A whole node, absolute.
    relink(
        d,
        "sys/devices/system/node/node1",
        "nodes/node1",
        "/nodes/node1",
    );
    // Relative and staying beneath the CPU directory.
    relink(d, &format!("{CPU}/cpu4"), &format!("{CPU}/c4"), "c4");
    assert_eq!(shape(d), expected);
}

/// A CPU's `cache/` is listed and its `indexM/` files are opened from it: a
/// link beneath it resolves as beneath any other directory.
#[test]
fn links_beneath_a_listed_cache_directory_resolve_inside_the_dump() {
    let plain = tempfile::tempdir().unwrap();
    sysfs_tree::write_machine(plain.path(), 2, 2, 2);
    let expected = shape(plain.path());
    let t = read_dir_with(plain.path(), Threads::Fixed(1)).unwrap();
    // The writer's caches: an L1d per core (4) and an L3 per package (2).
    assert_eq!(t.caches().len(), 6);

    let linked = tempfile::tempdir().unwrap();
    sysfs_tree::write_machine(linked.path(), 2, 2, 2);
    let d = linked.path();
    // Absolute: taken from the dump's root, never the host's.
    relink(
        d,
        &format!("{CPU}/cpu0/cache/index0/size"),
        "sizes/cpu0-index0",
        "/sizes/cpu0-index0",
    );
    // Relative, climbing above the listed `cache/` to the CPU directory.
    relink(
        d,
        &format!("{CPU}/cpu1/cache/index0/shared_cpu_map"),
        &format!("{CPU}/maps/cpu1-index0"),
        "../../../maps/cpu1-index0",
    );
    // A whole index, relative, climbing above `cache/`.
    relink(
        d,
        &format!("{CPU}/cpu2/cache/index3"),
        &format!("{CPU}/cpu2/index3"),
        "../index3",
    );
    // Relative and staying beneath `cache/`.
    relink(
        d,
        &format!("{CPU}/cpu3/cache/index0"),
        &format!("{CPU}/cpu3/cache/real0"),
        "real0",
    );
    assert_eq!(shape(d), expected);
}
