//! NUMA nodes: `sys/devices/system/node/nodeN/` — CPUs (cpulist, cpumap, or
//! `cpuN` links), memory size and the distance matrix.
//!
//! The phases: the node numbers ([`node_ids`]); per node its CPUs
//! ([`node_cpus`]; a node repeating an earlier node's CPUs is left out), its memory
//! ([`node_memory`]) and its distance row ([`distance_row`]); then the
//! matrix from the rows ([`node_distances`]).

use cpumask::{CpuMask, MAX_CPUS};
use topology::{TopologyBuilder, MAX_DISTANCE_NODES};

use super::vfs::Root;
use super::{entry_number, Files, NODE_DIR};
use crate::Error;

/// Reads every node into `builder` and adds their CPUs to `possible`. The
/// kernel lists every online CPU in the node it maps the CPU to, and makes a
/// `nodeN` directory for each online node; a CPU mapped to a node that is
/// possible but offline (powerpc maps a CPU to any *possible* node; a POWER
/// LPAR can boot with node 0 offline, hwloc's `offline-cpu0-node0`) is in no
/// directory's list. Such a CPU is read without a node, as hwloc leaves it.
/// An online CPU in no list while every possible node has its directory
/// (or without `node/possible` to tell) means a node's CPU file is missing or
/// damaged: an error.
///
/// A node whose CPUs were already listed by a lower-numbered node is left out,
/// memory, distance row and column included: that is hwloc's rule
/// (`look_sysfsnode` ignores a node whose cpuset intersects the nodes before
/// it), for firmware that gave every node every CPU (hwloc's
/// `8em64t-2s2ca2c-buggynuma`). Leaving a node out must not leave an online
/// CPU in no node: then the overlap cannot be read as one node per CPU, and
/// the error names the file of the node left out.
pub(super) fn read_nodes(
    files: &Files,
    online: &CpuMask,
    possible: &mut CpuMask,
    builder: &mut TopologyBuilder,
) -> Result<(), Error> {
    let ids = node_ids(files.root)?;
    if ids.is_empty() {
        return Ok(());
    }
    let mut in_nodes = CpuMask::new();
    let mut kept = Vec::with_capacity(ids.len());
    // The nodes left out: (id, CPU file, CPUs), for the error below.
    let mut left_out: Vec<(u32, String, CpuMask)> = Vec::new();
    let mut rows: Vec<Option<(String, Vec<u32>)>> = Vec::with_capacity(ids.len());
    for (i, &id) in ids.iter().enumerate() {
        let dir = format!("{NODE_DIR}/node{id}");
        let (mask, mask_path) = node_cpus(files, &dir)?;
        // A node's CPUs are possible CPUs by the kernel's definition, even when a
        // trimmed dump lacks their directories or its `possible` file.
        possible.or_assign(&mask);
        if ids.len() > MAX_DISTANCE_NODES {
            refuse_distances(files, &dir, ids.len())?;
            rows.push(None);
        } else {
            rows.push(distance_row(files, &dir)?);
        }
        if mask.intersects(&in_nodes) {
            left_out.push((id, mask_path, mask));
            continue;
        }
        in_nodes.or_assign(&mask);
        builder.add_node(id, mask, node_memory(files, &dir)?);
        kept.push(i);
    }
    if let Some(matrix) = node_distances(files.root, &ids, rows)? {
        builder.distances(restrict(&matrix, ids.len(), &kept));
    }
    let Some(cpu) = online.and_not(&in_nodes).first() else {
        return Ok(());
    };
    // Blame a left-out node only for a CPU it listed.
    let orphaned = left_out.iter().find_map(|(id, path, mask)| {
        let cpu = mask.and(online).and_not(&in_nodes).first()?;
        Some((*id, path, mask.and(&in_nodes).first()?, cpu))
    });
    if orphaned.is_none() && offline_node(files, &ids)?.is_some() {
        return Ok(());
    }
    Err(match orphaned {
        Some((id, path, shared, cpu)) => Error::at_line(
            files.root.describe(path),
            1,
            format!(
                "CPU {shared} is already in node {}, so node {id} is left out (as hwloc \
                 does), which leaves online CPU {cpu} in no node",
                owner(files, &ids, shared)?
            ),
        ),
        None => Error::new(
            files.root.describe(NODE_DIR),
            format!(
                "online CPU {cpu} is in no node's cpulist or cpumap, and no possible node \
                 is offline (node/possible names none without a directory)"
            ),
        ),
    })
}

