//! Builds all scheduler domains of the benchmark's 16384-CPU, 64-node machine
//! once, for measuring peak memory from outside:
//!
//!   /usr/bin/time -v target/release/examples/domains_16384            # topology + domains
//!   /usr/bin/time -v target/release/examples/domains_16384 --no-domains  # topology only
use domains::KernelVersion;
use topology::{Arch, Numbering, Shape};

fn main() {
    let topo = Shape {
        arch: Arch::X86_64,
        packages: 16,
        dies: 1,
        clusters: 4,
        cores: 128,
        threads: 2,
        nodes_per_package: 4,
        numbering: Numbering::ThreadsLast,
        distances: (12, 32),
    }
    .build()
    .expect("shape");
    if std::env::args().any(|a| a == "--no-domains") {
        println!(
            "{} CPUs, {} nodes, no domains built",
            topo.online.weight(),
            topo.nodes.len()
        );
        return;
    }
    let t = std::time::Instant::now();
    let doms = domains::build(&topo, KernelVersion::V6_12).expect("domains");
    let took = t.elapsed();
    let total: usize = doms.cpus.iter().map(|c| c.domains.len()).sum();
    println!(
        "{} CPUs, {} nodes: {} domains in all, {} distinct spans, built in {:.1} ms",
        doms.cpus.len(),
        topo.nodes.len(),
        total,
        doms.distinct_spans(),
        took.as_secs_f64() * 1e3
    );
}
