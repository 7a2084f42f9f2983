//! The public record: published bring-up measurements beyond the seeds
//! (`data/bringup-record.toml`), each with the machine, the kernel, what exactly
//! was measured and where it was read.
//!
//! The file is compiled in, so `manycore validate` needs nothing at run time.
//! [`parse`] checks every row once: a source and a description of the
//! measurement, a figure, per-CPU intervals that agree with the log stamps they
//! were derived from, and a simulation shape whose CPU count is the row's.

use serde::Deserialize;

use crate::costs::{Era, Platform};
use crate::strategy::Calibrate;

/// The record as shipped.
pub const RECORD_TOML: &str = include_str!("../data/bringup-record.toml");

/// How far a stated per-CPU figure may be from the one its stamps give
/// (the file rounds to four or five significant digits).
const DERIVED_TOLERANCE: f64 = 0.005;

/// One published measurement.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Row {
    /// Short name, used by `manycore validate`.
    pub id: String,
    /// `x86_64`, `arm64` or `powerpc`.
    pub arch: String,
    /// The machine as the source names it.
    pub machine: String,
    /// Logical CPUs brought up; 0 when the source does not say.
    pub cpus: u32,
    /// Sockets × cores × threads as far as known.
    pub topology: String,
    /// The kernel (and patch series) measured.
    pub kernel: String,
    /// Whether the kernel ran in a virtual machine (`virtual` in the file).
    #[serde(rename = "virtual")]
    pub virtual_machine: bool,
    /// What exactly the figure is, start and end point.
    pub measured: String,
    /// Before (serial kick), seconds.
    pub before_s: Option<f64>,
    /// After (parallel kick), seconds.
    pub after_s: Option<f64>,
    /// The two log timestamps (start, end) `before_s` was derived from.
    #[serde(default)]
    pub before_stamps: Vec<f64>,
    /// The two log timestamps (start, end) `after_s` was derived from.
    #[serde(default)]
    pub after_stamps: Vec<f64>,
    /// The after (parallel kick) run again with `tsc=reliable` on the
    /// kernel command line, seconds.
    pub after_tsc_reliable_s: Option<f64>,
    /// Mean per-CPU bring-up interval, seconds.
    pub per_cpu_s: Option<f64>,
    /// The log timestamps `per_cpu_s` was derived from.
    #[serde(default)]
    pub stamps: Vec<f64>,
    /// CPUs between the first and last stamp (default: one per gap).
    pub intervals: Option<u32>,
    /// arm64: mean "Detected … I-cache on CPUn" → "CPUn: Booted" interval.
    pub ap_side_s: Option<f64>,
    /// The ("Detected … I-cache", "Booted") timestamp pairs `ap_side_s` was
    /// derived from.
    #[serde(default)]
    pub ap_stamps: Vec<[f64; 2]>,
    /// Per package, the boot CPU's first: the "Booted" stamps of the first
    /// and the last CPU of a run of CPUs on that package, so that every
    /// interval between them lies on it (a log whose CPUs on another
    /// socket take longer).
    #[serde(default)]
    pub package_stamps: Vec<[f64; 2]>,
    /// How many CPUs' bring-ups lie between each pair of `package_stamps`.
    #[serde(default)]
    pub package_intervals: Vec<u32>,
    /// Where the figure was read.
    pub source: String,
    /// Other places the same figure was read.
    #[serde(default)]
    pub also: Vec<String>,
    /// What was read there.
    pub read: String,
    /// How `manycore validate` simulates the row, if it does.
    pub sim: Option<SimSpec>,
}

/// Whether a simulated row was used by the fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The fit used this measurement.
    Fit,
    /// The fit never saw it.
    Predict,
}

