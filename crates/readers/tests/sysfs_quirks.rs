//! Real kernels' sysfs output that must read right, and dump damage that must
//! be one clear error rather than a silent drop. Every tree is generated here;
//! the expected readings are the generator's own numbers, written by hand.

use std::collections::BTreeMap;

use topology::Topology;

const CPU: &str = "sys/devices/system/cpu";
const NODE: &str = "sys/devices/system/node";

/// Two packages of two single-thread cores (CPUs 0-3), CPUs 0-1 on node
/// `nodes[0]` and 2-3 on `nodes[1]`, with one private L1d per CPU.
fn tree(nodes: [u32; 2]) -> BTreeMap<String, String> {
    let mut t = BTreeMap::new();
    for f in ["possible", "present", "online"] {
        t.insert(format!("{CPU}/{f}"), "0-3\n".into());
    }
    for c in 0..4u32 {
        let topo = format!("{CPU}/cpu{c}/topology");
        let pkg = c / 2;
        t.insert(format!("{topo}/physical_package_id"), format!("{pkg}\n"));
        t.insert(format!("{topo}/core_id"), format!("{}\n", c % 2));
        t.insert(format!("{topo}/core_cpus_list"), format!("{c}\n"));
        let pkg_list = format!("{}-{}\n", pkg * 2, pkg * 2 + 1);
        t.insert(format!("{topo}/package_cpus_list"), pkg_list);
        let idx = format!("{CPU}/cpu{c}/cache/index0");
        t.insert(format!("{idx}/level"), "1\n".into());
        t.insert(format!("{idx}/type"), "Data\n".into());
        t.insert(format!("{idx}/size"), "32K\n".into());
        t.insert(format!("{idx}/shared_cpu_list"), format!("{c}\n"));
    }
    for (i, id) in nodes.iter().enumerate() {
        let dir = format!("{NODE}/node{id}");
        t.insert(
            format!("{dir}/cpulist"),
            format!("{}-{}\n", i * 2, i * 2 + 1),
        );
        let row = if i == 0 { "10 21\n" } else { "21 10\n" };
        t.insert(format!("{dir}/distance"), row.into());
    }
    t
}

