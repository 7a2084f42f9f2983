//! An x86 machine as its kernel knows it at bring-up, for the mask engine:
//! each CPU's ids from CPUID (core and package from the APIC id's fields, L2
//! and last-level cache ids from the cache leaves' sharing rules) and its
//! node from the ACPI SRAT. Linux on x86 keeps exactly these per CPU
//! (`cpu_data(cpu).topo`) and compares them; there is no firmware tree to
//! walk, so a CPU's ids are one indexed load away.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use crate::counts::LevelWork;
use crate::vocab::MaskLevel;

/// One present CPU's ids. CPUs share a group at a level exactly when their
/// ids there are equal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct X86Cpu {
    /// Logical CPU number.
    pub cpu: u32,
    /// The core: the APIC id without its SMT bits (so unique machine-wide).
    pub core: u32,
    /// The package: the APIC id without its package-internal bits.
    pub package: u32,
    /// The NUMA node.
    pub node: u32,
    /// The L2 instance it shares, if CPUID says (`cpu_l2c_id`); `None` makes
    /// its L2 mask the SMT siblings, as Linux's `cpu_l2c_shared_mask` is then.
    pub l2: Option<u32>,
    /// The last-level cache instance (`cpu_llc_id`); `None`: the SMT siblings.
    pub llc: Option<u32>,
}

/// Every present CPU of an x86 machine, as [`X86Cpu`]s.
#[derive(Debug, Clone, Default)]
pub struct X86Description {
    /// Indexed by logical CPU; `None` for CPUs not present.
    cpus: Vec<Option<X86Cpu>>,
    /// Each core's CPUs, in CPU order.
    siblings: BTreeMap<u32, Vec<usize>>,
}

/// Keys are the ids tagged by what they are, so that a CPU without an L2 id
/// (keyed by its core) never meets a CPU whose L2 id equals that number.
fn tag(t: u64, id: u32) -> u64 {
    (t << 32) | u64::from(id)
}

impl X86Description {
    /// The description of `cpus` (a CPU listed twice keeps its last entry).
    pub fn new(cpus: impl IntoIterator<Item = X86Cpu>) -> Self {
        let mut d = X86Description::default();
        for c in cpus {
            let i = c.cpu as usize;
            if d.cpus.len() <= i {
                d.cpus.resize(i + 1, None);
            }
            d.cpus[i] = Some(c);
        }
        for c in d.cpus.iter().flatten() {
            d.siblings.entry(c.core).or_default().push(c.cpu as usize);
        }
        d
    }

    /// One more than the highest CPU number.
    pub(crate) fn nr(&self) -> usize {
        self.cpus.len()
    }

    /// The present CPUs' numbers.
    pub(crate) fn present(&self) -> impl Iterator<Item = usize> + '_ {
        self.cpus.iter().flatten().map(|c| c.cpu as usize)
    }

    /// `cpu`'s key at `level` (`None` if it is not present).
    pub(crate) fn key(&self, cpu: usize, level: MaskLevel) -> Option<u64> {
        let c = self.cpus.get(cpu).copied().flatten()?;
        let core = tag(1, c.core);
        Some(match level {
            MaskLevel::Smt => core,
            MaskLevel::L2 => c.l2.map_or(core, |id| tag(2, id)),
            // No coregroups on x86: the engine then keys Coregroup by L2.
            MaskLevel::Coregroup => return None,
            MaskLevel::Package => tag(5, c.package),
            MaskLevel::Node => tag(6, c.node),
            MaskLevel::Llc => c.llc.map_or(core, |id| tag(7, id)),
        })
    }

    /// The first SMT sibling of `cpu` (itself included) that satisfies
    /// `pred`, counting each one examined.
    pub(crate) fn find_sibling(
        &self,
        cpu: usize,
        work: &mut LevelWork,
        mut pred: impl FnMut(usize) -> bool,
    ) -> Option<usize> {
        let core = self.cpus.get(cpu).copied().flatten()?.core;
        self.siblings.get(&core)?.iter().copied().find(|&t| {
            work.cpus_scanned += 1;
            pred(t)
        })
    }

    /// `cpu`'s SMT siblings (itself included).
    pub(crate) fn siblings(&self, cpu: usize) -> &[usize] {
        self.cpus
            .get(cpu)
            .copied()
            .flatten()
            .and_then(|c| self.siblings.get(&c.core))
            .map_or(&[], Vec::as_slice)
    }
}
