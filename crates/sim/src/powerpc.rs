//! powerpc bring-up on the three kinds of firmware Linux runs on, with the
//! topology-mask code of the kernel measured.
//!
//! # What differs per firmware
//!
//! Every powerpc kernel brings CPUs up one at a time: `__cpu_up()`
//! (arch/powerpc/kernel/smp.c) kicks the thread, waits for it to call in
//! and then for it to mark itself online, and the AP updates its topology
//! masks (`add_cpu_to_masks()`) before it does. What the kick is depends on
//! the firmware:
//!
//! - PowerNV (bare metal under OPAL): `pnv_smp_kick_cpu()` asks OPAL where
//!   the thread is (`opal_query_cpu_status()`) and, while it is still held
//!   in skiboot, starts it with `opal_start_cpu()`.
//! - PowerVM LPAR: `smp_pSeries_kick_cpu()` releases a thread that spins in
//!   the kernel's hold loop (`of_spin_mask`: the primary thread of each core
//!   at boot) with a store; every other thread is started by the RTAS
//!   `start-cpu` call, which the partition firmware passes to the
//!   hypervisor.
//! - KVM guest (QEMU's pseries machine): the same pSeries code, but RTAS is
//!   the `H_RTAS` hypercall, which leaves the guest for QEMU's user space
//!   (hw/ppc/spapr_rtas.c `rtas_start_cpu()`) before the vCPU runs.
//!
//! Kernels before 6.0 also poll `cpu_callin_map` every 100 us during boot
//! (`udelay(100)`; Nathan Lynch's "powerpc/smp: poll cpu_callin_map more
//! aggressively in __cpu_up()", Message-ID
//! <20220629205852.4172212-1-nathanl@linux.ibm.com>, spins instead).
//!
//! No source times any of these paths, so each firmware's whole per-CPU
//! cost outside the mask code is one fitted parameter ([`FirmwareFit`]),
//! fitted on one machine of that firmware and carried only to machines of
//! the same firmware.
//!
//! # The mask code of each kernel
//!
//! What the AP's mask update costs is Linux's own `/cpus` walks, counted
//! call by call on the machine's firmware tree by [`crate::linux_walks`]:
//! before seed 000's series (merged for v5.10) every online CPU is walked
//! once or twice per new CPU; after it, only the new CPU and, where CPU
//! nodes have `l2-cache` phandles (PowerVM, PowerNV), one CPU per other L2
//! group of its node. The price of one visit is fitted per firmware with
//! the per-CPU cost, on a machine measured under both kernels (two runs,
//! two unknowns).
//!
//! | firmware | fitted on | why this machine |
//! |---|---|---|
//! | PowerVM | seed 000's 1024-CPU POWER8 LPAR, 233.0 s and 3.71 s | the seed's own log, before and after the series |
//! | KVM guest | the record's 2048-vCPU POWER9 guest, 347.5 s and 5.35 s | the one guest measured before and after the series with log stamps (seed 000's 4096-vCPU figures are prose: "about 30 mins", "6 seconds") |
//! | PowerNV | the record's 80-CPU POWER8 (`powerpc-p8-80-powernv-2019` / `-2022`): 5.3 and 5.19 on the same machine | the one bare-metal machine measured under both mask codes with release kernels (the 160-CPU POWER9's "after" is the series' first version on a development tree) |

use std::sync::OnceLock;

use serde::Serialize;
use topology::Shape;

use crate::costs::{Param, Source, PPC_KICK_NS};
pub use crate::linux_walks::{Firmware, Kernel};

use crate::linux_walks;
use crate::machines::SeedMachine;
use crate::record::{self, RecordError, Role};
use crate::SimError;

impl Firmware {
    /// The spelling of the record's `sim.firmware` on powerpc rows.
    pub fn name(self) -> &'static str {
        match self {
            Firmware::PowerNv => "powernv",
            Firmware::PowerVm => "powervm",
            Firmware::KvmGuest => "kvm",
        }
    }

    /// Every firmware, in the order the fits are made.
    pub const ALL: [Firmware; 3] = [Firmware::PowerVm, Firmware::KvmGuest, Firmware::PowerNv];

    /// The firmware a record row's `sim.firmware` names.
    pub fn parse(text: &str) -> Result<Firmware, String> {
        Firmware::ALL
            .into_iter()
            .find(|f| f.name() == text)
            .ok_or_else(|| {
                format!("sim.firmware = '{text}' is not one of powernv, powervm, kvm on powerpc")
            })
    }
}

