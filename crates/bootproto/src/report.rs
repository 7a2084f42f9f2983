//! The kernel's console report: Linux-like lines the host parses, and one
//! `MANYCORE-RESULT {json}` line at the end.
//!
//! Each line type's `Display` is the only writer (the kernel prints it after
//! a `[seconds.micros] ` timestamp) and its `parse` the only reader (the host
//! hands it the line without the timestamp). `parse` returns `None` for a
//! line of another kind or a malformed one: a serial console may deliver
//! anything, and a garbled line must not be mistaken for a real one.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;
use cpumask::CpuMask;
use serde::{Deserialize, Serialize};
use topology::{Cache, CacheKind};

mod summary;
pub use summary::TopologyLine;

/// What starts the result line.
pub const RESULT_PREFIX: &str = "MANYCORE-RESULT ";

/// The bring-up result of one boot, from either kernel (the host fills the
/// Linux one from its console lines).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelResult {
    /// "manycore" or "linux".
    #[serde(default)]
    pub kernel: String,
    /// Strategy (manycore) or "linux".
    #[serde(default)]
    pub bringup: String,
    /// Delay-loop calibration policy (manycore only).
    #[serde(default)]
    pub calibrate: String,
    /// CPUs online at the end, the boot CPU included.
    pub cpus_up: u32,
    /// NUMA nodes with at least one online CPU.
    pub nodes: u32,
    /// Nanoseconds from "Bringing up secondary CPUs" to the last AP online.
    pub bringup_ns: u64,
    /// Logical CPUs that did not come online.
    #[serde(default)]
    pub failed_cpus: Vec<u32>,
    /// CPUs the firmware lists (manycore only).
    #[serde(default)]
    pub cpus_possible: u32,
    /// CPUs the MADT marks enabled (manycore only).
    #[serde(default)]
    pub cpus_present: u32,
    /// CPUs whose per-CPU area and stack lie inside their node's SRAT
    /// ranges, by the kernel's own reading (the host checks the
    /// [`PercpuLine`]s against the QEMU arguments instead).
    #[serde(default)]
    pub percpu_on_node: u32,
    /// Whether the kernel ran its local APICs in x2APIC mode.
    #[serde(default)]
    pub x2apic: bool,
    /// Sum of all online CPUs' BogoMIPS.
    #[serde(default)]
    pub bogomips: f64,
    /// Measured TSC frequency.
    #[serde(default)]
    pub tsc_khz: u64,
    /// Bytes in use on the kernel heap at the end (manycore only).
    #[serde(default)]
    pub heap_used: u64,
    /// Firmware-table faults the kernel reported (manycore only).
    #[serde(default)]
    pub firmware_faults: u32,
    /// Where bring-up's time went, stage by stage (manycore only).
    #[serde(default)]
    pub timeline: Option<Timeline>,
}

/// Bring-up stage by stage, in ns from "Bringing up secondary CPUs": for each
/// per-AP stage the first and the last AP to reach it, so a stage that runs
/// one AP at a time shows as a long span, one that overlaps as a short one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timeline {
    /// The BSP sent an AP its first SIPI (after INIT and its delay).
    pub kick: (u64, u64),
    /// An AP ran kernel code on its own stack.
    pub callin: (u64, u64),
    /// An AP had set itself up (APIC, IDT, caches, delay loop).
    pub ready: (u64, u64),
    /// The hotplug engine's online stage ran for an AP.
    pub online: (u64, u64),
    /// Time the mask engine spent over all APs.
    pub masks_ns: u64,
    /// Time from the last AP online to the result line (summary, topology
    /// model, scheduler domains, printing).
    pub report_ns: u64,
    /// Where the boot CPU's own time went inside bring-up.
    #[serde(default)]
    pub bsp: BspTime,
}

