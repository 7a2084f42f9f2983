//! POWER truth from the seeds.
//!
//! Seed 000 prints, for the POWER9 2-node 128-CPU PowerVM LPAR on v5.9, cpu0's
//! domains SMT 2391, CACHE 2327, DIE 2071, NUMA 12801, and after
//! `ppc64_cpu --smt=1` DIE 2071, NUMA 12801. Seed 001 describes shared-processor
//! POWER10 LPARs: asym packing onto fewer big cores and no MC level.
//!
//! Seed 001's rules, cited from Linux v6.8 (the seed's 8fc63a91e785, "Merge
//! branch 'smp-topo' into next", went into v6.8-rc1). The line numbers are those
//! of the v6.8 release tree as published in sndrzt/linux-6.8, commit 3bc197e7c
//! ("linux-6.8 original source code", Makefile 6.8.0 with no EXTRAVERSION;
//! `arch/powerpc/kernel/smp.c` is blob 693334c2, `kernel/sched/topology.c`
//! 10d1391e, `include/linux/sched/sd_flags.h` a8b28647). Torvalds' own tree with
//! its v6.8 tag could not be brought here (its snapshot is over the size limit),
//! so these blobs are not checked against the tag itself.
//!
//! arch/powerpc/kernel/smp.c:
//! - 985-995 `powerpc_smt_flags()` (SMT): `SD_SHARE_CPUCAPACITY |
//!   SD_SHARE_PKG_RESOURCES`, plus `SD_ASYM_PACKING` only with
//!   `CPU_FTR_ASYM_SMT` (POWER7), never `splpar_asym_pack`: packing never moves
//!   work between a big core's thread groups.
//! - 1002 `DEFINE_STATIC_KEY_FALSE(splpar_asym_pack)`.
//! - 1010-1016 `powerpc_shared_cache_flags()` (CACHE): `SD_SHARE_PKG_RESOURCES |
//!   SD_ASYM_PACKING` under `splpar_asym_pack`, else `SD_SHARE_PKG_RESOURCES`.
//! - 1018-1024 `powerpc_shared_proc_flags()` (MC and PKG): `SD_ASYM_PACKING`
//!   under `splpar_asym_pack`, else 0.
//! - 1047-1054 `has_coregroup_support()`: `if (is_shared_processor()) return 0;`
//!   ("Coregroup identification not available on shared systems"), else
//!   `coregroup_enabled`.
//! - 1690-1727 `build_sched_topology()`: 1694-1695 `if (is_shared_processor() &&
//!   has_big_cores) static_branch_enable(&splpar_asym_pack);`, then the table
//!   SMT (1697-1706: `smallcore_smt_mask` when `has_big_cores`, with the
//!   "Big cores detected but using small core scheduling" line), CACHE
//!   (1709-1713, `shared_cache_mask`, only `if (shared_caches)`), MC (1714-1718,
//!   `cpu_mc_mask`, only `if (has_coregroup_support())`), PKG (1719-1721,
//!   `cpu_cpu_mask`).
//! - 1749-1755 `arch_asym_cpu_priority(cpu)`: `return -cpu / threads_per_core;`
//!   under `splpar_asym_pack`, else `return -cpu;` (C division: truncated).
//!
//! Elsewhere in v6.8:
//! - arch/powerpc/kernel/setup-common.c:389-407 `cpu_init_thread_core_maps()`
//!   sets `threads_per_core` and prints "CPU maps initialized for N threads per
//!   core"; seed 001's lscpu prints "Thread(s) per core: 8".
//! - arch/powerpc/include/asm/topology.h:17 `RECLAIM_DISTANCE 10`, so every
//!   NUMA level at distance 40 loses `SD_BALANCE_EXEC | SD_BALANCE_FORK |
//!   SD_WAKE_AFFINE` (kernel/sched/topology.c:1658-1661).
//! - kernel/sched/topology.c:1572-1682 `sd_init()`: every level starts with
//!   `SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE |
//!   SD_PREFER_SIBLING` plus the level's flags (1605-1616); NUMA levels drop
//!   `SD_PREFER_SIBLING` and gain `SD_SERIALIZE` (1654-1657); 2416-2417 add
//!   `SD_OVERLAP` to the NUMA levels (`SDTL_OVERLAP`, 1973).
//! - include/linux/sched/sd_flags.h:51-170: the flags in bit order, which is
//!   also the order debugfs prints their names in.
//! - kernel/sched/sched.h:828-831 `sched_asym_prefer(a, b)`: `a` is preferred
//!   only with a strictly higher `arch_asym_cpu_priority()`;
//!   kernel/sched/topology.c:1311-1319: a group's `asym_prefer_cpu` is its
//!   first CPU of highest priority.