impl Kernel {
    /// The spelling of the record's `sim.linux` / `sim.after_linux` on
    /// powerpc rows.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::V5_9 => "pre-5.10",
            Kernel::V5_10 => "5.10+",
        }
    }

    /// The mask code a record row's `sim.linux` names: `"pre-5.10"` before
    /// seed 000's series, `"5.10+"` (the default) with it.
    pub fn parse(text: Option<&str>) -> Result<Kernel, String> {
        match text {
            None => Ok(Kernel::V5_10),
            Some(t) => [Kernel::V5_9, Kernel::V5_10]
                .into_iter()
                .find(|k| k.name() == t)
                .ok_or_else(|| {
                    format!("sim.linux = '{t}' is not \"pre-5.10\" or \"5.10+\" on powerpc")
                }),
        }
    }
}

/// One firmware's fitted costs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FirmwareFit {
    /// The firmware.
    pub firmware: Firmware,
    /// The machine and runs fitted on.
    pub on: String,
    /// One `/cpus` child visited by Linux's walks.
    pub visit: Param,
    /// Everything else one secondary CPU costs (kick, call-in, the AP's
    /// start-up and online states), the kick's code constant included.
    pub per_cpu: Param,
}

/// One measured bring-up window a fit uses.
struct Measurement {
    label: String,
    shape: Shape,
    kernel: Kernel,
    window_s: f64,
}

/// The fitted costs of every firmware (computed once per process).
pub fn fits() -> Result<&'static [FirmwareFit], SimError> {
    static FITS: OnceLock<Result<Vec<FirmwareFit>, SimError>> = OnceLock::new();
    FITS.get_or_init(fit_all)
        .as_ref()
        .map(Vec::as_slice)
        .map_err(Clone::clone)
}

/// The fitted costs of `firmware`.
pub fn fit_of(firmware: Firmware) -> Result<&'static FirmwareFit, SimError> {
    fits()?
        .iter()
        .find(|f| f.firmware == firmware)
        .ok_or(SimError::Internal("a powerpc firmware without a fit"))
}

fn fit_all() -> Result<Vec<FirmwareFit>, SimError> {
    let rows = record::load()?;
    let mut fits = Vec::new();
    for firmware in Firmware::ALL {
        let mut runs = Vec::new();
        if firmware == Firmware::PowerVm {
            let shape = SeedMachine::Power8Lpar1024.shape();
            runs.push(Measurement {
                label: "seed 000 power8-lpar-1024 before".to_string(),
                shape: shape.clone(),
                kernel: Kernel::V5_9,
                window_s: crate::fit::SEED_000_LPAR_NAIVE_S,
            });
            runs.push(Measurement {
                label: "after".to_string(),
                shape,
                kernel: Kernel::V5_10,
                window_s: crate::fit::SEED_000_LPAR_SCOPED_S,
            });
        }
        for r in &rows {
            let Some(spec) = &r.sim else { continue };
            if spec.role != Role::Fit || spec.platform != "powerpc" {
                continue;
            }
            let fw = Firmware::parse(spec.firmware.as_deref().unwrap_or(""))
                .map_err(|m| row_error(r, m))?;
            if fw != firmware {
                continue;
            }
            runs.extend(measurements(r, spec)?);
        }
        fits.push(solve(firmware, &runs)?);
    }
    Ok(fits)
}

fn row_error(r: &record::Row, message: String) -> SimError {
    SimError::Record(RecordError::Row {
        id: r.id.clone(),
        message,
    })
}

/// The shape a powerpc record row is simulated on.
pub fn shape_of(spec: &record::SimSpec) -> Shape {
    let [packages, cores, threads] = spec.shape;
    Shape::simple(topology::Arch::PowerPc64, packages, cores, threads)
}

