//! Scheduler-domain flags and how each kernel version encodes them.
//!
//! Internally a domain's flags are a [`Flags`] set in manycore's own bit order,
//! independent of any kernel. Each [`KernelVersion`] has its own ordered flag list
//! (the bit number is the position in the list), its own names, and its own set of
//! flags that "need groups" (the ones `sd_degenerate` / `sd_parent_degenerate`
//! ignore when a domain has a single group).
//!
//! The lists were read from the kernels themselves:
//! - v5.9: `include/linux/sched/topology.h` defines the flags as constants after
//!   `SD_LOAD_BALANCE` was removed (v5.8) and before `sd_flags.h` (v5.10) dropped
//!   `SD_SHARE_POWERDOMAIN`. The POWER9 numbers of seed 000 (2391 = SMT, 2327 =
//!   CACHE, 2071 = DIE, 12801 = NUMA) decode exactly with this list and no other.
//! - v6.8: `include/linux/sched/sd_flags.h` with `SD_ASYM_CPUCAPACITY_FULL` (v5.14)
//!   and `SD_CLUSTER`, still calling the LLC flag `SD_SHARE_PKG_RESOURCES`.
//! - v6.12: the same list with `SD_SHARE_PKG_RESOURCES` renamed `SD_SHARE_LLC` (v6.10).

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use core::str::FromStr;

/// A kernel whose scheduler-domain construction and encodings manycore reproduces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KernelVersion {
    /// Linux 5.9: `/proc/sys/kernel/sched_domain`, decimal flags, `DIE` level.
    V5_9,
    /// Linux 6.8: debugfs, named flags, `PKG` level, `groups_flags`.
    V6_8,
    /// Linux 6.12: as 6.8 plus the `level` file and `SD_SHARE_LLC`.
    V6_12,
}

impl KernelVersion {
    /// Every supported version, oldest first.
    pub const ALL: [KernelVersion; 3] = [
        KernelVersion::V5_9,
        KernelVersion::V6_8,
        KernelVersion::V6_12,
    ];

