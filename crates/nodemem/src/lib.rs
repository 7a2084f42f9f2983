//! Per-NUMA-node physical frame allocator with distance-ordered fallback.
//!
//! Each node owns the free ranges its SRAT memory-affinity entries describe
//! (minus what is reserved: the kernel image, firmware areas). An allocation
//! names a preferred node; when that node cannot satisfy it, the allocator tries
//! the other nodes nearest first by SLIT distance, as Linux's zonelists do, and
//! reports which node it used. Running out is an [`AllocError`] the caller
//! handles — never a panic (seed 004's review).
//!
//! The allocator is `no_std` + `alloc`: the bare-metal kernel uses it for every
//! CPU's stack and per-CPU area, and host code can test it directly.
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

extern crate alloc;

use alloc::vec::Vec;
use core::fmt;

/// Size of one frame.
pub const PAGE_SIZE: u64 = 4096;

/// Why an allocation or setup call failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllocError {
    /// A zero-byte request.
    ZeroSize,
    /// Alignment not a power of two or below the frame size.
    BadAlign(u64),
    /// The preferred node does not exist.
    UnknownNode(u32),
    /// No node, the preferred one nor any fallback, has `bytes` free in one piece.
    OutOfMemory {
        /// The node that was asked for.
        node: u32,
        /// The size asked for.
        bytes: u64,
    },
    /// A range given at setup overlaps one already added, or wraps around.
    BadRange {
        /// Start of the offending range.
        base: u64,
        /// Its length.
        len: u64,
    },
}

impl fmt::Display for AllocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AllocError::ZeroSize => write!(f, "zero-size allocation"),
            AllocError::BadAlign(a) => write!(f, "alignment {a:#x} is not a power of two >= 4 KiB"),
            AllocError::UnknownNode(n) => write!(f, "no memory node {n}"),
            AllocError::OutOfMemory { node, bytes } => {
                write!(
                    f,
                    "out of memory: {bytes} bytes wanted on node {node} or any fallback"
                )
            }
            AllocError::BadRange { base, len } => {
                write!(
                    f,
                    "memory range {base:#x}+{len:#x} overlaps another or wraps"
                )
            }
        }
    }
}

/// A successful allocation: where it is and which node provided it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    /// Physical address of the first byte.
    pub addr: u64,
    /// Length in bytes (the request rounded up to whole frames).
    pub len: u64,
    /// The node the memory came from (differs from the preferred one on fallback).
    pub node: u32,
}

#[derive(Clone, Debug)]
struct Node {
    id: u32,
    /// Disjoint free ranges `[start, end)`, sorted by start.
    free: Vec<(u64, u64)>,
    /// Bytes ever added (the node's span, for reporting).
    total: u64,
}

/// The per-node allocators plus the distance table that orders fallback.
#[derive(Clone, Debug, Default)]
pub struct NodeMem {
    nodes: Vec<Node>,
    /// Row-major distances between `nodes` by index; empty means "all remote
    /// nodes equally far" (10 local, 20 remote, as Linux assumes without a SLIT).
    distance: Vec<u8>,
}

impl NodeMem {
    /// An allocator with no memory.
    pub fn new() -> Self {
        Self::default()
    }

    fn index(&self, node: u32) -> Option<usize> {
        self.nodes.iter().position(|n| n.id == node)
    }

    /// Adds `[base, base + len)` to `node`'s free memory, trimmed to whole
    /// frames. Overlap with memory already added is an error.
    pub fn add_range(&mut self, node: u32, base: u64, len: u64) -> Result<(), AllocError> {
        let end = base
            .checked_add(len)
            .ok_or(AllocError::BadRange { base, len })?;
        let start = align_up(base, PAGE_SIZE).ok_or(AllocError::BadRange { base, len })?;
        let end = end & !(PAGE_SIZE - 1);
        if start >= end {
            return Ok(());
        }
        let overlaps = self
            .nodes
            .iter()
            .flat_map(|n| n.free.iter())
            .any(|&(s, e)| start < e && s < end);
        if overlaps {
            return Err(AllocError::BadRange { base, len });
        }
        let i = match self.index(node) {
            Some(i) => i,
            None => {
                self.nodes.push(Node {
                    id: node,
                    free: Vec::new(),
                    total: 0,
                });
                self.nodes.len() - 1
            }
        };
        let n = &mut self.nodes[i];
        n.total += end - start;
        insert_merged(&mut n.free, start, end);
        Ok(())
    }

