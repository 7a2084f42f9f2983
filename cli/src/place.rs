//! `manycore place`: where Linux's fair class puts a workload's tasks on a
//! machine's scheduler domains, with the PowerVM hypervisor underneath.
use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::{Args, ValueEnum};
use place::run::{self, check_duration, check_lpar, machine_for, Config, Report};
use place::{HvParams, Kernel, Lpar, MachineOptions, Workload};
use serde::Serialize;

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlaceFormat {
    /// A table like seed 001's lparstat rows.
    Text,
    /// JSON.
    Json,
}

/// Simulate a workload's task placement in virtual time.
#[derive(Args, Debug, Clone)]
pub struct PlaceArgs {
    #[command(flatten)]
    pub source: crate::source::SourceArgs,
    /// Kernel whose placement rules to follow: 6.6, 6.8 or 6.12.
    #[arg(long, default_value = "6.8")]
    pub kernel: String,
    /// POWER only: a shared-processor or dedicated LPAR (default: what the source says).
    #[arg(long, value_enum, value_name = "MODE")]
    pub lpar: Option<crate::domains::LparMode>,
    /// Workload: spin, ebizzy, hackbench[:BURST_US], duty[:RUN_US:SLEEP_US].
    #[arg(long, default_value = "ebizzy")]
    pub workload: String,
    /// Tasks to start (1 to 65536).
    #[arg(long, allow_negative_numbers = true)]
    pub threads: u32,
    /// Virtual seconds to run (0.001 to 3600). A command estimated to take
    /// more than 30 s of this host's time (both runs together with
    /// --compare) is refused with the longest duration that fits.
    #[arg(long, default_value = "10", allow_hyphen_values = true)]
    pub duration: String,
    /// Seed of every random choice.
    #[arg(long, allow_negative_numbers = true, default_value_t = 1)]
    pub seed: u64,
    /// Shared LPAR only: physical cores of the shared pool the partition can
    /// draw from (lparstat's physc + app). Default: one per virtual
    /// processor, so the pool never holds the partition back and only the
    /// placement decides physc.
    #[arg(long, value_name = "CORES", allow_hyphen_values = true)]
    pub pool: Option<String>,
    /// Shared LPAR only: entitled capacity in cores (lparstat -i `ent`), at
    /// most one per virtual processor and at most the pool. Default: the
    /// smaller of the two. Only %entc and --capped read it.
    #[arg(long, value_name = "CORES", allow_hyphen_values = true)]
    pub entitlement: Option<String>,
    /// Shared LPAR only: a capped partition never exceeds its entitlement.
    #[arg(long)]
    pub capped: bool,
    /// Run twice and compare: two kernels (6.6 6.8) or two LPAR modes (shared dedicated).
    #[arg(long, num_args = 2, value_names = ["A", "B"])]
    pub compare: Option<Vec<String>>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = PlaceFormat::Text)]
    pub format: PlaceFormat,
    /// x86 ITMT (Turbo Boost Max 3.0) core priorities, CPULIST=PRIORITY, repeated
    /// until every CPU has one (e.g. --itmt 0-1=70 --itmt 2-7=60): asym packing
    /// at the SMT, CLS and MC levels toward the higher priorities.
    #[arg(long, value_name = "CPULIST=PRIORITY")]
    pub itmt: Vec<String>,
    /// Write per-VP occupancy over time (both runs with --compare) into FILE:
    /// SVG, or PNG when FILE ends in .png.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// No progress display.
    #[arg(long)]
    pub quiet: bool,
}

/// One side of a run: kernel and partition mode.
#[derive(Debug, Clone, Copy)]
struct Side {
    kernel: Kernel,
    lpar: Lpar,
}

