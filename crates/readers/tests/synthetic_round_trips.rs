//! The synthetic writer's round trips against lstopo, hwloc's index labels,
//! and the XML reader's edge cases (bad `<distances2>` matrices, coreless PUs).
//!
//! - Every corpus topology the synthetic writer can describe (sysfs snapshots
//!   read with `readers::sysfs::read_path`, hwloc XMLs read with
//!   `readers::xml::read`) must be read back by `readers::synthetic::parse` with
//!   the same PUs, packages, dies, clusters, cores and NUMA CPU sets, and the
//!   same OS indexes; and lstopo, given the same string, must agree (hwloc is
//!   the independent truth for what the string means).
//! - hwloc treats non-PU `indexes=` as labels that may repeat anywhere; lstopo
//!   shows the labels we must give.

#[path = "xml_support/truth.rs"]
mod truth;

use std::collections::BTreeMap;
use std::path::PathBuf;

use readers::synthetic;
use topology::{LevelKind, Topology};
use truth::{assert_facts, expected, facts_of, parse_xml, run_lstopo, Set};

/// Snapshots the sysfs reader must refuse (checked by corpus_sysfs.rs).
const SYSFS_REJECTED: &[&str] = &[
    "fakeheterocpunuma.tar.bz2",
    "40intel64-4n10c+pci-conflicts.tar.bz2",
];

fn files_in(dirs: &[&str], suffixes: &[&str]) -> Vec<PathBuf> {
    let mut all = Vec::new();
    for dir in dirs {
        let dir = truth::corpus().join(dir);
        let entries = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("corpus missing at {}: {e}", dir.display()));
        for e in entries {
            let p = e.unwrap().path();
            let n = p.to_string_lossy().into_owned();
            if suffixes.iter().any(|s| n.ends_with(s)) {
                all.push(p);
            }
        }
    }
    all.sort();
    all
}

/// The corpus topologies: 60 sysfs snapshots less the 2 refused, and 66
/// hwloc XML files.
const TOPOLOGIES: usize = 124;

/// Every corpus topology: (label, topology).
fn corpus_topologies() -> Vec<(String, Topology)> {
    let mut out = Vec::new();
    for p in files_in(
        &[
            "hwloc/tests/hwloc/linux",
            "hwloc/tests/hwloc/x86+linux",
            "util-linux/tests/ts/lscpu/dumps",
        ],
        &[".tar.bz2", ".tar.gz"],
    ) {
        let file = p.file_name().unwrap().to_string_lossy().into_owned();
        match readers::sysfs::read_path(&p) {
            Ok(t) => out.push((file, t)),
            Err(_) if SYSFS_REJECTED.contains(&file.as_str()) => {}
            Err(e) => panic!("{file}: {e}"),
        }
    }
    for p in files_in(
        &[
            "hwloc/tests/hwloc/xml",
            "hwloc/tests/hwloc/linux",
            "hwloc/tests/hwloc/x86",
            "hwloc/tests/hwloc/x86+linux",
        ],
        &[".xml"],
    ) {
        let file = p.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&p).unwrap();
        let t = readers::xml::read(&text, &file).unwrap_or_else(|e| panic!("{file}: {e}"));
        out.push((file, t));
    }
    assert_eq!(out.len(), TOPOLOGIES, "corpus topologies");
    out
}

/// OS index of every group of a level, by CPU set, when the level knows all of
/// them (the writer leaves `indexes=` out otherwise, and the reader numbers).
fn level_ids(t: &Topology, kind: LevelKind) -> Option<BTreeMap<Set, u32>> {
    let level = t.level(kind)?;
    level
        .groups
        .iter()
        .map(|g| g.os_id.map(|id| (g.cpus.iter().collect::<Set>(), id)))
        .collect()
}

/// The same, from an lstopo XML export.
fn lstopo_ids(truth: &truth::Truth, ty: &str) -> BTreeMap<Set, u32> {
    truth
        .objects
        .iter()
        .filter(|o| o.ty == ty)
        .filter_map(|o| Some((o.cpuset.clone()?, o.os_index?)))
        .collect()
}

fn without_sizes(f: &mut truth::Facts) {
    for c in &mut f.caches {
        c.3 = None;
    }
    for n in f.nodes.values_mut() {
        n.1 = None;
    }
}

