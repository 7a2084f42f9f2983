//! Typed access to identity-mapped physical memory: the PVH start info, and
//! per-CPU areas placed in frames from the node allocators.

use alloc::vec::Vec;
use pvh::start_info::reader::StartInfoReader;

/// What PVH tells the kernel at entry.
pub struct BootInfo {
    /// Kernel command line ("" if none).
    pub cmdline: &'static str,
    /// RSDP physical address (0 if the loader gave none).
    pub rsdp: u64,
    /// E820-style memory map: (base, length, type); type 1 = usable RAM.
    pub memmap: Vec<(u64, u64, u32)>,
}

/// Reads the PVH start info at `paddr`. `None` if the magic is wrong.
pub fn boot_info(paddr: u32) -> Option<BootInfo> {
    // SAFETY: PVH passes the start info's physical address in ebx; memory is
    // identity-mapped; the reader checks the magic value before trusting it.
    let info = unsafe { StartInfoReader::from_paddr_identity(paddr)? };
    let cmdline = info.cmdline().and_then(|c| c.to_str().ok()).unwrap_or("");
    let memmap = info
        .memmap()
        .iter()
        .map(|e| (e.addr, e.size, e.ty))
        .collect();
    Some(BootInfo {
        cmdline,
        rsdp: info.raw().rsdp_paddr,
        memmap,
    })
}

/// Error from [`place`]: the frame is too small or misaligned for the value.
#[derive(Clone, Copy, Debug)]
pub struct PlaceError;

/// Moves `value` into the frame `[addr, addr + len)` and returns a reference
/// that lives forever (per-CPU areas are never freed).
pub fn place<T: Sync>(addr: u64, len: u64, value: T) -> Result<&'static T, PlaceError> {
    if addr == 0
        || (core::mem::size_of::<T>() as u64) > len
        || !addr.is_multiple_of(core::mem::align_of::<T>() as u64)
    {
        return Err(PlaceError);
    }
    let ptr = addr as *mut T;
    // SAFETY: the frame came from a node allocator, so it is identity-mapped RAM
    // owned by the caller alone; size and alignment were checked above.
    unsafe {
        ptr.write(value);
        Ok(&*ptr)
    }
}
