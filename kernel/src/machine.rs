//! The boot sequence as five phases, each a function: discover the machine
//! (firmware tables, clocks, the local APIC, CPU numbering), split its memory
//! by node, place each CPU's per-CPU area and stack on its node, bring the
//! APs up, report.

use crate::arch::acpi::Tables;
use crate::arch::phys::{BootInfo, PhysMem};
use crate::arch::{apic, cpu, heap, phys, timer};
use crate::bringup::Outcome;
use crate::firmware::{self, CpuInfo, Firmware};
use crate::kprintln;
use crate::report::{self, NodeFacts};
use crate::smp::{self, ApConfig, Delays, InitReach, KernelPlatform, PerCpu};
use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use bootproto::cmdline::{self, Options};
use bootproto::report::{FailedCpu, KernelResult, PercpuLine, SratRange, Timeline, TopologyLine};
use core::fmt;
use core::sync::atomic::Ordering;
use cpumask::CpuMask;
use hotplug::{Algo, MaskEngine, X86Cpu, X86Description};
use nodemem::{AllocError, PAGE_SIZE};
use x86desc::cacheinfo::{self, CpuCaches, Placed};
use x86desc::shifts::ApicShifts;

/// Why the kernel gave up before bringing anything up.
#[derive(Debug)]
pub enum Fatal {
    /// The PVH start info was missing or had the wrong magic.
    NoStartInfo,
    /// ACPI tables could not be read.
    Acpi(crate::arch::acpi::AcpiFailure),
    /// The MADT lists no enabled CPU.
    NoCpus,
    /// The node memory was already built (a second boot path).
    MemoryTwice,
    /// No per-CPU memory for the boot CPU itself.
    BspMemory(AllocError),
    /// The mask engine refused the boot CPU (it has no per-CPU area).
    Engine(hotplug::HotplugError),
}

impl fmt::Display for Fatal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fatal::NoStartInfo => write!(f, "no valid PVH start info"),
            Fatal::Acpi(e) => write!(f, "cannot read ACPI tables: {:?}", e.0),
            Fatal::NoCpus => write!(f, "MADT lists no enabled processor"),
            Fatal::MemoryTwice => write!(f, "node memory built twice"),
            Fatal::BspMemory(e) => write!(f, "no memory for the boot CPU's per-CPU area: {e}"),
            Fatal::Engine(e) => write!(f, "no topology mask engine: {e}"),
        }
    }
}

/// Cache leaves (over all CPUs) beyond which L1 caches stay out of the
/// final topology model: each instance is 2 KiB, and 4096 leaves is 8 MiB.
const CACHE_INSTANCE_BUDGET: usize = 4096;

/// Bytes of stack each AP gets.
const STACK_SIZE: u64 = 16 * 1024;

/// What the discover phase found.
struct Machine {
    fw: Firmware,
    /// Logical CPUs, possible ones included.
    cpus: Vec<CpuInfo>,
    bsp_apic: u32,
    apic_mode: apic::Mode,
    /// The firmware handed over with the boot CPU's APIC in x2APIC mode.
    firmware_x2apic: bool,
    tsc_khz: u64,
    shifts: ApicShifts,
}

impl Machine {
    fn x2apic(&self) -> bool {
        matches!(self.apic_mode, apic::Mode::X2apic(_))
    }

    fn present(&self) -> impl Iterator<Item = &CpuInfo> {
        self.cpus.iter().filter(|c| c.present)
    }
}

/// The per-CPU areas the per-CPU phase placed.
struct Areas {
    /// Indexed by logical CPU; `None` for CPUs without memory or a slot.
    by_cpu: Vec<Option<&'static PerCpu>>,
}

impl Areas {
    fn iter(&self) -> impl Iterator<Item = &'static PerCpu> + '_ {
        self.by_cpu.iter().flatten().copied()
    }
}

/// Runs the whole boot; `Ok` once the result line is printed.
pub fn run(start_info: u32) -> Result<(), Fatal> {
    let boot = phys::boot_info(start_info).ok_or(Fatal::NoStartInfo)?;
    let opts = command_line(&boot);
    let m = discover(&boot, &opts)?;
    let mut mem = memory(&boot, &m.fw, &opts)?;
    let areas = percpu_areas(&mut mem, &m)?;
    let nodes: Vec<NodeFacts> = mem
        .nodes()
        .into_iter()
        .map(|id| NodeFacts {
            id,
            bytes: mem.total_bytes(id),
        })
        .collect();
    let (outcome, span) = bring_up(&m, &areas, &opts)?;
    report(&m, &areas, &nodes, &outcome, span, &opts);
    Ok(())
}

