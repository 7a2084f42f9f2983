//! The one error type of every reader: what went wrong, and where.

use std::fmt;

/// A reader failure naming the input (file, archive member or field) and, when it
/// applies, the 1-based line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// The file, archive member, or other input the problem is in.
    pub source: String,
    /// 1-based line number within `source`, when meaningful.
    pub line: Option<usize>,
    /// What is wrong, in words.
    pub message: String,
}

impl Error {
    /// An error in `source` as a whole.
    pub fn new(source: impl Into<String>, message: impl Into<String>) -> Self {
        Error {
            source: source.into(),
            line: None,
            message: message.into(),
        }
    }

    /// An error at `line` of `source`.
    pub fn at_line(source: impl Into<String>, line: usize, message: impl Into<String>) -> Self {
        Error {
            source: source.into(),
            line: Some(line),
            message: message.into(),
        }
    }
}

/// `text` with every control character (and every Unicode bidirectional
/// override, which reorders what a terminal shows) written as a Rust-style
/// escape: errors echo input, and input must not drive the terminal that
/// shows them.
pub fn escape_controls(text: &str) -> std::borrow::Cow<'_, str> {
    let hidden =
        |c: char| c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
    if !text.chars().any(hidden) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if hidden(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (source, message) = (
            escape_controls(&self.source),
            escape_controls(&self.message),
        );
        match self.line {
            Some(line) => write!(f, "{source}:{line}: {message}"),
            None => write!(f, "{source}: {message}"),
        }
    }
}

impl std::error::Error for Error {}
