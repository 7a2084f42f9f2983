//! `manycore irq`: each interrupt translation unit (GICv3 ITS) of a machine,
//! its NUMA node, and the node of each of its tables as Linux's ITS driver
//! would allocate them (seed 004), with the cost model of a table read.
//!
//! The firmware comes from `--acpi DIR` or `--dtb FILE`, from a sysfs
//! snapshot or the live host (`sys/firmware/acpi/tables`, `sys/firmware/fdt`),
//! or from the catalogue entry's stated device layout (`--machine`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use irq::cost;
use irq::place::ItsTables;
use irq::tables::{Geometry, QEMU_ITS};
use irq::{Its, MemRange, Platform};
use serde_json::json;
use topology::Topology;

use crate::source::SourceArgs;

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum IrqFormat {
    /// A listing for people.
    Text,
    /// One JSON object: `its` is a list of objects with `node` and `tables`.
    Json,
}

/// Options of `manycore irq`.
#[derive(Args, Debug, Clone)]
pub struct IrqArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Raw ACPI tables: a directory holding APIC (the MADT), SRAT and SLIT, as
    /// /sys/firmware/acpi/tables or `acpidump -b` (apic.dat...) lay them out.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["dtb", "sysfs", "cpuid", "lscpu", "synthetic", "xml", "machine"])]
    pub acpi: Option<PathBuf>,
    /// A flattened device tree blob (/sys/firmware/fdt, QEMU's -machine dumpdtb=FILE).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["sysfs", "cpuid", "lscpu", "synthetic", "xml", "machine"])]
    pub dtb: Option<PathBuf>,
    /// A device that asks for MSIs: `[ITS/]DEVICEID:VECTORS` (ITS index, default
    /// 0; DeviceID decimal or 0x hex). Repeatable, in probe order: each gets its
    /// ITT, and a second-level device-table page when its slot has none yet,
    /// on the ITS's node, as Linux's its_create_device allocates them.
    #[arg(
        long = "device",
        value_name = "[ITS/]ID:VECTORS",
        allow_hyphen_values = true
    )]
    pub devices: Vec<String>,
    /// Cost model: nanoseconds of one memory read at SLIT distance 10; a read
    /// at distance d takes d/10 of that.
    #[arg(
        long,
        value_name = "NS",
        default_value = "90",
        allow_hyphen_values = true
    )]
    pub local_ns: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = IrqFormat::Text)]
    pub format: IrqFormat,
}

/// The platform and where its facts come from.
struct Source {
    platform: Platform,
    /// What the firmware description is ("device tree", "ACPI", "catalogue").
    kind: &'static str,
    /// Said once under the listing (synthetic addresses, assumed geometry...).
    notes: Vec<String>,
}

/// Said when a source has no ITS.
const NO_ITS: &str = "manycore reads GICv3 ITSes (MADT GIC ITS entries, arm,gic-v3-its device-tree nodes); other interrupt translation units (x86 DMAR/IVRS interrupt remapping) are not read";

/// Runs `manycore irq`.
pub fn run(args: &IrqArgs) -> Result<()> {
    let local_ns = crate::given::number("--local-ns", &args.local_ns, "nanoseconds")?;
    if !(local_ns.is_finite() && local_ns > 0.0 && local_ns < 1e6) {
        bail!(
            "--local-ns {}: must be a positive number of nanoseconds below 1e6",
            args.local_ns
        );
    }
    let devices = args
        .devices
        .iter()
        .map(|d| parse_device(d).map_err(|e| anyhow::anyhow!("--device {e}")))
        .collect::<Result<Vec<_>>>()?;
    let src = load(args)?;
    let mut src = src;
    let placed = if src.platform.its.is_empty() {
        src.notes = vec![NO_ITS.to_string()];
        Vec::new()
    } else {
        irq::place::place_with_devices(&src.platform, &QEMU_ITS, &devices).context(
            if devices.is_empty() {
                "placing the ITS tables"
            } else {
                "placing the ITS tables and those of each --device"
            },
        )?
    };
    let seed =
        (args.source.machine.as_deref() == Some("arm64-d06")).then(|| seed_check(&src, local_ns));
    let out = match args.format {
        IrqFormat::Text => text(&src, &placed, local_ns, seed.as_ref()),
        IrqFormat::Json => {
            serde_json::to_string_pretty(&to_json(&src, &placed, local_ns, seed.as_ref()))? + "\n"
        }
    };
    crate::write_stdout(&out)
}

