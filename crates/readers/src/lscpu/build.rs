//! Second pass: the scanned fields → a checked [`Topology`], inferring what
//! lscpu's summary leaves out by the rules in the module documentation.

use std::collections::BTreeMap;

use cpumask::{CpuMask, MAX_CPUS};
use topology::{Arch, CoreKind, CpuSpec, Topology, TopologyBuilder};

use super::scan::{At, Scanned};
use crate::{power, Error};

/// Where one on-line CPU sits.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Place {
    pub(super) cpu: u32,
    pub(super) package: u32,
    pub(super) cluster: Option<u32>,
    pub(super) big_core: Option<u32>,
    /// Machine-wide core number (unique, so also unique within the package).
    pub(super) core: u32,
    /// The core's number as lscpu printed it (its CORE column), which is not
    /// unique on hybrid machines (numbered per CPU type) nor where a POWER
    /// core is split; `None` when the table gives none.
    pub(super) core_os: Option<u32>,
    pub(super) kind: Option<u16>,
}

/// One CPU-type block reduced to counts.
#[derive(Debug, Clone)]
struct Counts {
    threads: u32,
    cores_per_socket: Option<u32>,
    sockets: u32,
    /// s390's `/proc/sysinfo` topology (books, drawers) describes the configured
    /// machine rather than the CPUs present, so the product check is skipped.
    s390_books: bool,
    line: usize,
}

pub fn build(s: &Scanned, source: &str) -> Result<Topology, Error> {
    let arch = arch_of(s);
    let (online, present) = cpu_sets(s, source)?;
    let nodes = nodes_of(s, source)?;

    let mut possible = present;
    for (_, m, _) in &nodes {
        possible.or_assign(m);
    }

    let model = s
        .types
        .iter()
        .find_map(|t| t.model_name.as_ref().map(|m| m.value.clone()));
    let places = match &s.csv {
        Some(csv) => places_from_csv(s, csv, &online, &present, &arch, model.as_deref(), source)?,
        None => places_from_counts(s, &online, &nodes, &arch, model.as_deref(), source)?,
    };

    let mut b = TopologyBuilder::new(arch.clone());
    b.source(source);
    if let Some(m) = &model {
        b.model_name(m.clone());
    }
    if let Some(h) = &s.hypervisor_vendor {
        b.hypervisor(h.clone());
    }
    if s.types.len() > 1 {
        for t in &s.types {
            let name = t
                .model_name
                .as_ref()
                .map_or_else(|| String::from("-"), |m| m.value.clone());
            b.add_core_kind(CoreKind {
                name,
                efficiency: None,
            });
        }
    }
    for p in &places {
        b.add_cpu(CpuSpec {
            id: p.cpu,
            hw_id: None,
            online: true,
            package: p.package,
            die: None,
            cluster: p.cluster,
            big_core: p.big_core,
            core: p.core,
            node: None,
            kind: p.kind,
            capacity: None,
            os_ids: Some([p.core_os, p.big_core, p.cluster, None, Some(p.package)]),
        });
    }
    for (id, mask, _) in &nodes {
        b.add_node(*id, *mask, None);
    }
    b.add_caches(super::caches::caches(
        s,
        &places,
        &nodes,
        is_power(&arch),
        source,
    )?);
    b.possible(possible).present(present);
    b.finish()
        .map_err(|e| Error::new(source, format!("inconsistent lscpu output: {e}")))
}

