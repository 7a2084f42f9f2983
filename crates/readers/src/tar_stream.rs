//! A tar stream counted and watched header by header, for every reader of
//! archives that anyone can write (sysfs snapshots, `domains --compare`
//! dumps).
//!
//! The `tar` crate reads a GNU long-name or pax record whole, at whatever
//! size its header claims, and a few kilobytes of compressed zeros inflate
//! to gigabytes; so the decompressed stream is checked before `tar` sees it:
//! its length and member count within their budgets, a long name at most
//! as long as a path can be, a pax record no larger than a few attributes need.
//! Hand-written because neither `tar` nor another crate offers these bounds.

use std::cell::Cell;
use std::io::{self, Read};
use std::rc::Rc;

/// The largest pax record accepted: real ones hold a path or a few attributes.
pub const MAX_META_RECORD: u64 = 64 * 1024;

/// The largest GNU long name or long link name accepted: one path, at most
/// Linux's `PATH_MAX` (4096 bytes with the NUL GNU tar writes after it).
pub const MAX_LONG_NAME: u64 = 4096;

/// Why the stream reader stopped early (read after the `io::Error` it returned).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    None,
    StreamTooLong,
    TooManyMembers,
    /// A GNU long name or long link name of this many bytes.
    LongNameTooLarge(u64),
    /// A pax record of this many bytes.
    MetaRecordTooLarge(u64),
    SparseMember,
    /// The stream ended inside a header or a member's data, or between
    /// members before the end-of-archive block (a cut download or copy):
    /// what the missing part held is unknown.
    Truncated,
}

/// [`Stop::Truncated`] in an error's words, for every reader of archives.
pub const TRUNCATED: &str =
    "the archive ends inside a member or before its end-of-archive block: truncated";

/// The decompressed stream, counted and watched header by header: it refuses
/// to run past the stream budget or the member budget, and refuses a GNU
/// long name past [`MAX_LONG_NAME`] or a pax record past [`MAX_META_RECORD`]
/// before `tar` starts buffering it.
pub struct Watched<R> {
    inner: R,
    /// Bytes delivered so far.
    pos: u64,
    /// Stream offset of the next 512-byte header block.
    next_header: u64,
    /// The header block being collected (reads may split it).
    header: [u8; 512],
    header_len: usize,
    members: u64,
    /// An end-of-archive (all-zero) header block has passed.
    ended: bool,
    stream_bytes: u64,
    max_members: u64,
    stop: Rc<Cell<Stop>>,
}

impl<R: Read> Watched<R> {
    /// Watches `inner` for at most `stream_bytes` bytes and `members`
    /// headers; the cell says why it stopped once it returned an error.
    pub fn new(inner: R, stream_bytes: u64, members: u64) -> (Self, Rc<Cell<Stop>>) {
        let stop = Rc::new(Cell::new(Stop::None));
        let watched = Watched {
            inner,
            pos: 0,
            next_header: 0,
            header: [0; 512],
            header_len: 0,
            members: 0,
            ended: false,
            stream_bytes,
            max_members: members,
            stop: stop.clone(),
        };
        (watched, stop)
    }

    fn fail(&self, why: Stop) -> io::Error {
        self.stop.set(why);
        io::Error::other("archive budget exceeded")
    }

    /// Looks at the bytes just delivered (`buf`, starting at stream offset
    /// `self.pos`) for header blocks.
    fn watch(&mut self, buf: &[u8]) -> io::Result<()> {
        let mut at = 0usize;
        while at < buf.len() {
            let offset = self.pos + at as u64;
            let in_header = offset >= self.next_header && offset < self.next_header + 512;
            if !in_header {
                // Jump to the next header (or past the buffer).
                let skip = self.next_header.saturating_sub(offset);
                at = at.saturating_add(usize::try_from(skip).unwrap_or(usize::MAX));
                continue;
            }
            let take = (512 - self.header_len).min(buf.len() - at);
            self.header[self.header_len..self.header_len + take]
                .copy_from_slice(&buf[at..at + take]);
            self.header_len += take;
            at += take;
            if self.header_len == 512 {
                self.header_len = 0;
                self.header_done()?;
            }
        }
        Ok(())
    }

    /// A whole header block has passed: count it and find the next one.
    fn header_done(&mut self) -> io::Result<()> {
        let h = &self.header;
        let block = self.next_header;
        if h.iter().all(|&b| b == 0) {
            // End-of-archive blocks: `tar` stops reading after them.
            self.ended = true;
            self.next_header = block + 512;
            return Ok(());
        }
        self.members += 1;
        if self.members > self.max_members {
            return Err(self.fail(Stop::TooManyMembers));
        }
        let size = header_size(h).unwrap_or(0);
        let kind = h[156];
        if matches!(kind, b'L' | b'K') && size > MAX_LONG_NAME {
            return Err(self.fail(Stop::LongNameTooLarge(size)));
        }
        if matches!(kind, b'x' | b'g') && size > MAX_META_RECORD {
            return Err(self.fail(Stop::MetaRecordTooLarge(size)));
        }
        if kind == b'S' && h[482] != 0 {
            // Extended sparse headers follow the header; nothing in a
            // topology dump is sparse, and the watch would lose its place.
            return Err(self.fail(Stop::SparseMember));
        }
        let data = size.div_ceil(512).saturating_mul(512);
        self.next_header = block.saturating_add(512).saturating_add(data);
        Ok(())
    }
}

impl<R: Read> Read for Watched<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.stream_bytes.saturating_sub(self.pos);
        if left == 0 && !buf.is_empty() {
            // One byte past the budget tells "exactly at the limit" from "over".
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(self.fail(Stop::StreamTooLong)),
            };
        }
        let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        if n == 0 && want > 0 && (self.header_len > 0 || self.pos < self.next_header || !self.ended)
        {
            // `tar` takes an end inside a member it skips for the end of the
            // archive, and GNU tar an end between members for a whole
            // archive: either would read a cut archive as a smaller machine.
            // Every tar writer ends an archive with zero blocks (all 136
            // real archives of the corpus and the real inputs do), so a
            // stream that ends without one was cut.
            return Err(self.fail(Stop::Truncated));
        }
        self.watch(&buf[..n])?;
        self.pos += n as u64;
        Ok(n)
    }
}

/// The size field of a tar header: octal text, or GNU base-256 when the high
/// bit of its first byte is set.
fn header_size(h: &[u8; 512]) -> Option<u64> {
    let field = &h[124..136];
    if field[0] & 0x80 != 0 {
        let mut v: u64 = 0;
        for (i, &b) in field.iter().enumerate() {
            let b = if i == 0 { b & 0x7f } else { b };
            v = v.checked_mul(256)?.checked_add(u64::from(b))?;
        }
        return Some(v);
    }
    let text = std::str::from_utf8(field).ok()?;
    let text = text.trim_matches(|c: char| c == '\0' || c == ' ');
    if text.is_empty() {
        return Some(0);
    }
    u64::from_str_radix(text, 8).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_sizes_read_octal_and_base_256() {
        let mut h = [0u8; 512];
        h[124..136].copy_from_slice(b"00000001750\0");
        assert_eq!(header_size(&h), Some(1000));
        h[124..136].copy_from_slice(&[0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0]);
        assert_eq!(header_size(&h), Some(256));
    }
}
