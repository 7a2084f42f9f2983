//! The compact console form of scheduler domains (`render::compact_lines`,
//! which manycore's kernel prints) read back by its one parser
//! (`render::parse_compact_lines`, which the host runner uses): every CPU's
//! chain comes back as `domains::build` made it, on machines with SMT, several
//! packages and NUMA levels; malformed lines are refused by name; random text
//! never panics.

use domains::render::{compact_lines, parse_compact_lines, CompactDomains};
use domains::KernelVersion;
use proptest::prelude::*;
use topology::{Arch, Shape};

fn lines(text: &str) -> Vec<String> {
    text.lines().map(str::to_string).collect()
}

#[test]
fn printed_domains_read_back_as_built() {
    for (packages, cores, threads) in [(1, 1, 1), (2, 4, 2), (4, 8, 1), (8, 2, 4)] {
        let topo = Shape::simple(Arch::X86_64, packages, cores, threads)
            .build()
            .unwrap();
        for k in [KernelVersion::V5_9, KernelVersion::V6_12] {
            let d = domains::build(&topo, k).unwrap();
            let printed = compact_lines(&d);
            let back = parse_compact_lines(&printed).unwrap();
            assert_eq!(
                back,
                CompactDomains::of(&d),
                "{packages}x{cores}x{threads} {k:?}"
            );
            assert_eq!(back.cpus.len(), d.cpus.len());
        }
    }
}

#[test]
fn parses_definitions_and_references() {
    let d = parse_compact_lines(&lines(
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
    let e = parse_compact_lines(&lines(
        "sched_domains: kernel 6.12 online 0 distinct 0\nsched_domain_cpu: 0 domains 5",
    ))
    .unwrap_err();
    assert!(e.contains("unknown domain id '5'"), "{e}");
    let e = parse_compact_lines(&lines("sched_domain_cpu: 0 domains")).unwrap_err();
    assert!(e.contains("header"), "{e}");
    let e = parse_compact_lines(&lines(
        "sched_domains: kernel 6.12 online 0 distinct 1\nsched_domain: 0 SMT span x flags - groups 0",
    ))
    .unwrap_err();
    assert!(e.contains("sched_domain: 0 SMT span x"), "{e}");
}

proptest! {
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
        let _ = parse_compact_lines(&text);
        let mut real = lines(
            "sched_domains: kernel 6.12 online 0-1 distinct 1\n\
             sched_domain: 0 SMT span 0-1 flags SD_SHARE_LLC groups 0 1\n\
             sched_domain_cpu: 0 domains 0\n\
             sched_domain_cpu: 1 domains 0",
        );
        let which = cut % real.len();
        let keep = (cut / real.len()).min(real[which].len());
        real[which].truncate(keep);
        let _ = parse_compact_lines(&real);
    }
}