/// The architecture: the "Architecture:" line, else a guess from the vendor,
/// model and flags (util-linux's test outputs drop that line). A POWER
/// model's byte order is the "Byte Order:" line's, else its processor's
/// ([`power::power64_of_cpu`]).
fn arch_of(s: &Scanned) -> Arch {
    if let Some(a) = &s.architecture {
        return Arch::from_uname(&a.value);
    }
    let vendor = s.vendor.as_deref().unwrap_or("");
    let model = s
        .types
        .iter()
        .find_map(|t| t.model_name.as_ref())
        .map_or("", |m| m.value.as_str());
    let bits64 = s.op_modes.as_deref().is_some_and(|m| m.contains("64-bit"));
    let flags = s.flags.as_deref().unwrap_or("");
    match vendor {
        "GenuineIntel" | "AuthenticAMD" | "HygonGenuine" | "CentaurHauls" | "Shanghai" => {
            return if bits64 || flags.split(' ').any(|f| f == "lm") {
                Arch::X86_64
            } else {
                Arch::X86
            };
        }
        "IBM/S390" => return Arch::S390x,
        "ARM" | "APM" | "Cavium" | "Ampere" | "HiSilicon" | "Qualcomm" | "NVIDIA" | "Apple"
        | "Phytium" | "Fujitsu" | "Marvell" => {
            return if bits64 || flags.split(' ').any(|f| f == "asimd") {
                Arch::Arm64
            } else {
                Arch::Arm
            };
        }
        _ => {}
    }
    let power = ["POWER", "Power", "PPC970", "Cell Broadband Engine"];
    if power.iter().any(|p| model.starts_with(p)) {
        return s
            .byte_order
            .as_deref()
            .and_then(power::power64_of_byte_order)
            .unwrap_or_else(|| power::power64_of_cpu(model));
    }
    if model.starts_with("Loongson") {
        return Arch::LoongArch64;
    }
    if s.isa.as_deref().is_some_and(|i| i.starts_with("rv64")) {
        return Arch::RiscV64;
    }
    if flags.split(' ').any(|f| f == "sun4u" || f == "sun4v") {
        return Arch::Sparc64;
    }
    Arch::Other(String::from("unknown"))
}

/// (on-line, present) CPU sets.
fn cpu_sets(s: &Scanned, source: &str) -> Result<(CpuMask, CpuMask), Error> {
    // A table printed without the summary (`lscpu -e` alone) names the
    // off-line CPUs in its ONLINE column: lscpu prints a row for every
    // present CPU, with '-' for what an off-line CPU cannot say.
    let offline = match (&s.offline, &s.online, &s.csv) {
        (Some(o), _, _) => o.value,
        (None, None, Some(csv)) => csv
            .rows
            .iter()
            .filter(|r| r.online == Some(false))
            .map(|r| r.cpu as usize)
            .filter(|&c| c < MAX_CPUS)
            .collect(),
        _ => CpuMask::default(),
    };
    let online = if let Some(o) = &s.online {
        o.value
    } else if let Some(csv) = &s.csv {
        csv.rows
            .iter()
            .filter(|r| r.online != Some(false))
            .map(|r| r.cpu as usize)
            .filter(|&c| c < MAX_CPUS)
            .collect()
    } else if let Some(n) = &s.cpus {
        if n.value as usize > MAX_CPUS {
            return Err(Error::at_line(
                source,
                n.line,
                format!(
                    "CPU(s) is {}, beyond the supported maximum of {MAX_CPUS}",
                    n.value
                ),
            ));
        }
        CpuMask::first_n(n.value as usize).and_not(&offline)
    } else {
        return Err(Error::new(
            source,
            "no 'CPU(s):' line, on-line CPU list or parsable CPU rows: not lscpu output?",
        ));
    };
    if let Some(off) = &s.offline {
        if let Some(c) = off.value.and(&online).first() {
            return Err(Error::at_line(
                source,
                off.line,
                format!("CPU {c} is listed both on-line and off-line"),
            ));
        }
    }
    let present = online.or(&offline);
    if let (Some(n), Some(_)) = (&s.cpus, &s.online) {
        if n.value as usize != present.weight() {
            return Err(Error::at_line(
                source,
                n.line,
                format!(
                    "CPU(s) is {}, but the on-line and off-line lists hold {} CPUs",
                    n.value,
                    present.weight()
                ),
            ));
        }
    }
    if online.is_empty() {
        return Err(Error::new(source, "no on-line CPUs"));
    }
    Ok((online, present))
}

