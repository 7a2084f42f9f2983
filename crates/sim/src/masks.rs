//! The narrow adapter between the simulator and the real topology-mask code.
//!
//! Every online runs the mask update for real (crates/hotplug's `MaskEngine`, the
//! same code the host tool and the kernel run); the simulator only converts the
//! operation counts it reports into virtual nanoseconds with the platform's
//! per-operation prices ([`price`]).

use crate::costs::CostTable;
use crate::strategy::Algo;
use crate::SimError;

/// What one mask update did, in the units the cost table prices: crates/hotplug's
/// own counters, summed over the levels.
pub type Ops = hotplug::LevelWork;

/// Virtual nanoseconds the platform charges for `ops`.
///
/// A property look-up is priced at [`CostTable::lookup`]; walking a tree node or
/// scanning a CPU at [`CostTable::scan`]; bit and word operations at
/// [`CostTable::bit_op`].
pub fn price(ops: &Ops, costs: &CostTable) -> f64 {
    ops.property_lookups as f64 * costs.lookup.ns
        + price_without_lookups(ops, costs.scan.ns, costs.bit_op.ns)
}

/// The part of [`price`] that does not depend on the look-up price.
pub fn price_without_lookups(ops: &Ops, scan_ns: f64, bit_op_ns: f64) -> f64 {
    (ops.fdt_nodes_visited + ops.cpus_scanned) as f64 * scan_ns
        + (ops.mask_bit_ops + ops.mask_word_ops) as f64 * bit_op_ns
}

/// Onlines every present CPU of `topology` (boot CPU first, uncounted) and sums
/// the secondary CPUs' work.
pub fn total_ops(topology: &topology::Topology, algo: Algo) -> Result<Ops, SimError> {
    let mut engine = engine(topology, algo)?;
    let mut cpus = topology.present().iter();
    let mut sum = Ops::default();
    if let Some(boot) = cpus.next() {
        engine.online(boot)?;
    }
    for cpu in cpus {
        sum += engine.online(cpu)?;
    }
    Ok(sum)
}

/// Something that updates topology masks as CPUs come online and reports its work.
pub trait MaskWork {
    /// Brings `cpu` into the masks; returns the work it took.
    fn online(&mut self, cpu: usize) -> Result<Ops, SimError>;
}

/// Whether [`engine`] is crates/hotplug's real mask code.
pub const REAL_ENGINE: bool = true;

/// Builds crates/hotplug's mask engine for `topology` (only its boot CPU online).
pub fn mask_engine(
    topology: &topology::Topology,
    masks: Algo,
) -> Result<hotplug::MaskEngine, SimError> {
    hotplug::MaskEngine::new(topology, masks).map_err(|e| SimError::Masks(e.to_string()))
}

/// The real mask engine as a [`MaskWork`].
pub fn engine(topology: &topology::Topology, algo: Algo) -> Result<Box<dyn MaskWork>, SimError> {
    Ok(Box::new(mask_engine(topology, algo)?))
}

impl MaskWork for hotplug::MaskEngine {
    fn online(&mut self, cpu: usize) -> Result<Ops, SimError> {
        if hotplug::MaskEngine::online_mask(self).contains(cpu) {
            return Ok(Ops::default());
        }
        hotplug::MaskEngine::online(self, cpu)
            .map(|w| w.total())
            .map_err(|e| SimError::Masks(e.to_string()))
    }
}

/// Total naive-algorithm work for a regular machine, without running the naive
/// algorithm at full size.
///
/// Why: the naive algorithm walks the device tree once per (new CPU, online CPU,
/// level) — work cubic in the core count (1024-CPU LPAR: 185 million property
/// look-ups; the 4096-CPU single socket about a hundred times that). For a
/// [`topology::Shape`] the totals are a polynomial of degree ≤ 3 in the cores per cluster
/// (pairs of CPUs × the position of a core in the `/cpus` walk), so the real
/// engine is run at four smaller core counts and the cubic through those four
/// points is evaluated at the real count. `naive_extrapolation_is_exact` checks
/// this against full runs. On seed 000's 4096-CPU single socket the cubic gives
/// 33 562 620 CPUs scanned, 11 476 326 395 tree nodes walked, 23 011 391 470
/// property look-ups and 25 196 538 bit operations; a full run of the real engine,
/// far too slow for a test, counted exactly the same on every counter.
pub fn naive_ops_extrapolated(shape: &topology::Shape) -> Result<Ops, SimError> {
    let step = (shape.cores / 8).clamp(1, 4);
    let xs: [u32; 4] = [step, 2 * step, 3 * step, 4 * step];
    if shape.cores <= xs[3] {
        let topo = shape
            .build()
            .map_err(|e| SimError::Masks(format!("{e:?}")))?;
        return total_ops(&topo, Algo::Naive);
    }
    let mut samples = Vec::with_capacity(4);
    for &c in &xs {
        let small = topology::Shape {
            cores: c,
            ..shape.clone()
        };
        let topo = small
            .build()
            .map_err(|e| SimError::Masks(format!("{e:?}")))?;
        samples.push(total_ops(&topo, Algo::Naive)?);
    }
    let x = shape.cores as f64;
    // Lagrange weights of the four sample points at x.
    let w: Vec<f64> = (0..4)
        .map(|i| {
            (0..4)
                .filter(|&j| j != i)
                .map(|j| (x - xs[j] as f64) / (xs[i] as f64 - xs[j] as f64))
                .product()
        })
        .collect();
    let eval = |f: fn(&Ops) -> u64| -> u64 {
        let v: f64 = samples.iter().zip(&w).map(|(s, wi)| f(s) as f64 * wi).sum();
        v.round().max(0.0) as u64
    };
    Ok(Ops {
        cpus_scanned: eval(|o| o.cpus_scanned),
        fdt_nodes_visited: eval(|o| o.fdt_nodes_visited),
        property_lookups: eval(|o| o.property_lookups),
        mask_bit_ops: eval(|o| o.mask_bit_ops),
        mask_word_ops: eval(|o| o.mask_word_ops),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use topology::{Arch, Shape};

    /// The extrapolation equals a full run of the real naive engine.
    #[test]
    fn naive_extrapolation_is_exact() {
        for shape in [
            Shape::simple(Arch::PowerPc64, 1, 40, 4),
            Shape::simple(Arch::PowerPc64, 4, 24, 8),
            // Seed 000's LPAR, whose naive work the powerpc fit extrapolates.
            crate::machines::SeedMachine::Power8Lpar1024.shape(),
        ] {
            let full = total_ops(&shape.build().unwrap(), Algo::Naive).unwrap();
            let guess = naive_ops_extrapolated(&shape).unwrap();
            assert_eq!(guess, full, "{shape:?}");
        }
    }
}
