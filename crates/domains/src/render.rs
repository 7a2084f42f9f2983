//! The kernel's own file layouts (v5.9 procfs, v6.x debugfs), a readable text
//! form that also says why domains were removed, and JSON.

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use core::fmt::{self, Write};
#[cfg(feature = "std")]
use std::io;
#[cfg(feature = "std")]
use std::path::Path;

use crate::build::{CpuDomains, Domain, Domains, GroupSpan, Reason};
use crate::flags::KernelVersion;
use cpumask::{AsWords, CpuMask};

/// Which of the kernel's directory layouts to produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// `/proc/sys/kernel/sched_domain/cpuN/domainM/` (v5.9 and older): decimal flags.
    Proc,
    /// `/sys/kernel/debug/sched/domains/cpuN/domainM/` (v5.13+): flag names.
    Debugfs,
}

impl Layout {
    /// The directory the kernel puts this layout in.
    pub fn kernel_root(self) -> &'static str {
        match self {
            Layout::Proc => "/proc/sys/kernel/sched_domain",
            Layout::Debugfs => "/sys/kernel/debug/sched/domains",
        }
    }
}

/// The files of one domain directory as `kernel` shows them in `layout`, each with
/// its exact contents (trailing newline included), in `ls` order for debugfs and
/// in the kernel's table order for procfs.
///
/// `max_newidle_lb_cost` is a run-time measurement; it is given as 0, the value
/// `sd_init()` starts it at.
pub fn domain_files(domains: &Domains, layout: Layout, d: &Domain) -> Vec<(&'static str, String)> {
    let k = domains.kernel;
    let name = domains.name(d);
    match layout {
        Layout::Proc => vec![
            ("min_interval", format!("{}\n", d.min_interval())),
            ("max_interval", format!("{}\n", d.max_interval())),
            ("busy_factor", format!("{}\n", d.busy_factor)),
            ("imbalance_pct", format!("{}\n", d.imbalance_pct)),
            ("cache_nice_tries", format!("{}\n", d.cache_nice_tries)),
            ("flags", format!("{}\n", k.encode(d.flags))),
            ("max_newidle_lb_cost", "0\n".to_string()),
            ("name", format!("{name}\n")),
        ],
        Layout::Debugfs => {
            let mut v = vec![
                ("busy_factor", format!("{}\n", d.busy_factor)),
                ("cache_nice_tries", format!("{}\n", d.cache_nice_tries)),
                ("flags", k.debugfs_flags_text(d.flags)),
            ];
            if k.has_group_flags() {
                v.push(("groups_flags", k.debugfs_flags_text(d.groups_flags)));
            }
            v.push(("imbalance_pct", format!("{}\n", d.imbalance_pct)));
            if k.has_level_file() {
                v.push(("level", format!("{}\n", d.level)));
            }
            v.push(("max_interval", format!("{}\n", d.max_interval())));
            v.push(("max_newidle_lb_cost", "0\n".to_string()));
            v.push(("min_interval", format!("{}\n", d.min_interval())));
            v.push(("name", format!("{name}\n")));
            v
        }
    }
}

/// `grep . <root>/cpuN/domain*/*`-style lines for the selected CPUs.
pub fn render_files(domains: &Domains, layout: Layout, cpus: &[&CpuDomains]) -> String {
    let mut out = String::new();
    let _ = write_files(domains, layout, cpus, &mut out);
    out
}

/// [`render_files`] written to `out` CPU by CPU.
pub fn write_files<W: Write + ?Sized>(
    domains: &Domains,
    layout: Layout,
    cpus: &[&CpuDomains],
    out: &mut W,
) -> fmt::Result {
    let root = layout.kernel_root();
    for c in cpus {
        for (m, d) in c.domains.iter().enumerate() {
            for (file, text) in domain_files(domains, layout, d) {
                writeln!(
                    out,
                    "{root}/cpu{}/domain{m}/{file}:{}",
                    c.cpu,
                    text.trim_end_matches('\n')
                )?;
            }
        }
    }
    Ok(())
}

