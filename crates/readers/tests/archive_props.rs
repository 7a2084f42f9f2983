//! Property tests over generated snapshot archives and directory trees with
//! special files: every case reads as the generated machine or fails with one
//! error naming the archive (or the special file), never panics, never hangs.
//!
//! The truth is the generator's machine (`n` CPUs, one core each, one package,
//! one node): the reader must find exactly that, whatever the order of the
//! archive's members, whether files are stored once and hard-linked, under
//! long (GNU long-name) paths, next to symlinks (in-tree, looping, escaping)
//! and members the reader never needs, however large they claim to be.
//! Truncated streams and planted FIFOs, devices, link loops and sparse giants
//! must be refused by name when the reader needs them, ignored when not.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use cpumask::CpuMask;
use proptest::prelude::*;
use topology::{LevelKind, Topology};

// The hostile suite's generators; its cases are not run here.
#[allow(dead_code)]
mod hostile_support;
use hostile_support::{gzip, small_tree as tree};

/// The generated machine, as the reader must see it.
fn is_the_machine(t: &Topology, n: usize) -> Result<(), String> {
    let all = CpuMask::first_n(n);
    let cores = t.level(LevelKind::Core).map_or(0, |l| l.groups.len());
    let packages = t.level(LevelKind::Package).map_or(0, |l| l.groups.len());
    if *t.online() != all || cores != n || packages != 1 || t.nodes().len() != 1 {
        return Err(format!(
            "read {} online, {cores} cores, {packages} packages, {} nodes; generated {n} CPUs",
            t.online().weight(),
            t.nodes().len()
        ));
    }
    Ok(())
}

/// One member of a generated archive.
#[derive(Debug, Clone)]
enum Member {
    File(String, Vec<u8>),
    /// A hard link to an earlier file member with the same content.
    HardLink(String, String),
    Symlink(String, String),
    /// A member the reader never needs whose header claims `size` bytes, of
    /// which only a few follow (the stream ends inside it).
    Claims(String, u64),
}

fn header(kind: tar::EntryType, size: u64) -> tar::Header {
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(kind);
    h.set_size(size);
    h.set_mode(0o444);
    h
}

/// The archive's bytes; `Claims` ends the stream, as a cut download would.
fn archive(top: &str, members: &[Member]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for m in members {
        match m {
            Member::File(p, data) => {
                let mut h = header(tar::EntryType::Regular, data.len() as u64);
                b.append_data(&mut h, format!("{top}/{p}"), &data[..])
                    .unwrap();
            }
            Member::HardLink(p, target) => {
                let mut h = header(tar::EntryType::Link, 0);
                b.append_link(&mut h, format!("{top}/{p}"), format!("{top}/{target}"))
                    .unwrap();
            }
            Member::Symlink(p, target) => {
                let mut h = header(tar::EntryType::Symlink, 0);
                b.append_link(&mut h, format!("{top}/{p}"), target).unwrap();
            }
            Member::Claims(p, size) => {
                let mut raw = b.into_inner().unwrap();
                // `into_inner` ends the archive with two zero blocks: the
                // claiming member goes before the end, where a reader meets it.
                raw.truncate(raw.len() - 1024);
                let mut h = header(tar::EntryType::Regular, *size);
                // Outside the (possibly long) top directory: a header holds
                // at most 100 bytes of path, and the reader never needs it.
                h.set_path(p).unwrap();
                h.set_cksum();
                raw.extend_from_slice(h.as_bytes());
                raw.extend_from_slice(&[b'x'; 700]);
                return raw;
            }
        }
    }
    b.into_inner().unwrap()
}

