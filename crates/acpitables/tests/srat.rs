//! SRAT/SLIT byte parsing (`acpitables`) on tables written here byte by
//! byte to ACPI 6.5 §5.2.16/§5.2.17: the kernel must never panic on what
//! firmware hands it, and must say what it could not use.

use acpitables::slit::parse_slit;
use acpitables::srat::{parse_srat, ProximityMap, SratCpu, SratMem};
use acpitables::TableFault;

fn header(sig: &[u8; 4], len: usize) -> Vec<u8> {
    let mut h = vec![0u8; 36];
    h[..4].copy_from_slice(sig);
    h[4..8].copy_from_slice(&(len as u32).to_le_bytes());
    h
}

fn srat(entries: &[Vec<u8>]) -> Vec<u8> {
    let len = 48 + entries.iter().map(Vec::len).sum::<usize>();
    let mut t = header(b"SRAT", len);
    t.extend_from_slice(&[0u8; 12]);
    for e in entries {
        t.extend_from_slice(e);
    }
    t
}

fn lapic(apic: u8, pxm: u32, enabled: bool) -> Vec<u8> {
    let mut e = vec![0u8; 16];
    e[0] = 0;
    e[1] = 16;
    e[2] = pxm as u8;
    e[3] = apic;
    e[4] = enabled as u8;
    e[9..12].copy_from_slice(&pxm.to_le_bytes()[1..4]);
    e
}

fn x2apic(apic: u32, pxm: u32) -> Vec<u8> {
    let mut e = vec![0u8; 24];
    e[0] = 2;
    e[1] = 24;
    e[4..8].copy_from_slice(&pxm.to_le_bytes());
    e[8..12].copy_from_slice(&apic.to_le_bytes());
    e[12] = 1;
    e
}

fn memory(pxm: u32, base: u64, len: u64, flags: u32) -> Vec<u8> {
    let mut e = vec![0u8; 40];
    e[0] = 1;
    e[1] = 40;
    e[2..6].copy_from_slice(&pxm.to_le_bytes());
    e[8..16].copy_from_slice(&base.to_le_bytes());
    e[16..24].copy_from_slice(&len.to_le_bytes());
    e[28..32].copy_from_slice(&flags.to_le_bytes());
    e
}

#[test]
fn srat_entries_of_every_kind() {
    let t = srat(&[
        lapic(0, 0, true),
        lapic(1, 0x0102_0304, true),
        lapic(2, 1, false),
        x2apic(300, 3),
        memory(0, 0, 0xa0000, 1),
        memory(1, 1 << 32, 1 << 30, 1 | 2),
        memory(2, 1 << 33, 1 << 30, 0),
    ]);
    let parsed = parse_srat(&t);
    assert_eq!(parsed.faults, []);
    let (cpus, mem) = (parsed.cpus, parsed.mem);
    assert_eq!(
        cpus,
        [
            SratCpu {
                apic_id: 0,
                domain: 0
            },
            SratCpu {
                apic_id: 1,
                domain: 0x0102_0304
            },
            SratCpu {
                apic_id: 300,
                domain: 3
            },
        ]
    );
    assert_eq!(
        mem,
        [
            SratMem {
                domain: 0,
                base: 0,
                len: 0xa0000,
                hotplug: false
            },
            SratMem {
                domain: 1,
                base: 1 << 32,
                len: 1 << 30,
                hotplug: true
            },
        ]
    );
}