/// NUMA nodes as (id, CPUs, line), sorted by id.
fn nodes_of(s: &Scanned, source: &str) -> Result<Vec<(u32, CpuMask, usize)>, Error> {
    let mut nodes: Vec<(u32, CpuMask, usize)> = s
        .node_lists
        .iter()
        .map(
            |At {
                 value: (id, m),
                 line,
             }| (*id, *m, *line),
        )
        .collect();
    if let (Some(count), false) = (&s.node_count, nodes.is_empty()) {
        if count.value as usize != nodes.len() {
            return Err(Error::at_line(
                source,
                count.line,
                format!(
                    "NUMA node(s) is {}, but {} 'NUMA nodeN CPU(s)' lines follow",
                    count.value,
                    nodes.len()
                ),
            ));
        }
    }
    if nodes.is_empty() {
        if let Some(csv) = &s.csv {
            let mut by_id: BTreeMap<u32, CpuMask> = BTreeMap::new();
            for r in &csv.rows {
                if let Some(n) = r.node {
                    if (r.cpu as usize) < MAX_CPUS {
                        by_id.entry(n).or_default().set(r.cpu as usize);
                    }
                }
            }
            let line = csv.header_line;
            nodes = by_id.into_iter().map(|(id, m)| (id, m, line)).collect();
        }
    }
    nodes.sort_by_key(|n| n.0);
    // CPU → the first node listing it: one pass over the nodes' CPUs, no
    // pairwise mask work however many nodes there are.
    let mut listed_in: std::collections::HashMap<usize, usize> = Default::default();
    for (j, (_, mask, _)) in nodes.iter().enumerate() {
        for c in mask.iter() {
            if let Some(i) = listed_in.insert(c, j) {
                let (first, second) = (nodes[i].0, nodes[j].0);
                return Err(Error::at_line(
                    source,
                    nodes[i].2.max(nodes[j].2),
                    format!("CPU {c} is in both NUMA node{first} and NUMA node{second}"),
                ));
            }
        }
    }
    // The parsable rows must agree with the summary's node lists.
    if let (Some(csv), false) = (&s.csv, s.node_lists.is_empty()) {
        for r in &csv.rows {
            if let Some(n) = r.node {
                let listed = nodes.iter().find(|(_, m, _)| m.contains(r.cpu as usize));
                if let Some((id, _, _)) = listed {
                    if *id != n {
                        return Err(Error::at_line(
                            source,
                            r.line,
                            format!(
                                "CPU {} is in node {n} here but in NUMA node{id} in the summary",
                                r.cpu
                            ),
                        ));
                    }
                }
            }
        }
    }
    Ok(nodes)
}

/// Whether a POWER model name is one whose SMT8 cores are two SMT4 thread
/// groups (POWER9 and later under PowerVM).
fn power_big_core_model(model: Option<&str>) -> bool {
    let m = model.unwrap_or("").to_ascii_uppercase();
    ["POWER9", "POWER10", "POWER11"]
        .iter()
        .any(|p| m.contains(p))
}

fn is_power(arch: &Arch) -> bool {
    arch.is_power()
}

/// Placement straight from `lscpu -p` rows: each row checked and indexed by
/// CPU, each on-line CPU placed from its row, POWER's big cores told from
/// the L1 column, and cores numbered per CPU type.
fn places_from_csv(
    s: &Scanned,
    csv: &super::scan::Csv,
    online: &CpuMask,
    present: &CpuMask,
    arch: &Arch,
    model: Option<&str>,
    source: &str,
) -> Result<Vec<Place>, Error> {
    let rows = rows_by_cpu(csv, present, source)?;
    let mut places = Vec::new();
    for cpu in online.iter() {
        let Some(r) = rows.get(&(cpu as u32)) else {
            return Err(Error::at_line(
                source,
                csv.header_line,
                format!("CPU {cpu} is on-line but has no parsable row"),
            ));
        };
        places.push(Place {
            cpu: cpu as u32,
            package: r.socket.unwrap_or(0),
            cluster: r.cluster,
            big_core: None,
            // A CPU without a core id is its own core.
            core: r.core.unwrap_or(0x8000_0000 | cpu as u32),
            core_os: r.core,
            kind: None,
        });
    }
    if is_power(arch) {
        split_power_cores_by_l1(csv, &rows, &mut places, model);
    }
    assign_kinds(s, &mut places);
    // lscpu numbers logical cores per CPU type (util-linux's arm hybrid test:
    // CPUs 0, 3, 5 and 7 all have Core 0), so a core is a (type, id) pair.
    if s.types.len() > 1 {
        for p in &mut places {
            if let Some(k) = p.kind {
                p.core = ((k as u32 + 1) << 20) | (p.core & 0xf_ffff);
            }
        }
    } else if !is_power(arch) {
        split_cores_by_l2(csv, &rows, &mut places);
    }
    Ok(places)
}

