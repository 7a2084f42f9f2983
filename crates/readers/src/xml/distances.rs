//! NUMA distance matrices: hwloc v2 `<distances2>` and v1 `<distances>`,
//! checked and turned into the model's matrix.

use std::collections::HashMap;

use super::line_of;
use super::raw::{Distances, Raw, RawObj};
use crate::Error;

pub(super) fn numa_distances(
    raw: &Raw,
    objs: &[RawObj],
    numa: &[usize],
    node_ids: &[u32],
    text: &str,
    source: &str,
) -> Result<Option<Vec<u32>>, Error> {
    let n = numa.len();
    // Every NUMA matrix must name existing nodes, each once: hwloc silently
    // drops such a matrix, which would hide a broken file behind "no distances".
    let mut checked: Vec<(&Distances, Vec<u32>)> = Vec::new();
    for d in raw.distances.iter().filter(|d| d.obj_type == "NUMANode") {
        let ids = distances2_node_ids(d, objs, numa, node_ids, text, source)?;
        checked.push((d, ids));
    }
    if n == 0 {
        return Ok(None);
    }
    let mut sorted: Vec<u32> = node_ids.to_vec();
    sorted.sort_unstable();
    let pos_of = |id: u32| sorted.binary_search(&id).ok();
    // hwloc kind bits: 4 = means latency, 8 = means bandwidth.
    let candidates = checked.iter().filter(|(d, _)| d.kind & 8 == 0);
    let chosen = candidates
        .clone()
        .find(|(d, _)| d.name == "NUMALatency")
        .or_else(|| candidates.clone().next());
    if let Some((d, ids)) = chosen {
        let err = |m: String| Error::at_line(source, line_of(text, d.pos), m);
        let k = ids.len();
        if k != n {
            // A matrix over a subset of the nodes (hwloc keeps those after
            // restricting a topology) cannot fill the model's.
            return Ok(None);
        }
        let mut matrix = vec![0u32; n * n];
        for (a, &ia) in ids.iter().enumerate() {
            for (c, &ic) in ids.iter().enumerate() {
                let (Some(pa), Some(pc)) = (pos_of(ia), pos_of(ic)) else {
                    return Err(err(format!(
                        "distances2 names NUMA node P#{} that does not exist",
                        if pos_of(ia).is_none() { ia } else { ic }
                    )));
                };
                let v = d.values[a * k + c];
                matrix[pa * n + pc] = u32::try_from(v)
                    .map_err(|_| err(format!("distance {v} does not fit 32 bits")))?;
            }
        }
        return Ok(Some(matrix));
    }
    // hwloc v1: a matrix over the objects at one depth, if those are the nodes.
    let node_of: HashMap<usize, usize> = numa.iter().enumerate().map(|(n, &i)| (i, n)).collect();
    for d in &raw.v1_distances {
        let at_depth: Vec<usize> = (0..objs.len())
            .filter(|&i| objs[i].depth == d.depth)
            .collect();
        if at_depth.len() != n || at_depth.iter().any(|i| !node_of.contains_key(i)) {
            continue;
        }
        let err = |m: String| Error::at_line(source, line_of(text, d.pos), m);
        if d.values.len() != n * n {
            return Err(err(format!(
                "distances has {} values for {n} objects",
                d.values.len()
            )));
        }
        // Model position of each object at the depth, in the matrix's order.
        let pos: Vec<usize> = at_depth
            .iter()
            .map(|i| pos_of(node_ids[node_of[i]]).expect("known"))
            .collect();
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
        return Ok(Some(matrix));
    }
    Ok(None)
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
    let mut ids: Vec<u32> = Vec::with_capacity(k);
    for &ix in &d.indexes {
        let id = if d.gp_indexing {
            numa.iter()
                .position(|&i| objs[i].gp_index == Some(ix))
                .map(|p| node_ids[p])
                .ok_or_else(|| err(format!("distances2 names unknown NUMA gp_index {ix}")))?
        } else {
            u32::try_from(ix)
                .ok()
                .filter(|id| node_ids.contains(id))
                .ok_or_else(|| {
                    err(format!(
                        "distances2 names NUMA node P#{ix}, which does not exist"
                    ))
                })?
        };
        if ids.contains(&id) {
            return Err(err(format!("distances2 names NUMA node P#{id} twice")));
        }
        ids.push(id);
    }
    Ok(ids)
}
