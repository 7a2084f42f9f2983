//! `lscpu -J` and `lscpu -J -e`: JSON read as the text lscpu prints for the
//! same machine.
//!
//! - Real outputs: util-linux 2.38.1's `lscpu -J --sysroot DUMP` followed by
//!   `lscpu -J -e --sysroot DUMP` for util-linux's own test dumps
//!   (tests/data/ul2381-*.lscpu.json), checked against util-linux's expected
//!   text output for the same dump in the corpus.
//! - Property: any lscpu text (the corpus' expected outputs and tests/data's),
//!   written as lscpu writes it as JSON (flat, or nested by its indentation as
//!   util-linux 2.37+ does; values as strings as before 2.37, or as numbers,
//!   booleans and null), reads to the same topology as the text, or is
//!   refused as the text is.
//! - Errors name the JSON line of the field they are about.

use std::path::PathBuf;
use std::sync::OnceLock;

use proptest::prelude::*;
use readers::lscpu;
use topology::Topology;

fn data(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// What a reading says of the machine, without where it was read from.
fn facts(t: &Topology) -> String {
    format!(
        "{:?}\n{:?} {:?} {:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}",
        t.arch(),
        t.possible(),
        t.present(),
        t.online(),
        t.cpus(),
        t.levels(),
        t.nodes(),
        t.caches(),
        t.core_kinds()
    )
}

/// util-linux's expected `lscpu` output for `dump`, when the corpus is here.
fn expected(dump: &str) -> Option<String> {
    let corpus = readers::corpus::dir(env!("CARGO_MANIFEST_DIR"));
    let what = "comparing util-linux 2.38.1's lscpu -J of 3 util-linux test dumps with util-linux's expected text";
    if !readers::corpus::present(&corpus, what) {
        return None;
    }
    let path = corpus
        .join("util-linux/tests/expected/lscpu")
        .join(format!("lscpu-{dump}"));
    Some(std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
}

const DUMPS: [&str; 3] = ["x86_64-64cpu", "ppc64-POWER7", "s390-lpar-drawer"];

#[test]
fn real_lscpu_json_reads_as_util_linux_expected_text() {
    for dump in DUMPS {
        let json = data(&format!("ul2381-{dump}.lscpu.json"));
        let from_json = lscpu::parse(&json, dump).unwrap_or_else(|e| panic!("{e}"));
        let Some(text) = expected(dump) else { return };
        let from_text = lscpu::parse(&text, dump).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(facts(&from_json), facts(&from_text), "{dump}");
    }
}

#[test]
fn the_json_table_alone_places_cpus_as_the_expected_text() {
    for dump in DUMPS {
        let json = data(&format!("ul2381-{dump}.lscpu.json"));
        // The second JSON document is `lscpu -J -e`'s.
        let table = &json[json.find("{\n   \"cpus\"").unwrap()..];
        let from_json = lscpu::parse(table, dump).unwrap_or_else(|e| panic!("{e}"));
        let Some(text) = expected(dump) else { return };
        let from_text = lscpu::parse(&text, dump).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(from_json.online(), from_text.online(), "{dump}");
        assert_eq!(from_json.present(), from_text.present(), "{dump}");
        assert_eq!(
            format!("{:?}", from_json.levels()),
            format!("{:?}", from_text.levels()),
            "{dump}"
        );
        for cpu in from_text.online().iter() {
            assert_eq!(
                from_json.node_of(cpu).map(|n| n.id),
                from_text.node_of(cpu).map(|n| n.id),
                "{dump}: CPU {cpu}"
            );
        }
    }
}

#[test]
fn errors_name_the_json_line_of_the_field() {
    let json = data("ul2381-x86_64-64cpu.lscpu.json");
    let bad = json.replacen(
        "\"field\": \"Socket(s):\",\n         \"data\": \"4\"",
        "\"field\": \"Socket(s):\",\n         \"data\": \"four\"",
        1,
    );
    assert_ne!(bad, json, "mutation applied");
    let e = lscpu::parse(&bad, "x.json").unwrap_err();
    let line = 1 + bad[..bad.find("\"field\": \"Socket(s):\"").unwrap()]
        .matches('\n')
        .count();
    assert_eq!(e.line, Some(line), "{e}");
    assert!(e.message.contains("'four'"), "{e}");

    let e = lscpu::parse(
        "{\"lscpu\": [ {\"field\": \"CPU(s):\", \"data\": [1]} ] }",
        "x.json",
    )
    .unwrap_err();
    assert!(e.message.contains("the data of CPU(s):"), "{e}");
    for broken in [
        "{",
        "{\"lscpu\": 3}",
        "{\"other\": []}",
        "[1, 2]",
        "{\"cpus\": [ {\"online\": true} ]}",
    ] {
        let e = lscpu::parse(broken, "x.json").unwrap_err();
        assert_eq!(e.source, "x.json", "{broken}: {e}");
    }
}

/// Every real lscpu text at hand: the corpus' expected outputs (when the
/// corpus is here) and tests/data's.
fn texts() -> &'static [String] {
    static TEXTS: OnceLock<Vec<String>> = OnceLock::new();
    TEXTS.get_or_init(|| {
        let base = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data");
        let mut dirs = vec![base];
        let corpus = readers::corpus::dir(env!("CARGO_MANIFEST_DIR"));
        if readers::corpus::present(
            &corpus,
            "writing 20 util-linux expected lscpu outputs as JSON",
        ) {
            dirs.push(corpus.join("util-linux/tests/expected/lscpu"));
        }
        let mut texts = Vec::new();
        for dir in dirs {
            let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| {
                    let n = p.file_name().unwrap().to_string_lossy();
                    // A `-p` table whose rows lscpu shortened (a CPU in
                    // fewer caches than the header names) has no JSON
                    // form: `lscpu -J` writes only the `-e` table.
                    n.contains("lscpu") && !n.ends_with(".json") && !n.ends_with(".lscpu-p")
                })
                .collect();
            paths.sort();
            texts.extend(paths.iter().map(|p| std::fs::read_to_string(p).unwrap()));
        }
        assert!(texts.len() >= 7, "tests/data has 7 lscpu texts");
        texts
    })
}

