//! A fixed-capacity set of logical CPU numbers, with Linux's two text forms.
//!
//! Linux keeps CPU sets as bitmaps (`struct cpumask`) and prints them in sysfs
//! in two ways: a *cpulist* (`0-7,32-39`, e.g. `/sys/devices/system/node/node0/cpulist`)
//! and a *hex mask* in 32-bit groups separated by commas, most significant group
//! first (`00000000,ff0000ff`, e.g. `.../cpu0/topology/thread_siblings`).
//! [`CpuMask`] parses and prints both exactly as the kernel does.
//!
//! Why hand-written: the crates that offer bitsets (`fixedbitset`, `bitvec`) are
//! heap-backed or lack the Linux text forms; manycore needs a `Copy`, allocation-free
//! set usable in the bare-metal kernel, with these two exact formats.
//!
//! The capacity, [`MAX_CPUS`] = 16384, matches the largest `CONFIG_NR_CPUS` that
//! mainstream distributions build (x86_64 `MAXSMP`) and the largest machines
//! manycore simulates. Every operation runs over all 256 words (2 KiB) whatever
//! the highest CPU in the set: a fixed array keeps the type `Copy` and free of
//! allocation, so code that handles many masks interns them rather than copying.
#![forbid(unsafe_code)]
#![no_std]
#![deny(missing_docs)]

extern crate alloc;

mod compact;
mod words;

use alloc::string::String;
use core::fmt;

pub use compact::CompactMask;
pub use words::{AsWords, Entries, Iter, Words};

/// Number of CPUs a [`CpuMask`] can hold.
pub const MAX_CPUS: usize = 16384;
const WORDS: usize = MAX_CPUS / 64;

/// A set of logical CPU numbers `0..MAX_CPUS`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct CpuMask {
    words: [u64; WORDS],
}

impl Default for CpuMask {
    fn default() -> Self {
        Self::new()
    }
}

/// Why a cpulist or hex mask could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// The text (after trimming) was not a valid list or mask; `at` is the byte offset.
    Syntax {
        /// Byte offset into the trimmed input where the problem was found.
        at: usize,
        /// What was expected there.
        expected: &'static str,
    },
    /// A CPU number is at or beyond [`MAX_CPUS`].
    TooLarge {
        /// The offending CPU number (saturated at `u64::MAX`).
        cpu: u64,
    },
    /// A range whose end is below its start, such as `3-1`.
    ReversedRange {
        /// First number of the range.
        start: u32,
        /// Last number of the range.
        end: u32,
    },
    /// A stride range `a-b:used/group` with a zero group or `used > group`.
    BadStride,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::Syntax { at, expected } => {
                write!(f, "syntax error at byte {at}: expected {expected}")
            }
            ParseError::TooLarge { cpu } => write!(
                f,
                "CPU {cpu} is beyond the supported maximum of {} CPUs",
                MAX_CPUS
            ),
            ParseError::ReversedRange { start, end } => {
                write!(f, "range {start}-{end} ends before it starts")
            }
            ParseError::BadStride => write!(f, "bad stride in range (need 0 < used <= group)"),
        }
    }
}

impl core::error::Error for ParseError {}

/// A CPU number outside `0..MAX_CPUS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutOfRange(pub usize);

impl fmt::Display for OutOfRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "CPU {} is beyond the supported maximum of {} CPUs",
            self.0, MAX_CPUS
        )
    }
}

impl core::error::Error for OutOfRange {}

impl CpuMask {
    /// The empty set.
    pub const fn new() -> Self {
        CpuMask { words: [0; WORDS] }
    }

    /// `{0, 1, ..., n-1}`. Panics if `n > MAX_CPUS` (a programming error).
    pub fn first_n(n: usize) -> Self {
        assert!(n <= MAX_CPUS, "first_n({n}) beyond MAX_CPUS");
        let mut m = Self::new();
        m.set_range(0, n);
        m
    }

    /// A set with one CPU. Panics beyond capacity; use [`CpuMask::try_set`] for input.
    pub fn single(cpu: usize) -> Self {
        let mut m = Self::new();
        m.set(cpu);
        m
    }

