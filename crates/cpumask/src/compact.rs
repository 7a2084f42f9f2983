//! [`CompactMask`]: an immutable CPU set that stores only the words its
//! CPUs need.
//!
//! A topology holds one set per core, cluster, package, node and cache: at
//! 16384 CPUs some 30 000 of them. As [`CpuMask`]s they would take 2 KiB each
//! (60 MiB, every page of it zeroed and touched) although a core of two
//! threads needs one or two words. This type keeps either the run of words
//! from the set's first non-zero one to its last, or, when that run would be
//! longer, only the non-zero words with their indices: where Linux numbers
//! the second thread of every core after all first threads (CPUs `c` and
//! `c + N/2`), a core is two words instead of a run of `N/128 + 1`, so every
//! set costs what its CPUs need, not what the machine spans.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::words::{assert_in_capacity, index_len, AsWords, Iter, Words};
use crate::{parse_hex_groups, CpuMask, OutOfRange, ParseError, MAX_CPUS, WORDS};

/// An immutable set of logical CPU numbers `0..MAX_CPUS`, stored as the run
/// of words from its lowest CPU's to its highest CPU's, or as its non-zero
/// words with their indices, whichever is smaller.
///
/// Equality and hashing are those of the set: the form and its words are a
/// function of the set alone (a run is trimmed to non-zero end words, the
/// empty set has no words), so two equal sets have the same representation.
/// To compute with it, compare it with a [`CpuMask`] directly (both types
/// take either as the other operand) or copy it into one with
/// [`CompactMask::to_cpumask`].
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct CompactMask {
    /// Run form: index of the first stored word (0 for the empty set).
    /// Sparse form: 0.
    first: u32,
    /// Sparse form: the number of words stored (non-zero). Run form: 0.
    sparse: u32,
    /// Run form: words `first..first + data.len()`, the first and last
    /// non-zero. Sparse form: the `sparse` non-zero words in increasing
    /// index, then their 16-bit indices packed four to a word. One
    /// allocation for both, because a model holds tens of thousands of sets.
    data: Box<[u64]>,
}

impl CompactMask {
    /// The empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// The set whose word `first + i` is `words[i]` (every other word zero).
    /// Panics if the words reach beyond [`MAX_CPUS`] (a programming error).
    pub fn from_words(first: usize, words: Vec<u64>) -> Self {
        assert_in_capacity(first, words.len());
        Self::build(words.iter().enumerate().map(|(i, &w)| (first + i, w)))
    }

    /// The set of a [`CpuMask`], a [`CompactMask`] or any [`Words`].
    pub fn from_set(set: &impl AsWords) -> Self {
        Self::build(set.as_words().entries())
    }

    /// The set whose word `index` is `word` for each `(index, word)` of
    /// `entries` (zero words allowed; every other word zero). Panics if the
    /// indices do not increase or reach beyond [`MAX_CPUS`] (programming
    /// errors).
    pub fn from_entries(entries: &[(usize, u64)]) -> Self {
        Self::build(entries.iter().copied())
    }

    /// The set from words with strictly increasing indices, in the smaller
    /// of the two forms: one pass to size it, one to fill it.
    fn build<I: Iterator<Item = (usize, u64)> + Clone>(entries: I) -> Self {
        let (mut n, mut lo, mut hi, mut prev) = (0usize, usize::MAX, 0usize, None);
        for (i, w) in entries.clone() {
            assert!(
                prev.is_none_or(|p| i > p),
                "word indices must increase ({i} after {prev:?})"
            );
            assert!(i < WORDS, "word {i} beyond MAX_CPUS");
            prev = Some(i);
            if w != 0 {
                n += 1;
                lo = lo.min(i);
                hi = i;
            }
        }
        if n == 0 {
            return Self::new();
        }
        let span = hi + 1 - lo;
        let sparse_len = n + index_len(n);
        let mut data = alloc::vec![0u64; span.min(sparse_len)].into_boxed_slice();
        let non_zero = entries.filter(|&(_, w)| w != 0);
        if span <= sparse_len {
            for (i, w) in non_zero {
                data[i - lo] = w;
            }
            return CompactMask {
                first: lo as u32,
                sparse: 0,
                data,
            };
        }
        let (words, index) = data.split_at_mut(n);
        for (at, (i, w)) in non_zero.enumerate() {
            words[at] = w;
            index[at / 4] |= (i as u64) << (16 * (at % 4));
        }
        CompactMask {
            first: 0,
            sparse: n as u32,
            data,
        }
    }

