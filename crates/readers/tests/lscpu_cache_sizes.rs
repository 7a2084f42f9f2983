//! lscpu's cache lines across util-linux generations: each is read as the
//! per-instance size and sharing it states, or refused with an error naming
//! its line — never a cache silently dropped or given a size no instance has.
//!
//! The truth is independent of our reader: per-instance sizes come from the
//! vendors' specifications (Xeon Gold 6140: 18 cores, 32 KiB L1d, 1 MiB L2
//! per core, 24.75 MiB L3 per socket), and the sums are what util-linux
//! prints for them — 2.34–2.36 `get_cache_full_size` (instances = cores /
//! cores sharing the first instance, no count printed), 2.37 and later
//! `lscpu_get_cache_full_size` (a sum with `(N instances)`), both through
//! `size_to_human_string` (one decimal, rounded half up), whose figures the
//! unit tests of `human_size` check against the corpus.

use proptest::prelude::*;
use readers::lscpu;
use topology::{CacheKind, Topology};

const KIB: u64 = 1024;
const MIB: u64 = 1024 * 1024;

/// A 2-socket Xeon Gold 6140 (18 cores, 2 threads each), x86 numbering.
fn gold_6140(caches: &str) -> String {
    format!(
        "Architecture:        x86_64
CPU(s):              72
On-line CPU(s) list: 0-71
Thread(s) per core:  2
Core(s) per socket:  18
Socket(s):           2
NUMA node(s):        2
Model name:          Intel(R) Xeon(R) Gold 6140 CPU @ 2.30GHz
{caches}NUMA node0 CPU(s):   0-17,36-53
NUMA node1 CPU(s):   18-35,54-71
"
    )
}

/// (level, kind, size, CPUs per instance, instances) of one cache.
type CacheShape = (u8, CacheKind, Option<u64>, usize, usize);

/// The [`CacheShape`] of every cache.
fn shape(t: &Topology) -> Vec<CacheShape> {
    let mut out: Vec<CacheShape> = Vec::new();
    for c in t.caches() {
        let key = (c.level, c.kind, c.size_bytes, c.cpus.weight());
        match out
            .iter_mut()
            .find(|e| (e.0, e.1, e.2, e.3) == key && e.2 == c.size_bytes)
        {
            Some(e) => e.4 += 1,
            None => out.push((key.0, key.1, key.2, key.3, 1)),
        }
    }
    out.sort_by_key(|e| (e.0, e.1 as u8));
    out
}

/// What the vendor specifies for the Gold 6140, as [`shape`] gives it: 32 KiB
/// L1d and L1i and 1 MiB L2 per core (2 CPUs), 24.75 MiB L3 per socket (36
/// CPUs). Every util-linux generation's way of printing it must read back as this.
const GOLD_6140_CACHES: [CacheShape; 4] = [
    (1, CacheKind::Data, Some(32 * KIB), 2, 36),
    (1, CacheKind::Instruction, Some(32 * KIB), 2, 36),
    (2, CacheKind::Unified, Some(MIB), 2, 36),
    (3, CacheKind::Unified, Some(25344 * KIB), 36, 2),
];

/// The Gold 6140 with `caches` as its cache lines, read, as [`shape`] gives it.
fn gold_6140_caches(caches: &str) -> Vec<CacheShape> {
    shape(&lscpu::parse(&gold_6140(caches), "x").unwrap())
}

fn err(text: &str) -> readers::Error {
    match lscpu::parse(text, "lscpu.txt") {
        Ok(t) => panic!("accepted:\n{text}\n=> caches {:?}", shape(&t)),
        Err(e) => e,
    }
}

#[test]
fn modern_sums_with_instance_counts_are_split_per_instance() {
    // util-linux 2.37+: sums over instances, with the count.
    assert_eq!(
        gold_6140_caches(
            "L1d cache:           1.1 MiB (36 instances)
L1i cache:           1.1 MiB (36 instances)
L2 cache:            36 MiB (36 instances)
L3 cache:            49.5 MiB (2 instances)
"
        ),
        GOLD_6140_CACHES
    );
}

