//! The narrow adapter between the simulator and the real topology-mask code.
//!
//! Every online runs the mask update for real (crates/hotplug's `MaskEngine`, the
//! same code the host tool and the kernel run); the simulator only converts the
//! operation counts it reports into virtual nanoseconds with the platform's
//! per-operation prices ([`price`]).

use serde::Serialize;

use crate::costs::CostTable;
use crate::strategy::Masks;
use crate::SimError;

/// What one mask update did, in the units the cost table prices.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Ops {
    /// Other CPUs examined.
    pub cpus_scanned: u64,
    /// Firmware-tree nodes walked.
    pub fdt_nodes_visited: u64,
    /// Firmware-tree property look-ups.
    pub property_lookups: u64,
    /// Single-bit mask writes.
    pub mask_bit_ops: u64,
    /// Whole-mask word operations.
    pub mask_word_ops: u64,
}

impl std::ops::AddAssign for Ops {
    fn add_assign(&mut self, o: Ops) {
        self.cpus_scanned += o.cpus_scanned;
        self.fdt_nodes_visited += o.fdt_nodes_visited;
        self.property_lookups += o.property_lookups;
        self.mask_bit_ops += o.mask_bit_ops;
        self.mask_word_ops += o.mask_word_ops;
    }
}

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
pub fn total_ops(topology: &topology::Topology, algo: Masks) -> Result<Ops, SimError> {
    let mut engine = engine(topology, algo)?;
    let mut cpus = topology.present.iter();
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

/// Whether [`engine`] is crates/hotplug's real mask code (false while it is the
/// zero-work placeholder; validation rows that depend on mask work are then
/// reported but not asserted).
pub const REAL_ENGINE: bool = false;

/// The real mask engine of crates/hotplug, for `algo`.
pub fn engine(topology: &topology::Topology, algo: Masks) -> Result<Box<dyn MaskWork>, SimError> {
    real::RealMasks::new(topology, algo).map(|m| Box::new(m) as Box<dyn MaskWork>)
}

mod real {
    use super::*;

    /// Placeholder until crates/hotplug's `MaskEngine` lands: reports no work, so
    /// mask costs read as zero. Replaced by the real engine (see the crate docs).
    pub struct RealMasks;

    impl RealMasks {
        pub fn new(_topology: &topology::Topology, _algo: Masks) -> Result<RealMasks, SimError> {
            Ok(RealMasks)
        }
    }

    impl MaskWork for RealMasks {
        fn online(&mut self, _cpu: usize) -> Result<Ops, SimError> {
            Ok(Ops::default())
        }
    }
}
