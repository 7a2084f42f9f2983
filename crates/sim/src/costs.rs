//! Per-platform cost tables: what hardware and firmware charge for each step of a
//! CPU's bring-up, each value with where it comes from.
//!
//! Only costs that the *hardware or firmware* imposes, or that the simulator does
//! not execute, live here. Work that manycore really performs (topology-mask
//! updates, firmware-topology look-ups) is counted by running the real code in
//! `crates/hotplug` and priced per operation by [`CostTable::lookup`],
//! [`CostTable::scan`] and [`CostTable::bit_op`].
//!
//! Every [`Param`] carries a [`Source`]:
//! - [`Source::Code`]: a delay or loop bound written in the Linux version the seed
//!   measured (e.g. `mdelay(10)` after INIT);
//! - [`Source::Spec`]: an architecture specification's required delay;
//! - [`Source::Seed`]: read directly off a seed's log (e.g. BogoMIPS / 2 = MHz);
//! - [`Source::Fitted`]: one of the few free parameters, fitted by
//!   [`crate::fit`] on a seed's *small* machines only;
//! - [`Source::Assumed`]: no measurement exists here; a stated guess, and no
//!   validation row depends on it being right.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::fit::Fitted;
use crate::strategy::Calibrate;

/// Where a cost value comes from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", content = "detail", rename_all = "lowercase")]
pub enum Source {
    /// A constant in the Linux source of the era.
    Code(&'static str),
    /// An architecture or firmware specification.
    Spec(&'static str),
    /// Read directly off a seed's log.
    Seed(&'static str),
    /// Fitted by [`crate::fit`]; the text says on what.
    Fitted(String),
    /// A stated assumption (no data here).
    Assumed(&'static str),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Code(s) => write!(f, "code: {s}"),
            Source::Spec(s) => write!(f, "spec: {s}"),
            Source::Seed(s) => write!(f, "seed: {s}"),
            Source::Fitted(s) => write!(f, "fitted: {s}"),
            Source::Assumed(s) => write!(f, "assumed: {s}"),
        }
    }
}

/// One cost in nanoseconds (fractional for per-operation costs) and its source.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Param {
    /// Nanoseconds.
    pub ns: f64,
    /// Provenance.
    pub source: Source,
}

impl Param {
    fn new(ns: f64, source: Source) -> Param {
        Param { ns, source }
    }
}

/// The platforms the simulator models. x86 comes in two kernel eras because seed
/// 002 (Linux 2.6.37, 2010) and seed 003 (Linux 6.1, 2023) measured kernels whose
/// fixed delays differ by three orders of magnitude.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Platform {
    /// x86-64 with a 2023 kernel (seed 003): no INIT delay on modern CPUs, lpj known
    /// from the TSC.
    X86,
    /// x86-64 with a 2010 kernel (seed 002): 10 ms INIT delay, 20 ms TSC warp check,
    /// per-CPU `calibrate_delay`.
    X86_2010,
    /// POWER pseries LPAR under PowerVM (seed 000).
    PowerPc,
    /// arm64 server with PSCI (seed 004's D06); not validated, see the table.
    Arm64,
}

impl Platform {
    /// Every platform, in the order `manycore boot --help` lists them.
    pub const ALL: [Platform; 4] = [
        Platform::X86,
        Platform::X86_2010,
        Platform::PowerPc,
        Platform::Arm64,
    ];

    /// The command-line spelling.
    pub fn name(self) -> &'static str {
        match self {
            Platform::X86 => "x86",
            Platform::X86_2010 => "x86-2010",
            Platform::PowerPc => "powerpc",
            Platform::Arm64 => "arm64",
        }
    }

    /// The platform a topology's architecture implies, if it has one.
    pub fn for_arch(arch: &topology::Arch) -> Option<Platform> {
        match arch {
            topology::Arch::X86_64 | topology::Arch::X86 => Some(Platform::X86),
            topology::Arch::PowerPc64 | topology::Arch::PowerPc => Some(Platform::PowerPc),
            topology::Arch::Arm64 | topology::Arch::Arm => Some(Platform::Arm64),
            _ => None,
        }
    }

    /// Whether this platform's log uses x86's "Booting Node" lines.
    pub fn is_x86(self) -> bool {
        matches!(self, Platform::X86 | Platform::X86_2010)
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A platform name the command line did not recognise.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--platform: '{0}' is not one of x86, x86-2010, powerpc, arm64")]
pub struct ParsePlatformError(pub String);

impl FromStr for Platform {
    type Err = ParsePlatformError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Platform::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| ParsePlatformError(s.to_string()))
    }
}

