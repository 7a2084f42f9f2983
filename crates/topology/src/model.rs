//! The model's types. Built only through [`crate::TopologyBuilder`], so every
//! [`Topology`] satisfies the invariants documented on its fields.

use alloc::string::String;
use alloc::vec::Vec;
use cpumask::{CompactMask, CpuMask};

/// Instruction-set family; selects the scheduler-domain table and the meaning of
/// [`Cpu::hw_id`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Arch {
    /// 64-bit x86 (`x86_64`).
    X86_64,
    /// 32-bit x86 (`i386`..`i686`).
    X86,
    /// 64-bit POWER, little-endian (`ppc64le`).
    PowerPc64,
    /// 64-bit POWER, big-endian (`ppc64`): POWER4-POWER7, PPC970, Cell and
    /// the Freescale e5500/e6500 run nothing else, AIX is big-endian, and
    /// POWER8 and later run either.
    PowerPc64Be,
    /// 32-bit PowerPC.
    PowerPc,
    /// 64-bit Arm (`aarch64`).
    Arm64,
    /// 32-bit Arm.
    Arm,
    /// RISC-V 64.
    RiscV64,
    /// IBM Z.
    S390x,
    /// Itanium.
    Ia64,
    /// LoongArch 64.
    LoongArch64,
    /// SPARC 64.
    Sparc64,
    /// Anything else, by its `uname -m` name.
    Other(String),
}

impl Arch {
    /// Maps a `uname -m` / lscpu "Architecture:" string to an [`Arch`].
    pub fn from_uname(name: &str) -> Arch {
        match name.trim() {
            "x86_64" | "amd64" => Arch::X86_64,
            "i386" | "i486" | "i586" | "i686" | "x86" => Arch::X86,
            "ppc64le" | "powerpc64le" => Arch::PowerPc64,
            "ppc64" | "powerpc64" => Arch::PowerPc64Be,
            "ppc" | "powerpc" => Arch::PowerPc,
            "aarch64" | "arm64" => Arch::Arm64,
            s if s.starts_with("armv") || s == "arm" => Arch::Arm,
            "riscv64" => Arch::RiscV64,
            "s390x" | "s390" => Arch::S390x,
            "ia64" => Arch::Ia64,
            "loongarch64" => Arch::LoongArch64,
            "sparc64" => Arch::Sparc64,
            other => Arch::Other(String::from(other)),
        }
    }

    /// The `uname -m` name (`ppc64le` and `ppc64` for the two POWER byte
    /// orders, as the kernel's `UTS_MACHINE` names them).
    pub fn uname(&self) -> &str {
        match self {
            Arch::X86_64 => "x86_64",
            Arch::X86 => "i686",
            Arch::PowerPc64 => "ppc64le",
            Arch::PowerPc64Be => "ppc64",
            Arch::PowerPc => "ppc",
            Arch::Arm64 => "aarch64",
            Arch::Arm => "armv7l",
            Arch::RiscV64 => "riscv64",
            Arch::S390x => "s390x",
            Arch::Ia64 => "ia64",
            Arch::LoongArch64 => "loongarch64",
            Arch::Sparc64 => "sparc64",
            Arch::Other(s) => s,
        }
    }

    /// The architecture this program was compiled for: a live machine's own.
    /// (`std::env::consts::ARCH` names both POWER byte orders `powerpc64`.)
    pub fn of_build() -> Arch {
        if cfg!(target_arch = "x86_64") {
            Arch::X86_64
        } else if cfg!(target_arch = "x86") {
            Arch::X86
        } else if cfg!(all(target_arch = "powerpc64", target_endian = "little")) {
            Arch::PowerPc64
        } else if cfg!(target_arch = "powerpc64") {
            Arch::PowerPc64Be
        } else if cfg!(target_arch = "powerpc") {
            Arch::PowerPc
        } else if cfg!(target_arch = "aarch64") {
            Arch::Arm64
        } else if cfg!(target_arch = "arm") {
            Arch::Arm
        } else if cfg!(target_arch = "riscv64") {
            Arch::RiscV64
        } else if cfg!(target_arch = "s390x") {
            Arch::S390x
        } else if cfg!(target_arch = "loongarch64") {
            Arch::LoongArch64
        } else if cfg!(target_arch = "sparc64") {
            Arch::Sparc64
        } else {
            Arch::Other(String::from("unknown"))
        }
    }

    /// POWER or PowerPC, either byte order: the family whose scheduler
    /// domains, hardware ids and hypervisor model are POWER's.
    pub fn is_power(&self) -> bool {
        matches!(self, Arch::PowerPc64 | Arch::PowerPc64Be | Arch::PowerPc)
    }
}

