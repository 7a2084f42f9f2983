//! Machines shared by the tests, benchmarks and the cost-curve example.
#![allow(dead_code)]

use topology::{Arch, Shape, Topology};

/// Seed 000's 1024-CPU POWER8 PowerVM LPAR: 16 sockets = 16 nodes of 8 SMT8
/// cores (lscpu in the seed: node N = CPUs 64N..64N+63). From the catalogue
/// when it has it, else built here to the same shape.
pub fn power8_lpar_1024() -> Topology {
    readers::catalogue::machine("power8-lpar-1024").unwrap_or_else(|_| {
        let mut s = Shape::simple(Arch::PowerPc64, 16, 8, 8);
        s.distances = (40, 40);
        s.build().unwrap()
    })
}

/// Seed 000's 4096-CPU single-socket POWER machine (1024 SMT4 cores, one node).
pub fn power_4096_1socket() -> Topology {
    readers::catalogue::machine("power-4096-1socket")
        .unwrap_or_else(|_| Shape::simple(Arch::PowerPc64, 1, 1024, 4).build().unwrap())
}

/// A 16384-CPU POWER10-like machine: 16 sockets, 2 nodes each, 4 coregroups
/// of 32 SMT8 cores per socket.
pub fn synthetic_16384() -> Topology {
    let mut s = Shape::simple(Arch::PowerPc64, 16, 32, 8);
    s.clusters = 4;
    s.nodes_per_package = 2;
    s.distances = (20, 40);
    s.build().unwrap()
}

/// The "fixed node size" family: `n / 64` sockets of 8 SMT8 cores (one node each).
pub fn nodes_of_64(n: u32) -> Topology {
    Shape::simple(Arch::PowerPc64, n / 64, 8, 8)
        .build()
        .unwrap()
}

/// The "one big socket" family: one node of `n / 4` SMT4 cores.
pub fn one_socket(n: u32) -> Topology {
    Shape::simple(Arch::PowerPc64, 1, n / 4, 4).build().unwrap()
}
