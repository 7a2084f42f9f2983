//! The seeds' machines, built in, so that every experiment can run on the
//! machines the five Linux patches were measured on.
//!
//! Each [`Entry`] says in [`Entry::provenance`] which facts come from its seed
//! (quoted numbers, printed lscpu output, boot logs) and which are stated
//! assumptions filling what the seed leaves out; that text sits in the
//! `ENTRIES` table, and each builder function below names its seed and
//! repeats the assumptions it encodes. Facts common to several machines:
//!
//! - **POWER numbering**: Linux gives each core's threads consecutive
//!   numbers (seed 000/001 node lists are runs of 8). POWER9/10 SMT8 cores
//!   are *big cores* of two SMT4 thread groups, the even and the odd threads
//!   (Linux's `ibm,thread-groups` example pairs {8,10,12,14} and
//!   {9,11,13,15}); they are modelled as a `BigCore` level above SMT4 `Core`s,
//!   which the seed-001 L1 instance counts confirm (96 cores, 192 L1s).
//!   lscpu's "Socket(s)" on these LPARs equals the node count, so each node is
//!   one package. Interrupt-server numbers (the hardware ids) are assumed
//!   equal to the logical numbers.
//! - **x86 numbering** follows seed 002's boot logs: all first threads, then
//!   all second threads ("Booting Node 0, Processors #16 .. #23" after node
//!   1's #8 .. #15 on the 2 × 8 × 2 machine), one node per socket. APIC ids
//!   are assumed packed as socket | core | thread bit fields.
//! - **Distances** are never printed in the seeds; each entry states its
//!   assumption.

use cpumask::CpuMask;
use topology::{Arch, Cache, CacheKind, CpuSpec, Topology, TopologyBuilder};

use crate::Error;

/// A device whose NUMA placement matters to an experiment (seed 004's ITS).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Device {
    /// What it is (`gicv3-its`).
    pub kind: &'static str,
    /// The NUMA node it is attached to.
    pub node: u32,
    /// Where that fact comes from.
    pub note: &'static str,
}

/// One catalogue entry.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    /// The name users pass to `--machine`.
    pub name: &'static str,
    /// One line describing the machine.
    pub summary: &'static str,
    /// Firmware / virtualisation platform: how the OS sees the machine.
    pub platform: &'static str,
    /// Which facts come from the seed and which are assumptions.
    pub provenance: &'static str,
    /// Devices with a NUMA placement (empty for most machines).
    pub devices: &'static [Device],
}

