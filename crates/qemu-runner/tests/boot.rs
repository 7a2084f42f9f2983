//! Boots the manycore kernel under QEMU (TCG) and checks what it did: every
//! CPU comes up with every strategy, per-CPU memory sits on its own node,
//! faults are reported and skipped. Needs `qemu-system-x86_64`; without it
//! these tests fail with the install hint (CI installs it via
//! scripts/install-deps.sh) rather than pass silently.

mod common;
use common::kernel;
use cpumask::CpuMask;
use qemu_runner::{run_manycore, ApicBase, Boot, Machine, RunError, RunOptions, TopologyLine};
use std::collections::BTreeSet;
use std::time::Duration;
use topology::LevelKind;

/// Possible, present and online CPUs, groups per level, threads per core.
type Summary = (u32, u32, u32, Vec<(LevelKind, u32)>, u32);

/// The kernel's `topology:` summary line, if it printed one.
fn summary(b: &Boot) -> Option<Summary> {
    b.parsed.topology.iter().find_map(|l| match l {
        TopologyLine::Summary {
            possible,
            present,
            online,
            levels,
            threads_per_core,
        } => Some((
            *possible,
            *present,
            *online,
            levels.clone(),
            *threads_per_core,
        )),
        _ => None,
    })
}

fn boot(m: &Machine, cmdline: &str) -> Boot {
    let opts = RunOptions {
        timeout: Duration::from_secs(240),
        ask_qemu: true,
        ..RunOptions::default()
    };
    match run_manycore(&kernel(), m, cmdline, &opts) {
        Ok(b) => b,
        Err(e) => panic!("booting {} vCPUs with '{cmdline}': {e}", m.cpus),
    }
}

fn assert_all_up(b: &Boot, m: &Machine, what: &str) {
    let r = &b.result;
    assert_eq!(r.cpus_up, m.cpus, "{what}: CPUs up\n{}", b.output);
    assert!(
        r.failed_cpus.is_empty(),
        "{what}: failed {:?}",
        r.failed_cpus
    );
    assert_eq!(r.nodes, m.nodes, "{what}: nodes");
    assert!(r.bringup_ns > 0 || m.cpus == 1, "{what}: bring-up time");
    // Each AP calls in before it is ready and is ready before it goes online,
    // and the last one goes online inside the bring-up time.
    let t = r.timeline.expect("the kernel reports its timeline");
    if m.cpus > 1 {
        assert!(
            t.callin.1 <= t.ready.1 && t.ready.1 <= t.online.1 && t.online.1 <= r.bringup_ns,
            "{what}: timeline {t:?}, bring-up {} ns",
            r.bringup_ns
        );
        // The boot CPU's IPI sending, spec delays and waits are disjoint
        // parts of the bring-up span.
        let b = t.bsp;
        assert!(
            b.ipi_ns > 0 && b.ipi_ns + b.delay_ns + b.wait_ns <= r.bringup_ns,
            "{what}: boot CPU time {b:?}, bring-up {} ns",
            r.bringup_ns
        );
    }
    assert!(
        b.output
            .contains(&format!("smp: Brought up {} node", m.nodes)),
        "{what}: Linux-like summary line missing"
    );
    assert!(b
        .output
        .contains(&format!("Total of {} processors activated", m.cpus)));
}

/// Whether the kernel should run the local APICs in x2APIC mode: whenever
/// the CPU model has x2APIC (`Machine::qemu_args`' `-cpu`), unless the
/// command line says `x2apic=off` (kernel/README.md).
fn expect_x2apic(m: &Machine, cmdline: &str) -> bool {
    m.uses_x2apic() && !cmdline.split_whitespace().any(|w| w == "x2apic=off")
}

