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
/// contiguous package, sparse sets spread over the whole capacity, sets
/// touching CPU 0 or the last CPU, and the sets of a machine numbering its
/// second threads after all first ones (a core is CPUs `c` and `c + half`,
/// a package two blocks `half` apart).
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
    let half = prop_oneof![Just(MAX_CPUS / 2), 1usize..MAX_CPUS / 2];
    let threads_last = (half.clone(), 0usize..MAX_CPUS / 2, 1usize..5).prop_map(|(half, c, t)| {
        (0..t)
            .map(|k| c % half + k * half)
            .filter(|&c| c < MAX_CPUS)
            .collect()
    });
    let blocks = (half, 0usize..MAX_CPUS / 2, 1usize..1100).prop_map(|(half, start, len)| {
        let start = start % half;
        (start..start + len)
            .flat_map(|c| [c, c + half])
            .filter(|&c| c < MAX_CPUS)
            .collect()
    });
    prop_oneof![anywhere, clustered, range, ends, threads_last, blocks]
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
    fn reads_as_the_set(cpus in arb_cpus(), probes in proptest::collection::vec(0..MAX_CPUS + 5, 16), near in proptest::collection::vec((0usize..64, 0usize..3), 8)) {
        let full = mask(&cpus);
        let c = CompactMask::from(&full);
        // Probes at, just below and just above members (random probes
        // mostly miss a sparse set).
        let members: Vec<usize> = cpus.iter().copied().collect();
        let probes = probes.into_iter().chain(near.iter().filter(|_| !members.is_empty()).map(|&(i, d)| {
            (members[i % members.len()] + d).saturating_sub(1)
        }));
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
        // The smaller form is kept: the run from the lowest CPU's word to the
        // highest's, or the non-zero words with their 16-bit indices (four
        // indices to a word).
        let w = c.words();
        let used: BTreeSet<usize> = cpus.iter().map(|c| c / 64).collect();
        match (cpus.first(), cpus.last()) {
            (Some(lo), Some(hi)) => {
                let span = hi / 64 - lo / 64 + 1;
                let sparse = used.len() + used.len().div_ceil(4);
                prop_assert_eq!(w.is_sparse(), sparse < span);
                prop_assert_eq!(w.stored(), if sparse < span { used.len() } else { span });
                prop_assert_eq!(c.heap_bytes(), 8 * span.min(sparse));
                if let Some((first, _)) = w.as_run() {
                    prop_assert_eq!(first, lo / 64);
                }
            }
            _ => prop_assert_eq!(c.heap_bytes(), 0),
        }
        // Built from its words, from its own form, or from any (index, word)
        // list, it is the same set.
        prop_assert_eq!(CompactMask::from_set(&c), c.clone());
        let entries: Vec<(usize, u64)> = (0..cpumask::MAX_CPUS / 64)
            .map(|i| (i, full.words()[i]))
            .filter(|&(i, w)| w != 0 || i % 7 == 0)
            .collect();
        prop_assert_eq!(CompactMask::from_entries(&entries), c.clone());
        prop_assert_eq!(c.words().entries().filter(|&(_, w)| w != 0).collect::<Vec<_>>(),
            entries.iter().copied().filter(|&(_, w)| w != 0).collect::<Vec<_>>());
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
        let mut m = fa;
        m.and_assign(&cb);
        prop_assert_eq!(m, mask(&a.intersection(&b).copied().collect()));
        let mut m = fa;
        m.or_assign(&cb);
        prop_assert_eq!(m, mask(&a.union(&b).copied().collect()));
    }

    #[test]
    fn narrowed_questions_answer_as_the_set(a in arb_cpus(), b in arb_cpus(), within in arb_cpus()) {
        let (ca, cb, cw) = (CompactMask::from(&mask(&a)), CompactMask::from(&mask(&b)), CompactMask::from(&mask(&within)));
        let first_shared = a.intersection(&b).next().copied();
        let subset_within = a.intersection(&within).all(|c| b.contains(c));
        // Each operand as either type: the answer is the sets'.
        prop_assert_eq!(ca.first_in(&cb), first_shared);
        prop_assert_eq!(ca.first_in(&mask(&b)), first_shared);
        prop_assert_eq!(ca.is_subset_within(&cb, &cw), subset_within);
        prop_assert_eq!(ca.is_subset_within(&mask(&b), &mask(&within)), subset_within);
        prop_assert_eq!(ca.is_subset_within(&cb, &mask(&within)), subset_within);
        // Within a set holding `b`, a set lies inside `b` exactly when it
        // is a subset of it.
        let all = CompactMask::from(&mask(&a.union(&b).copied().collect()));
        prop_assert_eq!(ca.is_subset_within(&cb, &all), a.is_subset(&b));
    }
}

#[test]
fn a_core_of_two_threads_is_one_or_two_words() {
    // Adjacent threads: one word.
    let core = CompactMask::parse_list("16382-16383").unwrap();
    assert_eq!(core.words().as_run(), Some((255, &[3u64 << 62][..])));
    assert_eq!(core.heap_bytes(), 8);
    assert_eq!(core.to_list_string(), "16382-16383");
    // Threads numbered half the machine apart (Linux's x86 order): the two
    // words and one word of indices, not the 129 words between them.
    let core = CompactMask::parse_list("5,8197").unwrap();
    assert!(core.words().is_sparse());
    assert_eq!(
        core.words().entries().collect::<Vec<_>>(),
        [(0, 1 << 5), (128, 1 << 5)]
    );
    assert_eq!(core.heap_bytes(), 24);
    assert_eq!(core.to_list_string(), "5,8197");
    assert!(CompactMask::new().words().entries().next().is_none());
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

#[test]
#[should_panic(expected = "word indices must increase")]
fn entries_out_of_order_are_a_programming_error() {
    CompactMask::from_entries(&[(5, 1), (2, 1)]);
}
