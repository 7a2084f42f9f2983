//! ACPI: the MADT's GIC ITS entries, the SRAT's GIC ITS Affinity, Memory
//! Affinity and GICC Affinity structures, and the SLIT, from raw table files
//! (`/sys/firmware/acpi/tables/{APIC,SRAT,SLIT}`, or `acpidump -b` output).
//!
//! The header check, the structure walk, and the SRAT and SLIT layouts are
//! `acpitables`' (shared with the bare-metal kernel); this module reads the
//! MADT's GICC and GIC ITS entries over that walk (the `acpi` crate reaches a
//! MADT only through an `AcpiHandler` that maps physical memory, unsafe to
//! implement, and this crate forbids unsafe code) and applies Linux's rules.
//!
//! Linux's rules followed here (drivers/acpi/numa/srat.c, irq-gic-v3-its.c):
//! proximity domains become node ids by `acpitables::srat::ProximityMap` (in
//! the order first seen, CPU structures before memory ones); an ITS's node is
//! `pxm_to_node()` of the first GIC ITS Affinity naming its ID, and a domain
//! no CPU or memory named gives none (`NUMA_NO_NODE`): that structure cannot
//! create a node.

use std::collections::BTreeMap;
use std::path::Path;

use acpitables::srat::{self, Affinity, Entry, ProximityMap};
use acpitables::{slit, table, TableFault};

use crate::{Error, Its, MemRange, Platform, MAX_NODES};

/// One table file: its name (for errors) and bytes.
#[derive(Debug, Clone)]
pub struct Table {
    /// The file it came from.
    pub file: String,
    /// Its contents.
    pub bytes: Vec<u8>,
}

/// Reads `APIC` (the MADT), and `SRAT` and `SLIT` if present, from `dir`
/// (also `apic.dat` etc. as `acpidump -b` names them), and parses them.
pub fn read_dir(dir: &Path) -> Result<Platform, Error> {
    let find = |sig: &str| -> Result<Option<Table>, Error> {
        let lower = sig.to_ascii_lowercase();
        for name in [
            sig.to_string(),
            format!("{lower}.dat"),
            format!("{sig}.dat"),
            format!("{lower}.aml"),
        ] {
            let path = dir.join(&name);
            // Anything by that name is read (and refused if it is no regular
            // file), not skipped as absent.
            if path.symlink_metadata().is_ok() {
                let bytes = crate::read_file(&path)?;
                let file = path.display().to_string();
                return Ok(Some(Table { file, bytes }));
            }
        }
        Ok(None)
    };
    let madt = find("APIC")?.ok_or_else(|| {
        Error::new(
            &dir.display().to_string(),
            "MADT",
            "no APIC (or apic.dat) file: the MADT lists the ITSes",
        )
    })?;
    let srat = find("SRAT")?;
    let slit = find("SLIT")?;
    let mut p = parse(&madt, srat.as_ref(), slit.as_ref())?;
    p.source = dir.display().to_string();
    Ok(p)
}

/// Little-endian field reader over one MADT structure; `None` past its end.
fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}
fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// Checks a table's header (signature, length, checksum) and returns the
/// table cut to its stated length.
fn checked<'a>(t: &'a Table, sig: &str) -> Result<&'a [u8], Error> {
    let want = <[u8; 4]>::try_from(sig.as_bytes()).unwrap_or(*b"????");
    table::check_header(&t.bytes, &want).map_err(|fault| {
        let field = match fault {
            TableFault::BadSignature { .. } => "signature",
            TableFault::BadTableLength { .. } => "length",
            TableFault::BadChecksum { .. } => "checksum",
            _ => "header",
        };
        Error::new(&t.file, format!("{sig} {field}"), fault.to_string())
    })
}

/// A fault of the structure walk (or of one SRAT structure) as an error
/// naming the structure.
fn structure_error(t: &Table, sig: &str, fault: TableFault) -> Error {
    let (field, why) = match fault {
        TableFault::Truncated {
            offset,
            kind,
            len,
            table_len,
        } => (
            match kind {
                Some(kind) => format!("{sig} structure at offset {offset} (type {kind})"),
                None => format!("{sig} structure at offset {offset}"),
            },
            format!("length {len} runs past the table's {table_len} bytes"),
        ),
        TableFault::BadLength { offset, kind, len } => (
            format!("{sig} structure at offset {offset} (type {kind})"),
            format!("length {len} is shorter than its own 2-byte header"),
        ),
        TableFault::ShortEntry {
            offset,
            kind,
            len,
            need,
        } => (
            format!("{sig} {} at offset {offset}", srat::kind_name(kind)),
            format!("length {len} is shorter than {need}"),
        ),
        other => (format!("{sig} header"), other.to_string()),
    };
    Error::new(&t.file, field, why)
}