    /// A set with one CPU. Panics beyond capacity.
    pub fn single(cpu: usize) -> Self {
        assert!(cpu < MAX_CPUS, "CPU {cpu} beyond MAX_CPUS");
        Self::from_words(cpu / 64, alloc::vec![1u64 << (cpu % 64)])
    }

    /// The CPUs `start..end`. Panics if `end > MAX_CPUS`.
    pub fn from_range(start: usize, end: usize) -> Self {
        assert!(end <= MAX_CPUS, "range end {end} beyond MAX_CPUS");
        if start >= end {
            return Self::new();
        }
        let (first, last) = (start / 64, (end - 1) / 64);
        let mut words = alloc::vec![u64::MAX; last + 1 - first];
        words[0] &= u64::MAX << (start % 64);
        words[last - first] &= u64::MAX >> (63 - (end - 1) % 64);
        Self::from_words(first, words)
    }

    /// Builds a set from CPU numbers in any order, failing on the first one
    /// beyond capacity. Costs the CPUs given, not the span between them.
    pub fn try_from_cpus<I: IntoIterator<Item = usize>>(cpus: I) -> Result<Self, OutOfRange> {
        let mut cpus: Vec<usize> = cpus.into_iter().collect();
        if let Some(&c) = cpus.iter().find(|&&c| c >= MAX_CPUS) {
            return Err(OutOfRange(c));
        }
        cpus.sort_unstable();
        let mut entries: Vec<(usize, u64)> = Vec::new();
        for c in cpus {
            match entries.last_mut() {
                Some((w, bits)) if *w == c / 64 => *bits |= 1u64 << (c % 64),
                _ => entries.push((c / 64, 1u64 << (c % 64))),
            }
        }
        Ok(Self::from_entries(&entries))
    }

    /// Parses the cpulist form (see [`CpuMask::parse_list`]).
    pub fn parse_list(text: &str) -> Result<Self, ParseError> {
        CpuMask::parse_list(text).map(|m| Self::from(&m))
    }

    /// Parses the hex form (see [`CpuMask::parse_hex`]) straight into the
    /// compact form: the words its non-zero groups fill, never a 2 KiB
    /// [`CpuMask`] to zero, scan and copy (a core's map names one or two
    /// words of the 256).
    pub fn parse_hex(text: &str) -> Result<Self, ParseError> {
        let mut entries =
            parse_hex_groups(text, |entries: &mut Vec<(usize, u64)>, bit_base, value| {
                entries.push((bit_base / 64, (value as u64) << (bit_base % 64)));
            })?;
        // The groups come most significant first (the kernel's form) or
        // last (any other): in word order, two groups to a word.
        entries.sort_unstable_by_key(|e| e.0);
        entries.dedup_by(|later, kept| {
            let same = later.0 == kept.0;
            if same {
                kept.1 |= later.1;
            }
            same
        });
        Ok(Self::from_entries(&entries))
    }

