//! The simulator on the shared machine catalogue (crates/readers): every machine
//! boots, and the seed machines the validation builds from shapes behave the same
//! when read from the catalogue (built independently by another module).
use sim::machines::SeedMachine;
use sim::{simulate, Algo, Calibrate, CostTable, Kick, Options, Platform, Strategy};

fn brought_up(topo: &topology::Topology, platform: Platform, strategy: Strategy) -> f64 {
    simulate(
        topo,
        &CostTable::for_platform(platform, &sim::fit::fitted().unwrap()),
        &strategy,
        &Options::default(),
    )
    .unwrap()
    .brought_up_s
}

#[test]
fn every_catalogue_machine_boots() {
    for entry in readers::catalogue::list() {
        let topo = readers::catalogue::machine(entry.name).unwrap();
        let platform = Platform::for_arch(topo.arch()).unwrap_or(Platform::X86);
        let run = simulate(
            &topo,
            &CostTable::for_platform(platform, &sim::fit::fitted().unwrap()),
            &Strategy {
                kick: Kick::Parallel,
                calibrate: Calibrate::OncePerPackage,
                masks: Algo::Scoped,
            },
            &Options::default(),
        )
        .unwrap_or_else(|e| panic!("{}: {e}", entry.name));
        assert_eq!(run.cpus, topo.present().weight(), "{}", entry.name);
        assert!(run.brought_up_s > 0.0, "{}", entry.name);
    }
}

#[test]
fn seed_shapes_agree_with_the_catalogue() {
    let cases = [
        (SeedMachine::X86_2s12, Platform::X86_2010),
        (SeedMachine::X86_2s16, Platform::X86_2010),
        (SeedMachine::X86_2s32ht, Platform::X86_2010),
        (SeedMachine::X86Uv4096, Platform::X86_2010),
        (SeedMachine::X86_2n128, Platform::X86),
        (SeedMachine::Power8Lpar1024, Platform::PowerPc),
        (SeedMachine::Power4096OneSocket, Platform::PowerPc),
    ];
    for (machine, platform) in cases {
        let shape = machine.topology();
        let Ok(catalogue) = readers::catalogue::machine(machine.name()) else {
            panic!("{} is missing from the catalogue", machine.name());
        };
        assert_eq!(
            shape.present().weight(),
            catalogue.present().weight(),
            "{}",
            machine.name()
        );
        assert_eq!(
            shape.nodes().len(),
            catalogue.nodes().len(),
            "{}",
            machine.name()
        );
        for kick in [Kick::Serial, Kick::Parallel] {
            let s = Strategy {
                kick,
                calibrate: Calibrate::Parallel,
                masks: Algo::Scoped,
            };
            let a = brought_up(&shape, platform, s);
            let b = brought_up(&catalogue, platform, s);
            assert!(
                (a / b - 1.0).abs() < 0.005,
                "{} {kick}: shape {a} s, catalogue {b} s",
                machine.name()
            );
        }
    }
}
