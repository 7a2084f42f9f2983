//! Every real machine of the corpus that the sysfs reader accepts gets domains
//! on every kernel without panicking, and they hold Linux's structural rules:
//! each domain contains its CPU and the one below it, its groups lie inside it
//! and cover it (v5.9's NUMA groups may spill out, a bug fixed in v5.13), and
//! the first group holds the CPU.

use std::path::PathBuf;

use cpumask::CpuMask;
use domains::{Flag, KernelVersion};

fn corpus() -> PathBuf {
    readers::corpus::dir(env!("CARGO_MANIFEST_DIR"))
}

fn snapshots() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in ["util-linux/tests/ts/lscpu/dumps", "hwloc/tests/hwloc/linux"] {
        let Ok(rd) = std::fs::read_dir(corpus().join(dir)) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let name = p.to_string_lossy().to_string();
            if name.ends_with(".tar.gz") || name.ends_with(".tar.bz2") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn corpus_machines_get_well_formed_domains() {
    if !readers::corpus::present(
        &corpus(),
        "domains of every corpus snapshot on three kernels",
    ) {
        return;
    }
    let snaps = snapshots();
    assert!(snaps.len() > 20, "corpus snapshots found: {}", snaps.len());
    let mut built = 0;
    let mut refused = 0;
    for path in &snaps {
        let Ok(topo) = readers::sysfs::read_path(path) else {
            continue;
        };
        if topo.online().is_empty() {
            continue;
        }
        for k in KernelVersion::ALL {
            let d = match domains::build(&topo, k) {
                Ok(d) => d,
                Err(e @ domains::Error::SpanNotSane { .. }) => {
                    // Linux refuses such masks too; the error must say why.
                    assert!(e.to_string().contains("topology_span_sane"));
                    eprintln!("{}: {e}", path.display());
                    refused += 1;
                    continue;
                }
                Err(e) => panic!("{}: {e}", path.display()),
            };
            for c in &d.cpus {
                let mut below: Option<CpuMask> = None;
                for dom in &c.domains {
                    let span = *d.span(dom);
                    let what = format!("{} {k} cpu{} {}", path.display(), c.cpu, d.name(dom));
                    assert!(span.contains(c.cpu as usize), "{what}");
                    if let Some(b) = below {
                        assert!(b.is_subset(&span), "{what}");
                    }
                    let groups = d.groups(c.cpu, dom);
                    assert!(groups[0].contains(c.cpu as usize), "{what}");
                    let mut union = CpuMask::new();
                    // Before v5.13 (find_descended_sibling) NUMA groups could
                    // spill out of their domain on machines of diameter >= 3.
                    let may_spill = k == KernelVersion::V5_9 && dom.flags.contains(Flag::Overlap);
                    for g in &groups {
                        assert!(
                            g.is_subset(&span) || may_spill,
                            "{what}: group {g} outside {span}"
                        );
                        if !dom.flags.contains(Flag::Overlap) {
                            assert!(!g.intersects(&union), "{what}: groups overlap");
                        }
                        union.or_assign(g);
                    }
                    if may_spill {
                        assert!(
                            span.is_subset(&union),
                            "{what}: groups do not cover the span"
                        );
                    } else {
                        assert_eq!(union, span, "{what}: groups do not cover the span");
                    }
                    below = Some(span);
                }
            }
        }
        built += 1;
    }
    assert!(built >= 10, "only {built} corpus machines could be read");
    eprintln!("{built} corpus machines, {refused} kernel builds refused as not sane");
}
