//! Truth tests against util-linux's own expected lscpu outputs: each file holds
//! lscpu's summary followed by `--parse` (and, in newer files, `--parse
//! --physical`) for the same machine. The CSV part is independent truth for
//! what the summary part, read alone, must imply.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use readers::lscpu;
use topology::LevelKind;

fn corpus() -> PathBuf {
    readers::corpus::dir(env!("CARGO_MANIFEST_DIR"))
}

/// util-linux's expected lscpu outputs in the corpus: current and the ones
/// util-linux removed in 2014.
const FILES: usize = 35;

/// Every expected lscpu output, or None (said loudly) without the corpus.
fn expected_files(test: &str) -> Option<Vec<PathBuf>> {
    let what = format!("{test}: {FILES} util-linux expected lscpu outputs");
    if !readers::corpus::present(&corpus(), &what) {
        return None;
    }
    let corpus = corpus().join("util-linux");
    let mut files = Vec::new();
    for dir in [
        corpus.join("tests/expected/lscpu"),
        corpus.join("history/0517fbf35-parent/tests/expected/lscpu"),
    ] {
        let mut here: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        here.sort();
        files.extend(here);
    }
    assert_eq!(files.len(), FILES, "util-linux expected lscpu outputs");
    Some(files)
}

/// The CSV rows of the first `# CPU,...` block, as column name → value maps.
fn first_csv(text: &str) -> Vec<BTreeMap<String, String>> {
    let mut lines = text.lines().skip_while(|l| !l.starts_with("# CPU,"));
    let header: Vec<String> = lines
        .next()
        .expect("no CSV header")
        .trim_start_matches("# ")
        .split(',')
        .map(String::from)
        .collect();
    lines
        .take_while(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            header
                .iter()
                .cloned()
                .zip(l.split(',').map(String::from))
                .collect()
        })
        .collect()
}

/// The summary: everything before the first blank line.
fn summary_part(text: &str) -> String {
    text.lines()
        .take_while(|l| !l.is_empty())
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Why a file's summary cannot be checked against its CSV, if it cannot.
fn skip_reason(summary: &str) -> Option<&'static str> {
    let field = |label: &str| -> u64 {
        summary
            .lines()
            .find_map(|l| l.strip_prefix(label))
            .map_or(1, |v| v.trim().parse().unwrap_or(1))
    };
    let configured = field("Thread(s) per core:")
        * field("Core(s) per socket:")
        * field("Socket(s) per book:")
        * field("Book(s):")
        * field("Book(s) per drawer:")
        * field("Drawer(s):");
    if (summary.contains("Book(s)") || summary.contains("Drawer(s)"))
        && configured != field("CPU(s):")
    {
        // /proc/sysinfo's "CPU Topology SW" counts describe the configured
        // machine, not the CPUs lscpu lists.
        return Some("s390 book/drawer counts come from /proc/sysinfo, not the CPUs present");
    }
    if summary.matches("Model name:").count() > 1 {
        return Some("hybrid: lscpu -p numbers cores per CPU type, so its Core column cannot say which CPUs share a core");
    }
    if summary.contains("Off-line CPU(s)") {
        return Some("off-line CPUs: lscpu's counts cover on-line CPUs only, placement unknowable");
    }
    None
}

#[test]
fn summary_counts_equal_the_parsable_truth() {
    let Some(files) = expected_files("summary counts against --parse") else {
        return;
    };
    let mut checked = 0;
    let mut skipped = Vec::new();
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let summary = summary_part(&text);
        if let Some(why) = skip_reason(&summary) {
            skipped.push(format!("{name}: {why}"));
            continue;
        }
        let rows = first_csv(&text);
        let topo = lscpu::parse(&summary, &name).unwrap_or_else(|e| panic!("{e}"));
        let c = lscpu::counts(&topo);

        let cpus: BTreeSet<usize> = rows.iter().map(|r| r["CPU"].parse().unwrap()).collect();
        let online: BTreeSet<usize> = c.online.iter().collect();
        assert_eq!(online, cpus, "{name}: on-line CPUs");

        // Old lscpu leaves Core/Socket empty when sysfs had no topology.
        let mut per_core: BTreeMap<&str, usize> = BTreeMap::new();
        for r in &rows {
            *per_core.entry(r["Core"].as_str()).or_default() += 1;
        }
        if !per_core.contains_key("") {
            assert_eq!(c.cores, per_core.len(), "{name}: cores");
            assert_eq!(
                c.threads_per_core,
                *per_core.values().max().unwrap(),
                "{name}: threads per core"
            );
        }
        let sockets: BTreeSet<&str> = rows.iter().map(|r| r["Socket"].as_str()).collect();
        if !sockets.contains("-") && !sockets.contains("") {
            assert_eq!(c.sockets, sockets.len(), "{name}: sockets");
        }

        let mut nodes: BTreeMap<u32, BTreeSet<usize>> = BTreeMap::new();
        for r in &rows {
            if let Ok(n) = r["Node"].parse::<u32>() {
                nodes
                    .entry(n)
                    .or_default()
                    .insert(r["CPU"].parse().unwrap());
            }
        }
        for (id, members) in &nodes {
            let idx = topo
                .node_index(*id)
                .unwrap_or_else(|| panic!("{name}: node {id} missing"));
            let ours: BTreeSet<usize> = topo.nodes()[idx].cpus.and(&c.online).iter().collect();
            assert_eq!(&ours, members, "{name}: node {id} CPUs");
        }
        if !nodes.is_empty() {
            let with_cpus = topo
                .nodes()
                .iter()
                .filter(|n| n.cpus.intersects(&c.online))
                .count();
            assert_eq!(with_cpus, nodes.len(), "{name}: nodes with CPUs");
        }
        checked += 1;
    }
    eprintln!("checked {checked} files, skipped {}:", skipped.len());
    for s in &skipped {
        eprintln!("  skip {s}");
    }
    assert!(checked >= 25, "only {checked} files checked");
    assert!(skipped.len() <= 5, "too many skips: {skipped:?}");
}

