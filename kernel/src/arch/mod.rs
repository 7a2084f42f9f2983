//! The architecture layer: every `unsafe` in the kernel lives under this module.

pub mod apic;
pub mod boot;
pub mod console;
pub mod cpu;
pub mod idt;
pub mod mem;
pub mod timer;

/// Reads a NUL-terminated string at a physical address (identity-mapped), at
/// most `max` bytes; returns "" if it is not UTF-8.
pub fn phys_cstr(paddr: u64, max: usize) -> &'static str {
    if paddr == 0 {
        return "";
    }
    let ptr = paddr as *const u8;
    let mut len = 0;
    // SAFETY: PVH hands us the physical address of the command line, which lies
    // in identity-mapped RAM; we read at most `max` bytes up to the first NUL.
    unsafe {
        while len < max && ptr.add(len).read() != 0 {
            len += 1;
        }
        core::str::from_utf8(core::slice::from_raw_parts(ptr, len)).unwrap_or("")
    }
}
