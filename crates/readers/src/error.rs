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

/// The most characters of a message shown: messages echo the input they
/// refuse, and one bad line of any length must still give an error a person
/// can read (a 500 KB token gives a 500 KB message otherwise).
const SHOWN_CHARS: usize = 1024;
/// How many of those come from the message's end, which says why the echoed
/// text was refused ("..., expected a whole number").
const SHOWN_TAIL: usize = 256;

/// The most characters of one echoed value (a field, a token, an
/// attribute) a message quotes, and how many of those from its end.
const EXCERPT_CHARS: usize = 96;
const EXCERPT_TAIL: usize = 16;

/// `text` whole when it has at most `SHOWN_CHARS` characters; otherwise its
/// start and end with the count of characters left out between them.
pub fn bounded(text: &str) -> std::borrow::Cow<'_, str> {
    clipped(text, SHOWN_CHARS, SHOWN_TAIL)
}

/// One value of the input as a message quotes it: whole when short, else
/// its start and end with the count left out, so that a message quoting two
/// long values still shows its reason.
pub fn excerpt(text: &str) -> std::borrow::Cow<'_, str> {
    clipped(text, EXCERPT_CHARS, EXCERPT_TAIL)
}

fn clipped(text: &str, shown: usize, tail: usize) -> std::borrow::Cow<'_, str> {
    let total = text.chars().count();
    if total <= shown {
        return std::borrow::Cow::Borrowed(text);
    }
    let head = shown - tail;
    let left_out = total - shown;
    let start: String = text.chars().take(head).collect();
    let end: String = text.chars().skip(head + left_out).collect();
    std::borrow::Cow::Owned(format!(
        "{start}[... {left_out} of {total} characters left out ...]{end}"
    ))
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let source = escape_controls(&self.source);
        let escaped = escape_controls(&self.message);
        let message = bounded(&escaped);
        match self.line {
            Some(line) => write!(f, "{source}:{line}: {message}"),
            None => write!(f, "{source}: {message}"),
        }
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_message_keeps_its_start_and_end_and_counts_what_is_left_out() {
        let echo = "9".repeat(500_000);
        let e = Error::at_line("f", 2, format!("found \"{echo}\", expected a number"));
        let shown = e.to_string();
        assert!(shown.len() < 1200, "{} bytes", shown.len());
        assert!(shown.starts_with("f:2: found \"999"), "{shown}");
        assert!(shown.ends_with("999\", expected a number"), "{shown}");
        let total = 500_000 + "found \"\", expected a number".len();
        let left_out = total - 1024;
        assert!(shown.contains(&format!(
            "[... {left_out} of {total} characters left out ...]"
        )));
    }

    #[test]
    fn a_message_at_the_limit_is_whole() {
        let m = "é".repeat(SHOWN_CHARS);
        assert_eq!(bounded(&m), m.as_str());
        let over = bounded(&(m.clone() + "x")).into_owned();
        assert!(
            over.contains("[... 1 of 1025 characters left out ...]"),
            "{over}"
        );
    }
}
