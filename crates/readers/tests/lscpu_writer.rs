//! The summary writer against lscpu itself: util-linux's test dumps are read
//! with the sysfs reader (independent of lscpu's text) and our summary lines
//! must equal the lines lscpu printed for the same dump, field for field.
//! A second test builds topologies from the `--parse` CSV only and checks the
//! count lines, so the writer is tested even where sysfs cannot read a dump.

use std::collections::BTreeMap;
use std::path::PathBuf;

use readers::{lscpu, sysfs};

fn util_linux() -> PathBuf {
    readers::corpus::dir(env!("CARGO_MANIFEST_DIR")).join("util-linux")
}

/// util-linux's lscpu test dumps in the corpus.
const DUMPS: usize = 20;

/// util-linux's expected lscpu outputs in the corpus (current and history).
const EXPECTED: usize = 35;

/// Whether the corpus is here; says loudly what `test` skips when it is not.
fn have_corpus(what: &str) -> bool {
    readers::corpus::present(&readers::corpus::dir(env!("CARGO_MANIFEST_DIR")), what)
}

/// (label, value) pairs of the summary part (before the first blank line),
/// and the column where values start.
fn expected_summary(text: &str) -> (Vec<(String, String)>, usize) {
    let mut pairs = Vec::new();
    let mut column = 0;
    for line in text.lines().take_while(|l| !l.is_empty()) {
        let (label, value) = line.split_once(':').unwrap();
        let value_at = line.len() - line[label.len() + 1..].trim_start().len();
        column = column.max(value_at);
        pairs.push((format!("{label}:"), value.trim().to_string()));
    }
    (pairs, column)
}

/// Labels our writer prints that depend on facts outside the dump's sysfs
/// topology (architecture) are not compared.
fn compared_label(label: &str) -> bool {
    label != "Architecture:"
}

#[test]
fn summary_lines_equal_lscpu_on_util_linux_dumps() {
    if !have_corpus(&format!("lscpu summaries of {DUMPS} util-linux dumps")) {
        return;
    }
    let dumps = util_linux().join("tests/ts/lscpu/dumps");
    let mut names: Vec<String> = std::fs::read_dir(&dumps)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(".tar.gz"))
        .collect();
    names.sort();
    assert_eq!(names.len(), DUMPS, "util-linux lscpu dumps");
    let (mut files, mut lines) = (0, 0);
    let mut skipped = Vec::new();
    for file in names {
        let name = file.trim_end_matches(".tar.gz");
        let expected_path = util_linux().join(format!("tests/expected/lscpu/lscpu-{name}"));
        let Ok(text) = std::fs::read_to_string(&expected_path) else {
            skipped.push(format!("{name}: no expected output in the corpus"));
            continue;
        };
        let topo = match sysfs::read_path(&dumps.join(&file)) {
            Ok(t) => t,
            Err(e) => {
                skipped.push(format!("{name}: sysfs reader: {e}"));
                continue;
            }
        };
        let (expected, column) = expected_summary(&text);
        let mut by_label: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (l, v) in &expected {
            by_label.entry(l.as_str()).or_default().push(v.as_str());
        }
        let ours = lscpu::summary_fields(&topo);
        let mut compared_here = 0;
        let mut compared_labels: Vec<&str> = Vec::new();
        for (label, value) in &ours {
            // lscpu decodes arm model names from part numbers; the model
            // keeps only what the dump states.
            // s390 takes its per-socket counts from /proc/sysinfo's
            // configured topology, not from the CPUs' sysfs siblings.
            let sysinfo = by_label.contains_key("Socket(s) per book:");
            if !compared_label(label)
                || (label == "Model name:" && value == "-")
                || (sysinfo && label == "Core(s) per socket:")
                // lscpu names both the hypervisor ("PR/SM") and its vendor
                // ("IBM") there; the model holds one of them.
                || (label == "Hypervisor vendor:" && by_label.contains_key("Hypervisor:"))
            {
                continue;
            }
            match by_label.get(label.as_str()).map(Vec::as_slice) {
                // Hybrid machines print one block per CPU type; the model has
                // one model name and one set of counts.
                Some([only]) => {
                    if label == "Model name:" {
                        // The sysfs reader collapses runs of spaces in
                        // cpuinfo's model name ("UltraSparc II  (BlackBird)").
                        let squeeze = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
                        assert_eq!(squeeze(value), squeeze(only), "{name}: {label}");
                        continue;
                    }
                    assert_eq!(value, only, "{name}: {label}");
                    compared_here += 1;
                    compared_labels.push(label);
                }
                Some(_) => {}
                None => {
                    // We print a field lscpu did not: only allowed for
                    // fields lscpu derives from sources outside sysfs.
                    // s390 prints books instead of sockets; the model has no books.
                    let books = by_label.contains_key("Socket(s) per book:");
                    assert!(
                        label == "Model name:"
                            || label.ends_with(" cache:")
                            || (books && label == "Socket(s):"),
                        "{name}: we print '{label} {value}', lscpu does not"
                    );
                }
            }
        }
        // Layout: when our longest label is lscpu's longest, lines match
        // byte for byte, padding included.
        let ours_text = lscpu::summary(&topo);
        let our_column = ours.iter().map(|(l, _)| l.len()).max().unwrap() + 1;
        if our_column == column {
            let expected_lines: Vec<&str> = text.lines().collect();
            for line in ours_text.lines() {
                let label = line.split_once(':').unwrap().0;
                if compared_labels.contains(&format!("{label}:").as_str()) {
                    assert!(
                        expected_lines.contains(&line),
                        "{name}: line '{line}' not printed by lscpu"
                    );
                }
            }
        }
        let hybrid = by_label.get("Model name:").map_or(0, Vec::len) > 1;
        let at_least = if hybrid { 2 } else { 3 };
        assert!(
            compared_here >= at_least,
            "{name}: only {compared_here} lines compared"
        );
        files += 1;
        lines += compared_here;
    }
    eprintln!(
        "compared {lines} lines in {files} dumps; skipped {}:",
        skipped.len()
    );
    for s in &skipped {
        eprintln!("  skip {s}");
    }
    assert!(files >= 15, "only {files} dumps compared");
}

