//! The second phase of reading: the objects kept by [`super::parse`] become
//! the builder's CPUs (with their package, die, cluster and core), NUMA nodes
//! with their distances, CPU kinds and caches.

use std::collections::{HashMap, HashSet};

use topology::{
    Arch, Cache, CacheKind, CoreKind, CpuMask, CpuSpec, Topology, TopologyBuilder, MAX_CPUS,
    MAX_NODES,
};

use super::distances::{numa_distances, V1Matrices};
use super::line_of;
use super::raw::{
    Bits, ObjType, Raw, RawObj, GROUP_KIND_DISTANCE, GROUP_KIND_IO, GROUP_KIND_MEMORY,
};
use crate::Error;

/// Where errors point: the file's text (for lines) and its name.
#[derive(Clone, Copy)]
struct Place<'a> {
    text: &'a str,
    source: &'a str,
}

impl Place<'_> {
    fn at(&self, obj: &RawObj, message: String) -> Error {
        Error::at_line(self.source, line_of(self.text, obj.pos), message)
    }
}

/// A PU's enclosing package, die, cluster group and core, as object indexes.
struct Path {
    pkg: Option<usize>,
    die: Option<usize>,
    cluster: Option<usize>,
    core: Option<usize>,
}

/// A PU's group ids as the builder takes them.
struct PuIds {
    package: u32,
    die: Option<u32>,
    cluster: Option<u32>,
    core: Option<u32>,
}

pub(super) fn map_raw(mut raw: Raw, text: &str, source: &str) -> Result<Topology, Error> {
    let place = Place { text, source };
    let objs = &raw.objects;
    let pu_ids = pu_ids(objs, place)?;
    let known: CpuMask = pu_ids.iter().map(|&(_, id)| id as usize).collect();
    let paths: Vec<Path> = pu_ids.iter().map(|&(i, _)| path_of(objs, i)).collect();
    let ids = group_ids(objs, &paths);
    let mut b = builder(&raw, source);
    add_cpus(&mut b, &raw, &pu_ids, &ids, &known);
    add_nodes(&mut b, &mut raw, &known, place)?;
    add_caches(&mut b, &raw.objects, &known, place)?;
    b.finish().map_err(|e| Error::new(source, e.to_string()))
}

/// Every PU's object index and CPU number: its `os_index`, else its cpuset's
/// first bit; each below [`MAX_CPUS`] and listed once.
fn pu_ids(objs: &[RawObj], place: Place<'_>) -> Result<Vec<(usize, u32)>, Error> {
    let mut pu_ids: Vec<(usize, u32)> = Vec::new();
    let mut seen: HashMap<u32, usize> = HashMap::new();
    for (i, o) in objs.iter().enumerate() {
        if o.ty != ObjType::Pu {
            continue;
        }
        let id = match (o.os_index, o.cpuset.as_ref().and_then(|c| c.first())) {
            (Some(id), _) => id,
            (None, Some(first)) => first as u32,
            (None, None) => return Err(place.at(o, "PU without os_index or cpuset".into())),
        };
        if id as usize >= MAX_CPUS {
            return Err(place.at(
                o,
                format!("PU P#{id} is beyond the supported maximum of {MAX_CPUS} CPUs"),
            ));
        }
        if let Some(&prev) = seen.get(&id) {
            return Err(place.at(
                o,
                format!(
                    "PU P#{id} is listed twice (first at line {})",
                    line_of(place.text, objs[prev].pos)
                ),
            ));
        }
        seen.insert(id, i);
        pu_ids.push((i, id));
    }
    if pu_ids.is_empty() {
        return Err(Error::new(
            place.source,
            "no PU objects: the topology has no CPUs",
        ));
    }
    Ok(pu_ids)
}

/// The nearest ancestor of object `i` that `want` accepts.
fn ancestor(objs: &[RawObj], mut i: usize, want: impl Fn(&RawObj) -> bool) -> Option<usize> {
    while let Some(p) = objs[i].parent {
        if want(&objs[p]) {
            return Some(p);
        }
        i = p;
    }
    None
}

/// A group that groups CPUs: not one of hwloc's helper groups, nor a group
/// whose cpuset is its parent's. Such a group adds no level, and hwloc 2
/// merges it into its parent on import (groups keep only structure); hwloc
/// 1.x wrote one under a NUMA node of the same CPUs (an AMD die's group
/// below its node), which hwloc 2 turns into the node's memory group.
fn is_cluster_group(objs: &[RawObj], o: &RawObj) -> bool {
    let same_as_parent = o
        .parent
        .is_some_and(|p| o.cpuset.is_some() && objs[p].cpuset == o.cpuset);
    o.ty == ObjType::Group
        && !same_as_parent
        && !matches!(
            o.group_kind,
            Some(GROUP_KIND_DISTANCE | GROUP_KIND_IO | GROUP_KIND_MEMORY)
        )
}