/// What the MADT says: the ITSes and the boot CPU's ACPI processor UID.
struct Madt {
    its: Vec<(u32, u64)>,
    boot_uid: Option<u32>,
}

fn parse_madt(t: &Table) -> Result<Madt, Error> {
    let table = checked(t, "APIC")?;
    let mut madt = Madt {
        its: Vec::new(),
        boot_uid: None,
    };
    for s in table::structures(table, 44) {
        let s = s.map_err(|fault| structure_error(t, "APIC", fault))?;
        let (at, kind, s) = (s.offset, s.kind, s.bytes);
        let short = |min: usize, what: &str| {
            Error::new(
                &t.file,
                format!("APIC {what} at offset {at}"),
                format!("length {} is shorter than {min}", s.len()),
            )
        };
        match kind {
            // GICC: the first enabled one is the boot CPU on the machines
            // this reads (QEMU's virt lists CPU 0 first).
            0x0b => {
                let (uid, flags) = (u32_at(s, 8), u32_at(s, 12));
                let (Some(uid), Some(flags)) = (uid, flags) else {
                    return Err(short(16, "GICC"));
                };
                if flags & 1 != 0 && madt.boot_uid.is_none() {
                    madt.boot_uid = Some(uid);
                }
            }
            0x0f => {
                if s.len() < 20 {
                    return Err(short(20, "GIC ITS"));
                }
                let id = u32_at(s, 4).unwrap_or_default();
                let base = u64_at(s, 8).unwrap_or_default();
                if madt.its.iter().any(|&(i, _)| i == id) {
                    return Err(Error::new(
                        &t.file,
                        format!("APIC GIC ITS at offset {at}"),
                        format!("GIC ITS ID {id} appears twice"),
                    ));
                }
                madt.its.push((id, base));
            }
            _ => {}
        }
    }
    Ok(madt)
}

/// What the SRAT says, with proximity domains already turned into nodes.
#[derive(Default)]
struct Srat {
    /// Proximity domain -> node, by Linux's rule (`acpitables`' one definition).
    numa: ProximityMap,
    /// GICC ACPI processor UID -> proximity domain.
    cpu_pxm: BTreeMap<u32, u32>,
    /// (proximity domain, base, length) of enabled, not hot-pluggable memory.
    memory: Vec<(u32, u64, u64)>,
    /// (ITS ID, proximity domain, offset) in table order.
    its: Vec<(u32, u32, usize)>,
}

/// The SRAT, decoded by `acpitables`, read by Linux's rules: the nodes are
/// [`ProximityMap`]'s, held to [`MAX_NODES`]; GICC Affinity places the CPUs,
/// Memory Affinity the memory, GIC ITS Affinity the ITSes.
fn parse_srat(t: &Table) -> Result<Srat, Error> {
    let table = checked(t, "SRAT")?;
    let all: Vec<Entry> = srat::entries(table)
        .collect::<Result<_, _>>()
        .map_err(|fault| structure_error(t, "SRAT", fault))?;
    let mut out = Srat {
        numa: ProximityMap::from_affinities(&all.iter().map(|e| e.affinity).collect::<Vec<_>>()),
        ..Srat::default()
    };
    if let Some((pxm, node)) = out.numa.iter().find(|&(_, node)| node >= MAX_NODES) {
        return Err(Error::new(
            &t.file,
            format!("SRAT proximity domain {pxm}"),
            format!("would be node {node}: more than {MAX_NODES} nodes"),
        ));
    }
    for e in &all {
        out.read(t, e)?;
    }
    Ok(out)
}

impl Srat {
    /// Records what one structure places: a CPU, a memory range or an ITS.
    fn read(&mut self, t: &Table, e: &Entry) -> Result<(), Error> {
        match e.affinity {
            Affinity::Gicc {
                uid,
                domain,
                enabled: true,
            } => {
                self.cpu_pxm.entry(uid).or_insert(domain);
            }
            Affinity::Memory {
                domain,
                base,
                len,
                enabled,
                hotplug,
            } => {
                if base.checked_add(len).is_none() {
                    return Err(Error::new(
                        &t.file,
                        format!("SRAT Memory Affinity at offset {}", e.offset),
                        format!("{base:#x} + {len:#x} wraps around"),
                    ));
                }
                // Hot-pluggable ranges name a node but hold no memory at boot.
                if enabled && !hotplug && len > 0 {
                    self.memory.push((domain, base, len));
                }
            }
            Affinity::GicIts { its_id, domain } => self.its.push((its_id, domain, e.offset)),
            _ => {}
        }
        Ok(())
    }
}