/// A table without the summary's CPU types cannot tell the types' cores
/// apart by number, but their caches differ: CPUs of one Core id in
/// different L2 instances are cores of different types (no Arm SoC shares
/// an L2 across core types, while a core's threads always share its L2).
/// The L1 cannot tell: some RISC-V kernels give a core's two harts an L1
/// each (util-linux's `rv64-linux` dump). POWER is left to
/// [`split_power_cores_by_l1`], where a Core of two L1s is a big core.
fn split_cores_by_l2(csv: &super::scan::Csv, rows: &Rows, places: &mut [Place]) {
    let Some(col) = csv.cache_names.iter().position(|n| n == "L2") else {
        return;
    };
    let l2_of = |p: &Place| rows[&p.cpu].caches[col];
    let mut l2_of_core: BTreeMap<u32, Option<u32>> = BTreeMap::new();
    let mut split = false;
    for p in places.iter().filter(|p| p.core_os.is_some()) {
        let l2 = l2_of(p);
        split |= *l2_of_core.entry(p.core).or_insert(l2) != l2;
    }
    if !split {
        return;
    }
    // Each (Core, L2) pair becomes a core, numbered by first appearance
    // above the ids lscpu can print and below those of CPUs without one.
    let mut number: BTreeMap<(u32, Option<u32>), u32> = BTreeMap::new();
    for p in places.iter_mut().filter(|p| p.core_os.is_some()) {
        let next = number.len() as u32;
        p.core = 0x4000_0000 | *number.entry((p.core, l2_of(p))).or_insert(next);
    }
}

type Rows<'a> = BTreeMap<u32, &'a super::scan::CsvRow>;

/// The parsable rows by CPU: each for a CPU the summary lists, once.
fn rows_by_cpu<'a>(
    csv: &'a super::scan::Csv,
    present: &CpuMask,
    source: &str,
) -> Result<Rows<'a>, Error> {
    let mut rows: Rows = BTreeMap::new();
    for r in &csv.rows {
        if r.cpu as usize >= MAX_CPUS || !present.contains(r.cpu as usize) {
            return Err(Error::at_line(
                source,
                r.line,
                format!(
                    "parsable row for CPU {}, which the summary does not list",
                    r.cpu
                ),
            ));
        }
        if rows.insert(r.cpu, r).is_some() {
            return Err(Error::at_line(
                source,
                r.line,
                format!("CPU {} has two parsable rows", r.cpu),
            ));
        }
    }
    Ok(rows)
}

/// POWER9/10 big cores: the parsable Core column is the SMT8 thread set,
/// while the L1 column separates its two SMT4 thread groups; without an L1
/// column, the model name says whether the cores are big.
fn split_power_cores_by_l1(
    csv: &super::scan::Csv,
    rows: &Rows,
    places: &mut [Place],
    model: Option<&str>,
) {
    let l1_col = csv
        .cache_names
        .iter()
        .position(|n| n == "L1d")
        .or_else(|| csv.cache_names.iter().position(|n| n == "L1i"));
    let Some(col) = l1_col else {
        if power_big_core_model(model) {
            split_power_big_cores(places, 8);
        }
        return;
    };
    // Each L1 must lie within one Core, and there must be more L1s than Cores.
    let mut core_of_l1: BTreeMap<u32, u32> = BTreeMap::new();
    for p in places.iter() {
        let Some(l1) = rows[&p.cpu].caches[col] else {
            return;
        };
        if core_of_l1
            .insert(l1, p.core)
            .is_some_and(|prev| prev != p.core)
        {
            return;
        }
    }
    let cores: std::collections::BTreeSet<u32> = places.iter().map(|p| p.core).collect();
    if core_of_l1.len() > cores.len() {
        for p in places.iter_mut() {
            p.big_core = Some(p.core);
            p.core = rows[&p.cpu].caches[col].unwrap_or(0);
        }
    }
}

/// On hybrid machines lscpu prints one block per CPU type in order of each
/// type's first CPU; the reader assumes each type's CPUs follow one another.
fn assign_kinds(s: &Scanned, places: &mut [Place]) {
    if s.types.len() < 2 {
        return;
    }
    let mut pos = 0usize;
    for (kind, t) in s.types.iter().enumerate() {
        let c = counts_of(t);
        let n = (c.sockets as usize)
            .saturating_mul(c.cores_per_socket.unwrap_or(0) as usize)
            .saturating_mul(c.threads as usize);
        for p in places.iter_mut().skip(pos).take(n) {
            p.kind = Some(kind as u16);
        }
        pos += n;
    }
}

