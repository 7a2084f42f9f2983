//! What the QEMU boot tests share.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The manycore kernel, built once per test binary; without QEMU every test
/// fails with the install hint instead of passing silently.
pub fn kernel() -> PathBuf {
    static KERNEL: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    KERNEL
        .get_or_init(|| {
            qemu_runner::qemu_version().map_err(|e| e.to_string())?;
            qemu_runner::build_kernel().map_err(|e| e.to_string())
        })
        .clone()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Where a capture lives: this crate's tests/data (GenuineIntel, and the
/// boot tests' machines) or crates/domains/tests/data (the AuthenticAMD ones
/// the domains crate is tested with).
#[allow(dead_code)]
pub fn data(name: &str) -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let own = manifest.join("tests/data").join(name);
    if own.exists() {
        own
    } else {
        manifest.join("../domains/tests/data").join(name)
    }
}

/// The domains the manycore kernel printed equal a Linux 6.12 guest's dump
/// on the same machine, CPU by CPU: the same CPUs have domains, each with the
/// same level names (and `name` files), spans, groups (as a set: Linux rotates
/// them to start at the CPU's own) and flag names. Returns the level names
/// seen.
#[allow(dead_code)]
pub fn assert_domains_match_linux(
    machine: &str,
    printed: &qemu_runner::KernelDomains,
    dump: &domains::compare::Dump,
) -> BTreeSet<String> {
    assert_eq!(printed.kernel, "6.12");
    assert!(
        !dump.verbose.is_empty(),
        "{machine}: the dump has a sched_verbose log"
    );
    assert_eq!(
        printed.cpus.keys().collect::<Vec<_>>(),
        dump.verbose.keys().collect::<Vec<_>>(),
        "{machine}: CPUs with domains"
    );
    let mut names_seen = BTreeSet::new();
    for (&cpu, tree) in &dump.verbose {
        let got = &printed.cpus[&cpu];
        let want_names: Vec<&str> = tree.iter().map(|d| d.name.as_str()).collect();
        let got_names: Vec<&str> = got.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(got_names, want_names, "{machine}: CPU {cpu} levels");
        for (m, (ours, linux)) in got.iter().zip(tree).enumerate() {
            let what = format!("{machine}: cpu{cpu}/domain{m} ({})", linux.name);
            let file = |f: &str| {
                dump.files
                    .get(&format!("cpu{cpu}/domain{m}/{f}"))
                    .unwrap_or_else(|| panic!("{what}: no {f} file in the dump"))
                    .trim()
                    .to_string()
            };
            assert_eq!(ours.name, file("name"), "{what}: name file");
            assert_eq!(ours.span, linux.span, "{what}: span");
            let mut groups = linux.groups.clone();
            groups.sort_by_key(|g| (g.first(), g.to_list_string()));
            assert_eq!(ours.groups, groups, "{what}: groups");
            let flags: Vec<String> = file("flags")
                .split_whitespace()
                .map(str::to_string)
                .collect();
            assert_eq!(ours.flags, flags, "{what}: flags");
            names_seen.insert(ours.name.clone());
        }
    }
    names_seen
}
