//! Bad lscpu input: one clear error naming the line and field, never a panic;
//! plus a round trip through the writer for every catalogue machine.

use readers::{catalogue, lscpu};
use topology::LevelKind;

fn err(text: &str) -> readers::Error {
    match lscpu::parse(text, "bad.txt") {
        Ok(t) => panic!("accepted:\n{text}\n=> {} CPUs", t.online().weight()),
        Err(e) => e,
    }
}

const GOOD: &str = "CPU(s):              16
On-line CPU(s) list: 0-15
Thread(s) per core:  2
Core(s) per socket:  4
Socket(s):           2
NUMA node(s):        2
NUMA node0 CPU(s):   0-7
NUMA node1 CPU(s):   8-15
";

#[test]
fn the_well_formed_baseline_parses() {
    let t = lscpu::parse(GOOD, "good.txt").unwrap();
    let c = lscpu::counts(&t);
    assert_eq!(
        (c.cpus, c.threads_per_core, c.cores_per_socket, c.sockets),
        (16, 2, 4, 2)
    );
    // Unknown fields are ignored.
    let extra = format!("Frobnication level:  11\n{GOOD}Vulnerability Foo:   Not affected\n");
    assert_eq!(lscpu::counts(&lscpu::parse(&extra, "x").unwrap()), c);
}

#[test]
fn malformed_values_name_line_and_field() {
    let e = err(&GOOD.replace("CPU(s):              16", "CPU(s): abc"));
    assert_eq!(e.line, Some(1));
    assert!(
        e.message.contains("CPU(s)") && e.message.contains("abc"),
        "{e}"
    );
    assert_eq!(e.source, "bad.txt");

    let e = err(&GOOD.replace("NUMA node1 CPU(s):   8-15", "NUMA node1 CPU(s):   15-8"));
    assert_eq!(e.line, Some(8));
    assert!(e.message.contains("NUMA node1 CPU(s)"), "{e}");

    let e = err(&GOOD.replace("Thread(s) per core:  2", "Thread(s) per core:  two"));
    assert_eq!(e.line, Some(3));
    assert!(e.message.contains("Thread(s) per core"), "{e}");

    let e = err(&format!("{GOOD}L2 cache:            lots\n"));
    assert_eq!(e.line, Some(9));
    assert!(e.message.contains("L2 cache"), "{e}");

    // util-linux up to 2.36 prints 0 threads per core when fewer CPUs are
    // on-line than it counted cores (2 × 4 here): never with 16 on-line.
    let e = err(&GOOD.replace("Thread(s) per core:  2", "Thread(s) per core:  0"));
    assert_eq!(e.line, Some(5), "{e}");
    assert!(e.message.contains("Thread(s) per core 0"), "{e}");
}

#[test]
fn contradicting_counts_are_errors() {
    // 2 sockets × 4 cores × 2 threads = 16, but 8 CPUs are on-line.
    let text = GOOD
        .replace("CPU(s):              16", "CPU(s):              8")
        .replace("0-15", "0-7")
        .replace("NUMA node(s):        2", "NUMA node(s):        1")
        .replace("NUMA node1 CPU(s):   8-15\n", "");
    let e = err(&text);
    assert_eq!(e.line, Some(5), "{e}");
    assert!(
        e.message.contains("Socket(s)") && e.message.contains("on-line"),
        "{e}"
    );

    // CPU(s) disagrees with the on-line list.
    let e = err(&GOOD.replace("CPU(s):              16", "CPU(s):              12"));
    assert_eq!(e.line, Some(1));

    // Node count disagrees with the node lines.
    let e = err(&GOOD.replace("NUMA node(s):        2", "NUMA node(s):        3"));
    assert_eq!(e.line, Some(6));

    // A CPU in two nodes.
    let e = err(&GOOD.replace("NUMA node1 CPU(s):   8-15", "NUMA node1 CPU(s):   7-15"));
    assert_eq!(e.line, Some(8));
    assert!(e.message.contains("CPU 7"), "{e}");

    // On-line and off-line overlap.
    let e = err(&format!("{GOOD}Off-line CPU(s) list: 3\n"));
    assert_eq!(e.line, Some(9));

    // The same field twice with different values.
    let e = err(&format!("{GOOD}CPU(s): 17\n"));
    assert_eq!(e.line, Some(9));
}

