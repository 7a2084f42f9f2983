//! Building a [`Topology`] from per-CPU facts, checking every invariant once.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use cpumask::{CompactMask, CpuMask, MAX_CPUS};

use crate::model::*;

/// What a reader knows about one logical CPU.
///
/// Group ids are the OS's own numbers. Two CPUs share a group at a level when
/// they agree on that level's id *and on every id above it*, so `core` only has
/// to be unique within its package (as sysfs `core_id` is), `cluster` within its
/// die, and so on. Readers that only have sibling masks can use the first CPU of
/// each mask as the id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuSpec {
    /// Logical CPU number.
    pub id: u32,
    /// Firmware id (APIC id, PIR, MPIDR).
    pub hw_id: Option<u64>,
    /// Whether the CPU is online.
    pub online: bool,
    /// Package id.
    pub package: u32,
    /// Die id within the package, on machines that have dies.
    pub die: Option<u32>,
    /// Cluster or coregroup id, on machines that have them.
    pub cluster: Option<u32>,
    /// Big-core id (POWER thread groups sharing an L2), where it applies.
    pub big_core: Option<u32>,
    /// Core id.
    pub core: u32,
    /// Linux node number, if the reader knows it per CPU (else taken from
    /// [`TopologyBuilder::add_node`] masks).
    pub node: Option<u32>,
    /// Index into the builder's core kinds (hybrid machines).
    pub kind: Option<u16>,
    /// Relative capacity (arm64 `cpu_capacity`).
    pub capacity: Option<u32>,
    /// The OS's own id for this CPU's group at each level, indexed like
    /// [`LevelKind::ALL`], where it is not the grouping id above: a reader
    /// may have to group by sibling masks because the OS's ids do not
    /// partition the CPUs (VMware guests give two SMT siblings different
    /// `core_id`s, s390 gives different cores the same one). `None` keeps the
    /// grouping ids. A group gets an OS id only if all its CPUs name the same.
    pub os_ids: Option<[Option<u32>; 5]>,
}

/// The node-id capacity: ids run from 0 to `MAX_NODES - 1`. It matches
/// [`MAX_CPUS`], far above Linux's `MAX_NUMNODES` (1 << `CONFIG_NODES_SHIFT`,
/// which x86 and arm64 cap at 10), and node sets (hwloc's nodesets) are
/// written in the same 16384-bit sets as CPUs, so a larger id could not be
/// written at all.
pub const MAX_NODES: usize = MAX_CPUS;

/// The most NUMA nodes a distance matrix is kept for. The matrix is dense,
/// one `u32` per pair of nodes: 64 MiB at 4096 nodes, 1 GiB at
/// [`MAX_NODES`]. Linux's `MAX_NUMNODES` is at most 1024, so a matrix over
/// more nodes comes from no real machine; readers refuse one before reading
/// its values, and [`TopologyBuilder::build`] refuses it too.
pub const MAX_DISTANCE_NODES: usize = 4096;