/// `[ITS/]ID:VECTORS`, e.g. `0x18:1` or `1/256:32`.
fn parse_device(text: &str) -> Result<irq::place::Device, String> {
    let int = |t: &str, what: &str| -> Result<u32, String> {
        let r = match t.strip_prefix("0x") {
            Some(h) => u32::from_str_radix(h, 16),
            None => t.parse(),
        };
        r.map_err(|e| format!("{what} '{t}': {e}"))
    };
    let (its, rest) = match text.split_once('/') {
        Some((i, r)) => (int(i, "ITS index")? as usize, r),
        None => (0, text),
    };
    let (id, vectors) = rest
        .split_once(':')
        .ok_or_else(|| format!("'{text}': expected [ITS/]DEVICEID:VECTORS"))?;
    Ok(irq::place::Device {
        its,
        id: int(id, "DeviceID")?,
        vectors: int(vectors, "vectors")?,
    })
}

fn load(args: &IrqArgs) -> Result<Source> {
    if let Some(dir) = &args.acpi {
        return Ok(firmware(irq::acpi::read_dir(dir)?, "ACPI"));
    }
    if let Some(file) = &args.dtb {
        return Ok(firmware(irq::dt::read_file(file)?, "device tree"));
    }
    if let Some(name) = &args.source.machine {
        return catalogue(name);
    }
    let s = &args.source;
    let host = s.sysfs.is_none()
        && s.cpuid.is_none()
        && s.lscpu.is_none()
        && s.synthetic.is_none()
        && s.xml.is_none();
    let root = match (&s.sysfs, host) {
        (Some(p), _) if p.is_dir() => Some(p.clone()),
        (None, true) => Some(PathBuf::from("/")),
        _ => None,
    };
    if let Some(src) = root.as_deref().map(from_sysfs_root).transpose()?.flatten() {
        return Ok(src);
    }
    let topo = args.source.load()?;
    Ok(Source {
        platform: from_topology(&topo)?,
        kind: "topology only: no ACPI tables or device tree to read",
        notes: Vec::new(),
    })
}

fn firmware(platform: Platform, kind: &'static str) -> Source {
    let notes = vec![
        "table sizes: QEMU 10's ITS geometry (16 DeviceID bits, 8-byte entries, 64 KiB pages, two-level device table)".to_string(),
        "addresses: first fit in the firmware's memory ranges; Linux picks others, on the same nodes".to_string(),
    ];
    Source {
        platform,
        kind,
        notes,
    }
}

/// A sysfs root's firmware: its ACPI tables if it has a MADT, else its DTB.
fn from_sysfs_root(root: &Path) -> Result<Option<Source>> {
    let tables = root.join("sys/firmware/acpi/tables");
    if irq::can_open(&tables.join("APIC")) {
        return Ok(Some(firmware(irq::acpi::read_dir(&tables)?, "ACPI")));
    }
    let fdt = root.join("sys/firmware/fdt");
    if irq::can_open(&fdt) {
        return Ok(Some(firmware(irq::dt::read_file(&fdt)?, "device tree")));
    }
    Ok(None)
}

/// Nodes, memory and distances of a topology; memory ranges laid end to end
/// from address 0 (a topology gives sizes, not addresses).
fn from_topology(topo: &Topology) -> Result<Platform> {
    let mut p = Platform {
        source: topo.source().to_string(),
        ..Platform::default()
    };
    let mut base = 0u64;
    for n in topo.nodes() {
        p.nodes.push(n.id);
        if let Some(len) = n.memory_bytes.filter(|&l| l > 0) {
            p.memory.push(MemRange {
                node: n.id,
                base,
                len,
            });
            base = base
                .checked_add(len)
                .context("node memory sizes overflow")?;
        }
    }
    for &d in topo.distances() {
        p.distance.push(
            u8::try_from(d)
                .with_context(|| format!("{}: distance {d} above 255", topo.source()))?,
        );
    }
    let placed = topo
        .cpus()
        .first()
        .and_then(|c| c.node)
        .and_then(|i| topo.nodes().get(i as usize))
        .map(|n| n.id);
    p.boot_node = placed.unwrap_or(0);
    p.boot_node_placed = placed.is_some();
    if p.nodes.windows(2).any(|w| w[0] >= w[1]) {
        bail!(
            "{}: NUMA nodes not listed in ascending order",
            topo.source()
        );
    }
    Ok(p)
}

/// A catalogue machine: its topology and the ITSes its entry states.
fn catalogue(name: &str) -> Result<Source> {
    let topo = readers::catalogue::machine(name)?;
    let entry = readers::catalogue::entry(name).context("catalogue entry")?;
    let mut platform = from_topology(&topo)?;
    for (i, d) in entry
        .devices
        .iter()
        .filter(|d| d.kind == "gicv3-its")
        .enumerate()
    {
        platform.its.push(Its {
            name: format!("ITS {i}"),
            id: i as u32,
            base: 0,
            node: Some(d.node),
            node_from: format!("catalogue {name}: {}", d.note),
        });
    }
    let notes = vec![
        "addresses: synthetic, node memory laid end to end from 0 (the catalogue gives sizes only)"
            .to_string(),
        "table sizes: QEMU 10's ITS geometry, assumed (the seed gives no ITS registers)"
            .to_string(),
    ];
    Ok(Source {
        platform,
        kind: "catalogue",
        notes,
    })
}

