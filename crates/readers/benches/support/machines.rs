//! Shared by the scaling benches and the `scaling_cpu` example: the generated
//! machine they grow, its `lscpu --parse` rows, and the thread CPU clock they
//! time reads with.
#![allow(dead_code)]

use topology::{Arch, LevelKind, Numbering, Shape, Topology};

/// The scaling machine: x86, two threads per core, `nodes_per_package` NUMA
/// nodes per package at distances 12 (same package) and 32; an error where
/// it is beyond the model (more than 16384 CPUs).
pub fn machine(
    packages: u32,
    cores: u32,
    nodes_per_package: u32,
    numbering: Numbering,
) -> Result<Topology, String> {
    Shape {
        arch: Arch::X86_64,
        packages,
        dies: 1,
        clusters: 1,
        cores,
        threads: 2,
        nodes_per_package,
        numbering,
        distances: (12, 32),
    }
    .build()
    .map_err(|e| e.to_string())
}

/// `lscpu --parse` rows (CPU, core, socket, node) for `t`.
pub fn lscpu_csv(t: &Topology) -> String {
    let mut out = String::from("# CPU,Core,Socket,Node\n");
    for c in t.cpus() {
        let g = |k: LevelKind| c.group(k).unwrap_or(0);
        let (core, pkg) = (g(LevelKind::Core), g(LevelKind::Package));
        out.push_str(&format!("{},{core},{pkg},{}\n", c.id, c.node.unwrap_or(0)));
    }
    out
}

/// The CPU time this thread has used, in seconds: on a host shared with other
/// work, wall time measures that work too.
pub fn thread_cpu() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}