/// A count no machine can have (more than the 16384 CPUs a mask holds) is
/// refused on its own line, naming the field and the value as written,
/// instead of a product of counts capped somewhere along the way.
#[test]
fn huge_counts_name_their_line_and_value() {
    for (line, field, from) in [
        (3, "Thread(s) per core", "Thread(s) per core:  2"),
        (4, "Core(s) per socket", "Core(s) per socket:  4"),
        (5, "Socket(s)", "Socket(s):           2"),
        (6, "NUMA node(s)", "NUMA node(s):        2"),
    ] {
        let e = err(&GOOD.replace(from, &format!("{field}: 4294967295")));
        assert_eq!(e.line, Some(line), "{field}: {e}");
        assert!(
            e.message.contains(field) && e.message.contains("4294967295"),
            "{e}"
        );
        assert!(!e.message.contains('×'), "not a product: {e}");
    }
    // One past the limit is refused; the limit itself is a count a machine
    // can have, so it reaches the cross-check, whose product is exact.
    let e = err(&GOOD.replace("Thread(s) per core:  2", "Thread(s) per core:  16385"));
    assert_eq!(e.line, Some(3), "{e}");
    let e = err(&GOOD
        .replace("Thread(s) per core:  2", "Thread(s) per core:  16384")
        .replace("Core(s) per socket:  4", "Core(s) per socket:  16384")
        .replace("Socket(s):           2", "Socket(s):           16384"));
    assert!(
        e.message
            .contains(&format!("= {}", 16384u128 * 16384 * 16384)),
        "{e}"
    );
}

/// lscpu prints each node's list once; a second `NUMA nodeN CPU(s):` line,
/// with the same list or another, is an error naming the repeat's line.
#[test]
fn duplicate_node_lines_are_errors() {
    for repeat in ["0-7", "0-3"] {
        let e = err(&format!("{GOOD}NUMA node0 CPU(s):   {repeat}\n"));
        assert_eq!(e.line, Some(9), "{e}");
        assert!(
            e.message.contains("NUMA node0 CPU(s)") && e.message.contains("line 7"),
            "{e}"
        );
    }
}

#[test]
fn irregular_but_possible_counts_are_accepted() {
    // Hybrid x86: 8 two-thread and 4 one-thread cores; lscpu prints the most
    // threads per core (2) and 12 cores per socket for 20 CPUs.
    let text = "Architecture: x86_64\nCPU(s): 20\nOn-line CPU(s) list: 0-19\n\
                Thread(s) per core: 2\nCore(s) per socket: 12\nSocket(s): 1\n";
    let c = lscpu::counts(&lscpu::parse(text, "hybrid").unwrap());
    assert_eq!((c.cores, c.threads_per_core, c.sockets), (12, 2, 1));
    // One CPU short of any machine with these counts.
    let e = err(&text.replace("20", "12").replace("0-19", "0-11"));
    assert_eq!(e.line, Some(6));
}

#[test]
fn parsable_rows_are_checked() {
    let csv = "# CPU,Core,Socket,Node\n0,0,0,0\n1,0,0,0\n2,1,0\n";
    let e = err(csv);
    assert_eq!(e.line, Some(4));
    let e = err("# CPU,Core,Socket,Node\n0,zero,0,0\n");
    assert_eq!(e.line, Some(2));
    assert!(e.message.contains("Core"), "{e}");
    // A row for a CPU the summary does not list.
    let e = err(&format!("{GOOD}\n# CPU,Core,Socket,Node\n99,0,0,0\n"));
    assert_eq!(e.line, Some(11));
    // CSV alone is a valid input.
    let t = lscpu::parse(
        "# CPU,Core,Socket,Node\n0,0,0,0\n1,0,0,0\n2,1,0,0\n3,1,0,0\n",
        "p",
    )
    .unwrap();
    assert_eq!(lscpu::counts(&t).threads_per_core, 2);
}

