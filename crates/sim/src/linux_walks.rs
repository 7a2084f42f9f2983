//! Seed 000's device-tree walks counted call by call, as the Linux code the seed
//! patched makes them, for the two kinds of firmware the seed's machines ran on.
//!
//! Why this exists next to [`crate::masks`]: crates/hotplug's `Algo::Naive` is a
//! generic "scan every online CPU at every level, asking the firmware tree"
//! algorithm. It walks `/cpus` once per (new CPU, online CPU, level) for five
//! levels on every machine. Linux v5.9's `add_cpu_to_masks()`
//! (arch/powerpc/kernel/smp.c) does less, and how much less depends on the
//! firmware:
//!
//! - `update_mask_by_l2()`: one `cpu_to_l2cache()` (an `of_get_cpu_node()` walk)
//!   for the new CPU; **only if its node has an `l2-cache` phandle**, one more
//!   walk per online CPU.
//! - `cpu_core_mask`: `get_physical_package_id()` for the new CPU and for every
//!   online CPU. It calls `cpu_to_chip_id()` (one walk, then `ibm,chip-id` read
//!   up the parents); when that is -1 on an LPAR it walks **again** for
//!   `of_node_to_nid()`. So two walks per online CPU without `ibm,chip-id`, one
//!   with it.
//! - Node, LLC and coregroup masks are not found by walking (node masks come
//!   from `numa_cpu_lookup_table`). The coregroup loop of the powerpc/next base
//!   runs only when `coregroup_enabled` (set in `find_possible_nodes()` when
//!   `ibm,max-associativity-domains` has more than primary-domain-index + 2
//!   cells, a POWER10 PowerVM feature). On the guest it would fall back to
//!   `cpu_to_core_id()`, one more walk per online CPU, and survive patch 02: the
//!   guest's 6 s "after" rules it out, so it is counted on neither machine.
//!
//! After the series (v5.10): `cpu_core_mask` is no longer updated ("Stop
//! updating cpu_core_mask"), and `update_mask_by_l2()` walks once for the new
//! CPU and, with an `l2-cache` phandle, once per *other L2 group* with online
//! CPUs in the new CPU's node ("Limit CPUs traversed to within a node",
//! "Optimize update_mask_by_l2").
//!
//! Firmware facts ([`Firmware`]):
//! - PowerVM (seed 000's 1024-CPU POWER8 LPAR, "Hypervisor vendor: pHyp"): CPU
//!   nodes carry `l2-cache` phandles and no `ibm,chip-id` (the removed
//!   `get_physical_package_id()` exists precisely because of that: "If the
//!   platform is PowerNV or Guest on KVM, ibm,chip-id is defined").
//! - KVM guest (seed 000's 4096-CPU machine: patch 02/11 of the series says
//!   "Anton Blanchard reported that his 4096 vcpu KVM guest took around 30
//!   minutes to boot"): QEMU's pseries machine writes `ibm,chip-id` into every
//!   CPU node (`spapr_populate_cpu_dt`) and no cache nodes or `l2-cache`
//!   phandles.
//!
//! # What the counts say (`manycore validate` prints them)
//!
//! | machine | before (v5.9) | after (v5.10) |
//! |---|---|---|
//! | 1024-CPU PowerVM LPAR, measured | 233.0 s | 3.71 s |
//! | its `/cpus` children visited | 67 996 413 | 291 839 |
//! | 4096-vCPU KVM guest, measured | ~1800 s | 6 s |
//! | its `/cpus` children visited | 2 870 655 998 | 2 099 199 |
//!
//! Two prices fitted on the LPAR alone (two runs, two unknowns): 3.39 µs per
//! visit and 2.66 ms per CPU for everything else. They predict the guest at
//! 9 733 s (+441 %) and 18.0 s (+200 %). Counting the walks the way Linux makes
//! them cuts the naive miss (the generic engine's +1484 %) by 3×, because the
//! guest makes one walk per online CPU where the LPAR makes three; what is left
//! is price, not count: the guest's own two figures imply 0.63 µs per visit and
//! 1.14 ms per CPU. A visit runs the same code on both machines (take
//! `devtree_lock`, compare property names along the node's list to `device_type`
//! and `ibm,ppc-interrupt-server#s`, compare the 8 or 4 thread ids), so its price
//! depends on the node's property list, the host CPU, the hypervisor and where
//! the tree sits in memory (node 0 of 16 on the LPAR, every AP but node 0's
//! reaching it remotely) — none of which the seed states.
//!
//! One more PowerVM-only cost the counts leave out: each `cpu_to_l2cache()`
//! resolves the `l2-cache` phandle with `of_find_node_by_phandle()`, whose cache
//! (v5.9) is 128 slots indexed by `hash_32(phandle, 7)`; phandles sharing a slot
//! evict each other, and a miss scans every node of the tree. With the LPAR's
//! 128 L2 phandles, 26–70 of them share a slot whether the phandles are
//! consecutive or spaced by 2 (81 for random values), so each pass of the v5.9 L2
//! loop takes dozens of whole-tree scans. The guest (no cache phandles) takes
//! none. How long a scan is depends on the LPAR's tree, which the seed does not
//! give; whatever it costs is folded into the fitted price per visit, which makes
//! that price an upper bound for the guest, not a transferable constant.
//!
//! Sensitivity, by hand (not in the table): if PowerVM interleaved each core's
//! `l2-cache` and `l3-cache` nodes between the CPU nodes of `/cpus` (unverified;
//! here they follow the CPU nodes), every LPAR walk would visit 3c + 1 children
//! instead of c + 1, the fit would give 1.15 µs per visit and 2.65 ms per CPU,
//! and the guest would be predicted at ~3 300 s (+83 %) and 13.3 s (+121 %):
//! still outside 25 %.
//!
//! Every walk's length is measured on the real firmware tree crates/hotplug
//! builds (`FirmwareTree::of_get_cpu_node`, which visits `/cpus` children in
//! order, as Linux's `for_each_of_cpu_node` does); the call pattern above only
//! decides how many walks of each length are made. `replay_matches_bookkeeping`
//! replays every call on the tree and checks the totals.

