//! Driving the bring-up through the shared `hotplug` crate: its cpuhp-style
//! state machine calls the kernel's [`KernelPlatform`] to kick and wait for
//! each AP, and its incremental mask engine updates the topology masks as each
//! CPU goes online.

use crate::smp::KernelPlatform;
use alloc::boxed::Box;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use bootproto::cmdline::Bringup;
use cpumask::CpuMask;
use hotplug::{Algo, Hotplug, MaskEngine, MaskLevel, Platform, Stage};
use topology::Topology;

/// What a bring-up achieved.
pub struct Outcome {
    /// CPUs online at the end (the boot CPU included).
    pub online: CpuMask,
    /// CPUs that failed, with the reason.
    pub failed: Vec<(usize, String)>,
    /// Time the mask engine spent, when it was used.
    pub mask_update_ns: Option<u64>,
    /// The boot CPU's masks per level after bring-up, one line each.
    pub bsp_masks: Vec<String>,
    /// Why the hotplug engine was not used, if it was not.
    pub note: Option<String>,
}

/// Brings up every present CPU but the boot CPU with `strategy`.
pub fn run(
    platform: KernelPlatform,
    topo: Option<&Topology>,
    strategy: Bringup,
    nr_cpus: usize,
) -> Outcome {
    let engine = match topo {
        Some(t) => MaskEngine::new(t, Algo::Scoped).map_err(|e| e.to_string()),
        None => Err(String::from("the topology model could not be built")),
    };
    match engine {
        Ok(engine) => with_engine(platform, engine, strategy),
        Err(why) => {
            let mut o = without_engine(platform, strategy, nr_cpus);
            o.note = Some(format!(
                "no mask engine ({why}); brought CPUs up without topology masks"
            ));
            o
        }
    }
}

fn with_engine(platform: KernelPlatform, engine: MaskEngine, strategy: Bringup) -> Outcome {
    let mut hp = Hotplug::new(platform, engine);
    hp.register(
        "percpu:online",
        Stage::Online,
        Some(Box::new(|p: &mut KernelPlatform, cpu| {
            if let Some(area) = p.percpu(cpu) {
                area.mark_online();
            }
            Ok(())
        })),
        None,
    );
    // Serial waits for each CPU before kicking the next; parallel and
    // broadcast kick everything first (the platform sends the queued kicks
    // at the first wait), then finish each CPU in turn.
    let report = match strategy {
        Bringup::Serial => hp.bringup_serial(),
        Bringup::Parallel | Bringup::Broadcast => hp.bringup_parallel(),
    };
    let engine = hp.engine();
    let bsp = engine.boot_cpu();
    let bsp_masks = MaskLevel::ALL
        .iter()
        .map(|&l| {
            format!(
                "hotplug: cpu{bsp} {} mask {}",
                l.name(),
                engine.masks(bsp, l).to_list_string()
            )
        })
        .collect();
    Outcome {
        online: *engine.online_mask(),
        failed: report
            .failed
            .iter()
            .map(|(c, e)| (*c, e.to_string()))
            .collect(),
        mask_update_ns: Some(report.mask_update_ns),
        bsp_masks,
        note: None,
    }
}

/// The same sequence without masks, for machines the mask engine rejects.
fn without_engine(mut p: KernelPlatform, strategy: Bringup, nr_cpus: usize) -> Outcome {
    let mut online = CpuMask::single(0);
    let mut failed = Vec::new();
    let mut kicked = Vec::new();
    let finish = |p: &mut KernelPlatform, cpu: usize| -> Result<(), String> {
        p.wait_alive(cpu)?;
        p.calibrate(cpu)?;
        if let Some(a) = p.percpu(cpu) {
            a.mark_online();
        }
        Ok(())
    };
    for cpu in 1..nr_cpus {
        if p.percpu(cpu).is_none() {
            continue;
        }
        if let Err(e) = p.kick(cpu) {
            failed.push((cpu, e));
            continue;
        }
        if strategy == Bringup::Serial {
            match finish(&mut p, cpu) {
                Ok(()) => online.set(cpu),
                Err(e) => {
                    let _ = p.stop(cpu);
                    failed.push((cpu, e));
                }
            }
        } else {
            kicked.push(cpu);
        }
    }
    for cpu in kicked {
        match finish(&mut p, cpu) {
            Ok(()) => online.set(cpu),
            Err(e) => {
                let _ = p.stop(cpu);
                failed.push((cpu, e));
            }
        }
    }
    Outcome {
        online,
        failed,
        mask_update_ns: None,
        bsp_masks: Vec::new(),
        note: None,
    }
}