/// Reads the command line, reporting words it ignores, and runs the fault
/// injections that act at once.
fn command_line(boot: &BootInfo) -> Options {
    kprintln!("Linux-like manycore kernel, PVH boot");
    kprintln!("Command line: {}", boot.cmdline);
    let opts = cmdline::parse(boot.cmdline, |w| kprintln!("cmdline: {w}"));
    match opts.fault {
        Some(cmdline::Fault::Panic) => panic!("fault injection (fault=panic)"),
        Some(cmdline::Fault::InvalidOpcode) => cpu::invalid_opcode(),
        None => {}
    }
    opts
}

/// Discover: ACPI tables, the TSC and APIC timer, the local APIC mode, and
/// the logical CPU numbering, with every firmware fault logged.
fn discover(boot: &BootInfo, opts: &Options) -> Result<Machine, Fatal> {
    let tables = Tables::open(boot.rsdp).map_err(Fatal::Acpi)?;
    let mut fw = firmware::discover(&tables);
    let tsc_khz = calibrate_tsc(&fw);
    let firmware_x2apic = apic::x2apic_enabled();
    let apic_mode = enable_local_apic(opts);
    let bsp_apic = apic::id();
    let apic_mhz = timer::calibrate_apic_timer();
    kprintln!("APIC: timer runs at {apic_mhz} MHz; waits halt between checks");
    print_srat(&fw);
    let cpus = firmware::number_cpus(&mut fw, bsp_apic, opts.ghost_apic);
    for fault in &fw.faults {
        kprintln!("ACPI: firmware fault: {fault}");
    }
    let present = cpus.iter().filter(|c| c.present).count();
    if present == 0 {
        return Err(Fatal::NoCpus);
    }
    kprintln!(
        "smpboot: Allowing {} CPUs, {} hotplug CPUs",
        cpus.len(),
        cpus.len() - present
    );
    Ok(Machine {
        fw,
        cpus,
        bsp_apic,
        apic_mode,
        firmware_x2apic,
        tsc_khz,
        shifts: cpu::apic_shifts(),
    })
}

/// The TSC frequency in kHz, against the HPET when the firmware has one.
fn calibrate_tsc(fw: &Firmware) -> u64 {
    let (clock, khz) = timer::calibrate(fw.hpet);
    kprintln!(
        "tsc: Detected {}.{:03} MHz processor (calibrated against {:?})",
        khz / 1000,
        khz % 1000,
        clock
    );
    khz
}

/// The boot CPU's local APIC in x2APIC mode when the CPU has it and
/// `x2apic=off` does not forbid it, else in xAPIC mode.
fn enable_local_apic(opts: &Options) -> apic::Mode {
    let apic_mode = match (opts.x2apic, cpu::x2apic_supported()) {
        (Some(false), _) | (None, None) => apic::Mode::Xapic,
        (_, Some(proof)) => apic::Mode::X2apic(proof),
        (Some(true), None) => {
            kprintln!("x2apic: requested but not supported by this CPU, staying in xAPIC mode");
            apic::Mode::Xapic
        }
    };
    apic::enable(apic_mode);
    let x2apic = matches!(apic_mode, apic::Mode::X2apic(_));
    kprintln!(
        "x2apic: {}",
        if x2apic {
            "enabled"
        } else {
            "disabled (xAPIC mode)"
        }
    );
    apic_mode
}

/// One line per SRAT memory range, with the node it maps to.
fn print_srat(fw: &Firmware) {
    for m in &fw.srat.mem {
        let line = SratRange {
            node: fw.numa.node(m.domain).unwrap_or_default(),
            pxm: m.domain,
            start: m.base,
            end: m.base + m.len.saturating_sub(1),
            hotplug: m.hotplug,
        };
        kprintln!("{line}");
    }
}