/// What [`Cpu::hw_id`] means on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum HwIdKind {
    /// x86 local APIC id (8-bit xAPIC or 32-bit x2APIC).
    ApicId,
    /// POWER processor identification register (interrupt server number).
    PowerPir,
    /// arm64 MPIDR_EL1 affinity fields.
    Mpidr,
    /// RISC-V hart id.
    HartId,
    /// Unknown or not applicable.
    Other,
}

/// A grouping level between a logical CPU and the whole machine, innermost first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum LevelKind {
    /// SMT siblings: the hardware threads of one core (`thread_siblings_list`).
    Core,
    /// POWER9/10 "big core": two SMT4 thread groups sharing an L2
    /// (`ibm,thread-groups` property 2); absent elsewhere.
    BigCore,
    /// A cluster (arm64 `cluster_cpus_list`, x86 L2 cluster) or POWER coregroup.
    Cluster,
    /// A die inside a package (x86 `die_cpus_list`, CPUID leaf 0x1F).
    Die,
    /// A physical package / socket (`core_siblings_list`, `package_cpus_list`).
    Package,
}

impl LevelKind {
    /// Every level, innermost first.
    pub const ALL: [LevelKind; 5] = [
        LevelKind::Core,
        LevelKind::BigCore,
        LevelKind::Cluster,
        LevelKind::Die,
        LevelKind::Package,
    ];

    /// Lower-case name used in text and JSON output.
    pub fn name(self) -> &'static str {
        match self {
            LevelKind::Core => "core",
            LevelKind::BigCore => "bigcore",
            LevelKind::Cluster => "cluster",
            LevelKind::Die => "die",
            LevelKind::Package => "package",
        }
    }
}

/// One logical CPU whose topology is known.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Cpu {
    /// Logical CPU number (Linux `cpuN`).
    pub id: u32,
    /// Firmware id: APIC id, PIR or MPIDR, see [`Topology::hw_id_kind`].
    pub hw_id: Option<u64>,
    /// Whether the CPU is online.
    pub online: bool,
    /// Index of this CPU's group in each level, indexed like [`LevelKind::ALL`];
    /// `None` for levels the machine does not have.
    pub groups: [Option<u32>; 5],
    /// Index into [`Topology::nodes`], if the CPU belongs to a NUMA node.
    pub node: Option<u32>,
    /// Index into [`Topology::core_kinds`] on hybrid machines.
    pub kind: Option<u16>,
    /// Relative compute capacity (arm64 `cpu_capacity`, 1024 = biggest).
    pub capacity: Option<u32>,
    /// Position of this thread within its core (0 for the first sibling).
    pub thread: u32,
}

impl Cpu {
    /// Index of this CPU's group at `level`, if the machine has that level.
    pub fn group(&self, level: LevelKind) -> Option<u32> {
        self.groups[level as usize]
    }
}

/// One group of CPUs at some level: a core, a cluster, a package...
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Group {
    /// The operating system's id for it (`core_id`, `physical_package_id`...), if any.
    pub os_id: Option<u32>,
    /// Every CPU of the group whose topology is known, online or not.
    pub cpus: CompactMask,
    /// Index of the enclosing group at the next level up that the machine has.
    pub parent: Option<u32>,
}

/// All groups at one level, in order of their first CPU.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Level {
    /// Which level this is.
    pub kind: LevelKind,
    /// The groups, ordered by first CPU.
    pub groups: Vec<Group>,
}

/// A NUMA node.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct NumaNode {
    /// Linux node number (`nodeN`); may be sparse (POWER10: 0, 1, 4, 5, 6, 7).
    pub id: u32,
    /// CPUs of the node (empty for memory-only nodes).
    pub cpus: CompactMask,
    /// Memory on the node in bytes, if known.
    pub memory_bytes: Option<u64>,
}

/// What a cache holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum CacheKind {
    /// Data only.
    Data,
    /// Instructions only.
    Instruction,
    /// Both.
    Unified,
}

impl CacheKind {
    /// Suffix used by lstopo and lscpu: `d`, `i` or empty.
    pub fn suffix(self) -> &'static str {
        match self {
            CacheKind::Data => "d",
            CacheKind::Instruction => "i",
            CacheKind::Unified => "",
        }
    }
}

/// One cache instance and the CPUs sharing it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Cache {
    /// 1 for L1, 2 for L2...
    pub level: u8,
    /// Data, instruction or unified.
    pub kind: CacheKind,
    /// Size in bytes, if known.
    pub size_bytes: Option<u64>,
    /// Line size in bytes, if known.
    pub line_bytes: Option<u32>,
    /// Associativity (0 = fully associative), if known.
    pub ways: Option<u32>,
    /// CPUs sharing this instance (`shared_cpu_list`).
    pub cpus: CompactMask,
}