use serde::Serialize;
use topology::{LevelKind, Topology};

use crate::machines::SeedMachine;
use crate::SimError;

/// The firmware a powerpc machine boots on, as far as seed 000's walks care.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Firmware {
    /// PowerVM (pHyp) LPAR: `l2-cache` phandles, no `ibm,chip-id`.
    PowerVm,
    /// KVM guest under QEMU's pseries machine: `ibm,chip-id`, no cache nodes.
    KvmGuest,
    /// PowerNV (bare metal under OPAL): skiboot writes both `ibm,chip-id` and
    /// an `l2-cache` phandle into every CPU node (hdata/pcia.c).
    PowerNv,
}

impl Firmware {
    /// Walks per `get_physical_package_id()` call (v5.9).
    fn package_walks(self) -> u64 {
        match self {
            Firmware::PowerVm => 2,
            Firmware::KvmGuest | Firmware::PowerNv => 1,
        }
    }

    /// Whether CPU nodes point to an L2 cache node.
    fn has_l2_node(self) -> bool {
        matches!(self, Firmware::PowerVm | Firmware::PowerNv)
    }
}

/// Which side of the series.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Kernel {
    /// powerpc/next of September 2020 (v5.9-rc2 base): the seed's "before".
    V5_9,
    /// With the series (merged for v5.10): the seed's "after".
    V5_10,
    /// Linux 6.1 and later: 5.10's walks, and the boot CPU spins on the
    /// AP's call-in instead of polling it ([`crate::costs::PPC_CALLIN_POLL_NS`]).
    V6_1,
}

/// Device-tree work of a whole bring-up (every secondary CPU onlined in order).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Walks {
    /// `of_get_cpu_node()` calls.
    pub walks: u64,
    /// `/cpus` children visited by those calls.
    pub visits: u64,
}

