//! The `manycore` binary is linked as `build.rs` says: not
//! position-independent, and without a dynamic loader wherever the C
//! compiler has the static archives (the start-up these save is most of a
//! short run: BENCHMARKS.md).

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

const ET_EXEC: u16 = 2;
const PT_DYNAMIC: u32 = 2;
const PT_INTERP: u32 = 3;

/// `build.rs` links with `-no-pie` where the target is Linux with glibc.
#[test]
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn the_binary_is_not_position_independent() {
    assert_eq!(elf_type_and_segments().0, ET_EXEC);
}

/// The binary is linked as `build.rs` decided: without a dynamic loader when
/// it found every static archive, with one otherwise (the decision names the
/// archive it missed, printed here; `scripts/install-deps.sh` installs them
/// on Debian).
#[test]
fn the_binary_is_linked_as_build_rs_decided() {
    let decided = env!("MANYCORE_LINK");
    eprintln!("manycore is linked {decided}");
    let (_, segments) = elf_type_and_segments();
    let has_loader = segments.contains(&PT_INTERP) || segments.contains(&PT_DYNAMIC);
    assert_eq!(has_loader, decided != "static", "{decided}: {segments:?}");
}