/// lscpu prints a CPU's cache ids only for the caches that list it, so a
/// row of the default `-p` (caches last) may be short and still whole; a
/// short row of a table with a column after its caches cannot be told from
/// a row cut short, and is refused rather than read with its fields under
/// the wrong columns.
#[test]
fn short_parsable_rows_are_padded_only_when_the_caches_come_last() {
    let caches_last = "# CPU,Core,Socket,Node,,L1d,L1i,L2\n0,0,0,0,,0,0,0\n1,1,0,0,,0\n";
    let t = lscpu::parse(caches_last, "p").expect("caches last");
    assert_eq!(t.online().weight(), 2);
    let column_after = "# CPU,Core,Socket,Node,,L1d,L1i,L2,MHz\n\
                        0,0,0,0,,0,0,0,2000\n1,1,0,0,,0,0,0\n";
    let e = err(column_after);
    assert_eq!(e.line, Some(3), "{e}");
    assert!(e.message.contains("fields"), "{e}");
}

#[test]
fn empty_or_alien_text_is_one_error() {
    for text in ["", "\n\n", "hello world\n", "[    0.0] Booting Node 0\n"] {
        let e = err(text);
        assert!(e.message.contains("CPU(s)"), "{e}");
    }
    let e = err("CPU(s): 100000\n");
    assert!(e.message.contains("maximum"), "{e}");
    // Counts whose product would overflow 64 bits: the first impossible
    // count is the error, not a crash or a capped product.
    let huge = "CPU(s): 4\nThread(s) per core: 4294967295\nCore(s) per socket: 4294967295\nSocket(s): 4294967295\n";
    let e = err(huge);
    assert_eq!(e.line, Some(2), "{e}");
    assert!(e.message.contains("Thread(s) per core"), "{e}");
}

/// catalogue → summary → reader gives the catalogue's counts, nodes and
/// (where lscpu's text determines it) cores back.
#[test]
fn every_catalogue_machine_round_trips_through_the_summary() {
    for entry in catalogue::list() {
        let machine = catalogue::machine(entry.name).unwrap();
        let text = lscpu::summary(&machine);
        let back = lscpu::parse(&text, entry.name).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(
            lscpu::counts(&back),
            lscpu::counts(&machine),
            "{}",
            entry.name
        );
        assert_eq!(back.nodes().len(), machine.nodes().len());
        for (a, b) in back.nodes().iter().zip(machine.nodes()) {
            assert_eq!((a.id, &a.cpus), (b.id, &b.cpus), "{}", entry.name);
        }
        // The catalogue numbers CPUs as Linux does, which is what the
        // reader's inference assumes: cores and big cores come back exactly.
        for level in [LevelKind::Core, LevelKind::BigCore, LevelKind::Package] {
            let groups = |t: &topology::Topology| {
                t.level(level)
                    .map(|l| l.groups.iter().map(|g| g.cpus.clone()).collect::<Vec<_>>())
            };
            assert_eq!(groups(&back), groups(&machine), "{} {level:?}", entry.name);
        }
        assert_eq!(lscpu::summary(&back), text, "{}", entry.name);
    }
}

/// Two CPU-type blocks, the second cut short before its counts (an output
/// pasted only in part): one error naming that block's line, not a sum of
/// unknown sizes.
#[test]
fn a_cpu_type_block_without_counts_is_named() {
    let text = "Architecture:                aarch64
CPU(s):                      12
  On-line CPU(s) list:       0-11
Vendor ID:                   ARM
  Model name:                Cortex-A520
    Model:                   1
    Thread(s) per core:      1
    Core(s) per socket:      4
    Socket(s):               1
  Model name:                Cortex-A720
    Model:                   1
";
    let e = err(text);
    assert_eq!(e.line, Some(10), "{e}");
    assert!(
        e.message.contains("Core(s) per socket") && e.message.contains("12 on-line"),
        "{e}"
    );
}
