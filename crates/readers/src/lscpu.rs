//! lscpu's text: read its human-readable summary (and its `--parse` CSV), and
//! write the summary back for the fields the model holds.
//!
//! # Reading
//!
//! [`parse`] accepts the summary of every util-linux generation seen in the
//! corpus and the seeds: the old layout (`L2 cache: 512K`, per-instance sizes,
//! `NUMA node(s)` early), the modern flat layout (`L1d cache: 6 MiB (192
//! instances)`, sums over instances) and the hierarchic terminal layout
//! (indented fields, `L1d:` under `Caches (sum of all):`). Hybrid machines
//! print one block per CPU type; a field that repeats within the current block
//! starts the next block. Unknown fields are ignored (a translated one
//! too when it is none of the fields read, as long as the counts of CPUs,
//! threads and cores are in English); a
//! malformed value of a known field, or counts that contradict each other
//! (under both ways util-linux has counted threads per core), is an
//! [`Error`] naming the line.
//!
//! `lscpu -J` and `lscpu -J -e` (JSON, flat or nested as util-linux 2.37+
//! nests it) are read as the text lscpu prints for the same fields and
//! columns (`lscpu/json.rs`), with errors naming the JSON's lines.
//!
//! If the text also holds `lscpu --parse` output (`# CPU,Core,Socket,Node,,L1d,...`
//! and one row per CPU), the first such block gives every CPU's exact core,
//! socket, node and cache instances, and nothing below is inferred. lscpu
//! numbers cores per CPU type (a hybrid Arm SoC prints Core 0 for a CPU of
//! each type): with the summary's types a core is a (type, Core) pair; a
//! table alone tells the types' cores apart by their L2, which a core's
//! threads share and no two core types do (outside POWER).
//!
//! # What the summary does not say, and how it is inferred
//!
//! The summary gives counts, not which CPU is where. The reader places the
//! on-line CPUs as Linux numbers them:
//!
//! 1. **Sockets.** If the NUMA nodes holding CPUs divide evenly among the
//!    sockets, each socket is made of whole nodes, in node order (POWER sets
//!    `cpu_core_mask` to the node since seed 000's patches, so lscpu's
//!    "Socket(s)" equals the node count there; Kunpeng 920 has two nodes per
//!    socket). Otherwise CPUs are cut into sockets of `cores × threads` in
//!    order of node, then CPU number.
//! 2. **Cores.** On x86 (i386, x86_64) Linux numbers CPUs in ACPI MADT order,
//!    which on servers lists every core's first thread before any second thread
//!    (seed 002: "Booting Node 0, Processors #16 .. #23" after node 1's #8..#15
//!    on a 2 × 8 × 2 machine). So within a socket of `n` CPUs, the CPUs at
//!    positions `i` and `i + n / threads` are siblings; without node boundaries
//!    the same rule runs across the whole machine. **This is an assumption**
//!    (BIOSes may differ); the parsable form overrides it. "Core(s) per
//!    socket" is the machine's cores over its sockets, rounded down: where
//!    whole nodes make sockets of unequal size (no CPU off-line), each
//!    socket has the fewest cores of "Thread(s) per core" threads that
//!    hold its CPUs, provided they add up to lscpu's core count; if they
//!    do not, which socket holds the cores of fewer threads is unknown and
//!    the summary is refused at its block. Without node lists unequal
//!    sockets cannot be seen: sockets are runs of "Core(s) per socket"
//!    cores, the last one taking the rest (an approximation). Everywhere else
//!    (POWER, arm64, RISC-V, s390, LoongArch...) siblings are adjacent: each
//!    run of `threads` consecutive CPUs within a socket is one core.
//! 3. **POWER big cores.** On POWER with 8 threads per core, when the model is
//!    POWER9/10/11 or the L1 instance count is twice the core count (seed 001:
//!    96 cores, 192 L1d instances), each lscpu core is a big core of two SMT4
//!    thread groups, the even and the odd threads (the `ibm,thread-groups`
//!    layout): the model gets a `BigCore` level and `Core` is the small core.
//! 4. **Caches.** What a size means depends on the util-linux that printed
//!    it. Before 2.34 it is one instance's size (`L2 cache: 512K`); lscpu
//!    does not say who shares it, so L1 is per (small) core, L2 per core
//!    (big core on POWER9/10), L3 per core on POWER and per socket
//!    elsewhere, L4 and beyond per machine. 2.34–2.36 print the sum over
//!    `cores / cores sharing one instance` instances without the count
//!    (`L3 cache: 49.5 MiB`): the sharing is the same as before, the count
//!    is its number of groups; with CPUs off-line or cores of unequal
//!    thread counts that sum is no instance count's, and the size is left
//!    unknown. 2.37 and later print the sum with the count
//!    (`L1d cache: 6 MiB (192 instances)`): the sharing is the level whose
//!    group count equals it (small cores, cores, threads, nodes, sockets, or
//!    the machine), else equal runs of consecutive cores or CPUs; a line
//!    without a count in such an output (s390's external caches) is one
//!    instance for the machine. The per-instance size of a sum is the whole
//!    number of KiB whose sum lscpu would print the same way (3.8 MiB over
//!    80 instances → 48 KiB; see `lscpu/caches.rs`). A count that splits no
//!    level or run evenly, or a sum that no equal whole-KiB size explains
//!    (instances of unequal size, as on some hybrid machines), is an error
//!    naming the line rather than a guess. On hybrid machines whose sum does
//!    split evenly, each instance gets the even share: the summary cannot
//!    tell unequal instances that happen to average to a whole size apart.
//! 5. **Hybrid machines.** Each CPU-type block's CPUs are taken to follow one
//!    another in the order lscpu prints the blocks; each block becomes a core kind.
//! 6. **Off-line CPUs** are present but have no known place: the summary's
//!    off-line list, or, for a table printed alone (`lscpu -e`), the rows
//!    whose ONLINE column says no. CPUs named in a node list but neither
//!    on-line nor off-line are possible, not present.
//! 7. **Architecture.** util-linux's test outputs drop the "Architecture:"
//!    line; it is then guessed from the vendor, model name, ISA or flags.
//!
//! lscpu printed in another language is refused, one error naming the first
//! line whose label is a translation util-linux's po files hold of a label
//! read here (German's "Thread(s) pro Kern" is ASCII, and read as an unknown
//! field it would leave one thread per core without a word), or else the
//! first non-ASCII label (every English label is ASCII) when the counts of
//! CPUs, threads and cores are not all in English.
//!
//! Counts are checked against the on-line CPUs when none is off-line. lscpu
//! prints the most threads any core has and `cores / sockets` rounded down,
//! so a machine with `S` sockets, `C` cores per socket and `T` threads per
//! core has `S·C` to `S·C + S − 1` cores, one with `T` threads and the rest
//! with 1 to `T`: its on-line count must lie in `[S·C − 1 + T, (S·C + S − 1)·T]`.
//! Regular machines must therefore match `S·C·T` closely, while unequal
//! sockets (POWER LPAR nodes of 136 and 120 CPUs) and cores (Intel hybrids:
//! 12 cores, 20 CPUs) pass. s390's book/drawer counts describe the configured
//! machine and are not checked. Where cores have unequal thread counts, the
//! x86 threads-last rule still gives lscpu's core count (the first cores get
//! the second threads); which cores those are is not knowable from the summary.
//!
//! # Writing
//!
//! [`summary`] prints lscpu's flat (non-terminal) layout for the modelled
//! fields: labels padded to the longest label plus one space, as libsmartcols
//! lays out lscpu's two columns; cpulists in lscpu's own form (`0-62:2`);
//! cache sums as `6 MiB (192 instances)`.

