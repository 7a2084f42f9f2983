//! `x86desc::shifts::read` fed CPUID tables written by hand, one per path
//! of Linux 6.12-stable's topology scan. Each expectation is worked out from
//! the kernel's functions, named in the test, not from this crate's output:
//!
//! - topology_common.c: `parse_topology` (vendor dispatch, leaf 1's 8-bit
//!   initial APIC id), `fake_topology`, `parse_legacy` and
//!   `parse_num_cores_legacy`, `topology_set_dom` (a level sets its domain
//!   and every one above), `topo_set_ids` (package = APIC id >> the die
//!   group's shift, die = APIC id >> the tile's shift, core = the bits
//!   between the SMT shift and the package mask);
//! - topology_ext.c: `cpu_parse_topology_ext` (0x1F, then 0x8000_0026, then
//!   0xB), `parse_topology_leaf` and `topo_subleaf` (level types, the
//!   domain above the last known one for an unknown type, the SMT shift-0
//!   fix-up);
//! - topology_amd.c: `parse_topology_amd`, `parse_8000_0008`,
//!   `parse_8000_001e` (with the stable fixes cba4262a19af "Always try
//!   cpu_parse_topology_ext() on AMD/Hygon" and the family >= 0x17 SMT
//!   rule), the Hygon package shift of 6;
//! - common.c `get_cpu_cap`: 0x8000_0001's feature flags are read only when
//!   0x8000_0000 says 0x8000_xxxx.

mod support;

use support::{leaf0, signature, Leaves, Table};
use x86desc::shifts::{read, ApicIds, ApicShifts, CpuTopology};
use x86desc::Vendor;

// Level types of leaves 0xB and 0x1F (SDM vol. 2A, CPUID leaf 1FH).
const SMT: u32 = 1;
const CORE: u32 = 2;
const MODULE: u32 = 3;
const TILE: u32 = 4;
const DIE: u32 = 5;
const DIEGRP: u32 = 6;
// Level types of AMD's 0x8000_0026 (APM vol. 3, Fn8000_0026).
const AMD_CCD: u32 = 3;
const AMD_SOCKET: u32 = 4;

/// Leaf 1 EDX bit 28 (HTT), ECX bit 31 (running under a hypervisor), and
/// 0x8000_0001 ECX bit 22 (TOPOEXT).
const HTT: u32 = 1 << 28;
const HYPERVISOR: u32 = 1 << 31;
const TOPOEXT: u32 = 1 << 22;

/// Writes an extended topology leaf: one sub-leaf per (type, shift, CPUs),
/// each with `x2apic` in EDX; the sub-leaf after them reads as zeros.
fn ext_leaf(t: &mut Leaves, leaf: u32, x2apic: u32, levels: &[(u32, u32, u32)]) {
    for (sub, &(kind, shift, ncpus)) in levels.iter().enumerate() {
        let sub = sub as u32;
        t.insert((leaf, sub), [shift, ncpus, (kind << 8) | sub, x2apic]);
    }
}

/// Leaf 1: family/model, 8-bit APIC id, logical processors per package,
/// and the feature bits given.
fn leaf1(t: &mut Leaves, family: u32, model: u32, apic: u32, nproc: u32, ecx: u32, edx: u32) {
    t.insert(
        (1, 0),
        [
            signature(family, model),
            ((apic & 0xff) << 24) | ((nproc & 0xff) << 16),
            ecx,
            edx,
        ],
    );
}

fn shifts(smt: u32, core: u32, die: Option<u32>, package: u32, leaf: u32) -> ApicShifts {
    ApicShifts {
        smt,
        core,
        die,
        package,
        leaf,
    }
}

fn topo(t: Leaves) -> CpuTopology {
    read(Table::new(t).reader())
}

