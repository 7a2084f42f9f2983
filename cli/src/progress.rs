//! Progress display for long runs (QEMU boots, naive-mask hotplug, simulated
//! bring-up of thousands of CPUs, validation): `indicatif` bars with rate and
//! time left, drawn on standard error only when it is a terminal and the user
//! did not ask for `--quiet`.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Whether progress may be drawn at all.
fn wanted(quiet: bool) -> bool {
    !quiet && std::io::stderr().is_terminal()
}

/// A bar over `total` items ("CPUs", "cycles"), hidden when not wanted.
pub fn bar(quiet: bool, total: u64, what: &str, unit: &str) -> ProgressBar {
    if !wanted(quiet) {
        return ProgressBar::hidden();
    }
    let style = ProgressStyle::with_template(&format!(
        "{{msg}} [{{bar:30}}] {{pos}}/{{len}} {unit} ({{per_sec}}, {{eta}} left)"
    ))
    .expect("a valid template")
    .progress_chars("=> ");
    let pb = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    pb.set_style(style);
    pb.set_message(what.to_string());
    pb
}

/// A spinner with elapsed time for work of unknown length, ticking on its
/// own; hidden when not wanted.
pub fn spinner(quiet: bool, what: &str) -> ProgressBar {
    if !wanted(quiet) {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new_spinner();
    pb.set_style(
        ProgressStyle::with_template("{spinner} {msg} ({elapsed})").expect("a valid template"),
    );
    pb.set_message(what.to_string());
    pb.enable_steady_tick(Duration::from_millis(120));
    pb
}
