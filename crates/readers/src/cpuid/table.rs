//! One `puN` file of an hwloc-gather-cpuid dump: its lines parsed into a
//! look-up table, and that table answering CPUID as the processor did.
//!
//! A line is `mask eax ebx ecx edx => eax ebx ecx edx`, nine hexadecimal
//! words: the mask says which input registers the answer depends on (bit 0
//! EAX, bit 1 EBX, bit 2 ECX, bit 3 EDX), then the four inputs and the four
//! outputs. Lines starting with `#` are comments. hwloc's reader takes the
//! first line whose masked inputs match and skips lines it cannot scan; this
//! one takes the first match too, but refuses a line it cannot read, naming
//! it, since a damaged line would silently change the topology.

use std::collections::HashMap;

use raw_cpuid::{CpuIdReader, CpuIdResult};

use crate::Error;

/// The input registers a line may say its answer depends on.
const KNOWN_MASK: u32 = 0xf;

/// A parsed `puN` file: what one PU answered to each CPUID leaf and
/// sub-leaf. `&Table` is a `raw_cpuid::CpuIdReader`.
#[derive(Debug, Default)]
pub struct Table {
    /// (leaf, sub-leaf or any) → (line order, outputs).
    entries: HashMap<(u32, Option<u32>), (usize, [u32; 4])>,
}

/// Why a line is not a CPUID record, in words.
fn bad_line(line: &str) -> String {
    format!(
        "expected `mask eax ebx ecx edx => eax ebx ecx edx` in hexadecimal, found {:?}",
        line.chars().take(80).collect::<String>()
    )
}

/// One hexadecimal 32-bit word (`%x` accepts an optional `0x`).
fn hex_word(word: &str) -> Option<u32> {
    let digits = word
        .strip_prefix("0x")
        .or_else(|| word.strip_prefix("0X"))
        .unwrap_or(word);
    if digits.is_empty() || digits.len() > 8 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(digits, 16).ok()
}

impl Table {
    /// Parses a `puN` file's text; `source` names it in errors.
    pub fn parse(text: &str, source: &str) -> Result<Table, Error> {
        let mut table = Table::default();
        let mut order = 0;
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let at = |message: String| Error::at_line(source, n + 1, message);
            let words: Vec<&str> = line.split_ascii_whitespace().take(11).collect();
            if words.len() != 10 || words[5] != "=>" {
                return Err(at(bad_line(line)));
            }
            let mut values = [0u32; 9];
            for (value, word) in values.iter_mut().zip(words[..5].iter().chain(&words[6..])) {
                *value = hex_word(word).ok_or_else(|| at(bad_line(line)))?;
            }
            let [mask, eax, ebx, ecx, edx, out @ ..] = values;
            if mask & !KNOWN_MASK != 0 {
                return Err(at(format!(
                    "input mask {mask:#x} names registers beyond EAX..EDX (at most 0xf)"
                )));
            }
            if mask & 1 == 0 {
                return Err(at(format!(
                    "input mask {mask:#x} does not include EAX: every CPUID leaf depends on EAX"
                )));
            }
            // The reader asks with EBX and EDX zero, as every CPUID leaf
            // ignores them; a line that needs other values never answers.
            if (mask & 2 != 0 && ebx != 0) || (mask & 8 != 0 && edx != 0) {
                continue;
            }
            let sub = (mask & 4 != 0).then_some(ecx);
            table.entries.entry((eax, sub)).or_insert((order, out));
            order += 1;
        }
        if table.entries.is_empty() {
            return Err(Error::new(source, "no CPUID records in the file"));
        }
        Ok(table)
    }

    /// What the dumped processor answered for `leaf` and `sub`: the first
    /// matching line, or zeros when the dump has none (as hardware answers
    /// for a leaf it does not implement).
    pub fn query(&self, leaf: u32, sub: u32) -> [u32; 4] {
        let exact = self.entries.get(&(leaf, Some(sub)));
        let any = self.entries.get(&(leaf, None));
        match (exact, any) {
            (Some(a), Some(b)) => {
                if a.0 < b.0 {
                    a.1
                } else {
                    b.1
                }
            }
            (Some(a), None) | (None, Some(a)) => a.1,
            (None, None) => [0; 4],
        }
    }
}

impl CpuIdReader for &Table {
    fn cpuid2(&self, eax: u32, ecx: u32) -> CpuIdResult {
        let [eax, ebx, ecx, edx] = self.query(eax, ecx);
        CpuIdResult { eax, ebx, ecx, edx }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_matching_line_answers_and_absent_leaves_are_zero() {
        let t = Table::parse(
            "# mask e[abcd]x => e[abcd]x\n\
             1 0 0 0 0 => d 68747541 444d4163 69746e65\n\
             5 4 0 1 0 => 1 2 3 4\n\
             1 4 0 0 0 => a b c d\n\
             5 4 0 0 0 => 5 6 7 8\n",
            "pu0",
        )
        .unwrap();
        assert_eq!(t.query(0, 9), [0xd, 0x68747541, 0x444d4163, 0x69746e65]);
        assert_eq!(t.query(4, 1), [1, 2, 3, 4]);
        // The any-sub-leaf line comes before the sub-leaf 0 one.
        assert_eq!(t.query(4, 0), [0xa, 0xb, 0xc, 0xd]);
        assert_eq!(t.query(0x8000_0000, 0), [0; 4]);
    }

    #[test]
    fn malformed_lines_are_named() {
        let e = Table::parse("1 0 0 0 0 => 1 2 3\n", "d/pu3").unwrap_err();
        assert_eq!((e.source.as_str(), e.line), ("d/pu3", Some(1)));
        let e = Table::parse("# x\n1 0 0 0 0 => 1 2 3 zz\n", "pu3").unwrap_err();
        assert_eq!(e.line, Some(2));
        let e = Table::parse("11 0 0 0 0 => 1 2 3 4\n", "pu3").unwrap_err();
        assert!(e.message.contains("0x11"), "{e}");
        let e = Table::parse("1 0 0 0 0 => 1 2 3 123456789\n", "pu3").unwrap_err();
        assert_eq!(e.line, Some(1));
        assert!(Table::parse("# only a header\n", "pu3").is_err());
    }
}