/// Writes the kernel's layout under `dir` (`dir/cpuN/domainM/<file>`), for
/// every CPU. Nothing is written through a link or into a FIFO or device
/// already in `dir`: such an entry is an error naming it.
#[cfg(feature = "std")]
pub fn write_tree(domains: &Domains, layout: Layout, dir: &Path) -> io::Result<()> {
    use crate::dumpfs::{ensure_dir, write_file};
    // `dir` itself is the user's to name, links and all; what is inside it
    // is checked entry by entry.
    std::fs::create_dir_all(dir)?;
    for c in &domains.cpus {
        let cpu_dir = dir.join(format!("cpu{}", c.cpu));
        ensure_dir(&cpu_dir)?;
        for (m, d) in c.domains.iter().enumerate() {
            let dom_dir = cpu_dir.join(format!("domain{m}"));
            ensure_dir(&dom_dir)?;
            for (file, text) in domain_files(domains, layout, d) {
                write_file(&dom_dir.join(file), &text)?;
            }
        }
    }
    Ok(())
}

/// A readable account: the level table, then per CPU each domain's span, groups,
/// flags and tuning, and the domains that were removed with the reason.
pub fn render_text(domains: &Domains, cpus: &[&CpuDomains]) -> String {
    let mut out = String::new();
    let _ = write_text(domains, cpus, &mut out);
    out
}

/// [`render_text`] written to `out` CPU by CPU.
pub fn write_text<W: Write + ?Sized>(
    domains: &Domains,
    cpus: &[&CpuDomains],
    out: &mut W,
) -> fmt::Result {
    write_text_head(domains, out)?;
    let mut groups = GroupCache::new(domains);
    for c in cpus {
        write_text_cpu(domains, c, &mut groups, out)?;
    }
    Ok(())
}

/// The level table [`render_text`] starts with.
fn write_text_head<W: Write + ?Sized>(domains: &Domains, out: &mut W) -> fmt::Result {
    let k = domains.kernel;
    writeln!(
        out,
        "Linux {} scheduler domains on {} ({} online CPUs: {})",
        k,
        domains.arch.uname(),
        domains.cpu_map.weight(),
        domains.cpu_map
    )?;
    writeln!(out, "levels built from (lowest first):")?;
    for (i, l) in domains.levels.iter().enumerate() {
        let mut extra = String::new();
        if let Some(dist) = l.numa_distance {
            let _ = write!(extra, ", distance <= {dist}");
            if l.overlap && dist > domains.rules.reclaim_distance {
                let _ = write!(
                    extra,
                    " > reclaim distance {}: no EXEC/FORK/WAKE_AFFINE",
                    domains.rules.reclaim_distance
                );
            }
        }
        let tf: Vec<&str> = k.names(l.topology_flags).collect();
        writeln!(
            out,
            "  {i}: {:<5} {}{}{}",
            l.name,
            l.mask_source,
            extra,
            if tf.is_empty() {
                String::new()
            } else {
                format!(" [{}]", tf.join(" "))
            }
        )?;
    }
    if domains.rules.numa_in_package {
        writeln!(
            out,
            "  (a package spans several nodes: no package level, NUMA levels instead)"
        )?;
    }
    if domains.rules.splpar_asym_pack {
        writeln!(
            out,
            "  shared-processor LPAR with big cores: asym packing above SMT, priority = -(cpu / {}), so lower-numbered cores are preferred; no MC level",
            domains.rules.threads_per_core
        )?;
    }
    Ok(())
}

