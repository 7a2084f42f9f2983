//! Seed 000's SMT switches: `ppc64_cpu --smt=1` (every thread but the first
//! of each core offline) and `--smt=8` (back online) on the 128-CPU POWER9
//! PowerVM LPAR, 100 runs each, before and after the series (medians 14.71 →
//! 14.33 s and 23.71 → 23.16 s).
//!
//! Each switch runs through crates/hotplug's state machine (`cpu_down` /
//! `cpu_up`) with the real mask engine, naive or scoped, on a machine whose
//! other CPUs are online; the mask work each step reports is priced with the
//! powerpc table (its look-up price fitted on seed 000's POWER8 LPAR). What the
//! seed's medians contain besides the mask work (the `ppc64_cpu` tool writing
//! each CPU's sysfs `online` file, stop_machine on the way down, the
//! hypervisor's stop/start of the thread, RCU) is not separated by anything in
//! the seed: it is one fixed cost per CPU and direction, fitted on the *before*
//! median. The *after* median is then predicted: the fixed cost plus the
//! scoped engine's priced work.

use crate::costs::CostTable;
use crate::masks::{self, Ops};
use crate::strategy::Algo;
use crate::SimError;

/// The mask side of one SMT switch pair on one machine.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MaskTime {
    /// CPUs switched (every thread but the first of each core).
    pub cpus: usize,
    /// Priced mask work of `--smt=1` (the offlines), seconds.
    pub offline_s: f64,
    /// Priced mask work of `--smt=8` (the onlines back), seconds.
    pub online_s: f64,
    /// The offlines' work, summed.
    pub offline_ops: Ops,
    /// The onlines' work, summed.
    pub online_ops: Ops,
}

/// A clock that advances only by the priced mask work the state machine
/// reports: the fixed rest is added by the caller.
struct MaskClock<'a> {
    costs: &'a CostTable,
    now_ns: f64,
}

impl hotplug::Platform for MaskClock<'_> {
    fn kick(&mut self, _cpu: usize) -> Result<(), String> {
        Ok(())
    }

    fn wait_alive(&mut self, _cpu: usize) -> Result<(), String> {
        Ok(())
    }

    fn now_ns(&mut self) -> u64 {
        self.now_ns as u64
    }

    fn masks_updated(&mut self, _cpu: usize, work: &hotplug::WorkCounts) {
        self.now_ns += masks::price(&work.total(), self.costs);
    }
}

/// Brings every CPU of `topology` up, then takes every thread but the first
/// of each core down and back up, timing the mask work of each direction.
pub fn mask_time(
    topology: &topology::Topology,
    costs: &CostTable,
    algo: Algo,
) -> Result<MaskTime, SimError> {
    let engine = masks::mask_engine(topology, algo)?;
    let mut hp = hotplug::Hotplug::new(MaskClock { costs, now_ns: 0.0 }, engine);
    let up = hp.bringup_serial();
    if let Some((cpu, e)) = up.failed.first() {
        return Err(SimError::Masks(format!("CPU {cpu}: {e}")));
    }
    let threads: Vec<usize> = topology
        .present()
        .iter()
        .filter(|&cpu| topology.smt_mask(cpu).first() != Some(cpu))
        .collect();
    let engine_err =
        |cpu: usize, e: hotplug::HotplugError| SimError::Masks(format!("CPU {cpu}: {e}"));
    let t0 = hp.platform().now_ns;
    let mut offline_ops = Ops::default();
    for &cpu in &threads {
        offline_ops += hp.cpu_down(cpu).map_err(|e| engine_err(cpu, e))?.total();
    }
    let t1 = hp.platform().now_ns;
    let mut online_ops = Ops::default();
    for &cpu in &threads {
        let before = hp.report().work;
        hp.cpu_up(cpu).map_err(|e| engine_err(cpu, e))?;
        online_ops += (hp.report().work - before).total();
    }
    let t2 = hp.platform().now_ns;
    Ok(MaskTime {
        cpus: threads.len(),
        offline_s: (t1 - t0) / 1e9,
        online_s: (t2 - t1) / 1e9,
        offline_ops,
        online_ops,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::costs::Platform;
    use topology::{Arch, Shape};

    /// `--smt=1` on 2 × 8 cores × SMT8 switches 7 threads of each of 16 cores,
    /// as the seed's "Post ppc64_cpu --smt=1" listing (CPUs 0, 8, …, 120
    /// left) implies; the scoped engine does less mask work both ways.
    #[test]
    fn smt1_switches_seven_threads_per_core_and_scoped_is_cheaper() {
        let topo = Shape::simple(Arch::PowerPc64, 2, 8, 8).build().unwrap();
        let costs = CostTable::for_platform(Platform::PowerPc, &crate::fit::fitted().unwrap());
        let naive = mask_time(&topo, &costs, Algo::Naive).unwrap();
        let scoped = mask_time(&topo, &costs, Algo::Scoped).unwrap();
        assert_eq!(naive.cpus, 112);
        assert_eq!(scoped.cpus, 112);
        assert!(scoped.offline_s < naive.offline_s, "{scoped:?} {naive:?}");
        assert!(scoped.online_s < naive.online_s, "{scoped:?} {naive:?}");
        assert!(scoped.online_ops.property_lookups < naive.online_ops.property_lookups);
    }
}