    /// Makes `node` known without adding memory: a memoryless node (CPUs or
    /// devices only). Allocations that prefer it fall back by its distances,
    /// as Linux's zonelist for a memoryless node does. Call before
    /// [`NodeMem::set_distances`]. Nothing happens if `node` is known.
    pub fn add_node(&mut self, node: u32) {
        if self.index(node).is_none() {
            self.nodes.push(Node {
                id: node,
                free: Vec::new(),
                total: 0,
            });
        }
    }

    /// Removes `[base, base + len)` from every node's free memory (the kernel
    /// image, the AP trampoline page, firmware data). Parts not free are ignored.
    pub fn reserve(&mut self, base: u64, len: u64) {
        let start = base & !(PAGE_SIZE - 1);
        let end = align_up(base.saturating_add(len), PAGE_SIZE).unwrap_or(u64::MAX);
        for n in &mut self.nodes {
            let mut out = Vec::with_capacity(n.free.len() + 1);
            for &(s, e) in &n.free {
                if e <= start || s >= end {
                    out.push((s, e));
                    continue;
                }
                if s < start {
                    out.push((s, start));
                }
                if end < e {
                    out.push((end, e));
                }
            }
            n.free = out;
        }
    }

    /// Sets the distance matrix: `distance[i * count + j]` between the nodes
    /// `ids[i]` and `ids[j]`. Nodes not named keep the default distances.
    pub fn set_distances(&mut self, ids: &[u32], distance: &[u8]) {
        let k = self.nodes.len();
        let mut d = Vec::with_capacity(k * k);
        for a in 0..k {
            for b in 0..k {
                let pa = ids.iter().position(|&x| x == self.nodes[a].id);
                let pb = ids.iter().position(|&x| x == self.nodes[b].id);
                let v = match (pa, pb) {
                    (Some(i), Some(j)) => distance.get(i * ids.len() + j).copied(),
                    _ => None,
                };
                d.push(v.unwrap_or(if a == b { 10 } else { 20 }));
            }
        }
        self.distance = d;
    }