/// An Intel CPU with leaf 0 up to `max` and leaf 1 (HTT, 8-bit APIC id `apic`).
fn intel(max: u32, apic: u32) -> Leaves {
    let mut t = Leaves::new();
    leaf0(&mut t, max, b"GenuineIntel");
    leaf1(&mut t, 6, 0x8f, apic, 0, 0, HTT);
    t.insert((0x8000_0000, 0), [0x8000_0008, 0, 0, 0]);
    t
}

#[test]
fn intel_leaf_1f_sets_module_tile_and_die_and_wins_over_leaf_b() {
    // 2 threads a core, 4 cores a module, 2 modules a tile, 2 tiles a die,
    // 4 dies a package. Leaf 0xB, also present, says otherwise: Linux reads
    // 0x1F first (`cpu_parse_topology_ext`).
    let mut t = intel(0x1f, 0xed);
    let levels = [
        (SMT, 1, 2),
        (CORE, 3, 8),
        (MODULE, 4, 16),
        (TILE, 5, 32),
        (DIE, 7, 128),
    ];
    ext_leaf(&mut t, 0x1f, 0x1ed, &levels);
    ext_leaf(&mut t, 0xb, 0x1ed, &[(SMT, 1, 2), (CORE, 9, 512)]);
    let c = topo(t);
    // topology_set_dom: SMT 1, CORE 3, MODULE 4, TILE 5, DIE = DIEGRP = 7.
    assert_eq!(c.shifts, shifts(1, 3, Some(5), 7, 0x1f));
    // topo_subleaf: the SMT level's EDX is the initial APIC id, all 32 bits.
    assert_eq!(
        (c.apic_id, c.apic_id_8bit, c.vendor),
        (0x1ed, false, Vendor::Intel)
    );
    // topo_set_ids for APIC id 0x1ed = 0b11_11_0110_1: package 0x1ed >> 7 =
    // 3; die 0x1ed >> 5 = 15 (Linux's id counts across packages: die 3 of
    // package 3); core (0x1ed & 0x7f) >> 1 = 54.
    assert_eq!(
        c.shifts.ids(0x1ed),
        ApicIds {
            package: 3,
            die: Some(3),
            core: 54
        }
    );

    // A die-group level above the dies: the package is above it, the die
    // field runs from the tile's shift (here the core's, propagated) to it.
    let mut t = intel(0x1f, 0);
    let levels = [(SMT, 1, 2), (CORE, 4, 16), (DIE, 6, 64), (DIEGRP, 8, 256)];
    ext_leaf(&mut t, 0x1f, 0, &levels);
    assert_eq!(topo(t).shifts, shifts(1, 4, Some(4), 8, 0x1f));
}

#[test]
fn intel_leaf_b_alone_and_as_the_fallback_of_an_empty_leaf_1f() {
    // 12 cores x 2 threads; leaf 0 stops below 0x1F.
    let mut t = intel(0x16, 0x2b);
    ext_leaf(&mut t, 0xb, 0x2b, &[(SMT, 1, 2), (CORE, 5, 24)]);
    let c = topo(t.clone());
    assert_eq!(c.shifts, shifts(1, 5, None, 5, 0xb));
    assert_eq!((c.apic_id, c.apic_id_8bit), (0x2b, false));
    // 0x2b = 43: package 43 >> 5 = 1, core (43 & 31) >> 1 = 5.
    assert_eq!(
        c.shifts.ids(43),
        ApicIds {
            package: 1,
            die: None,
            core: 5
        }
    );

    // Leaf 0 reaches 0x1F but its sub-leaf 0 is empty: parse_topology_leaf
    // gives up on it and 0xB is read.
    t.insert((0, 0), [0x1f, t[&(0, 0)][1], t[&(0, 0)][2], t[&(0, 0)][3]]);
    assert_eq!(topo(t.clone()).shifts, shifts(1, 5, None, 5, 0xb));
    // A sub-leaf 0 with a type but no CPUs is as empty (topo_subleaf).
    t.insert((0x1f, 0), [1, 0, SMT << 8, 0x2b]);
    assert_eq!(topo(t).shifts, shifts(1, 5, None, 5, 0xb));

    // Type 3 is beyond leaf 0xB's types: topo_subleaf puts it in the
    // domain above the last known one (CORE + 1 = MODULE), so the package
    // moves up with it and no die appears (TILE = DIEGRP = 6).
    let mut t = intel(0x16, 0);
    ext_leaf(&mut t, 0xb, 0, &[(SMT, 1, 2), (CORE, 4, 16), (3, 6, 64)]);
    assert_eq!(topo(t).shifts, shifts(1, 4, None, 6, 0xb));
}

