//! `manycore qemu`: build the bare-metal kernel, boot it under QEMU with the
//! requested CPU / NUMA topology, and print the parsed bring-up result; with
//! `--linux VMLINUZ`, boot that Linux kernel on the same QEMU command line and
//! report its "smp: Brought up" time the same way, for comparison.

use anyhow::{bail, Context, Result};
use bootproto::cmdline::{Bringup, Calibrate, KERNEL_CALIBRATE};
use bootproto::strategy::Kick;
use clap::{Args, ValueEnum};
use qemu_runner::{
    build_kernel, run_linux, run_manycore, KernelResult, Machine, RunOptions, Timeline,
};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Arguments of `manycore qemu`.
#[derive(Args, Debug, Clone)]
pub struct QemuArgs {
    /// Number of vCPUs (q35 allows up to 4096).
    #[arg(long, allow_negative_numbers = true)]
    pub cpus: u32,
    /// Possible CPUs (`-smp N,maxcpus=M`): M - N MADT entries are disabled.
    #[arg(long, allow_negative_numbers = true)]
    pub max_cpus: Option<u32>,
    /// NUMA nodes (CPUs and memory split evenly; a SRAT and SLIT are generated).
    #[arg(long, allow_negative_numbers = true, default_value_t = 1)]
    pub nodes: u32,
    /// Sockets (with --cores and --threads; their product must equal --cpus, or --max-cpus).
    #[arg(long, allow_negative_numbers = true, requires_all = ["cores", "threads"])]
    pub sockets: Option<u32>,
    /// Cores per socket.
    #[arg(long, allow_negative_numbers = true, requires_all = ["sockets", "threads"])]
    pub cores: Option<u32>,
    /// Threads per core.
    #[arg(long, allow_negative_numbers = true, requires_all = ["sockets", "cores"])]
    pub threads: Option<u32>,
    /// Guest memory in MiB (default: 256 MiB per node, at least 512).
    #[arg(long, allow_negative_numbers = true)]
    pub memory: Option<u32>,
    /// Bring-up strategies to run, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "parallel",
        value_name = "serial|parallel|broadcast"
    )]
    pub bringup: Vec<Bringup>,
    /// Delay-loop calibration on the APs (skip: every AP takes the boot CPU's value).
    #[arg(long, default_value = "parallel", value_parser = kernel_calibrate,
          value_name = "serial|parallel|skip")]
    pub calibrate: Calibrate,
    /// Loops per jiffy to use instead of calibrating (passed as lpj= to both
    /// kernels), 1 to 69273666: x86 Linux's udelay multiplies it by HZ/4 in
    /// 32 bits.
    #[arg(long, allow_negative_numbers = true,
          value_parser = clap::value_parser!(u64).range(1..=bootproto::strategy::MAX_LPJ))]
    pub lpj: Option<u64>,
    /// Delay after INIT in microseconds (MP spec: 10000).
    #[arg(long, allow_negative_numbers = true)]
    pub init_delay_us: Option<u64>,
    /// x2APIC on the vCPUs and in the kernel (default: on when APIC ids exceed 254).
    #[arg(long, value_enum)]
    pub x2apic: Option<OnOff>,
    /// Extra words for the manycore kernel's command line.
    #[arg(long, default_value = "")]
    pub append: String,
    /// Kill QEMU after this many seconds (1 to 86400).
    #[arg(long, allow_negative_numbers = true, default_value_t = 900)]
    pub timeout: u64,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Also boot this Linux kernel image on the same QEMU command line.
    #[arg(long, value_name = "VMLINUZ")]
    pub linux: Option<PathBuf>,
    /// Extra Linux command-line words (e.g. "cpuhp.parallel=0").
    #[arg(long, default_value = "")]
    pub linux_append: String,
    /// Only boot Linux (with --linux), not the manycore kernel.
    #[arg(long, requires = "linux")]
    pub linux_only: bool,
    /// Run QEMU with `-icount shift=0,sleep=off`: one vCPU at a time in
    /// virtual time, so results do not depend on host load (slower to run).
    #[arg(long)]
    pub icount: bool,
    /// Firmware for -bios (default: QEMU's qboot when installed, else SeaBIOS; SeaBIOS
    /// whenever an APIC id exceeds 254, as Linux needs x2APIC on at hand-over there).
    #[arg(long)]
    pub bios: Option<PathBuf>,
    /// No progress display (there is none either when standard error is not
    /// a terminal).
    #[arg(long)]
    pub quiet: bool,
}