use cpumask::CpuMask;
use domains::KernelVersion;
use topology::{Arch, Cache, CacheKind, CpuSpec, Topology, TopologyBuilder};

#[path = "support/same_as_dump.rs"]
mod same_as_dump;
use same_as_dump::assert_same_as_dump;

/// The seed-000 machine as lscpu describes it: 2 sockets = 2 nodes (0-63,
/// 64-127), 8 SMT8 cores per socket; POWER9 under PowerVM exposes each SMT8 core
/// as two SMT4 thread groups (even and odd threads) sharing an L2.
/// `online(cpu)` chooses which CPUs are online.
fn power9_lpar_128(online: impl Fn(u32) -> bool) -> Topology {
    let mut b = TopologyBuilder::new(Arch::PowerPc64);
    b.hypervisor("pHyp");
    for cpu in 0..128u32 {
        let big = cpu / 8;
        let thread = cpu % 8;
        b.add_cpu(CpuSpec {
            id: cpu,
            hw_id: Some(cpu as u64),
            online: online(cpu),
            package: big / 8,
            die: None,
            cluster: None,
            big_core: Some(big % 8),
            core: (big % 8) * 2 + thread % 2,
            node: Some(big / 8),
            kind: None,
            capacity: None,
            os_ids: None,
        });
    }
    for node in 0..2u32 {
        b.add_node(node, CpuMask::new(), None);
    }
    b.distances(vec![10, 40, 40, 10]);
    for big in 0..16usize {
        let mut m = CpuMask::new();
        m.set_range(big * 8, big * 8 + 8);
        b.add_cache(Cache {
            level: 2,
            kind: CacheKind::Unified,
            size_bytes: Some(512 << 10),
            line_bytes: Some(128),
            ways: None,
            cpus: m.into(),
        });
    }
    b.build().expect("power9 topology")
}

fn cpu0(topo: &Topology, k: KernelVersion) -> Vec<(String, u32)> {
    let d = domains::build(topo, k).expect("domains");
    let c = d.cpu(0).expect("cpu0 online");
    c.domains
        .iter()
        .map(|x| (d.name(x).to_string(), k.encode(x.flags)))
        .collect()
}

/// CPU 0's domains and flags on v5.9 as seed 000 prints them, all threads
/// online and after `ppc64_cpu --smt=1`.
const SEED000_ALL_THREADS: [(&str, u32); 4] = [
    ("SMT", 2391),
    ("CACHE", 2327),
    ("DIE", 2071),
    ("NUMA", 12801),
];
const SEED000_AFTER_SMT1: [(&str, u32); 2] = [("DIE", 2071), ("NUMA", 12801)];

fn named(v: &[(&str, u32)]) -> Vec<(String, u32)> {
    v.iter().map(|(n, f)| (n.to_string(), *f)).collect()
}

#[test]
fn seed000_power9_v5_9_all_threads() {
    let topo = power9_lpar_128(|_| true);
    assert_eq!(
        cpu0(&topo, KernelVersion::V5_9),
        named(&SEED000_ALL_THREADS)
    );
}

#[test]
fn seed000_power9_v5_9_after_smt1() {
    let topo = power9_lpar_128(|cpu| cpu % 8 == 0);
    assert_eq!(cpu0(&topo, KernelVersion::V5_9), named(&SEED000_AFTER_SMT1));
}

