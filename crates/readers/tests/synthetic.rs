//! The synthetic reader against hwloc itself: for each description, lstopo's XML
//! export (parsed by the independent test parser) must give the same PUs,
//! packages, dies, groups, cores, caches and NUMA nodes as our model.

#[path = "xml_support/truth.rs"]
mod truth;

use readers::synthetic;
use truth::{assert_facts, expected, facts_of, parse_xml, run_lstopo};

const STRINGS: &[&str] = &[
    "pack:2 node:1 l2:1 core:2 pu:1",
    "pack:2 numa:2 l3:1 core:2 pu:2",
    "package:2 numa:2 core:2 pu:2",
    "package:2 core:4 pu:2",
    "core:2 pu:2",
    "pu:4",
    "2 3 4 5 6",
    "3 4",
    "Package:2 NUMANode:3 L2Cache:4 Core:5 PU:6",
    // hwloc merges a group into an object with the same cpuset (an L2 per
    // group), which this reader keeps as a cluster: such strings are avoided.
    "package:2 die:2 group:2 core:2 pu:2",
    "package:2 die:2 group:2 l2:2 core:1 pu:2",
    "group:2 package:2 l3:1(size=32MB) core:4 pu:1",
    "numa:2(memory=1GB) package:1 l3:1(size=32MiB) l2:4(size=1MB) l1d:1(size=48kB) l1i:1(size=32kiB) core:1 pu:2",
    "package:1 group:4 [numa] [numa] core:2 pu:4",
    "[numa(memory=2GiB)] package:2 core:2 pu:2",
    "package:2 [numa] l3:2 core:2 pu:2",
    "package:2 core:2 pu:2(indexes=0,4,1,5,2,6,3,7)",
    // (hwloc 2.9 cannot find the PU level in type interleavings; fixed later.)
    "package:2 core:4 pu:2(indexes=core:package)",
    "package:2 numa:2 core:2 pu:2(indexes=numa:core)",
    "package:2 numa:2 core:2 pu:2(indexes=2*8:1*2)",
    "package:2(indexes=1,0) core:2(indexes=3,2,1,0) pu:1",
    "numa:4(indexes=3,2,1,0) core:2 pu:1",
    "Socket:2 L3Cache:1 L2Cache:2 L1dCache:1 Core:1 PU:2",
    "package:2 die:3 l3:1 core:2 pu:1",
    "pa:2 co:2 pu:2",
];

fn check(desc: &str) {
    let topo = synthetic::parse(desc).unwrap_or_else(|e| panic!("{desc}: {e}"));
    let truth = parse_xml(&run_lstopo(desc, &["--of", "xml"]));
    let want = expected(&truth);
    let got = facts_of(&topo, &want);
    assert_facts(desc, &got, &want);
}

#[test]
fn synthetic_strings_match_lstopo() {
    if !truth::have_lstopo(&format!(
        "{} synthetic strings against lstopo",
        STRINGS.len()
    )) {
        return;
    }
    for desc in STRINGS {
        check(desc);
    }
}

/// The big machine: 16384 PUs, compared with hwloc in full.
#[test]
fn sixteen_thousand_pus_match_lstopo() {
    if !truth::have_lstopo("1 synthetic string of 16384 PUs against lstopo") {
        return;
    }
    check("package:4 numa:4 l3:1 core:512 pu:2");
}

/// hwloc's XML files in the corpus (xml, linux, x86 and x86+linux tests).
const XML_FILES: usize = 66;

/// The writer against hwloc: every corpus topology our writer can describe,
/// handed to lstopo as a synthetic string, must come back with the same
/// packages, dies, clusters, cores, PUs (numbering included), caches and NUMA
/// CPU sets. Sizes are not compared: a string holds one size per level, and
/// the writer leaves it out when the instances differ.
#[test]
fn written_strings_describe_corpus_topologies_to_lstopo() {
    let what = format!("writing {XML_FILES} corpus hwloc XML topologies as strings for lstopo");
    if !truth::have_corpus(&what) || !truth::have_lstopo(&what) {
        return;
    }
    let dir = truth::corpus().join("hwloc/tests/hwloc");
    let mut files: Vec<std::path::PathBuf> = Vec::new();
    for sub in ["xml", "linux", "x86", "x86+linux"] {
        for e in std::fs::read_dir(dir.join(sub)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "xml") {
                files.push(p);
            }
        }
    }
    files.sort();
    assert_eq!(files.len(), XML_FILES, "hwloc XML files in the corpus");
    let (mut described, mut refused) = (0, 0);
    for f in &files {
        let topo = readers::xml::read(&std::fs::read_to_string(f).unwrap(), "corpus").unwrap();
        let desc = match synthetic::write(&topo) {
            Ok(d) => d,
            Err(_) => {
                refused += 1;
                continue;
            }
        };
        described += 1;
        let label = format!("{} as '{desc}'", f.display());
        let truth = parse_xml(&run_lstopo(&desc, &["--of", "xml"]));
        let mut want = expected(&truth);
        let mut got = facts_of(&topo, &want);
        for facts in [&mut want, &mut got] {
            for c in &mut facts.caches {
                c.3 = None;
            }
            for n in facts.nodes.values_mut() {
                n.1 = None;
            }
        }
        assert_facts(&label, &got, &want);
        // And our reader reads our string back to the same structure.
        let back = synthetic::parse(&desc).unwrap_or_else(|e| panic!("{label}: {e}"));
        let mut again = facts_of(&back, &want);
        for c in &mut again.caches {
            c.3 = None;
        }
        for n in again.nodes.values_mut() {
            n.1 = None;
        }
        assert_facts(&format!("{label} re-read"), &again, &want);
    }
    eprintln!("{described} corpus topologies described, {refused} refused as irregular");
    assert!(
        described >= 20,
        "only {described} corpus topologies could be described"
    );
}