/// Why a topology could not be built. Each names the offending item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuildError {
    /// No CPU was described.
    NoCpus,
    /// A CPU number at or beyond [`MAX_CPUS`].
    CpuOutOfRange(u32),
    /// The same logical CPU was described twice.
    DuplicateCpu(u32),
    /// Two nodes both claim a CPU.
    CpuInTwoNodes {
        /// The CPU.
        cpu: u32,
        /// First node claiming it.
        first: u32,
        /// Second node claiming it.
        second: u32,
    },
    /// The same node id was added twice.
    DuplicateNode(u32),
    /// A node id at or beyond [`MAX_NODES`].
    NodeOutOfRange(u32),
    /// A CPU names a node that was not added.
    UnknownNode {
        /// The CPU.
        cpu: u32,
        /// The node it names.
        node: u32,
    },
    /// The distance matrix does not have `nodes²` entries.
    DistanceSize {
        /// Number of nodes.
        nodes: usize,
        /// Number of entries given.
        entries: usize,
    },
    /// A distance matrix over more than [`MAX_DISTANCE_NODES`] nodes.
    TooManyDistanceNodes(usize),
    /// A distance of zero, or a local distance larger than a remote one.
    BadDistance {
        /// Row node id.
        from: u32,
        /// Column node id.
        to: u32,
        /// The value.
        value: u32,
    },
    /// A CPU listed online is not in the present set, or present not in possible.
    MaskNotSubset(&'static str),
    /// A core kind index that does not exist.
    UnknownKind {
        /// The CPU.
        cpu: u32,
        /// The kind index it names.
        kind: u16,
    },
    /// A cache shared by CPUs that are not possible on this machine.
    CacheOutsidePossible {
        /// Cache level.
        level: u8,
        /// The first CPU it lists that is not possible.
        cpu: u32,
    },
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::NoCpus => write!(f, "no CPUs described"),
            BuildError::CpuOutOfRange(c) => {
                write!(
                    f,
                    "CPU {c} is beyond the supported maximum of {MAX_CPUS} CPUs"
                )
            }
            BuildError::DuplicateCpu(c) => write!(f, "CPU {c} described twice"),
            BuildError::CpuInTwoNodes { cpu, first, second } => {
                write!(f, "CPU {cpu} is in both node {first} and node {second}")
            }
            BuildError::DuplicateNode(n) => write!(f, "node {n} described twice"),
            BuildError::NodeOutOfRange(n) => write!(
                f,
                "node {n} is beyond the supported maximum of {MAX_NODES} nodes"
            ),
            BuildError::UnknownNode { cpu, node } => {
                write!(f, "CPU {cpu} names node {node}, which does not exist")
            }
            BuildError::DistanceSize { nodes, entries } => write!(
                f,
                "distance matrix has {entries} entries, expected {} for {nodes} nodes",
                nodes * nodes
            ),
            BuildError::TooManyDistanceNodes(n) => write!(
                f,
                "a distance matrix over {n} nodes: distances are kept for at most \
                 {MAX_DISTANCE_NODES} nodes"
            ),
            BuildError::BadDistance { from, to, value } => {
                write!(
                    f,
                    "distance {value} from node {from} to node {to} is invalid"
                )
            }
            BuildError::MaskNotSubset(what) => write!(f, "{what}"),
            BuildError::UnknownKind { cpu, kind } => {
                write!(f, "CPU {cpu} names core kind {kind}, which does not exist")
            }
            BuildError::CacheOutsidePossible { level, cpu } => {
                write!(f, "L{level} cache lists CPU {cpu}, which is not possible")
            }
        }
    }
}

impl core::error::Error for BuildError {}

/// Collects facts about a machine, then [`TopologyBuilder::build`]s a checked
/// [`Topology`].
#[derive(Debug, Clone)]
pub struct TopologyBuilder {
    arch: Arch,
    hw_id_kind: HwIdKind,
    source: String,
    model_name: Option<String>,
    hypervisor: Option<String>,
    shared_processor: bool,
    cpus: Vec<CpuSpec>,
    nodes: Vec<NumaNode>,
    distances: Vec<u32>,
    caches: Vec<Cache>,
    core_kinds: Vec<CoreKind>,
    possible: Option<CpuMask>,
    present: Option<CpuMask>,
    online: Option<CpuMask>,
}

impl TopologyBuilder {
    /// A builder for a machine of the given architecture.
    pub fn new(arch: Arch) -> Self {
        let hw_id_kind = match arch {
            Arch::X86_64 | Arch::X86 => HwIdKind::ApicId,
            Arch::PowerPc64 | Arch::PowerPc64Be | Arch::PowerPc => HwIdKind::PowerPir,
            Arch::Arm64 | Arch::Arm => HwIdKind::Mpidr,
            Arch::RiscV64 => HwIdKind::HartId,
            _ => HwIdKind::Other,
        };
        TopologyBuilder {
            arch,
            hw_id_kind,
            source: String::new(),
            model_name: None,
            hypervisor: None,
            shared_processor: false,
            cpus: Vec::new(),
            nodes: Vec::new(),
            distances: Vec::new(),
            caches: Vec::new(),
            core_kinds: Vec::new(),
            possible: None,
            present: None,
            online: None,
        }
    }

