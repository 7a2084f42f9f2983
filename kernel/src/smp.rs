//! Bringing up the application processors: the three strategies, the AP side
//! (call-in, delay calibration, going online), and time-outs for APs that never
//! answer.

use crate::arch::{apic, boot, cpu, timer};
use crate::cmdline::{Bringup, Calibrate};
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use spin::{Mutex, Once};

/// Where an AP is in its bring-up; stored in its per-CPU area.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum State {
    /// Not started.
    Offline = 0,
    /// Sent INIT/SIPI; the BSP is waiting for it.
    Kicked = 1,
    /// Running kernel code on its own stack.
    CalledIn = 2,
    /// Calibrated and marked online.
    Online = 3,
    /// Did not call in before the time-out: skipped. An AP arriving late parks.
    Failed = 4,
}

impl State {
    fn from_u32(v: u32) -> State {
        match v {
            1 => State::Kicked,
            2 => State::CalledIn,
            3 => State::Online,
            4 => State::Failed,
            _ => State::Offline,
        }
    }
}

/// One CPU's per-CPU area, placed in a frame on the CPU's own node.
#[derive(Debug)]
pub struct PerCpu {
    /// Logical CPU number.
    pub cpu: u32,
    /// APIC id.
    pub apic_id: u32,
    /// NUMA node.
    pub node: u32,
    /// Physical address of this area (for the placement check).
    pub area: u64,
    /// Stack `[base, top)`.
    pub stack: (u64, u64),
    state: AtomicU32,
    /// Loops per jiffy from this CPU's calibration.
    pub lpj: AtomicU64,
    /// Nanoseconds since boot when the AP called in.
    pub callin_ns: AtomicU64,
}

impl PerCpu {
    /// A fresh area for `cpu`.
    pub fn new(cpu: u32, apic_id: u32, node: u32, area: u64, stack: (u64, u64)) -> Self {
        Self {
            cpu,
            apic_id,
            node,
            area,
            stack,
            state: AtomicU32::new(State::Offline as u32),
            lpj: AtomicU64::new(0),
            callin_ns: AtomicU64::new(0),
        }
    }

    /// Current bring-up state.
    pub fn state(&self) -> State {
        State::from_u32(self.state.load(Ordering::Acquire))
    }

    fn set(&self, s: State) {
        self.state.store(s as u32, Ordering::Release);
    }

