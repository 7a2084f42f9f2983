//! `manycore hotplug`: bring every CPU of a machine online through the hotplug
//! state machine, optionally cycle random offline/online events, and report the
//! mask-update work per level, the real time it took, and whether the
//! incrementally updated masks equal a from-scratch rebuild from the same
//! topology. That is a consistency check of the update algorithm only: it
//! cannot notice a topology that is wrong to begin with. Whether the masks are
//! the ones real kernels compute is tested against the corpus's sysfs
//! snapshots (cli/tests/hotplug_corpus.rs).
use std::fmt::Write as _;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use hotplug::{Algo, BringupReport, Hotplug, Kick, MaskEngine, MaskLevel, Platform, WorkCounts};
use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};
use serde_json::json;

use crate::source::SourceArgs;

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HotplugFormat {
    /// A table for people.
    Text,
    /// One JSON object.
    Json,
}

/// Options of `manycore hotplug`.
#[derive(Args, Debug, Clone)]
pub struct HotplugArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Mask-update algorithm: naive is powerpc before seed 000 (scan every
    /// online CPU, firmware look-up each); scoped is after it (node-scoped
    /// scans, cached ids, consolidated levels).
    #[arg(long, default_value_t = Algo::Scoped, value_name = "naive|scoped")]
    pub algo: Algo,
    /// After bring-up, this many random cycles (offline a CPU, online it again).
    /// At most 1 000 000, and with the bring-up at most about 30 s of mask
    /// work (naive: priced before anything runs; scoped: at the first
    /// cycle's count): a typo should not run for hours.
    #[arg(long, allow_negative_numbers = true, default_value_t = 0, value_name = "N",
          value_parser = clap::value_parser!(u64).range(0..=MAX_CYCLES))]
    pub cycles: u64,
    /// Seed of the random cycle sequence.
    #[arg(
        long,
        allow_negative_numbers = true,
        default_value_t = 1,
        value_name = "S"
    )]
    pub seed: u64,
    /// Bring-up order: serial brings each CPU fully up before kicking the
    /// next; parallel kicks every CPU, then completes each (Linux 6.5).
    #[arg(long, default_value_t = Kick::Parallel, value_name = "serial|parallel")]
    pub order: Kick,
    /// Output format.
    #[arg(long, value_enum, default_value_t = HotplugFormat::Text)]
    pub format: HotplugFormat,
    /// No progress display (there is none either when standard error is not
    /// a terminal).
    #[arg(long)]
    pub quiet: bool,
}

/// Upper bound of `--cycles`.
const MAX_CYCLES: u64 = 1_000_000;

/// Most mask work one command may be priced at, bring-up and cycles
/// together, in [`WorkCounts`] units (CPUs scanned, firmware nodes walked,
/// property look-ups, mask bit and word operations): a naive bring-up at
/// the bound takes about 22 s at [`NS_PER_UNIT`]. The cycles' refusals give
/// no seconds: naive cycles' units measured up to 4.3 ns of user time and
/// scoped ones 15.6–25 (BENCHMARKS.md, "hotplug: cycle cost").
pub(crate) const MAX_WORK: u64 = 7_000_000_000;

/// Host time of a unit of naive bring-up mask work: the largest single
/// round measured, 3.01 ns (power8-lpar-1024; BENCHMARKS.md, "hotplug and
/// place, seventeenth session"), for the refusals' "about N s".
const NS_PER_UNIT: f64 = 3.01;

/// Seconds `units` of mask work take at [`NS_PER_UNIT`], rounded up.
fn about_s(units: u64) -> f64 {
    (units as f64 * NS_PER_UNIT * 1e-9).ceil()
}

/// The host: nothing to kick, a real clock to time the mask updates.
struct HostPlatform {
    start: Instant,
}

impl Platform for HostPlatform {
    fn kick(&mut self, _cpu: usize) -> Result<(), String> {
        Ok(())
    }
    fn wait_alive(&mut self, _cpu: usize) -> Result<(), String> {
        Ok(())
    }
    fn now_ns(&mut self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }
}

