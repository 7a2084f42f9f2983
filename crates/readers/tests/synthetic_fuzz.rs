//! proptest fuzzing of the synthetic reader: random text and mutations of valid
//! descriptions never panic; random valid descriptions round-trip
//! parse → write → parse to the same topology.

#[path = "support/cases.rs"]
mod cases;

use proptest::prelude::*;
use readers::synthetic;
use topology::{Topology, TopologyBuilder};

const VALID: &[&str] = &[
    "package:2 numa:2 l3:1(size=32MB) core:4 pu:2",
    "pack:2 [numa(memory=2GB)] l2:2 core:2 pu:2(indexes=0,4,1,5,2,6,3,7,8,12,9,13,10,14,11,15)",
    "2 3 4 5 6",
    "package:1 group:4 [numa] [numa] core:2 pu:4",
    "package:2 core:4 pu:2(indexes=core:package)",
    "numa:4(indexes=3,2,1,0) die:2 core:2 pu:1(indexes=2*8:1*2)",
];

/// `t` rebuilt with an empty source, for comparing what two reads found.
fn without_source(t: Topology) -> Topology {
    let mut b = TopologyBuilder::from_topology(&t);
    b.source("");
    b.finish().unwrap()
}

/// A random valid description: levels in an order the model accepts, small
/// arities, optional attributes and a random PU numbering.
fn valid_description() -> impl Strategy<Value = String> {
    let level = |name: &'static str| proptest::option::of((Just(name), 1u32..4));
    (
        level("package"),
        level("die"),
        level("group"),
        level("numa"),
        level("l3"),
        level("l2"),
        level("l1d"),
        level("core"),
        1u32..5,
        any::<bool>(),
        any::<u64>(),
        proptest::option::of(1u64..64),
    )
        .prop_map(
            |(pkg, die, group, numa, l3, l2, l1, core, pus, shuffle, seed, size)| {
                let mut items = Vec::new();
                let mut total = 1u32;
                for (name, arity) in [pkg, die, group, numa, l3, l2, l1, core]
                    .into_iter()
                    .flatten()
                {
                    total *= arity;
                    let attr = match (name, size) {
                        ("numa", Some(s)) => format!("(memory={s}MiB)"),
                        ("l3" | "l2" | "l1d", Some(s)) => format!("(size={s}kB)"),
                        _ => String::new(),
                    };
                    items.push(format!("{name}:{arity}{attr}"));
                }
                total *= pus;
                let mut pu = format!("pu:{pus}");
                if shuffle {
                    // A random permutation of 0..total (xorshift, deterministic per seed).
                    let mut ids: Vec<u32> = (0..total).collect();
                    let mut x = seed | 1;
                    for i in (1..ids.len()).rev() {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        ids.swap(i, (x % (i as u64 + 1)) as usize);
                    }
                    let list: Vec<String> = ids.iter().map(|i| i.to_string()).collect();
                    pu = format!("pu:{pus}(indexes={})", list.join(","));
                }
                items.push(pu);
                items.join(" ")
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases::fuzz_cases(512)))]

    #[test]
    fn random_text_never_panics(text in "[a-zA-Z0-9:() \\[\\]=,*.-]{0,60}") {
        let _ = synthetic::parse(&text);
    }

    #[test]
    fn mutated_descriptions_never_panic(
        which in 0..VALID.len(),
        at in any::<prop::sample::Index>(),
        len in 0usize..8,
        insert in "[a-z0-9:() \\[\\]=,*]{0,6}",
    ) {
        let base = VALID[which];
        let start = at.index(base.len() + 1);
        let end = (start + len).min(base.len());
        let mutated = format!("{}{}{}", &base[..start], insert, &base[end..]);
        if let Ok(t) = synthetic::parse(&mutated) {
            // Whatever parses must also be writable or refused cleanly.
            let _ = synthetic::write(&t);
        }
    }

    #[test]
    fn valid_descriptions_round_trip(desc in valid_description()) {
        let first = synthetic::parse(&desc).map_err(|e| TestCaseError::fail(format!("{desc}: {e}")))?;
        let written = synthetic::write(&first).map_err(|e| TestCaseError::fail(format!("{desc}: {e}")))?;
        let second = synthetic::parse(&written).map_err(|e| TestCaseError::fail(format!("{desc} -> {written}: {e}")))?;
        prop_assert_eq!(without_source(first), without_source(second), "{} -> {}", desc, written);
    }
}

#[test]
fn valid_examples_parse() {
    for d in VALID {
        synthetic::parse(d).unwrap_or_else(|e| panic!("{d}: {e}"));
    }
}
