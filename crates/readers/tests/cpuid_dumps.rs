//! The CPUID-dump reader against hwloc's own answer for every x86 CPUID
//! dump of the corpus: `tests/hwloc/x86/*.tar.bz2`, whose expected topology
//! `*.xml` hwloc's x86 backend made from the same dump, and the
//! `tests/hwloc/x86+linux` dump with an expected XML (hwloc's x86 backend
//! first, its Linux backend adding the NUMA nodes).
//!
//! Compared: the PUs, the NUMA nodes, the packages, dies and cores (as PU sets), the core
//! kinds of hybrid parts (efficiency and PU set of each), and every cache
//! kind both sides have (level, type, size and PU set of each instance).
//! The XML is read by `readers::xml`, checked on its own against an
//! independent parser in `xml_corpus.rs`.
//!
//! Where hwloc's x86 backend and Linux's rules (which the reader follows, as
//! the bare-metal kernel does) disagree, the dump is in `DIFFERENCES` with
//! the aspects that differ and why; the test fails if a listed dump starts
//! agreeing or an unlisted one disagrees, so the table stays exact.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use readers::corpus;
use topology::{CacheKind, LevelKind, Topology};

/// (dump, aspects that differ from hwloc's, why).
const DIFFERENCES: &[(&str, &[&str], &str)] = &[
    (
        "64amd64-4p2n4ca2co",
        &["nodes"],
        "the x86+linux test: hwloc's Linux backend adds the 8 NUMA nodes of the sysfs \
         snapshot beside the dump; a CPUID dump alone has one node of every PU, as hwloc's \
         x86 backend gives it",
    ),
    (
        "AMD-K10-MagnyCours-2xOpteron-6164HE",
        &["L3"],
        "a family 0x10 package of two nodes (dies) of 6 cores, an L3 each: Linux learns the \
         node from the northbridge's node-id MSR (MSR_FAM10H_NODE_ID), which no CPUID leaf \
         holds, and halves 0x8000_0006's L3 size only then (X86_FEATURE_AMD_DCM); so from \
         CPUID alone the L3 is the package's, 10 MiB. hwloc knows this model's layout \
         (family 0x10 model 9, 8 or 12 cores) and gives each half of the package 5 MiB",
    ),
    (
        "AMD-1Ah-Zen5StrixPoint-RyzenAI9HX370",
        &["kinds"],
        "hwloc reads AMD's core type (leaf 0x8000_0026 EBX) into Zen 5 and Zen 5c kinds; \
         Linux keeps it in topo.cpu_type for its own use and lists no kinds in sysfs, and \
         the reader's kinds are Intel's leaf 0x1A ones, which Linux lists (cpu_atom, cpu_core)",
    ),
    (
        "Intel-ArrowLake-CoreUltra5-225U",
        &["kinds"],
        "hwloc gives the two E-cores without an L3 (PUs 12-13: leaf 4 lists no level-3 \
         cache) a third kind, IntelLowPower; their leaf 0x1A core type and native model id \
         are the other E-cores' (0x20, 2), and Linux's hybrid PMUs split by core type \
         (cpu_atom, cpu_core): two kinds, as the reader gives",
    ),
    (
        "Zhaoxin-2xCentaurHauls-KaiSheng-KH-40000",
        &["dies"],
        "hwloc takes the dies from leaf 0x1F's die level; Linux reads no extended topology \
         leaf on Centaur and Zhaoxin CPUs (topology_common.c parse_topology: parse_legacy, \
         leaves 1 and 4 only), so its die is the package, as the reader's",
    ),
];

/// CPUID dumps with an expected XML in the corpus.
const DUMPS: usize = 32;

fn corpus_dir() -> PathBuf {
    corpus::dir(env!("CARGO_MANIFEST_DIR"))
}

/// Every (dump, expected XML) pair.
fn dumps(corpus: &Path) -> Vec<(String, PathBuf, PathBuf)> {
    let mut out = Vec::new();
    for dir in ["hwloc/tests/hwloc/x86", "hwloc/tests/hwloc/x86+linux"] {
        let dir = corpus.join(dir);
        for e in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let Some(stem) = name.strip_suffix(".tar.bz2") else {
                continue;
            };
            let xml = dir.join(format!("{stem}.xml"));
            if xml.is_file() {
                out.push((stem.to_string(), path, xml));
            }
        }
    }
    out.sort();
    out
}

type Sets = BTreeSet<Vec<usize>>;

fn level_sets(t: &Topology, kind: LevelKind) -> Sets {
    t.level(kind)
        .map(|l| {
            l.groups
                .iter()
                .map(|g| g.cpus.to_cpumask().iter().collect())
                .collect()
        })
        .unwrap_or_default()
}