/// The boot CPU's share of bring-up, summed over every AP: what it spends
/// one AP at a time (sending IPIs, waiting) is what keeps a strategy serial.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BspTime {
    /// Sending INIT and start-up IPIs (the sending loops, delays excluded).
    pub ipi_ns: u64,
    /// The MP-spec delays after INIT and after each round of start-up IPIs.
    pub delay_ns: u64,
    /// Waiting for APs to call in and to be ready.
    pub wait_ns: u64,
    /// Times the boot CPU halted in those delays and waits; under TCG each
    /// halt and wake-up is a host thread switch.
    pub halts: u64,
}

impl KernelResult {
    /// The result line: [`RESULT_PREFIX`] and the JSON object.
    pub fn to_line(&self) -> String {
        // Serializing plain numbers, strings and a vector cannot fail.
        let json = serde_json::to_string(self).unwrap_or_default();
        alloc::format!("{RESULT_PREFIX}{json}")
    }

    /// The result in `line`, wherever [`RESULT_PREFIX`] starts in it (the
    /// serial console may have left other bytes before it).
    pub fn parse(line: &str) -> Option<KernelResult> {
        let (_, json) = line.split_once(RESULT_PREFIX)?;
        serde_json::from_str(json.trim()).ok()
    }
}

/// `0x...` hexadecimal.
fn hex(s: &str) -> Option<u64> {
    u64::from_str_radix(s.strip_prefix("0x")?, 16).ok()
}

/// A number, or `-` for none.
fn opt<T: core::str::FromStr>(s: &str) -> Option<Option<T>> {
    if s == "-" {
        Some(None)
    } else {
        s.parse().ok().map(Some)
    }
}

/// Writes `Some(v)` as `v`, `None` as `-`.
struct Dash<T>(Option<T>);

impl<T: fmt::Display> fmt::Display for Dash<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Some(v) => v.fmt(f),
            None => f.write_str("-"),
        }
    }
}

/// `ACPI: SRAT: Node N PXM P [mem 0xA-0xB]` (and ` hotplug`): one memory
/// range of the kernel's SRAT reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SratRange {
    /// Node number.
    pub node: u32,
    /// Proximity domain.
    pub pxm: u32,
    /// First byte.
    pub start: u64,
    /// Last byte (inclusive).
    pub end: u64,
    /// Hot-pluggable (not populated at boot).
    pub hotplug: bool,
}

impl fmt::Display for SratRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ACPI: SRAT: Node {} PXM {} [mem {:#010x}-{:#010x}]{}",
            self.node,
            self.pxm,
            self.start,
            self.end,
            if self.hotplug { " hotplug" } else { "" }
        )
    }
}

impl SratRange {
    /// Reads a line written by `Display`.
    pub fn parse(line: &str) -> Option<SratRange> {
        let rest = line.strip_prefix("ACPI: SRAT: Node ")?;
        let (head, range) = rest.split_once(" [mem ")?;
        let (range, tail) = range.split_once(']')?;
        let (node, pxm) = head.split_once(" PXM ")?;
        let (start, end) = range.split_once('-')?;
        let hotplug = match tail {
            "" => false,
            " hotplug" => true,
            _ => return None,
        };
        Some(SratRange {
            node: node.parse().ok()?,
            pxm: pxm.parse().ok()?,
            start: hex(start)?,
            end: hex(end)?,
            hotplug,
        })
    }
}

/// `percpu: cpu C apic A node N area X stack Y-Z callin H apicbase B`
/// (`percpu_dump`, after bring-up): where one CPU's per-CPU area and stack
/// are, and what the CPU read from its own hardware when it called in — its
/// local APIC's id register and its IA32_APIC_BASE MSR (`-` for both if it
/// never did) — with ` fallback node M` when its node had no memory left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PercpuLine {
    /// Logical CPU.
    pub cpu: u32,
    /// APIC id the kernel expected (from the MADT).
    pub apic: u32,
    /// Node the kernel placed it on.
    pub node: u32,
    /// Per-CPU area address (one 4 KiB page).
    pub area: u64,
    /// Stack `[start, end)`.
    pub stack: (u64, u64),
    /// The APIC id the CPU's own local APIC reported at call-in.
    pub callin_apic: Option<u32>,
    /// The CPU's IA32_APIC_BASE MSR at call-in (see [`ApicBase`]).
    pub callin_apic_base: Option<u64>,
    /// The node the memory came from when the CPU's own node had none left.
    pub fallback: Option<u32>,
}

