//! `/proc/cpuinfo`: per-processor `key : value` blocks, and what they tell about
//! the architecture, the model and the firmware ids.
//!
//! The format differs per architecture (x86 has one block per logical CPU, s390
//! has one global block plus `cpu number :` blocks, arm64 repeats `processor :`
//! blocks without a model name...), so the parser keeps every field and the
//! interpretation below looks for each architecture's tell-tale keys.

use std::collections::BTreeMap;

use topology::Arch;

use crate::Error;

/// One block of `/proc/cpuinfo`: its fields in order (keys and values
/// trimmed), borrowed from the file's text: a 16384-CPU cpuinfo holds
/// hundreds of thousands of fields, and allocating a string for each would
/// be most of the parse.
#[derive(Debug, Default, Clone)]
pub(crate) struct Block<'t> {
    pub fields: Vec<(&'t str, &'t str)>,
}

impl<'t> Block<'t> {
    pub fn get(&self, key: &str) -> Option<&'t str> {
        self.fields
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| *v)
    }
}

/// The first `needle` in `haystack`, found with the `memchr` crate's
/// vector search (a 16384-CPU cpuinfo is tens of megabytes). On x86_64 its
/// SSE2 searcher, which every x86_64 CPU runs: `memchr::memchr` there picks
/// AVX2 at run time, and its first call's CPU feature detection (nine
/// `cpuid`s, each a trap to the hypervisor in a virtual machine) costs more
/// than a small machine's whole parse. Elsewhere the crate's choice is made
/// at compile time.
fn find_byte(needle: u8, haystack: &[u8]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if let Some(sse2) = memchr::arch::x86_64::sse2::memchr::One::new(needle) {
        return sse2.find(haystack);
    }
    memchr::memchr(needle, haystack)
}

/// The lines of `text` as [`str::lines`] gives them (split at `\n`, a
/// `\r` before a `\n` dropped, no empty line after a final `\n`).
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let line = match find_byte(b'\n', rest.as_bytes()) {
            Some(i) => {
                let line = &rest[..i];
                rest = &rest[i + 1..];
                line.strip_suffix('\r').unwrap_or(line)
            }
            None => std::mem::take(&mut rest),
        };
        Some(line)
    })
}

/// The parsed file.
#[derive(Debug, Default, Clone)]
pub(crate) struct CpuInfo<'t> {
    pub blocks: Vec<Block<'t>>,
    /// The blocks whose keys are not, in order, the previous block's: the
    /// first block holding a key is one of them (the one before it lacks
    /// the key), so [`CpuInfo::first`] looks at these alone. x86 prints
    /// every processor's block with the same keys, and the architecture is
    /// told by keys no block has: each would otherwise be a look at every
    /// field of every block (millions on a 16384-CPU machine).
    shapes: Vec<usize>,
}

impl<'t> CpuInfo<'t> {
    /// Parses the text. Lines without a colon are tolerated (some kernels print
    /// bare headers such as `power management:` or banner lines), but a block
    /// number that is not a number is an error naming the line.
    pub fn parse(text: &'t str, source: &str) -> Result<CpuInfo<'t>, Error> {
        let mut blocks = Vec::new();
        let mut current = Block::default();
        for (i, line) in lines(text).enumerate() {
            if line.trim().is_empty() {
                if !current.fields.is_empty() {
                    // Blocks are alike: the next one gets this one's size.
                    let size = current.fields.len();
                    blocks.push(std::mem::replace(
                        &mut current,
                        Block {
                            fields: Vec::with_capacity(size),
                        },
                    ));
                }
                continue;
            }
            // The first colon, found as `str::split_once` would.
            let Some(colon) = find_byte(b':', line.as_bytes()) else {
                continue;
            };
            let (key, value) = (&line[..colon], &line[colon + 1..]);
            let (key, value) = (key.trim(), value.trim());
            if key == "processor" && value.parse::<u32>().is_err() && !value.is_empty() {
                // arm32 prints "Processor : ARMv7 Processor rev 10 (v7l)" (capital
                // P) which is fine; a lower-case `processor` must be a number.
                if !value
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic())
                {
                    return Err(Error::at_line(
                        source,
                        i + 1,
                        format!("processor number {value:?} is not a number"),
                    ));
                }
            }
            current.fields.push((key, value));
        }
        if !current.fields.is_empty() {
            blocks.push(current);
        }
        let same_keys = |a: &Block, b: &Block| {
            a.fields.len() == b.fields.len()
                && a.fields.iter().zip(&b.fields).all(|(x, y)| x.0 == y.0)
        };
        let shapes = (0..blocks.len())
            .filter(|&i| i == 0 || !same_keys(&blocks[i - 1], &blocks[i]))
            .collect();
        Ok(CpuInfo { blocks, shapes })
    }

