//! A compact in-memory flattened device tree describing a machine's CPUs the
//! way POWER firmware does, queried by property name like Linux's OF helpers.
//!
//! Why our own tree instead of generating a real FDT blob and parsing it with
//! the `fdt` crate: the engine needs mutable-free, allocation-free lookups from
//! a `no_std` context, and what matters for seed 000 is the *shape* of the work
//! (walk `/cpus` children, compare property names, decode big-endian cells),
//! which this tree reproduces with honest per-call cost: every lookup compares
//! names over the node's property list and every CPU-node search walks the
//! `/cpus` children, exactly like `of_get_property` and `of_get_cpu_node`.
//!
//! Layout, one node per SMT core (POWER's convention):
//!
//! ```text
//! /cpus
//!     PowerPC,manycore@<reg>        device_type = "cpu"
//!         reg                       = <hard id of thread 0>
//!         ibm,ppc-interrupt-server#s = <hard ids of every thread>
//!         ibm,chip-id               = <package>
//!         ibm,associativity         = <4 node package coregroup core>
//!         l2-cache                  = <phandle>            (if any cache of level >= 2)
//!         ibm,thread-groups         = <2 1 n ids...>       (POWER9/10 big cores only)
//!     l2-cache@<phandle>            device_type = "cache", cache-level = <2>,
//!                                   phandle, next-level-cache = <phandle> (if any)
//! ```

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::ops::ControlFlow;

use topology::{CacheKind, LevelKind, Topology};

use crate::counts::LevelWork;
use crate::error::HotplugError;
use crate::vocab::MaskLevel;

/// Index of a node inside a [`FirmwareTree`].
pub type NodeId = u32;

/// `ibm,associativity` cell holding the NUMA node (our firmware's "reference point").
const ASSOC_NODE: usize = 1;
/// `ibm,associativity` cell holding the coregroup (`u32::MAX` = no coregroup support).
const ASSOC_COREGROUP: usize = 3;
/// Marker for "no such id" in a cell.
pub const NO_ID: u32 = u32::MAX;

/// Key namespaces so that ids coming from different properties never compare equal.
const TAG_CPU_NODE: u64 = 1 << 32;
const TAG_CACHE: u64 = 2 << 32;
const TAG_THREAD_GROUP: u64 = 3 << 32;
const TAG_COREGROUP: u64 = 4 << 32;
const TAG_CHIP: u64 = 5 << 32;
const TAG_NODE: u64 = 6 << 32;

#[derive(Debug, Clone)]
struct Property {
    name: &'static str,
    /// Big-endian cells or NUL-terminated strings, as in a real FDT.
    value: Vec<u8>,
}

#[derive(Debug, Clone)]
struct Node {
    name: String,
    children: Vec<NodeId>,
    properties: Vec<Property>,
}

/// The firmware's view of a machine: a device tree with per-core CPU nodes and
/// cache nodes, plus the logical → hardware id table (`paca` on POWER).
#[derive(Debug, Clone)]
pub struct FirmwareTree {
    nodes: Vec<Node>,
    cpus_node: NodeId,
    /// Logical CPU → hard id (`get_hard_smp_processor_id`); `NO_ID` if unknown.
    hard_id: Vec<u32>,
    /// (hard id, logical CPU), sorted by hard id, for mapping thread lists back.
    logical_of_hard: Vec<(u32, u32)>,
    /// phandle → node (Linux keeps a phandle cache, so resolution is O(1)).
    phandles: Vec<NodeId>,
}

fn cells(values: &[u32]) -> Vec<u8> {
    let mut v = Vec::with_capacity(values.len() * 4);
    for x in values {
        v.extend_from_slice(&x.to_be_bytes());
    }
    v
}

fn string(s: &str) -> Vec<u8> {
    let mut v = Vec::with_capacity(s.len() + 1);
    v.extend_from_slice(s.as_bytes());
    v.push(0);
    v
}

