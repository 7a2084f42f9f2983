//! lscpu's text forms: its cpulists (with `a-b:stride` runs), its human-readable
//! sizes, and the parsing of both back.
//!
//! Hand-written because these are util-linux's own formats (`lib/cpuset.c`
//! `cpulist_create`, `lib/strutils.c` `size_to_human_string`), which no crate
//! reproduces; the summary writer must match lscpu byte for byte.

use cpumask::CpuMask;

/// Formats `mask` the way lscpu prints cpulists: consecutive runs as `a-b`,
/// runs of a constant stride greater than one as `a-b:stride`, lone CPUs as
/// `a`, joined by commas (`0-62:2`, `0-7,32-39`, `6,7,10,11,14,15`).
pub fn cpulist(mask: &CpuMask) -> String {
    let cpus: Vec<usize> = mask.iter().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < cpus.len() {
        let a = cpus[i];
        if i + 1 == cpus.len() {
            push_item(&mut out, &a.to_string());
            break;
        }
        let stride = cpus[i + 1] - a;
        // Extend the run while the stride holds.
        let mut j = i + 1;
        while j + 1 < cpus.len() && cpus[j + 1] - cpus[j] == stride {
            j += 1;
        }
        let b = cpus[j];
        if b - a == stride {
            // Only two CPUs: print the first alone and let the second start
            // the next run, as util-linux does.
            push_item(&mut out, &a.to_string());
            i += 1;
        } else if stride == 1 {
            push_item(&mut out, &format!("{a}-{b}"));
            i = j + 1;
        } else {
            push_item(&mut out, &format!("{a}-{b}:{stride}"));
            i = j + 1;
        }
    }
    out
}

fn push_item(out: &mut String, item: &str) {
    if !out.is_empty() {
        out.push(',');
    }
    out.push_str(item);
}

/// Parses a cpulist as lscpu or the kernel writes it. Besides the kernel's
/// forms (`a`, `a-b`, `a-b:used/group`) it accepts lscpu's `a-b:stride`, which
/// means every `stride`-th CPU from `a` to `b` (the kernel's `a-b:1/stride`).
pub fn parse_cpulist(text: &str) -> Result<CpuMask, String> {
    let text = text.trim();
    let mut kernel_form = String::with_capacity(text.len() + 8);
    for (i, item) in text.split(',').enumerate() {
        if i > 0 {
            kernel_form.push(',');
        }
        let item = item.trim();
        match item.split_once(':') {
            Some((range, stride)) if !stride.contains('/') => {
                kernel_form.push_str(range);
                kernel_form.push_str(":1/");
                kernel_form.push_str(stride);
            }
            _ => kernel_form.push_str(item),
        }
    }
    CpuMask::parse_list(&kernel_form).map_err(|e| format!("bad cpulist '{text}': {e}"))
}

/// Formats a byte count like lscpu's cache lines do (util-linux
/// `size_to_human_string` with a space and three-letter binary suffixes):
/// the largest power-of-1024 unit not above the value, one decimal rounded
/// half up and dropped when zero: `6 MiB`, `3.8 MiB`, `512 KiB`, `0 B`.
pub fn human_size(bytes: u64) -> String {
    let exp = size_exponent(bytes);
    let unit = b"BKMGTPE"[(exp / 10) as usize] as char;
    let (mut whole, rest) = if exp == 0 {
        (bytes, 0)
    } else {
        (bytes >> exp, bytes & ((1u64 << exp) - 1))
    };
    let mut tenths = 0;
    if rest != 0 {
        // Three decimal digits, computed as util-linux does (including its
        // guard against overflow for the largest units).
        let thousandths = if rest >= u64::MAX / 1000 {
            ((rest / 1024) * 1000) / (1u64 << (exp - 10))
        } else {
            (rest * 1000) / (1u64 << exp)
        };
        tenths = (thousandths + 50) / 100;
        if tenths == 10 {
            whole += 1;
            tenths = 0;
        }
    }
    let suffix = if unit == 'B' {
        String::from("B")
    } else {
        format!("{unit}iB")
    };
    if tenths != 0 {
        format!("{whole}.{tenths} {suffix}")
    } else {
        format!("{whole} {suffix}")
    }
}

