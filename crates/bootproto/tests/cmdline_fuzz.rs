//! Proptest fuzz of the kernel command line (`bootproto::cmdline`): it never
//! panics on random text, and a line built from the documented options parses
//! to exactly what was written.

use bootproto::cmdline::{self, Bringup, Calibrate, Fault, KERNEL_CALIBRATE};
use proptest::prelude::*;

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
        // Past MAX_LPJ (69273666): x86 Linux's udelay would wrap.
        "lpj=(69273667|4294967296|18446744073709551615)",
        "bringup=(fast|Serial|)",
        "calibrate=(on|off|once-per-package|lpj=[1-9]|)",
        "x2apic=(yes|1|)",
        "sched_domains=(yes|)",
        "init_delay_us=(x|-1|18446744073709551616)",
        "ghost_apic=(4294967296|-1|)",
        "fault=(oops|)",
    ];
    prop_oneof![
        proptest::sample::select(&Bringup::ALL[..]).prop_map(Word::Bringup),
        proptest::sample::select(&KERNEL_CALIBRATE[..]).prop_map(Word::Calibrate),
        any::<bool>().prop_map(Word::X2apic),
        (1u64..=bootproto::strategy::MAX_LPJ).prop_map(Word::Lpj),
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
        Word::Bringup(b) => format!("bringup={b}"),
        Word::Calibrate(c) => format!("calibrate={c}"),
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
}
