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

impl FirmwareTree {
    /// Builds the tree for every present CPU of `topology`.
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
        // Hard ids: the firmware ids when they are unique and fit a cell, else
        // the logical numbers (a simulator's machine may not have firmware ids).
        let mut hw: Vec<u32> = Vec::with_capacity(present.len());
        let mut use_hw = true;
        for c in &present {
            match c.hw_id {
                Some(h) if h < NO_ID as u64 => hw.push(h as u32),
                _ => {
                    use_hw = false;
                    break;
                }
            }
        }
        if use_hw {
            let mut sorted = hw.clone();
            sorted.sort_unstable();
            use_hw = sorted.windows(2).all(|w| w[0] != w[1]);
        }
        let nr = topology.cpus().last().map_or(0, |c| c.id as usize + 1);
        let mut hard_id = vec![NO_ID; nr];
        for (i, c) in present.iter().enumerate() {
            hard_id[c.id as usize] = if use_hw { hw[i] } else { c.id };
        }
        let mut logical_of_hard: Vec<(u32, u32)> = present
            .iter()
            .map(|c| (hard_id[c.id as usize], c.id))
            .collect();
        logical_of_hard.sort_unstable();

        // Cache instances of level >= 2 (data or unified) get a node each.
        let cache_levels: Vec<usize> = topology
            .caches()
            .iter()
            .enumerate()
            .filter(|(_, c)| c.level >= 2 && c.kind != CacheKind::Instruction)
            .map(|(i, _)| i)
            .collect();

        let mut tree = FirmwareTree {
            nodes: Vec::new(),
            cpus_node: 1,
            hard_id,
            logical_of_hard,
            phandles: vec![0], // phandle 0 is invalid
        };
        tree.nodes.push(Node {
            name: String::from("/"),
            children: vec![1],
            properties: vec![Property {
                name: "compatible",
                value: string("manycore,firmware"),
            }],
        });
        tree.nodes.push(Node {
            name: String::from("cpus"),
            children: Vec::new(),
            properties: vec![
                Property {
                    name: "#address-cells",
                    value: cells(&[1]),
                },
                Property {
                    name: "#size-cells",
                    value: cells(&[0]),
                },
            ],
        });

        // One node per cache instance: phandle = position + 1.
        let mut cache_phandle: BTreeMap<usize, u32> = BTreeMap::new();
        for &ci in &cache_levels {
            let phandle = tree.phandles.len() as u32;
            cache_phandle.insert(ci, phandle);
            let cache = &topology.caches()[ci];
            let id = tree.nodes.len() as NodeId;
            tree.nodes.push(Node {
                name: format!("l{}-cache@{:x}", cache.level, phandle),
                children: Vec::new(),
                properties: vec![
                    Property {
                        name: "device_type",
                        value: string("cache"),
                    },
                    Property {
                        name: "cache-unified",
                        value: Vec::new(),
                    },
                    Property {
                        name: "cache-level",
                        value: cells(&[cache.level as u32]),
                    },
                    Property {
                        name: "d-cache-size",
                        value: cells(&[cache.size_bytes.unwrap_or(0).min(u32::MAX as u64) as u32]),
                    },
                    Property {
                        name: "phandle",
                        value: cells(&[phandle]),
                    },
                ],
            });
            tree.phandles.push(id);
        }
        // The chain of caches of each CPU, innermost first (level >= 2), the
        // first instance listed at each level; built in one pass over the caches.
        let mut chains: Vec<Vec<usize>> = vec![Vec::new(); nr];
        for &ci in &cache_levels {
            let cache = &topology.caches()[ci];
            for cpu in cache.cpus.iter().filter(|&c| c < nr) {
                let chain = &mut chains[cpu];
                if !chain
                    .iter()
                    .any(|&x| topology.caches()[x].level == cache.level)
                {
                    chain.push(ci);
                }
            }
        }
        for chain in &mut chains {
            chain.sort_by_key(|&ci| topology.caches()[ci].level);
        }
        let chain_of = |cpu: usize| -> &Vec<usize> { &chains[cpu] };