/// How one row is simulated.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimSpec {
    /// Fit or predict.
    pub role: Role,
    /// Platform name (`x86`, `arm64`, ...).
    pub platform: String,
    /// `[packages, cores per package, threads per core]`.
    pub shape: [u32; 3],
    /// Calibration when the kernel measured does something other than the
    /// platform's default (today's Linux).
    pub calibrate: Option<String>,
    /// Calibration of the `after_s` run when the series measured changed it
    /// (default: `calibrate`).
    pub after_calibrate: Option<String>,
    /// The kernel's `CONFIG_HZ`, when its published configuration states it
    /// (a calibration's length is counted in ticks).
    pub hz: Option<u32>,
    /// `"pre-6.5"` for an x86 kernel before Linux 6.5 (with or without the
    /// parallel-bringup series): every CPU kicked at once, microcode loaded on
    /// the serialized path. On powerpc, `"pre-5.10"` for the topology-mask
    /// code before seed 000's series (`"5.10+"`, the default, with it).
    /// On arm64, `"preempt-pre-5.7"` for a `CONFIG_PREEMPT` kernel before
    /// Linux 5.7 ([`crate::arm64::Kernel`]).
    /// Default: the platform's current kernel.
    pub linux: Option<String>,
    /// powerpc: the `after_s` run's mask code when the series measured
    /// changed it (default: `linux`).
    pub after_linux: Option<String>,
    /// powerpc: `power8`, `power9` or `power10` (required).
    pub processor: Option<String>,
    /// Milliseconds one core's microcode load takes, when the source states
    /// it for this machine (x86 only).
    pub microcode_ms: Option<f64>,
    /// Milliseconds the control CPU's cpuhp prepare states take per AP,
    /// when the source states it for this machine (x86 only).
    pub prepare_ms: Option<f64>,
    /// arm64: the firmware that answers PSCI CPU_ON on the board; rows
    /// naming the same firmware share the costs fitted on its fit row.
    /// powerpc: `powernv`, `powervm` or `kvm` (required).
    pub firmware: Option<String>,
    /// x86: the CPU vendor (`"intel"` or `"amd"`, default intel), where the
    /// bring-up differs between them ([`crate::x86`]).
    pub vendor: Option<String>,
    /// x86: the CPU has WAITPKG (TPAUSE), so Linux 5.8+ delays with TPAUSE
    /// and an AP that calibrates takes `calibrate_delay_converge()`.
    pub waitpkg: Option<bool>,
    /// x86 AMD: `false` when the CPU lacks MWAITX (the family 10h and 15h
    /// Opterons), so Linux keeps the TSC delay and an AP that calibrates
    /// takes `calibrate_delay_direct()`; default true (every Zen has it).
    pub mwaitx: Option<bool>,
    /// x86: whether the CPU has the TSC_ADJUST MSR (CPUID.7.0:EBX bit 1),
    /// where it differs from its vendor's default
    /// ([`crate::x86::Vendor::tsc_adjust`]: Intel Haswell and later have it,
    /// AMD before Zen 5 lacks it); without it every AP runs the TSC warp
    /// check.
    pub tsc_adjust: Option<bool>,
    /// The serial console's baud rate, when the kernel's command line
    /// names one and the log's bring-up lines went out on it.
    pub console_baud: Option<u32>,
    /// Characters the console carried for each CPU's bring-up (its lines,
    /// stamps and line ends), counted from the log's format.
    pub console_chars_per_cpu: Option<f64>,
    /// `[first, last]`: `per_cpu_s` covers the "Booted" lines of CPU first
    /// to CPU last only, so the prediction is the simulated interval
    /// between those two CPUs' onlines over `last - first` (default: the
    /// whole bring-up over the CPUs brought up). A row whose run brought up
    /// fewer CPUs than its shape (one failed) may be simulated whole when
    /// its window ends before the CPUs it lacks.
    pub window: Option<[u32; 2]>,
}

impl SimSpec {
    /// The platform.
    pub fn platform(&self) -> Result<Platform, String> {
        self.platform.parse().map_err(|e| format!("{e}"))
    }

