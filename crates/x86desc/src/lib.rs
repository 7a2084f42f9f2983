//! What an x86 machine's firmware tables and CPUID say about its CPUs, decoded
//! without touching hardware: SRAT/SLIT bytes, the APIC-id field widths, and
//! the cache hierarchy by Linux 6.12's rules. The bare-metal kernel reads the
//! bytes and registers and hands them here; the host tests feed recorded or
//! generated ones. `no_std` + `alloc`, no unsafe code.
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

extern crate alloc;

pub mod cacheinfo;
pub mod shifts;
pub mod srat;