    /// Builds a set from CPU numbers, failing on the first one beyond capacity.
    pub fn try_from_cpus<I: IntoIterator<Item = usize>>(cpus: I) -> Result<Self, OutOfRange> {
        let mut m = Self::new();
        for c in cpus {
            m.try_set(c)?;
        }
        Ok(m)
    }

    /// The raw 64-bit words, least significant CPU first.
    pub fn words(&self) -> &[u64; WORDS] {
        &self.words
    }

    /// Adds `cpu`. Panics beyond capacity (a programming error, like Linux's
    /// `cpumask_check`); use [`CpuMask::try_set`] for untrusted numbers.
    #[inline]
    pub fn set(&mut self, cpu: usize) {
        assert!(cpu < MAX_CPUS, "CPU {cpu} beyond MAX_CPUS");
        self.words[cpu / 64] |= 1u64 << (cpu % 64);
    }

    /// Adds `cpu`, or reports that it does not fit.
    #[inline]
    pub fn try_set(&mut self, cpu: usize) -> Result<(), OutOfRange> {
        if cpu >= MAX_CPUS {
            return Err(OutOfRange(cpu));
        }
        self.words[cpu / 64] |= 1u64 << (cpu % 64);
        Ok(())
    }

    /// Removes `cpu` (no effect if absent or beyond capacity).
    #[inline]
    pub fn clear(&mut self, cpu: usize) {
        if cpu < MAX_CPUS {
            self.words[cpu / 64] &= !(1u64 << (cpu % 64));
        }
    }

    /// Whether `cpu` is in the set (false beyond capacity).
    #[inline]
    pub fn contains(&self, cpu: usize) -> bool {
        cpu < MAX_CPUS && self.words[cpu / 64] & (1u64 << (cpu % 64)) != 0
    }

    /// Adds every CPU in `start..end`.
    pub fn set_range(&mut self, start: usize, end: usize) {
        assert!(end <= MAX_CPUS, "range end {end} beyond MAX_CPUS");
        let mut cpu = start;
        while cpu < end {
            let word = cpu / 64;
            let bit = cpu % 64;
            let span = (64 - bit).min(end - cpu);
            let bits = if span == 64 {
                u64::MAX
            } else {
                ((1u64 << span) - 1) << bit
            };
            self.words[word] |= bits;
            cpu += span;
        }
    }

    /// Removes every CPU.
    pub fn clear_all(&mut self) {
        self.words = [0; WORDS];
    }

    /// Number of CPUs in the set (Linux's `cpumask_weight`).
    pub fn weight(&self) -> usize {
        self.as_words().weight()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.as_words().is_empty()
    }

    /// Lowest CPU in the set.
    pub fn first(&self) -> Option<usize> {
        self.as_words().first_cpu()
    }

    /// Highest CPU in the set.
    pub fn last(&self) -> Option<usize> {
        self.as_words().last_cpu()
    }

    /// Lowest CPU `>= from` in the set.
    pub fn next_from(&self, from: usize) -> Option<usize> {
        self.as_words().next_from(from)
    }

    /// Lowest CPU strictly after `cpu` (Linux's `cpumask_next`).
    pub fn next_after(&self, cpu: usize) -> Option<usize> {
        self.next_from(cpu + 1)
    }

