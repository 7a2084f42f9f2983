//! Property tests: the dump readers never panic on arbitrary input and report
//! bad input with a line number; domain construction holds Linux's invariants on
//! random regular machines.

use cpumask::CpuMask;
use domains::compare::parse_verbose;
use domains::KernelVersion;
use proptest::prelude::*;
use topology::{Arch, Numbering, Shape};

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

    /// On any regular machine: every CPU's domains nest (each span contains the
    /// one below), contain the CPU, end spanning every CPU, and the groups of
    /// non-overlapping domains partition the span.
    #[test]
    fn domains_nest_and_groups_cover(
        packages in 1u32..4, clusters in 1u32..3, cores in 1u32..5, threads in 1u32..3,
        npp in 0u32..3, far in 11u32..40, x86 in any::<bool>(), k in 0usize..3,
    ) {
        let shape = Shape {
            arch: if x86 { Arch::X86_64 } else { Arch::Arm64 },
            packages, dies: 1, clusters, cores, threads,
            nodes_per_package: npp,
            numbering: Numbering::SiblingsAdjacent,
            distances: (far.min(20), far),
        };
        let topo = shape.build().unwrap();
        let kernel = KernelVersion::ALL[k];
        let d = domains::build(&topo, kernel).unwrap();
        for c in &d.cpus {
            let mut below: Option<CpuMask> = None;
            for dom in &c.domains {
                let span = *d.span(dom);
                prop_assert!(span.contains(c.cpu as usize));
                // v5.9's degenerate rules did not strip SD_SERIALIZE, SD_OVERLAP
                // and SD_NUMA from a one-group parent, so a NUMA level that adds
                // only CPU-less nodes survives there with its child's span and
                // one group; v5.10+ removes it.
                let v59 = kernel == KernelVersion::V5_9;
                if let Some(b) = below {
                    prop_assert!(b.is_subset(&span) && (b != span || v59));
                }
                let groups = d.groups(c.cpu, dom);
                prop_assert!(groups.len() >= 2 || v59, "a kept domain has at least two groups");
                prop_assert!(groups[0].contains(c.cpu as usize));
                let mut union = CpuMask::new();
                for g in &groups {
                    prop_assert!(g.is_subset(&span));
                    if !dom.flags.contains(domains::Flag::Overlap) {
                        prop_assert!(!g.intersects(&union));
                    }
                    union.or_assign(g);
                }
                prop_assert_eq!(union, span);
                below = Some(span);
            }
            if let Some(top) = below {
                prop_assert_eq!(top, *topo.online());
            }
        }
    }
}
