//! 64-bit POWER in both byte orders, read from what real machines and tools
//! wrote. The truth is what the input itself states: lscpu's `Architecture:`
//! line (real big- and little-endian outputs, tests/data/*.lscpu), the
//! `uname -m` a dump's `proc/hwloc-nofile-info` records, the `Architecture`
//! info hwloc (the installed lstopo) writes into XML, and, where a dump
//! states nothing, Linux's Kconfig: no little-endian kernel runs on Cell,
//! PPC970 or POWER6, and distributions' ppc64le kernels need POWER8.

#[path = "support/extract.rs"]
mod extract;
#[path = "xml_support/truth.rs"]
mod truth;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use readers::{corpus, lscpu, sysfs, xml};
use topology::Arch;

fn data(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The value of an lscpu summary line, as the file prints it.
fn field<'a>(text: &'a str, label: &str) -> &'a str {
    text.lines()
        .find_map(|l| l.trim_start().strip_prefix(label)?.strip_prefix(':'))
        .unwrap_or_else(|| panic!("no {label} line"))
        .trim()
}

fn without(text: &str, labels: &[&str]) -> String {
    text.lines()
        .filter(|l| !labels.iter().any(|x| l.trim_start().starts_with(x)))
        .map(|l| format!("{l}\n"))
        .collect()
}

const REAL_LSCPU: [&str; 3] = [
    "zfs14576-power7-be.lscpu",
    "sysinfors25-power8-be.lscpu",
    "ul698-power9-le.lscpu",
];

#[test]
fn lscpu_outputs_read_to_the_architecture_they_print() {
    for name in REAL_LSCPU {
        let text = data(name);
        let want = field(&text, "Architecture");
        let t = lscpu::parse(&text, name).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(t.arch().uname(), want, "{name}");
        assert!(t.arch().is_power(), "{name}");
        // What manycore writes as lscpu says the same.
        let written = lscpu::summary(&t);
        assert_eq!(field(&written, "Architecture"), want, "{name} written");
    }
}

#[test]
fn lscpu_byte_order_line_decides_without_the_architecture_line() {
    for name in REAL_LSCPU {
        let text = data(name);
        let want = field(&text, "Architecture");
        let cut = without(&text, &["Architecture:"]);
        let t = lscpu::parse(&cut, name).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(t.arch().uname(), want, "{name} without Architecture:");
    }
}

#[test]
fn lscpu_of_a_power7_stating_neither_is_big_endian() {
    let text = data("zfs14576-power7-be.lscpu");
    let cut = without(&text, &["Architecture:", "Byte Order:"]);
    let t = lscpu::parse(&cut, "power7").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(*t.arch(), Arch::PowerPc64Be);
}

/// A corpus dump, by its path under the corpus root; `None` (the test
/// skipped, loudly) without the corpus.
fn dump(rel: &str) -> Option<PathBuf> {
    let root = corpus::dir(env!("CARGO_MANIFEST_DIR"));
    if !corpus::present(&root, rel) {
        return None;
    }
    let p = root.join(rel);
    assert!(p.is_file(), "{}", p.display());
    Some(p)
}

/// The `Architecture:` a dump's hwloc-nofile-info records, if it has one.
fn nofile_arch(archive: &Path) -> Option<String> {
    let out = Command::new("tar")
        .arg("xaOf")
        .arg(archive)
        .arg("--wildcards")
        .arg("*/proc/hwloc-nofile-info")
        .output()
        .expect("running tar");
    let text = String::from_utf8(out.stdout).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("Architecture: "))
        .map(str::to_string)
}

