//! The hwloc synthetic reader as the machine grows, by CPU time: 1024, 4096
//! and 16384 CPUs (2 threads per core, one NUMA node per package, an L3 per
//! package and an L2, L1d and L1i per core), numbered threads-last (x86) and
//! siblings-adjacent (POWER, arm64), each string made by our writer from one
//! `topology::Shape`.
//!
//! Per size: the CPU time of this thread (`CLOCK_THREAD_CPUTIME_ID`, so the
//! shared host's other work is not counted) of the first read of that size
//! in the process and the median of the next 7, and growth/input against
//! 1024 CPUs (1.00 = the cost grows as the CPUs do). The first read is the
//! one a command makes: its memory is fresh from the kernel, page faults
//! included.
//!
//! Run: `cargo bench -p readers --bench synthetic_scaling`.

use topology::Numbering;

#[path = "support/machines.rs"]
mod machines;
use machines::{machine, thread_cpu};

/// (first read, median of the next `runs`), in seconds of CPU time.
fn cpu_times(text: &str, runs: usize) -> (f64, f64) {
    let read = || {
        let start = thread_cpu();
        let t = readers::synthetic::parse(text).unwrap();
        let spent = thread_cpu() - start;
        drop(t);
        spent
    };
    let first = read();
    let mut rest: Vec<f64> = (0..runs).map(|_| read()).collect();
    rest.sort_by(f64::total_cmp);
    (first, rest[rest.len() / 2])
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    println!("| numbering | CPUs | first read ms | growth/input | median read ms | growth/input |");
    println!("|---|---:|---:|---:|---:|---:|");
    for numbering in [Numbering::ThreadsLast, Numbering::SiblingsAdjacent] {
        let mut base: Option<(usize, f64, f64)> = None;
        for (packages, cores) in [(4, 128), (4, 512), (8, 1024)] {
            let t = machine(packages, cores, 1, numbering).expect("shape");
            let text = readers::synthetic::write(&t).expect("synthetic");
            let n = t.cpus().len();
            let (first, median) = cpu_times(&text, 7);
            let (n0, f0, m0) = *base.get_or_insert((n, first, median));
            let input = n as f64 / n0 as f64;
            println!(
                "| {numbering:?} | {n} | {:.2} | {:.2} | {:.2} | {:.2} |",
                first * 1e3,
                first / f0 / input,
                median * 1e3,
                median / m0 / input
            );
        }
    }
}