/// One CPU's part of [`render_text`].
fn write_text_cpu<W: Write + ?Sized>(
    domains: &Domains,
    c: &CpuDomains,
    groups: &mut GroupCache,
    out: &mut W,
) -> fmt::Result {
    let k = domains.kernel;
    writeln!(out, "cpu{}:", c.cpu)?;
    for (m, d) in c.domains.iter().enumerate() {
        writeln!(
            out,
            "  domain{m}: {:<5} span={} (level {})",
            domains.name(d),
            domains.span(d),
            d.level
        )?;
        let list: Vec<GroupSpan> = domains.group_order(c.cpu, d);
        writeln!(out, "    groups: {}", groups.fold(&list))?;
        let names: Vec<&str> = k.names(d.flags).collect();
        writeln!(
            out,
            "    flags: {} = {}",
            k.encode(d.flags),
            names.join(" ")
        )?;
        if k.has_group_flags() {
            let g: Vec<&str> = k.names(d.groups_flags).collect();
            writeln!(out, "    groups_flags: {}", g.join(" "))?;
        }
        writeln!(
            out,
            "    interval {}..{} ms, busy_factor {}, imbalance_pct {}, cache_nice_tries {}",
            d.min_interval(),
            d.max_interval(),
            d.busy_factor,
            d.imbalance_pct,
            d.cache_nice_tries
        )?;
    }
    for r in &c.removed {
        let name = domains.levels[r.level as usize].name;
        let why = removed_reason(domains, r);
        writeln!(out, "  removed {name} (level {}): {why}", r.level)?;
    }
    Ok(())
}

/// Shortest run of shifted copies that `fold_groups` folds (shorter lists
/// read well whole).
const MIN_GROUP_RUN: usize = 10;

/// `{0-7} {8-15} … {1016-1023} (128 groups, each the previous + 8)`: a group
/// list with every run of groups that are the same shape shifted by one step
/// folded to its ends, so that 128 groups do not make one line of 2 000
/// characters.
pub fn fold_groups(groups: &[CpuMask]) -> String {
    let groups: Vec<GroupText> = groups.iter().map(GroupText::of).collect();
    fold(&groups.iter().collect::<Vec<_>>())
}

/// A group as the renderers print it: its cpulist and its members.
struct GroupText {
    text: String,
    members: Vec<u32>,
}

impl GroupText {
    fn of(mask: &impl AsWords) -> GroupText {
        let words = mask.as_words();
        let mut text = String::new();
        let _ = words.write_list(&mut text);
        GroupText {
            text,
            members: words.iter().map(|c| c as u32).collect(),
        }
    }
}

/// [`fold_groups`] over groups already made text.
fn fold(groups: &[&GroupText]) -> String {
    let shifted = |a: &GroupText, b: &GroupText| -> Option<u32> {
        let d = b.members.first()?.checked_sub(*a.members.first()?)?;
        (d > 0
            && a.members.len() == b.members.len()
            && a.members.iter().zip(&b.members).all(|(x, y)| x + d == *y))
        .then_some(d)
    };
    let mut parts = Vec::new();
    let mut k = 0;
    while k < groups.len() {
        let mut end = k + 1;
        if let Some(step) = groups.get(k + 1).and_then(|b| shifted(groups[k], b)) {
            while end < groups.len() && shifted(groups[end - 1], groups[end]) == Some(step) {
                end += 1;
            }
            if end - k >= MIN_GROUP_RUN {
                parts.push(format!(
                    "{{{}}} {{{}}} … {{{}}} ({} groups, each the previous + {step})",
                    groups[k].text,
                    groups[k + 1].text,
                    groups[end - 1].text,
                    end - k
                ));
                k = end;
                continue;
            }
            end = k + 1;
        }
        parts.push(format!("{{{}}}", groups[k].text));
        k = end;
    }
    parts.join(" ")
}

/// Each shared group's text, made once: every CPU of a span lists the same
/// groups, and printing all domains of a 16384-CPU machine would otherwise
/// turn the same 2 KiB masks into text millions of times.
struct GroupCache<'a> {
    domains: &'a Domains,
    spans: Vec<Option<GroupText>>,
    cpus: BTreeMap<u32, GroupText>,
}

