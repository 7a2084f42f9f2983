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

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.source, line, self.message),
            None => write!(f, "{}: {}", self.source, self.message),
        }
    }
}

impl std::error::Error for Error {}
