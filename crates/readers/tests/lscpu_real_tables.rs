//! Real machines' `lscpu -e` tables (tests/data/*.lscpu-e, each with its
//! source and licence in its first comment lines), read alone as users paste
//! them, without the summary. The truth is the table itself, read here by a
//! plain split on whitespace: every present CPU has a row, the rows whose
//! ONLINE column says `no` are the off-line CPUs, and the on-line CPUs fall
//! into the nodes, sockets, clusters, cores and cache instances the columns
//! name.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use readers::lscpu;
use topology::{CacheKind, LevelKind, Topology};

/// One table: its column names and, per row, the column's text.
struct Table {
    rows: Vec<BTreeMap<String, String>>,
}

fn table(text: &str) -> Table {
    let mut lines = text.lines().filter(|l| !l.starts_with('#'));
    let header: Vec<String> = lines
        .next()
        .unwrap()
        .split_whitespace()
        .map(String::from)
        .collect();
    let rows = lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let fields: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(fields.len(), header.len(), "{l}");
            let mut row = BTreeMap::new();
            for (h, v) in header.iter().zip(fields) {
                // lscpu joins the cache columns with ':' (L1d:L1i:L2:L3).
                for (name, value) in h.split(':').zip(v.split(':')) {
                    row.insert(name.to_ascii_uppercase(), value.to_string());
                }
            }
            row
        })
        .collect();
    Table { rows }
}

type Sets = BTreeSet<BTreeSet<usize>>;

impl Table {
    fn cpus(&self, online: bool) -> BTreeSet<usize> {
        self.rows
            .iter()
            .filter(|r| r.get("ONLINE").is_none_or(|v| (v == "yes") == online))
            .map(|r| r["CPU"].parse().unwrap())
            .collect()
    }

    /// The on-line CPUs grouped by the values of `columns` (rows with `-` in
    /// any of them left out); `None` when the table has no such column.
    fn groups(&self, columns: &[&str]) -> Option<Sets> {
        if !columns.iter().all(|c| self.rows[0].contains_key(*c)) {
            return None;
        }
        let mut by: BTreeMap<Vec<String>, BTreeSet<usize>> = BTreeMap::new();
        for r in &self.rows {
            let key: Vec<String> = columns.iter().map(|c| r[*c].clone()).collect();
            if r.get("ONLINE").is_some_and(|v| v != "yes") || key.iter().any(|k| k == "-") {
                continue;
            }
            by.entry(key).or_default().insert(r["CPU"].parse().unwrap());
        }
        Some(by.into_values().collect())
    }

    fn nodes(&self) -> Option<BTreeMap<u32, BTreeSet<usize>>> {
        let groups = self.groups(&["NODE"])?;
        Some(
            groups
                .into_iter()
                .map(|cpus| {
                    let first = *cpus.first().unwrap();
                    let row = self.rows.iter().find(|r| r["CPU"] == first.to_string());
                    (row.unwrap()["NODE"].parse().unwrap(), cpus)
                })
                .collect(),
        )
    }
}

fn level_sets(t: &Topology, kind: LevelKind) -> Sets {
    t.level(kind)
        .map(|l| l.groups.iter().map(|g| g.cpus.iter().collect()).collect())
        .unwrap_or_default()
}

fn cache_sets(t: &Topology, level: u8, kind: CacheKind) -> Sets {
    t.caches()
        .iter()
        .filter(|c| c.level == level && c.kind == kind)
        .map(|c| c.cpus.iter().collect())
        .collect()
}

/// Reads one fixture and checks it against its own table.
fn check(name: &str) -> Topology {
    check_cores(name, None)
}

