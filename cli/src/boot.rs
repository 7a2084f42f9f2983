//! `manycore boot`: simulate a machine's CPU bring-up (crates/sim).
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use serde::Serialize;
use sim::costs::Era;
use sim::report::{self, Comparison};
use sim::{Algo, Calibrate, CostTable, Kick, Options, Platform, Run, Strategy};

/// Output format on standard output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Kernel log, phase summary (or the before/after table).
    Text,
    /// One JSON document.
    Json,
}

/// Simulate bringing up every CPU of a machine: how long, where the time goes,
/// and what each seed's fix buys.
#[derive(Args, Debug, Clone)]
pub struct BootArgs {
    /// The machine (default: this host).
    #[command(flatten)]
    pub source: crate::source::SourceArgs,
    /// Platform cost table (default: from the machine's architecture).
    /// x86-2010 is x86 with seed 002's 2.6.37-era delays.
    #[arg(long, value_name = "x86|x86-2010|powerpc|arm64")]
    pub platform: Option<Platform>,
    /// The x86 kernel: 6.5+ kicks and onlines every primary thread before
    /// their siblings and loads microcode before the AP's alive sync;
    /// pre-6.5 (seed 003's Linux 6.1 with the parallel-bringup series) kicks
    /// every CPU first and loads microcode on the serialized path.
    #[arg(long, default_value = "6.5+", value_name = "6.5+|pre-6.5")]
    pub linux: Era,
    /// Kick order: one CPU at a time, or every kick first (seed 003).
    #[arg(long, default_value = "serial", value_name = "serial|parallel")]
    pub strategy: Kick,
    /// Delay calibration (seed 002). Default: what the platform's Linux does —
    /// x86 (6.5+) copies CPU 0's lpj when the TSC is constant and synchronised,
    /// x86-2010 calibrates every AP serially, powerpc and arm64 take lpj from
    /// their timers.
    #[arg(long, value_name = "serial|parallel|once-per-package|skip|lpj=N")]
    pub calibrate: Option<Calibrate>,
    /// Topology-mask algorithm (seed 000); naive walks the device tree for every
    /// online CPU and takes minutes of real time beyond a few thousand CPUs.
    #[arg(long, default_value = "scoped", value_name = "naive|scoped")]
    pub masks: Algo,
    /// Run two kick strategies (the other options apply to both) and print a
    /// before / after table.
    #[arg(long, num_args = 2, value_names = ["A", "B"])]
    pub compare: Option<Vec<Kick>>,
    /// Write the timeline picture (with --compare: both runs on one time axis);
    /// PNG when FILE ends in .png.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Write the full run, per-CPU timeline included, as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Standard output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Jitter seed: the same seed gives bit-identical output.
    #[arg(long, allow_negative_numbers = true, default_value_t = 1)]
    pub seed: u64,
    /// No progress display.
    #[arg(long)]
    pub quiet: bool,
}

fn platform_for(args: &BootArgs, topo: &topology::Topology) -> Result<Platform> {
    match args.platform {
        Some(p) => Ok(p),
        None => Ok(Platform::for_arch(topo.arch()).unwrap_or_else(|| {
            // hwloc synthetic descriptions carry no architecture.
            if !args.quiet {
                eprintln!(
                    "note: no cost table for architecture '{}'; using x86 (choose with --platform)",
                    topo.arch().uname()
                );
            }
            Platform::X86
        })),
    }
}

/// The calibration asked for, or the platform's default.
fn calibrate(args: &BootArgs, costs: &CostTable) -> Calibrate {
    args.calibrate.unwrap_or_else(|| costs.default_calibrate())
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    let file = std::fs::File::create(path)
        .with_context(|| format!("{}: cannot create", path.display()))?;
    let mut w = std::io::BufWriter::new(file);
    serde_json::to_writer(&mut w, value)
        .with_context(|| format!("{}: cannot write", path.display()))?;
    w.flush()
        .with_context(|| format!("{}: cannot write", path.display()))?;
    Ok(())
}

/// Standard-output JSON of one run: everything but the per-CPU timeline.
#[derive(Serialize)]
struct RunSummary<'a> {
    machine: &'a str,
    platform: &'a str,
    strategy: &'a Strategy,
    seed: u64,
    cpus: usize,
    nodes: usize,
    brought_up_s: f64,
    done_s: f64,
    phases: &'a [sim::run::PhaseTotal],
    ops: &'a sim::masks::Ops,
    log: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    caveat: Option<&'a str>,
}

/// Runs `manycore boot`: the machine and its cost table ([`Setup::new`]),
/// then one simulated bring-up ([`Setup::report`]) or two compared
/// ([`Setup::compare`]).
pub fn run(args: &BootArgs) -> Result<()> {
    let setup = Setup::new(args)?;
    match &args.compare {
        Some(kicks) => {
            let [a, b] = kicks.as_slice() else {
                bail!("--compare takes exactly two strategies, e.g. --compare serial parallel");
            };
            setup.compare(*a, *b)
        }
        None => setup.report(),
    }
}

