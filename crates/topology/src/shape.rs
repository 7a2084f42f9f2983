//! Regular machines described by a few counts, for tests, the catalogue and the
//! simulator. Irregular machines come from the readers.

use alloc::string::String;
use alloc::vec::Vec;

use cpumask::CpuMask;

use crate::builder::{BuildError, CpuSpec, TopologyBuilder};
use crate::model::{Arch, Cache, CacheKind, Topology};

/// How logical CPU numbers are assigned to hardware threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Numbering {
    /// Siblings are adjacent: cpu = ((package·cores + core)·threads + thread).
    /// POWER and arm64 number this way.
    SiblingsAdjacent,
    /// All first threads, then all second threads...: cpu = thread·(all cores) + core.
    /// x86 Linux enumerates MADT entries this way on most servers.
    ThreadsLast,
}

/// A regular machine: every package has the same dies, clusters, cores, threads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    /// Instruction-set family.
    pub arch: Arch,
    /// Packages (sockets).
    pub packages: u32,
    /// Dies per package (1 = no die level).
    pub dies: u32,
    /// Clusters per die (1 = no cluster level).
    pub clusters: u32,
    /// Cores per cluster.
    pub cores: u32,
    /// Threads per core.
    pub threads: u32,
    /// NUMA nodes per package (0 = one node for the whole machine, no NUMA split).
    pub nodes_per_package: u32,
    /// Logical numbering.
    pub numbering: Numbering,
    /// Distance between nodes of the same package / of different packages.
    pub distances: (u32, u32),
}

impl Shape {
    /// `packages × cores × threads`, one node per package, siblings adjacent.
    pub fn simple(arch: Arch, packages: u32, cores: u32, threads: u32) -> Shape {
        Shape {
            arch,
            packages,
            dies: 1,
            clusters: 1,
            cores,
            threads,
            nodes_per_package: 1,
            numbering: Numbering::SiblingsAdjacent,
            distances: (20, 20),
        }
    }

    /// Total logical CPUs.
    pub fn cpus(&self) -> u32 {
        self.packages * self.dies * self.clusters * self.cores * self.threads
    }

    /// Builds the topology, with a per-core L1/L2 and per-package L3.
    pub fn build(&self) -> Result<Topology, BuildError> {
        let cores_per_pkg = self.dies * self.clusters * self.cores;
        let total_cores = self.packages * cores_per_pkg;
        let mut b = TopologyBuilder::new(self.arch.clone());
        b.source(String::from("shape"));
        let nodes_total = self.packages * self.nodes_per_package.max(1);
        let mut node_masks: Vec<CpuMask> = (0..nodes_total).map(|_| CpuMask::new()).collect();
        let mut core_masks: Vec<CpuMask> = (0..total_cores).map(|_| CpuMask::new()).collect();
        let mut pkg_masks: Vec<CpuMask> = (0..self.packages).map(|_| CpuMask::new()).collect();
        for pkg in 0..self.packages {
            for core_in_pkg in 0..cores_per_pkg {
                let global_core = pkg * cores_per_pkg + core_in_pkg;
                let die = core_in_pkg / (self.clusters * self.cores);
                let cluster = core_in_pkg / self.cores;
                for t in 0..self.threads {
                    let cpu = match self.numbering {
                        Numbering::SiblingsAdjacent => global_core * self.threads + t,
                        Numbering::ThreadsLast => t * total_cores + global_core,
                    };
                    let node_in_pkg = if self.nodes_per_package <= 1 {
                        0
                    } else {
                        core_in_pkg * self.nodes_per_package / cores_per_pkg
                    };
                    let node = pkg * self.nodes_per_package.max(1) + node_in_pkg;
                    node_masks[node as usize].set(cpu as usize);
                    core_masks[global_core as usize].set(cpu as usize);
                    pkg_masks[pkg as usize].set(cpu as usize);
                    b.add_cpu(CpuSpec {
                        id: cpu,
                        hw_id: Some(cpu as u64),
                        online: true,
                        package: pkg,
                        die: (self.dies > 1).then_some(die),
                        cluster: (self.clusters > 1).then_some(cluster),
                        big_core: None,
                        core: core_in_pkg,
                        node: None,
                        kind: None,
                        capacity: None,
                        os_ids: None,
                    });
                }
            }
        }
        if self.nodes_per_package > 0 {
            let npp = self.nodes_per_package.max(1);
            for (i, m) in node_masks.iter().enumerate() {
                b.add_node(i as u32, *m, Some(1 << 30));
            }
            let n = node_masks.len();
            let mut d = Vec::with_capacity(n * n);
            for i in 0..n {
                for j in 0..n {
                    d.push(if i == j {
                        10
                    } else if i as u32 / npp == j as u32 / npp {
                        self.distances.0
                    } else {
                        self.distances.1
                    });
                }
            }
            b.distances(d);
        }
        for m in &core_masks {
            for (level, kind, size) in [
                (1u8, CacheKind::Data, 32u64 << 10),
                (1, CacheKind::Instruction, 32 << 10),
                (2, CacheKind::Unified, 1 << 20),
            ] {
                b.add_cache(Cache {
                    level,
                    kind,
                    size_bytes: Some(size),
                    line_bytes: Some(64),
                    ways: None,
                    cpus: *m,
                });
            }
        }
        for m in &pkg_masks {
            b.add_cache(Cache {
                level: 3,
                kind: CacheKind::Unified,
                size_bytes: Some(32 << 20),
                line_bytes: Some(64),
                ways: None,
                cpus: *m,
            });
        }
        b.build()
    }
}