    /// The set's stored words.
    #[inline]
    pub fn words(&self) -> Words<'_> {
        match self.sparse as usize {
            0 => Words::run_within(self.first as usize, &self.data),
            n => {
                let (words, index) = self.data.split_at(n);
                Words::sparse(words, index)
            }
        }
    }

    /// Bytes of heap the set holds.
    pub fn heap_bytes(&self) -> usize {
        self.data.len() * 8
    }

    /// The same set as a full [`CpuMask`], to compute with.
    pub fn to_cpumask(&self) -> CpuMask {
        let mut m = CpuMask::new();
        m.or_assign(self);
        m
    }

    /// Whether `cpu` is in the set (false beyond capacity).
    #[inline]
    pub fn contains(&self, cpu: usize) -> bool {
        self.words().contains(cpu)
    }

    /// Number of CPUs in the set.
    pub fn weight(&self) -> usize {
        self.words().weight()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Lowest CPU in the set.
    pub fn first(&self) -> Option<usize> {
        self.words().first_cpu()
    }

    /// Highest CPU in the set.
    pub fn last(&self) -> Option<usize> {
        self.words().last_cpu()
    }

    /// Lowest CPU `>= from` in the set.
    pub fn next_from(&self, from: usize) -> Option<usize> {
        self.words().next_from(from)
    }

    /// Iterates CPUs in increasing order.
    pub fn iter(&self) -> Iter<'_> {
        self.words().iter()
    }

    /// Whether the two sets share a CPU; `other` is a [`CpuMask`] or a
    /// [`CompactMask`].
    pub fn intersects(&self, other: &impl AsWords) -> bool {
        self.words().intersects(other.as_words())
    }

    /// Whether every CPU of `self` is in `other`.
    pub fn is_subset(&self, other: &impl AsWords) -> bool {
        self.words().is_subset(other.as_words())
    }

    /// Lowest CPU in both sets, without building the intersection.
    pub fn first_in(&self, other: &impl AsWords) -> Option<usize> {
        self.words().first_in(other.as_words())
    }

    /// Whether every CPU of `self` that is in `within` is in `other`
    /// (`self ∩ within ⊆ other`), without building the intersection.
    pub fn is_subset_within(&self, other: &impl AsWords, within: &impl AsWords) -> bool {
        self.words()
            .is_subset_within(other.as_words(), within.as_words())
    }

    /// Whether every CPU of `other` is in `self`.
    pub fn is_superset(&self, other: &impl AsWords) -> bool {
        other.as_words().is_subset(self.words())
    }

    /// `self ∪ other`, as a full mask to compute with.
    pub fn or(&self, other: &impl AsWords) -> CpuMask {
        let mut m = CpuMask::new();
        m.or_assign(other);
        m.or_assign(self);
        m
    }

    /// `self ∩ other`, as a full mask to compute with.
    pub fn and(&self, other: &impl AsWords) -> CpuMask {
        self.to_cpumask().and(other)
    }

    /// `self \ other`, as a full mask to compute with.
    pub fn and_not(&self, other: &impl AsWords) -> CpuMask {
        self.to_cpumask().and_not(other)
    }

    /// Number of CPUs in both sets, without building the intersection.
    pub fn and_weight(&self, other: &impl AsWords) -> usize {
        self.words().and_weight(other.as_words())
    }

    /// Prints the cpulist form into `out`.
    pub fn write_list<W: fmt::Write>(&self, out: &mut W) -> fmt::Result {
        self.words().write_list(out)
    }

    /// The cpulist form, e.g. `0-7,32-39`; empty string for the empty set.
    pub fn to_list_string(&self) -> String {
        let mut s = String::new();
        let _ = self.write_list(&mut s);
        s
    }
}

impl AsWords for CompactMask {
    #[inline]
    fn as_words(&self) -> Words<'_> {
        self.words()
    }
}

impl From<&CpuMask> for CompactMask {
    fn from(mask: &CpuMask) -> Self {
        Self::from_set(mask)
    }
}

impl From<CpuMask> for CompactMask {
    fn from(mask: CpuMask) -> Self {
        Self::from(&mask)
    }
}

impl From<&CompactMask> for CpuMask {
    fn from(mask: &CompactMask) -> Self {
        mask.to_cpumask()
    }
}

impl PartialEq<CpuMask> for CompactMask {
    fn eq(&self, other: &CpuMask) -> bool {
        self.words().same_set(other.as_words())
    }
}

impl PartialEq<CompactMask> for CpuMask {
    fn eq(&self, other: &CompactMask) -> bool {
        other == self
    }
}

impl FromIterator<usize> for CompactMask {
    /// Panics on CPUs beyond capacity; use [`CompactMask::try_from_cpus`] for input.
    fn from_iter<I: IntoIterator<Item = usize>>(iter: I) -> Self {
        match Self::try_from_cpus(iter) {
            Ok(m) => m,
            Err(OutOfRange(cpu)) => panic!("CPU {cpu} beyond MAX_CPUS"),
        }
    }
}

impl<'a> IntoIterator for &'a CompactMask {
    type Item = usize;
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl fmt::Display for CompactMask {
    /// The cpulist form.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_list(f)
    }
}

impl fmt::Debug for CompactMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CompactMask({self})")
    }
}

impl core::str::FromStr for CompactMask {
    type Err = ParseError;
    /// Parses the cpulist form.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse_list(s)
    }
}

#[cfg(feature = "serde")]
mod serde_impl {
    use super::CompactMask;
    use alloc::string::String;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    impl Serialize for CompactMask {
        /// Serialized as its cpulist string, like [`crate::CpuMask`].
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_str(&self.to_list_string())
        }
    }

    impl<'de> Deserialize<'de> for CompactMask {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let s = String::deserialize(d)?;
            CompactMask::parse_list(&s).map_err(serde::de::Error::custom)
        }
    }
}