/// Memory: usable RAM split by the SRAT's node ranges (all on node 0
/// without one), SLIT distances for the fallback order, the fault injection
/// that takes memory away.
fn memory(boot: &BootInfo, fw: &Firmware, opts: &Options) -> Result<PhysMem, Fatal> {
    let ranges: Vec<(u32, u64, u64)> = fw
        .srat
        .mem
        .iter()
        .filter(|m| !m.hotplug)
        .filter_map(|m| Some((fw.numa.node(m.domain)?, m.base, m.len)))
        .collect();
    let mut mem = PhysMem::new(&boot.memmap, &ranges).ok_or(Fatal::MemoryTwice)?;
    if let Some((n, d)) = &fw.slit {
        // Only a SLIT whose every locality is a node orders the fallback
        // (an unknown one is a logged fault).
        let ids: Option<Vec<u32>> = (0..*n as u32).map(|p| fw.numa.node(p)).collect();
        if let Some(ids) = ids {
            mem.set_distances(&ids, d);
        }
    }
    for node in mem.nodes() {
        kprintln!(
            "NUMA: node {node}: {} MiB, {} MiB free",
            mem.total_bytes(node) >> 20,
            mem.free_bytes(node) >> 20
        );
    }
    if let Some(kib) = opts.fault_mem_kib {
        for node in mem.nodes() {
            if opts.fault_mem_node.is_none_or(|f| f == node) {
                mem.leak_all_but(node, kib * 1024);
            }
        }
        kprintln!("NUMA: fault injection: {kib} KiB left free per node");
    }
    Ok(mem)
}

/// Per-CPU areas: each present CPU's stack and per-CPU area in one frame on
/// its own node, registered for the trampoline. A CPU that gets no memory or
/// no slot is reported and skipped (its kick then fails in the hotplug
/// engine); the boot CPU without memory is fatal.
fn percpu_areas(mem: &mut PhysMem, m: &Machine) -> Result<Areas, Fatal> {
    let mut by_cpu: Vec<Option<&'static PerCpu>> = alloc::vec![None; m.cpus.len()];
    for c in m.present() {
        let placed = mem.alloc_percpu(c.node, STACK_SIZE, |at| {
            PerCpu::new(c.cpu, c.apic_id, c.node, at.node, at.area, at.stack)
        });
        match placed {
            Ok((area, stack)) => {
                if smp::register(area, stack).is_err() {
                    kprintln!(
                        "smpboot: CPU {} (APIC id {}) does not fit the tables, skipped",
                        c.cpu,
                        c.apic_id
                    );
                    continue;
                }
                by_cpu[c.cpu as usize] = Some(area);
            }
            Err(e) if c.cpu == 0 => return Err(Fatal::BspMemory(e)),
            Err(e) => kprintln!(
                "smpboot: CPU {}: no memory for its stack or per-CPU area ({e}), skipped",
                c.cpu
            ),
        }
    }
    Ok(Areas { by_cpu })
}

/// The boot CPU's delay loop: measured, or `lpj=` as given.
fn calibrate_bsp(opts: &Options) -> u64 {
    let (lpj, how) = match opts.lpj {
        Some(lpj) => (lpj, " (skipped) preset value.."),
        None => (smp::calibrate_delay(), "..."),
    };
    kprintln!(
        "Calibrating delay loop{how} {} BogoMIPS (lpj={lpj})",
        fmt_bogo(smp::bogomips_x100(lpj))
    );
    lpj
}

/// Bring-up: the boot CPU's own state (delay loop, caches), the AP
/// configuration, the topology model with only the boot CPU online for the
/// hotplug engine, then the engine's run. Returns what it achieved and how
/// long it took.
fn bring_up(m: &Machine, areas: &Areas, opts: &Options) -> Result<(Outcome, Span), Fatal> {
    crate::arch::boot::install_trampoline();
    let bsp_lpj = calibrate_bsp(opts);
    let bsp_caches = read_bsp_caches(m.bsp_apic);
    if let Some(bsp) = areas.by_cpu.first().copied().flatten() {
        bsp.lpj.store(bsp_lpj, Ordering::Relaxed);
        bsp.caches.call_once(|| bsp_caches);
        bsp.record_callin_apic();
        bsp.mark_online();
    }
    smp::configure(ApConfig {
        apic_mode: m.apic_mode,
        calibrate: opts.calibrate,
        default_lpj: opts.lpj.unwrap_or(bsp_lpj),
        bsp_apic_id: m.bsp_apic,
    });
    let s = m.shifts;
    let shifts = TopologyLine::Shifts {
        leaf: s.leaf,
        smt: s.smt,
        core: s.core,
        package: s.package,
    };
    kprintln!("{shifts}");
    let engine = MaskEngine::for_x86(x86_description(m, &bsp_caches), 0, Algo::Scoped)
        .map_err(Fatal::Engine)?;
    let delays = Delays {
        init_us: opts.init_delay_us,
        sipi_us: opts.sipi_delay_us,
        timeout_ms: opts.callin_timeout_ms,
    };
    let platform = KernelPlatform::new(
        areas.by_cpu.clone(),
        opts.bringup,
        delays,
        opts.calibrate,
        m.x2apic(),
        InitReach::new(
            m.firmware_x2apic,
            m.cpus.iter().map(|c| c.apic_id).collect(),
        ),
    );
    kprintln!("smp: Bringing up secondary CPUs ...");
    // One clock for the span and for every stage stamp in it: a second
    // reading at the start would leave out any time the host deschedules this
    // vCPU between the two, and stamps could then fall after the span's end.
    let start_ns = timer::now_ns();
    let outcome = crate::bringup::run(platform, engine, opts.bringup);
    let ns = timer::now_ns().saturating_sub(start_ns);
    Ok((outcome, Span { start_ns, ns }))
}