    /// "5.9", "6.8", "6.12".
    pub fn as_str(self) -> &'static str {
        match self {
            KernelVersion::V5_9 => "5.9",
            KernelVersion::V6_8 => "6.8",
            KernelVersion::V6_12 => "6.12",
        }
    }

    /// The flag list in bit order.
    pub fn flag_table(self) -> &'static [FlagDef] {
        match self {
            KernelVersion::V5_9 => V5_9_FLAGS,
            KernelVersion::V6_8 => V6_8_FLAGS,
            KernelVersion::V6_12 => V6_12_FLAGS,
        }
    }

    /// Name of the package-wide level: `DIE` until v6.7, `PKG` after.
    pub fn package_level_name(self) -> &'static str {
        match self {
            KernelVersion::V5_9 => "DIE",
            _ => "PKG",
        }
    }

    /// Whether `sched_group` carries flags (v6.0+) and debugfs shows `groups_flags` (v6.6+).
    pub fn has_group_flags(self) -> bool {
        self >= KernelVersion::V6_8
    }

    /// Whether debugfs has a `level` file per domain (v6.9+).
    pub fn has_level_file(self) -> bool {
        self >= KernelVersion::V6_12
    }

    /// Whether the kernel has the CLS (cluster) topology level (v5.16+).
    pub fn has_cluster_level(self) -> bool {
        self >= KernelVersion::V6_8
    }

    /// The flags `sd_degenerate` treats as needing at least two groups.
    pub fn degenerate_needs_groups(self) -> Flags {
        match self {
            // v5.9 spelled the list out in sd_degenerate().
            KernelVersion::V5_9 => Flags::of(&[
                Flag::BalanceNewidle,
                Flag::BalanceFork,
                Flag::BalanceExec,
                Flag::ShareCpuCapacity,
                Flag::AsymCpuCapacity,
                Flag::ShareLlc,
                Flag::SharePowerDomain,
            ]),
            _ => self.needs_groups_mask(),
        }
    }

    /// The flags `sd_parent_degenerate` ignores on a parent with one group.
    /// `single_node` is `nr_node_ids == 1`, which on v5.9 also drops `SD_SERIALIZE`.
    pub fn parent_ignores_with_one_group(self, single_node: bool) -> Flags {
        match self {
            KernelVersion::V5_9 => {
                let mut f = Flags::of(&[
                    Flag::BalanceNewidle,
                    Flag::BalanceFork,
                    Flag::BalanceExec,
                    Flag::AsymCpuCapacity,
                    Flag::ShareCpuCapacity,
                    Flag::ShareLlc,
                    Flag::PreferSibling,
                    Flag::SharePowerDomain,
                ]);
                if single_node {
                    f.insert(Flag::Serialize);
                }
                f
            }
            _ => self.needs_groups_mask(),
        }
    }

    /// `SD_DEGENERATE_GROUPS_MASK`: every flag with the `SDF_NEEDS_GROUPS` metaflag.
    fn needs_groups_mask(self) -> Flags {
        let mut f = Flags::EMPTY;
        for d in self.flag_table() {
            if d.needs_groups {
                f.insert(d.flag);
            }
        }
        f
    }

    /// The kernel's integer encoding of `flags` (as `/proc/.../flags` prints it).
    /// Flags this kernel does not have are dropped.
    pub fn encode(self, flags: Flags) -> u32 {
        let mut v = 0;
        for (bit, d) in self.flag_table().iter().enumerate() {
            if flags.contains(d.flag) {
                v |= 1 << bit;
            }
        }
        v
    }

    /// Decodes the kernel's integer encoding; `Err` names the first unknown bit.
    pub fn decode(self, value: u32) -> Result<Flags, u32> {
        let table = self.flag_table();
        let mut f = Flags::EMPTY;
        for bit in 0..32 {
            if value & (1 << bit) != 0 {
                match table.get(bit as usize) {
                    Some(d) => f.insert(d.flag),
                    None => return Err(bit),
                }
            }
        }
        Ok(f)
    }

    /// The names of `flags` in bit order, as debugfs prints them.
    pub fn names(self, flags: Flags) -> impl Iterator<Item = &'static str> {
        self.flag_table()
            .iter()
            .filter(move |d| flags.contains(d.flag))
            .map(|d| d.name)
    }

    /// debugfs's `flags` file text: each name followed by a space, then a newline.
    pub fn debugfs_flags_text(self, flags: Flags) -> String {
        let mut s = String::new();
        for n in self.names(flags) {
            s.push_str(n);
            s.push(' ');
        }
        s.push('\n');
        s
    }

    /// The flag this kernel calls `name` (e.g. `SD_SHARE_LLC`).
    pub fn flag_by_name(self, name: &str) -> Option<Flag> {
        self.flag_table()
            .iter()
            .find(|d| d.name == name)
            .map(|d| d.flag)
    }
}

impl fmt::Display for KernelVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for KernelVersion {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().trim_start_matches('v') {
            "5.9" => Ok(KernelVersion::V5_9),
            "6.8" => Ok(KernelVersion::V6_8),
            "6.12" => Ok(KernelVersion::V6_12),
            other => Err(format!(
                "unsupported kernel version '{other}' (supported: 5.9, 6.8, 6.12)"
            )),
        }
    }
}