#[test]
fn seed000_machine_from_the_catalogue() {
    // The catalogue entry is written independently (readers::catalogue); it
    // must give the seed's numbers too, all threads and after smt=1.
    let mut topo = readers::catalogue::machine("power9-lpar-128").expect("catalogue");
    assert_eq!(
        cpu0(&topo, KernelVersion::V5_9),
        named(&SEED000_ALL_THREADS)
    );
    // ppc64_cpu --smt=1: threads 1-7 of every SMT8 core go offline.
    let keep: CpuMask = topo.online().iter().filter(|&c| c % 8 == 0).collect();
    let mut b = TopologyBuilder::from_topology(&topo);
    b.online(keep);
    topo = b.finish().unwrap();
    assert_eq!(cpu0(&topo, KernelVersion::V5_9), named(&SEED000_AFTER_SMT1));
}

#[test]
fn seed001_catalogue_power10_dedicated_and_shared() {
    let topo = readers::catalogue::machine("power10-shared-768").expect("catalogue");
    assert_eq!(topo.online().weight(), 768);
    for shared in [false, true] {
        let mut b = TopologyBuilder::from_topology(&topo);
        b.shared_processor(shared);
        let topo = b.finish().unwrap();
        let d = domains::build(&topo, KernelVersion::V6_8).unwrap();
        for c in &d.cpus {
            for x in &c.domains {
                let (names, value) = v6_8_flags(d.name(x), shared);
                let got: Vec<_> = KernelVersion::V6_8.names(x.flags).collect();
                assert_eq!(got, names, "cpu{} {}", c.cpu, d.name(x));
                assert_eq!(KernelVersion::V6_8.encode(x.flags), value);
            }
        }
        if shared {
            assert!(d.levels.iter().all(|l| l.name != "MC"));
        }
    }
}

#[test]
fn power9_on_v6_uses_pkg_and_names() {
    let topo = power9_lpar_128(|_| true);
    let d = domains::build(&topo, KernelVersion::V6_12).unwrap();
    let c = d.cpu(0).unwrap();
    let names: Vec<_> = c.domains.iter().map(|x| d.name(x)).collect();
    assert_eq!(names, ["SMT", "CACHE", "PKG", "NUMA"]);
    let smt: Vec<_> = KernelVersion::V6_12.names(c.domains[0].flags).collect();
    assert_eq!(
        smt,
        [
            "SD_BALANCE_NEWIDLE",
            "SD_BALANCE_EXEC",
            "SD_BALANCE_FORK",
            "SD_WAKE_AFFINE",
            "SD_SHARE_CPUCAPACITY",
            "SD_SHARE_LLC",
            "SD_PREFER_SIBLING"
        ]
    );
    let v68: Vec<_> = KernelVersion::V6_8.names(c.domains[1].flags).collect();
    assert!(v68.contains(&"SD_SHARE_PKG_RESOURCES"));
    // SMT is the small core: threads 0,2,4,6 of the big core.
    assert_eq!(d.span(&c.domains[0]).to_list_string(), "0,2,4,6");
    assert_eq!(d.span(&c.domains[1]).to_list_string(), "0-7");
}