    /// Iterates CPUs in increasing order.
    pub fn iter(&self) -> Iter<'_> {
        self.as_words().iter()
    }

    // The operations below take a `CpuMask` or a `CompactMask` as `other`.

    /// `self ∪ other`.
    pub fn or(&self, other: &impl AsWords) -> CpuMask {
        let mut r = *self;
        r.or_assign(other);
        r
    }

    /// `self ∩ other`.
    pub fn and(&self, other: &impl AsWords) -> CpuMask {
        let mut r = *self;
        r.and_assign(other);
        r
    }

    /// `self \ other`.
    pub fn and_not(&self, other: &impl AsWords) -> CpuMask {
        let mut r = *self;
        r.each_word_of(other, |a, b| *a &= !b);
        r
    }

    /// `self △ other`.
    pub fn xor(&self, other: &impl AsWords) -> CpuMask {
        let mut r = *self;
        r.each_word_of(other, |a, b| *a ^= b);
        r
    }

    /// In place `self ∪= other`.
    pub fn or_assign(&mut self, other: &impl AsWords) {
        self.each_word_of(other, |a, b| *a |= b);
    }

    /// In place `self ∩= other`.
    pub fn and_assign(&mut self, other: &impl AsWords) {
        let other = other.as_words();
        if let Some((first, words)) = other.as_run() {
            let end = first + words.len();
            self.words[..first].fill(0);
            self.words[end..].fill(0);
            for (a, b) in self.words[first..end].iter_mut().zip(words) {
                *a &= b;
            }
            return;
        }
        let mut next = 0;
        for (i, b) in other.entries() {
            self.words[next..i].fill(0);
            self.words[i] &= b;
            next = i + 1;
        }
        self.words[next..].fill(0);
    }

    /// Applies `f` to each of this mask's words and `other`'s word at the
    /// same index, for every word `other` stores (a run as one slice, so
    /// full masks stay a loop the compiler vectorizes).
    #[inline]
    fn each_word_of(&mut self, other: &impl AsWords, f: impl Fn(&mut u64, u64)) {
        let other = other.as_words();
        match other.as_run() {
            Some((first, words)) => {
                for (a, &b) in self.words[first..].iter_mut().zip(words) {
                    f(a, b);
                }
            }
            None => {
                for (i, b) in other.entries() {
                    f(&mut self.words[i], b);
                }
            }
        }
    }

    /// Whether every CPU of `self` is in `other`.
    pub fn is_subset(&self, other: &impl AsWords) -> bool {
        self.as_words().is_subset(other.as_words())
    }

    /// Whether the two sets share a CPU.
    pub fn intersects(&self, other: &impl AsWords) -> bool {
        self.as_words().intersects(other.as_words())
    }

    /// Number of CPUs in both sets, without building the intersection.
    pub fn and_weight(&self, other: &impl AsWords) -> usize {
        self.as_words().and_weight(other.as_words())
    }

    /// Parses a cpulist such as `0-7,32-39` or `0,2,4`.
    ///
    /// Accepts what the kernel's `bitmap_parselist` accepts: an empty list, single
    /// numbers, `a-b` ranges and `a-b:used/group` strides (`0-15:2/4` = 0,1,4,5,...),
    /// with surrounding whitespace and a trailing newline.
    pub fn parse_list(text: &str) -> Result<CpuMask, ParseError> {
        let bytes = text.trim().as_bytes();
        let mut mask = CpuMask::new();
        if bytes.is_empty() {
            return Ok(mask);
        }
        let mut pos = 0;
        loop {
            let (item, p) = ListItem::parse(bytes, pos)?;
            item.set_in(&mut mask);
            pos = p;
            if pos == bytes.len() {
                return Ok(mask);
            }
            if bytes[pos] != b',' {
                return Err(ParseError::Syntax {
                    at: pos,
                    expected: "',' or end of list",
                });
            }
            pos += 1;
        }
    }

    /// Parses a hex mask as sysfs writes it: 32-bit hex groups separated by commas,
    /// most significant first (`ff,00000001`). Groups may be shorter than 8 digits;
    /// leading zero groups beyond capacity are accepted, set bits beyond it are not.
    /// When the text has several faults, the one reported is the rightmost
    /// group's (the least significant).
    ///
    /// A 16384-CPU machine's map is 4.6 KB of text, read once per CPU for
    /// several files, so this is a hot loop: groups are taken from the right
    /// (the least significant first, so each one's place is known), eight
    /// digits at a time where sysfs wrote eight.
    pub fn parse_hex(text: &str) -> Result<CpuMask, ParseError> {
        parse_hex_groups(text, |mask: &mut CpuMask, bit_base, value| {
            mask.words[bit_base / 64] |= (value as u64) << (bit_base % 64);
        })
    }

    /// [`CpuMask::parse_hex`] of the form the kernel writes, and only that:
    /// a first group of one to eight digits, then groups of exactly eight,
    /// each after a comma. Taken from the left in steps of nine bytes, where
    /// a zero group (most of a big machine's map: one CPU of 16384 is one
    /// non-zero group of 512) costs one comparison. Calls `put(bit_base,
    /// value)` for each non-zero group, and `None` for any other text or a
    /// CPU past [`MAX_CPUS`], possibly after some calls: the caller then
    /// discards what was put, and the general loop reads the text, or names
    /// its fault.
    #[inline]
    fn kernel_hex_groups(s: &[u8], mut put: impl FnMut(usize, u32)) -> Option<()> {
        const ZEROS: [u8; 8] = *b"00000000";
        let head = s.len() % 9;
        if head == 0 {
            return None;
        }
        // The groups after the first; group `k` from the right holds CPUs
        // 32k to 32k + 31.
        let rest = s.len() / 9;
        let mut group = |k: usize, value: u32| -> Option<()> {
            if value != 0 {
                let bit = k.checked_mul(32).filter(|&b| b < MAX_CPUS)?;
                put(bit, value);
            }
            Some(())
        };
        let mut first = ZEROS;
        first[8 - head..].copy_from_slice(&s[..head]);
        group(rest, hex8(first)?)?;
        for (i, digits) in s[head..].chunks_exact(9).enumerate() {
            let (&comma, digits) = digits.split_first()?;
            let digits: [u8; 8] = digits.try_into().ok()?;
            if comma != b',' {
                return None;
            }
            if digits != ZEROS {
                group(rest - 1 - i, hex8(digits)?)?;
            }
        }
        Some(())
    }

    /// Prints the cpulist form into `out`.
    pub fn write_list<W: fmt::Write>(&self, out: &mut W) -> fmt::Result {
        self.as_words().write_list(out)
    }

    /// The cpulist form, e.g. `0-7,32-39`; empty string for the empty set.
    pub fn to_list_string(&self) -> String {
        let mut s = String::new();
        let _ = self.write_list(&mut s);
        s
    }

    /// Prints the hex form for a machine of `nr_cpu_ids` CPUs, as sysfs does:
    /// `ceil(nr_cpu_ids / 32)` groups of 8 hex digits, most significant first.
    pub fn write_hex<W: fmt::Write>(&self, nr_cpu_ids: usize, out: &mut W) -> fmt::Result {
        let groups = nr_cpu_ids.clamp(1, MAX_CPUS).div_ceil(32);
        for g in (0..groups).rev() {
            let word = self.words[g / 2];
            let value = if g % 2 == 0 {
                word as u32
            } else {
                (word >> 32) as u32
            };
            write!(out, "{value:08x}")?;
            if g != 0 {
                out.write_char(',')?;
            }
        }
        Ok(())
    }

    /// The hex form for a machine of `nr_cpu_ids` CPUs (see [`CpuMask::write_hex`]).
    pub fn to_hex_string(&self, nr_cpu_ids: usize) -> String {
        let mut s = String::new();
        let _ = self.write_hex(nr_cpu_ids, &mut s);
        s
    }
}

