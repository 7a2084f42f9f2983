//! Time: the TSC, calibrated once against the HPET (or the PIT when there is no
//! HPET), and delays built on it.

use super::cpu::{pause, rdtsc};
use core::sync::atomic::{AtomicU64, Ordering};
use x86_64::instructions::port::Port;

static TSC_KHZ: AtomicU64 = AtomicU64::new(0);
static BOOT_TSC: AtomicU64 = AtomicU64::new(0);

/// Records the TSC at boot: timestamps count from here.
pub fn mark_boot() {
    BOOT_TSC.store(rdtsc(), Ordering::Relaxed);
}

/// TSC frequency in kHz (0 before calibration).
pub fn tsc_khz() -> u64 {
    TSC_KHZ.load(Ordering::Relaxed)
}

/// Nanoseconds between two TSC readings.
pub fn tsc_to_ns(delta: u64) -> u64 {
    let khz = tsc_khz();
    if khz == 0 {
        return 0;
    }
    (delta as u128 * 1_000_000 / khz as u128) as u64
}

/// Nanoseconds since boot (0 before calibration, as Linux's early printk).
pub fn now_ns() -> u64 {
    tsc_to_ns(rdtsc().wrapping_sub(BOOT_TSC.load(Ordering::Relaxed)))
}

/// TSC value `us` microseconds from now.
pub fn deadline_us(us: u64) -> u64 {
    rdtsc().wrapping_add(us.saturating_mul(tsc_khz()) / 1000)
}

/// Busy-waits (with `pause`) for `us` microseconds.
pub fn udelay(us: u64) {
    let end = deadline_us(us);
    while rdtsc() < end {
        pause();
    }
}

/// Which reference clock calibrated the TSC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefClock {
    /// The HPET main counter.
    Hpet,
    /// PIT channel 2.
    Pit,
}

/// Calibrates the TSC against the HPET at `hpet_base` if given, else the PIT.
/// Returns the reference used and the TSC frequency in kHz.
pub fn calibrate(hpet_base: Option<u64>) -> (RefClock, u64) {
    let (clock, khz) = match hpet_base.and_then(calibrate_hpet) {
        Some(khz) => (RefClock::Hpet, khz),
        None => (RefClock::Pit, calibrate_pit()),
    };
    TSC_KHZ.store(khz.max(1), Ordering::Relaxed);
    (clock, khz)
}

/// Window of reference time the TSC is measured over.
const CALIBRATION_MS: u64 = 20;

fn calibrate_hpet(base: u64) -> Option<u64> {
    let reg = |off: u64| (base + off) as *mut u64;
    // SAFETY: `base` is the HPET block address from the ACPI HPET table, inside
    // the identity-mapped MMIO hole; the offsets are the HPET spec's registers.
    unsafe {
        let caps = core::ptr::read_volatile(reg(0));
        let period_fs = caps >> 32;
        if period_fs == 0 || period_fs > 100_000_000 {
            return None;
        }
        let cfg = core::ptr::read_volatile(reg(0x10));
        core::ptr::write_volatile(reg(0x10), cfg | 1);
        let ticks = CALIBRATION_MS * 1_000_000_000_000 / period_fs;
        let h0 = core::ptr::read_volatile(reg(0xf0));
        let t0 = rdtsc();
        let mut h1 = h0;
        while h1.wrapping_sub(h0) < ticks {
            pause();
            h1 = core::ptr::read_volatile(reg(0xf0));
        }
        let t1 = rdtsc();
        let elapsed_fs = h1.wrapping_sub(h0) as u128 * period_fs as u128;
        Some(((t1 - t0) as u128 * 1_000_000_000_000 / elapsed_fs) as u64)
    }
}

