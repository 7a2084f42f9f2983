//! Property tests: both text forms round-trip, and parsing never panics.
use cpumask::{CpuMask, MAX_CPUS};
use proptest::prelude::*;

fn arb_mask() -> impl Strategy<Value = CpuMask> {
    prop_oneof![
        proptest::collection::vec(0..MAX_CPUS, 0..64).prop_map(|v| v.into_iter().collect()),
        (0..MAX_CPUS, 0..MAX_CPUS).prop_map(|(a, b)| {
            let mut m = CpuMask::new();
            m.set_range(a.min(b), a.max(b) + 1);
            m
        }),
        proptest::collection::vec(0..256usize, 0..200).prop_map(|v| v.into_iter().collect()),
    ]
}

proptest! {
    #[test]
    fn list_round_trips(m in arb_mask()) {
        let text = m.to_list_string();
        prop_assert_eq!(CpuMask::parse_list(&text).unwrap(), m);
    }

    #[test]
    fn hex_round_trips(m in arb_mask()) {
        let nr = m.last().map_or(1, |l| l + 1);
        let text = m.to_hex_string(nr);
        // Every group is exactly 8 hex digits, as sysfs prints.
        prop_assert!(text.split(',').all(|g| g.len() == 8));
        prop_assert_eq!(text.split(',').count(), nr.div_ceil(32));
        prop_assert_eq!(CpuMask::parse_hex(&text).unwrap(), m);
    }

    #[test]
    fn weight_matches_iteration(m in arb_mask()) {
        prop_assert_eq!(m.weight(), m.iter().count());
        let v: Vec<usize> = m.iter().collect();
        prop_assert!(v.windows(2).all(|w| w[0] < w[1]));
        prop_assert_eq!(m.first(), v.first().copied());
        prop_assert_eq!(m.last(), v.last().copied());
    }

    #[test]
    fn algebra_agrees_with_sets(a in arb_mask(), b in arb_mask()) {
        use std::collections::BTreeSet;
        let sa: BTreeSet<usize> = a.iter().collect();
        let sb: BTreeSet<usize> = b.iter().collect();
        prop_assert_eq!(a.or(&b).iter().collect::<BTreeSet<_>>(), &sa | &sb);
        prop_assert_eq!(a.and(&b).iter().collect::<BTreeSet<_>>(), &sa & &sb);
        prop_assert_eq!(a.and_not(&b).iter().collect::<BTreeSet<_>>(), &sa - &sb);
        prop_assert_eq!(a.is_subset(&b), sa.is_subset(&sb));
        prop_assert_eq!(a.intersects(&b), !sa.is_disjoint(&sb));
    }

    /// Fuzz-style: arbitrary text never panics, and whatever parses re-parses equal.
    #[test]
    fn parsers_never_panic(s in "[0-9a-fA-F,:/x \\-]{0,40}") {
        if let Ok(m) = CpuMask::parse_list(&s) {
            prop_assert_eq!(CpuMask::parse_list(&m.to_list_string()).unwrap(), m);
        }
        if let Ok(m) = CpuMask::parse_hex(&s) {
            let nr = m.last().map_or(1, |l| l + 1);
            prop_assert_eq!(CpuMask::parse_hex(&m.to_hex_string(nr)).unwrap(), m);
        }
    }
}