    /// The first value of `key` in any block.
    pub fn first(&self, key: &str) -> Option<&'t str> {
        self.shapes.iter().find_map(|&i| self.blocks[i].get(key))
    }

    /// Blocks by logical CPU number (`processor : N`).
    pub fn by_processor(&self) -> BTreeMap<u32, &Block<'t>> {
        self.blocks
            .iter()
            .filter_map(|b| Some((b.get("processor")?.parse::<u32>().ok()?, b)))
            .collect()
    }

    /// The instruction-set family this cpuinfo was written by, if recognizable.
    pub fn arch(&self) -> Option<Arch> {
        let vendor = self.first("vendor_id").unwrap_or("");
        if vendor.contains("S390") || self.first("bogomips per cpu").is_some() {
            return Some(Arch::S390x);
        }
        if self.first("arch").is_some_and(|a| a.contains("IA-64"))
            || self.first("family").is_some_and(|f| f.contains("Itanium"))
        {
            return Some(Arch::Ia64);
        }
        if let Some(isa) = self.first("isa") {
            if isa.starts_with("rv64") {
                return Some(Arch::RiscV64);
            }
            if isa.starts_with("rv32") {
                return Some(Arch::Other("riscv32".into()));
            }
        }
        if self
            .first("cpu family")
            .is_some_and(|f| f.contains("PA-RISC"))
            || self.first("cpu family").is_some_and(|f| f.contains("PA"))
                && self.first("hversion").is_some()
        {
            return Some(Arch::Other("parisc".into()));
        }
        if self.first("CPU implementer").is_some() || self.first("CPU architecture").is_some() {
            let arch = self.first("CPU architecture").unwrap_or("");
            let features = self.first("Features").unwrap_or("");
            let v8 = arch.trim() == "8" || arch.contains("AArch64") || features.contains("asimd");
            let model = self.first("model name").unwrap_or("");
            if v8 && !model.contains("v7") {
                return Some(Arch::Arm64);
            }
            return Some(Arch::Arm);
        }
        if self
            .first("ISA")
            .is_some_and(|isa| isa.contains("loongarch64"))
            || self
                .first("CPU Family")
                .is_some_and(|f| f.contains("Loongson-64"))
        {
            return Some(Arch::LoongArch64);
        }
        if let Some(cpu) = self.first("cpu") {
            let t = self.first("type").unwrap_or("");
            if cpu.contains("Sparc") || cpu.contains("SPARC") || t.starts_with("sun4") {
                return Some(Arch::Sparc64);
            }
            let ppc64_hint = cpu.contains("POWER")
                || cpu.starts_with("Power")
                || cpu.contains("PPC970")
                || cpu.contains("Cell")
                || cpu.contains("e6500")
                || self.first("platform").is_some_and(|p| {
                    p.contains("pSeries") || p.contains("PowerNV") || p.contains("Cell")
                })
                || self
                    .first("MMU")
                    .is_some_and(|m| m == "Radix" || m == "Hash");
            if ppc64_hint {
                return Some(crate::power::power64_of_cpu(cpu));
            }
            if self.first("timebase").is_some() || self.first("clock").is_some() {
                return Some(Arch::PowerPc);
            }
        }
        if !vendor.is_empty() || self.first("flags").is_some() {
            let flags = self.first("flags").unwrap_or("");
            let long_mode = flags.split_whitespace().any(|f| f == "lm");
            return Some(if long_mode { Arch::X86_64 } else { Arch::X86 });
        }
        None
    }

    /// A human-readable CPU model name, as the kernel wrote it (the field is
    /// already trimmed at both ends): runs of spaces inside it are kept, as
    /// hwloc keeps an info value and lscpu prints the field.
    pub fn model_name(&self) -> Option<String> {
        for key in [
            "model name",
            "cpu model",
            "cpu",
            "Model Name",
            "uarch",
            "machine",
        ] {
            if let Some(v) = self.first(key).filter(|v| !v.is_empty()) {
                return Some(v.to_string());
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognizes_architectures_from_their_tell_tale_fields() {
        let x86 = "processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: fpu lm sse\n";
        assert_eq!(CpuInfo::parse(x86, "t").unwrap().arch(), Some(Arch::X86_64));
        let i386 = "processor\t: 0\nvendor_id\t: AuthenticAMD\nflags\t\t: fpu sse\n";
        assert_eq!(CpuInfo::parse(i386, "t").unwrap().arch(), Some(Arch::X86));
        let p9 = "processor\t: 0\ncpu\t\t: POWER9, altivec supported\nplatform\t: PowerNV\n";
        assert_eq!(
            CpuInfo::parse(p9, "t").unwrap().arch(),
            Some(Arch::PowerPc64)
        );
        let p7 = "processor\t: 0\ncpu\t\t: POWER7 (architected), altivec supported\n";
        assert_eq!(
            CpuInfo::parse(p7, "t").unwrap().arch(),
            Some(Arch::PowerPc64Be)
        );
        let s390 = "vendor_id       : IBM/S390\n# processors    : 2\n";
        assert_eq!(CpuInfo::parse(s390, "t").unwrap().arch(), Some(Arch::S390x));
        let a64 =
            "processor\t: 0\nFeatures\t: fp asimd\nCPU implementer\t: 0x41\nCPU architecture: 8\n";
        assert_eq!(CpuInfo::parse(a64, "t").unwrap().arch(), Some(Arch::Arm64));
        let ia64 = "processor  : 0\nvendor     : GenuineIntel\narch       : IA-64\nfamily     : Itanium 2\n";
        assert_eq!(CpuInfo::parse(ia64, "t").unwrap().arch(), Some(Arch::Ia64));
    }

    #[test]
    fn lines_are_split_as_str_lines_splits_them() {
        for text in [
            "",
            "\n",
            "a",
            "a\n",
            "a\r\nb",
            "a\n\nb\n\n",
            "\r\n\r",
            "x:\r\r\n:y\n",
            "é:ü\n\n\t\n",
        ] {
            assert_eq!(
                lines(text).collect::<Vec<_>>(),
                text.lines().collect::<Vec<_>>(),
                "{text:?}"
            );
        }
    }

    proptest::proptest! {
        #[test]
        fn lines_match_str_lines_on_any_text(text in "[a:\r\n é\t]{0,40}") {
            proptest::prop_assert_eq!(
                lines(&text).collect::<Vec<_>>(),
                text.lines().collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn bad_processor_number_names_the_line() {
        let err = CpuInfo::parse("processor : 0\n\nprocessor : 1x\n", "cpuinfo").unwrap_err();
        assert_eq!(err.line, Some(3));
    }
}
