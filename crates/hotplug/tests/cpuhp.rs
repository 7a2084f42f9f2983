//! The hotplug state machine: step order, callback order, rollback, refusals.

use hotplug::{Algo, CpuState, Hotplug, HotplugError, MaskEngine, MaskLevel, Platform, Stage};
use topology::{Arch, Shape};

/// Records every step; fails the steps it is told to.
#[derive(Default)]
struct Recorder {
    log: Vec<String>,
    fail_kick: Option<usize>,
    fail_alive: Option<usize>,
}

impl Platform for Recorder {
    fn kick(&mut self, cpu: usize) -> Result<(), String> {
        self.log.push(format!("kick {cpu}"));
        if self.fail_kick == Some(cpu) {
            return Err("no response to INIT".into());
        }
        Ok(())
    }
    fn wait_alive(&mut self, cpu: usize) -> Result<(), String> {
        self.log.push(format!("alive {cpu}"));
        if self.fail_alive == Some(cpu) {
            return Err("timed out".into());
        }
        Ok(())
    }
    fn calibrate(&mut self, cpu: usize) -> Result<(), String> {
        self.log.push(format!("calibrate {cpu}"));
        Ok(())
    }
    fn stop(&mut self, cpu: usize) -> Result<(), String> {
        self.log.push(format!("stop {cpu}"));
        Ok(())
    }
}

fn machine(cpus_per_core: u32) -> Hotplug<Recorder> {
    let topo = Shape::simple(Arch::X86_64, 1, 2, cpus_per_core)
        .build()
        .unwrap();
    let engine = MaskEngine::new(&topo, Algo::Scoped).unwrap();
    Hotplug::new(Recorder::default(), engine)
}

/// Registers a logging pair of callbacks; `fail_on` makes the startup fail.
fn logging(hp: &mut Hotplug<Recorder>, name: &'static str, stage: Stage, fail_on: Option<usize>) {
    hp.register(
        name,
        stage,
        Some(Box::new(move |p: &mut Recorder, cpu| {
            p.log.push(format!("{name}+ {cpu}"));
            if fail_on == Some(cpu) {
                Err("out of memory".into())
            } else {
                Ok(())
            }
        })),
        Some(Box::new(move |p: &mut Recorder, cpu| {
            p.log.push(format!("{name}- {cpu}"));
            Ok(())
        })),
    );
}

fn standard(hp: &mut Hotplug<Recorder>) {
    // Registered out of stage order on purpose: stages order them, then
    // registration order within a stage.
    logging(hp, "online-a", Stage::Online, None);
    logging(hp, "prep-a", Stage::Prepare, None);
    logging(hp, "start", Stage::Starting, None);
    logging(hp, "prep-b", Stage::Prepare, None);
    logging(hp, "online-b", Stage::Online, None);
}

#[test]
fn serial_runs_each_cpu_to_the_end() {
    let mut hp = machine(1);
    standard(&mut hp);
    let report = hp.bringup_serial();
    assert_eq!(report.onlined, vec![1]);
    assert!(report.failed.is_empty());
    assert_eq!(
        hp.platform().log,
        [
            "prep-a+ 1",
            "prep-b+ 1",
            "kick 1",
            "alive 1",
            "calibrate 1",
            "start+ 1",
            "online-a+ 1",
            "online-b+ 1"
        ]
    );
    assert_eq!(hp.state(1), Some(CpuState::Online));
    assert_eq!(
        hp.engine().masks(1, MaskLevel::Package).to_list_string(),
        "0-1"
    );
}

#[test]
fn parallel_kicks_everyone_before_waiting() {
    let mut hp = machine(2); // CPUs 0-3, boot CPU 0
    let report = hp.bringup_parallel();
    assert_eq!(report.onlined, vec![1, 2, 3]);
    assert_eq!(
        hp.platform().log,
        [
            "kick 1",
            "kick 2",
            "kick 3",
            "alive 1",
            "calibrate 1",
            "alive 2",
            "calibrate 2",
            "alive 3",
            "calibrate 3"
        ]
    );
    hp.engine().verify().unwrap();
    // Same end state as serial.
    let mut serial = machine(2);
    serial.bringup_serial();
    for cpu in 0..4 {
        for level in MaskLevel::ALL {
            assert_eq!(
                hp.engine().masks(cpu, level),
                serial.engine().masks(cpu, level)
            );
        }
    }
    assert_eq!(
        report.work.total().mask_bit_ops,
        serial.report().work.total().mask_bit_ops
    );
}