#[test]
fn intel_legacy_leaf_1_and_leaf_4() {
    // parse_legacy: leaf 4 sub-leaf 0 says 4 cores (EAX[31:26] = 3, type 1);
    // with HTT, leaf 1 says 16 logical processors: nproc shift 4, core
    // shift 2, so SMT shift 2 and core shift 4.
    let legacy = |nproc: u32, edx: u32, leaf4: [u32; 4]| {
        let mut t = Leaves::new();
        leaf0(&mut t, 4, b"GenuineIntel");
        leaf1(&mut t, 6, 0x0f, 0x9, nproc, 0, edx);
        t.insert((4, 0), leaf4);
        topo(t)
    };
    let four_cores = [1 | (3 << 26), 0, 0, 0];
    let c = legacy(16, HTT, four_cores);
    assert_eq!(c.shifts, shifts(2, 4, None, 4, 1));
    // parse_topology: leaf 1 EBX[31:24], nothing wider.
    assert_eq!((c.apic_id, c.apic_id_8bit), (0x9, true));
    // Without HTT leaf 1's count is not read: threads are not counted.
    assert_eq!(legacy(16, 0, four_cores).shifts, shifts(0, 2, None, 2, 1));
    // parse_num_cores_legacy: a null cache type means one core, whatever
    // EAX[31:26] holds; 2 logical processors are then 2 threads.
    let null = [3 << 26, 0, 0, 0];
    assert_eq!(legacy(2, HTT, null).shifts, shifts(1, 1, None, 1, 1));
    // Fewer logical processors than cores (the WARN_ON_ONCE case): no SMT.
    let eight_cores = [1 | (7 << 26), 0, 0, 0];
    assert_eq!(legacy(2, HTT, eight_cores).shifts, shifts(0, 3, None, 3, 1));

    // Leaf 4 beyond leaf 0's maximum (cpuid_level < 4): one core.
    let mut t = Leaves::new();
    leaf0(&mut t, 2, b"GenuineIntel");
    leaf1(&mut t, 6, 0x0f, 0, 4, 0, HTT);
    t.insert((4, 0), four_cores);
    assert_eq!(topo(t).shifts, shifts(2, 2, None, 2, 1));

    // Centaur and Zhaoxin always take the legacy path, leaf 0xB or not.
    for v in [b"CentaurHauls", b"  Shanghai  "] {
        let mut t = Leaves::new();
        leaf0(&mut t, 0xb, v);
        leaf1(&mut t, 6, 0x0f, 0, 16, 0, HTT);
        t.insert((4, 0), four_cores);
        ext_leaf(&mut t, 0xb, 0x77, &[(SMT, 1, 2), (CORE, 6, 64)]);
        let c = topo(t);
        assert_eq!(c.shifts, shifts(2, 4, None, 4, 1));
        assert!(c.apic_id_8bit);
    }
}

