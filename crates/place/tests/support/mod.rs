//! What several test files share: a catalogue machine's placement view and
//! the default configuration of a run on it.
use place::run::{machine_for, Config};
use place::{HvParams, Kernel, Lpar, Machine, MachineOptions, Workload};

/// The machine view `kernel` builds on catalogue machine `name`, as a shared
/// LPAR when `lpar` is [`Lpar::Shared`].
pub fn catalogue_machine(name: &str, kernel: Kernel, lpar: Lpar) -> Machine {
    let topo = readers::catalogue::machine(name).unwrap();
    machine_for(
        &topo,
        kernel,
        lpar == Lpar::Shared,
        &MachineOptions::default(),
    )
    .unwrap()
}

/// A traced run of `threads` tasks of `w` for `secs` on `m`, the partition
/// entitled to every VP.
pub fn traced_config(
    m: &Machine,
    kernel: Kernel,
    lpar: Lpar,
    w: Workload,
    threads: u32,
    secs: f64,
) -> Config {
    let mut cfg = Config::new(
        kernel,
        HvParams::defaults(lpar, m.vp_cpus.len()),
        w,
        threads,
        secs,
    );
    cfg.trace = true;
    cfg
}
