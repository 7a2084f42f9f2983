//! What every ACPI table shares: the 36-byte header (signature, length,
//! checksum; ACPI 6.5 §5.2.6) and, for the MADT and the SRAT, a list of
//! structures each led by a one-byte type and a one-byte length. And the
//! faults a table can have, in one enum every parser here reports.

use core::fmt;

/// Bytes of the common table header.
pub const HEADER_LEN: usize = 36;

/// Something in a firmware table that could not be used as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableFault {
    /// The table is shorter than its fixed part.
    NoHeader {
        /// Bytes present.
        len: usize,
        /// Bytes the fixed part needs.
        need: usize,
    },
    /// The header's signature is not the table's.
    BadSignature {
        /// The four bytes found.
        found: [u8; 4],
        /// The signature expected.
        want: [u8; 4],
    },
    /// The header's length is below the header or beyond the bytes given.
    BadTableLength {
        /// The length the header states.
        stated: u32,
        /// Bytes present.
        len: usize,
    },
    /// The table's bytes do not sum to 0 (mod 256): corrupt.
    BadChecksum {
        /// What they sum to.
        sum: u8,
    },
    /// A structure (or its two-byte header) runs past the end of the table;
    /// the walk stops there.
    Truncated {
        /// Offset of the structure in the table.
        offset: usize,
        /// Its type, when its first byte is there.
        kind: Option<u8>,
        /// Bytes it claims (0 when even its header is cut).
        len: usize,
        /// The table's length.
        table_len: usize,
    },
    /// A structure claims a length below its own two-byte header; the walk
    /// cannot go on past it.
    BadLength {
        /// Offset of the structure.
        offset: usize,
        /// Its type.
        kind: u8,
        /// The claimed length.
        len: usize,
    },
    /// A structure of a known type is shorter than that type's layout:
    /// skipped.
    ShortEntry {
        /// Offset of the structure.
        offset: usize,
        /// Its type.
        kind: u8,
        /// Its length.
        len: usize,
        /// The layout's length.
        need: usize,
    },
    /// The SLIT's locality count is 0, above [`crate::slit::MAX_LOCALITIES`],
    /// or more than its bytes hold.
    BadLocalityCount {
        /// The count as written.
        count: u64,
    },
    /// A SLIT distance Linux's `slit_valid()` refuses (not 10 to itself, or
    /// 10 or less to another locality): Linux then ignores the whole SLIT.
    BadDistance {
        /// Row (locality from).
        from: usize,
        /// Column (locality to).
        to: usize,
        /// The distance written.
        distance: u8,
    },
}

impl fmt::Display for TableFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            TableFault::NoHeader { len, need } => {
                write!(f, "table of {len} bytes, shorter than its {need}-byte fixed part")
            }
            TableFault::BadSignature { found, want } => write!(
                f,
                "signature is {:?}, not {:?}",
                Sig(found),
                Sig(want)
            ),
            TableFault::BadTableLength { stated, len } => write!(
                f,
                "header states {stated} bytes, which does not fit the {len} bytes given"
            ),
            TableFault::BadChecksum { sum } => {
                write!(f, "bytes sum to {sum:#04x}, not 0: a corrupt table")
            }
            TableFault::Truncated {
                offset,
                len,
                table_len,
                ..
            } => write!(
                f,
                "entry at offset {offset} ({len} bytes) runs past the table's end at {table_len}; rest ignored"
            ),
            TableFault::BadLength { offset, len, .. } => write!(
                f,
                "entry at offset {offset} claims length {len}; rest of the table ignored"
            ),
            TableFault::ShortEntry {
                offset,
                kind,
                len,
                need,
            } => write!(
                f,
                "type {kind} entry at offset {offset} is {len} bytes, its layout needs {need}; skipped"
            ),
            TableFault::BadLocalityCount { count } => write!(
                f,
                "locality count {count} does not fit the table (1-{})",
                crate::slit::MAX_LOCALITIES
            ),
            TableFault::BadDistance { from, to, distance } => write!(
                f,
                "distance [{from}][{to}] is {distance}: must be 10 to itself and above 10 to others"
            ),
        }
    }
}