/// Seed 001's 768-CPU POWER10 LPAR: nodes 0,1,4,5,6,7 with the interleaved
/// cpulists lscpu printed, SMT8 big cores made of two SMT4 thread groups. With
/// `coregroup`, every 4 big cores of a node form a coregroup (MC level).
fn power10_768(shared: bool, coregroup: bool) -> Topology {
    let lists = [
        (0u32, "0-7,32-39,80-87,128-135,176-183,224-231,272-279,320-327,368-375,416-423,464-471,512-519,560-567,608-615,656-663,704-711,752-759"),
        (1, "8-15,40-47,88-95,136-143,184-191,232-239,280-287,328-335,376-383,424-431,472-479,520-527,568-575,616-623,664-671,712-719,760-767"),
        (4, "64-71,112-119,160-167,208-215,256-263,304-311,352-359,400-407,448-455,496-503,544-551,592-599,640-647,688-695,736-743"),
        (5, "16-23,48-55,96-103,144-151,192-199,240-247,288-295,336-343,384-391,432-439,480-487,528-535,576-583,624-631,672-679,720-727"),
        (6, "72-79,120-127,168-175,216-223,264-271,312-319,360-367,408-415,456-463,504-511,552-559,600-607,648-655,696-703,744-751"),
        (7, "24-31,56-63,104-111,152-159,200-207,248-255,296-303,344-351,392-399,440-447,488-495,536-543,584-591,632-639,680-687,728-735"),
    ];
    let mut b = TopologyBuilder::new(Arch::PowerPc64);
    b.hypervisor("pHyp").shared_processor(shared);
    let mut total = 0;
    for (pkg, (node, list)) in lists.iter().enumerate() {
        let mask = CpuMask::parse_list(list).unwrap();
        b.add_node(*node, mask, None);
        for (i, cpu) in mask.iter().enumerate() {
            let big = (i / 8) as u32;
            b.add_cpu(CpuSpec {
                id: cpu as u32,
                hw_id: Some(cpu as u64),
                online: true,
                package: pkg as u32,
                die: None,
                cluster: coregroup.then_some(big / 4),
                big_core: Some(big),
                core: big * 2 + (cpu as u32 % 2),
                node: Some(*node),
                kind: None,
                capacity: None,
                os_ids: None,
            });
            total += 1;
        }
    }
    assert_eq!(total, 768);
    let n = lists.len();
    b.distances(
        (0..n * n)
            .map(|i| if i / n == i % n { 10 } else { 40 })
            .collect(),
    );
    b.build().expect("power10 topology")
}

/// The flags v6.8 gives each level of seed 001's LPARs, by name in
/// sd_flags.h's bit order (debugfs's order) and as the bit mask that order
/// makes: `sd_init()`'s base set plus `powerpc_smt_flags()`,
/// `powerpc_shared_cache_flags()` or `powerpc_shared_proc_flags()`, and for
/// NUMA at distance 40 (> powerpc's `RECLAIM_DISTANCE` 10) only NEWIDLE,
/// SERIALIZE, OVERLAP and NUMA. Bits: NEWIDLE 1, EXEC 2, FORK 4, WAKE_AFFINE 16,
/// SHARE_CPUCAPACITY 128, SHARE_PKG_RESOURCES 512, SERIALIZE 1024,
/// ASYM_PACKING 2048, PREFER_SIBLING 4096, OVERLAP 8192, NUMA 16384.
fn v6_8_flags(level: &str, splpar_asym_pack: bool) -> (Vec<&'static str>, u32) {
    const BASE: [&str; 4] = [
        "SD_BALANCE_NEWIDLE",
        "SD_BALANCE_EXEC",
        "SD_BALANCE_FORK",
        "SD_WAKE_AFFINE",
    ];
    let asym: &[&str] = if splpar_asym_pack {
        &["SD_ASYM_PACKING"]
    } else {
        &[]
    };
    let (middle, value): (Vec<&str>, u32) = match level {
        "SMT" => (
            vec!["SD_SHARE_CPUCAPACITY", "SD_SHARE_PKG_RESOURCES"],
            1 + 2 + 4 + 16 + 128 + 512,
        ),
        "CACHE" => (
            [&["SD_SHARE_PKG_RESOURCES"][..], asym].concat(),
            1 + 2 + 4 + 16 + 512 + if splpar_asym_pack { 2048 } else { 0 },
        ),
        "MC" | "PKG" => (
            asym.to_vec(),
            1 + 2 + 4 + 16 + if splpar_asym_pack { 2048 } else { 0 },
        ),
        "NUMA" => {
            return (
                vec![
                    "SD_BALANCE_NEWIDLE",
                    "SD_SERIALIZE",
                    "SD_OVERLAP",
                    "SD_NUMA",
                ],
                1 + 1024 + 8192 + 16384,
            )
        }
        other => panic!("no {other} level on seed 001's LPARs"),
    };
    let names = [&BASE[..], &middle, &["SD_PREFER_SIBLING"]].concat();
    (names, value + 4096)
}

