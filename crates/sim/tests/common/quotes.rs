//! The log lines a record row quotes in its `measured` text, each between
//! backticks as the source prints it
//! (`` `[    0.003461] smp: Bringing up secondary CPUs ...` ``).

/// One quoted log line: its printk stamp and what follows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub stamp: f64,
    pub text: String,
}

/// The quoted lines of a `measured` text: every backtick-delimited span.
pub fn quoted(measured: &str) -> Result<Vec<Line>, String> {
    let spans: Vec<&str> = measured.split('`').collect();
    if spans.len().is_multiple_of(2) {
        return Err("an unpaired backtick".to_string());
    }
    spans
        .iter()
        .skip(1)
        .step_by(2)
        .map(|span| {
            let rest = span
                .strip_prefix('[')
                .ok_or_else(|| format!("quote '{span}' is not a stamped log line"))?;
            let (stamp, text) = rest
                .split_once("] ")
                .ok_or_else(|| format!("quote '{span}' has no ']' after its stamp"))?;
            let stamp = stamp
                .trim()
                .parse()
                .map_err(|_| format!("quote '{span}': '{stamp}' is not a stamp"))?;
            Ok(Line {
                stamp,
                text: text.to_string(),
            })
        })
        .collect()
}

/// The CPU number of a line that starts "CPU<n>" followed by `rest`.
fn cpu_then(text: &str, rest: &str) -> Option<u32> {
    let digits = text.strip_prefix("CPU")?;
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    digits[end..]
        .starts_with(rest)
        .then(|| digits[..end].parse().ok())?
}

/// n of an arm64 AP's 'CPUn: Booted secondary processor' line.
pub fn booted(text: &str) -> Option<u32> {
    cpu_then(text, ": Booted secondary processor")
}

/// n of an arm64 AP's 'Detected ... I-cache on CPUn' line, its first.
pub fn detected(text: &str) -> Option<u32> {
    let (head, cpu) = text.split_once(" I-cache on ")?;
    head.starts_with("Detected ")
        .then(|| cpu_then(cpu, ""))
        .flatten()
}