/// `bytes` as an xz stream at `level`, as `tar cJf` writes it.
fn xz(bytes: &[u8], level: u32) -> Vec<u8> {
    use std::io::Write;
    let mut e = xz2::write::XzEncoder::new(Vec::new(), level);
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// `bytes` as a bzip2 stream, as `tar cjf` writes it.
fn bzip2(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// `bytes` as one zstd frame (ruzstd's encoder; `zstd`'s own output is
/// read from tests/data/zstd below).
fn zstd(bytes: &[u8]) -> Vec<u8> {
    ruzstd::encoding::compress_to_vec(bytes, ruzstd::encoding::CompressionLevel::Fastest)
}

/// The tree as members, with the chosen changes: every `online`-valued file
/// after the first of its content stored as a hard link to it, and symlinks
/// of each kind where the reader does not look.
fn members(
    files: &BTreeMap<String, Vec<u8>>,
    hard_links: bool,
    links: &[(usize, u8)],
) -> Vec<Member> {
    let mut first_with: BTreeMap<&[u8], &str> = BTreeMap::new();
    let mut out = Vec::new();
    for (p, data) in files {
        match first_with.get(data.as_slice()) {
            Some(&target) if hard_links => out.push(Member::HardLink(p.clone(), target.into())),
            _ => {
                first_with.entry(data.as_slice()).or_insert(p);
                out.push(Member::File(p.clone(), data.clone()));
            }
        }
    }
    for &(i, kind) in links {
        let p = format!("sys/bus/cpu/devices/link{i}");
        let target = match kind % 4 {
            0 => format!("../../../devices/system/cpu/cpu{i}"),
            1 => format!("link{}", i + 1),
            2 => format!("link{i}"),
            _ => "../../../../../../etc/passwd".into(),
        };
        out.push(Member::Symlink(p, target));
    }
    out
}

fn shuffle<T>(v: &mut [T], seed: u64) {
    // A small xorshift: the permutation only has to vary with the seed.
    let mut x = seed | 1;
    for i in (1..v.len()).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.swap(i, (x % (i as u64 + 1)) as usize);
    }
}

/// Runs `f` on a thread: `None` if it has not returned in 30 s (a reader
/// that blocks, which fails the case).
fn within<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(30)).ok()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Member order, hard links, long names and symlinks do not change the
    /// reading, whichever compression (none, gzip, xz, bzip2, zstd: found
    /// from the bytes, the name is always `gen.tar`); a member claiming a
    /// huge size where the stream ends, or a stream cut anywhere, is one
    /// error naming the archive.
    #[test]
    fn generated_archives_read_as_the_machine_or_fail_by_name(
        n in 1usize..9,
        seed in any::<u64>(),
        hard_links in any::<bool>(),
        long_top in 0usize..300,
        links in proptest::collection::vec((0usize..8, any::<u8>()), 0..4),
        claims in proptest::option::of(prop_oneof![Just(1u64 << 40), Just(u64::MAX >> 2), 1000u64..1_000_000]),
        cut in proptest::option::of(any::<proptest::sample::Index>()),
        codec in 0u8..5,
    ) {
        let files = tree(n);
        let mut ms = members(&files, hard_links, &links);
        // Hard links must follow their target; shuffle only what is free to move.
        if hard_links {
            let (mut plain, linked): (Vec<Member>, Vec<Member>) =
                ms.into_iter().partition(|m| !matches!(m, Member::HardLink(..)));
            shuffle(&mut plain, seed);
            plain.extend(linked);
            ms = plain;
        } else {
            shuffle(&mut ms, seed);
        }
        if let Some(size) = claims {
            ms.push(Member::Claims("junk/huge".into(), size));
        }
        let top = format!("dump{}", "d".repeat(long_top));
        let bytes = archive(&top, &ms);
        let mut bytes = match codec {
            0 => bytes,
            1 => gzip(&bytes),
            2 => xz(&bytes, 6),
            3 => bzip2(&bytes),
            _ => zstd(&bytes),
        };
        let whole = bytes.len();
        if let Some(at) = cut {
            bytes.truncate(at.index(whole));
        }
        let cut_short = bytes.len() < whole;
        let result = within(move || readers::sysfs::read_archive_bytes(&bytes, "gen.tar"))
            .expect("the reader blocked");
        match result {
            Ok(t) => {
                prop_assert!(claims.is_none(), "a member past the stream's end was accepted");
                // A compressed stream is read to its end: cut anywhere, its
                // trailer (or its last block) is missing.
                prop_assert!(!(cut_short && codec != 0), "a cut compressed stream was accepted");
                if let Err(why) = is_the_machine(&t, n) {
                    prop_assert!(false, "{why}");
                }
            }
            Err(e) => {
                prop_assert!(e.source.starts_with("gen.tar"), "{e}");
                prop_assert!(
                    cut_short || claims.is_some() || links.iter().any(|l| l.1 % 4 == 3),
                    "an intact archive was refused: {e}"
                );
            }
        }
    }
}