/// `/cpus` children one `of_get_cpu_node(cpu)` visits, for every CPU (0 for CPUs
/// without a node), measured on the real tree.
fn walk_lengths(tree: &hotplug::FirmwareTree, nr: usize) -> Vec<u64> {
    (0..nr)
        .map(|cpu| {
            let mut w = hotplug::LevelWork::default();
            tree.of_get_cpu_node(cpu, &mut w);
            w.fdt_nodes_visited
        })
        .collect()
}

/// Counts the walks of bringing up every present CPU of `topology` after the
/// first, in order, under `kernel` on `firmware` (see the module docs).
pub fn count(topology: &Topology, firmware: Firmware, kernel: Kernel) -> Result<Walks, SimError> {
    Ok(each(topology, firmware, kernel)?
        .into_iter()
        .fold(Walks::default(), |sum, w| Walks {
            walks: sum.walks + w.walks,
            visits: sum.visits + w.visits,
        }))
}

/// The walks of each secondary CPU's mask update, in bring-up order: what
/// [`count`] sums. The AP makes them after its call-in, so they also tell
/// how much of the boot CPU's call-in poll they hide
/// ([`crate::powerpc::Kernel::callin_wait_ns`]).
pub fn each(
    topology: &Topology,
    firmware: Firmware,
    kernel: Kernel,
) -> Result<Vec<Walks>, SimError> {
    let tree = hotplug::FirmwareTree::from_topology(topology)
        .map_err(|e| SimError::Masks(e.to_string()))?;
    let nr = topology.cpus().last().map_or(0, |c| c.id as usize + 1);
    let len = walk_lengths(&tree, nr);
    let mut cpus = topology.present().iter();
    let Some(boot) = cpus.next() else {
        return Err(SimError::NoCpus);
    };
    let core_of = |cpu: usize| topology.cpu(cpu).and_then(|c| c.group(LevelKind::Core));
    let node_of = |cpu: usize| topology.cpu(cpu).and_then(|c| c.node);
    // v5.9: Σ walk lengths over the online CPUs.
    let mut online_sum = len[boot];
    // v5.10: per node, Σ walk lengths over its L2 groups with online CPUs (the
    // L2 group is the SMT core: POWER8 has one L2 per core).
    let mut node_sum: std::collections::BTreeMap<Option<u32>, u64> = Default::default();
    let mut online_cores: std::collections::BTreeSet<Option<u32>> = Default::default();
    *node_sum.entry(node_of(boot)).or_default() += len[boot];
    online_cores.insert(core_of(boot));
    let mut out = Vec::new();
    // `online_count` CPUs are online when `cpu` comes up.
    for (online_count, cpu) in (1u64..).zip(cpus) {
        let mut w = Walks::default();
        let own = len[cpu];
        match kernel {
            Kernel::V5_9 => {
                let pkg = firmware.package_walks();
                // get_physical_package_id(cpu), cpu_to_l2cache(cpu).
                w.walks += pkg + 1;
                w.visits += (pkg + 1) * own;
                // The L2 loop (only with an l2-cache phandle) and the
                // cpu_core_mask loop, over every online CPU.
                let per_online = pkg + u64::from(firmware.has_l2_node());
                w.walks += per_online * online_count;
                w.visits += per_online * online_sum;
            }
            Kernel::V5_10 | Kernel::V6_1 => {
                // cpu_to_l2cache(cpu).
                w.walks += 1;
                w.visits += own;
                if firmware.has_l2_node() {
                    // One walk per other online L2 group of the node.
                    let core = core_of(cpu);
                    let sum = node_sum.get(&node_of(cpu)).copied().unwrap_or(0);
                    let mine = if online_cores.contains(&core) { own } else { 0 };
                    let groups = online_cores_in_node(topology, &online_cores, node_of(cpu));
                    w.walks += groups - u64::from(mine > 0);
                    w.visits += sum - mine;
                }
            }
        }
        out.push(w);
        online_sum += own;
        let core = core_of(cpu);
        if online_cores.insert(core) {
            *node_sum.entry(node_of(cpu)).or_default() += own;
        }
    }
    Ok(out)
}

