//! Local APIC access in xAPIC (MMIO) or x2APIC (MSR) mode, and the IPIs that
//! start application processors.

use super::cpu::{pause, rdmsr, wrmsr, X2apicSupported};
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

const IA32_APIC_BASE: u32 = 0x1b;
const APIC_BASE_ENABLE: u64 = 1 << 11;
const APIC_BASE_X2APIC: u64 = 1 << 10;

// Register offsets (xAPIC MMIO); x2APIC MSR = 0x800 + offset / 16.
const REG_ID: u32 = 0x20;
const REG_EOI: u32 = 0xb0;
const REG_SVR: u32 = 0xf0;
const REG_ICR_LOW: u32 = 0x300;
const REG_ICR_HIGH: u32 = 0x310;
const REG_LVT_TIMER: u32 = 0x320;
const REG_TIMER_INIT: u32 = 0x380;
const REG_TIMER_DIV: u32 = 0x3e0;

const ICR_DELIVERY_PENDING: u32 = 1 << 12;
/// Physical base of the xAPIC MMIO page in IA32_APIC_BASE (bits 12 to 51).
const APIC_BASE_ADDR_MASK: u64 = 0x000f_ffff_ffff_f000;

/// What an inter-processor interrupt does: the ICR's delivery mode, level,
/// trigger and vector, encoded in one place (Intel SDM vol. 3 §11.6.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ipi {
    /// INIT, level-triggered, asserted: the target resets into
    /// wait-for-SIPI.
    InitAssert,
    /// Start-up: the target runs real-mode code at physical page `page`.
    Startup {
        /// Page number of the code (its address >> 12), below 1 MiB.
        page: u8,
    },
    /// A fixed interrupt on `vector`.
    Fixed(u8),
}

impl Ipi {
    /// The ICR's low word for this IPI, destination shorthand left 0.
    fn icr_low(self) -> u32 {
        const INIT: u32 = 0b101 << 8;
        const STARTUP: u32 = 0b110 << 8;
        const ASSERT: u32 = 1 << 14;
        const LEVEL: u32 = 1 << 15;
        match self {
            Ipi::InitAssert => INIT | ASSERT | LEVEL,
            Ipi::Startup { page } => STARTUP | u32::from(page),
            Ipi::Fixed(vector) => u32::from(vector),
        }
    }
}

/// Whom an IPI goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dest {
    /// The CPU with this APIC id (only the low 8 bits in xAPIC mode).
    Apic(u32),
    /// Every CPU but the sender (destination shorthand 0b11).
    AllButSelf,
}

/// How the local APICs run.
#[derive(Clone, Copy, Debug)]
pub enum Mode {
    /// xAPIC: registers in the MMIO page IA32_APIC_BASE names.
    Xapic,
    /// x2APIC: registers as MSRs; only with the CPUID proof that it exists.
    X2apic(X2apicSupported),
}

static X2APIC: AtomicBool = AtomicBool::new(false);
static MMIO_BASE: AtomicU64 = AtomicU64::new(0xfee0_0000);

/// Whether the kernel runs the local APICs in x2APIC mode.
pub fn x2apic_mode() -> bool {
    X2APIC.load(Ordering::Relaxed)
}

fn read(reg: u32) -> u32 {
    if x2apic_mode() {
        // SAFETY: in x2APIC mode (enabled by `enable` with the CPUID proof)
        // the APIC registers are the MSRs 0x800 + offset / 16, and `reg` is
        // one of the readable register offsets above.
        unsafe { rdmsr(0x800 + (reg >> 4)) as u32 }
    } else {
        let addr = MMIO_BASE.load(Ordering::Relaxed) + reg as u64;
        // SAFETY: MMIO_BASE is this CPU's IA32_APIC_BASE page (set by
        // `enable`), inside the boot identity map, and `reg` is one of the
        // architectural register offsets above.
        unsafe { core::ptr::read_volatile(addr as *const u32) }
    }
}

fn write(reg: u32, value: u32) {
    if x2apic_mode() {
        // SAFETY: as in `read`; the registers written here take any value.
        unsafe { wrmsr(0x800 + (reg >> 4), value as u64) };
    } else {
        let addr = MMIO_BASE.load(Ordering::Relaxed) + reg as u64;
        // SAFETY: as in `read`.
        unsafe { core::ptr::write_volatile(addr as *mut u32, value) }
    }
}

