//! The XML reader against the hwloc corpus, and the writer against lstopo.
//!
//! - Every `tests/hwloc/xml/*.test` case: our reading of the source XML must
//!   give the PUs, packages, dies, groups, cores, caches, NUMA nodes and NUMA
//!   distances of the expected output (`.console` through an independent console
//!   parser, `.xml` through an independent line-based XML parser).
//! - Every other XML in the corpus (expected outputs of the Linux, x86 and
//!   x86+linux backends): our reading against the independent parser.
//! - Writing: each topology read is written as XML v2, loaded by
//!   `lstopo-no-graphics`, re-exported, and must again match.
//!
//! Inputs that cannot be handled are listed in `SKIPS` with the reason; the
//! tests check that list is exactly what fails, so nothing is skipped silently.

#[path = "xml_support/truth.rs"]
mod truth;

use std::fs;
use std::path::{Path, PathBuf};

use readers::xml;
use truth::{assert_facts, corpus, expected, facts_of, parse_console, parse_xml, run_lstopo};

/// (file name, why it is not compared).
const SKIPS: &[(&str, &str)] = &[];

/// hwloc's XML test cases (`tests/hwloc/xml/*.test`) in the corpus.
const CASES: usize = 28;

/// hwloc's expected XML outputs of its Linux and x86 backends in the corpus.
const BACKEND_XMLS: usize = 44;

/// Distinct XML files: the test cases' 20 sources and the backend outputs.
const XML_FILES: usize = 20 + BACKEND_XMLS;

/// The distinct corpus XML files (the cases' sources and the backend XMLs).
fn all_xmls() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = xml_cases().into_iter().map(|(s, _)| s).collect();
    files.extend(backend_xmls());
    files.sort();
    files.dedup();
    assert_eq!(files.len(), XML_FILES, "distinct corpus XML files");
    files
}

fn hwloc_tests() -> PathBuf {
    corpus().join("hwloc/tests/hwloc")
}

fn skipped(name: &str) -> bool {
    SKIPS.iter().any(|(n, _)| *n == name)
}

/// (source xml, target) pairs from the `.test` descriptors of tests/hwloc/xml.
fn xml_cases() -> Vec<(PathBuf, PathBuf)> {
    let dir = hwloc_tests().join("xml");
    let mut cases = Vec::new();
    let mut entries: Vec<_> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("corpus missing at {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "test"))
        .collect();
    entries.sort();
    for test in entries {
        let text = fs::read_to_string(&test).unwrap();
        let field = |key: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(key))
                .map(|v| dir.join(v.trim()))
        };
        if let (Some(s), Some(t)) = (field("source:"), field("target:")) {
            cases.push((s, t));
        }
    }
    cases
}

fn name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

#[test]
fn xml_cases_match_expected_outputs() {
    if !truth::have_corpus(&format!(
        "{CASES} hwloc XML test cases against their expected output"
    )) {
        return;
    }
    let cases = xml_cases();
    assert_eq!(cases.len(), CASES, "the corpus's xml test cases");
    let mut checked = 0;
    let mut with_distances = 0;
    for (source, target) in &cases {
        let label = format!("{} -> {}", name(source), name(target));
        if skipped(&name(source)) {
            continue;
        }
        let text = fs::read_to_string(source).unwrap();
        let topo = xml::read(&text, &source.display().to_string())
            .unwrap_or_else(|e| panic!("{label}: {e}"));
        let expected_text = fs::read_to_string(target).unwrap();
        let truth = if target.extension().is_some_and(|e| e == "console") {
            parse_console(&expected_text)
        } else {
            parse_xml(&expected_text)
        };
        let want = expected(&truth);
        assert!(!want.pus.is_empty(), "{label}: truth parser found no PUs");
        assert_facts(&label, &facts_of(&topo, &want), &want);
        checked += 1;
        with_distances += usize::from(want.distances.is_some());
    }
    eprintln!("checked {checked} xml cases, {} skipped", SKIPS.len());
    assert!(checked >= 25, "only {checked} cases compared");
    assert!(
        with_distances >= 10,
        "only {with_distances} cases had NUMA distances to compare"
    );
}

fn backend_xmls() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for sub in ["linux", "x86", "x86+linux"] {
        for e in fs::read_dir(hwloc_tests().join(sub)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|e| e == "xml") {
                files.push(p);
            }
        }
    }
    files.sort();
    assert_eq!(
        files.len(),
        BACKEND_XMLS,
        "hwloc backend XMLs in the corpus"
    );
    files
}

#[test]
fn backend_outputs_match_independent_parser() {
    if !truth::have_corpus(&format!(
        "{BACKEND_XMLS} hwloc backend XMLs against the test parser"
    )) {
        return;
    }
    let files = backend_xmls();
    for f in &files {
        if skipped(&name(f)) {
            continue;
        }
        let text = fs::read_to_string(f).unwrap();
        let topo = xml::read(&text, &f.display().to_string()).unwrap_or_else(|e| panic!("{e}"));
        let want = expected(&parse_xml(&text));
        assert_facts(&name(f), &facts_of(&topo, &want), &want);
    }
}

