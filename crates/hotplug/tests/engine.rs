//! Mask engine behaviour on regular machines whose masks follow from their shape.

use hotplug::{Algo, HotplugError, MaskEngine, MaskLevel};
use topology::{Arch, Numbering, Shape};

const ALGOS: [Algo; 2] = [Algo::Naive, Algo::Scoped];

fn online_all(engine: &mut MaskEngine) {
    let cpus: Vec<usize> = engine.present().iter().collect();
    for cpu in cpus {
        if cpu != engine.boot_cpu() {
            engine.online(cpu).unwrap();
        }
    }
}

/// 2 packages × 2 nodes × 4 cores × SMT4, siblings adjacent: every mask is a
/// contiguous range computable by hand.
#[test]
fn masks_follow_the_shape() {
    let mut shape = Shape::simple(Arch::PowerPc64, 2, 4, 4);
    shape.nodes_per_package = 2;
    let topo = shape.build().unwrap();
    for algo in ALGOS {
        let mut e = MaskEngine::new(&topo, algo).unwrap();
        online_all(&mut e);
        assert_eq!(e.online_mask().to_list_string(), "0-31");
        for cpu in 0..32 {
            let core = cpu / 4;
            let node = cpu / 8;
            let pkg = cpu / 16;
            // (level, index of the CPU's group, CPUs per group); the shape
            // gives each core its own L2 and each package an L3.
            for (level, a, n) in [
                (MaskLevel::Smt, core, 4),
                (MaskLevel::L2, core, 4),
                (MaskLevel::Coregroup, core, 4),
                (MaskLevel::Node, node, 8),
                (MaskLevel::Package, pkg, 16),
                (MaskLevel::Llc, pkg, 16),
            ] {
                assert_eq!(
                    e.masks(cpu, level).to_list_string(),
                    format!("{}-{}", a * n, a * n + n - 1),
                    "cpu {cpu} {level:?}"
                );
            }
        }
        e.verify().unwrap();
    }
}

/// x86 numbering (all first threads, then all second threads): siblings are
/// far apart, so masks are not ranges.
#[test]
fn interleaved_siblings() {
    let mut shape = Shape::simple(Arch::X86_64, 2, 4, 2);
    shape.numbering = Numbering::ThreadsLast;
    let topo = shape.build().unwrap();
    for algo in ALGOS {
        let mut e = MaskEngine::new(&topo, algo).unwrap();
        online_all(&mut e);
        assert_eq!(e.masks(3, MaskLevel::Smt).to_list_string(), "3,11");
        assert_eq!(e.masks(11, MaskLevel::Package).to_list_string(), "0-3,8-11");
        e.offline(8).unwrap();
        assert_eq!(e.masks(11, MaskLevel::Package).to_list_string(), "0-3,9-11");
        assert_eq!(e.masks(0, MaskLevel::Smt).to_list_string(), "0");
        assert!(e.masks(8, MaskLevel::Node).is_empty());
        e.verify().unwrap();
    }
}

#[test]
fn refusals_leave_state_unchanged() {
    let topo = Shape::simple(Arch::PowerPc64, 1, 2, 2).build().unwrap();
    for algo in ALGOS {
        let mut e = MaskEngine::new(&topo, algo).unwrap();
        assert_eq!(e.boot_cpu(), 0);
        e.online(2).unwrap();
        let before = e.clone();
        let same = |a: &MaskEngine, b: &MaskEngine| {
            a.online_mask() == b.online_mask()
                && (0..4).all(|c| {
                    MaskLevel::ALL
                        .iter()
                        .all(|&l| a.masks(c, l) == b.masks(c, l))
                })
        };
        assert_eq!(e.offline(0), Err(HotplugError::BootCpu(0)));
        assert_eq!(e.online(2), Err(HotplugError::AlreadyOnline(2)));
        assert_eq!(e.offline(1), Err(HotplugError::AlreadyOffline(1)));
        assert_eq!(e.online(4), Err(HotplugError::UnknownCpu(4)));
        assert_eq!(e.online(16383), Err(HotplugError::UnknownCpu(16383)));
        assert_eq!(
            e.online(usize::MAX),
            Err(HotplugError::UnknownCpu(usize::MAX))
        );
        assert!(same(&e, &before));
        // With the boot CPU allowed to go, the last online CPU still cannot.
        e.allow_boot_cpu_offline(true);
        e.offline(0).unwrap();
        assert_eq!(e.offline(2), Err(HotplugError::LastOnline(2)));
        assert_eq!(e.online_mask().to_list_string(), "2");
        e.verify().unwrap();
        assert_eq!(
            HotplugError::LastOnline(2).to_string(),
            "CPU 2 is the last online CPU and cannot go offline"
        );
    }
}

