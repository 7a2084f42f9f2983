//! What an x86 machine's CPUID says about its CPUs, decoded without touching
//! hardware: the APIC-id field widths and the cache hierarchy by Linux 6.12's
//! rules. The bare-metal kernel reads the registers and hands them here; the
//! host tests feed recorded or generated ones. (Its firmware tables, SRAT and
//! SLIT, are decoded by `acpitables`, which `irq` shares.) `no_std` +
//! `alloc`, no unsafe code.
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

extern crate alloc;

pub mod cacheinfo;
pub mod shifts;