fn quote(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

/// How to write a table value: lscpu before 2.37 wrote every value as a
/// string; later ones write numbers, booleans and null.
fn table_value(v: &str, typed: bool) -> String {
    if !typed {
        return quote(v);
    }
    match v {
        "-" | "" => String::from("null"),
        "Y" | "yes" => String::from("true"),
        "N" | "no" => String::from("false"),
        _ if v.parse::<u64>().is_ok() => v.to_string(),
        _ => quote(v),
    }
}

/// The summary's fields as lscpu -J writes them: each field's children are
/// the fields indented below it (util-linux 2.37+), or none (older ones).
fn fields_json(items: &[(usize, String, String)], i: &mut usize, out: &mut String) {
    let depth = items[*i].0;
    let mut first = true;
    while *i < items.len() && items[*i].0 == depth {
        let (_, label, value) = &items[*i];
        *i += 1;
        if !first {
            out.push(',');
        }
        first = false;
        let data = if value.is_empty() {
            String::from("null")
        } else {
            quote(value)
        };
        *out += &format!("\n      {{\"field\": {}, \"data\": {data}", quote(label));
        if *i < items.len() && items[*i].0 > depth {
            *out += ", \"children\": [";
            fields_json(items, i, out);
            *out += "]";
        }
        *out += "}";
    }
}

/// `text` as lscpu -J (and lscpu -J -e for its CPU table) would write it.
fn as_json(text: &str, nested: bool, typed: bool) -> String {
    let mut summary: Vec<(usize, String, String)> = Vec::new();
    let mut header: Option<Vec<String>> = None;
    let mut rows: Vec<Vec<String>> = Vec::new();
    // None: not in a table; Some(true): comma-separated (-p); Some(false): -e.
    let mut table: Option<bool> = None;
    for line in text.lines() {
        let t = line.trim();
        let parsable = t
            .strip_prefix("# ")
            .filter(|h| h.split(',').any(|c| c.trim().eq_ignore_ascii_case("cpu")));
        // `-e`'s header: CPU, then names in capitals or cache names (L1d:L2).
        let extended = (t.split_whitespace().next() == Some("CPU")
            && t.split_whitespace().all(|c| {
                !c.ends_with(':')
                    && (c.contains(':') || c.chars().all(|ch| !ch.is_ascii_lowercase()))
            }))
        .then_some(t);
        if let Some(h) = parsable.or(extended) {
            if header.is_none() {
                let sep = |c: char| {
                    if parsable.is_some() {
                        c == ','
                    } else {
                        c.is_whitespace()
                    }
                };
                header = Some(
                    h.split(sep)
                        .map(|c| c.trim().to_lowercase())
                        .filter(|c| parsable.is_some() || !c.is_empty())
                        .collect(),
                );
                table = Some(parsable.is_some());
            } else {
                table = None;
            }
            continue;
        }
        if t.starts_with('#') || t.is_empty() {
            table = None;
            continue;
        }
        if let Some(comma) = table {
            rows.push(if comma {
                t.split(',').map(|f| f.trim().to_string()).collect()
            } else {
                t.split_whitespace().map(String::from).collect()
            });
            continue;
        }
        if let Some((label, value)) = line.split_once(':') {
            if label.trim().is_empty() || label.contains(',') {
                continue;
            }
            let depth = if nested {
                (label.len() - label.trim_start().len()) / 2
            } else {
                0
            };
            summary.push((
                depth,
                format!("{}:", label.trim()),
                value.trim().to_string(),
            ));
        }
    }
    let mut out = String::new();
    if !summary.is_empty() {
        out += "{\n   \"lscpu\": [";
        let mut i = 0;
        let mut first = true;
        while i < summary.len() {
            if !first {
                out.push(',');
            }
            first = false;
            fields_json(&summary, &mut i, &mut out);
        }
        out += "\n   ]\n}\n";
    }
    if let Some(cols) = header {
        out += "{\n   \"cpus\": [";
        let mut first = true;
        for r in rows.iter().filter(|r| r.len() == cols.len()) {
            out += if first { "\n      {" } else { ",{" };
            first = false;
            let fields: Vec<String> = cols
                .iter()
                .zip(r)
                .filter(|(c, _)| !c.is_empty())
                .map(|(c, v)| format!("\n         {}: {}", quote(c), table_value(v, typed)))
                .collect();
            out += &fields.join(",");
            out += "\n      }";
        }
        out += "\n   ]\n}\n";
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn json_reads_as_the_text_it_was_written_from(
        pick in any::<prop::sample::Index>(),
        nested in any::<bool>(),
        typed in any::<bool>(),
    ) {
        let text = &texts()[pick.index(texts().len())];
        let json = as_json(text, nested, typed);
        serde_json::Deserializer::from_str(&json)
            .into_iter::<serde_json::Value>()
            .for_each(|v| assert!(v.is_ok(), "the generator writes JSON: {json}"));
        let from_text = lscpu::parse(text, "t");
        let from_json = lscpu::parse(&json, "t");
        match (&from_text, &from_json) {
            (Ok(a), Ok(b)) => prop_assert_eq!(facts(a), facts(b), "{}", json),
            (Err(_), Err(_)) => {}
            _ => prop_assert!(false, "text {:?} but JSON {:?}\n{}", from_text.map(|_| ()), from_json.map(|_| ()), json),
        }
    }

    /// Bytes cut, doubled or changed anywhere in real JSON: a topology or one
    /// error naming the source, never a panic.
    #[test]
    fn mutated_json_is_read_or_refused(
        pick in any::<prop::sample::Index>(),
        at in any::<prop::sample::Index>(),
        len in 0usize..40,
        with in "[{}\\[\\],:\"0-9a-z -]{0,8}",
    ) {
        let json = data(&format!("ul2381-{}.lscpu.json", DUMPS[pick.index(DUMPS.len())]));
        let mut cut = at.index(json.len());
        while !json.is_char_boundary(cut) {
            cut -= 1;
        }
        let mut end = (cut + len).min(json.len());
        while !json.is_char_boundary(end) {
            end -= 1;
        }
        let mutated = format!("{}{}{}", &json[..cut], with, &json[end..]);
        if let Err(e) = lscpu::parse(&mutated, "m.json") {
            prop_assert_eq!(&e.source, "m.json");
            if let Some(line) = e.line {
                prop_assert!(line >= 1 && line <= mutated.lines().count().max(1), "{}", e);
            }
        }
    }
}