fn parse_number(bytes: &[u8], pos: usize) -> Result<(u64, usize), ParseError> {
    let mut p = pos;
    let mut value: u64 = 0;
    while p < bytes.len() && bytes[p].is_ascii_digit() {
        value = value
            .saturating_mul(10)
            .saturating_add((bytes[p] - b'0') as u64);
        p += 1;
    }
    if p == pos {
        return Err(ParseError::Syntax {
            at: pos,
            expected: "a CPU number",
        });
    }
    Ok((value, p))
}

/// One comma-separated item of a cpulist: `a`, `a-b` or `a-b:used/group`.
struct ListItem {
    start: usize,
    end: usize,
    /// `used` CPUs out of every `group`, from `start` on.
    stride: Option<(usize, usize)>,
}

impl ListItem {
    /// The item at `pos` and the position after it, checked in this order:
    /// the stride, then both ends within the mask, then their order. The
    /// kernel's `bitmap_parselist()` finds the same faults but reports a
    /// reversed range before an end past the mask, and it takes a stride of
    /// `0/N` (no CPU) that this parser refuses.
    fn parse(bytes: &[u8], pos: usize) -> Result<(ListItem, usize), ParseError> {
        let (start, mut pos) = parse_number(bytes, pos)?;
        let mut end = start;
        let mut stride = None;
        if bytes.get(pos) == Some(&b'-') {
            (end, pos) = parse_number(bytes, pos + 1)?;
            if bytes.get(pos) == Some(&b':') {
                let (used_group, p) = parse_stride(bytes, pos + 1)?;
                stride = Some(used_group);
                pos = p;
            }
        }
        for cpu in [start, end] {
            if cpu >= MAX_CPUS as u64 {
                return Err(ParseError::TooLarge { cpu });
            }
        }
        let (start, end) = (start as usize, end as usize);
        if end < start {
            return Err(ParseError::ReversedRange {
                start: start as u32,
                end: end as u32,
            });
        }
        let stride = stride.map(|(used, group)| (used as usize, group as usize));
        Ok((ListItem { start, end, stride }, pos))
    }

