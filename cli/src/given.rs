//! Decimal options read from their text, so that a refusal quotes the value
//! as typed: printed back from an `f64`, 2^53+1 reads 9007199254740992 and
//! 2^64-1 reads 18446744073709552000, a value nobody gave.

use anyhow::{anyhow, Result};

/// `text`, the value of `option`, as a number of `what` ("cores").
pub fn number(option: &str, text: &str, what: &str) -> Result<f64> {
    text.trim()
        .parse()
        .map_err(|_| anyhow!("{option} {text}: not a number of {what}"))
}
