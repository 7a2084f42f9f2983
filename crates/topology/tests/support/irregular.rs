//! Irregular machines for the fuzzers of the sysfs reader
//! (crates/readers/tests/sysfs_fuzz.rs) and of the domain builder
//! (crates/domains/tests/fuzz.rs): packages, dies, clusters, cores and
//! threads; CPU numbers in any order and with holes; any CPU offline, CPU 0
//! included; sparse and interleaved node ids, memory-less and memory-only
//! nodes; asymmetric SLITs with many distinct distances.
//!
//! The generator keeps its own description of every set (which CPUs share a
//! core, a cache, a node) and computes it from the positions it generated,
//! never through the reader's or the builder's grouping code, so the tests
//! compare what they read back with this description.
#![allow(dead_code)]

use cpumask::CpuMask;
use proptest::prelude::*;
use topology::{Arch, Cache, CacheKind, CpuSpec, Topology, TopologyBuilder};

/// Levels of a CPU's position, outermost first.
pub const PACKAGE: usize = 0;
pub const DIE: usize = 1;
pub const CLUSTER: usize = 2;
pub const CORE: usize = 3;
pub const THREAD: usize = 4;

/// One generated machine.
#[derive(Debug, Clone)]
pub struct Irregular {
    /// Packages, dies per package, clusters per die, cores per cluster,
    /// threads per core.
    pub shape: [usize; 5],
    /// Whether the machine reports dies / clusters (`die_id`, `cluster_id`).
    pub has_dies: bool,
    pub has_clusters: bool,
    /// The CPU number at each position (positions in shape order, threads
    /// fastest): a permutation, possibly with holes.
    pub ids: Vec<u32>,
    /// `nr_cpu_ids`: possible CPUs are 0..nr_possible.
    pub nr_possible: u32,
    /// Offline CPUs (by number); CPU 0 may be one of them.
    pub offline: CpuMask,
    /// Node ids, increasing (sparse); indices below are into this list.
    pub node_ids: Vec<u32>,
    /// Whether each die (rather than each package) is a node.
    pub node_per_die: bool,
    /// Node index of each node unit (package or die, in shape order); the
    /// other nodes are memory-only.
    pub node_of_unit: Vec<usize>,
    /// Memory of each node in kB (0: a memory-less node).
    pub memory_kb: Vec<u64>,
    /// SLIT distances, row-major in `node_ids` order; not always symmetric.
    pub dist: Vec<u32>,
}

/// splitmix64: the generator's details come from one seed, so a failing
/// case is reproduced from the seed proptest prints.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn chance(&mut self, one_in: u64) -> bool {
        self.below(one_in) == 0
    }

    /// 0..n in a random order.
    fn permutation(&mut self, n: usize) -> Vec<usize> {
        let mut v: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            v.swap(i, self.below(i as u64 + 1) as usize);
        }
        v
    }
}

/// Any machine of up to 3 packages × 2 dies × 2 clusters × 3 cores × 2
/// threads (72 CPUs), the rest drawn from `seed`.
pub fn irregular() -> impl Strategy<Value = Irregular> {
    (
        (1usize..4, 1usize..3, 1usize..3, 1usize..4, 1usize..3),
        (any::<bool>(), any::<bool>(), any::<bool>()),
        0usize..3,
        any::<u64>(),
    )
        .prop_map(|(shape, flags, extra_nodes, seed)| {
            Irregular::new(shape.into(), flags, extra_nodes, seed)
        })
}