    /// A builder holding everything `topology` was built from, to change
    /// something (which CPUs are online, the LPAR mode...) and build again
    /// with every invariant checked anew.
    pub fn from_topology(topology: &Topology) -> Self {
        let t = topology;
        let mut b = TopologyBuilder::new(t.arch.clone());
        b.hw_id_kind = t.hw_id_kind;
        b.source.clone_from(&t.source);
        b.model_name.clone_from(&t.model_name);
        b.hypervisor.clone_from(&t.hypervisor);
        b.shared_processor = t.shared_processor;
        b.core_kinds.clone_from(&t.core_kinds);
        // Group indices are unique per level, so they serve as grouping ids;
        // the groups' own OS ids travel in `os_ids`. Node membership travels
        // in the node masks.
        b.cpus = t
            .cpus
            .iter()
            .map(|c| {
                let key = |k: LevelKind| c.groups[k as usize];
                let os_ids = LevelKind::ALL.map(|k| {
                    let level = t.level(k)?;
                    level.groups[key(k)? as usize].os_id
                });
                CpuSpec {
                    id: c.id,
                    hw_id: c.hw_id,
                    online: c.online,
                    package: key(LevelKind::Package).unwrap_or(0),
                    die: key(LevelKind::Die),
                    cluster: key(LevelKind::Cluster),
                    big_core: key(LevelKind::BigCore),
                    core: key(LevelKind::Core).unwrap_or(0),
                    node: None,
                    kind: c.kind,
                    capacity: c.capacity,
                    os_ids: Some(os_ids),
                }
            })
            .collect();
        b.nodes.clone_from(&t.nodes);
        b.distances.clone_from(&t.distances);
        b.caches.clone_from(&t.caches);
        b.possible = Some(t.possible);
        b.present = Some(t.present);
        b
    }

    /// Says where the topology came from (a path, a catalogue name...).
    pub fn source(&mut self, source: impl Into<String>) -> &mut Self {
        self.source = source.into();
        self
    }

    /// Sets the CPU model name.
    pub fn model_name(&mut self, name: impl Into<String>) -> &mut Self {
        self.model_name = Some(name.into());
        self
    }

    /// Sets the hypervisor vendor.
    pub fn hypervisor(&mut self, name: impl Into<String>) -> &mut Self {
        self.hypervisor = Some(name.into());
        self
    }

    /// Marks a POWER shared-processor LPAR.
    pub fn shared_processor(&mut self, shared: bool) -> &mut Self {
        self.shared_processor = shared;
        self
    }

    /// Overrides what [`Cpu::hw_id`] means.
    pub fn hw_id_kind(&mut self, kind: HwIdKind) -> &mut Self {
        self.hw_id_kind = kind;
        self
    }

    /// Describes one CPU.
    pub fn add_cpu(&mut self, cpu: CpuSpec) -> &mut Self {
        self.cpus.push(cpu);
        self
    }

    /// Describes a NUMA node with its CPUs (may be empty; a [`CpuMask`] or a
    /// [`CompactMask`]) and memory.
    pub fn add_node(
        &mut self,
        id: u32,
        cpus: impl Into<CompactMask>,
        memory_bytes: Option<u64>,
    ) -> &mut Self {
        self.nodes.push(NumaNode {
            id,
            cpus: cpus.into(),
            memory_bytes,
        });
        self
    }

    /// Sets the distance matrix, row-major in increasing node-id order.
    pub fn distances(&mut self, matrix: Vec<u32>) -> &mut Self {
        self.distances = matrix;
        self
    }

    /// Describes one cache instance.
    pub fn add_cache(&mut self, cache: Cache) -> &mut Self {
        self.caches.push(cache);
        self
    }

    /// Adds many caches at once; the first call takes `caches` as it is, so a
    /// reader's list is not copied a second time.
    pub fn add_caches(&mut self, caches: Vec<Cache>) -> &mut Self {
        if self.caches.is_empty() {
            self.caches = caches;
        } else {
            self.caches.extend(caches);
        }
        self
    }

