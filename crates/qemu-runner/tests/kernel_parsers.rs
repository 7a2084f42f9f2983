//! Host tests of the kernel's pure parsers (compiled straight from kernel/src):
//! the command line and SRAT/SLIT byte parsing. The kernel must never panic on
//! what firmware or the user hands it.

extern crate alloc;

#[path = "../../../kernel/src/cmdline.rs"]
#[allow(dead_code)]
mod cmdline;
#[path = "../../../kernel/src/srat.rs"]
mod srat;

use cmdline::{Bringup, Calibrate};
use srat::{parse_slit, parse_srat, SratCpu, SratMem};

fn header(sig: &[u8; 4], len: usize) -> Vec<u8> {
    let mut h = vec![0u8; 36];
    h[..4].copy_from_slice(sig);
    h[4..8].copy_from_slice(&(len as u32).to_le_bytes());
    h
}

fn srat(entries: &[Vec<u8>]) -> Vec<u8> {
    let len = 48 + entries.iter().map(Vec::len).sum::<usize>();
    let mut t = header(b"SRAT", len);
    t.extend_from_slice(&[0u8; 12]);
    for e in entries {
        t.extend_from_slice(e);
    }
    t
}

fn lapic(apic: u8, pxm: u32, enabled: bool) -> Vec<u8> {
    let mut e = vec![0u8; 16];
    e[0] = 0;
    e[1] = 16;
    e[2] = pxm as u8;
    e[3] = apic;
    e[4] = enabled as u8;
    e[9..12].copy_from_slice(&pxm.to_le_bytes()[1..4]);
    e
}

fn x2apic(apic: u32, pxm: u32) -> Vec<u8> {
    let mut e = vec![0u8; 24];
    e[0] = 2;
    e[1] = 24;
    e[4..8].copy_from_slice(&pxm.to_le_bytes());
    e[8..12].copy_from_slice(&apic.to_le_bytes());
    e[12] = 1;
    e
}

fn memory(pxm: u32, base: u64, len: u64, flags: u32) -> Vec<u8> {
    let mut e = vec![0u8; 40];
    e[0] = 1;
    e[1] = 40;
    e[2..6].copy_from_slice(&pxm.to_le_bytes());
    e[8..16].copy_from_slice(&base.to_le_bytes());
    e[16..24].copy_from_slice(&len.to_le_bytes());
    e[28..32].copy_from_slice(&flags.to_le_bytes());
    e
}

#[test]
fn srat_entries_of_every_kind() {
    let t = srat(&[
        lapic(0, 0, true),
        lapic(1, 0x0102_0304, true),
        lapic(2, 1, false),
        x2apic(300, 3),
        memory(0, 0, 0xa0000, 1),
        memory(1, 1 << 32, 1 << 30, 1 | 2),
        memory(2, 1 << 33, 1 << 30, 0),
    ]);
    let (mut cpus, mut mem) = (Vec::new(), Vec::new());
    parse_srat(&t, &mut cpus, &mut mem);
    assert_eq!(
        cpus,
        [
            SratCpu {
                apic_id: 0,
                domain: 0
            },
            SratCpu {
                apic_id: 1,
                domain: 0x0102_0304
            },
            SratCpu {
                apic_id: 300,
                domain: 3
            },
        ]
    );
    assert_eq!(
        mem,
        [
            SratMem {
                domain: 0,
                base: 0,
                len: 0xa0000,
                hotplug: false
            },
            SratMem {
                domain: 1,
                base: 1 << 32,
                len: 1 << 30,
                hotplug: true
            },
        ]
    );
}

#[test]
fn malformed_srat_and_slit_never_panic() {
    let good = srat(&[lapic(0, 0, true), memory(0, 0, 1 << 20, 1), x2apic(7, 1)]);
    // Every truncation, and every single-byte corruption of the entry area.
    for cut in 0..=good.len() {
        let (mut c, mut m) = (Vec::new(), Vec::new());
        parse_srat(&good[..cut], &mut c, &mut m);
        assert!(c.len() <= 2 && m.len() <= 1);
    }
    for i in 48..good.len() {
        for v in [0u8, 1, 2, 0x7f, 0xff] {
            let mut bad = good.clone();
            bad[i] = v;
            let (mut c, mut m) = (Vec::new(), Vec::new());
            parse_srat(&bad, &mut c, &mut m);
        }
    }
    // SLIT: header, locality count, matrix.
    let mut slit = header(b"SLIT", 44 + 4);
    slit.extend_from_slice(&2u64.to_le_bytes());
    slit.extend_from_slice(&[10, 20, 20, 10]);
    assert_eq!(parse_slit(&slit), Some((2, vec![10, 20, 20, 10])));
    for cut in 0..slit.len() {
        assert_eq!(parse_slit(&slit[..cut]), None, "cut at {cut}");
    }
    let mut huge = slit.clone();
    huge[36..44].copy_from_slice(&u64::MAX.to_le_bytes());
    assert_eq!(parse_slit(&huge), None);
}

#[test]
fn command_line_options_and_bad_words() {
    let mut bad = Vec::new();
    let o = cmdline::parse(
        "bringup=broadcast calibrate=skip lpj=4000000 init_delay_us=0 x2apic=off junk lpj=0 bringup=fast percpu_dump",
        |w| bad.push(w.0.to_string()),
    );
    assert_eq!(o.bringup, Bringup::Broadcast);
    assert_eq!(o.calibrate, Calibrate::Skip);
    assert_eq!(o.lpj, Some(4_000_000));
    assert_eq!(o.init_delay_us, 0);
    assert_eq!(o.x2apic, Some(false));
    assert!(o.percpu_dump);
    assert_eq!(bad, ["junk", "lpj=0", "bringup=fast"]);
    let d = cmdline::parse("", |_| panic!("nothing to reject"));
    assert_eq!(
        (d.bringup, d.calibrate, d.init_delay_us, d.sipi_delay_us),
        (Bringup::Parallel, Calibrate::Parallel, 10_000, 200)
    );
}