/// One scheduler-domain flag, by meaning rather than by any kernel's bit number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Flag {
    /// `SD_BALANCE_NEWIDLE`: balance when about to become idle.
    BalanceNewidle,
    /// `SD_BALANCE_EXEC`: balance on exec.
    BalanceExec,
    /// `SD_BALANCE_FORK`: balance on fork/clone.
    BalanceFork,
    /// `SD_BALANCE_WAKE`: balance on wakeup.
    BalanceWake,
    /// `SD_WAKE_AFFINE`: consider waking the task on the waking CPU.
    WakeAffine,
    /// `SD_ASYM_CPUCAPACITY`: members have different capacities.
    AsymCpuCapacity,
    /// `SD_ASYM_CPUCAPACITY_FULL`: every capacity of the system is in the span.
    AsymCpuCapacityFull,
    /// `SD_SHARE_CPUCAPACITY`: members share a core (SMT).
    ShareCpuCapacity,
    /// `SD_SHARE_POWERDOMAIN` (removed in v5.10).
    SharePowerDomain,
    /// `SD_CLUSTER`: members share a cluster (L2 or LLC tags).
    Cluster,
    /// `SD_SHARE_PKG_RESOURCES`, renamed `SD_SHARE_LLC` in v6.10: members share the LLC.
    ShareLlc,
    /// `SD_SERIALIZE`: only one load-balancing instance at a time.
    Serialize,
    /// `SD_ASYM_PACKING`: pack busy tasks onto higher-priority CPUs.
    AsymPacking,
    /// `SD_PREFER_SIBLING`: spread tasks over sibling groups.
    PreferSibling,
    /// `SD_OVERLAP`: this level's domains overlap (NUMA).
    Overlap,
    /// `SD_NUMA`: a NUMA level.
    Numa,
}

/// A set of [`Flag`]s.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Flags(u32);

impl Flags {
    /// No flag.
    pub const EMPTY: Flags = Flags(0);

    /// The set of the given flags.
    pub fn of(flags: &[Flag]) -> Flags {
        let mut f = Flags::EMPTY;
        for &x in flags {
            f.insert(x);
        }
        f
    }
    /// Adds a flag.
    pub fn insert(&mut self, f: Flag) {
        self.0 |= 1 << f as u8;
    }
    /// Removes a flag.
    pub fn remove(&mut self, f: Flag) {
        self.0 &= !(1 << f as u8);
    }
    /// Whether `f` is in the set.
    pub fn contains(self, f: Flag) -> bool {
        self.0 & (1 << f as u8) != 0
    }
    /// Union.
    pub fn union(self, o: Flags) -> Flags {
        Flags(self.0 | o.0)
    }
    /// Intersection.
    pub fn intersect(self, o: Flags) -> Flags {
        Flags(self.0 & o.0)
    }
    /// `self` without the flags of `o`.
    pub fn without(self, o: Flags) -> Flags {
        Flags(self.0 & !o.0)
    }
    /// Whether any flag is in both sets.
    pub fn intersects(self, o: Flags) -> bool {
        self.0 & o.0 != 0
    }
    /// Whether every flag of `self` is in `o`.
    pub fn is_subset(self, o: Flags) -> bool {
        self.0 & !o.0 == 0
    }
    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

impl fmt::Debug for Flags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = KernelVersion::V6_12.names(*self).collect();
        write!(f, "Flags({})", names.join("|"))
    }
}

/// One entry of a kernel's flag list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlagDef {
    /// The flag.
    pub flag: Flag,
    /// The kernel's name for it, e.g. `SD_SHARE_PKG_RESOURCES`.
    pub name: &'static str,
    /// Whether it has the `SDF_NEEDS_GROUPS` metaflag (v5.10+; on v5.9 see
    /// [`KernelVersion::degenerate_needs_groups`]).
    pub needs_groups: bool,
}

const fn def(flag: Flag, name: &'static str, needs_groups: bool) -> FlagDef {
    FlagDef {
        flag,
        name,
        needs_groups,
    }
}

static V5_9_FLAGS: &[FlagDef] = &[
    def(Flag::BalanceNewidle, "SD_BALANCE_NEWIDLE", true),
    def(Flag::BalanceExec, "SD_BALANCE_EXEC", true),
    def(Flag::BalanceFork, "SD_BALANCE_FORK", true),
    def(Flag::BalanceWake, "SD_BALANCE_WAKE", false),
    def(Flag::WakeAffine, "SD_WAKE_AFFINE", false),
    def(Flag::AsymCpuCapacity, "SD_ASYM_CPUCAPACITY", true),
    def(Flag::ShareCpuCapacity, "SD_SHARE_CPUCAPACITY", true),
    def(Flag::SharePowerDomain, "SD_SHARE_POWERDOMAIN", true),
    def(Flag::ShareLlc, "SD_SHARE_PKG_RESOURCES", true),
    def(Flag::Serialize, "SD_SERIALIZE", false),
    def(Flag::AsymPacking, "SD_ASYM_PACKING", false),
    def(Flag::PreferSibling, "SD_PREFER_SIBLING", false),
    def(Flag::Overlap, "SD_OVERLAP", false),
    def(Flag::Numa, "SD_NUMA", false),
];