/// As [`check`], with the cores given by another truth when the table's CORE
/// column cannot tell them (numbered per CPU type).
fn check_cores(name: &str, cores: Option<Sets>) -> Topology {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let t = lscpu::parse(&text, name).unwrap_or_else(|e| panic!("{e}"));
    let tab = table(&text);
    let online = tab.cpus(true);
    let offline = tab.cpus(false);
    assert_eq!(
        t.online().iter().collect::<BTreeSet<_>>(),
        online,
        "{name}: on-line"
    );
    let present: BTreeSet<usize> = online.union(&offline).copied().collect();
    assert_eq!(
        t.present().iter().collect::<BTreeSet<_>>(),
        present,
        "{name}: present"
    );
    if let Some(nodes) = tab.nodes() {
        let ours: BTreeMap<u32, BTreeSet<usize>> = t
            .nodes()
            .iter()
            .map(|n| (n.id, n.cpus.iter().collect()))
            .collect();
        assert_eq!(ours, nodes, "{name}: nodes");
    }
    if let Some(sockets) = tab.groups(&["SOCKET"]) {
        assert_eq!(
            level_sets(&t, LevelKind::Package),
            sockets,
            "{name}: sockets"
        );
    }
    if let Some(clusters) = tab.groups(&["CLUSTER"]) {
        assert_eq!(
            level_sets(&t, LevelKind::Cluster),
            clusters,
            "{name}: clusters"
        );
    }
    let core_key: &[&str] = if tab.rows[0].contains_key("SOCKET") {
        &["SOCKET", "CORE"]
    } else {
        &["CORE"]
    };
    if let Some(cores) = cores.or_else(|| tab.groups(core_key)) {
        assert_eq!(level_sets(&t, LevelKind::Core), cores, "{name}: cores");
    }
    for (col, level, kind) in [
        ("L1D", 1, CacheKind::Data),
        ("L1I", 1, CacheKind::Instruction),
        ("L2", 2, CacheKind::Unified),
        ("L3", 3, CacheKind::Unified),
    ] {
        if let Some(instances) = tab.groups(&[col]) {
            assert_eq!(cache_sets(&t, level, kind), instances, "{name}: {col}");
        }
    }
    t
}

/// Fugaku's A64FX: no SOCKET column but CLUSTER, CPUs 2-11 present and
/// off-line, nodes 0, 1 and 4-7 (2 and 3 hold no CPU). Read alone, the
/// off-line rows were taken for CPUs the (absent) summary did not list.
#[test]
fn fugaku_a64fx_table_with_offline_cpus_reads_as_printed() {
    let t = check("sysinfo-jl-fugaku-a64fx.lscpu-e");
    // The assistant cores and the four 12-core CMGs of the A64FX.
    assert_eq!(t.nodes().len(), 6);
    assert_eq!(t.online().weight(), 50);
}

#[test]
fn hybrid_i9_13900h_table_reads_as_printed() {
    check("sysinfo-jl-i9-13900h.lscpu-e");
}

#[test]
fn jetson_orin_table_without_a_node_column_reads_as_printed() {
    check("sysinfo-jl-jetson-orin-nx.lscpu-e");
}

/// A hybrid Arm SoC's table (util-linux's test dump through lscpu 2.38.1):
/// lscpu numbers cores per CPU type, so CPUs 0, 3, 5 and 7 all print Core 0.
/// The truth for the cores is util-linux's expected summary of the same dump:
/// every type has one thread per core and the types' cores add up to the
/// CPUs, so each CPU is its own core. Read alone, the table merged CPUs of
/// different types into one core.
#[test]
fn hybrid_arm_table_numbering_cores_per_type_reads_one_core_per_cpu() {
    let expected = readers::corpus::dir(env!("CARGO_MANIFEST_DIR"))
        .join("util-linux/tests/expected/lscpu/lscpu-arm-A510-A710-A715-X3");
    let what = "util-linux's expected summary for the hybrid Arm table";
    if !readers::corpus::present(&readers::corpus::dir(env!("CARGO_MANIFEST_DIR")), what) {
        return;
    }
    let summary = std::fs::read_to_string(expected).unwrap();
    let field = |name: &str| -> Vec<usize> {
        summary
            .lines()
            .take_while(|l| !l.starts_with('#'))
            .filter_map(|l| l.strip_prefix(name))
            .map(|v| v.trim().parse().unwrap())
            .collect()
    };
    let cpus = field("CPU(s):")[0];
    let cores: usize = field("Core(s) per socket:")
        .iter()
        .zip(field("Socket(s):"))
        .map(|(c, s)| c * s)
        .sum();
    assert!(field("Thread(s) per core:").iter().all(|&t| t == 1));
    assert_eq!(cores, cpus, "the summary's cores are its CPUs");
    let one_per_cpu: Sets = (0..cpus).map(|c| BTreeSet::from([c])).collect();
    check_cores("ul2381-arm-A510-A710-A715-X3.lscpu-e", Some(one_per_cpu));
}