/// Seed 001's 768-CPU LPAR on v6.8, dedicated and shared, with and without
/// coregroups: cpu0's levels, spans, flag names and flag values as v6.8's
/// smp.c/topology.c give them (see the module comment), every CPU's flags per
/// level, and `arch_asym_cpu_priority()`'s value for every CPU.
#[test]
fn seed001_shared_processor_packs_above_smt_and_drops_mc() {
    let k = KernelVersion::V6_8;
    let node0 = "0-7,32-39,80-87,128-135,176-183,224-231,272-279,320-327,368-375,416-423,464-471,512-519,560-567,608-615,656-663,704-711,752-759";
    for coregroup in [false, true] {
        for shared in [false, true] {
            let d = domains::build(&power10_768(shared, coregroup), k).unwrap();
            let case = format!("shared={shared} coregroup={coregroup}");
            // has_coregroup_support() is false on a shared LPAR: no MC there.
            let mut expect = vec![("SMT", "0,2,4,6"), ("CACHE", "0-7")];
            if coregroup && !shared {
                expect.push(("MC", "0-7,32-39,80-87,128-135"));
            }
            expect.extend([("PKG", node0), ("NUMA", "0-767")]);
            let cpu0 = &d.cpu(0).unwrap().domains;
            let got: Vec<_> = cpu0
                .iter()
                .map(|x| (d.name(x), d.span(x).to_list_string()))
                .collect();
            let want: Vec<_> = expect.iter().map(|(n, s)| (*n, s.to_string())).collect();
            assert_eq!(got, want, "{case}");
            for c in &d.cpus {
                for x in &c.domains {
                    let (names, value) = v6_8_flags(d.name(x), shared);
                    let got: Vec<_> = k.names(x.flags).collect();
                    assert_eq!(got, names, "{case} cpu{} {}", c.cpu, d.name(x));
                    assert_eq!(k.encode(x.flags), value, "{case} cpu{}", c.cpu);
                }
            }
            // arch_asym_cpu_priority(), smp.c:1749-1755, in C's int arithmetic
            // (Rust's i32 division truncates as C's does); threads_per_core is
            // the lscpu's 8.
            for cpu in 0..768i32 {
                let v68 = if shared { -cpu / 8 } else { -cpu };
                assert_eq!(
                    d.asym_priority(cpu as u32),
                    i64::from(v68),
                    "{case} cpu{cpu}"
                );
            }
            if shared {
                asym_preferences_as_v6_8(&d);
            }
        }
    }
}

/// What the priorities make the shared LPAR do, by `sched_asym_prefer()` and
/// each group's `asym_prefer_cpu` (sched.h:828-831, topology.c:1311-1319): at
/// CACHE, cpu0's two thread groups tie, so packing never moves work between
/// a big core's thread groups; at PKG every other big core of node 0 loses
/// to cpu0's, so work packs onto the lowest-numbered big core.
fn asym_preferences_as_v6_8(d: &domains::Domains) {
    let prefer_cpu = |g: &CpuMask| {
        g.iter()
            .map(|c| c as u32)
            .fold(None, |best: Option<u32>, c| match best {
                Some(b) if d.asym_priority(c) <= d.asym_priority(b) => Some(b),
                _ => Some(c),
            })
            .unwrap()
    };
    let cpu0 = &d.cpu(0).unwrap().domains;
    let cache = d.groups(0, &cpu0[1]);
    assert_eq!(cache.len(), 2);
    let (a, b) = (prefer_cpu(&cache[0]), prefer_cpu(&cache[1]));
    assert_eq!((a, b), (0, 1), "each thread group's first CPU");
    assert_eq!(
        d.asym_priority(a),
        d.asym_priority(b),
        "no packing inside a big core"
    );
    let pkg = d.groups(0, &cpu0[2]);
    assert_eq!(pkg.len(), 17, "node 0 has 17 big cores in the seed's lscpu");
    let best = prefer_cpu(&pkg[0]);
    assert_eq!(best, 0);
    for g in &pkg[1..] {
        assert!(
            d.asym_priority(best) > d.asym_priority(prefer_cpu(g)),
            "{g:?}"
        );
    }
}