/// `--calibrate`: a [`Calibrate`] the manycore kernel implements.
fn kernel_calibrate(s: &str) -> Result<Calibrate, String> {
    let c: Calibrate = s.parse().map_err(|e| format!("{e}"))?;
    if KERNEL_CALIBRATE.contains(&c) {
        Ok(c)
    } else {
        Err(format!(
            "the manycore kernel calibrates serial, parallel or skip (for lpj=N: --calibrate skip --lpj N), not '{c}'"
        ))
    }
}

/// Longest `--timeout`, in seconds: a day, far beyond the hour the
/// largest boots here take, and small enough that the deadline (now plus
/// the time-out) is a time the clock can hold.
const MAX_TIMEOUT_S: u64 = 86_400;

/// on / off.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnOff {
    /// Enabled.
    On,
    /// Disabled.
    Off,
}

/// Output format.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// One human-readable line per boot.
    Text,
    /// A JSON array of results.
    Json,
}

/// One boot's line of the report.
#[derive(Serialize, Debug)]
struct Row {
    kernel: String,
    bringup: String,
    calibrate: String,
    cpus: u32,
    cpus_up: u32,
    nodes: u32,
    bringup_ns: u64,
    failed_cpus: Vec<u32>,
    wall_ms: u128,
    qemu_command: String,
    /// The manycore kernel's bring-up stages (absent for Linux).
    #[serde(skip_serializing_if = "Option::is_none")]
    timeline: Option<Timeline>,
}

fn name<T: ValueEnum>(v: &T) -> String {
    v.to_possible_value()
        .map(|p| p.get_name().to_string())
        .unwrap_or_default()
}

/// Refuses an `--init-delay-us` that alone outlasts `--timeout`: the
/// kernel waits it after each INIT, so once per AP in a serial bring-up and
/// once for all of them otherwise.
fn check_init_delay(args: &QemuArgs) -> Result<()> {
    let Some(us) = args.init_delay_us else {
        return Ok(());
    };
    for b in &args.bringup {
        let inits = match b {
            Bringup::Kick(Kick::Serial) => u64::from(args.cpus.saturating_sub(1)),
            _ => 1,
        };
        let waits_s = inits as f64 * us as f64 / 1e6;
        if waits_s > args.timeout as f64 {
            bail!(
                "--init-delay-us {us}: a {b} bring-up waits it {inits} times, {waits_s} s, longer than --timeout {}",
                args.timeout
            );
        }
    }
    Ok(())
}

/// Runs the subcommand; the exit code is 0 when every CPU came up everywhere,
/// 1 when some CPU failed to come online.
pub fn run(args: &QemuArgs) -> Result<i32> {
    if !(1..=MAX_TIMEOUT_S).contains(&args.timeout) {
        bail!(
            "--timeout {}: must be from 1 to {MAX_TIMEOUT_S} seconds",
            args.timeout
        );
    }
    let machine = Machine {
        cpus: args.cpus,
        shape: match (args.sockets, args.cores, args.threads) {
            (Some(s), Some(c), Some(t)) => Some((s, c, t)),
            _ => None,
        },
        nodes: args.nodes,
        memory_mib: args.memory,
        x2apic: args.x2apic.map(|v| v == OnOff::On),
        max_cpus: args.max_cpus,
    };
    machine.validate()?;
    check_init_delay(args)?;
    qemu_runner::qemu_version()?;
    let mut opts = RunOptions {
        timeout: Duration::from_secs(args.timeout),
        ..RunOptions::default()
    };
    if let Some(bios) = &args.bios {
        opts.bios = Some(bios.clone());
    }
    if args.icount {
        opts.extra_qemu
            .extend(["-icount".to_string(), "shift=0,sleep=off".to_string()]);
    }
    let mut rows = Vec::new();
    if !args.linux_only {
        rows.extend(boot_manycore(args, &machine, &opts)?);
    }
    if let Some(vmlinuz) = &args.linux {
        rows.push(boot_linux(args, vmlinuz, &machine, &opts)?);
    }
    match args.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&rows)?),
        Format::Text => rows.iter().for_each(print_row),
    }
    let all_up = rows
        .iter()
        .all(|r| r.cpus_up == r.cpus && r.failed_cpus.is_empty());
    Ok(if all_up { 0 } else { 1 })
}