    /// The calibration override, if any.
    pub fn calibrate(&self) -> Result<Option<Calibrate>, String> {
        parse_calibrate(self.calibrate.as_deref())
    }

    /// The kernel era the row's `linux` names.
    pub fn era(&self) -> Result<Era, String> {
        match self.linux.as_deref() {
            None => Ok(Era::Current),
            Some(text) => text.parse().map_err(|e| format!("sim.linux = {e}")),
        }
    }

    /// The x86 CPU vendor the row names (intel when it names none).
    pub fn vendor(&self) -> Result<crate::x86::Vendor, String> {
        match self.vendor.as_deref() {
            None => Ok(crate::x86::Vendor::Intel),
            Some(text) => text.parse().map_err(|e| format!("sim.vendor = {e}")),
        }
    }

    /// The `after_s` run's calibration override, if any.
    pub fn after_calibrate(&self) -> Result<Option<Calibrate>, String> {
        match parse_calibrate(self.after_calibrate.as_deref())? {
            Some(c) => Ok(Some(c)),
            None => self.calibrate(),
        }
    }
}

fn parse_calibrate(c: Option<&str>) -> Result<Option<Calibrate>, String> {
    c.map(|c| c.parse().map_err(|e| format!("{e}"))).transpose()
}

/// The file, as TOML sees it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    row: Vec<Row>,
}

/// Why the record could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RecordError {
    /// Not TOML of the expected shape.
    #[error("bringup-record.toml: {0}")]
    Syntax(String),
    /// A row breaks one of the rules in the module docs.
    #[error("bringup-record.toml, row '{id}': {message}")]
    Row {
        /// The row's id.
        id: String,
        /// What is wrong.
        message: String,
    },
}

/// Parses and checks the record.
pub fn parse(text: &str) -> Result<Vec<Row>, RecordError> {
    let file: File = toml::from_str(text).map_err(|e| RecordError::Syntax(e.to_string()))?;
    let rows = file.row;
    for (i, r) in rows.iter().enumerate() {
        check(r).map_err(|message| RecordError::Row {
            id: r.id.clone(),
            message,
        })?;
        if rows[..i].iter().any(|o| o.id == r.id) {
            return Err(RecordError::Row {
                id: r.id.clone(),
                message: "duplicate id".to_string(),
            });
        }
    }
    Ok(rows)
}

/// The record shipped with the crate.
pub fn load() -> Result<Vec<Row>, RecordError> {
    parse(RECORD_TOML)
}

/// One row's rules (see the module docs).
fn check(r: &Row) -> Result<(), String> {
    for (field, text) in [
        ("id", &r.id),
        ("machine", &r.machine),
        ("kernel", &r.kernel),
        ("measured", &r.measured),
        ("source", &r.source),
        ("read", &r.read),
    ] {
        if text.trim().is_empty() {
            return Err(format!("{field} is empty"));
        }
    }
    if !(r.source.starts_with("https://") || r.source.starts_with("Message-ID: <")) {
        return Err("source is neither an https URL nor a mail's Message-ID".to_string());
    }
    if !matches!(r.arch.as_str(), "x86_64" | "arm64" | "powerpc") {
        return Err(format!("arch '{}' is not x86_64, arm64 or powerpc", r.arch));
    }
    let figures = [
        r.before_s,
        r.after_s,
        r.after_tsc_reliable_s,
        r.per_cpu_s,
        r.ap_side_s,
    ];
    if figures.iter().flatten().any(|v| !v.is_finite() || *v < 0.0) {
        return Err("a figure is negative or not finite".to_string());
    }
    if r.before_s.is_some() != r.after_s.is_some() {
        return Err("before_s and after_s come as a pair".to_string());
    }
    if r.after_tsc_reliable_s.is_some() && r.after_s.is_none() {
        return Err("after_tsc_reliable_s needs the after_s run it repeats".to_string());
    }
    if r.before_s.is_none() && r.per_cpu_s.is_none() {
        return Err("no figure: give before_s/after_s or per_cpu_s".to_string());
    }
    check_derived(r)?;
    if let Some(sim) = &r.sim {
        check_sim(r, sim)?;
    }
    Ok(())
}

