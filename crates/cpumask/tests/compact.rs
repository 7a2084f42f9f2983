//! Property tests: a `CompactMask` answers every question exactly as the
//! `CpuMask` it was made from, and as a plain `BTreeSet` of the same CPUs
//! (the independent truth: no bit arithmetic), whichever type the other
//! operand is.
use std::collections::hash_map::DefaultHasher;
use std::collections::BTreeSet;
use std::hash::{Hash, Hasher};

use cpumask::{CompactMask, CpuMask, MAX_CPUS};
use proptest::prelude::*;

/// CPU sets of every shape the model holds: empty, a core's few threads, a
/// contiguous package, sparse sets spread over the whole capacity, and sets
/// touching CPU 0 or the last CPU.
fn arb_cpus() -> impl Strategy<Value = BTreeSet<usize>> {
    let anywhere = proptest::collection::btree_set(0..MAX_CPUS, 0..40);
    let clustered = (
        0..MAX_CPUS - 200,
        proptest::collection::btree_set(0usize..200, 0..60),
    )
        .prop_map(|(base, offs)| offs.into_iter().map(|o| base + o).collect());
    let range = (0..MAX_CPUS, 0usize..3000)
        .prop_map(|(start, len)| (start..(start + len).min(MAX_CPUS)).collect::<BTreeSet<usize>>());
    let ends =
        proptest::collection::btree_set(prop_oneof![0usize..70, MAX_CPUS - 70..MAX_CPUS], 0..10);
    prop_oneof![anywhere, clustered, range, ends]
}

fn mask(cpus: &BTreeSet<usize>) -> CpuMask {
    cpus.iter().copied().collect()
}

fn hash_of(m: &CompactMask) -> u64 {
    let mut h = DefaultHasher::new();
    m.hash(&mut h);
    h.finish()
}

fn list(cpus: &BTreeSet<usize>) -> String {
    let v: Vec<usize> = cpus.iter().copied().collect();
    let mut runs: Vec<String> = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        runs.push(if i == j {
            v[i].to_string()
        } else {
            format!("{}-{}", v[i], v[j])
        });
        i = j + 1;
    }
    runs.join(",")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn reads_as_the_set(cpus in arb_cpus(), probes in proptest::collection::vec(0..MAX_CPUS + 5, 16)) {
        let full = mask(&cpus);
        let c = CompactMask::from(&full);
        prop_assert_eq!(c.iter().collect::<Vec<_>>(), cpus.iter().copied().collect::<Vec<_>>());
        prop_assert_eq!(c.weight(), cpus.len());
        prop_assert_eq!(c.is_empty(), cpus.is_empty());
        prop_assert_eq!(c.first(), cpus.first().copied());
        prop_assert_eq!(c.last(), cpus.last().copied());
        for p in probes {
            prop_assert_eq!(c.contains(p), cpus.contains(&p));
            prop_assert_eq!(c.next_from(p), cpus.range(p..).next().copied());
            prop_assert_eq!(full.next_from(p), cpus.range(p..).next().copied());
        }
        prop_assert_eq!(c.to_string(), list(&cpus));
        prop_assert_eq!(full.to_string(), list(&cpus));
        prop_assert_eq!(c.to_cpumask(), full);
        prop_assert_eq!(&c, &full);
        prop_assert_eq!(CompactMask::try_from_cpus(cpus.iter().rev().copied()).unwrap(), c.clone());
        if let (Some(&lo), Some(&hi)) = (cpus.first(), cpus.last()) {
            let span: BTreeSet<usize> = (lo..=hi).collect();
            prop_assert_eq!(CompactMask::from_range(lo, hi + 1), mask(&span));
        }
        prop_assert_eq!(c.to_string().parse::<CompactMask>().unwrap(), c.clone());
        // Only the words from the lowest CPU's to the highest's are kept.
        let w = c.words();
        match (cpus.first(), cpus.last()) {
            (Some(lo), Some(hi)) => {
                prop_assert_eq!(w.first, lo / 64);
                prop_assert_eq!(w.words.len(), hi / 64 - lo / 64 + 1);
            }
            _ => prop_assert!(w.words.is_empty()),
        }
    }

    #[test]
    fn compares_as_the_set(a in arb_cpus(), b in arb_cpus()) {
        let (fa, fb) = (mask(&a), mask(&b));
        let (ca, cb) = (CompactMask::from(&fa), CompactMask::from(&fb));
        let shared = a.intersection(&b).count();
        let subset = a.is_subset(&b);
        // Every pairing of the two types gives the set's answer.
        for (x, y) in [(ca.intersects(&cb), fa.intersects(&cb)), (ca.intersects(&fb), fa.intersects(&fb))] {
            prop_assert_eq!(x, shared > 0);
            prop_assert_eq!(y, shared > 0);
        }
        for (x, y) in [(ca.is_subset(&cb), fa.is_subset(&cb)), (ca.is_subset(&fb), fa.is_subset(&fb))] {
            prop_assert_eq!(x, subset);
            prop_assert_eq!(y, subset);
        }
        prop_assert_eq!(cb.is_superset(&ca), subset);
        prop_assert_eq!(ca.and_weight(&cb), shared);
        prop_assert_eq!(fa.and_weight(&cb), shared);
        prop_assert_eq!(ca == cb, a == b);
        prop_assert_eq!(fa == cb, a == b);
        prop_assert_eq!(ca == fb, a == b);
        if a == b {
            prop_assert_eq!(hash_of(&ca), hash_of(&cb));
        }
        // Full-mask algebra with a compact operand equals the sets' algebra.
        prop_assert_eq!(fa.or(&cb), mask(&a.union(&b).copied().collect()));
        prop_assert_eq!(fa.and(&cb), mask(&a.intersection(&b).copied().collect()));
        prop_assert_eq!(fa.and_not(&cb), mask(&a.difference(&b).copied().collect()));
        prop_assert_eq!(fa.xor(&cb), mask(&a.symmetric_difference(&b).copied().collect()));
        prop_assert_eq!(ca.or(&fb), mask(&a.union(&b).copied().collect()));
        prop_assert_eq!(ca.and(&cb), mask(&a.intersection(&b).copied().collect()));
        prop_assert_eq!(ca.and_not(&cb), mask(&a.difference(&b).copied().collect()));
    }
}

#[test]
fn a_core_of_two_threads_is_one_word() {
    let core = CompactMask::parse_list("16382-16383").unwrap();
    assert_eq!(core.words().first, 255);
    assert_eq!(core.words().words, &[3u64 << 62]);
    assert_eq!(core.to_list_string(), "16382-16383");
    assert!(CompactMask::new().words().words.is_empty());
    assert_eq!(
        CompactMask::from_words(3, vec![0, 0, 5, 0]).to_list_string(),
        "320,322"
    );
    assert_eq!(
        CompactMask::from_words(3, vec![0, 1]),
        CompactMask::single(256)
    );
    assert_eq!(CompactMask::from_words(3, vec![0, 0]), CompactMask::new());
}