/// Per-interrupt reads of one ITS as placed: (read, node, distance).
fn reads(p: &Platform, t: &ItsTables) -> Vec<(cost::Read, u32, u8)> {
    let indirect = t.tables.iter().any(|x| x.indirect);
    cost::reads(indirect)
        .into_iter()
        .map(|r| {
            use irq::tables::TableKind as K;
            let placed = |k: K| t.tables.iter().find(|x| x.kind == k).map(|x| x.node);
            // The first device's ITT and second-level page when devices were
            // given; without them, where the device table went (they are
            // allocated for the same node, so they fall back alike).
            let node = match r {
                cost::Read::Itt => placed(K::Itt).or(placed(K::Device)),
                cost::Read::Device if indirect => placed(K::DeviceL2).or(placed(K::Device)),
                _ => r.table().and_then(placed),
            };
            let node = node.unwrap_or(t.wanted);
            (r, node, p.distance(t.wanted, node))
        })
        .collect()
}

/// The node with memory farthest from `from` (ties: lowest id), and its distance.
fn farthest(p: &Platform, from: u32) -> (u32, u8) {
    p.nodes
        .iter()
        .filter(|&&n| p.node_bytes(n) > 0)
        .map(|&n| (n, p.distance(from, n)))
        .max_by_key(|&(n, d)| (d, std::cmp::Reverse(n)))
        .unwrap_or((from, irq::LOCAL_DISTANCE))
}

fn seed_check(src: &Source, local_ns: f64) -> (cost::SeedCheck, u32, u8) {
    let its_node = src
        .platform
        .its
        .first()
        .map_or(src.platform.boot_node, |i| src.platform.alloc_node(i));
    let (node, d) = farthest(&src.platform, its_node);
    (
        cost::seed_check(
            local_ns,
            d,
            QEMU_ITS.sizes().map(|s| s[1].indirect).unwrap_or(true),
        ),
        node,
        d,
    )
}

fn geometry_line(g: &Geometry) -> String {
    format!(
        "{} DeviceID bits, {} KiB ITS pages",
        g.device_id_bits,
        g.page >> 10
    )
}

/// The report: the source and its nodes, each ITS with its tables and their
/// cost per interrupt, the seed check, then the model's assumptions.
fn text(
    src: &Source,
    placed: &[ItsTables],
    local_ns: f64,
    seed: Option<&(cost::SeedCheck, u32, u8)>,
) -> String {
    let p = &src.platform;
    let mut o = String::new();
    let _ = writeln!(o, "source: {} ({})", p.source, src.kind);
    nodes_text(&mut o, p);
    if p.its.is_empty() {
        let _ = writeln!(o, "no interrupt translation unit found");
    }
    for t in placed {
        its_text(&mut o, p, t, local_ns);
    }
    if let Some(seed) = seed {
        seed_text(&mut o, seed);
    }
    if !placed.is_empty() {
        let _ = writeln!(
            o,
            "cost model: a read at SLIT distance d takes {local_ns} ns x d/10; no ITS cache hits"
        );
    }
    for n in &src.notes {
        let _ = writeln!(o, "note: {n}");
    }
    o
}

/// The nodes with their memory, and the boot CPU's node.
fn nodes_text(o: &mut String, p: &Platform) {
    let nodes: Vec<String> = p
        .nodes
        .iter()
        .map(|&n| format!("{n} ({} MiB)", p.node_bytes(n) >> 20))
        .collect();
    if nodes.is_empty() {
        let _ = writeln!(o, "nodes: none described (no SRAT or numa-node-id)");
    } else {
        let why = if p.boot_node_placed {
            ""
        } else {
            " (the firmware gives it no node: the fallback)"
        };
        let _ = writeln!(
            o,
            "nodes: {}; boot CPU on node {}{why}",
            nodes.join(", "),
            p.boot_node
        );
    }
}

