//! NUMA distance matrices beyond what the model keeps
//! ([`topology::MAX_DISTANCE_NODES`] nodes; the matrix is dense, 1 GiB at
//! 16384 nodes): one error naming the file (and line), given before the
//! matrix is read, from the XML reader (v2 and v1 matrices) and the sysfs
//! reader; the largest kept size still reads. Linux has at most 1024 nodes
//! (`MAX_NUMNODES`), so no real dump is near the limit.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use readers::{sysfs, xml};
use topology::MAX_DISTANCE_NODES;

/// hwloc XML of `n` single-PU NUMA nodes, without distances.
fn nodes_xml(n: usize) -> String {
    let topo = readers::synthetic::parse(&format!("numa:{n} pu:1")).unwrap();
    xml::write(&topo)
}

/// A full v2 NUMA latency matrix over nodes `0..n` (10 local, 20 remote),
/// placed before the end of the topology.
fn with_distances2(xml: &str, n: usize) -> String {
    let mut d = format!(
        "  <distances2 type=\"NUMANode\" nbobjs=\"{n}\" kind=\"5\" indexing=\"os\">\n    <indexes>"
    );
    for i in 0..n {
        write!(d, "{i} ").unwrap();
    }
    d.push_str("</indexes>\n    <u64values>");
    for i in 0..n {
        for j in 0..n {
            d.push_str(if i == j { "10 " } else { "20 " });
        }
    }
    d.push_str("</u64values>\n  </distances2>\n");
    xml.replacen("</topology>", &format!("{d}</topology>"), 1)
}

fn line_of(text: &str, needle: &str) -> usize {
    text[..text.find(needle).unwrap()].matches('\n').count() + 1
}

#[test]
fn xml_v2_matrix_over_too_many_nodes_is_one_error_naming_its_line() {
    let n = MAX_DISTANCE_NODES + 1;
    let text = with_distances2(&nodes_xml(n), n);
    let Err(e) = xml::read(&text, "big.xml") else {
        panic!("read, not refused");
    };
    assert_eq!(e.source, "big.xml");
    assert_eq!(e.line, Some(line_of(&text, "<distances2")), "{e}");
    assert!(
        e.message.contains(&format!("at most {MAX_DISTANCE_NODES}")),
        "{e}"
    );
}

#[test]
fn xml_v2_matrix_at_the_limit_reads() {
    let n = MAX_DISTANCE_NODES;
    let t = xml::read(&with_distances2(&nodes_xml(n), n), "max.xml").unwrap();
    assert_eq!(t.nodes().len(), n);
    assert_eq!((t.distance(0, 0), t.distance(0, n - 1)), (10, 20));
}

#[test]
fn xml_v1_matrix_over_too_many_nodes_is_one_error_naming_its_line() {
    let n = MAX_DISTANCE_NODES + 1;
    // A v1 file: NUMA nodes in the main tree, a root <distances> over them.
    let mut text = String::from("<?xml version=\"1.0\"?>\n<topology>\n");
    text.push_str("<object type=\"Machine\" os_index=\"0\">\n");
    writeln!(
        text,
        "<distances nbobjs=\"{n}\" relative_depth=\"1\" latency_base=\"10.0\">"
    )
    .unwrap();
    for _ in 0..3 {
        text.push_str("<latency value=\"1.0\"/>\n");
    }
    text.push_str("</distances>\n");
    for i in 0..n {
        writeln!(
            text,
            "<object type=\"NUMANode\" os_index=\"{i}\"><object type=\"PU\" os_index=\"{i}\"/></object>"
        )
        .unwrap();
    }
    text.push_str("</object>\n</topology>\n");
    let Err(e) = xml::read(&text, "v1.xml") else {
        panic!("read, not refused");
    };
    assert_eq!(e.line, Some(line_of(&text, "<distances ")), "{e}");
    assert!(
        e.message.contains(&format!("at most {MAX_DISTANCE_NODES}")),
        "{e}"
    );
}

/// A sysfs tree of `n` nodes, one CPU each, every node with a full
/// `distance` row.
fn tree_with_distances(dir: &Path, n: usize) {
    let mut files: BTreeMap<String, String> = BTreeMap::new();
    let all = format!("0-{}\n", n - 1);
    for f in ["possible", "present", "online"] {
        files.insert(format!("sys/devices/system/cpu/{f}"), all.clone());
    }
    for c in 0..n {
        let topo = format!("sys/devices/system/cpu/cpu{c}/topology");
        files.insert(format!("{topo}/physical_package_id"), format!("{c}\n"));
        files.insert(format!("{topo}/core_id"), "0\n".into());
        let node = format!("sys/devices/system/node/node{c}");
        files.insert(format!("{node}/cpulist"), format!("{c}\n"));
        let row: Vec<&str> = (0..n).map(|j| if j == c { "10" } else { "20" }).collect();
        files.insert(format!("{node}/distance"), row.join(" ") + "\n");
    }
    for (path, text) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

#[test]
fn sysfs_nodes_beyond_the_limit_with_distances_are_one_error_naming_a_file() {
    let dir = tempfile::tempdir_in("/dev/shm").or_else(|_| tempfile::tempdir());
    let dir = dir.unwrap();
    tree_with_distances(dir.path(), MAX_DISTANCE_NODES + 1);
    let Err(e) = sysfs::read_dir(dir.path()) else {
        panic!("read, not refused");
    };
    assert!(
        e.source.ends_with("sys/devices/system/node/node0/distance"),
        "{e}"
    );
    assert!(
        e.message.contains(&format!("at most {MAX_DISTANCE_NODES}")),
        "{e}"
    );
}
