//! The mask engine on an x86 description (`MaskEngine::for_x86`): per-CPU
//! ids from CPUID and ACPI, no firmware tree. Its masks after every CPU came
//! online (in any order) are the groups of equal ids, computed here by brute
//! force; it takes machines the device-tree engine refuses (SMT siblings on
//! different nodes, an L2 per thread); and on a machine both describe, both
//! give the same masks.

use cpumask::CpuMask;
use hotplug::{Algo, MaskEngine, MaskLevel, X86Cpu, X86Description};
use proptest::prelude::*;
use topology::{Arch, Shape};

/// The CPUs whose `id` equals `cpu`'s: the mask Linux's x86 code links
/// (`match_smt`, `match_l2c`, `match_llc`, ...).
fn brute(cpus: &[X86Cpu], cpu: usize, id: impl Fn(&X86Cpu) -> (u32, Option<u32>)) -> CpuMask {
    let me = cpus.iter().find(|c| c.cpu as usize == cpu).unwrap();
    let key = |c: &X86Cpu| match id(c) {
        (_, Some(v)) => (1, v),
        (core, None) => (0, core),
    };
    cpus.iter()
        .filter(|c| key(c) == key(me))
        .map(|c| c.cpu as usize)
        .collect()
}

fn check(cpus: &[X86Cpu], order: &[usize], algo: Algo) {
    let boot = cpus[0].cpu as usize;
    let mut e = MaskEngine::for_x86(X86Description::new(cpus.iter().copied()), boot, algo).unwrap();
    for &i in order {
        let cpu = cpus[i].cpu as usize;
        if cpu != boot {
            e.online(cpu).unwrap();
        }
    }
    e.verify().unwrap();
    for c in cpus {
        let cpu = c.cpu as usize;
        let want = [
            (MaskLevel::Smt, brute(cpus, cpu, |c| (c.core, None))),
            (MaskLevel::L2, brute(cpus, cpu, |c| (c.core, c.l2))),
            (MaskLevel::Coregroup, brute(cpus, cpu, |c| (c.core, c.l2))),
            (
                MaskLevel::Package,
                brute(cpus, cpu, |c| (0, Some(c.package))),
            ),
            (MaskLevel::Node, brute(cpus, cpu, |c| (0, Some(c.node)))),
            (MaskLevel::Llc, brute(cpus, cpu, |c| (c.core, c.llc))),
        ];
        for (level, mask) in want {
            assert_eq!(*e.masks(cpu, level), mask, "{algo:?} cpu {cpu} {level:?}");
        }
    }
}

/// 2 packages x 4 cores x 2 threads, APIC id = package << 3 | core << 1 |
/// thread, an L2 per thread (AMD's legacy leaves) and an L3 per package, and
/// the two threads of core 1 on different nodes: the device-tree engine
/// cannot express either.
fn awkward() -> Vec<X86Cpu> {
    (0..16u32)
        .map(|apic| X86Cpu {
            cpu: apic,
            core: apic >> 1,
            package: apic >> 3,
            node: if apic == 3 { 1 } else { apic >> 3 },
            l2: None,
            llc: Some(apic >> 3),
        })
        .collect()
}

#[test]
fn machines_the_device_tree_engine_refuses() {
    let cpus = awkward();
    let order: Vec<usize> = (0..cpus.len()).collect();
    for algo in [Algo::Naive, Algo::Scoped] {
        check(&cpus, &order, algo);
    }
}

#[test]
fn same_masks_as_the_device_tree_engine_where_both_apply() {
    // 2 packages x 4 cores x 2 threads, one node per package, L2 per core
    // and L3 per package (Shape's caches), siblings adjacent.
    let topo = Shape::simple(Arch::X86_64, 2, 4, 2).build().unwrap();
    let cpus: Vec<X86Cpu> = (0..16u32)
        .map(|cpu| X86Cpu {
            cpu,
            core: cpu >> 1,
            package: cpu >> 3,
            node: cpu >> 3,
            l2: Some(cpu >> 1),
            llc: Some(cpu >> 3),
        })
        .collect();
    for algo in [Algo::Naive, Algo::Scoped] {
        let mut tree = MaskEngine::new(&topo, algo).unwrap();
        let mut x86 = MaskEngine::for_x86(X86Description::new(cpus.clone()), 0, algo).unwrap();
        for cpu in 1..16 {
            tree.online(cpu).unwrap();
            x86.online(cpu).unwrap();
        }
        for cpu in 0..16 {
            for level in MaskLevel::ALL {
                assert_eq!(
                    x86.masks(cpu, level),
                    tree.masks(cpu, level),
                    "{algo:?} {cpu} {level:?}"
                );
            }
        }
        assert!(x86.firmware().is_none() && tree.firmware().is_some());
    }
}

#[test]
fn a_boot_cpu_that_is_not_present_is_refused() {
    let cpus = awkward();
    assert!(MaskEngine::for_x86(X86Description::new(cpus), 99, Algo::Scoped).is_err());
}

proptest! {
    /// Random machines (ids drawn from small ranges so groups form), random
    /// online order: the masks are the groups of equal ids.
    #[test]
    fn random_machines_any_order(
        raw in prop::collection::vec((0u32..6, 0u32..3, 0u32..3, prop::option::of(0u32..4), prop::option::of(0u32..3)), 1..40),
        seed in any::<u64>(),
        scoped in any::<bool>(),
    ) {
        let cpus: Vec<X86Cpu> = raw
            .iter()
            .enumerate()
            .map(|(i, &(core, package, node, l2, llc))| X86Cpu { cpu: i as u32, core, package, node, l2, llc })
            .collect();
        let mut order: Vec<usize> = (0..cpus.len()).collect();
        let mut s = seed;
        for i in (1..order.len()).rev() {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            order.swap(i, (s >> 33) as usize % (i + 1));
        }
        check(&cpus, &order, if scoped { Algo::Scoped } else { Algo::Naive });
    }
}
