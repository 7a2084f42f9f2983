//! Bringing up the application processors: the three strategies, the AP side
//! (call-in, delay calibration, going online), and time-outs for APs that never
//! answer.

use crate::arch::apic::{self, Dest, Ipi};
use crate::arch::phys::Stack;
use crate::arch::{boot, cpu, timer};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use bootproto::cmdline::{Bringup, Calibrate, Kick};
use bootproto::report::BspTime;
use bootproto::strategy::HZ;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use spin::Once;

/// Where an AP is in its bring-up; stored in its per-CPU area.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum State {
    /// Not started.
    Offline = 0,
    /// Sent INIT/SIPI; the BSP is waiting for it.
    Kicked = 1,
    /// Running kernel code on its own stack ("alive").
    CalledIn = 2,
    /// Delay loop calibrated (or skipped); the AP now idles in `hlt`.
    Calibrated = 3,
    /// Marked online (by the hotplug engine's online stage).
    Online = 4,
    /// Did not call in before the time-out: skipped. An AP arriving late parks.
    Failed = 5,
}

impl State {
    fn from_u32(v: u32) -> State {
        match v {
            1 => State::Kicked,
            2 => State::CalledIn,
            3 => State::Calibrated,
            4 => State::Online,
            5 => State::Failed,
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
    /// Node the area came from: `node` unless it had no memory left and the
    /// allocator fell back to the nearest node.
    pub mem_node: u32,
    /// Physical address of this area (for the placement check).
    pub area: u64,
    /// Stack `[base, top)`.
    pub stack: (u64, u64),
    state: AtomicU32,
    /// Loops per jiffy from this CPU's calibration.
    pub lpj: AtomicU64,
    /// Nanoseconds since boot when the BSP sent this AP its first SIPI.
    pub kicked_ns: AtomicU64,
    /// Nanoseconds since boot when the AP called in.
    pub callin_ns: AtomicU64,
    /// Nanoseconds since boot when the AP had set itself up (APIC, IDT,
    /// caches, delay loop) and told the BSP.
    pub ready_ns: AtomicU64,
    /// Nanoseconds since boot when the hotplug engine's online stage ran.
    pub online_ns: AtomicU64,
    /// The APIC id the CPU's own local APIC reported at call-in
    /// ([`NO_CALLIN`] until then): hardware's word, not the MADT's.
    callin_apic: AtomicU32,
    /// The CPU's IA32_APIC_BASE read by itself at call-in, after enabling
    /// its APIC ([`NO_APIC_BASE`] until then): the mode it really runs in.
    callin_apic_base: AtomicU64,
    /// Set by the BSP to let the AP calibrate (`calibrate=serial`).
    released: AtomicBool,
    /// What this CPU's CPUID says about its caches, read by the CPU itself at
    /// call-in (Linux: `identify_secondary_cpu()` → cacheinfo).
    pub caches: Once<x86desc::cacheinfo::CpuCaches>,
}

impl PerCpu {
    /// A fresh area for `cpu`.
    pub fn new(
        cpu: u32,
        apic_id: u32,
        node: u32,
        mem_node: u32,
        area: u64,
        stack: (u64, u64),
    ) -> Self {
        Self {
            cpu,
            apic_id,
            node,
            mem_node,
            area,
            stack,
            state: AtomicU32::new(State::Offline as u32),
            lpj: AtomicU64::new(0),
            kicked_ns: AtomicU64::new(0),
            callin_ns: AtomicU64::new(0),
            ready_ns: AtomicU64::new(0),
            online_ns: AtomicU64::new(0),
            callin_apic: AtomicU32::new(NO_CALLIN),
            callin_apic_base: AtomicU64::new(NO_APIC_BASE),
            released: AtomicBool::new(false),
            caches: Once::new(),
        }
    }

    /// Current bring-up state.
    pub fn state(&self) -> State {
        State::from_u32(self.state.load(Ordering::Acquire))
    }

    /// The APIC id this CPU's local APIC reported when it called in.
    pub fn callin_apic(&self) -> Option<u32> {
        Some(self.callin_apic.load(Ordering::Acquire)).filter(|&a| a != NO_CALLIN)
    }

    /// The IA32_APIC_BASE this CPU read from its own MSR when it called in.
    pub fn callin_apic_base(&self) -> Option<u64> {
        Some(self.callin_apic_base.load(Ordering::Acquire)).filter(|&b| b != NO_APIC_BASE)
    }

    /// Records this CPU's own APIC id and IA32_APIC_BASE, as its hardware
    /// reports them (the boot CPU's, or an AP's at call-in), on the CPU
    /// itself: must run on the CPU this area belongs to.
    pub fn record_callin_apic(&self) {
        self.callin_apic_base
            .store(apic::base_msr(), Ordering::Release);
        self.callin_apic.store(apic::id(), Ordering::Release);
    }

    /// Marks the CPU online (the hotplug engine's online stage).
    pub fn mark_online(&self) {
        self.online_ns.store(timer::now_ns(), Ordering::Relaxed);
        self.set(State::Online);
    }

    fn set(&self, s: State) {
        self.state.store(s as u32, Ordering::Release);
    }

    fn transition(&self, from: State, to: State) -> bool {
        self.state
            .compare_exchange(from as u32, to as u32, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    }
}

/// How many bring-up steps (a call-in, an AP ready) all APs have taken so
/// far: while it moves, a wait that runs out of time is the host being slow
/// (under TCG, hundreds of vCPU threads share a few host cores), not the AP
/// waited for being hung.
static PROGRESS: AtomicU64 = AtomicU64::new(0);

/// [`PerCpu::callin_apic`] before the CPU called in.
const NO_CALLIN: u32 = u32::MAX;

/// [`PerCpu::callin_apic_base`] before the CPU called in (bits 52 to 63 of
/// IA32_APIC_BASE are reserved zero, so no CPU reads this).
const NO_APIC_BASE: u64 = u64::MAX;

/// Logical CPU → per-CPU area: the AP's second O(1) lookup, after the
/// trampoline's APIC id → CPU table.
static PERCPU: [Once<&'static PerCpu>; boot::MAX_KERNEL_CPUS] =
    [const { Once::new() }; boot::MAX_KERNEL_CPUS];

/// The CPU the BSP is halted waiting for ([`NO_CPU_WAITED`] when none): an
/// AP sends the wake-up IPI only when it is the one.
static BSP_WAITS_FOR: AtomicU32 = AtomicU32::new(NO_CPU_WAITED);

/// [`BSP_WAITS_FOR`] while the BSP waits for nobody.
const NO_CPU_WAITED: u32 = u32::MAX;

/// What every AP needs to know, set once by the BSP before the first IPI.
#[derive(Clone, Copy, Debug)]
pub struct ApConfig {
    /// The local APIC mode.
    pub apic_mode: apic::Mode,
    /// Delay-loop calibration policy.
    pub calibrate: Calibrate,
    /// Loops per jiffy used when calibration is skipped.
    pub default_lpj: u64,
    /// The boot CPU's APIC id, for the wake-up IPIs.
    pub bsp_apic_id: u32,
}

static AP_CONFIG: Once<ApConfig> = Once::new();

/// Registers `area` for its CPU. Also publishes the trampoline's lookup
/// entries, giving the CPU `stack`.
pub fn register(area: &'static PerCpu, stack: Stack) -> Result<(), boot::SlotOutOfRange> {
    let slot = PERCPU.get(area.cpu as usize).ok_or(boot::SlotOutOfRange)?;
    boot::set_ap_slot(area.apic_id, area.cpu, stack)?;
    slot.call_once(|| area);
    Ok(())
}

/// Sets the AP configuration. Call once before bring-up.
pub fn configure(config: ApConfig) {
    AP_CONFIG.call_once(|| config);
}

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

/// Each application processor's kernel, on its own stack (entered from
/// `arch::boot` with the CPU number and APIC id it looked itself up by).
pub fn ap_main(cpu_nr: u32, apic_id: u32) -> ! {
    let Some(&me) = PERCPU.get(cpu_nr as usize).and_then(Once::get) else {
        cpu::park()
    };
    // A late AP whose time-out already passed must not come online behind the
    // BSP's back. One that called in and was then reset by an INIT meant for
    // another CPU starts over: QEMU delivers an INIT or SIPI for APIC id n to
    // every AP still in xAPIC mode whose id agrees with n in its low 8 bits.
    match me.state() {
        State::CalledIn => {}
        _ if me.transition(State::Kicked, State::CalledIn) => {
            me.callin_ns.store(timer::now_ns(), Ordering::Relaxed);
            PROGRESS.fetch_add(1, Ordering::Relaxed);
        }
        _ => cpu::park(),
    }
    // Its own CPUID, as Linux reads each CPU's: caches may differ per CPU.
    me.caches.call_once(|| read_caches(apic_id));
    let config = AP_CONFIG.get().copied().unwrap_or(ApConfig {
        apic_mode: apic::Mode::Xapic,
        calibrate: Calibrate::Skip,
        default_lpj: 0,
        bsp_apic_id: 0,
    });
    apic::enable(config.apic_mode);
    me.record_callin_apic();
    crate::arch::idt::init_ap();
    // Tell the BSP it can go on, if it is halted waiting for this CPU (it
    // also wakes by itself every ms). Under TCG an IPI to a BSP that waits for
    // another CPU is not free: it interrupts the BSP's vCPU thread mid-loop.
    let wake_bsp = || {
        if BSP_WAITS_FOR.load(Ordering::SeqCst) == cpu_nr {
            apic::send_ipi(
                Dest::Apic(config.bsp_apic_id),
                Ipi::Fixed(crate::arch::idt::WAKE_VECTOR),
            )
        }
    };
    let measures = matches!(config.calibrate, Calibrate::Serial | Calibrate::Parallel);
    if measures {
        wake_bsp();
    }
    let lpj = match config.calibrate {
        Calibrate::Parallel => calibrate_delay(),
        Calibrate::Serial => {
            // Linux 6.5's parallel bring-up releases APs one at a time after
            // the alive sync; the waiting AP halts until the BSP's wake IPI.
            while !me.released.load(Ordering::Acquire) {
                cpu::enable_and_hlt();
            }
            calibrate_delay()
        }
        // `skip`: the only other word `cmdline::parse` admits (KERNEL_CALIBRATE).
        _ => config.default_lpj,
    };
    me.lpj.store(lpj, Ordering::Relaxed);
    me.ready_ns.store(timer::now_ns(), Ordering::Relaxed);
    // Sequentially consistent with the BSP's `wait`: either it sees this
    // state before it halts, or this CPU sees that the BSP waits for it.
    me.state.store(State::Calibrated as u32, Ordering::SeqCst);
    PROGRESS.fetch_add(1, Ordering::Relaxed);
    wake_bsp();
    cpu::park()
}

/// Timing knobs for the INIT/SIPI sequence.
#[derive(Clone, Copy, Debug)]
pub struct Delays {
    /// After INIT, µs (MP spec: 10 ms).
    pub init_us: u64,
    /// After each SIPI, µs (MP spec: 200 µs).
    pub sipi_us: u64,
    /// How long to wait for an AP to call in, and then to calibrate, ms.
    pub timeout_ms: u64,
}

/// This CPU's caches from its own CPUID (Linux 6.12's rules), for the CPU
/// with APIC id `apic_id` that executes it.
pub fn read_caches(apic_id: u32) -> x86desc::cacheinfo::CpuCaches {
    x86desc::cacheinfo::read(&cpu::cpuid(), apic_id, &cpu::topology())
}

const SIPI: Ipi = Ipi::Startup {
    page: boot::TRAMPOLINE_PAGE,
};

/// INIT, asserted only: the level de-assert that CPUs before the Pentium 4
/// needed is ignored by every later one (SDM vol. 3 §11.6.1), and each IPI
/// the BSP sends one AP at a time is on the serial path of every strategy.
fn send_init(dest: u32) {
    apic::send_ipi(Dest::Apic(dest), Ipi::InitAssert);
}

/// Which CPUs an INIT sent to one APIC id can reset. A local APIC in xAPIC
/// mode has an 8-bit id and matches a physical destination on those 8 bits
/// only (QEMU: `apic_match_dest`), so an INIT for APIC id n also resets
/// every CPU still in xAPIC mode whose id agrees with n in its low 8 bits.
/// An AP that has not called in is in whatever mode the firmware left it:
/// qboot leaves every AP in xAPIC mode even above 255 vCPUs, while a
/// firmware that hands over in x2APIC mode (SeaBIOS there) leaves none.
#[derive(Clone, Debug)]
pub struct InitReach {
    /// The firmware handed over with x2APIC on (the boot CPU found it so),
    /// and with it every AP: ids match in full.
    firmware_x2apic: bool,
    /// Every CPU the firmware lists, possible ones included.
    apic_ids: Vec<u32>,
}

impl InitReach {
    /// The reach of an INIT on a machine listing `apic_ids`.
    pub fn new(firmware_x2apic: bool, apic_ids: Vec<u32>) -> Self {
        Self {
            firmware_x2apic,
            apic_ids,
        }
    }

    /// The other CPUs an INIT for `apic_id` may also reset.
    pub fn aliases(&self, apic_id: u32) -> impl Iterator<Item = u32> + '_ {
        let low = |id: u32| id & 0xff;
        self.apic_ids
            .iter()
            .copied()
            .filter(move |&a| !self.firmware_x2apic && a != apic_id && low(a) == low(apic_id))
    }
}

/// The architecture half of the shared hotplug state machine
/// (`hotplug::Platform`): INIT/SIPI, waiting for call-in, releasing the AP to
/// calibrate, stopping an AP that failed.
///
/// Kicks are queued and sent at the first wait, so that `parallel` and
/// `broadcast` pay the MP-spec delays once for every AP, and `serial` (which
/// waits for each AP before kicking the next) pays them per AP.
pub struct KernelPlatform {
    areas: Vec<Option<&'static PerCpu>>,
    strategy: Bringup,
    delays: Delays,
    calibrate: Calibrate,
    x2apic: bool,
    pending: Vec<&'static PerCpu>,
    bsp: BspTime,
    init_reach: InitReach,
}

impl KernelPlatform {
    /// A platform for the registered per-CPU `areas` (indexed by CPU number).
    pub fn new(
        areas: Vec<Option<&'static PerCpu>>,
        strategy: Bringup,
        delays: Delays,
        calibrate: Calibrate,
        x2apic: bool,
        init_reach: InitReach,
    ) -> Self {
        Self {
            areas,
            strategy,
            delays,
            calibrate,
            x2apic,
            pending: Vec::new(),
            bsp: BspTime::default(),
            init_reach,
        }
    }

    fn area(&self, cpu: usize) -> Result<&'static PerCpu, String> {
        self.areas
            .get(cpu)
            .copied()
            .flatten()
            .ok_or_else(|| String::from("no per-CPU area (out of memory or APIC id out of range)"))
    }

    /// The per-CPU area of `cpu`, if it has one.
    pub fn percpu(&self, cpu: usize) -> Option<&'static PerCpu> {
        self.areas.get(cpu).copied().flatten()
    }

    /// Sends the queued start-up IPIs.
    fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let aps = core::mem::take(&mut self.pending);
        match self.strategy {
            Bringup::Kick(_) => self.kick_first_ahead(&aps),
            Bringup::Broadcast => self.kick_all(&aps),
        }
    }

