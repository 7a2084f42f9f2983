//! NUMA distance matrices: hwloc v2 `<distances2>` and v1 `<distances>`,
//! checked and turned into the model's matrix.

use std::collections::{HashMap, HashSet};

use super::line_of;
use super::raw::{Distances, RawObj, V1Distances};
use crate::Error;
use topology::MAX_DISTANCE_NODES;

/// The model's node distance matrix: every NUMA `<distances2>` checked, then
/// the latency one (else the first that is not a bandwidth) if it covers
/// every node, else a v1 `<distances>` over the nodes, else none.
pub(super) fn numa_distances(
    distances: &mut [Distances],
    v1: V1Matrices<'_>,
    objs: &[RawObj],
    numa: &[usize],
    node_ids: &[u32],
    text: &str,
    source: &str,
) -> Result<Option<Vec<u32>>, Error> {
    // Every NUMA matrix must name existing nodes, each once: hwloc silently
    // drops such a matrix, which would hide a broken file behind "no distances".
    let mut checked: Vec<(usize, Vec<u32>)> = Vec::new();
    for (i, d) in distances.iter().enumerate() {
        if d.obj_type == "NUMANode" {
            let ids = distances2_node_ids(d, objs, numa, node_ids, text, source)?;
            checked.push((i, ids));
        }
    }
    if numa.is_empty() {
        return Ok(None);
    }
    let order = NodeOrder::new(node_ids);
    // hwloc kind bits: 4 = means latency, 8 = means bandwidth.
    let candidates = checked.iter().filter(|(i, _)| distances[*i].kind & 8 == 0);
    let chosen = candidates
        .clone()
        .find(|(i, _)| distances[*i].name == "NUMALatency")
        .or_else(|| candidates.clone().next());
    if let Some((i, ids)) = chosen {
        let d = &mut distances[*i];
        let at = d.pos;
        let err = |m: String| Error::at_line(source, line_of(text, at), m);
        return v2_matrix(d, ids, &order, err);
    }
    // hwloc v1 `<distances>` in the root object. hwloc 2 reads each one with
    // a row per NUMA node as NUMA latencies, nodes in document order, in
    // file order, whatever its `relative_depth`. That depth means two
    // things: hwloc 1.x gives the depth of the matrix's objects in the
    // file's own tree, hwloc 2 writing v1 counts a NUMA matrix from the
    // object its nodes are attached to, which the v1 tree puts below the
    // node, so there a matrix over as many packages has the nodes' depth
    // (hwloc's 16amd64-4distances.v2tov1.xml). So a file hwloc 2 wrote takes
    // its first such matrix, as hwloc reads it; a 1.x file the one at the
    // nodes' depth, then the first.
    let n = numa.len();
    // The depth every node is at, if the nodes are all at one depth and
    // alone there.
    let numa_depth = objs[numa[0]].depth;
    let nodes_fill_depth = numa.iter().all(|&i| objs[i].depth == numa_depth)
        && objs.iter().filter(|o| o.depth == numa_depth).count() == n;
    let fits = |d: &&V1Distances| d.at_root && d.nbobjs == Some(n) && d.depth > 0 && d.base > 0.0;
    let v1_distances = v1.matrices;
    let by_depth = !written_by_hwloc2(v1_distances, v1.hwloc_version);
    let chosen = v1_distances
        .iter()
        .filter(fits)
        .find(|d| by_depth && nodes_fill_depth && d.depth == numa_depth)
        .or_else(|| v1_distances.iter().find(fits));
    let Some(d) = chosen else {
        return Ok(None);
    };
    if n > MAX_DISTANCE_NODES {
        return Err(Error::at_line(
            source,
            line_of(text, d.pos),
            format!(
                "distances over {n} NUMA nodes: distances are kept for at most \
                 {MAX_DISTANCE_NODES} nodes"
            ),
        ));
    }
    v1_matrix(d, node_ids, &order, text, source).map(Some)
}

/// A file's hwloc v1 `<distances>` and the root's `hwlocVersion` info.
#[derive(Clone, Copy)]
pub(super) struct V1Matrices<'a> {
    pub(super) matrices: &'a [V1Distances],
    pub(super) hwloc_version: Option<&'a str>,
}

/// Whether hwloc 2 wrote these v1 matrices. hwloc 1.x stores a matrix
/// divided by its smallest value, which it writes as `latency_base`, so each
/// 1.x matrix holds a 1 (src/distances.c); hwloc 2 writes `latency_base`
/// 1 and the values themselves (Linux's smallest is 10). A file of 1.x-like
/// matrices with base 1 only is told by the `hwlocVersion` the discovering
/// hwloc recorded.
fn written_by_hwloc2(v1_distances: &[V1Distances], hwloc_version: Option<&str>) -> bool {
    let smallest = |d: &V1Distances| d.values.iter().copied().fold(f64::INFINITY, f64::min);
    let raw = v1_distances
        .iter()
        .any(|d| d.base == 1.0 && !d.values.is_empty() && smallest(d) != 1.0);
    let scaled = v1_distances.iter().any(|d| d.base != 1.0);
    let major = hwloc_version
        .and_then(|v| v.trim().split('.').next()?.parse::<u32>().ok())
        .unwrap_or(1);
    raw || (!scaled && major >= 2)
}

/// Each node id's position in the model (nodes sorted by id).
struct NodeOrder {
    sorted: Vec<u32>,
}