/// Without NUMA information, hwloc (and so the synthetic reader) adds node 0
/// covering the machine.
fn default_node(t: &Topology, f: &mut truth::Facts) {
    if t.nodes().is_empty() {
        f.nodes.insert(0, (t.known().iter().collect(), None));
    }
}

#[test]
fn written_strings_read_back_and_match_lstopo_for_every_corpus_topology() {
    let what =
        format!("synthetic strings of {TOPOLOGIES} corpus topologies read back and in lstopo");
    if !truth::have_corpus(&what) || !truth::have_lstopo(&what) {
        return;
    }
    let (mut described, mut refused) = (0, 0);
    let mut described_names = Vec::new();
    for (file, t) in corpus_topologies() {
        let desc = match synthetic::write(&t) {
            Ok(d) => d,
            Err(_) => {
                refused += 1;
                continue;
            }
        };
        described += 1;
        described_names.push(file.clone());
        let label = format!("{file} as '{desc}'");
        let back = synthetic::parse(&desc).unwrap_or_else(|e| panic!("{label}: {e}"));

        // Our reader against the original topology.
        let mut want = facts_of(&t, &expected(&truth::Truth::default()));
        let mut got = facts_of(&back, &expected(&truth::Truth::default()));
        without_sizes(&mut want);
        without_sizes(&mut got);
        want.distances = None;
        got.distances = None;
        default_node(&t, &mut want);
        assert_facts(&format!("{label} re-read"), &got, &want);
        for kind in [LevelKind::Package, LevelKind::Die, LevelKind::Core] {
            if let Some(ids) = level_ids(&t, kind) {
                assert_eq!(
                    level_ids(&back, kind),
                    Some(ids),
                    "{label}: {kind:?} OS indexes"
                );
            }
        }

        // lstopo reads the same string to the same structure and labels.
        let lstopo = parse_xml(&run_lstopo(&desc, &["--of", "xml"]));
        let mut hw = expected(&lstopo);
        let mut ours = facts_of(&t, &hw);
        without_sizes(&mut hw);
        without_sizes(&mut ours);
        default_node(&t, &mut ours);
        // hwloc removes a group whose CPUs are exactly another object's (the
        // synthetic module documents that the model keeps it as a cluster).
        let others: Vec<Set> = (ours.caches.iter().map(|c| c.2.clone()))
            .chain(ours.packages.iter().cloned())
            .chain(ours.dies.iter().cloned())
            .chain(ours.cores.iter().cloned())
            .collect();
        ours.clusters.retain(|c| !others.contains(c));
        assert_facts(&format!("{label} in lstopo"), &ours, &hw);
        for (kind, ty) in [
            (LevelKind::Package, "Package"),
            (LevelKind::Die, "Die"),
            (LevelKind::Core, "Core"),
        ] {
            if let Some(ids) = level_ids(&t, kind) {
                assert_eq!(
                    ids,
                    lstopo_ids(&lstopo, ty),
                    "{label}: {ty} OS indexes in lstopo"
                );
            }
        }
    }
    eprintln!("{described} corpus topologies described and read back, {refused} refused");
    // The two snapshots the review found, with repeated package and core ids.
    for must in ["16ia64-8n2s.tar.bz2", "48amd64-4pa2n6c-sparse.tar.bz2"] {
        assert!(
            described_names.iter().any(|n| n == must),
            "{must} was not described"
        );
    }
    assert!(described >= 60, "only {described} topologies described");
}

/// hwloc keeps repeated non-PU indexes as labels, even under one parent:
/// lstopo's export of the same string is the truth for the groups and labels.
#[test]
fn repeated_indexes_are_labels_as_in_hwloc() {
    let strings = [
        "package:2(indexes=0,0) core:2(indexes=0,0,5,5) pu:1",
        "numa:2 package:2(indexes=0,0,512,512) core:1(indexes=0,0,0,0) pu:1",
        "package:1 numa:2 core:3(indexes=0,1,2,0,1,2) pu:2",
    ];
    let what = format!(
        "{} strings with repeated indexes against lstopo",
        strings.len()
    );
    if !truth::have_lstopo(&what) {
        return;
    }
    for desc in strings {
        let t = synthetic::parse(desc).unwrap_or_else(|e| panic!("{desc}: {e}"));
        let lstopo = parse_xml(&run_lstopo(desc, &["--of", "xml"]));
        let want = expected(&lstopo);
        assert_facts(desc, &facts_of(&t, &want), &want);
        for (kind, ty) in [(LevelKind::Package, "Package"), (LevelKind::Core, "Core")] {
            assert_eq!(
                level_ids(&t, kind),
                Some(lstopo_ids(&lstopo, ty)),
                "{desc}: {ty} OS indexes"
            );
        }
    }
}