/// A FIFO, a character device, a link loop or a sparse 10 GiB file planted
/// in a dump directory in place of each of its files, and beside each
/// (`NAME.extra`), for machines of 1 to 4 CPUs: refused naming that file if
/// the reader needs it, else the machine reads as generated; never blocks.
/// Every case is run (480 of them): the space is small enough to cover
/// whole, so a long fuzz run (`PROPTEST_CASES`) has nothing to add here.
#[test]
fn special_files_in_a_tree_are_refused_by_name_or_ignored() {
    let mut cases = 0;
    for n in 1usize..5 {
        let files = tree(n);
        let dir = tempfile::tempdir().unwrap();
        for (p, data) in &files {
            let path = dir.path().join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, data).unwrap();
        }
        for (name, data) in &files {
            for extra in [false, true] {
                let rel = if extra {
                    format!("{name}.extra")
                } else {
                    name.clone()
                };
                let path = dir.path().join(&rel);
                for kind in 0u8..4 {
                    let _ = std::fs::remove_file(&path);
                    if !plant(&path, kind) {
                        continue; // mknod not permitted here: nothing to check
                    }
                    cases += 1;
                    let what = KINDS[kind as usize];
                    let root = dir.path().to_path_buf();
                    let read = within(move || readers::sysfs::read_dir(&root))
                        .unwrap_or_else(|| panic!("{rel} planted ({what}): the reader blocked"));
                    match read {
                        // The reader may not need the file (package_cpus_list
                        // when physical_package_id says the same): then the
                        // reading is right.
                        Ok(t) => {
                            if let Err(why) = is_the_machine(&t, n) {
                                panic!("{rel} planted ({what}): {why}");
                            }
                        }
                        Err(e) => {
                            let shown = path.display().to_string();
                            assert!(
                                e.source.starts_with(&shown) || e.message.contains(&shown),
                                "{rel} planted ({what}): error does not name {shown}: {e}"
                            );
                        }
                    }
                }
                std::fs::remove_file(&path).unwrap();
                if !extra {
                    std::fs::write(&path, data).unwrap();
                }
            }
        }
    }
    // The links and sparse files can always be made: 360 of the 480.
    assert!(cases >= 360, "only {cases} special files could be made");
}

/// What [`plant`] makes, by its `kind`.
const KINDS: [&str; 4] = [
    "FIFO",
    "character device",
    "link to itself",
    "sparse 10 GiB file",
];

/// Makes a special file at `path`: FIFO, character device (`/dev/zero`'s
/// numbers), a link to itself, or a sparse 10 GiB file. False if the system
/// does not let us (mknod of a device needs CAP_MKNOD). The nodes are made
/// by system call, not by running `mkfifo`/`mknod`: a process per case cost
/// more than the read it sets up.
fn plant(path: &Path, kind: u8) -> bool {
    match kind {
        0 | 1 => make_node(path, kind == 1),
        2 => std::os::unix::fs::symlink(path.file_name().unwrap(), path).is_ok(),
        _ => std::fs::File::create(path)
            .and_then(|f| f.set_len(10 << 30))
            .is_ok(),
    }
}