fn counts_of(t: &super::scan::CpuType) -> Counts {
    let threads = t.threads_per_core.as_ref().map_or(1, |v| v.value);
    let cores_per_socket = t
        .cores_per_socket
        .as_ref()
        .or(t.cores_per_cluster.as_ref())
        .map(|v| v.value);
    let s390_books = t.books.is_some() || t.drawers.is_some() || t.sockets_per_book.is_some();
    let sockets = if s390_books {
        let per_book = t.sockets_per_book.as_ref().map_or(1, |v| v.value);
        let books = match (&t.books, &t.books_per_drawer, &t.drawers) {
            (Some(b), _, _) => b.value,
            (None, Some(bpd), Some(d)) => bpd.value.saturating_mul(d.value),
            (None, Some(bpd), None) => bpd.value,
            (None, None, Some(d)) => d.value,
            (None, None, None) => 1,
        };
        per_book.saturating_mul(books)
    } else {
        match &t.sockets {
            Some(At { value: Some(n), .. }) => *n,
            _ => t.clusters.as_ref().map_or(1, |c| c.value),
        }
    };
    let line = t
        .sockets
        .as_ref()
        .map(|v| v.line)
        .or(t.clusters.as_ref().map(|v| v.line))
        .or(t.cores_per_socket.as_ref().map(|v| v.line))
        .or(t.threads_per_core.as_ref().map(|v| v.line))
        .or(t.model_name.as_ref().map(|v| v.line))
        .unwrap_or(0);
    Counts {
        threads,
        cores_per_socket,
        sockets: sockets.max(1),
        s390_books,
        line,
    }
}

/// Placement from the summary's counts alone (see the module documentation):
/// the counts of each CPU type, checked against the on-line CPUs, then each
/// type's share placed in turn, then POWER's big cores split.
fn places_from_counts(
    s: &Scanned,
    online: &CpuMask,
    nodes: &[(u32, CpuMask, usize)],
    arch: &Arch,
    model: Option<&str>,
    source: &str,
) -> Result<Vec<Place>, Error> {
    let cpus: Vec<u32> = online.iter().map(|c| c as u32).collect();
    let types = type_counts(s);
    // Each type's share of the on-line CPUs, in order; exact (u128 holds any
    // product of three u32 counts) so error messages print the real product.
    let sizes: Vec<u128> = types
        .iter()
        .map(|t| match t.cores_per_socket {
            Some(c) => t.sockets as u128 * c as u128 * t.threads as u128,
            None => u128::MAX,
        })
        .collect();
    if !s.any_offline() && !types.iter().any(|t| t.s390_books) {
        check_counts(&types, &sizes, cpus.len(), source)?;
    }

    let threads_last = matches!(arch, Arch::X86_64 | Arch::X86);
    let mut places = Vec::with_capacity(cpus.len());
    let mut next_core = 0u32;
    let mut start = 0usize;
    for (ti, t) in types.iter().enumerate() {
        let take = if ti + 1 == types.len() {
            cpus.len() - start
        } else {
            sizes[ti].min((cpus.len() - start) as u128) as usize
        };
        let slice = &cpus[start..start + take];
        start += take;
        let kind = (types.len() > 1).then_some(ti as u16);
        let how = TypePlacement {
            t,
            nodes,
            threads_last,
            kind,
            all_online: !s.any_offline(),
            source,
        };
        how.place(slice, &mut next_core, &mut places)?;
    }
    places.sort_by_key(|p| p.cpu);

    let max_threads = types.iter().map(|t| t.threads).max().unwrap_or(1);
    let l1_instances = s
        .caches
        .iter()
        .filter(|c| c.level == 1)
        .find_map(|c| c.size.instances);
    let l1_says_split = l1_instances.is_some_and(|n| n as u64 == 2 * next_core as u64);
    if is_power(arch) && max_threads == 8 && (power_big_core_model(model) || l1_says_split) {
        split_power_big_cores(&mut places, 8);
    }
    Ok(places)
}

/// Each CPU-type block's counts; one block of unknown shape if there is none.
fn type_counts(s: &Scanned) -> Vec<Counts> {
    if s.types.is_empty() {
        return vec![Counts {
            threads: 1,
            cores_per_socket: None,
            sockets: 1,
            s390_books: false,
            line: 0,
        }];
    }
    s.types.iter().map(counts_of).collect()
}