/// When bring-up started (ns since boot) and how long it took.
#[derive(Clone, Copy)]
struct Span {
    start_ns: u64,
    ns: u64,
}

/// The APs' stage timestamps as first/last spans from the start of
/// bring-up, and the BSP's own stages.
fn timeline(areas: &Areas, outcome: &Outcome, span: Span, report_ns: u64) -> Timeline {
    let aps: Vec<&PerCpu> = areas
        .iter()
        .filter(|a| a.cpu != 0 && outcome.online.contains(a.cpu as usize))
        .collect();
    let stage = |at: &dyn Fn(&PerCpu) -> u64| {
        let t = aps.iter().map(|a| at(a).saturating_sub(span.start_ns));
        t.clone().min().zip(t.max()).unwrap_or_default()
    };
    Timeline {
        kick: stage(&|a| a.kicked_ns.load(Ordering::Relaxed)),
        callin: stage(&|a| a.callin_ns.load(Ordering::Relaxed)),
        ready: stage(&|a| a.ready_ns.load(Ordering::Relaxed)),
        online: stage(&|a| a.online_ns.load(Ordering::Relaxed)),
        masks_ns: outcome.mask_update_ns,
        report_ns,
        bsp: outcome.bsp_time,
    }
}

/// The boot CPU's caches from its own CPUID, logged.
fn read_bsp_caches(bsp_apic: u32) -> CpuCaches {
    let t_read = cpu::rdtsc();
    let caches = smp::read_caches(bsp_apic);
    let read_ns = timer::tsc_to_ns(cpu::rdtsc() - t_read);
    kprintln!(
        "cacheinfo: {:?} rules, {}: {} cache leaves (read in {} ns)",
        caches.vendor,
        caches.source.describe(),
        caches.leaves().count(),
        read_ns
    );
    caches
}

/// Each present CPU's ids as Linux's x86 code keeps them, for the mask
/// engine: core and package from the APIC id's fields, node from the SRAT,
/// and the L2 and last-level cache it shares. Until the APs read their own
/// CPUID, each CPU's caches are predicted from the boot CPU's reading with
/// its own APIC id. A cache is identified by its sharing rule's id and the
/// node (`topology_sane()` cuts shared caches at the node); AMD's legacy
/// per-CPU L2 has no id, so the L2 mask is the SMT siblings, as Linux's
/// `cpu_l2c_shared_mask` is then.
fn x86_description(m: &Machine, bsp_caches: &CpuCaches) -> X86Description {
    let s = m.shifts;
    let mut ids: BTreeMap<(u8, u64, u32), u32> = BTreeMap::new();
    let mut number = |key: (u8, u64, u32)| {
        let next = ids.len() as u32;
        *ids.entry(key).or_insert(next)
    };
    let mut cpus = Vec::with_capacity(m.cpus.len());
    for c in m.present() {
        let caches = bsp_caches.for_apic_id(c.apic_id);
        let shared = caches
            .leaves()
            .filter(|l| l.level >= 2 && l.kind != topology::CacheKind::Instruction);
        let (mut l2, mut llc) = (None, None);
        for leaf in shared {
            let id = cacheinfo::sharing_id(c.apic_id, leaf.sharing);
            let id = id.map(|(rule, id)| number((rule, id, c.node)));
            if leaf.level == 2 {
                l2 = l2.or(id);
            }
            llc = id;
        }
        cpus.push(X86Cpu {
            cpu: c.cpu,
            core: c.apic_id.checked_shr(s.smt).unwrap_or(0),
            package: c.apic_id.checked_shr(s.package).unwrap_or(0),
            node: c.node,
            l2,
            llc,
        });
    }
    X86Description::new(cpus)
}