/// PU `i`'s package, die, core, and cluster: the innermost CPU-grouping
/// group inside its die or package.
fn path_of(objs: &[RawObj], i: usize) -> Path {
    let pkg = ancestor(objs, i, |o| o.ty == ObjType::Package);
    let die = ancestor(objs, i, |o| o.ty == ObjType::Die);
    let core = ancestor(objs, i, |o| o.ty == ObjType::Core);
    let outer = die.or(pkg);
    let cluster = outer.and_then(|outer| {
        let g = ancestor(objs, i, |o| is_cluster_group(objs, o))?;
        let inside = ancestor(objs, g, |_| true).is_some()
            && std::iter::successors(objs[g].parent, |&p| objs[p].parent).any(|p| p == outer);
        inside.then_some(g)
    });
    Path {
        pkg,
        die,
        cluster,
        core,
    }
}

/// Whether a level's objects (`sel` of every PU's path) can be numbered by
/// their `os_index`: every one has it and it is unique within the ids of
/// their parents (`parent_key`). Otherwise hwloc's logical index is used.
fn numbered_by_os(
    objs: &[RawObj],
    paths: &[Path],
    sel: impl Fn(&Path) -> Option<usize>,
    parent_key: impl Fn(&Path) -> Vec<u32>,
) -> bool {
    let mut keys: HashSet<(Vec<u32>, u32)> = HashSet::new();
    let mut objects: HashSet<usize> = HashSet::new();
    let mut ok = true;
    for p in paths {
        if let Some(o) = sel(p) {
            if objects.insert(o) {
                match objs[o].os_index {
                    Some(os) => ok &= keys.insert((parent_key(p), os)),
                    None => ok = false,
                }
            }
        }
    }
    ok
}

/// Each PU's package, die, cluster and core ids.
fn group_ids(objs: &[RawObj], paths: &[Path]) -> Vec<PuIds> {
    // Logical index of every object within its type, in document order.
    let mut logical = vec![0u32; objs.len()];
    let mut counters: HashMap<(u8, bool), u32> = HashMap::new();
    for (i, o) in objs.iter().enumerate() {
        let c = counters
            .entry((o.ty as u8, is_cluster_group(objs, o)))
            .or_insert(0);
        logical[i] = *c;
        *c += 1;
    }
    let id = |by_os: bool| {
        let logical = &logical;
        move |o: usize| {
            if by_os {
                objs[o].os_index.unwrap_or(0)
            } else {
                logical[o]
            }
        }
    };
    let pkg_id = id(numbered_by_os(objs, paths, |p| p.pkg, |_| vec![]));
    let die_id = id(numbered_by_os(
        objs,
        paths,
        |p| p.die,
        |p| vec![p.pkg.map_or(0, &pkg_id)],
    ));
    let cluster_id = id(numbered_by_os(
        objs,
        paths,
        |p| p.cluster,
        |p| vec![p.pkg.map_or(0, &pkg_id), p.die.map_or(0, &die_id)],
    ));
    let core_id = id(numbered_by_os(
        objs,
        paths,
        |p| p.core,
        |p| {
            vec![
                p.pkg.map_or(0, &pkg_id),
                p.die.map_or(0, &die_id),
                p.cluster.map_or(0, &cluster_id),
            ]
        },
    ));
    paths
        .iter()
        .map(|p| PuIds {
            package: p.pkg.map_or(0, &pkg_id),
            die: p.die.map(&die_id),
            cluster: p.cluster.map(&cluster_id),
            core: p.core.map(&core_id),
        })
        .collect()
}

/// A builder with the file's architecture, source name and CPU model.
fn builder(raw: &Raw, source: &str) -> TopologyBuilder {
    let info = |name: &str| {
        raw.root_infos
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };
    // hwloc's `Architecture` is `uname -m`, which on AIX is the machine's
    // serial number (`00C5D4D44C00`), not its processor: AIX runs on 64-bit
    // POWER only, big-endian.
    let arch = if info("OSName") == Some("AIX") || info("Backend") == Some("AIX") {
        Arch::PowerPc64Be
    } else {
        info("Architecture").map_or_else(|| Arch::Other("unknown".into()), Arch::from_uname)
    };
    let mut b = TopologyBuilder::new(arch);
    b.source(source.to_string());
    // Kept byte for byte, as hwloc keeps an info value: CPU model strings
    // end in padding spaces or a carriage return that lstopo shows too.
    if let Some(m) = raw.package_models.first() {
        b.model_name(m.as_str());
    }
    b
}