impl<'a> GroupCache<'a> {
    fn new(domains: &'a Domains) -> Self {
        GroupCache {
            domains,
            spans: (0..domains.distinct_spans()).map(|_| None).collect(),
            cpus: BTreeMap::new(),
        }
    }

    /// Makes sure every group of `list` has its text.
    fn fill(&mut self, list: &[GroupSpan]) {
        for &g in list {
            match g {
                GroupSpan::Cpu(c) => {
                    self.cpus
                        .entry(c)
                        .or_insert_with(|| GroupText::of(&CpuMask::single(c as usize)));
                }
                GroupSpan::Span(s) => {
                    if self.spans[s as usize].is_none() {
                        let mask = self.domains.span_of(s).0;
                        self.spans[s as usize] = Some(GroupText::of(mask));
                    }
                }
            }
        }
    }

    fn get(&self, g: GroupSpan) -> &GroupText {
        match g {
            GroupSpan::Cpu(c) => &self.cpus[&c],
            GroupSpan::Span(s) => self.spans[s as usize].as_ref().expect("filled"),
        }
    }

    /// The groups of `list` as [`fold_groups`] prints them.
    fn fold(&mut self, list: &[GroupSpan]) -> String {
        self.fill(list);
        fold(&list.iter().map(|&g| self.get(g)).collect::<Vec<_>>())
    }

    /// The groups of `list` as cpulists (for JSON, which needs `std`).
    #[cfg(feature = "std")]
    fn texts(&mut self, list: &[GroupSpan]) -> Vec<&str> {
        self.fill(list);
        list.iter().map(|&g| self.get(g).text.as_str()).collect()
    }
}

/// Why a level was left out of a CPU's domains, in words.
pub fn removed_reason(domains: &Domains, r: &crate::build::Removed) -> String {
    match r.reason {
        Reason::SingleCpu => "spans only this CPU".to_string(),
        Reason::OneGroup => "a single group and no flag that works without groups".to_string(),
        Reason::SameAsChild { child_level } => format!(
            "same span as {} below it and no flag {} lacks",
            domains.levels[child_level as usize].name, domains.levels[child_level as usize].name
        ),
    }
}

/// JSON: the kernel, the level table, and per CPU its domains with spans
/// (cpulists), groups, flags (value and names) and tuning.
#[cfg(feature = "std")]
pub fn render_json(domains: &Domains, cpus: &[&CpuDomains]) -> serde_json::Value {
    use serde_json::json;
    let k = domains.kernel;
    let levels: Vec<_> = domains
        .levels
        .iter()
        .enumerate()
        .map(|(i, l)| {
            json!({
                "level": i,
                "name": l.name,
                "mask": l.mask_source,
                "topology_flags": k.names(l.topology_flags).collect::<Vec<_>>(),
                "overlap": l.overlap,
                "numa_distance": l.numa_distance,
            })
        })
        .collect();
    let mut groups = GroupCache::new(domains);
    let cpus_json: Vec<_> = cpus
        .iter()
        .map(|c| cpu_json(domains, c, &mut groups))
        .collect();
    json!({
        "kernel": k.as_str(),
        "arch": domains.arch.uname(),
        "online": domains.cpu_map.to_list_string(),
        "reclaim_distance": domains.rules.reclaim_distance,
        "splpar_asym_pack": domains.rules.splpar_asym_pack,
        "levels": levels,
        "cpus": cpus_json,
    })
}

/// The layout a kernel version shows natively.
pub fn native_layout(k: KernelVersion) -> Layout {
    match k {
        KernelVersion::V5_9 => Layout::Proc,
        _ => Layout::Debugfs,
    }
}

