//! The bring-up strategies the seeds compare, each defined once with one
//! spelling: the `manycore` command line, the bare-metal kernel's command line
//! (through `bootproto`) and the simulator all parse into these types and print
//! them back with [`Display`](fmt::Display).
//!
//! They live here because this is the lowest crate that uses them: the
//! kernel's command line ([`crate::cmdline`]) parses `bringup=` and
//! `calibrate=` into them, and everything above (crates/hotplug's state
//! machine and mask engine, the simulator, the CLI) names them from here. A
//! leaf module: it uses nothing else in the crate.

use alloc::string::{String, ToString};
use core::fmt;
use core::str::FromStr;

use serde::Serialize;

/// In which order the boot CPU starts the secondary CPUs (seed 003).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kick {
    /// Kick one CPU, wait until it is online, then kick the next (Linux before
    /// 6.5; hotplug's `Hotplug::bringup_serial`).
    Serial,
    /// Kick every CPU first, then complete each one in order (Linux 6.5's
    /// `CPUHP_BP_KICK_AP` prefix; hotplug's `Hotplug::bringup_parallel`):
    /// the CPUs' start-up latencies overlap.
    Parallel,
}

/// How each secondary CPU obtains its delay-loop calibration (loops per jiffy,
/// seed 002). Each word has this one meaning everywhere; the boot CPU's own
/// calibration is not part of it (it calibrates unless `lpj=` is preset).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case", tag = "mode", content = "lpj")]
pub enum Calibrate {
    /// `serial`: each AP calibrates before it reports in, one at a time; the
    /// boot CPU waits for each.
    Serial,
    /// `parallel`: each AP calibrates after it is online, all at once; "Brought
    /// up" waits for the last one (seed 002's patch).
    Parallel,
    /// `once-per-package`: the first AP of each package calibrates, the others
    /// of that package take its value (Linux's `calibrate_delay_is_known()`).
    OncePerPackage,
    /// `skip`: no AP calibrates; every AP takes the value the boot CPU has
    /// (its own measurement, or `lpj=` when that is preset).
    Skip,
    /// `lpj=N`: nobody calibrates, the boot CPU included; every CPU takes N
    /// (Linux's `lpj=` boot option).
    Lpj(u64),
}

/// Which incremental topology-mask algorithm runs on every online (seed 000).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Algo {
    /// `naive`, powerpc before seed 000: for every level, scan every online CPU
    /// and ask the firmware tree about each one (`of_get_cpu_node` walk per
    /// query).
    Naive,
    /// `scoped`, after seed 000: CPU nodes indexed once, ids cached per CPU,
    /// scans limited to the enclosing group (the node, or tighter), whole
    /// groups skipped at once, siblings taken from the CPU node's thread list,
    /// and levels whose masks are identical consolidated (updated once). The
    /// outermost level(s), which have no enclosing group to scan, are found
    /// through an id-indexed table, as Linux does for node masks
    /// (`node_to_cpumask_map[nid]`).
    Scoped,
}

/// A strategy word that is not one of the accepted spellings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseStrategyError {
    /// What was written.
    pub value: String,
    /// The accepted spellings.
    pub expected: &'static str,
}

impl fmt::Display for ParseStrategyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "'{}' is not one of {}", self.value, self.expected)
    }
}

impl core::error::Error for ParseStrategyError {}

impl Kick {
    /// `serial` or `parallel`.
    pub fn name(self) -> &'static str {
        match self {
            Kick::Serial => "serial",
            Kick::Parallel => "parallel",
        }
    }
}

impl Algo {
    /// `naive` or `scoped`.
    pub fn name(self) -> &'static str {
        match self {
            Algo::Naive => "naive",
            Algo::Scoped => "scoped",
        }
    }
}

impl Calibrate {
    /// The accepted spellings, for error messages and help text.
    pub const EXPECTED: &'static str =
        "serial, parallel, once-per-package, skip, lpj=N (N from 1 to 69273666)";
}

/// The guests' clock tick: Debian's kernels are built with CONFIG_HZ=250,
/// and the manycore kernel uses the same so that `lpj=` means the same on
/// both command lines.
pub const HZ: u64 = 250;

/// Largest loops-per-jiffy value accepted (`lpj=N` on the kernel command
/// line, `--calibrate lpj=N`, `qemu --lpj`): x86 Linux's `__const_udelay`
/// multiplies lpj by HZ/4 in a 32-bit register (`mull`), so above
/// (2^32 - 1) / (HZ/4) the product wraps and a guest's delays stop
/// following lpj. At [`HZ`] that is 69273666, the delay loop of a 17 GHz
/// TSC.
pub const MAX_LPJ: u64 = 0xffff_ffff / (HZ / 4);

/// The N of `lpj=N`: a whole number from 1 to [`MAX_LPJ`].
pub fn parse_lpj(s: &str) -> Option<u64> {
    s.parse().ok().filter(|n| (1..=MAX_LPJ).contains(n))
}

/// The word of `all` whose name is `s`.
fn parse_word<T: Copy>(
    s: &str,
    all: &[T],
    name: impl Fn(T) -> &'static str,
    expected: &'static str,
) -> Result<T, ParseStrategyError> {
    all.iter()
        .copied()
        .find(|&v| name(v) == s)
        .ok_or_else(|| ParseStrategyError {
            value: s.to_string(),
            expected,
        })
}