fn read(t: &BTreeMap<String, String>) -> (tempfile::TempDir, Result<Topology, readers::Error>) {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in t {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let r = readers::sysfs::read_dir(dir.path());
    (dir, r)
}

fn error_at(t: &BTreeMap<String, String>, file: &str, words: &str) {
    let (dir, r) = read(t);
    let e = r.expect_err("damaged tree must not read");
    let want = dir.path().join(file);
    assert!(
        e.source == want.display().to_string(),
        "error names {:?}, expected {}: {e}",
        e.source,
        want.display()
    );
    assert!(e.message.contains(words), "{e}");
    assert!(!e.to_string().contains("18446744073709551615"), "{e}");
}

/// The reading every variant below must equal: 4 CPUs, 2 packages, nodes
/// `ids` holding 0-1 and 2-3, distances 10/21, four 32 KiB L1d.
fn assert_reads_as_generated(t: &Topology, ids: [u32; 2]) {
    assert_eq!(t.known().to_list_string(), "0-3");
    assert_eq!(t.count(topology::LevelKind::Package), 2);
    for (i, id) in ids.iter().enumerate() {
        let n = t.node_of(i * 2).expect("CPU in a node");
        assert_eq!(n.id, *id);
        assert_eq!(n.cpus.to_list_string(), format!("{}-{}", i * 2, i * 2 + 1));
    }
    assert!(t.has_distances());
    assert_eq!(
        (t.distance(0, 0), t.distance(0, 1), t.distance(1, 0)),
        (10, 21, 21)
    );
    assert_eq!(t.caches_of(3).count(), 1);
}

#[test]
fn generated_tree_reads_as_generated() {
    let (_d, r) = read(&tree([0, 1]));
    assert_reads_as_generated(&r.unwrap(), [0, 1]);
}

#[test]
fn nul_after_the_newline_is_padding() {
    let mut t = tree([0, 1]);
    for (path, text) in t.iter_mut() {
        if path.ends_with("list") || path.ends_with("online") || path.ends_with("distance") {
            text.push('\0');
        }
    }
    let (_d, r) = read(&t);
    assert_reads_as_generated(&r.unwrap(), [0, 1]);
}

/// Node 0 hot-removed (no directory), CPUs on nodes 1 and 2, and each row with
/// one entry per possible node 0-2 — as some kernels print it, with the
/// leading blank Linux's `i ? " " : ""` leaves when node 0 is offline.
#[test]
fn distance_rows_over_possible_nodes_pick_the_present_columns() {
    let mut t = tree([1, 2]);
    t.insert(format!("{NODE}/possible"), "0-2\n".into());
    t.insert(format!("{NODE}/online"), "1-2\n".into());
    t.insert(format!("{NODE}/node1/distance"), " 99 10 21\n".into());
    t.insert(format!("{NODE}/node2/distance"), " 99 21 10\n".into());
    let (_d, r) = read(&t);
    assert_reads_as_generated(&r.unwrap(), [1, 2]);
}

/// A memory-less node 0 (a directory, no CPUs) with the CPUs on node 1.
#[test]
fn memoryless_cpuless_node_zero_reads() {
    let mut t = tree([1, 2]);
    t.insert(format!("{NODE}/node0/cpulist"), "\n".into());
    t.insert(format!("{NODE}/node0/distance"), "10 21 21\n".into());
    t.insert(format!("{NODE}/node1/distance"), "21 10 21\n".into());
    t.insert(format!("{NODE}/node2/distance"), "21 21 10\n".into());
    let (_d, r) = read(&t);
    let topo = r.unwrap();
    assert_eq!(topo.node_of(0).unwrap().id, 1);
    assert_eq!(topo.node_index(0), Some(0));
    assert_eq!(topo.distance(0, 1), 21);
}

#[test]
fn leading_zero_in_a_node_name_is_an_error() {
    let mut t = tree([0, 1]);
    let moved: Vec<(String, String)> = t
        .iter()
        .filter(|(p, _)| p.contains("/node1/"))
        .map(|(p, v)| (p.replace("/node1/", "/node01/"), v.clone()))
        .collect();
    t.retain(|p, _| !p.contains("/node1/"));
    t.extend(moved);
    error_at(&t, &format!("{NODE}/node01"), "leading zero");
}

#[test]
fn cache_level_zero_or_missing_is_an_error() {
    let mut t = tree([0, 1]);
    let level = format!("{CPU}/cpu0/cache/index0/level");
    t.insert(level.clone(), "0\n".into());
    error_at(&t, &level, "level 0");
    t.remove(&level);
    error_at(&t, &level, "missing");
}

#[test]
fn distance_row_of_the_wrong_length_is_an_error() {
    let mut t = tree([0, 1]);
    let row = format!("{NODE}/node1/distance");
    t.insert(row.clone(), "21 10 30 40\n".into());
    error_at(&t, &row, "4 distances for 2 nodes");
}

#[test]
fn one_missing_distance_row_is_an_error_not_a_dropped_matrix() {
    let mut t = tree([0, 1]);
    let row = format!("{NODE}/node1/distance");
    t.remove(&row);
    error_at(&t, &row, "missing");
}

#[test]
fn online_cpu_in_no_node_is_an_error() {
    let mut t = tree([0, 1]);
    t.insert(format!("{NODE}/node1/cpulist"), "2\n".into());
    error_at(&t, NODE, "online CPU 3 is in no node");
    // Every possible node has its directory: still damage, not an offline node.
    t.insert(format!("{NODE}/possible"), "0-1\n".into());
    t.insert(format!("{NODE}/online"), "0-1\n".into());
    error_at(&t, NODE, "online CPU 3 is in no node");
}

/// Node 0 offline (a POWER LPAR booted so; hwloc's `offline-cpu0-node0`):
/// the kernel makes no `node0` directory, `node/online` is 1 while
/// `node/possible` is 0-1, and the CPUs it mapped to node 0 are in no node's
/// list. They read without a node, as hwloc leaves them; node 1 keeps its
/// CPUs, memory and (one-node) distances.
#[test]
fn cpus_of_an_offline_node_read_without_a_node() {
    let mut t = tree([0, 1]);
    t.retain(|k, _| !k.starts_with(&format!("{NODE}/node0/")));
    t.insert(format!("{NODE}/node1/distance"), "10\n".into());
    t.insert(format!("{NODE}/possible"), "0-1\n".into());
    t.insert(format!("{NODE}/online"), "1\n".into());
    let (_dir, r) = read(&t);
    let topo = r.expect("CPUs of an offline node read");
    assert_eq!(topo.online().to_list_string(), "0-3");
    let ids: Vec<u32> = topo.nodes().iter().map(|n| n.id).collect();
    assert_eq!(ids, [1]);
    assert_eq!(topo.nodes()[0].cpus.to_list_string(), "2-3");
    for cpu in 0..2 {
        assert!(topo.node_of(cpu).is_none(), "CPU {cpu} has no node");
    }
    assert_eq!(topo.node_of(2).map(|n| n.id), Some(1));
    assert_eq!(topo.count(topology::LevelKind::Package), 2);
}

#[test]
fn huge_cpu_number_names_no_sentinel() {
    let mut t = tree([0, 1]);
    t.insert(
        format!("{CPU}/cpu99999999999999999999/online"),
        "1\n".into(),
    );
    error_at(
        &t,
        &format!("{CPU}/cpu99999999999999999999"),
        "out of range",
    );
}

#[test]
fn rows_of_mixed_wrong_lengths_are_an_error_not_a_panic() {
    let mut t = tree([1, 2]);
    t.insert(format!("{NODE}/possible"), "0-2\n".into());
    t.insert(format!("{NODE}/node1/distance"), "10\n".into());
    t.insert(format!("{NODE}/node2/distance"), "99 21 10\n".into());
    error_at(
        &t,
        &format!("{NODE}/node1/distance"),
        "1 distances for 2 nodes",
    );
}