mod build;
mod caches;
mod format;
mod json;
mod scan;
mod translated;

use cpumask::CpuMask;
use topology::{CacheKind, LevelKind, Topology};

use crate::Error;

pub use format::{cpulist, human_size, parse_cpulist};

/// Parses lscpu's output: its human-readable summary and tables, or the
/// same as JSON (`lscpu -J`, `lscpu -J -e`); `source` names the input in
/// errors.
pub fn parse(text: &str, source: &str) -> Result<Topology, Error> {
    if json::is_json(text) {
        let (text, origin) = json::to_text(text, source)?;
        return parse_text(&text, source).map_err(|e| json::relocate(e, &origin));
    }
    parse_text(text, source)
}

fn parse_text(text: &str, source: &str) -> Result<Topology, Error> {
    let scanned = scan::scan(text, source)?;
    build::build(&scanned, source)
}

/// Reads a file of lscpu output, refusing FIFOs, devices and files past
/// [`crate::limits::LSCPU_FILE_LIMIT`] before reading them.
pub fn read_path(path: &std::path::Path) -> Result<Topology, Error> {
    let limit = crate::limits::LSCPU_FILE_LIMIT;
    let text = crate::limits::read_text_input(path, limit, "lscpu output")?;
    parse(&text, &path.display().to_string())
}