const ENTRIES: &[Entry] = &[
    Entry {
        name: "power8-lpar-1024",
        summary: "POWER8 PowerVM LPAR, 1024 CPUs: 16 sockets x 8 cores x SMT8, 16 nodes (seed 000)",
        platform: "IBM PowerVM LPAR (pHyp, para-virtualised), ppc64le",
        provenance: "Seed 000 lscpu: 1024 CPUs on-line 0-1023, Thread(s) per core 8, Core(s) per \
            socket 8, Socket(s) 16, NUMA node N = CPUs 64N..64N+63, model 'POWER8 (architected), \
            altivec supported', hypervisor pHyp, L1d 64K, L1i 32K, L2 512K, L3 8192K per \
            instance; dmesg 'Brought up 16 nodes, 1024 CPUs' (233 s before, 4 s after the \
            patches). Assumed: one node per socket (lscpu's counts), caches private to each \
            SMT8 core (POWER8 has per-core L2 and L3 regions), distances 10 local / 40 remote \
            (pSeries form-1 associativity, as hwloc's POWER8/9 snapshots show), memory sizes \
            unknown.",
        devices: &[],
    },
    Entry {
        name: "power-4096-1socket",
        summary: "POWER, 4096 CPUs: 1024 SMT4 cores in one socket, one node (seed 000, Anton's box)",
        platform: "POWER (assumed KVM/QEMU guest: 1024 cores in one socket is not real hardware)",
        provenance: "Seed 000: 'his 4096 cpu (1024 cores in a socket)' machine, boot '30 mins to 6 \
            seconds'. 4096 / 1024 = SMT4. Assumed: a single NUMA node holding every CPU (the seed \
            names no nodes; one socket, one node is the case the cpu_core_mask rescan hurts \
            most), siblings adjacent, no cache or model information (the seed gives none), \
            distance matrix [10].",
        devices: &[],
    },
    Entry {
        name: "power9-lpar-128",
        summary: "POWER9 PowerVM LPAR, 128 CPUs: 2 sockets x 8 SMT8 big cores, 2 nodes (seed 000)",
        platform: "IBM PowerVM LPAR, dedicated processors (pHyp), ppc64le, IBM,9008-22L",
        provenance: "Seed 000 lscpu: 128 CPUs, Thread(s) per core 8, Core(s) per socket 8, \
            Socket(s) 2, node0 0-63, node1 64-127, model 'POWER9 (architected), altivec \
            supported', pHyp, L1d 32K, L1i 32K, L2 512K, L3 10240K per instance; sched domains \
            SMT, CACHE, DIE, NUMA (flags 2391, 2327, 2071, 12801). Assumed: each SMT8 core is a \
            big core of two SMT4 thread groups (even/odd threads) with L1 per thread group and \
            L2 + L3 shared by the big core (the CACHE domain above SMT), dedicated (not shared) \
            processors, distances 10 / 40, memory unknown.",
        devices: &[],
    },
    Entry {
        name: "power10-shared-768",
        summary: "POWER10 shared-processor LPAR, 768 CPUs: 96 SMT8 big cores on nodes 0,1,4,5,6,7 (seed 001)",
        platform: "IBM PowerVM shared-processor LPAR (SPLPAR, uncapped, 64 entitled / 96 virtual processors)",
        provenance: "Seed 001 lscpu: 768 CPUs, Thread(s) per core 8, Core(s) per socket 16, \
            Socket(s) 6, the six node cpulists exactly as printed (sizes 136, 136, 120, 128, \
            120, 128), model 'POWER10 (architected), altivec supported', pHyp, L1d 6 MiB and \
            L1i 9 MiB over 192 instances (32 KiB and 48 KiB per SMT4 thread group); lparstat \
            type=Shared. Assumed: each node one package, even/odd thread groups, no L2/L3 \
            (not printed), distances 10 / 40, memory unknown.",
        devices: &[],
    },
    Entry {
        name: "power10-shared-320",
        summary: "POWER10 shared-processor LPAR, 320 CPUs: 40 SMT8 big cores on nodes 0,1,4,5 (seed 001)",
        platform: "IBM PowerVM shared-processor LPAR (SPLPAR, uncapped, 40 entitled / 40 virtual processors)",
        provenance: "Seed 001 lscpu: 320 CPUs, Thread(s) per core 8, Core(s) per socket 10, \
            Socket(s) 4, the four node cpulists exactly as printed (80 CPUs each), POWER10, \
            pHyp, L1d 2.5 MiB and L1i 3.8 MiB over 80 instances (32 KiB and 48 KiB each); \
            lparstat type=Shared. Assumed as for power10-shared-768.",
        devices: &[],
    },
    Entry {
        name: "x86-2s-12",
        summary: "x86-64, 12 CPUs: 2 sockets x 6 cores, no SMT, 2 nodes (seed 002)",
        platform: "bare-metal x86-64 server (ACPI), 2010",
        provenance: "Seed 002: '2 socket, 6 cores per socket, no hyperthreads', 'Booting Node 0, \
            Processors #1 .. #5', 'Node 1, #6 .. #11', 'Brought up 12 CPUs'. Assumed: \
            Westmere-EP-class caches (32 KiB L1d/L1i and 256 KiB L2 per core, 12 MiB L3 per \
            socket), distances 10 / 21 (the usual two-socket SLIT), APIC ids packed, memory \
            unknown.",
        devices: &[],
    },
    Entry {
        name: "x86-2s-16",
        summary: "x86-64, 16 CPUs: 2 sockets x 8 cores, no SMT, 2 nodes (seed 002)",
        platform: "bare-metal x86-64 server (ACPI; the 'after' log shows SGI UV MMR mappings), 2010",
        provenance: "Seed 002: '2 socket, 8 cores per socket, no hyperthreads', 'Booting Node 0, \
            Processors #1 .. #7', 'Node 1, #8 .. #15', 'Brought up 16 CPUs', 'UV: Map MMR_HI'. \
            Assumed: Nehalem-EX X7550-class caches (32 KiB L1d/L1i, 256 KiB L2 per core, 18 MiB \
            L3 per socket, as util-linux's lscpu-x86_64-64cpu X7550 dump shows), distances 10 / \
            21, APIC ids packed, memory unknown.",
        devices: &[],
    },
    Entry {
        name: "x86-2s-32ht",
        summary: "x86-64, 32 CPUs: 2 sockets x 8 cores x 2 threads, 2 nodes, threads numbered last (seed 002)",
        platform: "bare-metal x86-64 server (ACPI), 2010",
        provenance: "Seed 002: '2 socket, 8 cores per socket, hyperthreaded', boot order Node 0 \
            #1..#7, Node 1 #8..#15, Node 0 #16..#23, Node 1 #24..#31, 'Brought up 32 CPUs': so \
            CPU c and c + 16 are siblings (threads last). Assumed: X7550-class caches as \
            x86-2s-16, distances 10 / 21, APIC ids packed, memory unknown.",
        devices: &[],
    },
    Entry {
        name: "x86-uv-4096",
        summary: "SGI UV x86-64, 4096 CPUs: 256 sockets x 8 cores x 2 threads, 256 nodes (seed 002)",
        platform: "SGI UV (NUMAlink), bare-metal x86-64, 2010",
        provenance: "Seed 002: '256 socket, 8 cores per socket, hyperthreaded', 'Booting Node 0, \
            Processors #1 .. #7', 'Node 1, #8 .. #15', 'Node 254, #4080 .. #4087', 'Node 255, \
            #4088 .. #4095', 'Brought up 4096 CPUs' (411 s before, 128 s after). So node N \
            holds CPUs 8N..8N+7 (first threads) and 2048+8N..2048+8N+7 (their siblings): \
            4080 = 2048 + 8 x 254. Assumed: node = socket, X7550-class caches, SLIT modelled \
            on hwloc's SGI UV 2000 snapshot (10 local, 50 same blade = socket pair, 65 same \
            16-socket chassis, 79 beyond), APIC ids packed, memory unknown.",
        devices: &[],
    },
    Entry {
        name: "x86-2n-128",
        summary: "x86-64, 128 CPUs on 2 nodes: 2 sockets x 32 cores x 2 threads (seed 003)",
        platform: "bare-metal Intel x86-64 server (ACPI, x2APIC), 2023",
        provenance: "Seed 003: 'a server with 128 CPUs split across 2 NUMA nodes', smpboot ~700 ms \
            -> 100 ms; parallel bring-up disabled on AMD, so Intel. Assumed: 2 sockets (one per \
            node) x 32 cores x 2 threads numbered threads-last, Ice Lake-SP-class caches (48 KiB \
            L1d, 32 KiB L1i, 1.25 MiB L2 per core, 48 MiB L3 per socket), distances 10 / 20, \
            APIC ids packed, memory unknown.",
        devices: &[],
    },
    Entry {
        name: "arm64-d06",
        summary: "HiSilicon D06 (Kunpeng 920), 128 CPUs: 2 sockets x 2 nodes x 8 clusters x 4 cores (seed 004)",
        platform: "bare-metal arm64 board (ACPI, GICv3 with ITS)",
        provenance: "Seed 004: HiSilicon D06, 'dimm on node 0(Sock#0) and 3 (Sock#1)' (so 4 nodes, \
            2 per socket, memory only on nodes 0 and 3), 'ITS belongs to numa node 0', +3.6 % \
            with ITS tables on the ITS's node. Assumed (Kunpeng 920-6426 data sheet figures, not \
            in the seed): 64 cores per socket, no SMT, 32 cores per node, clusters of 4 cores, \
            64 KiB L1d/L1i and 512 KiB L2 per core, 32 MiB L3 per node, distances \
            10/12/20/22/24 as commonly reported by numactl on Kunpeng 920 (unverified here), \
            16 GiB on each of nodes 0 and 3 (the seed's vmstat shows ~30 GB free), MPIDR = \
            node | cluster | core fields.",
        devices: &[Device {
            kind: "gicv3-its",
            node: 0,
            note: "seed 004: 'ITS belongs to numa node 0' (one ITS); its command queue, device \
                   table and collection table go on node 0, which has memory ('dimm on node 0 \
                   (Sock#0) and 3 (Sock#1)'); source: the seed's benchmark set-up",
        }],
    },
];