impl FromStr for Kick {
    type Err = ParseStrategyError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let all = [Kick::Serial, Kick::Parallel];
        parse_word(s, &all, Kick::name, "serial, parallel")
    }
}

impl FromStr for Algo {
    type Err = ParseStrategyError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_word(s, &[Algo::Naive, Algo::Scoped], Algo::name, "naive, scoped")
    }
}

impl FromStr for Calibrate {
    type Err = ParseStrategyError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || ParseStrategyError {
            value: s.to_string(),
            expected: Calibrate::EXPECTED,
        };
        match s {
            "serial" => Ok(Calibrate::Serial),
            "parallel" => Ok(Calibrate::Parallel),
            "once-per-package" => Ok(Calibrate::OncePerPackage),
            "skip" => Ok(Calibrate::Skip),
            _ => parse_lpj(s.strip_prefix("lpj=").ok_or_else(err)?)
                .map(Calibrate::Lpj)
                .ok_or_else(err),
        }
    }
}

impl fmt::Display for Kick {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for Algo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for Calibrate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Calibrate::Serial => f.write_str("serial"),
            Calibrate::Parallel => f.write_str("parallel"),
            Calibrate::OncePerPackage => f.write_str("once-per-package"),
            Calibrate::Skip => f.write_str("skip"),
            Calibrate::Lpj(n) => write!(f, "lpj={n}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;
    use proptest::prelude::*;

    #[test]
    fn spellings_round_trip() {
        for s in [
            "serial",
            "parallel",
            "once-per-package",
            "skip",
            "lpj=4533490",
        ] {
            assert_eq!(s.parse::<Calibrate>().unwrap().to_string(), s);
        }
        for s in ["serial", "parallel"] {
            assert_eq!(s.parse::<Kick>().unwrap().to_string(), s);
        }
        for s in ["naive", "scoped"] {
            assert_eq!(s.parse::<Algo>().unwrap().to_string(), s);
        }
    }

    /// The bound is the largest lpj whose product with Linux's factor fits
    /// the 32 bits `mull` multiplies, and the help text names it. The factor
    /// is Linux's, not ours: arch/x86/lib/delay.c `__const_udelay` takes
    /// `loops_per_jiffy * (HZ/4)` as a u32, and HZ/4 is 62 in C's integer
    /// division under CONFIG_HZ_250.
    #[test]
    fn the_lpj_bound_is_the_largest_that_fits_32_bits() {
        assert_eq!(HZ / 4, 62, "HZ is no longer Debian's CONFIG_HZ_250");
        assert!(MAX_LPJ * 62 <= u32::MAX as u64);
        assert!((MAX_LPJ + 1) * 62 > u32::MAX as u64);
        assert!(Calibrate::EXPECTED.contains(&format!("to {MAX_LPJ})")));
        assert_eq!(parse_lpj("69273666"), Some(MAX_LPJ));
        for bad in [
            "0",
            "69273667",
            "4294967296",
            "18446744073709551615",
            "-1",
            "1.5",
        ] {
            assert_eq!(parse_lpj(bad), None, "{bad}");
        }
    }

    #[test]
    fn bad_words_list_the_accepted_ones() {
        let e = "lpj=0".parse::<Calibrate>().unwrap_err();
        assert_eq!(e.expected, Calibrate::EXPECTED);
        assert!(e.to_string().contains("'lpj=0'"));
        assert_eq!(
            "fast".parse::<Kick>().unwrap_err().expected,
            "serial, parallel"
        );
        assert_eq!(
            "smart".parse::<Algo>().unwrap_err().expected,
            "naive, scoped"
        );
        // The words are exact: no case folding, no surrounding blanks.
        assert!("Serial".parse::<Kick>().is_err());
        assert!(" skip".parse::<Calibrate>().is_err());
    }

    proptest! {
        /// Fuzz: any string either parses to a value that prints back to one
        /// that parses to the same value, or yields an error quoting it; never
        /// a panic.
        #[test]
        fn parsers_never_panic(s in ".{0,24}") {
            match s.parse::<Calibrate>() {
                // "lpj=007" is accepted and normalised; compare values, not text.
                Ok(c) => prop_assert_eq!(c.to_string().parse::<Calibrate>().unwrap(), c),
                Err(e) => prop_assert_eq!(e.value, s.clone()),
            }
            if let Ok(k) = s.parse::<Kick>() {
                prop_assert_eq!(k.to_string(), s.clone());
            }
            if let Ok(a) = s.parse::<Algo>() {
                prop_assert_eq!(a.to_string(), s);
            }
        }

        #[test]
        fn lpj_values_parse(n in 1u64..=MAX_LPJ) {
            prop_assert_eq!(format!("lpj={n}").parse::<Calibrate>().unwrap(), Calibrate::Lpj(n));
        }

        /// Past MAX_LPJ, x86 Linux's delays wrap: refused, up to u64::MAX.
        #[test]
        fn lpj_values_past_the_bound_are_refused(n in MAX_LPJ + 1..=u64::MAX) {
            let text = format!("lpj={n}");
            prop_assert!(text.parse::<Calibrate>().is_err(), "{} accepted", text);
        }
    }
}
