//! Every real machine of the corpus gets domains on every kernel without
//! panicking, and they hold Linux's structural rules: each domain contains its
//! CPU and the one below it, its groups lie inside it and cover it (v5.9's NUMA
//! groups may spill out, a bug fixed in v5.13), and the first group holds the
//! CPU; on v6.x their NODE and NUMA spans follow Linux's rule (see
//! support/numa_rule.rs). The snapshots that get no domains are listed below,
//! each with its reason; any other outcome for any snapshot fails the test by
//! name.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cpumask::CpuMask;
use domains::{Flag, KernelVersion};
use topology::Topology;

#[path = "support/numa_rule.rs"]
mod numa_rule;

/// The sysfs snapshots in the corpus (util-linux's lscpu dumps and hwloc's
/// Linux tests): a missing or extra one fails the test.
const SNAPSHOTS: usize = 58;

/// Snapshots the sysfs reader refuses: file, a fragment of the error, why.
const READER_REFUSES: &[(&str, &str, &str)] = &[
    (
        "fakeheterocpunuma.tar.bz2",
        "already in node",
        "hwloc's made-up overlapping node cpusets (it reads them only with \
         HWLOC_DEBUG_ALLOW_OVERLAPPING_NODE_CPUSETS=1)",
    ),
    (
        "40intel64-4n10c+pci-conflicts.tar.bz2",
        "package sibling masks",
        "hwloc's conflicting-cpusets case: CPU 3's core_siblings (0-3) contradicts \
         every other package mask",
    ),
];

/// Snapshots that read but whose masks Linux's topology_span_sane() refuses,
/// so no kernel builds domains: file, the refused level, why. Empty: the
/// reader refuses such a snapshot itself.
const NOT_SANE: &[(&str, &str, &str)] = &[];

/// Snapshots that read with no CPU online: file, why.
const NOTHING_ONLINE: &[(&str, &str)] = &[];

fn corpus() -> PathBuf {
    readers::corpus::dir(env!("CARGO_MANIFEST_DIR"))
}

/// The corpus's current util-linux lscpu dumps and hwloc Linux snapshots.
fn snapshots() -> Vec<PathBuf> {
    readers::corpus::sysfs_snapshots(&corpus(), |dir| {
        dir == "util-linux/tests/ts/lscpu/dumps" || dir == "hwloc/tests/hwloc/linux"
    })
}

/// What became of one snapshot.
#[derive(Debug, PartialEq)]
enum Outcome {
    Built,
    /// The reader's error message.
    ReaderRefused(String),
    NothingOnline,
    /// The level Linux's sanity check refuses, with the kernels that refused.
    NotSane(String, Vec<KernelVersion>),
}

/// The outcome the tables above expect for `file`.
fn expected(file: &str) -> (Outcome, &'static str) {
    if let Some((_, fragment, why)) = READER_REFUSES.iter().find(|r| r.0 == file) {
        return (Outcome::ReaderRefused(fragment.to_string()), why);
    }
    if let Some((_, level, why)) = NOT_SANE.iter().find(|r| r.0 == file) {
        return (
            Outcome::NotSane(level.to_string(), KernelVersion::ALL.to_vec()),
            why,
        );
    }
    if let Some((_, why)) = NOTHING_ONLINE.iter().find(|r| r.0 == file) {
        return (Outcome::NothingOnline, why);
    }
    (Outcome::Built, "")
}

/// Whether `got` is what the tables say (a reader refusal matches on its
/// fragment and on naming the archive).
fn as_expected(file: &str, got: &Outcome, want: &Outcome) -> bool {
    match (got, want) {
        (Outcome::ReaderRefused(text), Outcome::ReaderRefused(fragment)) => {
            text.contains(fragment.as_str()) && text.contains(file)
        }
        _ => got == want,
    }
}