    fn set_in(&self, mask: &mut CpuMask) {
        let (start, end) = (self.start, self.end);
        match self.stride {
            None => mask.set_range(start, end + 1),
            Some((used, group)) => {
                let mut base = start;
                while base <= end {
                    mask.set_range(base, base.saturating_add(used).min(end + 1));
                    base = match base.checked_add(group) {
                        Some(b) => b,
                        None => break,
                    };
                }
            }
        }
    }
}

/// A stride's `used/group` at `pos` (just after the `:`) and the position
/// after it; `used` must lie between 1 and `group`.
fn parse_stride(bytes: &[u8], pos: usize) -> Result<((u64, u64), usize), ParseError> {
    let (used, p) = parse_number(bytes, pos)?;
    if bytes.get(p) != Some(&b'/') {
        return Err(ParseError::Syntax {
            at: p,
            expected: "'/' in stride",
        });
    }
    let (group, p) = parse_number(bytes, p + 1)?;
    if group == 0 || used == 0 || used > group {
        return Err(ParseError::BadStride);
    }
    Ok(((used, group), p))
}

/// Decodes the hex mask `text` (see [`CpuMask::parse_hex`]) into a state
/// built from `S::default()`, calling `put(state, bit_base, value)` for
/// each non-zero 32-bit group below [`MAX_CPUS`], in no fixed order: the one
/// decoder of both [`CpuMask::parse_hex`] and [`CompactMask::parse_hex`].
///
/// The kernel's form is read in one pass by the fast path; when that gives
/// up midway the state is reset, so the general loop starts from nothing
/// (one scan of a well-formed map instead of a checking pass and a putting
/// pass).
pub(crate) fn parse_hex_groups<S: Default>(
    text: &str,
    mut put: impl FnMut(&mut S, usize, u32),
) -> Result<S, ParseError> {
    let s = text.trim();
    if s.is_empty() {
        return Err(ParseError::Syntax {
            at: 0,
            expected: "hex digits",
        });
    }
    let s = s.strip_prefix("0x").unwrap_or(s).as_bytes();
    let mut state = S::default();
    if CpuMask::kernel_hex_groups(s, |bit_base, value| put(&mut state, bit_base, value)).is_some() {
        return Ok(state);
    }
    state = S::default();
    let mut bit_base: usize = 0;
    let mut end = s.len();
    loop {
        // Eight digits after a comma (or at the start) are a whole group.
        let eight = end
            .checked_sub(8)
            .filter(|&start| start == 0 || s[start - 1] == b',')
            .and_then(|start| Some((start, hex8(s[start..end].try_into().ok()?)?)));
        let (start, value) = match eight {
            Some(group) => group,
            None => {
                let start = s[..end]
                    .iter()
                    .rposition(|&c| c == b',')
                    .map_or(0, |i| i + 1);
                let value =
                    hex_group(&s[start..end]).map_err(|(at, expected)| ParseError::Syntax {
                        at: start + at,
                        expected,
                    })?;
                (start, value)
            }
        };
        if value != 0 {
            if bit_base >= MAX_CPUS {
                let top = bit_base as u64 + 31 - value.leading_zeros() as u64;
                return Err(ParseError::TooLarge { cpu: top });
            }
            put(&mut state, bit_base, value);
        }
        if start == 0 {
            return Ok(state);
        }
        end = start - 1;
        bit_base = bit_base.saturating_add(32);
    }
}

