//! Bad CPUID dumps: each is one error naming the file (and line), from the
//! rules of hwloc-gather-cpuid's format and of the machines it describes.

use readers::cpuid;

const PU: &str = "# mask e[abcd]x => e[abcd]x
1 0 0 0 0 => d 756e6547 6c65746e 49656e69
1 1 0 0 0 => 306e4 200800 7fbee3ff bfebfbff
";

fn read(files: &[(&str, &str)]) -> Result<topology::Topology, readers::Error> {
    cpuid::read_files(
        files
            .iter()
            .map(|(n, t)| (n.to_string(), t.as_bytes().to_vec())),
        "dump",
    )
}

fn refused(files: &[(&str, &str)], source: &str, needle: &str) {
    let e = read(files).expect_err("refused");
    assert_eq!(e.source, source, "{e}");
    assert!(
        e.to_string().contains(needle),
        "{needle:?} missing from {e}"
    );
}

#[test]
fn a_good_pu_reads() {
    let t = read(&[("pu0", PU), ("hwloc-cpuid-info", "Architecture: x86\n")]).unwrap();
    assert_eq!(t.online().weight(), 1);
}

#[test]
fn bad_dumps_are_refused_by_name() {
    // Two PUs with leaf 1's APIC id 0: no machine has that.
    refused(&[("pu0", PU), ("pu1", PU)], "dump:pu1", "APIC id 0x0");
    refused(&[("pu007", PU)], "dump:pu007", "leading zero");
    refused(&[("pu16384", PU)], "dump:pu16384", "16384");
    refused(
        &[("pu0", PU), ("hwloc-cpuid-info", "Architecture: ppc64\n")],
        "dump:hwloc-cpuid-info",
        "x86",
    );
    refused(
        &[("hwloc-cpuid-info", "Architecture: x86\n")],
        "dump",
        "no puN files",
    );
    refused(
        &[("pu0", "# header only\n")],
        "dump:pu0",
        "no CPUID records",
    );
    refused(
        &[("pu0", "1 0 0 0 0 => 1 2 3 4\n1 1 0 0\n")],
        "dump:pu0",
        ":2:",
    );
    let e = cpuid::read_files([("pu0".to_string(), b"1 0 0 0 0 => \xff".to_vec())], "dump")
        .expect_err("refused");
    assert!(
        e.to_string().starts_with("dump:pu0:1: not valid UTF-8"),
        "{e}"
    );
}

#[cfg(unix)]
#[test]
fn links_in_a_dump_directory_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pu0"), PU).unwrap();
    std::os::unix::fs::symlink("/etc/hostname", dir.path().join("pu1")).unwrap();
    let e = cpuid::read_path(dir.path()).expect_err("a link is refused");
    assert!(e.source.ends_with("/pu1"), "{e}");
    assert!(e.message.contains("symbolic link"), "{e}");
    std::fs::remove_file(dir.path().join("pu1")).unwrap();
    cpuid::read_path(dir.path()).unwrap();
}

/// A tar archive holding `pu0` and, as `pu1`, a link of the kind given.
fn archive_with_link(path: &std::path::Path, link: tar::EntryType) {
    let mut tar = tar::Builder::new(std::fs::File::create(path).unwrap());
    let mut header = tar::Header::new_gnu();
    header.set_size(PU.len() as u64);
    header.set_mode(0o644);
    header.set_cksum();
    tar.append_data(&mut header, "dump/pu0", PU.as_bytes())
        .unwrap();
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(link);
    header.set_size(0);
    header.set_mode(0o644);
    tar.append_link(&mut header, "dump/pu1", "dump/pu0")
        .unwrap();
    tar.finish().unwrap();
}

#[test]
fn links_in_a_dump_archive_are_refused_by_member() {
    let dir = tempfile::tempdir().unwrap();
    for (link, how) in [
        (tar::EntryType::Symlink, "symbolic link"),
        (tar::EntryType::Link, "hard link"),
    ] {
        let path = dir.path().join("dump.tar");
        archive_with_link(&path, link);
        let e = cpuid::read_path(&path).expect_err("a link is refused");
        assert_eq!(e.source, format!("{}:dump/pu1", path.display()), "{e}");
        assert!(e.message.contains(how), "{e}");
    }
}

/// A compressed dump is read to the end of its stream: a damaged gzip
/// trailer (the CRC-32 of the data, RFC 1952 section 2.3) after the tar's
/// end blocks is one error naming the archive, as `gzip -t` finds it,
/// while the same archive undamaged reads.
#[test]
fn a_damaged_trailer_after_the_tar_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut tar = tar::Builder::new(Vec::new());
    for name in ["dump/pu0", "dump/hwloc-cpuid-info"] {
        let text = if name.ends_with("pu0") {
            PU
        } else {
            "Architecture: x86\n"
        };
        let mut header = tar::Header::new_gnu();
        header.set_size(text.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        tar.append_data(&mut header, name, text.as_bytes()).unwrap();
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, &tar.into_inner().unwrap()).unwrap();
    let good = gz.finish().unwrap();
    let path = dir.path().join("dump.tar.gz");
    std::fs::write(&path, &good).unwrap();
    assert_eq!(cpuid::read_path(&path).unwrap().online().weight(), 1);
    let mut bad = good;
    let crc = bad.len() - 8;
    bad[crc] ^= 0xff;
    std::fs::write(&path, &bad).unwrap();
    let e = cpuid::read_path(&path).expect_err("a damaged trailer is refused");
    assert_eq!(e.source, path.display().to_string(), "{e}");
}
