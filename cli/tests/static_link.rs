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

/// A `.tar.xz` snapshot (its blocks checked by CRC-64, as `xz` writes by
/// default) reads through the binary, whose CRC-64 is its own
/// (`main.rs`: `lzma_crc64`), as this test process reads it through
/// liblzma's: the same machine, so every block's check agreed.
#[test]
fn a_tar_xz_snapshot_reads_through_the_binarys_crc64_as_through_liblzmas() {
    let capture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../crates/readers/tests/data/captures/nexus9.tar.xz");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_manycore"))
        .args(["topo", "--format", "synthetic", "--sysfs"])
        .arg(&capture)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}: {stderr}", capture.display());
    let topo = readers::sysfs::read_path(&capture).unwrap();
    let expected = readers::synthetic::write(&topo).unwrap() + "\n";
    assert_eq!(String::from_utf8_lossy(&out.stdout), expected);
}

/// Linked statically, the binary holds no liblzma CRC-64 of its own, so
/// not its constructor, which runs `cpuid` in every run.
#[test]
fn a_static_binary_holds_no_liblzma_crc64_constructor() {
    if env!("MANYCORE_LINK") != "static" {
        eprintln!("SKIPPED: manycore is linked {}", env!("MANYCORE_LINK"));
        return;
    }
    let bytes = std::fs::read(env!("CARGO_BIN_EXE_manycore")).unwrap();
    let name = b"crc64_set_func\0";
    assert!(!bytes.windows(name.len()).any(|w| w == name));
}