/// The value of one group of a hex mask (1 to 8 hex digits), or where in the
/// group it goes wrong and what was expected there.
fn hex_group(group: &[u8]) -> Result<u32, (usize, &'static str)> {
    if group.is_empty() || group.len() > 8 {
        return Err((0, "a group of 1 to 8 hex digits"));
    }
    let mut value: u32 = 0;
    for (i, &c) in group.iter().enumerate() {
        let digit = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return Err((i, "a hex digit")),
        };
        value = (value << 4) | digit as u32;
    }
    Ok(value)
}

/// Eight hex digits at once (the groups sysfs writes), eight bytes in one
/// 64-bit word: `None` unless every byte is `0-9`, `a-f` or `A-F`. By hand,
/// because a big machine's maps are long (512 groups at 16384 CPUs) and read
/// per CPU, so decoding digit by digit shows in a whole read; hex-decoding
/// crates decode byte strings, not sysfs's comma-framed 32-bit groups.
fn hex8(digits: [u8; 8]) -> Option<u32> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // The first digit is the most significant: it goes to the top byte.
    let x = u64::from_be_bytes(digits);
    if x & HIGH != 0 {
        return None;
    }
    // With every byte below 0x80, adding 0x80 - n sets a byte's top bit
    // exactly when the byte is at least n, without carrying into the next.
    let at_least = |v: u64, n: u8| v.wrapping_add(ONES * (0x80 - n) as u64) & HIGH;
    let digit = at_least(x, b'0') & !at_least(x, b'9' + 1);
    let lower = x | (ONES * 0x20);
    let letter = at_least(lower, b'a') & !at_least(lower, b'f' + 1);
    if digit | letter != HIGH {
        return None;
    }
    // '0'-'9' end in their value, 'a'-'f' and 'A'-'F' in their value - 9.
    let nibbles = (x & (ONES * 0x0f)) + (letter >> 7) * 9;
    // Pack the eight nibbles: pairs into bytes, bytes into 16-bit halves, halves.
    let bytes = (nibbles | (nibbles >> 4)) & 0x00ff_00ff_00ff_00ff;
    let halves = (bytes | (bytes >> 8)) & 0x0000_ffff_0000_ffff;
    Some((halves | (halves >> 16)) as u32)
}

impl fmt::Display for CpuMask {
    /// The cpulist form.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_list(f)
    }
}

impl fmt::Debug for CpuMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CpuMask({self})")
    }
}

impl core::str::FromStr for CpuMask {
    type Err = ParseError;
    /// Parses the cpulist form.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CpuMask::parse_list(s)
    }
}

impl FromIterator<usize> for CpuMask {
    /// Panics on CPUs beyond capacity; use [`CpuMask::try_from_cpus`] for input.
    fn from_iter<I: IntoIterator<Item = usize>>(iter: I) -> Self {
        let mut m = CpuMask::new();
        for c in iter {
            m.set(c);
        }
        m
    }
}

impl<'a> IntoIterator for &'a CpuMask {
    type Item = usize;
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl AsWords for CpuMask {
    #[inline]
    fn as_words(&self) -> Words<'_> {
        Words::run_within(0, &self.words)
    }
}

