//! Topology summary and scheduler domains (integration point for the shared
//! `topology` / `domains` crates).

use crate::firmware::Firmware;
use crate::kprintln;
use crate::machine::CpuInfo;
use cpumask::CpuMask;

/// Prints the topology of the CPUs that came online.
pub fn topology(cpus: &[CpuInfo], online: &CpuMask, _fw: &Firmware, dist: &(usize, alloc::vec::Vec<u8>)) {
    let shifts = crate::arch::cpu::apic_shifts();
    kprintln!(
        "topology: CPUID leaf {:#x}: SMT shift {}, core shift {}, package shift {}",
        shifts.leaf, shifts.smt, shifts.core, shifts.package
    );
    let _ = (cpus, online, dist);
}
