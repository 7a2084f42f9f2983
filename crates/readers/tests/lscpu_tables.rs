//! `lscpu -p=LIST` and `lscpu -e=LIST` print their columns in the order the
//! user lists them (util-linux `lscpu.c`: `-p` headers in mixed case after
//! `# `, `-e` headers in capitals, columns aligned with spaces). Each table
//! here is generated from one CPU list, then printed in other orders and as
//! `-e`: every form must read as the default `# CPU,Core,Socket,Node` table
//! does. Unknown values (`-`, empty fields, empty cache ids) are unknown, and a
//! value that is not a number is an error naming the line and column.

use readers::lscpu;
use topology::{LevelKind, Topology};

/// (cpu, core, socket, node, L1d, L2, online): 2 sockets of 2 cores of 2
/// threads, numbered threads-last as x86 firmware does (CPU 0 and 4 are
/// siblings), CPU 7 offline.
const CPUS: [(u32, u32, u32, u32, u32, u32, bool); 8] = [
    (0, 0, 0, 0, 0, 0, true),
    (1, 1, 0, 0, 1, 1, true),
    (2, 2, 1, 1, 2, 2, true),
    (3, 3, 1, 1, 3, 3, true),
    (4, 0, 0, 0, 0, 0, true),
    (5, 1, 0, 0, 1, 1, true),
    (6, 2, 1, 1, 2, 2, true),
    (7, 3, 1, 1, 3, 3, false),
];

/// One CPU's value of a column (lscpu's name for it, any case).
fn value(c: &(u32, u32, u32, u32, u32, u32, bool), col: &str, online_word: (&str, &str)) -> String {
    match col.to_ascii_lowercase().as_str() {
        "cpu" => c.0.to_string(),
        "core" => c.1.to_string(),
        "socket" => c.2.to_string(),
        "node" => c.3.to_string(),
        "l1d:l2" => format!("{}:{}", c.4, c.5),
        "online" => if c.6 { online_word.0 } else { online_word.1 }.to_string(),
        "maxmhz" => "3600.0000".to_string(),
        other => panic!("no column {other}"),
    }
}

/// `lscpu -p=cols` (mixed-case header, comma-separated rows).
fn parsable(cols: &[&str]) -> String {
    let mut s = String::from(
        "# The following is the parsable format, which can be fed to other\n# programs.\n",
    );
    s += &format!("# {}\n", cols.join(","));
    for c in &CPUS {
        let row: Vec<String> = cols.iter().map(|col| value(c, col, ("Y", "N"))).collect();
        s += &format!("{}\n", row.join(","));
    }
    s
}

/// `lscpu -e=cols` (capitals, columns padded with spaces).
fn extended(cols: &[&str]) -> String {
    let head: Vec<String> = cols
        .iter()
        .map(|c| format!("{:>8}", c.to_ascii_uppercase().replace("L1D:L2", "L1d:L2")))
        .collect();
    let mut s = format!("{}\n", head.join(" "));
    for c in &CPUS {
        let row: Vec<String> = cols
            .iter()
            .map(|col| format!("{:>8}", value(c, col, ("yes", "no"))))
            .collect();
        s += &format!("{}\n", row.join(" "));
    }
    s
}

/// The summary lines lscpu prints above its tables (`lscpu; lscpu -p`).
const SUMMARY: &str = "CPU(s): 8\nOn-line CPU(s) list: 0-6\nOff-line CPU(s) list: 7\n\n";

fn read(text: &str) -> Topology {
    let text = format!("{SUMMARY}{text}");
    lscpu::parse(&text, "gen.lscpu").unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// The facts a table gives: per CPU (core group, package, node, L2 group),
/// as the CPU sets of their groups.
/// A CPU's id, the CPUs of its core and its package, its node, and whether
/// it is online.
type Place = (u32, Vec<usize>, Vec<usize>, Option<u32>, bool);

fn placement(t: &Topology) -> Vec<Place> {
    t.cpus()
        .iter()
        .map(|c| {
            let group = |k: LevelKind| {
                t.level(k)
                    .and_then(|l| l.groups.iter().find(|g| g.cpus.contains(c.id as usize)))
                    .map(|g| g.cpus.iter().collect::<Vec<_>>())
                    .unwrap_or_default()
            };
            (
                c.id,
                group(LevelKind::Core),
                group(LevelKind::Package),
                t.node_of(c.id as usize).map(|n| n.id),
                c.online,
            )
        })
        .collect()
}

#[test]
fn columns_in_any_order_and_the_extended_table_read_alike() {
    let truth = read(&parsable(&[
        "CPU", "Core", "Socket", "Node", "L1d:L2", "Online",
    ]));
    // The generator's own facts: CPU 0 and 4 share core 0, 7 is offline.
    let p = placement(&truth);
    assert_eq!(p[0].1, vec![0, 4]);
    assert_eq!(p[2].2, vec![2, 3, 6]);
    assert_eq!(p.len(), 7, "CPU 7 is offline: present, not in cpus()");
    assert!(truth.present().contains(7) && !truth.online().contains(7));
    for cols in [
        vec!["Socket", "CPU", "Node", "Core", "L1d:L2", "Online"],
        vec!["Node", "Online", "L1d:L2", "Core", "Socket", "CPU"],
        vec!["Core", "CPU", "Socket", "Node", "Online", "L1d:L2"],
    ] {
        let t = read(&parsable(&cols));
        assert_eq!(placement(&t), p, "-p={}", cols.join(","));
        assert_eq!(t.caches(), truth.caches(), "-p={}", cols.join(","));
        let t = read(&extended(&cols));
        assert_eq!(placement(&t), p, "-e={}", cols.join(","));
        assert_eq!(t.caches(), truth.caches(), "-e={}", cols.join(","));
    }
    // lscpu -e's default columns, with a frequency column to ignore.
    let t = read(&extended(&[
        "CPU", "Node", "Socket", "Core", "L1d:L2", "Online", "MaxMHz",
    ]));
    assert_eq!(placement(&t), p);
}

#[test]
fn unknown_values_are_unknown_and_bad_ones_are_errors() {
    // lscpu prints '-' or nothing where it does not know a value.
    let text = parsable(&["Socket", "CPU", "Core", "Node", "L1d:L2", "Online"])
        .replace("\n1,6,2,1,2:2,Y\n", "\n1,6,2,1,-:2,\n");
    assert!(text.contains("1,6,2,1,-:2,\n"), "mutation applied");
    let t = read(&text);
    assert_eq!(
        placement(&t)[6],
        placement(&read(&parsable(&[
            "CPU", "Core", "Socket", "Node", "L1d:L2", "Online"
        ])))[6]
    );
    let bad = parsable(&["Socket", "CPU", "Core", "Node"]).replace("\n1,2,2,1\n", "\n1,2,two,1\n");
    let e = lscpu::parse(&format!("{SUMMARY}{bad}"), "gen.lscpu").unwrap_err();
    let at = format!("{SUMMARY}{bad}")
        .lines()
        .position(|l| l == "1,2,two,1")
        .unwrap()
        + 1;
    assert_eq!(e.line, Some(at), "{e}");
    assert!(e.message.contains("column Core has value 'two'"), "{e}");
    let short = extended(&["Node", "CPU", "Core"])
        .replace("       1        2        2\n", "       1        2\n");
    let e = lscpu::parse(&format!("{SUMMARY}{short}"), "gen.lscpu").unwrap_err();
    assert!(
        e.message
            .contains("has 2 fields but the header on line 5 names 3"),
        "{e}"
    );
}
