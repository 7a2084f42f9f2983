//! The kernel command line the host writes (`-append`) and the kernel
//! parses: `bringup=`, `calibrate=`, `lpj=`, `init_delay_us=`, `x2apic=` and a
//! few knobs for tests and fault injection. Unknown or malformed words are
//! reported and ignored, never fatal.

use alloc::string::String;
use core::fmt;
use core::str::FromStr;

pub use crate::strategy::{Calibrate, Kick, ParseStrategyError};

/// How the BSP starts the application processors: one INIT/SIPI/SIPI per AP
/// in a [`Kick`] order, or one broadcast to all of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bringup {
    /// `serial` / `parallel`: INIT, SIPI, SIPI to each AP by its APIC id, in
    /// the given order (the hotplug state machine's).
    Kick(Kick),
    /// `broadcast`: one INIT/SIPI/SIPI to all-excluding-self, then each AP is
    /// waited for in turn (the parallel order, with a single kick).
    Broadcast,
}

impl Bringup {
    /// Every value, for help text and tests.
    pub const ALL: [Bringup; 3] = [
        Bringup::Kick(Kick::Serial),
        Bringup::Kick(Kick::Parallel),
        Bringup::Broadcast,
    ];

    /// The order the hotplug state machine completes the APs in.
    pub fn order(self) -> Kick {
        match self {
            Bringup::Kick(k) => k,
            Bringup::Broadcast => Kick::Parallel,
        }
    }
}

impl fmt::Display for Bringup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bringup::Kick(k) => k.fmt(f),
            Bringup::Broadcast => f.write_str("broadcast"),
        }
    }
}

impl FromStr for Bringup {
    type Err = ParseStrategyError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "broadcast" => Ok(Bringup::Broadcast),
            _ => s
                .parse()
                .map(Bringup::Kick)
                .map_err(|_| ParseStrategyError {
                    value: String::from(s),
                    expected: "serial, parallel, broadcast",
                }),
        }
    }
}

/// The [`Calibrate`] strategies this kernel implements. It has no package
/// bookkeeping on the AP side, so no `once-per-package`; and `lpj=` is a word
/// of its own (it presets the boot CPU too), so `calibrate=skip lpj=N` is what
/// [`Calibrate::Lpj`] means.
pub const KERNEL_CALIBRATE: [Calibrate; 3] =
    [Calibrate::Serial, Calibrate::Parallel, Calibrate::Skip];

/// Parsed options with their defaults.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Bring-up strategy (`bringup=`), default parallel.
    pub bringup: Bringup,
    /// AP delay calibration (`calibrate=`), default parallel; one of
    /// [`KERNEL_CALIBRATE`].
    pub calibrate: Calibrate,
    /// Loops per jiffy given on the command line (`lpj=`): skips BSP calibration too.
    pub lpj: Option<u64>,
    /// Delay after INIT in µs (`init_delay_us=`), default 10 000 as the MP spec says.
    pub init_delay_us: u64,
    /// Delay after each SIPI in µs (`sipi_delay_us=`), default 200.
    pub sipi_delay_us: u64,
    /// x2APIC mode (`x2apic=on|off`); `None` = on when the CPU supports it.
    pub x2apic: Option<bool>,
    /// How long the BSP waits for an AP to call in (`callin_timeout_ms=`), default 5000.
    pub callin_timeout_ms: u64,
    /// Fault injection: an extra APIC id with no CPU behind it (`ghost_apic=`).
    pub ghost_apic: Option<u32>,
    /// Print one line per CPU with its per-CPU area and stack (`percpu_dump`).
    pub percpu_dump: bool,
    /// Print one `cputopo:` line per CPU with its topology facts (`topo_dump`).
    pub topo_dump: bool,
    /// Print every online CPU's scheduler domains (`sched_domains=on|off`,
    /// default on): one line per distinct domain plus one per CPU.
    pub sched_domains: bool,
    /// Fault injection: leave only this many KiB free on each node before the
    /// per-CPU areas are allocated (`fault_mem_kib=`), so that some fail.
    pub fault_mem_kib: Option<u64>,
    /// Restrict `fault_mem_kib=` to this node (`fault_mem_node=`), so that its
    /// CPUs fall back to the nearest other node.
    pub fault_mem_node: Option<u32>,
    /// Fault injection: `fault=panic` panics, `fault=ud2` takes an invalid-opcode
    /// exception, right after the command line is read (tests the exit paths).
    pub fault: Option<Fault>,
}

/// A deliberate failure, to test that it reaches the host as a failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// A Rust panic.
    Panic,
    /// A CPU exception (#UD).
    InvalidOpcode,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            bringup: Bringup::Kick(Kick::Parallel),
            calibrate: Calibrate::Parallel,
            lpj: None,
            init_delay_us: 10_000,
            sipi_delay_us: 200,
            x2apic: None,
            callin_timeout_ms: 5000,
            ghost_apic: None,
            percpu_dump: false,
            topo_dump: false,
            sched_domains: true,
            fault_mem_kib: None,
            fault_mem_node: None,
            fault: None,
        }
    }
}

/// A word of the command line that could not be used.
#[derive(Clone, Copy, Debug)]
pub struct BadWord<'a>(pub &'a str);

impl fmt::Display for BadWord<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ignoring unknown or malformed option '{}'", self.0)
    }
}

/// Parses `text`, calling `bad` for each word it ignores (including a
/// `calibrate=` strategy outside [`KERNEL_CALIBRATE`]).
pub fn parse<'a>(text: &'a str, mut bad: impl FnMut(BadWord<'a>)) -> Options {
    let mut o = Options::default();
    for word in text.split_ascii_whitespace() {
        let (key, value) = word.split_once('=').unwrap_or((word, ""));
        let ok = match key {
            "bringup" => value.parse().map(|b| o.bringup = b).is_ok(),
            "calibrate" => match value.parse() {
                Ok(c) if KERNEL_CALIBRATE.contains(&c) => set(&mut o.calibrate, c),
                _ => false,
            },
            "x2apic" => match value {
                "on" => set(&mut o.x2apic, Some(true)),
                "off" => set(&mut o.x2apic, Some(false)),
                _ => false,
            },
            "lpj" => crate::strategy::parse_lpj(value)
                .map(|v| o.lpj = Some(v))
                .is_some(),
            "init_delay_us" => value.parse().map(|v| o.init_delay_us = v).is_ok(),
            "sipi_delay_us" => value.parse().map(|v| o.sipi_delay_us = v).is_ok(),
            "callin_timeout_ms" => value.parse().map(|v| o.callin_timeout_ms = v).is_ok(),
            "ghost_apic" => value.parse().map(|v| o.ghost_apic = Some(v)).is_ok(),
            "percpu_dump" => set(&mut o.percpu_dump, true),
            "topo_dump" => set(&mut o.topo_dump, true),
            "sched_domains" => match value {
                "on" => set(&mut o.sched_domains, true),
                "off" => set(&mut o.sched_domains, false),
                _ => false,
            },
            "fault_mem_kib" => value.parse().map(|v| o.fault_mem_kib = Some(v)).is_ok(),
            "fault" => match value {
                "panic" => set(&mut o.fault, Some(Fault::Panic)),
                "ud2" => set(&mut o.fault, Some(Fault::InvalidOpcode)),
                _ => false,
            },
            "fault_mem_node" => value.parse().map(|v| o.fault_mem_node = Some(v)).is_ok(),
            _ => false,
        };
        if !ok {
            bad(BadWord(word));
        }
    }
    o
}

fn set<T>(slot: &mut T, value: T) -> bool {
    *slot = value;
    true
}
