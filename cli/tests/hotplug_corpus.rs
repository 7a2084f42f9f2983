//! The hotplug engine's masks against what real kernels wrote.
//!
//! Every sysfs snapshot of the corpus (hwloc's and util-linux's, their
//! `history/` ones included) is read into a topology, and its online CPUs are
//! brought up one at a time by [`MaskEngine`], naive and scoped. The truth is
//! the snapshot's own files, read here straight from the tarball without the
//! reader: for each online CPU, the kernel's
//!
//! - `topology/thread_siblings_list` (or `core_cpus_list`, or the hex masks of
//!   old kernels) for the SMT level,
//! - `topology/package_cpus_list` / `core_siblings_list` for the package level,
//! - `topology/cluster_cpus_list` for the coregroup level,
//! - `cache/indexN/shared_cpu_list` (or `shared_cpu_map`) of the level-2 data
//!   or unified cache for the L2 level, and of the outermost such cache of
//!   level 2 or more for the LLC level,
//! - `node/nodeN/cpulist` (or `cpumap`) of the node listing the CPU,
//!
//! wherever the kernel wrote that file (a level it wrote nothing for is not
//! compared: the engine's fall-backs, such as an L2 mask equal to the SMT
//! siblings, are its own rules, not the kernel's word),
//! each restricted to the CPUs online at the time (a kernel's masks hold online
//! CPUs only, and some kernels' node and cache lists keep offline ones). After
//! every online, the new CPU's masks must equal those; after the whole bring-up,
//! every CPU's. Then rounds of offline/online events take whole groups down and
//! up again; after each event the masks of the CPUs around it, and after each
//! round every CPU's, must equal the kernel's lists restricted to the new online
//! set (an offline CPU's masks are empty, as Linux removes its `topology/`),
//! and after the last round a fresh engine brought up on that online set alone
//! must hold the same masks.
//!
//! Die masks (`die_cpus_list`) are not compared: the engine keeps no die level.
//!
//! Snapshots that cannot be compared are listed below with their reasons, and
//! the test asserts the exact set of each kind: one that starts agreeing, or
//! stops, fails the test by name.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use cpumask::CpuMask;
use hotplug::{Algo, MaskEngine, MaskLevel};
use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};
use topology::{Topology, TopologyBuilder};

/// Sysfs snapshots in the corpus (every tarball but hwloc's CPUID dumps): a
/// missing or extra one fails the test.
const SNAPSHOTS: usize = 91;

/// Snapshots the sysfs reader refuses: file, a fragment of the error, why.
const READER_REFUSES: &[(&str, &str, &str)] = &[
    (
        "hwloc/tests/hwloc/linux/fakeheterocpunuma.tar.bz2",
        "already in node",
        "hwloc's made-up overlapping node cpusets",
    ),
    (
        "hwloc/tests/hwloc/linux/40intel64-4n10c+pci-conflicts.tar.bz2",
        "package sibling masks",
        "hwloc edited this tarball so that CPU 3's core_siblings (0-3) contradicts every \
         other package mask",
    ),
    (
        "hwloc/tests/hwloc/linux/allowed/test1.fsroot.tar.bz2",
        "not a sysfs snapshot",
        "a cgroup file-system root for hwloc's allowed-set test: no sys/devices/system/cpu",
    ),
];

/// Snapshots the engine refuses to maintain masks for: file, a fragment of
/// the error, why.
const ENGINE_REFUSES: &[(&str, &str, &str)] = &[(
    "util-linux/history/a292bbdec-parent/tests/ts/lscpu/dumps/sparc64-UltraSparc-T1.tar.gz",
    "SMT siblings see different caches",
    "the dump has no cache/ directories; the reader gives every PU its own L2 from \
     /proc/cpuinfo's sizes, so the four threads of a core see four L2s, a shape the engine \
     (and Linux, whose L2 mask contains the SMT siblings) cannot hold",
)];