/// What one platform charges for each bring-up step. See the module docs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CostTable {
    /// The platform.
    pub platform: Platform,
    /// Boot-CPU time spent sending one wake-up (INIT/SIPI/SIPI with their delays,
    /// RTAS start-cpu / spin-table release, PSCI CPU_ON).
    pub kick_bsp: Param,
    /// From the wake-up to the AP running kernel code that can report in
    /// (trampoline, firmware, microcode load).
    pub ap_start: Param,
    /// Microcode update on the AP during its start (x86 `load_ucode_ap`).
    pub microcode: Param,
    /// Extra AP start-up per 10 units of SLIT distance between the boot CPU's node
    /// and the AP's (first touches of memory allocated on the boot node).
    pub remote_hop: Param,
    /// x86 TSC warp check, during which boot CPU and AP both spin.
    pub tsc_sync: Param,
    /// Whether the TSC check is skipped on "clustered APIC" boxes (more than two
    /// clusters of 16 APIC ids), as Linux 2.6.37's `unsynchronized_tsc()` did.
    pub tsc_skip_clustered: bool,
    /// One `calibrate_delay()` run.
    pub calibrate: Param,
    /// The serialized rest of one CPU's online (cpuhp states, idle thread, notifiers,
    /// the online handshake), apart from the mask work priced per operation.
    pub online_serial: Param,
    /// One firmware-topology look-up by the mask code (device-tree property read on
    /// POWER; per-CPU data read elsewhere).
    pub lookup: Param,
    /// One CPU visited by a mask scan.
    pub scan: Param,
    /// One mask bit operation.
    pub bit_op: Param,
    /// Core clock for BogoMIPS (x86 prints 2 × MHz per CPU).
    pub cpu_mhz: f64,
    /// Relative amplitude of the uniform jitter applied to hardware costs.
    pub jitter: f64,
}

/// The assumed costs: values nothing here measures. Each is an input of the
/// fit ([`crate::fit::fitted_with`]), so the fitted parameters absorb what an
/// assumption gets wrong on the fitting machines; what still moves on the
/// predicted machines is what `manycore validate` lists under each row's
/// `assumes` (checked by perturbing each one in turn).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Assumptions {
    /// One CPU or tree node visited by a mask scan.
    pub scan_ns: f64,
    /// One mask bit or word operation.
    pub bit_op_ns: f64,
    /// One topology look-up where there is no firmware tree (x86, arm64).
    pub local_lookup_ns: f64,
    /// Extra AP start-up per 10 units of SLIT distance from the boot node
    /// (x86 2023 and arm64).
    pub remote_hop_ns: f64,
    /// arm64 PSCI CPU_ON round trip on the boot CPU.
    pub arm64_kick_ns: f64,
}

impl Default for Assumptions {
    fn default() -> Self {
        Assumptions {
            scan_ns: SCAN_NS,
            bit_op_ns: BIT_OP_NS,
            local_lookup_ns: LOCAL_LOOKUP_NS,
            remote_hop_ns: REMOTE_HOP_NS,
            arm64_kick_ns: ARM64_KICK_NS,
        }
    }
}