/// Every derived figure is what the stamps it was derived from give.
fn check_derived(r: &Row) -> Result<(), String> {
    let mut stamps = (r.stamps.iter())
        .chain(&r.before_stamps)
        .chain(&r.after_stamps)
        .chain(r.ap_stamps.iter().flatten());
    if stamps.any(|s| !s.is_finite()) {
        return Err("a stamp is not finite".to_string());
    }
    check_window("before_s", r.before_s, &r.before_stamps)?;
    check_window("after_s", r.after_s, &r.after_stamps)?;
    check_ap_side(r)?;
    check_packages(r)?;
    check_per_cpu(r)
}

/// Per-package intervals: their stamps are pairs that increase, one count
/// a pair, none zero, and at least two packages.
fn check_packages(r: &Row) -> Result<(), String> {
    if r.package_stamps.is_empty() && r.package_intervals.is_empty() {
        return Ok(());
    }
    if r.package_stamps.len() != r.package_intervals.len() {
        return Err(format!(
            "package_stamps has {} pairs but package_intervals {} counts",
            r.package_stamps.len(),
            r.package_intervals.len()
        ));
    }
    if r.package_stamps.len() < 2 {
        return Err("package_stamps needs the boot CPU's package and another".to_string());
    }
    if r.package_stamps.iter().flatten().any(|s| !s.is_finite())
        || r.package_stamps.iter().any(|[a, b]| b <= a)
    {
        return Err("a package_stamps pair is not increasing".to_string());
    }
    if r.package_intervals.contains(&0) {
        return Err("a package_intervals count is 0".to_string());
    }
    Ok(())
}

/// Mean per-CPU interval of each package (the boot CPU's first), seconds,
/// from a row's `package_stamps`; empty when the row has none.
pub fn package_per_cpu_s(r: &Row) -> Vec<f64> {
    r.package_stamps
        .iter()
        .zip(&r.package_intervals)
        .map(|([a, b], &n)| (b - a) / n as f64)
        .collect()
}

/// A window figure (`before_s`, `after_s`) given with its stamps is their
/// difference.
fn check_window(field: &str, figure: Option<f64>, stamps: &[f64]) -> Result<(), String> {
    if stamps.is_empty() {
        return Ok(());
    }
    let Some(figure) = figure else {
        return Err(format!("{field}'s stamps are given without {field}"));
    };
    let [start, end] = stamps else {
        return Err(format!("{field}'s stamps are not a start and an end"));
    };
    if end <= start {
        return Err(format!("{field}'s stamps are not increasing"));
    }
    let derived = end - start;
    if (derived / figure - 1.0).abs() > DERIVED_TOLERANCE {
        return Err(format!("{field} {figure} but its stamps give {derived:.7}"));
    }
    Ok(())
}

/// `ap_side_s` given with its stamp pairs is their mean interval.
fn check_ap_side(r: &Row) -> Result<(), String> {
    if r.ap_stamps.is_empty() {
        return Ok(());
    }
    let Some(ap_side) = r.ap_side_s else {
        return Err("ap_stamps are given without ap_side_s".to_string());
    };
    if r.ap_stamps.iter().any(|[d, b]| b <= d) {
        return Err("an ap_stamps pair is not increasing".to_string());
    }
    let sum: f64 = r.ap_stamps.iter().map(|[d, b]| b - d).sum();
    let derived = sum / r.ap_stamps.len() as f64;
    if (derived / ap_side - 1.0).abs() > DERIVED_TOLERANCE {
        return Err(format!(
            "ap_side_s {ap_side} but its stamps give {derived:.7}"
        ));
    }
    Ok(())
}