fn level_json(work: &WorkCounts, engine: &MaskEngine) -> serde_json::Value {
    let levels: Vec<serde_json::Value> = MaskLevel::ALL
        .iter()
        .map(|&l| {
            let w = work.level(l);
            json!({
                "level": l.name(),
                "stored_in": engine.consolidated_into(l).name(),
                "cpus_scanned": w.cpus_scanned,
                "fdt_nodes_visited": w.fdt_nodes_visited,
                "property_lookups": w.property_lookups,
                "mask_bit_ops": w.mask_bit_ops,
                "mask_word_ops": w.mask_word_ops,
            })
        })
        .collect();
    serde_json::Value::Array(levels)
}

/// Runs `manycore hotplug`: set up the engine, bring every CPU up, run the
/// offline/online cycles, compare with a rebuild, report.
pub fn run(args: &HotplugArgs) -> Result<()> {
    let topo = args.source.load()?;
    let setup_start = Instant::now();
    let engine = MaskEngine::new(&topo, args.algo)
        .with_context(|| format!("{}: cannot maintain hotplug masks", topo.source()))?;
    let setup_ns = setup_start.elapsed().as_nanos() as u64;
    let setup_work = *engine.setup_work();
    check_naive_price(args, &engine, topo.source())?;
    let mut hp = Hotplug::new(
        HostPlatform {
            start: Instant::now(),
        },
        engine,
    );

    let spinner =
        crate::progress::spinner(args.quiet, &format!("onlining {} CPUs", topo.cpus().len()));
    let bringup = hp.bringup(args.order);
    spinner.finish_and_clear();
    if let Some((cpu, e)) = bringup.failed.first() {
        anyhow::bail!("CPU {cpu} failed to come online: {e}");
    }
    let after_bringup = hp.engine().verify();
    let left = MAX_WORK.saturating_sub(bringup.work.total().total());
    let cycles = run_cycles(&mut hp, args, topo.source(), left)?;
    let mismatch = after_bringup
        .err()
        .or_else(|| hp.engine().verify().err())
        .map(|m| m.to_string());
    let outcome = Outcome {
        source: topo.source(),
        engine: hp.engine(),
        setup_ns,
        setup_work,
        bringup,
        cycles,
        mismatch,
    };
    let out = match args.format {
        HotplugFormat::Json => json_report(args, &outcome)?,
        HotplugFormat::Text => text_report(args, &outcome)?,
    };
    crate::write_stdout(&out)?;
    if outcome.mismatch.is_some() {
        anyhow::bail!("incremental masks differ from the rebuild");
    }
    Ok(())
}

/// Refuses a naive run priced above [`MAX_WORK`] before any CPU comes
/// online: the bring-up alone (naming --algo), or with `--cycles` of the
/// dearest cycle (naming the most cycles that fit).
fn check_naive_price(args: &HotplugArgs, engine: &MaskEngine, source: &str) -> Result<()> {
    let Some(price) = engine.naive_price() else {
        return Ok(());
    };
    check_naive_bringup("--algo", engine, price.bringup, 1, source)?;
    let max = (MAX_WORK - price.bringup) / price.cycle.max(1);
    if args.cycles > max {
        anyhow::bail!(
            "--cycles {}: after the naive bring-up's {} units of mask work, one offline/online cycle of {source} does up to {} units; at most {max} cycles fit in {MAX_WORK} units",
            args.cycles,
            price.bringup,
            price.cycle,
        );
    }
    Ok(())
}