/// The CPU kinds, every PU as a CPU, and the root's complete cpuset as the
/// possible (and present) CPUs.
fn add_cpus(
    b: &mut TopologyBuilder,
    raw: &Raw,
    pu_ids: &[(usize, u32)],
    ids: &[PuIds],
    known: &CpuMask,
) {
    let mut kind_of: HashMap<u32, u16> = HashMap::new();
    let mut capacity_of: HashMap<u32, u32> = HashMap::new();
    for (n, k) in raw.kinds.iter().enumerate() {
        let idx = b.add_core_kind(CoreKind {
            name: k.core_type.clone().unwrap_or_else(|| format!("kind{n}")),
            efficiency: k.efficiency,
        });
        for cpu in k.cpuset.iter() {
            kind_of.insert(cpu as u32, idx);
            if let Some(c) = k.capacity {
                capacity_of.insert(cpu as u32, c);
            }
        }
    }
    // A PU outside any core is its own core. The builder needs a key that no
    // real core id takes; the core itself has no OS index.
    for (&(_, id), p) in pu_ids.iter().zip(ids) {
        let mut spec = CpuSpec {
            id,
            hw_id: None,
            online: true,
            package: p.package,
            die: p.die,
            cluster: p.cluster,
            big_core: None,
            core: p.core.unwrap_or(0x8000_0000 | id),
            node: None,
            kind: kind_of.get(&id).copied(),
            capacity: capacity_of.get(&id).copied(),
            os_ids: None,
        };
        if p.core.is_none() {
            spec.os_ids = Some([None, None, spec.cluster, spec.die, Some(spec.package)]);
        }
        b.add_cpu(spec);
    }
    let root = raw
        .objects
        .first()
        .filter(|o| o.ty == ObjType::Machine && o.parent.is_none());
    if let Some(complete) = root.and_then(|r| r.cpuset.as_ref()).map(Bits::to_mask) {
        let possible = complete.or(known);
        b.possible(possible);
        b.present(possible);
    }
}

/// The NUMA nodes, each CPU in the node with the smallest cpuset holding it,
/// and their distances.
fn add_nodes(
    b: &mut TopologyBuilder,
    raw: &mut Raw,
    known: &CpuMask,
    place: Place<'_>,
) -> Result<(), Error> {
    let objs = &raw.objects;
    let numa: Vec<usize> = (0..objs.len())
        .filter(|&i| objs[i].ty == ObjType::Numa)
        .collect();
    let node_ids = node_ids(objs, &numa, place)?;
    let numa_sets: Vec<CpuMask> = numa
        .iter()
        .map(|&i| {
            objs[i]
                .cpuset
                .as_ref()
                .or_else(|| objs[i].parent.and_then(|p| objs[p].cpuset.as_ref()))
                .map(Bits::to_mask)
                .unwrap_or_default()
                .and(known)
        })
        .collect();
    if let Some((a, c)) = overlapping_pair(&numa_sets) {
        let cpu = numa_sets[a].and(&numa_sets[c]).first().unwrap_or(0);
        return Err(place.at(
            &objs[numa[c]],
            format!(
                "PU P#{cpu} is in NUMA nodes P#{} and P#{}, whose cpusets overlap \
                 without one containing the other",
                node_ids[a], node_ids[c]
            ),
        ));
    }
    // Smallest cpuset first; stable, so document order breaks ties.
    let mut order: Vec<usize> = (0..numa.len()).collect();
    order.sort_by_key(|&n| numa_sets[n].weight());
    let mut node_cpus = vec![CpuMask::new(); numa.len()];
    let mut assigned = CpuMask::new();
    for n in order {
        let mine = numa_sets[n].and_not(&assigned);
        assigned.or_assign(&mine);
        node_cpus[n] = mine;
    }
    for (n, &i) in numa.iter().enumerate() {
        b.add_node(node_ids[n], node_cpus[n], objs[i].size);
    }
    // Distances among the NUMA nodes (ordered by id in the model).
    let v1 = V1Matrices {
        matrices: &raw.v1_distances,
        hwloc_version: raw
            .root_infos
            .iter()
            .find(|(n, _)| n == "hwlocVersion")
            .map(|(_, v)| v.as_str()),
    };
    let matrix = numa_distances(
        &mut raw.distances,
        v1,
        objs,
        &numa,
        &node_ids,
        place.text,
        place.source,
    )?;
    if let Some(matrix) = matrix {
        b.distances(matrix);
    }
    Ok(())
}

