//! A CPU's CPUID as a table the tests write by hand, register by register,
//! from the Intel SDM and the AMD APM encodings.
#![allow(dead_code)] // each test crate uses its own part

use std::collections::BTreeMap;
use std::sync::Arc;

use raw_cpuid::{CpuId, CpuIdReader, CpuIdResult};

/// (leaf, subleaf) → EAX, EBX, ECX, EDX; a pair not in the table reads as
/// zeros, as AMD answers a leaf it does not have.
pub type Leaves = BTreeMap<(u32, u32), [u32; 4]>;

/// A table shared by the reader closures made from it.
#[derive(Clone, Debug, Default)]
pub struct Table(pub Arc<Leaves>);

impl Table {
    pub fn new(leaves: Leaves) -> Table {
        Table(Arc::new(leaves))
    }

    pub fn reader(&self) -> impl CpuIdReader {
        let t = self.0.clone();
        move |leaf: u32, sub: u32| {
            let [eax, ebx, ecx, edx] = t.get(&(leaf, sub)).copied().unwrap_or_default();
            CpuIdResult { eax, ebx, ecx, edx }
        }
    }

    pub fn cpuid(&self) -> CpuId<impl CpuIdReader> {
        CpuId::with_cpuid_reader(self.reader())
    }
}

/// Vendor string registers (EBX, EDX, ECX order in the string).
pub fn vendor(s: &[u8; 12]) -> [u32; 3] {
    let w = |i: usize| u32::from_le_bytes([s[i], s[i + 1], s[i + 2], s[i + 3]]);
    [w(0), w(4), w(8)]
}

/// Leaf 0 with the highest basic leaf `max` and a vendor.
pub fn leaf0(t: &mut Leaves, max: u32, v: &[u8; 12]) {
    let [b, d, c] = vendor(v);
    t.insert((0, 0), [max, b, c, d]);
}

/// Leaf 1's EAX for a family / model, as the SDM and APM split them.
pub fn signature(family: u32, model: u32) -> u32 {
    let (base_family, ext_family) = if family >= 0xf {
        (0xf, family - 0xf)
    } else {
        (family, 0)
    };
    (ext_family << 20) | ((model >> 4) << 16) | (base_family << 8) | ((model & 0xf) << 4)
}