/// Every machine in the catalogue.
pub fn list() -> &'static [Entry] {
    ENTRIES
}

/// The entry named `name`, if any.
pub fn entry(name: &str) -> Option<&'static Entry> {
    ENTRIES.iter().find(|e| e.name == name)
}

/// Builds the named machine.
pub fn machine(name: &str) -> Result<Topology, Error> {
    let built = match name {
        "power8-lpar-1024" => power8_lpar_1024(),
        "power-4096-1socket" => power_4096_1socket(),
        "power9-lpar-128" => power9_lpar_128(),
        "power10-shared-768" => power10_shared(768),
        "power10-shared-320" => power10_shared(320),
        "x86-2s-12" => x86_two_socket(6, 1, X86Caches::WESTMERE_EP),
        "x86-2s-16" => x86_two_socket(8, 1, X86Caches::NEHALEM_EX),
        "x86-2s-32ht" => x86_two_socket(8, 2, X86Caches::NEHALEM_EX),
        "x86-uv-4096" => x86_uv_4096(),
        "x86-2n-128" => x86_two_socket(32, 2, X86Caches::ICE_LAKE_SP),
        "arm64-d06" => arm64_d06(),
        _ => {
            return Err(Error::new(
                format!("machine '{name}'"),
                "unknown machine; see `manycore topo --list-machines`",
            ))
        }
    };
    built.map_err(|e| Error::new(format!("machine '{name}'"), e))
}

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// One CPU's place, as the machine builders describe it.
#[derive(Debug, Clone, Copy)]
struct Place {
    cpu: u32,
    package: u32,
    cluster: Option<u32>,
    big_core: Option<u32>,
    /// Unique machine-wide.
    core: u32,
    node: u32,
    hw_id: u64,
}