#[test]
fn sums_without_counts_from_util_linux_2_34_are_split_over_the_default_sharing() {
    // util-linux 2.34–2.36 printed the same sums without the count: 36
    // cores × 32 KiB = 1.125 MiB prints as "1.1 MiB"; 2 × 24.75 MiB = 49.5 MiB.
    assert_eq!(
        gold_6140_caches(
            "L1d cache:           1.1 MiB
L1i cache:           1.1 MiB
L2 cache:            36 MiB
L3 cache:            49.5 MiB
"
        ),
        GOLD_6140_CACHES
    );
}

#[test]
fn old_per_instance_sizes_are_one_instance_each() {
    // util-linux before 2.34: one instance's size, K suffix, no sum.
    assert_eq!(
        gold_6140_caches(
            "L1d cache:           32K
L1i cache:           32K
L2 cache:            1024K
L3 cache:            25344K
"
        ),
        GOLD_6140_CACHES
    );
}

#[test]
fn an_instance_count_that_splits_no_level_is_an_error_naming_the_line() {
    // 5 instances among 36 cores, 72 CPUs, 2 sockets and 2 nodes: which CPUs
    // share each is unknowable from the summary.
    let text = gold_6140("L3 cache:            100 MiB (5 instances)\n");
    let e = err(&text);
    assert_eq!(e.line, Some(9), "{e}");
    assert!(
        e.message.contains("L3 cache") && e.message.contains("5 instances"),
        "{e}"
    );
}

#[test]
fn a_sum_no_whole_size_per_instance_prints_as_is_an_error() {
    // 100 KiB over 3 instances: 3 × 33 KiB = 99 KiB and 3 × 34 KiB = 102 KiB,
    // so the instances are not of one size (sysfs sizes are whole KiB).
    let text = "CPU(s):              3
On-line CPU(s) list: 0-2
Thread(s) per core:  1
Core(s) per socket:  3
Socket(s):           1
L1d cache:           100 KiB (3 instances)
";
    let e = err(text);
    assert_eq!(e.line, Some(6), "{e}");
    assert!(e.message.contains("L1d cache"), "{e}");
    // The same in `lscpu --bytes`: 100001 bytes do not split in two.
    let text = text
        .replace("3\n", "2\n")
        .replace("0-2", "0-1")
        .replace("100 KiB (3 instances)", "100001 (2 instances)");
    let e = err(&text);
    assert_eq!(e.line, Some(6), "{e}");
}

#[test]
fn a_sum_without_count_that_does_not_split_is_an_error() {
    // 2.34–2.36 style (no instance count anywhere): 35 KiB over 36 cores is under 1 KiB each.
    let e = err(&gold_6140("L1d cache:           35 KiB\n"));
    assert_eq!(e.line, Some(9), "{e}");
    assert!(e.message.contains("L1d cache"), "{e}");
}

/// Per-instance cache sizes as vendors build them: 1, 3, 5 or 7 × 2^k, from
/// 16 KiB up.
fn cache_size() -> impl Strategy<Value = u64> {
    (prop_oneof![Just(1u64), Just(3), Just(5), Just(7)], 4u32..16).prop_map(|(m, k)| m * (KIB << k))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// A regular machine's cache summed the way util-linux 2.37+ prints it
    /// reads back as that many instances of that size, shared as generated.
    #[test]
    fn generated_sums_read_back_per_instance(
        sockets in 1u32..5,
        cores in 1u32..33,
        threads in 1u32..3,
        size in cache_size(),
        per_socket in any::<bool>(),
    ) {
        let cpus = sockets * cores * threads;
        let instances = if per_socket { sockets } else { sockets * cores };
        let sum = lscpu::human_size(size * instances as u64);
        let plural = if instances == 1 { "instance" } else { "instances" };
        let text = format!(
            "Architecture:        aarch64
CPU(s):              {cpus}
On-line CPU(s) list: 0-{}
Thread(s) per core:  {threads}
Core(s) per socket:  {cores}
Socket(s):           {sockets}
L2 cache:            {sum} ({instances} {plural})
",
            cpus - 1
        );
        let t = lscpu::parse(&text, "gen").unwrap();
        let per = (cpus / instances) as usize;
        prop_assert_eq!(
            shape(&t),
            vec![(2, CacheKind::Unified, Some(size), per, instances as usize)],
            "{}", text
        );
    }
}
