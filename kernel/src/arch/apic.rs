//! Local APIC access in xAPIC (MMIO) or x2APIC (MSR) mode, and the IPIs that
//! start application processors.

use super::cpu::{pause, rdmsr, wrmsr};
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
/// INIT, level-triggered, asserted (Intel SDM vol. 3 §10.6.1).
pub const ICR_INIT_ASSERT: u32 = 0x500 | (1 << 14) | (1 << 15);
/// INIT level de-assert, which old CPUs need after the assert.
pub const ICR_INIT_DEASSERT: u32 = 0x500 | (1 << 15);
/// Start-up IPI; the low byte is the vector (page number of the trampoline).
pub const ICR_STARTUP: u32 = 0x600;
/// Destination shorthand "all excluding self".
pub const ICR_ALL_BUT_SELF: u32 = 0b11 << 18;

static X2APIC: AtomicBool = AtomicBool::new(false);
static MMIO_BASE: AtomicU64 = AtomicU64::new(0xfee0_0000);

/// Whether the kernel runs the local APICs in x2APIC mode.
pub fn x2apic_mode() -> bool {
    X2APIC.load(Ordering::Relaxed)
}

fn read(reg: u32) -> u32 {
    if x2apic_mode() {
        rdmsr(0x800 + (reg >> 4)) as u32
    } else {
        let addr = MMIO_BASE.load(Ordering::Relaxed) + reg as u64;
        // SAFETY: the LAPIC MMIO page is identity-mapped by the boot page tables
        // and `reg` is one of the architectural register offsets above.
        unsafe { core::ptr::read_volatile(addr as *const u32) }
    }
}

fn write(reg: u32, value: u32) {
    if x2apic_mode() {
        wrmsr(0x800 + (reg >> 4), value as u64);
    } else {
        let addr = MMIO_BASE.load(Ordering::Relaxed) + reg as u64;
        // SAFETY: as in `read`.
        unsafe { core::ptr::write_volatile(addr as *mut u32, value) }
    }
}

/// Enables this CPU's local APIC, in x2APIC mode if `x2apic`, and software-enables
/// it with spurious vector 0xff. Called by the BSP first (which sets the mode for
/// all) and then by each AP, whose APIC comes out of INIT in xAPIC mode.
pub fn enable(x2apic: bool, mmio_base: Option<u64>) {
    if let Some(base) = mmio_base {
        MMIO_BASE.store(base, Ordering::Relaxed);
    }
    let mut base = rdmsr(IA32_APIC_BASE) | APIC_BASE_ENABLE;
    if x2apic {
        base |= APIC_BASE_X2APIC;
    }
    wrmsr(IA32_APIC_BASE, base);
    X2APIC.store(x2apic, Ordering::Relaxed);
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

/// Signals end of interrupt.
pub fn eoi() {
    write(REG_EOI, 0);
}

/// Sends an IPI with ICR low word `icr` to `dest` (ignored with a shorthand).
pub fn send_ipi(dest: u32, icr: u32) {
    if x2apic_mode() {
        // x2APIC: one 64-bit MSR write, destination in the high half; no
        // delivery-status bit to poll.
        wrmsr(0x830, ((dest as u64) << 32) | icr as u64);
    } else {
        wait_icr_idle();
        write(REG_ICR_HIGH, dest << 24);
        write(REG_ICR_LOW, icr);
        wait_icr_idle();
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
