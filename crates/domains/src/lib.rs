//! Scheduler domains exactly as Linux builds them, for any topology manycore reads.
//!
//! [`build`] follows kernel/sched/topology.c: the architecture's level table
//! (x86 SMT/CLS/MC/PKG, powerpc SMT/CACHE/MC/PKG with small cores and
//! shared-processor asym packing, arm64 and the rest on `default_topology`), the
//! NODE and overlapping NUMA levels `sched_init_numa` derives from the distance
//! matrix, `sd_init`'s flags and tuning, the groups of `build_sched_groups` /
//! `build_overlap_sched_groups`, and `cpu_attach_domain`'s removal of degenerate
//! domains (with `SD_PREFER_SIBLING` passed down and group flags updated).
//! Each supported [`KernelVersion`] (5.9, 6.8, 6.12) has its own flag bits and
//! names, its own degenerate rules and its own tuning defaults.
//!
//! [`render`] writes the kernel's own file layouts (v5.9 procfs, v6.x debugfs),
//! text that also explains removed domains, and JSON; [`compare`] diffs against a
//! dump taken from a live kernel.
//!
//! ```no_run
#![doc = include_str!("../examples/overview.rs")]
//! ```
//!
//! Without the default `std` feature the crate is `no_std` + `alloc`: [`build`],
//! [`flags`] and the text renderers work in a freestanding kernel (manycore's
//! own prints every CPU's domains with them); file writers, JSON and
//! [`compare`] (dumps, archives) need `std`.
//!
//! Spans and groups are interned: CPUs that share a span share its storage, the
//! way Linux shares `sched_group`s, so a 16384-CPU machine costs a few megabytes.
#![forbid(unsafe_code)]
#![cfg_attr(not(feature = "std"), no_std)]

extern crate alloc;

mod build;
#[cfg(feature = "std")]
pub mod compare;
pub mod config;
#[cfg(feature = "std")]
pub mod dumpfs;
pub mod flags;
mod levels;
pub mod render;

pub use build::{
    build, build_with, CpuDomains, Domain, Domains, Error, LevelInfo, Options, Reason, Removed,
};
pub use config::KernelConfig;
pub use flags::{Flag, Flags, KernelVersion};
pub use levels::ArchRules;