/// A node `node/possible` names that has no directory: an offline node, the
/// one the kernel may have mapped node-less CPUs to. `None` without the file.
fn offline_node(files: &Files, ids: &[u32]) -> Result<Option<usize>, Error> {
    let Some(possible) = files.list_mask(&format!("{NODE_DIR}/possible"))? else {
        return Ok(None);
    };
    Ok(possible
        .iter()
        .find(|&n| ids.binary_search(&(n as u32)).is_err()))
}

/// The lowest-numbered node of `ids` holding `cpu` (looked up again only
/// for an error message: no per-CPU table is kept while reading).
fn owner(files: &Files, ids: &[u32], cpu: usize) -> Result<u32, Error> {
    for &id in ids {
        if node_cpus(files, &format!("{NODE_DIR}/node{id}"))?
            .0
            .contains(cpu)
        {
            return Ok(id);
        }
    }
    Ok(ids[0])
}

/// The rows and columns `kept` of an `n` × `n` matrix.
fn restrict(matrix: &[u32], n: usize, kept: &[usize]) -> Vec<u32> {
    kept.iter()
        .flat_map(|&r| kept.iter().map(move |&c| matrix[r * n + c]))
        .collect()
}

/// The numbers of the `nodeN` directories, sorted.
fn node_ids(root: &Root) -> Result<Vec<u32>, Error> {
    let mut ids: Vec<u32> = Vec::new();
    for name in root.list(NODE_DIR)? {
        if let Some(n) = entry_number(root, NODE_DIR, &name, "node")? {
            let n = u32::try_from(n).map_err(|_| {
                Error::new(
                    root.describe(&format!("{NODE_DIR}/{name}")),
                    "node number out of range",
                )
            })?;
            ids.push(n);
        }
    }
    ids.sort_unstable();
    Ok(ids)
}

/// A node's CPUs and the file they came from: `cpumap` (what hwloc reads),
/// else `cpulist`, else on the oldest kernels the `cpuN` links in the node
/// directory.
fn node_cpus(files: &Files, dir: &str) -> Result<(CpuMask, String), Error> {
    let root = files.root;
    if let Some((mask, path)) = files.mask_and_path(dir, "cpulist", "cpumap")? {
        return Ok((mask.to_cpumask(), path));
    }
    let mut m = CpuMask::new();
    for name in root.list(dir)? {
        if let Some(c) = entry_number(root, dir, &name, "cpu")?.filter(|&c| c < MAX_CPUS as u64) {
            m.set(c as usize);
        }
    }
    Ok((m, dir.to_string()))
}

/// A node's memory in bytes, from its `meminfo`.
fn node_memory(files: &Files, dir: &str) -> Result<Option<u64>, Error> {
    let path = format!("{dir}/meminfo");
    match files.text(&path)? {
        Some(text) => parse_node_memtotal(&text, &files.root.describe(&path)),
        None => Ok(None),
    }
}

/// With more nodes than the model keeps distances for, a node's `distance`
/// file is an error naming it, found before any row is kept.
fn refuse_distances(files: &Files, dir: &str, nodes: usize) -> Result<(), Error> {
    let path = format!("{dir}/distance");
    if files.text(&path)?.is_none() {
        return Ok(());
    }
    Err(Error::new(
        files.root.describe(&path),
        format!(
            "{nodes} NUMA nodes with distances: distances are kept for at most \
             {MAX_DISTANCE_NODES} nodes"
        ),
    ))
}

/// A node's `distance` row with the path it came from, `None` if absent.
fn distance_row(files: &Files, dir: &str) -> Result<Option<(String, Vec<u32>)>, Error> {
    let path = format!("{dir}/distance");
    let Some(text) = files.text(&path)? else {
        return Ok(None);
    };
    let mut row = Vec::new();
    for word in text.split_whitespace() {
        row.push(word.parse::<u32>().map_err(|_| {
            Error::at_line(
                files.root.describe(&path),
                1,
                format!("expected a distance, found {word:?}"),
            )
        })?);
    }
    Ok(Some((path, row)))
}

