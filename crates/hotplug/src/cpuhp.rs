//! The per-CPU hotplug state machine, modelled on Linux's cpuhp
//! (`kernel/cpu.c`): a CPU moves offline → kicked → alive → online and back,
//! each step running the architecture's work (a [`Platform`]) and the
//! callbacks registered for that stage, in registration order on the way up
//! and in reverse on the way down. A failing step rolls the CPU back to
//! offline, undoing exactly the steps that completed.
//!
//! Two bring-up orders:
//! - [`Hotplug::bringup_serial`]: each CPU goes all the way up before the next
//!   is kicked (Linux before 6.5).
//! - [`Hotplug::bringup_parallel`]: every CPU is kicked first (the
//!   `CPUHP_BP_KICK_AP` prefix), then each is waited for and completed in turn
//!   (`CPUHP_BP_PARALLEL_STARTUP` onwards) — Linux 6.5's design, which overlaps
//!   the APs' start-up latency (seed 003).

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use bootproto::strategy::Kick;

use crate::counts::WorkCounts;
use crate::error::HotplugError;
use crate::masks::MaskEngine;
use crate::vocab::CpuState;

/// When a registered callback runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    /// On the boot CPU before the kick (`CPUHP_BP_PREPARE_DYN`: allocate per-CPU
    /// data); teardown after the CPU is stopped.
    Prepare,
    /// On the new CPU once alive, before it is online (`CPUHP_AP_*_STARTING`);
    /// teardown while it is dying.
    Starting,
    /// After the CPU is online (`CPUHP_AP_ONLINE_DYN`); teardown first on the
    /// way down.
    Online,
}

/// The architecture's part of bringing a CPU up or down. The kernel drives real
/// APs; the simulator advances virtual time; the CLI does nothing.
pub trait Platform {
    /// Sends the start signal to `cpu` without waiting for it.
    fn kick(&mut self, cpu: usize) -> Result<(), String>;
    /// Waits until `cpu` reports it is running.
    fn wait_alive(&mut self, cpu: usize) -> Result<(), String>;
    /// Runs the delay-loop calibration on `cpu` (seed 002).
    fn calibrate(&mut self, _cpu: usize) -> Result<(), String> {
        Ok(())
    }
    /// Stops `cpu` (teardown of the kick).
    fn stop(&mut self, _cpu: usize) -> Result<(), String> {
        Ok(())
    }
    /// A monotonic clock in nanoseconds, used to time mask updates; 0 if none.
    fn now_ns(&mut self) -> u64 {
        0
    }
    /// Told the work of each mask update, e.g. to charge it in virtual time.
    fn masks_updated(&mut self, _cpu: usize, _work: &WorkCounts) {}
}

/// A callback's body: gets the platform and the CPU; an `Err` aborts the step.
pub type Callback<P> = Box<dyn FnMut(&mut P, usize) -> Result<(), String>>;

struct Registered<P> {
    name: &'static str,
    stage: Stage,
    startup: Option<Callback<P>>,
    teardown: Option<Callback<P>>,
}

/// What a bring-up did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BringupReport {
    /// CPUs brought online, in the order they came online.
    pub onlined: Vec<usize>,
    /// CPUs that failed and were rolled back to offline.
    pub failed: Vec<(usize, HotplugError)>,
    /// Mask-update work summed over the onlined CPUs.
    pub work: WorkCounts,
    /// Time spent in mask updates while onlining, by the platform's clock.
    pub mask_update_ns: u64,
    /// CPUs taken down by [`Hotplug::cpu_down`].
    pub offlined: usize,
    /// Mask-update work of those take-downs.
    pub offline_work: WorkCounts,
    /// Time spent in their mask updates, by the platform's clock.
    pub offline_ns: u64,
}

/// The state machine for every CPU of a machine.
pub struct Hotplug<P: Platform> {
    platform: P,
    engine: MaskEngine,
    state: Vec<CpuState>,
    callbacks: Vec<Registered<P>>,
    report: BringupReport,
}

impl<P: Platform> Hotplug<P> {
    /// A machine whose CPUs are offline except those online in `engine` (the
    /// boot CPU).
    pub fn new(platform: P, engine: MaskEngine) -> Self {
        let nr = engine.present().last().map_or(0, |l| l + 1);
        let mut state = vec![CpuState::Offline; nr];
        for cpu in engine.online_mask().iter() {
            state[cpu] = CpuState::Online;
        }
        Hotplug {
            platform,
            engine,
            state,
            callbacks: Vec::new(),
            report: BringupReport::default(),
        }
    }