/// `per_cpu_s` is what its `stamps` give.
fn check_per_cpu(r: &Row) -> Result<(), String> {
    let Some(per_cpu) = r.per_cpu_s else {
        return Ok(());
    };
    if r.stamps.len() < 2 {
        return Err("per_cpu_s needs at least two stamps".to_string());
    }
    if r.stamps.windows(2).any(|w| w[1] <= w[0]) {
        return Err("stamps are not increasing".to_string());
    }
    let gaps = match r.intervals {
        Some(n) if n > 0 => n as f64,
        Some(_) => return Err("intervals is 0".to_string()),
        None => (r.stamps.len() - 1) as f64,
    };
    let derived = (r.stamps[r.stamps.len() - 1] - r.stamps[0]) / gaps;
    if (derived / per_cpu - 1.0).abs() > DERIVED_TOLERANCE {
        return Err(format!(
            "per_cpu_s {per_cpu} but the stamps give {derived:.7}"
        ));
    }
    Ok(())
}

/// The simulation spec names a known platform and calibration, and its shape
/// has the row's CPU count: its platform and the fields only some platforms
/// take ([`check_sim_platform`]), its figures ([`check_sim_figures`]), then
/// its shape ([`check_sim_shape`]).
fn check_sim(r: &Row, sim: &SimSpec) -> Result<(), String> {
    let platform = check_sim_platform(sim)?;
    check_sim_figures(sim, platform)?;
    check_sim_shape(r, sim)
}

/// The spec's platform, with its kernel, firmware, processor, era and vendor
/// known, and no field of another platform's.
fn check_sim_platform(sim: &SimSpec) -> Result<Platform, String> {
    let platform = sim.platform()?;
    if platform == Platform::PowerPc {
        crate::powerpc::Kernel::parse(sim.linux.as_deref())?;
        crate::powerpc::Kernel::parse(sim.after_linux.as_deref())?;
        crate::powerpc::Firmware::parse(sim.firmware.as_deref().unwrap_or(""))?;
        crate::powerpc::Processor::parse(sim.processor.as_deref())?;
    } else if sim.after_linux.is_some() || sim.processor.is_some() {
        return Err("sim.after_linux and sim.processor are for the powerpc platform".to_string());
    }
    let era = match platform {
        Platform::PowerPc => Era::Current,
        Platform::Arm64 => {
            crate::arm64::Kernel::parse(sim.linux.as_deref())?;
            Era::Current
        }
        _ => sim.era()?,
    };
    sim.vendor()?;
    let x86_only = era != Era::Current
        || sim.microcode_ms.is_some()
        || sim.prepare_ms.is_some()
        || sim.vendor.is_some()
        || sim.waitpkg.is_some()
        || sim.mwaitx.is_some()
        || sim.tsc_adjust.is_some();
    if x86_only && platform != Platform::X86 {
        return Err(
            "sim.linux, sim.microcode_ms, sim.prepare_ms, sim.vendor, sim.waitpkg, sim.mwaitx \
             and sim.tsc_adjust are for the x86 platform"
                .to_string(),
        );
    }
    if sim.mwaitx.is_some() && sim.vendor()? != crate::x86::Vendor::Amd {
        return Err("sim.mwaitx is for vendor \"amd\" (MWAITX is AMD's)".to_string());
    }
    Ok(platform)
}

