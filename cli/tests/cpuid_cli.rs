//! End-to-end tests of `--cpuid` (x86 CPUID dumps): a dump reads to the
//! machine hwloc's x86 backend made of it, and the wrong option, or a
//! damaged dump, gives one line naming the file and what to do.
mod common;

use std::path::{Path, PathBuf};

use common::{assert_refused, manycore};

fn x86_dumps() -> Option<PathBuf> {
    let corpus = readers::corpus::dir(env!("CARGO_MANIFEST_DIR"));
    readers::corpus::present(&corpus, "manycore topo --cpuid on the corpus' CPUID dumps")
        .then(|| corpus.join("hwloc/tests/hwloc/x86"))
}

/// `topo --format lscpu` of `args`, without the lines a CPUID dump cannot
/// give (the NUMA nodes) or hwloc's XML does not (the architecture).
fn summary(args: &[&str]) -> Vec<String> {
    let out = manycore(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("Architecture:") && !l.starts_with("NUMA"))
        // hwloc keeps the brand string's trailing blanks.
        .map(|l| l.trim_end().to_string())
        .collect()
}

#[test]
fn dumps_read_as_hwloc_reads_them() {
    let Some(dir) = x86_dumps() else { return };
    for name in [
        "Intel-Skylake-2xXeon6140",
        "AMD-19h-Zen3-2xEpyc-7763",
        "Intel-CPUID.1F-Qemu-2p3d3c2t",
    ] {
        let dump = dir.join(format!("{name}.tar.bz2"));
        let xml = dir.join(format!("{name}.xml"));
        let ours = summary(&[
            "topo",
            "--cpuid",
            dump.to_str().unwrap(),
            "--format",
            "lscpu",
        ]);
        let hwloc = summary(&["topo", "--xml", xml.to_str().unwrap(), "--format", "lscpu"]);
        assert_eq!(ours, hwloc, "{name}");
        assert!(
            ours.iter().any(|l| l.starts_with("L3 cache:")),
            "{name}: {ours:?}"
        );
    }
}

#[test]
fn wrong_option_and_damaged_dumps_are_refused_by_name() {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cpuid_cli");
    let damaged = tmp.join("damaged");
    std::fs::create_dir_all(&damaged).unwrap();
    std::fs::write(damaged.join("hwloc-cpuid-info"), "Architecture: x86\n").unwrap();
    std::fs::write(
        damaged.join("pu0"),
        "# mask e[abcd]x => e[abcd]x\n1 0 0 0 0 => d 756e6547 6c65746e\n",
    )
    .unwrap();
    let damaged = damaged.to_str().unwrap();
    assert_refused(&["topo", "--cpuid", damaged], &["pu0:2:", "hexadecimal"]);
    assert_refused(
        &["topo", "--sysfs", damaged],
        &[damaged, "CPUID dump", "--cpuid"],
    );
    // An hwloc-gather-topology tree holds a dump in `cpuid/` beside its
    // sysfs tree: damage in the sysfs tree is named as such, not taken for
    // a dump given to the wrong option.
    let gathered = tmp.join("gathered");
    let cpu = gathered.join("sys/devices/system/cpu");
    std::fs::create_dir_all(&cpu).unwrap();
    std::fs::create_dir_all(gathered.join("cpuid")).unwrap();
    std::fs::write(
        gathered.join("cpuid/hwloc-cpuid-info"),
        "Architecture: x86\n",
    )
    .unwrap();
    std::fs::write(gathered.join("cpuid/pu0"), "# mask e[abcd]x => e[abcd]x\n").unwrap();
    std::fs::write(cpu.join("online"), "0-x\n").unwrap();
    let gathered = gathered.to_str().unwrap();
    assert_refused(&["topo", "--sysfs", gathered], &["cpu/online"]);
    let out = manycore(&["topo", "--sysfs", gathered]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("--cpuid"));
    let missing = tmp.join("no-such-dump");
    let missing = missing.to_str().unwrap();
    assert_refused(&["topo", "--cpuid", missing], &[missing]);

    let Some(dir) = x86_dumps() else { return };
    let dump = dir.join("Intel-Skylake-2xXeon6140.tar.bz2");
    let dump = dump.to_str().unwrap();
    assert_refused(&["topo", "--sysfs", dump], &[dump, "CPUID dump", "--cpuid"]);
    let sysfs = Path::new(&dir).join("../linux/16amd64-8n2c-cpusets.tar.bz2");
    let sysfs = sysfs.to_str().unwrap();
    assert_refused(&["topo", "--cpuid", sysfs], &[sysfs, "no puN files"]);
}
