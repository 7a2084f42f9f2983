//! The check that manycore's domains reproduce a kernel's dump, for the
//! tests against real kernels here and in qemu-runner (which includes this
//! file by path).

use domains::compare::{compare, Dump};
use domains::Domains;

/// Fails unless `doms` give every file of `dump` and, when it has one, every
/// span and group of its sched_verbose log; the message names `what` and
/// shows the first 20 differences.
pub fn assert_same_as_dump(what: &str, doms: &Domains, dump: &Dump) {
    let diffs = compare(doms, dump);
    let shown: Vec<String> = diffs.iter().take(20).map(|d| d.to_string()).collect();
    assert!(
        diffs.is_empty(),
        "{what}: {} differences:\n{}",
        diffs.len(),
        shown.join("\n")
    );
}
