//! The one error type of the crate. Every variant names the CPU concerned, and
//! a failed operation leaves all state as it was.

use alloc::string::String;
use core::fmt;

use crate::vocab::{CpuState, MaskLevel};

/// Why a hotplug operation was refused or failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HotplugError {
    /// The CPU is not present, or its topology is unknown.
    UnknownCpu(usize),
    /// Onlining a CPU that is already online.
    AlreadyOnline(usize),
    /// Offlining a CPU that is already offline.
    AlreadyOffline(usize),
    /// The boot CPU cannot be taken offline.
    BootCpu(usize),
    /// Offlining the last online CPU would leave nothing running.
    LastOnline(usize),
    /// The state machine was asked for a step from the wrong state.
    WrongState {
        /// The CPU.
        cpu: usize,
        /// Its current state.
        state: CpuState,
        /// The step that was asked for.
        step: &'static str,
    },
    /// An architecture step (kick, wait for alive, calibrate, stop) failed.
    Platform {
        /// The CPU.
        cpu: usize,
        /// The step.
        step: &'static str,
        /// The platform's explanation.
        message: String,
    },
    /// A registered state callback failed; the CPU was rolled back.
    Callback {
        /// The CPU.
        cpu: usize,
        /// The callback's registered name.
        name: &'static str,
        /// The callback's explanation.
        message: String,
    },
    /// The machine cannot be described by the firmware tree (one node per SMT
    /// core), so incremental masks would be wrong; names the first offender.
    Unsupported {
        /// The CPU.
        cpu: usize,
        /// The level concerned.
        level: MaskLevel,
        /// What is irregular.
        reason: &'static str,
    },
}

impl fmt::Display for HotplugError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HotplugError::UnknownCpu(c) => {
                write!(f, "CPU {c} is not present or its topology is unknown")
            }
            HotplugError::AlreadyOnline(c) => write!(f, "CPU {c} is already online"),
            HotplugError::AlreadyOffline(c) => write!(f, "CPU {c} is already offline"),
            HotplugError::BootCpu(c) => write!(f, "CPU {c} is the boot CPU and cannot go offline"),
            HotplugError::LastOnline(c) => {
                write!(f, "CPU {c} is the last online CPU and cannot go offline")
            }
            HotplugError::WrongState { cpu, state, step } => {
                write!(f, "CPU {cpu}: cannot {step} from state {}", state.name())
            }
            HotplugError::Platform { cpu, step, message } => {
                write!(f, "CPU {cpu}: {step} failed: {message}")
            }
            HotplugError::Callback { cpu, name, message } => {
                write!(f, "CPU {cpu}: callback {name:?} failed: {message}")
            }
            HotplugError::Unsupported { cpu, level, reason } => write!(
                f,
                "CPU {cpu}: {} masks cannot be maintained incrementally: {reason}",
                level.name()
            ),
        }
    }
}

impl core::error::Error for HotplugError {}
