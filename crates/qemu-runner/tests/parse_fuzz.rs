//! Fuzzing the console parsers (`parse_manycore`, `parse_linux`): random
//! text and mutated real kernel logs must never panic, and logs written in
//! the kernels' line formats must parse back to the values they encode.
//!
//! The two real logs below are verbatim serial output: the manycore kernel
//! (kernel/target/.../release/kernel) booted with `percpu_dump topo_dump` on
//! `-smp 4,sockets=2,cores=2,threads=1` and two 257 MiB `-numa` nodes at
//! distance 15 (qboot), and Debian's 6.12.117 kernel (target/linux) booted on
//! the same machine shape (an excerpt around its "smp:" lines, CRLF endings
//! restored at run time, as QEMU's serial port delivers them). When the
//! kernel's line formats change, recapture the first: the round-trip tests in
//! crates/bootproto hold the formats themselves.

use bootproto::report::{DistanceRow, FailedCpu};
use proptest::prelude::*;
use qemu_runner::{parse_linux, parse_manycore, CpuFacts, KernelResult, PercpuLine, SratRange};

#[path = "../../bootproto/tests/support/lines.rs"]
mod lines;
use lines::{facts, percpu, srat};

const REAL_MANYCORE_LOG: &str = r#"
[    0.000000] Linux-like manycore kernel, PVH boot
[    0.000000] Command line: bringup=parallel calibrate=parallel percpu_dump topo_dump
[    0.103886] tsc: Detected 2605.240 MHz processor (calibrated against Hpet)
[    0.104420] x2apic: disabled (xAPIC mode)
[    0.118153] APIC: timer runs at 6755 MHz; waits halt between checks
[    0.118358] ACPI: SRAT: Node 0 PXM 0 [mem 0x00000000-0x0009ffff]
[    0.118721] ACPI: SRAT: Node 0 PXM 0 [mem 0x00100000-0x100fffff]
[    0.118768] ACPI: SRAT: Node 1 PXM 1 [mem 0x10100000-0x201fffff]
[    0.119975] smpboot: Allowing 4 CPUs, 0 hotplug CPUs
[    0.121560] NUMA: node 0: 256 MiB, 190 MiB free
[    0.121739] NUMA: node 1: 257 MiB, 257 MiB free
[    0.170117] Calibrating delay loop... 16.10 BogoMIPS (lpj=32213)
[    0.171327] cacheinfo: Amd rules, legacy leaves 0x80000005/6 (no TOPOEXT): 4 cache leaves (read in 678267 ns)
[    0.171747] topology: CPUID leaf 0xb: SMT shift 0, core shift 1, package shift 1
[    0.192684] smp: Bringing up secondary CPUs ...
[    0.308606] smp: Brought up 2 nodes, 4 CPUs
[    0.308866] smpboot: Total of 4 processors activated (532.27 BogoMIPS)
[    0.308999] hotplug: topology masks updated incrementally for 3 CPUs in 416 us
[    0.309127] hotplug: cpu0 smt mask 0
[    0.309204] hotplug: cpu0 l2 mask 0
[    0.309231] hotplug: cpu0 coregroup mask 0
[    0.309261] hotplug: cpu0 package mask 0-1
[    0.309291] hotplug: cpu0 node mask 0-1
[    0.309319] hotplug: cpu0 llc mask 0-1
[    0.309392] percpu: cpu 0 apic 0 node 0 area 0x104000 stack 0x100000-0x104000 callin 0 apicbase 0xfee00900
[    0.321814] percpu: cpu 1 apic 1 node 0 area 0x109000 stack 0x105000-0x109000 callin 1 apicbase 0xfee00800
[    0.321900] percpu: cpu 2 apic 2 node 1 area 0x10104000 stack 0x10100000-0x10104000 callin 2 apicbase 0xfee00800
[    0.321976] percpu: cpu 3 apic 3 node 1 area 0x10109000 stack 0x10105000-0x10109000 callin 3 apicbase 0xfee00800
[    0.387696] topology: 4 possible, 4 present, 4 online CPUs; 4 cores, 2 packages; 1 threads per core
[    0.388111] topology: package 0 cpus 0-1
[    0.388212] topology: package 1 cpus 2-3
[    0.388330] topology: cache L1d 64 KiB, 4 instances of 1 CPUs: 0 1 2 3
[    0.388668] topology: cache L1i 64 KiB, 4 instances of 1 CPUs: 0 1 2 3
[    0.388747] topology: cache L2 512 KiB, 4 instances of 1 CPUs: 0 1 2 3
[    0.388832] topology: cache L3 16384 KiB, 2 instances of 2 CPUs: 0-1 2-3
[    0.388980] topology: node 0 cpus 0-1 memory 256 MiB
[    0.389065] topology: node 1 cpus 2-3 memory 257 MiB
[    0.389275] topology: node 0 distances 10 15
[    0.400654] topology: node 1 distances 15 10
[    0.400887] cputopo: cpu 0 apic 0 package 0 die - core 0 node 0 online 1
[    0.401040] cputopo: cpu 1 apic 1 package 0 die - core 1 node 0 online 1
[    0.401091] cputopo: cpu 2 apic 2 package 1 die - core 0 node 1 online 1
[    0.401142] cputopo: cpu 3 apic 3 package 1 die - core 1 node 1 online 1
[    0.401231] cputopo: cache L1d size 65536 line 64 ways 2 cpus 0
[    0.401496] cputopo: cache L1d size 65536 line 64 ways 2 cpus 1
[    0.401549] cputopo: cache L1d size 65536 line 64 ways 2 cpus 2
[    0.401598] cputopo: cache L1d size 65536 line 64 ways 2 cpus 3
[    0.401646] cputopo: cache L1i size 65536 line 64 ways 2 cpus 0
[    0.401703] cputopo: cache L1i size 65536 line 64 ways 2 cpus 1
[    0.401752] cputopo: cache L1i size 65536 line 64 ways 2 cpus 2
[    0.401801] cputopo: cache L1i size 65536 line 64 ways 2 cpus 3
[    0.401850] cputopo: cache L2 size 524288 line 64 ways 16 cpus 0
[    0.401918] cputopo: cache L2 size 524288 line 64 ways 16 cpus 1
[    0.401968] cputopo: cache L2 size 524288 line 64 ways 16 cpus 2
[    0.402018] cputopo: cache L2 size 524288 line 64 ways 16 cpus 3
[    0.402067] cputopo: cache L3 size 16777216 line 64 ways 16 cpus 0-1
[    0.402148] cputopo: cache L3 size 16777216 line 64 ways 16 cpus 2-3
[    0.468735] sched_domains: kernel 6.12 online 0-3 distinct 4
[    0.468891] sched_domain: 0 MC span 0-1 flags SD_BALANCE_NEWIDLE,SD_BALANCE_EXEC,SD_BALANCE_FORK,SD_WAKE_AFFINE,SD_SHARE_LLC,SD_PREFER_SIBLING groups 0 1
[    0.469009] sched_domain: 1 NUMA span 0-3 flags SD_BALANCE_NEWIDLE,SD_BALANCE_EXEC,SD_BALANCE_FORK,SD_WAKE_AFFINE,SD_SERIALIZE,SD_OVERLAP,SD_NUMA groups 0-1 2-3
[    0.469114] sched_domain: 2 MC span 2-3 flags SD_BALANCE_NEWIDLE,SD_BALANCE_EXEC,SD_BALANCE_FORK,SD_WAKE_AFFINE,SD_SHARE_LLC,SD_PREFER_SIBLING groups 2 3
[    0.481319] sched_domain: 3 NUMA span 0-3 flags SD_BALANCE_NEWIDLE,SD_BALANCE_EXEC,SD_BALANCE_FORK,SD_WAKE_AFFINE,SD_SERIALIZE,SD_OVERLAP,SD_NUMA groups 0-1 2-3
[    0.481442] sched_domain_cpu: 0 domains 0 1
[    0.481474] sched_domain_cpu: 1 domains 0 1
[    0.481506] sched_domain_cpu: 2 domains 2 3
[    0.481538] sched_domain_cpu: 3 domains 2 3
[    0.481670] sched_domains: built for 4 CPUs in 64480 us (not part of bringup_ns)
[    0.485493] timeline: ms from bring-up start: kick 28.891-32.906, call-in 46.425-62.777, ready 96.952-113.510, online 97.478-113.818; masks 416 us; report 174 ms
[    0.486013] timeline: boot CPU: IPIs 5374 us, spec delays 14656 us, waits 79298 us, 9 halts
MANYCORE-RESULT {"kernel":"manycore","bringup":"parallel","calibrate":"parallel","cpus_up":4,"nodes":2,"bringup_ns":115287962,"failed_cpus":[],"cpus_possible":4,"cpus_present":4,"percpu_on_node":4,"x2apic":false,"bogomips":532.27,"tsc_khz":2605240,"heap_used":1192,"firmware_faults":0,"timeline":{"kick":[28891309,32906381],"callin":[46425323,62777099],"ready":[96952997,113510495],"online":[97478390,113818382],"masks_ns":416290,"report_ns":174147438,"bsp":{"ipi_ns":5374555,"delay_ns":14656697,"wait_ns":79298410,"halts":9}}}
"#;

