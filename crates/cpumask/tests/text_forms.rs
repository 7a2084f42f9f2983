//! Property tests: both text forms round-trip, and parsing never panics.
use std::collections::BTreeSet;

use cpumask::{CompactMask, CpuMask, ParseError, MAX_CPUS};
use proptest::prelude::*;

/// The hex form as its documentation defines it (comma-separated groups of 1
/// to 8 hex digits, the rightmost holding CPUs 0-31), written the plain way:
/// groups taken from the right, each through `u32::from_str_radix`, CPUs
/// collected in a set, the first fault met from the right reported. The
/// parser is checked against it.
fn reference_hex(text: &str) -> Result<BTreeSet<usize>, ParseError> {
    let s = text.trim();
    if s.is_empty() {
        return Err(ParseError::Syntax {
            at: 0,
            expected: "hex digits",
        });
    }
    let s = s.strip_prefix("0x").unwrap_or(s);
    let groups: Vec<&str> = s.split(',').collect();
    let starts: Vec<usize> = groups
        .iter()
        .scan(0, |at, g| {
            let here = *at;
            *at += g.len() + 1;
            Some(here)
        })
        .collect();
    let mut cpus = BTreeSet::new();
    for (k, group) in groups.iter().enumerate().rev() {
        let place = (groups.len() - 1 - k) as u64;
        if group.is_empty() || group.len() > 8 {
            return Err(ParseError::Syntax {
                at: starts[k],
                expected: "a group of 1 to 8 hex digits",
            });
        }
        if let Some(i) = group.find(|c: char| !c.is_ascii_hexdigit()) {
            return Err(ParseError::Syntax {
                at: starts[k] + i,
                expected: "a hex digit",
            });
        }
        let value = u32::from_str_radix(group, 16).unwrap();
        for bit in (0..32).filter(|b| value >> b & 1 == 1) {
            if place * 32 + bit >= MAX_CPUS as u64 {
                let top = place * 32 + 31 - value.leading_zeros() as u64;
                return Err(ParseError::TooLarge { cpu: top });
            }
            cpus.insert((place * 32 + bit) as usize);
        }
    }
    Ok(cpus)
}

/// Hex-mask-like text, up to 600 groups (past the 512 that 16384 CPUs fill),
/// sometimes with a `0x` prefix and surrounding blanks: half of the cases
/// well formed (groups of 1 to 8 hex digits, many of them zero), half with
/// groups of 0 to 9 characters and now and then a character that is no hex
/// digit (often one just outside the digits' and letters' ranges).
fn arb_hex_text() -> impl Strategy<Value = String> {
    let hex = || proptest::char::ranges(vec!['0'..='9', 'a'..='f', 'A'..='F'].into());
    // Next to the hex digits' ranges, and then anything.
    let near = proptest::sample::select(vec!['/', ':', '@', 'G', '`', 'g', '\u{10}', '\u{19}']);
    let noisy = prop_oneof![20 => hex(), 2 => near, 1 => proptest::char::any()];
    let zero = || Just("00000000".to_string());
    let good = proptest::collection::vec(hex(), 1..=8).prop_map(String::from_iter);
    let bad = proptest::collection::vec(noisy, 0..10).prop_map(String::from_iter);
    let groups = prop_oneof![
        proptest::collection::vec(prop_oneof![1 => good, 3 => zero()], 1..600),
        proptest::collection::vec(prop_oneof![3 => bad, 1 => zero()], 1..600),
    ];
    (any::<bool>(), groups, any::<bool>()).prop_map(|(prefix, groups, blank)| {
        let body = groups.join(",");
        let text = if prefix { format!("0x{body}") } else { body };
        if blank {
            format!(" {text}\n")
        } else {
            text
        }
    })
}

