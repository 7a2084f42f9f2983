//! The SLIT (ACPI 6.5 §5.2.17): relative distances between localities
//! (= proximity domains), an N×N byte matrix.

use alloc::vec::Vec;

use crate::table::{u64_at, TableFault};

/// The SLIT's locality count, after the header.
const SLIT_COUNT: usize = 36;
/// The SLIT's matrix.
const SLIT_MATRIX: usize = 44;

/// The most localities read: Linux's largest `MAX_NUMNODES` (`NODES_SHIFT`
/// 10). It bounds the matrix before anything is allocated for it.
pub const MAX_LOCALITIES: usize = 1024;

/// Parses the SLIT: a u64 locality count at offset 36 and an N×N byte
/// matrix after it, row-major by locality. Gives N and the matrix.
pub fn parse_slit(bytes: &[u8]) -> Result<(usize, Vec<u8>), TableFault> {
    let count = u64_at(bytes, SLIT_COUNT).ok_or(TableFault::NoHeader {
        len: bytes.len(),
        need: SLIT_MATRIX,
    })?;
    let n = usize::try_from(count)
        .ok()
        .filter(|&n| n > 0 && n <= MAX_LOCALITIES)
        .ok_or(TableFault::BadLocalityCount { count })?;
    let matrix = bytes
        .get(SLIT_MATRIX..SLIT_MATRIX + n * n)
        .ok_or(TableFault::BadLocalityCount { count })?;
    Ok((n, matrix.to_vec()))
}

/// Linux's `slit_valid()`: 10 on the diagonal and more than 10 elsewhere,
/// else Linux ignores the whole SLIT. The first distance that breaks it.
pub fn slit_valid(n: usize, matrix: &[u8]) -> Result<(), TableFault> {
    for from in 0..n {
        for to in 0..n {
            let distance = matrix.get(from * n + to).copied().unwrap_or(0);
            if (from == to && distance != 10) || (from != to && distance <= 10) {
                return Err(TableFault::BadDistance { from, to, distance });
            }
        }
    }
    Ok(())
}