/// Snapshots whose kernel lists the engine does not reproduce: file, the
/// levels that differ, why.
const DISAGREE: &[(&str, &[&str], &str)] = &[
    (
        "hwloc/tests/hwloc/linux/64amd64-4s2n4ca2co.tar.bz2",
        &["l2"],
        "the L2 files disagree with each other: cpu1 cache/index2 shared_cpu_map is 3 \
         (CPUs 0-1, the Bulldozer compute unit) but shared_cpu_list says 1; the reader, like \
         hwloc, takes the map",
    ),
    (
        "hwloc/tests/hwloc/linux/64fake-4n2s2ca2c2t.tar.bz2",
        &["l2", "llc"],
        "hwloc's made-up machine: its *_list files disagree with the hex maps beside them \
         (cpu1 cache/index2: list 0,4, map aa), and the reader takes the maps",
    ),
    (
        "hwloc/tests/hwloc/linux/8ia64-2n2s2c.tar.bz2",
        &["llc"],
        IA64_EMPTY_L3,
    ),
    (
        "hwloc/tests/hwloc/linux/8ia64-2s2c2t.tar.bz2",
        &["llc"],
        IA64_EMPTY_L3,
    ),
    (
        "hwloc/history/d6fda2d87-parent/tests/hwloc/linux/8ia64-4s2c.tar.bz2",
        &["llc"],
        IA64_EMPTY_L3,
    ),
    (
        "util-linux/history/a292bbdec-parent/tests/ts/lscpu/dumps/ia64-pg0.tar.gz",
        &["llc"],
        IA64_EMPTY_L3,
    ),
];

/// Why the ia64 snapshots' LLC differs.
const IA64_EMPTY_L3: &str = "these ia64 kernels wrote an all-zero shared_cpu_map for \
     the L3 (and the level-2 instruction cache), a set without the CPU itself that no mask of \
     an online CPU can equal; the reader, like hwloc, takes such a cache to be the core's";

/// Snapshots with no online CPU that has a topology directory to compare.
const NOTHING_TO_COMPARE: &[(&str, &str)] = &[(
    "hwloc/history/56e01f01c-parent/tests/hwloc/linux/4ppc-4c.tar.bz2",
    "PPC970 dump: no topology/ files; node0 holds cpuN links but no cpulist or cpumap",
)];

/// Online CPUs compared per level over the agreeing snapshots (each
/// compared after every event too, for both algorithms).
const COMPARED: [(&str, usize); MaskLevel::COUNT] = [
    ("smt", 2117),
    ("l2", 1032),
    ("coregroup", 138),
    ("package", 2121),
    ("node", 2052),
    ("llc", 1032),
];

/// Rounds of offline/online events after the bring-up, per snapshot and
/// algorithm: each takes a random CPU's whole group at a random level down
/// (or, if the CPU is offline, up), one CPU at a time.
const ROUNDS: usize = 16;

fn corpus() -> PathBuf {
    readers::corpus::dir(env!("CARGO_MANIFEST_DIR"))
}

// ---------------------------------------------------------------------------
// The kernel's lists, straight from the tarball
// ---------------------------------------------------------------------------

/// The regular files of a snapshot under `sys/devices/system/`, by path
/// relative to it (the dump's leading directory dropped).
fn system_files(path: &Path) -> BTreeMap<String, String> {
    let raw = std::fs::read(path).unwrap();
    let reader: Box<dyn Read> = if path.to_string_lossy().ends_with(".bz2") {
        Box::new(bzip2::read::BzDecoder::new(&raw[..]))
    } else {
        Box::new(flate2::read::GzDecoder::new(&raw[..]))
    };
    let mut files = BTreeMap::new();
    let mut archive = tar::Archive::new(reader);
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let name = entry.path().unwrap().to_string_lossy().to_string();
        let Some(at) = name.find("sys/devices/system/") else {
            continue;
        };
        let rel = name[at + "sys/devices/system/".len()..].to_string();
        let keep = rel.contains("/topology/")
            || rel.contains("/cache/index")
            || rel.starts_with("node/node")
            || rel == "cpu/online";
        if keep {
            let mut text = String::new();
            if entry.read_to_string(&mut text).is_ok() {
                files.insert(rel, text.trim().to_string());
            }
        }
    }
    files
}

/// The first of `names` (relative to `dir`) present, as a mask: `*_list`
/// files are lists, the others hex maps.
fn mask_file(files: &BTreeMap<String, String>, dir: &str, names: &[&str]) -> Option<CpuMask> {
    names.iter().find_map(|n| {
        let text = files.get(&format!("{dir}/{n}"))?;
        let parsed = if n.ends_with("list") || n.ends_with("cpulist") {
            CpuMask::parse_list(text)
        } else {
            CpuMask::parse_hex(text)
        };
        Some(parsed.unwrap_or_else(|e| panic!("{dir}/{n}: {text:?}: {e}")))
    })
}