/// The counts must describe the on-line CPUs (module documentation: the
/// range a machine with unequal sockets or cores can have).
fn check_counts(types: &[Counts], sizes: &[u128], n: usize, source: &str) -> Result<(), Error> {
    let total: u128 = sizes.iter().fold(0u128, |sum, &n| sum.saturating_add(n));
    if let ([t], Some(c)) = (types, types.first().and_then(|t| t.cores_per_socket)) {
        // The machine has K cores, S·C ≤ K ≤ `most_cores`. For threads,
        // 2.37 and later print the most any core has: one core has T, the
        // others 1 to T (Intel hybrids: 12 cores, 20 CPUs).
        // Up to 2.36 they print on-line CPUs / K rounded down, so T·K to
        // T·K + K − 1 CPUs (a 6-core Ryzen booted with 7 CPUs: "Thread(s)
        // per core: 1"; 0 only when fewer CPUs are on-line than cores, so
        // never here, where no CPU is off-line). Counts no machine can have
        // under either rule are refused.
        let (s_, c_, t_) = (t.sockets as u128, c as u128, t.threads as u128);
        let least = match t_ {
            0 => u128::MAX,
            _ => (s_ * c_).saturating_sub(1) + t_,
        };
        let most = ((t_ + 1) * most_cores(t.sockets, c)).saturating_sub(1);
        if !(least..=most).contains(&(n as u128)) {
            return Err(Error::at_line(
                source,
                t.line,
                format!(
                    "Socket(s) {} × Core(s) per socket {c} × Thread(s) per core {} = {total}, \
                     but {n} CPUs are on-line",
                    t.sockets, t.threads
                ),
            ));
        }
    } else if let Some(t) = types
        .iter()
        .find(|t| types.len() > 1 && t.cores_per_socket.is_none())
    {
        // A block without its counts (an output cut short) leaves its share
        // of the on-line CPUs, and so every later block's, unknown.
        return Err(Error::at_line(
            source,
            t.line,
            format!(
                "a CPU type block without Core(s) per socket: its share of the {n} on-line \
                 CPUs is unknown"
            ),
        ));
    } else if types.len() > 1 && total != n as u128 {
        return Err(Error::at_line(
            source,
            types[0].line,
            format!("the CPU type blocks add up to {total} CPUs, but {n} are on-line"),
        ));
    }
    Ok(())
}

/// The most cores a summary of `sockets` sockets and `cores_per_socket`
/// cores per socket can describe: lscpu divides its core count by the
/// sockets rounding down, so the machine has `S·C` to `S·C + S − 1` cores.
fn most_cores(sockets: u32, cores_per_socket: u32) -> u128 {
    let s = u128::from(sockets.max(1));
    s * u128::from(cores_per_socket) + s - 1
}

/// How one CPU type's on-line CPUs are placed into sockets, cores and threads.
struct TypePlacement<'a> {
    t: &'a Counts,
    nodes: &'a [(u32, CpuMask, usize)],
    threads_last: bool,
    kind: Option<u16>,
    /// No CPU is off-line, so the counts describe the on-line CPUs.
    all_online: bool,
    source: &'a str,
}

