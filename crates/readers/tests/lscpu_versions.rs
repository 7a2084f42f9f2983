//! What older util-linux versions' lscpu printed, in excerpts of util-linux's
//! own expected outputs at the release that wrote them (git tags v2.19,
//! v2.30 and v2.38 of util-linux, tests/expected/lscpu/; GPL-2.0-or-later).
//! The truth for each is the `--parse` table lscpu printed for the same
//! machine in the same file. Each case was refused before the reader knew
//! the older form. Then lscpu in another language, which must be refused,
//! and forms found among linuxhw/LsCPU's hw-probe reports (one translated
//! label; threads per core rounded down), each with the truth it states.

use std::collections::{BTreeMap, BTreeSet};

use readers::lscpu;
use topology::{CacheKind, LevelKind};

/// util-linux 2.19, `lscpu-x86_64-hpdl585` (4 × Opteron, 16 CPUs): up to
/// 2.19 lscpu printed "CPU socket(s)" where later versions print
/// "Socket(s)". The summary alone must give the table's four sockets.
const HPDL585_SUMMARY: &str = "\
CPU op-mode(s):        32-bit, 64-bit
CPU(s):                16
Thread(s) per core:    1
Core(s) per socket:    4
CPU socket(s):         4
NUMA node(s):          4
Vendor ID:             AuthenticAMD
NUMA node0 CPU(s):     0,4,8,12
NUMA node1 CPU(s):     1,5,9,13
NUMA node2 CPU(s):     2,6,10,14
NUMA node3 CPU(s):     3,7,11,15
";

/// The same file's `--parse` rows: CPU,Core,Socket,Node.
const HPDL585_TABLE: &str = "\
0,0,0,0
1,1,1,1
2,2,2,2
3,3,3,3
4,4,0,0
5,5,1,1
6,6,2,2
7,7,3,3
8,8,0,0
9,9,1,1
10,10,2,2
11,11,3,3
12,12,0,0
13,13,1,1
14,14,2,2
15,15,3,3
";

#[test]
fn lscpu_2_19_cpu_sockets_label_reads_as_sockets() {
    let t = lscpu::parse(HPDL585_SUMMARY, "hpdl585").unwrap_or_else(|e| panic!("{e}"));
    let mut sockets: BTreeMap<&str, BTreeSet<usize>> = BTreeMap::new();
    let mut nodes: BTreeMap<u32, BTreeSet<usize>> = BTreeMap::new();
    for row in HPDL585_TABLE.lines() {
        let f: Vec<&str> = row.split(',').collect();
        let cpu: usize = f[0].parse().unwrap();
        sockets.entry(f[2]).or_default().insert(cpu);
        nodes.entry(f[3].parse().unwrap()).or_default().insert(cpu);
    }
    let ours: BTreeSet<BTreeSet<usize>> = t
        .level(LevelKind::Package)
        .unwrap()
        .groups
        .iter()
        .map(|g| g.cpus.iter().collect())
        .collect();
    assert_eq!(ours, sockets.into_values().collect());
    let ours: BTreeMap<u32, BTreeSet<usize>> = t
        .nodes()
        .iter()
        .map(|n| (n.id, n.cpus.iter().collect()))
        .collect();
    assert_eq!(ours, nodes);
}

/// util-linux 2.30, `lscpu-ppc-qemu` (QEMU's PowerPC 750): lscpu 2.24 to
/// 2.30 printed "unknown size" for caches the kernel gives no size for.
const PPC_QEMU: &str = "\
CPU(s):              1
On-line CPU(s) list: 0
Thread(s) per core:  1
Core(s) per socket:  1
Socket(s):           1
Model name:          740/750
L1d cache:           unknown size
L1i cache:           unknown size

# The following is the parsable format, which can be fed to other
# programs. Each different item in every column has an unique ID
# starting from zero.
# CPU,Core,Socket,Node,,L1d,L1i
0,0,0,,,0,0
";