const REAL_LINUX_LOG_LINES: &[&str] = &[
    r#"[    0.846795] Mountpoint-cache hash table entries: 2048 (order: 2, 16384 bytes, vmalloc)"#,
    r#"[    1.018897] APIC calibration not consistent with PM-Timer: 101ms instead of 100ms"#,
    r#"[    1.019207] APIC delta adjusted to PM-Timer: 6249993 (6355890)"#,
    r#"[    1.020454] smpboot: CPU0: AMD QEMU Virtual CPU version 2.5+ (family: 0xf, model: 0x6b, stepping: 0x1)"#,
    r#"[    1.042662] Performance Events: PMU not available due to virtualization, using software events only."#,
    r#"[    1.044312] signal: max sigframe size: 1440"#,
    r#"[    1.047270] rcu: Hierarchical SRCU implementation."#,
    "[    1.047414] rcu: \tMax phase no-delay instances is 1000.",
    r#"[    1.049031] Timer migration: 2 hierarchy levels; 8 children per group; 1 crossnode level"#,
    r#"[    1.063938] NMI watchdog: Perf NMI watchdog permanently disabled"#,
    r#"[    1.067336] smp: Bringing up secondary CPUs ..."#,
    r#"[    1.075750] smpboot: x86: Booting SMP configuration:"#,
    r#"[    1.075915] .... node  #0, CPUs:      #1"#,
    r#"[    1.078000] .... node  #1, CPUs:   #2 #3"#,
    r#"[    0.079253] calibrate_delay_direct() failed to get a good estimate for loops_per_jiffy."#,
    r#"[    0.079253] Probably due to long platform interrupts. Consider using "lpj=" boot option."#,
    r#"[    0.079253] calibrate_delay_direct() dropping max bogoMips estimate 0 = 101015447"#,
    r#"[    0.079253] calibrate_delay_direct() dropping max bogoMips estimate 3 = 15576860"#,
    r#"[    0.079253] calibrate_delay_direct() dropping max bogoMips estimate 4 = 9241999"#,
    r#"[    1.411258] smp: Brought up 2 nodes, 4 CPUs"#,
    r#"[    1.411617] smpboot: Total of 4 processors activated (14209.37 BogoMIPS)"#,
    r#"[    1.443897] node 0 deferred pages initialised in 8ms"#,
    r#"[    1.446799] node 1 deferred pages initialised in 8ms"#,
];

