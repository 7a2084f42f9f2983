//! The hypervisor side: PowerVM's shared-processor pool, as the guest and lparstat
//! see it.
//!
//! A virtual processor (VP) is one SMT8 big core. It needs a physical core while
//! any of its hardware threads is not ceded; when the last busy thread goes idle
//! it snoozes for [`HvParams::snooze_ns`] (pseries cpuidle's snooze state, whose
//! timeout is the target residency of the cede state) and then calls `H_CEDE`,
//! and the hypervisor takes the core away. The next thread to have work makes
//! the hypervisor dispatch the VP again: one virtual context switch (`vcsw`).
//!
//! lparstat's columns (powerpc-utils `lparstat.c`, from `/proc/powerpc/lparcfg`):
//! - `physc` = Δpurr / Δtimebase: the PURR of all threads of a dispatched VP adds
//!   up to the time it is dispatched, so physc is the average number of VPs
//!   dispatched (capped by the pool, or by the entitlement when capped);
//! - `%entc` = physc / entitled capacity × 100;
//! - `lbusy` = (user + sys) / total of `/proc/stat`: the logical CPUs' busy share;
//! - `vcsw` = lparcfg's `dispatches`: VP dispatches. lparstat prints the counter
//!   since boot; the model reports dispatches per second of the window instead.
//!
//! The guest sees the hypervisor through `vcpu_is_preempted()` (powerpc
//! `arch/powerpc/include/asm/paravirt.h`): a CPU whose VP is not dispatched is
//! "preempted", except when it is a thread of the caller's own VP (PowerVM
//! dispatches whole cores), so `available_idle_cpu()` is false for it and the
//! wake-up paths avoid it. That is the loop the model closes: placement decides
//! which VPs run, and which VPs run decides placement.

use alloc::vec;
use alloc::vec::Vec;

/// How the partition gets its processors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lpar {
    /// Not a partition (bare metal or a KVM guest): a "VP" is a core, never preempted.
    None,
    /// Dedicated processors: every VP owns its core all the time.
    Dedicated,
    /// Shared-processor LPAR: VPs are dispatched from the shared pool.
    Shared,
}

/// The partition's configuration (lparstat -i).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HvParams {
    /// Shared, dedicated or none.
    pub lpar: Lpar,
    /// Entitled capacity in cores (`ent=`).
    pub entitlement: f64,
    /// Capped partitions never exceed their entitlement.
    pub capped: bool,
    /// Physical cores of the shared pool this partition can use.
    pub pool: f64,
    /// How long an idle thread snoozes before it cedes (ns).
    pub snooze_ns: u64,
    /// Time an idle-balance kick keeps the balancing CPU's VP dispatched (ns).
    pub ilb_ns: u64,
}

impl HvParams {
    /// Defaults for `lpar` on a machine with `vps` virtual processors: entitled
    /// to every VP, uncapped, a pool as large as the partition, and a 100 µs
    /// snooze (pseries cpuidle: the shared-processor cede state's target
    /// residency, which is the snooze timeout).
    pub fn defaults(lpar: Lpar, vps: usize) -> HvParams {
        HvParams {
            lpar,
            entitlement: vps as f64,
            capped: false,
            pool: vps as f64,
            snooze_ns: if lpar == Lpar::Shared { 100_000 } else { 0 },
            ilb_ns: 20_000,
        }
    }

    /// The most physical cores the partition can consume at once.
    pub fn cap(&self, vps: usize) -> f64 {
        let vps = vps as f64;
        match self.lpar {
            Lpar::Shared if self.capped => self.entitlement.min(vps).min(self.pool),
            Lpar::Shared => vps.min(self.pool),
            _ => vps,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Vp {
    /// Threads with work.
    busy: u32,
    /// Start of the current (or last) dispatch.
    start: u64,
    /// When it cedes; `u64::MAX` while a thread is busy.
    end: u64,
    /// Dispatched time of finished dispatches.
    acc: u64,
    /// Dispatches.
    dispatches: u64,
}

/// Every VP's dispatch state and its accounting.
#[derive(Debug, Clone)]
pub struct Hypervisor {
    /// Configuration.
    pub params: HvParams,
    vps: Vec<Vp>,
}

impl Hypervisor {
    /// `nvp` VPs, none dispatched.
    pub fn new(params: HvParams, nvp: usize) -> Hypervisor {
        let vp = Vp {
            busy: 0,
            start: 0,
            end: 0,
            acc: 0,
            dispatches: 0,
        };
        Hypervisor {
            params,
            vps: vec![vp; nvp],
        }
    }

    /// Number of VPs.
    pub fn len(&self) -> usize {
        self.vps.len()
    }

    /// Whether there are no VPs.
    pub fn is_empty(&self) -> bool {
        self.vps.is_empty()
    }

    /// A thread of `vp` has work at `now`.
    pub fn thread_busy(&mut self, vp: u32, now: u64) {
        let v = &mut self.vps[vp as usize];
        if v.busy == 0 {
            if now >= v.end {
                v.acc += v.end - v.start;
                v.start = now;
                v.dispatches += 1;
            }
            v.end = u64::MAX;
        }
        v.busy += 1;
    }

    /// A thread of `vp` went idle at `now`.
    pub fn thread_idle(&mut self, vp: u32, now: u64) {
        let snooze = self.params.snooze_ns;
        let v = &mut self.vps[vp as usize];
        v.busy -= 1;
        if v.busy == 0 {
            v.end = now + snooze;
        }
    }

    /// An idle thread of `vp` ran for `ns` (an idle-balance kick) at `now`.
    pub fn touch(&mut self, vp: u32, now: u64, ns: u64) {
        self.thread_busy(vp, now);
        self.thread_idle(vp, now + ns.saturating_sub(self.params.snooze_ns));
    }

    /// Whether `vp` holds a physical core at `now`.
    pub fn dispatched(&self, vp: u32, now: u64) -> bool {
        let v = &self.vps[vp as usize];
        v.busy > 0 || now < v.end
    }

    /// `vcpu_is_preempted(cpu)` asked from a thread of `from_vp`: only a shared
    /// LPAR preempts, and never the caller's own VP.
    pub fn preempted(&self, vp: u32, from_vp: u32, now: u64) -> bool {
        self.params.lpar == Lpar::Shared && vp != from_vp && !self.dispatched(vp, now)
    }

    /// Total dispatched time of every VP up to `now` (ns), and total dispatches.
    /// A dedicated partition's VPs are dispatched all the time.
    pub fn totals(&self, now: u64) -> (u64, u64) {
        if self.params.lpar == Lpar::Dedicated {
            return (now * self.vps.len() as u64, self.vps.len() as u64);
        }
        let mut t = 0;
        let mut d = 0;
        for v in &self.vps {
            let end = v.end.min(now).max(v.start);
            t += v.acc + (end - v.start);
            d += v.dispatches;
        }
        (t, d)
    }

    /// VPs wanting a core at `now`.
    pub fn wanting(&self, now: u64) -> usize {
        if self.params.lpar == Lpar::Dedicated {
            return self.vps.len();
        }
        (0..self.vps.len())
            .filter(|&v| self.dispatched(v as u32, now))
            .count()
    }
}
