//! `MaskEngine::naive_price` against real naive runs: the bring-up's price is
//! the work onlining every CPU really counts, and the cycle's price is the
//! dearest offline/online cycle, found by cycling every CPU in turn. The
//! price is computed from each CPU's walk and ids alone, so a change to the
//! naive algorithm's counting that the price does not follow fails here.

mod common;

use hotplug::{Algo, MaskEngine, X86Cpu, X86Description};
use topology::{Arch, Numbering, Shape, Topology, TopologyBuilder};

/// The bring-up's work and the dearest cycle's, measured on `engine`.
fn measured(mut engine: MaskEngine) -> (u64, u64) {
    let offline: Vec<usize> = engine
        .present()
        .iter()
        .filter(|&c| !engine.online_mask().contains(c))
        .collect();
    let mut bringup = 0;
    for cpu in offline {
        bringup += engine.online(cpu).unwrap().total().total();
    }
    let others: Vec<usize> = engine
        .present()
        .iter()
        .filter(|&c| c != engine.boot_cpu())
        .collect();
    let mut dearest = 0;
    for cpu in others {
        let down = engine.offline(cpu).unwrap().total().total();
        let up = engine.online(cpu).unwrap().total().total();
        dearest = dearest.max(down + up);
    }
    (bringup, dearest)
}

fn check(name: &str, engine: MaskEngine) {
    let price = engine.naive_price().expect("a naive engine has a price");
    let (bringup, cycle) = measured(engine);
    assert_eq!(
        (price.bringup, price.cycle),
        (bringup, cycle),
        "{name}: priced (bring-up, cycle) against measured"
    );
}

fn shapes() -> Vec<(String, Topology)> {
    let mut v = Vec::new();
    for (arch, p, c, t) in [
        (Arch::PowerPc64, 2, 4, 4),
        (Arch::PowerPc64, 1, 3, 8),
        (Arch::X86_64, 2, 8, 2),
        (Arch::Arm64, 2, 8, 1),
    ] {
        v.push((
            format!("{arch:?} {p}x{c}x{t}"),
            Shape::simple(arch, p, c, t).build().unwrap(),
        ));
    }
    let mut s = Shape::simple(Arch::PowerPc64, 2, 8, 4);
    s.clusters = 2;
    s.nodes_per_package = 2;
    v.push((
        "POWER coregroups, 2 nodes a socket".into(),
        s.build().unwrap(),
    ));
    let mut s = Shape::simple(Arch::X86_64, 2, 40, 2);
    s.numbering = Numbering::ThreadsLast;
    v.push((
        "x86 threads last (spans of 3 words)".into(),
        s.build().unwrap(),
    ));
    v.push(("one socket of big cores".into(), common::one_socket(64)));
    v.push(("nodes of 64".into(), common::nodes_of_64(256)));
    for m in [
        "power9-lpar-128",
        "x86-2n-128",
        "arm64-d06",
        "power10-shared-320",
    ] {
        v.push((m.into(), readers::catalogue::machine(m).unwrap()));
    }
    // Half the CPUs offline in the source: the boot CPU is the first online
    // one and only the offline ones come up.
    let t = Shape::simple(Arch::PowerPc64, 2, 4, 4).build().unwrap();
    let mut b = TopologyBuilder::from_topology(&t);
    b.online((0..32).step_by(2).collect());
    v.push(("odd CPUs offline".into(), b.finish().unwrap()));
    v
}

#[test]
fn the_price_is_what_a_naive_run_counts() {
    for (name, topo) in shapes() {
        check(&name, MaskEngine::new(&topo, Algo::Naive).unwrap());
        assert_eq!(
            MaskEngine::new(&topo, Algo::Scoped).unwrap().naive_price(),
            None
        );
    }
}

#[test]
fn the_price_holds_on_an_x86_description() {
    let cpus: Vec<X86Cpu> = (0..48u32)
        .map(|cpu| X86Cpu {
            cpu,
            core: cpu / 2,
            package: cpu / 24,
            node: cpu / 12,
            l2: Some(cpu / 4),
            llc: Some(cpu / 24),
        })
        .collect();
    let engine = MaskEngine::for_x86(X86Description::new(cpus), 5, Algo::Naive).unwrap();
    check("x86 description, boot CPU 5", engine);
}
