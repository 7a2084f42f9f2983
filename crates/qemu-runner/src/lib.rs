//! Host side of the bare-metal kernel: build the kernel in `kernel/`, boot it under
//! `qemu-system-x86_64 -machine q35` with a chosen CPU / NUMA topology, and parse
//! the `MANYCORE-RESULT {json}` line it prints last. The same QEMU command line
//! can boot a Linux kernel instead, whose `smp: Brought up` line is parsed the
//! same way, for side-by-side comparison.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod machine;
mod parse;
mod qmp;
mod run;

/// The kernel's scheduler-domain lines, read by the one parser of the form it
/// prints them in (`domains::render::compact_lines`).
pub use domains::render::{
    parse_compact_lines as parse_kernel_domains, CompactDomain as KernelDomain,
    CompactDomains as KernelDomains,
};
pub use machine::{Machine, MachineError};
pub use parse::{
    kernel_topology, parse_linux, parse_manycore, ApicBase, CpuFacts, KernelResult, ManycoreOutput,
    PercpuLine, SratRange, Timeline, TopologyLine,
};
pub use qmp::{node_memdevs, system_ram, QemuCpu, QemuTruth, RamRange};
pub use run::{
    build_kernel, default_bios, default_bios_for, kernel_dir, qemu_version, run_linux,
    run_manycore, run_manycore_with_args, Boot, RunError, RunOptions, SEABIOS,
};
