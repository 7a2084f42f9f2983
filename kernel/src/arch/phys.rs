//! Typed access to identity-mapped physical memory: the PVH start info, and
//! the RAM per node from which per-CPU areas and stacks are placed.

use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, Ordering};
use nodemem::{AllocError, NodeMem, PAGE_SIZE};
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

/// Where [`PhysMem::alloc_percpu`] put a CPU's memory: its per-CPU area
/// page, and below it the stack, in one frame.
#[derive(Clone, Copy, Debug)]
pub struct Placement {
    /// The per-CPU area's address.
    pub area: u64,
    /// The stack `[base, top)`.
    pub stack: (u64, u64),
    /// The node the frame came from (the CPU's own unless it fell back).
    pub node: u32,
}

/// A CPU stack that [`PhysMem`] handed out and nothing else uses: only it
/// makes one, and giving an AP its stack (`boot::set_ap_slot`) consumes it.
#[derive(Debug)]
pub struct Stack {
    top: u64,
}

impl Stack {
    /// The top of the stack (exclusive), 16-byte aligned.
    pub fn top(&self) -> u64 {
        self.top
    }
}

/// The machine's RAM, handed out by node. Built once, from the PVH memory
/// map's usable RAM inside the identity map, with the first MiB and the
/// kernel image and heap held back: so every frame it gives is identity-mapped
/// RAM nobody else owns, which is what makes placing a value there safe.
pub struct PhysMem {
    mem: NodeMem,
}

static PHYS_MEM_BUILT: AtomicBool = AtomicBool::new(false);

impl PhysMem {
    /// The RAM in `memmap` (PVH/E820 entries of type 1), split by `nodes`
    /// ranges (node, base, length) — everything on node 0 when there are
    /// none. `None` when it was built before: two would hand out the same RAM.
    pub fn new(memmap: &[(u64, u64, u32)], nodes: &[(u32, u64, u64)]) -> Option<PhysMem> {
        if PHYS_MEM_BUILT.swap(true, Ordering::AcqRel) {
            return None;
        }
        let limit = (super::boot::IDENTITY_GIB as u64) << 30;
        let mut mem = NodeMem::new();
        for &(base, len, _) in memmap.iter().filter(|e| e.2 == 1) {
            let end = base.saturating_add(len).min(limit);
            if nodes.is_empty() && base < end {
                let _ = mem.add_range(0, base, end - base);
            }
            for &(node, nbase, nlen) in nodes {
                let (s, e) = (base.max(nbase), end.min(nbase.saturating_add(nlen)));
                if s < e {
                    let _ = mem.add_range(node, s, e - s);
                }
            }
        }
        mem.reserve(0, 1 << 20);
        let (ks, ke) = super::heap::kernel_range();
        mem.reserve(ks, ke - ks);
        Some(PhysMem { mem })
    }

    /// Node distances for the fallback order (see `NodeMem::set_distances`).
    pub fn set_distances(&mut self, ids: &[u32], matrix: &[u8]) {
        self.mem.set_distances(ids, matrix);
    }

    /// Nodes with memory.
    pub fn nodes(&self) -> Vec<u32> {
        self.mem.nodes().collect()
    }

    /// Bytes of RAM on `node`.
    pub fn total_bytes(&self, node: u32) -> u64 {
        self.mem.total_bytes(node)
    }

    /// Bytes still free on `node`.
    pub fn free_bytes(&self, node: u32) -> u64 {
        self.mem.free_bytes(node)
    }

    /// Fault injection: takes all but `keep` bytes of `node`'s free memory for
    /// good. Free memory is in several ranges, so it goes in shrinking pieces.
    pub fn leak_all_but(&mut self, node: u32, keep: u64) {
        let mut want = self.mem.free_bytes(node).saturating_sub(keep) & !(PAGE_SIZE - 1);
        while want >= PAGE_SIZE {
            if self.mem.alloc_exact(node, want, PAGE_SIZE).is_err() {
                want = (want / 2) & !(PAGE_SIZE - 1);
                continue;
            }
            want = self.mem.free_bytes(node).saturating_sub(keep) & !(PAGE_SIZE - 1);
        }
    }

    /// One frame on `node` (or the nearest node with room) holding a stack of
    /// `stack_bytes` and, above it, a page with the value `make` builds from
    /// where they are. Per-CPU areas are never freed, hence `'static`.
    pub fn alloc_percpu<T: Sync>(
        &mut self,
        node: u32,
        stack_bytes: u64,
        make: impl FnOnce(Placement) -> T,
    ) -> Result<(&'static T, Stack), AllocError> {
        if core::mem::size_of::<T>() as u64 > PAGE_SIZE
            || !PAGE_SIZE.is_multiple_of(core::mem::align_of::<T>() as u64)
            || !stack_bytes.is_multiple_of(PAGE_SIZE)
        {
            return Err(AllocError::BadAlign(PAGE_SIZE));
        }
        let frame = self.mem.alloc(node, stack_bytes + PAGE_SIZE, PAGE_SIZE)?;
        let area = frame.addr + stack_bytes;
        let value = make(Placement {
            area,
            stack: (frame.addr, area),
            node: frame.node,
        });
        let ptr = area as *mut T;
        // SAFETY: the frame came from this allocator, which only holds
        // identity-mapped usable RAM that no one else owns (see `new`), and
        // hands each byte out once; the page at `area` is page-aligned and at
        // least as large and aligned as `T` (checked above).
        let placed = unsafe {
            ptr.write(value);
            &*ptr
        };
        Ok((placed, Stack { top: area & !0xf }))
    }
}
