//! Proptest fuzz of the kernel's pure parsers (compiled straight from
//! kernel/src, as in kernel_parsers.rs): the command line and the SRAT/SLIT
//! byte parsers never panic on random input, and input built to the format
//! (the documented options, ACPI 6.5 §5.2.16/§5.2.17 layouts written here
//! byte by byte) parses to exactly what was written.

extern crate alloc;

#[path = "../../../kernel/src/cmdline.rs"]
#[allow(dead_code)]
mod cmdline;
#[path = "../../../kernel/src/srat.rs"]
mod srat;

use cmdline::{Bringup, Calibrate, Fault};
use proptest::prelude::*;
use srat::{parse_slit, parse_srat, SratCpu, SratMem};

/// One command-line word and what it should do.
#[derive(Clone, Debug)]
enum Word {
    Bringup(Bringup),
    Calibrate(Calibrate),
    X2apic(bool),
    Lpj(u64),
    InitDelay(u64),
    SipiDelay(u64),
    Callin(u64),
    Ghost(u32),
    PercpuDump,
    TopoDump,
    SchedDomains(bool),
    FaultMemKib(u64),
    FaultMemNode(u32),
    Fault(Fault),
    /// A word the kernel must report as bad and otherwise ignore.
    Bad(String),
}

fn word() -> impl Strategy<Value = Word> {
    let bad = prop_oneof![
        // Unknown keys (none of the real ones: they all contain '_' or are
        // bringup/calibrate/x2apic/lpj/fault, which `[a-z]{1,5}z` can't be).
        "[a-z]{1,5}z(=[a-z0-9]{0,4})?",
        Just("lpj=0".to_string()),
        "lpj=-[0-9]{1,3}",
        "bringup=(fast|Serial|)",
        "calibrate=(on|off|)",
        "x2apic=(yes|1|)",
        "sched_domains=(yes|)",
        "init_delay_us=(x|-1|18446744073709551616)",
        "ghost_apic=(4294967296|-1|)",
        "fault=(oops|)",
    ];
    prop_oneof![
        prop_oneof![
            Just(Bringup::Serial),
            Just(Bringup::Parallel),
            Just(Bringup::Broadcast)
        ]
        .prop_map(Word::Bringup),
        prop_oneof![
            Just(Calibrate::Serial),
            Just(Calibrate::Parallel),
            Just(Calibrate::Skip)
        ]
        .prop_map(Word::Calibrate),
        any::<bool>().prop_map(Word::X2apic),
        (1u64..).prop_map(Word::Lpj),
        any::<u64>().prop_map(Word::InitDelay),
        any::<u64>().prop_map(Word::SipiDelay),
        any::<u64>().prop_map(Word::Callin),
        any::<u32>().prop_map(Word::Ghost),
        Just(Word::PercpuDump),
        Just(Word::TopoDump),
        any::<bool>().prop_map(Word::SchedDomains),
        any::<u64>().prop_map(Word::FaultMemKib),
        any::<u32>().prop_map(Word::FaultMemNode),
        prop_oneof![Just(Fault::Panic), Just(Fault::InvalidOpcode)].prop_map(Word::Fault),
        bad.prop_map(Word::Bad),
    ]
}

fn on_off(b: bool) -> &'static str {
    if b {
        "on"
    } else {
        "off"
    }
}

fn text_of(w: &Word) -> String {
    match w {
        Word::Bringup(b) => format!("bringup={}", format!("{b:?}").to_lowercase()),
        Word::Calibrate(c) => format!("calibrate={}", format!("{c:?}").to_lowercase()),
        Word::X2apic(b) => format!("x2apic={}", on_off(*b)),
        Word::Lpj(v) => format!("lpj={v}"),
        Word::InitDelay(v) => format!("init_delay_us={v}"),
        Word::SipiDelay(v) => format!("sipi_delay_us={v}"),
        Word::Callin(v) => format!("callin_timeout_ms={v}"),
        Word::Ghost(v) => format!("ghost_apic={v}"),
        Word::PercpuDump => "percpu_dump".into(),
        Word::TopoDump => "topo_dump".into(),
        Word::SchedDomains(b) => format!("sched_domains={}", on_off(*b)),
        Word::FaultMemKib(v) => format!("fault_mem_kib={v}"),
        Word::FaultMemNode(v) => format!("fault_mem_node={v}"),
        Word::Fault(Fault::Panic) => "fault=panic".into(),
        Word::Fault(Fault::InvalidOpcode) => "fault=ud2".into(),
        Word::Bad(s) => s.clone(),
    }
}

/// Option values as a comparable tuple (`Options` has no `PartialEq`).
type Fields = (
    Bringup,
    Calibrate,
    Option<u64>,
    (u64, u64, u64),
    Option<bool>,
    Option<u32>,
    (bool, bool, bool),
    (Option<u64>, Option<u32>, Option<Fault>),
);