/// A kind of core on a hybrid machine (Intel P/E cores, Arm big.LITTLE).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CoreKind {
    /// Name as the OS reports it (`intel_core`, `intel_atom`, `cortex-a710`...).
    pub name: String,
    /// Relative efficiency, higher = faster (hwloc's convention), if known.
    pub efficiency: Option<u32>,
}

impl CoreKind {
    /// Intel hybrid parts' efficiency cores (leaf 0x1A core type 0x20), named
    /// as Linux's perf names their PMU's kind (`cpu_atom`).
    pub fn intel_atom() -> CoreKind {
        CoreKind {
            name: "intel_atom".into(),
            efficiency: Some(0),
        }
    }

    /// Intel hybrid parts' performance cores (leaf 0x1A core type 0x40),
    /// named as Linux's perf names their PMU's kind (`cpu_core`).
    pub fn intel_core() -> CoreKind {
        CoreKind {
            name: "intel_core".into(),
            efficiency: Some(1),
        }
    }
}

/// A machine's CPU topology. See the crate documentation.
///
/// The fields are private so that the invariants [`crate::TopologyBuilder`]
/// checks cannot be broken afterwards; each has a read accessor of the same
/// name. To change a built topology, rebuild it through
/// [`crate::TopologyBuilder::from_topology`]. It serialises but does not
/// deserialise: a deserialised value would bypass the builder's checks.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Topology {
    /// Instruction-set family.
    pub(crate) arch: Arch,
    /// What [`Cpu::hw_id`] holds.
    pub(crate) hw_id_kind: HwIdKind,
    /// Free-form description of where this topology came from.
    pub(crate) source: String,
    /// CPU model name, if known.
    pub(crate) model_name: Option<String>,
    /// Hypervisor vendor (`pHyp`, `KVM`...), if virtualised.
    pub(crate) hypervisor: Option<String>,
    /// POWER shared-processor LPAR (SPLPAR): the hypervisor time-slices virtual
    /// processors onto physical cores, which changes the scheduler domains (seed 001).
    pub(crate) shared_processor: bool,
    /// CPUs that could ever exist (`/sys/devices/system/cpu/possible`).
    pub(crate) possible: CpuMask,
    /// CPUs physically present (`present`); a subset of `possible`.
    pub(crate) present: CpuMask,
    /// CPUs online now; a subset of `present`.
    pub(crate) online: CpuMask,
    /// CPUs whose topology is known, ordered by id.
    pub(crate) cpus: Vec<Cpu>,
    /// Levels the machine has, innermost first; always contains `Core` and `Package`.
    pub(crate) levels: Vec<Level>,
    /// NUMA nodes ordered by id; empty on machines without NUMA information.
    pub(crate) nodes: Vec<NumaNode>,
    /// Node distances, `nodes.len()²` entries, row-major in `nodes` order (SLIT
    /// convention: 10 = local). Empty when unknown.
    pub(crate) distances: Vec<u32>,
    /// Every cache instance, ordered by level, kind, then first CPU.
    pub(crate) caches: Vec<Cache>,
    /// Core kinds on hybrid machines; empty otherwise.
    pub(crate) core_kinds: Vec<CoreKind>,
    /// `cpu_index[id]` = position of CPU `id` in `cpus`, or `u32::MAX`.
    pub(crate) cpu_index: Vec<u32>,
}

impl Topology {
    /// Instruction-set family.
    pub fn arch(&self) -> &Arch {
        &self.arch
    }

    /// What [`Cpu::hw_id`] holds.
    pub fn hw_id_kind(&self) -> HwIdKind {
        self.hw_id_kind
    }

    /// Free-form description of where this topology came from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// CPU model name, if known.
    pub fn model_name(&self) -> Option<&str> {
        self.model_name.as_deref()
    }

    /// Hypervisor vendor (`pHyp`, `KVM`...), if virtualised.
    pub fn hypervisor(&self) -> Option<&str> {
        self.hypervisor.as_deref()
    }

    /// Whether this is a POWER shared-processor LPAR (SPLPAR), whose scheduler
    /// domains differ (seed 001).
    pub fn shared_processor(&self) -> bool {
        self.shared_processor
    }

    /// CPUs that could ever exist (`/sys/devices/system/cpu/possible`).
    pub fn possible(&self) -> &CpuMask {
        &self.possible
    }

    /// CPUs physically present; a subset of [`possible`](Self::possible).
    pub fn present(&self) -> &CpuMask {
        &self.present
    }

    /// CPUs online now; a subset of [`present`](Self::present).
    pub fn online(&self) -> &CpuMask {
        &self.online
    }

    /// CPUs whose topology is known, ordered by id.
    pub fn cpus(&self) -> &[Cpu] {
        &self.cpus
    }

    /// Levels the machine has, innermost first; always contains `Core` and
    /// `Package`.
    pub fn levels(&self) -> &[Level] {
        &self.levels
    }