#[test]
fn failing_starting_callback_rolls_back_only_that_cpu() {
    let mut hp = machine(2);
    logging(&mut hp, "prep", Stage::Prepare, None);
    logging(&mut hp, "start-a", Stage::Starting, None);
    logging(&mut hp, "start-b", Stage::Starting, Some(2));
    let report = hp.bringup_parallel();
    assert_eq!(report.onlined, vec![1, 3]);
    assert_eq!(report.failed.len(), 1);
    assert_eq!(
        report.failed[0],
        (
            2,
            HotplugError::Callback {
                cpu: 2,
                name: "start-b",
                message: "out of memory".into()
            }
        )
    );
    assert_eq!(hp.state(2), Some(CpuState::Offline));
    assert!(hp.engine().masks(2, MaskLevel::Smt).is_empty());
    assert_eq!(hp.engine().online_mask().to_list_string(), "0-1,3");
    hp.engine().verify().unwrap();
    // CPU 2's part of the log: start-a undone, then the CPU stopped, then prep undone.
    let cpu2: Vec<&str> = hp
        .platform()
        .log
        .iter()
        .filter(|l| l.ends_with(" 2"))
        .map(|s| s.as_str())
        .collect();
    assert_eq!(
        cpu2,
        [
            "prep+ 2",
            "kick 2",
            "alive 2",
            "calibrate 2",
            "start-a+ 2",
            "start-b+ 2",
            "start-a- 2",
            "stop 2",
            "prep- 2"
        ]
    );
    // It can be retried once the cause is gone... here it fails the same way.
    assert!(hp.cpu_up(2).is_err());
    assert_eq!(hp.state(2), Some(CpuState::Offline));
}

#[test]
fn failing_online_callback_undoes_the_masks() {
    let mut hp = machine(1);
    logging(&mut hp, "online-a", Stage::Online, None);
    logging(&mut hp, "online-b", Stage::Online, Some(1));
    let err = hp.cpu_up(1).unwrap_err();
    assert!(matches!(
        err,
        HotplugError::Callback {
            cpu: 1,
            name: "online-b",
            ..
        }
    ));
    assert_eq!(hp.state(1), Some(CpuState::Offline));
    assert_eq!(hp.engine().online_mask().to_list_string(), "0");
    hp.engine().verify().unwrap();
    assert!(hp.platform().log.ends_with(&[
        "online-b+ 1".into(),
        "online-a- 1".into(),
        "stop 1".into()
    ]));
}

#[test]
fn platform_failures() {
    let mut hp = machine(2);
    logging(&mut hp, "prep", Stage::Prepare, None);
    hp.platform_mut().fail_kick = Some(1);
    hp.platform_mut().fail_alive = Some(3);
    let report = hp.bringup_parallel();
    assert_eq!(report.onlined, vec![2]);
    assert_eq!(
        report.failed,
        vec![
            (
                1,
                HotplugError::Platform {
                    cpu: 1,
                    step: "kick",
                    message: "no response to INIT".into()
                }
            ),
            (
                3,
                HotplugError::Platform {
                    cpu: 3,
                    step: "wait for alive",
                    message: "timed out".into()
                }
            ),
        ]
    );
    let log = &hp.platform().log;
    assert!(log.contains(&"prep- 1".to_string()));
    assert!(
        !log.contains(&"stop 1".to_string()),
        "a CPU whose kick failed is not stopped"
    );
    assert!(log.contains(&"stop 3".to_string()));
    assert_eq!(hp.state(1), Some(CpuState::Offline));
    assert_eq!(hp.state(3), Some(CpuState::Offline));
}

#[test]
fn down_reverses_up_and_refusals_change_nothing() {
    let mut hp = machine(2);
    standard(&mut hp);
    hp.bringup_serial();
    hp.platform_mut().log.clear();
    hp.cpu_down(3).unwrap();
    assert_eq!(
        hp.platform().log,
        [
            "online-b- 3",
            "online-a- 3",
            "start- 3",
            "stop 3",
            "prep-b- 3",
            "prep-a- 3"
        ]
    );
    assert_eq!(hp.state(3), Some(CpuState::Offline));
    assert_eq!(hp.engine().masks(2, MaskLevel::Smt).to_list_string(), "2");
    hp.platform_mut().log.clear();
    assert_eq!(hp.cpu_down(0), Err(HotplugError::BootCpu(0)));
    assert_eq!(hp.cpu_down(3), Err(HotplugError::AlreadyOffline(3)));
    assert_eq!(hp.cpu_up(1), Err(HotplugError::AlreadyOnline(1)));
    assert_eq!(hp.cpu_up(9), Err(HotplugError::UnknownCpu(9)));
    assert_eq!(hp.state(9), None);
    assert!(hp.platform().log.is_empty(), "a refused request ran steps");
    // Kicked but not finished: finishing from the wrong state is refused.
    hp.kick(3).unwrap();
    assert_eq!(
        hp.cpu_down(3),
        Err(HotplugError::WrongState {
            cpu: 3,
            state: CpuState::Kicked,
            step: "take down"
        })
    );
    hp.finish_up(3).unwrap();
    assert_eq!(hp.state(3), Some(CpuState::Online));
    hp.engine().verify().unwrap();
}