/// The SLIT's matrix, by proximity domain: (count, row-major entries),
/// refused as a whole when Linux would ignore it.
fn parse_slit(t: &Table) -> Result<(usize, Vec<u8>), Error> {
    let table = checked(t, "SLIT")?;
    let (n, m) = slit::parse_slit(table)
        .map_err(|fault| Error::new(&t.file, "SLIT locality count", fault.to_string()))?;
    slit::slit_valid(n, &m).map_err(|fault| {
        let field = match fault {
            TableFault::BadDistance { from, to, .. } => format!("SLIT entry [{from}][{to}]"),
            _ => "SLIT".to_string(),
        };
        Error::new(
            &t.file,
            field,
            format!("{fault} (Linux ignores such a SLIT)"),
        )
    })?;
    Ok((n, m))
}

/// Builds the platform from a MADT and, when present, an SRAT and a SLIT.
pub fn parse(madt: &Table, srat: Option<&Table>, slit: Option<&Table>) -> Result<Platform, Error> {
    let m = parse_madt(madt)?;
    let s = match srat {
        Some(t) => parse_srat(t)?,
        None => Srat::default(),
    };
    let node = |pxm: u32| s.numa.node(pxm);
    let mut p = Platform {
        source: madt.file.clone(),
        nodes: s.numa.iter().map(|(_, node)| node).collect(),
        ..Platform::default()
    };
    p.nodes.sort_unstable();
    p.memory = s
        .memory
        .iter()
        .filter_map(|&(pxm, base, len)| {
            Some(MemRange {
                node: node(pxm)?,
                base,
                len,
            })
        })
        .collect();
    let placed = m
        .boot_uid
        .and_then(|uid| s.cpu_pxm.get(&uid))
        .and_then(|&pxm| node(pxm));
    p.boot_node = placed.unwrap_or(0);
    p.boot_node_placed = placed.is_some();
    for &(id, base) in &m.its {
        p.its.push(its_node(id, base, &s, srat));
    }
    if let (Some(t), false) = (slit, p.nodes.is_empty()) {
        p.distance = distances(&p.nodes, &s, parse_slit(t)?);
    }
    Ok(p)
}

/// The node distance matrix over `nodes` from the SLIT's matrix by proximity
/// domain; a domain the SLIT does not cover gets Linux's defaults.
fn distances(nodes: &[u32], s: &Srat, (n, matrix): (usize, Vec<u8>)) -> Vec<u8> {
    let pxm_of: BTreeMap<u32, u32> = s.numa.iter().map(|(x, nd)| (nd, x)).collect();
    let k = nodes.len();
    let mut distance = vec![0; k * k];
    for (i, a) in nodes.iter().enumerate() {
        for (j, b) in nodes.iter().enumerate() {
            let (pa, pb) = (pxm_of[a] as usize, pxm_of[b] as usize);
            distance[i * k + j] = if pa < n && pb < n {
                matrix[pa * n + pb]
            } else if i == j {
                crate::LOCAL_DISTANCE
            } else {
                crate::REMOTE_DISTANCE
            };
        }
    }
    distance
}

fn its_node(id: u32, base: u64, s: &Srat, srat: Option<&Table>) -> Its {
    let name = format!("ITS {id}");
    let Some(&(_, pxm, at)) = s.its.iter().find(|&&(i, _, _)| i == id) else {
        let why = match srat {
            Some(t) => format!("{}: no GIC ITS Affinity names ITS {id}", t.file),
            None => "no SRAT".to_string(),
        };
        return Its {
            name,
            id,
            base,
            node: None,
            node_from: why,
        };
    };
    let file = srat.map(|t| t.file.as_str()).unwrap_or("SRAT");
    match s.numa.node(pxm) {
        Some(n) => Its {
            name,
            id,
            base,
            node: Some(n),
            node_from: format!("{file}: GIC ITS Affinity at offset {at}: proximity domain {pxm}"),
        },
        None => Its {
            name,
            id,
            base,
            node: None,
            node_from: format!(
                "{file}: GIC ITS Affinity at offset {at} names proximity domain {pxm}, which no CPU or memory has (Linux: invalid NUMA node)"
            ),
        },
    }
}
