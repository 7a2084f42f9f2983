//! Every report line the kernel writes parses back to the value it was
//! written from (`Display` then `parse`), whatever the values; a line cut
//! short or of another kind is refused, never misread; random text never
//! panics. The examples are lines the kernel printed on a real boot (see
//! crates/qemu-runner/tests/parse_fuzz.rs), so a change of format on either
//! side shows here.

use bootproto::report::{
    ApicBase, BspTime, CacheLine, CpuFacts, DistanceRow, FailedCpu, KernelResult, PercpuLine,
    SratRange, Timeline, TopologyLine,
};
use cpumask::CpuMask;
use proptest::prelude::*;
use topology::{Cache, CacheKind, LevelKind};

#[path = "support/lines.rs"]
mod lines;
use lines::{facts, percpu, srat};

fn list(s: &str) -> CpuMask {
    CpuMask::parse_list(s).unwrap()
}

/// The `topology:` lines of the real boot in crates/qemu-runner/tests/parse_fuzz.rs
/// (2 packages of 2 cores, 2 nodes, an AMD guest), read field by field.
#[test]
fn topology_lines_of_a_real_boot_read_as_they_say() {
    let cases = [
        (
            "topology: CPUID leaf 0xb: SMT shift 0, core shift 1, package shift 1",
            TopologyLine::Shifts { leaf: 0xb, smt: 0, core: 1, package: 1 },
        ),
        (
            "topology: 4 possible, 4 present, 4 online CPUs; 4 cores, 2 packages; 1 threads per core",
            TopologyLine::Summary {
                possible: 4,
                present: 4,
                online: 4,
                levels: vec![(LevelKind::Core, 4), (LevelKind::Package, 2)],
                threads_per_core: 1,
            },
        ),
        (
            "topology: package 1 cpus 2-3",
            TopologyLine::Group { kind: LevelKind::Package, index: 1, cpus: list("2-3") },
        ),
        (
            "topology: cache L1d 64 KiB, 4 instances of 1 CPUs: 0 1 2 3",
            TopologyLine::Cache {
                level: 1,
                kind: CacheKind::Data,
                size_kib: 64,
                instances: 4,
                sharing: (1, 1),
                spans: vec![list("0"), list("1"), list("2"), list("3")],
            },
        ),
        (
            "topology: cache L3 16384 KiB, 2 instances of 2 CPUs: 0-1 2-3",
            TopologyLine::Cache {
                level: 3,
                kind: CacheKind::Unified,
                size_kib: 16384,
                instances: 2,
                sharing: (2, 2),
                spans: vec![list("0-1"), list("2-3")],
            },
        ),
        (
            "topology: node 1 cpus 2-3 memory 257 MiB",
            TopologyLine::Node { id: 1, cpus: list("2-3"), memory_mib: 257 },
        ),
        (
            "topology: node 1 distances 15 10",
            TopologyLine::Distances(DistanceRow { node: 1, row: vec![15, 10] }),
        ),
    ];
    for (line, want) in cases {
        assert_eq!(TopologyLine::parse(line).as_ref(), Some(&want), "{line}");
        assert_eq!(want.to_string(), line);
    }
    // Not topology lines, or not as the kernel writes them.
    for line in [
        "topology: package 0 cpus 1,0",
        "topology: cache L2 512 KiB, 4 instances of 1-1 CPUs",
        "topology: 4 possible, 4 present, 4 online CPUs; 4 cors; 1 threads per core",
        "topology: node -1 cpus 0 memory 1 MiB",
        "cputopo: cpu 0 apic 0 package 0 die - core 0 node 0 online 1",
    ] {
        assert_eq!(TopologyLine::parse(line), None, "{line}");
    }
}