    /// Registers a core kind; returns its index for [`CpuSpec::kind`].
    pub fn add_core_kind(&mut self, kind: CoreKind) -> u16 {
        self.core_kinds.push(kind);
        (self.core_kinds.len() - 1) as u16
    }

    /// Sets the possible set (default: every described CPU).
    pub fn possible(&mut self, mask: CpuMask) -> &mut Self {
        self.possible = Some(mask);
        self
    }

    /// Sets the present set (default: the possible set).
    pub fn present(&mut self, mask: CpuMask) -> &mut Self {
        self.present = Some(mask);
        self
    }

    /// Sets the online set, overriding every [`CpuSpec::online`] (default:
    /// the CPUs described as online). Every online CPU must be described.
    pub fn online(&mut self, mask: CpuMask) -> &mut Self {
        self.online = Some(mask);
        self
    }

    /// Checks everything and builds the topology, leaving the builder intact
    /// (its caches are copied).
    pub fn build(&self) -> Result<Topology, BuildError> {
        self.build_from(
            self.nodes.clone(),
            self.distances.clone(),
            self.caches.clone(),
        )
    }

    /// As [`build`](Self::build), consuming the builder so that its nodes,
    /// distances and caches move into the topology instead of being copied
    /// (thousands of nodes have millions of distances: on large machines a
    /// copy is a large share of a read).
    pub fn finish(mut self) -> Result<Topology, BuildError> {
        let nodes = core::mem::take(&mut self.nodes);
        let distances = core::mem::take(&mut self.distances);
        let caches = core::mem::take(&mut self.caches);
        self.build_from(nodes, distances, caches)
    }

    /// Builds the topology in the order its parts depend on each other: the
    /// CPUs, the nodes and their distances, the CPU sets, the caches, the
    /// levels, then each CPU's place in them.
    fn build_from(
        &self,
        nodes: Vec<NumaNode>,
        distances: Vec<u32>,
        mut caches: Vec<Cache>,
    ) -> Result<Topology, BuildError> {
        let (specs, known) = self.sorted_cpus()?;
        let (nodes, node_of_cpu) = build_nodes(nodes, &specs)?;
        check_distances(&distances, &nodes)?;
        let (possible, present, online) = self.cpu_sets(&specs, &known)?;
        check_caches(&caches, &possible)?;
        let (levels, cpu_groups) = build_levels(&specs);
        let (cpus, cpu_index) =
            build_cpus(&specs, &cpu_groups, &node_of_cpu, &nodes, &levels, &online);
        sort_and_dedup_caches(&mut caches);
        Ok(Topology {
            arch: self.arch.clone(),
            hw_id_kind: self.hw_id_kind,
            source: self.source.clone(),
            model_name: self.model_name.clone(),
            hypervisor: self.hypervisor.clone(),
            shared_processor: self.shared_processor,
            possible,
            present,
            online,
            cpus,
            levels,
            nodes,
            distances,
            caches,
            core_kinds: self.core_kinds.clone(),
            cpu_index,
        })
    }

    /// The CPU specs in id order, each in range, once, with a known kind;
    /// and their set.
    fn sorted_cpus(&self) -> Result<(Vec<&CpuSpec>, CpuMask), BuildError> {
        if self.cpus.is_empty() {
            return Err(BuildError::NoCpus);
        }
        let mut specs: Vec<&CpuSpec> = self.cpus.iter().collect();
        specs.sort_by_key(|c| c.id);
        let mut known = CpuMask::new();
        for (i, c) in specs.iter().enumerate() {
            if c.id as usize >= MAX_CPUS {
                return Err(BuildError::CpuOutOfRange(c.id));
            }
            if i > 0 && specs[i - 1].id == c.id {
                return Err(BuildError::DuplicateCpu(c.id));
            }
            if let Some(k) = c.kind {
                if k as usize >= self.core_kinds.len() {
                    return Err(BuildError::UnknownKind { cpu: c.id, kind: k });
                }
            }
            known.set(c.id as usize);
        }
        Ok((specs, known))
    }

