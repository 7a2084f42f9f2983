//! `Workload::parse` on arbitrary text: never panics; whatever it accepts names
//! a known workload and round-trips through its name; times stay in range.
use place::Workload;
use proptest::prelude::*;

proptest! {
    #[test]
    fn parse_never_panics_and_accepts_only_sane_specs(s in "\\PC{0,24}") {
        if let Ok(w) = Workload::parse(&s) {
            prop_assert!(["spin", "ebizzy", "hackbench", "duty"].contains(&w.name()));
            prop_assert!(s.starts_with(w.name()));
            prop_assert!(w.run_ns(0.999) >= 1);
        }
    }

    #[test]
    fn duty_times_round_trip(r in 1u32..10_000_000, z in 1u32..10_000_000) {
        let w = Workload::parse(&format!("duty:{r}:{z}")).unwrap();
        prop_assert_eq!(w, Workload::Duty { run_us: r, sleep_us: z });
    }
}

#[test]
fn zero_and_huge_times_are_refused() {
    assert!(Workload::parse("duty:0:5").is_err());
    assert!(Workload::parse("hackbench:0").is_err());
    assert!(Workload::parse("duty:5:99999999999").is_err());
    assert!(Workload::parse("spin:3").is_err());
}