/// Runs the subcommand: read the arguments, load the machine, decide the
/// sides (one run, or two with `--compare`), simulate each, then write the SVG
/// and the report.
pub fn run(args: &PlaceArgs) -> Result<()> {
    let (seconds, kernel, workload) = parse_run_args(args)?;
    let topo = args.source.load()?;
    let power = topo.arch().is_power();
    let base = Side {
        kernel,
        lpar: partition_mode(args, &topo, power)?,
    };
    let sides = match &args.compare {
        None => vec![base],
        Some(v) => vec![
            parse_side(&v[0], base, power)?,
            parse_side(&v[1], base, power)?,
        ],
    };
    let shared = sides.iter().any(|s| s.lpar == Lpar::Shared);
    if !shared && (args.pool.is_some() || args.entitlement.is_some() || args.capped) {
        bail!(
            "--pool, --entitlement and --capped describe a shared-processor LPAR; this run has none (--lpar shared on a POWER machine)"
        );
    }
    let options = machine_options(args)?;
    let runs = sides
        .iter()
        .map(|side| prepare_side(args, &topo, *side, &options, workload, seconds))
        .collect::<Result<Vec<_>>>()?;
    // One bound for the whole command: both sides of --compare together.
    let priced: Vec<(&place::Machine, &Config)> = runs.iter().map(|(m, c)| (m, c)).collect();
    run::check_total_cost(&priced)?;
    let mut reports = Vec::new();
    for (m, cfg) in &runs {
        reports.push(simulate(args, m, cfg)?);
    }
    if let Some(path) = &args.svg {
        let runs: Vec<(&Report, usize)> = reports.iter().map(|(r, t)| (r, *t)).collect();
        crate::write_picture(path, &place::svg::occupancy_svg(&runs))?;
    }
    crate::write_stdout(&render(args.format, topo.source(), &reports)?)
}

/// The run's duration (virtual seconds), kernel and workload, each checked
/// before the machine is loaded so bad input fails fast with its own flag.
fn parse_run_args(args: &PlaceArgs) -> Result<(f64, Kernel, Workload)> {
    let seconds = crate::given::number("--duration", &args.duration, "seconds")?;
    // The error names the text given (1e400 parses as infinity).
    check_duration(seconds).map_err(|_| run::RunError::Duration(args.duration.clone()))?;
    let kernel: Kernel = args
        .kernel
        .parse()
        .map_err(|e: String| anyhow::anyhow!("--kernel {}: {e}", args.kernel))?;
    if args.threads == 0 {
        bail!("--threads must be at least 1");
    }
    let workload = Workload::parse(&args.workload)
        .map_err(|e| anyhow::anyhow!("--workload {}: {e}", args.workload))?;
    Ok((seconds, kernel, workload))
}

/// `--lpar` if given (refused off POWER), else what the source says: a POWER
/// machine is a shared or dedicated partition, anything else is not one.
fn partition_mode(args: &PlaceArgs, topo: &topology::Topology, power: bool) -> Result<Lpar> {
    let lpar = match args.lpar {
        Some(crate::domains::LparMode::Shared) => Lpar::Shared,
        Some(crate::domains::LparMode::Dedicated) => Lpar::Dedicated,
        None if power && topo.shared_processor() => Lpar::Shared,
        None if power => Lpar::Dedicated,
        None => Lpar::None,
    };
    if args.lpar.is_some() {
        check_lpar(topo, lpar)?;
    }
    Ok(lpar)
}

/// `--itmt` priorities, when given.
fn machine_options(args: &PlaceArgs) -> Result<MachineOptions> {
    let itmt_priorities = if args.itmt.is_empty() {
        None
    } else {
        Some(
            place::parse_itmt(args.itmt.iter().map(|s| s.as_str()))
                .map_err(|e| anyhow::anyhow!("--itmt {e}"))?,
        )
    };
    Ok(MachineOptions { itmt_priorities })
}

/// The partition's configuration for `side`: defaults for its VPs, then
/// `--pool`, `--entitlement` (default: the smaller of the VPs and the pool)
/// and `--capped`. PowerVM entitles a VP to at most one core and guarantees
/// the entitlement from the pool, so a larger one is refused.
fn partition(args: &PlaceArgs, side: Side, vps: usize) -> Result<HvParams> {
    let mut hv = HvParams::defaults(side.lpar, vps);
    if side.lpar != Lpar::Shared {
        return Ok(hv);
    }
    let cores = |option: &str, text: &str| -> Result<f64> {
        let n = crate::given::number(option, text, "cores")?;
        if !(n.is_finite() && n > 0.0) {
            bail!("{option} {text}: must be a positive number of cores");
        }
        Ok(n)
    };
    if let Some(text) = &args.pool {
        hv.pool = cores("--pool", text)?;
    }
    hv.entitlement = hv.entitlement.min(hv.pool);
    if let Some(text) = &args.entitlement {
        let e = cores("--entitlement", text)?;
        if e > vps as f64 || e > hv.pool {
            let pool = args.pool.clone().unwrap_or_else(|| hv.pool.to_string());
            bail!(
                "--entitlement {text}: at most one core per virtual processor ({vps}) and at most the pool ({pool})"
            );
        }
        hv.entitlement = e;
    }
    hv.capped = args.capped;
    Ok(hv)
}