/// v6.8's list and v6.12's are the same flags, bits and metaflags; v6.12
/// only renamed SD_SHARE_PKG_RESOURCES to SD_SHARE_LLC.
const fn v6_flags(share_llc: &'static str) -> [FlagDef; 15] {
    [
        def(Flag::BalanceNewidle, "SD_BALANCE_NEWIDLE", true),
        def(Flag::BalanceExec, "SD_BALANCE_EXEC", true),
        def(Flag::BalanceFork, "SD_BALANCE_FORK", true),
        def(Flag::BalanceWake, "SD_BALANCE_WAKE", true),
        def(Flag::WakeAffine, "SD_WAKE_AFFINE", false),
        def(Flag::AsymCpuCapacity, "SD_ASYM_CPUCAPACITY", true),
        def(Flag::AsymCpuCapacityFull, "SD_ASYM_CPUCAPACITY_FULL", true),
        def(Flag::ShareCpuCapacity, "SD_SHARE_CPUCAPACITY", true),
        def(Flag::Cluster, "SD_CLUSTER", true),
        def(Flag::ShareLlc, share_llc, true),
        def(Flag::Serialize, "SD_SERIALIZE", true),
        def(Flag::AsymPacking, "SD_ASYM_PACKING", true),
        def(Flag::PreferSibling, "SD_PREFER_SIBLING", true),
        def(Flag::Overlap, "SD_OVERLAP", true),
        def(Flag::Numa, "SD_NUMA", true),
    ]
}

static V6_8_FLAGS: &[FlagDef] = &v6_flags("SD_SHARE_PKG_RESOURCES");

static V6_12_FLAGS: &[FlagDef] = &v6_flags("SD_SHARE_LLC");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v5_9_decodes_the_seed_numbers_into_the_expected_meanings() {
        let v = KernelVersion::V5_9;
        let smt = v.decode(2391).unwrap();
        assert!(smt.contains(Flag::ShareCpuCapacity) && smt.contains(Flag::ShareLlc));
        let numa = v.decode(12801).unwrap();
        assert_eq!(
            numa,
            Flags::of(&[
                Flag::BalanceNewidle,
                Flag::Serialize,
                Flag::Overlap,
                Flag::Numa
            ])
        );
    }

    #[test]
    fn encode_decode_round_trip_every_version() {
        for v in KernelVersion::ALL {
            let all = v.flag_table().iter().fold(Flags::EMPTY, |mut f, d| {
                f.insert(d.flag);
                f
            });
            assert_eq!(v.decode(v.encode(all)).unwrap(), all);
            assert_eq!(v.encode(all), (1 << v.flag_table().len()) - 1);
            assert!(v.decode(1 << v.flag_table().len()).is_err());
        }
    }

    #[test]
    fn renames_between_versions() {
        let f = Flags::of(&[Flag::ShareLlc]);
        assert_eq!(
            KernelVersion::V6_8.names(f).next(),
            Some("SD_SHARE_PKG_RESOURCES")
        );
        assert_eq!(KernelVersion::V6_12.names(f).next(), Some("SD_SHARE_LLC"));
        assert_eq!(KernelVersion::V5_9.package_level_name(), "DIE");
        assert_eq!(KernelVersion::V6_8.package_level_name(), "PKG");
        assert_eq!("v6.12".parse::<KernelVersion>(), Ok(KernelVersion::V6_12));
        assert!("6.1".parse::<KernelVersion>().is_err());
    }
}
