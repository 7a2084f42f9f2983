//! Per domain, the groups' standing for `find_idlest_group()` at one instant,
//! in a tournament tree: the model's bookkeeping, not a Linux rule.
//!
//! Linux compares every group of the domain on each fork
//! (`find_idlest_group()` → `update_pick_idlest()`), and so does the model's
//! reference path. But a run forks thousands of tasks at one instant, each
//! into a domain of hundreds of groups (an LLC of 512 SMT cores), and between
//! two forks only the groups holding the one CPU that got the task changed.
//! `update_pick_idlest()` is a lexicographic order on a group's statistics
//! ([`key`]), and a scan keeps the first group of least key, so a tree of
//! (key, position) minima over the domain's groups gives the same group as the
//! scan, and a runqueue change costs a walk up the tree of each domain holding
//! one of its CPU's groups.
//!
//! A tree is valid for the instant it was built at; it is built at the second
//! query of one instant (the first is a scan), so workloads that never fork
//! several tasks at once never pay for it.

use alloc::vec;
use alloc::vec::Vec;
use core::cell::{Cell, RefCell};

use crate::fair::{GroupType, SgStats};

/// A group's standing: lower is idler (`update_pick_idlest()`, v6.8): the
/// group type first; then, for overloaded and fully busy groups, the average
/// load; for groups with spare capacity, more idle CPUs, then less
/// utilisation; every other type keeps the first group found.
pub type Key = (u8, u64, u64);

/// The [`Key`] of a group's `update_sg_wakeup_stats()`.
pub fn key(s: &SgStats) -> Key {
    let t = s.group_type as u8;
    match s.group_type {
        GroupType::HasSpare => (t, u64::from(u32::MAX - s.idle_cpus), s.util),
        GroupType::FullyBusy | GroupType::Overloaded => (t, s.avg_load, 0),
        _ => (t, 0, 0),
    }
}

/// A (key, position) minimum tree over one domain's groups.
#[derive(Debug, Clone)]
struct Tree {
    /// The instant it holds.
    at: u64,
    /// Leaves (a power of two at least the group count).
    width: usize,
    /// `node[1]` is the root; `node[width + i]` is group position `i`.
    node: Vec<(Key, u32)>,
}

const NONE: (Key, u32) = ((u8::MAX, u64::MAX, u64::MAX), u32::MAX);

impl Tree {
    fn build(at: u64, keys: &[Key]) -> Tree {
        let width = keys.len().next_power_of_two();
        let mut node = vec![NONE; 2 * width];
        for (i, &k) in keys.iter().enumerate() {
            node[width + i] = (k, i as u32);
        }
        for i in (1..width).rev() {
            node[i] = node[2 * i].min(node[2 * i + 1]);
        }
        Tree { at, width, node }
    }

    fn set(&mut self, pos: usize, k: Key) {
        let mut i = self.width + pos;
        self.node[i] = (k, pos as u32);
        while i > 1 {
            i /= 2;
            self.node[i] = self.node[2 * i].min(self.node[2 * i + 1]);
        }
    }

    /// The least (key, position) over positions `lo..hi`.
    fn min(&self, lo: usize, hi: usize) -> (Key, u32) {
        let (mut l, mut r) = (lo + self.width, hi + self.width);
        let mut best = NONE;
        while l < r {
            if l & 1 == 1 {
                best = best.min(self.node[l]);
                l += 1;
            }
            if r & 1 == 1 {
                r -= 1;
                best = best.min(self.node[r]);
            }
            l /= 2;
            r /= 2;
        }
        best
    }
}

/// Every domain's tree, and which domains hold each group.
pub(crate) struct IdlestIndex {
    trees: Vec<RefCell<Option<Tree>>>,
    /// Per domain: the instant of its last query and whether it was the first.
    queried: Vec<Cell<Option<u64>>>,
    /// Per group: (domain, position in its groups) of every domain listing it.
    group_doms: Vec<Vec<(u32, u32)>>,
}

