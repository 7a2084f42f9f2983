//! arm64 bring-up: the mechanisms that make one board's per-CPU interval
//! differ from another's, each with where its number comes from.
//!
//! arm64 Linux brings CPUs up one at a time, and every log splits a CPU's
//! interval between two "Booted secondary processor" lines in two: the AP's
//! own start-up ("Detected … I-cache on CPUn" to "CPUn: Booted", 30-290 us on
//! every board of the record) and the gap before it, in which the control
//! CPU runs the cpuhp prepare states for the next CPU, calls PSCI CPU_ON, and
//! the core powers up and enters the kernel. The record's arm64 rows, as
//! their quoted lines give them (the 32 ms rows' HZ and preemption model
//! are sourced in their record rows: published configurations, or the log's
//! own jiffies clocksource line; the H5's preemption model alone is not):
//!
//! | row | kernel | console in the log | per CPU | gap |
//! |---|---|---|---|---|
//! | arm64-h5-4 | mainline 4.18.20 (the port's pull request) | not stated | 32.2 ms | 32.2 ms |
//! | arm64-msm8916-4-nopsci | msm8916-mainline, June 2019 | not stated | 32.2 ms | 32.0-32.4 ms |
//! | arm64-rk3399-6-armbian-5.6 | Armbian 5.4.13, SMP PREEMPT | not stated | 32.1 ms | 32.0-32.2 ms |
//! | arm64-rk3399-6-rocpc-5.4 | Armbian 5.4.0-rc1, SMP PREEMPT | none (boot console disabled before) | 32.1 ms | 32.0 ms |
//! | arm64-rk3399-6-gc18-6.6 | Armbian 6.6.32, SMP PREEMPT | not stated | 1.61 ms | 1.40 ms |
//! | arm64-hikey-8-2015 | 96boards/linux, May 2015 | not stated | 30.1 ms | not split |
//! | arm64-msm8916-4-mf601 | msm8916-mainline, recent | not stated | 0.94 ms | 0.85 ms |
//! | other Rockchip rows (RK3399, RK3566, RK3568, RK3576, RK3588) | AM60: 5.10 vendor; others not stated | AM60: earlycon at 1500000 baud | 0.65-1.91 ms | 0.58-1.80 ms |
//! | arm64-altra-80 | Flatcar | not stated | 0.40 ms | 0.30 ms |
//! | arm64-kunpeng920-128 | 5.11-rc3, SMP PREEMPT | ttyS0 115200, four lines a CPU | 38.3 ms | 38 ms |
//!
//! The same MSM8916 SoC takes 32 ms under a 2019 kernel and 0.94 ms under a
//! recent one, and the 32 ms rows share no firmware (TF-A on the H5 and the
//! RK3399, the kernel itself powering the MSM8916's cores), so the 32 ms is
//! the kernel's: [`KTHREAD_WAITS_PER_CPU`] sleeps of one jiffy each in
//! `wait_task_inactive()` while the control CPU creates the next CPU's
//! per-CPU kthreads, which Linux 5.7 removed.
//!
//! Where each arm64 cost comes from (crate::costs' table and crate::fit):
//! - the boot CPU's PSCI CPU_ON (`kick_bsp`): published, TF-A's SMC round
//!   trip on Neoverse N1, a lower bound;
//! - the rest of the gap (`ap_start`) and the AP side (`online_serial`):
//!   fitted per firmware family on at most half of its rows, the mean over
//!   its fit rows;
//! - the prepare states: folded into the fitted gap, except this module's
//!   kthread waits (code: a count of sleeps from Linux's source, times the
//!   row's HZ, or HZ=250 assumed where the row does not state it);
//! - microcode, TSC synchronisation and delay calibration: zero by code or
//!   specification (no microcode from the OS, the architected timer);
//! - a CPU on a socket other than the boot CPU's (`remote_hop`): fitted, as
//!   a factor on the family's whole per-CPU interval, on the one fit row
//!   that times both sockets of one run (the KASAN ThunderX2's
//!   `package_stamps`, crate::fit::RemoteFactor); the 2-socket Altra's far
//!   socket and the other ThunderX2 run are predicted with it;
//! - the per-operation prices of the mask work (`scan`, `bit_op`,
//!   `lookup`): assumptions, a few microseconds of a CPU's interval on every
//!   row (doubling each moves no arm64 row by 1 %).
//!
//! What the logs rule out where no mechanism is modelled (tested against
//! the record's quoted lines; the rows stay record-only):
//! - Before `clocksource_done_booting()` (an fs_initcall, after
//!   `smp_init()`) the timekeeper runs on the jiffies clocksource, so
//!   hrtimers are in low-resolution mode and a one-jiffy
//!   `schedule_hrtimeout()` ends on a tick: a bring-up cycle that holds
//!   such a sleep lasts a whole number of ticks. The 32 ms rows do (8 ticks
//!   at HZ=250). The Kunpeng 920's gap from one CPU's 'Booted' to the next
//!   CPU's 'Detected' is 38.2-38.4 ms on every CPU of its log's first
//!   socket, 9.6 ticks at its HZ=250 (its 'RCU calculated value of
//!   scheduler-enlistment delay is 25 jiffies' is
//!   `adjust_jiffies_till_sched_qs()`'s HZ/10 floor at 128 CPUs), never a
//!   whole number: no tick-bound sleep lies in it. Nor is it its earlycon:
//!   CPU10's four lines are 5 characters longer than CPU9's (0.43 ms at
//!   115200 baud), yet the gap after them is 1 us longer, and the log's
//!   lines before the bring-up are 13 us apart, so the console did not hold
//!   up the printing CPU. The log's DMI line names a
//!   TaiShan 2280 V2, a 2-socket server, and its CPUs on the second socket
//!   take the same 38.25 ms: unlike the ThunderX2 and the Altra, no
//!   far-socket factor.
//! - The HiKey's 30.0 ms per CPU (six intervals, 29.9-30.4 ms) is whole
//!   ticks at HZ=100 (3), 200 (6), 300 (9) or 1000 (30), not at HZ=250
//!   (7.5): if it is the kthread waits, its kernel ran another HZ and
//!   another count of waits than [`KTHREAD_WAITS_PER_CPU`]; its log states
//!   neither.
//! - A serial console on the small boards that miss (tests/arm64_misses.rs):
//!   an AP's lines go to a console only once it is online, so a console
//!   would print them in the gap after its 'Booted' line; at 1,500,000
//!   baud, without time stamps, each CPU's lines outlast that gap on the
//!   AM60, the Amlogic board, a Pi 5 and the RK3399 under 6.6. Only the
//!   RK3566 box's gap leaves room for them.
//! - The ThunderX2's interval is not the kernel's own work: the run with
//!   KASAN in sw-tags mode, which instruments every kernel memory access,
//!   takes 66.6 ms a CPU on socket 0 and the linux-next run without it
//!   68.2-68.8 ms from kick to 'Detected', almost all before the AP's
//!   first line; it lies in firmware or the power-up, which no source
//!   times.