/// Which CPUs share one cache instance.
#[derive(Debug, Clone, Copy)]
enum Scope {
    /// SMT siblings (the small core on big-core machines).
    Core,
    /// The big core (or the core where there are none).
    BigCore,
    Node,
    Package,
}

struct CacheSpec {
    level: u8,
    kind: CacheKind,
    size: u64,
    scope: Scope,
}

const fn cache(level: u8, kind: CacheKind, size: u64, scope: Scope) -> CacheSpec {
    CacheSpec {
        level,
        kind,
        size,
        scope,
    }
}

/// What every machine builder hands to [`assemble`].
struct Machine<'a> {
    name: &'a str,
    arch: Arch,
    model: Option<&'a str>,
    hypervisor: Option<&'a str>,
    shared_processor: bool,
    places: Vec<Place>,
    /// (node id, memory) in id order.
    nodes: Vec<(u32, Option<u64>)>,
    distances: Vec<u32>,
    caches: &'a [CacheSpec],
}

fn assemble(m: Machine<'_>) -> Result<Topology, String> {
    // POWER caches have 128-byte lines, the others here 64-byte ones.
    let line_bytes = if m.arch.is_power() { 128 } else { 64 };
    let mut b = TopologyBuilder::new(m.arch);
    b.source(format!("catalogue:{}", m.name));
    if let Some(model) = m.model {
        b.model_name(model);
    }
    if let Some(h) = m.hypervisor {
        b.hypervisor(h);
    }
    b.shared_processor(m.shared_processor);
    for (id, memory) in &m.nodes {
        b.add_node(*id, CpuMask::new(), *memory);
    }
    for p in &m.places {
        b.add_cpu(CpuSpec {
            id: p.cpu,
            hw_id: Some(p.hw_id),
            online: true,
            package: p.package,
            die: None,
            cluster: p.cluster,
            big_core: p.big_core,
            core: p.core,
            node: Some(p.node),
            kind: None,
            capacity: None,
            os_ids: None,
        });
    }
    b.distances(m.distances);
    for spec in m.caches {
        let mut groups: std::collections::BTreeMap<(u32, u32), CpuMask> = Default::default();
        for p in &m.places {
            let key = match spec.scope {
                Scope::Core => (p.package, p.core),
                Scope::BigCore => (p.package, p.big_core.unwrap_or(p.core)),
                Scope::Node => (p.node, 0),
                Scope::Package => (p.package, 0),
            };
            groups.entry(key).or_default().set(p.cpu as usize);
        }
        for cpus in groups.into_values() {
            b.add_cache(Cache {
                level: spec.level,
                kind: spec.kind,
                size_bytes: Some(spec.size),
                line_bytes: Some(line_bytes),
                ways: None,
                cpus: cpus.into(),
            });
        }
    }
    b.build().map_err(|e| e.to_string())
}

