//! Archives: untrusted header sizes, bombs, budgets, hard links.

use std::io::Write;

use readers::limits::ArchiveLimits;
use readers::sysfs::{read_archive_bytes, read_archive_bytes_with, read_path};

use super::*;

pub fn cases() -> Vec<(&'static str, Case)> {
    vec![
        ("archive_member_size_2_pow_63", member_size_2_pow_63),
        ("archive_member_size_2_pow_40", member_size_2_pow_40),
        (
            "archive_gzip_bomb_in_skipped_member",
            gzip_bomb_in_skipped_member,
        ),
        ("archive_bzip2_bomb", bzip2_bomb),
        ("archive_xz_bomb", xz_bomb),
        ("archive_member_past_file_limit", member_past_file_limit),
        ("archive_hard_links_share_data", hard_links_share_data),
        ("archive_member_count_budget", member_count_budget),
        ("archive_kept_bytes_budget", kept_bytes_budget),
        ("archive_long_name_record_2_pow_40", long_name_record_huge),
        (
            "archive_named_directly_sparse_10g",
            named_directly_sparse_10g,
        ),
    ]
}

/// A valid tree, then a wanted member whose header claims `size` bytes and
/// whose data stops after a few.
fn lying_member(size: u64) -> Vec<u8> {
    let mut body = tar_body("m", &small_tree(2));
    body.extend(tar_header("m/sys/devices/system/cpu/cpu0/x", size, b'0'));
    body.extend([7u8; 4096]);
    body
}

fn member_size_2_pow_63() -> Result<(), String> {
    let tar = lying_member(1 << 63);
    expect_error(read_archive_bytes(&tar, "lie63.tar"), "lie63.tar", &[])
}

fn member_size_2_pow_40() -> Result<(), String> {
    let tar = gzip(&lying_member(1 << 40));
    expect_error(
        read_archive_bytes(&tar, "lie40.tar.gz"),
        "lie40.tar.gz",
        &[],
    )
}

/// 1.25 GiB of zeros in a member the reader never needs, at the default
/// budget: refused when the stream passes 1 GiB, without keeping any of it.
fn gzip_bomb_in_skipped_member() -> Result<(), String> {
    let mut head = tar_body("m", &small_tree(2));
    head.extend(tar_header("m/sys/bus/pci/junk", 3 << 30, b'0'));
    let mut gz = gzip(&head);
    gz.extend(gzip_zeros(5 << 28));
    expect_error(
        read_archive_bytes(&gz, "bomb.tar.gz"),
        "bomb.tar.gz",
        &["archive too large"],
    )
}

/// 64 MiB of zeros compressed by bzip2, against an 8 MiB stream budget.
fn bzip2_bomb() -> Result<(), String> {
    let mut head = tar_body("m", &small_tree(2));
    head.extend(tar_header("m/sys/bus/big", 64 << 20, b'0'));
    let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
    e.write_all(&head).unwrap();
    e.write_all(&vec![0u8; 64 << 20]).unwrap();
    let bz = e.finish().unwrap();
    expect_error(
        read_archive_bytes_with(&bz, "bomb.tar.bz2", &tight_limits()),
        "bomb.tar.bz2",
        &["archive too large"],
    )
}

/// 64 MiB of zeros compressed by xz at its largest preset (a 64 MiB
/// dictionary, within the decoder's memory cap), against an 8 MiB stream
/// budget: the budget stops it, not the process's memory.
fn xz_bomb() -> Result<(), String> {
    let mut head = tar_body("m", &small_tree(2));
    head.extend(tar_header("m/sys/bus/big", 64 << 20, b'0'));
    let mut e = xz2::write::XzEncoder::new(Vec::new(), 9);
    e.write_all(&head).unwrap();
    e.write_all(&vec![0u8; 64 << 20]).unwrap();
    let xz = e.finish().unwrap();
    expect_error(
        read_archive_bytes_with(&xz, "bomb.tar.xz", &tight_limits()),
        "bomb.tar.xz",
        &["archive too large"],
    )
}

/// A CPU-tree member of 2 MiB: past the sysfs file limit, named.
fn member_past_file_limit() -> Result<(), String> {
    let mut t = small_tree(2);
    t.insert("sys/devices/system/cpu/online".into(), vec![b'0'; 2 << 20]);
    let tar = tar_end(tar_body("m", &t));
    expect_error(
        read_archive_bytes(&tar, "fat.tar"),
        "fat.tar:m/sys/devices/system/cpu/online",
        &["limit"],
    )
}

/// A 900 KiB file with 1000 hard links to it: read, and the links share one
/// copy (copying would pass the memory cap).
fn hard_links_share_data() -> Result<(), String> {
    let mut t = small_tree(2);
    t.insert("proc/big".into(), vec![b'x'; 900 << 10]);
    let mut body = tar_body("m", &t);
    for i in 0..1000 {
        let mut h = tar_header(&format!("m/proc/link{i}"), 0, b'1');
        let target = b"m/proc/big";
        h[157..157 + target.len()].copy_from_slice(target);
        h[148..156].copy_from_slice(b"        ");
        let sum: u32 = h.iter().map(|&b| u32::from(b)).sum();
        h[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
        body.extend(h);
    }
    let tar = tar_end(body);
    let t = read_archive_bytes(&tar, "links.tar").map_err(|e| e.to_string())?;
    if t.known().weight() != 2 {
        return Err(format!("read {} CPUs, expected 2", t.known().weight()));
    }
    Ok(())
}

fn member_count_budget() -> Result<(), String> {
    let mut t = small_tree(2);
    for i in 0..2000 {
        t.insert(format!("sys/bus/x/f{i}"), b"1\n".to_vec());
    }
    let tar = tar_end(tar_body("m", &t));
    expect_error(
        read_archive_bytes_with(&tar, "many.tar", &tight_limits()),
        "many.tar",
        &["archive too large", "members"],
    )
}

fn kept_bytes_budget() -> Result<(), String> {
    let mut t = small_tree(2);
    for i in 0..3 {
        t.insert(format!("proc/f{i}"), vec![b'x'; 600 << 10]);
    }
    let tar = tar_end(tar_body("m", &t));
    expect_error(
        read_archive_bytes_with(&tar, "kept.tar", &tight_limits()),
        "kept.tar",
        &["archive too large"],
    )
}

/// A GNU long-name record claiming a terabyte, followed by 64 MiB of name:
/// refused from its header, before `tar` buffers any of it.
fn long_name_record_huge() -> Result<(), String> {
    let mut body = tar_body("m", &small_tree(2));
    body.extend(tar_header("././@LongLink", 1 << 40, b'L'));
    body.extend(vec![b'a'; 64 << 20]);
    let limits = ArchiveLimits::default();
    expect_error(
        read_archive_bytes_with(&body, "longname.tar", &limits),
        "longname.tar",
        &["long name of 1099511627776 bytes", "longer than a path"],
    )
}

/// A 10 GiB sparse file named as the archive: refused from its size.
fn named_directly_sparse_10g() -> Result<(), String> {
    let dir = temp_dir();
    let p = join(dir.path(), "huge.tar");
    sparse(&p, 10 << 30);
    expect_error(read_path(&p), &path_str(&p), &["archive too large"])
}