impl NodeOrder {
    fn new(node_ids: &[u32]) -> Self {
        let mut sorted = node_ids.to_vec();
        sorted.sort_unstable();
        NodeOrder { sorted }
    }

    fn pos(&self, id: u32) -> Option<usize> {
        self.sorted.binary_search(&id).ok()
    }

    fn len(&self) -> usize {
        self.sorted.len()
    }
}

/// A `<distances2>` matrix over the nodes `ids` (its order) in model order;
/// None if it covers only some nodes (hwloc keeps those after restricting a
/// topology, and they cannot fill the model's matrix). Each node's model
/// position is looked up once, not once per entry of its row and column.
fn v2_matrix(
    d: &mut Distances,
    ids: &[u32],
    order: &NodeOrder,
    err: impl Fn(String) -> Error,
) -> Result<Option<Vec<u32>>, Error> {
    let (n, k) = (order.len(), ids.len());
    if k != n {
        return Ok(None);
    }
    let pos: Vec<usize> = ids
        .iter()
        .map(|&id| {
            order.pos(id).ok_or_else(|| {
                err(format!(
                    "distances2 names NUMA node P#{id} that does not exist"
                ))
            })
        })
        .collect::<Result<_, _>>()?;
    if let Some((_, v)) = d.wide {
        return Err(err(format!("distance {v} does not fit 32 bits")));
    }
    // Listed in the model's order (as hwloc and our writer list them): the
    // values are the matrix.
    if pos.iter().enumerate().all(|(i, &p)| i == p) {
        return Ok(Some(std::mem::take(&mut d.values)));
    }
    let mut matrix = vec![0u32; n * n];
    for (&pa, row) in pos.iter().zip(d.values.chunks_exact(k)) {
        let out = &mut matrix[pa * n..(pa + 1) * n];
        for (&pc, &v) in pos.iter().zip(row) {
            out[pc] = v;
        }
    }
    Ok(Some(matrix))
}

/// hwloc v1: the matrix of `d`, whose rows and columns are the NUMA nodes
/// `node_ids` in document order (as hwloc reads it).
fn v1_matrix(
    d: &V1Distances,
    node_ids: &[u32],
    order: &NodeOrder,
    text: &str,
    source: &str,
) -> Result<Vec<u32>, Error> {
    let n = node_ids.len();
    let err = |m: String| Error::at_line(source, line_of(text, d.pos), m);
    if d.values.len() != n * n {
        return Err(err(format!(
            "distances has {} values for {n} objects",
            d.values.len()
        )));
    }
    // Model position of each node, in the matrix's order.
    let pos: Vec<usize> = node_ids.iter().filter_map(|&id| order.pos(id)).collect();
    let mut matrix = vec![0u32; n * n];
    for (a, &pa) in pos.iter().enumerate() {
        for (c, &pc) in pos.iter().enumerate() {
            let v = (d.values[a * n + c] * d.base).round();
            if v > u32::MAX as f64 {
                return Err(err(format!(
                    "latency {} times latency_base {} does not fit 32 bits",
                    d.values[a * n + c],
                    d.base
                )));
            }
            matrix[pa * n + pc] = v as u32;
        }
    }
    Ok(matrix)
}

/// The node ids a NUMA `<distances2>` names, in its order, after checking that
/// `nbobjs`, `<indexes>` and `<u64values>` agree, that every index names a
/// NUMA node of the file, and that none is named twice. Errors name the
/// element's line.
pub(super) fn distances2_node_ids(
    d: &Distances,
    objs: &[RawObj],
    numa: &[usize],
    node_ids: &[u32],
    text: &str,
    source: &str,
) -> Result<Vec<u32>, Error> {
    let err = |m: String| Error::at_line(source, line_of(text, d.pos), m);
    let k = d.indexes.len();
    if let Some(nb) = d.nbobjs {
        if nb != k {
            return Err(err(format!(
                "distances2 has nbobjs=\"{nb}\" but lists {k} indexes"
            )));
        }
    }
    if d.values.len() != k * k {
        return Err(err(format!(
            "distances2 has {} values for {k} objects (expected {})",
            d.values.len(),
            k * k
        )));
    }
    if k > numa.len() {
        return Err(err(format!(
            "distances2 covers {k} NUMA nodes but the topology has {}",
            numa.len()
        )));
    }
    // Lookups by set and map: a matrix over thousands of nodes names each once.
    let known: HashSet<u32> = node_ids.iter().copied().collect();
    let mut by_gp: HashMap<u64, u32> = HashMap::new();
    if d.gp_indexing {
        for (&i, &id) in numa.iter().zip(node_ids) {
            if let Some(gp) = objs[i].gp_index {
                by_gp.entry(gp).or_insert(id);
            }
        }
    }
    let mut ids: Vec<u32> = Vec::with_capacity(k);
    let mut seen: HashSet<u32> = HashSet::with_capacity(k);
    for &ix in &d.indexes {
        let id = if d.gp_indexing {
            by_gp
                .get(&ix)
                .copied()
                .ok_or_else(|| err(format!("distances2 names unknown NUMA gp_index {ix}")))?
        } else {
            u32::try_from(ix)
                .ok()
                .filter(|id| known.contains(id))
                .ok_or_else(|| {
                    err(format!(
                        "distances2 names NUMA node P#{ix}, which does not exist"
                    ))
                })?
        };
        if !seen.insert(id) {
            return Err(err(format!("distances2 names NUMA node P#{id} twice")));
        }
        ids.push(id);
    }
    Ok(ids)
}
