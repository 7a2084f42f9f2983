//! Parsing what a kernel printed on the serial console.

use serde::{Deserialize, Serialize};

/// The bring-up result of one boot, from either kernel.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelResult {
    /// "manycore" or "linux".
    #[serde(default)]
    pub kernel: String,
    /// Strategy (manycore) or "linux".
    #[serde(default)]
    pub bringup: String,
    /// Delay-loop calibration policy (manycore only).
    #[serde(default)]
    pub calibrate: String,
    /// CPUs online at the end, the boot CPU included.
    pub cpus_up: u32,
    /// NUMA nodes with at least one online CPU.
    pub nodes: u32,
    /// Nanoseconds from "Bringing up secondary CPUs" to the last AP online.
    pub bringup_ns: u64,
    /// Logical CPUs that did not come online.
    #[serde(default)]
    pub failed_cpus: Vec<u32>,
    /// CPUs the firmware lists (manycore only).
    #[serde(default)]
    pub cpus_possible: u32,
    /// CPUs the MADT marks enabled (manycore only).
    #[serde(default)]
    pub cpus_present: u32,
    /// CPUs whose per-CPU area and stack lie inside their node's SRAT ranges.
    #[serde(default)]
    pub percpu_on_node: u32,
    /// Whether the kernel ran its local APICs in x2APIC mode.
    #[serde(default)]
    pub x2apic: bool,
    /// Sum of all online CPUs' BogoMIPS.
    #[serde(default)]
    pub bogomips: f64,
    /// Measured TSC frequency.
    #[serde(default)]
    pub tsc_khz: u64,
}

/// One `ACPI: SRAT: Node N PXM P [mem 0xA-0xB]` line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SratRange {
    /// Node number.
    pub node: u32,
    /// First byte.
    pub start: u64,
    /// Last byte (inclusive).
    pub end: u64,
}

/// One `percpu: cpu C apic A node N area X stack Y-Z` line (`percpu_dump`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PercpuLine {
    /// Logical CPU.
    pub cpu: u32,
    /// APIC id.
    pub apic: u32,
    /// Node the kernel placed it on.
    pub node: u32,
    /// Per-CPU area address (one 4 KiB page).
    pub area: u64,
    /// Stack `[start, end)`.
    pub stack: (u64, u64),
    /// The node the memory came from when the CPU's own node had none left.
    pub fallback: Option<u32>,
}

fn hex(s: &str) -> Option<u64> {
    u64::from_str_radix(s.trim().trim_start_matches("0x"), 16).ok()
}

/// Strips a `[    1.234567] ` timestamp, returning seconds in ns and the rest.
fn timestamped(line: &str) -> Option<(u64, &str)> {
    let line = line.trim_start_matches(|c: char| c.is_control());
    let rest = line.strip_prefix('[')?;
    let (ts, rest) = rest.split_once(']')?;
    let (s, frac) = ts.trim().split_once('.')?;
    let secs: u64 = s.parse().ok()?;
    let digits = frac.len().min(9) as u32;
    let frac: u64 = frac.get(..digits as usize)?.parse().ok()?;
    // A timestamp beyond u64 nanoseconds (~584 years) is not a kernel's: treat
    // the line as untimed rather than overflow.
    let ns = secs
        .checked_mul(1_000_000_000)?
        .checked_add(frac * 10u64.pow(9 - digits))?;
    Some((ns, rest.trim_start()))
}

/// Everything the manycore kernel printed that the host checks.
#[derive(Clone, Debug, Default)]
pub struct ManycoreOutput {
    /// The final result line.
    pub result: Option<KernelResult>,
    /// SRAT memory ranges.
    pub srat: Vec<SratRange>,
    /// Per-CPU placement lines.
    pub percpu: Vec<PercpuLine>,
    /// The scheduler-domain lines (`sched_domains:`, `sched_domain:`,
    /// `sched_domain_cpu:`), verbatim after the timestamp; see
    /// [`crate::parse_kernel_domains`].
    pub domains: Vec<String>,
    /// "CPU N failed to come online" CPUs.
    pub failed_lines: Vec<u32>,
    /// `topology: ...` summary lines, verbatim after the timestamp.
    pub topology: Vec<String>,
    /// `cputopo:` lines (`topo_dump`).
    pub cpu_facts: Vec<CpuFacts>,
    /// `topology: node N distances ...` rows, by node.
    pub distances: Vec<(u32, Vec<u32>)>,
    /// `cputopo: cache` lines (`topo_dump`): the cache instances of the
    /// kernel's model, read from CPUID.
    pub caches: Vec<topology::Cache>,
}

