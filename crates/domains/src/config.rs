//! The kernel build options that change which topology levels exist: a domain
//! tree is a function of the machine, the kernel version *and* its `.config`.
//! Debian's arm64 6.12 kernel, for one, is built without `CONFIG_SCHED_CLUSTER`,
//! so it has no CLS domain even where sysfs shows clusters.

use alloc::format;
use alloc::string::String;
use core::fmt;

/// The `CONFIG_SCHED_*` options `default_topology` and `x86_topology` test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelConfig {
    /// `CONFIG_SCHED_SMT`: the SMT level (and arm64/x86 `cpu_smt_mask`).
    pub sched_smt: bool,
    /// `CONFIG_SCHED_CLUSTER`: the CLS level, and arm64's `cpu_coregroup_mask()`
    /// widening MC to the cluster when the LLC is narrower.
    pub sched_cluster: bool,
    /// `CONFIG_SCHED_MC`: the MC level on x86 and `default_topology`.
    pub sched_mc: bool,
}

impl Default for KernelConfig {
    /// Every option on: what x86 distributions build, and what the builder
    /// assumes unless told otherwise (`manycore domains --kernel-config`).
    fn default() -> Self {
        KernelConfig::ALL_ON
    }
}

/// A line of a `.config` that names one of our options with a value we cannot read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl KernelConfig {
    /// `CONFIG_SCHED_SMT=y`, `CONFIG_SCHED_CLUSTER=y`, `CONFIG_SCHED_MC=y`.
    pub const ALL_ON: KernelConfig = KernelConfig {
        sched_smt: true,
        sched_cluster: true,
        sched_mc: true,
    };

    /// Reads a kernel `.config` (or any fragment of one). An option set to `y`
    /// is on; `# CONFIG_X is not set`, or an option the text does not mention,
    /// is off, as Kconfig itself reads a `.config`. Other options are ignored.
    /// `=m` or any other value for one of ours is an error: they are `bool`.
    pub fn parse(text: &str) -> Result<KernelConfig, ConfigError> {
        let mut c = KernelConfig {
            sched_smt: false,
            sched_cluster: false,
            sched_mc: false,
        };
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            let Some((name, value)) = line.split_once('=') else {
                continue;
            };
            let slot = match name.trim() {
                "CONFIG_SCHED_SMT" => &mut c.sched_smt,
                "CONFIG_SCHED_CLUSTER" => &mut c.sched_cluster,
                "CONFIG_SCHED_MC" => &mut c.sched_mc,
                _ => continue,
            };
            *slot = match value.trim() {
                "y" => true,
                "n" => false,
                other => {
                    return Err(ConfigError {
                        line: i + 1,
                        message: format!("{} is a bool option, cannot be {other:?}", name.trim()),
                    })
                }
            };
        }
        Ok(c)
    }
}
