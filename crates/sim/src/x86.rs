//! What x86 CPUs of the two vendors do differently while Linux brings them
//! up, each difference from Linux's source or a published measurement.
//!
//! - **How long an AP takes to answer INIT/SIPI/SIPI** (from the wake-up to
//!   the AP running kernel code that can report alive) is the CPU's and its
//!   firmware's, not the kernel's: "The time for an AP to report alive state
//!   in start_secondary() on x86 has been measured in the range between
//!   350us and 3.5ms depending on vendor and CPU type, BIOS microcode size
//!   etc." (Thomas Gleixner, "[patch V2 00/38] cpu/hotplug, x86: Reworked
//!   parallel CPU bringup", Message-ID
//!   <20230504185733.126511787@linutronix.de>). So the AP start-up is fitted per
//!   vendor: Intel's on seed 003's server (Usama Arif's series disabled the
//!   parallel bring-up "for all AMD CPUs in this version", and that server
//!   went from 700 ms to 100 ms with it, so it is not an AMD machine), AMD's
//!   on the public record's one AMD `fit` row ([`crate::fit`]).
//! - **Which delay loop calibrates**: `bsp_init_amd()` (arch/x86/kernel/cpu/amd.c)
//!   calls `use_mwaitx_delay()` on every CPU with MWAITX (every Zen), and
//!   `read_current_timer()` (arch/x86/lib/delay.c) reads the TSC only while
//!   the delay function is the TSC one, so on AMD `calibrate_delay_direct()`
//!   returns 0 at once and an AP that calibrates runs
//!   `calibrate_delay_converge()` (init/calibrate.c) instead: a tick-driven
//!   ramp and binary search, [`converge_calibration_ns`], 22 ms at HZ=250
//!   where the direct one takes 78 ms. Intel CPUs without WAITPKG keep the
//!   TSC delay and calibrate directly, and so do the AMD CPUs without
//!   MWAITX, the family 10h and 15h Opterons (record rows with
//!   `mwaitx = false`; the hwloc corpus's CPUID dumps, tests/x86_cpuid.rs).
//! - **Which APs run the TSC warp check**: `check_tsc_sync_target()`
//!   (arch/x86/kernel/tsc_sync.c) skips it when `tsc_store_and_check_tsc_adjust()`
//!   finds a CPU of the AP's package online, which needs the TSC_ADJUST MSR;
//!   Intel has it from Haswell on, no AMD CPU before Zen 5 does. So on AMD
//!   every AP runs the check: `loop_timeout()`'s 20 ms for a package's first
//!   CPU, 2 ms for the others. The Opteron logs show it: the X4600's boot
//!   socket takes 2.2 ms a CPU, the R815's 2.6-2.9 ms with its console.
//!   Two Zen logs run faster than the check allows (the Supermicro EPYC
//!   7601's boot package 1.55 ms a CPU, the Zen 3 laptop's sibling wave
//!   1.39 ms), which Linux permits only once the TSC has been marked
//!   unstable (`unsynchronized_tsc()` then skips every later check) or the
//!   command line says `tsc=reliable`; neither excerpt shows which.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

/// The x86 CPU vendor, as far as the bring-up differs between them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Vendor {
    /// Intel: TSC-based delay (before WAITPKG), AP start-up fitted on seed 003.
    Intel,
    /// AMD Zen: MWAITX-based delay, AP start-up fitted on the record's AMD row.
    Amd,
}

impl Vendor {
    /// Both vendors.
    pub const ALL: [Vendor; 2] = [Vendor::Intel, Vendor::Amd];

    /// The record's spelling.
    pub fn name(self) -> &'static str {
        match self {
            Vendor::Intel => "intel",
            Vendor::Amd => "amd",
        }
    }

    /// Whether this vendor's CPUs have the TSC_ADJUST MSR (CPUID.7.0:EBX
    /// bit 1) unless a record row says otherwise (`sim.tsc_adjust`): the
    /// hwloc corpus's CPUID dumps show it on Intel from Haswell on, not on
    /// Sandy or Ivy Bridge, and on AMD only from Zen 5 (family 1Ah), not on
    /// the families 10h to 19h the record's AMD rows run
    /// (tests/x86_cpuid.rs).
    pub fn tsc_adjust(self) -> bool {
        self == Vendor::Intel
    }

    /// Whether an AP of this vendor that calibrates takes
    /// `calibrate_delay_converge()` (its delay is not the TSC's).
    pub fn converges(self) -> bool {
        self == Vendor::Amd
    }
}

impl fmt::Display for Vendor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Vendor {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Vendor::ALL
            .into_iter()
            .find(|v| v.name() == s)
            .ok_or_else(|| format!("'{s}' is not \"intel\" or \"amd\""))
    }
}

/// `LPS_PREC` in init/calibrate.c: bits of precision of the binary search.
const LPS_PREC: u32 = 8;

/// The starting `loops_per_jiffy` of the ramp (`lpj = (1<<12)`).
const RAMP_START: u64 = 1 << 12;