    /// NUMA nodes ordered by id; empty on machines without NUMA information.
    pub fn nodes(&self) -> &[NumaNode] {
        &self.nodes
    }

    /// Node distances, `nodes().len()²` entries, row-major in `nodes()` order
    /// (SLIT convention: 10 = local); empty when unknown. See
    /// [`distance`](Self::distance) for lookups.
    pub fn distances(&self) -> &[u32] {
        &self.distances
    }

    /// Every cache instance, ordered by level, kind, then first CPU.
    pub fn caches(&self) -> &[Cache] {
        &self.caches
    }

    /// Core kinds on hybrid machines; empty otherwise.
    pub fn core_kinds(&self) -> &[CoreKind] {
        &self.core_kinds
    }

    /// The CPU with logical number `id`, if its topology is known. O(1).
    #[inline]
    pub fn cpu(&self, id: usize) -> Option<&Cpu> {
        let idx = *self.cpu_index.get(id)?;
        self.cpus.get(idx as usize)
    }

    /// `nr_cpu_ids`: one more than the highest possible CPU number.
    pub fn nr_cpu_ids(&self) -> usize {
        self.possible.last().map_or(0, |l| l + 1)
    }

    /// Every CPU whose topology is known, as a mask.
    pub fn known(&self) -> CpuMask {
        self.cpus.iter().map(|c| c.id as usize).collect()
    }

    /// The level of the given kind, if the machine has it.
    pub fn level(&self, kind: LevelKind) -> Option<&Level> {
        self.levels.iter().find(|l| l.kind == kind)
    }

    /// Number of groups at `kind` (0 if the level is absent).
    pub fn count(&self, kind: LevelKind) -> usize {
        self.level(kind).map_or(0, |l| l.groups.len())
    }

    /// The CPUs sharing `cpu`'s group at `kind` (itself alone if unknown/absent).
    pub fn mask_of(&self, cpu: usize, kind: LevelKind) -> CpuMask {
        let group = self.cpu(cpu).and_then(|c| c.group(kind));
        match (group, self.level(kind)) {
            (Some(g), Some(level)) => level.groups[g as usize].cpus.to_cpumask(),
            _ => {
                let mut m = CpuMask::new();
                let _ = m.try_set(cpu);
                m
            }
        }
    }

    /// SMT siblings of `cpu`, itself included (`topology_sibling_cpumask`).
    pub fn smt_mask(&self, cpu: usize) -> CpuMask {
        self.mask_of(cpu, LevelKind::Core)
    }

    /// CPUs of `cpu`'s package (`topology_core_cpumask`).
    pub fn package_mask(&self, cpu: usize) -> CpuMask {
        self.mask_of(cpu, LevelKind::Package)
    }

    /// The node holding `cpu`, if any.
    pub fn node_of(&self, cpu: usize) -> Option<&NumaNode> {
        let idx = self.cpu(cpu)?.node?;
        self.nodes.get(idx as usize)
    }

    /// Index into [`Topology::nodes`] of the node with Linux number `id`.
    pub fn node_index(&self, id: u32) -> Option<usize> {
        self.nodes.binary_search_by_key(&id, |n| n.id).ok()
    }

    /// Distance between nodes at indices `a` and `b` in [`Topology::nodes`]
    /// (10 on the diagonal and 20 elsewhere when the matrix is unknown, as Linux
    /// assumes without a SLIT).
    pub fn distance(&self, a: usize, b: usize) -> u32 {
        let n = self.nodes.len();
        if self.distances.len() == n * n && a < n && b < n {
            self.distances[a * n + b]
        } else if a == b {
            10
        } else {
            20
        }
    }

    /// Whether a real distance matrix is known.
    pub fn has_distances(&self) -> bool {
        !self.nodes.is_empty() && self.distances.len() == self.nodes.len() * self.nodes.len()
    }

    /// The largest number of threads in one core.
    pub fn max_threads_per_core(&self) -> usize {
        self.level(LevelKind::Core)
            .map(|l| l.groups.iter().map(|g| g.cpus.weight()).max().unwrap_or(0))
            .unwrap_or(0)
    }

    /// Caches containing `cpu`, innermost first.
    pub fn caches_of(&self, cpu: usize) -> impl Iterator<Item = &Cache> {
        self.caches.iter().filter(move |c| c.cpus.contains(cpu))
    }

    /// The CPUs sharing `cpu`'s last-level cache (the highest-level data or
    /// unified cache that contains it); its SMT siblings if no cache is known.
    pub fn llc_mask(&self, cpu: usize) -> CpuMask {
        self.caches_of(cpu)
            .filter(|c| c.kind != CacheKind::Instruction)
            .max_by_key(|c| c.level)
            .map(|c| c.cpus.to_cpumask())
            .unwrap_or_else(|| self.smt_mask(cpu))
    }
}