/// What `percpu_dump` printed, checked against what QEMU itself said over
/// QMP before the guest ran, never against the kernel's reading of its own
/// tables: one line per vCPU QEMU made; the APIC ids the CPUs' own local
/// APICs reported at call-in are exactly QEMU's `apic-id`s; each CPU's
/// IA32_APIC_BASE, read by the CPU itself, says its APIC is enabled, in
/// x2APIC mode exactly when `x2apic`, and the BSP flag on QEMU's CPU 0 only;
/// each CPU sits on the node QEMU put that vCPU on, and its per-CPU page and
/// stack lie in the RAM QEMU mapped for that node's `-numa ...,memdev=`
/// backend (or, with `fallback`, the fallback node's). Returns how many CPUs
/// fell back.
fn assert_percpu_truth(b: &Boot, m: &Machine, x2apic: bool, what: &str) -> usize {
    let q = b.qemu.as_ref().expect("the boot asked QEMU over QMP");
    let p = &b.parsed.percpu;
    assert_eq!(q.cpus.len(), m.cpus as usize, "{what}: QEMU's vCPUs");
    assert_eq!(p.len(), q.cpus.len(), "{what}: percpu lines\n{}", b.output);
    let called_in: BTreeSet<Option<u32>> = p.iter().map(|pc| pc.callin_apic).collect();
    let qemu: BTreeSet<Option<u32>> = q.cpus.iter().map(|c| Some(c.apic_id)).collect();
    assert_eq!(
        called_in, qemu,
        "{what}: APIC ids read at call-in vs QEMU's"
    );
    assert_eq!(
        b.result.x2apic, x2apic,
        "{what}: the kernel's own x2APIC claim"
    );
    let memdevs = qemu_runner::node_memdevs(&m.qemu_args());
    let node_ram = |node: u32| match memdevs.iter().find(|(n, _)| *n == node) {
        Some((_, dev)) => q.ram_of(dev),
        None if memdevs.is_empty() => q.ram.iter().map(|r| (r.start, r.end)).collect(),
        None => panic!("{what}: node {node} has no memdev on the QEMU command line"),
    };
    let mut fell_back = 0;
    for pc in p {
        let apic = pc.callin_apic.expect("checked above");
        let vcpu = q.cpu_by_apic(apic).expect("checked above");
        assert_eq!(
            pc.callin_apic,
            Some(pc.apic),
            "{what}: cpu {} MADT vs APIC",
            pc.cpu
        );
        assert_eq!(
            pc.node,
            vcpu.node.unwrap_or(0),
            "{what}: cpu {} node vs QEMU's",
            pc.cpu
        );
        let base = ApicBase(pc.callin_apic_base.expect("read at call-in"));
        assert!(
            base.enabled() && base.x2apic() == x2apic && base.bsp() == (vcpu.index == 0),
            "{what}: cpu {} (QEMU's vCPU {}) IA32_APIC_BASE {:#x}: want enabled, x2APIC {x2apic}, BSP {}",
            pc.cpu,
            vcpu.index,
            base.0,
            vcpu.index == 0
        );
        let node = pc.fallback.unwrap_or(pc.node);
        fell_back += usize::from(pc.fallback.is_some());
        let ram = node_ram(node);
        let inside = |a: u64, len: u64| ram.iter().any(|&(s, e)| a >= s && a + len <= e);
        assert!(
            inside(pc.area, 4096) && inside(pc.stack.0, pc.stack.1 - pc.stack.0),
            "{what}: cpu {} area {:#x} stack {:x?} not in node {node}'s RAM {ram:x?}",
            pc.cpu,
            pc.area,
            pc.stack,
        );
    }
    fell_back
}

const STRATEGIES: [&str; 3] = ["serial", "parallel", "broadcast"];

#[test]
fn one_cpu_boots_and_reports() {
    let m = Machine::new(1);
    let b = boot(&m, "");
    assert_all_up(&b, &m, "1 vCPU");
    assert_eq!(b.result.cpus_present, 1);
}

#[test]
fn two_cpus_serial_with_spec_delays() {
    let m = Machine::new(2);
    let b = boot(&m, "bringup=serial");
    assert_all_up(&b, &m, "2 vCPUs serial");
    // INIT wait (10 ms) + SIPI wait (200 µs) at least, and the boot CPU
    // accounts them as its spec delays.
    assert!(b.result.bringup_ns >= 10_000_000, "{}", b.result.bringup_ns);
    let bsp = b.result.timeline.expect("timeline").bsp;
    assert!(bsp.delay_ns >= 10_200_000, "{bsp:?}");
}

#[test]
fn eight_cpus_every_strategy() {
    let m = Machine {
        shape: Some((2, 2, 2)),
        ..Machine::new(8)
    };
    for s in STRATEGIES {
        let b = boot(&m, &format!("bringup={s}"));
        assert_all_up(&b, &m, s);
        assert_eq!(b.result.bringup, s);
        if s == "parallel" {
            // Parallel kicks its first AP ahead of the others and waits for
            // its call-in (so that under TCG the others find the start-up
            // code translated): it pays the 10 ms INIT delay twice.
            let bsp = b.result.timeline.expect("timeline").bsp;
            assert!(bsp.delay_ns >= 20_000_000, "{s}: {bsp:?}");
        }
        // -smp 8 as 2 sockets x 2 cores x 2 threads.
        let (possible, present, online, levels, _) = summary(&b).expect("summary line");
        assert_eq!((possible, present, online), (8, 8, 8), "{s}");
        assert_eq!(
            levels,
            [(LevelKind::Core, 4), (LevelKind::Package, 2)],
            "{s}"
        );
    }
}

