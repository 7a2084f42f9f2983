//! One simulated bring-up strategy: a choice of each of the strategies the
//! seeds compare. The strategies themselves (their meanings, spellings and
//! parsers) are crates/bootproto's, re-exported by crates/hotplug, shared
//! with the CLI and the bare-metal kernel's command line.

use std::fmt;

pub use hotplug::{Algo, Calibrate, Kick};
use serde::Serialize;

/// One complete bring-up strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Strategy {
    /// Kick order.
    pub kick: Kick,
    /// Delay calibration.
    pub calibrate: Calibrate,
    /// Topology-mask algorithm.
    pub masks: Algo,
}

impl Default for Strategy {
    /// Linux before the seeds' patches: serial kick, serial calibration, naive masks.
    fn default() -> Self {
        Strategy {
            kick: Kick::Serial,
            calibrate: Calibrate::Serial,
            masks: Algo::Naive,
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "kick={} calibrate={} masks={}",
            self.kick, self.calibrate, self.masks
        )
    }
}