/// How many tick phases the mean is taken over.
const PHASES: u32 = 16;

/// The mean time `calibrate_delay_converge()` takes at `hz` on a CPU whose
/// `__delay(n)` waits `n` cycles of a `tsc_mhz` counter (MWAITX's timer
/// counts at the TSC rate), averaged over where in a tick it starts.
///
/// The loop is Linux's, run against a virtual clock instead of being
/// priced by a formula, because its length depends on how the ramp
/// overshoots and whether the search restarts with a wider range: wait for
/// a tick edge; ramp `__delay(lpj * band)` up until a tick passes; then,
/// for each bit down to `LPS_PREC` below the estimate, wait for an edge,
/// delay the candidate and keep it if no tick passed; if every candidate
/// was kept, widen the range fourfold and search again.
pub fn converge_calibration_ns(hz: u32, tsc_mhz: f64) -> f64 {
    let tick_ns = 1e9 / hz as f64;
    let cycles_per_tick = tsc_mhz * 1e6 / hz as f64;
    let mut total = 0.0;
    for k in 0..PHASES {
        let start = (k as f64 + 0.5) / PHASES as f64;
        total += converge(cycles_per_tick, start).0 * tick_ns;
    }
    total / PHASES as f64
}

/// One run of `calibrate_delay_converge()` from `start` (a fraction of a
/// tick into the current one): the ticks it takes and the
/// `loops_per_jiffy` it returns.
fn converge(cycles_per_tick: f64, start: f64) -> (f64, u64) {
    let mut clock = Clock { t: start };
    // Wait for the start of a tick.
    clock.next_edge();
    let mut ticks = clock.jiffies();
    let (mut trials, mut band, mut in_band) = (0u64, 0u64, 0u64);
    loop {
        in_band += 1;
        if in_band == 1 << band {
            band += 1;
            in_band = 0;
        }
        clock.delay(RAMP_START * band, cycles_per_tick);
        trials += band;
        if clock.jiffies() != ticks {
            break;
        }
    }
    trials -= band;
    let mut loopadd_base = RAMP_START * band;
    let mut lpj_base = RAMP_START * trials;
    // The search restarts only while every candidate was kept; each restart
    // quadruples the range, so a handful bounds it on any real clock.
    let mut lpj = lpj_base;
    for _ in 0..64 {
        lpj = lpj_base;
        let mut loopadd = loopadd_base;
        let chop_limit = lpj >> LPS_PREC;
        while loopadd > chop_limit {
            lpj += loopadd;
            clock.next_edge();
            ticks = clock.jiffies();
            clock.delay(lpj, cycles_per_tick);
            if clock.jiffies() != ticks {
                lpj -= loopadd;
            }
            loopadd >>= 1;
        }
        if lpj.saturating_add(loopadd.saturating_mul(2))
            != lpj_base.saturating_add(loopadd_base.saturating_mul(2))
        {
            break;
        }
        lpj_base = lpj;
        loopadd_base = loopadd_base.saturating_mul(4);
    }
    (clock.t - start, lpj)
}

/// Virtual time in ticks; `jiffies` is its whole part.
struct Clock {
    t: f64,
}

impl Clock {
    fn jiffies(&self) -> u64 {
        self.t.floor() as u64
    }

    /// Spins until `jiffies` changes.
    fn next_edge(&mut self) {
        self.t = self.t.floor() + 1.0;
    }

    fn delay(&mut self, cycles: u64, cycles_per_tick: f64) {
        self.t += cycles as f64 / cycles_per_tick;
    }
}

/// Which x86 kernel's online path [`online_walks`] counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnlineKernel {
    /// Linux 2.6.37 (seed 002): the per-CPU walks of `set_cpu_sibling_map()` only.
    Linux2637,
    /// Linux 4.13 to 6.x: those, `workqueue_online_cpu()`'s walk over every
    /// worker pool and the CPU hotplug lock's sum over every possible CPU.
    Linux6,
}

/// The per-CPU data that Linux's serialized x86 online path visits, summed
/// over the bring-up of `cpus` CPUs (the boot CPU is set up before the
/// window), each visit one CPU's data touched from the CPU being brought up
/// (on another node for most of them on a machine of many nodes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct OnlineWalks {
    /// `set_cpu_sibling_map()` (arch/x86/kernel/smpboot.c, every version
    /// since 2.6.x): two `for_each_cpu(i, cpu_sibling_setup_mask)` loops, each
    /// reading `cpu_data(i)` of every CPU set up so far, the new one included.
    pub sibling: u64,
    /// `workqueue_online_cpu()` (kernel/workqueue.c, worker pools in an IDR
    /// since 3.9): `for_each_pool()` over every worker pool, taking and
    /// dropping `wq_pool_attach_mutex` at each; `NR_STD_WORKER_POOLS` (2) per
    /// possible CPU, created at boot for every possible CPU. The unbound
    /// pools, a few per node, are left out, so this is a lower bound.
    pub pools: u64,
    /// `_cpu_up()` takes `cpus_write_lock()`, a per-CPU rw-semaphore since
    /// 4.13, whose `percpu_down_write()` waits in `readers_active_check()`
    /// for `per_cpu_sum()` of the reader counts, a loop over every possible
    /// CPU (counted once per online; it runs at least once).
    pub hotplug_lock: u64,
}