/// The spec's figures: times, firmware name, console, calibrations and HZ
/// within what a real machine has.
fn check_sim_figures(sim: &SimSpec, platform: Platform) -> Result<(), String> {
    for (field, value) in [
        ("microcode_ms", sim.microcode_ms),
        ("prepare_ms", sim.prepare_ms),
    ] {
        if let Some(ms) = value {
            if !(0.0..=1000.0).contains(&ms) {
                return Err(format!("sim.{field} = {ms} is not a time (0 to 1000 ms)"));
            }
        }
    }
    if let Some(firmware) = &sim.firmware {
        if !matches!(platform, Platform::Arm64 | Platform::PowerPc) {
            return Err("sim.firmware is for the arm64 and powerpc platforms".to_string());
        }
        if firmware.trim().is_empty() {
            return Err("sim.firmware is empty".to_string());
        }
    }
    match (sim.console_baud, sim.console_chars_per_cpu) {
        (None, None) => {}
        (Some(baud), Some(chars)) => {
            if !(300..=4_000_000).contains(&baud) {
                return Err(format!(
                    "sim.console_baud = {baud} is not a serial line rate"
                ));
            }
            if !(0.0..=10_000.0).contains(&chars) {
                return Err(format!(
                    "sim.console_chars_per_cpu = {chars} is not a character count"
                ));
            }
        }
        _ => {
            return Err("sim.console_baud and sim.console_chars_per_cpu come as a pair".to_string())
        }
    }
    sim.calibrate()?;
    sim.after_calibrate()?;
    if let Some(hz) = sim.hz {
        if !(24..=10_000).contains(&hz) {
            return Err(format!("sim.hz = {hz} is not a kernel tick rate"));
        }
    }
    Ok(())
}

/// The spec's shape has no zero and gives the row's CPU count (or more,
/// when a window says the row timed only part of the bring-up), and its
/// window lies within the CPUs brought up.
fn check_sim_shape(r: &Row, sim: &SimSpec) -> Result<(), String> {
    let [p, c, t] = sim.shape;
    if p == 0 || c == 0 || t == 0 {
        return Err("sim.shape has a zero".to_string());
    }
    let cpus = p as u64 * c as u64 * t as u64;
    if let Some([first, last]) = sim.window {
        if r.per_cpu_s.is_none() {
            return Err("sim.window says which CPUs per_cpu_s covers: give per_cpu_s".to_string());
        }
        if first >= last {
            return Err(format!(
                "sim.window = [{first}, {last}] does not run from a CPU to a later one"
            ));
        }
        let up = if r.cpus == 0 { cpus } else { r.cpus as u64 };
        if last as u64 >= up.min(cpus) {
            return Err(format!(
                "sim.window = [{first}, {last}] ends beyond the {} CPUs brought up",
                up.min(cpus)
            ));
        }
    }
    let short_run = sim.window.is_some() && r.cpus != 0 && (r.cpus as u64) < cpus;
    if r.cpus != 0 && cpus != r.cpus as u64 && !short_run {
        return Err(format!(
            "sim.shape gives {cpus} CPUs, the row says {}",
            r.cpus
        ));
    }
    if r.cpus == 0 {
        return Err("a simulated row needs its CPU count".to_string());
    }
    Ok(())
}