/// A signature shown as text where it is printable.
struct Sig([u8; 4]);

impl fmt::Debug for Sig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match core::str::from_utf8(&self.0) {
            Ok(s) => write!(f, "{s:?}"),
            Err(_) => write!(f, "{:02x?}", self.0),
        }
    }
}

/// Checks a table's header — signature `sig`, a stated length that the
/// bytes hold, a zero checksum — and returns the table cut to that length.
/// For tables read from files; firmware-mapped tables come checked by the
/// code that found them.
pub fn check_header<'a>(bytes: &'a [u8], sig: &[u8; 4]) -> Result<&'a [u8], TableFault> {
    if bytes.len() < HEADER_LEN {
        return Err(TableFault::NoHeader {
            len: bytes.len(),
            need: HEADER_LEN,
        });
    }
    let found = [bytes[0], bytes[1], bytes[2], bytes[3]];
    if &found != sig {
        return Err(TableFault::BadSignature { found, want: *sig });
    }
    let stated = u32_at(bytes, 4).unwrap_or(0);
    let len = stated as usize;
    if len < HEADER_LEN || len > bytes.len() {
        return Err(TableFault::BadTableLength {
            stated,
            len: bytes.len(),
        });
    }
    let sum = bytes[..len].iter().fold(0u8, |s, &x| s.wrapping_add(x));
    if sum != 0 {
        return Err(TableFault::BadChecksum { sum });
    }
    Ok(&bytes[..len])
}

/// One structure of a table: its offset, type and whole bytes (header
/// included, length checked against the table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Structure<'a> {
    /// Offset in the table.
    pub offset: usize,
    /// Its type (first byte).
    pub kind: u8,
    /// Its bytes, `len` of them as its second byte says.
    pub bytes: &'a [u8],
}

impl Structure<'_> {
    /// `ShortEntry` unless the structure holds `need` bytes.
    pub fn needs(&self, need: usize) -> Result<(), TableFault> {
        if self.bytes.len() < need {
            return Err(TableFault::ShortEntry {
                offset: self.offset,
                kind: self.kind,
                len: self.bytes.len(),
                need,
            });
        }
        Ok(())
    }
}

/// The structures of `table` from offset `start` on, in table order; a
/// structure running past the end, or claiming less than its own header, is
/// the last item, as a fault.
pub fn structures(table: &[u8], start: usize) -> Structures<'_> {
    Structures {
        table,
        at: start,
        done: false,
    }
}

/// Iterator of [`structures`].
#[derive(Clone, Debug)]
pub struct Structures<'a> {
    table: &'a [u8],
    at: usize,
    done: bool,
}

impl<'a> Iterator for Structures<'a> {
    type Item = Result<Structure<'a>, TableFault>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.at >= self.table.len() {
            return None;
        }
        let (offset, table_len) = (self.at, self.table.len());
        let item = match self.table.get(offset..offset + 2) {
            Some(&[kind, len]) => structure(self.table, offset, kind, len.into()),
            _ => Err(TableFault::Truncated {
                offset,
                kind: self.table.get(offset).copied(),
                len: 0,
                table_len,
            }),
        };
        match &item {
            Ok(s) => self.at += s.bytes.len(),
            Err(_) => self.done = true,
        }
        Some(item)
    }
}

/// The structure at `offset` whose header says `kind` and `len`.
fn structure(
    table: &[u8],
    offset: usize,
    kind: u8,
    len: usize,
) -> Result<Structure<'_>, TableFault> {
    if len < 2 {
        return Err(TableFault::BadLength { offset, kind, len });
    }
    let bytes = table
        .get(offset..offset + len)
        .ok_or(TableFault::Truncated {
            offset,
            kind: Some(kind),
            len,
            table_len: table.len(),
        })?;
    Ok(Structure {
        offset,
        kind,
        bytes,
    })
}

/// Little-endian field readers; `None` past the end.
pub(crate) fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

pub(crate) fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}
