//! Proptest fuzz of the SRAT/SLIT byte parsers (`acpitables`): they never
//! panic on random bytes, and tables built to ACPI 6.5 §5.2.16/§5.2.17
//! (layouts written here byte by byte) parse to exactly what was written,
//! with a fault reported for whatever was cut.

use acpitables::slit::{parse_slit, MAX_LOCALITIES};
use acpitables::srat::{parse_srat, ProximityMap, SratCpu, SratMem};
use acpitables::TableFault;
use proptest::prelude::*;

/// Srat entry to write: kind, fields, enabled flag.
#[derive(Clone, Debug)]
enum Entry {
    Lapic {
        apic: u8,
        domain: u32,
        enabled: bool,
    },
    X2apic {
        apic: u32,
        domain: u32,
        enabled: bool,
    },
    Memory {
        domain: u32,
        base: u64,
        len: u64,
        enabled: bool,
        hotplug: bool,
    },
    /// A structure kind the parser skips (reserved types), by its length.
    Other { kind: u8, len: u8 },
}

fn entry() -> impl Strategy<Value = Entry> {
    prop_oneof![
        (any::<u8>(), any::<u32>(), any::<bool>()).prop_map(|(apic, domain, enabled)| {
            Entry::Lapic {
                apic,
                domain,
                enabled,
            }
        }),
        (any::<u32>(), any::<u32>(), any::<bool>()).prop_map(|(apic, domain, enabled)| {
            Entry::X2apic {
                apic,
                domain,
                enabled,
            }
        }),
        (
            any::<u32>(),
            any::<u64>(),
            any::<u64>(),
            any::<bool>(),
            any::<bool>()
        )
            .prop_map(|(domain, base, len, enabled, hotplug)| Entry::Memory {
                domain,
                base,
                len,
                enabled,
                hotplug
            }),
        (6u8..=255, 2u8..=64).prop_map(|(kind, len)| Entry::Other { kind, len }),
    ]
}

/// The entry's bytes, laid out as ACPI 6.5 tables 5.60 (processor local
/// APIC/SAPIC affinity), 5.61 (memory affinity) and 5.62 (x2APIC affinity).
fn bytes_of(e: &Entry) -> Vec<u8> {
    match *e {
        Entry::Lapic {
            apic,
            domain,
            enabled,
        } => {
            let d = domain.to_le_bytes();
            let mut b = vec![0u8; 16];
            b[0] = 0;
            b[1] = 16;
            b[2] = d[0]; // proximity domain bits 7:0
            b[3] = apic;
            b[4..8].copy_from_slice(&(enabled as u32).to_le_bytes());
            b[9..12].copy_from_slice(&d[1..4]); // bits 31:8
            b
        }
        Entry::X2apic {
            apic,
            domain,
            enabled,
        } => {
            let mut b = vec![0u8; 24];
            b[0] = 2;
            b[1] = 24;
            b[4..8].copy_from_slice(&domain.to_le_bytes());
            b[8..12].copy_from_slice(&apic.to_le_bytes());
            b[12..16].copy_from_slice(&(enabled as u32).to_le_bytes());
            b
        }
        Entry::Memory {
            domain,
            base,
            len,
            enabled,
            hotplug,
        } => {
            let mut b = vec![0u8; 40];
            b[0] = 1;
            b[1] = 40;
            b[2..6].copy_from_slice(&domain.to_le_bytes());
            b[8..16].copy_from_slice(&base.to_le_bytes());
            b[16..24].copy_from_slice(&len.to_le_bytes());
            let flags = enabled as u32 | (hotplug as u32) << 1;
            b[28..32].copy_from_slice(&flags.to_le_bytes());
            b
        }
        Entry::Other { kind, len } => {
            let mut b = vec![0xa5u8; len as usize];
            b[0] = kind;
            b[1] = len;
            b
        }
    }
}

/// A whole SRAT: 36-byte header, 12 reserved bytes, then the entries.
fn table(entries: &[Entry]) -> (Vec<u8>, Vec<usize>) {
    let mut t = vec![0u8; 48];
    t[..4].copy_from_slice(b"SRAT");
    let mut ends = Vec::new();
    for e in entries {
        t.extend_from_slice(&bytes_of(e));
        ends.push(t.len());
    }
    let len = t.len() as u32;
    t[4..8].copy_from_slice(&len.to_le_bytes());
    (t, ends)
}

/// What the kernel must find: enabled CPU and memory entries, in order.
fn expected(entries: &[Entry]) -> (Vec<SratCpu>, Vec<SratMem>) {
    let (mut cpus, mut mem) = (Vec::new(), Vec::new());
    for e in entries {
        match *e {
            Entry::Lapic {
                apic,
                domain,
                enabled: true,
            } => cpus.push(SratCpu {
                apic_id: apic as u32,
                domain,
            }),
            Entry::X2apic {
                apic,
                domain,
                enabled: true,
            } => cpus.push(SratCpu {
                apic_id: apic,
                domain,
            }),
            Entry::Memory {
                domain,
                base,
                len,
                enabled: true,
                hotplug,
            } => mem.push(SratMem {
                domain,
                base,
                len,
                hotplug,
            }),
            _ => {}
        }
    }
    (cpus, mem)
}