    fn transition(&self, from: State, to: State) -> bool {
        self.state
            .compare_exchange(from as u32, to as u32, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }
}

/// Logical CPU → per-CPU area: the AP's second O(1) lookup, after the
/// trampoline's APIC id → CPU table.
static PERCPU: [Once<&'static PerCpu>; boot::MAX_KERNEL_CPUS] =
    [const { Once::new() }; boot::MAX_KERNEL_CPUS];

/// What every AP needs to know, set once by the BSP before the first IPI.
#[derive(Clone, Copy, Debug)]
pub struct ApConfig {
    /// Run the local APIC in x2APIC mode.
    pub x2apic: bool,
    /// Delay-loop calibration policy.
    pub calibrate: Calibrate,
    /// Loops per jiffy used when calibration is skipped.
    pub default_lpj: u64,
}

static AP_CONFIG: Once<ApConfig> = Once::new();
/// Serialises calibration under `calibrate=serial`.
static CALIBRATION_TOKEN: Mutex<()> = Mutex::new(());
/// Called when an AP goes online (the hotplug engine hook); runs under a lock.
static ONLINE_HOOK: Once<fn(&PerCpu)> = Once::new();

/// Registers `area` for its CPU. Also publishes the trampoline's lookup entries.
pub fn register(area: &'static PerCpu) -> Result<(), boot::SlotOutOfRange> {
    let slot = PERCPU.get(area.cpu as usize).ok_or(boot::SlotOutOfRange)?;
    boot::set_ap_slot(area.apic_id, area.cpu, area.stack.1)?;
    slot.call_once(|| area);
    Ok(())
}

/// Sets the AP configuration and the online hook. Call once before bring-up.
pub fn configure(config: ApConfig, on_online: fn(&PerCpu)) {
    AP_CONFIG.call_once(|| config);
    ONLINE_HOOK.call_once(|| on_online);
}

/// The kernel's clock tick, as Debian's kernels (CONFIG_HZ=250): `lpj=` means
/// the same here as on their command line.
pub const HZ: u64 = 250;

/// Measures loops per jiffy: doubles the loop count until one run takes at
/// least a jiffy of TSC time, then scales. Linux does the same against the
/// jiffies counter; the TSC is this kernel's only clock.
pub fn calibrate_delay() -> u64 {
    let jiffy_cycles = timer::tsc_khz() * 1000 / HZ;
    let mut loops: u64 = 1 << 12;
    loop {
        let t0 = cpu::rdtsc();
        cpu::delay_loop(loops);
        let dt = cpu::rdtsc().wrapping_sub(t0).max(1);
        if dt >= jiffy_cycles || loops >= 1 << 40 {
            return (loops as u128 * jiffy_cycles as u128 / dt as u128) as u64;
        }
        loops *= 2;
    }
}

/// BogoMIPS × 100 for a loops-per-jiffy value (Linux: lpj / (500000 / HZ)).
pub fn bogomips_x100(lpj: u64) -> u64 {
    lpj * HZ / 5000
}

/// Rust entry of every application processor, on its own stack.
#[no_mangle]
extern "C" fn ap_rust_entry(cpu_nr: u32, _apic_id: u32) -> ! {
    let Some(&me) = PERCPU.get(cpu_nr as usize).and_then(Once::get) else {
        cpu::park()
    };
    // A late AP whose time-out already passed must not come online behind the
    // BSP's back.
    if !me.transition(State::Kicked, State::CalledIn) {
        cpu::park()
    }
    me.callin_ns.store(timer::now_ns(), Ordering::Relaxed);
    let config = AP_CONFIG.get().copied().unwrap_or(ApConfig {
        x2apic: false,
        calibrate: Calibrate::Skip,
        default_lpj: 0,
    });
    apic::enable(config.x2apic, None);
    let lpj = match config.calibrate {
        Calibrate::Skip => config.default_lpj,
        Calibrate::Parallel => calibrate_delay(),
        Calibrate::Serial => {
            let _token = CALIBRATION_TOKEN.lock();
            calibrate_delay()
        }
    };
    me.lpj.store(lpj, Ordering::Relaxed);
    if let Some(hook) = ONLINE_HOOK.get() {
        hook(me);
    }
    me.set(State::Online);
    cpu::park()
}

/// Timing knobs for the INIT/SIPI sequence.
#[derive(Clone, Copy, Debug)]
pub struct Delays {
    /// After INIT, µs (MP spec: 10 ms).
    pub init_us: u64,
    /// After each SIPI, µs (MP spec: 200 µs).
    pub sipi_us: u64,
    /// How long to wait for an AP to come online, ms.
    pub timeout_ms: u64,
}

fn sipi() -> u32 {
    apic::ICR_STARTUP | (boot::TRAMPOLINE_BASE >> 12) as u32
}

fn send_init(dest: u32) {
    apic::send_ipi(dest, apic::ICR_INIT_ASSERT);
    apic::send_ipi(dest, apic::ICR_INIT_DEASSERT);
}

/// Waits for `ap` to come online until `deadline` (TSC); marks it failed if not.
fn wait_online(ap: &PerCpu, deadline: u64) -> bool {
    if timer::wait_until(deadline, || ap.state() == State::Online) {
        return true;
    }
    // Either it never called in (we win the exchange and it will park if it
    // ever arrives), or it is mid-way (called in, calibrating): give that a
    // second chance, since it is alive.
    if ap.transition(State::Kicked, State::Failed) {
        return false;
    }
    let more = timer::deadline_us(1_000_000);
    timer::wait_until(more, || ap.state() == State::Online)
}

/// Brings up `aps` (every enabled CPU except the BSP) with `strategy`. Returns
/// the CPUs that failed to come online.
pub fn bring_up(
    aps: &[&'static PerCpu],
    strategy: Bringup,
    delays: Delays,
    mut failed: impl FnMut(&PerCpu),
) {
    let timeout_us = delays.timeout_ms * 1000;
    match strategy {
        Bringup::Serial => {
            for ap in aps {
                ap.set(State::Kicked);
                send_init(ap.apic_id);
                timer::sleep_us(delays.init_us);
                apic::send_ipi(ap.apic_id, sipi());
                timer::sleep_us(delays.sipi_us);
                if ap.state() == State::Kicked {
                    apic::send_ipi(ap.apic_id, sipi());
                    timer::sleep_us(delays.sipi_us);
                }
                if !wait_online(ap, timer::deadline_us(timeout_us)) {
                    failed(ap);
                }
            }
        }
        Bringup::Parallel | Bringup::Broadcast => {
            for ap in aps {
                ap.set(State::Kicked);
            }
            if strategy == Bringup::Parallel {
                // Kick every AP: the MP-spec waits are paid once for all.
                for ap in aps {
                    send_init(ap.apic_id);
                }
                timer::sleep_us(delays.init_us);
                for _ in 0..2 {
                    for ap in aps {
                        apic::send_ipi(ap.apic_id, sipi());
                    }
                    timer::sleep_us(delays.sipi_us);
                }
            } else {
                // No de-assert: the SDM allows INIT de-assert only to "all
                // including self", and every CPU since the Pentium 4 ignores it.
                apic::send_ipi(0, apic::ICR_INIT_ASSERT | apic::ICR_ALL_BUT_SELF);
                timer::sleep_us(delays.init_us);
                for _ in 0..2 {
                    apic::send_ipi(0, sipi() | apic::ICR_ALL_BUT_SELF);
                    timer::sleep_us(delays.sipi_us);
                }
            }
            // Each AP gets the full time-out from when the BSP starts waiting
            // for it (Linux waits per CPU too), so a slow host delays but does
            // not fail a late AP in a long list.
            for ap in aps {
                if !wait_online(ap, timer::deadline_us(timeout_us)) {
                    failed(ap);
                }
            }
        }
    }
}
