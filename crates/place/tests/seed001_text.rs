//! `place::validate::SEED_001` (the lparstat rows `manycore validate` is held
//! to) against the text of /work/shared/seeds/001_*.txt: each row's partition
//! (entitlement, CPUs), ebizzy thread count and the physc column of the
//! 6.6.0-rc3 and "+patch" rows under it. Each row's pool is checked against
//! the same rows' `physc + app` in `seed001.rs`: the header's `cpus=` is the
//! whole system's shared processors (lparcfg's
//! `physical_procs_allocated_to_virtualization`), 96 on both partitions. A
//! missing seed fails.
use place::validate::SEED_001;

fn seed_001_tokens() -> Vec<String> {
    // The mail's lines are joined with " # ": drop the separators.
    readers::corpus::seed_text(env!("CARGO_MANIFEST_DIR"), "001_")
        .split_whitespace()
        .filter(|t| *t != "#")
        .map(str::to_string)
        .collect()
}

/// One "System Configuration" of the seed and its ebizzy runs.
#[derive(Debug, PartialEq)]
struct Partition {
    entitlement: f64,
    /// The header's `cpus=`: shared processors in the whole system.
    system_cpus: f64,
    cpus: u32,
    /// (threads, physc before, physc after)
    runs: Vec<(u32, f64, f64)>,
}

fn partitions(t: &[String]) -> Vec<Partition> {
    let num = |s: &str| s.parse::<f64>().unwrap_or_else(|_| panic!("{s:?}"));
    let field = |i: usize, key: &str| -> f64 { num(t[i].strip_prefix(key).unwrap()) };
    let mut out: Vec<Partition> = Vec::new();
    for i in 0..t.len() {
        if t[i].starts_with("ent=") {
            // type=Shared mode=Uncapped smt=8 lcpu=N mem=N kB cpus=N ent=N
            assert_eq!(t[i - 7], "type=Shared", "{}", t[i - 7]);
            out.push(Partition {
                entitlement: field(i, "ent="),
                system_cpus: field(i - 1, "cpus="),
                cpus: 0,
                runs: Vec::new(),
            });
        } else if t[i] == "CPU(s):" && t[i - 1] != "On-line" && t[i - 1] != "node0" {
            if let Some(p) = out.last_mut().filter(|p| p.cpus == 0) {
                p.cpus = num(&t[i + 1]) as u32;
            }
        } else if t[i] == "ebizzy" && t[i + 1] == "-t" {
            let threads = num(&t[i + 2]) as u32;
            let head = i + t[i..].iter().position(|x| x == "physc").unwrap();
            let end = head + t[head..].iter().position(|x| x == "phint").unwrap();
            // Two rows follow: a kernel label and ten columns each; physc
            // is the fifth column.
            let (before, after) = (&t[end + 1..end + 12], &t[end + 12..end + 23]);
            assert!(before[0].ends_with("6.6.0-rc3"), "{before:?}");
            assert!(after[0].ends_with("+patch"), "{after:?}");
            let p = out.last_mut().expect("a run before any configuration");
            p.runs.push((threads, num(&before[5]), num(&after[5])));
        }
    }
    out
}

#[test]
fn seed_001_rows_are_the_mails() {
    let parts = partitions(&seed_001_tokens());
    assert_eq!(parts.len(), 2, "{parts:#?}");
    for p in &parts {
        assert_eq!(p.system_cpus, 96.0);
        // A partition draws from a pool no larger than the system's.
        for r in SEED_001.iter().filter(|r| r.entitlement == p.entitlement) {
            assert!(r.pool <= p.system_cpus, "{r:?}");
        }
    }
    let machine = |p: &Partition| format!("power10-shared-{}", p.cpus);
    let mut from_mail: Vec<_> = parts
        .iter()
        .flat_map(|p| {
            p.runs.iter().map(move |&(threads, before, after)| {
                (machine(p), p.entitlement, threads, before, after)
            })
        })
        .collect();
    let mut ours: Vec<_> = SEED_001
        .iter()
        .map(|r| {
            (
                r.machine.to_string(),
                r.entitlement,
                r.threads,
                r.before,
                r.after,
            )
        })
        .collect();
    // The mail has every row of ours; ours may leave out none.
    from_mail.sort_by(|a, b| a.partial_cmp(b).unwrap());
    ours.sort_by(|a, b| a.partial_cmp(b).unwrap());
    assert_eq!(ours, from_mail);
}
