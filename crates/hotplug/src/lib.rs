//! CPU hotplug state machine and incremental topology masks (naive vs scoped, seed 000).
//!
//! (Being written; see the issue tracker.)