/// Hex maps in the kernel's form (`bitmap_print_to_pagebuf`): a first group
/// of one to eight digits, then groups of exactly eight after commas, most
/// of them zero as on a big machine, up to past [`MAX_CPUS`]; now and then
/// one character replaced by one that breaks the form.
fn arb_kernel_hex_text() -> impl Strategy<Value = String> {
    let hex = || proptest::char::ranges(vec!['0'..='9', 'a'..='f', 'A'..='F'].into());
    let head = proptest::collection::vec(hex(), 1..=8).prop_map(String::from_iter);
    let full = proptest::collection::vec(hex(), 8).prop_map(String::from_iter);
    let group = prop_oneof![1 => full, 6 => Just("00000000".to_string())];
    let groups = proptest::collection::vec(group, 0..(MAX_CPUS / 32 + 3));
    let breaker = proptest::sample::select(vec![',', 'g', '/', ':', ' ', '\u{e9}']);
    let flaw = proptest::option::weighted(0.2, (any::<proptest::sample::Index>(), breaker));
    (head, groups, flaw).prop_map(|(head, groups, flaw)| {
        let mut text: Vec<char> = std::iter::once(head)
            .chain(groups)
            .collect::<Vec<_>>()
            .join(",")
            .chars()
            .collect();
        if let Some((at, c)) = flaw {
            let at = at.index(text.len());
            text[at] = c;
        }
        text.into_iter().collect()
    })
}

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

    /// The hex parser agrees with the plain reference above, on the masks
    /// it accepts and on the fault it reports.
    #[test]
    fn hex_parser_matches_reference(text in arb_hex_text()) {
        let ours = CpuMask::parse_hex(&text).map(|m| m.iter().collect::<BTreeSet<_>>());
        prop_assert_eq!(ours, reference_hex(&text));
    }

    /// The kernel's own form, which the parser reads nine bytes at a time,
    /// agrees with the reference too: the masks, the CPUs past the limit
    /// and the faults.
    #[test]
    fn kernel_form_matches_reference(text in arb_kernel_hex_text()) {
        let ours = CpuMask::parse_hex(&text).map(|m| m.iter().collect::<BTreeSet<_>>());
        prop_assert_eq!(ours, reference_hex(&text));
    }

    /// A stride takes the first `used` CPUs of every `group` from the range's
    /// start, however large the numbers (they saturate at u64::MAX, so a
    /// 20-digit `used` must not wrap to an empty mask).
    #[test]
    fn strides_of_any_size_select_as_the_kernel_does(
        a in 0usize..100,
        len in 0usize..100,
        group in prop_oneof![1u64..10, Just(u64::MAX - 1), Just(u64::MAX)],
        used_pick in any::<u64>(),
        digits in prop_oneof![Just(false), Just(true)],
    ) {
        let used = 1 + used_pick % group;
        let b = a + len;
        let text = if digits && used == group {
            format!("{a}-{b}:99999999999999999999/99999999999999999999")
        } else {
            format!("{a}-{b}:{used}/{group}")
        };
        let want: BTreeSet<usize> = (a..=b)
            .filter(|c| ((c - a) as u128 % group as u128) < used as u128)
            .collect();
        let ours = CpuMask::parse_list(&text).unwrap().iter().collect::<BTreeSet<_>>();
        prop_assert_eq!(ours, want, "{}", text);
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

/// A kernel-form map with one digit turned into a comma is often still a
/// hex mask (`1,12345678` becomes `1,1234,678`: three groups), but the fast
/// path for the kernel's form gives up on it only after giving out the
/// groups to the left of the comma. Every such map, from a few machines'
/// maps, parses as the reference says: nothing the fast path gave out
/// stays behind.
#[test]
fn kernel_form_abandoned_midway_keeps_no_groups() {
    let maps = [
        "1,12345678",
        "f0,00000000,0000000f",
        "ffffffff,ffffffff,ffffffff",
        "8000,00000001,00000000,80000000",
    ];
    let mut mended = 0;
    for map in maps {
        for at in (0..map.len()).filter(|&i| map.as_bytes()[i] != b',') {
            let mut text = map.as_bytes().to_vec();
            text[at] = b',';
            let text = String::from_utf8(text).unwrap();
            let want = reference_hex(&text);
            mended += usize::from(want.is_ok());
            let full = CpuMask::parse_hex(&text).map(|m| m.iter().collect::<BTreeSet<_>>());
            assert_eq!(full, want, "{text}");
            let compact = CompactMask::parse_hex(&text).map(|m| m.iter().collect::<BTreeSet<_>>());
            assert_eq!(compact, want, "{text}");
        }
    }
    // The case this test is about does occur among them.
    assert!(mended >= 4, "{mended}");
}

proptest! {
    /// The compact parse is the full one's: the same set, the same error.
    #[test]
    fn compact_hex_parse_is_the_full_parse(text in arb_hex_text()) {
        let full = CpuMask::parse_hex(&text).map(|m| CompactMask::from(&m));
        prop_assert_eq!(CompactMask::parse_hex(&text), full);
    }
}