/// A distance matrix with 10 on the diagonal and `far(i, j)` elsewhere.
fn matrix(n: usize, far: impl Fn(usize, usize) -> u32) -> Vec<u32> {
    let mut d = Vec::with_capacity(n * n);
    for i in 0..n {
        for j in 0..n {
            d.push(if i == j { 10 } else { far(i, j) });
        }
    }
    d
}

/// POWER LPAR CPUs from node cpulists: each node is one package, each aligned
/// run of `threads` CPUs one core; with `big_cores`, the core is a big core
/// whose even and odd threads form two small cores.
fn power_places(nodes: &[(u32, CpuMask)], threads: u32, big_cores: bool) -> Vec<Place> {
    let mut places = Vec::new();
    let mut core_index = 0u32;
    for (package, (node, mask)) in nodes.iter().enumerate() {
        let cpus: Vec<u32> = mask.iter().map(|c| c as u32).collect();
        for chunk in cpus.chunks(threads as usize) {
            for (t, &cpu) in chunk.iter().enumerate() {
                let (core, big_core) = if big_cores {
                    (core_index * 2 + (t as u32 % 2), Some(core_index))
                } else {
                    (core_index, None)
                };
                places.push(Place {
                    cpu,
                    package: package as u32,
                    cluster: None,
                    big_core,
                    core,
                    node: *node,
                    hw_id: cpu as u64,
                });
            }
            core_index += 1;
        }
    }
    places
}

fn ranges(count: u32, size: u32) -> Vec<(u32, CpuMask)> {
    (0..count)
        .map(|n| {
            let mut m = CpuMask::new();
            m.set_range((n * size) as usize, ((n + 1) * size) as usize);
            (n, m)
        })
        .collect()
}