#[cfg(feature = "serde")]
mod serde_impl {
    use super::CpuMask;
    use alloc::string::String;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    impl Serialize for CpuMask {
        /// Serialized as its cpulist string, the form people read.
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_str(&self.to_list_string())
        }
    }

    impl<'de> Deserialize<'de> for CpuMask {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let s = String::deserialize(d)?;
            CpuMask::parse_list(&s).map_err(serde::de::Error::custom)
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn list_forms_match_sysfs() {
        let m = CpuMask::parse_list("0-7,32-39\n").unwrap();
        assert_eq!(m.weight(), 16);
        assert_eq!(m.to_list_string(), "0-7,32-39");
        assert_eq!(CpuMask::parse_list("").unwrap().to_list_string(), "");
        assert_eq!(CpuMask::parse_list("5").unwrap().to_list_string(), "5");
        assert_eq!(
            CpuMask::parse_list("1,2,3,5").unwrap().to_list_string(),
            "1-3,5"
        );
        assert_eq!(
            CpuMask::parse_list("0-15:2/4").unwrap().to_list_string(),
            "0-1,4-5,8-9,12-13"
        );
    }

    #[test]
    fn hex_forms_match_sysfs() {
        // /sys/devices/system/cpu/cpu0/topology/thread_siblings on a 64-CPU box
        // whose cpu0 pairs with cpu32.
        let m = CpuMask::parse_list("0,32").unwrap();
        assert_eq!(m.to_hex_string(64), "00000001,00000001");
        assert_eq!(CpuMask::parse_hex("00000001,00000001").unwrap(), m);
        assert_eq!(
            CpuMask::parse_list("0-3").unwrap().to_hex_string(4),
            "0000000f"
        );
        assert_eq!(CpuMask::parse_hex("ff").unwrap().to_list_string(), "0-7");
        assert_eq!(CpuMask::parse_hex("1,0").unwrap().to_list_string(), "32");
    }

    #[test]
    fn rejects_bad_lists() {
        assert_eq!(
            CpuMask::parse_list("3-1"),
            Err(ParseError::ReversedRange { start: 3, end: 1 })
        );
        assert!(matches!(
            CpuMask::parse_list("0-99999999"),
            Err(ParseError::TooLarge { .. })
        ));
        assert!(matches!(
            CpuMask::parse_list("16384"),
            Err(ParseError::TooLarge { .. })
        ));
        assert!(matches!(
            CpuMask::parse_list("1,,2"),
            Err(ParseError::Syntax { .. })
        ));
        assert!(matches!(
            CpuMask::parse_list("a"),
            Err(ParseError::Syntax { .. })
        ));
        assert!(matches!(
            CpuMask::parse_list("1-"),
            Err(ParseError::Syntax { .. })
        ));
        assert!(matches!(
            CpuMask::parse_hex("zz"),
            Err(ParseError::Syntax { .. })
        ));
        assert!(matches!(
            CpuMask::parse_hex("1,,2"),
            Err(ParseError::Syntax { .. })
        ));
        assert!(CpuMask::parse_list("99999999999999999999999").is_err());
        assert!(!ParseError::BadStride.to_string().is_empty());
    }

    #[test]
    fn set_algebra() {
        let a = CpuMask::parse_list("0-9").unwrap();
        let b = CpuMask::parse_list("5-14").unwrap();
        assert_eq!(a.and(&b).to_list_string(), "5-9");
        assert_eq!(a.or(&b).to_list_string(), "0-14");
        assert_eq!(a.and_not(&b).to_list_string(), "0-4");
        assert_eq!(a.xor(&b).to_list_string(), "0-4,10-14");
        assert!(a.intersects(&b));
        assert!(CpuMask::parse_list("2-3").unwrap().is_subset(&a));
        assert!(!b.is_subset(&a));
        assert_eq!(a.and_weight(&b), 5);
        assert_eq!(b.first(), Some(5));
        assert_eq!(b.last(), Some(14));
        assert_eq!(b.next_after(5), Some(6));
        assert_eq!(b.next_after(14), None);
        let top = CpuMask::single(MAX_CPUS - 1);
        assert_eq!(top.last(), Some(MAX_CPUS - 1));
        assert_eq!(top.iter().collect::<std::vec::Vec<_>>(), [MAX_CPUS - 1]);
        assert_eq!(CpuMask::first_n(MAX_CPUS).weight(), MAX_CPUS);
    }
}
