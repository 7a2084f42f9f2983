//! manycore's bare-metal kernel: boots under QEMU by PVH, discovers the machine
//! through ACPI and CPUID, brings up every application processor with a chosen
//! strategy, and prints Linux-like bring-up lines plus one machine-readable
//! result line (`MANYCORE-RESULT {json}`) for the host runner.
#![no_std]
#![no_main]
// Unsafe code lives in the architecture layer alone (`arch`), behind safe
// functions whose obligations are met inside it or proven by a type.
#![deny(unsafe_code)]

extern crate alloc;

#[allow(unsafe_code)]
mod arch;
mod bringup;
mod firmware;
mod machine;
mod report;
mod smp;

use arch::console::{self, EXIT_FAILURE, EXIT_SUCCESS};
use arch::timer;

/// Prints a line with a Linux-style `[seconds.micros]` timestamp.
#[macro_export]
macro_rules! kprintln {
    ($($arg:tt)*) => {{
        let ns = $crate::arch::timer::now_ns();
        $crate::arch::console::print(format_args!(
            "[{:5}.{:06}] {}\n", ns / 1_000_000_000, (ns / 1000) % 1_000_000,
            format_args!($($arg)*)
        ));
    }};
}

/// The boot CPU's kernel, entered from `arch::boot` with the PVH start info.
fn start_kernel(start_info: u32) -> ! {
    timer::mark_boot();
    console::init();
    arch::heap::init();
    arch::idt::init_bsp();
    match machine::run(start_info) {
        Ok(()) => exit(true),
        Err(e) => {
            kprintln!("manycore: fatal: {e}");
            exit(false)
        }
    }
}

fn exit(ok: bool) -> ! {
    console::exit(if ok { EXIT_SUCCESS } else { EXIT_FAILURE })
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    console::emergency_print(format_args!("\nKernel panic - not syncing: {info}\n"));
    console::exit(EXIT_FAILURE)
}