/// Refuses `runs` naive bring-ups of `bringup` units each above
/// [`MAX_WORK`], naming `option` (the one that chose naive) and its other
/// value; `boot --masks naive` runs the same engine.
pub(crate) fn check_naive_bringup(
    option: &str,
    engine: &MaskEngine,
    bringup: u64,
    runs: u64,
    source: &str,
) -> Result<()> {
    let units = bringup.saturating_mul(runs);
    if units <= MAX_WORK {
        return Ok(());
    }
    let times = if runs == 2 { ", twice (--compare)" } else { "" };
    anyhow::bail!(
        "{option} naive: onlining the {} CPUs of {source} does {bringup} units of mask work (CPUs scanned, firmware look-ups, mask operations){times}, about {} s at {NS_PER_UNIT} ns a unit; at most {MAX_WORK} units (about {} s) are run: {option} scoped",
        engine.present().weight(),
        about_s(units),
        about_s(MAX_WORK),
    );
}

/// Offlines a random non-boot CPU and onlines it again, `--cycles` times,
/// within `budget` units of mask work; returns what the cycles added to the
/// report.
fn run_cycles(
    hp: &mut Hotplug<HostPlatform>,
    args: &HotplugArgs,
    source: &str,
    budget: u64,
) -> Result<BringupReport> {
    let before = hp.report().clone();
    let candidates: Vec<usize> = hp
        .engine()
        .present()
        .iter()
        .filter(|&c| c != hp.engine().boot_cpu())
        .collect();
    if candidates.is_empty() && args.cycles > 0 {
        anyhow::bail!(
            "--cycles {}: {source} has no CPU but the boot CPU, so there is nothing to cycle",
            args.cycles,
        );
    }
    let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
    let bar = crate::progress::bar(args.quiet, args.cycles, "offline/online", "cycles");
    for i in 0..args.cycles {
        bar.inc(1);
        let cpu = candidates[(rng.next_u64() % candidates.len() as u64) as usize];
        hp.cpu_down(cpu)
            .with_context(|| format!("cycle: taking CPU {cpu} down"))?;
        hp.cpu_up(cpu)
            .with_context(|| format!("cycle: bringing CPU {cpu} back"))?;
        if i == 0 {
            check_cycle_work(args, source, cycle_work(hp.report(), &before), budget)?;
        }
    }
    bar.finish_and_clear();
    Ok(cycle_delta(hp.report(), &before))
}

/// Mask work since `before`, offlines included, in [`WorkCounts`] units.
fn cycle_work(now: &BringupReport, before: &BringupReport) -> u64 {
    let mut w = now.work - before.work;
    w += now.offline_work - before.offline_work;
    w.total().total()
}

/// Refuses `--cycles` when that many cycles like the first would do more
/// than the `budget` the bring-up left of [`MAX_WORK`]; every cycle scans
/// the same online set, so the first one prices the rest.
fn check_cycle_work(args: &HotplugArgs, source: &str, first: u64, budget: u64) -> Result<()> {
    let first = first.max(1);
    let max = budget / first;
    if args.cycles > max {
        anyhow::bail!(
            "--cycles {}: one offline/online cycle of {source} with --algo {} does {first} units of mask work (CPUs scanned, firmware look-ups, mask operations); at most {max} cycles fit in the {budget} units the bring-up left of {MAX_WORK}",
            args.cycles,
            args.algo,
        );
    }
    Ok(())
}

/// What one run did, for the report.
struct Outcome<'a> {
    source: &'a str,
    engine: &'a MaskEngine,
    setup_ns: u64,
    setup_work: WorkCounts,
    bringup: BringupReport,
    cycles: BringupReport,
    /// The first mask that differs from a rebuild, after bring-up or after the cycles.
    mismatch: Option<String>,
}

impl Outcome<'_> {
    /// Mask-update time of the cycles, offlines included.
    fn cycle_ns(&self) -> u64 {
        self.cycles.mask_update_ns + self.cycles.offline_ns
    }

    /// Work of the bring-up and the cycles, offlines included.
    fn total_work(&self) -> WorkCounts {
        let mut total = self.bringup.work;
        total += self.cycles.work;
        total += self.cycles.offline_work;
        total
    }
}