impl Irregular {
    fn new(
        shape: [usize; 5],
        (has_dies, has_clusters, node_per_die): (bool, bool, bool),
        extra_nodes: usize,
        seed: u64,
    ) -> Irregular {
        let mut rng = Rng(seed);
        let n = shape.iter().product::<usize>();
        let ids = numbering(&mut rng, &shape);
        let nr_possible = ids.iter().max().unwrap() + 1 + rng.below(3) as u32;
        let mut offline = CpuMask::new();
        for &id in &ids {
            let one_in = if id == 0 { 3 } else { 6 };
            if rng.chance(one_in) {
                offline.set(id as usize);
            }
        }
        if offline.weight() == n {
            offline.clear(ids[rng.below(n as u64) as usize] as usize);
        }
        let units = shape[PACKAGE] * if node_per_die { shape[DIE] } else { 1 };
        let nodes = units + extra_nodes;
        // Sparse ids: `nodes` distinct values below 2 * nodes + 2.
        let mut pool = rng.permutation(2 * nodes + 2);
        pool.truncate(nodes);
        pool.sort_unstable();
        let node_ids: Vec<u32> = pool.iter().map(|&v| v as u32).collect();
        // Interleaved: units take node indices in a random order.
        let order = rng.permutation(nodes);
        let node_of_unit = order[..units].to_vec();
        let memory_kb = (0..nodes)
            .map(|i| {
                let cpu_node = node_of_unit.contains(&i);
                if cpu_node && rng.chance(4) {
                    0
                } else {
                    (1 + rng.below(4)) << 20
                }
            })
            .collect();
        let symmetric = rng.chance(2);
        let mut dist = vec![10; nodes * nodes];
        for i in 0..nodes {
            for j in i + 1..nodes {
                let there = 11 + rng.below(30) as u32;
                let back = if symmetric {
                    there
                } else {
                    11 + rng.below(30) as u32
                };
                dist[i * nodes + j] = there;
                dist[j * nodes + i] = back;
            }
        }
        Irregular {
            shape,
            has_dies,
            has_clusters,
            ids,
            nr_possible,
            offline,
            node_ids,
            node_per_die,
            node_of_unit,
            memory_kb,
            dist,
        }
    }

    /// Number of positions (present CPUs).
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// The position's index at each level, outermost first.
    pub fn place(&self, pos: usize) -> [usize; 5] {
        let mut out = [0; 5];
        let mut rest = pos;
        for level in (0..5).rev() {
            out[level] = rest % self.shape[level];
            rest /= self.shape[level];
        }
        out
    }

    /// Whether positions `a` and `b` share their group at `level` (and every
    /// level above it).
    pub fn same(&self, a: usize, b: usize, level: usize) -> bool {
        self.place(a)[..=level] == self.place(b)[..=level]
    }

    /// Every present CPU.
    pub fn present(&self) -> CpuMask {
        self.ids.iter().map(|&i| i as usize).collect()
    }

    /// Every online CPU.
    pub fn online(&self) -> CpuMask {
        self.present().and_not(&self.offline)
    }

    /// The CPUs (online only, or all present) sharing `pos`'s group at `level`.
    pub fn group(&self, pos: usize, level: usize, online_only: bool) -> CpuMask {
        let mut m: CpuMask = (0..self.len())
            .filter(|&q| self.same(pos, q, level))
            .map(|q| self.ids[q] as usize)
            .collect();
        if online_only {
            m = m.and_not(&self.offline);
        }
        m
    }

    /// The distinct non-empty groups at `level`, as online CPU sets, sorted.
    pub fn groups(&self, level: usize) -> Vec<CpuMask> {
        let mut v: Vec<CpuMask> = (0..self.len())
            .map(|p| self.group(p, level, true))
            .filter(|m| !m.is_empty())
            .collect();
        v.sort_by_key(|m| m.first());
        v.dedup();
        v
    }

    /// The node unit (package or die index) of a position.
    pub fn unit(&self, pos: usize) -> usize {
        let [p, d, ..] = self.place(pos);
        if self.node_per_die {
            p * self.shape[DIE] + d
        } else {
            p
        }
    }

    /// Node index (into `node_ids`) of a position.
    pub fn node_of(&self, pos: usize) -> usize {
        self.node_of_unit[self.unit(pos)]
    }

    /// CPUs of node index `i` (online only, or all present).
    pub fn node_cpus(&self, i: usize, online_only: bool) -> CpuMask {
        let mut m: CpuMask = (0..self.len())
            .filter(|&p| self.node_of(p) == i)
            .map(|p| self.ids[p] as usize)
            .collect();
        if online_only {
            m = m.and_not(&self.offline);
        }
        m
    }

    /// SLIT distance from node index `a` to `b`.
    pub fn distance(&self, a: usize, b: usize) -> u32 {
        self.dist[a * self.node_ids.len() + b]
    }

    /// Whether the SLIT is symmetric.
    pub fn symmetric(&self) -> bool {
        let n = self.node_ids.len();
        (0..n).all(|a| (0..n).all(|b| self.distance(a, b) == self.distance(b, a)))
    }

