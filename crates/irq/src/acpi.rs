//! ACPI: the MADT's GIC ITS entries, the SRAT's GIC ITS Affinity, Memory
//! Affinity and GICC Affinity structures, and the SLIT, from raw table files
//! (`/sys/firmware/acpi/tables/{APIC,SRAT,SLIT}`, or `acpidump -b` output).
//!
//! Parsed by hand, on purpose: the `acpi` crate reaches tables only through an
//! `AcpiHandler` that maps physical memory (unsafe to implement and to call,
//! and this crate forbids unsafe code), and it has no SRAT parser at all. The
//! layouts are ACPI 6.5's (5.2.9 header, 5.2.12 MADT, 5.2.16 SRAT, 5.2.17 SLIT).
//!
//! Linux's rules followed here (drivers/acpi/numa/srat.c, irq-gic-v3-its.c):
//! proximity domains become node ids in the order first seen, CPU structures
//! before memory ones; an ITS's node is `pxm_to_node()` of the first GIC ITS
//! Affinity naming its ID, and a domain no CPU or memory named gives none
//! (`NUMA_NO_NODE`): that structure cannot create a node.

use std::collections::BTreeMap;
use std::path::Path;

use crate::{Error, Its, MemRange, Platform, MAX_NODES};

const HEADER: usize = 36;

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
            if path.is_file() {
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

/// Little-endian field readers over one structure; `None` past its end.
fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}
fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}
fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// Checks a table's header (signature, length, checksum) and returns the
/// table cut to its stated length.
fn checked<'a>(t: &'a Table, sig: &str) -> Result<&'a [u8], Error> {
    let b = &t.bytes;
    let err = |field: &str, why: String| Error::new(&t.file, format!("{sig} {field}"), why);
    if b.len() < HEADER {
        return Err(err(
            "header",
            format!("{} bytes, shorter than the 36-byte header", b.len()),
        ));
    }
    if &b[..4] != sig.as_bytes() {
        let got = String::from_utf8_lossy(&b[..4]).into_owned();
        return Err(err("signature", format!("is {got:?}, not {sig:?}")));
    }
    let len = u32_at(b, 4).unwrap_or(0) as usize;
    if len < HEADER || len > b.len() {
        return Err(err(
            "length",
            format!("{len} does not fit a file of {} bytes", b.len()),
        ));
    }
    let sum = b[..len].iter().fold(0u8, |s, &x| s.wrapping_add(x));
    if sum != 0 {
        return Err(err(
            "checksum",
            format!("bytes sum to {sum:#04x}, not 0: a corrupt table"),
        ));
    }
    Ok(&b[..len])
}

/// One structure of a table: (offset, type, bytes).
type Structure<'a> = (usize, u8, &'a [u8]);

/// The structures of a table after its fixed part.
fn structures<'a>(
    t: &Table,
    sig: &str,
    table: &'a [u8],
    start: usize,
) -> Result<Vec<Structure<'a>>, Error> {
    let mut out = Vec::new();
    let mut at = start;
    while at + 2 <= table.len() {
        let (kind, len) = (table[at], table[at + 1] as usize);
        if len < 2 || at + len > table.len() {
            return Err(Error::new(
                &t.file,
                format!("{sig} structure at offset {at} (type {kind})"),
                format!("length {len} runs past the table's {} bytes", table.len()),
            ));
        }
        out.push((at, kind, &table[at..at + len]));
        at += len;
    }
    Ok(out)
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
    for (at, kind, s) in structures(t, "APIC", table, 44)? {
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
    /// Proximity domain -> node, in Linux's first-seen order.
    pxm_node: BTreeMap<u32, u32>,
    /// GICC ACPI processor UID -> proximity domain.
    cpu_pxm: BTreeMap<u32, u32>,
    /// (proximity domain, base, length) of enabled, not hot-pluggable memory.
    memory: Vec<(u32, u64, u64)>,
    /// (ITS ID, proximity domain, offset) in table order.
    its: Vec<(u32, u32, usize)>,
}