/// The core kinds of a hybrid machine, by efficiency: (efficiency, PU
/// set) each. One kind holding every PU (hwloc's Linux backend gives one
/// for the maximum frequency) is no hybrid, as no kind at all.
fn kinds(t: &Topology) -> Vec<(Option<u32>, Vec<usize>)> {
    let mut out: Vec<(Option<u32>, Vec<usize>)> = t
        .core_kinds()
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let cpus = t.cpus().iter().filter(|c| c.kind == Some(i as u16));
            (k.efficiency, cpus.map(|c| c.id as usize).collect())
        })
        .collect();
    out.sort();
    if out.len() == 1 && out[0].1.len() == t.online().weight() {
        out.clear();
    }
    out
}

/// Each cache kind's instances: (level, type) → {(size, PU set)}.
type Caches = BTreeMap<(u8, CacheKind), BTreeSet<(u64, Vec<usize>)>>;

fn caches(t: &Topology) -> Caches {
    let mut out = Caches::new();
    for c in t.caches() {
        out.entry((c.level, c.kind)).or_default().insert((
            c.size_bytes.unwrap_or(0),
            c.cpus.to_cpumask().iter().collect(),
        ));
    }
    out
}

/// The aspects in which `ours` differs from hwloc's `theirs`, each with a
/// short account.
fn differences(ours: &Topology, theirs: &Topology) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let pus = |t: &Topology| t.online().iter().collect::<Vec<_>>();
    if pus(ours) != pus(theirs) {
        out.push((
            "pus".into(),
            format!("{:?} vs {:?}", pus(ours), pus(theirs)),
        ));
    }
    let nodes = |t: &Topology| -> Sets {
        t.nodes()
            .iter()
            .map(|n| n.cpus.to_cpumask().iter().collect())
            .collect()
    };
    if nodes(ours) != nodes(theirs) {
        out.push((
            "nodes".into(),
            format!("{:?} vs {:?}", nodes(ours), nodes(theirs)),
        ));
    }
    for (name, kind) in [
        ("packages", LevelKind::Package),
        ("dies", LevelKind::Die),
        ("cores", LevelKind::Core),
    ] {
        let (a, b) = (level_sets(ours, kind), level_sets(theirs, kind));
        if a != b {
            out.push((
                name.into(),
                format!(
                    "{} vs {} groups; first ours {:?} theirs {:?}",
                    a.len(),
                    b.len(),
                    a.first(),
                    b.first()
                ),
            ));
        }
    }
    if kinds(ours) != kinds(theirs) {
        out.push((
            "kinds".into(),
            format!("{:?} vs {:?}", kinds(ours), kinds(theirs)),
        ));
    }
    let (a, b) = (caches(ours), caches(theirs));
    let compared = a.keys().filter(|k| b.contains_key(k)).count();
    // Every dump has at least L1d, L1i and L2 on both sides: a reader
    // that lost its caches must not pass for want of anything to compare.
    if compared < 3 {
        out.push((
            "cache kinds".into(),
            format!("{:?} vs {:?}", a.keys(), b.keys()),
        ));
    }
    for (key, mine) in &a {
        if let Some(hwloc) = b.get(key) {
            if mine != hwloc {
                let name = format!("L{}{}", key.0, key.1.suffix());
                out.push((
                    name,
                    format!(
                        "{} vs {} instances; first ours {:?} theirs {:?}",
                        mine.len(),
                        hwloc.len(),
                        mine.first(),
                        hwloc.first()
                    ),
                ));
            }
        }
    }
    out
}

#[test]
fn cpuid_dumps_match_hwloc_x86_backend() {
    let corpus = corpus_dir();
    if !corpus::present(&corpus, "the CPUID dumps against hwloc's x86 backend") {
        return;
    }
    let all = dumps(&corpus);
    assert_eq!(all.len(), DUMPS, "CPUID dumps with an expected XML");
    let mut failures = Vec::new();
    for (name, dump, xml) in &all {
        let ours = readers::cpuid::read_path(dump).unwrap_or_else(|e| panic!("{name}: {e}"));
        let theirs = readers::xml::read_path(xml).unwrap_or_else(|e| panic!("{name}: {e}"));
        let found = differences(&ours, &theirs);
        let aspects: Vec<&str> = found.iter().map(|(a, _)| a.as_str()).collect();
        let listed: &[&str] = DIFFERENCES
            .iter()
            .find(|(n, _, _)| n == name)
            .map_or(&[], |(_, a, _)| a);
        if aspects != listed {
            failures.push(format!(
                "{name}: differs in {aspects:?}, listed {listed:?}\n    {}",
                found
                    .iter()
                    .map(|(a, d)| format!("{a}: {d}"))
                    .collect::<Vec<_>>()
                    .join("\n    ")
            ));
        }
    }
    for (n, _, _) in DIFFERENCES {
        assert!(
            all.iter().any(|(d, _, _)| d == n),
            "listed dump {n} is not in the corpus"
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