/// What the kernel wrote of one CPU, per engine level (before restricting to
/// the online CPUs); `None` where it wrote nothing for that level.
type KernelMasks = BTreeMap<usize, [Option<CpuMask>; MaskLevel::COUNT]>;

/// The kernel's masks of every CPU it wrote at least one list for.
fn kernel_masks(files: &BTreeMap<String, String>) -> KernelMasks {
    let mut cpus: Vec<usize> = files
        .keys()
        .filter_map(|k| {
            let rest = k.strip_prefix("cpu/cpu")?;
            let (n, _) = rest.split_once('/')?;
            n.parse().ok()
        })
        .collect();
    let nodes = node_lists(files);
    cpus.extend(nodes.iter().flat_map(|m| m.iter()));
    cpus.sort_unstable();
    cpus.dedup();
    let mut out = KernelMasks::new();
    for cpu in cpus {
        let topo = format!("cpu/cpu{cpu}/topology");
        let smt = mask_file(
            files,
            &topo,
            &[
                "thread_siblings_list",
                "core_cpus_list",
                "thread_siblings",
                "core_cpus",
            ],
        );
        let package = mask_file(
            files,
            &topo,
            &[
                "package_cpus_list",
                "core_siblings_list",
                "package_cpus",
                "core_siblings",
            ],
        );
        let (l2, llc) = caches(files, cpu);
        let cluster = mask_file(files, &topo, &["cluster_cpus_list", "cluster_cpus"]);
        let node = nodes.iter().find(|m| m.contains(cpu)).copied();
        let masks = [smt, l2, cluster, package, node, llc];
        if masks.iter().any(Option::is_some) {
            out.insert(cpu, masks);
        }
    }
    out
}

/// Every `node/nodeN` CPU list.
fn node_lists(files: &BTreeMap<String, String>) -> Vec<CpuMask> {
    let mut dirs: Vec<&str> = files
        .keys()
        .filter_map(|k| k.strip_prefix("node/")?.split_once('/').map(|(d, _)| d))
        .filter(|d| d.starts_with("node"))
        .collect();
    dirs.dedup();
    dirs.iter()
        .filter_map(|d| mask_file(files, &format!("node/{d}"), &["cpulist", "cpumap"]))
        .collect()
}

/// The sharers of `cpu`'s level-2 data/unified cache and of its outermost
/// data/unified cache of level 2 or more.
fn caches(files: &BTreeMap<String, String>, cpu: usize) -> (Option<CpuMask>, Option<CpuMask>) {
    let mut l2 = None;
    let mut llc: Option<(u32, CpuMask)> = None;
    for index in 0..16 {
        let dir = format!("cpu/cpu{cpu}/cache/index{index}");
        let (Some(level), Some(ty)) = (
            files.get(&format!("{dir}/level")),
            files.get(&format!("{dir}/type")),
        ) else {
            continue;
        };
        let level: u32 = level.parse().unwrap_or(0);
        if level < 2 || ty == "Instruction" {
            continue;
        }
        let Some(sharers) = mask_file(files, &dir, &["shared_cpu_list", "shared_cpu_map"]) else {
            continue;
        };
        if level == 2 && l2.is_none() {
            l2 = Some(sharers);
        }
        if llc.is_none_or(|(l, _)| level > l) {
            llc = Some((level, sharers));
        }
    }
    (l2, llc.map(|(_, m)| m))
}

// ---------------------------------------------------------------------------
// The engine against them
// ---------------------------------------------------------------------------

/// Levels whose masks differ from the kernel's (restricted to `online`), for
/// the CPUs in `cpus`, as "level: CPU n has {..}, kernel {..}" lines.
fn differences(
    engine: &MaskEngine,
    kernel: &KernelMasks,
    online: &CpuMask,
    cpus: impl Iterator<Item = usize>,
) -> Vec<(MaskLevel, String)> {
    let mut out = Vec::new();
    for cpu in cpus {
        let Some(want) = kernel.get(&cpu) else {
            continue;
        };
        for level in MaskLevel::ALL {
            // An offline CPU has no masks (Linux removes its topology/ directory).
            let want = match want[level as usize] {
                _ if !online.contains(cpu) => CpuMask::new(),
                Some(m) => m.and(online),
                None => continue,
            };
            let got = engine.masks(cpu, level);
            if *got != want {
                out.push((
                    level,
                    format!(
                        "{} CPU {cpu}: engine {{{got}}}, kernel {{{want}}}",
                        level.name()
                    ),
                ));
            }
        }
    }
    out
}

