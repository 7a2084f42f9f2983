//! Clusters that are a core or a cache of the same CPUs carry nothing on x86.
//!
//! On x86 the kernel's cluster is the set of CPUs sharing an L2
//! (`topology_cluster_cpumask()` is `cpu_l2c_shared_mask()`; Linux's
//! `Documentation/arch/x86/topology.rst`, "Clusters"), so every cluster is
//! a core (P-cores, SMT cores with a private L2) or an L2 shared by a module
//! of cores (E-cores). hwloc inserts each cluster as a Group and drops a
//! Group whose CPUs are exactly another object's, a core's or a cache's
//! (`hwloc__insert_try_merge_group` in topology.c): lstopo shows no cluster
//! on such machines, and neither do we. Nothing is lost: the caches keep
//! the L2s, and the scheduler's x86 CLS domain is built from them.
//!
//! On another known architecture a cluster stays even where it is one
//! cache: on arm64 the kernel's CLS domain is the cluster itself. Where the
//! architecture is unknown (a dump without cpuinfo or any x86 sign, see
//! [`super::arch_signs`]) or one the model has no variant for, the reader
//! does as hwloc, whose merge knows no architecture. A level is all or nothing here (every CPU has a cluster or
//! none does), so a cluster level stays whole when some cluster is neither
//! a core nor a cache (a dump without its cache directories).

use std::collections::{HashMap, HashSet};

use cpumask::CpuMask;
use topology::{Arch, Cache};

use super::{RawCpu, CLUSTER, CORE};

/// Drops the cluster level of `keys` (each CPU's group key per level, as
/// `group_keys` made them) on x86, or an unknown architecture, when every
/// cluster's online CPUs are one core's or one cache's.
pub(super) fn drop_clusters_of_one_core_or_cache(
    arch: &Arch,
    raws: &[RawCpu],
    keys: &mut [[Option<u32>; 4]],
    caches: &[Cache],
    online: &CpuMask,
) {
    let merges = matches!(arch, Arch::X86_64 | Arch::X86 | Arch::Other(_));
    if !merges || keys.iter().all(|k| k[CLUSTER].is_none()) {
        return;
    }
    // Each group's online CPUs in increasing order (raws are sorted), keyed
    // by its path of keys: a cluster by package, die and cluster, a core by
    // all four.
    let mut clusters: HashMap<[Option<u32>; 3], Vec<u32>> = HashMap::new();
    let mut cores: HashMap<[Option<u32>; 4], Vec<u32>> = HashMap::new();
    for (r, k) in raws.iter().zip(keys.iter()) {
        if online.contains(r.id as usize) {
            clusters.entry([k[0], k[1], k[2]]).or_default().push(r.id);
            cores.entry(*k).or_default().push(r.id);
        }
    }
    let mut others: HashSet<Vec<u32>> = cores.into_values().collect();
    others.extend(caches.iter().map(|c| {
        c.cpus
            .iter()
            .filter(|&cpu| online.contains(cpu))
            .map(|cpu| cpu as u32)
            .collect::<Vec<u32>>()
    }));
    if clusters.values().all(|cpus| others.contains(cpus)) {
        // A core's key is unique only within its cluster (core_ids repeat
        // across clusters on some machines), so before the cluster key goes
        // each core is keyed by its first CPU, unique on the whole machine.
        let mut first: HashMap<[Option<u32>; 4], u32> = HashMap::new();
        for (r, k) in raws.iter().zip(keys.iter_mut()) {
            let core = *first.entry(*k).or_insert(r.id);
            k[CORE] = Some(core);
            k[CLUSTER] = None;
        }
    }
}
