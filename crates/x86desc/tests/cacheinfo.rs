//! Host tests of the CPUID cache reader the bare-metal kernel runs
//! (`x86desc::cacheinfo`) fed CPUID tables encoded by the
//! Intel SDM (leaf 4) and the AMD APM (0x8000_0005/6, 0x8000_001D/1E). The
//! expected caches come from those encodings and Linux 6.12's sharing rules,
//! and for QEMU's `qemu64` from the Linux guest's own sysfs snapshot; random
//! tables must never panic or loop.

mod support;

use std::collections::BTreeMap;
use std::path::Path;

use cpumask::CpuMask;
use proptest::prelude::*;
use support::{leaf0, signature, Table};
use topology::{Cache, CacheKind};
use x86desc::cacheinfo::{
    self, read, shared_instances, CpuCaches, Placed, Sharing, Source, Vendor,
};
use x86desc::shifts;

/// The caches of the CPU with APIC id `apic` with this CPUID. The tables
/// here hold no extended topology leaf: `xtopology` stands for leaf 0xB's
/// core-level shift on a CPU that has one (its x2APIC id is then the full
/// one); without it the topology is read from the table.
trait Caches {
    fn caches(&self, apic: u32, xtopology: Option<u32>) -> CpuCaches;
}

impl Caches for Table {
    fn caches(&self, apic: u32, xtopology: Option<u32>) -> CpuCaches {
        let mut topology = shifts::read(self.reader());
        if let Some(core) = xtopology {
            topology.shifts.core = core;
            topology.apic_id_8bit = false;
        }
        read(&self.cpuid(), apic, &topology)
    }
}

/// A leaf 4 / 0x8000_001D sub-leaf: type (1 data, 2 instruction, 3 unified),
/// level, logical processors sharing it, ways, line, sets.
fn deterministic(kind: u32, level: u32, sharing: u32, ways: u32, line: u32, sets: u32) -> [u32; 4] {
    [
        kind | (level << 5) | (1 << 8) | ((sharing - 1) << 14),
        (line - 1) | ((ways - 1) << 22),
        sets - 1,
        0,
    ]
}

fn cache(level: u8, kind: CacheKind, bytes: u64, ways: u32, cpus: &str) -> Cache {
    Cache {
        level,
        kind,
        size_bytes: Some(bytes),
        line_bytes: Some(64),
        ways: Some(ways),
        cpus: CpuMask::parse_list(cpus).unwrap().into(),
    }
}

/// Groups CPUs (number, APIC id, node) whose CPUID is `table_for(apic)`.
fn instances(
    cpus: &[(u32, u32, u32)],
    xtopology: Option<u32>,
    table_for: impl Fn(u32) -> Table,
) -> (Vec<CpuCaches>, Vec<Cache>) {
    let read_all: Vec<CpuCaches> = cpus
        .iter()
        .map(|&(_, apic, _)| table_for(apic).caches(apic, xtopology))
        .collect();
    let placed = cpus
        .iter()
        .zip(&read_all)
        .map(|(&(cpu, _, node), &caches)| Placed { cpu, node, caches });
    let mut out = shared_instances(placed, 1);
    out.sort_by_key(|c| (c.level, c.kind, c.cpus.first()));
    (read_all, out)
}

/// QEMU's `qemu64` (AuthenticAMD family 15 model 107, no TOPOEXT), with its
/// legacy cache model encoded as QEMU's encode_cache_cpuid8000000{5,6} do.
fn qemu64(apic: u32, threads_per_package: u32) -> Table {
    let mut t = BTreeMap::new();
    leaf0(&mut t, 0xd, b"AuthenticAMD");
    t.insert(
        (1, 0),
        [
            signature(0xf, 0x6b),
            (apic & 0xff) << 24 | threads_per_package << 16,
            0,
            1 << 28,
        ],
    );
    t.insert((0x8000_0000, 0), [0x8000_0008, 0, 0, 0]);
    // L1: size KiB [31:24], ways [23:16], lines per tag [15:8], line [7:0].
    let l1 = (64 << 24) | (2 << 16) | (1 << 8) | 64;
    t.insert((0x8000_0005, 0), [0, 0, l1, l1]);
    // L2: size KiB [31:16], ways code [15:12] (8 = 16-way); L3: 512 KiB units [31:18].
    let l2 = (512 << 16) | (0x8 << 12) | (1 << 8) | 64;
    let l3 = (32 << 18) | (0x8 << 12) | (1 << 8) | 64;
    t.insert((0x8000_0006, 0), [0, 0, l2, l3]);
    t.insert((0x8000_0008, 0), [0x3028, 0, threads_per_package - 1, 0]);
    Table::new(t)
}