/// One side's run, not yet simulated: its domains and machine view, its
/// partition and configuration.
fn prepare_side(
    args: &PlaceArgs,
    topo: &topology::Topology,
    side: Side,
    options: &MachineOptions,
    workload: Workload,
    seconds: f64,
) -> Result<(place::Machine, Config)> {
    let m = machine_for(topo, side.kernel, side.lpar == Lpar::Shared, options)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let hv = partition(args, side, m.vp_cpus.len())?;
    let mut cfg = Config::new(side.kernel, hv, workload, args.threads, seconds);
    cfg.seed = args.seed;
    cfg.trace = args.svg.is_some();
    Ok((m, cfg))
}

/// One side's simulation, with the threads per VP the SVG draws.
fn simulate(args: &PlaceArgs, m: &place::Machine, cfg: &Config) -> Result<(Report, usize)> {
    // Thousands of tasks over seconds of virtual time take a while: a
    // spinner says the run is alive.
    let spinner = crate::progress::spinner(args.quiet, &format!("placing on {}", cfg.kernel));
    let r = run::run(m, cfg);
    spinner.finish_and_clear();
    let tpv = m.vp_cpus.iter().map(|v| v.len()).max().unwrap_or(1);
    Ok((r?, tpv))
}

/// The report: one JSON object, `a` and `b` with `--compare`, or the table.
fn render(format: PlaceFormat, source: &str, reports: &[(Report, usize)]) -> Result<String> {
    Ok(match (format, reports) {
        (PlaceFormat::Json, [(r, _)]) => format!("{}\n", serde_json::to_string_pretty(r)?),
        (PlaceFormat::Json, [(a, _), (b, _)]) => {
            #[derive(Serialize)]
            struct Pair<'a> {
                a: &'a Report,
                b: &'a Report,
            }
            format!("{}\n", serde_json::to_string_pretty(&Pair { a, b })?)
        }
        (PlaceFormat::Text, rs) => table(source, rs.iter().map(|x| &x.0)),
        _ => unreachable!("one or two runs"),
    })
}

/// `--compare` operands: a kernel (6.6) or an LPAR mode (shared, dedicated).
fn parse_side(s: &str, base: Side, power: bool) -> Result<Side> {
    match s {
        "shared" | "dedicated" => {
            if !power {
                bail!("--compare {s}: LPAR modes exist only on POWER");
            }
            Ok(Side {
                lpar: if s == "shared" {
                    Lpar::Shared
                } else {
                    Lpar::Dedicated
                },
                ..base
            })
        }
        k => Ok(Side {
            kernel: k
                .parse()
                .map_err(|e: String| anyhow::anyhow!("--compare {k}: {e}, or shared/dedicated"))?,
            ..base
        }),
    }
}

/// Seed 001's lparstat table: one row per run.
fn table<'a>(source: &str, rs: impl Iterator<Item = &'a Report>) -> String {
    let mut s = String::new();
    let rs: Vec<&Report> = rs.collect();
    let r0 = rs[0];
    let _ = writeln!(
        s,
        "{source}: {} x {} for {} virtual s (seed {}); medians over {} samples after the first 20 %",
        r0.threads, r0.workload, r0.duration_s, r0.seed, r0.samples
    );
    let _ = writeln!(
        s,
        "{:<8} {:<9} {:>10} {:>8} {:>7} {:>6} {:>9} {:>10} {:>9} {:>10} {:>8} {:>6}",
        "kernel",
        "lpar",
        "throughput",
        "physc",
        "%entc",
        "lbusy",
        "vcsw/s",
        "migrations",
        "busy_cpus",
        "busy_cores",
        "packages",
        "nodes"
    );
    for r in &rs {
        let _ = writeln!(
            s,
            "{:<8} {:<9} {:>10.2} {:>8.2} {:>7.2} {:>6.2} {:>9.1} {:>10} {:>9} {:>10} {:>8} {:>6}",
            r.kernel,
            r.lpar,
            r.throughput,
            r.physc,
            r.entc_pct,
            r.lbusy,
            r.vcsw_per_s,
            r.migrations,
            r.busy_cpus,
            r.busy_cores,
            r.busy_packages,
            r.busy_nodes
        );
    }
    if let [a, b] = rs.as_slice() {
        let pct = |x: f64, y: f64| if x == 0.0 { 0.0 } else { 100.0 * (y - x) / x };
        let _ = writeln!(
            s,
            "change   {:>9} {:>+9.1}% {:>+7.1}%  (throughput is relative: the SMT throughput curve is assumed)",
            "", pct(a.throughput, b.throughput), pct(a.physc, b.physc)
        );
    }
    s
}