/// The exponent of the largest power-of-1024 unit not above `n` (0 for bytes).
fn size_exponent(n: u64) -> u32 {
    let mut shift = 10;
    while shift <= 60 {
        if n < (1u64 << shift) {
            break;
        }
        shift += 10;
    }
    shift - 10
}

/// A cache size as an lscpu line states it.
#[derive(Debug, Clone, PartialEq)]
pub struct SizeText {
    /// The number and unit as written, normalised to a `.` decimal point and one
    /// space before the unit (`3.8 MiB`, `64 K`).
    pub text: String,
    /// The value in bytes as written (before any rounding lscpu did).
    pub approx_bytes: f64,
    /// Whether the text is exact (an integer count of its unit) rather than a
    /// rounded human-readable figure.
    pub exact: bool,
    /// Whether the unit was a three-letter binary one (`KiB`), i.e. modern lscpu.
    pub modern_unit: bool,
    /// The `(N instances)` count, when given: then the size is the sum over
    /// all instances; without it, it is the size of one instance.
    pub instances: Option<u32>,
}

/// Parses a cache value: `64K`, `10240K`, `6 MiB (192 instances)`,
/// `2.5 MiB (80 instances)`, `16 MiB`, or a `--bytes` figure `32768 (2 instances)`.
pub fn parse_size(value: &str) -> Result<SizeText, String> {
    let value = value.trim();
    let (size_part, instances) = match value.find('(') {
        Some(open) => {
            let inner = value[open + 1..]
                .strip_suffix(')')
                .ok_or_else(|| format!("unclosed '(' in cache size '{value}'"))?;
            let count = inner
                .trim()
                .strip_suffix("instances")
                .or_else(|| inner.trim().strip_suffix("instance"))
                .ok_or_else(|| format!("expected '(N instances)' in '{value}'"))?
                .trim();
            let n: u32 = count
                .parse()
                .map_err(|_| format!("bad instance count '{count}' in '{value}'"))?;
            if n == 0 {
                return Err(format!("zero instances in '{value}'"));
            }
            (value[..open].trim(), Some(n))
        }
        None => (value, None),
    };
    let digits_end = size_part
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ','))
        .unwrap_or(size_part.len());
    let number = size_part[..digits_end].replace(',', ".");
    let unit = size_part[digits_end..].trim();
    if number.is_empty() || number.starts_with('.') || number.ends_with('.') {
        return Err(format!("cache size '{value}' does not start with a number"));
    }
    let shift = match unit {
        "" | "B" => 0,
        "K" | "KiB" | "KB" | "k" => 10,
        "M" | "MiB" | "MB" => 20,
        "G" | "GiB" | "GB" => 30,
        "T" | "TiB" | "TB" => 40,
        _ => return Err(format!("unknown size unit '{unit}' in '{value}'")),
    };
    let amount: f64 = number
        .parse()
        .map_err(|_| format!("bad number '{number}' in cache size '{value}'"))?;
    let exact = !number.contains('.');
    if exact && number.parse::<u64>().is_err() {
        return Err(format!("cache size '{value}' is too large"));
    }
    let approx_bytes = amount * (1u64 << shift) as f64;
    if !approx_bytes.is_finite() || approx_bytes >= u64::MAX as f64 / 2.0 {
        return Err(format!("cache size '{value}' is too large"));
    }
    Ok(SizeText {
        text: if unit.is_empty() {
            number
        } else {
            format!("{number} {unit}")
        },
        approx_bytes,
        exact,
        modern_unit: unit.ends_with("iB"),
        instances,
    })
}

