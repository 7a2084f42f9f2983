//! ACPI static tables decoded from their bytes: the common header and the
//! walk over variable-length structures that the MADT and the SRAT share
//! ([`table`]), the SRAT ([`srat`]) and the SLIT ([`slit`]). The bare-metal
//! kernel hands it the tables firmware mapped for it (x86: APIC and x2APIC
//! affinity, memory); `irq` hands it table files (arm64: GICC and GIC ITS
//! affinity). One decoder for both, so a layout or a fault is read one way.
//!
//! Written by hand, on purpose: the `acpi` crate we build with (5.2) has no
//! SRAT parser, and the one in its 7.0 pre-release casts mapped table memory
//! to packed structs (unsafe, reachable only through an `AcpiHandler`), reads
//! a two-byte entry length where the SRAT has one byte, never advances past a
//! zero-length entry, and logs and drops a truncated entry instead of
//! returning the fault. Here every read is bounds-checked: a malformed table
//! gives the structures that fit whole plus a [`TableFault`] for what was cut
//! or refused, never a panic and never a silent default such as node 0.
//!
//! Layouts are ACPI 6.5's: §5.2.6 (header), §5.2.16 (SRAT), §5.2.17 (SLIT).
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

extern crate alloc;

pub mod slit;
pub mod srat;
pub mod table;

pub use table::TableFault;