/// Every CPU the kernel lists beside `cpu` at any level.
fn neighbourhood(kernel: &KernelMasks, cpu: usize) -> CpuMask {
    let mut near = CpuMask::single(cpu);
    for m in kernel.get(&cpu).into_iter().flatten().flatten() {
        near.or_assign(m);
    }
    near
}

/// Brings `topo`'s online CPUs up in increasing order, checking each new CPU
/// against the kernel, then every CPU.
fn bring_up(
    topo: &Topology,
    algo: Algo,
    kernel: &KernelMasks,
) -> Result<(MaskEngine, Vec<(MaskLevel, String)>), String> {
    let mut engine = MaskEngine::new(topo, algo).map_err(|e| e.to_string())?;
    let mut diffs = Vec::new();
    let boot = engine.boot_cpu();
    for cpu in topo.online().iter().filter(|&c| c != boot) {
        engine
            .online(cpu)
            .map_err(|e| format!("online {cpu}: {e}"))?;
        let online = *engine.online_mask();
        diffs.extend(differences(&engine, kernel, &online, std::iter::once(cpu)));
    }
    let online = *engine.online_mask();
    diffs.extend(differences(&engine, kernel, &online, online.iter()));
    Ok((engine, diffs))
}

/// Rounds of offline/online events ([`ROUNDS`]); after each event the masks of
/// the CPUs near it, after each round every CPU's, against the kernel's lists
/// on the new online set; after the last round, against a fresh engine brought
/// up on that set alone.
fn cycle(
    topo: &Topology,
    mut engine: MaskEngine,
    kernel: &KernelMasks,
    seed: u64,
) -> Result<Vec<(MaskLevel, String)>, String> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let candidates: Vec<usize> = topo
        .online()
        .iter()
        .filter(|&c| c != engine.boot_cpu())
        .collect();
    let mut diffs = Vec::new();
    if candidates.is_empty() {
        return Ok(diffs);
    }
    let movable: CpuMask = candidates.iter().copied().collect();
    for _ in 0..ROUNDS {
        let cpu = candidates[(rng.next_u64() % candidates.len() as u64) as usize];
        let level = (rng.next_u64() % MaskLevel::COUNT as u64) as usize;
        let group = kernel
            .get(&cpu)
            .and_then(|k| k[level])
            .unwrap_or(CpuMask::single(cpu))
            .and(&movable);
        let going_down = engine.online_mask().contains(cpu);
        let mut members: Vec<usize> = group
            .iter()
            .filter(|&c| engine.online_mask().contains(c) == going_down)
            .collect();
        // A random order, so groups empty and refill from either end.
        for i in (1..members.len()).rev() {
            members.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
        }
        for c in members {
            if going_down {
                engine.offline(c).map_err(|e| format!("offline {c}: {e}"))?;
            } else {
                engine.online(c).map_err(|e| format!("online {c}: {e}"))?;
            }
            let online = *engine.online_mask();
            let near = neighbourhood(kernel, c).and(&online);
            diffs.extend(differences(
                &engine,
                kernel,
                &online,
                near.iter().chain([c]),
            ));
        }
        let online = *engine.online_mask();
        diffs.extend(differences(&engine, kernel, &online, topo.present().iter()));
    }
    let online = *engine.online_mask();
    let mut builder = TopologyBuilder::from_topology(topo);
    builder.online(online);
    let fresh_topo = builder.build().map_err(|e| format!("{e:?}"))?;
    let (fresh, _) = bring_up(&fresh_topo, engine.algo(), kernel)?;
    for cpu in topo.present().iter() {
        for level in MaskLevel::ALL {
            let (a, b) = (engine.masks(cpu, level), fresh.masks(cpu, level));
            if a != b {
                diffs.push((
                    level,
                    format!(
                        "{} CPU {cpu} after events {{{a}}}, fresh bring-up {{{b}}}",
                        level.name()
                    ),
                ));
            }
        }
    }
    Ok(diffs)
}