    /// The core id the kernel would print: unique within the package.
    pub fn core_id(&self, pos: usize) -> u32 {
        let [_, d, k, c, _] = self.place(pos);
        (((d * self.shape[CLUSTER]) + k) * self.shape[CORE] + c) as u32
    }

    /// A machine-wide cluster id (as arm64 prints `cluster_id`).
    pub fn cluster_id(&self, pos: usize) -> u32 {
        let [p, d, k, ..] = self.place(pos);
        ((p * self.shape[DIE] + d) * self.shape[CLUSTER] + k) as u32
    }

    /// The caches of one position, innermost first: (sysfs index, level,
    /// kind, size in kB, sharing level). L2 is per cluster where clusters
    /// are reported, else per core; L3 is per die.
    pub fn cache_layout(&self) -> [(usize, u8, CacheKind, u64, usize); 4] {
        let l2 = if self.has_clusters { CLUSTER } else { CORE };
        [
            (0, 1, CacheKind::Data, 32, CORE),
            (1, 1, CacheKind::Instruction, 64, CORE),
            (2, 2, CacheKind::Unified, 1024, l2),
            (3, 3, CacheKind::Unified, 16384, DIE),
        ]
    }

    /// Every cache instance: (level, kind, size in bytes, CPUs), with
    /// online CPUs only (as the kernel's `shared_cpu_list`) or all present.
    pub fn caches(&self, online_only: bool) -> Vec<(u8, CacheKind, u64, CpuMask)> {
        let mut v = Vec::new();
        for (_, level, kind, kb, at) in self.cache_layout() {
            for pos in 0..self.len() {
                let cpus = self.group(pos, at, online_only);
                let c = (level, kind, kb * 1024, cpus);
                if !cpus.is_empty() && !v.contains(&c) {
                    v.push(c);
                }
            }
        }
        v.sort_by_key(|c| (c.0, c.1, c.3.first()));
        v
    }

    /// The same machine through [`TopologyBuilder`], as a firmware reader
    /// would describe it (every present CPU placed, offline ones marked).
    pub fn topology(&self, arch: Arch) -> Topology {
        let mut b = TopologyBuilder::new(arch);
        for pos in 0..self.len() {
            let [p, d, ..] = self.place(pos);
            b.add_cpu(CpuSpec {
                id: self.ids[pos],
                hw_id: Some(pos as u64 * 2),
                online: !self.offline.contains(self.ids[pos] as usize),
                package: p as u32,
                die: self.has_dies.then_some(d as u32),
                cluster: self.has_clusters.then(|| self.cluster_id(pos)),
                big_core: None,
                core: self.core_id(pos),
                node: None,
                kind: None,
                capacity: None,
                os_ids: None,
            });
        }
        for (i, &id) in self.node_ids.iter().enumerate() {
            b.add_node(id, self.node_cpus(i, false), Some(self.memory_kb[i] * 1024));
        }
        b.distances(self.dist.clone());
        b.possible(CpuMask::first_n(self.nr_possible as usize));
        b.present(self.present());
        for (level, kind, size, cpus) in self.caches(false) {
            b.add_cache(Cache {
                level,
                kind,
                size_bytes: Some(size),
                line_bytes: Some(64),
                ways: Some(8),
                cpus: cpus.into(),
            });
        }
        b.finish()
            .unwrap_or_else(|e| panic!("generated machine refused: {e}\n{self:?}"))
    }
}

/// CPU numbers for the positions: in order, threads last (Linux x86), or
/// shuffled; then, half the time, with holes between them.
fn numbering(rng: &mut Rng, shape: &[usize; 5]) -> Vec<u32> {
    let n = shape.iter().product::<usize>();
    let threads = shape[THREAD];
    let rank: Vec<usize> = match rng.below(3) {
        0 => (0..n).collect(),
        1 => (0..n)
            .map(|p| (p % threads) * (n / threads) + p / threads)
            .collect(),
        _ => rng.permutation(n),
    };
    let holes = rng.chance(2);
    let mut at_rank = vec![0u32; n];
    let mut next = 0u32;
    for slot in at_rank.iter_mut() {
        if holes {
            next += [0, 0, 1, 3][rng.below(4) as usize];
        }
        *slot = next;
        next += 1;
    }
    rank.iter().map(|&r| at_rank[r]).collect()
}