/// An AMD or Hygon CPU: leaf 0 up to `max`, extended leaves up to `max_ext`,
/// 0x8000_0001 ECX `ext_ecx`, 0x8000_0008 ECX `ecx8`, 0x8000_001E
/// (EAX extended APIC id, EBX[15:8] threads per core - 1).
#[allow(clippy::too_many_arguments)]
fn amd(
    v: &[u8; 12],
    family: u32,
    model: u32,
    max: u32,
    max_ext: u32,
    ext_ecx: u32,
    ecx8: u32,
    e: (u32, u32),
) -> Leaves {
    let mut t = Leaves::new();
    leaf0(&mut t, max, v);
    leaf1(&mut t, family, model, 0x13, 0, 0, HTT);
    t.insert((0x8000_0000, 0), [max_ext, 0, 0, 0]);
    t.insert((0x8000_0001, 0), [0, 0, ext_ecx, 0]);
    t.insert((0x8000_0008, 0), [0x3030, 0, ecx8, 0]);
    t.insert((0x8000_001e, 0), [e.0, e.1 << 8, 0, 0]);
    t
}

const AMD: &[u8; 12] = b"AuthenticAMD";
const HYGON: &[u8; 12] = b"HygonGenuine";

#[test]
fn amd_with_topoext_and_no_extended_leaf() {
    // Zen (family 0x17), leaf 0 below 0xB: parse_8000_0008 sets the core
    // shift from ECX[15:12] = 4 (16 threads); parse_8000_001e takes the
    // extended APIC id and, family >= 0x17, 2 threads a core (EBX[15:8] = 1).
    let t = amd(
        AMD,
        0x17,
        0x31,
        0xa,
        0x8000_001f,
        TOPOEXT,
        (4 << 12) | 15,
        (0x113, 1),
    );
    let c = topo(t);
    assert_eq!(c.shifts, shifts(1, 4, None, 4, 0x8000_0008));
    assert_eq!((c.apic_id, c.apic_id_8bit), (0x113, false));

    // Bulldozer (family 0x15): the SMT domain is left at one thread (the
    // "Only valid for family >= 0x17" fix); the APIC id still comes from
    // 0x8000_001E.
    let t = amd(
        AMD,
        0x15,
        0x02,
        0xd,
        0x8000_001e,
        TOPOEXT,
        (4 << 12) | 15,
        (0x113, 1),
    );
    let c = topo(t);
    assert_eq!(c.shifts, shifts(0, 4, None, 4, 0x8000_0008));
    assert_eq!(c.apic_id, 0x113);

    // ECX[15:12] = 0: the shift is get_count_order(ECX[7:0] + 1) = order(6) = 3.
    let t = amd(AMD, 0x17, 0x31, 0xa, 0x8000_001f, TOPOEXT, 5, (0x5, 0));
    assert_eq!(topo(t).shifts, shifts(0, 3, None, 3, 0x8000_0008));
}

#[test]
fn amd_extended_leaves_win_and_keep_their_apic_id() {
    // Zen 2+: leaf 0xB (2 threads, 128 a package) and TOPOEXT. Linux keeps
    // 0xB's shifts and its x2APIC id; 0x8000_001E's EAX (0x99) is not read
    // for it (parse_8000_001e after cba4262a19af).
    let mut t = amd(
        AMD,
        0x19,
        0x01,
        0x10,
        0x8000_0021,
        TOPOEXT,
        (7 << 12) | 127,
        (0x99, 1),
    );
    ext_leaf(&mut t, 0xb, 0x45, &[(SMT, 1, 2), (CORE, 7, 128)]);
    let c = topo(t);
    assert_eq!(c.shifts, shifts(1, 7, None, 7, 0xb));
    assert_eq!((c.apic_id, c.apic_id_8bit), (0x45, false));

    // Zen 5 with 0x8000_0026: CCD is Linux's tile, AMD's socket its die
    // (topo_domain_map_80000026): SMT 1, CORE 4, TILE 6, DIE = DIEGRP 7.
    let mut t = amd(
        AMD,
        0x1a,
        0x02,
        0x10,
        0x8000_0026,
        TOPOEXT,
        (7 << 12) | 127,
        (0x99, 1),
    );
    let levels = [
        (SMT, 1, 2),
        (CORE, 4, 16),
        (AMD_CCD, 6, 64),
        (AMD_SOCKET, 7, 128),
    ];
    ext_leaf(&mut t, 0x8000_0026, 0x45, &levels);
    let c = topo(t);
    assert_eq!(c.shifts, shifts(1, 4, Some(6), 7, 0x8000_0026));
    assert_eq!(c.apic_id, 0x45);
}