fn json_report(args: &HotplugArgs, o: &Outcome) -> Result<String> {
    let engine = o.engine;
    let report = json!({
        "source": o.source,
        "algo": args.algo.name(),
        "order": args.order.name(),
        "cpus": engine.online_mask().weight(),
        "boot_cpu": engine.boot_cpu(),
        "cycles": args.cycles,
        "seed": args.seed,
        "mask_update_ns": o.bringup.mask_update_ns + o.cycle_ns(),
        "bringup_mask_update_ns": o.bringup.mask_update_ns,
        "cycle_mask_update_ns": o.cycle_ns(),
        "setup_ns": o.setup_ns,
        "mask_storage_bytes": engine.mask_storage_bytes(),
        "update_order": engine.update_order().iter().map(|l| l.name()).collect::<Vec<_>>(),
        "levels": level_json(&o.total_work(), engine),
        "bringup_levels": level_json(&o.bringup.work, engine),
        "setup": {
            "fdt_nodes": engine.firmware().map_or(0, |t| t.node_count()),
            "fdt_nodes_visited": o.setup_work.total().fdt_nodes_visited,
            "property_lookups": o.setup_work.total().property_lookups,
        },
        "matches_rebuild": o.mismatch.is_none(),
        "mismatch": o.mismatch,
    });
    Ok(format!("{}\n", serde_json::to_string_pretty(&report)?))
}

fn text_report(args: &HotplugArgs, o: &Outcome) -> Result<String> {
    let engine = o.engine;
    let mut out = String::new();
    writeln!(out, "source:         {}", o.source)?;
    writeln!(
        out,
        "algorithm:      {} ({} bring-up), {} online, boot CPU {}",
        args.algo,
        args.order,
        crate::plural(engine.online_mask().weight(), "CPU"),
        engine.boot_cpu()
    )?;
    writeln!(
        out,
        "firmware tree:  {} nodes; set-up {:.3} ms; mask storage {:.1} KiB",
        engine.firmware().map_or(0, |t| t.node_count()),
        o.setup_ns as f64 / 1e6,
        engine.mask_storage_bytes() as f64 / 1024.0
    )?;
    writeln!(
        out,
        "mask updates:   {:.3} ms total ({:.3} ms bring-up of {}, {:.3} ms for {})",
        (o.bringup.mask_update_ns + o.cycle_ns()) as f64 / 1e6,
        o.bringup.mask_update_ns as f64 / 1e6,
        crate::plural(o.bringup.onlined.len(), "CPU"),
        o.cycle_ns() as f64 / 1e6,
        crate::plural(args.cycles as usize, "cycle")
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "{:<10} {:<10} {:>14} {:>16} {:>16} {:>12} {:>14}",
        "level", "stored in", "cpus scanned", "fdt nodes", "prop lookups", "bit ops", "word ops"
    )?;
    let total = o.total_work();
    for &l in &MaskLevel::ALL {
        let w = total.level(l);
        writeln!(
            out,
            "{:<10} {:<10} {:>14} {:>16} {:>16} {:>12} {:>14}",
            l.name(),
            engine.consolidated_into(l).name(),
            w.cpus_scanned,
            w.fdt_nodes_visited,
            w.property_lookups,
            w.mask_bit_ops,
            w.mask_word_ops
        )?;
    }
    writeln!(out)?;
    match &o.mismatch {
        None => writeln!(
            out,
            "rebuild:        every mask equals a from-scratch rebuild of the same topology"
        )?,
        Some(m) => writeln!(out, "rebuild:        DIFFERS: {m}")?,
    }
    Ok(out)
}

/// What the cycles added to the hotplug report.
fn cycle_delta(now: &BringupReport, before: &BringupReport) -> BringupReport {
    BringupReport {
        onlined: now.onlined[before.onlined.len()..].to_vec(),
        failed: now.failed[before.failed.len()..].to_vec(),
        work: now.work - before.work,
        mask_update_ns: now.mask_update_ns - before.mask_update_ns,
        offlined: now.offlined - before.offlined,
        offline_work: now.offline_work - before.offline_work,
        offline_ns: now.offline_ns - before.offline_ns,
    }
}