/// QEMU's APIC ids for sockets x cores x threads (each field a power of two).
fn qemu_apic(index: u32, cores: u32, threads: u32) -> u32 {
    let bits = |n: u32| cacheinfo::count_order(n);
    let (t, c, s) = (
        index % threads,
        (index / threads) % cores,
        index / (threads * cores),
    );
    (s << (bits(cores) + bits(threads))) | (c << bits(threads)) | t
}

#[test]
fn qemu64_legacy_leaves_give_the_linux_guests_sysfs_caches() {
    // x86-2s4c2t: -smp 16,sockets=2,cores=4,threads=2, leaf 0xB core shift 3.
    let cpus: Vec<(u32, u32, u32)> = (0..16).map(|i| (i, qemu_apic(i, 4, 2), 0)).collect();
    let (read_all, ours) = instances(&cpus, Some(3), |apic| qemu64(apic, 8));
    assert_eq!(read_all[0].vendor, Vendor::Amd);
    assert_eq!(read_all[0].source, Source::AmdLegacy);
    assert!(Source::AmdLegacy.describe().contains("0x80000005/6"));
    // The boot CPU's reading, moved to another APIC id, predicts what that
    // CPU reads itself (what the kernel assumes before the APs are up).
    for (c, &(_, apic, _)) in read_all.iter().zip(&cpus) {
        assert_eq!(read_all[0].for_apic_id(apic), *c, "APIC id {apic}");
    }
    let snapshot =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../domains/tests/data/x86-2s4c2t-sysfs.tar.gz");
    let guest = readers::sysfs::read_path(&snapshot).expect("guest sysfs");
    assert_eq!(ours, guest.caches());

    // From level 2 up (what the kernel keeps past its memory budget, and
    // gives the hotplug engine): the same minus the L1s.
    let placed = cpus
        .iter()
        .zip(&read_all)
        .map(|(&(cpu, _, node), &caches)| Placed { cpu, node, caches });
    let mut from_l2 = shared_instances(placed, 2);
    from_l2.sort_by_key(|c| (c.level, c.kind, c.cpus.first()));
    let want: Vec<Cache> = guest
        .caches()
        .iter()
        .filter(|c| c.level >= 2)
        .cloned()
        .collect();
    assert_eq!(from_l2, want);

    // Without leaf 0xB Linux shifts leaf 1's 8-bit initial APIC id by
    // 0x8000_0008's width: the same L3s here.
    let (_, legacy) = instances(&cpus, None, |apic| qemu64(apic, 8));
    assert_eq!(legacy, guest.caches());
}

