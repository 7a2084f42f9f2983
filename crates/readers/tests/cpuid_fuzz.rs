//! Fuzzing the CPUID-dump reader: random text, and real dumps with lines
//! dropped, cut or given random register values, must give a topology or
//! an error, never a panic or a hang. Random register values reach every
//! decoder behind the reader (APIC-id shifts of 31, sharing counts of 4096,
//! families past 0xff, leaves that never end).

#[path = "support/cases.rs"]
mod cases;

use std::sync::OnceLock;

use proptest::prelude::*;
use readers::cpuid;

/// A two-thread Intel dump written for this test (leaf 0, 1, 4, 0xB):
/// used when the corpus is absent, and mutated beside the corpus' dumps.
const SMALL: &str = "# mask e[abcd]x => e[abcd]x
1 0 0 0 0 => d 756e6547 6c65746e 49656e69
1 1 0 0 0 => 306e4 200800 7fbee3ff bfebfbff
5 4 0 0 0 => 4004121 1c0003f 3f 0
5 4 0 1 0 => 4004122 1c0003f 3f 0
5 4 0 2 0 => 4004143 1c0003f 1ff 0
5 4 0 3 0 => 4004163 3c0003f 3fff 6
5 4 0 4 0 => 0 0 0 0
5 b 0 0 0 => 1 2 100 0
5 b 0 1 0 => 5 10 201 0
5 b 0 2 0 => 0 0 2 0
1 80000000 0 0 0 => 80000008 0 0 0
1 80000001 0 0 0 => 0 0 1 2c100800
";

/// pu0 and pu1 of [`SMALL`]: the second with APIC id 1.
fn small_dump() -> Vec<String> {
    vec![
        SMALL.to_string(),
        SMALL
            .replace("1 1 0 0 0 => 306e4 200800", "1 1 0 0 0 => 306e4 1200800")
            .replace("5 b 0 0 0 => 1 2 100 0", "5 b 0 0 0 => 1 2 100 1")
            .replace("5 b 0 1 0 => 5 10 201 0", "5 b 0 1 0 => 5 10 201 1"),
    ]
}

/// Dumps to mutate: the small one, and the first four PUs of a few corpus
/// dumps (Intel leaf 0xB, AMD TOPOEXT, AMD legacy, hybrid) when it is here.
fn dumps() -> &'static [Vec<String>] {
    static DUMPS: OnceLock<Vec<Vec<String>>> = OnceLock::new();
    DUMPS.get_or_init(|| {
        let mut out = vec![small_dump()];
        let corpus = readers::corpus::dir(env!("CARGO_MANIFEST_DIR"));
        if !readers::corpus::present(&corpus, "mutating 4 corpus CPUID dumps") {
            return out;
        }
        for name in [
            "Intel-Skylake-2xXeon6140",
            "AMD-19h-Zen3-2xEpyc-7763",
            "AMD-K10-Istanbul-8xOpteron-8439SE",
            "Intel-RaptorLake-Corei7-1370P",
        ] {
            let path = corpus.join(format!("hwloc/tests/hwloc/x86/{name}.tar.bz2"));
            let texts = cpuid::pu_texts(&path).unwrap_or_else(|e| panic!("{e}"));
            let pus: Vec<String> = texts.into_iter().take(4).map(|(_, t)| t).collect();
            assert_eq!(pus.len(), 4, "{name}: pu0..pu3");
            out.push(pus);
        }
        out
    })
}

/// Reads the files; nothing may panic, and an error names a file.
fn exercise(pus: &[String]) {
    let files = pus
        .iter()
        .enumerate()
        .map(|(n, text)| (format!("pu{n}"), text.clone().into_bytes()));
    if let Err(e) = cpuid::read_files(files, "fuzz") {
        assert!(e.source.starts_with("fuzz"), "{e}");
    }
}

#[derive(Debug, Clone)]
enum Mutation {
    /// Line, word (0..9 skipping "=>"), new value.
    Word(usize, usize, u32),
    DeleteLine(usize),
    Truncate(usize),
    DuplicateLine(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<usize>(), 0..10usize, prop_oneof![any::<u32>(), 0..64u32, Just(u32::MAX)])
            .prop_map(|(l, w, v)| Mutation::Word(l, w, v)),
        1 => any::<usize>().prop_map(Mutation::DeleteLine),
        1 => any::<usize>().prop_map(Mutation::Truncate),
        1 => any::<usize>().prop_map(Mutation::DuplicateLine),
    ]
}

fn mutate(text: &str, m: &Mutation) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if lines.is_empty() {
        return String::new();
    }
    let n = lines.len();
    match m {
        Mutation::Word(l, w, v) => {
            let mut words: Vec<String> = lines[l % n].split(' ').map(str::to_string).collect();
            if let Some(word) = words.get_mut(*w).filter(|w| *w != "=>") {
                *word = format!("{v:x}");
            }
            lines[l % n] = words.join(" ");
        }
        Mutation::DeleteLine(l) => {
            lines.remove(l % n);
        }
        Mutation::Truncate(at) => {
            let joined = lines.join("\n");
            let mut cut = at % (joined.len() + 1);
            while !joined.is_char_boundary(cut) {
                cut -= 1;
            }
            return joined[..cut].to_string();
        }
        Mutation::DuplicateLine(l) => {
            let line = lines[l % n].clone();
            lines.insert(l % n, line);
        }
    }
    lines.join("\n") + "\n"
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases::fuzz_cases(512)))]

    #[test]
    fn mutated_dumps_never_panic(
        which in any::<usize>(),
        pu in any::<usize>(),
        ms in prop::collection::vec(mutation(), 1..8),
    ) {
        let all = dumps();
        let mut pus = all[which % all.len()].clone();
        let at = pu % pus.len();
        for m in &ms {
            pus[at] = mutate(&pus[at], m);
        }
        exercise(&pus);
    }

    #[test]
    fn random_text_never_panics(texts in prop::collection::vec(".{0,200}", 1..4)) {
        exercise(&texts);
    }

    #[test]
    fn random_records_never_panic(
        records in prop::collection::vec(
            (0..16u32, prop_oneof![0..0x20u32, 0x8000_0000..0x8000_0030u32, any::<u32>()],
             0..8u32, any::<[u32; 4]>()),
            0..64,
        ),
    ) {
        let text: String = records
            .iter()
            .map(|(mask, leaf, sub, [a, b, c, d])| {
                format!("{:x} {leaf:x} 0 {sub:x} 0 => {a:x} {b:x} {c:x} {d:x}\n", mask | 1)
            })
            .collect();
        exercise(&[text]);
    }
}

/// The dumps mutated above read as they are, so the mutations start from
/// valid input.
#[test]
fn unmutated_dumps_read() {
    for pus in dumps() {
        let files = pus
            .iter()
            .enumerate()
            .map(|(n, text)| (format!("pu{n}"), text.clone().into_bytes()));
        let t = cpuid::read_files(files, "fuzz").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(t.online().weight(), pus.len());
    }
}