#[test]
fn lscpu_2_30_unknown_cache_size_reads_without_a_size() {
    let t = lscpu::parse(PPC_QEMU, "ppc-qemu").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(t.online().iter().collect::<Vec<_>>(), [0]);
    // The table's L1d and L1i columns: one instance each, of CPU 0.
    let caches: Vec<(u8, CacheKind, Vec<usize>, Option<u64>)> = t
        .caches()
        .iter()
        .map(|c| (c.level, c.kind, c.cpus.iter().collect(), c.size_bytes))
        .collect();
    assert_eq!(
        caches,
        [
            (1, CacheKind::Data, vec![0], None),
            (1, CacheKind::Instruction, vec![0], None)
        ]
    );
}

/// util-linux 2.38, `lscpu-rv64-linux`: that release printed a `--parse`
/// table of empty rows on this RISC-V dump. The summary's two CPUs are what
/// the file says.
const RV64_LINUX: &str = "\
CPU(s):              2
On-line CPU(s) list: 0,1

# The following is the parsable format, which can be fed to other
# programs. Each different item in every column has an unique ID
# starting usually from zero.
# CPU,Core,Socket,Node
,,,
,,,
";

#[test]
fn lscpu_2_38_table_of_empty_rows_reads_from_the_summary() {
    let t = lscpu::parse(RV64_LINUX, "rv64-linux").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(t.online().iter().collect::<Vec<_>>(), [0, 1]);
    // A row partly empty is still an error naming its line.
    let broken = RV64_LINUX.replacen(",,,\n", "0,,,\n", 1);
    let e = lscpu::parse(&broken, "rv64-linux").unwrap_err();
    assert_eq!(e.line, Some(9), "{e}");
}

/// lscpu in Japanese (util-linux 2.27-era labels, an excerpt of a 2-socket
/// Xeon E5-2603 v4 user's paste): "Thread(s) per core" and "Core(s) per
/// socket" are translated, so a reading would silently assume one thread per
/// core. One error names the first translated line.
const JAPANESE: &str = "\
Architecture:          x86_64
CPU 操作モード:   32-bit, 64-bit
CPU(s):                12
On-line CPU(s) list:   0-11
コアあたりのスレッド数:1
ソケットあたりのコア数:6
Socket(s):             2
";

#[test]
fn lscpu_in_another_language_is_one_error_naming_the_line() {
    let e = lscpu::parse(JAPANESE, "ja.lscpu").unwrap_err();
    assert_eq!((e.source.as_str(), e.line), ("ja.lscpu", Some(2)), "{e}");
    assert!(e.message.contains("LC_ALL=C"), "{e}");
}

/// util-linux 2.2x in a Spanish locale translates one label of its summary,
/// "Virtualization" (the form of 56 of linuxhw/LsCPU's hw-probe reports, a
/// 4-core AMD among them; excerpt): every count is in English, so it reads.
const SPANISH_2_2X: &str = "\
Architecture:          x86_64
CPU op-mode(s):        32-bit, 64-bit
Byte Order:            Little Endian
CPU(s):                4
On-line CPU(s) list:   0-3
Thread(s) per core:    1
Core(s) per socket:    4
Socket(s):             1
NUMA node(s):          1
Vendor ID:             AuthenticAMD
Virtualización:       AMD-V
L1d cache:             32K
L2 cache:              2048K
NUMA node0 CPU(s):     0-3
";

#[test]
fn lscpu_with_one_translated_label_reads_when_its_counts_are_in_english() {
    let t = lscpu::parse(SPANISH_2_2X, "es.lscpu").unwrap_or_else(|e| panic!("{e}"));
    let c = lscpu::counts(&t);
    assert_eq!((c.online.weight(), c.cores, c.sockets), (4, 4, 1));
    // The same output with its counts translated is still one error
    // naming the first translated line.
    let hidden = SPANISH_2_2X.replace(
        "Thread(s) per core:",
        "Hilo(s) de procesamiento por núcleo:",
    );
    let e = lscpu::parse(&hidden, "es.lscpu").unwrap_err();
    assert_eq!(e.line, Some(6), "{e}");
    assert!(e.message.contains("LC_ALL=C"), "{e}");
}