#[cfg(target_os = "linux")]
fn make_node(path: &Path, device: bool) -> bool {
    use rustix::fs::{makedev, mknodat, FileType, Mode, CWD};
    let (kind, dev) = if device {
        (FileType::CharacterDevice, makedev(1, 5))
    } else {
        (FileType::Fifo, 0)
    };
    mknodat(CWD, path, kind, Mode::from_raw_mode(0o644), dev).is_ok()
}

#[cfg(not(target_os = "linux"))]
fn make_node(_: &Path, _: bool) -> bool {
    false
}

/// A stream cut inside a member the reader needs, where the part left still
/// parses (`0-15` cut to `0-1`), is an error naming the archive, not a
/// machine of two CPUs; cut between members it reads as far as it goes.
#[test]
fn a_stream_cut_inside_a_needed_member_is_refused() {
    let mut files = tree(16);
    let online = "sys/devices/system/cpu/online".to_string();
    let data = files.remove(&online).unwrap();
    let mut ms: Vec<Member> = files.into_iter().map(|(p, d)| Member::File(p, d)).collect();
    ms.push(Member::File(online, data));
    let mut raw = archive("dump", &ms);
    // The last member's data starts 512 bytes after its header; the end
    // blocks (1024) and the padding of its 5 bytes (507) follow it.
    let data_at = raw.len() - 1024 - 512;
    assert_eq!(&raw[data_at..data_at + 5], b"0-15\n");
    raw.truncate(data_at + 3);
    let e = readers::sysfs::read_archive_bytes(&raw, "cut.tar").unwrap_err();
    assert!(e.source.starts_with("cut.tar"), "{e}");
    assert!(e.message.contains("truncated"), "{e}");
}

/// An xz stream whose block header asks for a 4 GiB dictionary (a forged
/// header, or a stream no `xz` preset makes) is refused naming the archive
/// before the decoder allocates it; two xz streams one after the other (as
/// `cat a.xz b.xz` or a parallel compressor writes them) read as one.
#[test]
fn xz_dumps_read_and_a_forged_dictionary_is_refused() {
    let plain = archive("dump", &members(&tree(4), false, &[]));
    let whole = xz(&plain, 6);
    let t = readers::sysfs::read_archive_bytes(&whole, "gen.tar.xz").unwrap();
    is_the_machine(&t, 4).unwrap();

    let (first, second) = plain.split_at(plain.len() / 2);
    let mut two = xz(first, 0);
    two.extend(xz(second, 9));
    let t = readers::sysfs::read_archive_bytes(&two, "gen.tar.xz").unwrap();
    is_the_machine(&t, 4).unwrap();

    let forged = with_dictionary_byte(whole, 40);
    let e = readers::sysfs::read_archive_bytes(&forged, "gen.tar.xz").unwrap_err();
    assert_eq!(e.source, "gen.tar.xz", "{e}");
    assert!(e.message.contains("decoder memory"), "{e}");
}

/// `stream` with its first block's LZMA2 dictionary-size byte set to `code`
/// (40: 4 GiB) and the block header's CRC32 made right again, so only the
/// dictionary is wrong (xz file format 1.1.0, 3.1 and 5.3.1).
fn with_dictionary_byte(mut stream: Vec<u8>, code: u8) -> Vec<u8> {
    let start = 12; // after the stream header
    let size = (usize::from(stream[start]) + 1) * 4;
    let flags = stream[start + 1];
    let mut i = start + 2;
    let skip_varint = |i: &mut usize| {
        while stream[*i] & 0x80 != 0 {
            *i += 1;
        }
        *i += 1;
    };
    for bit in [0x40, 0x80] {
        if flags & bit != 0 {
            skip_varint(&mut i);
        }
    }
    assert_eq!(stream[i], 0x21, "LZMA2 filter id");
    assert_eq!(stream[i + 1], 1, "one property byte");
    stream[i + 2] = code;
    let mut crc = flate2::Crc::new();
    crc.update(&stream[start..start + size - 4]);
    stream[start + size - 4..start + size].copy_from_slice(&crc.sum().to_le_bytes());
    stream
}

