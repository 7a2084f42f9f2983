//! The bring-up strategies the seeds compare, and their command-line spellings.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

/// How the boot CPU wakes the secondary CPUs (seed 003).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kick {
    /// Kick one CPU, wait until it is online, then kick the next (Linux before 6.5).
    Serial,
    /// Kick every CPU first, then complete each one in order (seed 003, Linux 6.5's
    /// `CPUHP_BP_KICK_AP` prefix): the APs' start-up latencies overlap.
    Parallel,
}

/// How each secondary CPU obtains its delay-loop calibration (seed 002).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "mode", content = "lpj")]
pub enum Calibrate {
    /// Each AP calibrates before it reports in; the boot CPU waits for it.
    Serial,
    /// Each AP calibrates after it is online, all at once; "Brought up" waits for
    /// the last one (seed 002's patch).
    Parallel,
    /// The first AP of each package calibrates, the rest take its value
    /// (`calibrate_delay_is_known()`). Not "skip": in the kernel's command
    /// line `calibrate=skip` means nobody calibrates, which here is
    /// [`Calibrate::Lpj`].
    OncePerPackage,
    /// `lpj=N` on the command line: nobody calibrates.
    Lpj(u64),
}

/// Which incremental topology-mask algorithm runs on every online (seed 000).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Masks {
    /// Scan every online CPU with firmware-topology look-ups (powerpc before seed 000).
    Naive,
    /// Scan only the node, add sibling sets whole, merge duplicate levels (seed 000).
    Scoped,
}

/// One complete bring-up strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Strategy {
    /// Kick order.
    pub kick: Kick,
    /// Delay calibration.
    pub calibrate: Calibrate,
    /// Topology-mask algorithm.
    pub masks: Masks,
}

impl Default for Strategy {
    /// Linux before the seeds' patches: serial kick, serial calibration, naive masks.
    fn default() -> Self {
        Strategy {
            kick: Kick::Serial,
            calibrate: Calibrate::Serial,
            masks: Masks::Naive,
        }
    }
}

/// A strategy word the command line did not recognise.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{option}: '{value}' is not one of {expected}")]
pub struct ParseStrategyError {
    /// The option being parsed (`--strategy`, `--calibrate`, `--masks`).
    pub option: &'static str,
    /// What the user wrote.
    pub value: String,
    /// The accepted spellings.
    pub expected: &'static str,
}

impl FromStr for Kick {
    type Err = ParseStrategyError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "serial" => Ok(Kick::Serial),
            "parallel" => Ok(Kick::Parallel),
            _ => Err(ParseStrategyError {
                option: "--strategy",
                value: s.to_string(),
                expected: "serial, parallel",
            }),
        }
    }
}

impl FromStr for Calibrate {
    type Err = ParseStrategyError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || ParseStrategyError {
            option: "--calibrate",
            value: s.to_string(),
            expected: "serial, parallel, once-per-package, lpj=N (N a positive integer)",
        };
        match s {
            "serial" => Ok(Calibrate::Serial),
            "parallel" => Ok(Calibrate::Parallel),
            "once-per-package" => Ok(Calibrate::OncePerPackage),
            _ => {
                let n = s.strip_prefix("lpj=").ok_or_else(err)?;
                match n.parse::<u64>() {
                    Ok(v) if v > 0 => Ok(Calibrate::Lpj(v)),
                    _ => Err(err()),
                }
            }
        }
    }
}

impl FromStr for Masks {
    type Err = ParseStrategyError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "naive" => Ok(Masks::Naive),
            "scoped" => Ok(Masks::Scoped),
            _ => Err(ParseStrategyError {
                option: "--masks",
                value: s.to_string(),
                expected: "naive, scoped",
            }),
        }
    }
}

impl fmt::Display for Kick {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kick::Serial => "serial",
            Kick::Parallel => "parallel",
        })
    }
}

impl fmt::Display for Calibrate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Calibrate::Serial => f.write_str("serial"),
            Calibrate::Parallel => f.write_str("parallel"),
            Calibrate::OncePerPackage => f.write_str("once-per-package"),
            Calibrate::Lpj(n) => write!(f, "lpj={n}"),
        }
    }
}

impl fmt::Display for Masks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Masks::Naive => "naive",
            Masks::Scoped => "scoped",
        })
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "kick={} calibrate={} masks={}",
            self.kick, self.calibrate, self.masks
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn spellings_round_trip() {
        for s in ["serial", "parallel", "once-per-package", "lpj=4533490"] {
            assert_eq!(s.parse::<Calibrate>().unwrap().to_string(), s);
        }
        for s in ["serial", "parallel"] {
            assert_eq!(s.parse::<Kick>().unwrap().to_string(), s);
        }
        for s in ["naive", "scoped"] {
            assert_eq!(s.parse::<Masks>().unwrap().to_string(), s);
        }
    }

    #[test]
    fn bad_words_name_the_option() {
        let e = "lpj=0".parse::<Calibrate>().unwrap_err();
        assert_eq!(e.option, "--calibrate");
        assert!(e.to_string().contains("'lpj=0'"));
        assert_eq!("fast".parse::<Kick>().unwrap_err().option, "--strategy");
        assert_eq!("smart".parse::<Masks>().unwrap_err().option, "--masks");
    }

    proptest! {
        /// Fuzz: any string either parses to a value that prints back to itself or
        /// yields an error naming the option; never a panic.
        #[test]
        fn calibrate_parser_never_panics(s in ".{0,24}") {
            match s.parse::<Calibrate>() {
                Ok(c) => {
                    // "lpj=007" is accepted and normalised; compare values, not text.
                    prop_assert_eq!(c.to_string().parse::<Calibrate>().unwrap(), c);
                }
                Err(e) => prop_assert_eq!(e.option, "--calibrate"),
            }
            let _ = s.parse::<Kick>();
            let _ = s.parse::<Masks>();
        }

        #[test]
        fn lpj_values_parse(n in 1u64..u64::MAX) {
            prop_assert_eq!(format!("lpj={n}").parse::<Calibrate>().unwrap(), Calibrate::Lpj(n));
        }
    }
}
