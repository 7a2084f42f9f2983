//! `manycore domains --cpu N --svg FILE`: one CPU's scheduler domains as nested
//! boxes. The highest domain is outermost; inside each domain are its groups,
//! and the group holding the CPU holds the next domain down. Domains with
//! asymmetric packing are orange, so seed 001's shared-processor LPAR (no MC
//! level, asym packing right above SMT) differs from a dedicated one at a glance.

use domains::{CpuDomains, Domains};
use draw::boxes::BoxNode;
use draw::svg::Anchor;
use draw::{Rgb, Svg};

/// Groups drawn one by one; the rest of a long list is one dashed box.
const SHOWN_GROUPS: usize = 8;
/// Flag names per header line.
const FLAGS_PER_LINE: usize = 3;

const MARGIN: f64 = 10.0;
const LINE: f64 = 15.0;

const DOMAIN_FILL: [Rgb; 4] = [
    Rgb(222, 235, 247),
    Rgb(198, 219, 239),
    Rgb(158, 202, 225),
    Rgb(107, 174, 214),
];
const ASYM_FILL: Rgb = Rgb(253, 174, 97);
const GROUP_FILL: Rgb = Rgb(250, 250, 250);
const CPU_FILL: Rgb = Rgb(255, 237, 111);
/// The flag that makes a domain pack tasks onto preferred CPUs first.
const ASYM: &str = "SD_ASYM_PACKING";

/// The header lines of domain `m` of `c`: name, span, group count, flags.
fn domain_lines(doms: &Domains, c: &CpuDomains, m: usize) -> (Vec<String>, bool) {
    let d = &c.domains[m];
    let names: Vec<&str> = doms.kernel.names(d.flags).collect();
    let asym = names.contains(&ASYM);
    let mut lines = vec![
        format!("domain{m}: {} (level {})", doms.name(d), d.level),
        format!("span {}, {} groups", doms.span(d), doms.group_count(d)),
    ];
    for chunk in names.chunks(FLAGS_PER_LINE) {
        let short: Vec<&str> = chunk.iter().map(|n| n.trim_start_matches("SD_")).collect();
        lines.push(short.join(" "));
    }
    (lines, asym)
}

/// Domain `m` of `c` and everything below it as boxes.
fn domain_box(doms: &Domains, c: &CpuDomains, m: usize) -> BoxNode {
    let (lines, asym) = domain_lines(doms, c, m);
    let fill = if asym {
        ASYM_FILL
    } else {
        DOMAIN_FILL[(c.domains.len() - 1 - m).min(DOMAIN_FILL.len() - 1)]
    };
    let mut b = BoxNode::new(lines, fill);
    // Named `asym-M` or `domain-M`, so that a check can count asym packing.
    b.id = Some(format!("{}-{m}", if asym { "asym" } else { "domain" }));
    let groups = doms.groups(c.cpu, &c.domains[m]);
    for (k, g) in groups.iter().enumerate().take(SHOWN_GROUPS) {
        let mine = g.contains(c.cpu as usize);
        let mut gb = BoxNode::new(
            vec![format!("group {{{g}}}")],
            if mine && m == 0 { CPU_FILL } else { GROUP_FILL },
        );
        gb.id = Some(format!("group-{m}-{k}"));
        if mine && m > 0 {
            gb.children.push(domain_box(doms, c, m - 1));
        }
        b.children.push(gb);
    }
    if groups.len() > SHOWN_GROUPS {
        let rest = &groups[SHOWN_GROUPS..];
        let span = rest
            .iter()
            .fold(cpumask::CpuMask::new(), |acc, g| acc.or(g));
        let mut fold = BoxNode::new(
            vec![
                format!("+ {} more groups", rest.len()),
                format!("CPUs {span}"),
            ],
            GROUP_FILL,
        );
        fold.dashed = true;
        fold.id = Some(format!("fold-{m}"));
        b.children.push(fold);
    }
    b
}

/// The text lines above the boxes: what was built and what was removed.
fn notes(doms: &Domains, c: &CpuDomains, source: &str) -> Vec<String> {
    let mut out = vec![format!(
        "Linux {} scheduler domains of CPU {} on {source}",
        doms.kernel, c.cpu
    )];
    let levels: Vec<&str> = doms.levels.iter().map(|l| l.name).collect();
    out.push(format!("levels (lowest first): {}", levels.join(" ")));
    if doms.rules.splpar_asym_pack {
        out.push(format!(
            "shared-processor LPAR: asym packing above SMT (priority = -(cpu / {})), no MC level",
            doms.rules.threads_per_core
        ));
    }
    for r in &c.removed {
        out.push(format!(
            "removed {} (level {}): {}",
            doms.levels[r.level as usize].name,
            r.level,
            domains::render::removed_reason(doms, r)
        ));
    }
    out
}

/// The picture as SVG text.
pub fn svg(doms: &Domains, c: &CpuDomains, source: &str) -> String {
    let notes = notes(doms, c, source);
    let top = match c.domains.len() {
        0 => {
            let mut b = BoxNode::new(vec![format!("CPU {}: no domains", c.cpu)], CPU_FILL);
            b.id = Some("cpu".into());
            b
        }
        n => domain_box(doms, c, n - 1),
    };
    let placed = top.layout();
    let notes_h = notes.len() as f64 * LINE + 8.0;
    let legend_h = 20.0;
    let text_w = notes
        .iter()
        .map(|n| draw::text_width(n, 11.0))
        .fold(0.0, f64::max);
    let width = 2.0 * MARGIN + placed.w.max(text_w).max(420.0);
    let height = MARGIN + notes_h + placed.h + legend_h + MARGIN;
    let mut svg = Svg::new(width, height);
    for (k, n) in notes.iter().enumerate() {
        let y = MARGIN + (k as f64 + 1.0) * LINE - 3.0;
        svg.text(
            MARGIN,
            y,
            if k == 0 { 12.0 } else { 11.0 },
            Anchor::Start,
            k == 0,
            n,
        );
    }
    top.paint(&mut svg, &placed, MARGIN, MARGIN + notes_h);
    draw::chart::legend(
        &mut svg,
        MARGIN,
        height - MARGIN - 2.0,
        &[
            (ASYM_FILL, "domain with ASYM_PACKING".into()),
            (DOMAIN_FILL[1], "domain".into()),
            (CPU_FILL, format!("CPU {}", c.cpu)),
        ],
    );
    svg.finish()
}