/// Online L2 groups (cores) of `node`.
fn online_cores_in_node(
    topology: &Topology,
    online_cores: &std::collections::BTreeSet<Option<u32>>,
    node: Option<u32>,
) -> u64 {
    let Some(level) = topology.level(LevelKind::Core) else {
        return 0;
    };
    online_cores
        .iter()
        .filter_map(|c| *c)
        .filter(|&c| {
            level.groups[c as usize]
                .cpus
                .first()
                .and_then(|first| topology.cpu(first))
                .map(|cpu| cpu.node)
                == Some(node)
        })
        .count() as u64
}

/// Mask bits `remove_cpu_from_masks()` (arch/powerpc/kernel/smp.c) clears
/// while the CPUs of `order` go offline one after another, every other
/// present CPU of `topology` online. It runs on the dying CPU inside
/// `__cpu_disable()` and walks no device tree in either kernel:
///
/// - v5.9 (seed 000's "before"): for every CPU `i` of the dying CPU's
///   `cpu_core_mask` (its online CPUs with the same package id: the node on
///   PowerVM, which has no `ibm,chip-id`; the chip elsewhere),
///   `set_cpus_unrelated()` clears `i` and the dying CPU from each other's
///   core, L2, sibling and small-core masks (two bits a mask; small cores as
///   on POWER9 under PowerVM, whose SMT8 cores are two SMT4 halves).
/// - v5.10 (patch 04 of the series, "powerpc/smp: Optimize
///   remove_cpu_from_masks"): the same loop over the dying CPU's L2 mask
///   (its online core here); v5.10 keeps no cpu_core_mask to clear.
pub fn offline_clears(
    topology: &Topology,
    firmware: Firmware,
    kernel: Kernel,
    order: &[usize],
) -> u64 {
    let mut online = *topology.present();
    let mut clears = 0;
    for &cpu in order {
        let (group, masks) = match kernel {
            Kernel::V5_9 if firmware == Firmware::PowerVm => (
                topology
                    .node_of(cpu)
                    .map_or_else(|| topology.package_mask(cpu), |n| n.cpus.to_cpumask()),
                4,
            ),
            Kernel::V5_9 => (topology.package_mask(cpu), 4),
            Kernel::V5_10 | Kernel::V6_1 => (topology.smt_mask(cpu), 3),
        };
        let visited = group.iter().filter(|&i| online.contains(i)).count() as u64;
        clears += 2 * masks * visited;
        online.clear(cpu);
    }
    clears
}

/// The cross-check of seed 000's 4096-CPU prediction with exact walk counts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Analysis {
    /// The LPAR (PowerVM) before and after, and the 4096-vCPU KVM guest before and after.
    pub lpar_before: Walks,
    /// See [`Analysis::lpar_before`].
    pub lpar_after: Walks,
    /// See [`Analysis::lpar_before`].
    pub guest_before: Walks,
    /// See [`Analysis::lpar_before`].
    pub guest_after: Walks,
    /// Fitted on the LPAR's two runs: ns per `/cpus` child visited.
    pub visit_ns: f64,
    /// Fitted on the LPAR's two runs: everything else, ns per secondary CPU.
    pub per_cpu_ns: f64,
    /// Predicted 4096-CPU bring-up before the series, seconds.
    pub guest_before_s: f64,
    /// Predicted 4096-CPU bring-up after, seconds.
    pub guest_after_s: f64,
    /// What the guest's measurements imply per visit if its per-CPU rest were
    /// the LPAR's: ns (from "about 30 mins").
    pub guest_implied_visit_ns: f64,
    /// What the guest's "6 seconds" leaves per CPU once its walks are priced at
    /// [`Analysis::guest_implied_visit_ns`]: ns.
    pub guest_implied_per_cpu_ns: f64,
}