fn real_linux_log() -> String {
    let mut s = REAL_LINUX_LOG_LINES.join("\r\n");
    s.push_str("\r\n");
    s
}

/// What the real logs say, read off the text by hand: independent of the
/// parser.
#[test]
fn real_logs_parse_to_what_they_say() {
    let o = parse_manycore(REAL_MANYCORE_LOG);
    let r = o.result.as_ref().expect("MANYCORE-RESULT line");
    assert_eq!(r.kernel, "manycore");
    assert_eq!((r.cpus_up, r.nodes, r.bringup_ns), (4, 2, 115_287_962));
    assert_eq!(
        (r.cpus_possible, r.cpus_present, r.percpu_on_node),
        (4, 4, 4)
    );
    assert_eq!((r.tsc_khz, r.x2apic), (2_605_240, false));
    assert!((r.bogomips - 532.27).abs() < 1e-9);
    assert_eq!(
        o.srat,
        [
            SratRange {
                node: 0,
                pxm: 0,
                start: 0,
                end: 0x9_ffff,
                hotplug: false,
            },
            SratRange {
                node: 0,
                pxm: 0,
                start: 0x10_0000,
                end: 0x100f_ffff,
                hotplug: false,
            },
            SratRange {
                node: 1,
                pxm: 1,
                start: 0x1010_0000,
                end: 0x201f_ffff,
                hotplug: false,
            },
        ]
    );
    assert_eq!(o.percpu.len(), 4);
    assert_eq!(
        o.percpu[2],
        PercpuLine {
            cpu: 2,
            apic: 2,
            node: 1,
            area: 0x1010_4000,
            stack: (0x1010_0000, 0x1010_4000),
            callin_apic: Some(2),
            callin_apic_base: Some(0xfee0_0800),
            fallback: None,
        }
    );
    assert_eq!(
        o.cpu_facts[3],
        CpuFacts {
            cpu: 3,
            apic: 3,
            package: 1,
            die: None,
            core: 1,
            node: Some(1),
            online: true,
        }
    );
    assert_eq!(o.distances, [(0, vec![10, 15]), (1, vec![15, 10])]);
    // The four `sched_domain:` lines, verbatim after the timestamp.
    for d in [0, 1, 2, 3] {
        let prefix = format!("sched_domain: {d} ");
        assert!(o.domains.iter().any(|l| l.starts_with(&prefix)), "{prefix}");
    }
    assert!(o.failed_lines.is_empty());
    // The CPUID line, the summary, two packages, four cache levels, two
    // nodes and their two distance rows.
    assert_eq!(o.topology.len(), 12);
    assert_eq!(o.caches.len(), 14);
    assert_eq!(o.caches[13].cpus.to_list_string(), "2-3");

    let l = parse_linux(&real_linux_log()).expect("both smp: lines");
    assert_eq!((l.cpus_up, l.nodes), (4, 2));
    // 1.411258 s - 1.067336 s.
    assert_eq!(l.bringup_ns, 343_922_000);
    assert_eq!(l.kernel, "linux");
}