#[test]
fn amd_legacy_l3_is_cut_at_the_node_and_uses_leaf_1s_eight_bits() {
    // x86-4n-dist: the same CPUs, nodes of 4: the socket's L3 splits per node
    // (topology_sane), as the guest's sysfs shows (L3 0-3, 4-7, ...).
    let cpus: Vec<(u32, u32, u32)> = (0..16).map(|i| (i, qemu_apic(i, 4, 2), i / 4)).collect();
    let (_, ours) = instances(&cpus, Some(3), |apic| qemu64(apic, 8));
    let l3: Vec<String> = ours
        .iter()
        .filter(|c| c.level == 3)
        .map(|c| c.cpus.to_list_string())
        .collect();
    assert_eq!(l3, ["0-3", "4-7", "8-11", "12-15"]);

    // No leaf 0xB, 2 sockets of 256 threads: the APIC ids 0x000-0x1ff keep only
    // 8 bits, so Linux's LLC id (apicid & 0xff) >> 8 is 0 on both sockets and
    // one L3 spans them. The reader follows Linux, quirk included.
    let cpus: Vec<(u32, u32, u32)> = [0u32, 1, 0x100, 0x101]
        .iter()
        .enumerate()
        .map(|(i, &a)| (i as u32, a, 0))
        .collect();
    let (read_all, ours) = instances(&cpus, None, |apic| qemu64(apic, 256));
    assert_eq!(
        read_all[2].leaves().last().unwrap().sharing,
        Sharing::LlcShift {
            bits: 8,
            low8: true
        }
    );
    let l3: Vec<String> = ours
        .iter()
        .filter(|c| c.level == 3)
        .map(|c| c.cpus.to_list_string())
        .collect();
    assert_eq!(l3, ["0-3"]);
    // With leaf 0xB the full x2APIC id is shifted: one L3 per socket.
    let (_, ours) = instances(&cpus, Some(8), |apic| qemu64(apic, 256));
    let l3: Vec<String> = ours
        .iter()
        .filter(|c| c.level == 3)
        .map(|c| c.cpus.to_list_string())
        .collect();
    assert_eq!(l3, ["0-1", "2-3"]);
}

/// An Intel CPU through leaf 4 (SDM vol. 2A, CPUID leaf 04H): L1d 48 KiB
/// 12-way, L1i 32 KiB 8-way and L2 2 MiB 16-way per core (2 threads), L3
/// 32 MiB 16-way per 16 APIC ids.
fn intel(apic: u32) -> Table {
    let mut t = BTreeMap::new();
    leaf0(&mut t, 0xb, b"GenuineIntel");
    t.insert(
        (1, 0),
        [signature(6, 0x8f), (apic & 0xff) << 24, 0, 1 << 28],
    );
    t.insert((4, 0), deterministic(1, 1, 2, 12, 64, 64));
    t.insert((4, 1), deterministic(2, 1, 2, 8, 64, 64));
    t.insert((4, 2), deterministic(3, 2, 2, 16, 64, 2048));
    t.insert((4, 3), deterministic(3, 3, 16, 16, 64, 32768));
    Table::new(t)
}

#[test]
fn intel_leaf_4_shares_by_apic_id_bits_and_keeps_the_l3_whole_across_nodes() {
    // 2 sockets x 8 cores x 2 threads (APIC bit 4 = socket), 2 nodes per socket.
    let cpus: Vec<(u32, u32, u32)> = (0..32).map(|i| (i, qemu_apic(i, 8, 2), i / 8)).collect();
    let (read_all, ours) = instances(&cpus, Some(4), intel);
    assert_eq!(
        (read_all[0].vendor, read_all[0].source),
        (Vendor::Intel, Source::Leaf4)
    );
    let mut want = Vec::new();
    for core in 0..16u32 {
        let pair = format!("{}-{}", 2 * core, 2 * core + 1);
        want.push(cache(1, CacheKind::Data, 48 << 10, 12, &pair));
        want.push(cache(1, CacheKind::Instruction, 32 << 10, 8, &pair));
        want.push(cache(2, CacheKind::Unified, 2 << 20, 16, &pair));
    }
    // Linux's sysfs map for leaf 4 has no node check (only the scheduler's
    // LLC mask does, and the domains crate applies it).
    want.push(cache(3, CacheKind::Unified, 32 << 20, 16, "0-15"));
    want.push(cache(3, CacheKind::Unified, 32 << 20, 16, "16-31"));
    want.sort_by_key(|c| (c.level, c.kind, c.cpus.first()));
    assert_eq!(ours, want);
}

