//! Parsing what a kernel printed on the serial console.

pub use bootproto::report::{
    ApicBase, CpuFacts, KernelResult, PercpuLine, SratRange, Timeline, TopologyLine,
};
use bootproto::report::{CacheLine, FailedCpu};

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
    /// `crate::parse_kernel_domains`.
    pub domains: Vec<String>,
    /// "CPU N failed to come online" CPUs.
    pub failed_lines: Vec<u32>,
    /// `topology:` summary lines, in the order printed.
    pub topology: Vec<TopologyLine>,
    /// `cputopo:` lines (`topo_dump`).
    pub cpu_facts: Vec<CpuFacts>,
    /// The distance rows among [`Self::topology`] (`topology: node N
    /// distances ...`), by node.
    pub distances: Vec<(u32, Vec<u32>)>,
    /// `cputopo: cache` lines (`topo_dump`): the cache instances of the
    /// kernel's model, read from CPUID.
    pub caches: Vec<topology::Cache>,
}

/// Parses the manycore kernel's console output: each line by the one
/// `bootproto::report` type that writes it.
pub fn parse_manycore(output: &str) -> ManycoreOutput {
    let mut out = ManycoreOutput::default();
    for raw in output.lines() {
        let raw = raw.trim_end_matches('\r');
        if raw.contains(bootproto::report::RESULT_PREFIX) {
            if let Some(r) = KernelResult::parse(raw) {
                out.result = Some(KernelResult {
                    kernel: "manycore".into(),
                    ..r
                });
            }
            continue;
        }
        let Some((_, line)) = timestamped(raw) else {
            continue;
        };
        if let Some(r) = SratRange::parse(line) {
            out.srat.push(r);
        } else if let Some(p) = PercpuLine::parse(line) {
            out.percpu.push(p);
        } else if let Some(c) = CacheLine::parse(line) {
            out.caches.push(c.0);
        } else if let Some(c) = CpuFacts::parse(line) {
            out.cpu_facts.push(c);
        } else if let Some(f) = FailedCpu::parse(line) {
            out.failed_lines.push(f.cpu);
        } else if let Some(t) = TopologyLine::parse(line) {
            if let TopologyLine::Distances(d) = &t {
                out.distances.push((d.node, d.row.clone()));
            }
            out.topology.push(t);
        } else if line.starts_with("sched_domain") {
            out.domains.push(line.to_string());
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
            .collect::<topology::CompactMask>();
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
            [    0.056216] percpu: cpu 2 apic 2 node 1 area 0x10004000 stack 0x10000000-0x10004000 callin 2 apicbase 0xfee00c00\n\
            [    0.200774] smpboot: CPU 8 failed to come online (APIC id 77: no call-in within 100 ms), skipped\n\
            MANYCORE-RESULT {\"bringup\":\"parallel\",\"cpus_up\":8,\"nodes\":4,\"bringup_ns\":131288801,\"failed_cpus\":[8],\"percpu_on_node\":9}\n";
        let o = parse_manycore(out);
        assert_eq!(
            o.srat,
            [SratRange {
                node: 1,
                pxm: 1,
                start: 0x1000_0000,
                end: 0x1fff_ffff,
                hotplug: false,
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
                callin_apic: Some(2),
                callin_apic_base: Some(0xfee0_0c00),
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
