//! The two CPU features the x86 model keys the TSC check and the delay
//! calibration on, read from real CPUs: the CPUID dumps of hwloc's x86 test
//! data (`hwloc/tests/hwloc/x86/*.tar.bz2` in the corpus, one `puN` file per
//! logical CPU, each line the mask of input registers given, the inputs
//! `eax ebx ecx edx` (leaf in EAX, subleaf in ECX), `=>` and the outputs),
//! read by `readers::cpuid` and decoded with the raw-cpuid crate.
//!
//! - TSC_ADJUST (CPUID.7.0:EBX bit 1): without it Linux runs the TSC warp
//!   check on every AP, 2 ms once its package has a CPU online
//!   (`sim::costs::CostTable::with_tsc_adjust`). No AMD CPU of the record's
//!   families (10h, 15h, 17h, 19h) has it; Zen 5 (1Ah) does; Intel has it
//!   from Haswell on.
//! - MWAITX (CPUID 0x80000001:ECX bit 29): with it Linux delays with MWAITX
//!   and an AMD AP that calibrates converges; without it (the family 10h
//!   and 15h Opterons) the TSC delay stays and the AP calibrates directly.

use std::path::Path;

use raw_cpuid::CpuId;
use readers::cpuid::Table;
use sim::costs::{CostTable, X86_TSC_SIBLING_NS};
use sim::x86::Vendor;
use sim::Platform;

/// CPU 0's CPUID table from one hwloc x86 dump archive, parsed by the
/// CPUID-dump reader's rules (hwloc's: the first line whose masked inputs
/// match answers).
fn pu0(archive: &Path) -> Table {
    let tables = readers::cpuid::pu_tables(archive).unwrap_or_else(|e| panic!("{e}"));
    let (pu, table) = tables.into_iter().next().expect("a PU");
    assert_eq!(pu, 0, "{}: no pu0", archive.display());
    table
}

struct Features {
    family: u8,
    tsc_adjust: bool,
    mwaitx: bool,
}

fn features(table: Table) -> Features {
    let cpuid = CpuId::with_cpuid_reader(&table);
    Features {
        family: cpuid.get_feature_info().unwrap().family_id(),
        tsc_adjust: cpuid
            .get_extended_feature_info()
            .is_some_and(|f| f.has_tsc_adjust_msr()),
        mwaitx: cpuid
            .get_extended_processor_and_feature_identifiers()
            .is_some_and(|f| f.has_monitorx_mwaitx()),
    }
}

#[test]
fn amd_families_of_the_record_lack_tsc_adjust_and_only_zen_has_mwaitx() {
    let corpus = readers::corpus::dir(env!("CARGO_MANIFEST_DIR"));
    if !readers::corpus::present(&corpus, "hwloc x86 CPUID dumps") {
        return;
    }
    let dir = corpus.join("hwloc/tests/hwloc/x86");
    // (dump, family, TSC_ADJUST, MWAITX)
    let expect = [
        ("AMD-K10-Istanbul-8xOpteron-8439SE", 0x10, false, false),
        ("AMD-K10-MagnyCours-2xOpteron-6164HE", 0x10, false, false),
        ("AMD-15h-Bulldozer-4xOpteron-6272", 0x15, false, false),
        ("AMD-15h-Piledriver-4xOpteron-6348", 0x15, false, false),
        ("AMD-17h-Zen-2xEpyc-7451", 0x17, false, true),
        ("AMD-19h-Zen3-2xEpyc-7763", 0x19, false, true),
        ("AMD-19h-Zen4-2xEpyc-9654", 0x19, false, true),
        ("AMD-1Ah-Zen5StrixPoint-RyzenAI9HX370", 0x1a, true, true),
        ("Intel-SandyBridge-2xXeon-E5-2650", 6, false, false),
        ("Intel-IvyBridge-12xXeon-E5-4620v2", 6, false, false),
        ("Intel-Haswell-2xXeon-E5-2680v3", 6, true, false),
        ("Intel-Broadwell-2xXeon-E5-2650Lv4", 6, true, false),
        ("Intel-Skylake-2xXeon6140", 6, true, false),
        ("Intel-CascadeLake-2xXeon6230", 6, true, false),
        ("Intel-SapphireRapids-2xXeonMax9460", 6, true, false),
    ];
    for (dump, family, tsc_adjust, mwaitx) in expect {
        let f = features(pu0(&dir.join(format!("{dump}.tar.bz2"))));
        assert_eq!(f.family, family, "{dump}");
        assert_eq!(f.tsc_adjust, tsc_adjust, "{dump}: TSC_ADJUST");
        assert_eq!(f.mwaitx, mwaitx, "{dump}: MWAITX");
    }
}