/// Enables this CPU's local APIC in `mode` and software-enables it with
/// spurious vector 0xff. Called by the BSP first (which sets the mode for
/// all) and then by each AP, whose APIC comes out of INIT in xAPIC mode. The
/// xAPIC MMIO page is the one the CPU's own IA32_APIC_BASE names.
pub fn enable(mode: Mode) {
    // SAFETY: IA32_APIC_BASE exists on every x86_64 CPU. Setting its global
    // enable bit, and the x2APIC bit only with the CPUID proof that the mode
    // exists, is the architectural way to enable the APIC.
    let msr = unsafe { rdmsr(IA32_APIC_BASE) };
    MMIO_BASE.store(msr & APIC_BASE_ADDR_MASK, Ordering::Relaxed);
    let mut base = msr | APIC_BASE_ENABLE;
    if let Mode::X2apic(_) = mode {
        base |= APIC_BASE_X2APIC;
    }
    // SAFETY: as above.
    unsafe { wrmsr(IA32_APIC_BASE, base) };
    X2APIC.store(matches!(mode, Mode::X2apic(_)), Ordering::Relaxed);
    write(REG_SVR, 0x1ff);
}

/// This CPU's APIC id as its local APIC reports it.
pub fn id() -> u32 {
    let raw = read(REG_ID);
    if x2apic_mode() {
        raw
    } else {
        raw >> 24
    }
}

/// This CPU's IA32_APIC_BASE as the hardware holds it: the BSP flag (bit
/// 8), the x2APIC bit (10), the global enable (11) and the MMIO page. What
/// a CPU reads here is its own word on the mode it runs in, independent of
/// the kernel's [`x2apic_mode`] flag.
pub fn base_msr() -> u64 {
    // SAFETY: IA32_APIC_BASE exists on every x86_64 CPU and reading it has
    // no side effect.
    unsafe { rdmsr(IA32_APIC_BASE) }
}

/// Whether this CPU's local APIC is in x2APIC mode now, whoever put it
/// there (before [`enable`]: the firmware).
pub fn x2apic_enabled() -> bool {
    base_msr() & APIC_BASE_X2APIC != 0
}

/// Signals end of interrupt.
pub fn eoi() {
    write(REG_EOI, 0);
}

/// Sends `ipi` to `dest`.
pub fn send_ipi(dest: Dest, ipi: Ipi) {
    let (dest, shorthand) = match dest {
        Dest::Apic(id) => (id, 0),
        Dest::AllButSelf => (0, 0b11 << 18),
    };
    let icr = ipi.icr_low() | shorthand;
    if x2apic_mode() {
        // x2APIC: one 64-bit MSR write, destination in the high half; no
        // delivery-status bit to poll.
        // SAFETY: MSR 0x830 is the x2APIC ICR, present in x2APIC mode; the
        // value is an ICR encoding built above.
        unsafe { wrmsr(0x830, ((dest as u64) << 32) | icr as u64) };
    } else {
        // Waiting before the write is what keeps a pending IPI from being
        // overwritten; a second poll after it would only cost the next
        // sender (under TCG, one emulated MMIO read per IPI on the BSP's
        // serial kick loop).
        wait_icr_idle();
        write(REG_ICR_HIGH, dest << 24);
        write(REG_ICR_LOW, icr);
    }
}

fn wait_icr_idle() {
    for _ in 0..1_000_000 {
        if read(REG_ICR_LOW) & ICR_DELIVERY_PENDING == 0 {
            return;
        }
        pause();
    }
}

/// Arms the APIC timer one-shot on `vector` after `count` ticks (divide by 1).
pub fn timer_oneshot(vector: u8, count: u32) {
    write(REG_TIMER_DIV, 0b1011);
    write(REG_LVT_TIMER, vector as u32);
    write(REG_TIMER_INIT, count);
}

const REG_TIMER_CUR: u32 = 0x390;

/// Reads the APIC timer's current count.
pub fn timer_current() -> u32 {
    read(REG_TIMER_CUR)
}

/// Stops the APIC timer.
pub fn timer_stop() {
    write(REG_TIMER_INIT, 0);
    write(REG_LVT_TIMER, 1 << 16);
}
