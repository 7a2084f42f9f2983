//! Device tree: ITS nodes (`compatible = "arm,gic-v3-its"`, `msi-controller`),
//! their `numa-node-id`, memory nodes, CPU nodes and the
//! `numa-distance-map-v1` distance matrix, from a flattened device tree blob.
//!
//! Linux's rules followed here (drivers/of/of_numa.c, irq-gic-v3-its.c): an
//! ITS's node is the `numa-node-id` of the ITS node or, failing that, of its
//! nearest ancestor that has one (`of_node_to_nid()`); a value that names no
//! node the CPUs or memory name gives none (`NUMA_NO_NODE`). Without any
//! `numa-node-id` on memory, the machine is one node, 0.

use std::collections::BTreeSet;
use std::path::Path;

use flat_device_tree::node::FdtNode;
use flat_device_tree::Fdt;

use crate::{Error, Its, MemRange, Platform, LOCAL_DISTANCE, MAX_NODES, REMOTE_DISTANCE};

/// Deepest node nesting accepted (real trees are under 10 deep).
const MAX_DEPTH: usize = 64;
/// Most nodes visited (a 16384-CPU tree has about 20000).
const MAX_NODES_VISITED: usize = 1 << 20;

/// Reads and parses a DTB file.
pub fn read_file(path: &Path) -> Result<Platform, Error> {
    let bytes = crate::read_file(path)?;
    parse(&bytes, &path.display().to_string())
}

/// A `numa-node-id` value and the path of the node that carries it.
type NodeId = (u32, String);

/// What the walk collects, in tree order.
#[derive(Default)]
struct Walk {
    /// (path, nearest `numa-node-id`, base): `None` means none on the ITS
    /// node or any ancestor.
    its: Vec<(String, Option<NodeId>, u64)>,
    /// (path, `numa-node-id`, base, length).
    memory: Vec<(String, Option<u32>, u64, u64)>,
    /// `numa-node-id` of each CPU node, in tree order.
    cpus: Vec<Option<u32>>,
    /// (from, to, distance) triplets from the distance map.
    distances: Vec<(u32, u32, u32)>,
    visited: usize,
}

/// Cells of `reg` in a node's children (Linux inherits them from the nearest
/// ancestor that sets them; 1 and 1 above the root).
#[derive(Clone, Copy)]
struct Cells {
    address: u32,
    size: u32,
}

/// Parses a DTB; `file` names it in errors.
pub fn parse(bytes: &[u8], file: &str) -> Result<Platform, Error> {
    let fdt = Fdt::new(bytes).map_err(|e| {
        Error::new(
            file,
            "header",
            format!("not a flattened device tree blob ({e:?})"),
        )
    })?;
    let root = fdt
        .find_node("/")
        .ok_or_else(|| Error::new(file, "/", "no root node"))?;
    let mut walk = Walk::default();
    let cells = Cells {
        address: 1,
        size: 1,
    };
    visit(root, "", None, cells, 0, file, &mut walk)?;
    build(walk, file)
}

fn visit(
    node: FdtNode<'_, '_>,
    path: &str,
    inherited: Option<NodeId>,
    cells: Cells,
    depth: usize,
    file: &str,
    walk: &mut Walk,
) -> Result<(), Error> {
    walk.visited += 1;
    if depth > MAX_DEPTH || walk.visited > MAX_NODES_VISITED {
        return Err(Error::new(file, path, "tree too deep or too large"));
    }
    let here = if path.is_empty() {
        "/".to_string()
    } else {
        path.to_string()
    };
    let nid = match node.property("numa-node-id") {
        Some(p) => Some((cell(p.value, &here, "numa-node-id", file)?, here.clone())),
        None => None,
    };
    let own = nid.as_ref().map(|(n, _)| *n);
    let near = nid.or(inherited);
    let device_type = node.property("device_type").map(|p| p.value);
    if device_type == Some(b"memory\0") {
        for (base, len) in reg(node, cells, &here, file)? {
            walk.memory.push((here.clone(), own, base, len));
        }
    }
    if device_type == Some(b"cpu\0") {
        walk.cpus.push(own);
    }
    if is_its(node) {
        let (base, _) = reg(node, cells, &here, file)?
            .into_iter()
            .next()
            .ok_or_else(|| {
                Error::new(
                    file,
                    format!("{here} reg"),
                    "an ITS needs its registers' address",
                )
            })?;
        walk.its.push((here.clone(), near.clone(), base));
    }
    if compatible(node).any(|c| c == "numa-distance-map-v1") {
        let m = node
            .property("distance-matrix")
            .ok_or_else(|| Error::new(file, format!("{here} distance-matrix"), "missing"))?;
        walk.distances.extend(triplets(m.value, &here, file)?);
    }
    let inner = Cells {
        address: own_cells(node, "#address-cells", &here, file)?.unwrap_or(cells.address),
        size: own_cells(node, "#size-cells", &here, file)?.unwrap_or(cells.size),
    };
    for child in node.children() {
        let p = format!("{path}/{}", child.name);
        visit(child, &p, near.clone(), inner, depth + 1, file, walk)?;
    }
    Ok(())
}