fn srat_of(bytes: &[u8]) -> (Vec<SratCpu>, Vec<SratMem>) {
    let s = parse_srat(bytes);
    (s.cpus, s.mem)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let _ = srat_of(&bytes);
        if let Ok((n, m)) = parse_slit(&bytes) {
            prop_assert!((1..=MAX_LOCALITIES).contains(&n));
            prop_assert_eq!(m.len(), n * n);
        }
    }

    /// A table written to the spec parses to its enabled entries with no
    /// fault; every truncation parses to the entries that fit whole, with one
    /// fault exactly when the cut is inside the header or an entry;
    /// corrupting any byte of it never panics.
    #[test]
    fn srat_tables_parse_to_their_entries(
        entries in prop::collection::vec(entry(), 0..10),
        cut in any::<prop::sample::Index>(),
        corrupt in (any::<prop::sample::Index>(), any::<u8>()),
    ) {
        let (t, ends) = table(&entries);
        prop_assert_eq!(srat_of(&t), expected(&entries));
        prop_assert_eq!(parse_srat(&t).faults, []);

        let cut = cut.index(t.len() + 1);
        let whole = ends.iter().take_while(|&&end| end <= cut).count();
        prop_assert_eq!(srat_of(&t[..cut]), expected(&entries[..whole]));
        let faults = parse_srat(&t[..cut]).faults;
        let at_boundary = cut == 48 || ends.contains(&cut);
        match faults.as_slice() {
            [] => prop_assert!(at_boundary, "cut at {} unreported", cut),
            [TableFault::NoHeader { len, .. }] => prop_assert!(cut < 48 && *len == cut),
            [TableFault::Truncated { offset, table_len, .. }] => {
                prop_assert!(!at_boundary && cut > 48);
                prop_assert_eq!(*table_len, cut);
                prop_assert_eq!(*offset, if whole == 0 { 48 } else { ends[whole - 1] });
            }
            other => prop_assert!(false, "cut at {}: {:?}", cut, other),
        }

        let mut bad = t.clone();
        let i = corrupt.0.index(bad.len());
        bad[i] = corrupt.1;
        let _ = srat_of(&bad);
    }

    /// Nodes are numbered as Linux numbers them: in the order the enabled
    /// processor entries, then the enabled memory entries, first name each
    /// domain (the model below, written from `acpi_numa_init`).
    #[test]
    fn proximity_maps_number_domains_by_first_appearance(
        entries in prop::collection::vec(entry(), 0..10),
        noise in prop::collection::vec(any::<u8>(), 0..200),
    ) {
        let (t, _) = table(&entries);
        let (cpus, mem) = expected(&entries);
        let mut order: Vec<u32> = Vec::new();
        for d in cpus.iter().map(|c| c.domain).chain(mem.iter().map(|m| m.domain)) {
            if !order.contains(&d) {
                order.push(d);
            }
        }
        let map = ProximityMap::new(&t);
        prop_assert_eq!(map.len(), order.len());
        for (node, &pxm) in order.iter().enumerate() {
            prop_assert_eq!(map.node(pxm), Some(node as u32));
        }
        // Random bytes never panic, and each node needs a structure of at
        // least 16 bytes (a Local APIC affinity) naming it.
        prop_assert!(ProximityMap::new(&noise).len() <= noise.len() / 16);
    }

    /// A SLIT of n localities gives n and its matrix; short or oversized
    /// ones are refused with a fault.
    #[test]
    fn slit_tables_parse_to_their_matrix(
        n in 1usize..=24,
        seed in prop::collection::vec(10u8..=254, 576),
        extra in prop::collection::vec(any::<u8>(), 0..8),
        cut in any::<prop::sample::Index>(),
    ) {
        let matrix = &seed[..n * n];
        let mut t = vec![0u8; 36];
        t[..4].copy_from_slice(b"SLIT");
        t.extend_from_slice(&(n as u64).to_le_bytes());
        t.extend_from_slice(matrix);
        t.extend_from_slice(&extra);
        prop_assert_eq!(parse_slit(&t), Ok((n, matrix.to_vec())));
        let cut = cut.index(44 + n * n);
        prop_assert!(parse_slit(&t[..cut]).is_err());
        for bogus in [0u64, MAX_LOCALITIES as u64 + 1, u64::MAX, (n * n + 64) as u64] {
            let mut b = t.clone();
            b[36..44].copy_from_slice(&bogus.to_le_bytes());
            let parsed = parse_slit(&b);
            // A count that still fits the bytes we have is a valid table.
            let fits = (1..=MAX_LOCALITIES as u64).contains(&bogus) && 44 + (bogus * bogus) as usize <= b.len();
            prop_assert_eq!(parsed.is_ok(), fits, "count {}", bogus);
        }
    }
}