#[test]
fn calibration_policies() {
    let m = Machine::new(4);
    for c in ["serial", "parallel"] {
        let b = boot(&m, &format!("calibrate={c}"));
        assert_all_up(&b, &m, c);
        assert!(b.result.bogomips > 0.0);
    }
    // lpj=N skips every calibration: 4 CPUs × 1000000 × HZ(250) / 500000 = 2000.
    let b = boot(&m, "calibrate=skip lpj=1000000");
    assert_all_up(&b, &m, "skip");
    assert!(
        (b.result.bogomips - 2000.0).abs() < 0.01,
        "{}",
        b.result.bogomips
    );
    assert!(b.output.contains("Calibrating delay loop (skipped)"));
}

#[test]
fn sixty_four_cpus_on_four_nodes_every_strategy_per_cpu_memory_on_node() {
    let m = Machine {
        nodes: 4,
        ..Machine::new(64)
    };
    for s in STRATEGIES {
        let cmdline = format!("bringup={s} calibrate=skip percpu_dump");
        let b = boot(&m, &cmdline);
        assert_all_up(&b, &m, s);
        assert_eq!(
            assert_percpu_truth(&b, &m, expect_x2apic(&m, &cmdline), s),
            0
        );
        assert_eq!(b.result.percpu_on_node, 64);
    }
}

#[test]
fn three_hundred_cpus_in_x2apic_mode_every_strategy() {
    let m = Machine::new(300);
    assert!(m.uses_x2apic());
    for s in STRATEGIES {
        let b = boot(&m, &format!("bringup={s} calibrate=skip percpu_dump"));
        assert_all_up(&b, &m, s);
        // APIC ids up to 299 need x2APIC: every CPU must say so itself.
        assert_percpu_truth(&b, &m, true, s);
    }
}

#[test]
fn xapic_mode_on_request() {
    let m = Machine {
        x2apic: Some(true),
        ..Machine::new(4)
    };
    // The CPU has x2APIC: by default every CPU runs in it, with x2apic=off
    // none does — each CPU's own IA32_APIC_BASE says which.
    for (cmdline, x2apic) in [("percpu_dump", true), ("x2apic=off percpu_dump", false)] {
        assert_eq!(expect_x2apic(&m, cmdline), x2apic);
        let b = boot(&m, cmdline);
        assert_all_up(&b, &m, cmdline);
        assert_percpu_truth(&b, &m, x2apic, cmdline);
    }
}

#[test]
fn an_ap_that_never_calls_in_is_reported_and_skipped() {
    // A CPU entry with no CPU behind it: APIC id 100 does not exist.
    let m = Machine::new(4);
    for s in ["serial", "parallel"] {
        let b = boot(
            &m,
            &format!("bringup={s} ghost_apic=100 callin_timeout_ms=1500"),
        );
        let r = &b.result;
        assert_eq!(r.cpus_up, 4, "{s}");
        assert_eq!(r.cpus_present, 5, "{s}");
        assert_eq!(r.failed_cpus, [4], "{s}");
        assert_eq!(b.parsed.failed_lines, [4], "{s}");
        assert!(b.output.contains("CPU 4 failed to come online"), "{s}");
        assert!(b.output.contains("smp: Brought up 1 node, 4 CPUs"), "{s}");
    }
}

/// qboot leaves every AP in xAPIC mode even with 300 vCPUs, and QEMU
/// matches an xAPIC-mode APIC on the low 8 bits of an IPI's destination: an
/// INIT to stop an AP that never called in would also reset the CPUs whose
/// APIC ids agree with it there. The kernel must not send it, and must say
/// which CPUs it spared: exactly those QEMU itself reports with such ids.
#[test]
fn a_failed_ap_gets_no_init_that_would_reset_its_xapic_aliases() {
    let m = Machine::new(300);
    let opts = RunOptions {
        timeout: Duration::from_secs(240),
        ask_qemu: true,
        bios: Some(qemu_runner::default_bios().expect("QEMU's qboot.rom is installed")),
        ..RunOptions::default()
    };
    // APIC id 516 has no CPU behind it; its low 8 bits are 4. The default
    // call-in time-out: 300 vCPUs beside the other boot tests' guests can
    // all stall for more than a second and a half.
    let cmdline = "bringup=parallel calibrate=skip ghost_apic=516";
    let b = run_manycore(&kernel(), &m, cmdline, &opts)
        .unwrap_or_else(|e| panic!("booting 300 vCPUs with '{cmdline}': {e}"));
    assert_eq!(b.result.cpus_up, 300, "{}", b.output);
    assert_eq!(b.result.failed_cpus, [300], "{}", b.output);
    let q = b.qemu.as_ref().expect("the boot asked QEMU over QMP");
    let aliases: Vec<String> = q
        .cpus
        .iter()
        .filter(|c| c.apic_id & 0xff == 516 & 0xff)
        .map(|c| c.apic_id.to_string())
        .collect();
    assert_eq!(aliases, ["4", "260"], "QEMU's APIC ids");
    let spared = format!(
        "smpboot: APIC id 516 not sent INIT: in xAPIC mode it would also reset APIC ids {}",
        aliases.join(",")
    );
    assert!(b.output.contains(&spared), "no '{spared}' in\n{}", b.output);
}

