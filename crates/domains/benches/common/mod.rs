//! The machine the `build` bench times and the `domains_16384` example
//! measures peak memory on, defined once so both measure the same one.

use topology::{Arch, Numbering, Shape, Topology};

/// 16384 CPUs, 64 nodes: 16 packages x 4 clusters x 128 cores x 2 threads,
/// 4 nodes per package, distances 10/12/32, threads numbered last (x86).
pub fn machine_16384() -> Topology {
    Shape {
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
    .expect("shape")
}
