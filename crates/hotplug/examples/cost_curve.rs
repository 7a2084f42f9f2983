//! Measures the real time to online every CPU's masks, naive and scoped in the
//! same run, for N = 64 … 16384 in two machine families plus the seed
//! machines, prints a Markdown table for BENCHMARKS.md and writes the
//! per-CPU cost curve as SVG.
//!
//! ```text
//! cargo run --release -p hotplug --example cost_curve -- \
//!     [--svg docs/hotplug-cost-per-cpu.svg] [--naive-max 2048] [--reps 5] [--naive-4096]
//! ```
//!
//! Families (see `tests/common`): "64-CPU nodes" (N/64 POWER8-like sockets of
//! 8 SMT8 cores, one node each: node size fixed as N grows) and "one socket"
//! (one node of N/8 POWER9-style big cores whose L2 is shared by two SMT4
//! thread groups: the node to scan grows with N).

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::Instant;

use hotplug::{Algo, MaskEngine};
use plotters::prelude::*;
use topology::Topology;

/// Onlines every present CPU but the boot CPU; returns (ns, CPUs onlined).
fn online_all(topo: &Topology, algo: Algo) -> (u64, usize) {
    let mut engine = MaskEngine::new(topo, algo).expect("engine");
    let cpus: Vec<usize> = engine
        .present()
        .iter()
        .filter(|&c| c != engine.boot_cpu())
        .collect();
    let start = Instant::now();
    for &cpu in &cpus {
        engine.online(cpu).expect("online");
    }
    let ns = start.elapsed().as_nanos() as u64;
    // Outside the timing: the result must be right.
    engine.verify().expect("masks verify");
    (ns, cpus.len())
}

/// Fastest of `reps` runs: on a shared, loaded machine the minimum is the run
/// least disturbed by other processes (the median is printed too).
fn measure(topo: &Topology, algo: Algo, reps: usize) -> (u64, u64, usize) {
    let mut runs: Vec<(u64, usize)> = (0..reps.max(1)).map(|_| online_all(topo, algo)).collect();
    runs.sort();
    (runs[0].0, runs[runs.len() / 2].0, runs[0].1)
}

type Family = (&'static str, fn(u32) -> Topology);

struct Point {
    n: u32,
    scoped_ns: u64,
    naive_ns: Option<u64>,
    cpus: usize,
}

fn main() {
    let mut svg = String::from("docs/hotplug-cost-per-cpu.svg");
    let mut naive_max = 2048u32;
    let mut reps = 5usize;
    let mut naive_4096 = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--svg" => svg = args.next().expect("--svg PATH"),
            "--naive-max" => {
                naive_max = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--naive-max N")
            }
            "--reps" => reps = args.next().and_then(|v| v.parse().ok()).expect("--reps N"),
            "--naive-4096" => naive_4096 = true,
            other => panic!("unknown argument {other}"),
        }
    }

    println!("### Seed machines (scoped: fastest and median of {reps} runs; naive: one run)\n");
    println!(
        "| machine | CPUs | naive ms | scoped ms (median) | naive / scoped | scoped ns per CPU |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    let seeds: [(&str, Topology, bool); 4] = [
        ("power8-lpar-1024", common::power8_lpar_1024(), true),
        (
            "power-4096-1socket",
            common::power_4096_1socket(),
            naive_4096,
        ),
        (
            "synthetic-16384 (16 sockets x 2 nodes x 4 coregroups x 32 SMT8 cores)",
            common::synthetic_16384(),
            false,
        ),
        (
            "x86-16384 (8 sockets x 1024 cores x 2 threads, threads numbered last)",
            common::x86_16384(),
            false,
        ),
    ];
    for (name, topo, run_naive) in &seeds {
        let (scoped, scoped_median, cpus) = measure(topo, Algo::Scoped, reps);
        let naive = run_naive.then(|| online_all(topo, Algo::Naive).0);
        println!(
            "| {name} | {} | {} | {:.3} ({:.3}) | {} | {:.0} |",
            cpus + 1,
            naive.map_or("not run".into(), |n| format!("{:.1}", n as f64 / 1e6)),
            scoped as f64 / 1e6,
            scoped_median as f64 / 1e6,
            naive.map_or("-".into(), |n| format!("{:.0}x", n as f64 / scoped as f64)),
            scoped as f64 / cpus as f64
        );
    }

    let ns: Vec<u32> = (6..=14).map(|k| 1u32 << k).collect();
    let families: [Family; 2] = [
        ("64-CPU nodes", common::nodes_of_64),
        ("one socket", common::one_socket),
    ];
    let mut curves: Vec<(&str, Vec<Point>)> = Vec::new();
    for (family, build) in families {
        println!("\n### Family \"{family}\" (scoped: fastest and median of {reps}; naive: one run, N <= {naive_max})\n");
        println!(
            "| N | naive ms | scoped ms (median) | naive / scoped | naive ns/CPU | scoped ns/CPU |"
        );
        println!("|---:|---:|---:|---:|---:|---:|");
        let mut points = Vec::new();
        for &n in &ns {
            let topo = build(n);
            let (scoped_ns, scoped_median, cpus) = measure(&topo, Algo::Scoped, reps);
            let naive_ns = (n <= naive_max).then(|| online_all(&topo, Algo::Naive).0);
            println!(
                "| {n} | {} | {:.3} ({:.3}) | {} | {} | {:.0} |",
                naive_ns.map_or("-".into(), |v| format!("{:.1}", v as f64 / 1e6)),
                scoped_ns as f64 / 1e6,
                scoped_median as f64 / 1e6,
                naive_ns.map_or("-".into(), |v| format!(
                    "{:.0}x",
                    v as f64 / scoped_ns as f64
                )),
                naive_ns.map_or("-".into(), |v| format!("{:.0}", v as f64 / cpus as f64)),
                scoped_ns as f64 / cpus as f64
            );
            points.push(Point {
                n,
                scoped_ns,
                naive_ns,
                cpus,
            });
        }
        curves.push((family, points));
    }
    draw(&svg, &curves).expect("write SVG");
    println!("\nwrote {svg}");
}