        // CPU nodes, one per SMT core, in order of the core's first thread.
        let core_level = topology.level(LevelKind::Core);
        let has_big = topology.level(LevelKind::BigCore).is_some();
        let has_cluster = topology.level(LevelKind::Cluster).is_some();
        let mut next_level_set: BTreeMap<usize, usize> = BTreeMap::new();
        if let Some(cores) = core_level {
            for (core_index, group) in cores.groups.iter().enumerate() {
                let threads: Vec<usize> = group
                    .cpus
                    .iter()
                    .filter(|&c| topology.present().contains(c))
                    .collect();
                let Some(&first) = threads.first() else {
                    continue;
                };
                let head = topology.cpu(first).expect("core member has a CPU entry");
                let chain = chain_of(first).clone();
                // Every thread must agree with the first on what the node says.
                for &t in &threads[1..] {
                    let c = topology.cpu(t).expect("core member has a CPU entry");
                    let disagree = |level: MaskLevel, reason: &'static str| {
                        Err(HotplugError::Unsupported {
                            cpu: t,
                            level,
                            reason,
                        })
                    };
                    if c.group(LevelKind::Package) != head.group(LevelKind::Package) {
                        return disagree(MaskLevel::Package, "SMT siblings in different packages");
                    }
                    if c.node != head.node {
                        return disagree(MaskLevel::Node, "SMT siblings in different NUMA nodes");
                    }
                    if c.group(LevelKind::Cluster) != head.group(LevelKind::Cluster) {
                        return disagree(
                            MaskLevel::Coregroup,
                            "SMT siblings in different clusters",
                        );
                    }
                    if c.group(LevelKind::BigCore) != head.group(LevelKind::BigCore) {
                        return disagree(MaskLevel::L2, "SMT siblings in different big cores");
                    }
                    if *chain_of(t) != chain {
                        return disagree(MaskLevel::L2, "SMT siblings see different caches");
                    }
                }
                let hard: Vec<u32> = threads.iter().map(|&t| tree.hard_id[t]).collect();
                let node_cell = head.node.map_or(NO_ID, |n| topology.nodes()[n as usize].id);
                let package = head.group(LevelKind::Package).unwrap_or(NO_ID);
                let coregroup = if has_cluster {
                    head.group(LevelKind::Cluster).unwrap_or(NO_ID)
                } else {
                    NO_ID
                };
                let mut properties = vec![
                    Property {
                        name: "device_type",
                        value: string("cpu"),
                    },
                    Property {
                        name: "reg",
                        value: cells(&[hard[0]]),
                    },
                    Property {
                        name: "ibm,ppc-interrupt-server#s",
                        value: cells(&hard),
                    },
                    Property {
                        name: "ibm,chip-id",
                        value: cells(&[package]),
                    },
                    Property {
                        name: "ibm,associativity",
                        value: cells(&[4, node_cell, package, coregroup, core_index as u32]),
                    },
                ];
                if let Some(&innermost) = chain.first() {
                    properties.push(Property {
                        name: "l2-cache",
                        value: cells(&[cache_phandle[&innermost]]),
                    });
                }
                if has_big {
                    if let Some(big) = head.group(LevelKind::BigCore) {
                        let big_mask = topology.level(LevelKind::BigCore).expect("has_big").groups
                            [big as usize]
                            .cpus;
                        let members: Vec<u32> = big_mask
                            .iter()
                            .filter(|&c| topology.present().contains(c))
                            .map(|c| tree.hard_id[c])
                            .collect();
                        // Property type 2 = "threads sharing the L2", one group.
                        let mut v = vec![2, 1, members.len() as u32];
                        v.extend_from_slice(&members);
                        properties.push(Property {
                            name: "ibm,thread-groups",
                            value: cells(&v),
                        });
                    }
                }
                // Link each cache to the next one out, as firmware does.
                for pair in chain.windows(2) {
                    next_level_set.entry(pair[0]).or_insert(pair[1]);
                }
                let id = tree.nodes.len() as NodeId;
                tree.nodes.push(Node {
                    name: format!("PowerPC,manycore@{:x}", hard[0]),
                    children: Vec::new(),
                    properties,
                });
                tree.nodes[1].children.push(id);
            }
        }
        for (inner, outer) in next_level_set {
            let node = tree.phandles[cache_phandle[&inner] as usize] as usize;
            tree.nodes[node].properties.push(Property {
                name: "next-level-cache",
                value: cells(&[cache_phandle[&outer]]),
            });
        }
        // Cache nodes sit under /cpus after the CPU nodes, as on PowerVM.
        for p in 1..tree.phandles.len() {
            let id = tree.phandles[p];
            tree.nodes[1].children.push(id);
        }
        Ok(tree)
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

    /// `of_get_cpu_node`: walks the children of `/cpus`, and for each node of
    /// `device_type = "cpu"` scans its `ibm,ppc-interrupt-server#s` for the
    /// CPU's hard id. Cost grows with the number of cores — the walk that made
    /// pre-5.10 powerpc bring-up quadratic per CPU.
    pub fn of_get_cpu_node(&self, cpu: usize, work: &mut LevelWork) -> Option<NodeId> {
        let hard = self.hard_id(cpu)?;
        for &child in &self.nodes[self.cpus_node as usize].children {
            work.fdt_nodes_visited += 1;
            if self.get_property(child, "device_type", work) != Some(b"cpu\0") {
                continue;
            }
            if let Some(servers) = self.get_property(child, "ibm,ppc-interrupt-server#s", work) {
                if servers
                    .chunks_exact(4)
                    .any(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) == hard)
                {
                    return Some(child);
                }
            }
        }
        None
    }

    /// One pass over `/cpus` mapping every logical CPU to its node, like the
    /// `cpu_dev->of_node` pointers Linux sets once at `topology_init`; lets
    /// later lookups skip the walk. Returns `NO_ID` for CPUs without a node.
    pub fn index_cpu_nodes(&self, work: &mut LevelWork) -> Vec<NodeId> {
        let mut of_cpu = vec![NO_ID; self.hard_id.len()];
        for &child in &self.nodes[self.cpus_node as usize].children {
            work.fdt_nodes_visited += 1;
            if self.get_property(child, "device_type", work) != Some(b"cpu\0") {
                continue;
            }
            if let Some(servers) = self.get_property(child, "ibm,ppc-interrupt-server#s", work) {
                for b in servers.chunks_exact(4) {
                    let hard = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
                    if let Some(cpu) = self.logical_of(hard) {
                        of_cpu[cpu] = child;
                    }
                }
            }
        }
        of_cpu
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
