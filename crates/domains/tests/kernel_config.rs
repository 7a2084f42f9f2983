//! `KernelConfig::parse` on real Debian config lines and on arbitrary text.

use domains::KernelConfig;
use proptest::prelude::*;

#[test]
fn debian_arm64_has_no_cluster_scheduling() {
    let text = include_str!("data/linux-6.12.117+deb12-arm64.config");
    let c = KernelConfig::parse(text).unwrap();
    assert_eq!(
        c,
        KernelConfig {
            sched_smt: true,
            sched_cluster: false,
            sched_mc: true
        }
    );
}

/// The x86 captures' kernel has every option on: the default is that build.
#[test]
fn debian_amd64_has_every_option() {
    let text = include_str!("data/linux-6.12.117+deb12-amd64.config");
    assert_eq!(KernelConfig::parse(text).unwrap(), KernelConfig::ALL_ON);
}

#[test]
fn debian_powerpc_has_smt_only() {
    // powerpc has no SCHED_MC or SCHED_CLUSTER symbol: its MC level is the
    // coregroup, which no option controls.
    let text = include_str!("data/linux-6.12.117+deb12-powerpc64le.config");
    let c = KernelConfig::parse(text).unwrap();
    assert!(c.sched_smt && !c.sched_cluster && !c.sched_mc);
}

#[test]
fn a_tristate_value_is_refused_with_its_line() {
    let e = KernelConfig::parse("CONFIG_NUMA=y\nCONFIG_SCHED_MC=m\n").unwrap_err();
    assert_eq!(e.line, 2);
    assert!(e.message.contains("CONFIG_SCHED_MC"), "{e}");
    assert!(KernelConfig::parse("CONFIG_SCHED_SMT=\"y\"").is_err());
}

#[test]
fn unset_and_absent_options_are_off() {
    let c = KernelConfig::parse("# CONFIG_SCHED_SMT is not set\nCONFIG_SCHED_CLUSTER=y\n").unwrap();
    assert!(!c.sched_smt && c.sched_cluster && !c.sched_mc);
    assert_eq!(KernelConfig::default(), KernelConfig::ALL_ON);
}

proptest! {
    /// Any text: no panic; an error only for one of our three options.
    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
        if let Err(e) = KernelConfig::parse(&text) {
            let line = text.lines().nth(e.line - 1).unwrap();
            prop_assert!(line.contains("CONFIG_SCHED_"));
        }
    }

    /// A config written from values reads back as those values, whatever
    /// other lines surround it.
    #[test]
    fn written_values_read_back(smt: bool, cluster: bool, mc: bool, noise in "[A-Z_ =#a-z0-9]{0,40}") {
        let line = |name: &str, on: bool| {
            if on { format!("CONFIG_{name}=y\n") } else { format!("# CONFIG_{name} is not set\n") }
        };
        let noise = if noise.contains("CONFIG_SCHED_") { String::new() } else { noise };
        let text = format!("{noise}\n{}{}{}", line("SCHED_SMT", smt), line("SCHED_CLUSTER", cluster), line("SCHED_MC", mc));
        let c = KernelConfig::parse(&text).unwrap();
        prop_assert_eq!(c, KernelConfig { sched_smt: smt, sched_cluster: cluster, sched_mc: mc });
    }
}
