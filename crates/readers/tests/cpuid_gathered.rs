//! hwloc-gather-topology's tarballs in the forms users pass them on.
//!
//! The script (hwloc's utils/hwloc/hwloc-gather-topology) copies `/proc`
//! files and `/sys/devices/system/{cpu,node}` (with more of `/sys`) under a
//! directory named after its argument's basename, runs hwloc-gather-cpuid
//! into that directory's `cpuid/`, and tars the directory (`tar cfj
//! NAME.tar.bz2 NAME`); lstopo's `NAME.output` and `NAME.xml` go beside the
//! tarball, not into it. `lstopo --input` on the extracted tree forces
//! `HWLOC_COMPONENTS=linux,pci,stop` (utils/hwloc/misc.h), so it never reads
//! that `cpuid/` dump; `--sysfs` does not either, and `--cpuid` reads it.
//!
//! The corpus holds three such tarballs. Their reading as they are is held
//! to hwloc's expected output by `corpus_sysfs.rs` (sysfs) and
//! `cpuid_dumps.rs` (the x86+linux CPUID dump); here each must read the
//! same after its top directory is renamed or removed, the tarball
//! recompressed with zstd or xz, or extracted to a directory.

use std::io::Read;
use std::path::{Path, PathBuf};

use readers::corpus;
use topology::{Topology, TopologyBuilder};

/// The corpus's tarballs made by hwloc-gather-topology with a CPUID dump.
const GATHERED: [&str; 3] = [
    "hwloc/tests/hwloc/x86+linux/64amd64-4p2n4ca2co.tar.bz2",
    "hwloc/tests/hwloc/x86+linux/5intel64-hybrid-lakefield.tar.bz2",
    "hwloc/tests/hwloc/linux/fakeheteromemtiers.tar.bz2",
];

/// `t` as if read from a source called `name` (the only field that tells
/// two readings of one machine apart).
fn named(t: &Topology, name: &str) -> Topology {
    let mut b = TopologyBuilder::from_topology(t);
    b.source(name);
    b.finish().unwrap()
}

/// The tar stream inside a `.tar.bz2`.
fn unbzip2(path: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    bzip2::read::MultiBzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_end(&mut out)
        .unwrap();
    out
}

/// The tar stream with its top directory `top/` replaced by `new_top`
/// (empty: the members start with `sys/`, `proc/`, `cpuid/`, as `tar -C
/// NAME .` makes them).
fn retop(tar_bytes: &[u8], top: &str, new_top: &str) -> Vec<u8> {
    let rename = |p: &str| {
        let rest = p.strip_prefix(top).expect("one top directory");
        let rest = rest.trim_start_matches('/');
        match (new_top.is_empty(), rest.is_empty()) {
            (true, true) => "./".to_string(),
            (true, false) => rest.to_string(),
            (false, _) => format!("{new_top}/{rest}"),
        }
    };
    let mut out = tar::Builder::new(Vec::new());
    let mut archive = tar::Archive::new(tar_bytes);
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let path = rename(&String::from_utf8_lossy(&entry.path_bytes()));
        let mut header = entry.header().clone();
        let kind = header.entry_type();
        if kind.is_symlink() || kind.is_hard_link() {
            let target = String::from_utf8_lossy(&entry.link_name_bytes().unwrap()).into_owned();
            let target = if kind.is_hard_link() {
                rename(&target)
            } else {
                target
            };
            out.append_link(&mut header, path, target).unwrap();
        } else {
            let mut data = Vec::new();
            entry.read_to_end(&mut data).unwrap();
            out.append_data(&mut header, path, &data[..]).unwrap();
        }
    }
    out.into_inner().unwrap()
}

fn xz(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = xz2::write::XzEncoder::new(Vec::new(), 1);
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn zstd(bytes: &[u8]) -> Vec<u8> {
    ruzstd::encoding::compress_to_vec(bytes, ruzstd::encoding::CompressionLevel::Fastest)
}

/// Every gathered tarball found in `corpus`, or none (then the test says
/// it skipped).
fn gathered(corpus: &Path) -> Vec<PathBuf> {
    if !corpus::present(corpus, "hwloc-gather-topology tarballs") {
        return Vec::new();
    }
    GATHERED.iter().map(|p| corpus.join(p)).collect()
}

#[test]
fn gathered_tarballs_read_alike_renamed_recompressed_and_extracted() {
    let corpus = corpus::dir(env!("CARGO_MANIFEST_DIR"));
    for path in gathered(&corpus) {
        let stem = path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .replace(".tar.bz2", "");
        let original = std::fs::read(&path).unwrap();
        let sysfs = readers::sysfs::read_archive_bytes(&original, "g").unwrap();
        let cpuid = readers::cpuid::read_path(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(!cpuid.online().is_empty(), "{stem}");
        let plain = unbzip2(&path);

        let forms = [
            (
                "renamed, zstd",
                zstd(&retop(&plain, &stem, "node17 gathered (copy)")),
            ),
            ("no top directory, xz", xz(&retop(&plain, &stem, ""))),
            ("renamed, plain tar", retop(&plain, &stem, "x")),
        ];
        for (form, bytes) in forms {
            let t = readers::sysfs::read_archive_bytes(&bytes, "g")
                .unwrap_or_else(|e| panic!("{stem}, {form}: {e}"));
            assert_eq!(t, sysfs, "{stem}, {form}: --sysfs");
            let dir = tempfile::tempdir().unwrap();
            let file = dir.path().join("g.tar");
            std::fs::write(&file, &bytes).unwrap();
            let t = readers::cpuid::read_path(&file).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(
                named(&t, "c"),
                named(&cpuid, "c"),
                "{stem}, {form}: --cpuid"
            );
        }

        // Extracted: --cpuid takes the tree's top directory; --sysfs the
        // directory holding `sys/` (hwloc's x86+linux tests keep it in
        // `fsroot/`, beside `cpuid/`).
        let dir = tempfile::tempdir().unwrap();
        tar::Archive::new(&plain[..]).unpack(dir.path()).unwrap();
        let tree = dir.path().join(&stem);
        let root = [tree.clone(), tree.join("fsroot")]
            .into_iter()
            .find(|r| r.join("sys").is_dir())
            .unwrap();
        let t = readers::sysfs::read_path(&root).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            named(&t, "g"),
            named(&sysfs, "g"),
            "{stem}, extracted: --sysfs"
        );
        let t = readers::cpuid::read_path(&tree).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            named(&t, "c"),
            named(&cpuid, "c"),
            "{stem}, extracted: --cpuid"
        );
    }
}