/// Reads one snapshot and builds its domains on every kernel, checking the
/// structural rules of each built set.
fn outcome(path: &Path) -> Outcome {
    let topo = match readers::sysfs::read_path(path) {
        Ok(t) => t,
        Err(e) => return Outcome::ReaderRefused(e.to_string()),
    };
    if topo.online().is_empty() {
        return Outcome::NothingOnline;
    }
    let mut not_sane: Option<(String, Vec<KernelVersion>)> = None;
    for k in KernelVersion::ALL {
        match domains::build(&topo, k) {
            Ok(d) => {
                let what = format!("{} {k}", path.display());
                check_rules(&d, &what);
                // v5.9 took its distances from node 0's row only.
                if k != KernelVersion::V5_9 && !topo.nodes().is_empty() {
                    numa_rule::check(&numa_facts(&topo), topo.online(), &d)
                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                }
            }
            Err(e @ domains::Error::SpanNotSane { .. }) => {
                // Linux refuses such masks too; the error must say why.
                assert!(e.to_string().contains("topology_span_sane"), "{e}");
                let domains::Error::SpanNotSane { level, .. } = e else {
                    unreachable!()
                };
                not_sane
                    .get_or_insert_with(|| (level.to_string(), Vec::new()))
                    .1
                    .push(k);
            }
            Err(e) => panic!("{}: {e}", path.display()),
        }
    }
    match not_sane {
        Some((level, kernels)) => Outcome::NotSane(level, kernels),
        None => Outcome::Built,
    }
}

/// The NUMA rule's view of a machine as the sysfs reader read it.
fn numa_facts(topo: &Topology) -> numa_rule::NumaFacts {
    let n = topo.nodes().len();
    numa_rule::NumaFacts {
        node_cpus: topo
            .nodes()
            .iter()
            .map(|node| node.cpus.and(topo.online()))
            .collect(),
        dist: (0..n * n).map(|i| topo.distance(i / n, i % n)).collect(),
        node_of_cpu: topo
            .cpus()
            .iter()
            .filter_map(|c| Some((c.id, c.node? as usize)))
            .collect(),
    }
}

/// Linux's structural rules for the domains of every CPU.
fn check_rules(d: &domains::Domains, what: &str) {
    let k = d.kernel;
    for c in &d.cpus {
        let mut below: Option<CpuMask> = None;
        for dom in &c.domains {
            let span = d.span(dom).to_cpumask();
            let what = format!("{what} cpu{} {}", c.cpu, d.name(dom));
            assert!(span.contains(c.cpu as usize), "{what}");
            if let Some(b) = below {
                assert!(b.is_subset(&span), "{what}");
            }
            let groups = d.groups(c.cpu, dom);
            assert!(groups[0].contains(c.cpu as usize), "{what}");
            let mut union = CpuMask::new();
            // Before v5.13 (find_descended_sibling) NUMA groups could
            // spill out of their domain on machines of diameter >= 3.
            let may_spill = k == KernelVersion::V5_9 && dom.flags.contains(Flag::Overlap);
            for g in &groups {
                assert!(
                    g.is_subset(&span) || may_spill,
                    "{what}: group {g} outside {span}"
                );
                if !dom.flags.contains(Flag::Overlap) {
                    assert!(!g.intersects(&union), "{what}: groups overlap");
                }
                union.or_assign(g);
            }
            if may_spill {
                assert!(
                    span.is_subset(&union),
                    "{what}: groups do not cover the span"
                );
            } else {
                assert_eq!(union, span, "{what}: groups do not cover the span");
            }
            below = Some(span);
        }
    }
}

#[test]
fn corpus_machines_get_well_formed_domains() {
    if !readers::corpus::present(
        &corpus(),
        &format!("domains of {SNAPSHOTS} corpus snapshots on three kernels"),
    ) {
        return;
    }
    let snaps = snapshots();
    assert_eq!(snaps.len(), SNAPSHOTS, "corpus sysfs snapshots found");
    let mut wrong = Vec::new();
    let mut seen = BTreeMap::new();
    let mut built = 0;
    for path in &snaps {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let got = outcome(path);
        let (want, why) = expected(&file);
        if !as_expected(&file, &got, &want) {
            wrong.push(format!("{file}: expected {want:?} {why}, got {got:?}"));
        }
        built += usize::from(got == Outcome::Built);
        seen.insert(file, got);
    }
    let listed = READER_REFUSES.iter().map(|r| r.0);
    let listed = listed.chain(NOT_SANE.iter().map(|r| r.0));
    for file in listed.chain(NOTHING_ONLINE.iter().map(|r| r.0)) {
        if !seen.contains_key(file) {
            wrong.push(format!("{file}: listed as refused but not in the corpus"));
        }
    }
    assert!(
        wrong.is_empty(),
        "snapshots not as listed:\n{}",
        wrong.join("\n")
    );
    let refused = READER_REFUSES.len() + NOT_SANE.len() + NOTHING_ONLINE.len();
    assert_eq!(built + refused, SNAPSHOTS);
    eprintln!("{built} corpus machines built on every kernel, {refused} refused as listed");
}