/// One CPU's entry of [`render_json`].
#[cfg(feature = "std")]
fn cpu_json(domains: &Domains, c: &CpuDomains, groups: &mut GroupCache) -> serde_json::Value {
    use serde_json::json;
    let k = domains.kernel;

    let doms: Vec<_> = c
        .domains
        .iter()
        .enumerate()
        .map(|(m, d)| {
            let list = domains.group_order(c.cpu, d);
            json!({
                "domain": m,
                "level": d.level,
                "name": domains.name(d),
                "span": domains.span(d).to_list_string(),
                "groups": groups.texts(&list),
                "flags": k.encode(d.flags),
                "flag_names": k.names(d.flags).collect::<Vec<_>>(),
                "groups_flags": if k.has_group_flags() {
                    json!(k.names(d.groups_flags).collect::<Vec<_>>())
                } else {
                    serde_json::Value::Null
                },
                "min_interval": d.min_interval(),
                "max_interval": d.max_interval(),
                "busy_factor": d.busy_factor,
                "imbalance_pct": d.imbalance_pct,
                "cache_nice_tries": d.cache_nice_tries,
            })
        })
        .collect();
    let removed: Vec<_> = c
        .removed
        .iter()
        .map(|r| {
            json!({
                "level": r.level,
                "name": domains.levels[r.level as usize].name,
                "reason": match r.reason {
                    Reason::SingleCpu => "single_cpu".to_string(),
                    Reason::OneGroup => "one_group".to_string(),
                    Reason::SameAsChild { .. } => "same_as_child".to_string(),
                },
            })
        })
        .collect();
    json!({ "cpu": c.cpu, "domains": doms, "removed": removed })
}

/// [`render_json`] written straight to `out`, one CPU at a time, so that a
/// 16384-CPU machine never holds its whole JSON tree in memory.
#[cfg(feature = "std")]
pub fn write_json(
    domains: &Domains,
    cpus: &[&CpuDomains],
    out: &mut dyn io::Write,
) -> io::Result<()> {
    let mut head = render_json(domains, &[]);
    if let Some(obj) = head.as_object_mut() {
        obj.remove("cpus");
    }
    let head = serde_json::to_string_pretty(&head)?;
    // Re-open the object to append "cpus".
    let head = head.trim_end().trim_end_matches('}').trim_end();
    writeln!(out, "{head},\n  \"cpus\": [")?;
    let mut groups = GroupCache::new(domains);
    for (i, c) in cpus.iter().enumerate() {
        let text = serde_json::to_string(&cpu_json(domains, c, &mut groups))?;
        let sep = if i + 1 < cpus.len() { "," } else { "" };
        writeln!(out, "    {text}{sep}")?;
    }
    writeln!(out, "  ]\n}}")
}

/// Runs a text renderer (`write_text`, `write_files`) into an
/// [`io::Write`], keeping the I/O error that stopped it.
#[cfg(feature = "std")]
pub fn to_io(
    out: &mut dyn io::Write,
    render: impl FnOnce(&mut dyn Write) -> fmt::Result,
) -> io::Result<()> {
    struct Sink<'a> {
        out: &'a mut dyn io::Write,
        error: Option<io::Error>,
    }
    impl Write for Sink<'_> {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            self.out.write_all(s.as_bytes()).map_err(|e| {
                self.error = Some(e);
                fmt::Error
            })
        }
    }
    let mut sink = Sink { out, error: None };
    match render(&mut sink) {
        Ok(()) => Ok(()),
        Err(_) => Err(sink
            .error
            .unwrap_or_else(|| io::Error::other("formatting failed"))),
    }
}

