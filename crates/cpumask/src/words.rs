//! A CPU set seen as its stored 64-bit words, and every read-only operation
//! on CPU sets written once over them.
//!
//! A set lends its words in one of two forms:
//! - a *run*: consecutive words from some first index, zero words allowed
//!   ([`CpuMask`](crate::CpuMask) lends all its 256 words this way, a dense
//!   [`CompactMask`](crate::CompactMask) the words from its lowest CPU's to
//!   its highest CPU's);
//! - *sparse*: only the non-zero words, each with its index (a sparse
//!   `CompactMask`, such as a core whose two threads are CPUs `c` and
//!   `c + 8192`: two words where a run would be 129).
//!
//! Both answer questions (and operations between the mask types) through
//! [`Words`], so the set algebra has one definition whatever the storage.
//! Operations between two runs work on the overlapping slices; any other
//! pairing walks the stored words of one operand and looks each index up
//! in the other, so its cost is that of the words stored, not the span.

use core::fmt;

use crate::WORDS;

/// A CPU set as its stored words. Bit `b` of word `w` is CPU `64 * w + b`;
/// every word not stored is zero.
#[derive(Clone, Copy, Debug)]
pub struct Words<'a> {
    /// Run form: index of `words[0]`. Unused (0) in sparse form.
    first: usize,
    /// The stored words: in sparse form each non-zero, in increasing index.
    words: &'a [u64],
    /// Sparse form: the index of `words[i]` is 16-bit lane `i % 4` (lowest
    /// lane first) of `index[i / 4]`. `None` in run form.
    index: Option<&'a [u64]>,
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

/// Lane `i` of packed 16-bit indices.
#[inline]
pub(crate) fn lane(index: &[u64], i: usize) -> usize {
    ((index[i / 4] >> (16 * (i % 4))) & 0xffff) as usize
}

/// How many `u64`s hold `n` packed 16-bit indices.
#[inline]
pub(crate) fn index_len(n: usize) -> usize {
    n.div_ceil(4)
}

impl<'a> Words<'a> {
    /// The run of `words` starting at word index `first`. Panics if the run
    /// reaches beyond [`MAX_CPUS`](crate::MAX_CPUS).
    pub fn run(first: usize, words: &'a [u64]) -> Self {
        assert_in_capacity(first, words.len());
        Words {
            first,
            words,
            index: None,
        }
    }

    /// A run the crate's own types know to be within capacity.
    #[inline]
    pub(crate) fn run_within(first: usize, words: &'a [u64]) -> Self {
        debug_assert!(first + words.len() <= WORDS);
        Words {
            first,
            words,
            index: None,
        }
    }

    /// Sparse words whose indices are packed four to a `u64` (`index` holds
    /// at least `words.len()` lanes); the crate's own storage only.
    pub(crate) fn sparse(words: &'a [u64], index: &'a [u64]) -> Self {
        debug_assert!(index.len() >= index_len(words.len()));
        Words {
            first: 0,
            words,
            index: Some(index),
        }
    }

    /// The run's first index and words, if the set is lent as a run.
    #[inline]
    pub fn as_run(&self) -> Option<(usize, &'a [u64])> {
        match self.index {
            None => Some((self.first, self.words)),
            Some(_) => None,
        }
    }

    /// Whether only the non-zero words are stored, each with its index.
    pub fn is_sparse(&self) -> bool {
        self.index.is_some()
    }

    /// Number of words stored (in sparse form, the non-zero ones).
    pub fn stored(&self) -> usize {
        self.words.len()
    }

    /// The index of stored word `i`.
    #[inline]
    fn index_of(&self, i: usize) -> usize {
        match self.index {
            None => self.first + i,
            Some(index) => lane(index, i),
        }
    }

    /// The position of the first stored word whose index is `>= word`,
    /// searching from position `lo` (stored indices increase).
    #[inline]
    fn seek(&self, lo: usize, word: usize) -> usize {
        match self.index {
            None => word.saturating_sub(self.first).clamp(lo, self.words.len()),
            Some(index) => {
                let (mut lo, mut hi) = (lo, self.words.len());
                while lo < hi {
                    let mid = lo + (hi - lo) / 2;
                    if lane(index, mid) < word {
                        lo = mid + 1;
                    } else {
                        hi = mid;
                    }
                }
                lo
            }
        }
    }

    /// Word `index` of the set (zero where none is stored).
    #[inline]
    pub fn word(&self, index: usize) -> u64 {
        match self.index {
            None => index
                .checked_sub(self.first)
                .and_then(|i| self.words.get(i))
                .copied()
                .unwrap_or(0),
            Some(_) => {
                let at = self.seek(0, index);
                match self.words.get(at) {
                    Some(&w) if self.index_of(at) == index => w,
                    _ => 0,
                }
            }
        }
    }