fn draw(path: &str, curves: &[(&str, Vec<Point>)]) -> Result<(), Box<dyn std::error::Error>> {
    if let Some(dir) = std::path::Path::new(path).parent() {
        std::fs::create_dir_all(dir)?;
    }
    let per_cpu = |ns: u64, cpus: usize| ns as f64 / cpus as f64;
    let mut y_max = 1.0f64;
    let mut y_min = f64::MAX;
    for (_, pts) in curves {
        for p in pts {
            y_max = y_max.max(per_cpu(p.scoped_ns, p.cpus));
            y_min = y_min.min(per_cpu(p.scoped_ns, p.cpus));
            if let Some(n) = p.naive_ns {
                y_max = y_max.max(per_cpu(n, p.cpus));
            }
        }
    }
    let root = SVGBackend::new(path, (900, 600)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "Onlining every CPU: mask-update time per CPU (real time, release build)",
            ("sans-serif", 20),
        )
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(
            (48f64..22000f64).log_scale(),
            ((y_min / 2.0)..(y_max * 2.0)).log_scale(),
        )?;
    chart
        .configure_mesh()
        .x_desc("CPUs onlined (N)")
        .y_desc("ns per CPU (log)")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .draw()?;
    let colours = [BLUE, RED, GREEN, MAGENTA];
    let mut k = 0;
    for (family, pts) in curves {
        for (algo, pick) in [
            (
                "scoped",
                Box::new(|p: &Point| Some(p.scoped_ns)) as Box<dyn Fn(&Point) -> Option<u64>>,
            ),
            ("naive", Box::new(|p: &Point| p.naive_ns)),
        ] {
            let series: Vec<(f64, f64)> = pts
                .iter()
                .filter_map(|p| pick(p).map(|ns| (p.n as f64, per_cpu(ns, p.cpus))))
                .collect();
            let colour = colours[k % colours.len()];
            k += 1;
            chart
                .draw_series(LineSeries::new(series.clone(), colour.stroke_width(2)))?
                .label(format!("{algo}, {family}"))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
                });
            chart.draw_series(
                series
                    .into_iter()
                    .map(|(x, y)| Circle::new((x, y), 3, colour.filled())),
            )?;
        }
    }
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE.mix(0.9))
        .position(SeriesLabelPosition::UpperLeft)
        .draw()?;
    root.present()?;
    Ok(())
}