/// A compact, line-oriented form of every online CPU's domains, for a console
/// (manycore's kernel prints it over a serial line): each distinct domain once,
/// then each CPU's chain as references, so a few hundred CPUs stay a few hundred
/// lines.
///
/// ```text
/// sched_domains: kernel 6.12 online 0-15 distinct 7
/// sched_domain: 0 SMT span 0-1 flags SD_BALANCE_NEWIDLE,SD_SHARE_CPUCAPACITY groups 0 1
/// sched_domain_cpu: 0 domains 0 4 6
/// ```
///
/// A distinct domain is (level, span, groups, flags). Its groups are listed
/// sorted by first CPU (then by cpulist): the set of groups, not the
/// per-CPU list order, which Linux rotates to start at each CPU's own group.
/// Flags are this kernel's names, comma-separated, `-` when there is none.
/// Every token is free of spaces, so a line splits on whitespace.
pub fn compact_lines(domains: &Domains) -> Vec<String> {
    let k = domains.kernel;
    let mut ids: BTreeMap<(u8, u32, u32, u32), usize> = BTreeMap::new();
    let mut defs: Vec<String> = Vec::new();
    let mut chains: Vec<String> = Vec::with_capacity(domains.cpus.len());
    for c in &domains.cpus {
        let mut chain = format!("sched_domain_cpu: {} domains", c.cpu);
        for d in &c.domains {
            let key = (d.level, d.span, d.groups, k.encode(d.flags));
            let id = *ids.entry(key).or_insert_with(|| {
                defs.push(compact_domain(domains, defs.len(), c.cpu, d));
                defs.len() - 1
            });
            let _ = write!(chain, " {id}");
        }
        chains.push(chain);
    }
    let mut out = Vec::with_capacity(1 + defs.len() + chains.len());
    out.push(format!(
        "sched_domains: kernel {} online {} distinct {}",
        k.as_str(),
        domains.cpu_map,
        defs.len()
    ));
    out.extend(defs);
    out.extend(chains);
    out
}

/// One `sched_domain:` line of [`compact_lines`].
fn compact_domain(domains: &Domains, id: usize, cpu: u32, d: &Domain) -> String {
    let k = domains.kernel;
    let mut line = format!(
        "sched_domain: {id} {} span {} flags ",
        domains.name(d),
        domains.span(d)
    );
    let mut any = false;
    for name in k.names(d.flags) {
        if any {
            line.push(',');
        }
        line.push_str(name);
        any = true;
    }
    if !any {
        line.push('-');
    }
    line.push_str(" groups");
    let mut groups: Vec<(usize, String)> = domains
        .groups(cpu, d)
        .iter()
        .map(|g| (g.first().unwrap_or(0), g.to_list_string()))
        .collect();
    groups.sort();
    for (_, g) in groups {
        line.push(' ');
        line.push_str(&g);
    }
    line
}

/// One domain of one CPU as [`compact_lines`] printed it, read back by
/// [`parse_compact_lines`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompactDomain {
    /// `SMT`, `CLS`, `MC`, `PKG`, `NODE`, `NUMA`.
    pub name: String,
    /// The CPUs it spans.
    pub span: CpuMask,
    /// Flag names (`SD_...`), in the kernel's bit order.
    pub flags: Vec<String>,
    /// Its groups, sorted by first CPU then cpulist (the set, not the rotation).
    pub groups: Vec<CpuMask>,
}

/// Every online CPU's domains as [`compact_lines`] printed them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompactDomains {
    /// The kernel version whose rules were followed (`6.12`).
    pub kernel: String,
    /// The CPUs domains were built on.
    pub online: CpuMask,
    /// Each CPU's domains, lowest first.
    pub cpus: BTreeMap<u32, Vec<CompactDomain>>,
}

impl CompactDomains {
    /// What [`compact_lines`] says of `domains`, without the text: the
    /// reference a parse of its lines must equal.
    pub fn of(domains: &Domains) -> CompactDomains {
        let cpus = domains
            .cpus
            .iter()
            .map(|c| {
                let chain = c
                    .domains
                    .iter()
                    .map(|d| {
                        let mut groups = domains.groups(c.cpu, d);
                        groups.sort_by_key(|g| (g.first(), g.to_list_string()));
                        CompactDomain {
                            name: domains.name(d).to_string(),
                            span: domains.span(d).to_cpumask(),
                            flags: domains.kernel.names(d.flags).map(str::to_string).collect(),
                            groups,
                        }
                    })
                    .collect();
                (c.cpu, chain)
            })
            .collect();
        CompactDomains {
            kernel: domains.kernel.as_str().to_string(),
            online: domains.cpu_map,
            cpus,
        }
    }
}