#[test]
fn lines_of_a_real_boot_read_as_they_say() {
    assert_eq!(
        SratRange::parse("ACPI: SRAT: Node 1 PXM 1 [mem 0x10100000-0x201fffff]"),
        Some(SratRange {
            node: 1,
            pxm: 1,
            start: 0x1010_0000,
            end: 0x201f_ffff,
            hotplug: false
        })
    );
    assert_eq!(
        CpuFacts::parse("cputopo: cpu 2 apic 2 package 1 die - core 0 node 1 online 1"),
        Some(CpuFacts {
            cpu: 2,
            apic: 2,
            package: 1,
            die: None,
            core: 0,
            node: Some(1),
            online: true
        })
    );
    // IA32_APIC_BASE as QEMU's boot CPU holds it in x2APIC mode, and an
    // AP's in xAPIC mode: the bits the host reads are the SDM's.
    let b = ApicBase(0xfee0_0d00);
    assert_eq!((b.bsp(), b.x2apic(), b.enabled()), (true, true, true));
    let b = ApicBase(0xfee0_0800);
    assert_eq!((b.bsp(), b.x2apic(), b.enabled()), (false, false, true));
    assert_eq!(
        DistanceRow::parse("topology: node 1 distances 15 10"),
        Some(DistanceRow {
            node: 1,
            row: vec![15, 10]
        })
    );
    let r = KernelResult::parse(r#"MANYCORE-RESULT {"bringup":"parallel","calibrate":"parallel","x2apic":false,"cpus_possible":4,"cpus_present":4,"cpus_up":4,"nodes":2,"bringup_ns":54237042,"failed_cpus":[],"percpu_on_node":4,"bogomips":790.02,"tsc_khz":2600020,"heap_used":18264}"#).unwrap();
    assert_eq!(
        (r.cpus_up, r.nodes, r.bringup_ns, r.heap_used),
        (4, 2, 54_237_042, 18_264)
    );
    assert_eq!(
        FailedCpu::parse(
            "smpboot: CPU 8 failed to come online (APIC id 77: no call-in within 100 ms), skipped"
        ),
        Some(FailedCpu {
            cpu: 8,
            why: "APIC id 77: no call-in within 100 ms".into()
        })
    );
}

fn cache() -> impl Strategy<Value = Cache> {
    (
        (
            1u8..=9,
            prop_oneof![
                Just(CacheKind::Data),
                Just(CacheKind::Instruction),
                Just(CacheKind::Unified)
            ],
        ),
        (
            any::<Option<u64>>(),
            any::<Option<u32>>(),
            any::<Option<u32>>(),
        ),
        prop::collection::btree_set(0usize..16384, 1..40),
    )
        .prop_map(
            |((level, kind), (size_bytes, line_bytes, ways), cpus)| Cache {
                level,
                kind,
                size_bytes,
                line_bytes,
                ways,
                cpus: cpus.into_iter().collect::<CpuMask>().into(),
            },
        )
}

fn mask(max_len: usize) -> impl Strategy<Value = CpuMask> {
    prop::collection::btree_set(0usize..16384, 0..max_len)
        .prop_map(|cpus| cpus.into_iter().collect::<CpuMask>())
}

fn level_kind() -> impl Strategy<Value = LevelKind> {
    prop::sample::select(&LevelKind::ALL[..])
}

fn topology_line() -> impl Strategy<Value = TopologyLine> {
    let kind = prop_oneof![
        Just(CacheKind::Data),
        Just(CacheKind::Instruction),
        Just(CacheKind::Unified)
    ];
    prop_oneof![
        any::<[u32; 4]>().prop_map(|[leaf, smt, core, package]| TopologyLine::Shifts {
            leaf,
            smt,
            core,
            package
        }),
        (
            any::<[u32; 4]>(),
            prop::collection::vec((level_kind(), any::<u32>()), 0..5)
        )
            .prop_map(|([possible, present, online, threads_per_core], levels)| {
                TopologyLine::Summary {
                    possible,
                    present,
                    online,
                    levels,
                    threads_per_core,
                }
            }),
        (level_kind(), any::<u32>(), mask(40))
            .prop_map(|(kind, index, cpus)| TopologyLine::Group { kind, index, cpus }),
        (
            (1u8..=9, kind, any::<u64>(), any::<u32>()),
            (any::<u32>(), any::<u32>()),
            prop::collection::vec(mask(8).prop_filter("non-empty", |m| !m.is_empty()), 0..17)
        )
            .prop_map(|((level, kind, size_kib, instances), (a, b), spans)| {
                TopologyLine::Cache {
                    level,
                    kind,
                    size_kib,
                    instances,
                    sharing: (a.min(b), a.max(b)),
                    spans,
                }
            }),
        (any::<u32>(), mask(40), any::<u64>()).prop_map(|(id, cpus, memory_mib)| {
            TopologyLine::Node {
                id,
                cpus,
                memory_mib,
            }
        }),
        "[ -~]{0,40}".prop_map(TopologyLine::Unbuilt),
    ]
}

fn result() -> impl Strategy<Value = KernelResult> {
    (
        ("[a-z]{0,10}", "[a-z\"\\\\ ]{0,10}", "[a-z]{0,10}"),
        (
            any::<u32>(),
            any::<u32>(),
            any::<u64>(),
            prop::collection::vec(any::<u32>(), 0..8),
        ),
        (any::<u32>(), any::<u32>(), any::<u32>(), any::<bool>()),
        (0u64..1 << 40, any::<u64>(), any::<u64>(), any::<u32>()),
    )
        .prop_map(
            |(
                (kernel, bringup, calibrate),
                (cpus_up, nodes, bringup_ns, failed_cpus),
                (cpus_possible, cpus_present, percpu_on_node, x2apic),
                (bogo_x100, tsc_khz, heap_used, firmware_faults),
            )| KernelResult {
                kernel,
                bringup,
                calibrate,
                cpus_up,
                nodes,
                bringup_ns,
                failed_cpus,
                cpus_possible,
                cpus_present,
                percpu_on_node,
                x2apic,
                bogomips: bogo_x100 as f64 / 100.0,
                tsc_khz,
                heap_used,
                firmware_faults,
                timeline: None,
            },
        )
}

/// Each proper prefix of `line` (cut at a character boundary) is refused or
/// read as something else than `value`: a cut line is never taken for the
/// whole one.
fn cuts_are_not_the_line<T: PartialEq + std::fmt::Debug>(
    line: &str,
    value: &T,
    parse: impl Fn(&str) -> Option<T>,
) -> Result<(), TestCaseError> {
    for (i, _) in line.char_indices().skip(1) {
        if let Some(v) = parse(&line[..i]) {
            prop_assert_ne!(&v, value, "cut at {} of '{}'", i, line);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn srat_lines_round_trip(v in srat()) {
        let line = v.to_string();
        prop_assert_eq!(SratRange::parse(&line), Some(v));
        cuts_are_not_the_line(&line, &v, SratRange::parse)?;
    }

    #[test]
    fn percpu_lines_round_trip(v in percpu()) {
        let line = v.to_string();
        prop_assert_eq!(PercpuLine::parse(&line), Some(v));
        cuts_are_not_the_line(&line, &v, PercpuLine::parse)?;
    }

    #[test]
    fn cpu_fact_lines_round_trip(v in facts()) {
        let line = v.to_string();
        prop_assert_eq!(CpuFacts::parse(&line), Some(v));
        cuts_are_not_the_line(&line, &v, CpuFacts::parse)?;
    }

    #[test]
    fn cache_lines_round_trip(c in cache()) {
        let v = CacheLine(c);
        let line = v.to_string();
        prop_assert_eq!(CacheLine::parse(&line), Some(v.clone()));
        cuts_are_not_the_line(&line, &v, CacheLine::parse)?;
    }

    #[test]
    fn distance_rows_round_trip(node in any::<u32>(), row in prop::collection::vec(any::<u32>(), 1..16)) {
        let v = DistanceRow { node, row };
        let line = v.to_string();
        prop_assert_eq!(DistanceRow::parse(&line), Some(v.clone()));
        cuts_are_not_the_line(&line, &v, DistanceRow::parse)?;
    }

    #[test]
    fn topology_lines_round_trip(v in topology_line()) {
        let line = v.to_string();
        prop_assert_eq!(TopologyLine::parse(&line), Some(v.clone()));
        // The reason of `Unbuilt` is free text: any cut of it is another reason.
        if !matches!(v, TopologyLine::Unbuilt(_)) {
            cuts_are_not_the_line(&line, &v, TopologyLine::parse)?;
        }
    }

    #[test]
    fn failed_cpu_lines_round_trip(cpu in any::<u32>(), why in "[ -~]{0,40}") {
        let v = FailedCpu { cpu, why };
        let line = v.to_string();
        prop_assert_eq!(FailedCpu::parse(&line), Some(v.clone()));
    }

    /// The JSON result reads back field for field (BogoMIPS, which the kernel
    /// prints to two decimals, to within a rounding step of that).
    #[test]
    fn result_lines_round_trip(v in result(), junk in "[ -~]{0,8}") {
        let line = format!("{junk}{}", v.to_line());
        let got = KernelResult::parse(&line).expect("result line parses");
        prop_assert!((got.bogomips - v.bogomips).abs() <= 1e-9 * v.bogomips.abs().max(1.0));
        prop_assert_eq!(KernelResult { bogomips: 0.0, ..got }, KernelResult { bogomips: 0.0, ..v.clone() });
        let cut = &line[..line.len() - 1];
        prop_assert!(KernelResult::parse(cut).is_none());
    }

    #[test]
    fn timelines_round_trip(v in result(), t in prop::array::uniform14(any::<u64>())) {
        let timeline = Timeline {
            kick: (t[0], t[1]),
            callin: (t[2], t[3]),
            ready: (t[4], t[5]),
            online: (t[6], t[7]),
            masks_ns: t[8],
            report_ns: t[9],
            bsp: BspTime { ipi_ns: t[10], delay_ns: t[11], wait_ns: t[12], halts: t[13] },
        };
        let v = KernelResult { timeline: Some(timeline), ..v };
        let got = KernelResult::parse(&v.to_line()).expect("result line parses");
        prop_assert_eq!(got.timeline, Some(timeline));
    }

    #[test]
    fn random_text_never_panics(text in "\\PC{0,120}") {
        let _ = SratRange::parse(&text);
        let _ = PercpuLine::parse(&text);
        let _ = CpuFacts::parse(&text);
        let _ = CacheLine::parse(&text);
        let _ = DistanceRow::parse(&text);
        let _ = FailedCpu::parse(&text);
        let _ = KernelResult::parse(&text);
        let _ = TopologyLine::parse(&format!("topology: {text}"));
    }
}