/// The bits of IA32_APIC_BASE (MSR 0x1b) the host reads (Intel SDM vol. 3
/// §11.4.4 and §11.12.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ApicBase(pub u64);

impl ApicBase {
    /// Bit 8: the processor is the bootstrap processor.
    pub fn bsp(self) -> bool {
        self.0 & (1 << 8) != 0
    }
    /// Bit 10: x2APIC mode (only meaningful with [`Self::enabled`]).
    pub fn x2apic(self) -> bool {
        self.0 & (1 << 10) != 0
    }
    /// Bit 11: the local APIC is globally enabled.
    pub fn enabled(self) -> bool {
        self.0 & (1 << 11) != 0
    }
}

impl fmt::Display for PercpuLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "percpu: cpu {} apic {} node {} area {:#x} stack {:#x}-{:#x} callin {} apicbase ",
            self.cpu,
            self.apic,
            self.node,
            self.area,
            self.stack.0,
            self.stack.1,
            Dash(self.callin_apic)
        )?;
        match self.callin_apic_base {
            Some(b) => write!(f, "{b:#x}")?,
            None => f.write_str("-")?,
        }
        if let Some(n) = self.fallback {
            write!(f, " fallback node {n}")?;
        }
        Ok(())
    }
}

impl PercpuLine {
    /// Reads a line written by `Display`.
    pub fn parse(line: &str) -> Option<PercpuLine> {
        let w: Vec<&str> = line.strip_prefix("percpu: ")?.split(' ').collect();
        let keys = [
            (0, "cpu"),
            (2, "apic"),
            (4, "node"),
            (6, "area"),
            (8, "stack"),
            (10, "callin"),
            (12, "apicbase"),
        ];
        if !(w.len() == 14 || w.len() == 17) || keys.iter().any(|&(i, k)| w[i] != k) {
            return None;
        }
        let fallback = match w.get(14..) {
            Some([]) => None,
            Some(["fallback", "node", n]) => Some(n.parse().ok()?),
            _ => return None,
        };
        let apic_base = match w[13] {
            "-" => None,
            b => Some(hex(b)?),
        };
        let (a, b) = w[9].split_once('-')?;
        Some(PercpuLine {
            cpu: w[1].parse().ok()?,
            apic: w[3].parse().ok()?,
            node: w[5].parse().ok()?,
            area: hex(w[7])?,
            stack: (hex(a)?, hex(b)?),
            callin_apic: opt(w[11])?,
            callin_apic_base: apic_base,
            fallback,
        })
    }
}

/// `cputopo: cpu C apic A package P die D core K node N online O`
/// (`topo_dump`): the facts one CPU's place in the model was built from, so
/// the host can rebuild the model. `-` for no die or no node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuFacts {
    /// Logical CPU.
    pub cpu: u32,
    /// APIC id.
    pub apic: u32,
    /// Package id.
    pub package: u32,
    /// Die id, when the machine has dies.
    pub die: Option<u32>,
    /// Core id within its package.
    pub core: u32,
    /// NUMA node.
    pub node: Option<u32>,
    /// Online at the end of bring-up.
    pub online: bool,
}

impl fmt::Display for CpuFacts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cputopo: cpu {} apic {} package {} die {} core {} node {} online {}",
            self.cpu,
            self.apic,
            self.package,
            Dash(self.die),
            self.core,
            Dash(self.node),
            u8::from(self.online)
        )
    }
}

impl CpuFacts {
    /// Reads a line written by `Display`.
    pub fn parse(line: &str) -> Option<CpuFacts> {
        let w: Vec<&str> = line.strip_prefix("cputopo: ")?.split(' ').collect();
        let keys = ["cpu", "apic", "package", "die", "core", "node", "online"];
        if w.len() != 14 || keys.iter().enumerate().any(|(i, k)| w[2 * i] != *k) {
            return None;
        }
        Some(CpuFacts {
            cpu: w[1].parse().ok()?,
            apic: w[3].parse().ok()?,
            package: w[5].parse().ok()?,
            die: opt(w[7])?,
            core: w[9].parse().ok()?,
            node: opt(w[11])?,
            online: match w[13] {
                "0" => false,
                "1" => true,
                _ => return None,
            },
        })
    }
}