/// One boot of the manycore kernel per `--bringup` strategy.
fn boot_manycore(args: &QemuArgs, machine: &Machine, opts: &RunOptions) -> Result<Vec<Row>> {
    let kernel = build_kernel().context("building the manycore kernel")?;
    let mut rows = Vec::new();
    for strategy in &args.bringup {
        let mut cmdline = format!("bringup={strategy} calibrate={}", args.calibrate);
        if let Some(lpj) = args.lpj {
            cmdline.push_str(&format!(" lpj={lpj}"));
        }
        if let Some(us) = args.init_delay_us {
            cmdline.push_str(&format!(" init_delay_us={us}"));
        }
        if let Some(x) = args.x2apic {
            cmdline.push_str(&format!(" x2apic={}", name(&x)));
        }
        if !args.append.is_empty() {
            cmdline.push(' ');
            cmdline.push_str(&args.append);
        }
        let spinner = crate::progress::spinner(
            args.quiet,
            &format!("booting {} CPUs under QEMU ({strategy})", args.cpus),
        );
        let boot = run_manycore(&kernel, machine, &cmdline, opts);
        spinner.finish_and_clear();
        let boot = boot?;
        rows.push(row(&boot.result, args.cpus, boot.wall, boot.command));
    }
    Ok(rows)
}

/// One boot of the Linux image `vmlinuz` on the same machine.
fn boot_linux(
    args: &QemuArgs,
    vmlinuz: &Path,
    machine: &Machine,
    opts: &RunOptions,
) -> Result<Row> {
    if !vmlinuz.is_file() {
        bail!(
            "--linux {}: no such file (scripts/fetch-linux.sh unpacks Debian's)",
            vmlinuz.display()
        );
    }
    let mut cmdline = args.linux_append.clone();
    if let Some(lpj) = args.lpj {
        cmdline.push_str(&format!(" lpj={lpj}"));
    }
    let spinner = crate::progress::spinner(
        args.quiet,
        &format!("booting Linux on {} CPUs under QEMU", args.cpus),
    );
    let boot = run_linux(vmlinuz, None, machine, cmdline.trim(), opts);
    spinner.finish_and_clear();
    let boot = boot?;
    Ok(row(&boot.result, args.cpus, boot.wall, boot.command))
}

/// One human-readable line per boot.
fn print_row(r: &Row) {
    let failed = if r.failed_cpus.is_empty() {
        String::from("none failed")
    } else {
        format!("failed: {:?}", r.failed_cpus)
    };
    println!(
        "{:8} {:9} {:5} CPUs: {}/{} up on {} node(s) in {:.3} ms ({failed}; QEMU ran {:.1} s)",
        r.kernel,
        r.bringup,
        r.cpus,
        r.cpus_up,
        r.cpus,
        r.nodes,
        r.bringup_ns as f64 / 1e6,
        r.wall_ms as f64 / 1e3
    );
}

fn row(r: &KernelResult, cpus: u32, wall: Duration, command: String) -> Row {
    Row {
        kernel: r.kernel.clone(),
        bringup: r.bringup.clone(),
        calibrate: r.calibrate.clone(),
        cpus,
        cpus_up: r.cpus_up,
        nodes: r.nodes,
        bringup_ns: r.bringup_ns,
        failed_cpus: r.failed_cpus.clone(),
        wall_ms: wall.as_millis(),
        qemu_command: command,
        timeline: r.timeline,
    }
}