/// Seed 000: the 1024-CPU POWER8 LPAR whose bring-up took 233 s. Assumed:
/// per-core caches, 10/40 distances, unknown memory.
fn power8_lpar_1024() -> Result<Topology, String> {
    const CACHES: &[CacheSpec] = &[
        cache(1, CacheKind::Data, 64 * KIB, Scope::Core),
        cache(1, CacheKind::Instruction, 32 * KIB, Scope::Core),
        cache(2, CacheKind::Unified, 512 * KIB, Scope::Core),
        cache(3, CacheKind::Unified, 8192 * KIB, Scope::Core),
    ];
    let nodes = ranges(16, 64);
    assemble(Machine {
        name: "power8-lpar-1024",
        arch: Arch::PowerPc64,
        model: Some("POWER8 (architected), altivec supported"),
        hypervisor: Some("pHyp"),
        shared_processor: false,
        places: power_places(&nodes, 8, false),
        nodes: nodes.iter().map(|(id, _)| (*id, None)).collect(),
        distances: matrix(16, |_, _| 40),
        caches: CACHES,
    })
}

/// Seed 000: Anton Blanchard's 4096-CPU, 1024-core single-socket machine.
/// Assumed: one node, no cache or model information.
fn power_4096_1socket() -> Result<Topology, String> {
    let nodes = ranges(1, 4096);
    assemble(Machine {
        name: "power-4096-1socket",
        arch: Arch::PowerPc64,
        model: None,
        hypervisor: None,
        shared_processor: false,
        places: power_places(&nodes, 4, false),
        nodes: vec![(0, None)],
        distances: vec![10],
        caches: &[],
    })
}

/// Seed 000: the 2-node POWER9 LPAR whose sched domains the patches verified.
/// Assumed: even/odd SMT4 thread groups, L2/L3 per big core, 10/40 distances.
fn power9_lpar_128() -> Result<Topology, String> {
    const CACHES: &[CacheSpec] = &[
        cache(1, CacheKind::Data, 32 * KIB, Scope::Core),
        cache(1, CacheKind::Instruction, 32 * KIB, Scope::Core),
        cache(2, CacheKind::Unified, 512 * KIB, Scope::BigCore),
        cache(3, CacheKind::Unified, 10240 * KIB, Scope::BigCore),
    ];
    let nodes = ranges(2, 64);
    assemble(Machine {
        name: "power9-lpar-128",
        arch: Arch::PowerPc64,
        model: Some("POWER9 (architected), altivec supported"),
        hypervisor: Some("pHyp"),
        shared_processor: false,
        places: power_places(&nodes, 8, true),
        nodes: vec![(0, None), (1, None)],
        distances: matrix(2, |_, _| 40),
        caches: CACHES,
    })
}

/// Seed 001's node cpulists, exactly as lscpu printed them.
const POWER10_768_NODES: &[(u32, &str)] = &[
    (0, "0-7,32-39,80-87,128-135,176-183,224-231,272-279,320-327,368-375,416-423,464-471,512-519,560-567,608-615,656-663,704-711,752-759"),
    (1, "8-15,40-47,88-95,136-143,184-191,232-239,280-287,328-335,376-383,424-431,472-479,520-527,568-575,616-623,664-671,712-719,760-767"),
    (4, "64-71,112-119,160-167,208-215,256-263,304-311,352-359,400-407,448-455,496-503,544-551,592-599,640-647,688-695,736-743"),
    (5, "16-23,48-55,96-103,144-151,192-199,240-247,288-295,336-343,384-391,432-439,480-487,528-535,576-583,624-631,672-679,720-727"),
    (6, "72-79,120-127,168-175,216-223,264-271,312-319,360-367,408-415,456-463,504-511,552-559,600-607,648-655,696-703,744-751"),
    (7, "24-31,56-63,104-111,152-159,200-207,248-255,296-303,344-351,392-399,440-447,488-495,536-543,584-591,632-639,680-687,728-735"),
];
const POWER10_320_NODES: &[(u32, &str)] = &[
    (
        0,
        "0-7,32-39,64-71,96-103,128-135,160-167,192-199,224-231,256-263,288-295",
    ),
    (
        1,
        "8-15,40-47,72-79,104-111,136-143,168-175,200-207,232-239,264-271,296-303",
    ),
    (
        4,
        "16-23,48-55,80-87,112-119,144-151,176-183,208-215,240-247,272-279,304-311",
    ),
    (
        5,
        "24-31,56-63,88-95,120-127,152-159,184-191,216-223,248-255,280-287,312-319",
    ),
];

