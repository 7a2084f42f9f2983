//! `manycore domains`: the scheduler domains Linux would build on a machine.
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use domains::compare::{compare, Dump};
use domains::render::{self, Layout};
use domains::{Domains, KernelVersion};
use topology::{Topology, TopologyBuilder};

mod picture;

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DomainsFormat {
    /// `/proc/sys/kernel/sched_domain` files (v5.9 layout, decimal flags).
    Proc,
    /// `/sys/kernel/debug/sched/domains` files (v6.x layout, flag names).
    Debugfs,
    /// JSON.
    Json,
    /// Readable text, with the reason each removed domain was removed.
    Text,
}

impl DomainsFormat {
    /// The kernel file layout this format is, if it is one.
    fn layout(self) -> Option<Layout> {
        match self {
            DomainsFormat::Proc => Some(Layout::Proc),
            DomainsFormat::Debugfs => Some(Layout::Debugfs),
            DomainsFormat::Json | DomainsFormat::Text => None,
        }
    }

    /// The `--format` word that gives `layout`.
    fn of_layout(layout: Layout) -> &'static str {
        match layout {
            Layout::Proc => "proc",
            Layout::Debugfs => "debugfs",
        }
    }
}

/// How a POWER LPAR gets its processors (overrides what the SOURCE says).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LparMode {
    /// Dedicated processors.
    Dedicated,
    /// Shared-processor LPAR (SPLPAR): asym packing, no MC level (seed 001).
    Shared,
}

/// Show the scheduler domains Linux would build on a machine, bit for bit.
#[derive(Args, Debug, Clone)]
pub struct DomainsArgs {
    #[command(flatten)]
    pub source: crate::source::SourceArgs,
    /// Kernel whose rules, flag bits and names to follow: 5.9, 6.8 or 6.12.
    #[arg(long, default_value = "6.12", value_parser = parse_kernel)]
    pub kernel: KernelVersion,
    /// Treat a POWER LPAR as dedicated or shared-processor, whatever the source
    /// says (refused on other architectures).
    #[arg(long, value_enum, value_name = "MODE")]
    pub lpar: Option<LparMode>,
    /// Reproduce the rebuild Linux ran while taking this (now offline) CPU
    /// offline: it still counts in the topology masks, so intervals include it.
    #[arg(long, allow_negative_numbers = true, value_name = "CPU")]
    pub deactivating: Option<u32>,
    /// The kernel's .config (or a fragment): CONFIG_SCHED_SMT, CONFIG_SCHED_CLUSTER
    /// and CONFIG_SCHED_MC decide which levels exist; an option the file does not
    /// set is off, as in Kconfig. Without it every one of them is taken as =y
    /// (Debian's arm64 6.12, for one, has CONFIG_SCHED_CLUSTER off: no CLS).
    #[arg(long, value_name = "FILE")]
    pub kernel_config: Option<PathBuf>,
    /// Show only this CPU.
    #[arg(long, allow_negative_numbers = true, conflicts_with = "all")]
    pub cpu: Option<u32>,
    /// Show every online CPU (the default).
    #[arg(long)]
    pub all: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = DomainsFormat::Text)]
    pub format: DomainsFormat,
    /// Write the kernel's own file tree (cpuN/domainM/<file>) under DIR, in the
    /// layout of --format proc|debugfs (default: the kernel's native layout).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Draw --cpu N's domains as nested boxes (groups, flags, removed levels)
    /// into FILE: SVG, or PNG when FILE ends in .png.
    #[arg(long, value_name = "FILE", requires = "cpu")]
    pub svg: Option<PathBuf>,
    /// Compare with a dump taken from a live kernel in that layout (a directory,
    /// .tar.gz or .tar.bz2; a dmesg.txt from a sched_verbose boot next to it is checked too).
    /// Exit status 1 when anything differs.
    #[arg(long, value_name = "DIR")]
    pub compare: Option<PathBuf>,
}

fn parse_kernel(s: &str) -> std::result::Result<KernelVersion, String> {
    s.parse()
}

/// Runs the subcommand; returns the exit status.
pub fn run(args: &DomainsArgs) -> Result<i32> {
    check_kernel_layout(args)?;
    let topo = with_lpar(args.source.load()?, args.lpar)?;
    let options = domains::Options {
        deactivating: args.deactivating,
        config: kernel_config(args)?,
    };
    let doms = domains::build_with(&topo, args.kernel, &options).map_err(|e| match e {
        domains::Error::NotDeactivating(c) => anyhow::anyhow!("--deactivating {c}: {e}"),
        e => e.into(),
    })?;
    if let Some(dir) = &args.compare {
        return compare_with_dump(&doms, dir, args.kernel);
    }
    if let Some(dir) = &args.out {
        write_tree(&doms, dir, args)?;
        return Ok(0);
    }
    print(&doms, &topo, args)?;
    Ok(0)
}

