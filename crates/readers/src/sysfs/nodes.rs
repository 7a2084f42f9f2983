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
    let (mut distance, mut meminfo) = (EveryNode::new("distance"), EveryNode::new("meminfo"));
    for (i, &id) in ids.iter().enumerate() {
        let dir = format!("{NODE_DIR}/node{id}");
        let (mask, mask_path) = node_cpus(files, &dir)?;
        // A node's CPUs are possible CPUs by the kernel's definition, even when a
        // trimmed dump lacks their directories or its `possible` file.
        possible.or_assign(&mask);
        let row = match (distance.asked, ids.len() > MAX_DISTANCE_NODES) {
            (false, _) => None,
            (true, true) => refuse_distances(files, &dir, ids.len())?,
            (true, false) => distance_row(files, &dir)?,
        };
        distance.seen(files, &ids, row.is_some())?;
        rows.push(row);
        if mask.intersects(&in_nodes) {
            left_out.push((id, mask_path, mask));
            continue;
        }
        in_nodes.or_assign(&mask);
        let memory = match meminfo.asked {
            true => node_memory(files, &dir)?,
            false => None,
        };
        meminfo.seen(files, &ids, memory.is_some())?;
        builder.add_node(id, mask, memory.flatten());
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

/// A file the kernel writes for every node or for none (`distance`,
/// `meminfo`): it registers every node device with the same attribute
/// groups (drivers/base/node.c, `register_node`: `node_dev_groups`, no
/// `is_visible` for these two). When the first node lacks the file and
/// the last lacks it too, the nodes between are not asked: a failed open
/// each saved (util-linux's dumps keep only `cpumap`, for up to 128
/// nodes). When only the first lacks it, every node is asked, so that such
/// damage is still the error naming the file; a dump holding the file
/// only on nodes between the first and the last reads as having none.
struct EveryNode {
    name: &'static str,
    /// Whether the next node is asked for the file.
    asked: bool,
    /// Whether a node was asked already.
    first_seen: bool,
}

impl EveryNode {
    fn new(name: &'static str) -> EveryNode {
        EveryNode {
            name,
            asked: true,
            first_seen: false,
        }
    }

    /// After a node was asked (`found`: whether it had the file): on the
    /// first node without it, whether the others are asked.
    fn seen(&mut self, files: &Files, ids: &[u32], found: bool) -> Result<(), Error> {
        if std::mem::replace(&mut self.first_seen, true) || found {
            return Ok(());
        }
        let last = ids[ids.len() - 1];
        self.asked = ids.len() > 1
            && files
                .root
                .exists(&format!("{NODE_DIR}/node{last}/{}", self.name))?;
        Ok(())
    }
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

/// A node's memory in bytes, from its `meminfo`; `None` without the file.
fn node_memory(files: &Files, dir: &str) -> Result<Option<Option<u64>>, Error> {
    let path = format!("{dir}/meminfo");
    match files.text(&path)? {
        Some(text) => parse_node_memtotal(&text, &files.root.describe(&path)).map(Some),
        None => Ok(None),
    }
}

/// With more nodes than the model keeps distances for, a node's `distance`
/// file is an error naming it, found before any row is kept; `None` when
/// the node has none.
fn refuse_distances(
    files: &Files,
    dir: &str,
    nodes: usize,
) -> Result<Option<(String, Vec<u32>)>, Error> {
    let path = format!("{dir}/distance");
    if files.text(&path)?.is_none() {
        return Ok(None);
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

    /// Three single-thread cores (CPUs 0-2), one per node 0-2, each
    /// node's `distance` and `meminfo` written where `has` says (node by
    /// node); `Err` is the reader's error and the path it names.
    fn read_nodes_of(has: [(bool, bool); 3]) -> Result<topology::Topology, (String, String)> {
        let dir = tempfile::tempdir().unwrap();
        let write = |path: &str, text: &str| {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        let cpu = super::super::CPU_DIR;
        for f in ["possible", "present", "online"] {
            write(&format!("{cpu}/{f}"), "0-2\n");
        }
        for (c, &(distance, meminfo)) in has.iter().enumerate() {
            let topo = format!("{cpu}/cpu{c}/topology");
            write(&format!("{topo}/physical_package_id"), "0\n");
            write(&format!("{topo}/core_id"), &format!("{c}\n"));
            write(&format!("{topo}/core_cpus_list"), &format!("{c}\n"));
            write(&format!("{topo}/package_cpus_list"), "0-2\n");
            let node = format!("{NODE_DIR}/node{c}");
            write(&format!("{node}/cpulist"), &format!("{c}\n"));
            if distance {
                let row: Vec<&str> = (0..3).map(|o| if o == c { "10" } else { "20" }).collect();
                write(&format!("{node}/distance"), &format!("{}\n", row.join(" ")));
            }
            if meminfo {
                let kb = (c + 1) * 1024;
                write(
                    &format!("{node}/meminfo"),
                    &format!("Node {c} MemTotal: {kb} kB\n"),
                );
            }
        }
        let root = dir.path().display().to_string();
        crate::sysfs::read_dir(dir.path()).map_err(|e| (e.source.replace(&root, ""), e.message))
    }

    fn memory(t: &topology::Topology) -> Vec<Option<u64>> {
        t.nodes().iter().map(|n| n.memory_bytes).collect()
    }

    /// The kernel writes `distance` and `meminfo` for every node or for
    /// none: a dump that lacks them on the first node and the last is read
    /// without them, and the nodes between are not asked (a file only
    /// node 1 holds is not seen).
    #[test]
    fn files_the_first_and_last_node_lack_are_not_asked_of_the_others() {
        let t = read_nodes_of([(false, false), (true, true), (false, false)]).unwrap();
        assert!(t.distances().is_empty());
        assert_eq!(memory(&t), [None, None, None]);
        let all = read_nodes_of([(true, true); 3]).unwrap();
        assert_eq!(memory(&all), [Some(1 << 20), Some(2 << 20), Some(3 << 20)]);
        assert_eq!(all.distances(), [10, 20, 20, 20, 10, 20, 20, 20, 10]);
    }

    /// Only the first node lacking them is damage, not a kernel that
    /// writes none: every node is asked, a missing row is still the error
    /// naming it, and the other nodes' memory is read.
    #[test]
    fn files_only_the_first_node_lacks_are_asked_of_every_node() {
        let (file, message) =
            read_nodes_of([(false, true), (true, true), (true, true)]).unwrap_err();
        assert!(file.ends_with("node/node0/distance"), "{file}");
        assert!(message.contains("missing"), "{message}");
        let t = read_nodes_of([(true, false), (true, true), (true, true)]).unwrap();
        assert_eq!(memory(&t), [None, Some(2 << 20), Some(3 << 20)]);
    }

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