fn parse_srat(t: &Table) -> Result<Srat, Error> {
    let table = checked(t, "SRAT")?;
    let all = structures(t, "SRAT", table, 48)?;
    let mut srat = Srat::default();
    let map = |pxm: u32, at: usize, srat: &mut Srat| -> Result<(), Error> {
        let next = srat.pxm_node.len() as u32;
        if !srat.pxm_node.contains_key(&pxm) && next >= MAX_NODES {
            return Err(Error::new(
                &t.file,
                format!("SRAT structure at offset {at}"),
                format!("proximity domain {pxm} would be node {next}: more than {MAX_NODES} nodes"),
            ));
        }
        srat.pxm_node.entry(pxm).or_insert(next);
        Ok(())
    };
    // Linux maps CPU-like structures first (x86 APIC / x2APIC, GICC,
    // Generic Initiator), then memory.
    for &(at, kind, s) in &all {
        let short = |min: usize| srat_short(t, at, kind, s.len(), min);
        match kind {
            0 => {
                let (Some(&lo), Some(flags), Some(hi)) = (s.get(2), u32_at(s, 4), s.get(9..12))
                else {
                    return Err(short(16));
                };
                if flags & 1 != 0 {
                    map(u32::from_le_bytes([lo, hi[0], hi[1], hi[2]]), at, &mut srat)?;
                }
            }
            2 => {
                let (Some(pxm), Some(flags)) = (u32_at(s, 4), u32_at(s, 12)) else {
                    return Err(short(24));
                };
                if flags & 1 != 0 {
                    map(pxm, at, &mut srat)?;
                }
            }
            3 => {
                let (Some(pxm), Some(uid), Some(flags)) =
                    (u32_at(s, 2), u32_at(s, 6), u32_at(s, 10))
                else {
                    return Err(short(18));
                };
                if flags & 1 != 0 {
                    map(pxm, at, &mut srat)?;
                    srat.cpu_pxm.entry(uid).or_insert(pxm);
                }
            }
            5 => {
                let (Some(pxm), Some(flags)) = (u32_at(s, 4), u32_at(s, 24)) else {
                    return Err(short(32));
                };
                if flags & 1 != 0 {
                    map(pxm, at, &mut srat)?;
                }
            }
            _ => {}
        }
    }
    for &(at, kind, s) in &all {
        let short = |min: usize| srat_short(t, at, kind, s.len(), min);
        match kind {
            1 => {
                let (Some(pxm), Some(lo), Some(hi), Some(llo), Some(lhi), Some(flags)) = (
                    u32_at(s, 2),
                    u32_at(s, 8),
                    u32_at(s, 12),
                    u32_at(s, 16),
                    u32_at(s, 20),
                    u32_at(s, 28),
                ) else {
                    return Err(short(40));
                };
                let (base, len) = (
                    (hi as u64) << 32 | lo as u64,
                    (lhi as u64) << 32 | llo as u64,
                );
                if base.checked_add(len).is_none() {
                    return Err(Error::new(
                        &t.file,
                        format!("SRAT Memory Affinity at offset {at}"),
                        format!("{base:#x} + {len:#x} wraps around"),
                    ));
                }
                if flags & 1 != 0 {
                    map(pxm, at, &mut srat)?;
                    // Hot-pluggable ranges name a node but hold no memory at boot.
                    if flags & 2 == 0 && len > 0 {
                        srat.memory.push((pxm, base, len));
                    }
                }
            }
            4 => {
                let (Some(pxm), Some(_), Some(id)) = (u32_at(s, 2), u16_at(s, 6), u32_at(s, 8))
                else {
                    return Err(short(12));
                };
                srat.its.push((id, pxm, at));
            }
            _ => {}
        }
    }
    Ok(srat)
}

fn srat_short(t: &Table, at: usize, kind: u8, len: usize, min: usize) -> Error {
    let name = match kind {
        0 => "Processor Local APIC Affinity",
        2 => "x2APIC Affinity",
        1 => "Memory Affinity",
        3 => "GICC Affinity",
        4 => "GIC ITS Affinity",
        _ => "Generic Initiator Affinity",
    };
    Error::new(
        &t.file,
        format!("SRAT {name} at offset {at}"),
        format!("length {len} is shorter than {min}"),
    )
}

/// The SLIT's matrix, by proximity domain: (count, row-major entries).
fn parse_slit(t: &Table) -> Result<(usize, Vec<u8>), Error> {
    let table = checked(t, "SLIT")?;
    let count = u64_at(table, 36).ok_or_else(|| {
        Error::new(
            &t.file,
            "SLIT locality count",
            "missing: table shorter than 44 bytes",
        )
    })?;
    let room = table.len().saturating_sub(44) as u64;
    if count.checked_mul(count).is_none_or(|n| n > room) {
        return Err(Error::new(
            &t.file,
            "SLIT locality count",
            format!("{count} localities need {count}x{count} bytes; the table has {room}"),
        ));
    }
    let n = count as usize;
    let m = table[44..44 + n * n].to_vec();
    // Linux's slit_valid(): 10 on the diagonal, more than 10 elsewhere, or the
    // whole SLIT is ignored.
    for i in 0..n {
        for j in 0..n {
            let d = m[i * n + j];
            if (i == j && d != 10) || (i != j && d <= 10) {
                return Err(Error::new(
                    &t.file,
                    format!("SLIT entry [{i}][{j}]"),
                    format!("distance {d}: must be 10 to itself and above 10 to others (Linux ignores such a SLIT)"),
                ));
            }
        }
    }
    Ok((n, m))
}

/// Builds the platform from a MADT and, when present, an SRAT and a SLIT.
pub fn parse(madt: &Table, srat: Option<&Table>, slit: Option<&Table>) -> Result<Platform, Error> {
    let m = parse_madt(madt)?;
    let s = match srat {
        Some(t) => parse_srat(t)?,
        None => Srat::default(),
    };
    let node = |pxm: u32| s.pxm_node.get(&pxm).copied();
    let mut p = Platform {
        source: madt.file.clone(),
        nodes: s.pxm_node.values().copied().collect(),
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
    p.boot_node = m
        .boot_uid
        .and_then(|uid| s.cpu_pxm.get(&uid))
        .and_then(|&pxm| node(pxm))
        .unwrap_or(0);
    for &(id, base) in &m.its {
        p.its.push(its_node(id, base, &s, srat));
    }
    if let (Some(t), false) = (slit, p.nodes.is_empty()) {
        let (n, matrix) = parse_slit(t)?;
        let pxm_of: BTreeMap<u32, u32> = s.pxm_node.iter().map(|(&x, &nd)| (nd, x)).collect();
        let k = p.nodes.len();
        p.distance = vec![0; k * k];
        for (i, a) in p.nodes.iter().enumerate() {
            for (j, b) in p.nodes.iter().enumerate() {
                let (pa, pb) = (pxm_of[a] as usize, pxm_of[b] as usize);
                p.distance[i * k + j] = if pa < n && pb < n {
                    matrix[pa * n + pb]
                } else if i == j {
                    crate::LOCAL_DISTANCE
                } else {
                    crate::REMOTE_DISTANCE
                };
            }
        }
    }
    Ok(p)
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
    match s.pxm_node.get(&pxm) {
        Some(&n) => Its {
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
