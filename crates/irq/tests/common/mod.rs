//! Reading the committed guest captures (scripts/its-capture.sh).
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::Read;

use irq::acpi::{self, Table};
use irq::Platform;

/// The files of one capture, by path inside its tarball (`fdt.dtb`, `acpi/SRAT`...).
pub struct Capture {
    pub name: String,
    pub files: BTreeMap<String, Vec<u8>>,
}

/// The committed capture `arm64-its-<variant>.tar.gz` (crates/irq/tests/data),
/// from this crate's tests or from the CLI's, which include this file too.
pub fn capture(variant: &str) -> Capture {
    let name = format!("arm64-its-{variant}");
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|dir| dir.join("crates/irq/tests/data"))
        .find(|data| data.is_dir())
        .expect("crates/irq/tests/data above this crate");
    let path = format!("{}/{name}.tar.gz", data.display());
    let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(file));
    let mut files = BTreeMap::new();
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let p = entry
            .path()
            .unwrap()
            .to_string_lossy()
            .trim_start_matches("./")
            .to_string();
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes).unwrap();
        files.insert(p, bytes);
    }
    Capture { name, files }
}

impl Capture {
    pub fn text(&self, path: &str) -> String {
        String::from_utf8(self.files[path].clone()).unwrap()
    }

    pub fn table(&self, sig: &str) -> Option<Table> {
        self.files.get(&format!("acpi/{sig}")).map(|b| Table {
            file: format!("{}/acpi/{sig}", self.name),
            bytes: b.clone(),
        })
    }

    /// The firmware the guest booted with, read by manycore's readers: the
    /// device tree Linux saw, else its ACPI tables.
    pub fn platform(&self) -> Platform {
        match self.files.get("fdt.dtb") {
            Some(dtb) if self.table("APIC").is_none() => {
                irq::dt::parse(dtb, &format!("{}/fdt.dtb", self.name)).unwrap()
            }
            _ => acpi::parse(
                &self.table("APIC").unwrap(),
                self.table("SRAT").as_ref(),
                self.table("SLIT").as_ref(),
            )
            .unwrap(),
        }
    }
}

/// One table as Linux's boot log reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinuxTable {
    pub addr: u64,
    pub entries: u64,
    pub indirect: bool,
    pub esz: u64,
    pub psz_kib: u64,
}

/// "ITS@0x0000000008080000: allocated 8192 Devices @60030000 (indirect, esz 8, psz 64K, shr 1)"
pub fn linux_table(dmesg: &str, what: &str) -> LinuxTable {
    let line = dmesg
        .lines()
        .find(|l| l.contains(": allocated ") && l.contains(&format!(" {what} @")))
        .unwrap_or_else(|| panic!("no '{what}' allocation in dmesg"));
    let after = |key: &str| line.split(key).nth(1).unwrap();
    let entries = after(": allocated ")
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let addr = u64::from_str_radix(after(" @").split(' ').next().unwrap(), 16).unwrap();
    let indirect = after(" (").starts_with("indirect");
    let esz = after("esz ").split(',').next().unwrap().parse().unwrap();
    let psz_kib = after("psz ").split('K').next().unwrap().parse().unwrap();
    LinuxTable {
        addr,
        entries,
        indirect,
        esz,
        psz_kib,
    }
}

/// The ITS registers the guest read with devmem: offset -> value.
pub fn gits_regs(text: &str) -> BTreeMap<u64, u64> {
    text.lines()
        .map(|l| {
            let mut w = l.split_whitespace();
            let a = u64::from_str_radix(w.next().unwrap().trim_start_matches("0x"), 16).unwrap();
            let v = u64::from_str_radix(w.next().unwrap().trim_start_matches("0x"), 16).unwrap();
            (a - 0x0808_0000, v)
        })
        .collect()
}
