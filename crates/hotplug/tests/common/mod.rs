//! Machines shared by the tests, benchmarks and the cost-curve example.
#![allow(dead_code)]

use topology::{Arch, Cache, CacheKind, CpuMask, CpuSpec, Shape, Topology, TopologyBuilder};

/// Seed 000's 1024-CPU POWER8 PowerVM LPAR: 16 sockets = 16 nodes of 8 SMT8
/// cores (lscpu in the seed: node N = CPUs 64N..64N+63), from the catalogue.
/// A missing or unreadable catalogue entry fails the caller: a silent
/// stand-in would let tests and benchmarks pass on a different machine.
pub fn power8_lpar_1024() -> Topology {
    readers::catalogue::machine("power8-lpar-1024")
        .unwrap_or_else(|e| panic!("catalogue machine power8-lpar-1024: {e}"))
}

/// Seed 000's 4096-CPU single-socket POWER machine (1024 SMT4 cores, one
/// node), from the catalogue; fails rather than substituting a shape.
pub fn power_4096_1socket() -> Topology {
    readers::catalogue::machine("power-4096-1socket")
        .unwrap_or_else(|e| panic!("catalogue machine power-4096-1socket: {e}"))
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

/// The "one big socket" family: one node of `n / 8` POWER9-style big cores,
/// each two SMT4 thread groups (consecutive numbering) sharing an L2; an L3
/// for the socket. The L2 groups must be found by scanning the one node, so
/// scoped work per CPU grows with N here.
pub fn one_socket(n: u32) -> Topology {
    let mut b = TopologyBuilder::new(Arch::PowerPc64);
    b.source("one-socket big-core family");
    let mut all = CpuMask::new();
    for cpu in 0..n {
        all.set(cpu as usize);
        b.add_cpu(CpuSpec {
            id: cpu,
            hw_id: Some(cpu as u64),
            online: true,
            package: 0,
            big_core: Some(cpu / 8),
            core: cpu / 4,
            ..CpuSpec::default()
        });
    }
    for big in 0..n / 8 {
        let mut m = CpuMask::new();
        m.set_range((big * 8) as usize, (big * 8 + 8) as usize);
        b.add_cache(Cache {
            level: 2,
            kind: CacheKind::Unified,
            size_bytes: Some(512 << 10),
            line_bytes: Some(128),
            ways: None,
            cpus: m.into(),
        });
    }
    b.add_cache(Cache {
        level: 3,
        kind: CacheKind::Unified,
        size_bytes: Some(128 << 20),
        line_bytes: Some(128),
        ways: None,
        cpus: all.into(),
    });
    b.add_node(0, all, Some(1 << 30));
    b.build().unwrap()
}

/// The simulator's x86 16384-CPU machine: 8 sockets × 1024 cores × 2 threads,
/// threads numbered last (siblings 8192 apart), one node per socket.
pub fn x86_16384() -> Topology {
    let mut s = Shape::simple(Arch::X86_64, 8, 1024, 2);
    s.numbering = topology::Numbering::ThreadsLast;
    s.build().unwrap()
}