    /// Node ids known (given memory, or by [`NodeMem::add_node`]), in the
    /// order they were first added.
    pub fn nodes(&self) -> impl Iterator<Item = u32> + '_ {
        self.nodes.iter().map(|n| n.id)
    }

    /// Free bytes on `node`.
    pub fn free_bytes(&self, node: u32) -> u64 {
        self.index(node)
            .map(|i| self.nodes[i].free.iter().map(|&(s, e)| e - s).sum())
            .unwrap_or(0)
    }

    /// Bytes ever added to `node`.
    pub fn total_bytes(&self, node: u32) -> u64 {
        self.index(node).map(|i| self.nodes[i].total).unwrap_or(0)
    }

    /// Nodes in fallback order for `node`: itself, then by increasing distance
    /// (ties by id, so the order is deterministic).
    pub fn fallback_order(&self, node: u32) -> Result<Vec<u32>, AllocError> {
        let me = self.index(node).ok_or(AllocError::UnknownNode(node))?;
        let k = self.nodes.len();
        let dist = |j: usize| -> u8 {
            if j == me {
                0
            } else {
                self.distance.get(me * k + j).copied().unwrap_or(20)
            }
        };
        let mut order: Vec<usize> = (0..k).collect();
        order.sort_by_key(|&j| (dist(j), self.nodes[j].id));
        Ok(order.into_iter().map(|j| self.nodes[j].id).collect())
    }

    /// Allocates `bytes` (rounded up to frames) aligned to `align` on `node`,
    /// falling back to the nearest nodes that can satisfy it.
    pub fn alloc(&mut self, node: u32, bytes: u64, align: u64) -> Result<Frame, AllocError> {
        let order = self.fallback_order(node)?;
        let len = check_request(bytes, align)?;
        for id in order {
            if let Some(addr) = self.take(id, len, align) {
                return Ok(Frame {
                    addr,
                    len,
                    node: id,
                });
            }
        }
        Err(AllocError::OutOfMemory { node, bytes })
    }

    /// Allocates on `node` only, with no fallback.
    pub fn alloc_exact(&mut self, node: u32, bytes: u64, align: u64) -> Result<Frame, AllocError> {
        self.index(node).ok_or(AllocError::UnknownNode(node))?;
        let len = check_request(bytes, align)?;
        self.take(node, len, align)
            .map(|addr| Frame { addr, len, node })
            .ok_or(AllocError::OutOfMemory { node, bytes })
    }

    /// Returns a frame to the node it came from.
    pub fn free(&mut self, frame: Frame) {
        if let Some(i) = self.index(frame.node) {
            insert_merged(&mut self.nodes[i].free, frame.addr, frame.addr + frame.len);
        }
    }

    /// First fit, lowest address, on one node.
    fn take(&mut self, node: u32, len: u64, align: u64) -> Option<u64> {
        let i = self.index(node)?;
        let free = &mut self.nodes[i].free;
        for k in 0..free.len() {
            let (s, e) = free[k];
            let Some(a) = align_up(s, align) else {
                continue;
            };
            let Some(end) = a.checked_add(len) else {
                continue;
            };
            if end > e {
                continue;
            }
            // Split [s, e) into [s, a) and [end, e), dropping empty pieces.
            let mut pieces = [(s, a), (end, e)].into_iter().filter(|&(x, y)| x < y);
            match (pieces.next(), pieces.next()) {
                (None, _) => {
                    free.remove(k);
                }
                (Some(p), None) => free[k] = p,
                (Some(p), Some(q)) => {
                    free[k] = p;
                    free.insert(k + 1, q);
                }
            }
            return Some(a);
        }
        None
    }
}

fn check_request(bytes: u64, align: u64) -> Result<u64, AllocError> {
    if bytes == 0 {
        return Err(AllocError::ZeroSize);
    }
    if !align.is_power_of_two() || align < PAGE_SIZE {
        return Err(AllocError::BadAlign(align));
    }
    align_up(bytes, PAGE_SIZE).ok_or(AllocError::OutOfMemory { node: 0, bytes })
}

fn align_up(x: u64, align: u64) -> Option<u64> {
    Some(x.checked_add(align - 1)? & !(align - 1))
}

