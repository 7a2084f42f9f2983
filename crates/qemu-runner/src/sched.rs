//! The scheduler domains the kernel printed (`domains::render::compact_lines`):
//! a `sched_domains:` header, one `sched_domain:` line per distinct domain and
//! one `sched_domain_cpu:` line per CPU referring to them by id. Parsed here
//! into plain values so that a test compares them with `domains::build` run on
//! the host, field by field, rather than text with text.

use std::collections::BTreeMap;

use cpumask::CpuMask;

/// One domain of one CPU, as the kernel printed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelDomain {
    /// `SMT`, `CLS`, `MC`, `PKG`, `NODE`, `NUMA`.
    pub name: String,
    /// The CPUs it spans.
    pub span: CpuMask,
    /// Flag names (`SD_...`), in the kernel's bit order.
    pub flags: Vec<String>,
    /// Its groups, sorted by first CPU then cpulist (the set, not the rotation).
    pub groups: Vec<CpuMask>,
}

/// Every online CPU's domains, as the kernel printed them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelDomains {
    /// The kernel version whose rules were followed (`6.12`).
    pub kernel: String,
    /// The CPUs domains were built on.
    pub online: CpuMask,
    /// Each CPU's domains, lowest first.
    pub cpus: BTreeMap<u32, Vec<KernelDomain>>,
}

