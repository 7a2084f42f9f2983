//! A read-ahead worker's own file-descriptor table.
//!
//! Threads that share one descriptor table contend on it for every file:
//! each open and close takes the table's lock, and each system call given a
//! directory descriptor (every `openat2` beneath the dump's root) takes and
//! drops a reference on the shared open file, where a thread alone in its
//! table skips both (the kernel's `fdget` fast path). A worker that fetches
//! tens of thousands of files in a private table leaves the reader's table
//! to the reader alone.
//!
//! The one unsafe call of the crate lives here: `unshare(CLONE_FILES)` is
//! sound only if no descriptor crosses between the tables afterwards, which
//! is what the read-ahead workers do — they hand over bytes, never a
//! descriptor (`vfs::Fetched` holds bytes).
#![allow(unsafe_code)]

/// Gives the calling thread a copy of the process's descriptor table, its
/// own from then on; does nothing where the kernel refuses (a seccomp
/// filter), which only costs the contention back.
///
/// The copy holds every descriptor the process had open: one that another
/// thread closes meanwhile stays open until this thread ends.
///
/// # Safety
///
/// The calling thread must never pass a descriptor it opens afterwards to
/// another thread, nor use one that another thread opens afterwards (its
/// number would name nothing, or something else, in this table). The
/// descriptors open before the call stay usable: the copy names the same
/// open files.
pub(super) unsafe fn own_table() {
    // SAFETY: the caller's promise above is the condition `unshare_unsafe`
    // states for `FILES`.
    let _ = unsafe { rustix::thread::unshare_unsafe(rustix::thread::UnshareFlags::FILES) };
}