/// One ITS: its node and why, its tables as placed, and what an interrupt
/// costs as placed and were they all on the farthest node.
fn its_text(o: &mut String, p: &Platform, t: &ItsTables, local_ns: f64) {
    let its = &p.its[t.its];
    let node = its
        .node
        .map_or("none (NUMA_NO_NODE)".to_string(), |n| n.to_string());
    let _ = writeln!(
        o,
        "{} (id {}, registers {:#x}): node {node} — {}",
        its.name, its.id, its.base, its.node_from
    );
    let _ = writeln!(
        o,
        "  tables allocated for node {} ({}):",
        t.wanted,
        geometry_line(&QEMU_ITS)
    );
    for x in &t.tables {
        let shape = if x.indirect { ", two-level" } else { "" };
        let size = if x.bytes >= 1024 {
            format!("{:>5} KiB", x.bytes >> 10)
        } else {
            format!("{:>5} B  ", x.bytes)
        };
        let whose = x
            .device
            .map_or(String::new(), |d| format!(", device {d:#x}"));
        let _ = writeln!(
            o,
            "    {:<14} {size}  node {}  at {:#x}  ({} entries{shape}{whose})",
            x.kind.name(),
            x.node,
            x.addr,
            x.entries
        );
    }
    let r = reads(p, t);
    let ds: Vec<u8> = r.iter().map(|x| x.2).collect();
    let (far, fd) = farthest(p, t.wanted);
    let _ = writeln!(
        o,
        "  per interrupt: {} table reads, {:.0} ns as placed; {:.0} ns were they all on node {far} (distance {fd})",
        r.len(),
        cost::translation_ns(local_ns, &ds),
        cost::translation_ns(local_ns, &vec![fd; r.len()])
    );
}

/// Seed 004's numbers against the model's: a consistency check.
fn seed_text(o: &mut String, (s, node, d): &(cost::SeedCheck, u32, u8)) {
    let _ = writeln!(o, "seed 004 consistency check (not a prediction):");
    let _ = writeln!(
        o,
        "  model: ITT and second-level device-table reads move from node {node} (distance {d}) to the ITS's node: {:.0} ns saved per interrupt",
        s.saved_ns_per_interrupt
    );
    let _ = writeln!(
        o,
        "  x {:.2}-{:.2} interrupts per request (seed's vmstat 170K-200K/s at 1/{} ms requests) = {:.5}-{:.5} ms per request",
        s.interrupts_per_request.0,
        s.interrupts_per_request.1,
        cost::seed::BEFORE_MS,
        s.model_ms.0,
        s.model_ms.1
    );
    let _ = writeln!(
        o,
        "  seed: {} -> {} ms per request = {:.5} ms saved",
        cost::seed::BEFORE_MS,
        cost::seed::AFTER_MS,
        s.seed_ms
    );
}

fn to_json(
    src: &Source,
    placed: &[ItsTables],
    local_ns: f64,
    seed: Option<&(cost::SeedCheck, u32, u8)>,
) -> serde_json::Value {
    let p = &src.platform;
    let its: Vec<serde_json::Value> = placed
        .iter()
        .map(|t| {
            let i = &p.its[t.its];
            let r = reads(p, t);
            let ds: Vec<u8> = r.iter().map(|x| x.2).collect();
            json!({
                "name": i.name,
                "id": i.id,
                "base": i.base,
                "node": i.node,
                "node_from": i.node_from,
                "alloc_node": t.wanted,
                "tables": t.tables.iter().map(|x| json!({
                    "kind": x.kind.name(),
                    "node": x.node,
                    "bytes": x.bytes,
                    "addr": x.addr,
                    "entries": x.entries,
                    "indirect": x.indirect,
                    "device": x.device,
                })).collect::<Vec<_>>(),
                "reads_per_interrupt": r.iter().map(|(read, node, d)| json!({
                    "read": read.name(), "node": node, "distance": d,
                })).collect::<Vec<_>>(),
                "ns_per_interrupt": cost::translation_ns(local_ns, &ds),
            })
        })
        .collect();
    let mut v = json!({
        "source": p.source,
        "kind": src.kind,
        "nodes": p.nodes.iter().map(|&n| json!({"id": n, "memory_bytes": p.node_bytes(n)})).collect::<Vec<_>>(),
        "boot_node": p.boot_node,
        "boot_node_placed": p.boot_node_placed,
        "its": its,
        "local_ns": local_ns,
        "notes": src.notes,
    });
    if let Some((s, node, d)) = seed {
        v["seed_check"] = json!({
            "label": "consistency check, not a prediction",
            "remote_node": node,
            "remote_distance": d,
            "model_saved_ns_per_interrupt": s.saved_ns_per_interrupt,
            "interrupts_per_request": [s.interrupts_per_request.0, s.interrupts_per_request.1],
            "model_saved_ms_per_request": [s.model_ms.0, s.model_ms.1],
            "seed_saved_ms_per_request": s.seed_ms,
            "seed_ms_per_request": [cost::seed::BEFORE_MS, cost::seed::AFTER_MS],
        });
    }
    v
}