impl TypePlacement<'_> {
    /// Rule 1 when whole nodes make up each socket, else rule 2 (module
    /// documentation): threads last across the machine, or adjacent
    /// siblings in runs ordered by node.
    fn place(&self, cpus: &[u32], next_core: &mut u32, out: &mut Vec<Place>) -> Result<(), Error> {
        if cpus.is_empty() {
            return Ok(());
        }
        let mine: CpuMask = cpus.iter().map(|&c| c as usize).collect();
        let node_parts: Vec<CpuMask> = self
            .nodes
            .iter()
            .map(|(_, m, _)| m.and(&mine))
            .filter(|m| !m.is_empty())
            .collect();
        let covered = node_parts
            .iter()
            .fold(CpuMask::new(), |acc, m| acc.or(m))
            .weight()
            == cpus.len();
        let sockets = self.t.sockets.max(1) as usize;
        if covered && !node_parts.is_empty() && node_parts.len().is_multiple_of(sockets) {
            let rounded = self.threads_rounded_down(cpus.len());
            self.by_whole_nodes(&node_parts, rounded, next_core, out)?;
        } else if self.threads_last {
            self.threads_last_across(cpus, next_core, out);
        } else {
            self.adjacent_runs(cpus, &node_parts, next_core, out);
        }
        Ok(())
    }

    fn threads(&self) -> usize {
        self.t.threads.max(1) as usize
    }

    /// Whether `n` CPUs are more than cores of at most "Thread(s) per
    /// core" threads can hold (`check_counts`): then the threads are
    /// util-linux's rounded-down average (up to 2.36), not the most any
    /// core has, and the stated cores are the cores.
    fn threads_rounded_down(&self, n: usize) -> bool {
        let Some(c) = self.t.cores_per_socket else {
            return false;
        };
        n as u128 > self.t.threads as u128 * most_cores(self.t.sockets, c)
    }

    /// Rule 1: each socket is made of whole NUMA nodes, in node order.
    fn by_whole_nodes(
        &self,
        node_parts: &[CpuMask],
        rounded: bool,
        next_core: &mut u32,
        out: &mut Vec<Place>,
    ) -> Result<(), Error> {
        let sockets = self.t.sockets.max(1) as usize;
        let per = node_parts.len() / sockets;
        let members: Vec<Vec<u32>> = node_parts
            .chunks(per)
            .map(|parts| {
                let all = parts.iter().fold(CpuMask::new(), |acc, m| acc.or(m));
                all.iter().map(|c| c as u32).collect()
            })
            .collect();
        let cores = self.cores_of_sockets(&members, rounded)?;
        for (s, members) in members.iter().enumerate() {
            let socket = SocketPlacement {
                package: s as u32,
                threads: self.threads(),
                cores,
                rounded,
                threads_last: self.threads_last,
                kind: self.kind,
            };
            socket.place(members, next_core, out);
        }
        Ok(())
    }

    /// Each socket's core count for the x86 threads-last rule. "Core(s)
    /// per socket" is the machine's cores over its sockets rounded down:
    /// it is each socket's count only where the sockets (their NUMA
    /// nodes) hold equal numbers of CPUs. Where they do not and no CPU is
    /// off-line, each socket has the fewest cores of "Thread(s) per core"
    /// threads that hold its CPUs (`None`), if those add up to lscpu's
    /// core count; if they do not, some cores have fewer threads and which
    /// sockets hold them is unknown: an error at the block's line. With
    /// CPUs off-line, or threads a rounded-down average, the stated count
    /// stands for every socket.
    fn cores_of_sockets(
        &self,
        members: &[Vec<u32>],
        rounded: bool,
    ) -> Result<Option<usize>, Error> {
        let Some(c) = self.t.cores_per_socket else {
            return Ok(None);
        };
        let unequal = members.iter().any(|m| m.len() != members[0].len());
        if !(unequal && self.threads_last && self.all_online && !rounded) {
            return Ok(Some(c as usize));
        }
        let fewest: u128 = members
            .iter()
            .map(|m| m.len().div_ceil(self.threads()) as u128)
            .sum();
        let stated = u128::from(self.t.sockets.max(1)) * u128::from(c);
        if (stated..=most_cores(self.t.sockets, c)).contains(&fewest) {
            return Ok(None);
        }
        let sizes: Vec<String> = members.iter().map(|m| m.len().to_string()).collect();
        Err(Error::at_line(
            self.source,
            self.t.line,
            format!(
                "sockets of unequal size ({} on-line CPUs by their NUMA nodes) hold {fewest} \
                 cores of {} threads, but {} Socket(s) × {c} Core(s) per socket means {stated} \
                 to {} cores: which sockets hold the cores of fewer threads is unknown; \
                 `lscpu -p` prints each CPU's core",
                sizes.join(", "),
                self.threads(),
                self.t.sockets,
                most_cores(self.t.sockets, c)
            ),
        ))
    }

    /// Rule 2 on x86: all first threads, then all second threads, across
    /// the machine.
    fn threads_last_across(&self, cpus: &[u32], next_core: &mut u32, out: &mut Vec<Place>) {
        let sockets = self.t.sockets.max(1) as usize;
        let cores_total = core_count(
            cpus.len(),
            self.threads(),
            self.t.cores_per_socket.map(|c| c as usize * sockets),
            self.threads_rounded_down(cpus.len()),
        );
        let per_socket = self
            .t
            .cores_per_socket
            .map_or(cores_total.div_ceil(sockets), |c| c as usize)
            .max(1);
        let base = *next_core;
        for (i, &cpu) in cpus.iter().enumerate() {
            let core = i % cores_total;
            out.push(Place {
                cpu,
                package: ((core / per_socket).min(sockets - 1)) as u32,
                cluster: None,
                big_core: None,
                core: base + core as u32,
                core_os: Some(base + core as u32),
                kind: self.kind,
            });
        }
        *next_core += cores_total as u32;
    }

    /// Rule 2 elsewhere: siblings adjacent, sockets as consecutive runs
    /// ordered by node, then CPU number.
    fn adjacent_runs(
        &self,
        cpus: &[u32],
        node_parts: &[CpuMask],
        next_core: &mut u32,
        out: &mut Vec<Place>,
    ) {
        let sockets = self.t.sockets.max(1) as usize;
        let mut ordered: Vec<u32> = Vec::with_capacity(cpus.len());
        let mut seen = CpuMask::new();
        for part in node_parts {
            for c in part.iter() {
                if !seen.contains(c) {
                    seen.set(c);
                    ordered.push(c as u32);
                }
            }
        }
        ordered.extend(cpus.iter().filter(|&&c| !seen.contains(c as usize)));
        let per_socket = match self.t.cores_per_socket {
            Some(c) => (c as usize * self.threads()).max(1),
            None => cpus.len().div_ceil(sockets).max(1),
        };
        for (s, chunk) in ordered.chunks(per_socket).enumerate() {
            let mut members = chunk.to_vec();
            members.sort_unstable();
            let socket = SocketPlacement {
                package: s.min(sockets - 1) as u32,
                threads: self.threads(),
                cores: None,
                rounded: false,
                threads_last: false,
                kind: self.kind,
            };
            socket.place(&members, next_core, out);
        }
    }
}