#[test]
fn dumps_read_to_the_byte_order_their_kernel_or_processor_has() {
    // hwloc-gather-topology recorded `uname -m`: "ppc" is a 32-bit user
    // space, big-endian, on the PS3's Cell and the POWER6; the AC922 is
    // ppc64le.
    for (rel, want) in [
        ("hwloc/tests/hwloc/linux/2ps3-2t.tar.bz2", Arch::PowerPc64Be),
        (
            "hwloc/history/56e01f01c-parent/tests/hwloc/linux/32ppc-4n4c2c.tar.bz2",
            Arch::PowerPc64Be,
        ),
        (
            "hwloc/tests/hwloc/linux/nvidiagpunumanodes.tar.bz2",
            Arch::PowerPc64,
        ),
    ] {
        let Some(path) = dump(rel) else { return };
        let said = nofile_arch(&path).unwrap_or_else(|| panic!("{rel}: no nofile-info"));
        assert_eq!(
            Some(want.clone()),
            match said.as_str() {
                "ppc64le" => Some(Arch::PowerPc64),
                "ppc64" | "ppc" => Some(Arch::PowerPc64Be),
                _ => None,
            },
            "{rel}: its nofile-info says {said}"
        );
        let t = sysfs::read_path(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(*t.arch(), want, "{rel}");
    }
    // Dumps that record nothing: a POWER7 (pvr 003f) and a PPC970MP,
    // processors no distribution's little-endian kernel runs on.
    for rel in [
        "util-linux/tests/ts/lscpu/dumps/ppc64-POWER7.tar.gz",
        "hwloc/history/56e01f01c-parent/tests/hwloc/linux/4ppc-4c.tar.bz2",
    ] {
        let Some(path) = dump(rel) else { return };
        assert_eq!(nofile_arch(&path), None, "{rel}");
        let t = sysfs::read_path(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(*t.arch(), Arch::PowerPc64Be, "{rel}");
    }
}

#[test]
fn a_dump_saying_its_kernel_is_big_endian_reads_big_endian() {
    // A POWER9 could run either; only what the dump records can tell. The
    // AC922 dump's own record, then the same dump as a big-endian kernel
    // records itself, by hwloc-gather-topology and by Linux 6.1's
    // kernel.arch sysctl.
    let Some(archive) = dump("hwloc/tests/hwloc/linux/nvidiagpunumanodes.tar.bz2") else {
        return;
    };
    let tmp = extract::extract(&archive);
    let root = extract::top_dir(&tmp);
    let nofile = root.join("proc/hwloc-nofile-info");
    let original = fs::read_to_string(&nofile).unwrap();
    assert!(original.contains("Architecture: ppc64le\n"));
    let read = || {
        *sysfs::read_path(&root)
            .unwrap_or_else(|e| panic!("{e}"))
            .arch()
            == Arch::PowerPc64Be
    };
    assert!(!read());
    fs::write(&nofile, original.replace("ppc64le", "ppc64")).unwrap();
    assert!(read(), "hwloc-nofile-info says ppc64");
    fs::write(&nofile, &original).unwrap();
    fs::create_dir_all(root.join("proc/sys/kernel")).unwrap();
    fs::write(root.join("proc/sys/kernel/arch"), "ppc64\n").unwrap();
    assert!(read(), "proc/sys/kernel/arch says ppc64");
}

/// A dump whose kernel says it is little-endian on a processor Linux
/// builds no little-endian kernel for (arch/powerpc/platforms/Kconfig.cputype
/// offers CPU_LITTLE_ENDIAN only with POWER7 and later): the PPC970MP
/// dump given a `ppc64le` kernel.arch, then a `ppc64le` hwloc-nofile-info.
/// The files cannot both be this machine's: one error names the file and
/// the processor, instead of either answer silently winning. The same
/// files saying `ppc64` read as before.
#[test]
fn a_little_endian_kernel_on_a_big_endian_only_processor_is_an_error() {
    let Some(archive) = dump("hwloc/history/56e01f01c-parent/tests/hwloc/linux/4ppc-4c.tar.bz2")
    else {
        return;
    };
    let tmp = extract::extract(&archive);
    let root = extract::top_dir(&tmp);
    fs::create_dir_all(root.join("proc/sys/kernel")).unwrap();
    let arch = root.join("proc/sys/kernel/arch");
    let nofile = root.join("proc/hwloc-nofile-info");
    for (file, text, good) in [
        (&arch, "ppc64le\n", false),
        (&arch, "ppc64\n", true),
        (&nofile, "Architecture: ppc64le\n", false),
        (&nofile, "Architecture: ppc64\n", true),
    ] {
        let _ = fs::remove_file(&arch);
        let _ = fs::remove_file(&nofile);
        fs::write(file, text).unwrap();
        let got = sysfs::read_path(&root);
        let name = file.strip_prefix(&root).unwrap().display().to_string();
        if good {
            let t = got.unwrap_or_else(|e| panic!("{name} {text}: {e}"));
            assert_eq!(*t.arch(), Arch::PowerPc64Be, "{name}");
        } else {
            let e = got.expect_err("ppc64le on a PPC970MP");
            assert!(e.source.ends_with(&name), "{e}");
            assert!(e.message.contains("PPC970MP"), "{e}");
        }
    }
}

#[test]
fn hwloc_xml_of_a_big_endian_machine_reads_big_endian() {
    // The installed lstopo reading the POWER7 dump as its big-endian kernel
    // records itself writes the Architecture info a ppc64 machine's hwloc
    // writes, in XML v2 and v1.
    let Some(archive) = dump("util-linux/tests/ts/lscpu/dumps/ppc64-POWER7.tar.gz") else {
        return;
    };
    let tmp = extract::extract(&archive);
    let root = extract::top_dir(&tmp);
    fs::write(root.join("proc/hwloc-nofile-info"), "Architecture: ppc64\n").unwrap();
    for flags in [&[][..], &["--export-xml-flags", "1"][..]] {
        let out = Command::new(truth::lstopo())
            .args(["--if", "fsroot", "--input"])
            .arg(&root)
            .args(["--of", "xml"])
            .args(flags)
            .output()
            .expect("running lstopo");
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            text.contains(r#"<info name="Architecture" value="ppc64"/>"#),
            "lstopo {flags:?} wrote no ppc64 Architecture"
        );
        let t = xml::read(&text, "power7.xml").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(*t.arch(), Arch::PowerPc64Be, "{flags:?}");
        // Written back, lstopo reads the same architecture from it.
        assert!(xml::write(&t).contains(r#"<info name="Architecture" value="ppc64"/>"#));
    }
}

#[test]
fn hwloc_xml_from_aix_is_big_endian_power() {
    // hwloc's AIX backend (topology-aix.c) sets Backend=AIX and the uname
    // infos; AIX's `uname -m` is the machine's serial number.
    let text = r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topology SYSTEM "hwloc2.dtd">
<topology version="2.0">
  <object type="Machine" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003" allowed_cpuset="0x00000003" nodeset="0x00000001" complete_nodeset="0x00000001" allowed_nodeset="0x00000001" gp_index="1">
    <info name="Backend" value="AIX"/>
    <info name="OSName" value="AIX"/>
    <info name="OSRelease" value="3"/>
    <info name="OSVersion" value="7"/>
    <info name="Architecture" value="00C5D4D44C00"/>
    <object type="NUMANode" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="4" local_memory="1073741824"/>
    <object type="Core" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="2">
      <object type="PU" os_index="0" cpuset="0x00000001" complete_cpuset="0x00000001" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="3"/>
      <object type="PU" os_index="1" cpuset="0x00000002" complete_cpuset="0x00000002" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="5"/>
    </object>
  </object>
</topology>
"#;
    let t = xml::read(text, "aix.xml").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(*t.arch(), Arch::PowerPc64Be);
}
