//! A CPU set seen as a run of 64-bit words, and every read-only operation on
//! CPU sets written once over such runs.
//!
//! [`CpuMask`](crate::CpuMask) lends all its 256 words; a
//! [`CompactMask`](crate::CompactMask) lends only the words between its lowest
//! and highest CPU. Both answer questions (and operations between the two
//! types) through [`Words`], so the set algebra has one definition whatever
//! the storage.

use core::fmt;

use crate::WORDS;

/// A CPU set as a run of words: word `first + i` of the set is `words[i]`,
/// and every word outside the run is zero. Bit `b` of word `w` is CPU
/// `64 * w + b`.
#[derive(Clone, Copy, Debug)]
pub struct Words<'a> {
    /// Index of the run's first word (its CPUs start at `64 * first`).
    pub first: usize,
    /// The run.
    pub words: &'a [u64],
}

/// A CPU set that can lend its words: what the set operations of both mask
/// types take as their other operand.
pub trait AsWords {
    /// The set's words.
    fn as_words(&self) -> Words<'_>;
}

impl<T: AsWords + ?Sized> AsWords for &T {
    fn as_words(&self) -> Words<'_> {
        (**self).as_words()
    }
}

impl AsWords for Words<'_> {
    fn as_words(&self) -> Words<'_> {
        *self
    }
}

impl<'a> Words<'a> {
    /// One past the run's last word.
    fn end(&self) -> usize {
        self.first + self.words.len()
    }

    /// Word `index` of the set (zero outside the run).
    #[inline]
    pub fn word(&self, index: usize) -> u64 {
        index
            .checked_sub(self.first)
            .and_then(|i| self.words.get(i))
            .copied()
            .unwrap_or(0)
    }

    /// The parts of both runs that cover the same words.
    fn overlap(self, other: Words<'a>) -> (&'a [u64], &'a [u64]) {
        let lo = self.first.max(other.first);
        let hi = self.end().min(other.end());
        if lo >= hi {
            return (&[], &[]);
        }
        (
            &self.words[lo - self.first..hi - self.first],
            &other.words[lo - other.first..hi - other.first],
        )
    }

    /// This run's words that lie outside `other`'s run (below it, then above).
    fn outside(self, other: Words<'a>) -> impl Iterator<Item = &'a u64> {
        let len = self.words.len();
        let below = other.first.saturating_sub(self.first).min(len);
        let above = other.end().saturating_sub(self.first).clamp(below, len);
        self.words[..below].iter().chain(&self.words[above..])
    }

    /// The run without its zero words at either end (empty for the empty set).
    pub fn trimmed(self) -> Words<'a> {
        let Some(lo) = self.words.iter().position(|&w| w != 0) else {
            return Words {
                first: 0,
                words: &[],
            };
        };
        let hi = self.words.iter().rposition(|&w| w != 0).unwrap_or(lo);
        Words {
            first: self.first + lo,
            words: &self.words[lo..=hi],
        }
    }

    /// Whether `cpu` is in the set.
    #[inline]
    pub fn contains(&self, cpu: usize) -> bool {
        self.word(cpu / 64) & (1u64 << (cpu % 64)) != 0
    }

    /// Number of CPUs in the set.
    pub fn weight(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// Lowest CPU in the set.
    pub fn first_cpu(&self) -> Option<usize> {
        self.next_from(0)
    }

    /// Highest CPU in the set.
    pub fn last_cpu(&self) -> Option<usize> {
        let (i, w) = self.words.iter().enumerate().rev().find(|(_, &w)| w != 0)?;
        Some((self.first + i) * 64 + 63 - w.leading_zeros() as usize)
    }

    /// Lowest CPU `>= from` in the set.
    pub fn next_from(&self, from: usize) -> Option<usize> {
        let start = (from / 64).max(self.first);
        for w in start..self.end() {
            let mut bits = self.words[w - self.first];
            if w == from / 64 {
                bits &= u64::MAX << (from % 64);
            }
            if bits != 0 {
                return Some(w * 64 + bits.trailing_zeros() as usize);
            }
        }
        None
    }

    /// The CPUs in increasing order.
    pub fn iter(self) -> Iter<'a> {
        Iter {
            words: self,
            at: 0,
            bits: self.words.first().copied().unwrap_or(0),
        }
    }

    /// Whether the two sets share a CPU.
    pub fn intersects(self, other: Words<'_>) -> bool {
        let (a, b) = self.overlap(other);
        a.iter().zip(b).any(|(a, b)| a & b != 0)
    }

    /// Whether every CPU of `self` is in `other`.
    pub fn is_subset(self, other: Words<'_>) -> bool {
        let (a, b) = self.overlap(other);
        a.iter().zip(b).all(|(a, b)| a & !b == 0) && self.outside(other).all(|&w| w == 0)
    }

    /// Number of CPUs in both sets.
    pub fn and_weight(self, other: Words<'_>) -> usize {
        let (a, b) = self.overlap(other);
        a.iter()
            .zip(b)
            .map(|(a, b)| (a & b).count_ones() as usize)
            .sum()
    }

    /// Whether the two sets hold the same CPUs.
    pub fn same_set(self, other: Words<'_>) -> bool {
        let (a, b) = self.overlap(other);
        a == b && self.outside(other).all(|&w| w == 0) && other.outside(self).all(|&w| w == 0)
    }

    /// Prints the cpulist form (`0-7,32-39`; nothing for the empty set).
    pub fn write_list<W: fmt::Write>(self, out: &mut W) -> fmt::Result {
        let mut runs = Runs {
            cpus: self.iter().peekable(),
        };
        if let Some(run) = runs.next() {
            write_run(out, run)?;
        }
        for run in runs {
            out.write_char(',')?;
            write_run(out, run)?;
        }
        Ok(())
    }
}

fn write_run<W: fmt::Write>(out: &mut W, (start, end): (usize, usize)) -> fmt::Result {
    if start == end {
        write!(out, "{start}")
    } else {
        write!(out, "{start}-{end}")
    }
}

/// Runs of consecutive CPUs, as (first, last).
struct Runs<'a> {
    cpus: core::iter::Peekable<Iter<'a>>,
}

impl Iterator for Runs<'_> {
    type Item = (usize, usize);
    fn next(&mut self) -> Option<(usize, usize)> {
        let start = self.cpus.next()?;
        let mut end = start;
        while self.cpus.next_if_eq(&(end + 1)).is_some() {
            end += 1;
        }
        Some((start, end))
    }
}

/// The CPUs of a set in increasing order.
#[derive(Clone)]
pub struct Iter<'a> {
    words: Words<'a>,
    /// Position in the run of the word `bits` comes from.
    at: usize,
    /// That word's CPUs not yet returned.
    bits: u64,
}

impl Iterator for Iter<'_> {
    type Item = usize;
    #[inline]
    fn next(&mut self) -> Option<usize> {
        loop {
            if self.bits != 0 {
                let bit = self.bits.trailing_zeros() as usize;
                self.bits &= self.bits - 1;
                return Some((self.words.first + self.at) * 64 + bit);
            }
            self.at += 1;
            self.bits = *self.words.words.get(self.at)?;
        }
    }
}

/// Checks that a run lies within the capacity of a CPU set.
pub(crate) fn assert_in_capacity(first: usize, len: usize) {
    assert!(
        first.checked_add(len).is_some_and(|end| end <= WORDS),
        "words {first}..{first}+{len} beyond MAX_CPUS"
    );
}
