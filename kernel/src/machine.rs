//! The boot sequence: discover, set up memory and per-CPU areas, bring up the
//! APs, report.

use crate::arch::{acpi::Tables, apic, cpu, heap, phys, timer};
use crate::cmdline::{self, Bringup, Calibrate, Options};
use crate::firmware::{self, Firmware};
use crate::kprintln;
use crate::smp::{self, ApConfig, Delays, KernelPlatform, PerCpu};
use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::{self, Write};
use core::sync::atomic::Ordering;
use cpumask::CpuMask;
use nodemem::{AllocError, NodeMem, PAGE_SIZE};

/// Why the kernel gave up before bringing anything up.
#[derive(Debug)]
pub enum Fatal {
    /// The PVH start info was missing or had the wrong magic.
    NoStartInfo,
    /// ACPI tables could not be read.
    Acpi(crate::arch::acpi::AcpiFailure),
    /// The MADT lists no enabled CPU.
    NoCpus,
    /// No per-CPU memory for the boot CPU itself.
    BspMemory(AllocError),
}

impl fmt::Display for Fatal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fatal::NoStartInfo => write!(f, "no valid PVH start info"),
            Fatal::Acpi(e) => write!(f, "cannot read ACPI tables: {:?}", e.0),
            Fatal::NoCpus => write!(f, "MADT lists no enabled processor"),
            Fatal::BspMemory(e) => write!(f, "no memory for the boot CPU's per-CPU area: {e}"),
        }
    }
}

/// Cache leaves (over all CPUs) beyond which L1 caches stay out of the
/// final topology model: each instance is 2 KiB, and 4096 leaves is 8 MiB.
const CACHE_INSTANCE_BUDGET: usize = 4096;

/// Bytes of stack each AP gets.
const STACK_SIZE: u64 = 16 * 1024;

/// One logical CPU as the kernel numbers it.
#[derive(Clone, Copy, Debug)]
pub struct CpuInfo {
    /// Logical number (0 = boot CPU, then MADT order; disabled entries last).
    pub cpu: u32,
    /// APIC id.
    pub apic_id: u32,
    /// NUMA node (0 without SRAT).
    pub node: u32,
    /// Present (MADT enabled) as opposed to possible only.
    pub present: bool,
}

/// Proximity domains → node numbers, in increasing PXM order (what Linux
/// yields for QEMU's tables, whose PXMs are 0..K-1).
struct Numa {
    pxms: Vec<u32>,
}

impl Numa {
    fn new(fw: &Firmware) -> Self {
        let mut pxms: Vec<u32> = fw
            .srat_cpus
            .iter()
            .map(|c| c.domain)
            .chain(fw.srat_mem.iter().map(|m| m.domain))
            .collect();
        pxms.sort_unstable();
        pxms.dedup();
        Numa { pxms }
    }

    fn node(&self, pxm: u32) -> u32 {
        self.pxms.iter().position(|&p| p == pxm).unwrap_or(0) as u32
    }

    fn count(&self) -> usize {
        self.pxms.len().max(1)
    }
}