/// The `dmesg.txt` a guest capture holds.
fn guest_dmesg(path: &std::path::Path) -> String {
    let gz = flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap());
    let mut archive = tar::Archive::new(gz);
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        if entry.path().unwrap().ends_with("dmesg.txt") {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut entry, &mut text).unwrap();
            return text;
        }
    }
    panic!("{}: no dmesg.txt", path.display());
}

/// Seed 001's rules on real pseries guests (Debian's Linux 6.12 under QEMU,
/// tests/data/ppc64-*; 6.12's smp.c has the same functions as v6.8's, with
/// `SD_SHARE_PKG_RESOURCES` renamed `SD_SHARE_LLC`): QEMU writes no
/// `ibm,thread-groups`, so `has_big_cores` is false (the guests' logs have no
/// "Big cores detected" line, smp.c:1699 in v6.8) and `splpar_asym_pack`
/// stays off whatever the processor mode, and it writes no coregroup, so no
/// MC. Read as shared or as dedicated, each guest's snapshot gives exactly the
/// domains, flags and groups its kernel built, with no SD_ASYM_PACKING
/// anywhere, the `threads_per_core` the guest's kernel printed, and the plain
/// `-cpu` priority. What QEMU cannot express (big cores, coregroups, the
/// shared-processor mode itself) is listed in tests/data/README.md and is
/// checked only against the v6.8 source, above.
#[test]
fn seed001_rules_on_real_pseries_guests() {
    let data = |name: &str| {
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(name)
    };
    let config =
        domains::KernelConfig::parse(include_str!("data/linux-6.12.117+deb12-powerpc64le.config"))
            .unwrap();
    let options = domains::Options {
        config,
        ..Default::default()
    };
    for machine in ["ppc64-1s2c8t-2n", "ppc64-2s2c4t-2n", "ppc64-4s1c4t-4n"] {
        let topo = readers::sysfs::read_path(&data(&format!("{machine}-sysfs.tar.gz"))).unwrap();
        assert!(matches!(topo.arch(), Arch::PowerPc64), "{machine}");
        let dump =
            domains::compare::Dump::read(&data(&format!("{machine}-domains.tar.gz"))).unwrap();
        assert!(
            !dump
                .files
                .iter()
                .any(|(_, v)| v.contains("SD_ASYM_PACKING")),
            "{machine}: the guest packs nothing"
        );
        let dmesg = guest_dmesg(&data(&format!("{machine}-domains.tar.gz")));
        assert!(!dmesg.contains("Big cores detected"), "{machine}");
        let tpc: u32 = dmesg
            .split("CPU maps initialized for ")
            .nth(1)
            .and_then(|t| t.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{machine}: no threads_per_core line"));
        for shared in [false, true] {
            let mut b = TopologyBuilder::from_topology(&topo);
            b.shared_processor(shared);
            let topo = b.finish().unwrap();
            let d = domains::build_with(&topo, KernelVersion::V6_12, &options).unwrap();
            assert_same_as_dump(&format!("{machine} shared={shared}"), &d, &dump);
            assert!(d.levels.iter().all(|l| l.name != "MC" && l.name != "CACHE"));
            assert_eq!(d.rules.threads_per_core, tpc, "{machine}");
            assert!(!d.rules.splpar_asym_pack, "{machine}");
            for cpu in 0..16 {
                assert_eq!(d.asym_priority(cpu), -i64::from(cpu), "{machine}");
            }
        }
    }
}
