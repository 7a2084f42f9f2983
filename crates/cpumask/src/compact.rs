//! [`CompactMask`]: an immutable CPU set that stores only the words between
//! its lowest and highest CPU.
//!
//! A topology holds one set per core, cluster, package, node and cache: at
//! 16384 CPUs some 30 000 of them. As [`CpuMask`]s they would take 2 KiB each
//! (60 MiB, every page of it zeroed and touched) although a core of two
//! threads needs one word. This type keeps the set's words from its first
//! non-zero one to its last, so a set costs what its CPUs span.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::words::{assert_in_capacity, AsWords, Iter, Words};
use crate::{CpuMask, OutOfRange, ParseError, MAX_CPUS};

/// An immutable set of logical CPU numbers `0..MAX_CPUS`, stored as the run
/// of words from its lowest CPU's to its highest CPU's.
///
/// Equality and hashing are those of the set: the run is always trimmed to
/// non-zero end words (the empty set has no words), so two equal sets have
/// the same representation. To compute with it, compare it with a
/// [`CpuMask`] directly (both types take either as the other operand) or
/// copy it into one with [`CompactMask::to_cpumask`].
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct CompactMask {
    /// Index of the first stored word (0 for the empty set).
    first: u32,
    /// Words `first..first + words.len()`; the first and last are non-zero.
    words: Box<[u64]>,
}

impl CompactMask {
    /// The empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// The set whose word `first + i` is `words[i]` (every other word zero).
    /// Panics if the words reach beyond [`MAX_CPUS`] (a programming error).
    pub fn from_words(first: usize, mut words: Vec<u64>) -> Self {
        assert_in_capacity(first, words.len());
        let Some(lo) = words.iter().position(|&w| w != 0) else {
            return Self::new();
        };
        let hi = words.iter().rposition(|&w| w != 0).unwrap_or(lo);
        words.truncate(hi + 1);
        words.drain(..lo);
        CompactMask {
            first: (first + lo) as u32,
            words: words.into_boxed_slice(),
        }
    }

    /// The set of `words`' CPUs.
    pub fn from_run(words: Words<'_>) -> Self {
        let run = words.trimmed();
        assert_in_capacity(run.first, run.words.len());
        CompactMask {
            first: run.first as u32,
            words: run.words.into(),
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
    /// beyond capacity.
    pub fn try_from_cpus<I: IntoIterator<Item = usize>>(cpus: I) -> Result<Self, OutOfRange> {
        let cpus: Vec<usize> = cpus.into_iter().collect();
        if let Some(&c) = cpus.iter().find(|&&c| c >= MAX_CPUS) {
            return Err(OutOfRange(c));
        }
        let (Some(&lo), Some(&hi)) = (cpus.iter().min(), cpus.iter().max()) else {
            return Ok(Self::new());
        };
        let first = lo / 64;
        let mut words = alloc::vec![0u64; hi / 64 + 1 - first];
        for c in cpus {
            words[c / 64 - first] |= 1u64 << (c % 64);
        }
        Ok(Self::from_words(first, words))
    }

    /// Parses the cpulist form (see [`CpuMask::parse_list`]).
    pub fn parse_list(text: &str) -> Result<Self, ParseError> {
        CpuMask::parse_list(text).map(|m| Self::from(&m))
    }

    /// The set as a run of words.
    #[inline]
    pub fn words(&self) -> Words<'_> {
        Words {
            first: self.first as usize,
            words: &self.words,
        }
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
        self.words.is_empty()
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
        Self::from_run(mask.as_words())
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
