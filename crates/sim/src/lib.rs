//! Deterministic discrete-event bring-up simulator for machines up to 16384 CPUs.
//!
//! (Being written; see the issue tracker.)