/// What became of one snapshot.
#[derive(Debug, PartialEq)]
enum Outcome {
    /// Every compared mask agrees, for both algorithms: per level, the
    /// online CPUs whose kernel list was compared.
    Agrees([usize; MaskLevel::COUNT]),
    ReaderRefused(String),
    EngineRefused(String),
    /// Levels that differ from the kernel's lists, with the first difference.
    Disagrees(Vec<&'static str>, String),
    NothingToCompare,
}

fn outcome(path: &Path) -> Outcome {
    let topo = match readers::sysfs::read_path(path) {
        Ok(t) => t,
        Err(e) => return Outcome::ReaderRefused(e.to_string()),
    };
    let kernel = kernel_masks(&system_files(path));
    let mut compared = [0; MaskLevel::COUNT];
    for cpu in topo.online().iter() {
        for (n, m) in compared
            .iter_mut()
            .zip(kernel.get(&cpu).into_iter().flatten())
        {
            *n += usize::from(m.is_some());
        }
    }
    if compared == [0; MaskLevel::COUNT] {
        return Outcome::NothingToCompare;
    }
    let mut diffs = Vec::new();
    for (i, algo) in [Algo::Naive, Algo::Scoped].into_iter().enumerate() {
        let run = bring_up(&topo, algo, &kernel).and_then(|(engine, mut d)| {
            d.extend(cycle(&topo, engine, &kernel, 17 + i as u64)?);
            Ok(d)
        });
        match run {
            Ok(d) => diffs.extend(d),
            Err(e) => return Outcome::EngineRefused(e),
        }
    }
    if diffs.is_empty() {
        return Outcome::Agrees(compared);
    }
    let first = diffs[0].1.clone();
    let mut levels: Vec<&'static str> = diffs.iter().map(|(l, _)| l.name()).collect();
    levels.sort_unstable();
    levels.dedup();
    Outcome::Disagrees(levels, first)
}

/// Whether `got` is what the tables say for `file`.
fn as_expected(file: &str, got: &Outcome) -> bool {
    if let Some((_, fragment, _)) = READER_REFUSES.iter().find(|r| r.0 == file) {
        return matches!(got, Outcome::ReaderRefused(t) if t.contains(fragment));
    }
    if let Some((_, fragment, _)) = ENGINE_REFUSES.iter().find(|r| r.0 == file) {
        return matches!(got, Outcome::EngineRefused(t) if t.contains(fragment));
    }
    if let Some((_, levels, _)) = DISAGREE.iter().find(|r| r.0 == file) {
        return matches!(got, Outcome::Disagrees(l, _) if l == levels);
    }
    if NOTHING_TO_COMPARE.iter().any(|r| r.0 == file) {
        return *got == Outcome::NothingToCompare;
    }
    matches!(got, Outcome::Agrees(_))
}

#[test]
fn engine_masks_equal_the_kernels_sysfs_lists() {
    let root = corpus();
    if !readers::corpus::present(&root, "hotplug masks against the kernels' sysfs lists") {
        return;
    }
    // Every sysfs snapshot of the corpus, the history's included.
    let paths = readers::corpus::sysfs_snapshots(&root, |_| true);
    let mut failures = Vec::new();
    let mut agreed = 0;
    let mut totals = [0; MaskLevel::COUNT];
    for path in &paths {
        let file = path
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .to_string();
        let got = outcome(path);
        if !as_expected(&file, &got) {
            failures.push(format!("{file}: {got:?}"));
        }
        if let Outcome::Agrees(levels) = got {
            agreed += 1;
            for (t, n) in totals.iter_mut().zip(levels) {
                *t += n;
            }
        }
    }
    assert!(failures.is_empty(), "{:#?}", failures);
    assert_eq!(paths.len(), SNAPSHOTS, "snapshot count changed");
    let listed = READER_REFUSES.len() + ENGINE_REFUSES.len() + DISAGREE.len();
    assert_eq!(agreed + listed + NOTHING_TO_COMPARE.len(), SNAPSHOTS);
    // How many online CPUs' kernel lists were compared, per level, over the
    // agreeing snapshots: a truth reader that stops finding a kind of file
    // shows here.
    let per_level: Vec<(&str, usize)> = MaskLevel::ALL
        .iter()
        .map(|l| l.name())
        .zip(totals)
        .collect();
    assert_eq!(per_level, COMPARED, "CPUs compared per level");
}