    /// Possible ⊇ present ⊇ online; possible always holds every described CPU.
    fn cpu_sets(
        &self,
        specs: &[&CpuSpec],
        known: &CpuMask,
    ) -> Result<(CpuMask, CpuMask, CpuMask), BuildError> {
        let possible = self.possible.map(|p| p.or(known)).unwrap_or(*known);
        let present = self.present.unwrap_or(possible);
        let online = match self.online {
            Some(mask) if !mask.is_subset(known) => {
                return Err(BuildError::MaskNotSubset(
                    "online CPUs are not all described",
                ))
            }
            Some(mask) => mask,
            None => specs
                .iter()
                .filter(|c| c.online)
                .map(|c| c.id as usize)
                .collect(),
        };
        if !present.is_subset(&possible) {
            return Err(BuildError::MaskNotSubset(
                "present CPUs are not all possible",
            ));
        }
        if !online.is_subset(&present) {
            return Err(BuildError::MaskNotSubset("online CPUs are not all present"));
        }
        Ok((possible, present, online))
    }
}

/// The nodes sorted by id, disjoint and consistent with the CPUs' own node
/// ids; and the node index of each CPU (in `specs` order) whose spec names
/// one.
///
/// Phases: the ids checked and sorted ([`sort_nodes`]); which node's mask
/// lists each CPU ([`listing`]); each CPU's own node id checked against that
/// ([`named_nodes`]); then the CPUs that only name their node join its mask.
fn build_nodes(
    mut nodes: Vec<NumaNode>,
    specs: &[&CpuSpec],
) -> Result<(Vec<NumaNode>, Vec<Option<u32>>), BuildError> {
    sort_nodes(&mut nodes)?;
    let listed_in = listing(&nodes)?;
    let (node_of_cpu, joining) = named_nodes(&nodes, specs, &listed_in)?;
    for (idx, cpus) in joining {
        let node = &mut nodes[idx];
        node.cpus = node.cpus.iter().chain(cpus).collect();
    }
    Ok((nodes, node_of_cpu))
}

/// A CPU that no node's mask lists, in [`listing`].
const UNLISTED: u32 = u32::MAX;

/// Sorts the nodes by id; refuses an id out of range or given twice.
fn sort_nodes(nodes: &mut [NumaNode]) -> Result<(), BuildError> {
    if let Some(n) = nodes.iter().find(|n| n.id as usize >= MAX_NODES) {
        return Err(BuildError::NodeOutOfRange(n.id));
    }
    // Readers add nodes in id order.
    if !nodes.is_sorted_by_key(|n| n.id) {
        nodes.sort_by_key(|n| n.id);
    }
    for w in nodes.windows(2) {
        if w[0].id == w[1].id {
            return Err(BuildError::DuplicateNode(w[0].id));
        }
    }
    Ok(())
}

/// CPU → index of the node whose mask lists it ([`UNLISTED`] if none); a CPU
/// in two masks is refused. One pass over every node's CPUs, so thousands of
/// nodes cost no pairwise mask work, indexed by CPU number (below MAX_CPUS)
/// rather than a map.
fn listing(nodes: &[NumaNode]) -> Result<Vec<u32>, BuildError> {
    let mut listed_in: Vec<u32> = Vec::new();
    for (i, node) in nodes.iter().enumerate() {
        for cpu in node.cpus.iter() {
            if cpu >= listed_in.len() {
                listed_in.resize(cpu + 1, UNLISTED);
            }
            if listed_in[cpu] != UNLISTED {
                return Err(BuildError::CpuInTwoNodes {
                    cpu: cpu as u32,
                    first: nodes[listed_in[cpu] as usize].id,
                    second: node.id,
                });
            }
            listed_in[cpu] = i as u32;
        }
    }
    Ok(listed_in)
}

/// Per node index, the CPUs that name the node but are in no node's mask.
type Joining = BTreeMap<usize, Vec<usize>>;