/// Report: the Linux-like summary, per-CPU placement (`percpu_dump`), the
/// topology model after bring-up and its scheduler domains, the timeline and
/// the result line.
fn report(
    m: &Machine,
    areas: &Areas,
    nodes: &[NodeFacts],
    outcome: &Outcome,
    span: Span,
    opts: &Options,
) {
    let failed = report_outcome(outcome);
    let up = Up::of(areas, &outcome.online);
    print_smp_summary(&up, &failed, outcome);
    if opts.percpu_dump {
        print_percpu(areas);
    }
    final_topology(m, areas, nodes, &outcome.online, opts);
    let report_ns = timer::now_ns().saturating_sub(span.start_ns + span.ns);
    let t = timeline(areas, outcome, span, report_ns);
    print_timeline(&t);
    let result = KernelResult {
        kernel: String::from("manycore"),
        bringup: opts.bringup.to_string(),
        calibrate: opts.calibrate.to_string(),
        x2apic: m.x2apic(),
        cpus_possible: m.cpus.len() as u32,
        cpus_present: m.present().count() as u32,
        cpus_up: up.cpus,
        nodes: up.nodes,
        bringup_ns: span.ns,
        failed_cpus: failed,
        percpu_on_node: areas.iter().filter(|a| on_own_node(&m.fw, a)).count() as u32,
        bogomips: up.bogo_x100 as f64 / 100.0,
        tsc_khz: m.tsc_khz,
        heap_used: heap::used() as u64,
        firmware_faults: m.fw.faults.len() as u32,
        timeline: Some(t),
    };
    crate::arch::console::print(format_args!("{}\n", result.to_line()));
}

/// What came up: online CPUs, the nodes they are on, their BogoMIPS × 100.
struct Up {
    cpus: u32,
    nodes: u32,
    bogo_x100: u64,
}

impl Up {
    fn of(areas: &Areas, online: &CpuMask) -> Up {
        let up: Vec<&PerCpu> = areas
            .iter()
            .filter(|a| online.contains(a.cpu as usize))
            .collect();
        let mut nodes: Vec<u32> = up.iter().map(|a| a.node).collect();
        nodes.sort_unstable();
        nodes.dedup();
        Up {
            cpus: up.len() as u32,
            nodes: nodes.len() as u32,
            bogo_x100: up
                .iter()
                .map(|a| smp::bogomips_x100(a.lpj.load(Ordering::Relaxed)))
                .sum(),
        }
    }
}

/// Linux's end-of-bring-up lines, the failed CPUs, and the mask engine's
/// work with the boot CPU's masks.
fn print_smp_summary(up: &Up, failed: &[u32], outcome: &Outcome) {
    kprintln!(
        "smp: Brought up {}, {}",
        plural(up.nodes as usize, "node"),
        plural(up.cpus as usize, "CPU")
    );
    kprintln!(
        "smpboot: Total of {} processors activated ({} BogoMIPS)",
        up.cpus,
        fmt_bogo(up.bogo_x100)
    );
    if !failed.is_empty() {
        kprintln!(
            "smpboot: {} CPUs failed to come online: {}",
            failed.len(),
            cpulist(failed)
        );
    }
    kprintln!(
        "hotplug: topology masks updated incrementally for {} CPUs in {} us",
        up.cpus.saturating_sub(1),
        outcome.mask_update_ns / 1000
    );
    for line in &outcome.bsp_masks {
        kprintln!("{line}");
    }
}

/// The `timeline:` line: each stage's first and last AP, in ms.
fn print_timeline(t: &Timeline) {
    let ms = |(a, b): (u64, u64)| {
        alloc::format!(
            "{}.{:03}-{}.{:03}",
            a / 1_000_000,
            a / 1000 % 1000,
            b / 1_000_000,
            b / 1000 % 1000
        )
    };
    kprintln!(
        "timeline: ms from bring-up start: kick {}, call-in {}, ready {}, online {}; masks {} us; report {} ms",
        ms(t.kick),
        ms(t.callin),
        ms(t.ready),
        ms(t.online),
        t.masks_ns / 1000,
        t.report_ns / 1_000_000
    );
    let b = t.bsp;
    kprintln!(
        "timeline: boot CPU: IPIs {} us, spec delays {} us, waits {} us, {} halts",
        b.ipi_ns / 1000,
        b.delay_ns / 1000,
        b.wait_ns / 1000,
        b.halts
    );
}