impl Assumptions {
    /// Every assumption's name, as rows' `assumes` lists name them.
    pub const NAMES: [&'static str; 5] =
        ["scan", "bit_op", "local_lookup", "remote_hop", "arm64_kick"];

    /// These assumptions with the one called `name` multiplied by `factor`.
    pub fn scaled(mut self, name: &str, factor: f64) -> Option<Assumptions> {
        let v = match name {
            "scan" => &mut self.scan_ns,
            "bit_op" => &mut self.bit_op_ns,
            "local_lookup" => &mut self.local_lookup_ns,
            "remote_hop" => &mut self.remote_hop_ns,
            "arm64_kick" => &mut self.arm64_kick_ns,
            _ => return None,
        };
        *v *= factor;
        Some(self)
    }
}

/// Assumed price of one CPU or tree node visited by a scan.
pub const SCAN_NS: f64 = 2.0;
/// Assumed price of one mask bit or word operation.
pub const BIT_OP_NS: f64 = 1.0;
/// Assumed price of a topology look-up where there is no firmware tree (x86, arm64).
pub const LOCAL_LOOKUP_NS: f64 = 5.0;
/// The x86 2023 kick: 2 × STARTUP with udelay(10) + udelay(10).
pub const X86_KICK_NS: f64 = 40.0 * NS_PER_US;
/// The x86 2010 kick: mdelay(10) after INIT, 2 × STARTUP with udelay(300) + udelay(200).
pub const X86_2010_KICK_NS: f64 = 11.0 * NS_PER_MS;
/// Linux 2.6.37's TSC warp check length.
pub const X86_2010_TSC_NS: f64 = 20.0 * NS_PER_MS;
/// pseries release of a thread spinning in the firmware loop.
pub const PPC_KICK_NS: f64 = 1.0 * NS_PER_US;
/// Assumed arm64 PSCI CPU_ON round trip (see the arm64 table).
pub const ARM64_KICK_NS: f64 = 50.0 * NS_PER_US;
/// Assumed remote start-up per 10 SLIT units: a few hundred remote cache
/// misses at ~100 ns.
pub const REMOTE_HOP_NS: f64 = 20.0 * NS_PER_US;

const NS_PER_MS: f64 = 1e6;
const NS_PER_US: f64 = 1e3;

impl CostTable {
    /// The cost table of `platform`, with the parameters `fit` found (see
    /// [`crate::fit::fitted`]).
    pub fn for_platform(platform: Platform, fit: &Fitted) -> CostTable {
        let a = &fit.assumptions;
        let tiny_lookup = Param::new(
            a.local_lookup_ns,
            Source::Assumed("per-CPU data read (no firmware tree on this platform)"),
        );
        let scan = Param::new(
            a.scan_ns,
            Source::Assumed("one cpumask iteration step or tree-node step plus a compare"),
        );
        let bit_op = Param::new(
            a.bit_op_ns,
            Source::Assumed("one cpumask bit or word write"),
        );
        let jitter = 0.01;
        match platform {
            Platform::X86_2010 => CostTable {
                platform,
                kick_bsp: Param::new(
                    X86_2010_KICK_NS,
                    Source::Code(
                        "Linux 2.6.37 wakeup_secondary_cpu_via_init: mdelay(10) after INIT, \
                         then 2 × STARTUP with udelay(300) + udelay(200) (Intel MP spec B.4)",
                    ),
                ),
                ap_start: Param::new(
                    0.0,
                    Source::Assumed(
                        "not separable from online_serial in seed 002's logs; folded into it",
                    ),
                ),
                microcode: Param::new(
                    0.0,
                    Source::Assumed("folded into online_serial (seed 002 does not separate it)"),
                ),
                remote_hop: Param::new(0.0, Source::Assumed("folded into online_serial")),
                tsc_sync: Param::new(
                    X86_2010_TSC_NS,
                    Source::Code("Linux 2.6.37 tsc_sync.c: check_tsc_warp() spins 20 ms"),
                ),
                tsc_skip_clustered: true,
                calibrate: fit.x86_2010_calibrate.clone(),
                online_serial: fit.x86_2010_online.clone(),
                lookup: tiny_lookup,
                scan,
                bit_op,
                cpu_mhz: 2266.4,
                jitter,
            },
            Platform::X86 => CostTable {
                platform,
                kick_bsp: Param::new(
                    X86_KICK_NS,
                    Source::Code(
                        "Linux 6.1 wakeup_secondary_cpu_via_init with init_udelay = 0 on \
                         modern CPUs: 2 × STARTUP with udelay(10) + udelay(10)",
                    ),
                ),
                ap_start: fit.x86_ap_start.clone(),
                microcode: Param::new(
                    0.0,
                    Source::Assumed("folded into the fitted ap_start (seed 003 does not separate it)"),
                ),
                remote_hop: Param::new(
                    a.remote_hop_ns,
                    Source::Assumed("a few hundred remote cache misses at ~100 ns"),
                ),
                tsc_sync: Param::new(
                    0.0,
                    Source::Assumed("folded into online_serial (seed 003 does not split it)"),
                ),
                tsc_skip_clustered: false,
                calibrate: Param::new(
                    fit.x86_2010_calibrate.ns,
                    Source::Fitted(
                        "taken from x86-2010 (seed 002); only used with --calibrate serial|parallel"
                            .to_string(),
                    ),
                ),
                online_serial: fit.x86_online.clone(),
                lookup: tiny_lookup,
                scan,
                bit_op,
                cpu_mhz: 2600.0,
                jitter,
            },
            Platform::PowerPc => CostTable {
                platform,
                kick_bsp: Param::new(
                    PPC_KICK_NS,
                    Source::Code(
                        "pseries smp_startup_cpu: at boot the thread already spins in the \
                         firmware loop (of_spin_mask), so the kick is a store and a barrier",
                    ),
                ),
                ap_start: Param::new(0.0, Source::Assumed("folded into online_serial")),
                microcode: Param::new(0.0, Source::Code("POWER loads no microcode from the OS")),
                remote_hop: Param::new(0.0, Source::Assumed("folded into online_serial")),
                tsc_sync: Param::new(
                    0.0,
                    Source::Code("timebase is synchronised by the hypervisor"),
                ),
                tsc_skip_clustered: false,
                calibrate: Param::new(
                    0.0,
                    Source::Code("powerpc derives loops_per_jiffy from the timebase"),
                ),
                online_serial: fit.ppc_online.clone(),
                lookup: fit.ppc_lookup.clone(),
                scan,
                bit_op,
                cpu_mhz: 512.0,
                jitter,
            },
            Platform::Arm64 => CostTable {
                platform,
                kick_bsp: Param::new(
                    a.arm64_kick_ns,
                    Source::Assumed(
                        "PSCI CPU_ON SMC round trip into trusted firmware; no log separates it \
                         from the core's power-up, so the fitted ap_start absorbs any error here",
                    ),
                ),
                ap_start: fit.arm64_ap_start.clone(),
                microcode: Param::new(0.0, Source::Code("arm64 loads no microcode from the OS")),
                remote_hop: Param::new(
                    a.remote_hop_ns,
                    Source::Assumed("a few hundred remote cache misses at ~100 ns"),
                ),
                tsc_sync: Param::new(
                    0.0,
                    Source::Spec("arm64 generic timer is architecturally synchronised"),
                ),
                tsc_skip_clustered: false,
                calibrate: Param::new(
                    0.0,
                    Source::Code("arm64 sets lpj from the architected timer"),
                ),
                online_serial: fit.arm64_online.clone(),
                lookup: tiny_lookup,
                scan,
                bit_op,
                cpu_mhz: 2600.0,
                jitter,
            },
        }
    }

