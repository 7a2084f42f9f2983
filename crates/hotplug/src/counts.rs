//! Operation counts: what a mask update really did, per level, so that the
//! simulator can turn work into virtual time and benchmarks can explain time.

use core::ops::{Add, AddAssign, Sub};

use crate::vocab::MaskLevel;

/// Work done for one mask level.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct LevelWork {
    /// Other CPUs examined while looking for this CPU's group.
    pub cpus_scanned: u64,
    /// Device-tree nodes walked (`of_get_cpu_node` and friends).
    pub fdt_nodes_visited: u64,
    /// Device-tree property look-ups (`of_get_property`: name compares over a list).
    pub property_lookups: u64,
    /// Single-bit mask writes (`cpumask_set_cpu` / `cpumask_clear_cpu`).
    pub mask_bit_ops: u64,
    /// 64-bit mask words read or written by whole-mask operations (`and`, `andnot`).
    pub mask_word_ops: u64,
}

impl LevelWork {
    /// Sum of every counter: a unit-less size of the work, for quick comparisons.
    pub fn total(&self) -> u64 {
        self.cpus_scanned
            + self.fdt_nodes_visited
            + self.property_lookups
            + self.mask_bit_ops
            + self.mask_word_ops
    }
}

impl AddAssign for LevelWork {
    fn add_assign(&mut self, o: LevelWork) {
        self.cpus_scanned += o.cpus_scanned;
        self.fdt_nodes_visited += o.fdt_nodes_visited;
        self.property_lookups += o.property_lookups;
        self.mask_bit_ops += o.mask_bit_ops;
        self.mask_word_ops += o.mask_word_ops;
    }
}

impl Add for LevelWork {
    type Output = LevelWork;
    fn add(mut self, o: LevelWork) -> LevelWork {
        self += o;
        self
    }
}

impl Sub for LevelWork {
    type Output = LevelWork;
    /// Saturating difference, counter by counter.
    fn sub(self, o: LevelWork) -> LevelWork {
        LevelWork {
            cpus_scanned: self.cpus_scanned.saturating_sub(o.cpus_scanned),
            fdt_nodes_visited: self.fdt_nodes_visited.saturating_sub(o.fdt_nodes_visited),
            property_lookups: self.property_lookups.saturating_sub(o.property_lookups),
            mask_bit_ops: self.mask_bit_ops.saturating_sub(o.mask_bit_ops),
            mask_word_ops: self.mask_word_ops.saturating_sub(o.mask_word_ops),
        }
    }
}

/// Work done by one online/offline (or a sum of many), per [`MaskLevel`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WorkCounts {
    /// Indexed like [`MaskLevel::ALL`].
    pub levels: [LevelWork; MaskLevel::COUNT],
    /// Work outside any level: the online set itself and id caching set-up.
    pub other: LevelWork,
}

impl WorkCounts {
    /// The counters of one level.
    pub fn level(&self, level: MaskLevel) -> &LevelWork {
        &self.levels[level as usize]
    }

    /// All levels and `other` added together.
    pub fn total(&self) -> LevelWork {
        self.levels.iter().fold(self.other, |acc, l| acc + *l)
    }
}

impl AddAssign for WorkCounts {
    fn add_assign(&mut self, o: WorkCounts) {
        for (a, b) in self.levels.iter_mut().zip(o.levels) {
            *a += b;
        }
        self.other += o.other;
    }
}

impl Sub for WorkCounts {
    type Output = WorkCounts;
    /// Saturating difference, counter by counter.
    fn sub(mut self, o: WorkCounts) -> WorkCounts {
        for (a, b) in self.levels.iter_mut().zip(o.levels) {
            *a = *a - b;
        }
        self.other = self.other - o.other;
        self
    }
}