/// Parses `L1d size 65536 line 64 ways 2 cpus 0-1` (after `cputopo: cache `):
/// level and kind, size in bytes, line size, ways (`-` unknown, 0 fully
/// associative), sharing CPUs. `None` if any field is malformed.
fn parse_cache_line(rest: &str) -> Option<topology::Cache> {
    use topology::CacheKind;
    let w: Vec<&str> = rest.split_whitespace().collect();
    if w.len() != 9 || w[1] != "size" || w[3] != "line" || w[5] != "ways" || w[7] != "cpus" {
        return None;
    }
    let name = w[0].strip_prefix('L')?;
    let (level, kind) = match name.strip_suffix('d') {
        Some(l) => (l, CacheKind::Data),
        None => match name.strip_suffix('i') {
            Some(l) => (l, CacheKind::Instruction),
            None => (name, CacheKind::Unified),
        },
    };
    fn opt<T: std::str::FromStr>(v: &str) -> Option<Option<T>> {
        if v == "-" {
            Some(None)
        } else {
            v.parse().ok().map(Some)
        }
    }
    let cpus = cpumask::CpuMask::parse_list(w[8]).ok()?;
    if cpus.is_empty() {
        return None;
    }
    Some(topology::Cache {
        level: level.parse().ok()?,
        kind,
        size_bytes: opt(w[2])?,
        line_bytes: opt(w[4])?,
        ways: opt(w[6])?,
        cpus,
    })
}

/// One `cputopo: cpu C apic A package P die D core K node N online O` line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuFacts {
    /// Logical CPU.
    pub cpu: u32,
    /// APIC id.
    pub apic: u32,
    /// Package id.
    pub package: u32,
    /// Die id, when the machine has dies.
    pub die: Option<u32>,
    /// Core id within its package.
    pub core: u32,
    /// NUMA node.
    pub node: Option<u32>,
    /// Online at the end of bring-up.
    pub online: bool,
}

