//! POWER truth from the seeds.
//!
//! Seed 000 prints, for the POWER9 2-node 128-CPU PowerVM LPAR on v5.9, cpu0's
//! domains SMT 2391, CACHE 2327, DIE 2071, NUMA 12801, and after
//! `ppc64_cpu --smt=1` DIE 2071, NUMA 12801. Seed 001 describes shared-processor
//! POWER10 LPARs: asym packing onto fewer big cores and no MC level.
//!
//! Seed 001's rules, as Linux v6.8's arch/powerpc/kernel/smp.c writes them (the
//! series merged by the seed's 8fc63a91e785, "Merge branch 'smp-topo' into
//! next"; the same functions, with SD_SHARE_PKG_RESOURCES renamed SD_SHARE_LLC,
//! are in the 6.12 kernels of the guest captures):
//!
//! - `build_sched_topology()`: `if (is_shared_processor() && has_big_cores)
//!   static_branch_enable(&splpar_asym_pack);` then the table SMT
//!   (`smallcore_smt_mask` when `has_big_cores`), CACHE (`shared_cache_mask`,
//!   only `if (shared_caches)`), MC (`cpu_mc_mask`, only
//!   `if (has_coregroup_support())`), PKG (`cpu_cpu_mask`).
//! - `has_coregroup_support()`: `if (is_shared_processor()) return 0;` ("Coregroup
//!   identification not available on shared systems"), else `coregroup_enabled`.
//! - `powerpc_shared_cache_flags()` (CACHE): `SD_SHARE_PKG_RESOURCES |
//!   SD_ASYM_PACKING` under `splpar_asym_pack`, else `SD_SHARE_PKG_RESOURCES`.
//! - `powerpc_shared_proc_flags()` (MC and PKG): `SD_ASYM_PACKING` under
//!   `splpar_asym_pack`, else 0.
//! - `powerpc_smt_flags()` (SMT): `SD_SHARE_CPUCAPACITY | SD_SHARE_PKG_RESOURCES`,
//!   plus `SD_ASYM_PACKING` only with `CPU_FTR_ASYM_SMT` (POWER7), never
//!   `splpar_asym_pack`: packing never moves work between a big core's threads.
//! - `arch_asym_cpu_priority(cpu)`: `-cpu / threads_per_core` under
//!   `splpar_asym_pack`, else `-cpu`.
//!
//! Line numbers are not cited: no v6.8 tree with line numbering was reachable
//! from here; the text above was read from a 6.8-based tree (Ubuntu noble's, as
//! carried by NVIDIA/NV-Kernels c7c0657a) and the series' own patches.

use cpumask::CpuMask;
use domains::{Flag, KernelVersion};
use topology::{Arch, Cache, CacheKind, CpuSpec, Topology, TopologyBuilder};

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
            cpus: m,
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
                let expect = shared && matches!(d.name(x), "CACHE" | "MC" | "PKG");
                assert_eq!(
                    x.flags.contains(Flag::AsymPacking),
                    expect,
                    "cpu{} {}",
                    c.cpu,
                    d.name(x)
                );
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

#[test]
fn seed001_shared_processor_packs_above_smt_and_drops_mc() {
    let k = KernelVersion::V6_8;
    for coregroup in [false, true] {
        let dedicated = domains::build(&power10_768(false, coregroup), k).unwrap();
        let shared = domains::build(&power10_768(true, coregroup), k).unwrap();
        let names = |d: &domains::Domains| -> Vec<&str> {
            d.cpu(0)
                .unwrap()
                .domains
                .iter()
                .map(|x| d.name(x))
                .collect()
        };
        let levels =
            |d: &domains::Domains| -> Vec<&str> { d.levels.iter().map(|l| l.name).collect() };
        assert_eq!(levels(&dedicated).contains(&"MC"), coregroup);
        assert!(!levels(&shared).contains(&"MC"), "no MC on a shared LPAR");
        assert_eq!(names(&shared), ["SMT", "CACHE", "PKG", "NUMA"]);
        for d in &dedicated.cpus {
            assert!(d
                .domains
                .iter()
                .all(|x| !x.flags.contains(Flag::AsymPacking)));
        }
        for c in &shared.cpus {
            for x in &c.domains {
                let expect = matches!(shared.name(x), "CACHE" | "PKG");
                assert_eq!(
                    x.flags.contains(Flag::AsymPacking),
                    expect,
                    "cpu{} {}",
                    c.cpu,
                    shared.name(x)
                );
            }
        }
        // arch_asym_cpu_priority(): -cpu / threads_per_core (8: the big core)
        // on the shared LPAR, -cpu on the dedicated one.
        for cpu in [0u32, 1, 7, 8, 9, 15, 16, 767] {
            assert_eq!(shared.asym_priority(cpu), -i64::from(cpu / 8), "cpu{cpu}");
            assert_eq!(dedicated.asym_priority(cpu), -i64::from(cpu), "cpu{cpu}");
        }
    }
}

/// Seed 001's rules on real pseries guests (Debian's Linux 6.12 under QEMU,
/// tests/data/ppc64-*): QEMU writes no `ibm,thread-groups`, so `has_big_cores`
/// is false and `splpar_asym_pack` stays off whatever the processor mode, and
/// it writes no coregroup, so no MC. Read as shared or as dedicated, each
/// guest's snapshot gives exactly the domains, flags and groups its kernel
/// built, with no SD_ASYM_PACKING anywhere and the plain `-cpu` priority.
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
        for shared in [false, true] {
            let mut b = TopologyBuilder::from_topology(&topo);
            b.shared_processor(shared);
            let topo = b.finish().unwrap();
            let d = domains::build_with(&topo, KernelVersion::V6_12, &options).unwrap();
            let diffs = domains::compare::compare(&d, &dump);
            assert!(diffs.is_empty(), "{machine} shared={shared}: {diffs:#?}");
            assert!(d.levels.iter().all(|l| l.name != "MC" && l.name != "CACHE"));
            assert_eq!(d.asym_priority(9), -9, "{machine}: no splpar_asym_pack");
        }
    }
}