fn cell_at(value: &[u8], index: usize) -> Option<u32> {
    let bytes = value.get(index * 4..index * 4 + 4)?;
    Some(u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
}

fn prop(name: &'static str, value: Vec<u8>) -> Property {
    Property { name, value }
}

/// Logical CPU → hard id for every present CPU, and the reverse table sorted
/// by hard id. Hard ids are the firmware ids when they are unique and fit a
/// cell, else the logical numbers (a simulator's machine may have no firmware
/// ids).
fn hard_ids(topology: &Topology, present: &[&topology::Cpu]) -> (Vec<u32>, Vec<(u32, u32)>) {
    let hw: Option<Vec<u32>> = present
        .iter()
        .map(|c| c.hw_id.filter(|&h| h < NO_ID as u64).map(|h| h as u32))
        .collect();
    let hw = hw.filter(|hw| {
        let mut sorted = hw.clone();
        sorted.sort_unstable();
        sorted.windows(2).all(|w| w[0] != w[1])
    });
    let nr = topology.cpus().last().map_or(0, |c| c.id as usize + 1);
    let mut hard_id = vec![NO_ID; nr];
    for (i, c) in present.iter().enumerate() {
        hard_id[c.id as usize] = hw.as_ref().map_or(c.id, |hw| hw[i]);
    }
    let mut logical_of_hard: Vec<(u32, u32)> = present
        .iter()
        .map(|c| (hard_id[c.id as usize], c.id))
        .collect();
    logical_of_hard.sort_unstable();
    (hard_id, logical_of_hard)
}

/// Each CPU's chain of caches of level >= 2, innermost first, the first
/// instance listed at each level; built in one pass over the caches.
fn cache_chains(topology: &Topology, cache_levels: &[usize], nr: usize) -> Vec<Vec<usize>> {
    let caches = topology.caches();
    let mut chains: Vec<Vec<usize>> = vec![Vec::new(); nr];
    for &ci in cache_levels {
        for cpu in caches[ci].cpus.iter().filter(|&c| c < nr) {
            let chain = &mut chains[cpu];
            if !chain.iter().any(|&x| caches[x].level == caches[ci].level) {
                chain.push(ci);
            }
        }
    }
    for chain in &mut chains {
        chain.sort_by_key(|&ci| caches[ci].level);
    }
    chains
}

/// One firmware node describes a whole SMT core, so every thread must agree
/// with the first (`head`) on what the node says: package, node, cluster,
/// big core and caches.
fn check_siblings(
    topology: &Topology,
    threads: &[usize],
    chains: &[Vec<usize>],
) -> Result<(), HotplugError> {
    let head = topology
        .cpu(threads[0])
        .expect("core member has a CPU entry");
    for &t in &threads[1..] {
        let c = topology.cpu(t).expect("core member has a CPU entry");
        let same = |kind: LevelKind| c.group(kind) == head.group(kind);
        let fault = if !same(LevelKind::Package) {
            Some((MaskLevel::Package, "SMT siblings in different packages"))
        } else if c.node != head.node {
            Some((MaskLevel::Node, "SMT siblings in different NUMA nodes"))
        } else if !same(LevelKind::Cluster) {
            Some((MaskLevel::Coregroup, "SMT siblings in different clusters"))
        } else if !same(LevelKind::BigCore) {
            Some((MaskLevel::L2, "SMT siblings in different big cores"))
        } else if chains[t] != chains[threads[0]] {
            Some((MaskLevel::L2, "SMT siblings see different caches"))
        } else {
            None
        };
        if let Some((level, reason)) = fault {
            return Err(HotplugError::Unsupported {
                cpu: t,
                level,
                reason,
            });
        }
    }
    Ok(())
}

impl FirmwareTree {
    /// Builds the tree for every present CPU of `topology`, in Linux's
    /// vocabulary: hard ids, then the root and `/cpus`, one node per cache
    /// instance of level >= 2, one CPU node per SMT core, and finally the
    /// `next-level-cache` links and the cache nodes' place under `/cpus`.
    ///
    /// Fails when the machine cannot be described with one node per SMT core:
    /// the threads of a core disagree on their package, node, coregroup or
    /// caches (the error names the CPU and level).
    pub fn from_topology(topology: &Topology) -> Result<FirmwareTree, HotplugError> {
        let present: Vec<&topology::Cpu> = topology
            .cpus()
            .iter()
            .filter(|c| topology.present().contains(c.id as usize))
            .collect();
        let (hard_id, logical_of_hard) = hard_ids(topology, &present);
        let nr = hard_id.len();
        let mut tree = FirmwareTree::skeleton(hard_id, logical_of_hard);

        // Cache instances of level >= 2 (data or unified) get a node each.
        let cache_levels: Vec<usize> = topology
            .caches()
            .iter()
            .enumerate()
            .filter(|(_, c)| c.level >= 2 && c.kind != CacheKind::Instruction)
            .map(|(i, _)| i)
            .collect();
        let cache_phandle = tree.add_cache_nodes(topology, &cache_levels);
        let chains = cache_chains(topology, &cache_levels, nr);

        // CPU nodes, one per SMT core, in order of the core's first thread.
        let mut next_level: BTreeMap<usize, usize> = BTreeMap::new();
        let cores = topology
            .level(LevelKind::Core)
            .map_or(&[][..], |l| &l.groups[..]);
        for (core_index, group) in cores.iter().enumerate() {
            let present = topology.present();
            let threads: Vec<usize> = group.cpus.iter().filter(|&c| present.contains(c)).collect();
            if threads.is_empty() {
                continue;
            }
            check_siblings(topology, &threads, &chains)?;
            let chain = &chains[threads[0]];
            // Link each cache to the next one out, as firmware does.
            for pair in chain.windows(2) {
                next_level.entry(pair[0]).or_insert(pair[1]);
            }
            let l2 = chain.first().map(|ci| cache_phandle[ci]);
            tree.add_cpu_node(topology, core_index as u32, &threads, l2);
        }
        tree.link_caches(&next_level, &cache_phandle);
        Ok(tree)
    }

    /// The root and an empty `/cpus` (node 1).
    fn skeleton(hard_id: Vec<u32>, logical_of_hard: Vec<(u32, u32)>) -> FirmwareTree {
        let root = Node {
            name: String::from("/"),
            children: vec![1],
            properties: vec![prop("compatible", string("manycore,firmware"))],
        };
        let cpus = Node {
            name: String::from("cpus"),
            children: Vec::new(),
            properties: vec![
                prop("#address-cells", cells(&[1])),
                prop("#size-cells", cells(&[0])),
            ],
        };
        FirmwareTree {
            nodes: vec![root, cpus],
            cpus_node: 1,
            hard_id,
            logical_of_hard,
            phandles: vec![0], // phandle 0 is invalid
        }
    }

    /// One node per cache instance in `cache_levels` (indexes into the
    /// topology's caches); returns each one's phandle (its position + 1).
    fn add_cache_nodes(
        &mut self,
        topology: &Topology,
        cache_levels: &[usize],
    ) -> BTreeMap<usize, u32> {
        let mut cache_phandle = BTreeMap::new();
        for &ci in cache_levels {
            let phandle = self.phandles.len() as u32;
            cache_phandle.insert(ci, phandle);
            let cache = &topology.caches()[ci];
            let size = cache.size_bytes.unwrap_or(0).min(u32::MAX as u64) as u32;
            let id = self.nodes.len() as NodeId;
            self.nodes.push(Node {
                name: format!("l{}-cache@{:x}", cache.level, phandle),
                children: Vec::new(),
                properties: vec![
                    prop("device_type", string("cache")),
                    prop("cache-unified", Vec::new()),
                    prop("cache-level", cells(&[cache.level as u32])),
                    prop("d-cache-size", cells(&[size])),
                    prop("phandle", cells(&[phandle])),
                ],
            });
            self.phandles.push(id);
        }
        cache_phandle
    }

    /// The CPU node of one SMT core (`threads`, present, first thread first)
    /// under `/cpus`; `l2` is the phandle of its innermost cache of level >= 2.
    fn add_cpu_node(
        &mut self,
        topology: &Topology,
        core_index: u32,
        threads: &[usize],
        l2: Option<u32>,
    ) {
        let head = topology
            .cpu(threads[0])
            .expect("core member has a CPU entry");
        let hard: Vec<u32> = threads.iter().map(|&t| self.hard_id[t]).collect();
        let node_cell = head.node.map_or(NO_ID, |n| topology.nodes()[n as usize].id);
        let package = head.group(LevelKind::Package).unwrap_or(NO_ID);
        let coregroup = head.group(LevelKind::Cluster).unwrap_or(NO_ID);
        let mut properties = vec![
            prop("device_type", string("cpu")),
            prop("reg", cells(&[hard[0]])),
            prop("ibm,ppc-interrupt-server#s", cells(&hard)),
            prop("ibm,chip-id", cells(&[package])),
            prop(
                "ibm,associativity",
                cells(&[4, node_cell, package, coregroup, core_index]),
            ),
        ];
        if let Some(phandle) = l2 {
            properties.push(prop("l2-cache", cells(&[phandle])));
        }
        let big = topology
            .level(LevelKind::BigCore)
            .zip(head.group(LevelKind::BigCore));
        if let Some((level, big)) = big {
            let members: Vec<u32> = level.groups[big as usize]
                .cpus
                .iter()
                .filter(|&c| topology.present().contains(c))
                .map(|c| self.hard_id[c])
                .collect();
            // Property type 2 = "threads sharing the L2", one group.
            let mut v = vec![2, 1, members.len() as u32];
            v.extend_from_slice(&members);
            properties.push(prop("ibm,thread-groups", cells(&v)));
        }
        let id = self.nodes.len() as NodeId;
        self.nodes.push(Node {
            name: format!("PowerPC,manycore@{:x}", hard[0]),
            children: Vec::new(),
            properties,
        });
        self.nodes[1].children.push(id);
    }

    /// `next-level-cache` from each cache to the next one out, then the cache
    /// nodes under `/cpus` after the CPU nodes, as on PowerVM.
    fn link_caches(&mut self, next_level: &BTreeMap<usize, usize>, phandle: &BTreeMap<usize, u32>) {
        for (inner, outer) in next_level {
            let node = self.phandles[phandle[inner] as usize] as usize;
            self.nodes[node]
                .properties
                .push(prop("next-level-cache", cells(&[phandle[outer]])));
        }
        for p in 1..self.phandles.len() {
            let id = self.phandles[p];
            self.nodes[1].children.push(id);
        }
    }

    /// Number of nodes in the tree.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// The node's name (`PowerPC,manycore@8`, `l2-cache@3`...).
    pub fn node_name(&self, node: NodeId) -> &str {
        &self.nodes[node as usize].name
    }

    /// The hard (firmware) id of a logical CPU, if it is present.
    pub fn hard_id(&self, cpu: usize) -> Option<u32> {
        self.hard_id.get(cpu).copied().filter(|&h| h != NO_ID)
    }

    /// `of_get_property`: the raw value of property `name` of `node`, found by
    /// comparing names along the node's property list.
    pub fn get_property(&self, node: NodeId, name: &str, work: &mut LevelWork) -> Option<&[u8]> {
        work.property_lookups += 1;
        self.nodes[node as usize]
            .properties
            .iter()
            .find(|p| p.name == name)
            .map(|p| p.value.as_slice())
    }

    /// Cell `index` of property `name` (`of_property_read_u32_index`).
    pub fn read_u32(
        &self,
        node: NodeId,
        name: &str,
        index: usize,
        work: &mut LevelWork,
    ) -> Option<u32> {
        cell_at(self.get_property(node, name, work)?, index)
    }

    /// The walk `of_get_cpu_node` makes: every child of `/cpus` is visited
    /// and its `device_type` looked up; a CPU node's
    /// `ibm,ppc-interrupt-server#s` is read too, and `each` is given the
    /// node, each hard id it lists and the work counted so far. The walk
    /// stops at the first `Break`, whose value it returns.
    fn walk_cpu_nodes<B>(
        &self,
        work: &mut LevelWork,
        mut each: impl FnMut(NodeId, u32, &LevelWork) -> ControlFlow<B>,
    ) -> Option<B> {
        for &child in &self.nodes[self.cpus_node as usize].children {
            work.fdt_nodes_visited += 1;
            if self.get_property(child, "device_type", work) != Some(b"cpu\0") {
                continue;
            }
            let Some(servers) = self.get_property(child, "ibm,ppc-interrupt-server#s", work) else {
                continue;
            };
            for b in servers.chunks_exact(4) {
                let hard = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
                if let ControlFlow::Break(found) = each(child, hard, work) {
                    return Some(found);
                }
            }
        }
        None
    }

    /// `of_get_cpu_node`: walks the children of `/cpus` until a node of
    /// `device_type = "cpu"` lists the CPU's hard id in its
    /// `ibm,ppc-interrupt-server#s`. Cost grows with the number of cores —
    /// the walk that made pre-5.10 powerpc bring-up quadratic per CPU.
    pub fn of_get_cpu_node(&self, cpu: usize, work: &mut LevelWork) -> Option<NodeId> {
        let hard = self.hard_id(cpu)?;
        self.walk_cpu_nodes(work, |node, id, _| {
            if id == hard {
                ControlFlow::Break(node)
            } else {
                ControlFlow::Continue(())
            }
        })
    }

    /// One pass over `/cpus` mapping every logical CPU to its node, like the
    /// `cpu_dev->of_node` pointers Linux sets once at `topology_init`; lets
    /// later lookups skip the walk. Returns `NO_ID` for CPUs without a node;
    /// a CPU listed by two nodes gets the last.
    pub fn index_cpu_nodes(&self, work: &mut LevelWork) -> Vec<NodeId> {
        let mut of_cpu = vec![NO_ID; self.hard_id.len()];
        self.walk_cpu_nodes::<()>(work, |node, hard, _| {
            if let Some(cpu) = self.logical_of(hard) {
                of_cpu[cpu] = node;
            }
            ControlFlow::Continue(())
        });
        of_cpu
    }

    /// What [`FirmwareTree::of_get_cpu_node`] costs for each logical CPU,
    /// found in one pass over `/cpus` instead of one walk per CPU: the walk
    /// stops at the first node listing the CPU's hard id, so its cost is the
    /// running count up to that node (the whole walk for a CPU no node
    /// lists, nothing for a CPU without a hard id). Prices the naive
    /// algorithm without running it.
    pub fn cpu_node_walks(&self) -> Vec<LevelWork> {
        let mut walked = LevelWork::default();
        let mut found: Vec<Option<LevelWork>> = vec![None; self.hard_id.len()];
        self.walk_cpu_nodes::<()>(&mut walked, |_, hard, at| {
            if let Some(cpu) = self.logical_of(hard) {
                found[cpu].get_or_insert(*at);
            }
            ControlFlow::Continue(())
        });
        (0..self.hard_id.len())
            .map(|cpu| match (self.hard_id(cpu), found[cpu]) {
                (None, _) => LevelWork::default(),
                (Some(_), Some(w)) => w,
                (Some(_), None) => walked,
            })
            .collect()
    }

    /// Logical CPU with the given hard id (binary search of the paca table).
    pub fn logical_of(&self, hard: u32) -> Option<usize> {
        self.logical_of_hard
            .binary_search_by_key(&hard, |&(h, _)| h)
            .ok()
            .map(|i| self.logical_of_hard[i].1 as usize)
    }

    /// Logical CPUs listed in a CPU node's `ibm,ppc-interrupt-server#s`.
    pub fn threads_of(&self, node: NodeId, work: &mut LevelWork) -> Vec<usize> {
        match self.get_property(node, "ibm,ppc-interrupt-server#s", work) {
            Some(v) => v
                .chunks_exact(4)
                .filter_map(|b| self.logical_of(u32::from_be_bytes([b[0], b[1], b[2], b[3]])))
                .collect(),
            None => Vec::new(),
        }
    }

    /// The first logical CPU listed in a CPU node's `ibm,ppc-interrupt-server#s`
    /// that satisfies `pred`, without allocating; counts each thread examined.
    pub fn find_thread(
        &self,
        node: NodeId,
        work: &mut LevelWork,
        mut pred: impl FnMut(usize) -> bool,
    ) -> Option<usize> {
        let servers = self.get_property(node, "ibm,ppc-interrupt-server#s", work)?;
        servers.chunks_exact(4).find_map(|b| {
            work.cpus_scanned += 1;
            self.logical_of(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
                .filter(|&t| pred(t))
        })
    }

    fn phandle_node(&self, phandle: u32) -> Option<NodeId> {
        self.phandles
            .get(phandle as usize)
            .copied()
            .filter(|_| phandle != 0)
    }

    /// The identity of a CPU node's group at `level`, read from its properties.
    /// Two CPUs share a group exactly when their keys are equal. Coregroup
    /// returns `None` when the firmware has no coregroup ids.
    pub fn key_of_node(&self, node: NodeId, level: MaskLevel, work: &mut LevelWork) -> Option<u64> {
        match level {
            MaskLevel::Smt => Some(TAG_CPU_NODE | node as u64),
            MaskLevel::L2 => {
                if let Some(ph) = self.read_u32(node, "l2-cache", 0, work) {
                    if let Some(cache) = self.phandle_node(ph) {
                        if self.read_u32(cache, "cache-level", 0, work) == Some(2) {
                            return Some(TAG_CACHE | ph as u64);
                        }
                    }
                }
                if let Some(groups) = self.get_property(node, "ibm,thread-groups", work) {
                    // <type, count, threads per group, ids...>; type 2 shares L2.
                    if cell_at(groups, 0) == Some(2) {
                        if let Some(leader) = cell_at(groups, 3) {
                            return Some(TAG_THREAD_GROUP | leader as u64);
                        }
                    }
                }
                Some(TAG_CPU_NODE | node as u64)
            }
            MaskLevel::Coregroup => {
                let cg = self.read_u32(node, "ibm,associativity", ASSOC_COREGROUP, work)?;
                (cg != NO_ID).then_some(TAG_COREGROUP | cg as u64)
            }
            MaskLevel::Package => {
                let chip = self.read_u32(node, "ibm,chip-id", 0, work).unwrap_or(NO_ID);
                Some(TAG_CHIP | chip as u64)
            }
            MaskLevel::Node => {
                let nid = self
                    .read_u32(node, "ibm,associativity", ASSOC_NODE, work)
                    .unwrap_or(NO_ID);
                Some(TAG_NODE | nid as u64)
            }
            MaskLevel::Llc => {
                // Follow l2-cache → next-level-cache → ... to the outermost cache.
                let Some(mut ph) = self.read_u32(node, "l2-cache", 0, work) else {
                    return Some(TAG_CPU_NODE | node as u64);
                };
                while let Some(next) = self
                    .phandle_node(ph)
                    .and_then(|n| self.read_u32(n, "next-level-cache", 0, work))
                {
                    ph = next;
                }
                Some(TAG_CACHE | ph as u64)
            }
        }
    }
}
