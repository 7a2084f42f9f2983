//! CPU hotplug for manycore: a cpuhp-style state machine and the incremental
//! topology masks whose cost seed 000 cut from 233 s to 4 s on 1024 CPUs.
//!
//! `no_std` + `alloc`: the same code runs in the bare-metal kernel, in the
//! simulator and in the CLI.
//!
//! # Masks: [`MaskEngine`]
//!
//! Every online CPU has a mask per [`MaskLevel`] (SMT siblings, L2 / big core,
//! coregroup, package, node, last-level cache) holding the online CPUs of its
//! group; offline CPUs have empty masks. [`MaskEngine::online`] and
//! [`MaskEngine::offline`] update them incrementally and return the
//! [`WorkCounts`] they needed, per level (CPUs scanned, firmware-tree nodes
//! visited and property look-ups, mask bit and word operations), so a simulator
//! can charge virtual time for exactly the work done. The firmware is a real,
//! queried device tree ([`FirmwareTree`]) built for the machine.
//!
//! - [`Algo::Naive`] is powerpc before seed 000: for each level it scans every
//!   online CPU and, for each one, walks `/cpus` to find its node and reads the
//!   property (`cpu_to_l2cache`, `cpu_to_chip_id`...). Work per online grows
//!   with CPUs × cores.
//! - [`Algo::Scoped`] is the series: nodes indexed once, ids cached, scans
//!   limited to the enclosing group (the node or tighter), whole groups skipped
//!   at once, SMT siblings from the node's thread list, identical levels
//!   consolidated. Work per online stays roughly flat.
//!
//! Storage is one mask per *group*, shared by its online members (an offline
//! CPU's masks are empty, as after Linux's `remove_cpu_from_masks`), so 16384
//! CPUs need a few MiB instead of 2 KiB × CPUs × levels
//! ([`MaskEngine::mask_storage_bytes`]).
//!
//! Cost shape: scoped work per CPU depends on the number of groups inside the
//! enclosing group it scans (the node, or tighter), not on the machine size.
//! Levels equal to the SMT siblings (an L2 per core) cost a look at the CPU
//! node's thread list. So the cost is flat as machines grow by adding nodes,
//! and grows with the node when one node holds many shared-L2 groups (a
//! POWER9-style single socket, the kind of machine on which Linux's series
//! still needed 6 s for 4096 CPUs). `BENCHMARKS.md` has both curves.
//!
//! [`MaskEngine::rebuild_from_scratch`] recomputes every mask from the
//! [`topology::Topology`] alone (never the firmware tree) and
//! [`MaskEngine::verify`] compares.
//!
//! ```no_run
#![doc = include_str!("../examples/masks.rs")]
//! ```
//!
//! # State machine: [`Hotplug`]
//!
//! Each CPU moves [`CpuState::Offline`] → `Kicked` → `Alive` → `Online` and back,
//! running the architecture's steps ([`Platform`]: kick, wait for alive,
//! calibrate, stop) and callbacks registered per [`Stage`] like Linux's cpuhp
//! states; a failure rolls the CPU back. [`Hotplug::bringup_serial`] brings CPUs
//! up one by one; [`Hotplug::bringup_parallel`] kicks them all before waiting
//! for any (Linux 6.5).
//!
//! ```no_run
#![doc = include_str!("../examples/bringup.rs")]
//! ```
#![forbid(unsafe_code)]
#![no_std]
#![deny(missing_docs)]

extern crate alloc;

mod counts;
mod cpuhp;
mod error;
mod fdt;
mod masks;
mod vocab;
mod x86;

/// The strategies are defined once, in `bootproto` (the kernel's command line
/// parses into them); the engine and the state machine take them as they are.
pub use bootproto::strategy::{Algo, Calibrate, Kick, ParseStrategyError};
pub use counts::{LevelWork, WorkCounts};
pub use cpuhp::{BringupReport, Callback, Hotplug, Platform, Stage};
pub use error::HotplugError;
pub use fdt::{FirmwareTree, NodeId};
pub use masks::{MaskEngine, Mismatch, NaivePrice, RebuiltMasks};
pub use vocab::{CpuState, MaskLevel};
pub use x86::{X86Cpu, X86Description};