impl IdlestIndex {
    /// Empty trees for `doms` (each a list of group ids) over `groups` groups.
    pub(crate) fn new<'a>(doms: impl Iterator<Item = &'a [u32]>, groups: usize) -> IdlestIndex {
        let mut group_doms = vec![Vec::new(); groups];
        let mut n = 0;
        for (d, list) in doms.enumerate() {
            for (pos, &g) in list.iter().enumerate() {
                group_doms[g as usize].push((d as u32, pos as u32));
            }
            n += 1;
        }
        IdlestIndex {
            trees: (0..n).map(|_| RefCell::new(None)).collect(),
            queried: vec![Cell::new(None); n],
            group_doms,
        }
    }

    /// Whether domain `d`'s tree holds instant `now`; if not, whether this
    /// is the second query of `now` (time to build it).
    pub(crate) fn ready(&self, d: u32, now: u64) -> (bool, bool) {
        let valid = self.trees[d as usize]
            .borrow()
            .as_ref()
            .is_some_and(|t| t.at == now);
        if valid {
            return (true, false);
        }
        let second = self.queried[d as usize].get() == Some(now);
        self.queried[d as usize].set(Some(now));
        (false, second)
    }

    /// Builds domain `d`'s tree for `now` from its groups' keys.
    pub(crate) fn build(&self, d: u32, now: u64, keys: &[Key]) {
        *self.trees[d as usize].borrow_mut() = Some(Tree::build(now, keys));
    }

    /// The position of the first group of least key, in `sd->groups` order
    /// from position `local` (excluded) on, wrapping: positions after it
    /// first, so they win ties. `None` when the domain has one group.
    pub(crate) fn idlest(&self, d: u32, local: usize) -> Option<usize> {
        let tree = self.trees[d as usize].borrow();
        let t = tree.as_ref()?;
        let n = t.width;
        let after = t.min(local + 1, n);
        let before = t.min(0, local);
        let best = if after.0 <= before.0 { after } else { before };
        (best.1 != u32::MAX).then_some(best.1 as usize)
    }

    /// Group `g`'s sums changed at `now`: in every domain listing `g` whose
    /// tree holds `now`, its key becomes `key_of(domain)`.
    pub(crate) fn update(&self, g: u32, now: u64, mut key_of: impl FnMut(u32) -> Key) {
        for &(d, pos) in &self.group_doms[g as usize] {
            let mut tree = self.trees[d as usize].borrow_mut();
            if let Some(t) = tree.as_mut().filter(|t| t.at == now) {
                t.set(pos as usize, key_of(d));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tree's answer is a scan's: the first least key from `local + 1`,
    /// wrapping, on keys with many ties, after updates.
    #[test]
    fn tree_matches_a_scan() {
        let mut x = 12345u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for n in [1usize, 2, 3, 5, 8, 13, 64, 100] {
            let mut keys: Vec<Key> = (0..n)
                .map(|_| ((next() % 3) as u8, next() % 4, next() % 3))
                .collect();
            let mut t = Tree::build(0, &keys);
            for _ in 0..50 {
                let p = (next() % n as u64) as usize;
                keys[p] = ((next() % 3) as u8, next() % 4, next() % 3);
                t.set(p, keys[p]);
                for local in 0..n {
                    let mut scan: Option<usize> = None;
                    for i in 1..n {
                        let j = (local + i) % n;
                        if scan.is_none_or(|b| keys[j] < keys[b]) {
                            scan = Some(j);
                        }
                    }
                    let idx = IdlestIndex {
                        trees: vec![RefCell::new(Some(t.clone()))],
                        queried: vec![Cell::new(None)],
                        group_doms: Vec::new(),
                    };
                    assert_eq!(idx.idlest(0, local), scan, "n {n} local {local} {keys:?}");
                }
            }
        }
    }
}