/// Parses the manycore kernel's console output.
pub fn parse_manycore(output: &str) -> ManycoreOutput {
    let mut out = ManycoreOutput::default();
    for raw in output.lines() {
        let raw = raw.trim_end_matches('\r');
        if let Some(json) = raw.split_once("MANYCORE-RESULT ").map(|(_, j)| j) {
            if let Ok(mut r) = serde_json::from_str::<KernelResult>(json.trim()) {
                r.kernel = "manycore".into();
                out.result = Some(r);
            }
            continue;
        }
        let Some((_, line)) = timestamped(raw) else {
            continue;
        };
        if let Some(rest) = line.strip_prefix("ACPI: SRAT: Node ") {
            // "N PXM P [mem 0xA-0xB]"
            let mut words = rest.split_whitespace();
            let node = words.next().and_then(|w| w.parse().ok());
            let range = rest
                .split_once("[mem ")
                .and_then(|(_, r)| r.split_once(']'))
                .map(|(r, _)| r);
            if let (Some(node), Some((a, b))) = (node, range.and_then(|r| r.split_once('-'))) {
                if let (Some(start), Some(end)) = (hex(a), hex(b)) {
                    out.srat.push(SratRange { node, start, end });
                }
            }
        } else if let Some(rest) = line.strip_prefix("percpu: ") {
            let w: Vec<&str> = rest.split_whitespace().collect();
            // cpu C apic A node N area X stack Y-Z [fallback node M]
            if w.len() == 10 || w.len() == 13 {
                let fallback = w.get(12).and_then(|n| n.parse().ok());
                let stack = w[9]
                    .split_once('-')
                    .and_then(|(a, b)| Some((hex(a)?, hex(b)?)));
                if let (Ok(cpu), Ok(apic), Ok(node), Some(area), Some(stack)) =
                    (w[1].parse(), w[3].parse(), w[5].parse(), hex(w[7]), stack)
                {
                    out.percpu.push(PercpuLine {
                        cpu,
                        apic,
                        node,
                        area,
                        stack,
                        fallback,
                    });
                }
            }
        } else if let Some(rest) = line.strip_prefix("cputopo: cache ") {
            if let Some(cache) = parse_cache_line(rest) {
                out.caches.push(cache);
            }
        } else if let Some(rest) = line.strip_prefix("cputopo: ") {
            let w: Vec<&str> = rest.split_whitespace().collect();
            let num = |i: usize| w.get(i).and_then(|v| v.parse::<u32>().ok());
            if let (14, Some(cpu), Some(apic), Some(package), Some(core)) =
                (w.len(), num(1), num(3), num(5), num(9))
            {
                out.cpu_facts.push(CpuFacts {
                    cpu,
                    apic,
                    package,
                    die: num(7),
                    core,
                    node: num(11),
                    online: w[13] == "1",
                });
            }
        } else if line.starts_with("topology: ") {
            if let Some((node, row)) = line
                .strip_prefix("topology: node ")
                .and_then(|r| r.split_once(" distances "))
            {
                let row: Vec<u32> = row
                    .split_whitespace()
                    .filter_map(|v| v.parse().ok())
                    .collect();
                if let Ok(node) = node.parse() {
                    out.distances.push((node, row));
                }
            }
            out.topology.push(line.to_string());
        } else if line.starts_with("sched_domain") {
            out.domains.push(line.to_string());
        } else if let Some(rest) = line.strip_prefix("smpboot: CPU ") {
            if rest.contains("failed to come online") {
                if let Some(Ok(cpu)) = rest.split_whitespace().next().map(str::parse) {
                    out.failed_lines.push(cpu);
                }
            }
        }
    }
    out
}

/// Parses a Linux kernel's console output: the time between "smp: Bringing up
/// secondary CPUs" and "smp: Brought up N nodes, M CPUs". `None` until both
/// lines have been seen.
pub fn parse_linux(output: &str) -> Option<KernelResult> {
    let mut start = None;
    for raw in output.lines() {
        let Some((ts, line)) = timestamped(raw.trim_end_matches('\r')) else {
            continue;
        };
        if line.starts_with("smp: Bringing up secondary CPUs") {
            start = Some(ts);
        } else if let Some(rest) = line.strip_prefix("smp: Brought up ") {
            // "1 node, 8 CPUs" / "4 nodes, 64 CPUs"
            let mut nums = rest
                .split(|c: char| !c.is_ascii_digit())
                .filter(|s| !s.is_empty())
                .filter_map(|s| s.parse::<u32>().ok());
            let (nodes, cpus) = (nums.next()?, nums.next()?);
            return Some(KernelResult {
                kernel: "linux".into(),
                bringup: "linux".into(),
                cpus_up: cpus,
                nodes,
                bringup_ns: ts.saturating_sub(start?),
                ..KernelResult::default()
            });
        }
    }
    None
}