/// Runs the whole boot; `Ok` once the result line is printed.
pub fn run(start_info: u32) -> Result<(), Fatal> {
    let boot = phys::boot_info(start_info).ok_or(Fatal::NoStartInfo)?;
    kprintln!("Linux-like manycore kernel, PVH boot");
    kprintln!("Command line: {}", boot.cmdline);
    let opts = cmdline::parse(boot.cmdline, |w| kprintln!("cmdline: {w}"));
    match opts.fault {
        Some(cmdline::Fault::Panic) => panic!("fault injection (fault=panic)"),
        Some(cmdline::Fault::InvalidOpcode) => cpu::invalid_opcode(),
        None => {}
    }

    let tables = Tables::open(boot.rsdp).map_err(Fatal::Acpi)?;
    let fw = firmware::discover(&tables);

    let (clock, khz) = timer::calibrate(fw.hpet);
    kprintln!(
        "tsc: Detected {}.{:03} MHz processor (calibrated against {:?})",
        khz / 1000,
        khz % 1000,
        clock
    );

    let x2apic = match opts.x2apic {
        Some(true) if !cpu::has_x2apic() => {
            kprintln!("x2apic: requested but not supported by this CPU, staying in xAPIC mode");
            false
        }
        Some(on) => on,
        None => cpu::has_x2apic(),
    };
    apic::enable(x2apic, Some(fw.lapic_base));
    kprintln!(
        "x2apic: {}",
        if x2apic {
            "enabled"
        } else {
            "disabled (xAPIC mode)"
        }
    );
    let bsp_apic = apic::id();
    let apic_mhz = timer::calibrate_apic_timer();
    kprintln!("APIC: timer runs at {apic_mhz} MHz; waits halt between checks");

    let numa = Numa::new(&fw);
    for m in &fw.srat_mem {
        kprintln!(
            "ACPI: SRAT: Node {} PXM {} [mem {:#010x}-{:#010x}]{}",
            numa.node(m.domain),
            m.domain,
            m.base,
            m.base + m.len.saturating_sub(1),
            if m.hotplug { " hotplug" } else { "" }
        );
    }
    let mut mem = build_memory(&boot.memmap, &fw, &numa);
    if let Some((n, d)) = &fw.slit {
        let ids: Vec<u32> = (0..*n as u32).map(|p| numa.node(p)).collect();
        mem.set_distances(&ids, d);
    }
    for node in mem.nodes().collect::<Vec<_>>() {
        kprintln!(
            "NUMA: node {node}: {} MiB, {} MiB free",
            mem.total_bytes(node) >> 20,
            mem.free_bytes(node) >> 20
        );
    }

    if let Some(kib) = opts.fault_mem_kib {
        let nodes: Vec<u32> = mem
            .nodes()
            .filter(|&n| opts.fault_mem_node.is_none_or(|f| f == n))
            .collect();
        for node in nodes {
            // Held for good: this is fault injection, the memory is gone. Free
            // memory is in several ranges, so take it in shrinking pieces.
            let mut want = mem.free_bytes(node).saturating_sub(kib * 1024) & !(PAGE_SIZE - 1);
            while want >= PAGE_SIZE {
                if mem.alloc_exact(node, want, PAGE_SIZE).is_err() {
                    want = (want / 2) & !(PAGE_SIZE - 1);
                    continue;
                }
                want = mem.free_bytes(node).saturating_sub(kib * 1024) & !(PAGE_SIZE - 1);
            }
        }
        kprintln!("NUMA: fault injection: {kib} KiB left free per node");
    }
    let cpus = number_cpus(&fw, &numa, bsp_apic, &opts);
    let present: Vec<&CpuInfo> = cpus.iter().filter(|c| c.present).collect();
    if present.is_empty() {
        return Err(Fatal::NoCpus);
    }
    kprintln!(
        "smpboot: Allowing {} CPUs, {} hotplug CPUs",
        cpus.len(),
        cpus.len() - present.len()
    );

    // Per-CPU areas and stacks, each on its CPU's node. Failures here are
    // reported and the CPU skipped (its kick fails in the hotplug engine).
    let mut by_cpu: Vec<Option<&'static PerCpu>> = alloc::vec![None; cpus.len()];
    for c in &present {
        match alloc_percpu(&mut mem, c) {
            Ok(area) => {
                if smp::register(area).is_err() {
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
    let areas: Vec<&'static PerCpu> = by_cpu.iter().flatten().copied().collect();
    if opts.percpu_dump {
        for a in &areas {
            kprintln!(
                "percpu: cpu {} apic {} node {} area {:#x} stack {:#x}-{:#x}{}",
                a.cpu,
                a.apic_id,
                a.node,
                a.area,
                a.stack.0,
                a.stack.1,
                if a.mem_node != a.node {
                    alloc::format!(" fallback node {}", a.mem_node)
                } else {
                    String::new()
                }
            );
        }
    }
    let on_node = areas
        .iter()
        .filter(|a| {
            in_node(&fw, &numa, a.node, a.area, PAGE_SIZE)
                && in_node(&fw, &numa, a.node, a.stack.0, STACK_SIZE)
        })
        .count();
    crate::arch::boot::install_trampoline();

    // The boot CPU's own delay loop.
    let bsp_lpj = match opts.lpj {
        Some(lpj) => {
            kprintln!(
                "Calibrating delay loop (skipped) preset value.. {} BogoMIPS (lpj={lpj})",
                fmt_bogo(smp::bogomips_x100(lpj))
            );
            lpj
        }
        None => {
            let lpj = smp::calibrate_delay();
            kprintln!(
                "Calibrating delay loop... {} BogoMIPS (lpj={lpj})",
                fmt_bogo(smp::bogomips_x100(lpj))
            );
            lpj
        }
    };
    if let Some(&bsp) = areas.first() {
        bsp.lpj.store(bsp_lpj, Ordering::Relaxed);
        bsp.mark_online();
    }
    smp::configure(ApConfig {
        x2apic,
        calibrate: opts.calibrate,
        default_lpj: opts.lpj.unwrap_or(bsp_lpj),
        bsp_apic_id: bsp_apic,
    });

    // The shared topology model, with only the boot CPU online, drives the
    // hotplug engine's incremental masks.
    let node_facts: Vec<crate::report::NodeFacts> = mem
        .nodes()
        .map(|id| crate::report::NodeFacts {
            id,
            bytes: mem.total_bytes(id),
        })
        .collect();
    let shifts = cpu::apic_shifts();
    kprintln!(
        "topology: CPUID leaf {:#x}: SMT shift {}, core shift {}, package shift {}",
        shifts.leaf,
        shifts.smt,
        shifts.core,
        shifts.package
    );
    let distances = numa_distances(&fw, &numa);
    // The boot CPU's caches from its own CPUID; until the APs read theirs,
    // each is predicted from it (same CPUID, its own APIC id) so that the
    // hotplug engine's LLC and L2 masks have caches to go by.
    let t_read = cpu::rdtsc();
    let bsp_caches = cpu::read_caches(bsp_apic);
    let read_ns = timer::tsc_to_ns(cpu::rdtsc() - t_read);
    if let Some(&bsp) = areas.first() {
        bsp.caches.call_once(|| bsp_caches);
    }
    kprintln!(
        "cacheinfo: {:?} rules, {}: {} cache leaves (read in {} ns)",
        bsp_caches.vendor,
        bsp_caches.source.describe(),
        bsp_caches.leaves().count(),
        read_ns
    );
    let early_caches = whole_core_caches(
        // Level 2 and up: the engine's masks read the L2 and the outermost
        // cache only, and an L1 per CPU would cost 2 KiB each.
        crate::cacheinfo::shared_instances(
            present.iter().map(|c| crate::cacheinfo::Placed {
                cpu: c.cpu,
                node: c.node,
                caches: bsp_caches.for_apic_id(c.apic_id),
            }),
            2,
        ),
        &present,
        shifts.smt,
    );
    let boot_only = CpuMask::single(0);
    let topo = crate::report::build(
        &cpus,
        &boot_only,
        shifts,
        &node_facts,
        &distances,
        early_caches,
    );

    let delays = Delays {
        init_us: opts.init_delay_us,
        sipi_us: opts.sipi_delay_us,
        timeout_ms: opts.callin_timeout_ms,
    };
    let platform = KernelPlatform::new(by_cpu, opts.bringup, delays, opts.calibrate, x2apic);
    kprintln!("smp: Bringing up secondary CPUs ...");
    let t0 = cpu::rdtsc();
    let outcome = crate::bringup::run(platform, topo.as_ref().ok(), opts.bringup, cpus.len());
    // The model after bring-up replaces it; its caches alone take megabytes
    // with thousands of CPUs.
    drop(topo);
    let bringup_ns = timer::tsc_to_ns(cpu::rdtsc() - t0);
    let mut failed: Vec<u32> = Vec::new();
    for (cpu, why) in &outcome.failed {
        kprintln!("smpboot: CPU {cpu} failed to come online ({why}), skipped");
        failed.push(*cpu as u32);
    }
    if let Some(note) = &outcome.note {
        kprintln!("hotplug: {note}");
    }

    let online = outcome.online;
    let up: Vec<&&PerCpu> = areas
        .iter()
        .filter(|a| online.contains(a.cpu as usize))
        .collect();
    let mut up_nodes: Vec<u32> = up.iter().map(|a| a.node).collect();
    up_nodes.sort_unstable();
    up_nodes.dedup();
    let bogo: u64 = up
        .iter()
        .map(|a| smp::bogomips_x100(a.lpj.load(Ordering::Relaxed)))
        .sum();
    let plural = |n: usize, w: &str| {
        if n == 1 {
            alloc::format!("{n} {w}")
        } else {
            alloc::format!("{n} {w}s")
        }
    };
    kprintln!(
        "smp: Brought up {}, {}",
        plural(up_nodes.len(), "node"),
        plural(up.len(), "CPU")
    );
    kprintln!(
        "smpboot: Total of {} processors activated ({} BogoMIPS)",
        up.len(),
        fmt_bogo(bogo)
    );
    if !failed.is_empty() {
        failed.sort_unstable();
        kprintln!(
            "smpboot: {} CPUs failed to come online: {}",
            failed.len(),
            cpulist(&failed)
        );
    }
    if let Some(mask_ns) = outcome.mask_update_ns {
        kprintln!(
            "hotplug: topology masks updated incrementally for {} CPUs in {} us",
            up.len().saturating_sub(1),
            mask_ns / 1000
        );
    }
    for line in &outcome.bsp_masks {
        kprintln!("{line}");
    }

    // Every online CPU's caches as it read them at call-in; Linux's shared
    // maps, too, only link online CPUs. A cache instance costs 2 KiB of the
    // 64 MiB heap (its CPU mask): past CACHE_INSTANCE_BUDGET the private L1s,
    // which no scheduler level reads, are left out (4096 CPUs would have
    // 8192 of them, 16 MiB, copied twice while the model is built).
    let own = || {
        areas
            .iter()
            .filter(|a| online.contains(a.cpu as usize))
            .filter_map(|a| {
                a.caches.get().map(|&c| crate::cacheinfo::Placed {
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
    let caches = crate::cacheinfo::shared_instances(own(), min_level);
    match crate::report::build(&cpus, &online, shifts, &node_facts, &distances, caches) {
        Ok(t) => {
            crate::report::print_topology(&t);
            if opts.topo_dump {
                crate::report::print_cpu_facts(&t);
                crate::report::print_cache_facts(&t);
            }
            if opts.sched_domains {
                crate::report::print_domains(&t);
            }
        }
        Err(e) => kprintln!("topology: cannot build the model: {e}"),
    }

    let mut json = String::new();
    let _ = write!(
        json,
        "{{\"bringup\":\"{}\",\"calibrate\":\"{}\",\"x2apic\":{},\"cpus_possible\":{},\"cpus_present\":{},\"cpus_up\":{},\"nodes\":{},\"bringup_ns\":{},\"failed_cpus\":[{}],\"percpu_on_node\":{},\"bogomips\":{},\"tsc_khz\":{},\"heap_used\":{}}}",
        match opts.bringup { Bringup::Serial => "serial", Bringup::Parallel => "parallel", Bringup::Broadcast => "broadcast" },
        match opts.calibrate { Calibrate::Serial => "serial", Calibrate::Parallel => "parallel", Calibrate::Skip => "skip" },
        x2apic,
        cpus.len(),
        present.len(),
        up.len(),
        up_nodes.len(),
        bringup_ns,
        failed.iter().map(|c| alloc::format!("{c}")).collect::<Vec<_>>().join(","),
        on_node,
        fmt_bogo(bogo),
        khz,
        heap::used(),
    );
    crate::arch::console::print(format_args!("MANYCORE-RESULT {json}\n"));
    Ok(())
}

/// The caches the hotplug engine can be given: those holding every present
/// thread of each core they touch. Its masks follow a device tree with one
/// node (and one cache chain) per SMT core, so a cache split between SMT
/// siblings makes it refuse the whole machine — and AMD's legacy leaves give
/// exactly that, a private L1 and L2 per thread. Leaving such caches out
/// makes its L2 mask fall back to the SMT siblings, which is also what
/// Linux's `cpu_l2c_shared_mask` is on such CPUs (no L2 id); the model built
/// after bring-up keeps every cache.
fn whole_core_caches(
    caches: Vec<topology::Cache>,
    present: &[&CpuInfo],
    smt_bits: u32,
) -> Vec<topology::Cache> {
    // Each present CPU's core, and each core's CPUs, built once: checking a
    // cache then costs its own CPUs times their siblings, not a pass over
    // every present CPU per cache (quadratic at thousands of CPUs under TCG).
    let core_of = |apic: u32| apic.checked_shr(smt_bits).unwrap_or(0);
    let mut core_of_cpu: BTreeMap<u32, u32> = BTreeMap::new();
    let mut cpus_of_core: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for c in present {
        let core = core_of(c.apic_id);
        core_of_cpu.insert(c.cpu, core);
        cpus_of_core.entry(core).or_default().push(c.cpu);
    }
    caches
        .into_iter()
        .filter(|cache| {
            cache.cpus.iter().all(|cpu| {
                let Some(core) = core_of_cpu.get(&(cpu as u32)) else {
                    return true; // not present: no core to split
                };
                cpus_of_core[core]
                    .iter()
                    .all(|&sibling| cache.cpus.contains(sibling as usize))
            })
        })
        .collect()
}

fn fmt_bogo(x100: u64) -> String {
    alloc::format!("{}.{:02}", x100 / 100, x100 % 100)
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
fn numa_distances(fw: &Firmware, numa: &Numa) -> (usize, Vec<u8>) {
    let n = numa.count();
    let mut d = alloc::vec![20u8; n * n];
    for i in 0..n {
        d[i * n + i] = 10;
    }
    if let Some((k, m)) = &fw.slit {
        for a in 0..*k {
            for b in 0..*k {
                let (na, nb) = (numa.node(a as u32) as usize, numa.node(b as u32) as usize);
                if na < n && nb < n {
                    d[na * n + nb] = m[a * k + b];
                }
            }
        }
    }
    (n, d)
}

/// Usable RAM from the PVH memory map, split by SRAT node ranges (everything on
/// node 0 without a SRAT), minus the first MiB and the kernel image and heap.
fn build_memory(memmap: &[(u64, u64, u32)], fw: &Firmware, numa: &Numa) -> NodeMem {
    let limit = (crate::arch::boot::IDENTITY_GIB as u64) << 30;
    let mut mem = NodeMem::new();
    for &(base, len, ty) in memmap {
        if ty != 1 {
            continue;
        }
        let end = base.saturating_add(len).min(limit);
        if fw.srat_mem.is_empty() {
            if base < end {
                let _ = mem.add_range(0, base, end - base);
            }
            continue;
        }
        for m in fw.srat_mem.iter().filter(|m| !m.hotplug) {
            let s = base.max(m.base);
            let e = end.min(m.base.saturating_add(m.len));
            if s < e {
                let _ = mem.add_range(numa.node(m.domain), s, e - s);
            }
        }
    }
    mem.reserve(0, 1 << 20);
    let (ks, ke) = heap::kernel_range();
    mem.reserve(ks, ke - ks);
    mem
}

/// Whether `[addr, addr + len)` lies inside one of `node`'s SRAT ranges (or
/// anywhere, without a SRAT).
fn in_node(fw: &Firmware, numa: &Numa, node: u32, addr: u64, len: u64) -> bool {
    fw.srat_mem.is_empty()
        || fw
            .srat_mem
            .iter()
            .any(|m| numa.node(m.domain) == node && addr >= m.base && addr + len <= m.base + m.len)
}

fn alloc_percpu(mem: &mut NodeMem, c: &CpuInfo) -> Result<&'static PerCpu, AllocError> {
    // One allocation for the stack and, above it, the per-CPU area: both land
    // on the same node, the CPU's own unless it had to fall back.
    let frame = mem.alloc(c.node, STACK_SIZE + PAGE_SIZE, PAGE_SIZE)?;
    let area = frame.addr + STACK_SIZE;
    let value = PerCpu::new(
        c.cpu,
        c.apic_id,
        c.node,
        frame.node,
        area,
        (frame.addr, frame.addr + STACK_SIZE),
    );
    phys::place(area, PAGE_SIZE, value).map_err(|_| AllocError::BadAlign(PAGE_SIZE))
}

/// Logical CPU numbers: the boot CPU is 0, then enabled MADT entries in table
/// order, then the ghost (fault injection), then disabled entries (possible,
/// not present), as Linux numbers them.
fn number_cpus(fw: &Firmware, numa: &Numa, bsp_apic: u32, opts: &Options) -> Vec<CpuInfo> {
    let node_of = |apic: u32| {
        fw.srat_cpus
            .iter()
            .find(|s| s.apic_id == apic)
            .map(|s| numa.node(s.domain))
            .unwrap_or(0)
    };
    let mut out: Vec<CpuInfo> = Vec::with_capacity(fw.cpus.len() + 1);
    let push = |apic_id: u32, present: bool, out: &mut Vec<CpuInfo>| {
        if out.iter().any(|c| c.apic_id == apic_id) {
            return;
        }
        let cpu = out.len() as u32;
        out.push(CpuInfo {
            cpu,
            apic_id,
            node: node_of(apic_id),
            present,
        });
    };
    push(bsp_apic, true, &mut out);
    for c in fw.cpus.iter().filter(|c| c.enabled) {
        push(c.apic_id, true, &mut out);
    }
    if let Some(g) = opts.ghost_apic {
        push(g, true, &mut out);
    }
    for c in fw.cpus.iter().filter(|c| !c.enabled) {
        push(c.apic_id, false, &mut out);
    }
    out
}
