//! Per-NUMA-node frame allocator with distance-ordered fallback; failures are errors (seed 004).
//!
//! (Being written; see the issue tracker.)
