//! Driving the bring-up through the shared `hotplug` crate: its cpuhp-style
//! state machine calls the kernel's [`KernelPlatform`] to kick and wait for
//! each AP, and its incremental mask engine, on the machine's x86 description
//! (`hotplug::X86Description`), updates the topology masks as each CPU goes
//! online. There is no other path: the engine takes any x86 machine.

use crate::smp::KernelPlatform;
use alloc::boxed::Box;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use bootproto::cmdline::Bringup;
use bootproto::report::BspTime;
use cpumask::CpuMask;
use hotplug::{Hotplug, MaskEngine, MaskLevel, Stage};

/// What a bring-up achieved.
pub struct Outcome {
    /// CPUs online at the end (the boot CPU included).
    pub online: CpuMask,
    /// CPUs that failed, with the reason.
    pub failed: Vec<(usize, String)>,
    /// Time the mask engine spent.
    pub mask_update_ns: u64,
    /// The boot CPU's masks per level after bring-up, one line each.
    pub bsp_masks: Vec<String>,
    /// Where the boot CPU's own time went.
    pub bsp_time: BspTime,
}

/// Brings up every present CPU but the boot CPU with `strategy`, the
/// engine updating the topology masks as each goes online.
pub fn run(platform: KernelPlatform, engine: MaskEngine, strategy: Bringup) -> Outcome {
    with_engine(platform, engine, strategy)
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
    let report = hp.bringup(strategy.order());
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
        mask_update_ns: report.mask_update_ns,
        bsp_masks,
        bsp_time: hp.platform().bsp_time(),
    }
}