/// Logs each failed CPU; returns them sorted.
fn report_outcome(outcome: &Outcome) -> Vec<u32> {
    let mut failed: Vec<u32> = Vec::new();
    for (cpu, why) in &outcome.failed {
        let line = FailedCpu {
            cpu: *cpu as u32,
            why: why.clone(),
        };
        kprintln!("{line}");
        failed.push(*cpu as u32);
    }
    failed.sort_unstable();
    failed
}

/// One `percpu:` line per CPU with an area: where its memory is, and which
/// APIC id and IA32_APIC_BASE the CPU read from its own hardware at call-in.
fn print_percpu(areas: &Areas) {
    for a in areas.iter() {
        let line = PercpuLine {
            cpu: a.cpu,
            apic: a.apic_id,
            node: a.node,
            area: a.area,
            stack: a.stack,
            callin_apic: a.callin_apic(),
            callin_apic_base: a.callin_apic_base(),
            fallback: (a.mem_node != a.node).then_some(a.mem_node),
        };
        kprintln!("{line}");
    }
}

/// The topology model after bring-up, from every online CPU's caches as it
/// read them at call-in (Linux's shared maps, too, only link online CPUs),
/// printed with its scheduler domains. A cache instance costs 2 KiB of the
/// 64 MiB heap (its CPU mask): past CACHE_INSTANCE_BUDGET the private L1s,
/// which no scheduler level reads, are left out.
fn final_topology(
    m: &Machine,
    areas: &Areas,
    nodes: &[NodeFacts],
    online: &CpuMask,
    opts: &Options,
) {
    let own = || {
        areas
            .iter()
            .filter(|a| online.contains(a.cpu as usize))
            .filter_map(|a| {
                a.caches.get().map(|&c| Placed {
                    cpu: a.cpu,
                    node: a.node,
                    caches: c,
                })
            })
    };
    let leaves: usize = own().map(|p| p.caches.leaves().count()).sum();
    let min_level = if leaves > CACHE_INSTANCE_BUDGET {
        kprintln!(
            "cacheinfo: {leaves} cache leaves on {} CPUs: L1 caches left out of the model",
            online.weight()
        );
        2
    } else {
        1
    };
    let caches = cacheinfo::shared_instances(own(), min_level);
    let distances = numa_distances(&m.fw);
    match report::build(&m.cpus, online, m.shifts, nodes, &distances, caches) {
        Ok(t) => {
            report::print_topology(&t);
            if opts.topo_dump {
                report::print_cpu_facts(&t);
                report::print_cache_facts(&t);
            }
            if opts.sched_domains {
                report::print_domains(&t);
            }
        }
        Err(e) => kprintln!("{}", TopologyLine::Unbuilt(e.to_string())),
    }
}

fn fmt_bogo(x100: u64) -> String {
    alloc::format!("{}.{:02}", x100 / 100, x100 % 100)
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        alloc::format!("{n} {word}")
    } else {
        alloc::format!("{n} {word}s")
    }
}

/// Linux cpulist form of sorted CPU numbers.
fn cpulist(cpus: &[u32]) -> String {
    let mut m = CpuMask::new();
    for &c in cpus {
        let _ = m.try_set(c as usize);
    }
    m.to_list_string()
}

/// The node distance matrix (10/20 defaults without a SLIT), nodes × nodes.
/// SLIT localities that are no node were logged as faults and are skipped.
fn numa_distances(fw: &Firmware) -> (usize, Vec<u8>) {
    let n = fw.numa.len().max(1);
    let mut d = alloc::vec![20u8; n * n];
    for i in 0..n {
        d[i * n + i] = 10;
    }
    if let Some((k, m)) = &fw.slit {
        for a in 0..*k {
            for b in 0..*k {
                let node = |p: usize| fw.numa.node(p as u32).map(|x| x as usize);
                if let (Some(na), Some(nb)) = (node(a), node(b)) {
                    d[na * n + nb] = m[a * k + b];
                }
            }
        }
    }
    (n, d)
}

/// Whether a CPU's per-CPU area and stack lie inside one of its node's SRAT
/// ranges (anywhere, without a SRAT).
fn on_own_node(fw: &Firmware, a: &PerCpu) -> bool {
    let inside = |addr: u64, len: u64| {
        fw.srat.mem.is_empty()
            || fw.srat.mem.iter().any(|r| {
                fw.numa.node(r.domain) == Some(a.node)
                    && addr >= r.base
                    && addr + len <= r.base + r.len
            })
    };
    inside(a.area, PAGE_SIZE) && inside(a.stack.0, STACK_SIZE)
}