    /// Registers callbacks for `stage` (like `cpuhp_setup_state_nocalls`). They
    /// run after those already registered for the stage on the way up and before
    /// them on the way down. CPUs already online are not called.
    pub fn register(
        &mut self,
        name: &'static str,
        stage: Stage,
        startup: Option<Callback<P>>,
        teardown: Option<Callback<P>>,
    ) {
        let at = self
            .callbacks
            .iter()
            .position(|c| c.stage > stage)
            .unwrap_or(self.callbacks.len());
        self.callbacks.insert(
            at,
            Registered {
                name,
                stage,
                startup,
                teardown,
            },
        );
    }

    /// The state of `cpu` (`None` if it is not a present CPU).
    pub fn state(&self, cpu: usize) -> Option<CpuState> {
        if self.engine.present().contains(cpu) {
            self.state.get(cpu).copied()
        } else {
            None
        }
    }

    /// The mask engine (read the masks here).
    pub fn engine(&self) -> &MaskEngine {
        &self.engine
    }

    /// The platform.
    pub fn platform(&self) -> &P {
        &self.platform
    }

    /// The platform, mutably.
    pub fn platform_mut(&mut self) -> &mut P {
        &mut self.platform
    }

    /// Everything done so far: CPUs onlined by `cpu_up` / `finish_up` and the
    /// bring-ups, failures, CPUs taken down, mask work and time of each.
    pub fn report(&self) -> &BringupReport {
        &self.report
    }

    /// Gives back the platform and engine.
    pub fn into_parts(self) -> (P, MaskEngine) {
        (self.platform, self.engine)
    }

    fn expect(&self, cpu: usize, want: CpuState, step: &'static str) -> Result<(), HotplugError> {
        match self.state(cpu) {
            None => Err(HotplugError::UnknownCpu(cpu)),
            Some(s) if s == want => Ok(()),
            Some(CpuState::Online) if step == "kick" => Err(HotplugError::AlreadyOnline(cpu)),
            Some(CpuState::Offline) if step == "take down" => {
                Err(HotplugError::AlreadyOffline(cpu))
            }
            Some(state) => Err(HotplugError::WrongState { cpu, state, step }),
        }
    }

    /// Runs the startup callbacks of `stage`; on failure, tears down the ones
    /// that ran, in reverse, and reports the failure.
    fn run_startups(&mut self, cpu: usize, stage: Stage) -> Result<(), HotplugError> {
        let indices: Vec<usize> = (0..self.callbacks.len())
            .filter(|&i| self.callbacks[i].stage == stage)
            .collect();
        for (done, &i) in indices.iter().enumerate() {
            let cb = &mut self.callbacks[i];
            if let Some(f) = cb.startup.as_mut() {
                if let Err(message) = f(&mut self.platform, cpu) {
                    let name = cb.name;
                    for &j in indices[..done].iter().rev() {
                        if let Some(t) = self.callbacks[j].teardown.as_mut() {
                            let _ = t(&mut self.platform, cpu);
                        }
                    }
                    return Err(HotplugError::Callback { cpu, name, message });
                }
            }
        }
        Ok(())
    }

    /// Runs the teardown callbacks of `stage` in reverse registration order.
    /// Teardowns cannot veto (as in Linux); their errors are ignored.
    fn run_teardowns(&mut self, cpu: usize, stage: Stage) {
        for i in (0..self.callbacks.len()).rev() {
            if self.callbacks[i].stage == stage {
                if let Some(t) = self.callbacks[i].teardown.as_mut() {
                    let _ = t(&mut self.platform, cpu);
                }
            }
        }
    }

    /// Offline → kicked: prepare callbacks, then the platform's kick.
    pub fn kick(&mut self, cpu: usize) -> Result<(), HotplugError> {
        self.expect(cpu, CpuState::Offline, "kick")?;
        self.run_startups(cpu, Stage::Prepare)?;
        if let Err(message) = self.platform.kick(cpu) {
            self.run_teardowns(cpu, Stage::Prepare);
            return Err(HotplugError::Platform {
                cpu,
                step: "kick",
                message,
            });
        }
        self.state[cpu] = CpuState::Kicked;
        Ok(())
    }

    /// Kicked → alive → online: wait for the CPU, calibrate, starting
    /// callbacks, masks, online callbacks. On failure the CPU is rolled back to
    /// offline.
    pub fn finish_up(&mut self, cpu: usize) -> Result<(), HotplugError> {
        self.expect(cpu, CpuState::Kicked, "finish bring-up")?;
        let result = self.kicked_to_online(cpu);
        if result.is_err() {
            self.rollback(cpu);
        }
        result
    }