/// One socket's CPUs (ascending) split into cores.
struct SocketPlacement {
    package: u32,
    threads: usize,
    cores: Option<usize>,
    /// `threads` is a rounded-down average (see [`core_count`]).
    rounded: bool,
    threads_last: bool,
    kind: Option<u16>,
}

impl SocketPlacement {
    fn place(&self, members: &[u32], next_core: &mut u32, out: &mut Vec<Place>) {
        let cores_here = if self.threads_last {
            core_count(members.len(), self.threads, self.cores, self.rounded)
        } else {
            members.len().div_ceil(self.threads)
        };
        for (pos, &cpu) in members.iter().enumerate() {
            let core = if self.threads_last {
                pos % cores_here
            } else {
                pos / self.threads
            };
            out.push(Place {
                cpu,
                package: self.package,
                cluster: None,
                big_core: None,
                core: *next_core + core as u32,
                core_os: Some(*next_core + core as u32),
                kind: self.kind,
            });
        }
        *next_core += cores_here as u32;
    }
}

/// How many cores `n` CPUs of at most `threads` threads form: lscpu's count
/// when it is possible, else the fewest. Where `threads` is a rounded-down
/// average (`TypePlacement::threads_rounded_down`) lscpu's count stands
/// even below `n / threads`: the CPUs past it are further threads of the
/// first cores, as Linux numbers them on x86.
fn core_count(n: usize, threads: usize, stated: Option<usize>, rounded: bool) -> usize {
    let fewest = n.div_ceil(threads.max(1));
    match stated {
        Some(c) if rounded => c.clamp(1, n.max(1)),
        Some(c) => c.clamp(fewest, n.max(fewest)),
        None => fewest,
    }
}

/// Turns `width`-thread cores into big cores of two thread groups: the even
/// and the odd threads, as POWER9/10 firmware groups them (the
/// `ibm,thread-groups` example in Linux's arch/powerpc/kernel/smp.c pairs
/// interrupt servers {8,10,12,14} and {9,11,13,15}).
fn split_power_big_cores(places: &mut [Place], width: usize) {
    let mut by_core: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for (i, p) in places.iter().enumerate() {
        by_core.entry(p.core).or_default().push(i);
    }
    if by_core.values().any(|v| v.len() > width) {
        return;
    }
    for (core, idxs) in by_core {
        for (pos, &i) in idxs.iter().enumerate() {
            places[i].big_core = Some(core);
            places[i].core = core.saturating_mul(2) + (pos % 2) as u32;
        }
    }
}
