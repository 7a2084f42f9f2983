//! The `manycore` binary is linked as `build.rs` says: not
//! position-independent, and without a dynamic loader wherever the C
//! compiler has the static archives (the start-up these save is most of a
//! short run: BENCHMARKS.md).
use std::process::Command;

/// The binary's ELF type and program header types.
fn elf_type_and_segments() -> (u16, Vec<u32>) {
    let bytes = std::fs::read(env!("CARGO_BIN_EXE_manycore")).unwrap();
    assert_eq!(&bytes[..5], b"\x7fELF\x02", "not a 64-bit ELF file");
    let u16_at = |at: usize| u16::from_le_bytes(bytes[at..at + 2].try_into().unwrap());
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
    // ELF64 header: e_type at 16, e_phoff at 32, e_phentsize at 54, e_phnum at 56.
    let (phoff, entsize, count) = (u64_at(32) as usize, u16_at(54) as usize, u16_at(56));
    let segments = (0..usize::from(count))
        .map(|i| u32_at(phoff + i * entsize))
        .collect();
    (u16_at(16), segments)
}

/// Whether the C compiler finds every static archive `build.rs` links.
fn static_archives_installed() -> bool {
    [
        "libc.a",
        "libm.a",
        "librt.a",
        "libpthread.a",
        "libdl.a",
        "libutil.a",
        "liblzma.a",
        "libgcc_eh.a",
    ]
    .iter()
    .all(|a| {
        Command::new("cc")
            .arg(format!("-print-file-name={a}"))
            .output()
            .is_ok_and(|o| {
                std::path::Path::new(String::from_utf8_lossy(&o.stdout).trim()).is_absolute()
            })
    })
}

const ET_EXEC: u16 = 2;
const PT_DYNAMIC: u32 = 2;
const PT_INTERP: u32 = 3;

#[test]
fn the_binary_is_not_position_independent() {
    assert_eq!(elf_type_and_segments().0, ET_EXEC);
}

#[test]
fn the_binary_needs_no_dynamic_loader_where_the_static_archives_are_installed() {
    if !static_archives_installed() {
        eprintln!("SKIPPED: the C compiler finds no static C library here; manycore is linked dynamically");
        return;
    }
    let (_, segments) = elf_type_and_segments();
    assert!(!segments.contains(&PT_INTERP), "{segments:?}");
    assert!(!segments.contains(&PT_DYNAMIC), "{segments:?}");
}
