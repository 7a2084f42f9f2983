//! Thousands of random online/offline events on regular, catalogue and real
//! (corpus) machines: after every event, both algorithms' incremental masks
//! must equal a from-scratch rebuild from the topology model, and refused
//! events must change nothing.

use std::path::PathBuf;
use std::sync::OnceLock;

use hotplug::{Algo, HotplugError, MaskEngine, MaskLevel};
use proptest::prelude::*;
use topology::{Arch, Numbering, Shape, Topology};

fn corpus() -> PathBuf {
    readers::corpus::dir(env!("CARGO_MANIFEST_DIR"))
}

/// Irregular real machines: offline CPUs, sparse numbering, memory-only and
/// GPU nodes, asymmetric caches, CPU-less nodes, hybrid cores, s390 books.
const CORPUS: &[&str] = &[
    "hwloc/tests/hwloc/linux/nvidiagpunumanodes.tar.bz2",
    "hwloc/tests/hwloc/linux/16em64t-4s2c2t-offlines.tar.bz2",
    "hwloc/tests/hwloc/linux/48amd64-4pa2n6c-sparse.tar.bz2",
    "hwloc/tests/hwloc/linux/128ia64-17n4s2c.tar.bz2",
    "hwloc/tests/hwloc/linux/64amd64-4s2n4ca2co.tar.bz2",
    "hwloc/tests/hwloc/linux/8em64t-2s4c-asymcaches.tar.bz2",
    "hwloc/tests/hwloc/linux/memorysidecaches.tar.bz2",
    "hwloc/tests/hwloc/linux/20em64t-hybrid-1p6c2t+2ca4co1t.tar.bz2",
    "hwloc/tests/hwloc/linux/20s390-2g6s4c.tar.bz2",
    "hwloc/tests/hwloc/linux/fakecpuid1f-64intel64-2p4d2n2c2t.tar.bz2",
    "hwloc/tests/hwloc/linux/nvidia-dgx-gb10.tar.bz2",
    "util-linux/tests/ts/lscpu/dumps/ppc64-POWER7.tar.gz",
    "util-linux/tests/ts/lscpu/dumps/x86_64-64cpu.tar.gz",
    "util-linux/tests/ts/lscpu/dumps/rv64-milkvpioneer.tar.gz",
];

fn machines() -> &'static Vec<(String, Topology)> {
    static MACHINES: OnceLock<Vec<(String, Topology)>> = OnceLock::new();
    MACHINES.get_or_init(|| {
        let mut list = Vec::new();
        let mut shape = Shape::simple(Arch::PowerPc64, 2, 4, 4);
        shape.nodes_per_package = 2;
        list.push(("shape 2x2nodes x4x4".into(), shape.build().unwrap()));
        let mut shape = Shape::simple(Arch::X86_64, 2, 3, 2);
        shape.numbering = Numbering::ThreadsLast;
        shape.dies = 2;
        list.push(("shape x86 threads-last dies".into(), shape.build().unwrap()));
        let mut shape = Shape::simple(Arch::Arm64, 1, 4, 1);
        shape.clusters = 4;
        list.push(("shape arm64 clusters".into(), shape.build().unwrap()));
        for name in [
            "power9-lpar-128",
            "x86-2s-32ht",
            "arm64-d06",
            "power10-shared-320",
        ] {
            let topo = readers::catalogue::machine(name)
                .unwrap_or_else(|e| panic!("catalogue machine {name}: {e}"));
            list.push((format!("catalogue {name}"), topo));
        }
        // Every corpus machine must load and be accepted by the engine (all
        // do today): one that drops out would silently shrink the test.
        let what = format!(
            "online/offline events on {} corpus machines (the 7 others still run)",
            CORPUS.len()
        );
        if !readers::corpus::present(&corpus(), &what) {
            assert_eq!(list.len(), 3 + 4);
            return list;
        }
        let mut failures = Vec::new();
        for rel in CORPUS {
            let path = corpus().join(rel);
            let loaded = readers::sysfs::read_path(&path)
                .map_err(|e| format!("read: {e}"))
                .and_then(|t| {
                    MaskEngine::new(&t, Algo::Scoped)
                        .map(|_| t)
                        .map_err(|e| format!("engine refuses it: {e}"))
                });
            match loaded {
                Ok(t) => list.push((format!("corpus {rel}"), t)),
                Err(e) => failures.push(format!("{rel}: {e}")),
            }
        }
        assert!(
            failures.is_empty(),
            "corpus machines failing: {failures:#?}"
        );
        assert_eq!(list.len(), 3 + 4 + CORPUS.len());
        list
    })
}

