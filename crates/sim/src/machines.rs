//! The seeds' machines, as regular shapes read off the seeds' logs and lscpu
//! output. The validation uses these (rather than the shared catalogue) so that
//! the fitted numbers cannot move when someone edits a catalogue entry; each
//! shape's provenance is in its doc line.

use topology::{Arch, Numbering, Shape, Topology};

/// A seed machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeedMachine {
    /// Seed 002: 2 sockets × 6 cores, no HT ("#1 … #5" on node 0, "#6 … #11" on node 1).
    X86_2s12,
    /// Seed 002: 2 sockets × 8 cores, no HT.
    X86_2s16,
    /// Seed 002: 2 sockets × 8 cores × 2 threads, first threads numbered first
    /// (node 0: #1-7, node 1: #8-15, node 0: #16-23, node 1: #24-31).
    X86_2s32ht,
    /// Seed 002: SGI UV, 256 sockets × 8 cores × 2 threads, one node per socket,
    /// first threads first (node 255's line is "#4088 … #4095").
    X86Uv4096,
    /// Seed 003: 128 CPUs over 2 NUMA nodes (2 sockets × 32 cores × 2 threads).
    X86_2n128,
    /// Seed 000: POWER8 LPAR, 16 sockets × 8 cores × SMT8, one node per socket.
    Power8Lpar1024,
    /// Seed 000: 4096 CPUs, 1024 SMT4 cores in one socket and one node.
    Power4096OneSocket,
    /// Seed 000: the POWER9 PowerVM LPAR of its SMT-switch timings, 2 sockets
    /// × 8 cores × SMT8, one node per socket (its lscpu listing).
    Power9Lpar128,
}

impl SeedMachine {
    /// The catalogue name of the same machine.
    pub fn name(self) -> &'static str {
        match self {
            SeedMachine::X86_2s12 => "x86-2s-12",
            SeedMachine::X86_2s16 => "x86-2s-16",
            SeedMachine::X86_2s32ht => "x86-2s-32ht",
            SeedMachine::X86Uv4096 => "x86-uv-4096",
            SeedMachine::X86_2n128 => "x86-2n-128",
            SeedMachine::Power8Lpar1024 => "power8-lpar-1024",
            SeedMachine::Power4096OneSocket => "power-4096-1socket",
            SeedMachine::Power9Lpar128 => "power9-lpar-128",
        }
    }

    /// The machine's shape.
    pub fn shape(self) -> Shape {
        let x86 = |packages, cores, threads| Shape {
            numbering: Numbering::ThreadsLast,
            ..Shape::simple(Arch::X86_64, packages, cores, threads)
        };
        match self {
            SeedMachine::X86_2s12 => x86(2, 6, 1),
            SeedMachine::X86_2s16 => x86(2, 8, 1),
            SeedMachine::X86_2s32ht => x86(2, 8, 2),
            SeedMachine::X86Uv4096 => x86(256, 8, 2),
            SeedMachine::X86_2n128 => x86(2, 32, 2),
            SeedMachine::Power8Lpar1024 => Shape {
                distances: (20, 40),
                ..Shape::simple(Arch::PowerPc64, 16, 8, 8)
            },
            SeedMachine::Power4096OneSocket => Shape::simple(Arch::PowerPc64, 1, 1024, 4),
            SeedMachine::Power9Lpar128 => Shape::simple(Arch::PowerPc64, 2, 8, 8),
        }
    }

    /// The machine's topology.
    pub fn topology(self) -> Topology {
        self.shape()
            .build()
            .expect("the seed shapes are valid by construction")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shapes agree with what the seeds print: CPU counts, and for the UV the
    /// node of the last "Booting Node" line.
    #[test]
    fn shapes_match_the_seeds() {
        assert_eq!(SeedMachine::X86_2s12.topology().present().weight(), 12);
        assert_eq!(SeedMachine::X86_2s32ht.topology().present().weight(), 32);
        let uv = SeedMachine::X86Uv4096.topology();
        assert_eq!(uv.present().weight(), 4096);
        assert_eq!(uv.node_of(4088).unwrap().id, 255);
        assert_eq!(uv.node_of(2047).unwrap().id, 255);
        assert_eq!(uv.node_of(2048).unwrap().id, 0);
        let lpar = SeedMachine::Power8Lpar1024.topology();
        assert_eq!(lpar.nodes().len(), 16);
        assert_eq!(lpar.node_of(64).unwrap().id, 1);
        let big = SeedMachine::Power4096OneSocket.topology();
        assert_eq!(big.present().weight(), 4096);
        assert_eq!(big.smt_mask(5).weight(), 4);
        let p9 = SeedMachine::Power9Lpar128.topology();
        assert_eq!(p9.present().weight(), 128);
        assert_eq!(p9.nodes().len(), 2);
        assert_eq!(p9.node_of(64).unwrap().id, 1);
        assert_eq!(p9.smt_mask(120).weight(), 8);
    }
}