/// The counts lscpu's summary prints, computed from a topology the way
/// util-linux computes them from sysfs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counts {
    /// "CPU(s):": present CPUs.
    pub cpus: usize,
    /// On-line CPUs.
    pub online: CpuMask,
    /// Present but off-line CPUs.
    pub offline: CpuMask,
    /// "Thread(s) per core:": the most on-line threads in one core, where a
    /// core is what sysfs calls `thread_siblings` (a POWER9/10 big core).
    pub threads_per_core: usize,
    /// "Core(s) per socket:": cores with an on-line CPU divided by sockets.
    pub cores_per_socket: usize,
    /// "Socket(s):": packages with an on-line CPU.
    pub sockets: usize,
    /// Cores with an on-line CPU.
    pub cores: usize,
    /// "NUMA node(s):".
    pub nodes: usize,
}

/// lscpu's counts for `topology`.
pub fn counts(topology: &Topology) -> Counts {
    // sysfs thread_siblings on POWER9/10 big-core machines is the big core.
    let core_level = if topology.level(LevelKind::BigCore).is_some() {
        LevelKind::BigCore
    } else {
        LevelKind::Core
    };
    let online = *topology.online();
    let mut threads = 0;
    let mut cores = 0usize;
    if let Some(level) = topology.level(core_level) {
        for g in &level.groups {
            let n = g.cpus.and_weight(&online);
            if n > 0 {
                cores += 1;
                threads = threads.max(n);
            }
        }
    }
    let sockets = topology.level(LevelKind::Package).map_or(0, |l| {
        l.groups
            .iter()
            .filter(|g| g.cpus.intersects(&online))
            .count()
    });
    Counts {
        cpus: topology.present().weight(),
        online,
        offline: topology.present().and_not(&online),
        threads_per_core: threads,
        cores_per_socket: cores.checked_div(sockets).unwrap_or(0),
        sockets,
        cores,
        nodes: topology.nodes().len(),
    }
}

/// lscpu's name for a cache: `L1d`, `L1i`, `L2`...
pub fn cache_name(level: u8, kind: CacheKind) -> String {
    format!("L{level}{}", kind.suffix())
}

/// The modelled summary fields as (label with colon, value) pairs, in
/// lscpu's order.
pub fn summary_fields(topology: &Topology) -> Vec<(String, String)> {
    let c = counts(topology);
    let mut f: Vec<(String, String)> = Vec::new();
    let mut push = |label: &str, value: String| f.push((format!("{label}:"), value));
    push("Architecture", topology.arch().uname().to_string());
    push("CPU(s)", c.cpus.to_string());
    push("On-line CPU(s) list", cpulist(&c.online));
    if !c.offline.is_empty() {
        push("Off-line CPU(s) list", cpulist(&c.offline));
    }
    push(
        "Model name",
        topology.model_name().unwrap_or("-").to_string(),
    );
    push("Thread(s) per core", c.threads_per_core.to_string());
    push("Core(s) per socket", c.cores_per_socket.to_string());
    push("Socket(s)", c.sockets.to_string());
    if let Some(h) = topology.hypervisor() {
        push("Hypervisor vendor", h.to_string());
    }
    // Sum and count per cache name, names in strcmp order as lscpu sorts them;
    // lscpu leaves out caches whose sizes sum to zero.
    let mut sums: std::collections::BTreeMap<String, (u64, usize)> = Default::default();
    for cache in topology.caches() {
        let e = sums.entry(cache_name(cache.level, cache.kind)).or_default();
        e.0 += cache.size_bytes.unwrap_or(0);
        e.1 += 1;
    }
    for (name, (bytes, n)) in sums {
        if bytes == 0 {
            continue;
        }
        let plural = if n == 1 { "instance" } else { "instances" };
        push(
            &format!("{name} cache"),
            format!("{} ({n} {plural})", human_size(bytes)),
        );
    }
    if !topology.nodes().is_empty() {
        push("NUMA node(s)", topology.nodes().len().to_string());
        for node in topology.nodes() {
            push(
                &format!("NUMA node{} CPU(s)", node.id),
                cpulist(&node.cpus.to_cpumask()),
            );
        }
    }
    f
}

/// Prints lscpu's summary lines for the fields the model holds.
pub fn summary(topology: &Topology) -> String {
    let fields = summary_fields(topology);
    let width = fields.iter().map(|(l, _)| l.len()).max().unwrap_or(0) + 1;
    let mut out = String::new();
    for (label, value) in fields {
        if value.is_empty() {
            // libsmartcols does not pad a line whose last cell is empty.
            out.push_str(&label);
        } else {
            out.push_str(&format!("{label:width$}{value}"));
        }
        out.push('\n');
    }
    out
}