#[test]
fn kernel_topology_matches_the_qemu_command_line() {
    // 2 sockets × 4 cores × 2 threads, 4 nodes of 4 CPUs (two per socket),
    // SLIT with two remote distances.
    let m = Machine {
        shape: Some((2, 4, 2)),
        nodes: 4,
        ..Machine::new(16)
    };
    let b = boot(&m, "calibrate=skip");
    assert_all_up(&b, &m, "2x4x2, 4 nodes");
    let t = &b.parsed.topology;
    let has = |want: &TopologyLine| assert!(t.contains(want), "missing {want:?} in {t:#?}");
    assert_eq!(
        summary(&b),
        Some((
            16,
            16,
            16,
            vec![(LevelKind::Core, 8), (LevelKind::Package, 2)],
            2
        ))
    );
    let cpus = |first: u32, last: u32| (first as usize..=last as usize).collect::<CpuMask>();
    for (index, (first, last)) in [(0, 7), (8, 15)].into_iter().enumerate() {
        has(&TopologyLine::Group {
            kind: LevelKind::Package,
            index: index as u32,
            cpus: cpus(first, last),
        });
    }
    for n in 0..4u32 {
        let (first, last) = m.node_cpus(n);
        assert!(
            t.iter().any(|l| matches!(l,
                TopologyLine::Node { id, cpus: c, .. } if *id == n && *c == cpus(first, last))),
            "node {n} in {t:#?}"
        );
        let row: Vec<u32> = (0..4).map(|j| m.distance(n, j)).collect();
        has(&TopologyLine::Distances(bootproto::report::DistanceRow {
            node: n,
            row,
        }));
    }
}

#[test]
fn per_cpu_memory_exhaustion_is_reported_and_skipped() {
    // Only 110 KiB left: the boot CPU and four APs get their 20 KiB.
    let m = Machine::new(8);
    let b = boot(&m, "fault_mem_kib=110 calibrate=skip");
    let r = &b.result;
    assert_eq!(r.cpus_up, 5, "{}", b.output);
    assert_eq!(r.failed_cpus, [5, 6, 7]);
    assert!(b
        .output
        .contains("CPU 5: no memory for its stack or per-CPU area (out of memory"));
    assert!(b.output.contains("smp: Brought up 1 node, 5 CPUs"));
}

#[test]
fn per_cpu_memory_falls_back_to_the_nearest_node() {
    // Node 0 keeps 30 KiB: CPU 0 fits, CPUs 1-3 fall back to node 1, which is
    // at distance 15 (nodes 2 and 3 are at 25).
    let m = Machine {
        nodes: 4,
        ..Machine::new(16)
    };
    let b = boot(
        &m,
        "fault_mem_kib=30 fault_mem_node=0 calibrate=skip percpu_dump",
    );
    assert_all_up(&b, &m, "fallback");
    assert_eq!(assert_percpu_truth(&b, &m, false, "fallback"), 3);
    for pc in &b.parsed.percpu {
        let expect = (1..4).contains(&pc.cpu).then_some(1);
        assert_eq!(pc.fallback, expect, "cpu {}", pc.cpu);
    }
    assert_eq!(b.result.percpu_on_node, 13);
}

#[test]
fn disabled_madt_entries_are_possible_but_not_started() {
    // -smp 4,maxcpus=8: the MADT lists 8 processors, 4 of them disabled.
    let m = Machine {
        max_cpus: Some(8),
        ..Machine::new(4)
    };
    for s in ["parallel", "broadcast"] {
        let b = boot(&m, &format!("bringup={s} calibrate=skip"));
        assert_all_up(&b, &m, s);
        assert_eq!(
            (b.result.cpus_possible, b.result.cpus_present),
            (8, 4),
            "{s}"
        );
        assert!(
            b.output
                .contains("smpboot: Allowing 8 CPUs, 4 hotplug CPUs"),
            "{s}"
        );
        let (possible, present, online, _, _) = summary(&b).expect("summary line");
        assert_eq!((possible, present, online), (8, 4, 4), "{s}");
    }
}