fn snapshot(e: &MaskEngine) -> Vec<cpumask::CpuMask> {
    let mut v = vec![*e.online_mask()];
    for cpu in e.present().iter() {
        for level in MaskLevel::ALL {
            v.push(*e.masks(cpu, level));
        }
    }
    v
}

/// Applies one event to an engine and checks the outcome against the rules.
fn apply(
    e: &mut MaskEngine,
    cpu: usize,
    online: bool,
    boot_may_go: bool,
) -> Result<(), TestCaseError> {
    let before = snapshot(e);
    let was_online = e.online_mask().contains(cpu);
    let known = e.present().contains(cpu);
    let result = if online {
        e.online(cpu)
    } else {
        e.offline(cpu)
    };
    match result {
        Ok(_) => {
            prop_assert!(known);
            prop_assert_eq!(was_online, !online);
            prop_assert_eq!(e.online_mask().contains(cpu), online);
        }
        Err(err) => {
            let expected = if !known {
                HotplugError::UnknownCpu(cpu)
            } else if online {
                HotplugError::AlreadyOnline(cpu)
            } else if !was_online {
                HotplugError::AlreadyOffline(cpu)
            } else if cpu == e.boot_cpu() && !boot_may_go {
                HotplugError::BootCpu(cpu)
            } else {
                HotplugError::LastOnline(cpu)
            };
            prop_assert_eq!(err, expected);
            prop_assert!(snapshot(e) == before, "refused event changed state");
        }
    }
    if let Err(m) = e.verify() {
        return Err(TestCaseError::fail(format!("{:?}: {m}", e.algo())));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn incremental_masks_equal_rebuild(
        which in any::<prop::sample::Index>(),
        boot_may_go in any::<bool>(),
        events in prop::collection::vec((any::<bool>(), any::<prop::sample::Index>(), 0u8..20), 1..250),
    ) {
        let (name, topo) = which.get(machines());
        let mut engines: Vec<MaskEngine> = [Algo::Naive, Algo::Scoped]
            .into_iter()
            .map(|a| MaskEngine::new(topo, a).unwrap())
            .collect();
        let present: Vec<usize> = engines[0].present().iter().collect();
        for e in &mut engines {
            e.allow_boot_cpu_offline(boot_may_go);
            e.verify().map_err(|m| TestCaseError::fail(format!("{name}: {m}")))?;
        }
        for (online, pick, special) in events {
            // Mostly real CPUs; sometimes CPU numbers that are not present.
            let cpu = match special {
                0 => topo.possible().last().unwrap_or(0) + 1 + pick.index(100),
                1 => topology::MAX_CPUS + pick.index(10),
                _ => *pick.get(&present),
            };
            for e in &mut engines {
                apply(e, cpu, online, boot_may_go).map_err(|err| TestCaseError::fail(format!("{name}: {err}")))?;
            }
            prop_assert_eq!(engines[0].online_mask(), engines[1].online_mask());
        }
    }
}

/// Every machine, every CPU online then offline again in a fixed pattern.
#[test]
fn full_cycle_on_every_machine() {
    for (name, topo) in machines() {
        for algo in [Algo::Naive, Algo::Scoped] {
            let mut e = MaskEngine::new(topo, algo).unwrap();
            let cpus: Vec<usize> = e.present().iter().filter(|&c| c != e.boot_cpu()).collect();
            for &c in &cpus {
                e.online(c).unwrap();
            }
            e.verify()
                .unwrap_or_else(|m| panic!("{name} {algo:?} all online: {m}"));
            for &c in cpus.iter().step_by(3) {
                e.offline(c).unwrap();
            }
            e.verify()
                .unwrap_or_else(|m| panic!("{name} {algo:?} after offlines: {m}"));
            for &c in cpus.iter().step_by(3) {
                e.online(c).unwrap();
            }
            e.verify()
                .unwrap_or_else(|m| panic!("{name} {algo:?} back online: {m}"));
        }
    }
}
