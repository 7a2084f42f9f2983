//! CPU time of one reader on one generated machine, for the scaling rows of
//! BENCHMARKS.md on a host shared with other work (wall time there measures
//! the other work too):
//!
//!   cargo run --release -p readers --example scaling_cpu -- xml 16384 3
//!
//! Arguments: the reader (`xml`, `lscpu`, `synthetic`, `build` for
//! rebuilding the topology through `TopologyBuilder::from_topology`, or
//! `xml-write` for the XML writer), the size, and how many seconds to read
//! in a loop. `xml-nodes`, `synthetic-nodes`, `lscpu-nodes` and
//! `build-nodes` grow NUMA nodes instead of CPUs (one core of two threads
//! per node, a distance matrix over them). The machine is the scaling
//! bench's: a threads-last x86 shape, one node per package. Prints the
//! thread's CPU time per read (`CLOCK_THREAD_CPUTIME_ID`), the wall time
//! per read, and the input's size. With `SCALING_INPUT=path` the input
//! text is also written to `path` (for whole-process runs of the same
//! input).

use std::time::Instant;

use topology::Numbering;

#[path = "../benches/support/machines.rs"]
mod machines;
use machines::{lscpu_csv, machine, thread_cpu};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: scaling_cpu xml|xml-write|lscpu|synthetic|build[-nodes] SIZE [SECONDS]";
    let (Some(reader), Some(n)) = (args.get(1), args.get(2).and_then(|s| s.parse::<u32>().ok()))
    else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let secs: f64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(3.0);
    // The scaling bench's sizes: 4 packages up to 4096 CPUs, 8 beyond.
    let shape = if reader.ends_with("-nodes") {
        machine(n / 16, 16, 16, Numbering::ThreadsLast)
    } else {
        let packages = if n > 4096 { 8 } else { 4 };
        machine(packages, n / 2 / packages, 1, Numbering::ThreadsLast)
    };
    let t = shape.unwrap_or_else(|e| {
        eprintln!("{reader} {n}: {e}");
        std::process::exit(1);
    });
    let kind = reader.strip_suffix("-nodes").unwrap_or(reader);
    let input = match kind {
        "xml" => readers::xml::write(&t),
        "lscpu" => lscpu_csv(&t),
        "synthetic" => readers::synthetic::write(&t).expect("synthetic"),
        "build" | "xml-write" => String::new(),
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    };
    if let Ok(path) = std::env::var("SCALING_INPUT") {
        std::fs::write(path, &input).expect("input written");
    }
    let read = || match kind {
        "xml" => drop(readers::xml::read(&input, "x").expect("xml")),
        "xml-write" => drop(readers::xml::write(&t)),
        "lscpu" => drop(readers::lscpu::parse(&input, "l").expect("lscpu")),
        "build" => drop(
            topology::TopologyBuilder::from_topology(&t)
                .finish()
                .expect("build"),
        ),
        _ => drop(readers::synthetic::parse(&input).expect("synthetic")),
    };
    read();
    let (wall, cpu) = (Instant::now(), thread_cpu());
    let mut reads = 0u32;
    while wall.elapsed().as_secs_f64() < secs || reads < 2 {
        read();
        reads += 1;
    }
    let cpu_ms = (thread_cpu() - cpu) * 1e3 / reads as f64;
    let wall_ms = wall.elapsed().as_secs_f64() * 1e3 / reads as f64;
    println!(
        "{reader} {n}: {cpu_ms:.3} ms CPU/read, {wall_ms:.3} ms wall/read, {reads} reads, {} CPUs, {} nodes, input {} bytes",
        t.cpus().len(),
        t.nodes().len(),
        input.len()
    );
}
