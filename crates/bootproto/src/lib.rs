//! The protocol between the host runner (crates/qemu-runner) and manycore's
//! bare-metal kernel, defined once for both sides: the kernel command line
//! the host writes and the kernel parses ([`cmdline`]), and the console lines
//! and result line the kernel writes and the host parses ([`report`]). Every
//! line type is written by its `Display` and read by its `parse`, so the two
//! cannot drift apart; tests/round_trip.rs holds them to each other.
//!
//! `no_std` + `alloc` (the kernel has no `std`), no unsafe code.
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

extern crate alloc;

pub mod cmdline;
pub mod report;
pub mod strategy;
