//! How many cases a fuzz suite runs: its own count by default, so CI time
//! stays as it is, or more when `PROPTEST_CASES` asks for more (a long run
//! under `PROPTEST_CASES=20000`). A suite's count is set in code, which
//! proptest's own reading of the variable would not override.

pub fn fuzz_cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.trim().parse::<u32>().ok())
        .map_or(default, |asked| asked.max(default))
}
