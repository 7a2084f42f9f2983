//! `manycore domains`: the scheduler domains Linux would build on a machine.
use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use domains::compare::{compare, Dump};
use domains::render::{self, Layout};
use domains::KernelVersion;

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
    /// Treat a POWER LPAR as dedicated or shared-processor, whatever the source says.
    #[arg(long, value_enum, value_name = "MODE")]
    pub lpar: Option<LparMode>,
    /// Reproduce the rebuild Linux ran while taking this (now offline) CPU
    /// offline: it still counts in the topology masks, so intervals include it.
    #[arg(long, value_name = "CPU")]
    pub deactivating: Option<u32>,
    /// Show only this CPU.
    #[arg(long, conflicts_with = "all")]
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
    /// Compare with a dump taken from a live kernel in that layout (a directory or
    /// .tar.gz; a dmesg.txt from a sched_verbose boot next to it is checked too).
    /// Exit status 1 when anything differs.
    #[arg(long, value_name = "DIR")]
    pub compare: Option<PathBuf>,
}

fn parse_kernel(s: &str) -> std::result::Result<KernelVersion, String> {
    s.parse()
}

/// Runs the subcommand; returns the exit status.
pub fn run(args: &DomainsArgs) -> Result<i32> {
    let mut topo = args.source.load()?;
    if let Some(mode) = args.lpar {
        topo.shared_processor = mode == LparMode::Shared;
    }
    let options = domains::Options {
        deactivating: args.deactivating,
    };
    let doms = domains::build_with(&topo, args.kernel, &options)?;

    if let Some(dir) = &args.compare {
        let dump = Dump::read(dir)?;
        let diffs = compare(&doms, &dump);
        let mut out = std::io::stdout().lock();
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
                args.kernel
            )?;
            return Ok(0);
        }
        for d in &diffs {
            writeln!(out, "{d}")?;
        }
        writeln!(out, "{} difference(s)", diffs.len())?;
        return Ok(1);
    }

    if let Some(dir) = &args.out {
        let layout = match args.format {
            DomainsFormat::Proc => Layout::Proc,
            DomainsFormat::Debugfs => Layout::Debugfs,
            _ => render::native_layout(args.kernel),
        };
        std::fs::create_dir_all(dir)
            .with_context(|| format!("{}: cannot create", dir.display()))?;
        render::write_tree(&doms, layout, dir)
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
        return Ok(0);
    }

    let selected: Vec<&domains::CpuDomains> = match args.cpu {
        Some(cpu) => match doms.cpu(cpu as usize) {
            Some(c) => vec![c],
            None => bail!(
                "CPU {cpu} is not online on this machine (online: {})",
                doms.cpu_map
            ),
        },
        None => doms.cpus.iter().collect(),
    };
    let mut out = std::io::stdout().lock();
    let written = match args.format {
        DomainsFormat::Proc => {
            out.write_all(render::render_files(&doms, Layout::Proc, &selected).as_bytes())
        }
        DomainsFormat::Debugfs => {
            out.write_all(render::render_files(&doms, Layout::Debugfs, &selected).as_bytes())
        }
        DomainsFormat::Text => out.write_all(render::render_text(&doms, &selected).as_bytes()),
        // Streamed CPU by CPU: a 16384-CPU machine's tree would not fit nicely.
        DomainsFormat::Json => render::write_json(&doms, &selected, &mut out),
    };
    match written {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(0),
        r => r.map(|()| 0).map_err(Into::into),
    }
}