#[test]
fn malformed_srat_and_slit_never_panic() {
    let good = srat(&[lapic(0, 0, true), memory(0, 0, 1 << 20, 1), x2apic(7, 1)]);
    // Every truncation, and every single-byte corruption of the entry area.
    for cut in 0..=good.len() {
        let s = parse_srat(&good[..cut]);
        assert!(s.cpus.len() <= 2 && s.mem.len() <= 1);
        // Cut anywhere but between entries: said so.
        let boundary = [48, 64, 104, 128].contains(&cut);
        assert_eq!(
            s.faults.is_empty(),
            boundary,
            "cut at {cut}: {:?}",
            s.faults
        );
    }
    for i in 48..good.len() {
        for v in [0u8, 1, 2, 0x7f, 0xff] {
            let mut bad = good.clone();
            bad[i] = v;
            let _ = parse_srat(&bad);
        }
    }
    // SLIT: header, locality count, matrix.
    let mut slit = header(b"SLIT", 44 + 4);
    slit.extend_from_slice(&2u64.to_le_bytes());
    slit.extend_from_slice(&[10, 20, 20, 10]);
    assert_eq!(parse_slit(&slit), Ok((2, vec![10, 20, 20, 10])));
    for cut in 0..slit.len() {
        assert!(parse_slit(&slit[..cut]).is_err(), "cut at {cut}");
    }
    let mut huge = slit.clone();
    huge[36..44].copy_from_slice(&u64::MAX.to_le_bytes());
    assert_eq!(
        parse_slit(&huge),
        Err(TableFault::BadLocalityCount { count: u64::MAX })
    );
}

#[test]
fn faults_name_what_was_wrong() {
    // An entry claiming length 1, a local APIC entry cut to 10 bytes (its
    // layout is 16), and a table cut inside its header.
    let mut bad_len = srat(&[lapic(0, 0, true)]);
    bad_len.extend_from_slice(&[0, 1, 0, 0]);
    assert_eq!(
        parse_srat(&bad_len).faults,
        [TableFault::BadLength {
            offset: 64,
            kind: 0,
            len: 1
        }]
    );
    let mut short = lapic(3, 1, true);
    short.truncate(10);
    short[1] = 10;
    let s = parse_srat(&srat(&[short, lapic(4, 1, true)]));
    assert_eq!(
        s.faults,
        [TableFault::ShortEntry {
            offset: 48,
            kind: 0,
            len: 10,
            need: 16
        }]
    );
    assert_eq!(
        s.cpus,
        [SratCpu {
            apic_id: 4,
            domain: 1
        }]
    );
    assert_eq!(
        parse_srat(&srat(&[])[..20]).faults,
        [TableFault::NoHeader { len: 20, need: 48 }]
    );
    let text = TableFault::ShortEntry {
        offset: 48,
        kind: 0,
        len: 10,
        need: 16,
    }
    .to_string();
    assert!(
        text.contains("offset 48") && text.contains("needs 16"),
        "{text}"
    );
}

/// Linux 6.12 numbers a proximity domain as the next node the first time an
/// enabled initiator structure names it (all of them, in table order), then
/// the first time an enabled Memory Affinity does (drivers/acpi/numa/srat.c,
/// `acpi_numa_init`: one walk over Local APIC, x2APIC, GICC and Generic
/// Initiator affinity, then one over Memory Affinity, each new domain given
/// `first_unset_node`). The expected node ids below follow that rule by hand.
#[test]
fn proximity_domains_number_nodes_in_linuxs_order_and_unknown_ones_are_none() {
    // Sparse domains out of order: 7 (first CPU) is node 0, 40 node 1, and 2,
    // named by memory only, node 2. Domain 3, which no entry names, is no
    // node (a SLIT row for it must not land on node 0).
    let map = ProximityMap::new(&srat(&[
        lapic(0, 7, true),
        x2apic(300, 40),
        memory(2, 0, 1 << 20, 1),
    ]));
    assert_eq!(map.len(), 3);
    assert_eq!(
        [map.node(7), map.node(40), map.node(2), map.node(3)],
        [Some(0), Some(1), Some(2), None]
    );
    assert!(ProximityMap::new(&srat(&[])).is_empty());
}