use crate::costs::{Param, Source};

/// The kernel an arm64 row ran, as far as the bring-up tells kernels apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// Linux 5.7 or later, or any kernel without kernel preemption: a new
    /// kthread is not preempted between waking its creator and sleeping.
    Current,
    /// A `CONFIG_PREEMPT` kernel before Linux 5.7 (without commit
    /// 26c7295be0c5, "kthread: Do not preempt current task if it is going to
    /// call schedule()", which 5.4's stable series took in 5.4.60): each kthread the prepare states create or park is
    /// preempted by its creator, who then sleeps a jiffy for it.
    PreemptPre57,
}

/// The `sim.linux` value naming [`Kernel::PreemptPre57`].
pub const PREEMPT_PRE_5_7: &str = "preempt-pre-5.7";

impl Kernel {
    /// The kernel a row's `sim.linux` names (none: [`Kernel::Current`]).
    pub fn parse(text: Option<&str>) -> Result<Kernel, String> {
        match text {
            None => Ok(Kernel::Current),
            Some(PREEMPT_PRE_5_7) => Ok(Kernel::PreemptPre57),
            Some(other) => Err(format!(
                "sim.linux = '{other}' is not an arm64 kernel: use '{PREEMPT_PRE_5_7}' (a \
                 CONFIG_PREEMPT kernel before Linux 5.7) or leave it out (a current kernel)"
            )),
        }
    }
}

/// One-jiffy sleeps per CPU brought up by a [`Kernel::PreemptPre57`]
/// kernel, counted in Linux 5.4's source (the two Armbian RK3399 rows'
/// version; the H5's 4.18.20 and the MSM8916's 2019 kernel are counted
/// alike, not checked against their own source: a kernel that still ran the
/// softlockup detector's watchdog/N smpboot thread, which commit
/// 9cf57731b63e replaced with cpu_stop work, would sleep two jiffies more). The control CPU creates the CPU's kthreads one after another,
/// and while no sched domain exists yet (`smp_init()` runs before
/// `sched_init_smp()`) a new kthread runs on the control CPU; its
/// `complete()` wakes the creator, which preempts it before it reaches
/// `schedule()`, so the creator's next `wait_task_inactive()` finds it still
/// queued and sleeps one jiffy (`schedule_hrtimeout()` of `NSEC_PER_SEC /
/// HZ`, kernel/sched/core.c):
/// - CPUHP_CREATE_THREADS, `smpboot_create_threads()`: for each of the three
///   per-CPU smpboot threads (cpuhp/N, ksoftirqd/N, migration/N),
///   `kthread_create_on_cpu()` binds it (`kthread_bind()`: one sleep) and
///   `__smpboot_create_thread()` parks it (`kthread_park()` then waits in
///   `wait_task_inactive(TASK_PARKED)`: one sleep): six;
/// - CPUHP_WORKQUEUE_PREP, `workqueue_prepare_cpu()`: one worker for each of
///   the CPU's two pools, each bound by `kthread_bind_mask()`: two.
///
/// At HZ=250 that is 32 ms; the commit that removed it names the same
/// cause ("This patch can save 120ms on rk312x startup with CONFIG_HZ=300",
/// Liang Chen, tip sched/core 26c7295be0c5, Message-ID
/// <158470908349.28353.3855924848715964020.tip-bot2@tip-bot2>).
pub const KTHREAD_WAITS_PER_CPU: u32 = 8;

