//! Fuzzing the lscpu reader: random text and mutated real outputs must give a
//! topology or an error, never a panic; what parses must also print.

#[path = "support/cases.rs"]
mod cases;

use std::path::PathBuf;
use std::sync::OnceLock;

use proptest::prelude::*;
use readers::lscpu;

/// util-linux's expected lscpu outputs in the corpus.
const CORPUS_TEXTS: usize = 20;

/// The real lscpu outputs to mutate: the corpus' (when it is here; said
/// loudly once when not) and the ones in tests/data.
fn real_texts() -> &'static [String] {
    static TEXTS: OnceLock<Vec<String>> = OnceLock::new();
    TEXTS.get_or_init(|| {
        let base = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let corpus = readers::corpus::dir(env!("CARGO_MANIFEST_DIR"));
        let mut dirs = vec![base.join("tests/data")];
        let what = format!(
            "mutating {CORPUS_TEXTS} util-linux expected lscpu outputs (tests/data's are still mutated)"
        );
        if readers::corpus::present(&corpus, &what) {
            dirs.push(corpus.join("util-linux/tests/expected/lscpu"));
        }
        let mut texts = Vec::new();
        for dir in dirs {
            let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .map(|e| e.unwrap().path())
                .filter(|p| p.file_name().unwrap().to_string_lossy().contains("lscpu"))
                .collect();
            paths.sort();
            for p in paths {
                texts.push(std::fs::read_to_string(p).unwrap());
            }
        }
        assert!(texts.len() >= 4, "tests/data has 4 lscpu outputs");
        texts
    })
}

/// Parses and, on success, prints and re-parses: nothing may panic.
fn exercise(text: &str) {
    if let Ok(t) = lscpu::parse(text, "fuzz") {
        let out = lscpu::summary(&t);
        let _ = lscpu::parse(&out, "fuzz-again");
    }
}

#[derive(Debug, Clone)]
enum Mutation {
    DeleteLine(usize),
    DuplicateLine(usize),
    ReplaceValue(usize, String),
    ReplaceChar(usize, char),
    Truncate(usize),
    SwapLines(usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let value = prop_oneof![
        "[0-9]{1,6}",
        "[0-9]{1,4}-[0-9]{1,4}(:[0-9]{1,2})?(,[0-9]{1,5})*",
        "[0-9.]{1,5} ?[KMG]?(iB)? ?(\\([0-9]{1,4} instances?\\))?",
        "[-a-z ,:()#]{0,12}",
        Just(String::from("-")),
        Just(String::from("18446744073709551615")),
        Just(String::from("4294967295")),
        Just(String::from("0-16383")),
    ];
    prop_oneof![
        any::<usize>().prop_map(Mutation::DeleteLine),
        any::<usize>().prop_map(Mutation::DuplicateLine),
        (any::<usize>(), value).prop_map(|(i, v)| Mutation::ReplaceValue(i, v)),
        (any::<usize>(), any::<char>()).prop_map(|(i, c)| Mutation::ReplaceChar(i, c)),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
    ]
}

fn apply(text: &str, m: &Mutation) -> String {
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    if lines.is_empty() {
        return String::new();
    }
    let n = lines.len();
    match m {
        Mutation::DeleteLine(i) => {
            lines.remove(i % n);
        }
        Mutation::DuplicateLine(i) => {
            let l = lines[i % n].clone();
            lines.insert(i % n, l);
        }
        Mutation::ReplaceValue(i, v) => {
            let l = &mut lines[i % n];
            if let Some((label, _)) = l.split_once(':') {
                *l = format!("{label}: {v}");
            } else if let Some((first, _)) = l.split_once(',') {
                *l = format!("{first},{v}");
            }
        }
        Mutation::ReplaceChar(i, c) => {
            let l = &mut lines[i % n];
            let chars: Vec<char> = l.chars().collect();
            if !chars.is_empty() {
                let at = i % chars.len();
                *l = chars[..at]
                    .iter()
                    .chain(std::iter::once(c))
                    .chain(&chars[at + 1..])
                    .collect();
            }
        }
        Mutation::Truncate(i) => lines.truncate(i % n),
        Mutation::SwapLines(a, b) => lines.swap(a % n, b % n),
    }
    lines.join("\n")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases::fuzz_cases(256)))]

    #[test]
    fn random_text_never_panics(text in "\\PC{0,400}") {
        exercise(&text);
    }

    #[test]
    fn label_shaped_noise_never_panics(
        lines in prop::collection::vec(
            (prop_oneof![
                Just("CPU(s)"), Just("On-line CPU(s) list"), Just("Off-line CPU(s) list"),
                Just("Thread(s) per core"), Just("Core(s) per socket"), Just("Socket(s)"),
                Just("Core(s) per cluster"), Just("Cluster(s)"), Just("Book(s)"),
                Just("Socket(s) per book"), Just("Drawer(s)"), Just("NUMA node(s)"),
                Just("NUMA node0 CPU(s)"), Just("NUMA node7 CPU(s)"), Just("Model name"),
                Just("L1d cache"), Just("L2 cache"), Just("L3"), Just("Architecture"),
                Just("# CPU,Core,Socket,Node,,L1d"),
            ], "[0-9a-z ,:()\\-]{0,20}"),
            0..24,
        )
    ) {
        let text: String = lines.iter().map(|(l, v)| format!("{l}: {v}\n")).collect();
        exercise(&text);
    }

    #[test]
    fn mutated_real_outputs_never_panic(
        pick in any::<prop::sample::Index>(),
        mutations in prop::collection::vec(mutation(), 1..6),
    ) {
        let mut text = pick.get(real_texts()).clone();
        for m in &mutations {
            text = apply(&text, m);
        }
        exercise(&text);
    }
}