#[derive(Debug, Clone)]
enum Mutation {
    DeleteChars(usize, usize),
    Insert(usize, String),
    ReplaceNumber(usize, String),
    DeleteLine(usize),
    DuplicateLine(usize),
    SwapLines(usize, usize),
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let number = prop_oneof![
        "[0-9]{1,9}",
        "0x[0-9a-f]{0,17}",
        Just("4294967295".to_string()),
        Just("18446744073709551615".to_string()),
        Just("-1".to_string()),
        Just(String::new()),
        "[0-9]{1,3}\\.[0-9]{0,12}",
    ];
    let text = prop_oneof![
        ".{0,12}",
        "[\\[\\]\\-{}\":, 0-9a-z]{0,16}",
        Just("MANYCORE-RESULT ".to_string()),
        Just("[ 1.0] ".to_string()),
        Just("\r\n".to_string()),
    ];
    prop_oneof![
        (any::<usize>(), 0usize..40).prop_map(|(a, n)| Mutation::DeleteChars(a, n)),
        (any::<usize>(), text).prop_map(|(a, s)| Mutation::Insert(a, s)),
        (any::<usize>(), number).prop_map(|(a, s)| Mutation::ReplaceNumber(a, s)),
        any::<usize>().prop_map(Mutation::DeleteLine),
        any::<usize>().prop_map(Mutation::DuplicateLine),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

/// Applies a mutation on char boundaries (the parsers take `&str`).
fn mutate(text: &str, m: &Mutation) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut lines: Vec<String> = text.split('\n').map(str::to_string).collect();
    let n = chars.len().max(1);
    match m {
        Mutation::DeleteChars(at, len) => {
            let a = at % n;
            let b = (a + len).min(chars.len());
            chars[..a].iter().chain(&chars[b..]).collect()
        }
        Mutation::Insert(at, s) => {
            let a = at % (chars.len() + 1);
            let mut out: String = chars[..a].iter().collect();
            out.push_str(s);
            out.extend(&chars[a..]);
            out
        }
        Mutation::ReplaceNumber(at, s) => {
            // The k-th run of ASCII digits (counting from `at`) becomes `s`.
            let runs: Vec<(usize, usize)> = {
                let mut v = Vec::new();
                let mut i = 0;
                while i < chars.len() {
                    if chars[i].is_ascii_digit() {
                        let start = i;
                        while i < chars.len() && chars[i].is_ascii_digit() {
                            i += 1;
                        }
                        v.push((start, i));
                    } else {
                        i += 1;
                    }
                }
                v
            };
            if runs.is_empty() {
                return text.to_string();
            }
            let (a, b) = runs[at % runs.len()];
            let mut out: String = chars[..a].iter().collect();
            out.push_str(s);
            out.extend(&chars[b..]);
            out
        }
        Mutation::DeleteLine(i) => {
            let k = i % lines.len();
            lines.remove(k);
            lines.join("\n")
        }
        Mutation::DuplicateLine(i) => {
            let k = i % lines.len();
            let l = lines[k].clone();
            lines.insert(k, l);
            lines.join("\n")
        }
        Mutation::SwapLines(i, j) => {
            let (a, b) = (i % lines.len(), j % lines.len());
            lines.swap(a, b);
            lines.join("\n")
        }
        Mutation::Truncate(at) => chars[..at % n.min(chars.len() + 1)].iter().collect(),
    }
}

/// Runs both parsers on `text`; the only requirement is not panicking, plus
/// the invariants every parse must keep whatever the input.
fn exercise(text: &str) {
    let o = parse_manycore(text);
    if let Some(r) = &o.result {
        assert_eq!(r.kernel, "manycore");
    }
    if let Some(r) = parse_linux(text) {
        assert_eq!((r.kernel.as_str(), r.bringup.as_str()), ("linux", "linux"));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_text_never_panics(text in "(\\PC{0,60}\r?\n){0,12}") {
        exercise(&text);
    }

    /// Random lines that start like the lines the parsers look for, so the
    /// fuzz reaches the field parsing instead of stopping at the prefix.
    #[test]
    fn random_lines_with_real_prefixes_never_panic(
        lines in prop::collection::vec(
            (
                prop_oneof![
                    Just("ACPI: SRAT: Node "),
                    Just("percpu: "),
                    Just("cputopo: "),
                    Just("topology: node "),
                    Just("sched_domain:"),
                    Just("smpboot: CPU "),
                    Just("smp: Bringing up secondary CPUs"),
                    Just("smp: Brought up "),
                    Just("MANYCORE-RESULT "),
                ],
                "[\\[\\]{}\":,. 0-9a-fx\\-]{0,50}",
                "\\[ {0,4}[0-9]{0,10}(\\.[0-9]{0,12})?\\] ?",
            ),
            0..16,
        )
    ) {
        let text: String = lines
            .iter()
            .map(|(prefix, rest, ts)| format!("{ts}{prefix}{rest}\n"))
            .collect();
        exercise(&text);
    }

    #[test]
    fn mutated_real_logs_never_panic(
        which in any::<bool>(),
        mutations in prop::collection::vec(mutation(), 1..6),
    ) {
        let mut text = if which { REAL_MANYCORE_LOG.to_string() } else { real_linux_log() };
        for m in &mutations {
            text = mutate(&text, m);
        }
        exercise(&text);
    }
}

/// A timestamp the kernel could print, as `[   S.UUUUUU]`, and its value in ns.
fn timestamp() -> impl Strategy<Value = (String, u64)> {
    (0u64..100_000, 0u64..1_000_000)
        .prop_map(|(s, us)| (format!("[{s:>5}.{us:06}]"), s * 1_000_000_000 + us * 1000))
}

/// Lines that match none of the parsers' prefixes (from the real log).
const NOISE: &[&str] = &[
    "[    0.038896] NUMA: node 0: 256 MiB, 190 MiB free",
    "[    0.059969] Calibrating delay loop... 306.31 BogoMIPS (lpj=612635)",
    "[    0.132466] hotplug: cpu0 smt mask 0",
    "[    0.132280] hotplug: topology masks updated incrementally for 3 CPUs in 285 us",
    "random text with no timestamp: percpu: cpu 1 apic 1",
];

fn kernel_result() -> impl Strategy<Value = KernelResult> {
    (
        (0u32..=16384, 0u32..=1024, any::<u64>()),
        prop::collection::vec(0u32..16384, 0..8),
        (0u32..=16384, 0u32..=16384, 0u32..=16384),
        (any::<bool>(), 0u64..=10_000_000, 0u64..10_000_000),
        prop_oneof![Just("serial"), Just("parallel"), Just("broadcast")],
    )
        .prop_map(
            |(
                (cpus_up, nodes, bringup_ns),
                failed,
                (possible, present, on_node),
                (x2, tsc, bogo),
                b,
            )| {
                KernelResult {
                    kernel: String::new(),
                    bringup: b.to_string(),
                    calibrate: "parallel".into(),
                    cpus_up,
                    nodes,
                    bringup_ns,
                    failed_cpus: failed,
                    cpus_possible: possible,
                    cpus_present: present,
                    percpu_on_node: on_node,
                    x2apic: x2,
                    // Two decimals, as the kernel prints BogoMIPS.
                    bogomips: bogo as f64 / 100.0,
                    tsc_khz: tsc,
                    heap_used: 0,
                    firmware_faults: 0,
                    timeline: None,
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Every line kind written by its one writer (`bootproto::report`, as the
    /// kernel writes it), shuffled with noise, parses back to exactly the
    /// values written, in order.
    #[test]
    fn manycore_lines_parse_to_their_values(
        srat in prop::collection::vec(srat(), 0..6),
        percpu in prop::collection::vec(percpu(), 0..6),
        facts in prop::collection::vec(facts(), 0..6),
        distances in prop::collection::vec(
            (any::<u32>(), prop::collection::vec(10u32..255, 1..6)), 0..4),
        failed in prop::collection::vec(any::<u32>(), 0..4),
        result in prop::option::of(kernel_result()),
        noise in prop::collection::vec(0..NOISE.len(), 0..30),
        ts in timestamp(),
        crlf in any::<bool>(),
    ) {
        let (ts, _) = ts;
        let mut lines: Vec<String> = Vec::new();
        lines.extend(srat.iter().map(|r| format!("{ts} {r}")));
        lines.extend(percpu.iter().map(|p| format!("{ts} {p}")));
        lines.extend(facts.iter().map(|c| format!("{ts} {c}")));
        lines.extend(distances.iter().map(|(node, row)| {
            format!("{ts} {}", DistanceRow { node: *node, row: row.clone() })
        }));
        lines.extend(failed.iter().map(|&cpu| {
            let why = "APIC id 7: no call-in within 100 ms".to_string();
            format!("{ts} {}", FailedCpu { cpu, why })
        }));
        // Noise goes in front of, between and after the line kinds; the
        // order within each kind is what the parser must keep.
        let mut text = String::new();
        let eol = if crlf { "\r\n" } else { "\n" };
        let mut noise = noise.into_iter();
        for l in &lines {
            if let Some(k) = noise.next() {
                text.push_str(NOISE[k]);
                text.push_str(eol);
            }
            text.push_str(l);
            text.push_str(eol);
        }
        for k in noise {
            text.push_str(NOISE[k]);
            text.push_str(eol);
        }
        if let Some(r) = &result {
            text.push_str(&r.to_line());
            text.push_str(eol);
        }

        let o = parse_manycore(&text);
        prop_assert_eq!(&o.srat, &srat);
        prop_assert_eq!(&o.percpu, &percpu);
        prop_assert_eq!(&o.cpu_facts, &facts);
        prop_assert_eq!(&o.distances, &distances);
        prop_assert_eq!(&o.failed_lines, &failed);
        prop_assert_eq!(o.topology.len(), distances.len());
        prop_assert!(o.domains.is_empty());
        match (&o.result, &result) {
            (None, None) => {}
            (Some(got), Some(want)) => {
                prop_assert_eq!(got.kernel.as_str(), "manycore");
                prop_assert!((got.bogomips - want.bogomips).abs() <= 1e-9 * want.bogomips.max(1.0));
                let got = KernelResult { kernel: String::new(), bogomips: 0.0, ..got.clone() };
                let want = KernelResult { bogomips: 0.0, ..want.clone() };
                prop_assert_eq!(got, want);
            }
            (got, want) => prop_assert!(false, "result {:?}, wrote {:?}", got, want),
        }
    }

    /// Linux's two smp: lines with any timestamps (end after start) and
    /// counts give the counts and the time between them, in ns; with the
    /// end line missing there is no result.
    #[test]
    fn linux_lines_parse_to_their_values(
        start in timestamp(),
        gap_us in 0u64..10_000_000_000,
        nodes in 1u32..=1024,
        cpus in 1u32..=16384,
        crlf in any::<bool>(),
        noise in prop::collection::vec(0..NOISE.len(), 0..5),
    ) {
        let (start_text, start_ns) = start;
        let end_ns = start_ns + gap_us * 1000;
        let end_text = format!(
            "[{:>5}.{:06}]",
            end_ns / 1_000_000_000,
            end_ns % 1_000_000_000 / 1000
        );
        let eol = if crlf { "\r\n" } else { "\n" };
        let node_word = if nodes == 1 { "node" } else { "nodes" };
        let cpu_word = if cpus == 1 { "CPU" } else { "CPUs" };
        let mut text = String::new();
        for &k in &noise {
            text.push_str(NOISE[k]);
            text.push_str(eol);
        }
        text.push_str(&format!("{start_text} smp: Bringing up secondary CPUs ...{eol}"));
        text.push_str(&format!("{start_text} smpboot: x86: Booting SMP configuration:{eol}"));
        prop_assert_eq!(parse_linux(&text), None);
        text.push_str(&format!("{end_text} smp: Brought up {nodes} {node_word}, {cpus} {cpu_word}{eol}"));
        let r = parse_linux(&text).expect("both lines present");
        prop_assert_eq!((r.nodes, r.cpus_up), (nodes, cpus));
        prop_assert_eq!(r.bringup_ns, end_ns - start_ns);
    }
}

/// A timestamp of more than 2^64 ns (18446744073 s) must not panic: such a
/// line is treated as untimed.
#[test]
fn huge_timestamp_does_not_panic() {
    for text in [
        "[99999999999.000000] smp: Bringing up secondary CPUs ...\n",
        "[18446744073.999999999] smp: Brought up 1 node, 1 CPU\n",
    ] {
        let _ = parse_manycore(text);
        let _ = parse_linux(text);
    }
}
