//! Task placement on the scheduler domains: where Linux's fair class puts tasks
//! (wake-up, fork, periodic, newly-idle and nohz idle balancing, asym packing),
//! on the domains [`domains`] builds, with a PowerVM shared-processor hypervisor
//! underneath, in virtual time.
//!
//! # How it works
//!
//! - [`machine`]: the domains and groups of every CPU, taken from
//!   [`domains::Domains`] (never a second topology), with the per-CPU facts the
//!   rules need (`sd_llc`, `sd_asym_packing`, `arch_asym_cpu_priority()`).
//! - [`fair`]: the rules, each after the Linux v6.8 function it names
//!   (`select_task_rq_fair`, `select_idle_sibling`, `find_idlest_group`,
//!   `load_balance`, `find_busiest_group`, `calculate_imbalance`,
//!   `nohz_balancer_kick`...).
//! - [`sched`]: runqueues, tasks, the tick, accounting.
//! - [`hv`]: virtual processors, dispatch and cede, lparstat's `physc`, `%entc`,
//!   `lbusy`, `vcsw`, and `vcpu_is_preempted()` feeding back into the rules.
//! - [`workload`]: spin, ebizzy-like, hackbench-like and duty-cycle specs.
//! - `run` (std): drives a run through `sim`'s event queue and reports medians
//!   and lparstat columns; `validate` (std): seed 001's lparstat rows.
//!
//! # What is not modelled, and what that leaves unreached
//!
//! - CPUs of different capacity: no machine the readers build carries
//!   `cpu_capacity` or `capacity-dmips-mhz`, so no domain has
//!   `SD_ASYM_CPUCAPACITY` and `group_misfit_task` (with `migrate_misfit`)
//!   never arises.
//! - Task affinity: every task may run on every CPU (no `taskset`,
//!   `sched_setaffinity()` or cpusets), so `load_balance()` never meets a
//!   pinned task, never sets `sgc->imbalance`, and `group_imbalanced` never
//!   arises.
//! - Nice levels, other scheduling classes, cgroups, and the memory a task
//!   touches beyond "its parent's node" (NUMA balancing's preferred node).
//!
//! Both group types are kept in [`fair::GroupType`] and handled where Linux
//! handles them, so the order of the types is Linux's.
//!
//! A run is a pure function of (machine, kernel, partition, workload, threads,
//! duration, seed).
//!
//! Without the default `std` feature the crate is `no_std` + `alloc`: the
//! machine view, the rules, the hypervisor and the workloads.

#![cfg_attr(not(feature = "std"), no_std)]
#![forbid(unsafe_code)]

extern crate alloc;

pub mod fair;
pub mod hv;
mod idlest;
pub mod machine;
pub mod sched;
pub mod workload;

#[cfg(feature = "std")]
pub mod run;
#[cfg(feature = "std")]
pub mod svg;
#[cfg(feature = "std")]
pub mod validate;

pub use hv::{HvParams, Lpar};
pub use machine::{parse_itmt, Machine, MachineError, MachineOptions};
pub use workload::Workload;

/// A kernel whose placement rules the engine follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kernel {
    /// Linux 6.6: seed 001's "before" (6.6.0-rc3). The fair class as in 6.8,
    /// but powerpc without the shared-processor topology patches: no asym
    /// packing on a shared LPAR, and the MC (coregroup) level kept.
    V6_6,
    /// Linux 6.8: the powerpc patches of seed 001 (asym packing of big cores on a
    /// shared LPAR, no MC level) and asym packing in `find_idlest_group()`.
    V6_8,
    /// Linux 6.12: 6.8's rules on 6.12's domains.
    V6_12,
}

impl Kernel {
    /// "6.6", "6.8", "6.12".
    pub fn as_str(self) -> &'static str {
        match self {
            Kernel::V6_6 => "6.6",
            Kernel::V6_8 => "6.8",
            Kernel::V6_12 => "6.12",
        }
    }

    /// The domain-building rules to ask [`domains`] for.
    pub fn domains_version(self) -> domains::KernelVersion {
        match self {
            Kernel::V6_6 | Kernel::V6_8 => domains::KernelVersion::V6_8,
            Kernel::V6_12 => domains::KernelVersion::V6_12,
        }
    }

    /// Whether powerpc's shared-processor topology (seed 001's series) applies.
    pub fn splpar_topology(self) -> bool {
        self >= Kernel::V6_8
    }
}

impl core::str::FromStr for Kernel {
    type Err = alloc::string::String;
    fn from_str(s: &str) -> Result<Kernel, Self::Err> {
        match s.trim().trim_start_matches('v') {
            "6.6" => Ok(Kernel::V6_6),
            "6.8" => Ok(Kernel::V6_8),
            "6.12" => Ok(Kernel::V6_12),
            other => Err(alloc::format!(
                "unknown kernel {other:?}: placement follows 6.6, 6.8 or 6.12"
            )),
        }
    }
}

impl core::fmt::Display for Kernel {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}
