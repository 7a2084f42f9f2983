//! Which byte order a 64-bit POWER machine runs, from what an input says of it.
//!
//! Nothing in sysfs or cpuinfo states the byte order, so each reader takes it
//! from the best witness it has: `uname -m` as lscpu's `Architecture:` line,
//! hwloc's `Architecture` info or a dump's `proc/hwloc-nofile-info` print it
//! (`ppc64` or `ppc64le`); lscpu's `Byte Order:` line states it; failing
//! those, the processor itself, since Linux builds little-endian kernels only
//! for the processors named below as able to run them.

use topology::Arch;

/// The 64-bit POWER architecture a processor named `cpu` runs when nothing
/// else says which byte order it uses. `cpu` is cpuinfo's `cpu` line, which
/// lscpu prints as its `Model name:`.
///
/// Linux's `CPU_LITTLE_ENDIAN` needs a Book3S 64 processor (so never the
/// Freescale e5500/e6500 or the A2), and its CPU choices for Cell, PPC970 and
/// POWER6 (with the generic "POWER5 and PowerPC 970 and above") are
/// big-endian only (arch/powerpc/platforms/Kconfig.cputype). A POWER7
/// little-endian kernel can be configured, but every distribution's
/// little-endian kernel is the generic "POWER8 and above" one, so a POWER7
/// is taken as big-endian too. POWER8 and later run either; little-endian is
/// what current distributions ship, so it is the default there.
pub(crate) fn power64_of_cpu(cpu: &str) -> Arch {
    const BIG_ENDIAN_ONLY: [&str; 12] = [
        "POWER3", "POWER4", "POWER5", "POWER6", "POWER7", "RS64", "PPC970", "Cell", "PA6T",
        "e5500", "e6500", "A2",
    ];
    if BIG_ENDIAN_ONLY.iter().any(|p| names_processor(cpu, p)) {
        Arch::PowerPc64Be
    } else {
        Arch::PowerPc64
    }
}

/// Whether Linux builds no little-endian kernel at all for the processor
/// named `cpu`: every big-endian processor of [`power64_of_cpu`] but the
/// POWER7, for which one can be configured. Its byte order then needs no
/// other witness, and a reader need not look for one.
pub(crate) fn power64_never_little_endian(cpu: &str) -> bool {
    power64_of_cpu(cpu) == Arch::PowerPc64Be && !names_processor(cpu, "POWER7")
}

/// Whether cpuinfo's `cpu` line names the processor `name`: "POWER7+" and
/// "PPC970MP" name POWER7 and PPC970, a later "POWER70" does not.
fn names_processor(cpu: &str, name: &str) -> bool {
    cpu.trim_start()
        .strip_prefix(name)
        .is_some_and(|rest| !rest.starts_with(|c: char| c.is_ascii_digit()))
}

/// The POWER byte order a `uname -m` name states, as the architecture a
/// 64-bit POWER processor runs: `ppc64le` is little-endian; `ppc64`, and
/// `ppc` (a 32-bit user space on a 64-bit kernel, as `linux32` reports it),
/// are big-endian. `None` for any other name.
pub(crate) fn power64_of_uname(machine: &str) -> Option<Arch> {
    match machine.trim() {
        "ppc64le" | "powerpc64le" => Some(Arch::PowerPc64),
        "ppc64" | "powerpc64" | "ppc" | "powerpc" => Some(Arch::PowerPc64Be),
        _ => None,
    }
}

/// The POWER byte order lscpu's `Byte Order:` value states.
pub(crate) fn power64_of_byte_order(order: &str) -> Option<Arch> {
    match order.trim() {
        "Little Endian" => Some(Arch::PowerPc64),
        "Big Endian" => Some(Arch::PowerPc64Be),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn processors_linux_builds_only_big_endian_kernels_for() {
        // cpuinfo `cpu` lines as Linux's cpu_specs tables name them.
        for be in [
            "POWER7 (architected), altivec supported",
            "POWER7+ (raw), altivec supported",
            "POWER6 (raw), altivec supported",
            "POWER5+ (gs)",
            "POWER4+ (gq)",
            "PPC970MP, altivec supported",
            "Cell Broadband Engine, altivec supported",
            "e6500",
            "A2 (>= DD2)",
        ] {
            assert_eq!(power64_of_cpu(be), Arch::PowerPc64Be, "{be}");
            // Kconfig.cputype offers CPU_LITTLE_ENDIAN for POWER7 alone of these.
            assert_eq!(
                power64_never_little_endian(be),
                !be.starts_with("POWER7"),
                "{be}"
            );
        }
        for either in [
            "POWER8 (raw), altivec supported",
            "POWER8NVL (raw), altivec supported",
            "POWER9 (architected), altivec supported",
            "POWER10 (architected), altivec supported",
            "Power11 (raw), altivec supported",
        ] {
            assert_eq!(power64_of_cpu(either), Arch::PowerPc64, "{either}");
            assert!(!power64_never_little_endian(either), "{either}");
        }
    }
}