/// Scoped consolidates levels with identical groups; naive keeps them apart.
#[test]
fn consolidation() {
    let topo = Shape::simple(Arch::PowerPc64, 4, 8, 8).build().unwrap();
    let naive = MaskEngine::new(&topo, Algo::Naive).unwrap();
    let scoped = MaskEngine::new(&topo, Algo::Scoped).unwrap();
    // No coregroups: MC uses the L2 mask under both (Linux fixup_topology).
    assert_eq!(naive.consolidated_into(MaskLevel::Coregroup), MaskLevel::L2);
    assert_eq!(
        naive.consolidated_into(MaskLevel::Package),
        MaskLevel::Package
    );
    // One node per package and an L3 per package; an L2 per SMT core.
    assert_eq!(
        scoped.consolidated_into(MaskLevel::Package),
        MaskLevel::Node
    );
    assert_eq!(scoped.consolidated_into(MaskLevel::Llc), MaskLevel::Node);
    // L2 and MC equal the SMT siblings: kept through the CPU node's thread list.
    assert_eq!(scoped.consolidated_into(MaskLevel::L2), MaskLevel::Smt);
    assert_eq!(
        scoped.consolidated_into(MaskLevel::Coregroup),
        MaskLevel::Smt
    );
    assert_eq!(scoped.update_order(), &[MaskLevel::Node, MaskLevel::Smt]);
}

/// The naive algorithm's firmware work grows with the online CPUs; the scoped
/// one's does not.
#[test]
fn work_growth() {
    let topo = Shape::simple(Arch::PowerPc64, 4, 8, 8).build().unwrap(); // 256
    let mut last = [0u64; 2];
    for (k, algo) in ALGOS.into_iter().enumerate() {
        let mut e = MaskEngine::new(&topo, algo).unwrap();
        let mut first = 0;
        for cpu in 1..256 {
            let w = e.online(cpu).unwrap().total();
            if cpu == 1 {
                first = w.fdt_nodes_visited + w.property_lookups;
            }
            last[k] = w.fdt_nodes_visited + w.property_lookups;
        }
        if algo == Algo::Naive {
            assert!(last[k] > 100 * first, "naive {first} -> {}", last[k]);
        } else {
            assert!(last[k] <= first, "scoped {first} -> {}", last[k]);
        }
    }
    assert!(last[0] > 1000 * last[1]);
}

/// Seed 000's 2-node POWER9 LPAR (catalogue): SMT8 big cores made of two SMT4
/// thread groups (even / odd threads) sharing an L2 and L3; node = socket.
/// After `ppc64_cpu --smt=1` only thread 0 of each core is online, and the
/// seed shows the SMT and CACHE domains gone: every SMT and L2 mask is a
/// single CPU while the node masks keep one CPU per core.
#[test]
fn power9_lpar_smt_modes() {
    let topo = readers::catalogue::machine("power9-lpar-128")
        .expect("catalogue machine power9-lpar-128 (seed 000's POWER9 LPAR)");
    for algo in ALGOS {
        let mut e = MaskEngine::new(&topo, algo).unwrap();
        online_all(&mut e);
        assert_eq!(e.masks(0, MaskLevel::Smt).to_list_string(), "0,2,4,6");
        assert_eq!(e.masks(13, MaskLevel::Smt).to_list_string(), "9,11,13,15");
        assert_eq!(e.masks(13, MaskLevel::L2).to_list_string(), "8-15");
        assert_eq!(e.masks(13, MaskLevel::Llc).to_list_string(), "8-15");
        assert_eq!(e.masks(70, MaskLevel::Node).to_list_string(), "64-127");
        assert_eq!(e.masks(70, MaskLevel::Package).to_list_string(), "64-127");
        // ppc64_cpu --smt=1
        for cpu in (0..128).filter(|c| c % 8 != 0) {
            e.offline(cpu).unwrap();
        }
        for cpu in (0..128).step_by(8) {
            assert_eq!(e.masks(cpu, MaskLevel::Smt).weight(), 1);
            assert_eq!(e.masks(cpu, MaskLevel::L2).weight(), 1);
        }
        assert_eq!(
            e.masks(64, MaskLevel::Node).to_list_string(),
            "64,72,80,88,96,104,112,120"
        );
        e.verify().unwrap();
        if algo == Algo::Scoped {
            // L2 and L3 are both per big core: one stored mask for the two.
            assert_eq!(
                e.consolidated_into(MaskLevel::L2),
                e.consolidated_into(MaskLevel::Llc)
            );
            assert_eq!(e.consolidated_into(MaskLevel::Package), MaskLevel::Node);
            assert_eq!(e.consolidated_into(MaskLevel::Smt), MaskLevel::Smt);
        }
    }
}