impl OnlineWalks {
    /// Every visit.
    pub fn total(&self) -> u64 {
        self.sibling + self.pools + self.hotplug_lock
    }
}

/// Counts [`OnlineWalks`] for a machine of `cpus` CPUs, all of them
/// possible and brought up, one online after the other as Linux's
/// serialized online path takes them (the order does not change the counts).
///
/// Why these and not the work the scheduler's domains would seem to need:
/// `sched_cpu_activate()` (kernel/sched/core.c) rebuilds no domains while
/// the kernel boots: its NUMA mask updates and `cpuset_cpu_active()` run only
/// once `sched_smp_initialized` is set by `sched_init_smp()`, after
/// `smp_init()` has brought every CPU up ("we build the real domains after all
/// CPUs have been brought up", its comment). The MTRR/PAT rendezvous is one
/// `stop_machine()` after the last AP (`cache_aps_delayed_init`), not one per
/// AP, and the x2APIC cluster set-up is counted by the simulation itself
/// ([`crate::run::x2apic_prefill_visits`]).
pub fn online_walks(cpus: u64, kernel: OnlineKernel) -> OnlineWalks {
    let possible = cpus;
    let mut w = OnlineWalks {
        sibling: 0,
        pools: 0,
        hotplug_lock: 0,
    };
    // The boot CPU is the first set up; the k-th CPU (k = 2..=cpus) finds
    // k CPUs in cpu_sibling_setup_mask, itself included.
    for set_up in 2..=cpus {
        w.sibling += 2 * set_up;
        if kernel == OnlineKernel::Linux6 {
            w.pools += 2 * possible;
            w.hotplug_lock += possible;
        }
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The search ends with a `loops_per_jiffy` within its precision of
    /// one tick's cycles, as Linux's loop does on an AMD machine (its log's
    /// BogoMIPS are twice the TSC's MHz): a search run wrong would not, and
    /// its length is a wait for an edge, the ramp's tick and a few steps of
    /// about one tick each.
    #[test]
    fn converge_finds_one_tick_of_cycles() {
        for hz in [100u32, 250, 300, 1000] {
            for mhz in [2000.0, 2200.0, 2600.0, 3500.0] {
                let cycles = mhz * 1e6 / hz as f64;
                for k in 0..PHASES {
                    let start = (k as f64 + 0.5) / PHASES as f64;
                    let (ticks, lpj) = converge(cycles, start);
                    let error = lpj as f64 / cycles - 1.0;
                    assert!(error.abs() < 4.0 / 256.0, "{hz} {mhz} {start}: {lpj}");
                    assert!((2.0..40.0).contains(&ticks), "{hz} {mhz}: {ticks}");
                }
                let ns = converge_calibration_ns(hz, mhz);
                assert!(ns < crate::costs::direct_calibration_ns(hz), "{hz} {mhz}");
            }
        }
    }

    #[test]
    fn vendor_names_round_trip_and_bad_names_are_errors() {
        for v in Vendor::ALL {
            assert_eq!(v.name().parse::<Vendor>(), Ok(v));
        }
        assert!("via".parse::<Vendor>().unwrap_err().contains("'via'"));
    }

    /// The counts are the loops' own arithmetic: the k-th CPU set up walks
    /// k CPUs twice, so the sibling walks sum to N(N+1) - 2 (the boot CPU's
    /// own set-up is before the window), and every one of the N - 1 APs walks
    /// the 2N standard worker pools and the N possible CPUs' reader counts.
    #[test]
    fn online_walks_are_the_loops_of_linux() {
        for n in [1u64, 2, 12, 128, 1920, 4096] {
            let old = online_walks(n, OnlineKernel::Linux2637);
            assert_eq!(old.sibling, n * (n + 1) - 2, "{n}");
            assert_eq!(old.pools + old.hotplug_lock, 0, "{n}");
            let new = online_walks(n, OnlineKernel::Linux6);
            assert_eq!(new.sibling, old.sibling, "{n}");
            assert_eq!(new.pools, 2 * n * (n - 1), "{n}");
            assert_eq!(new.hotplug_lock, n * (n - 1), "{n}");
            assert_eq!(new.total(), new.sibling + new.pools + new.hotplug_lock);
        }
        // Two CPUs: the AP walks itself and the boot CPU twice (4), the
        // boot CPU's and its own two pools each (4) and both reader counts (2).
        let two = online_walks(2, OnlineKernel::Linux6);
        assert_eq!((two.sibling, two.pools, two.hotplug_lock), (4, 4, 2));
    }
}
