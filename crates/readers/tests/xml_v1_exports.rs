//! hwloc XML v1 as hwloc 2 writes it (`--export-xml-flags 1`, the form a
//! hwloc 2 program hands to hwloc 1.x peers). For every Linux sysfs dump of
//! the corpus, the installed lstopo writes the same machine as v2 and as v1;
//! our reading of the v1 file must give what the test's independent parser
//! finds in the v2 file: PUs, packages, cores, caches, NUMA nodes and their
//! distances. v1 has no Die type, no memory children and no CPU kinds (hwloc
//! writes dies and the holders of several NUMA nodes as groups), so dies and
//! clusters are not compared.

#[path = "support/extract.rs"]
mod extract;
#[path = "xml_support/truth.rs"]
mod truth;

use std::fs;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use readers::xml;
use truth::{corpus, expected, facts_of, parse_xml};

/// Dumps whose NUMA nodes hwloc's v1 export cannot carry: v1 has one NUMA
/// node per object of the main tree, and these fake machines nest nodes
/// (a node whose cpuset holds two others'), so the v1 file lists fewer nodes
/// than the v2 file. Their nodes and distances are not compared.
const V1_LOSES_NODES: &[&str] = &["fakeheterocpunuma", "fakememinitiators-1np2c+1npp+gi"];

/// The corpus's Linux sysfs dumps.
const DUMPS: usize = 38;

#[test]
fn hwloc2_v1_exports_read_as_their_v2_exports() {
    let what = format!("{DUMPS} corpus sysfs dumps exported by lstopo as XML v1 and v2");
    if !truth::have_corpus(&what) || !truth::have_lstopo(&what) {
        return;
    }
    let dir = corpus().join("hwloc/tests/hwloc/linux");
    let mut dumps: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_str().is_some_and(|s| s.ends_with(".tar.bz2")))
        .collect();
    dumps.sort();
    assert_eq!(dumps.len(), DUMPS, "sysfs dumps in {}", dir.display());
    // Two lstopo runs per dump: the dumps are shared among a few threads.
    let next = AtomicUsize::new(0);
    let results = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().min(4));
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                while let Some(dump) = dumps.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let outcome = compare(dump);
                    results.lock().unwrap().push(outcome);
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by(|a, b| a.name.cmp(&b.name));
    let mismatches: Vec<&String> = results.iter().flat_map(|r| &r.mismatches).collect();
    assert_eq!(mismatches, Vec::<&String>::new(), "v1 read unlike v2");
    let lost: Vec<&str> = results
        .iter()
        .filter(|r| r.lost_nodes)
        .map(|r| r.name.as_str())
        .collect();
    assert_eq!(lost, V1_LOSES_NODES, "dumps whose v1 export loses nodes");
    assert_eq!(results.len(), DUMPS);
    let with_distances = results.iter().filter(|r| r.distances).count();
    eprintln!(
        "{} v1 exports checked, {with_distances} with NUMA distances",
        results.len()
    );
    assert!(with_distances >= 15, "only {with_distances} had distances");
}

/// What one dump's v1 export read to, against its v2 export.
struct Outcome {
    name: String,
    mismatches: Vec<String>,
    /// The v1 file lists fewer NUMA nodes than the v2 file.
    lost_nodes: bool,
    /// The v2 file has NUMA distances.
    distances: bool,
}

fn compare(dump: &Path) -> Outcome {
    let name = dump.file_name().unwrap().to_str().unwrap();
    let name = name.trim_end_matches(".tar.bz2").to_string();
    let tmp = extract::extract(dump);
    let root = extract::top_dir(&tmp);
    let root = root.to_str().unwrap();
    let v2 = lstopo_xml(root, &[]);
    let v1 = lstopo_xml(root, &["--export-xml-flags", "1"]);
    assert!(
        v1.contains("<distances ") || !v2.contains("<distances2 type=\"NUMANode\""),
        "{name}: lstopo's v1 export has no v1 distances"
    );
    let topo = xml::read(&v1, &format!("{name}.v1.xml")).unwrap_or_else(|e| panic!("{e}"));
    let want = expected(&parse_xml(&v2));
    let got = facts_of(&topo, &want);
    let mut mismatches = Vec::new();
    let mut differ = |what: &str, same: bool| {
        if !same {
            mismatches.push(format!("{name}: {what}"));
        }
    };
    // A dump whose firmware gave some CPUs a conflicting package (hwloc's
    // 40intel64-4n10c+pci-conflicts) leaves them in no Package; the model
    // puts every CPU in one, so packages compare where hwloc has them all.
    let all_packaged = want.packages.iter().flatten().count() == want.pus.len();
    differ("PUs", got.pus == want.pus);
    differ("packages", !all_packaged || got.packages == want.packages);
    differ("cores", got.cores == want.cores);
    differ("caches", got.caches == want.caches);
    let count = |xml: &str| xml.matches("<object type=\"NUMANode\"").count();
    let lost_nodes = count(&v1) < count(&v2);
    if !lost_nodes {
        differ("NUMA nodes", got.nodes == want.nodes);
        differ("NUMA distances", got.distances == want.distances);
    }
    Outcome {
        name,
        mismatches,
        lost_nodes,
        distances: want.distances.is_some(),
    }
}