/// Fits (ns per visit, ns per CPU) on the 1024-CPU LPAR's 233 s and 3.7 s with
/// the exact PowerVM walk counts, and predicts the 4096-vCPU KVM guest.
pub fn analysis() -> Result<Analysis, SimError> {
    let lpar = SeedMachine::Power8Lpar1024.topology();
    let guest = SeedMachine::Power4096OneSocket.topology();
    let lpar_before = count(&lpar, Firmware::PowerVm, Kernel::V5_9)?;
    let lpar_after = count(&lpar, Firmware::PowerVm, Kernel::V5_10)?;
    let guest_before = count(&guest, Firmware::KvmGuest, Kernel::V5_9)?;
    let guest_after = count(&guest, Firmware::KvmGuest, Kernel::V5_10)?;
    let n_lpar = (lpar.present().weight() - 1) as f64;
    let n_guest = (guest.present().weight() - 1) as f64;
    let (t_b, t_a) = (
        crate::fit::SEED_000_LPAR_NAIVE_S * 1e9,
        crate::fit::SEED_000_LPAR_SCOPED_S * 1e9,
    );
    let visit_ns = (t_b - t_a) / (lpar_before.visits as f64 - lpar_after.visits as f64);
    let per_cpu_ns = (t_a - visit_ns * lpar_after.visits as f64) / n_lpar;
    let predict = |w: &Walks| (n_guest * per_cpu_ns + visit_ns * w.visits as f64) / 1e9;
    let (m_b, m_a) = (
        crate::fit::SEED_000_4096_NAIVE_S * 1e9,
        crate::fit::SEED_000_4096_SCOPED_S * 1e9,
    );
    let guest_implied_visit_ns =
        (m_b - m_a) / (guest_before.visits as f64 - guest_after.visits as f64);
    let guest_implied_per_cpu_ns =
        (m_a - guest_implied_visit_ns * guest_after.visits as f64) / n_guest;
    Ok(Analysis {
        lpar_before,
        lpar_after,
        guest_before,
        guest_after,
        visit_ns,
        per_cpu_ns,
        guest_before_s: predict(&guest_before),
        guest_after_s: predict(&guest_after),
        guest_implied_visit_ns,
        guest_implied_per_cpu_ns,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use topology::{Arch, Shape};

    /// Replays every `of_get_cpu_node()` call of the Linux code on the real tree,
    /// one by one, and compares with [`count`]'s bookkeeping.
    fn replay(topology: &Topology, firmware: Firmware, kernel: Kernel) -> Walks {
        let tree = hotplug::FirmwareTree::from_topology(topology).unwrap();
        let mut w = Walks::default();
        let walk = |cpu: usize, w: &mut Walks| {
            let mut lw = hotplug::LevelWork::default();
            tree.of_get_cpu_node(cpu, &mut lw);
            w.walks += 1;
            w.visits += lw.fdt_nodes_visited;
        };
        let present: Vec<usize> = topology.present().iter().collect();
        for (k, &cpu) in present.iter().enumerate().skip(1) {
            let online = &present[..k];
            match kernel {
                Kernel::V5_9 => {
                    for _ in 0..firmware.package_walks() {
                        walk(cpu, &mut w);
                    }
                    walk(cpu, &mut w);
                    if firmware.has_l2_node() {
                        for &i in online {
                            walk(i, &mut w);
                        }
                    }
                    for &i in online {
                        for _ in 0..firmware.package_walks() {
                            walk(i, &mut w);
                        }
                    }
                }
                Kernel::V5_10 | Kernel::V6_1 => {
                    walk(cpu, &mut w);
                    if firmware.has_l2_node() {
                        // for_each_cpu over (online ∩ node) \ own L2 mask, lowest
                        // first, dropping each visited CPU's whole L2 group.
                        let node = topology.node_of(cpu).map(|n| &n.cpus);
                        let own = topology.smt_mask(cpu);
                        let mut seen = std::collections::BTreeSet::new();
                        for &i in online {
                            let in_node = node.is_none_or(|m| m.contains(i));
                            if !in_node || own.contains(i) {
                                continue;
                            }
                            if seen.insert(topology.smt_mask(i).first()) {
                                walk(i, &mut w);
                            }
                        }
                    }
                }
            }
        }
        w
    }

    #[test]
    fn replay_matches_bookkeeping() {
        let shapes = [
            Shape::simple(Arch::PowerPc64, 1, 6, 4),
            Shape::simple(Arch::PowerPc64, 3, 4, 8),
            Shape {
                distances: (20, 40),
                ..Shape::simple(Arch::PowerPc64, 4, 3, 2)
            },
        ];
        for shape in shapes {
            let topo = shape.build().unwrap();
            for firmware in [Firmware::PowerVm, Firmware::KvmGuest, Firmware::PowerNv] {
                for kernel in [Kernel::V5_9, Kernel::V5_10, Kernel::V6_1] {
                    assert_eq!(
                        count(&topo, firmware, kernel).unwrap(),
                        replay(&topo, firmware, kernel),
                        "{shape:?} {firmware:?} {kernel:?}"
                    );
                }
            }
        }
    }

    /// The walk lengths grow with the core's place in `/cpus`: the tree's CPU
    /// nodes are in core order, so CPU 8c..8c+7 of the LPAR walks c + 1 nodes,
    /// and the v5.9 totals follow Σ over pairs, ≈ 3·N³/(6·T) on PowerVM.
    #[test]
    fn lpar_counts_follow_the_closed_form() {
        let lpar = SeedMachine::Power8Lpar1024.topology();
        let w = count(&lpar, Firmware::PowerVm, Kernel::V5_9).unwrap();
        let (n, t) = (1024u64, 8u64);
        let pos = |i: u64| i / t + 1;
        let mut exact = 0;
        let mut prefix = 0;
        for k in 1..n {
            prefix += pos(k - 1);
            exact += 3 * pos(k) + 3 * prefix;
        }
        assert_eq!(w.visits, exact);
    }

    /// `--smt=1` on seed 000's POWER9 LPAR (2 nodes x 8 cores x SMT8), by
    /// hand: before the series each of a node's 56 offlines visits the
    /// node's online CPUs (64 down to 9) and clears 4 masks; after it, each
    /// of a core's 7 visits the core's online threads (8 down to 2) and
    /// clears 3. Two bits a mask.
    #[test]
    fn smt1_offline_clears_follow_the_closed_form() {
        let lpar = SeedMachine::Power9Lpar128.topology();
        let threads: Vec<usize> = (0..128).filter(|c| c % 8 != 0).collect();
        let node: u64 = (9..=64).sum();
        let core: u64 = (2..=8).sum();
        let count = |k| offline_clears(&lpar, Firmware::PowerVm, k, &threads);
        assert_eq!(count(Kernel::V5_9), 2 * node * 2 * 4);
        assert_eq!(count(Kernel::V5_10), 16 * core * 2 * 3);
    }

    /// With one price per visit and per CPU fitted on the LPAR, the exact counts
    /// still miss the 4096-vCPU guest: the seed's two machines differ in what a
    /// visit and a CPU cost, not only in how many visits they make.
    #[test]
    fn exact_counts_still_miss_the_guest() {
        let a = analysis().unwrap();
        eprintln!("{a:#?}");
        assert!(a.visit_ns > 1000.0 && a.visit_ns < 10_000.0, "{a:?}");
        assert!(a.per_cpu_ns > 1e6 && a.per_cpu_ns < 4e6, "{a:?}");
        let err_b = a.guest_before_s / crate::fit::SEED_000_4096_NAIVE_S - 1.0;
        let err_a = a.guest_after_s / crate::fit::SEED_000_4096_SCOPED_S - 1.0;
        assert!(err_b > 0.25 && err_a > 0.25, "{a:?}");
        assert!(a.guest_implied_visit_ns < a.visit_ns / 3.0, "{a:?}");
    }
}
