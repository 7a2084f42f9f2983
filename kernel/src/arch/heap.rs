//! The kernel heap (`alloc` for the shared topology and domain crates): a
//! linked-list allocator over the region the linker script reserves after the
//! image. Exhaustion surfaces as `alloc`'s error handler, which here prints
//! and exits QEMU with failure; per-CPU memory does not come from here but from
//! the per-node frame allocators, whose failures are ordinary errors.

use linked_list_allocator::LockedHeap;

#[global_allocator]
static HEAP: LockedHeap = LockedHeap::empty();

extern "C" {
    static __heap_start: u8;
    static __heap_end: u8;
    static __kernel_start: u8;
    static __kernel_end: u8;
}

/// Physical range of the kernel image plus heap, which no frame allocator may hand out.
pub fn kernel_range() -> (u64, u64) {
    (
        (&raw const __kernel_start) as u64,
        (&raw const __kernel_end) as u64,
    )
}

/// Makes the heap usable. Called once by the BSP before any allocation.
pub fn init() -> usize {
    let start = (&raw const __heap_start) as usize;
    let size = (&raw const __heap_end) as usize - start;
    // SAFETY: the linker script reserves [__heap_start, __heap_end) for the heap
    // alone, inside identity-mapped RAM; `init` runs once before any allocation.
    unsafe { HEAP.lock().init(start as *mut u8, size) };
    size
}

/// Bytes in use on the heap (for the summary).
pub fn used() -> usize {
    HEAP.lock().used()
}