/// hwloc's `2i386-2c-nohugepage` snapshot recompressed by the `zstd` tool
/// (tests/data/SOURCES.md): whole, and as a skippable frame followed by two
/// frames; each reads as hwloc's expected XML for that snapshot has it: one
/// package, two cores of one PU, one 4 MiB L2 over both. (hwloc adds a NUMA
/// node of its own; the snapshot has no node directory, so the reader has none.)
/// A forged window of 1 GiB, a wrong content checksum and a cut stream are
/// each one error naming the archive.
#[test]
fn zstd_dumps_read_and_damaged_ones_are_refused() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/zstd");
    for file in [
        "2i386-2c-nohugepage.tar.zst",
        "2i386-2c-nohugepage-frames.tar.zst",
    ] {
        let path = data.join(file);
        let t = readers::sysfs::read_path(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(t.online().to_list_string(), "0-1", "{file}");
        let count = |k: LevelKind| t.level(k).map_or(0, |l| l.groups.len());
        assert_eq!(
            (count(LevelKind::Package), count(LevelKind::Core)),
            (1, 2),
            "{file}"
        );
        let l2: Vec<_> = t.caches().iter().filter(|c| c.level == 2).collect();
        assert_eq!(l2.len(), 1, "{file}");
        assert_eq!(l2[0].size_bytes, Some(4 << 20), "{file}");
        assert_eq!(l2[0].cpus.to_list_string(), "0-1", "{file}");
    }

    let whole = std::fs::read(data.join("2i386-2c-nohugepage.tar.zst")).unwrap();
    // Frame header descriptor 0x04 (a window descriptor follows, checksum
    // on); window descriptor exponent 20: 2^30 bytes (RFC 8878, 3.1.1.1).
    assert_eq!(whole[4], 0x04);
    let mut forged = whole.clone();
    forged[5] = 20 << 3;
    let e = readers::sysfs::read_archive_bytes(&forged, "w.tar.zst").unwrap_err();
    assert_eq!(e.source, "w.tar.zst", "{e}");
    assert!(e.message.contains("window"), "{e}");

    let mut bad_sum = whole.clone();
    *bad_sum.last_mut().unwrap() ^= 0xff;
    let e = readers::sysfs::read_archive_bytes(&bad_sum, "c.tar.zst").unwrap_err();
    assert_eq!(e.source, "c.tar.zst", "{e}");
    assert!(e.message.contains("checksum"), "{e}");

    for cut in [6, whole.len() / 2, whole.len() - 2] {
        let e = readers::sysfs::read_archive_bytes(&whole[..cut], "t.tar.zst").unwrap_err();
        assert!(e.source.starts_with("t.tar.zst"), "cut at {cut}: {e}");
        assert!(
            e.message.contains("inside a frame: truncated"),
            "cut at {cut}: {e}"
        );
    }
}

/// A gzip dump reads as `gzip -d` reads it: members one after another
/// (`cat a.gz b.gz`, pigz) and zero bytes after the last one (a tape's or
/// `dd`'s padding, which gzip ignores) read; data after that padding is
/// refused naming the archive.
#[test]
fn gzip_members_and_zero_padding_read_as_gzip_reads_them() {
    let raw = archive("dump", &members(&tree(4), false, &[]));
    let (a, b) = raw.split_at(raw.len() / 3);
    let two = [gzip(a), gzip(b)].concat();
    let padded = [gzip(&raw), vec![0; 1024]].concat();
    for (what, bytes) in [("two members", two), ("zero padding", padded.clone())] {
        let t = readers::sysfs::read_archive_bytes(&bytes, "gen.tar")
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        is_the_machine(&t, 4).unwrap_or_else(|why| panic!("{what}: {why}"));
    }
    let garbage = [padded, b"junk".to_vec()].concat();
    let e = readers::sysfs::read_archive_bytes(&garbage, "gen.tar").unwrap_err();
    assert!(e.source.starts_with("gen.tar"), "{e}");
}