/// Refuses `--masks naive` when the simulated bring-ups (two with
/// `--compare`) would run more naive mask work than `manycore hotplug`
/// accepts: the simulator onlines every CPU through the real engine. Priced
/// for ascending order; a machine the engine refuses is left to the
/// simulator's own error.
fn check_naive_masks(args: &BootArgs, topo: &topology::Topology) -> Result<()> {
    if args.masks != Algo::Naive {
        return Ok(());
    }
    let Ok(engine) = hotplug::MaskEngine::new(topo, Algo::Naive) else {
        return Ok(());
    };
    let Some(price) = engine.naive_price() else {
        return Ok(());
    };
    let runs = if args.compare.is_some() { 2 } else { 1 };
    crate::hotplug::check_naive_bringup("--masks", &engine, price.bringup, runs, topo.source())
}

/// What every simulated run of one `manycore boot` shares.
struct Setup<'a> {
    args: &'a BootArgs,
    topo: topology::Topology,
    costs: CostTable,
    /// The machine's name in titles and reports.
    machine: String,
}

impl<'a> Setup<'a> {
    fn new(args: &'a BootArgs) -> Result<Setup<'a>> {
        let topo = args.source.load()?;
        let platform = platform_for(args, &topo)?;
        let costs = CostTable::for_platform(platform, &sim::fit::fitted()?).for_era(args.linux);
        check_naive_masks(args, &topo)?;
        let machine = if topo.source().is_empty() {
            "machine".to_string()
        } else {
            topo.source().to_string()
        };
        Ok(Setup {
            args,
            topo,
            costs,
            machine,
        })
    }

    /// One simulated bring-up with `kick` and the options' calibration,
    /// masks and seed, behind a progress bar.
    fn simulate(&self, kick: Kick) -> Result<Run> {
        let (args, topo, costs) = (self.args, &self.topo, &self.costs);
        let strategy = Strategy {
            kick,
            calibrate: calibrate(args, costs),
            masks: args.masks,
        };
        let bar = crate::progress::bar(
            args.quiet,
            topo.cpus().len() as u64,
            &format!("simulating {kick} kick"),
            "CPUs",
        );
        let run = sim::simulate_with(
            topo,
            costs,
            &strategy,
            &Options { seed: args.seed },
            &mut |done, total| {
                bar.set_length(total as u64);
                bar.set_position(done as u64);
            },
        )?;
        bar.finish_and_clear();
        Ok(run)
    }

    /// `--compare A B`: both runs, the picture and JSON files asked for, the
    /// comparison on standard output.
    fn compare(&self, a: Kick, b: Kick) -> Result<()> {
        let (args, machine, platform) = (self.args, &self.machine, self.costs.platform);
        let run_a = self.simulate(a)?;
        let run_b = self.simulate(b)?;
        if let Some(path) = &args.svg {
            let title = format!(
                "{machine}: {a} kick vs {b} kick ({platform}, calibrate={}, masks={})",
                calibrate(args, &self.costs),
                args.masks
            );
            let labels = [format!("{a} kick"), format!("{b} kick")];
            let picture = report::compare_svg(&run_a, &run_b, [&labels[0], &labels[1]], &title);
            crate::write_picture(path, &picture)?;
        }
        if let Some(path) = &args.json {
            write_json(path, &serde_json::json!({ "a": run_a, "b": run_b }))?;
        }
        let cmp = Comparison::new(&run_a, &run_b);
        match args.format {
            Format::Json => {
                crate::write_stdout(&format!("{}\n", serde_json::to_string_pretty(&cmp)?))
            }
            Format::Text => crate::write_stdout(&format!(
                "{machine}: {} CPUs, platform {platform}, calibrate={} masks={}, seed {}\n\n{}",
                run_a.cpus,
                calibrate(args, &self.costs),
                args.masks,
                args.seed,
                cmp.to_text(&format!("{a} kick"), &format!("{b} kick"))
            )),
        }
    }

    /// One run with `--strategy`: the picture and JSON files asked for, its
    /// report (or summary) on standard output.
    fn report(&self) -> Result<()> {
        let (args, machine) = (self.args, &self.machine);
        let run = self.simulate(args.strategy)?;
        if let Some(path) = &args.svg {
            let title = format!("{machine}: {} ({})", run.strategy, self.costs.platform);
            crate::write_picture(path, &report::timeline_svg(&run, &title))?;
        }
        if let Some(path) = &args.json {
            write_json(path, &run)?;
        }
        match args.format {
            Format::Json => {
                let summary = RunSummary {
                    machine,
                    platform: &run.platform,
                    strategy: &run.strategy,
                    seed: run.seed,
                    cpus: run.cpus,
                    nodes: run.nodes,
                    brought_up_s: run.brought_up_s,
                    done_s: run.done_s,
                    phases: &run.phases,
                    ops: &run.ops,
                    log: run.log.iter().map(|l| l.render()).collect(),
                    caveat: run.caveat.as_deref(),
                };
                crate::write_stdout(&format!("{}\n", serde_json::to_string_pretty(&summary)?))
            }
            Format::Text => crate::write_stdout(&report::text(&run, machine)),
        }
    }
}