fn compatible<'a>(node: FdtNode<'_, 'a>) -> impl Iterator<Item = &'a str> {
    let value = node.property("compatible").map(|p| p.value).unwrap_or(&[]);
    value
        .split(|&b| b == 0)
        .filter_map(|s| std::str::from_utf8(s).ok())
}

/// Linux probes an ITS node that is compatible, available and an MSI controller.
fn is_its(node: FdtNode<'_, '_>) -> bool {
    let status = node.property("status").map(|p| p.value);
    let available = matches!(status, None | Some(b"okay\0") | Some(b"ok\0"));
    available
        && node.property("msi-controller").is_some()
        && compatible(node).any(|c| c == "arm,gic-v3-its")
}

/// A one-cell (32-bit big-endian) property.
fn cell(value: &[u8], path: &str, name: &str, file: &str) -> Result<u32, Error> {
    let bytes: [u8; 4] = value.try_into().map_err(|_| {
        Error::new(
            file,
            format!("{path} {name}"),
            format!("{} bytes, not one 32-bit cell", value.len()),
        )
    })?;
    Ok(u32::from_be_bytes(bytes))
}

fn own_cells(
    node: FdtNode<'_, '_>,
    name: &str,
    path: &str,
    file: &str,
) -> Result<Option<u32>, Error> {
    let Some(p) = node.property(name) else {
        return Ok(None);
    };
    let n = cell(p.value, path, name, file)?;
    // Linux's OF_MAX_ADDR_CELLS; PCI buses use 3.
    if n > 4 {
        return Err(Error::new(
            file,
            format!("{path} {name}"),
            format!("{n}: more than four cells"),
        ));
    }
    Ok(Some(n))
}

/// (address, length) pairs of a node's `reg`.
fn reg(
    node: FdtNode<'_, '_>,
    cells: Cells,
    path: &str,
    file: &str,
) -> Result<Vec<(u64, u64)>, Error> {
    let value = node.property("reg").map(|p| p.value).unwrap_or(&[]);
    let (a, s) = (cells.address as usize * 4, cells.size as usize * 4);
    if a == 0 || a > 8 || s > 8 {
        return Err(Error::new(
            file,
            format!("{path} reg"),
            format!(
                "({}, {}) address and size cells: an ITS or memory node needs 1 or 2 of each",
                cells.address, cells.size
            ),
        ));
    }
    if !value.len().is_multiple_of(a + s) {
        return Err(Error::new(
            file,
            format!("{path} reg"),
            format!(
                "{} bytes, not whole ({}, {}) cell pairs",
                value.len(),
                cells.address,
                cells.size
            ),
        ));
    }
    let num = |b: &[u8]| b.iter().fold(0u64, |x, &y| x << 8 | y as u64);
    let pairs: Vec<(u64, u64)> = value
        .chunks(a + s)
        .map(|c| (num(&c[..a]), num(&c[a..])))
        .collect();
    if let Some(&(b, l)) = pairs.iter().find(|&&(b, l)| b.checked_add(l).is_none()) {
        return Err(Error::new(
            file,
            format!("{path} reg"),
            format!("{b:#x} + {l:#x} wraps around"),
        ));
    }
    Ok(pairs)
}