#[test]
fn intel_without_leaf_4_reports_no_caches() {
    let mut t = BTreeMap::new();
    leaf0(&mut t, 2, b"GenuineIntel");
    t.insert((4, 0), deterministic(1, 1, 2, 12, 64, 64)); // beyond the max leaf
    let c = Table::new(t).caches(0, None);
    assert_eq!(c.source, Source::Nothing);
    assert_eq!(c.leaves().count(), 0);
}

/// An AMD CPU with TOPOEXT (APM vol. 3, Fn8000_001D and Fn8000_001E): L1d,
/// L1i 32 KiB 8-way and L2 1 MiB 8-way per core (2 threads), L3 32 MiB 16-way
/// per 16 threads.
fn amd_topoext(family: u32, model: u32, apic: u32, node_id: u32) -> Table {
    let mut t = BTreeMap::new();
    leaf0(&mut t, 0x10, b"AuthenticAMD");
    t.insert(
        (1, 0),
        [signature(family, model), (apic & 0xff) << 24, 0, 1 << 28],
    );
    t.insert((0x8000_0000, 0), [0x8000_001f, 0, 0, 0]);
    t.insert((0x8000_0001, 0), [0, 0, 1 << 22, 0]);
    let l3 = (64 << 18) | (0x9 << 12) | (1 << 8) | 64; // non-zero: an L3 exists
    t.insert(
        (0x8000_0006, 0),
        [0, 0, (1024 << 16) | (0x6 << 12) | 64, l3],
    );
    t.insert((0x8000_001d, 0), deterministic(1, 1, 2, 8, 64, 64));
    t.insert((0x8000_001d, 1), deterministic(2, 1, 2, 8, 64, 64));
    t.insert((0x8000_001d, 2), deterministic(3, 2, 2, 8, 64, 2048));
    t.insert((0x8000_001d, 3), deterministic(3, 3, 16, 16, 64, 32768));
    t.insert((0x8000_001e, 0), [apic, 0x100, node_id, 0]);
    Table::new(t)
}

#[test]
fn amd_topoext_shares_by_apic_blocks_and_llc_id_per_family() {
    // One socket of 32 threads (16 cores x 2), two nodes of 16.
    let cpus: Vec<(u32, u32, u32)> = (0..32).map(|i| (i, i, i / 16)).collect();
    let l3_of = |ours: &[Cache]| -> Vec<String> {
        ours.iter()
            .filter(|c| c.level == 3)
            .map(|c| c.cpus.to_list_string())
            .collect()
    };
    // Family 0x19: LLC id = APIC id >> order(16): two L3s of 16.
    let (read_all, ours) = instances(&cpus, Some(5), |a| amd_topoext(0x19, 0x01, a, a / 16));
    assert_eq!(read_all[0].source, Source::Amd8000001d);
    assert_eq!(l3_of(&ours), ["0-15", "16-31"]);
    let l2: Vec<String> = ours
        .iter()
        .filter(|c| c.level == 2)
        .map(|c| c.cpus.to_list_string())
        .collect();
    assert_eq!(l2.len(), 16);
    assert_eq!(l2[3], "6-7");
    assert!(ours.iter().all(|c| c.line_bytes == Some(64)));
    assert_eq!(
        ours.iter().find(|c| c.level == 3).unwrap().size_bytes,
        Some(32 << 20)
    );
    // Family 0x17 models up to 0x1F: LLC id = APIC id >> 3 (a CCX of 8),
    // whatever the leaf's sharing says.
    let (_, ours) = instances(&cpus, Some(5), |a| amd_topoext(0x17, 0x01, a, a / 16));
    assert_eq!(l3_of(&ours), ["0-7", "8-15", "16-23", "24-31"]);
    // Before family 0x17: the node id of 0x8000_001E, here one per 16 threads
    // but reported as 0 for all: a single LLC id, still cut at the node.
    let (_, ours) = instances(&cpus, Some(5), |a| amd_topoext(0x15, 0x02, a, 0));
    assert_eq!(l3_of(&ours), ["0-15", "16-31"]);
    let (_, ours) = instances(&cpus, Some(5), |a| amd_topoext(0x15, 0x02, a, a / 8));
    assert_eq!(l3_of(&ours), ["0-7", "8-15", "16-23", "24-31"]);
}