#[test]
fn initiators_number_nodes_before_memory_wherever_it_sits_in_the_table() {
    let gi = |pxm: u32, enabled: bool| {
        structure(5, 32, &[(4, &pxm.to_le_bytes()), (24, &[enabled as u8])])
    };
    let its = structure(4, 12, &[(2, &9u32.to_le_bytes())]);
    let map = ProximityMap::new(&srat(&[
        memory(5, 0, 1 << 20, 1),       // second walk: after every initiator
        memory(6, 1 << 20, 1 << 20, 0), // disabled: no node
        lapic(1, 4, false),             // disabled: no node
        its,                            // names domain 9, makes no node
        lapic(0, 3, true),              // node 0
        gi(8, true),                    // node 1: a generic initiator counts
        gi(10, false),                  // disabled: no node
        x2apic(300, 3),                 // domain 3 again: still node 0
        memory(3, 2 << 20, 1 << 20, 1),
    ]));
    assert_eq!(
        [3, 8, 5, 6, 4, 9, 10].map(|pxm| map.node(pxm)),
        [Some(0), Some(1), Some(2), None, None, None, None]
    );
    assert_eq!(map.len(), 3);
}

/// A structure of `kind` with `fields` (offset, little-endian bytes) over
/// zeros, `len` bytes long (ACPI 6.5 tables 5.64, 5.65, 5.66).
fn structure(kind: u8, len: u8, fields: &[(usize, &[u8])]) -> Vec<u8> {
    let mut e = vec![0u8; len as usize];
    e[0] = kind;
    e[1] = len;
    for &(at, bytes) in fields {
        e[at..at + bytes.len()].copy_from_slice(bytes);
    }
    e
}

#[test]
fn arm64_and_initiator_structures_decode_with_their_offsets() {
    use acpitables::srat::{entries, Affinity, Entry};
    let gicc = structure(
        3,
        18,
        &[
            (2, &5u32.to_le_bytes()),
            (6, &9u32.to_le_bytes()),
            (10, &[1]),
        ],
    );
    let its = structure(4, 12, &[(2, &6u32.to_le_bytes()), (8, &2u32.to_le_bytes())]);
    let gi = structure(5, 32, &[(4, &7u32.to_le_bytes())]);
    let got: Vec<_> = entries(&srat(&[gicc, its, gi])).collect();
    assert_eq!(
        got,
        [
            Ok(Entry {
                offset: 48,
                affinity: Affinity::Gicc {
                    uid: 9,
                    domain: 5,
                    enabled: true
                }
            }),
            Ok(Entry {
                offset: 66,
                affinity: Affinity::GicIts {
                    its_id: 2,
                    domain: 6
                }
            }),
            Ok(Entry {
                offset: 78,
                affinity: Affinity::GenericInitiator {
                    domain: 7,
                    enabled: false
                }
            }),
        ]
    );
    // A GIC ITS Affinity of 8 bytes is a fault, and the walk goes on.
    let short = structure(4, 8, &[]);
    let got: Vec<_> = entries(&srat(&[short, lapic(1, 2, true)])).collect();
    assert_eq!(
        got[0],
        Err(TableFault::ShortEntry {
            offset: 48,
            kind: 4,
            len: 8,
            need: 12
        })
    );
    assert!(matches!(got[1], Ok(Entry { offset: 56, .. })));
}

#[test]
fn headers_are_checked_for_signature_length_and_checksum() {
    use acpitables::table::check_header;
    let mut t = srat(&[lapic(0, 0, true)]);
    let sum = t.iter().fold(0u8, |s, &b| s.wrapping_add(b));
    t[9] = 0u8.wrapping_sub(sum);
    assert_eq!(check_header(&t, b"SRAT"), Ok(&t[..]));
    assert!(matches!(
        check_header(&t, b"SLIT"),
        Err(TableFault::BadSignature { .. })
    ));
    assert_eq!(
        check_header(&t[..40], b"SRAT"),
        Err(TableFault::BadTableLength {
            stated: t.len() as u32,
            len: 40
        })
    );
    let mut bad = t.clone();
    bad[50] ^= 1;
    assert!(matches!(
        check_header(&bad, b"SRAT"),
        Err(TableFault::BadChecksum { .. })
    ));
    assert_eq!(
        check_header(&t[..20], b"SRAT"),
        Err(TableFault::NoHeader { len: 20, need: 36 })
    );
}