    fn kicked_to_online(&mut self, cpu: usize) -> Result<(), HotplugError> {
        let platform_err =
            |step: &'static str| move |message| HotplugError::Platform { cpu, step, message };
        self.platform
            .wait_alive(cpu)
            .map_err(platform_err("wait for alive"))?;
        self.platform
            .calibrate(cpu)
            .map_err(platform_err("calibrate"))?;
        self.run_startups(cpu, Stage::Starting)?;
        self.state[cpu] = CpuState::Alive;
        let t0 = self.platform.now_ns();
        let work = self.engine.online(cpu)?;
        let t1 = self.platform.now_ns();
        self.platform.masks_updated(cpu, &work);
        self.state[cpu] = CpuState::Online;
        if let Err(e) = self.run_startups(cpu, Stage::Online) {
            // Undo the masks; the rest is rolled back by the caller.
            let _ = self.engine.offline(cpu);
            self.state[cpu] = CpuState::Alive;
            return Err(e);
        }
        self.report.onlined.push(cpu);
        self.report.work += work;
        self.report.mask_update_ns += t1.saturating_sub(t0);
        Ok(())
    }

    /// Takes a CPU that failed part-way back to offline.
    fn rollback(&mut self, cpu: usize) {
        if self.state[cpu] == CpuState::Alive {
            self.run_teardowns(cpu, Stage::Starting);
            self.state[cpu] = CpuState::Kicked;
        }
        if self.state[cpu] == CpuState::Kicked {
            let _ = self.platform.stop(cpu);
            self.run_teardowns(cpu, Stage::Prepare);
            self.state[cpu] = CpuState::Offline;
        }
    }

    /// Offline → online in one go (`cpu_up`).
    pub fn cpu_up(&mut self, cpu: usize) -> Result<(), HotplugError> {
        self.kick(cpu)?;
        self.finish_up(cpu)
    }

    /// Online → offline (`cpu_down`): online teardowns, masks, starting
    /// teardowns, stop, prepare teardowns. Refuses the boot CPU and the last
    /// online CPU, leaving everything unchanged.
    pub fn cpu_down(&mut self, cpu: usize) -> Result<WorkCounts, HotplugError> {
        self.expect(cpu, CpuState::Online, "take down")?;
        // Check the refusals before any teardown runs.
        self.engine.can_offline(cpu)?;
        self.run_teardowns(cpu, Stage::Online);
        let t0 = self.platform.now_ns();
        let work = self.engine.offline(cpu)?;
        let t1 = self.platform.now_ns();
        self.platform.masks_updated(cpu, &work);
        self.report.offlined += 1;
        self.report.offline_work += work;
        self.report.offline_ns += t1.saturating_sub(t0);
        self.state[cpu] = CpuState::Alive;
        self.rollback(cpu);
        Ok(work)
    }

    /// Brings every present offline CPU up in the given order: the one
    /// entry point for callers that take the order as a [`Kick`].
    pub fn bringup(&mut self, kick: Kick) -> BringupReport {
        match kick {
            Kick::Serial => self.bringup_serial(),
            Kick::Parallel => self.bringup_parallel(),
        }
    }

    /// Brings every present offline CPU up, one after the other (each is
    /// waited for before the next is kicked). Failures are recorded, not fatal.
    pub fn bringup_serial(&mut self) -> BringupReport {
        let before = self.report.clone();
        let cpus: Vec<usize> = self.offline_cpus();
        for cpu in cpus {
            if let Err(e) = self.cpu_up(cpu) {
                self.report.failed.push((cpu, e));
            }
        }
        self.since(before)
    }

    /// Kicks every present offline CPU first, then waits for and completes each
    /// in turn (Linux 6.5's parallel prefix). Failures are recorded, not fatal.
    pub fn bringup_parallel(&mut self) -> BringupReport {
        let before = self.report.clone();
        let cpus: Vec<usize> = self.offline_cpus();
        let mut kicked = Vec::with_capacity(cpus.len());
        for cpu in cpus {
            match self.kick(cpu) {
                Ok(()) => kicked.push(cpu),
                Err(e) => self.report.failed.push((cpu, e)),
            }
        }
        for cpu in kicked {
            if let Err(e) = self.finish_up(cpu) {
                self.report.failed.push((cpu, e));
            }
        }
        self.since(before)
    }

    fn offline_cpus(&self) -> Vec<usize> {
        self.engine
            .present()
            .iter()
            .filter(|&c| self.state[c] == CpuState::Offline)
            .collect()
    }

    fn since(&self, before: BringupReport) -> BringupReport {
        BringupReport {
            onlined: self.report.onlined[before.onlined.len()..].to_vec(),
            failed: self.report.failed[before.failed.len()..].to_vec(),
            work: self.report.work - before.work,
            mask_update_ns: self.report.mask_update_ns - before.mask_update_ns,
            offlined: self.report.offlined - before.offlined,
            offline_work: self.report.offline_work - before.offline_work,
            offline_ns: self.report.offline_ns - before.offline_ns,
        }
    }
}
