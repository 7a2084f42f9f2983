//! The kernel command line the host writes (`-append`) and the kernel
//! parses: `bringup=`, `calibrate=`, `lpj=`, `init_delay_us=`, `x2apic=` and a
//! few knobs for tests and fault injection. Unknown or malformed words are
//! reported and ignored, never fatal.

use core::fmt;

/// How the BSP starts the application processors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bringup {
    /// INIT, wait, SIPI, SIPI, wait for call-in, then the next CPU.
    Serial,
    /// Linux 6.5's scheme: kick every AP, then wait for each.
    Parallel,
    /// INIT/SIPI/SIPI to all-excluding-self.
    Broadcast,
}

impl Bringup {
    /// The word `bringup=` takes for it.
    pub fn name(self) -> &'static str {
        match self {
            Bringup::Serial => "serial",
            Bringup::Parallel => "parallel",
            Bringup::Broadcast => "broadcast",
        }
    }
}

/// When the APs calibrate their delay loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Calibrate {
    /// One AP at a time (a token passed from CPU to CPU).
    Serial,
    /// Every AP at once.
    Parallel,
    /// Not at all: APs take `lpj=` or the BSP's value.
    Skip,
}

impl Calibrate {
    /// The word `calibrate=` takes for it.
    pub fn name(self) -> &'static str {
        match self {
            Calibrate::Serial => "serial",
            Calibrate::Parallel => "parallel",
            Calibrate::Skip => "skip",
        }
    }
}

/// Parsed options with their defaults.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Bring-up strategy (`bringup=`), default parallel.
    pub bringup: Bringup,
    /// AP delay calibration (`calibrate=`), default parallel.
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
            bringup: Bringup::Parallel,
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

/// Parses `text`, calling `bad` for each word it ignores.
pub fn parse<'a>(text: &'a str, mut bad: impl FnMut(BadWord<'a>)) -> Options {
    let mut o = Options::default();
    for word in text.split_ascii_whitespace() {
        let (key, value) = word.split_once('=').unwrap_or((word, ""));
        let ok = match key {
            "bringup" => match value {
                "serial" => set(&mut o.bringup, Bringup::Serial),
                "parallel" => set(&mut o.bringup, Bringup::Parallel),
                "broadcast" => set(&mut o.bringup, Bringup::Broadcast),
                _ => false,
            },
            "calibrate" => match value {
                "serial" => set(&mut o.calibrate, Calibrate::Serial),
                "parallel" => set(&mut o.calibrate, Calibrate::Parallel),
                "skip" => set(&mut o.calibrate, Calibrate::Skip),
                _ => false,
            },
            "x2apic" => match value {
                "on" => set(&mut o.x2apic, Some(true)),
                "off" => set(&mut o.x2apic, Some(false)),
                _ => false,
            },
            "lpj" => value
                .parse()
                .ok()
                .filter(|&v| v > 0)
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