    /// How this platform's Linux obtains each secondary CPU's delay-loop
    /// calibration when the command line says nothing (`lpj=` absent):
    ///
    /// - `x86`: Linux 6.5+ (`x86/smpboot: Avoid pointless delay calibration if
    ///   TSC is synchronized`) calibrates after the TSC check, and
    ///   `calibrate_delay_is_known()` (arch/x86/kernel/tsc.c) returns CPU 0's
    ///   `loops_per_jiffy` whenever the TSC has constant frequency and is not
    ///   marked unstable, so no AP calibrates ([`Calibrate::Skip`]). Before 6.5 the
    ///   same function only copied an online sibling in the same package, so
    ///   the first CPU of each further package calibrated.
    /// - `x86-2010`: Linux 2.6.37 calibrates on every AP (seed 002).
    /// - `powerpc`: `loops_per_jiffy` comes from the timebase frequency.
    /// - `arm64`: from the architected timer's frequency.
    ///
    /// On all but x86-2010 every AP takes the boot CPU's value.
    pub fn default_calibrate(&self) -> Calibrate {
        match self.platform {
            Platform::X86_2010 => Calibrate::Serial,
            Platform::X86 | Platform::PowerPc | Platform::Arm64 => Calibrate::Skip,
        }
    }

    /// Every parameter with its name, for tables and JSON.
    pub fn params(&self) -> Vec<(&'static str, &Param)> {
        vec![
            ("kick_bsp", &self.kick_bsp),
            ("ap_start", &self.ap_start),
            ("microcode", &self.microcode),
            ("remote_hop", &self.remote_hop),
            ("tsc_sync", &self.tsc_sync),
            ("calibrate", &self.calibrate),
            ("online_serial", &self.online_serial),
            ("lookup", &self.lookup),
            ("scan", &self.scan),
            ("bit_op", &self.bit_op),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn platform_names_round_trip_and_bad_names_are_errors() {
        for p in Platform::ALL {
            assert_eq!(p.name().parse::<Platform>().unwrap(), p);
        }
        let e = "sparc".parse::<Platform>().unwrap_err();
        assert!(e.to_string().contains("'sparc'"));
    }
}