/// Seed 001: POWER10 shared-processor LPARs (768 or 320 CPUs). Assumed:
/// node = package, even/odd thread groups, no L2/L3, 10/40 distances.
fn power10_shared(cpus: u32) -> Result<Topology, String> {
    const CACHES: &[CacheSpec] = &[
        cache(1, CacheKind::Data, 32 * KIB, Scope::Core),
        cache(1, CacheKind::Instruction, 48 * KIB, Scope::Core),
    ];
    let (name, lists) = if cpus == 768 {
        ("power10-shared-768", POWER10_768_NODES)
    } else {
        ("power10-shared-320", POWER10_320_NODES)
    };
    let mut nodes = Vec::new();
    for (id, list) in lists {
        nodes.push((*id, CpuMask::parse_list(list).map_err(|e| e.to_string())?));
    }
    assemble(Machine {
        name,
        arch: Arch::PowerPc64,
        model: Some("POWER10 (architected), altivec supported"),
        hypervisor: Some("pHyp"),
        shared_processor: true,
        places: power_places(&nodes, 8, true),
        nodes: nodes.iter().map(|(id, _)| (*id, None)).collect(),
        distances: matrix(nodes.len(), |_, _| 40),
        caches: CACHES,
    })
}

/// Per-core L1d, L1i, L2 and per-socket L3 sizes of an x86 generation.
struct X86Caches {
    l1d: u64,
    l1i: u64,
    l2: u64,
    l3: u64,
}

impl X86Caches {
    const WESTMERE_EP: X86Caches = X86Caches {
        l1d: 32 * KIB,
        l1i: 32 * KIB,
        l2: 256 * KIB,
        l3: 12 * MIB,
    };
    const NEHALEM_EX: X86Caches = X86Caches {
        l1d: 32 * KIB,
        l1i: 32 * KIB,
        l2: 256 * KIB,
        l3: 18 * MIB,
    };
    const ICE_LAKE_SP: X86Caches = X86Caches {
        l1d: 48 * KIB,
        l1i: 32 * KIB,
        l2: 1280 * KIB,
        l3: 48 * MIB,
    };

    fn specs(&self) -> [CacheSpec; 4] {
        [
            cache(1, CacheKind::Data, self.l1d, Scope::Core),
            cache(1, CacheKind::Instruction, self.l1i, Scope::Core),
            cache(2, CacheKind::Unified, self.l2, Scope::Core),
            cache(3, CacheKind::Unified, self.l3, Scope::Package),
        ]
    }
}

/// Bits needed to hold `n` distinct values (x86 APIC id fields).
fn bits_for(n: u32) -> u32 {
    if n <= 1 {
        0
    } else {
        32 - (n - 1).leading_zeros()
    }
}

/// x86 CPUs numbered as seed 002 boots them: all first threads (socket by
/// socket), then all second threads; one node per socket.
fn x86_places(sockets: u32, cores: u32, threads: u32) -> Vec<Place> {
    let total_cores = sockets * cores;
    let (core_bits, thread_bits) = (bits_for(cores), bits_for(threads));
    let mut places = Vec::new();
    for t in 0..threads {
        for s in 0..sockets {
            for c in 0..cores {
                places.push(Place {
                    cpu: t * total_cores + s * cores + c,
                    package: s,
                    cluster: None,
                    big_core: None,
                    core: s * cores + c,
                    node: s,
                    hw_id: ((s as u64) << (core_bits + thread_bits))
                        | ((c as u64) << thread_bits)
                        | t as u64,
                });
            }
        }
    }
    places
}