/// The NUMA nodes' ids (`os_index`, else their position), each listed once
/// and below [`MAX_NODES`].
fn node_ids(objs: &[RawObj], numa: &[usize], place: Place<'_>) -> Result<Vec<u32>, Error> {
    let mut first_at: HashMap<u32, usize> = HashMap::with_capacity(numa.len());
    let mut node_ids: Vec<u32> = Vec::with_capacity(numa.len());
    for (n, &i) in numa.iter().enumerate() {
        let id = objs[i].os_index.unwrap_or(n as u32);
        if id as usize >= MAX_NODES {
            return Err(place.at(
                &objs[i],
                format!("NUMA node P#{id} is beyond the supported maximum of {MAX_NODES} nodes"),
            ));
        }
        if let Some(&prev) = first_at.get(&id) {
            return Err(place.at(
                &objs[i],
                format!(
                    "NUMA node P#{id} is listed twice (first at line {})",
                    line_of(place.text, objs[prev].pos)
                ),
            ));
        }
        first_at.insert(id, i);
        node_ids.push(id);
    }
    Ok(node_ids)
}

/// Two sets (in document order) that share a CPU without one containing the
/// other, if any: the sets must nest or be disjoint.
///
/// Sets are taken largest first while `owner[cpu]` remembers the last (so
/// smallest) set taken that holds the CPU. A new set nests in an earlier one
/// exactly when all its CPUs have the same owner; otherwise it and the owner
/// taken last among its CPUs' owners overlap without nesting. This costs the
/// sum of the set sizes, where comparing every pair of thousands of NUMA
/// nodes cost their count squared in 2 KiB mask operations.
fn overlapping_pair(sets: &[CpuMask]) -> Option<(usize, usize)> {
    let mut order: Vec<(usize, usize)> = sets.iter().map(|m| m.weight()).zip(0..).collect();
    order.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    // `owner[cpu]` = (rank in `order`, set index) of the last set taken holding it.
    let mut owner: HashMap<usize, (usize, usize)> = HashMap::new();
    for (rank, &(_, s)) in order.iter().enumerate() {
        let mut owners = sets[s].iter().map(|c| owner.get(&c).copied());
        let first = owners.next().flatten();
        let mut deepest = first;
        let mut uniform = true;
        for o in owners {
            uniform &= o == first;
            deepest = deepest.max(o);
        }
        if !uniform {
            let (_, other) = deepest?;
            return Some((other.min(s), other.max(s)));
        }
        for c in sets[s].iter() {
            owner.insert(c, (rank, s));
        }
    }
    None
}

/// The caches, added in the model's order so that the builder's sort of
/// these 2 KiB records finds them sorted already, in one list of the right
/// size handed over whole (growing it would copy every record). A cache
/// whose CPUs are all offline (or outside the cgroup) is left out.
fn add_caches(
    b: &mut TopologyBuilder,
    objs: &[RawObj],
    known: &CpuMask,
    place: Place<'_>,
) -> Result<(), Error> {
    let mut cache_objs: Vec<(u8, CacheKind, usize, usize)> = objs
        .iter()
        .enumerate()
        .filter(|(_, o)| o.ty == ObjType::Cache)
        .map(|(i, o)| {
            let (level, kind) = o.cache.expect("caches carry their level");
            let first = o
                .cpuset
                .as_ref()
                .and_then(Bits::first)
                .unwrap_or(usize::MAX);
            (level, kind, first, i)
        })
        .collect();
    cache_objs.sort_unstable();
    let mut caches = Vec::with_capacity(cache_objs.len());
    for &(level, kind, _, i) in &cache_objs {
        let o = &objs[i];
        let bits = o
            .cpuset
            .as_ref()
            .ok_or_else(|| place.at(o, format!("L{level} cache without a cpuset")))?;
        let cpus = bits.to_compact_within(known);
        if cpus.is_empty() {
            continue;
        }
        caches.push(Cache {
            level,
            kind,
            // hwloc writes 0 for a size, line size or associativity it does
            // not know (Linux without the cache's `size` file: arm64 firmware
            // that describes no cache sizes); no cache holds 0 bytes.
            size_bytes: o.size.filter(|&s| s != 0),
            line_bytes: o.line_size.filter(|&l| l != 0),
            ways: match o.assoc {
                None | Some(0) => None,
                Some(-1) => Some(0),
                Some(w) => u32::try_from(w).ok(),
            },
            cpus,
        });
    }
    b.add_caches(caches);
    Ok(())
}
