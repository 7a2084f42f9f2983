//! Property tests: the dump readers never panic on arbitrary input and report
//! bad input with a line number; domain construction holds Linux's invariants on
//! random irregular machines, and its NUMA spans follow Linux's rule.

use cpumask::CpuMask;
use domains::compare::parse_verbose;
use domains::KernelVersion;
use proptest::prelude::*;
use topology::Arch;

#[path = "../../topology/tests/support/irregular.rs"]
mod irregular;
#[path = "support/numa_rule.rs"]
mod numa_rule;

use irregular::{irregular, Irregular};

const FRAGMENTS: &[&str] = &[
    "[    1.963031] CPU0 attaching sched-domain(s):\n",
    "[    1.963031]  domain-0: span=0-1 level=SMT\n",
    "[    1.963993]   groups: 0:{ span=0 }, 1:{ span=1 }\n",
    "  groups: 0:{ span=0-11 mask=0-3 cap=12288 }, 12:{ span=4-15 mask=12-15 cap=12288 }\n",
    " domain-1: span=0-7,12-15 level=NUMA\n",
    "CPU17 attaching sched-domain(s):\n",
    "random kernel line\n",
    "groups:\n",
    "domain-3: span=\n",
    "CPUx attaching sched-domain(s):\n",
    "{ span=99999999 }\n",
];

proptest! {
    #[test]
    fn verbose_log_parser_never_panics(picks in proptest::collection::vec(0..FRAGMENTS.len(), 0..40), noise in ".{0,40}") {
        let mut text = String::new();
        for p in picks {
            text.push_str(FRAGMENTS[p]);
        }
        text.push_str(&noise);
        match parse_verbose(&text) {
            Ok(trees) => {
                for doms in trees.values() {
                    for d in doms {
                        prop_assert!(!d.name.is_empty());
                    }
                }
            }
            Err((line, msg)) => {
                prop_assert!(line >= 1 && line <= text.lines().count());
                prop_assert!(!msg.is_empty());
            }
        }
    }

    /// Arbitrary bytes (and gzip-looking ones) as a dump archive: an error that
    /// names the file, never a panic.
    #[test]
    fn dump_reader_rejects_garbage(mut bytes in proptest::collection::vec(any::<u8>(), 0..512), gz in any::<bool>()) {
        if gz {
            bytes.splice(0..0, [0x1f, 0x8b, 8, 0]);
        }
        let path = std::env::temp_dir().join(format!("domains-fuzz-{}.tar.gz", std::process::id()));
        std::fs::write(&path, &bytes).unwrap();
        let r = domains::compare::Dump::read(&path);
        std::fs::remove_file(&path).unwrap();
        let e = r.expect_err("garbage is not a dump");
        prop_assert!(e.path.contains("domains-fuzz"), "{e}");
    }

    #[test]
    fn kernel_version_parser_never_panics(s in ".{0,12}") {
        let _ = s.parse::<KernelVersion>();
    }

    /// On any machine (irregular numbering, offline CPUs, clusters, dies,
    /// asymmetric multi-level SLITs, memory-less and memory-only nodes):
    /// every CPU's domains nest (each span contains the one below), contain
    /// the CPU, end spanning every CPU, the groups of non-overlapping domains
    /// partition the span, and on v6.x the NODE and NUMA spans are Linux's.
    #[test]
    fn domains_nest_and_groups_cover(m in irregular(), x86 in any::<bool>(), k in 0usize..3) {
        let topo = m.topology(if x86 { Arch::X86_64 } else { Arch::Arm64 });
        let kernel = KernelVersion::ALL[k];
        let d = domains::build(&topo, kernel).unwrap();
        for c in &d.cpus {
            let mut below: Option<CpuMask> = None;
            for dom in &c.domains {
                let span = d.span(dom).to_cpumask();
                prop_assert!(span.contains(c.cpu as usize));
                // v5.9's degenerate rules did not strip SD_SERIALIZE, SD_OVERLAP
                // and SD_NUMA from a one-group parent, so a NUMA level that adds
                // only CPU-less nodes survives there with its child's span and
                // one group; v5.10+ removes it.
                let v59 = kernel == KernelVersion::V5_9;
                if let Some(b) = below {
                    prop_assert!(b.is_subset(&span) && (b != span || v59));
                }
                // build_overlap_sched_groups() skips a CPU whose domain tree
                // stopped below this level ("Asymmetric node setups can result
                // in situations where the domain tree is of unequal depth"), so
                // with an asymmetric SLIT a NUMA domain may keep one group and
                // leave CPUs of its span out of its groups.
                let overlap = dom.flags.contains(domains::Flag::Overlap);
                let whole = !overlap || m.symmetric();
                let groups = d.groups(c.cpu, dom);
                prop_assert!(
                    groups.len() >= 2 || v59 || !whole,
                    "cpu{} {} {}: a kept domain has at least two groups, has {:?}",
                    c.cpu, d.name(dom), span, groups
                );
                prop_assert!(groups[0].contains(c.cpu as usize));
                let mut union = CpuMask::new();
                // Before v5.13 (find_descended_sibling) NUMA groups could
                // spill out of their domain on machines of diameter >= 3.
                let may_spill = v59 && dom.flags.contains(domains::Flag::Overlap);
                for g in &groups {
                    prop_assert!(g.is_subset(&span) || may_spill);
                    if !dom.flags.contains(domains::Flag::Overlap) {
                        prop_assert!(!g.intersects(&union));
                    }
                    union.or_assign(g);
                }
                if whole {
                    if may_spill {
                        prop_assert!(span.is_subset(&union));
                    } else {
                        prop_assert_eq!(union, span);
                    }
                }
                below = Some(span);
            }
            // v5.9's sched_init_numa() took its distances from node 0's row
            // alone ("Assumes node_distance(0,j) includes all distances"):
            // when that row lacks the largest distance, no level spans every
            // CPU there, on Linux as here. With an asymmetric SLIT the top
            // NUMA domain may have one group and no SD_WAKE_AFFINE (beyond
            // the reclaim distance), which cpu_attach_domain() drops.
            if let (Some(top), false, true) = (below, kernel == KernelVersion::V5_9, m.symmetric()) {
                prop_assert_eq!(top, *topo.online());
            }
        }
        // v5.9 took its distances from node 0's row only (see below).
        if kernel != KernelVersion::V5_9 {
            numa_rule::check(&numa_facts(&m), topo.online(), &d).map_err(TestCaseError::fail)?;
        }
    }
}

/// The rule's view of a generated machine, from the generator's own sets.
fn numa_facts(m: &Irregular) -> numa_rule::NumaFacts {
    numa_rule::NumaFacts {
        node_cpus: (0..m.node_ids.len())
            .map(|n| m.node_cpus(n, true))
            .collect(),
        dist: m.dist.clone(),
        node_of_cpu: (0..m.len()).map(|p| (m.ids[p], m.node_of(p))).collect(),
    }
}