    /// Kicks the first of `aps` alone and waits for it to call in, then the
    /// rest together. Under TCG a vCPU translates guest code the first time
    /// it runs it unless another vCPU already has; hundreds of APs started
    /// at once all translate the same trampoline and start-up code, in lock
    /// step because the host's fair scheduler shares its few cores among
    /// their threads, and none calls in for a second or more. One AP run
    /// ahead leaves the translations to the rest. It costs one more round of
    /// MP-spec delays; serial kicks one AP at a time anyway.
    fn kick_first_ahead(&mut self, aps: &[&'static PerCpu]) {
        match aps.split_first() {
            Some((&first, rest)) if !rest.is_empty() => {
                self.kick_each(&[first]);
                // An AP that never calls in is failed by `wait_alive`.
                self.wait(first, || first.state() != State::Kicked);
                // The start-up IPIs may have started others too (the
                // low-8-bit aliases of `ap_main`); they need no second kick.
                let (rest, started): (Vec<_>, Vec<_>) = rest
                    .iter()
                    .copied()
                    .partition(|ap| ap.state() == State::Kicked);
                let kicked = first.kicked_ns.load(Ordering::Relaxed);
                for ap in started {
                    ap.kicked_ns.store(kicked, Ordering::Relaxed);
                }
                if !rest.is_empty() {
                    self.kick_each(&rest);
                }
            }
            _ => self.kick_each(aps),
        }
    }

    /// INIT to each AP, the INIT delay, then two rounds of one SIPI per AP,
    /// each round followed by the SIPI delay.
    fn kick_each(&mut self, aps: &[&'static PerCpu]) {
        self.sending(|| aps.iter().for_each(|ap| send_init(ap.apic_id)));
        self.delay(self.delays.init_us);
        for round in 0..2 {
            let sent = self.sending(|| {
                let mut sent = false;
                for ap in aps {
                    // The MP spec's second SIPI only for APs not yet running.
                    if round == 0 || ap.state() == State::Kicked {
                        apic::send_ipi(Dest::Apic(ap.apic_id), SIPI);
                        sent = true;
                    }
                    if round == 0 {
                        ap.kicked_ns.store(timer::now_ns(), Ordering::Relaxed);
                    }
                }
                sent
            });
            if sent {
                self.delay(self.delays.sipi_us);
            }
        }
    }

    /// One all-but-self INIT, the INIT delay, and two all-but-self SIPIs.
    fn kick_all(&mut self, aps: &[&'static PerCpu]) {
        // No de-assert: the SDM allows INIT de-assert only to "all including
        // self", and every CPU since the Pentium 4 ignores it.
        self.sending(|| apic::send_ipi(Dest::AllButSelf, Ipi::InitAssert));
        self.delay(self.delays.init_us);
        for round in 0..2 {
            self.sending(|| apic::send_ipi(Dest::AllButSelf, SIPI));
            if round == 0 {
                let now = timer::now_ns();
                for ap in aps {
                    ap.kicked_ns.store(now, Ordering::Relaxed);
                }
            }
            self.delay(self.delays.sipi_us);
        }
    }

    /// Runs `send`, counting its time as the boot CPU's IPI sending.
    fn sending<T>(&mut self, send: impl FnOnce() -> T) -> T {
        let t0 = timer::now_ns();
        let r = send();
        self.bsp.ipi_ns += timer::now_ns().saturating_sub(t0);
        r
    }

    /// Sleeps an MP-spec delay of `us`, counting its time and halts.
    fn delay(&mut self, us: u64) {
        let (t0, h0) = (timer::now_ns(), timer::halts());
        timer::sleep_us(us);
        self.bsp.delay_ns += timer::now_ns().saturating_sub(t0);
        self.bsp.halts += timer::halts() - h0;
    }

    /// Waits (halting) until `done()`, or until a whole time-out passes in
    /// which no AP made [`PROGRESS`], `ap` knowing that the BSP waits for it;
    /// counts the boot CPU's time and halts. Returns whether `done()`. An AP
    /// that hangs is still given up on one time-out after the others stop
    /// moving; a host too loaded to run the APs promptly does not fail them.
    fn wait(&mut self, ap: &PerCpu, mut done: impl FnMut() -> bool) -> bool {
        let (t0, h0) = (timer::now_ns(), timer::halts());
        // Sequentially consistent with the AP's state store (see `ap_main`).
        BSP_WAITS_FOR.store(ap.cpu, Ordering::SeqCst);
        core::sync::atomic::fence(Ordering::SeqCst);
        let ok = loop {
            let seen = PROGRESS.load(Ordering::Relaxed);
            if timer::wait_until(self.deadline(), &mut done) {
                break true;
            }
            if PROGRESS.load(Ordering::Relaxed) == seen {
                break false;
            }
        };
        BSP_WAITS_FOR.store(NO_CPU_WAITED, Ordering::SeqCst);
        self.bsp.wait_ns += timer::now_ns().saturating_sub(t0);
        self.bsp.halts += timer::halts() - h0;
        ok
    }

    /// Where the boot CPU's time went so far.
    pub fn bsp_time(&self) -> BspTime {
        self.bsp
    }

    fn deadline(&self) -> u64 {
        timer::deadline_us(self.delays.timeout_ms * 1000)
    }
}

impl hotplug::Platform for KernelPlatform {
    fn kick(&mut self, cpu: usize) -> Result<(), String> {
        let ap = self.area(cpu)?;
        if !self.x2apic && ap.apic_id > 254 {
            return Err(format!(
                "APIC id {} needs x2APIC mode (x2apic=on)",
                ap.apic_id
            ));
        }
        ap.set(State::Kicked);
        self.pending.push(ap);
        if self.strategy == Bringup::Kick(Kick::Serial) {
            self.flush();
        }
        Ok(())
    }

    fn wait_alive(&mut self, cpu: usize) -> Result<(), String> {
        self.flush();
        let ap = self.area(cpu)?;
        let alive = |s: State| matches!(s, State::CalledIn | State::Calibrated | State::Online);
        if self.wait(ap, || alive(ap.state())) {
            return Ok(());
        }
        // Failing the exchange means it called in just now: alive after all.
        if ap.transition(State::Kicked, State::Failed) {
            Err(format!(
                "APIC id {}: no call-in within {} ms",
                ap.apic_id, self.delays.timeout_ms
            ))
        } else {
            Ok(())
        }
    }

    fn calibrate(&mut self, cpu: usize) -> Result<(), String> {
        let ap = self.area(cpu)?;
        if self.calibrate == Calibrate::Serial {
            ap.released.store(true, Ordering::Release);
            apic::send_ipi(
                Dest::Apic(ap.apic_id),
                Ipi::Fixed(crate::arch::idt::WAKE_VECTOR),
            );
        }
        if self.wait(ap, || ap.state() == State::Calibrated) {
            Ok(())
        } else {
            Err(format!(
                "APIC id {}: calibration did not finish within {} ms",
                ap.apic_id, self.delays.timeout_ms
            ))
        }
    }

    fn stop(&mut self, cpu: usize) -> Result<(), String> {
        let ap = self.area(cpu)?;
        ap.set(State::Failed);
        // INIT puts a half-started AP back into wait-for-SIPI, as Linux does,
        // but only when it can reach no other CPU: its aliases may be APs
        // still starting, or not started yet, and an INIT would leave them
        // waiting for a SIPI nobody sends. Without it the AP is left as it
        // is: being Failed, it parks if it ever reaches `ap_main`.
        let mut aliases = self.init_reach.aliases(ap.apic_id).peekable();
        if aliases.peek().is_none() {
            send_init(ap.apic_id);
        } else {
            let ids: Vec<String> = aliases.map(|a| format!("{a}")).collect();
            crate::kprintln!(
                "smpboot: APIC id {} not sent INIT: in xAPIC mode it would also reset APIC ids {}",
                ap.apic_id,
                ids.join(",")
            );
        }
        Ok(())
    }

    fn now_ns(&mut self) -> u64 {
        timer::now_ns()
    }
}