/// lscpu in German, every label as util-linux 2.38's po/de.po translates
/// it (for a 4-core, 8-thread Core i7): its count labels are all ASCII
/// ("Thread(s) pro Kern", "Kern(e) pro Sockel", "Sockel"), and "CPU(s)" is
/// left as it is, so read as unknown fields they would give 8 cores of one
/// thread without a word. One error names the first translated line and
/// says how to run lscpu instead.
const GERMAN: &str = "\
Architektur:                     x86_64
CPU Operationsmodus:             32-bit, 64-bit
Byte-Reihenfolge:                Little Endian
CPU(s):                          8
Liste der Online-CPU(s):         0-7
Anbieterkennung:                 GenuineIntel
Modellname:                      Intel(R) Core(TM) i7-4770 CPU @ 3.40GHz
Thread(s) pro Kern:              2
Kern(e) pro Sockel:              4
Sockel:                          1
L1d Cache:                       128 KiB (4 Instanzen)
NUMA-Knoten:                     1
NUMA-Knoten0 CPU(s):             0-7
";

/// The line of `text` whose label starts with `label`.
fn line_of(text: &str, label: &str) -> usize {
    1 + text
        .lines()
        .position(|l| l.starts_with(label))
        .unwrap_or_else(|| panic!("no {label} line"))
}

