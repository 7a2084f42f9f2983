//! Bad synthetic descriptions: one clear error naming the token, never a panic;
//! plus hwloc semantics that lstopo 2.9 cannot check, computed by hand.

use readers::synthetic;
use topology::LevelKind;

fn err(desc: &str) -> String {
    match synthetic::parse(desc) {
        Ok(_) => panic!("{desc:?} should be rejected"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_descriptions_name_the_token() {
    let cases: &[(&str, &str)] = &[
        ("core:0 pu:2", "'core:0'"),
        ("package:2 core:", "'core:'"),
        ("package:2 core:2x pu:1", "'core:2x'"),
        ("package:2 core", "'core'"),
        ("package:2 frob:2 pu:1", "'frob:2'"),
        ("package:2 core:2 l3:1", "last level must be 'pu'"),
        ("package:2 package:2 pu:1", "several package levels"),
        ("package:2 numa:2 [numa] pu:2", "both a level and attached"),
        ("package:4 core:4096 pu:2", "'pu:2'"),
        (
            "package:99999999999999999999 pu:1",
            "'package:99999999999999999999'",
        ),
        (
            "package:4294967296 core:4294967296 pu:4294967296",
            "maximum of 16384",
        ),
        ("l3:1(size=32MB pu:2", "missing ')'"),
        ("l3:1(size=32XB) pu:2", "unknown size unit"),
        ("l3:1(size=99999999999TB) pu:2", "overflows"),
        ("l3:1(frob=1) pu:2", "unsupported attribute 'frob'"),
        (
            "numa:2(memorysidecachesize=1GB) pu:2",
            "memorysidecachesize",
        ),
        ("l3:2(indexes=1,0) pu:2", "indexes= on caches"),
        ("core:2(memory=1GB) pu:2", "memory= applies to NUMA"),
        ("core:2(size=1MB) pu:2", "size= applies to caches"),
        ("(memory=1GB) core:2 pu:2", "root object"),
        ("pu:4(indexes=0,1,2)", "3 values for 4 objects"),
        ("pu:4(indexes=0,1,2,2)", "appears twice"),
        ("numa:2(indexes=1,1) pu:1", "appears twice"),
        ("pu:2(indexes=0,16384)", "beyond the supported maximum"),
        ("pu:4(indexes=3*4)", "appears twice"),
        ("pu:4(indexes=1*2)", "covers 2 objects instead of 4"),
        ("machine:2 pu:2", "implicit root"),
        ("misc:2 pu:2", "Misc and I/O"),
        ("core:2 package:2 pu:2", "below the Package level"),
        (
            "package:2 group:2 group:2 core:2 pu:1",
            "only one group level",
        ),
        ("core:2 group:2 pu:1", "below the core level"),
        ("[core] pu:2", "only NUMA nodes"),
        ("[numa pu:2", "closing ']'"),
        ("l6:2 pu:2", "L1 to L5"),
        ("", "empty description"),
        ("   ", "empty description"),
    ];
    for (desc, want) in cases {
        let e = err(desc);
        assert!(
            e.contains(want),
            "{desc:?}: error {e:?} does not mention {want:?}"
        );
    }
}

#[test]
fn hwloc_pu_interleaving_by_type() {
    // hwloc's loops for "core:pu" on 2 packages × 4 cores × 2 PUs (16 PUs):
    // core: step 16/8 = 2, count 8; pu: step 1, count 2 → os = (j/2)%8 + (j%2)·8.
    let t = synthetic::parse("package:2 core:4 pu:2(indexes=core:pu)").unwrap();
    for core in 0..8u32 {
        let m = t.smt_mask(core as usize);
        let got: Vec<usize> = m.iter().collect();
        assert_eq!(got, vec![core as usize, core as usize + 8], "core {core}");
    }
    assert_eq!(t.count(LevelKind::Package), 2);
}

#[test]
fn default_sizes_follow_hwloc() {
    let t = synthetic::parse("l3:1 l2:2 l1d:1 l1i:1 core:1 pu:1").unwrap();
    let size = |level: u8, instr: bool| {
        t.caches()
            .iter()
            .find(|c| c.level == level && (c.kind == topology::CacheKind::Instruction) == instr)
            .and_then(|c| c.size_bytes)
    };
    assert_eq!(size(3, false), Some(16 << 20));
    assert_eq!(size(2, false), Some(4 << 20));
    assert_eq!(size(1, false), Some(32 << 10));
    assert_eq!(size(1, true), Some(32 << 10));
    assert_eq!(t.nodes().len(), 1);
    assert_eq!(t.nodes()[0].memory_bytes, Some(1 << 30));
}

#[test]
fn writer_rejects_irregular_topologies() {
    use topology::{Arch, CpuSpec, TopologyBuilder};
    let mut b = TopologyBuilder::new(Arch::X86_64);
    // Package 0 has 3 cores, package 1 has 1.
    for (id, package, core) in [(0, 0, 0), (1, 0, 1), (2, 0, 2), (3, 1, 0)] {
        b.add_cpu(CpuSpec {
            id,
            online: true,
            package,
            core,
            ..Default::default()
        });
    }
    let t = b.build().unwrap();
    let e = synthetic::write(&t).unwrap_err().to_string();
    assert!(e.contains("same number"), "{e}");
}

#[test]
fn writer_output_matches_hwloc_export_shape() {
    // Written strings use hwloc's type names and read back identically.
    let t = synthetic::parse("pack:2 numa:2 l3:1 core:2 pu:2").unwrap();
    let s = synthetic::write(&t).unwrap();
    assert_eq!(
        s,
        "Package:2 NUMANode:2(memory=1073741824) L3:1(size=16777216) Core:2 PU:2"
    );
}

#[test]
fn core_indexes_may_repeat_across_packages() {
    // Linux numbers cores within each package; hwloc accepts such lists.
    let t = synthetic::parse("package:2 core:2(indexes=0,1,0,1) pu:1").unwrap();
    assert_eq!(t.count(LevelKind::Core), 4);
    let ids: Vec<Option<u32>> = t
        .level(LevelKind::Core)
        .unwrap()
        .groups
        .iter()
        .map(|g| g.os_id)
        .collect();
    assert_eq!(ids, vec![Some(0), Some(1), Some(0), Some(1)]);
}