#[test]
fn with_the_parsable_rows_placement_is_exact() {
    let Some(files) = expected_files("placement from --parse rows") else {
        return;
    };
    let mut checked = 0;
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let rows = first_csv(&text);
        let topo = lscpu::parse(&text, &name).unwrap_or_else(|e| panic!("{e}"));
        let hybrid = text.matches("Model name:").count() > 1;
        // Every pair of CPUs shares a core (thread_siblings) exactly when the
        // CSV gives them the same Core id, and a package when the same Socket.
        let level = if topo.level(LevelKind::BigCore).is_some() {
            LevelKind::BigCore
        } else {
            LevelKind::Core
        };
        for a in &rows {
            for b in &rows {
                let (ca, cb): (usize, usize) =
                    (a["CPU"].parse().unwrap(), b["CPU"].parse().unwrap());
                if !hybrid && !a["Core"].is_empty() {
                    assert_eq!(
                        topo.mask_of(ca, level).contains(cb),
                        a["Core"] == b["Core"],
                        "{name}: CPUs {ca} and {cb} core"
                    );
                }
                let known = |v: &str| v != "-" && !v.is_empty();
                if known(&a["Socket"]) && known(&b["Socket"]) {
                    assert_eq!(
                        topo.package_mask(ca).contains(cb),
                        a["Socket"] == b["Socket"],
                        "{name}: CPUs {ca} and {cb} socket"
                    );
                }
            }
        }
        // Cache instances: as many as distinct ids per column.
        for (col, _) in rows[0].iter().filter(|(k, _)| k.starts_with('L')) {
            let ids: BTreeSet<&str> = rows
                .iter()
                .map(|r| r[col].as_str())
                .filter(|id| !id.is_empty() && *id != "-")
                .collect();
            let ours = topo
                .caches()
                .iter()
                .filter(|c| lscpu::cache_name(c.level, c.kind) == *col)
                .count();
            assert_eq!(ours, ids.len(), "{name}: {col} instances");
        }
        checked += 1;
    }
    assert!(checked >= 35);
}

/// lscpu's terminal (hierarchic) layout of a flat summary, as util-linux's
/// `print_summary` builds it: sections with indented children, caches as
/// `L1d:` under "Caches (sum of all):", nodes under "NUMA:".
fn hierarchic(flat: &str) -> String {
    let mut out = String::new();
    let mut caches_open = false;
    let mut numa_open = false;
    for line in flat.lines() {
        let (label, value) = line.split_once(':').unwrap();
        let value = value.trim();
        if let Some(cache) = label.strip_suffix(" cache") {
            if !caches_open {
                out.push_str("Caches (sum of all):\n");
                caches_open = true;
            }
            out.push_str(&format!("  {cache}:  {value}\n"));
        } else if label.starts_with("NUMA") {
            if !numa_open {
                out.push_str("NUMA:\n");
                numa_open = true;
            }
            out.push_str(&format!("  {label}:  {value}\n"));
        } else if let Some(v) = label.strip_prefix("Vulnerability ") {
            out.push_str(&format!("  {v}:  {value}\n"));
        } else if ["CPU(s)", "Vendor ID", "Architecture"].contains(&label) {
            out.push_str(&format!("{label}:  {value}\n"));
        } else {
            out.push_str(&format!("  {label}:  {value}\n"));
        }
    }
    out
}

#[test]
fn the_terminal_layout_reads_like_the_flat_one() {
    let Some(files) = expected_files("terminal layout against flat") else {
        return;
    };
    let mut checked = 0;
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let flat = summary_part(&text);
        let a = lscpu::parse(&flat, &name).unwrap_or_else(|e| panic!("{e}"));
        let b = lscpu::parse(&hierarchic(&flat), &name).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(lscpu::counts(&a), lscpu::counts(&b), "{name}");
        assert_eq!(a.caches(), b.caches(), "{name}");
        assert_eq!(a.nodes(), b.nodes(), "{name}");
        checked += 1;
    }
    assert!(checked >= 35);
}

/// A core's OS id is the number lscpu printed in its Core column (per CPU
/// type on hybrid machines, so not unique there), and none when the column is
/// empty: never a key the reader made up to keep cores apart.
#[test]
fn core_os_ids_are_the_core_column() {
    let Some(files) = expected_files("core OS ids from the Core column") else {
        return;
    };
    let (mut given, mut empty) = (0, 0);
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let column: BTreeMap<usize, Option<u32>> = first_csv(&text)
            .iter()
            .filter_map(|r| {
                let cpu = r.get("CPU")?.parse().ok()?;
                Some((cpu, r.get("Core").and_then(|c| c.parse().ok())))
            })
            .collect();
        let topo = lscpu::parse(&text, &name).unwrap_or_else(|e| panic!("{e}"));
        let Some(cores) = topo.level(LevelKind::Core) else {
            continue;
        };
        for g in &cores.groups {
            let ids: BTreeSet<Option<u32>> = g.cpus.iter().map(|c| column[&c]).collect();
            if ids.len() != 1 {
                continue;
            }
            let want = *ids.first().unwrap();
            assert_eq!(g.os_id, want, "{name}: core of CPUs {}", g.cpus);
            match want {
                Some(_) => given += 1,
                None => empty += 1,
            }
        }
    }
    assert!(
        given > 100 && empty > 0,
        "checked {given} cores with an id, {empty} without"
    );
}
