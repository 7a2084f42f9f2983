//! Memory time an ITS spends translating one interrupt, local against remote.
//!
//! The model: translating an MSI reads the device table entry (two reads
//! when the table is two-level: the first-level entry, then the
//! second-level page), the device's interrupt translation table (ITT)
//! entry, and the collection table entry; the command queue is not read per
//! interrupt. No read hits an ITS cache (an upper bound: real ITSes cache
//! translations). A read at SLIT distance `d` takes `local_ns * d / 10`,
//! the SLIT's own definition of distance as latency relative to local.
//!
//! [`seed_check`] sets this against seed 004's Apache ab figures. It is a
//! consistency check of orders of magnitude, not a prediction: the seed gives
//! neither the D06's memory latency nor where the tables were before.

use crate::tables::TableKind;
use crate::LOCAL_DISTANCE;

/// What one translation reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Read {
    /// First-level device table entry (two-level tables only).
    DeviceL1,
    /// Device table entry (the second-level page when two-level).
    Device,
    /// The device's ITT entry.
    Itt,
    /// Collection table entry.
    Collection,
}

impl Read {
    /// Name in output.
    pub fn name(self) -> &'static str {
        match self {
            Read::DeviceL1 => "device table level 1",
            Read::Device => "device table entry",
            Read::Itt => "ITT entry",
            Read::Collection => "collection table entry",
        }
    }

    /// Whether Linux allocates what this reads at boot (in `its_probe_one`),
    /// on the probing CPU's node even before seed 004's patch; the others
    /// (second-level device pages, ITTs) are allocated when a device is
    /// probed, on whichever CPU probes it.
    pub fn at_boot(self, indirect: bool) -> bool {
        match self {
            Read::DeviceL1 | Read::Collection => true,
            Read::Device => !indirect,
            Read::Itt => false,
        }
    }

    /// The ITS table that holds it (`None`: the ITT, per device).
    pub fn table(self) -> Option<TableKind> {
        match self {
            Read::DeviceL1 | Read::Device => Some(TableKind::Device),
            Read::Itt => None,
            Read::Collection => Some(TableKind::Collection),
        }
    }
}

/// The reads of one translation.
pub fn reads(indirect_device_table: bool) -> Vec<Read> {
    let mut r = Vec::with_capacity(4);
    if indirect_device_table {
        r.push(Read::DeviceL1);
    }
    r.extend([Read::Device, Read::Itt, Read::Collection]);
    r
}

/// Nanoseconds of one read at SLIT distance `d`.
pub fn read_ns(local_ns: f64, d: u8) -> f64 {
    local_ns * d as f64 / LOCAL_DISTANCE as f64
}

/// Nanoseconds of one translation whose reads are at the given distances.
pub fn translation_ns(local_ns: f64, distances: &[u8]) -> f64 {
    distances.iter().map(|&d| read_ns(local_ns, d)).sum()
}

/// Seed 004's measurements (HiSilicon D06, Apache ab, mean of 15 runs).
pub mod seed {
    /// Time per request (mean, concurrent) on 4.20-rc1, ms.
    pub const BEFORE_MS: f64 = 0.02753;
    /// The same with the patch, ms.
    pub const AFTER_MS: f64 = 0.02653;
    /// "vmstat shows around 170K-200K interrupts per second".
    pub const INTERRUPTS_PER_S: (f64, f64) = (170_000.0, 200_000.0);
}

/// The model's per-request saving set against the seed's.
#[derive(Debug, Clone, PartialEq)]
pub struct SeedCheck {
    /// Model: nanoseconds saved per interrupt.
    pub saved_ns_per_interrupt: f64,
    /// Interrupts per request, from the seed's vmstat range and request rate.
    pub interrupts_per_request: (f64, f64),
    /// Model: milliseconds saved per request, over that range.
    pub model_ms: (f64, f64),
    /// Seed: milliseconds saved per request.
    pub seed_ms: f64,
}

/// The saving when the reads done at device-probe time move from distance
/// `remote` to local, the boot-time ones being local either way.
pub fn seed_check(local_ns: f64, remote: u8, indirect: bool) -> SeedCheck {
    let moved = reads(indirect)
        .iter()
        .filter(|r| !r.at_boot(indirect))
        .count();
    let saved = moved as f64 * (read_ns(local_ns, remote) - read_ns(local_ns, LOCAL_DISTANCE));
    // ab's "time per request (mean, concurrent)" is wall time per request,
    // so requests per second is its inverse.
    let requests_per_s = 1000.0 / seed::BEFORE_MS;
    let (lo, hi) = seed::INTERRUPTS_PER_S;
    let per_req = (lo / requests_per_s, hi / requests_per_s);
    SeedCheck {
        saved_ns_per_interrupt: saved,
        interrupts_per_request: per_req,
        model_ms: (saved * per_req.0 * 1e-6, saved * per_req.1 * 1e-6),
        seed_ms: seed::BEFORE_MS - seed::AFTER_MS,
    }
}