/// The node index of each CPU (in `specs` order) whose spec names a node,
/// which must exist and must not be another node than the one whose mask
/// lists the CPU; and the CPUs that join a node's mask ([`Joining`]).
fn named_nodes(
    nodes: &[NumaNode],
    specs: &[&CpuSpec],
    listed_in: &[u32],
) -> Result<(Vec<Option<u32>>, Joining), BuildError> {
    let mut node_of_cpu: Vec<Option<u32>> = vec![None; specs.len()];
    let mut joining = Joining::new();
    for (pos, c) in specs.iter().enumerate() {
        if let Some(node) = c.node {
            let idx = match nodes.binary_search_by_key(&node, |n| n.id) {
                Ok(i) => i,
                Err(_) => return Err(BuildError::UnknownNode { cpu: c.id, node }),
            };
            let listed = listed_in.get(c.id as usize).copied().unwrap_or(UNLISTED);
            if listed != UNLISTED && listed as usize != idx {
                let other = nodes[listed as usize].id;
                return Err(BuildError::CpuInTwoNodes {
                    cpu: c.id,
                    first: node.min(other),
                    second: node.max(other),
                });
            }
            if listed == UNLISTED {
                joining.entry(idx).or_default().push(c.id as usize);
            }
            node_of_cpu[pos] = Some(idx as u32);
        }
    }
    Ok((node_of_cpu, joining))
}

/// The distance matrix, if given, has one entry per pair of nodes, no
/// zero, and no remote distance below the local one.
fn check_distances(distances: &[u32], nodes: &[NumaNode]) -> Result<(), BuildError> {
    let n = nodes.len();
    if distances.is_empty() {
        return Ok(());
    }
    if n > MAX_DISTANCE_NODES {
        return Err(BuildError::TooManyDistanceNodes(n));
    }
    if distances.len() != n * n {
        return Err(BuildError::DistanceSize {
            nodes: n,
            entries: distances.len(),
        });
    }
    for (i, row) in distances.chunks_exact(n).enumerate() {
        let local = row[i];
        let bad = |(j, &v): &(usize, &u32)| v == 0 || (i != *j && v < local);
        if let Some((j, &value)) = row.iter().enumerate().find(bad) {
            return Err(BuildError::BadDistance {
                from: nodes[i].id,
                to: nodes[j].id,
                value,
            });
        }
    }
    Ok(())
}

/// Every cache lists only possible CPUs.
fn check_caches(caches: &[Cache], possible: &CpuMask) -> Result<(), BuildError> {
    match caches.iter().find(|c| !c.cpus.is_subset(possible)) {
        Some(cache) => Err(BuildError::CacheOutsidePossible {
            level: cache.level,
            cpu: cache
                .cpus
                .iter()
                .find(|&c| !possible.contains(c))
                .unwrap_or(0) as u32,
        }),
        None => Ok(()),
    }
}

/// The levels the CPUs describe, innermost first, their groups numbered in
/// order of first CPU; and each CPU's group index per level.
fn build_levels(specs: &[&CpuSpec]) -> (Vec<Level>, Vec<[Option<u32>; 5]>) {
    let mut cpu_groups: Vec<[Option<u32>; 5]> = vec![[None; 5]; specs.len()];
    let mut levels = Vec::new();
    // Position in `specs` of each group's first CPU, per level.
    let mut first_of_group: Vec<Vec<usize>> = Vec::new();
    for kind in present_levels(specs) {
        let firsts = number_groups(specs, kind, &mut cpu_groups);
        let groups = level_groups(specs, kind, &firsts, &cpu_groups);
        first_of_group.push(firsts);
        levels.push(Level { kind, groups });
    }
    link_parents(&mut levels, &first_of_group, &cpu_groups);
    (levels, cpu_groups)
}