/// The tick rate taken where a row does not state its kernel's:
/// `CONFIG_HZ`'s default (kernel/Kconfig.hz, HZ_250), which arm64's
/// defconfig keeps.
pub const ASSUMED_HZ: u32 = 250;

const WAITS_CODE: &str = "kernel/kthread.c and kernel/sched/core.c before Linux 5.7 with \
     CONFIG_PREEMPT: 8 one-jiffy sleeps in wait_task_inactive() per CPU (three smpboot threads \
     bound and parked, two workqueue workers bound; crate::arm64::KTHREAD_WAITS_PER_CPU), at \
     the row's own HZ";
const WAITS_ASSUMED_HZ: &str = "kernel/kthread.c and kernel/sched/core.c before Linux 5.7 with \
     CONFIG_PREEMPT: 8 one-jiffy sleeps in wait_task_inactive() per CPU (three smpboot threads \
     bound and parked, two workqueue workers bound; crate::arm64::KTHREAD_WAITS_PER_CPU), at an \
     assumed HZ=250 (Kconfig.hz's default; the row's log does not state its HZ)";

/// The control CPU's prepare states per AP that `kernel` adds to a current
/// kernel's, at `hz` (the row's, or [`ASSUMED_HZ`]); `None` for a kernel
/// that adds nothing.
pub fn prepare(kernel: Kernel, hz: Option<u32>) -> Option<Param> {
    match kernel {
        Kernel::Current => None,
        Kernel::PreemptPre57 => {
            let (hz, why) = match hz {
                Some(hz) => (hz, WAITS_CODE),
                None => (ASSUMED_HZ, WAITS_ASSUMED_HZ),
            };
            Some(Param::new(
                KTHREAD_WAITS_PER_CPU as f64 * 1e9 / hz as f64,
                Source::Code(why),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_pre_5_7_preempt_kernel_waits() {
        assert_eq!(prepare(Kernel::Current, Some(100)), None);
        let p = prepare(Kernel::PreemptPre57, None).unwrap();
        assert_eq!(p.ns, 32e6);
        assert!(matches!(p.source, Source::Code(s) if s.contains("assumed HZ=250")));
        assert_eq!(prepare(Kernel::PreemptPre57, Some(100)).unwrap().ns, 80e6);
    }

    /// The Kunpeng 920 log's gaps, from its quoted lines, are never a whole
    /// number of its ticks (HZ=250, from its RCU line's 25 jiffies), so no
    /// tick-bound sleep lies in them (see the module's docs).
    #[test]
    fn kunpeng_gaps_hold_no_tick_bound_sleep() {
        let rows = crate::record::load().unwrap();
        let r = crate::record::row(&rows, "arm64-kunpeng920-128").unwrap();
        assert!(r
            .kernel
            .contains("scheduler-enlistment delay is 25 jiffies"));
        let tick_ms = 1e3 / 250.0;
        let gaps: Vec<f64> = r
            .ap_stamps
            .windows(2)
            .map(|w| (w[1][0] - w[0][1]) * 1e3)
            .collect();
        assert_eq!(gaps.len(), 2);
        for gap in gaps {
            assert!((38.2..38.4).contains(&gap), "{gap}");
            let ticks = gap / tick_ms;
            assert!(
                (ticks - ticks.round()).abs() > 0.3,
                "{gap} ms is {ticks} ticks"
            );
        }
    }

    #[test]
    fn sim_linux_names_one_kernel_or_is_one_error() {
        assert_eq!(Kernel::parse(None), Ok(Kernel::Current));
        assert_eq!(
            Kernel::parse(Some("preempt-pre-5.7")),
            Ok(Kernel::PreemptPre57)
        );
        let e = Kernel::parse(Some("pre-6.5")).unwrap_err();
        assert!(e.contains("'pre-6.5' is not an arm64 kernel"), "{e}");
    }
}
