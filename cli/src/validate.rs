//! `manycore validate`: the simulator's predictions against the seeds' measurements.
use anyhow::Result;
use clap::Args;
use serde::Serialize;

use crate::boot::Format;

/// Fit the simulator's free parameters on some machines (the seeds' small ones,
/// one arm64 log of the public record), predict the others, and print both
/// groups, predicted against measured with the error.
#[derive(Args, Debug, Clone)]
pub struct ValidateArgs {
    /// Standard output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// No progress display.
    #[arg(long)]
    pub quiet: bool,
}

#[derive(Serialize)]
struct KnownMiss {
    case: &'static str,
    /// Each covered case with its documented error (percent; points for the
    /// placement engine's physc-change rows).
    errors: &'static [(&'static str, f64)],
    reason: &'static str,
}

#[derive(Serialize)]
struct Output<'a> {
    rows: &'a [sim::validate::Row],
    params: &'a [sim::validate::ParamRow],
    known_misses: Vec<KnownMiss>,
    /// Seed 001's lparstat rows, predicted by the placement engine (crates/place).
    placement: &'a [place::validate::Row],
}

/// Runs `manycore validate`.
pub fn run(args: &ValidateArgs) -> Result<()> {
    let spinner = crate::progress::spinner(args.quiet, "validating");
    let report =
        sim::validate::validate(&mut |case| spinner.set_message(format!("simulating {case}")))?;
    let placement =
        place::validate::validate(&mut |case| spinner.set_message(format!("placing {case}")))?;
    spinner.finish_and_clear();
    match args.format {
        Format::Text => crate::write_stdout(&format!(
            "{}\n{}",
            report.to_text(),
            place::validate::to_text(&placement)
        ))?,
        Format::Json => {
            let out = Output {
                rows: &report.rows,
                params: &report.params,
                known_misses: sim::validate::KNOWN_MISSES
                    .iter()
                    .map(|m| KnownMiss {
                        case: m.case,
                        errors: m.errors,
                        reason: m.why,
                    })
                    .chain(place::validate::KNOWN_MISSES.iter().map(|m| KnownMiss {
                        case: m.documented.0,
                        errors: std::slice::from_ref(&m.documented),
                        reason: m.why,
                    }))
                    .collect(),
                placement: &placement,
            };
            crate::write_stdout(&format!("{}\n", serde_json::to_string_pretty(&out)?))?;
        }
    }
    Ok(())
}