impl SizeText {
    /// Whether lscpu would print a sum of `total` bytes as this text: the
    /// same figure from `human_size` for its one-decimal forms, else within
    /// half a unit of the last digit written.
    pub fn prints_as(&self, total: u64) -> bool {
        let number = self.text.split(' ').next().unwrap_or("");
        let decimals = number.split_once('.').map_or(0, |(_, d)| d.len());
        if self.modern_unit && decimals <= 1 {
            return human_size(total) == self.text;
        }
        let Some(unit) = self
            .unit_bytes()
            .or(Some(1).filter(|_| !self.text.contains(' ')))
        else {
            return false;
        };
        let half_digit = unit as f64 * 0.5 / 10f64.powi(decimals as i32);
        (total as f64 - self.approx_bytes).abs() <= half_digit
    }

    fn unit_bytes(&self) -> Option<u64> {
        let unit = self.text.split(' ').nth(1)?;
        Some(match unit.chars().next()? {
            'B' => 1,
            'K' | 'k' => 1 << 10,
            'M' => 1 << 20,
            'G' => 1 << 30,
            'T' => 1 << 40,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpulist_matches_util_linux_forms() {
        // Forms printed in util-linux's expected outputs.
        let m = parse_cpulist("0-62:2").unwrap();
        assert_eq!(m.weight(), 32);
        assert_eq!(cpulist(&m), "0-62:2");
        let m = parse_cpulist("6,7,10,11,14,15").unwrap();
        assert_eq!(cpulist(&m), "6,7,10,11,14,15");
        let m = parse_cpulist("1-61:4").unwrap();
        assert_eq!(m.iter().take(3).collect::<Vec<_>>(), vec![1, 5, 9]);
        assert_eq!(cpulist(&m), "1-61:4");
        assert_eq!(cpulist(&parse_cpulist("0,1").unwrap()), "0,1");
        assert_eq!(cpulist(&parse_cpulist("0,2").unwrap()), "0,2");
        assert_eq!(cpulist(&parse_cpulist("0,2,4").unwrap()), "0-4:2");
        assert_eq!(cpulist(&CpuMask::new()), "");
        assert!(parse_cpulist("3-1").is_err());
        assert!(parse_cpulist("x").is_err());
    }

    #[test]
    fn human_size_matches_seed_and_corpus_figures() {
        // seed 001: 192 × 32 KiB, 192 × 48 KiB, 80 × 32 KiB, 80 × 48 KiB.
        assert_eq!(human_size(192 * 32 * 1024), "6 MiB");
        assert_eq!(human_size(192 * 48 * 1024), "9 MiB");
        assert_eq!(human_size(80 * 32 * 1024), "2.5 MiB");
        assert_eq!(human_size(80 * 48 * 1024), "3.8 MiB");
        // util-linux lscpu-x86_64-64cpu: 4 × 18 MiB L3.
        assert_eq!(human_size((4 * 18) << 20), "72 MiB");
        assert_eq!(human_size(768 << 10), "768 KiB");
        assert_eq!(human_size(0), "0 B");
        assert_eq!(human_size(1023), "1023 B");
    }

    #[test]
    fn sizes_print_back_as_lscpu_prints_them() {
        // seed 001: 80 × 48 KiB prints as 3.8 MiB, 80 × 50 KiB (3.9 MiB) does not.
        let s = parse_size("3.8 MiB (80 instances)").unwrap();
        assert!(s.prints_as(80 * 48 * 1024));
        assert!(!s.prints_as(80 * 50 * 1024));
        assert_eq!(s.instances, Some(80));
        let s = parse_size("10240K").unwrap();
        assert!(s.prints_as(10240 * 1024));
        assert_eq!(s.instances, None);
        let s = parse_size("1.25 MiB").unwrap();
        assert!(s.prints_as(1280 * 1024) && !s.prints_as(1296 * 1024));
        assert!(parse_size("abc").is_err());
        assert!(parse_size("5 XB").is_err());
        assert!(parse_size("5 MiB (0 instances)").is_err());
    }
}