/// lstopo's XML of the sysfs/procfs root `root`.
fn lstopo_xml(root: &str, flags: &[&str]) -> String {
    let out = Command::new(truth::lstopo())
        .args(["--if", "fsroot", "--input", root, "--of", "xml"])
        .args(flags)
        .output()
        .expect("running lstopo-no-graphics");
    assert!(
        out.status.success(),
        "lstopo --input {root} {flags:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("lstopo output is UTF-8")
}

/// hwloc's own test recipe `16amd64-4distances.v2tov1` (`--of xml
/// --export-xml-flags 1` of tests/hwloc/xml/16amd64-4distances.xml, run by
/// the installed lstopo): the v1 file holds the NUMA matrix and a Package
/// matrix over as many objects, and hwloc 2 counts the NUMA one's
/// `relative_depth` from the packages the nodes are attached to, so in the
/// v1 tree it names the packages' depth and the Package matrix names the
/// nodes'. The NUMA distances read must be the v2 source's, which is also
/// the first matrix lstopo finds reading the v1 file back.
#[test]
fn hwloc2_v1_export_with_a_package_matrix_as_large_keeps_the_numa_one() {
    let what = "hwloc's 16amd64-4distances.xml exported by lstopo as XML v1";
    if !truth::have_corpus(what) || !truth::have_lstopo(what) {
        return;
    }
    // The corpus has hwloc 3's copy of the file; the installed lstopo reads
    // XML up to version 2, which differs from it only by the version number
    // and the `id` attributes (hwloc 2.9's own copy is this with
    // version="2.0" and no ids).
    let three =
        fs::read_to_string(corpus().join("hwloc/tests/hwloc/xml/16amd64-4distances.xml")).unwrap();
    let two = three
        .replacen(
            "<topology version=\"3.0\">",
            "<topology version=\"2.0\">",
            1,
        )
        .split(" id=\"obj")
        .enumerate()
        .map(|(i, part)| {
            if i == 0 {
                part
            } else {
                &part[part.find('"').unwrap() + 1..]
            }
        })
        .collect::<String>();
    let src_file = tempfile::NamedTempFile::new().unwrap();
    fs::write(src_file.path(), &two).unwrap();
    let src = src_file.path().to_str().unwrap();
    let v1 = truth::run_lstopo(src, &["--of", "xml", "--export-xml-flags", "1"]);
    let matrices: Vec<&str> = v1
        .lines()
        .filter(|l| l.trim_start().starts_with("<distances nbobjs=\"8\""))
        .collect();
    assert_eq!(matrices.len(), 2, "two 8-object matrices: {matrices:?}");
    let want = expected(&parse_xml(&two));
    assert!(want.distances.is_some());
    let topo = xml::read(&v1, "16amd64-4distances.v2tov1.xml").unwrap_or_else(|e| panic!("{e}"));
    let got = facts_of(&topo, &want);
    assert_eq!(
        got.distances, want.distances,
        "NUMA distances of the v1 export"
    );
    let tmp = tempfile::NamedTempFile::new().unwrap();
    fs::write(tmp.path(), &v1).unwrap();
    let back = truth::run_lstopo(tmp.path().to_str().unwrap(), &["--of", "xml"]);
    assert_eq!(expected(&parse_xml(&back)).distances, want.distances);
}

/// A hwloc 1.x file in the shape of flux-framework/flux-sched's AMD EPYC
/// exports (`t/data/hwloc-data/001N/...`), written by hand: one package of
/// two NUMA nodes of two cores, each node an object of the main tree with,
/// below it, a Group of the very same CPUs (the die) holding an L3.
fn epyc_like_v1() -> String {
    let sets = |cpus: u32, nodes: u32| {
        format!(
            "cpuset=\"0x{cpus:08x}\" complete_cpuset=\"0x{cpus:08x}\" online_cpuset=\"0x{cpus:08x}\" \
             allowed_cpuset=\"0x{cpus:08x}\" nodeset=\"0x{nodes:08x}\" complete_nodeset=\"0x{nodes:08x}\" \
             allowed_nodeset=\"0x{nodes:08x}\""
        )
    };
    let core = |c: u32, n: u32| {
        let s = sets(1 << c, 1 << n);
        format!("<object type=\"Core\" os_index=\"{c}\" {s}><object type=\"PU\" os_index=\"{c}\" {s}/></object>")
    };
    let node = |n: u32| {
        let s = sets(0b11 << (2 * n), 1 << n);
        format!(
            "<object type=\"NUMANode\" os_index=\"{n}\" {s} local_memory=\"1073741824\">\
             <page_type size=\"4096\" count=\"262144\"/><object type=\"Group\" {s} depth=\"0\">\
             <object type=\"Cache\" {s} cache_size=\"8388608\" depth=\"3\" cache_linesize=\"64\" \
             cache_associativity=\"16\" cache_type=\"0\">{}{}</object></object></object>",
            core(2 * n, n),
            core(2 * n + 1, n)
        )
    };
    let all = sets(0xf, 0b11);
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM \"hwloc.dtd\">\n\
         <topology>\n<object type=\"Machine\" os_index=\"0\" {all}><object type=\"Socket\" \
         os_index=\"0\" {all}>{}{}</object></object>\n</topology>\n",
        node(0),
        node(1)
    )
}