#[test]
fn amd_without_topoext() {
    // qemu64-like family 0xf: 0x8000_0008 only. Its core shift, one thread
    // a core (parse_8000_0008's topology_update_dom), leaf 1's 8-bit APIC
    // id: 0x8000_001E is there but TOPOEXT is off, so it is not read.
    let t = amd(AMD, 0xf, 0x6b, 0xd, 0x8000_001e, 0, 5, (0x77, 1));
    let c = topo(t);
    assert_eq!(c.shifts, shifts(0, 3, None, 3, 0x8000_0008));
    assert_eq!((c.apic_id, c.apic_id_8bit), (0x13, true));

    // QEMU with x2apic but no topoext: leaf 0xB is read all the same
    // (cba4262a19af), with its x2APIC id.
    let mut t = amd(AMD, 0x17, 0x31, 0xd, 0x8000_0008, 0, 5, (0x77, 1));
    ext_leaf(&mut t, 0xb, 0x1a0, &[(SMT, 1, 2), (CORE, 9, 300)]);
    let c = topo(t);
    assert_eq!(c.shifts, shifts(1, 9, None, 9, 0xb));
    assert_eq!((c.apic_id, c.apic_id_8bit), (0x1a0, false));

    // Neither 0xB nor 0x8000_0008: parse_topology_amd returns at once and
    // fake_topology's one thread, one core stands.
    let t = amd(AMD, 0xf, 0x6b, 0xd, 0x8000_0001, TOPOEXT, 5, (0x77, 1));
    let c = topo(t);
    assert_eq!(c.shifts, shifts(0, 0, None, 0, 0));
    assert_eq!((c.apic_id, c.apic_id_8bit), (0x13, true));
}

#[test]
fn hygon_package_is_apic_bits_6_and_up_on_bare_metal_models_up_to_3() {
    // Dhyana (family 0x18 model 0): 0x8000_0008 says 16 threads (shift 4),
    // 0x8000_001E 2 a core; parse_8000_001e then forces the core domain's
    // shift (and so the package's) to 6.
    let dhyana = |model: u32, ecx1: u32| {
        let mut t = amd(
            HYGON,
            0x18,
            model,
            0xd,
            0x8000_001f,
            TOPOEXT,
            (4 << 12) | 15,
            (0x25, 1),
        );
        leaf1(&mut t, 0x18, model, 0x25, 0, ecx1, HTT);
        t
    };
    let c = topo(dhyana(0, 0));
    assert_eq!(c.shifts, shifts(1, 6, None, 6, 0x8000_0008));
    assert_eq!((c.apic_id, c.vendor), (0x25, Vendor::Hygon));
    // 0x25 = 37: package 37 >> 6 = 0, core (37 & 63) >> 1 = 18.
    assert_eq!(
        c.shifts.ids(37),
        ApicIds {
            package: 0,
            die: None,
            core: 18
        }
    );
    assert_eq!(topo(dhyana(3, 0)).shifts.package, 6);
    // In a guest, or from model 4, CPUID's own shift stands.
    assert_eq!(
        topo(dhyana(0, HYPERVISOR)).shifts,
        shifts(1, 4, None, 4, 0x8000_0008)
    );
    assert_eq!(
        topo(dhyana(4, 0)).shifts,
        shifts(1, 4, None, 4, 0x8000_0008)
    );

    // The fixed shift applies after leaf 0xB too (parse_8000_001e runs
    // whenever TOPOEXT is on), which keeps its SMT shift and APIC id.
    let mut t = dhyana(1, 0);
    ext_leaf(&mut t, 0xb, 0x41, &[(SMT, 1, 2), (CORE, 5, 32)]);
    let c = topo(t);
    assert_eq!(c.shifts, shifts(1, 6, None, 6, 0xb));
    assert_eq!(c.apic_id, 0x41);
    // Without TOPOEXT 0x8000_001E is never reached: no fixed shift.
    let mut t = dhyana(0, 0);
    t.insert((0x8000_0001, 0), [0; 4]);
    assert_eq!(topo(t).shifts, shifts(0, 4, None, 4, 0x8000_0008));
}