/// The row with this id.
pub fn row<'a>(rows: &'a [Row], id: &str) -> Result<&'a Row, RecordError> {
    rows.iter()
        .find(|r| r.id == id)
        .ok_or_else(|| RecordError::Row {
            id: id.to_string(),
            message: "no such row".to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The shipped record parses and every row passes the rules (a source, a
    /// description, figures that agree with their stamps).
    #[test]
    fn the_record_parses_and_every_row_is_sourced() {
        let rows = load().unwrap();
        assert!(rows.len() >= 15, "{}", rows.len());
        for r in &rows {
            assert!(!r.source.is_empty() && !r.read.is_empty(), "{}", r.id);
        }
        // Both architectures, real and virtual machines, and both roles.
        assert!(rows.iter().any(|r| r.arch == "arm64"));
        assert!(rows.iter().any(|r| r.arch == "x86_64" && r.virtual_machine));
        let roles: Vec<Role> = rows
            .iter()
            .filter_map(|r| r.sim.as_ref())
            .map(|s| s.role)
            .collect();
        assert!(roles.contains(&Role::Fit) && roles.contains(&Role::Predict));
    }

    /// Seed 003's row carries the figures the fit uses.
    #[test]
    fn seed_003_row_agrees_with_the_fit_constants() {
        let rows = load().unwrap();
        let r = row(&rows, "x86-128-2node-seed003").unwrap();
        assert_eq!(r.before_s, Some(crate::fit::SEED_003_SERIAL_S));
        assert_eq!(r.after_s, Some(crate::fit::SEED_003_PARALLEL_S));
        let r = row(&rows, "x86-128-2node-seed003-reuse").unwrap();
        assert_eq!(r.before_s, Some(crate::fit::SEED_003_PARALLEL_S));
        assert_eq!(r.after_s, Some(crate::fit::SEED_003_REUSE_S));
    }

    fn with(field_line: &str, replacement: &str) -> String {
        assert!(RECORD_TOML.contains(field_line), "{field_line}");
        RECORD_TOML.replacen(field_line, replacement, 1)
    }

    /// Each rule rejects the row that breaks it, naming the row.
    #[test]
    fn broken_rows_are_named_errors() {
        const ALTRA: Option<&str> = Some("arm64-altra-80");
        const HPE: Option<&str> = Some("x86-spr-1920-hpe");
        const TGLX: Option<&str> = Some("x86-skl-112-tglx");
        const LKP: Option<&str> = Some("x86-skl-112-lkp");
        let microcode = "calibrate = \"skip\", microcode_ms = 8.0";
        let console = "console_baud = 115200, console_chars_per_cpu = 62.0 }";
        // (line of the record, its replacement, the row the error names, what it says)
        let amd = "linux = \"pre-6.5\", vendor = \"amd\" }";
        const TWO_SOCKET: Option<&str> = Some("arm64-altra-2socket");
        const KASAN: Option<&str> = Some("arm64-thunderx2-256-kasan");
        let window = "window = [147, 151] }";
        let cases: [(&str, &str, Option<&str>, &str); 28] = [
            (
                "source = \"https://github.com/flatcar/mantle/pull/383\"",
                "source = \"\"",
                ALTRA,
                "source is empty",
            ),
            (
                "source = \"https://github.com/flatcar/mantle/pull/383\"",
                "source = \"a friend told me\"",
                ALTRA,
                "neither an https URL",
            ),
            (
                "per_cpu_s = 0.00039767",
                "per_cpu_s = 0.0005",
                ALTRA,
                "the stamps give",
            ),
            (
                "stamps = [0.035382, 0.035784, 0.036174, 0.036575]",
                "stamps = [0.035382, 0.035184, 0.036174, 0.036575]",
                ALTRA,
                "not increasing",
            ),
            (
                "shape = [1, 80, 1], firmware",
                "shape = [1, 81, 1], firmware",
                ALTRA,
                "gives 81 CPUs",
            ),
            (
                "platform = \"arm64\", shape = [1, 80, 1]",
                "platform = \"sparc\", shape = [1, 80, 1]",
                ALTRA,
                "'sparc'",
            ),
            (
                "after_calibrate = \"skip\"",
                "after_calibrate = \"sometimes\"",
                HPE,
                "sometimes",
            ),
            (
                microcode,
                "calibrate = \"skip\", linux = \"6.1\"",
                TGLX,
                "'6.1' is not",
            ),
            (
                microcode,
                "calibrate = \"skip\", microcode_ms = -1.0",
                TGLX,
                "not a time",
            ),
            (
                microcode,
                "calibrate = \"skip\", microcode_ms = nan",
                TGLX,
                "not a time",
            ),
            (
                "firmware = \"ampere-altra\" }",
                "firmware = \" \" }",
                None,
                "sim.firmware is empty",
            ),
            (
                "prepare_ms = 0.3523,",
                "prepare_ms = 0.3523, firmware = \"x\",",
                None,
                "firmware is for the arm64",
            ),
            (console, "console_baud = 115200 }", LKP, "come as a pair"),
            (
                console,
                "console_baud = 7, console_chars_per_cpu = 62.0 }",
                LKP,
                "not a serial line rate",
            ),
            (
                "prepare_ms = 0.3523",
                "prepare_ms = 2000.0",
                TGLX,
                "prepare_ms = 2000 is not a time",
            ),
            (
                "before_s = 0.785960\nafter_s = 0.084274\n",
                "per_cpu_s = 0.001\nstamps = [0.0, 0.001]\n",
                TGLX,
                "needs the after_s run",
            ),
            (
                "shape = [1, 80, 1], firmware",
                "shape = [1, 80, 1], linux = \"pre-6.5\", firmware",
                ALTRA,
                "'pre-6.5' is not an arm64 kernel",
            ),
            (
                amd,
                "linux = \"pre-6.5\", vendor = \"via\" }",
                Some("x86-epyc7601-128"),
                "sim.vendor = 'via' is not",
            ),
            (
                "shape = [1, 80, 1], firmware",
                "shape = [1, 80, 1], vendor = \"amd\", firmware",
                ALTRA,
                "sim.tsc_adjust are for the x86",
            ),
            (
                amd,
                "linux = \"pre-6.5\", mwaitx = false }",
                Some("x86-epyc7601-128"),
                "sim.mwaitx is for vendor \"amd\"",
            ),
            (
                "prepare_ms = 0.3523",
                "prepare_ms = 0.3523, window = [1, 2]",
                TGLX,
                "sim.window says which CPUs per_cpu_s covers",
            ),
            (
                window,
                "window = [151, 147] }",
                TWO_SOCKET,
                "does not run from a CPU to a later one",
            ),
            (
                window,
                "window = [147, 160] }",
                TWO_SOCKET,
                "ends beyond the 160 CPUs brought up",
            ),
            (
                "window = [1, 254] }",
                "window = [1, 255] }",
                Some("arm64-thunderx2-255-debug"),
                "ends beyond the 255 CPUs brought up",
            ),
            (
                "window = [1, 254] }",
                "}",
                Some("arm64-thunderx2-255-debug"),
                "sim.shape gives 256 CPUs, the row says 255",
            ),
            (
                "package_intervals = [126, 127]",
                "package_intervals = [126]",
                KASAN,
                "package_stamps has 2 pairs but package_intervals 1 counts",
            ),
            (
                "package_intervals = [126, 127]",
                "package_intervals = [126, 0]",
                KASAN,
                "a package_intervals count is 0",
            ),
            (
                "package_stamps = [[0.182036, 8.577188], [8.725212, 27.452424]]",
                "package_stamps = [[0.182036, 8.577188], [27.452424, 8.725212]]",
                KASAN,
                "a package_stamps pair is not increasing",
            ),
        ];
        for (from, to, row, message) in cases {
            let e = parse(&with(from, to)).unwrap_err().to_string();
            assert!(row.is_none_or(|id| e.contains(id)), "{e}");
            assert!(e.contains(message), "{e}");
        }
        let dup = format!(
            "{RECORD_TOML}\n[[row]]\nid = \"arm64-h5-4\"\narch = \"arm64\"\nmachine = \"m\"\ncpus = 4\ntopology = \"t\"\nkernel = \"k\"\nvirtual = false\nmeasured = \"m\"\nbefore_s = 1.0\nafter_s = 1.0\nsource = \"https://example.org\"\nread = \"r\"\n"
        );
        assert!(parse(&dup)
            .unwrap_err()
            .to_string()
            .contains("duplicate id"));
        assert!(matches!(parse("row = 3"), Err(RecordError::Syntax(_))));
    }

    proptest! {
        /// Fuzz: any text is a record or one error; never a panic.
        #[test]
        fn parser_never_panics(s in ".{0,200}") {
            let _ = parse(&s);
        }

        /// Fuzz: cutting the real file anywhere gives a record or one error.
        #[test]
        fn truncated_record_never_panics(cut in 0usize..RECORD_TOML.len()) {
            let cut = (0..=cut).rev().find(|&i| RECORD_TOML.is_char_boundary(i)).unwrap_or(0);
            let _ = parse(&RECORD_TOML[..cut]);
        }
    }
}
