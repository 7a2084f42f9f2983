//! The words the other modules share: which topology mask, and where a CPU is
//! in its bring-up. A leaf module (it uses nothing else in the crate), so that
//! the counters, the errors, the firmware descriptions, the mask engine and
//! the state machine can all name them without depending on each other.

/// One of the masks the topology code maintains for every online CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MaskLevel {
    /// SMT siblings (`cpu_sibling_mask`, `topology_sibling_cpumask`).
    Smt,
    /// CPUs sharing the L2: a POWER9/10 big core's thread groups, or the
    /// sharers of the level-2 cache, else the SMT siblings (`cpu_l2_cache_mask`).
    L2,
    /// The coregroup (`cpu_coregroup_mask`, POWER10's MC level); the L2 mask on
    /// firmware without coregroup ids, as in Linux.
    Coregroup,
    /// The package / chip (`cpu_core_mask`, `topology_core_cpumask`).
    Package,
    /// The NUMA node (`cpumask_of_node`, restricted to online CPUs).
    Node,
    /// Sharers of the last-level cache (outermost cache of level ≥ 2), else the
    /// SMT siblings.
    Llc,
}

impl MaskLevel {
    /// Number of levels.
    pub const COUNT: usize = 6;
    /// Every level, in Linux's update order.
    pub const ALL: [MaskLevel; MaskLevel::COUNT] = [
        MaskLevel::Smt,
        MaskLevel::L2,
        MaskLevel::Coregroup,
        MaskLevel::Package,
        MaskLevel::Node,
        MaskLevel::Llc,
    ];

    /// Lower-case name used in text and JSON output.
    pub fn name(self) -> &'static str {
        match self {
            MaskLevel::Smt => "smt",
            MaskLevel::L2 => "l2",
            MaskLevel::Coregroup => "coregroup",
            MaskLevel::Package => "package",
            MaskLevel::Node => "node",
            MaskLevel::Llc => "llc",
        }
    }
}

/// Where a CPU is in its bring-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CpuState {
    /// Not running.
    Offline,
    /// Prepared and sent its start signal (INIT/SIPI, RTAS start-cpu, PSCI CPU_ON).
    Kicked,
    /// Running its own start-up code: reported alive and calibrated.
    Alive,
    /// In the online set, its topology masks updated, online callbacks run.
    Online,
}

impl CpuState {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            CpuState::Offline => "offline",
            CpuState::Kicked => "kicked",
            CpuState::Alive => "alive",
            CpuState::Online => "online",
        }
    }
}