/// Reads lines written by [`compact_lines`] (each with or without other
/// lines between them). Lines of other shapes are skipped; a malformed domain
/// or CPU line, a reference to an unknown domain, or no header is an error
/// quoting the line.
pub fn parse_compact_lines<S: AsRef<str>>(lines: &[S]) -> Result<CompactDomains, String> {
    let mut out = CompactDomains::default();
    let mut header = false;
    let mut defs: BTreeMap<usize, CompactDomain> = BTreeMap::new();
    for line in lines {
        let line = line.as_ref();
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.first().copied() {
            Some("sched_domains:") if w.get(1) == Some(&"kernel") => {
                if w.len() != 7 || w[3] != "online" || w[5] != "distinct" {
                    return Err(bad_line(line, "expected 'kernel V online LIST distinct N'"));
                }
                out.kernel = w[2].to_string();
                out.online =
                    CpuMask::parse_list(w[4]).map_err(|e| bad_line(line, &e.to_string()))?;
                header = true;
            }
            Some("sched_domain:") => {
                let (id, d) = parse_domain_line(line, &w)?;
                if defs.insert(id, d).is_some() {
                    return Err(bad_line(line, "domain id defined twice"));
                }
            }
            Some("sched_domain_cpu:") => {
                if w.len() < 3 || w[2] != "domains" {
                    return Err(bad_line(line, "expected 'CPU domains ID...'"));
                }
                let cpu: u32 = w[1].parse().map_err(|_| bad_line(line, "bad CPU number"))?;
                let chain = w[3..]
                    .iter()
                    .map(|t| {
                        t.parse::<usize>()
                            .ok()
                            .and_then(|id| defs.get(&id).cloned())
                            .ok_or_else(|| bad_line(line, &format!("unknown domain id '{t}'")))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                if out.cpus.insert(cpu, chain).is_some() {
                    return Err(bad_line(line, "CPU listed twice"));
                }
            }
            _ => {}
        }
    }
    if !header {
        return Err("no 'sched_domains: kernel ...' header line".into());
    }
    Ok(out)
}

fn bad_line(line: &str, why: &str) -> String {
    format!("scheduler-domain line '{line}': {why}")
}

/// `sched_domain: ID NAME span LIST flags F,F|- groups LIST...`, split in `w`.
fn parse_domain_line(line: &str, w: &[&str]) -> Result<(usize, CompactDomain), String> {
    if w.len() < 8 || w[3] != "span" || w[5] != "flags" || w[7] != "groups" {
        return Err(bad_line(
            line,
            "expected 'ID NAME span LIST flags F groups G...'",
        ));
    }
    let id: usize = w[1].parse().map_err(|_| bad_line(line, "bad id"))?;
    let list = |t: &str| CpuMask::parse_list(t).map_err(|e| bad_line(line, &e.to_string()));
    let flags = if w[6] == "-" {
        Vec::new()
    } else {
        w[6].split(',').map(str::to_string).collect()
    };
    let groups = w[8..].iter().map(|t| list(t)).collect::<Result<_, _>>()?;
    let d = CompactDomain {
        name: w[2].to_string(),
        span: list(w[4])?,
        flags,
        groups,
    };
    Ok((id, d))
}

#[cfg(test)]
mod tests {
    use super::*;
    use topology::{Arch, Shape};

    /// 2 sockets x 4 cores x 2 threads, one node per socket: Linux 6.12 gives
    /// CPU 0 SMT {0-1} (groups {0} {1}), MC {0-7} (the four cores), NUMA {0-15}
    /// (the two sockets). The compact form names each once and every CPU's
    /// line points at its own.
    #[test]
    fn compact_lines_of_a_two_socket_smt_machine() {
        let topo = Shape::simple(Arch::X86_64, 2, 4, 2).build().unwrap();
        let d = crate::build(&topo, KernelVersion::V6_12).unwrap();
        let lines = compact_lines(&d);
        // 8 SMT pairs, 2 MC packages, 2 NUMA domains (one per socket: their
        // overlap groups are listed from each socket's own side).
        assert_eq!(
            lines[0],
            "sched_domains: kernel 6.12 online 0-15 distinct 12"
        );
        assert_eq!(
            lines[1],
            "sched_domain: 0 SMT span 0-1 flags SD_BALANCE_NEWIDLE,SD_BALANCE_EXEC,\
             SD_BALANCE_FORK,SD_WAKE_AFFINE,SD_SHARE_CPUCAPACITY,SD_SHARE_LLC,\
             SD_PREFER_SIBLING groups 0 1"
        );
        let def = |id: &str| {
            lines
                .iter()
                .find(|l| l.starts_with(&format!("sched_domain: {id} ")))
                .unwrap()
                .clone()
        };
        let cpu = |c: u32| {
            lines
                .iter()
                .find(|l| l.starts_with(&format!("sched_domain_cpu: {c} domains")))
                .unwrap()
                .split_whitespace()
                .skip(3)
                .map(def)
                .collect::<Vec<_>>()
        };
        let cpu0 = cpu(0);
        assert_eq!(cpu0.len(), 3);
        assert!(cpu0[1].starts_with("sched_domain: 1 MC span 0-7 flags "));
        assert!(cpu0[1].ends_with(" groups 0-1 2-3 4-5 6-7"), "{}", cpu0[1]);
        assert!(cpu0[2].contains(" NUMA span 0-15 flags "), "{}", cpu0[2]);
        assert!(cpu0[2].contains("SD_NUMA"));
        assert!(cpu0[2].ends_with(" groups 0-7 8-15"), "{}", cpu0[2]);
        let cpu13 = cpu(13);
        assert!(cpu13[0].contains(" SMT span 12-13 "), "{}", cpu13[0]);
        assert!(cpu13[1].contains(" MC span 8-15 "), "{}", cpu13[1]);
        assert_eq!(lines.len(), 1 + 12 + 16);
    }

    /// Runs of shifted copies fold to their ends with a count and step; a
    /// list without such a run, or a run too short, is printed whole.
    #[test]
    fn group_lists_fold_runs_of_shifted_groups() {
        let m = |s: &str| CpuMask::parse_list(s).unwrap();
        let cores: Vec<CpuMask> = (0..128)
            .map(|k| m(&format!("{}-{}", 8 * k, 8 * k + 7)))
            .collect();
        assert_eq!(
            fold_groups(&cores),
            "{0-7} {8-15} … {1016-1023} (128 groups, each the previous + 8)"
        );
        let mut mixed = vec![m("100"), m("0-1,4-5")];
        mixed.extend((1..13).map(|k| {
            m(&format!(
                "{}-{},{}-{}",
                8 * k,
                8 * k + 1,
                8 * k + 4,
                8 * k + 5
            ))
        }));
        mixed.push(m("200-300"));
        assert_eq!(
            fold_groups(&mixed),
            "{100} {0-1,4-5} {8-9,12-13} … {96-97,100-101} (13 groups, each the previous + 8) {200-300}"
        );
        let short: Vec<CpuMask> = (0..9).map(|k| m(&format!("{}", 4 * k))).collect();
        assert_eq!(
            fold_groups(&short),
            "{0} {4} {8} {12} {16} {20} {24} {28} {32}"
        );
    }
}