#[test]
fn leaves_that_never_end_are_bounded() {
    // A leaf 4 whose every sub-leaf is a cache: Linux would spin; the reader
    // stops at MAX_LEAVES.
    let t: Table = {
        let mut m = BTreeMap::new();
        leaf0(&mut m, 4, b"GenuineIntel");
        for sub in 0..64 {
            m.insert((4, sub), deterministic(3, 2, 1, 4, 64, 64));
        }
        Table::new(m)
    };
    let c = t.caches(0, None);
    assert_eq!(c.leaves().count(), cacheinfo::MAX_LEAVES);
}

const LEAVES: &[(u32, u32)] = &[
    (1, 0),
    (4, 0),
    (4, 1),
    (4, 2),
    (4, 3),
    (4, 4),
    (0xb, 0),
    (0x8000_0001, 0),
    (0x8000_0005, 0),
    (0x8000_0006, 0),
    (0x8000_0008, 0),
    (0x8000_001d, 0),
    (0x8000_001d, 1),
    (0x8000_001d, 2),
    (0x8000_001d, 3),
    (0x8000_001d, 4),
    (0x8000_001e, 0),
];

fn random_table() -> impl Strategy<Value = Table> {
    (
        0usize..3,
        0u32..0x20,
        prop::collection::vec(prop::array::uniform4(any::<u32>()), LEAVES.len()),
        any::<bool>(),
    )
        .prop_map(|(v, max, regs, endless)| {
            let mut t = BTreeMap::new();
            let names: [&[u8; 12]; 3] = [b"GenuineIntel", b"AuthenticAMD", b"HygonGenuine"];
            leaf0(&mut t, max, names[v]);
            t.insert((0x8000_0000, 0), [0x8000_0020, 0, 0, 0]);
            for (&k, r) in LEAVES.iter().zip(regs) {
                t.insert(k, r);
            }
            if endless {
                // Every later sub-leaf repeats the first: never a null type.
                for leaf in [4, 0x8000_001d] {
                    let first = t[&(leaf, 0)];
                    for sub in 5..40 {
                        t.insert((leaf, sub), first);
                    }
                }
            }
            Table::new(t)
        })
}

proptest! {
    /// Whatever CPUID says, reading never panics, keeps at most MAX_LEAVES,
    /// and grouping puts each CPU in exactly one instance per leaf it has (of
    /// level 1 and up), never a CPU that was not given.
    #[test]
    fn random_cpuid_never_panics(
        tables in prop::collection::vec(random_table(), 1..6),
        apics in prop::collection::vec(any::<u32>(), 6),
        nodes in prop::collection::vec(0u32..3, 6),
        shift in prop::option::of(0u32..40),
    ) {
        let read_all: Vec<CpuCaches> = tables
            .iter()
            .zip(&apics)
            .map(|(t, &a)| t.caches(a, shift))
            .collect();
        let mut given = CpuMask::new();
        let placed: Vec<Placed> = read_all
            .iter()
            .enumerate()
            .map(|(i, &caches)| {
                given.set(i);
                Placed { cpu: i as u32, node: nodes[i], caches }
            })
            .collect();
        for c in &read_all {
            prop_assert!(c.leaves().count() <= cacheinfo::MAX_LEAVES);
        }
        let out = shared_instances(placed, 1);
        let total: usize = out.iter().map(|c| c.cpus.weight()).sum();
        // Level 0 is no cache level: min_level 1 drops such leaves.
        let leaves: usize = read_all
            .iter()
            .map(|c| c.leaves().filter(|l| l.level >= 1).count())
            .sum();
        prop_assert_eq!(total, leaves);
        for c in &out {
            prop_assert!(c.cpus.is_subset(&given));
            prop_assert!(!c.cpus.is_empty());
        }
    }
}