#[test]
fn lscpu_translated_with_ascii_labels_is_refused_at_the_first_translated_line() {
    let e = lscpu::parse(GERMAN, "de.lscpu").unwrap_err();
    assert_eq!((e.source.as_str(), e.line), ("de.lscpu", Some(1)), "{e}");
    assert!(e.message.contains("'Architecture'"), "{e}");
    assert!(e.message.contains("LC_ALL=C"), "{e}");
    // Only the counts translated (the English lines the reader knows put
    // back above them): refused at the threads line.
    let english = GERMAN
        .replace("Architektur:    ", "Architecture:   ")
        .replace("Liste der Online-CPU(s):", "On-line CPU(s) list:    ");
    let english: String = english
        .lines()
        .filter(|l| {
            !["CPU Op", "Byte-", "Anbieter", "Modell"]
                .iter()
                .any(|p| l.starts_with(p))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    let e = lscpu::parse(&english, "de.lscpu").unwrap_err();
    assert_eq!(e.line, Some(line_of(&english, "Thread(s) pro Kern")), "{e}");
    assert!(e.message.contains("'Thread(s) per core'"), "{e}");
    // A node list and a cache name in another language are refused too.
    for (label, english) in [
        ("NUMA-Knoten0 CPU(s)", "NUMA node%d CPU(s)"),
        ("L1d Cache", "%s cache"),
    ] {
        let only: String = GERMAN
            .lines()
            .filter(|l| !l.contains(':') || l.starts_with(label))
            .map(|l| format!("{l}\n"))
            .collect();
        let text = format!("{}{only}", &SPANISH_2_2X);
        let e = lscpu::parse(&text, "de.lscpu").unwrap_err();
        assert_eq!(e.line, Some(line_of(&text, label)), "{e}");
        assert!(e.message.contains(english), "{e}");
    }
}

/// Dutch (util-linux 2.38's po/nl.po) translates "CPU(s)" as "CPU's", and
/// French (po/fr.po) ends every label with a no-break space before the
/// colon: each is refused at its first translated line, not as output
/// without a CPU count.
#[test]
fn lscpu_in_dutch_or_french_is_refused_at_the_first_translated_line() {
    let dutch = "\
Architectuur:                    x86_64
CPU's:                           8
Online CPU's-lijst:              0-7
Draden per kern:                 2
Kernen per voet:                 4
CPU-voeten:                      1
";
    let e = lscpu::parse(dutch, "nl.lscpu").unwrap_err();
    assert_eq!(e.line, Some(1), "{e}");
    let without_arch = &dutch[dutch.find('\n').unwrap() + 1..];
    let e = lscpu::parse(without_arch, "nl.lscpu").unwrap_err();
    assert_eq!(e.line, Some(1), "{e}");
    assert!(e.message.contains("'CPU(s)'"), "{e}");
    let french = "\
Architecture\u{a0}:                    x86_64
Processeur(s)\u{a0}:                   8
Liste de processeur(s) en ligne\u{a0}: 0-7
Thread(s) par cœur\u{a0}:              2
Cœur(s) par socket\u{a0}:              4
Socket(s)\u{a0}:                       1
";
    let e = lscpu::parse(french, "fr.lscpu").unwrap_err();
    assert_eq!(e.line, Some(2), "{e}");
    assert!(e.message.contains("'CPU(s)'"), "{e}");
}

/// Chinese translations end labels with a full-width colon (po/zh_CN.po:
/// "每个核的线程数："): such a line is a translated field, not text without
/// a label.
#[test]
fn lscpu_label_with_a_full_width_colon_is_a_translated_field() {
    let text = SPANISH_2_2X
        .replace("Virtualización:       AMD-V\n", "")
        .replace("Thread(s) per core:    1", "每个核的线程数：        2");
    let e = lscpu::parse(&text, "zh.lscpu").unwrap_err();
    assert_eq!(e.line, Some(line_of(&text, "每个核")), "{e}");
    assert!(e.message.contains("'Thread(s) per core'"), "{e}");
}

/// util-linux 2.34–2.36 print "Thread(s) per core" as on-line CPUs / cores
/// rounded down (`desc->nthreads / desc->ncores`, lscpu.c before the 2.37
/// rewrite). A Ryzen 5 3600XT (6 cores, 12 threads) booted with 7 CPUs
/// prints 1 thread per core, 6 cores (a linuxhw/LsCPU hw-probe report,
/// excerpt): 7 CPUs on-line is what those counts mean, not a contradiction.
/// The truth is the model name's 6 cores; the seventh CPU is the second
/// thread of the first core, as Linux numbers x86 CPUs (all first threads,
/// then the second ones). The L1d line is lscpu's sum over what it took for
/// instances (cores / (CPUs sharing one / rounded threads)): 96 KiB for six
/// 32 KiB caches, so no instance size can be read from it.
const RYZEN_7_OF_12: &str = "\
Architecture:                    x86_64
CPU op-mode(s):                  32-bit, 64-bit
Byte Order:                      Little Endian
Address sizes:                   43 bits physical, 48 bits virtual
CPU(s):                          7
On-line CPU(s) list:             0-6
Thread(s) per core:              1
Core(s) per socket:              6
Socket(s):                       1
Vendor ID:                       AuthenticAMD
CPU family:                      23
Model:                           113
Model name:                      AMD Ryzen 5 3600XT 6-Core Processor
L1d cache:                       96 KiB
L2 cache:                        1.5 MiB
L3 cache:                        16 MiB
";

#[test]
fn lscpu_2_34_rounded_down_threads_per_core_reads() {
    let t = lscpu::parse(RYZEN_7_OF_12, "ryzen.lscpu").unwrap_or_else(|e| panic!("{e}"));
    let c = lscpu::counts(&t);
    assert_eq!((c.online.weight(), c.cores, c.sockets), (7, 6, 1));
    let cores = t.level(LevelKind::Core).unwrap();
    let with_six: Vec<usize> = cores
        .groups
        .iter()
        .find(|g| g.cpus.contains(6))
        .unwrap()
        .cpus
        .iter()
        .collect();
    assert_eq!(with_six, [0, 6]);
    let l1d: Vec<_> = t
        .caches()
        .iter()
        .filter(|c| c.level == 1 && c.kind == CacheKind::Data)
        .collect();
    assert_eq!(l1d.len(), 6);
    assert!(l1d.iter().all(|c| c.size_bytes.is_none()), "{l1d:?}");
}

/// The same rule gives "Thread(s) per core: 0" when fewer CPUs are on-line
/// than lscpu counted cores: a 2 × 10-core Xeon E5-2690 v2 with 2 of its 40
/// CPUs on-line (linuxhw/LsCPU, excerpt). It reads: 2 on-line, 38 off-line.
const XEON_2_OF_40: &str = "\
Architecture:                    x86_64
CPU(s):                          40
On-line CPU(s) list:             10,33
Off-line CPU(s) list:            0-9,11-32,34-39
Thread(s) per core:              0
Core(s) per socket:              10
Socket(s):                       2
NUMA node(s):                    2
Vendor ID:                       GenuineIntel
Model name:                      Intel(R) Xeon(R) CPU E5-2690 v2 @ 3.00GHz
L1d cache:                       320 KiB
NUMA node0 CPU(s):               0-9,20-29
NUMA node1 CPU(s):               10-19,30-39
";

#[test]
fn lscpu_zero_threads_per_core_with_cpus_off_line_reads() {
    let t = lscpu::parse(XEON_2_OF_40, "xeon.lscpu").unwrap_or_else(|e| panic!("{e}"));
    let c = lscpu::counts(&t);
    assert_eq!(c.online.iter().collect::<Vec<_>>(), [10, 33]);
    assert_eq!((c.offline.weight(), c.cores), (38, 2));
}

/// With every CPU on-line (no off-line list), K cores hold at least K
/// CPUs, so no util-linux version prints "Thread(s) per core: 0": the
/// summary is refused at that block's line.
#[test]
fn lscpu_zero_threads_per_core_with_every_cpu_on_line_is_refused() {
    let text = XEON_2_OF_40
        .replace(
            "CPU(s):                          40",
            "CPU(s):                          2",
        )
        .replace("Off-line CPU(s) list:            0-9,11-32,34-39\n", "");
    assert!(!text.contains("Off-line"));
    let e = lscpu::parse(&text, "xeon.lscpu").expect_err("0 threads with every CPU on-line");
    assert!(e.to_string().contains("xeon.lscpu"), "{e}");
    assert!(e.to_string().contains("Thread(s) per core 0"), "{e}");
}

/// The rounded-down reading above is only for counts that the most threads
/// any core has cannot explain. A 2-socket x86 guest whose sockets (NUMA
/// nodes) have 8 and 4 cores of 2 threads: util-linux 2.37+ counts 12
/// cores, prints 12 / 2 = 6 cores per socket and 2 threads (the most any
/// core has), and numbers the first threads 0-11, then the second ones
/// 12-23. Node 0's 16 CPUs are 8 cores, not 6 cores of 2 or 3 threads,
/// and node 1's 8 CPUs 4 cores: "Core(s) per socket" is an average, and
/// the cores of 2 threads that hold each node's CPUs add up to lscpu's 12.
const UNEQUAL_SOCKETS: &str = "\
Architecture:            x86_64
CPU(s):                  24
On-line CPU(s) list:     0-23
Vendor ID:               GenuineIntel
Model name:              Intel Xeon Processor (Icelake)
Thread(s) per core:      2
Core(s) per socket:      6
Socket(s):               2
NUMA node(s):            2
NUMA node0 CPU(s):       0-7,12-19
NUMA node1 CPU(s):       8-11,20-23
";

#[test]
fn lscpu_unequal_sockets_keep_the_most_threads_reading() {
    let t = lscpu::parse(UNEQUAL_SOCKETS, "guest.lscpu").unwrap_or_else(|e| panic!("{e}"));
    let c = lscpu::counts(&t);
    assert_eq!((c.sockets, c.threads_per_core), (2, 2));
    let cores = t.level(LevelKind::Core).unwrap();
    for cpu in 0..12 {
        let g = cores.groups.iter().find(|g| g.cpus.contains(cpu)).unwrap();
        assert_eq!(g.cpus.iter().collect::<Vec<_>>(), [cpu, cpu + 12]);
    }
    assert_eq!(c.cores, 12);
}

/// Sockets of unequal size whose cores of "Thread(s) per core" threads do
/// not add up to lscpu's core count: the same guest's summary claiming 7
/// cores per socket (14 to 15 cores) where the nodes' 16 and 8 CPUs fill
/// 12 cores of 2 threads. Some cores then have one thread, and whether they
/// sit in socket 0 or 1 the summary does not say: one error at the
/// block's line, naming the sizes, rather than a guess.
#[test]
fn lscpu_unequal_sockets_with_cores_of_fewer_threads_are_refused() {
    let text = UNEQUAL_SOCKETS.replace("Core(s) per socket:      6", "Core(s) per socket:      7");
    let e = lscpu::parse(&text, "guest.lscpu").expect_err("unknown socket of the short cores");
    assert_eq!(e.line, Some(8), "{e}");
    assert!(e.message.contains("16, 8"), "{e}");
}