/// The family a record row's own log prints for its CPU
/// ('smpboot: CPU0: <name> (family: 0xNN, ...', quoted in the row's
/// `machine`), or, for a row quoting only the CPU's name, the family
/// another row's log prints for the same name.
fn logged_family(rows: &[sim::record::Row], r: &sim::record::Row) -> Option<u8> {
    let family_of = |machine: &str| {
        let at = machine.find("(family: 0x")? + "(family: 0x".len();
        let hex = machine[at..].split(',').next()?;
        u8::from_str_radix(hex, 16).ok()
    };
    family_of(&r.machine).or_else(|| {
        let at = r.machine.find("'smpboot: CPU0: ")? + "'smpboot: CPU0: ".len();
        let name = r.machine[at..].split('\'').next()?;
        rows.iter()
            .filter(|o| {
                o.machine
                    .contains(&format!("smpboot: CPU0: {name} (family: 0x"))
            })
            .find_map(|o| family_of(&o.machine))
    })
}

/// Every AMD row the record simulates is tied to a corpus CPUID dump of the
/// family its log prints, and the row's MWAITX and TSC_ADJUST (its own
/// `sim.mwaitx` / `sim.tsc_adjust`, else the defaults) are that dump's
/// bits; validate's note for the row says which TSC check it ran.
#[test]
fn amd_rows_take_the_features_of_their_familys_cpuid_dump() {
    let corpus = readers::corpus::dir(env!("CARGO_MANIFEST_DIR"));
    if !readers::corpus::present(&corpus, "hwloc x86 CPUID dumps") {
        return;
    }
    let dir = corpus.join("hwloc/tests/hwloc/x86");
    let dump_of_family = [
        (0x10, "AMD-K10-Istanbul-8xOpteron-8439SE"),
        (0x15, "AMD-15h-Bulldozer-4xOpteron-6272"),
        (0x17, "AMD-17h-Zen-2xEpyc-7451"),
        (0x19, "AMD-19h-Zen3-2xEpyc-7763"),
    ];
    let record = sim::record::load().unwrap();
    let report = sim::validate::validate(&mut |_| {}).unwrap();
    let mut tied = 0;
    for r in &record {
        let Some(spec) = &r.sim else { continue };
        if spec.vendor().unwrap() != Vendor::Amd {
            continue;
        }
        let family = logged_family(&record, r)
            .unwrap_or_else(|| panic!("{}: its log's CPU family is not quoted", r.id));
        let (_, dump) = dump_of_family
            .iter()
            .find(|(f, _)| *f == family)
            .unwrap_or_else(|| panic!("{}: no corpus dump of family {family:#x}", r.id));
        let f = features(pu0(&dir.join(format!("{dump}.tar.bz2"))));
        assert_eq!(f.family, family, "{dump}");
        assert_eq!(spec.mwaitx.unwrap_or(true), f.mwaitx, "{}: MWAITX", r.id);
        let tsc_adjust = spec.tsc_adjust.unwrap_or(Vendor::Amd.tsc_adjust());
        assert_eq!(tsc_adjust, f.tsc_adjust, "{}: TSC_ADJUST", r.id);
        let note = if f.tsc_adjust {
            "TSC_ADJUST, so an AP whose package has a CPU online skips the TSC check"
        } else {
            "no TSC_ADJUST, so every AP runs the TSC check"
        };
        let rows: Vec<_> = report
            .rows
            .iter()
            .filter(|row| row.case.starts_with(&format!("rec {} ", r.id)))
            .collect();
        assert!(!rows.is_empty(), "{}: not simulated", r.id);
        for row in rows {
            assert!(row.note.contains(note), "{}: {}", row.case, row.note);
        }
        tied += 1;
    }
    assert!(tied >= 7, "{tied} AMD rows");
}