fn calibrate_pit() -> u64 {
    const PIT_HZ: u64 = 1_193_182;
    let count = (PIT_HZ * CALIBRATION_MS / 1000) as u16;
    // SAFETY: ports 0x61 (speaker/gate), 0x43 (PIT mode) and 0x42 (channel 2)
    // are the PC's fixed PIT interface; channel 2 is not used by anything else.
    unsafe {
        let mut gate = Port::<u8>::new(0x61);
        let g = gate.read();
        gate.write((g & !0x02) | 0x01); // gate on, speaker off
        Port::<u8>::new(0x43).write(0b1011_0000); // ch2, lo/hi, mode 0, binary
        let mut ch2 = Port::<u8>::new(0x42);
        ch2.write(count as u8);
        ch2.write((count >> 8) as u8);
        let t0 = rdtsc();
        while gate.read() & 0x20 == 0 {
            pause();
        }
        let t1 = rdtsc();
        (t1 - t0) / CALIBRATION_MS
    }
}

/// APIC timer ticks per microsecond (divide-by-1), 0 if not calibrated: then
/// waits spin with `pause` instead of halting.
static APIC_TICKS_PER_US: AtomicU64 = AtomicU64::new(0);

/// How often a halted waiter wakes up to re-check its condition when nothing
/// else wakes it: APs send the BSP a wake-up IPI at each step it waits for, so
/// this is only a safety net (and no busy host thread under TCG).
const POLL_US: u64 = 1000;

/// Measures the APIC timer against the (already calibrated) TSC over 2 ms.
pub fn calibrate_apic_timer() -> u64 {
    use super::apic;
    // Interrupts are off on the BSP here, so the one-shot cannot fire into us.
    apic::timer_oneshot(super::idt::WAKE_VECTOR, u32::MAX);
    let start = apic::timer_current();
    udelay(2000);
    let end = apic::timer_current();
    apic::timer_stop();
    let per_us = (start.saturating_sub(end) as u64) / 2000;
    APIC_TICKS_PER_US.store(per_us, Ordering::Relaxed);
    per_us
}

/// Times this kernel's waits halted (all CPUs; only the boot CPU waits).
static HALTS: AtomicU64 = AtomicU64::new(0);

/// How often [`wait_until`] has halted so far.
pub fn halts() -> u64 {
    HALTS.load(Ordering::Relaxed)
}

/// Waits until `done()` or the TSC passes `deadline`; returns whether `done()`.
///
/// With a calibrated APIC timer the CPU halts between checks, woken by an AP's
/// IPI or after at most [`POLL_US`]: under TCG every vCPU is a host thread, and
/// a spinning (or fast-polling) waiter takes a host core from the APs it is
/// waiting for.
pub fn wait_until(deadline: u64, mut done: impl FnMut() -> bool) -> bool {
    let per_us = APIC_TICKS_PER_US.load(Ordering::Relaxed);
    loop {
        if done() {
            return true;
        }
        let now = rdtsc();
        if now >= deadline {
            return false;
        }
        if per_us == 0 {
            pause();
            continue;
        }
        let khz = tsc_khz().max(1);
        let left_us = (deadline - now) * 1000 / khz;
        let us = left_us.clamp(1, POLL_US);
        super::apic::timer_oneshot(
            super::idt::WAKE_VECTOR,
            (us * per_us).min(u32::MAX as u64) as u32,
        );
        HALTS.fetch_add(1, Ordering::Relaxed);
        super::cpu::enable_and_hlt();
    }
}

/// Sleeps `us` microseconds: halting (see [`wait_until`]) for [`POLL_US`]
/// or longer, spinning for less, as Linux's `udelay` does. Under TCG a halted
/// vCPU wakes only when QEMU's main loop has taken the big lock to fire the
/// APIC timer; right after a round of start-up IPIs, hundreds of starting
/// APs contend for that lock, and a 200 µs halt can last a hundred times
/// longer than the spin.
pub fn sleep_us(us: u64) {
    if us < POLL_US {
        udelay(us);
    } else {
        wait_until(deadline_us(us), || false);
    }
}
