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
//!   once per package (`calibrate_delay_is_known()`), skipped (every AP takes
//!   the boot CPU's value), or replaced by `lpj=` (see [`Calibrate`]).
//! - [`masks`]: the topology masks are updated by the real mask code
//!   (crates/hotplug), whose operation counts are priced per operation.
//! - [`costs`]: what hardware and firmware charge, per platform: one table
//!   ([`costs::TABLE`]) with a row per platform and parameter and where its
//!   value comes from (kernel code constant, specification, fitted, or assumed),
//!   resolved against an explicit fit by [`costs::CostTable::for_platform`].
//! - [`fit`]: the few free parameters, fitted on eleven machines only (seed
//!   002's small boxes, seed 000's two LPARs, seed 003's server, of the
//!   record's arm64 logs one per firmware that has a second log to predict,
//!   and three of its powerpc rows, [`powerpc`]); the assumed
//!   costs ([`costs::Assumptions`]) are inputs of the fit.
//! - [`powerpc`]: PowerNV, PowerVM and KVM guests, each with its own fitted
//!   per-CPU cost, a `/cpus` visit priced per POWER processor, and the mask
//!   code of the kernel measured counted as Linux's own walks
//!   ([`linux_walks`]).
//! - [`record`]: the public record (`data/bringup-record.toml`), published
//!   bring-up measurements with machine, kernel, what was measured and source.
//! - [`smt`]: seed 000's `ppc64_cpu --smt=1/8` switches through the hotplug
//!   engine's `cpu_down` / `cpu_up`.
//! - [`linux_walks`]: seed 000's device-tree walks as Linux v5.9 / v5.10 make
//!   them on PowerVM and on a KVM guest (a cross-check of the 4096-CPU rows).
//! - [`validate`]: predicts the machines the fit never saw and compares with
//!   what was measured on them.
//! - [`report`]: text summary, `--compare` table, and the SVG timeline.
//!
//! # One implementation
//!
//! The simulated machine is a `hotplug::Platform`: crates/hotplug's cpuhp-style
//! state machine (`Hotplug::bringup_serial` / `bringup_parallel`) decides the
//! order of kicks, waits, calibrations and callbacks, and its `MaskEngine` does
//! the real topology-mask work for every online. The simulator only turns that
//! work into virtual time: [`masks::price`] charges the operation counts the
//! engine reports (property look-ups, tree nodes walked, CPUs scanned, mask
//! operations) at the platform's per-operation prices. Naive masks on large
//! regular machines are counted by [`masks::naive_ops_extrapolated`] in the
//! validation (a cubic through four smaller real runs, exact; tested), and run
//! for real by `manycore boot`.
//!
//! # Validation (`manycore validate`)
//!
//! `manycore validate` prints two groups: *predicted* rows (machines the fit
//! never saw; only these count toward the acceptance test, each within 25 %
//! or held to a band around its documented miss) and *fitted* rows
//! (measurements the fit used, re-simulated in-sample). What it shows:
//!
//! - Seed 002's 4096-CPU UV is predicted from the 12/16/32-CPU boxes within
//!   +7.5 % / −11.4 %; the one fact that makes it work is code, not fitting:
//!   Linux 2.6.37 skips the 20 ms TSC warp check on "clustered APIC" machines
//!   ([`run::clustered_apic`]). Its `lpj=` figure (prose, no log) misses.
//! - x86 with today's parallel kick, fitted in-sample on seed 003's server
//!   (its 700 ms serial run and, from its author's later mail, 30 ms with no
//!   AP calibrating), knows the two costs the kernels of the record run once
//!   per further package: before Linux 6.5 a delay calibration, and in every
//!   kernel since 4.10 a 20 ms TSC check. It predicts the c5.metal
//!   (2 × 24 × 2) within 10 % serial and 7 % parallel and the 28-thread
//!   Haswell's serial time within 7 %; it misses the Haswell's parallel time
//!   and HPE's 1920-CPU Sapphire Rapids — each with its reason in
//!   [`validate::KNOWN_MISSES`]. A Hyper-V guest whose APs all calibrate
//!   is predicted within 1 % once the calibration is counted in ticks of the
//!   guest kernel's own HZ (`calibrate_delay_direct()`, [`costs::direct_calibration_ns`])
//!   and each INIT/SIPI write is a VM exit ([`costs::CostTable::in_guest`]).
//! - arm64: per-CPU bring-up is 0.2 ms to 32 ms across the record's boards,
//!   and the logs show the spread lies in the gap before the AP enters the
//!   kernel, not in the topology. On the Raspberry Pi 5 that gap is kernel
//!   work alone (TF-A's Raspberry Pi platform answers CPU_ON by releasing a
//!   held core), elsewhere it is firmware no source times, so each board's
//!   row names its firmware and a fitted gap carries only within one
//!   ([`fit::Arm64Firmware`]). The PSCI call itself is priced from Trusted
//!   Firmware-A's published timings on Neoverse N1 (the Altra's core). A CPU
//!   on a socket other than the boot CPU's takes 2.2x longer, fitted on the
//!   one log that times both sockets of a run (a KASAN ThunderX2,
//!   [`fit::RemoteFactor`]); that predicts the 2-socket Altra's far socket
//!   and two other ThunderX2 runs within 13 %.
//! - x86's prepare stage (the control CPU's cpuhp prepare states, before
//!   each kick in every order) is the kernel's configuration: folded into
//!   seed 003's fit, set by a record row that states it (Thomas Gleixner's
//!   Skylake, whose parallel run and its `tsc=reliable` repeat it brings
//!   within 25 %).
//! - Seed 000's 4096-CPU machine (a KVM guest) cannot be predicted from the
//!   1024-CPU PowerVM LPAR with one price per operation, even with Linux's
//!   own walks counted call by call ([`linux_walks`]); an ignored test keeps
//!   the gap visible. Its SMT switches (fixed cost fitted on the before
//!   medians) predict the `--smt=8` saving (0.59 s against 0.55 s measured)
//!   but not the `--smt=1` one.
//! - Seed 003 reports a single machine, so its rows are in-sample.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod arm64;
pub mod costs;
pub mod engine;
pub mod fit;
pub mod linux_walks;
pub mod machines;
pub mod masks;
pub mod powerpc;
pub mod record;
pub mod report;
pub mod run;
pub mod smt;
pub mod strategy;
pub mod validate;
pub mod x86;

pub use costs::{CostTable, Param, Platform, Source};
pub use run::{simulate, simulate_with, Options, Phase, Run};
pub use strategy::{Algo, Calibrate, Kick, Strategy};

/// Why a simulation could not run.
#[derive(Debug, Clone, thiserror::Error)]
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
    /// The public record (data/bringup-record.toml) is unreadable.
    #[error(transparent)]
    Record(#[from] record::RecordError),
    /// A fitted parameter came out as no positive time.
    #[error("fit: {0}")]
    Fit(String),
    /// A bug in the simulator's bookkeeping.
    #[error("internal error: {0}")]
    Internal(&'static str),
}