/// lstopo's facts of an XML text, and ours.
fn both(text: &str, name: &str) -> (truth::Facts, truth::Facts) {
    let file = tempfile::NamedTempFile::new().unwrap();
    fs::write(file.path(), text).unwrap();
    let want = expected(&parse_xml(&truth::run_lstopo(
        file.path().to_str().unwrap(),
        &["--of", "xml"],
    )));
    let topo = xml::read(text, name).unwrap_or_else(|e| panic!("{e}"));
    (facts_of(&topo, &want), want)
}

/// The die's group under each NUMA node: hwloc 2 merges it into the node's
/// memory group on import, so lstopo shows no CPU grouping there and the
/// model has no cluster either.
#[test]
fn hwloc1_group_of_its_numa_nodes_cpus_is_no_cluster() {
    if !truth::have_lstopo("a hwloc 1.x XML with a group under each NUMA node, against lstopo") {
        return;
    }
    let (got, want) = both(&epyc_like_v1(), "epyc-like.xml");
    assert!(want.clusters.is_empty(), "lstopo keeps no CPU group");
    assert_eq!(want.nodes.len(), 2);
    truth::assert_facts("epyc-like v1", &got, &want);
}

/// hwloc 1.x wrote a NUMA node the exporting process could not allocate
/// from (outside its cgroup's mems: flux-sched's `chimera.xml` has nodes 1
/// and 3 so) with `nodeset="0x0"`; hwloc 2.9 imports no such node, its CPUs
/// in no node, and neither does the model.
#[test]
fn hwloc1_numa_node_outside_its_nodeset_is_no_node() {
    if !truth::have_lstopo("a hwloc 1.x XML with a disallowed NUMA node, against lstopo") {
        return;
    }
    let text = epyc_like_v1()
        .replace(" nodeset=\"0x00000002\"", " nodeset=\"0x0\"")
        .replace("allowed_nodeset=\"0x00000002\"", "allowed_nodeset=\"0x0\"")
        .replace(" nodeset=\"0x00000003\"", " nodeset=\"0x00000001\"")
        .replace(
            "allowed_nodeset=\"0x00000003\"",
            "allowed_nodeset=\"0x00000001\"",
        );
    let (got, want) = both(&text, "epyc-like-disallowed.xml");
    assert_eq!(
        want.nodes.keys().collect::<Vec<_>>(),
        [&0],
        "lstopo's nodes"
    );
    assert_eq!(want.pus.len(), 4, "lstopo's PUs");
    truth::assert_facts("epyc-like v1, node 1 disallowed", &got, &want);
}