/// (node, node, distance) triplets of `distance-matrix`, checked as Linux does.
fn triplets(value: &[u8], path: &str, file: &str) -> Result<Vec<(u32, u32, u32)>, Error> {
    let field = format!("{path} distance-matrix");
    if !value.len().is_multiple_of(12) {
        return Err(Error::new(
            file,
            field,
            format!(
                "{} bytes, not whole (from, to, distance) triplets",
                value.len()
            ),
        ));
    }
    let mut out = Vec::new();
    for t in value.chunks(12) {
        let w = |i: usize| u32::from_be_bytes([t[i], t[i + 1], t[i + 2], t[i + 3]]);
        let (a, b, d) = (w(0), w(4), w(8));
        let bad = if a >= MAX_NODES || b >= MAX_NODES {
            Some(format!("node {} above {}", a.max(b), MAX_NODES - 1))
        } else if d > 255 {
            Some(format!("distance {d} above 255"))
        } else if (a == b && d != LOCAL_DISTANCE as u32) || (a != b && d <= LOCAL_DISTANCE as u32) {
            Some(format!(
                "distance[{a} -> {b}] = {d}: 10 to itself, above 10 to others"
            ))
        } else {
            None
        };
        if let Some(why) = bad {
            return Err(Error::new(file, field, why));
        }
        out.push((a, b, d));
    }
    Ok(out)
}

/// Turns what the walk found into the platform, as Linux's of_numa does.
fn build(walk: Walk, file: &str) -> Result<Platform, Error> {
    let numa = walk.memory.iter().any(|m| m.1.is_some());
    let mut nodes = BTreeSet::new();
    let mut memory = Vec::new();
    for (path, nid, base, len) in &walk.memory {
        let node = match (numa, nid) {
            (false, _) => 0,
            (true, Some(n)) if *n < MAX_NODES => *n,
            (true, Some(n)) => {
                return Err(Error::new(
                    file,
                    format!("{path} numa-node-id"),
                    format!("{n} is above {}", MAX_NODES - 1),
                ))
            }
            (true, None) => {
                return Err(Error::new(
                    file,
                    format!("{path} numa-node-id"),
                    "missing while other memory nodes have one (Linux turns NUMA off)",
                ))
            }
        };
        nodes.insert(node);
        memory.push(MemRange {
            node,
            base: *base,
            len: *len,
        });
    }
    if numa {
        nodes.extend(walk.cpus.iter().flatten().filter(|&&n| n < MAX_NODES));
    } else {
        nodes.insert(0);
    }
    let nodes: Vec<u32> = nodes.into_iter().collect();
    let its = walk
        .its
        .iter()
        .enumerate()
        .map(|(i, (path, near, base))| its(i as u32, path, near, *base, &nodes, numa))
        .collect();
    let (boot_node, boot_node_placed) = match walk.cpus.first() {
        Some(Some(n)) if numa && nodes.contains(n) => (*n, true),
        _ => (nodes.first().copied().unwrap_or(0), false),
    };
    Ok(Platform {
        source: file.to_string(),
        its,
        memory,
        distance: distances(&nodes, &walk.distances, numa),
        nodes,
        boot_node,
        boot_node_placed,
    })
}

fn its(
    id: u32,
    path: &str,
    near: &Option<(u32, String)>,
    base: u64,
    nodes: &[u32],
    numa: bool,
) -> Its {
    let name = path.rsplit('/').next().unwrap_or(path).to_string();
    let (node, node_from) = match near {
        None => (None, format!("no numa-node-id on {path} or above it")),
        Some((n, at)) if numa && nodes.contains(n) => (Some(*n), format!("numa-node-id = <{n}> on {at}")),
        Some((n, at)) => (
            None,
            format!("numa-node-id = <{n}> on {at} names no node with CPUs or memory (Linux: NUMA_NO_NODE)"),
        ),
    };
    Its {
        name,
        id,
        base,
        node,
        node_from,
    }
}

/// The distance matrix over `nodes`; later triplets win, and each also sets
/// the reverse direction when that is not given, as Linux does.
fn distances(nodes: &[u32], triplets: &[(u32, u32, u32)], numa: bool) -> Vec<u8> {
    if !numa || triplets.is_empty() {
        return Vec::new();
    }
    let k = nodes.len();
    let at = |n: u32| nodes.iter().position(|&x| x == n);
    let mut d: Vec<u8> = (0..k * k)
        .map(|i| {
            if i / k == i % k {
                LOCAL_DISTANCE
            } else {
                REMOTE_DISTANCE
            }
        })
        .collect();
    let given: BTreeSet<(u32, u32)> = triplets.iter().map(|&(a, b, _)| (a, b)).collect();
    for &(a, b, v) in triplets {
        if let (Some(i), Some(j)) = (at(a), at(b)) {
            d[i * k + j] = v as u8;
            if !given.contains(&(b, a)) {
                d[j * k + i] = v as u8;
            }
        }
    }
    d
}