    /// The stored words with their indices, in increasing index.
    pub fn entries(self) -> Entries<'a> {
        Entries { words: self, at: 0 }
    }

    /// The parts of two runs that cover the same words.
    fn overlap(a: (usize, &'a [u64]), b: (usize, &'a [u64])) -> (&'a [u64], &'a [u64]) {
        let lo = a.0.max(b.0);
        let hi = (a.0 + a.1.len()).min(b.0 + b.1.len());
        if lo >= hi {
            return (&[], &[]);
        }
        (&a.1[lo - a.0..hi - a.0], &b.1[lo - b.0..hi - b.0])
    }

    /// A run's words that lie outside another run (below it, then above).
    fn outside(a: (usize, &'a [u64]), b: (usize, &'a [u64])) -> impl Iterator<Item = &'a u64> {
        let len = a.1.len();
        let below = b.0.saturating_sub(a.0).min(len);
        let above = (b.0 + b.1.len()).saturating_sub(a.0).clamp(below, len);
        a.1[..below].iter().chain(&a.1[above..])
    }

    /// Each non-zero stored word of `self` with `other`'s word at the same
    /// index, in increasing index. `other`'s words are found by a forward
    /// search, so the cost is `self`'s stored words (times a logarithm when
    /// `other` is sparse), whatever either set spans.
    fn beside(self, other: Words<'a>) -> impl Iterator<Item = (usize, u64, u64)> + 'a {
        let mut at = 0;
        self.entries()
            .filter(|&(_, a)| a != 0)
            .map(move |(i, a)| (i, a, other.word_seeking(&mut at, i)))
    }

    /// Word `index`, searching forward from stored position `*at`, which
    /// is left at the search's end: increasing indices asked in turn cost
    /// one pass over the stored words (a logarithm each when sparse).
    #[inline]
    fn word_seeking(&self, at: &mut usize, index: usize) -> u64 {
        *at = self.seek(*at, index);
        match self.words.get(*at) {
            Some(&w) if self.index_of(*at) == index => w,
            _ => 0,
        }
    }

    /// The set without zero words at either end of a run (empty for the
    /// empty set); a sparse set is returned as it is.
    pub fn trimmed(self) -> Words<'a> {
        if self.index.is_some() {
            return self;
        }
        let Some(lo) = self.words.iter().position(|&w| w != 0) else {
            return Words::run(0, &[]);
        };
        let hi = self.words.iter().rposition(|&w| w != 0).unwrap_or(lo);
        Words::run(self.first + lo, &self.words[lo..=hi])
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
        Some(self.index_of(i) * 64 + 63 - w.leading_zeros() as usize)
    }

    /// Lowest CPU `>= from` in the set.
    pub fn next_from(&self, from: usize) -> Option<usize> {
        let start = self.seek(0, from / 64);
        for at in start..self.words.len() {
            let w = self.index_of(at);
            let mut bits = self.words[at];
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
        if let (Some(a), Some(b)) = (self.as_run(), other.as_run()) {
            let (a, b) = Words::overlap(a, b);
            return a.iter().zip(b).any(|(a, b)| a & b != 0);
        }
        let (small, large) = if self.stored() <= other.stored() {
            (self, other)
        } else {
            (other, self)
        };
        small.beside(large).any(|(_, a, b)| a & b != 0)
    }

    /// Whether every CPU of `self` is in `other`.
    pub fn is_subset(self, other: Words<'_>) -> bool {
        if let (Some(a), Some(b)) = (self.as_run(), other.as_run()) {
            let (x, y) = Words::overlap(a, b);
            return x.iter().zip(y).all(|(x, y)| x & !y == 0)
                && Words::outside(a, b).all(|&w| w == 0);
        }
        self.beside(other).all(|(_, a, b)| a & !b == 0)
    }

    /// Number of CPUs in both sets.
    pub fn and_weight(self, other: Words<'_>) -> usize {
        if let (Some(a), Some(b)) = (self.as_run(), other.as_run()) {
            let (a, b) = Words::overlap(a, b);
            return a
                .iter()
                .zip(b)
                .map(|(a, b)| (a & b).count_ones() as usize)
                .sum();
        }
        let (small, large) = if self.stored() <= other.stored() {
            (self, other)
        } else {
            (other, self)
        };
        small
            .beside(large)
            .map(|(_, a, b)| (a & b).count_ones() as usize)
            .sum()
    }

    /// Lowest CPU in both sets, found without building the intersection:
    /// the cost is `self`'s stored words up to the first shared one.
    pub fn first_in(self, other: Words<'_>) -> Option<usize> {
        self.beside(other)
            .find(|&(_, a, b)| a & b != 0)
            .map(|(i, a, b)| i * 64 + (a & b).trailing_zeros() as usize)
    }

    /// Whether every CPU of `self` that is in `within` is in `other`
    /// (`self ∩ within ⊆ other`), without building the intersection: the
    /// cost is `self`'s stored words.
    pub fn is_subset_within(self, other: Words<'_>, within: Words<'_>) -> bool {
        let mut at = 0;
        self.beside(other)
            .all(|(i, a, b)| a & !b == 0 || a & !b & within.word_seeking(&mut at, i) == 0)
    }

    /// Whether the two sets hold the same CPUs.
    pub fn same_set(self, other: Words<'_>) -> bool {
        if let (Some(a), Some(b)) = (self.as_run(), other.as_run()) {
            let (x, y) = Words::overlap(a, b);
            return x == y
                && Words::outside(a, b).all(|&w| w == 0)
                && Words::outside(b, a).all(|&w| w == 0);
        }
        // A run may store zero words, the sparse form never does.
        let a = self.entries().filter(|&(_, w)| w != 0);
        a.eq(other.entries().filter(|&(_, w)| w != 0))
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

/// The stored words of a set with their indices, in increasing index.
#[derive(Clone)]
pub struct Entries<'a> {
    words: Words<'a>,
    at: usize,
}

impl Iterator for Entries<'_> {
    type Item = (usize, u64);
    #[inline]
    fn next(&mut self) -> Option<(usize, u64)> {
        let w = *self.words.words.get(self.at)?;
        let i = self.words.index_of(self.at);
        self.at += 1;
        Some((i, w))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.words.words.len() - self.at;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Entries<'_> {}

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
    /// Position among the stored words of the word `bits` comes from.
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
                return Some(self.words.index_of(self.at) * 64 + bit);
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
