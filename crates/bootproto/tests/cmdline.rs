//! The kernel command line (`bootproto::cmdline`): documented options take
//! effect, anything else is reported word by word and ignored.

use bootproto::cmdline::{self, Bringup, Calibrate, Kick};

#[test]
fn command_line_options_and_bad_words() {
    let mut bad = Vec::new();
    let o = cmdline::parse(
        "bringup=broadcast calibrate=skip lpj=4000000 init_delay_us=0 x2apic=off junk lpj=0 bringup=fast percpu_dump",
        |w| bad.push(w.0.to_string()),
    );
    assert_eq!(o.bringup, Bringup::Broadcast);
    assert_eq!(o.calibrate, Calibrate::Skip);
    assert_eq!(o.lpj, Some(4_000_000));
    assert_eq!(o.init_delay_us, 0);
    assert_eq!(o.x2apic, Some(false));
    assert!(o.percpu_dump);
    assert_eq!(bad, ["junk", "lpj=0", "bringup=fast"]);
    let d = cmdline::parse("", |_| panic!("nothing to reject"));
    assert_eq!(
        (d.bringup, d.calibrate, d.init_delay_us, d.sipi_delay_us),
        (
            Bringup::Kick(Kick::Parallel),
            Calibrate::Parallel,
            10_000,
            200
        )
    );
}
