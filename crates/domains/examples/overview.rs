//! The crate documentation's example: the scheduler domains of a small
//! two-socket machine. `tests/examples.rs` runs it as a test.
use domains::KernelVersion;
use topology::{Arch, Shape};

pub fn main() {
    // 2 sockets x 4 cores x 2 threads, one node per socket (distance 20).
    let topo = Shape::simple(Arch::X86_64, 2, 4, 2).build().unwrap();
    let d = domains::build(&topo, KernelVersion::V6_12).unwrap();
    let cpu0 = d.cpu(0).unwrap();
    let names: Vec<_> = cpu0.domains.iter().map(|x| d.name(x)).collect();
    assert_eq!(names, ["SMT", "MC", "NUMA"]); // PKG and NODE equal MC: removed
    assert_eq!(d.span(&cpu0.domains[2]).to_list_string(), "0-15");
}
