//! Small CPU primitives: TSC, MSRs, halting, CPUID-derived facts.

use core::arch::asm;
use raw_cpuid::{CpuId, CpuIdReaderNative};

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
///
/// # Safety
/// `msr` must exist on this CPU (reading an absent MSR raises #GP), and
/// reading it must have no side effect the caller has not accounted for.
pub unsafe fn rdmsr(msr: u32) -> u64 {
    // SAFETY: the caller guarantees the MSR exists and may be read.
    unsafe { x86_64::registers::model_specific::Msr::new(msr).read() }
}

/// Writes a model-specific register.
///
/// # Safety
/// `msr` must exist on this CPU and `value` must be valid for it; the write
/// must not break what the rest of the kernel relies on (paging, the APIC
/// mode it was told about).
pub unsafe fn wrmsr(msr: u32, value: u64) {
    // SAFETY: the caller guarantees the MSR and the value.
    unsafe { x86_64::registers::model_specific::Msr::new(msr).write(value) }
}

/// Proof that this machine's CPUs support x2APIC mode (CPUID.1:ECX[21]):
/// only [`x2apic_supported`] makes one, and enabling x2APIC mode takes it.
#[derive(Clone, Copy, Debug)]
pub struct X2apicSupported(());

/// `Some` proof when this CPU supports x2APIC mode.
pub fn x2apic_supported() -> Option<X2apicSupported> {
    CpuId::new()
        .get_feature_info()
        .is_some_and(|f| f.has_x2apic())
        .then_some(X2apicSupported(()))
}

/// This CPU's topology from its own CPUID, by Linux's rules.
pub fn topology() -> x86desc::shifts::CpuTopology {
    x86desc::shifts::read(CpuIdReaderNative)
}

/// This CPU's APIC-id field widths from its own CPUID.
pub fn apic_shifts() -> x86desc::shifts::ApicShifts {
    topology().shifts
}

/// This CPU's own CPUID, for decoders that take a reader.
pub fn cpuid() -> CpuId<CpuIdReaderNative> {
    CpuId::new()
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
