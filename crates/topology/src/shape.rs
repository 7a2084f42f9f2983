//! Regular machines described by a few counts, for tests, the catalogue and the
//! simulator. Irregular machines come from the readers.

use alloc::string::String;
use alloc::vec::Vec;

use cpumask::{CompactMask, MAX_CPUS};

use crate::builder::{BuildError, CpuSpec, TopologyBuilder, MAX_DISTANCE_NODES};
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

    /// Builds the topology, with a per-core L1/L2 and per-package L3. A
    /// shape of more than [`MAX_CPUS`] CPUs is refused before anything is
    /// built, naming the first CPU that does not fit.
    pub fn build(&self) -> Result<Topology, BuildError> {
        let total = [
            self.packages,
            self.dies,
            self.clusters,
            self.cores,
            self.threads,
        ]
        .iter()
        .try_fold(1u64, |n, &k| n.checked_mul(k as u64));
        if total.is_none_or(|n| n > MAX_CPUS as u64) {
            return Err(BuildError::CpuOutOfRange(MAX_CPUS as u32));
        }
        let mut b = TopologyBuilder::new(self.arch.clone());
        b.source(String::from("shape"));
        let masks = self.add_cpus(&mut b);
        if self.nodes_per_package > 0 {
            self.add_nodes(&mut b, &masks.nodes);
        }
        add_caches(&mut b, &masks);
        b.build()
    }

    /// Every hardware thread as a CPU, numbered as `numbering` says; the CPU
    /// sets of the nodes, cores and packages they make.
    fn add_cpus(&self, b: &mut TopologyBuilder) -> Masks {
        let cores_per_pkg = self.dies * self.clusters * self.cores;
        let total_cores = self.packages * cores_per_pkg;
        let nodes_total = self.packages * self.nodes_per_package.max(1);
        let empty = |n: u32| (0..n).map(|_| Vec::new()).collect::<Vec<_>>();
        let mut masks = Masks {
            nodes: empty(nodes_total),
            cores: empty(total_cores),
            packages: empty(self.packages),
        };
        for pkg in 0..self.packages {
            for core_in_pkg in 0..cores_per_pkg {
                let global_core = pkg * cores_per_pkg + core_in_pkg;
                let node_in_pkg = if self.nodes_per_package <= 1 {
                    0
                } else {
                    core_in_pkg * self.nodes_per_package / cores_per_pkg
                };
                let node = pkg * self.nodes_per_package.max(1) + node_in_pkg;
                for t in 0..self.threads {
                    let cpu = match self.numbering {
                        Numbering::SiblingsAdjacent => global_core * self.threads + t,
                        Numbering::ThreadsLast => t * total_cores + global_core,
                    };
                    masks.nodes[node as usize].push(cpu as usize);
                    masks.cores[global_core as usize].push(cpu as usize);
                    masks.packages[pkg as usize].push(cpu as usize);
                    b.add_cpu(CpuSpec {
                        id: cpu,
                        hw_id: Some(cpu as u64),
                        online: true,
                        package: pkg,
                        die: (self.dies > 1).then_some(core_in_pkg / (self.clusters * self.cores)),
                        cluster: (self.clusters > 1).then_some(core_in_pkg / self.cores),
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
        masks
    }

    /// The nodes, 1 GiB each, and their distances: 10 to itself,
    /// `distances.0` within a package, `distances.1` across packages; none
    /// beyond [`MAX_DISTANCE_NODES`] nodes, where the model keeps no matrix.
    fn add_nodes(&self, b: &mut TopologyBuilder, nodes: &[Vec<usize>]) {
        let npp = self.nodes_per_package.max(1);
        for (i, m) in nodes.iter().enumerate() {
            b.add_node(
                i as u32,
                CompactMask::from_iter(m.iter().copied()),
                Some(1 << 30),
            );
        }
        let n = nodes.len();
        if n > MAX_DISTANCE_NODES {
            return;
        }
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
}

/// The CPUs of each set a shape's threads make (lists: a full mask per
/// core would be 2 KiB each).
struct Masks {
    nodes: Vec<Vec<usize>>,
    cores: Vec<Vec<usize>>,
    packages: Vec<Vec<usize>>,
}

/// L1d, L1i and L2 per core, L3 per package.
fn add_caches(b: &mut TopologyBuilder, masks: &Masks) {
    let per_core = [
        (1u8, CacheKind::Data, 32u64 << 10),
        (1, CacheKind::Instruction, 32 << 10),
        (2, CacheKind::Unified, 1 << 20),
    ];
    let per_package = [(3u8, CacheKind::Unified, 32u64 << 20)];
    for (sets, kinds) in [
        (&masks.cores, &per_core[..]),
        (&masks.packages, &per_package[..]),
    ] {
        for m in sets {
            let m = CompactMask::from_iter(m.iter().copied());
            for &(level, kind, size) in kinds {
                b.add_cache(Cache {
                    level,
                    kind,
                    size_bytes: Some(size),
                    line_bytes: Some(64),
                    ways: None,
                    cpus: m.clone(),
                });
            }
        }
    }
}