/// Seeds 002 and 003: two-socket x86 servers, one node per socket. Assumed:
/// cache sizes of the named generation, 10/21 (10/20 for seed 003) distances;
/// for seed 003 also the 2 × 32 × 2 split of its 128 CPUs.
fn x86_two_socket(cores: u32, threads: u32, caches: X86Caches) -> Result<Topology, String> {
    let name = match (cores, threads) {
        (6, 1) => "x86-2s-12",
        (8, 1) => "x86-2s-16",
        (8, 2) => "x86-2s-32ht",
        _ => "x86-2n-128",
    };
    let far = if name == "x86-2n-128" { 20 } else { 21 };
    let specs = caches.specs();
    assemble(Machine {
        name,
        arch: Arch::X86_64,
        model: None,
        hypervisor: None,
        shared_processor: false,
        places: x86_places(2, cores, threads),
        nodes: vec![(0, None), (1, None)],
        distances: matrix(2, |_, _| far),
        caches: &specs,
    })
}

/// Seed 002: the 4096-CPU SGI UV. Assumed: node = socket, X7550-class caches,
/// a UV 2000-like SLIT (50 blade, 65 chassis, 79 beyond).
fn x86_uv_4096() -> Result<Topology, String> {
    let specs = X86Caches::NEHALEM_EX.specs();
    assemble(Machine {
        name: "x86-uv-4096",
        arch: Arch::X86_64,
        model: None,
        hypervisor: None,
        shared_processor: false,
        places: x86_places(256, 8, 2),
        nodes: (0..256).map(|n| (n, None)).collect(),
        distances: matrix(256, |i, j| {
            if i / 2 == j / 2 {
                50
            } else if i / 16 == j / 16 {
                65
            } else {
                79
            }
        }),
        caches: &specs,
    })
}

/// Seed 004: HiSilicon D06, two Kunpeng 920 sockets. Assumed: Kunpeng 920-6426
/// core, cluster and cache counts, the 10/12/20/22/24 SLIT, 16 GiB per memory node.
fn arm64_d06() -> Result<Topology, String> {
    const CACHES: &[CacheSpec] = &[
        cache(1, CacheKind::Data, 64 * KIB, Scope::Core),
        cache(1, CacheKind::Instruction, 64 * KIB, Scope::Core),
        cache(2, CacheKind::Unified, 512 * KIB, Scope::Core),
        cache(3, CacheKind::Unified, 32 * MIB, Scope::Node),
    ];
    let mut places = Vec::new();
    for cpu in 0..128u32 {
        let node = cpu / 32;
        let cluster = cpu / 4;
        places.push(Place {
            cpu,
            package: cpu / 64,
            cluster: Some(cluster),
            big_core: None,
            core: cpu,
            node,
            hw_id: ((node as u64) << 16) | (((cluster % 8) as u64) << 8) | (cpu % 4) as u64,
        });
    }
    // Kunpeng 920 two-socket SLIT: same-socket node 12, the other socket's
    // near node 20, its far nodes 22 / 24.
    const SLIT: [[u32; 4]; 4] = [
        [10, 12, 20, 22],
        [12, 10, 22, 24],
        [20, 22, 10, 12],
        [22, 24, 12, 10],
    ];
    assemble(Machine {
        name: "arm64-d06",
        arch: Arch::Arm64,
        model: Some("Kunpeng-920"),
        hypervisor: None,
        shared_processor: false,
        places,
        nodes: vec![
            (0, Some(16 * GIB)),
            (1, Some(0)),
            (2, Some(0)),
            (3, Some(16 * GIB)),
        ],
        distances: matrix(4, |i, j| SLIT[i][j]),
        caches: CACHES,
    })
}