/// Inserts `[s, e)` into a sorted disjoint list, merging with neighbours.
fn insert_merged(list: &mut Vec<(u64, u64)>, s: u64, e: u64) {
    let pos = list.partition_point(|&(a, _)| a < s);
    list.insert(pos, (s, e));
    // Merge with the next range(s), then with the previous one.
    while pos + 1 < list.len() && list[pos + 1].0 <= list[pos].1 {
        list[pos].1 = list[pos].1.max(list[pos + 1].1);
        list.remove(pos + 1);
    }
    if pos > 0 && list[pos - 1].1 >= list[pos].0 {
        list[pos - 1].1 = list[pos - 1].1.max(list[pos].1);
        list.remove(pos);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn four_nodes() -> NodeMem {
        let mut m = NodeMem::new();
        for n in 0..4u32 {
            m.add_range(n, n as u64 * 64 * MIB, 64 * MIB).unwrap();
        }
        // A ring: 0-1 and 2-3 are close, 0-2 and 1-3 farther, 0-3 and 1-2 farthest.
        #[rustfmt::skip]
        let d = [10, 15, 20, 30,
                 15, 10, 30, 20,
                 20, 30, 10, 15,
                 30, 20, 15, 10];
        m.set_distances(&[0, 1, 2, 3], &d);
        m
    }

    #[test]
    fn allocates_on_the_preferred_node_inside_its_range() {
        let mut m = four_nodes();
        for n in 0..4u32 {
            let f = m.alloc(n, 16 * 1024, PAGE_SIZE).unwrap();
            assert_eq!(f.node, n);
            assert!(f.addr >= n as u64 * 64 * MIB && f.addr + f.len <= (n as u64 + 1) * 64 * MIB);
        }
    }

    #[test]
    fn falls_back_nearest_first() {
        let mut m = four_nodes();
        assert_eq!(m.fallback_order(0).unwrap(), [0, 1, 2, 3]);
        assert_eq!(m.fallback_order(3).unwrap(), [3, 2, 1, 0]);
        // Exhaust node 0: the next allocation comes from node 1 (distance 15).
        m.alloc_exact(0, 64 * MIB, PAGE_SIZE).unwrap();
        assert_eq!(m.alloc(0, PAGE_SIZE, PAGE_SIZE).unwrap().node, 1);
        assert_eq!(
            m.alloc_exact(0, PAGE_SIZE, PAGE_SIZE),
            Err(AllocError::OutOfMemory {
                node: 0,
                bytes: PAGE_SIZE
            })
        );
    }

    #[test]
    fn exhaustion_is_an_error_not_a_panic() {
        let mut m = four_nodes();
        let mut got = 0u64;
        loop {
            match m.alloc(2, MIB, PAGE_SIZE) {
                Ok(f) => got += f.len,
                Err(e) => {
                    assert_eq!(
                        e,
                        AllocError::OutOfMemory {
                            node: 2,
                            bytes: MIB
                        }
                    );
                    break;
                }
            }
        }
        assert_eq!(got, 256 * MIB);
        assert_eq!(m.alloc(9, 1, PAGE_SIZE), Err(AllocError::UnknownNode(9)));
        assert_eq!(m.alloc(0, 0, PAGE_SIZE), Err(AllocError::ZeroSize));
        assert_eq!(m.alloc(0, 1, 3), Err(AllocError::BadAlign(3)));
        assert_eq!(
            m.alloc(0, u64::MAX, PAGE_SIZE),
            Err(AllocError::OutOfMemory {
                node: 0,
                bytes: u64::MAX
            })
        );
    }

    #[test]
    fn reserve_and_free_round_trip() {
        let mut m = NodeMem::new();
        m.add_range(0, 0, 16 * MIB).unwrap();
        m.reserve(0, MIB);
        m.reserve(2 * MIB, MIB);
        assert_eq!(m.free_bytes(0), 14 * MIB);
        let a = m.alloc(0, MIB, 2 * MIB).unwrap();
        assert_eq!(a.addr, 4 * MIB);
        m.free(a);
        assert_eq!(m.free_bytes(0), 14 * MIB);
        assert_eq!(m.nodes[0].free, [(MIB, 2 * MIB), (3 * MIB, 16 * MIB)]);
        assert!(matches!(
            m.add_range(1, 8 * MIB, MIB),
            Err(AllocError::BadRange { .. })
        ));
    }

    #[test]
    fn memoryless_node_falls_back_by_its_distances() {
        // Linux 6.12 on QEMU virt with node 2 memoryless printed
        // "Fallback order for Node 2: 1 0" for these distances
        // (crates/irq/tests/data/arm64-its-dt-node2).
        let mut m = NodeMem::new();
        m.add_range(0, 0, 16 * MIB).unwrap();
        m.add_range(1, 16 * MIB, 16 * MIB).unwrap();
        m.add_node(2);
        m.add_node(1);
        #[rustfmt::skip]
        let d = [10, 20, 30,
                 20, 10, 15,
                 30, 15, 10];
        m.set_distances(&[0, 1, 2], &d);
        assert_eq!(m.fallback_order(2).unwrap(), [2, 1, 0]);
        assert_eq!(m.free_bytes(2), 0);
        let f = m.alloc(2, 64 * 1024, 64 * 1024).unwrap();
        assert_eq!(f.node, 1);
        assert_eq!(
            m.alloc_exact(2, PAGE_SIZE, PAGE_SIZE),
            Err(AllocError::OutOfMemory {
                node: 2,
                bytes: PAGE_SIZE
            })
        );
    }

    #[test]
    fn distances_default_without_slit() {
        let mut m = NodeMem::new();
        m.add_range(5, 0, MIB).unwrap();
        m.add_range(2, MIB, MIB).unwrap();
        m.add_range(7, 2 * MIB, MIB).unwrap();
        assert_eq!(m.fallback_order(7).unwrap(), [7, 2, 5]);
    }
}