/// The topology as a dedicated or shared-processor LPAR (`--lpar`), which
/// only POWER has.
fn with_lpar(topo: Topology, lpar: Option<LparMode>) -> Result<Topology> {
    let Some(mode) = lpar else {
        return Ok(topo);
    };
    // Only pseries has LPARs; elsewhere the option would silently do nothing.
    if !topo.arch().is_power() {
        bail!(
            "--lpar: {} is {}, not POWER; only POWER LPARs are dedicated or shared-processor",
            topo.source(),
            topo.arch().uname()
        );
    }
    let mut b = TopologyBuilder::from_topology(&topo);
    b.shared_processor(mode == LparMode::Shared);
    b.finish()
        .with_context(|| format!("--lpar on {}", topo.source()))
}

/// `--kernel-config`, or the default configuration.
fn kernel_config(args: &DomainsArgs) -> Result<domains::KernelConfig> {
    let Some(path) = &args.kernel_config else {
        return Ok(domains::KernelConfig::default());
    };
    // A regular file within the dump-file limit: a FIFO or device named here
    // is refused, not read forever.
    let limit = domains::dumpfs::DUMP_FILE_LIMIT;
    let text = readers::limits::read_text_input(path, limit, "a kernel config")
        .with_context(|| "--kernel-config".to_string())?;
    domains::KernelConfig::parse(&text)
        .map_err(|e| anyhow::anyhow!("--kernel-config {}: {e}", path.display()))
}

/// `--compare DIR`: every difference from the kernel's dump; exit status 1
/// when there is one.
fn compare_with_dump(doms: &Domains, dir: &Path, kernel: KernelVersion) -> Result<i32> {
    let dump = Dump::read(dir)?;
    let diffs = compare(doms, &dump);
    let mut out = String::new();
    if diffs.is_empty() {
        writeln!(
            out,
            "no difference: {} files{} match Linux {} as manycore computes it",
            dump.files.len(),
            if dump.verbose.is_empty() {
                String::new()
            } else {
                format!(" and {} CPUs' sched_verbose trees", dump.verbose.len())
            },
            kernel
        )?;
        crate::write_stdout(&out)?;
        return Ok(0);
    }
    for d in &diffs {
        writeln!(out, "{d}")?;
    }
    writeln!(
        out,
        "{} difference{}",
        diffs.len(),
        if diffs.len() == 1 { "" } else { "s" }
    )?;
    crate::write_stdout(&out)?;
    Ok(1)
}

/// `--out DIR`: the files a kernel would show, in the chosen layout.
fn write_tree(doms: &Domains, dir: &Path, args: &DomainsArgs) -> Result<()> {
    let layout = args
        .format
        .layout()
        .unwrap_or_else(|| render::native_layout(args.kernel));
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    render::write_tree(doms, layout, dir)
        .with_context(|| format!("{}: cannot write", dir.display()))?;
    eprintln!(
        "wrote {} CPUs' domains under {} ({} layout)",
        doms.cpus.len(),
        dir.display(),
        if layout == Layout::Proc {
            "procfs"
        } else {
            "debugfs"
        }
    );
    Ok(())
}

/// The domains of `--cpu` (or every CPU) on stdout in the chosen format, and
/// one CPU's picture to `--svg`.
fn print(doms: &Domains, topo: &Topology, args: &DomainsArgs) -> Result<()> {
    let selected: Vec<&domains::CpuDomains> = match args.cpu {
        Some(cpu) => match doms.cpu(cpu as usize) {
            Some(c) => vec![c],
            None => bail!(
                "--cpu {cpu}: CPU {cpu} is not online on {} (online: {})",
                topo.source(),
                doms.cpu_map
            ),
        },
        None => doms.cpus.iter().collect(),
    };
    if let (Some(path), [cpu]) = (&args.svg, selected.as_slice()) {
        let picture = picture::svg(doms, cpu, topo.source());
        crate::write_picture(path, &picture)?;
    }
    // Every format is streamed CPU by CPU through one buffer: all domains of
    // a 16384-CPU machine are tens of megabytes of text.
    crate::stream_stdout(|out| {
        let mut out = std::io::BufWriter::with_capacity(1 << 16, out);
        match args.format.layout() {
            Some(layout) => render::to_io(&mut out, |w| {
                render::write_files(doms, layout, &selected, w)
            })?,
            None if args.format == DomainsFormat::Json => {
                render::write_json(doms, &selected, &mut out)?
            }
            None => render::to_io(&mut out, |w| render::write_text(doms, &selected, w))?,
        }
        std::io::Write::flush(&mut out)
    })?;
    Ok(())
}

/// Refuses a file layout the chosen kernel never had: `/proc/sys/kernel/sched_domain`
/// went away in 5.13 when the files moved to debugfs, which 5.9 does not have.
fn check_kernel_layout(args: &DomainsArgs) -> Result<()> {
    let Some(layout) = args.format.layout() else {
        return Ok(());
    };
    let native = render::native_layout(args.kernel);
    if layout != native {
        bail!(
            "--format {}: Linux {} has no {} tree; it has {} (use --format {})",
            DomainsFormat::of_layout(layout),
            args.kernel,
            layout.kernel_root(),
            native.kernel_root(),
            DomainsFormat::of_layout(native),
        );
    }
    Ok(())
}