/// Rebuilds the shared topology model from the kernel's `cputopo:` (CPU and
/// cache) and distance lines, the way the kernel built it.
pub fn kernel_topology(out: &ManycoreOutput) -> Result<topology::Topology, topology::BuildError> {
    use topology::{Arch, CpuSpec, HwIdKind, TopologyBuilder};
    let mut b = TopologyBuilder::new(Arch::X86_64);
    b.source("qemu").hw_id_kind(HwIdKind::ApicId);
    let mut nodes: Vec<u32> = out.cpu_facts.iter().filter_map(|c| c.node).collect();
    nodes.sort_unstable();
    nodes.dedup();
    for c in &out.cpu_facts {
        b.add_cpu(CpuSpec {
            id: c.cpu,
            hw_id: Some(c.apic as u64),
            online: c.online,
            package: c.package,
            die: c.die,
            core: c.core,
            node: c.node,
            ..CpuSpec::default()
        });
    }
    for &n in &nodes {
        let mask = out
            .cpu_facts
            .iter()
            .filter(|c| c.node == Some(n))
            .map(|c| c.cpu as usize)
            .collect();
        b.add_node(n, mask, None);
    }
    if nodes.len() > 1 {
        let mut d = Vec::new();
        for &n in &nodes {
            if let Some((_, row)) = out.distances.iter().find(|(m, _)| *m == n) {
                d.extend_from_slice(row);
            }
        }
        b.distances(d);
    }
    for cache in &out.caches {
        b.add_cache(cache.clone());
    }
    b.build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cache_facts_and_skips_malformed_ones() {
        use topology::CacheKind;
        let out = "[    0.36] cputopo: cache L1d size 65536 line 64 ways 2 cpus 0\n\
            [    0.36] cputopo: cache L1i size - line - ways - cpus 1\n\
            [    0.37] cputopo: cache L3 size 16777216 line 64 ways 0 cpus 0-7\n\
            [    0.37] cputopo: cache L3 size 16M line 64 ways 16 cpus 8-15\n\
            [    0.37] cputopo: cache L2 size 1 line 64 ways 16 cpus\n\
            [    0.37] cputopo: cache X2 size 1 line 64 ways 16 cpus 3\n";
        let o = parse_manycore(out);
        let got: Vec<_> = o
            .caches
            .iter()
            .map(|c| {
                (
                    c.level,
                    c.kind,
                    c.size_bytes,
                    c.line_bytes,
                    c.ways,
                    c.cpus.to_list_string(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (
                    1,
                    CacheKind::Data,
                    Some(65536),
                    Some(64),
                    Some(2),
                    "0".to_string()
                ),
                (1, CacheKind::Instruction, None, None, None, "1".to_string()),
                (
                    3,
                    CacheKind::Unified,
                    Some(16 << 20),
                    Some(64),
                    Some(0),
                    "0-7".to_string()
                ),
            ]
        );
        assert!(o.cpu_facts.is_empty(), "cache lines are not CPU lines");
    }

    #[test]
    fn parses_linux_bringup_lines() {
        let out = "[    0.101000] smp: Bringing up secondary CPUs ...\r\n\
                   [    0.102] x86: Booting SMP configuration:\n\
                   [    2.351500] smp: Brought up 4 nodes, 64 CPUs\n";
        let r = parse_linux(out).unwrap();
        assert_eq!((r.cpus_up, r.nodes), (64, 4));
        assert_eq!(r.bringup_ns, 2_250_500_000);
        assert!(parse_linux("[ 0.1] smp: Bringing up secondary CPUs ...").is_none());
    }

    #[test]
    fn parses_manycore_lines() {
        let out = "[    0.036805] ACPI: SRAT: Node 1 PXM 1 [mem 0x10000000-0x1fffffff]\n\
            [    0.056216] percpu: cpu 2 apic 2 node 1 area 0x10004000 stack 0x10000000-0x10004000\n\
            [    0.200774] smpboot: CPU 8 failed to come online (APIC id 77: no call-in within 100 ms), skipped\n\
            MANYCORE-RESULT {\"bringup\":\"parallel\",\"cpus_up\":8,\"nodes\":4,\"bringup_ns\":131288801,\"failed_cpus\":[8],\"percpu_on_node\":9}\n";
        let o = parse_manycore(out);
        assert_eq!(
            o.srat,
            [SratRange {
                node: 1,
                start: 0x1000_0000,
                end: 0x1fff_ffff
            }]
        );
        assert_eq!(
            o.percpu,
            [PercpuLine {
                cpu: 2,
                apic: 2,
                node: 1,
                area: 0x1000_4000,
                stack: (0x1000_0000, 0x1000_4000),
                fallback: None,
            }]
        );
        assert_eq!(o.failed_lines, [8]);
        let r = o.result.unwrap();
        assert_eq!(
            (r.cpus_up, r.nodes, r.failed_cpus.as_slice()),
            (8, 4, &[8][..])
        );
        assert_eq!(r.kernel, "manycore");
    }
}
