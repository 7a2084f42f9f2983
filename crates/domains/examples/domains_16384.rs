//! Builds all scheduler domains of the benchmark's 16384-CPU, 64-node machine
//! once, for measuring peak memory from outside:
//!
//!   cargo run --release -p domains --example domains_16384
//!
//! It prints the resident set and its peak (VmRSS, VmHWM from /proc/self/status)
//! before and after building the domains; `--no-domains` stops after the topology.
use domains::KernelVersion;

#[path = "../benches/common/mod.rs"]
mod common;

fn main() {
    let topo = common::machine_16384();
    if std::env::args().any(|a| a == "--no-domains") {
        println!(
            "{} CPUs, {} nodes, no domains built",
            topo.online().weight(),
            topo.nodes().len()
        );
        return;
    }
    let before = status_kib();
    let t = std::time::Instant::now();
    let doms = domains::build(&topo, KernelVersion::V6_12).expect("domains");
    let took = t.elapsed();
    let after = status_kib();
    let total: usize = doms.cpus.iter().map(|c| c.domains.len()).sum();
    println!(
        "{} CPUs, {} nodes: {} domains in all, {} distinct spans, built in {:.1} ms",
        doms.cpus.len(),
        topo.nodes().len(),
        total,
        doms.distinct_spans(),
        took.as_secs_f64() * 1e3
    );
    println!(
        "memory (KiB): before domains rss {} peak {}; after rss {} peak {}; domains keep {} MiB, peak growth {} MiB",
        before.0,
        before.1,
        after.0,
        after.1,
        (after.0 - before.0) / 1024,
        (after.1 - before.1) / 1024
    );
}

/// (VmRSS, VmHWM) from /proc/self/status, in KiB (0 where unavailable).
fn status_kib() -> (i64, i64) {
    let text = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}