/// The levels any CPU names: core and package always, the others when some
/// CPU has an id for them.
fn present_levels(specs: &[&CpuSpec]) -> Vec<LevelKind> {
    let has_die = specs.iter().any(|c| c.die.is_some());
    let has_cluster = specs.iter().any(|c| c.cluster.is_some());
    let has_big = specs.iter().any(|c| c.big_core.is_some());
    LevelKind::ALL
        .iter()
        .copied()
        .filter(|k| match k {
            LevelKind::BigCore => has_big,
            LevelKind::Cluster => has_cluster,
            LevelKind::Die => has_die,
            _ => true,
        })
        .collect()
}

/// A CPU's group key at `kind`: its id path from the package down to that
/// level (CPUs are grouped by it).
fn id_path(c: &CpuSpec, kind: LevelKind) -> [Option<u32>; 5] {
    let full = [Some(c.core), c.big_core, c.cluster, c.die, Some(c.package)];
    core::array::from_fn(|i| if i >= kind as usize { full[i] } else { None })
}

/// Numbers the groups of level `kind` in order of their first CPU (specs are
/// sorted), records each CPU's group, and returns each group's first CPU.
fn number_groups(
    specs: &[&CpuSpec],
    kind: LevelKind,
    cpu_groups: &mut [[Option<u32>; 5]],
) -> Vec<usize> {
    // Consecutive CPUs usually share a group, so the last key is checked
    // before the map.
    let mut index: BTreeMap<[Option<u32>; 5], u32> = BTreeMap::new();
    let mut firsts: Vec<usize> = Vec::new();
    let mut last: Option<([Option<u32>; 5], u32)> = None;
    for (i, c) in specs.iter().enumerate() {
        let key = id_path(c, kind);
        let g = match last {
            Some((k, g)) if k == key => g,
            _ => {
                let g = *index.entry(key).or_insert_with(|| {
                    firsts.push(i);
                    (firsts.len() - 1) as u32
                });
                last = Some((key, g));
                g
            }
        };
        cpu_groups[i][kind as usize] = Some(g);
    }
    firsts
}

/// The groups of level `kind` with their CPUs and OS id (kept only where
/// every member agrees on it). Each group's mask is built from the words its
/// CPUs use, so a core costs its threads' words whatever the machine's width
/// or numbering (threads half the machine apart are two words, not a run
/// spanning half the machine).
fn level_groups(
    specs: &[&CpuSpec],
    kind: LevelKind,
    firsts: &[usize],
    cpu_groups: &[[Option<u32>; 5]],
) -> Vec<Group> {
    let os_id = |c: &CpuSpec| match c.os_ids {
        Some(ids) => ids[kind as usize],
        None => id_path(c, kind)[kind as usize],
    };
    let members = || {
        specs.iter().enumerate().filter_map(move |(i, c)| {
            let g = cpu_groups[i][kind as usize]?;
            Some((g as usize, c.id as usize))
        })
    };
    // Specs are sorted, so each group meets its words in increasing index:
    // count each group's words, then fill them into one list of (index,
    // word) at the group's offset.
    let n = firsts.len();
    let mut last_word = vec![usize::MAX; n];
    let mut start = vec![0usize; n + 1];
    for (g, cpu) in members() {
        if last_word[g] != cpu / 64 {
            last_word[g] = cpu / 64;
            start[g + 1] += 1;
        }
    }
    for g in 0..n {
        start[g + 1] += start[g];
    }
    let mut entries = vec![(0usize, 0u64); start[n]];
    let mut next = start.clone();
    last_word.fill(usize::MAX);
    for (g, cpu) in members() {
        if last_word[g] != cpu / 64 {
            last_word[g] = cpu / 64;
            entries[next[g]].0 = cpu / 64;
            next[g] += 1;
        }
        entries[next[g] - 1].1 |= 1u64 << (cpu % 64);
    }
    let mut os_ids: Vec<Option<u32>> = firsts.iter().map(|&i| os_id(specs[i])).collect();
    for (i, c) in specs.iter().enumerate() {
        if let Some(g) = cpu_groups[i][kind as usize] {
            let g = g as usize;
            if os_ids[g].is_some() && os_id(c) != os_ids[g] {
                os_ids[g] = None;
            }
        }
    }
    os_ids
        .into_iter()
        .enumerate()
        .map(|(g, os_id)| Group {
            os_id,
            cpus: CompactMask::from_entries(&entries[start[g]..start[g + 1]]),
            parent: None,
        })
        .collect()
}