fn fields(o: &cmdline::Options) -> Fields {
    (
        o.bringup,
        o.calibrate,
        o.lpj,
        (o.init_delay_us, o.sipi_delay_us, o.callin_timeout_ms),
        o.x2apic,
        o.ghost_apic,
        (o.percpu_dump, o.topo_dump, o.sched_domains),
        (o.fault_mem_kib, o.fault_mem_node, o.fault),
    )
}

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
    /// A structure kind the parser skips (GICC, GIC ITS, ...), by its length.
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
        (3u8..=255, 2u8..=64).prop_map(|(kind, len)| Entry::Other { kind, len }),
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
    let (mut cpus, mut mem) = (Vec::new(), Vec::new());
    parse_srat(bytes, &mut cpus, &mut mem);
    (cpus, mem)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_command_lines_never_panic(text in "\\PC{0,80}") {
        let mut bad = Vec::new();
        let _ = cmdline::parse(&text, |w| bad.push(w.0));
        // Every reported word is a whole word of the text.
        for w in bad {
            prop_assert!(text.split_ascii_whitespace().any(|t| t == w));
        }
    }

    /// Known words take effect (the last of a kind wins), bad ones are
    /// reported in order and change nothing.
    #[test]
    fn command_lines_parse_to_their_words(
        words in prop::collection::vec(word(), 0..12),
        sep in "[ \t\n]{1,3}",
    ) {
        let text: Vec<String> = words.iter().map(text_of).collect();
        let text = text.join(&sep);
        let mut bad = Vec::new();
        let got = cmdline::parse(&text, |w| bad.push(w.0.to_string()));

        let mut want = cmdline::Options::default();
        let mut want_bad = Vec::new();
        for w in &words {
            match w {
                Word::Bringup(b) => want.bringup = *b,
                Word::Calibrate(c) => want.calibrate = *c,
                Word::X2apic(b) => want.x2apic = Some(*b),
                Word::Lpj(v) => want.lpj = Some(*v),
                Word::InitDelay(v) => want.init_delay_us = *v,
                Word::SipiDelay(v) => want.sipi_delay_us = *v,
                Word::Callin(v) => want.callin_timeout_ms = *v,
                Word::Ghost(v) => want.ghost_apic = Some(*v),
                Word::PercpuDump => want.percpu_dump = true,
                Word::TopoDump => want.topo_dump = true,
                Word::SchedDomains(b) => want.sched_domains = *b,
                Word::FaultMemKib(v) => want.fault_mem_kib = Some(*v),
                Word::FaultMemNode(v) => want.fault_mem_node = Some(*v),
                Word::Fault(f) => want.fault = Some(*f),
                Word::Bad(s) => want_bad.push(s.clone()),
            }
        }
        prop_assert_eq!(fields(&got), fields(&want));
        prop_assert_eq!(bad, want_bad);
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let _ = srat_of(&bytes);
        if let Some((n, m)) = parse_slit(&bytes) {
            prop_assert!((1..=256).contains(&n));
            prop_assert_eq!(m.len(), n * n);
        }
    }

    /// A table written to the spec parses to its enabled entries; every
    /// truncation parses to the entries that fit whole; corrupting any byte
    /// of it never panics.
    #[test]
    fn srat_tables_parse_to_their_entries(
        entries in prop::collection::vec(entry(), 0..10),
        cut in any::<prop::sample::Index>(),
        corrupt in (any::<prop::sample::Index>(), any::<u8>()),
    ) {
        let (t, ends) = table(&entries);
        prop_assert_eq!(srat_of(&t), expected(&entries));

        let cut = cut.index(t.len() + 1);
        let whole = ends.iter().take_while(|&&end| end <= cut).count();
        prop_assert_eq!(srat_of(&t[..cut]), expected(&entries[..whole]));

        let mut bad = t.clone();
        let i = corrupt.0.index(bad.len());
        bad[i] = corrupt.1;
        let _ = srat_of(&bad);
    }

    /// A SLIT of n localities gives n and its matrix; short or oversized
    /// ones give None.
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
        prop_assert_eq!(parse_slit(&t), Some((n, matrix.to_vec())));
        let cut = cut.index(44 + n * n);
        prop_assert_eq!(parse_slit(&t[..cut]), None);
        for bogus in [0u64, 257, u64::MAX, (n * n + 64) as u64] {
            let mut b = t.clone();
            b[36..44].copy_from_slice(&bogus.to_le_bytes());
            let parsed = parse_slit(&b);
            // A count that still fits the bytes we have is a valid table.
            let fits = (1..=256).contains(&bogus) && 44 + (bogus * bogus) as usize <= b.len();
            prop_assert_eq!(parsed.is_some(), fits, "count {}", bogus);
        }
    }
}