/// Parses the kernel's scheduler-domain lines (as collected in
/// [`crate::ManycoreOutput::domains`]). Lines of other shapes (the build time)
/// are skipped; a malformed domain or CPU line, or a reference to an unknown
/// domain, is an error quoting the line.
pub fn parse_kernel_domains(lines: &[String]) -> Result<KernelDomains, String> {
    let mut out = KernelDomains::default();
    let mut header = false;
    let mut defs: BTreeMap<usize, KernelDomain> = BTreeMap::new();
    let bad = |line: &str, why: &str| format!("scheduler-domain line '{line}': {why}");
    for line in lines {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.first().copied() {
            Some("sched_domains:") if w.get(1) == Some(&"kernel") => {
                if w.len() != 7 || w[3] != "online" || w[5] != "distinct" {
                    return Err(bad(line, "expected 'kernel V online LIST distinct N'"));
                }
                out.kernel = w[2].to_string();
                out.online = CpuMask::parse_list(w[4]).map_err(|e| bad(line, &e.to_string()))?;
                header = true;
            }
            Some("sched_domain:") => {
                // sched_domain: ID NAME span LIST flags F,F|- groups LIST...
                if w.len() < 7 || w[3] != "span" || w[5] != "flags" || w.get(7) != Some(&"groups") {
                    return Err(bad(
                        line,
                        "expected 'ID NAME span LIST flags F groups G...'",
                    ));
                }
                let id: usize = w[1].parse().map_err(|_| bad(line, "bad id"))?;
                let list = |t: &str| CpuMask::parse_list(t).map_err(|e| bad(line, &e.to_string()));
                let flags = if w[6] == "-" {
                    Vec::new()
                } else {
                    w[6].split(',').map(str::to_string).collect()
                };
                let groups = w[8..].iter().map(|t| list(t)).collect::<Result<_, _>>()?;
                let d = KernelDomain {
                    name: w[2].to_string(),
                    span: list(w[4])?,
                    flags,
                    groups,
                };
                if defs.insert(id, d).is_some() {
                    return Err(bad(line, "domain id defined twice"));
                }
            }
            Some("sched_domain_cpu:") => {
                if w.len() < 3 || w[2] != "domains" {
                    return Err(bad(line, "expected 'CPU domains ID...'"));
                }
                let cpu: u32 = w[1].parse().map_err(|_| bad(line, "bad CPU number"))?;
                let chain = w[3..]
                    .iter()
                    .map(|t| {
                        t.parse::<usize>()
                            .ok()
                            .and_then(|id| defs.get(&id).cloned())
                            .ok_or_else(|| bad(line, &format!("unknown domain id '{t}'")))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                if out.cpus.insert(cpu, chain).is_some() {
                    return Err(bad(line, "CPU listed twice"));
                }
            }
            _ => {}
        }
    }
    if !header {
        return Err("no 'sched_domains: kernel ...' header line in the kernel output".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    #[test]
    fn parses_definitions_and_references() {
        let d = parse_kernel_domains(&lines(
            "sched_domains: kernel 6.12 online 0-3 distinct 3\n\
             sched_domain: 0 SMT span 0-1 flags SD_SHARE_CPUCAPACITY,SD_SHARE_LLC groups 0 1\n\
             sched_domain: 1 SMT span 2-3 flags SD_SHARE_CPUCAPACITY,SD_SHARE_LLC groups 2 3\n\
             sched_domain: 2 PKG span 0-3 flags - groups 0-1 2-3\n\
             sched_domain_cpu: 0 domains 0 2\n\
             sched_domain_cpu: 3 domains 1 2\n\
             sched_domains: built for 4 CPUs in 10 us (not part of bringup_ns)",
        ))
        .unwrap();
        assert_eq!(d.kernel, "6.12");
        assert_eq!(d.online.to_list_string(), "0-3");
        let cpu3 = &d.cpus[&3];
        assert_eq!(cpu3.len(), 2);
        assert_eq!(cpu3[0].name, "SMT");
        assert_eq!(cpu3[0].span.to_list_string(), "2-3");
        assert_eq!(cpu3[0].flags, ["SD_SHARE_CPUCAPACITY", "SD_SHARE_LLC"]);
        assert!(cpu3[1].flags.is_empty());
        let groups: Vec<String> = cpu3[1].groups.iter().map(|g| g.to_list_string()).collect();
        assert_eq!(groups, ["0-1", "2-3"]);
    }

    #[test]
    fn refuses_unknown_ids_and_missing_header() {
        let e = parse_kernel_domains(&lines(
            "sched_domains: kernel 6.12 online 0 distinct 0\nsched_domain_cpu: 0 domains 5",
        ))
        .unwrap_err();
        assert!(e.contains("unknown domain id '5'"), "{e}");
        let e = parse_kernel_domains(&lines("sched_domain_cpu: 0 domains")).unwrap_err();
        assert!(e.contains("header"), "{e}");
        let e = parse_kernel_domains(&lines(
            "sched_domains: kernel 6.12 online 0 distinct 1\nsched_domain: 0 SMT span x flags - groups 0",
        ))
        .unwrap_err();
        assert!(e.contains("sched_domain: 0 SMT span x"), "{e}");
    }

    proptest::proptest! {
        /// Whatever the serial line delivers (garbled, cut, foreign lines),
        /// parsing returns a value or an error, never panics; and any line of
        /// a real output cut short is either skipped or refused.
        #[test]
        fn arbitrary_lines_never_panic(
            text in proptest::collection::vec(
                proptest::prop_oneof![
                    "sched_domain: [0-9]{1,3} [A-Z]{2,4} span [0-9,-]{0,12} flags [A-Z_,-]{0,30} groups[ 0-9,-]{0,20}",
                    "sched_domain_cpu: [0-9]{1,4} domains[ 0-9]{0,12}",
                    "sched_domains: kernel [0-9.]{1,5} online [0-9,-]{0,10} distinct [0-9]{1,3}",
                    ".{0,80}",
                ],
                0..12,
            ),
            cut in 0usize..200,
        ) {
            let _ = parse_kernel_domains(&text);
            let mut real = lines(
                "sched_domains: kernel 6.12 online 0-1 distinct 1\n\
                 sched_domain: 0 SMT span 0-1 flags SD_SHARE_LLC groups 0 1\n\
                 sched_domain_cpu: 0 domains 0\n\
                 sched_domain_cpu: 1 domains 0",
            );
            let which = cut % real.len();
            let keep = (cut / real.len()).min(real[which].len());
            real[which].truncate(keep);
            let _ = parse_kernel_domains(&real);
        }
    }
}