#[test]
fn panics_and_exceptions_exit_qemu_with_failure() {
    let m = Machine::new(2);
    let opts = RunOptions {
        timeout: Duration::from_secs(120),
        ..RunOptions::default()
    };
    for (fault, text) in [
        ("panic", "Kernel panic - not syncing"),
        ("ud2", "kernel: exception 6"),
    ] {
        match run_manycore(&kernel(), &m, &format!("fault={fault}"), &opts) {
            Err(RunError::NoResult { exit_code, output }) => {
                assert_eq!(exit_code, Some(35), "{fault}: (0x11 << 1) | 1\n{output}");
                assert!(output.contains(text), "{fault}: {output}");
            }
            other => panic!("fault={fault} should fail, got {other:?}"),
        }
    }
}

/// The machine arguments of a Linux capture's QEMU command line (its
/// README's `command:` line after the `-append "..."` string).
fn capture_machine_args(name: &str) -> Vec<String> {
    let path = common::data(&format!("{name}.README"));
    let readme =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let command = readme
        .lines()
        .find_map(|l| l.strip_prefix("command: "))
        .unwrap_or_else(|| panic!("{}: no 'command:' line", path.display()));
    let (_, rest) = command
        .split_once("-append \"")
        .unwrap_or_else(|| panic!("{}: no -append", path.display()));
    let (_, args) = rest.split_once('"').expect("closing quote");
    args.split_whitespace().map(str::to_string).collect()
}

#[test]
fn scheduler_domains_the_kernel_prints_equal_linux_on_the_same_qemu_arguments() {
    // The kernel builds the shared topology model from MADT/SRAT/SLIT/CPUID
    // (caches included, from each CPU's CPUID), runs the shared `domains`
    // crate on it (no_std) and prints every CPU's domains. Debian's Linux
    // 6.12 booted on exactly these QEMU arguments (scripts/domains-capture.sh,
    // captures in tests/data) is the truth: every CPU's chain must match its
    // names, spans, flag names and groups. The kernel's facts (topo_dump)
    // must also rebuild the QEMU topology exactly, so a mismatch points at
    // one side.
    for (capture, m) in [
        // SMT, one node: --sockets 2 --cores 4 --threads 2.
        (
            "boot-16c-smt",
            Machine {
                shape: Some((2, 4, 2)),
                ..Machine::new(16)
            },
        ),
        // SMT and 4 nodes, two per socket (NUMA levels above the packages).
        (
            "boot-16c-smt-4n",
            Machine {
                shape: Some((2, 4, 2)),
                nodes: 4,
                ..Machine::new(16)
            },
        ),
        (
            "boot-64c-4n",
            Machine {
                nodes: 4,
                ..Machine::new(64)
            },
        ),
    ] {
        assert_eq!(
            capture_machine_args(capture),
            m.qemu_args(),
            "{capture}: the capture was made on other QEMU arguments"
        );
        let b = boot(&m, "calibrate=skip topo_dump");
        assert_all_up(&b, &m, capture);
        assert_eq!(b.parsed.cpu_facts.len(), m.cpus as usize);
        let kernel_topo = qemu_runner::kernel_topology(&b.parsed).expect("kernel topology builds");
        let expected = m.expected_topology().expect("QEMU topology builds");
        assert_eq!(kernel_topo, expected, "{capture}: topology");

        let printed = qemu_runner::parse_kernel_domains(&b.parsed.domains)
            .unwrap_or_else(|e| panic!("{capture}: {e}\n{}", b.output));
        let dump =
            domains::compare::Dump::read(&common::data(&format!("{capture}-domains.tar.gz")))
                .unwrap_or_else(|e| panic!("{capture}: {e}"));
        let levels_seen = common::assert_domains_match_linux(capture, &printed, &dump);
        // The comparison must cover the levels this shape is about: every one
        // has CPUs sharing an L3 on a node (CPUID's caches), hence MC.
        assert!(levels_seen.contains("MC"), "{capture}: {levels_seen:?}");
        if m.shape.is_some() {
            assert!(levels_seen.contains("SMT"), "{capture}: {levels_seen:?}");
        }
        if m.nodes > 1 {
            assert!(
                levels_seen.contains("NUMA") || levels_seen.contains("NODE"),
                "{capture}: {levels_seen:?}"
            );
        }
    }
}
