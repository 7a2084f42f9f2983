//! Readers: every way manycore learns a machine's topology, each producing the one
//! [`topology::Topology`] model.
//!
//! - [`sysfs`]: Linux sysfs + procfs, from the live host, a directory, or a
//!   `.tar.gz` / `.tar.bz2` / `.tar.xz` snapshot (the layout of `lscpu --sysroot` dumps and
//!   hwloc's fsroot tarballs).
//! - [`lscpu`]: lscpu's human-readable summary text.
//! - [`cpuid`]: x86 CPUID dumps (hwloc-gather-cpuid's `puN` files).
//! - [`synthetic`]: hwloc synthetic description strings.
//! - [`xml`]: hwloc XML v2, read and written.
//! - [`catalogue`]: the seeds' machines, built in.
//! - [`corpus`]: where tests find the real machines' snapshots.
//!
//! Every reader reports bad input as one [`Error`] naming the file, line or field.
// Denied everywhere but the read-ahead workers' unshare(CLONE_FILES)
// (sysfs/readahead/own_fds.rs and its one call).
#![deny(unsafe_code)]

pub mod catalogue;
pub mod corpus;
pub mod cpuid;
pub mod error;
pub mod limits;
pub mod lscpu;
mod power;
pub mod synthetic;
pub mod sysfs;
pub mod tar_stream;
pub mod xml;

pub use error::Error;
