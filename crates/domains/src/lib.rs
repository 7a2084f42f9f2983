//! Scheduler domains exactly as Linux builds them (levels, NUMA, degenerate removal, flags by kernel version).
//!
//! (Being written; see the issue tracker.)