/// Every corpus XML: read, write v2, load in lstopo, re-export, compare.
#[test]
fn written_xml_loads_in_lstopo_with_same_topology() {
    let what = format!("{XML_FILES} corpus XMLs written and reloaded by lstopo");
    if !truth::have_corpus(&what) || !truth::have_lstopo(&what) {
        return;
    }
    let files = all_xmls();
    let dir = std::env::temp_dir().join(format!("manycore-xml-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    for f in &files {
        if skipped(&name(f)) {
            continue;
        }
        let text = fs::read_to_string(f).unwrap();
        let topo = xml::read(&text, &f.display().to_string()).unwrap_or_else(|e| panic!("{e}"));
        let out = dir.join(name(f));
        fs::write(&out, xml::write(&topo)).unwrap();
        let reexport = run_lstopo(out.to_str().unwrap(), &["--of", "xml"]);
        let want = expected(&parse_xml(&reexport));
        assert_facts(
            &format!("{} written and reloaded by lstopo", name(f)),
            &facts_of(&topo, &want),
            &want,
        );
        // And our reader reads our own output back to the same model.
        let back = xml::read(&xml::write(&topo), "written").unwrap();
        assert_facts(
            &format!("{} round trip", name(f)),
            &facts_of(&back, &want),
            &want,
        );
    }
    let _ = fs::remove_dir_all(&dir);
}

/// CPU kinds: one core kind per `<cpukind>`, holding exactly its cpuset, with
/// the forced efficiency (read here by a plain text scan).
#[test]
fn cpu_kinds_match_cpukind_elements() {
    let what = format!("CPU kinds of {XML_FILES} corpus XMLs");
    if !truth::have_corpus(&what) {
        return;
    }
    let files = all_xmls();
    let mut seen = 0;
    for f in &files {
        let text = fs::read_to_string(f).unwrap();
        let kinds: Vec<(Vec<usize>, Option<u32>)> = text
            .lines()
            .filter(|l| l.trim_start().starts_with("<cpukind "))
            .map(|l| {
                let attr = |k: &str| {
                    l.split(&format!("{k}=\""))
                        .nth(1)
                        .map(|r| r[..r.find('"').unwrap()].to_string())
                };
                let mut cpus = Vec::new();
                for (i, g) in attr("cpuset").unwrap().split(',').rev().enumerate() {
                    let v = u32::from_str_radix(g.trim_start_matches("0x"), 16).unwrap_or(0);
                    cpus.extend((0..32).filter(|b| v & (1 << b) != 0).map(|b| i * 32 + b));
                }
                (cpus, attr("forced_efficiency").map(|e| e.parse().unwrap()))
            })
            .collect();
        if kinds.is_empty() {
            continue;
        }
        seen += 1;
        let topo = xml::read(&text, &name(f)).unwrap();
        assert_eq!(
            topo.core_kinds().len(),
            kinds.len(),
            "{}: number of kinds",
            name(f)
        );
        for (k, (cpus, eff)) in kinds.iter().enumerate() {
            assert_eq!(
                topo.core_kinds()[k].efficiency,
                *eff,
                "{}: kind {k}",
                name(f)
            );
            let got: Vec<usize> = topo
                .cpus()
                .iter()
                .filter(|c| c.kind == Some(k as u16))
                .map(|c| c.id as usize)
                .collect();
            let want: Vec<usize> = cpus
                .iter()
                .copied()
                .filter(|c| topo.cpu(*c).is_some())
                .collect();
            assert_eq!(got, want, "{}: CPUs of kind {k}", name(f));
        }
    }
    assert!(seen >= 3, "only {seen} corpus files with CPU kinds");
}

/// The writer at full scale: the 16384-PU machine written as XML is loaded by
/// lstopo with the same packages, cores, PUs, caches and NUMA nodes.
#[test]
fn sixteen_thousand_pus_written_and_loaded_by_lstopo() {
    if !truth::have_lstopo("1 XML of 16384 PUs loaded by lstopo") {
        return;
    }
    let topo = readers::synthetic::parse("package:4 numa:4 l3:1 core:512 pu:2").unwrap();
    let path = std::env::temp_dir().join(format!("manycore-16k-{}.xml", std::process::id()));
    fs::write(&path, xml::write(&topo)).unwrap();
    let want = expected(&parse_xml(&run_lstopo(
        path.to_str().unwrap(),
        &["--of", "xml"],
    )));
    let _ = fs::remove_file(&path);
    assert_eq!(want.pus.len(), 16384);
    assert_facts("16384 PUs via XML", &facts_of(&topo, &want), &want);
}