/// The same machine's `lscpu --parse` table from util-linux's expected
/// output, read alone: the same cores.
#[test]
fn hybrid_arm_parse_table_alone_reads_one_core_per_cpu() {
    let corpus = readers::corpus::dir(env!("CARGO_MANIFEST_DIR"));
    if !readers::corpus::present(&corpus, "util-linux's hybrid Arm --parse table") {
        return;
    }
    let expected = std::fs::read_to_string(
        corpus.join("util-linux/tests/expected/lscpu/lscpu-arm-A510-A710-A715-X3"),
    )
    .unwrap();
    // The first parsable block: its comment lines, header and rows.
    let block: String = expected
        .lines()
        .skip_while(|l| !l.starts_with("# The following is the parsable format"))
        .take_while(|l| !l.trim().is_empty())
        .map(|l| format!("{l}\n"))
        .collect();
    let t = lscpu::parse(&block, "arm-A510 --parse").unwrap_or_else(|e| panic!("{e}"));
    let rows: Vec<Vec<&str>> = block
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split(',').collect())
        .collect();
    assert_eq!(rows.len(), 8);
    // As the expected summary says (one thread per core of every type):
    // each CPU its own core.
    let one_per_cpu: Sets = rows
        .iter()
        .map(|r| BTreeSet::from([r[0].parse().unwrap()]))
        .collect();
    assert_eq!(level_sets(&t, LevelKind::Core), one_per_cpu);
}

/// lscpu 2.38.1's `-e` and `-p` tables of a phone's capture whose CPUs 1-7
/// had lost their cache directories, while CPU 0's L2 lists CPUs 0-3. lscpu
/// prints a CPU's cache ids only for the caches that list it (util-linux
/// sys-utils/lscpu.c, `get_cell_data`, `COL_CPU_CACHE`): CPU 0's cell is
/// `0:0:0` (L1d, L1i, L2), CPUs 1-3 print one id, `0`, which is their L2
/// (they are in no L1 lscpu knows), and CPUs 4-7 none; in `-p` those rows are
/// shorter than the header. A lone id cannot say which cache it names, so no
/// CPU but 0 is in a cache, and the columns after the caches keep their
/// places.
#[test]
fn cache_ids_lscpu_prints_only_for_the_caches_a_cpu_has() {
    let only_cpu0: Sets = Sets::from([BTreeSet::from([0])]);
    for name in [
        "cpuinfo-galaxy-s8-us.lscpu-e",
        "cpuinfo-galaxy-s8-us.lscpu-p",
    ] {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(name);
        let text = std::fs::read_to_string(&path).unwrap();
        let t = lscpu::parse(&text, name).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(t.online().iter().count(), 8, "{name}");
        for (level, kind) in [
            (1, CacheKind::Data),
            (1, CacheKind::Instruction),
            (2, CacheKind::Unified),
        ] {
            assert_eq!(
                cache_sets(&t, level, kind),
                only_cpu0,
                "{name}: L{level} {kind:?}"
            );
        }
        // The Socket column: CPUs 0-3 in socket 0 (4-7 in none it names).
        let sockets = level_sets(&t, LevelKind::Package);
        assert!(
            sockets
                .iter()
                .any(|s| BTreeSet::from([0, 1, 2, 3]).is_subset(s)),
            "{name}: {sockets:?}"
        );
    }
}