/// A corpus XML with a 2-node `<distances2>`; its line is found in the text.
/// None (said loudly) without the corpus.
fn two_node_xml() -> Option<(String, usize)> {
    if !truth::have_corpus("4 bad <distances2> edits of hwloc's 24em64t-2n6c2t-pci.xml") {
        return None;
    }
    let path = truth::corpus().join("hwloc/tests/hwloc/xml/24em64t-2n6c2t-pci.xml");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("corpus missing at {}: {e}", path.display()));
    let line = text
        .lines()
        .position(|l| l.contains("<distances2 type=\"NUMANode\" nbobjs=\"2\""))
        .expect("the file has a 2-node NUMA distances2")
        + 1;
    Some((text, line))
}

/// Bad NUMA matrices are refused on the `<distances2>` line, not dropped.
#[test]
fn bad_distances2_is_an_error_naming_its_line() {
    let Some((good, line)) = two_node_xml() else {
        return;
    };
    let t = readers::xml::read(&good, "good.xml").unwrap();
    assert_eq!(t.nodes().len(), 2);
    assert!(t.has_distances(), "the unmodified file has its matrix");
    let header = "nbobjs=\"2\" kind=\"5\" name=\"NUMALatency\"";
    let three = "nbobjs=\"3\" kind=\"5\" name=\"NUMALatency\"";
    let (idx, vals) = (">0 1 </indexes>", ">10 20 20 10 </u64values>");
    let cases: Vec<(String, &str)> = vec![
        // nbobjs 3 over a 2-node machine, index 2 naming no node.
        (
            good.replace(header, three)
                .replace(idx, ">0 1 2 </indexes>")
                .replace(vals, ">10 20 20 20 10 20 20 20 10 </u64values>"),
            "covers 3 NUMA nodes but the topology has 2",
        ),
        // Right count, but a node that does not exist.
        (
            good.replace(idx, ">0 5 </indexes>"),
            "NUMA node P#5, which does not exist",
        ),
        // Duplicate indexes.
        (good.replace(idx, ">1 1 </indexes>"), "NUMA node P#1 twice"),
        // nbobjs disagreeing with the indexes listed, fewer or more.
        (
            good.replace(idx, ">0 </indexes>"),
            "nbobjs=\"2\" but lists 1 indexes",
        ),
        (
            good.replace(header, "nbobjs=\"1\" kind=\"5\" name=\"NUMALatency\""),
            "nbobjs=\"1\" but lists more than 1 indexes",
        ),
    ];
    for (text, want) in cases {
        assert_ne!(text, good, "the mutation for {want:?} did not apply");
        let e = readers::xml::read(&text, "bad.xml")
            .err()
            .unwrap_or_else(|| panic!("accepted a distances2 that should give {want:?}"));
        assert_eq!(e.line, Some(line), "{e}");
        assert!(e.to_string().contains(want), "{e} does not say {want:?}");
        assert!(e.to_string().starts_with("bad.xml:"), "{e}");
    }
}

/// PUs without a Core parent (hwloc's own export of a core-less synthetic
/// machine) become one-PU cores with no OS index, not a made-up P#2147483648.
#[test]
fn coreless_pus_get_cores_without_os_index() {
    if !truth::have_lstopo("1 core-less synthetic machine exported by lstopo") {
        return;
    }
    let xml = run_lstopo("package:2 pu:3", &["--of", "xml"]);
    assert!(!xml.contains("type=\"Core\""), "lstopo made cores");
    let t = readers::xml::read(&xml, "lstopo").unwrap();
    let cores = t.level(LevelKind::Core).unwrap();
    assert_eq!(cores.groups.len(), 6);
    for g in &cores.groups {
        assert_eq!(g.cpus.weight(), 1);
        assert_eq!(g.os_id, None, "core of CPU {:?}", g.cpus.first());
    }
    // Packages keep hwloc's indexes.
    let truth = parse_xml(&xml);
    assert_eq!(
        level_ids(&t, LevelKind::Package),
        Some(lstopo_ids(&truth, "Package"))
    );
}
