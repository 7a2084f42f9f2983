//! The crate documentation's second example: a parallel bring-up through a
//! platform that only logs its steps. `tests/examples.rs` runs it as a test.
use hotplug::{Algo, Hotplug, MaskEngine, Platform, Stage};
use topology::{Arch, Shape};

#[derive(Default)]
struct Log(Vec<String>);

impl Platform for Log {
    fn kick(&mut self, cpu: usize) -> Result<(), String> {
        self.0.push(format!("kick {cpu}"));
        Ok(())
    }
    fn wait_alive(&mut self, cpu: usize) -> Result<(), String> {
        self.0.push(format!("alive {cpu}"));
        Ok(())
    }
}

pub fn main() {
    let topo = Shape::simple(Arch::X86_64, 1, 2, 2).build().unwrap();
    let engine = MaskEngine::new(&topo, Algo::Scoped).unwrap();
    let mut hp = Hotplug::new(Log::default(), engine);
    hp.register(
        "percpu",
        Stage::Prepare,
        Some(Box::new(|_p: &mut Log, _cpu| Ok(()))),
        None,
    );
    let report = hp.bringup_parallel();
    assert_eq!(report.onlined, vec![1, 2, 3]);
    assert_eq!(
        hp.platform().0[..4],
        ["kick 1", "kick 2", "kick 3", "alive 1"]
    );
}
