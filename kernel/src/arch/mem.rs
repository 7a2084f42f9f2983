//! The C memory primitives `core` calls into. The host target's `compiler_builtins`
//! leaves them to libc, which a freestanding kernel does not have, so they are
//! written here with `rep movsb`/`rep stosb` (fast on every CPU with ERMSB and
//! a single instruction under TCG).

use core::arch::asm;

/// # Safety
/// Standard `memcpy` contract: valid, non-overlapping regions of `n` bytes.
#[no_mangle]
pub unsafe extern "C" fn memcpy(dest: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    // SAFETY: caller guarantees both regions are valid for `n` bytes.
    unsafe {
        asm!("rep movsb", inout("rcx") n => _, inout("rdi") dest => _, inout("rsi") src => _,
             options(nostack, preserves_flags));
    }
    dest
}

/// # Safety
/// Standard `memmove` contract: valid regions of `n` bytes, possibly overlapping.
#[no_mangle]
pub unsafe extern "C" fn memmove(dest: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    if (dest as usize) <= (src as usize) || (dest as usize) >= (src as usize).wrapping_add(n) {
        // SAFETY: forward copy is safe when dest starts before src or past its end.
        unsafe { memcpy(dest, src, n) }
    } else {
        // SAFETY: backward copy with the direction flag set, restored after; regions valid.
        unsafe {
            asm!("std", "rep movsb", "cld",
                 inout("rcx") n => _,
                 inout("rdi") dest.add(n - 1) => _,
                 inout("rsi") src.add(n - 1) => _,
                 options(nostack));
        }
        dest
    }
}

/// # Safety
/// Standard `memset` contract: `dest` valid for `n` bytes.
#[no_mangle]
pub unsafe extern "C" fn memset(dest: *mut u8, c: i32, n: usize) -> *mut u8 {
    // SAFETY: caller guarantees `dest` is valid for `n` bytes.
    unsafe {
        asm!("rep stosb", inout("rcx") n => _, inout("rdi") dest => _, in("al") c as u8,
             options(nostack, preserves_flags));
    }
    dest
}

/// # Safety
/// Standard `memcmp` contract: both regions valid for `n` bytes.
#[no_mangle]
pub unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    let mut i = 0;
    while i < n {
        // SAFETY: `i < n` and both regions are valid for `n` bytes. Volatile reads keep
        // the compiler from turning this loop back into a call to memcmp.
        let (x, y) = unsafe { (a.add(i).read_volatile(), b.add(i).read_volatile()) };
        if x != y {
            return x as i32 - y as i32;
        }
        i += 1;
    }
    0
}

/// # Safety
/// Same as [`memcmp`].
#[no_mangle]
pub unsafe extern "C" fn bcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    // SAFETY: same contract as memcmp.
    unsafe { memcmp(a, b, n) }
}

/// Unwinding never happens (`panic = "abort"`), but the host `core` references it.
#[no_mangle]
pub extern "C" fn rust_eh_personality() {}

/// The host target's precompiled `alloc` has landing pads that call this; with
/// `panic = "abort"` no unwind ever starts, so reaching it is a bug: park.
#[no_mangle]
pub extern "C" fn _Unwind_Resume() -> ! {
    super::cpu::park()
}

/// # Safety
/// `s` must point at a NUL-terminated string (used by `CStr`).
#[no_mangle]
pub unsafe extern "C" fn strlen(s: *const u8) -> usize {
    let mut n = 0;
    // SAFETY: the caller guarantees a terminating NUL; volatile keeps the
    // compiler from turning this loop into a call to strlen itself.
    unsafe {
        while s.add(n).read_volatile() != 0 {
            n += 1;
        }
    }
    n
}
