//! The architecture layer: every `unsafe` in the kernel lives under this module.

pub mod acpi;
pub mod apic;
pub mod boot;
pub mod console;
pub mod cpu;
pub mod heap;
pub mod idt;
pub mod mem;
pub mod phys;
pub mod timer;
