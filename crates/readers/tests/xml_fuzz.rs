//! proptest fuzzing of the XML reader: random text and random mutations of a
//! real hwloc XML never panic; random synthetic topologies round-trip through
//! our XML writer and reader unchanged.

#[path = "support/cases.rs"]
mod cases;

#[path = "xml_support/truth.rs"]
mod truth;

use std::sync::OnceLock;

use proptest::prelude::*;
use readers::{synthetic, xml};
use topology::{Topology, TopologyBuilder};

/// Mutations of the corpus XML below that one run tries.
const CASES: u32 = 256;

/// A real hwloc XML from the corpus, or None (said loudly once) without it.
fn corpus_sample() -> Option<&'static str> {
    static SAMPLE: OnceLock<Option<String>> = OnceLock::new();
    SAMPLE
        .get_or_init(|| {
            let what = format!(
                "{} random mutations of hwloc's 16amd64-4distances.xml",
                cases::fuzz_cases(CASES)
            );
            readers::corpus::present(&truth::corpus(), &what).then(|| {
                let file = truth::corpus().join("hwloc/tests/hwloc/xml/16amd64-4distances.xml");
                std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
            })
        })
        .as_deref()
}

/// `t` rebuilt with an empty source, for comparing what two reads found.
fn without_source(t: Topology) -> Topology {
    let mut b = TopologyBuilder::from_topology(&t);
    b.source("");
    b.finish().unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases::fuzz_cases(CASES)))]

    #[test]
    fn random_text_never_panics(text in "(<[a-z/?!]{0,3}|[a-z0-9=\" ,.>x]|</?object|<topology version=\"2.0\">|cpuset=\"0x[0-9a-f,x]{0,12}\"){0,40}") {
        let _ = xml::read(&text, "fuzz");
    }

    #[test]
    fn mutated_corpus_never_panics(
        at in any::<prop::sample::Index>(),
        len in 0usize..40,
        insert in "[<>/=\"a-zA-Z0-9 ,.\n-]{0,12}",
    ) {
        let Some(base) = corpus_sample() else {
            return Ok(());
        };
        let mut start = at.index(base.len() + 1);
        while !base.is_char_boundary(start) { start -= 1; }
        let mut end = (start + len).min(base.len());
        while !base.is_char_boundary(end) { end -= 1; }
        let mutated = format!("{}{}{}", &base[..start], insert, &base[end..]);
        if let Ok(t) = xml::read(&mutated, "fuzz") {
            let _ = xml::write(&t);
        }
    }

    #[test]
    fn synthetic_topologies_round_trip_through_xml(
        pkg in 1u32..4, numa in 1u32..3, l3 in 1u32..3, core in 1u32..5, pu in 1u32..4,
    ) {
        let desc = format!("package:{pkg} numa:{numa} l3:{l3} core:{core} pu:{pu}");
        let t = synthetic::parse(&desc).unwrap();
        let back = xml::read(&xml::write(&t), "written").map_err(|e| TestCaseError::fail(format!("{desc}: {e}")))?;
        prop_assert_eq!(without_source(t), without_source(back), "{}", desc);
    }
}
