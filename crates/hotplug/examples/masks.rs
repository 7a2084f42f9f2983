//! The crate documentation's first example: a 64-CPU machine's masks kept
//! up to date CPU by CPU. `tests/examples.rs` runs it as a test.
use hotplug::{Algo, MaskEngine, MaskLevel};
use topology::{Arch, Shape};

pub fn main() {
    let topo = Shape::simple(Arch::PowerPc64, 2, 4, 8).build().unwrap(); // 64 CPUs
    let mut engine = MaskEngine::new(&topo, Algo::Scoped).unwrap(); // CPU 0 online
    for cpu in 1..64 {
        let work = engine.online(cpu).unwrap();
        assert!(work.total().cpus_scanned < 64);
    }
    assert_eq!(engine.masks(9, MaskLevel::Smt).to_list_string(), "8-15");
    engine.offline(9).unwrap();
    assert_eq!(engine.masks(8, MaskLevel::Smt).to_list_string(), "8,10-15");
    assert!(engine.masks(9, MaskLevel::Smt).is_empty());
    assert!(engine.offline(0).is_err()); // the boot CPU
    engine.verify().unwrap();
}