#[test]
fn count_lines_from_parsable_rows_equal_the_summary() {
    if !have_corpus(&format!(
        "count lines of {EXPECTED} util-linux expected outputs"
    )) {
        return;
    }
    let mut paths = Vec::new();
    for dir in [
        "tests/expected/lscpu",
        "history/0517fbf35-parent/tests/expected/lscpu",
    ] {
        for entry in std::fs::read_dir(util_linux().join(dir)).unwrap() {
            paths.push(entry.unwrap().path());
        }
    }
    assert_eq!(paths.len(), EXPECTED, "util-linux expected lscpu outputs");
    let mut checked = 0;
    for path in paths {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let (expected, _) = expected_summary(&text);
        if expected.iter().filter(|(l, _)| l == "Model name:").count() > 1
            || expected
                .iter()
                .any(|(l, _)| l.contains("Book") || l.contains("Drawer"))
        {
            continue; // per-type or /proc/sysinfo counts: not derivable from rows
        }
        // Only the first parsable block, with its header.
        let csv: String = text
            .lines()
            .skip_while(|l| !l.starts_with("# CPU,"))
            .take_while(|l| !l.is_empty())
            .map(|l| format!("{l}\n"))
            .collect();
        let topo = lscpu::parse(&csv, &name).unwrap_or_else(|e| panic!("{e}"));
        let ours = lscpu::summary_fields(&topo);
        for label in ["On-line CPU(s) list:", "Thread(s) per core:", "Socket(s):"] {
            let theirs = expected.iter().find(|(l, _)| l == label);
            let mine = ours.iter().find(|(l, _)| l == label);
            if let (Some((_, t)), Some((_, m))) = (theirs, mine) {
                if label == "Socket(s):" && text.contains(",-,") {
                    continue; // socket ids unknown in the rows
                }
                assert_eq!(m, t, "{name}: {label}");
            }
        }
        checked += 1;
    }
    assert!(checked >= 25, "{checked}");
}
