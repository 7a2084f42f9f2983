//! The architecture of a dump without a usable `proc/cpuinfo`, from what
//! only an x86 kernel writes under `sys/`.
//!
//! Tools that copy sysfs alone (container runtimes' test trees, ghw-style
//! snapshots made without procfs) leave the reader no cpuinfo to name the
//! architecture, yet x86 needs its own rules (its clusters, see
//! [`super::clusters`]). Three signs, each written only by x86 code in Linux:
//! - `cpu/modalias` starting `cpu:type:x86,` (`CPU_FEATURE_TYPEFMT` in
//!   arch/x86/include/asm/cpufeature.h; other architectures print their ELF
//!   platform name there, e.g. `aarch64`) or, before the generic CPU
//!   autoprobe, `x86cpu:` (arch/x86/kernel/cpu/match.c);
//! - the `cpu/microcode` directory of the x86 microcode loader
//!   (arch/x86/kernel/cpu/microcode/core.c);
//! - the hybrid PMU devices `sys/devices/cpu_core` and `cpu_atom`
//!   (arch/x86/events/intel/core.c).
//!
//! None of them says 32 or 64 bits; a machine this project models is
//! 64-bit, so x86 is read as x86_64. Without any sign the architecture
//! stays unknown.

use topology::Arch;

use super::vfs::Root;
use super::CPU_DIR;
use crate::Error;

/// The architecture the dump's sysfs shows, given the CPU directory's
/// entries: x86_64 on any x86 sign, else unknown.
pub(super) fn arch_of_sysfs(root: &Root, cpu_entries: &[String]) -> Result<Arch, Error> {
    let has = |name: &str| cpu_entries.iter().any(|e| e == name);
    let x86_modalias = has("modalias")
        && root
            .read(&format!("{CPU_DIR}/modalias"))?
            .is_some_and(|text| text.starts_with(b"cpu:type:x86,") || text.starts_with(b"x86cpu:"));
    let x86 = x86_modalias
        || has("microcode")
        || root.exists("sys/devices/cpu_core")?
        || root.exists("sys/devices/cpu_atom")?;
    Ok(if x86 {
        Arch::X86_64
    } else {
        Arch::Other("unknown".into())
    })
}