/// A record row's measured windows: before and after, or the per-CPU
/// interval over its secondary CPUs.
fn measurements(r: &record::Row, spec: &record::SimSpec) -> Result<Vec<Measurement>, SimError> {
    let before = Kernel::parse(spec.linux.as_deref()).map_err(|m| row_error(r, m))?;
    let after = match spec.after_linux.as_deref() {
        Some(t) => Kernel::parse(Some(t)).map_err(|m| row_error(r, m))?,
        None => before,
    };
    let shape = shape_of(spec);
    let mut out = Vec::new();
    if let (Some(b), Some(a)) = (r.before_s, r.after_s) {
        out.push(Measurement {
            label: format!("record {} before", r.id),
            shape: shape.clone(),
            kernel: before,
            window_s: b,
        });
        out.push(Measurement {
            label: "after".to_string(),
            shape: shape.clone(),
            kernel: after,
            window_s: a,
        });
    }
    if let Some(per_cpu) = r.per_cpu_s {
        out.push(Measurement {
            label: format!("record {}", r.id),
            shape,
            kernel: before,
            window_s: per_cpu * (r.cpus.max(2) - 1) as f64,
        });
    }
    Ok(out)
}

/// Two windows, two unknowns: `T = n·per_cpu + visits·visit`.
fn solve(firmware: Firmware, runs: &[Measurement]) -> Result<FirmwareFit, SimError> {
    let [a, b] = runs else {
        return Err(SimError::Fit(format!(
            "powerpc {}: the fit needs exactly two measured windows (one machine under \
             two mask codes), found {}",
            firmware.name(),
            runs.len()
        )));
    };
    let count = |m: &Measurement| -> Result<(f64, f64), SimError> {
        let topo = m
            .shape
            .build()
            .map_err(|e| SimError::Masks(format!("{e:?}")))?;
        let n = (topo.present().weight().max(2) - 1) as f64;
        let w = linux_walks::count(&topo, firmware, m.kernel)?;
        Ok((n, w.visits as f64))
    };
    let ((n1, v1), (n2, v2)) = (count(a)?, count(b)?);
    let (t1, t2) = (a.window_s * 1e9, b.window_s * 1e9);
    let det = n1 * v2 - n2 * v1;
    let visit = (n1 * t2 - n2 * t1) / det;
    let per_cpu = (t1 * v2 - t2 * v1) / det;
    let on = format!("{}, {}", a.label, b.label);
    // The per-CPU cost holds the kick's code constant, so it must exceed it.
    for (what, ns, floor) in [
        ("visit", visit, 0.0),
        ("per-CPU cost", per_cpu, PPC_KICK_NS),
    ] {
        if !(ns.is_finite() && ns > floor) {
            return Err(SimError::Fit(format!(
                "powerpc {} {what} comes out at {ns} ns on {on}: not a positive cost",
                firmware.name()
            )));
        }
    }
    let text = format!(
        "{}: two windows ({:.3} s, {:.3} s), two unknowns, with Linux's /cpus visits counted \
         for {} ({:.0} and {:.0})",
        on,
        a.window_s,
        b.window_s,
        firmware.name(),
        v1,
        v2
    );
    Ok(FirmwareFit {
        firmware,
        on,
        visit: Param::new(visit, Source::Fitted(text.clone())),
        per_cpu: Param::new(per_cpu, Source::Fitted(text)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each firmware's fit reproduces both of its windows exactly (the
    /// closed form), and the names round-trip.
    #[test]
    fn every_firmware_fits_its_two_windows() {
        for f in Firmware::ALL {
            assert_eq!(Firmware::parse(f.name()), Ok(f));
            let fit = fit_of(f).unwrap();
            assert!(fit.visit.ns > 0.0 && fit.per_cpu.ns > 0.0, "{fit:?}");
        }
        assert!(Firmware::parse("opal").unwrap_err().contains("'opal'"));
        assert_eq!(Kernel::parse(None), Ok(Kernel::V5_10));
        assert_eq!(Kernel::parse(Some("pre-5.10")), Ok(Kernel::V5_9));
        assert!(Kernel::parse(Some("5.9")).is_err());
    }
}