/// The distance matrix from each node's `distance` row, in `ids` order.
///
/// The kernel prints one entry per *online* node, and a node directory exists
/// for each online node, so a row normally has one entry per directory. Some
/// kernels print one per *possible* node (`node/possible`) while some are
/// offline (a hot-removed or memory-less node 0 with the CPUs on node 1):
/// then the columns of the nodes present are picked out by position. A row of
/// any other length is an error naming it; so is a row missing while others
/// exist. Kernels without a firmware distance table print `0`: that means
/// "unknown", not a distance, so such a matrix is left out (as when no node
/// has a `distance` file at all).
fn node_distances(
    root: &Root,
    ids: &[u32],
    rows: Vec<Option<(String, Vec<u32>)>>,
) -> Result<Option<Vec<u32>>, Error> {
    if rows.iter().all(Option::is_none) {
        return Ok(None);
    }
    if let Some(i) = rows.iter().position(Option::is_none) {
        let path = format!("{NODE_DIR}/node{}/distance", ids[i]);
        return Err(Error::new(
            root.describe(&path),
            "missing, while other nodes have a distance row",
        ));
    }
    let rows: Vec<(String, Vec<u32>)> = rows.into_iter().flatten().collect();
    if rows.iter().any(|(_, row)| row.contains(&0)) {
        return Ok(None);
    }
    let n = ids.len();
    let columns = distance_columns(root, ids, rows.iter().map(|(_, r)| r.len()).max())?;
    let mut matrix = Vec::with_capacity(n * n);
    for (path, row) in rows {
        match &columns {
            Some((wide, cols)) if row.len() == *wide => matrix.extend(cols.iter().map(|&c| row[c])),
            _ if row.len() == n => matrix.extend(row),
            _ => {
                return Err(Error::at_line(
                    root.describe(&path),
                    1,
                    format!(
                        "{} distances for {n} nodes (neither one per node directory \
                         nor one per possible node)",
                        row.len()
                    ),
                ))
            }
        }
    }
    Ok(Some(matrix))
}

/// When rows carry one entry per possible node (`wide` entries), the position
/// of each present node's column; `None` when rows are one per node directory.
fn distance_columns(
    root: &Root,
    ids: &[u32],
    wide: Option<usize>,
) -> Result<Option<(usize, Vec<usize>)>, Error> {
    let Some(wide) = wide.filter(|&w| w != ids.len()) else {
        return Ok(None);
    };
    let files = Files { root, only: None };
    let possible_path = format!("{NODE_DIR}/possible");
    let Some(possible) = files.list_mask(&possible_path)? else {
        return Ok(None);
    };
    let possible: Vec<usize> = possible.iter().collect();
    if possible.len() != wide {
        return Ok(None);
    }
    let cols: Option<Vec<usize>> = ids
        .iter()
        .map(|&id| possible.iter().position(|&p| p == id as usize))
        .collect();
    Ok(cols.map(|c| (wide, c)))
}

/// `Node 0 MemTotal:       16439392 kB` → bytes.
fn parse_node_memtotal(text: &str, source: &str) -> Result<Option<u64>, Error> {
    for (i, line) in text.lines().enumerate() {
        let Some(pos) = line.find("MemTotal:") else {
            continue;
        };
        let rest = line[pos + "MemTotal:".len()..].trim();
        let mut words = rest.split_whitespace();
        let value = words.next().and_then(|v| v.parse::<u64>().ok());
        let unit = words.next().unwrap_or("kB");
        let mult = match unit {
            "kB" | "KB" | "k" => 1024,
            "B" => 1,
            "MB" => 1 << 20,
            _ => 0,
        };
        return match value.and_then(|v| v.checked_mul(mult)) {
            Some(bytes) if mult != 0 => Ok(Some(bytes)),
            _ => Err(Error::at_line(
                source,
                i + 1,
                format!("cannot parse memory size {rest:?}"),
            )),
        };
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_memtotal_is_read_in_bytes() {
        let text = "Node 0 MemTotal:       16439392 kB\nNode 0 MemFree: 1 kB\n";
        assert_eq!(
            parse_node_memtotal(text, "m").unwrap(),
            Some(16439392 * 1024)
        );
        assert_eq!(
            parse_node_memtotal("Node 0 MemTotal: lots kB\n", "m")
                .unwrap_err()
                .line,
            Some(1)
        );
    }
}
