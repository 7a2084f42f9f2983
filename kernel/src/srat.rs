//! SRAT and SLIT parsing from raw table bytes (ACPI 6.5 §5.2.16, §5.2.17).
//! Pure and bounds-checked: a truncated or malformed table yields fewer
//! entries, never a panic. Kept free of kernel dependencies so that host tests
//! (crates/qemu-runner/tests/kernel_parsers.rs) can compile it directly.

use alloc::vec::Vec;

/// SRAT processor affinity (types 0 and 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SratCpu {
    /// APIC id the entry is about.
    pub apic_id: u32,
    /// Proximity domain.
    pub domain: u32,
}

/// SRAT memory affinity (type 1), enabled entries only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SratMem {
    /// Proximity domain.
    pub domain: u32,
    /// First byte.
    pub base: u64,
    /// Length in bytes.
    pub len: u64,
    /// Hot-pluggable range (not populated at boot).
    pub hotplug: bool,
}

fn u32_at(b: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(off..off + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], off: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(off..off + 8)?.try_into().ok()?))
}

/// SRAT entries start after the 36-byte header and 12 reserved bytes.
const SRAT_ENTRIES: usize = 48;

/// Parses SRAT affinity structures (ACPI 6.5 §5.2.16): type 0 (local APIC),
/// 1 (memory), 2 (local x2APIC). Disabled entries are skipped.
pub fn parse_srat(bytes: &[u8], cpus: &mut Vec<SratCpu>, mem: &mut Vec<SratMem>) {
    let mut off = SRAT_ENTRIES;
    while off + 2 <= bytes.len() {
        let kind = bytes[off];
        let len = bytes[off + 1] as usize;
        if len < 2 || off + len > bytes.len() {
            break;
        }
        let e = &bytes[off..off + len];
        match kind {
            0 if len >= 16 => {
                let flags = u32_at(e, 4).unwrap_or(0);
                if flags & 1 != 0 {
                    let domain = e[2] as u32
                        | (e[9] as u32) << 8
                        | (e[10] as u32) << 16
                        | (e[11] as u32) << 24;
                    cpus.push(SratCpu {
                        apic_id: e[3] as u32,
                        domain,
                    });
                }
            }
            1 if len >= 40 => {
                let flags = u32_at(e, 28).unwrap_or(0);
                if flags & 1 != 0 {
                    let base = u32_at(e, 8).unwrap_or(0) as u64
                        | (u32_at(e, 12).unwrap_or(0) as u64) << 32;
                    let size = u32_at(e, 16).unwrap_or(0) as u64
                        | (u32_at(e, 20).unwrap_or(0) as u64) << 32;
                    mem.push(SratMem {
                        domain: u32_at(e, 2).unwrap_or(0),
                        base,
                        len: size,
                        hotplug: flags & 2 != 0,
                    });
                }
            }
            2 if len >= 24 => {
                let flags = u32_at(e, 12).unwrap_or(0);
                if flags & 1 != 0 {
                    cpus.push(SratCpu {
                        apic_id: u32_at(e, 8).unwrap_or(0),
                        domain: u32_at(e, 4).unwrap_or(0),
                    });
                }
            }
            _ => {}
        }
        off += len;
    }
}

/// Parses the SLIT (ACPI 6.5 §5.2.17): a u64 locality count at offset 36 and
/// an N×N byte matrix after it.
pub fn parse_slit(bytes: &[u8]) -> Option<(usize, Vec<u8>)> {
    let n = u64_at(bytes, 36)?;
    let n = usize::try_from(n).ok().filter(|&n| n > 0 && n <= 256)?;
    let matrix = bytes.get(44..44 + n * n)?;
    Some((n, matrix.to_vec()))
}