/// Each group's parent: the group at the next present level that holds its
/// first CPU.
fn link_parents(
    levels: &mut [Level],
    first_of_group: &[Vec<usize>],
    cpu_groups: &[[Option<u32>; 5]],
) {
    for li in 0..levels.len().saturating_sub(1) {
        let (lower, upper) = levels.split_at_mut(li + 1);
        let upper_kind = upper[0].kind;
        for (g, &pos) in lower[li].groups.iter_mut().zip(&first_of_group[li]) {
            g.parent = cpu_groups[pos][upper_kind as usize];
        }
    }
}

/// Each CPU with its groups, node and thread position; and the index from
/// CPU number to position.
fn build_cpus(
    specs: &[&CpuSpec],
    cpu_groups: &[[Option<u32>; 5]],
    node_of_cpu: &[Option<u32>],
    nodes: &[NumaNode],
    levels: &[Level],
    online: &CpuMask,
) -> (Vec<Cpu>, Vec<u32>) {
    let max_id = specs.last().map_or(0, |c| c.id as usize);
    let mut cpu_index = vec![u32::MAX; max_id + 1];
    let mut cpus = Vec::with_capacity(specs.len());
    for (i, c) in specs.iter().enumerate() {
        cpu_index[c.id as usize] = i as u32;
        cpus.push(Cpu {
            id: c.id,
            hw_id: c.hw_id,
            online: online.contains(c.id as usize),
            groups: cpu_groups[i],
            node: node_of_cpu[i],
            kind: c.kind,
            capacity: c.capacity,
            thread: 0,
        });
    }
    // Per-CPU node index from node masks where the spec did not say.
    for (ni, node) in nodes.iter().enumerate() {
        for cpu in node.cpus.iter() {
            if let Some(&idx) = cpu_index.get(cpu) {
                if idx != u32::MAX {
                    cpus[idx as usize].node = Some(ni as u32);
                }
            }
        }
    }
    // Thread position within the core: CPUs come in increasing id order, so
    // a per-core counter gives each CPU's rank among its siblings.
    let mut seen_in_core = vec![0u32; levels[0].groups.len()];
    for cpu in cpus.iter_mut() {
        if let Some(g) = cpu.groups[LevelKind::Core as usize] {
            cpu.thread = seen_in_core[g as usize];
            seen_in_core[g as usize] += 1;
        }
    }
    (cpus, cpu_index)
}

/// A cache's place in the model's order: level, kind, first CPU.
type CacheKey = (u8, CacheKind, Option<usize>);

/// Sorts caches by (level, kind, first CPU) and removes exact duplicates.
/// Each key is computed once: a cache's first CPU is a scan of its mask.
fn sort_and_dedup_caches(caches: &mut Vec<Cache>) {
    let mut keyed: Vec<(CacheKey, Cache)> = core::mem::take(caches)
        .into_iter()
        .map(|c| ((c.level, c.kind, c.cpus.first()), c))
        .collect();
    if !keyed.is_sorted_by_key(|(k, _)| *k) {
        keyed.sort_by_key(|(k, _)| *k);
    }
    dedup_caches(keyed, caches);
}

/// Moves sorted caches into `out` without exact duplicates. Equal caches
/// share a sort key but need not be adjacent (another cache with the same
/// level, kind and first CPU may sit between them), so each is compared with
/// every kept cache of its key run; runs are a handful of caches long.
fn dedup_caches(keyed: Vec<(CacheKey, Cache)>, out: &mut Vec<Cache>) {
    out.reserve(keyed.len());
    // Where the run of caches with the current key starts in `out`.
    let mut run = (None, 0);
    for (key, cache) in keyed {
        if run.0 != Some(key) {
            run = (Some(key), out.len());
        }
        if !out[run.1..].contains(&cache) {
            out.push(cache);
        }
    }
}