/// What the model does with TSC_ADJUST: with it no AP after a package's
/// first runs the warp check, without it each runs the short one, shorter
/// than a package's first; a row's `sim.tsc_adjust` overrides its vendor's
/// default both ways.
#[test]
fn tsc_adjust_decides_the_sibling_check() {
    let fit = sim::fit::fitted().unwrap();
    let intel = CostTable::for_platform(Platform::X86, &fit);
    assert_eq!(intel.tsc_sibling.ns, 0.0);
    let amd = intel.clone().for_vendor(Vendor::Amd, &fit, 250);
    assert_eq!(amd.tsc_sibling.ns, X86_TSC_SIBLING_NS);
    assert!(0.0 < X86_TSC_SIBLING_NS && X86_TSC_SIBLING_NS < amd.tsc_sync.ns);
    assert_eq!(amd.clone().with_tsc_adjust(true).tsc_sibling.ns, 0.0);
    assert_eq!(
        intel.clone().with_tsc_adjust(false).tsc_sibling.ns,
        X86_TSC_SIBLING_NS
    );
    // Without MWAITX the AMD AP calibrates directly, as an Intel one does.
    let tsc_delay = amd.clone().with_tsc_delay(250);
    assert!(amd.calibrate.ns < tsc_delay.calibrate.ns);
    assert_eq!(tsc_delay.calibrate.ns, intel.calibrate.ns);
}

/// The R815 row's console characters per CPU, recounted from the lines its
/// `measured` quotes: every line between 'smp: Bringing up' and 'smp:
/// Brought up' with its stamp and the 8250 console's \r\n, plus the two
/// 'Converting physical' lines of CPUs 32 and 48 the excerpt leaves out
/// (the row's topology: CPUs 16, 32 and 48 each print one), as long as CPU
/// 16's.
#[test]
fn r815_console_characters_follow_its_lines() {
    let record = sim::record::load().unwrap();
    let r = sim::record::row(&record, "x86-opteron6276-64-r815").unwrap();
    let lines: Vec<&str> = r.measured.split('`').skip(1).step_by(2).collect();
    let first = lines
        .iter()
        .position(|l| l.ends_with("smp: Bringing up secondary CPUs ..."))
        .unwrap();
    let last = lines
        .iter()
        .position(|l| l.contains("smp: Brought up 8 nodes, 64 CPUs"))
        .unwrap();
    let window = &lines[first + 1..last];
    let converting: Vec<&&str> = window
        .iter()
        .filter(|l| l.contains("Converting physical"))
        .collect();
    assert_eq!(converting.len(), 1);
    assert!(r.topology.contains("CPU 16, 32 and 48"));
    let chars: usize =
        window.iter().map(|l| l.len() + 2).sum::<usize>() + 2 * (converting[0].len() + 2);
    let per_cpu = chars as f64 / 63.0;
    let sim = r.sim.as_ref().unwrap();
    assert_eq!(sim.console_baud, Some(115_200));
    let stated = sim.console_chars_per_cpu.unwrap();
    assert!((stated - per_cpu).abs() < 0.05, "{stated} vs {per_cpu}");
}

/// The Cooper Lake row's console characters per CPU, from the formats of the
/// lines its window prints (announce_cpu()'s '%*s#%d' at width
/// num_digits(144) + 1, the core-scheduling RFC's 'core: N -> N', the node
/// and 'Converting physical' lines), each with a printk stamp and \r\n.
#[test]
fn cpx_console_characters_follow_the_formats() {
    let stamp = "[    5.811825] ".len();
    let digits = |n: usize| n.to_string().len();
    let width = digits(144) + 1;
    let hash_n = stamp + width + 1 + 2;
    let core = |n: usize| stamp + format!("core: {n} -> {n}").len() + 2;
    let mut chars: usize = (1..=143).map(|n| hash_n + core(n)).sum();
    chars += stamp + "x86: Booting SMP configuration:".len() + 2;
    let node_head = ".... node  #1, CPUs:  ".len();
    chars += 8 * node_head + (width + 1);
    chars += 3 * (stamp + "smpboot: CPU 18 Converting physical 0 to logical die 1".len() + 2);
    let per_cpu = chars as f64 / 143.0;
    let record = sim::record::load().unwrap();
    let r = sim::record::row(&record, "x86-cpx-144-coresched").unwrap();
    let sim = r.sim.as_ref().unwrap();
    assert_eq!(sim.console_baud, Some(115_200));
    let stated = sim.console_chars_per_cpu.unwrap();
    assert!((stated - per_cpu).abs() < 0.05, "{stated} vs {per_cpu}");
}
