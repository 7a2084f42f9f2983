//! The spans of each CPU's NODE and NUMA domains by Linux v6.x's rule,
//! written from kernel/sched/topology.c and not from the builder (used by
//! fuzz.rs on generated machines and corpus.rs on real ones):
//!
//! - sched_init_numa() collects the distinct node_distance(i, j) over every
//!   pair of nodes with CPUs (for_each_cpu_node_but: memory-only nodes and
//!   nodes whose CPUs are all offline are left out), in increasing order;
//!   level 0 (the local distance) is NODE, each further one a NUMA level.
//! - Its mask for level i and node j (what sd_numa_mask() returns for a CPU
//!   of node j) holds the CPUs of every counted node k with
//!   node_distance(j, k) <= distance[i]: the row of the CPU's own node.
//! - build_sched_domain() intersects it with the online CPUs and ORs in the
//!   span below when that is not a subset ("arch topology borken");
//!   build_sched_domains() stops at the first level spanning every online
//!   CPU; cpu_attach_domain() drops a level whose span equals its child's.
//!
//! So the kept NODE/NUMA spans of a CPU are the distinct masks
//! `(mask_i & online) | below`, larger than the span `below` of its highest
//! non-NUMA domain, up to the first that holds every online CPU. With an
//! asymmetric SLIT the domain trees of different CPUs end at different
//! depths, build_overlap_sched_groups() then leaves some NUMA domains one
//! group, and sd_degenerate() may drop those: there each kept span must be
//! one of the rule's, in increasing order.
#![allow(dead_code)]

use std::collections::BTreeMap;

use cpumask::CpuMask;
use domains::Domains;

/// What the rule reads of a machine.
pub struct NumaFacts {
    /// Each node's online CPUs, by node index.
    pub node_cpus: Vec<CpuMask>,
    /// SLIT distances, row-major by node index.
    pub dist: Vec<u32>,
    /// Each online CPU's node index.
    pub node_of_cpu: BTreeMap<u32, usize>,
}

impl NumaFacts {
    fn distance(&self, a: usize, b: usize) -> u32 {
        self.dist[a * self.node_cpus.len() + b]
    }

    fn symmetric(&self) -> bool {
        let n = self.node_cpus.len();
        (0..n).all(|a| (0..n).all(|b| self.distance(a, b) == self.distance(b, a)))
    }

    /// sched_domains_numa_distance[]: the distinct distances between
    /// nodes with CPUs.
    fn levels(&self) -> (Vec<usize>, Vec<u32>) {
        let counted: Vec<usize> = (0..self.node_cpus.len())
            .filter(|&n| !self.node_cpus[n].is_empty())
            .collect();
        let mut distances: Vec<u32> = Vec::new();
        for &i in &counted {
            for &j in &counted {
                distances.push(self.distance(i, j));
            }
        }
        distances.sort_unstable();
        distances.dedup();
        (counted, distances)
    }
}

/// Checks every CPU's NODE/NUMA domain spans in `d` against the rule.
pub fn check(facts: &NumaFacts, online: &CpuMask, d: &Domains) -> Result<(), String> {
    let (counted, distances) = facts.levels();
    for c in &d.cpus {
        let Some(&node) = facts.node_of_cpu.get(&c.cpu) else {
            continue;
        };
        let is_numa = |name: &str| name == "NODE" || name == "NUMA";
        let mut below = CpuMask::single(c.cpu as usize);
        let mut got = Vec::new();
        for dom in &c.domains {
            if is_numa(d.name(dom)) {
                got.push(d.span(dom).to_cpumask());
            } else if !got.is_empty() {
                return Err(format!("cpu{}: {} above a NUMA level", c.cpu, d.name(dom)));
            } else {
                below = d.span(dom).to_cpumask();
            }
        }
        let mut want: Vec<CpuMask> = Vec::new();
        for &dist in &distances {
            if below == *online || want.last() == Some(online) {
                break;
            }
            let mut mask = CpuMask::new();
            for &k in &counted {
                if facts.distance(node, k) <= dist {
                    mask.or_assign(&facts.node_cpus[k]);
                }
            }
            let span = mask.and(online).or(&below);
            if span != below && want.last() != Some(&span) {
                want.push(span);
            }
        }
        let ok = if facts.symmetric() {
            got == want
        } else {
            got.iter().all(|g| want.contains(g))
                && got
                    .windows(2)
                    .all(|w| w[0] != w[1] && w[0].is_subset(&w[1]))
        };
        if !ok {
            return Err(format!(
                "cpu{} (node index {node}): NODE/NUMA spans {got:?}, Linux's {want:?}; \
                 distances {distances:?}",
                c.cpu
            ));
        }
    }
    Ok(())
}