/// `cputopo: cache L1d size 65536 line 64 ways 2 cpus 0-1` (`topo_dump`):
/// one cache instance of the kernel's model — level and kind, size in bytes,
/// line size, ways (`-` unknown, 0 fully associative), the CPUs sharing it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheLine(pub Cache);

impl fmt::Display for CacheLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.0;
        write!(
            f,
            "cputopo: cache L{}{} size {} line {} ways {} cpus {}",
            c.level,
            c.kind.suffix(),
            Dash(c.size_bytes),
            Dash(c.line_bytes),
            Dash(c.ways),
            c.cpus.to_list_string()
        )
    }
}

impl CacheLine {
    /// Reads a line written by `Display`; a cache of no CPU is refused.
    pub fn parse(line: &str) -> Option<CacheLine> {
        let w: Vec<&str> = line.strip_prefix("cputopo: cache ")?.split(' ').collect();
        if w.len() != 9 || w[1] != "size" || w[3] != "line" || w[5] != "ways" || w[7] != "cpus" {
            return None;
        }
        let (level, kind) = split_cache_name(w[0].strip_prefix('L')?);
        let cpus = CpuMask::parse_list(w[8]).ok().filter(|m| !m.is_empty())?;
        Some(CacheLine(Cache {
            level: level.parse().ok()?,
            kind,
            size_bytes: opt(w[2])?,
            line_bytes: opt(w[4])?,
            ways: opt(w[6])?,
            cpus: cpus.into(),
        }))
    }
}

/// `topology: node N distances D0 D1 ...`: one row of the node distance
/// matrix of the kernel's model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DistanceRow {
    /// Node id.
    pub node: u32,
    /// Its distance to each node, in node order.
    pub row: Vec<u32>,
}

impl fmt::Display for DistanceRow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "topology: node {} distances", self.node)?;
        for d in &self.row {
            write!(f, " {d}")?;
        }
        Ok(())
    }
}

impl DistanceRow {
    /// Reads a line written by `Display`.
    pub fn parse(line: &str) -> Option<DistanceRow> {
        let (node, row) = line
            .strip_prefix("topology: node ")?
            .split_once(" distances ")?;
        let row = row
            .split(' ')
            .map(|d| d.parse().ok())
            .collect::<Option<Vec<u32>>>()?;
        Some(DistanceRow {
            node: node.parse().ok()?,
            row,
        })
    }
}

/// `smpboot: CPU N failed to come online (WHY), skipped`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FailedCpu {
    /// Logical CPU.
    pub cpu: u32,
    /// Why, as the kernel put it.
    pub why: String,
}

impl fmt::Display for FailedCpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "smpboot: CPU {} failed to come online ({}), skipped",
            self.cpu, self.why
        )
    }
}

impl FailedCpu {
    /// Reads a line written by `Display`.
    pub fn parse(line: &str) -> Option<FailedCpu> {
        let rest = line.strip_prefix("smpboot: CPU ")?;
        let (cpu, rest) = rest.split_once(" failed to come online (")?;
        let why = rest.strip_suffix("), skipped")?;
        Some(FailedCpu {
            cpu: cpu.parse().ok()?,
            why: why.to_string(),
        })
    }
}

/// Splits a cache name after its `L` ("2", "1d", "1i") into the level's
/// digits and the kind its suffix names; both console formats name caches so.
fn split_cache_name(name: &str) -> (&str, CacheKind) {
    if let Some(l) = name.strip_suffix('d') {
        (l, CacheKind::Data)
    } else if let Some(l) = name.strip_suffix('i') {
        (l, CacheKind::Instruction)
    } else {
        (name, CacheKind::Unified)
    }
}