#[test]
fn smt_level_with_shift_0_but_two_cpus_is_fixed_up() {
    // parse_topology_leaf: "machines in the wild which have shift 0 in the
    // subleaf 0, but advertise 2 logical processors": shift order(2) = 1.
    let mut t = intel(0x16, 0);
    ext_leaf(&mut t, 0xb, 0, &[(SMT, 0, 2), (CORE, 3, 8)]);
    assert_eq!(topo(t).shifts, shifts(1, 3, None, 3, 0xb));
    // One CPU at that level: no SMT, nothing to fix.
    let mut t = intel(0x16, 0);
    ext_leaf(&mut t, 0xb, 0, &[(SMT, 0, 1), (CORE, 3, 8)]);
    assert_eq!(topo(t).shifts, shifts(0, 3, None, 3, 0xb));
    // Only the SMT level: topology_set_dom gives every domain its shift.
    let mut t = intel(0x16, 0);
    ext_leaf(&mut t, 0xb, 0, &[(SMT, 1, 2)]);
    assert_eq!(topo(t).shifts, shifts(1, 1, None, 1, 0xb));
}

#[test]
fn hostile_shifts_are_kept_as_linux_keeps_them_without_panicking() {
    // Out of order (SMT wider than the core level): Linux stores them as
    // given; the core field between them is empty (core_id = (apic & 3) >>
    // 4 = 0) and the package is APIC id >> 2.
    let mut t = intel(0x16, 0);
    ext_leaf(&mut t, 0xb, 0, &[(SMT, 4, 2), (CORE, 2, 8)]);
    let c = topo(t);
    assert_eq!(c.shifts, shifts(4, 2, None, 2, 0xb));
    assert_eq!(
        c.shifts.ids(0xff),
        ApicIds {
            package: 0x3f,
            die: None,
            core: 0
        }
    );

    // Every register all ones: the shift field is EAX[4:0] = 31, the type
    // ECX[15:8] (kept at SMT and CORE here), the CPUs EBX[15:0].
    let mut t = intel(0x16, 0);
    t.insert((0xb, 0), [u32::MAX, u32::MAX, 0xffff_01ff, u32::MAX]);
    t.insert((0xb, 1), [u32::MAX, u32::MAX, 0xffff_02ff, u32::MAX]);
    let c = topo(t);
    assert_eq!(c.shifts, shifts(31, 31, None, 31, 0xb));
    assert_eq!(c.apic_id, u32::MAX);
    assert_eq!(
        c.shifts.ids(u32::MAX),
        ApicIds {
            package: 1,
            die: None,
            core: 0
        }
    );
    // 0x8000_0008 ECX all ones: ECX[15:12] = 15.
    let t = amd(AMD, 0xf, 0x6b, 0xd, 0x8000_0008, 0, u32::MAX, (0, 0));
    assert_eq!(topo(t).shifts, shifts(0, 15, None, 15, 0x8000_0008));

    // Shifts of 32 and more (the struct is public; C would shift out of
    // range): no bit above 31 numbers anything.
    let wide = shifts(33, 40, Some(35), 40, 0);
    assert_eq!(
        wide.ids(u32::MAX),
        ApicIds {
            package: 0,
            die: Some(0),
            core: 0
        }
    );
    let whole = shifts(0, 32, None, 32, 0);
    assert_eq!(whole.ids(u32::MAX).core, u32::MAX);
    assert_eq!(whole.ids(u32::MAX).package, 0);
}

