//! Small CPU primitives: TSC, MSRs, halting, CPUID-derived facts.

use core::arch::asm;
use raw_cpuid::CpuId;

/// Reads the time-stamp counter.
#[inline]
pub fn rdtsc() -> u64 {
    // SAFETY: RDTSC is unprivileged-safe and has no side effects.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// Spin-wait hint; under TCG it also ends the current translation block.
#[inline]
pub fn pause() {
    core::hint::spin_loop();
}

/// Disables interrupts and halts this CPU for good.
pub fn park() -> ! {
    loop {
        // SAFETY: CLI; HLT parks the CPU; nothing is left to run on it.
        unsafe { asm!("cli", "hlt", options(nomem, nostack)) }
    }
}

/// Enables interrupts and halts atomically (STI's one-instruction shadow), so a
/// wake-up interrupt cannot slip in between the two.
#[inline]
pub fn enable_and_hlt() {
    // SAFETY: the BSP (IST stacks) and the APs (AP IDT) have a valid IDT
    // before they call this. No `nostack`: APs take the wake-up interrupt on
    // their own stack, so the compiler must keep nothing in the red zone here;
    // no `nomem`: the handler writes memory (the APIC's EOI).
    unsafe { asm!("sti", "hlt", "cli") }
}

/// Reads a model-specific register.
pub fn rdmsr(msr: u32) -> u64 {
    // SAFETY: callers only name architectural MSRs that exist on every x86_64
    // CPU the kernel runs on (APIC base, x2APIC registers).
    unsafe { x86_64::registers::model_specific::Msr::new(msr).read() }
}

/// Writes a model-specific register.
pub fn wrmsr(msr: u32, value: u64) {
    // SAFETY: as for `rdmsr`; the values written are architecturally defined.
    unsafe { x86_64::registers::model_specific::Msr::new(msr).write(value) }
}

/// Whether this CPU supports x2APIC mode.
pub fn has_x2apic() -> bool {
    CpuId::new()
        .get_feature_info()
        .is_some_and(|f| f.has_x2apic())
}

/// Bit widths that split an APIC id into SMT, core and package fields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ApicShifts {
    /// Bits of the APIC id that number threads within a core.
    pub smt: u32,
    /// Bits (from bit 0) that number threads within a package.
    pub package: u32,
    /// Bits (from bit 0) that number threads within the level above cores
    /// (module/die, or the package when CPUID reports no such level).
    pub core: u32,
    /// Which CPUID leaf the shifts came from.
    pub leaf: u32,
}

/// Reads the SMT / core / die shifts from CPUID leaf 0x1F (preferred) or 0xB,
/// falling back to leaf 1's logical-processor count when neither exists.
///
/// The sub-leaves are read with raw-cpuid's `cpuid!` rather than its
/// `ExtendedTopologyLevel::level_type`, which panics on level types newer than
/// the crate knows (the kernel must not panic on what a CPU reports).
pub fn apic_shifts() -> ApicShifts {
    let max_leaf = raw_cpuid::cpuid!(0).eax;
    let mut out = ApicShifts::default();
    for leaf in [0x1f_u32, 0xb] {
        if max_leaf < leaf {
            continue;
        }
        let mut any = false;
        for sub in 0..8 {
            let r = raw_cpuid::cpuid!(leaf, sub);
            let kind = (r.ecx >> 8) & 0xff;
            if kind == 0 {
                break;
            }
            let shift = r.eax & 0x1f;
            any = true;
            match kind {
                1 => out.smt = shift,
                2 => out.core = shift,
                _ => {}
            }
            out.package = shift;
        }
        if any {
            if out.core == 0 {
                out.core = out.package;
            }
            out.leaf = leaf;
            return out;
        }
    }
    let per_pkg = CpuId::new()
        .get_feature_info()
        .map(|f| f.max_logical_processor_ids().max(1) as u32)
        .unwrap_or(1);
    out.package = 32 - (per_pkg.next_power_of_two() - 1).leading_zeros();
    out.core = out.package;
    out.leaf = 1;
    out
}

/// This CPU's caches from CPUID (`crate::cacheinfo`, Linux 6.12's rules), for
/// the CPU with APIC id `apic_id` that executes it.
pub fn read_caches(apic_id: u32) -> crate::cacheinfo::CpuCaches {
    let shifts = apic_shifts();
    let xtopology_core_shift = (shifts.leaf != 1).then_some(shifts.core);
    crate::cacheinfo::read(&CpuId::new(), apic_id, xtopology_core_shift)
}

/// The delay loop BogoMIPS measures: `loops` iterations of dec/jnz, as Linux's
/// `delay_loop`.
#[inline(never)]
pub fn delay_loop(loops: u64) {
    if loops == 0 {
        return;
    }
    // SAFETY: a register-only countdown loop.
    unsafe {
        asm!("2:", "dec {0}", "jnz 2b", inout(reg) loops => _, options(nomem, nostack));
    }
}

/// Executes `ud2` (fault injection: tests the exception path end to end).
pub fn invalid_opcode() {
    // SAFETY: raises #UD, which the IDT's handler reports before exiting QEMU.
    unsafe { asm!("ud2", options(nomem, nostack)) }
}
