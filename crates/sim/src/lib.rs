//! Deterministic discrete-event simulator of CPU bring-up on machines nobody has
//! here (4096-CPU x86 UV, 1024-CPU POWER8 LPARs, POWER10 shared LPARs, arm64 D06,
//! up to 16384 CPUs): how long the machine takes to bring its CPUs up, where the
//! time goes, and what each of the seeds' fixes buys.
//!
//! # How it works
//!
//! - [`engine`]: a binary-heap event queue in virtual nanoseconds (why not a
//!   framework: see its docs). Jitter comes from a seeded ChaCha8 generator, so a
//!   run is a pure function of (machine, platform, strategy, seed).
//! - [`run::simulate`]: the boot CPU walks each secondary CPU through kick → alive
//!   → calibrate → TSC sync → masks → online, serially or with every kick first
//!   ([`Kick::Parallel`], seed 003); calibration is serial, parallel (seed 002),
//!   skipped when a package sibling knows it, or replaced by `lpj=`.
//! - [`masks`]: the topology masks are updated by the real mask code
//!   (crates/hotplug), whose operation counts are priced per operation.
//! - [`costs`]: what hardware and firmware charge, per platform, each value with its
//!   source (kernel code constant, specification, seed log, fitted, or assumed).
//! - [`fit`]: the few free parameters, fitted on the seeds' *small* machines only.
//! - [`validate`]: predicts the seeds' large machines and compares with what they
//!   measured.
//! - [`report`]: text summary, `--compare` table, and the SVG timeline.
#![deny(missing_docs)]

pub mod costs;
pub mod engine;
pub mod fit;
pub mod machines;
pub mod masks;
pub mod report;
pub mod run;
pub mod strategy;
pub mod validate;

pub use costs::{CostTable, Param, Platform, Source};
pub use run::{simulate, simulate_with, Options, Phase, Run};
pub use strategy::{Calibrate, Kick, Masks, Strategy};

/// Why a simulation could not run.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The machine has no present CPU.
    #[error("the machine has no present CPU to boot from")]
    NoCpus,
    /// The mask engine refused the machine or an online.
    #[error("topology masks: {0}")]
    Masks(String),
    /// Writing an output file failed.
    #[error("{path}: {message}")]
    Output {
        /// The file.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// A bug in the simulator's bookkeeping.
    #[error("internal error: {0}")]
    Internal(&'static str),
}