#[test]
fn an_unknown_level_above_the_die_group_is_the_package_domain() {
    // topo_subleaf: type 7 is past MAX_TYPE_1F, so it takes the domain above
    // the last known one, the die group's: TOPO_PKG_DOMAIN. topo_set_ids
    // numbers packages by the die group's shift (6), not by it (9).
    let mut t = intel(0x1f, 0);
    let levels = [(SMT, 1, 2), (CORE, 4, 16), (DIEGRP, 6, 64), (7, 9, 512)];
    ext_leaf(&mut t, 0x1f, 0, &levels);
    let c = topo(t);
    assert_eq!(c.shifts.package, 6);
    assert_eq!(c.shifts.die, Some(4));
}

#[test]
fn empty_and_endless_leaves() {
    // Leaf 0 says 0x1F but 0x1F, 0xB and leaf 4 are empty, no HTT:
    // parse_legacy's one core, one thread.
    let mut t = Leaves::new();
    leaf0(&mut t, 0x1f, b"GenuineIntel");
    leaf1(&mut t, 6, 0x8f, 0x3, 8, 0, 0);
    let c = topo(t);
    assert_eq!(c.shifts, shifts(0, 0, None, 0, 1));
    assert_eq!((c.apic_id, c.apic_id_8bit), (0x3, true));

    // Leaf 0 reports no leaf 1 (cpuid_level < 1): fake_topology returns
    // before leaf 1's APIC id is read.
    let mut t = Leaves::new();
    leaf0(&mut t, 0, b"GenuineIntel");
    leaf1(&mut t, 6, 0x8f, 0x5, 8, 0, HTT);
    let c = topo(t);
    assert_eq!((c.shifts, c.apic_id), (shifts(0, 0, None, 0, 0), 0));

    // A vendor Linux has no topology parser for: one thread, one core, and
    // leaf 1's APIC id (parse_topology's switch has no case for it).
    let mut t = Leaves::new();
    leaf0(&mut t, 0xb, b"VIA VIA VIA ");
    leaf1(&mut t, 6, 0x0f, 0x7, 16, 0, HTT);
    ext_leaf(&mut t, 0xb, 0x77, &[(SMT, 1, 2), (CORE, 6, 64)]);
    let c = topo(t);
    assert_eq!(
        (c.shifts, c.apic_id, c.vendor),
        (shifts(0, 0, None, 0, 0), 7, Vendor::Other)
    );

    // No CPUID at all (every leaf zeros): nothing read, nothing panics.
    let c = topo(Leaves::new());
    assert_eq!((c.shifts, c.apic_id), (shifts(0, 0, None, 0, 0), 0));

    // A leaf 0xB whose sub-leaves never end (Linux would read 2^32 of
    // them): read up to a bound, the answer that of the levels read.
    let mut t = intel(0x16, 0);
    t.insert((0xb, 0), [1, 2, SMT << 8, 0]);
    for sub in 1..1000 {
        t.insert((0xb, sub), [5, 32, (CORE << 8) | sub, 0]);
    }
    assert_eq!(topo(t).shifts, shifts(1, 5, None, 5, 0xb));
}

#[test]
fn an_extended_maximum_that_is_no_extended_leaf_number() {
    // 0x8000_0000 answering 0xffff_ffff: get_cpu_cap reads 0x8000_0001's
    // flags only when EAX is 0x8000_xxxx, so TOPOEXT is off; but
    // cpu_parse_topology_ext compares the level as a number, so
    // 0x8000_0026 is read, and its levels and x2APIC id are used.
    let mut t = amd(AMD, 0x19, 0x01, 0xa, u32::MAX, TOPOEXT, 0, (0x99, 1));
    ext_leaf(&mut t, 0x8000_0026, 0x31, &[(SMT, 1, 2), (CORE, 3, 8)]);
    let c = topo(t);
    assert_eq!(c.shifts, shifts(1, 3, None, 3, 0x8000_0026));
    assert_eq!(c.apic_id, 0x31);
}
