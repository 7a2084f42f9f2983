//! The one topology model every part of manycore shares.
//!
//! A [`Topology`] is what the kernel knows about a machine's CPUs after firmware
//! enumeration: logical CPUs with their hardware ids, grouped into levels
//! (SMT core → big core → cluster/coregroup → die → package), NUMA nodes with a
//! distance matrix, caches with their sharing sets, and the possible / present /
//! online CPU sets. Readers (sysfs, lscpu, hwloc, the catalogue, ACPI in the
//! bare-metal kernel) all produce it through [`TopologyBuilder`], which checks the
//! invariants once so that consumers can trust them.
//!
//! Irregular machines are first-class: logical numbering may be sparse or
//! interleaved across nodes (POWER10's node0 = 0-7,32-39,...), CPUs may be possible
//! but not present, present but offline, nodes may have memory and no CPUs,
//! caches may be shared asymmetrically, and cores may be of different kinds.
#![forbid(unsafe_code)]
#![no_std]
#![deny(missing_docs)]

extern crate alloc;

mod builder;
mod model;
mod shape;

pub use builder::{BuildError, CpuSpec, TopologyBuilder, MAX_DISTANCE_NODES, MAX_NODES};
pub use cpumask::{CompactMask, CpuMask, MAX_CPUS};
pub use model::*;
pub use shape::{Numbering, Shape};
