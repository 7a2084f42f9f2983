//! `lscpu -J` (the summary) and `lscpu -J -e` (the CPU table) as JSON, read
//! by turning each into the text lscpu prints for the same columns and fields,
//! so that one set of rules reads both.
//!
//! The summary is `{"lscpu": [{"field": "CPU(s):", "data": "8"}, ...]}`;
//! util-linux 2.37 and later nest fields under `children` as the terminal
//! layout indents them, and older ones print every value as a string. The
//! table is `{"cpus": [{"cpu": 0, "core": 0, ..., "online": true}, ...]}`,
//! whose values are numbers, booleans or null in newer versions and strings
//! (`"yes"`, `"-"`) in older ones. A file may hold both, one after the other
//! (`lscpu -J; lscpu -J -e`); `lscpu -C -J`'s `caches` table says nothing the
//! summary does not and is skipped.
//!
//! The text holds one field or CPU row a line, and each of its lines keeps
//! the line of the JSON where that field's `"field"` key or that row's
//! `"cpu"` key stands, so that errors name lines of the JSON file.

use serde_json::Value;

use crate::Error;

/// Whether `text` is lscpu's JSON rather than its text: lscpu's text never
/// starts with a brace.
pub fn is_json(text: &str) -> bool {
    text.trim_start().starts_with('{')
}

/// The lscpu text equivalent to the JSON `text`, and for each of its lines
/// the line of `text` it came from.
pub fn to_text(text: &str, source: &str) -> Result<(String, Vec<usize>), Error> {
    let mut out = Layout::default();
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    let mut keys = KeyLines::new(text);
    let mut documents = 0usize;
    while let Some(value) = stream.next() {
        let value = value
            .map_err(|e| Error::at_line(source, e.line(), format!("not valid lscpu JSON: {e}")))?;
        documents += 1;
        let start = line_at(text, stream.byte_offset());
        let Value::Object(doc) = value else {
            return Err(Error::at_line(
                source,
                start,
                "lscpu JSON is an object with an \"lscpu\" or \"cpus\" array; this is not an object",
            ));
        };
        let mut known = false;
        if let Some(fields) = doc.get("lscpu") {
            known = true;
            summary(fields, 0, &mut out, &mut keys, source)?;
        }
        if let Some(rows) = doc.get("cpus") {
            known = true;
            table(rows, &mut out, &mut keys, source)?;
        }
        known |= doc.contains_key("caches");
        if !known {
            return Err(Error::at_line(
                source,
                start,
                "a JSON object with no \"lscpu\", \"cpus\" or \"caches\" array: not lscpu -J output?",
            ));
        }
    }
    if documents == 0 {
        return Err(Error::new(source, "no JSON value: not lscpu -J output?"));
    }
    Ok(out.finish())
}

/// The 1-based line of byte `pos` of `text`.
fn line_at(text: &str, pos: usize) -> usize {
    1 + text.as_bytes()[..pos.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
}

/// Finds, in document order, the lines of the `"field"` and `"cpu"` keys.
/// A key is its quoted name followed by a colon; inside a JSON string a quote
/// is escaped, so no string value can look like one.
struct KeyLines<'a> {
    text: &'a str,
    /// Byte offset after the last key found, per key name.
    field_from: usize,
    cpu_from: usize,
}

impl<'a> KeyLines<'a> {
    fn new(text: &'a str) -> Self {
        KeyLines {
            text,
            field_from: 0,
            cpu_from: 0,
        }
    }

    /// The line of the next `"name":` key at or after `*from`.
    fn next(text: &str, from: &mut usize, name: &str) -> Option<usize> {
        let needle = format!("\"{name}\"");
        while let Some(i) = text.get(*from..)?.find(&needle) {
            let at = *from + i;
            *from = at + needle.len();
            if text[*from..].trim_start().starts_with(':') {
                return Some(line_at(text, at));
            }
        }
        None
    }

    fn field(&mut self) -> Option<usize> {
        Self::next(self.text, &mut self.field_from, "field")
    }

    fn cpu(&mut self) -> Option<usize> {
        Self::next(self.text, &mut self.cpu_from, "cpu")
    }
}

/// The text's lines in order, each with the JSON line it came from.
#[derive(Default)]
struct Layout {
    lines: Vec<(String, usize)>,
    last: usize,
}

impl Layout {
    fn push(&mut self, line: String, json_line: usize) {
        self.last = self.last.max(json_line);
        self.lines.push((line, json_line));
    }

    fn finish(self) -> (String, Vec<usize>) {
        let mut text = String::new();
        let mut origin = Vec::with_capacity(self.lines.len());
        for (line, json_line) in self.lines {
            text.push_str(&line);
            text.push('\n');
            origin.push(json_line);
        }
        (text, origin)
    }
}

/// An error about the text made from the JSON, moved to the JSON's lines:
/// its line, and each "line N" its message names.
pub fn relocate(mut e: Error, origin: &[usize]) -> Error {
    let json_line = |n: usize| origin.get(n.wrapping_sub(1)).copied().unwrap_or(n);
    e.line = e.line.map(json_line);
    let mut message = String::with_capacity(e.message.len());
    let mut rest = e.message.as_str();
    while let Some(i) = rest.find("line ") {
        let (before, after) = rest.split_at(i + "line ".len());
        message.push_str(before);
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        match after[..digits].parse::<usize>() {
            Ok(n) => message.push_str(&json_line(n).to_string()),
            Err(_) => message.push_str(&after[..digits]),
        }
        rest = &after[digits..];
    }
    message.push_str(rest);
    e.message = message;
    e
}

/// A value lscpu printed as text: strings as they are, numbers and booleans
/// as written, null (a heading's empty data) as nothing.
fn scalar(v: &Value, what: &str, line: usize, source: &str) -> Result<String, Error> {
    match v {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(String::from(if *b { "yes" } else { "no" })),
        Value::Null => Ok(String::new()),
        _ => Err(Error::at_line(
            source,
            line,
            format!("{what} is a JSON array or object, expected text, a number or null"),
        )),
    }
}

/// The summary's fields, each as `Label: value` indented by its depth.
fn summary(
    fields: &Value,
    depth: usize,
    out: &mut Layout,
    keys: &mut KeyLines,
    source: &str,
) -> Result<(), Error> {
    let Value::Array(fields) = fields else {
        return Err(Error::new(
            source,
            "\"lscpu\" (or \"children\") is not an array of fields",
        ));
    };
    for f in fields {
        let line = keys.field().unwrap_or(out.last.max(1));
        let Value::Object(f) = f else {
            return Err(Error::at_line(
                source,
                line,
                "an lscpu field is not an object with \"field\" and \"data\"",
            ));
        };
        let label = match f.get("field") {
            Some(Value::String(s)) => s.as_str(),
            _ => {
                return Err(Error::at_line(
                    source,
                    line,
                    "an lscpu field has no \"field\" text",
                ))
            }
        };
        let data = match f.get("data") {
            Some(v) => scalar(v, &format!("the data of {label}"), line, source)?,
            None => String::new(),
        };
        // lscpu's labels end in a colon; one without is still a label.
        let colon = if label.ends_with(':') { "" } else { ":" };
        out.push(
            format!("{:indent$}{label}{colon} {data}", "", indent = 2 * depth),
            line,
        );
        if let Some(children) = f.get("children") {
            summary(children, depth + 1, out, keys, source)?;
        }
    }
    Ok(())
}

/// The CPU table as `lscpu -p` prints it: a `# ` header of the columns that
/// place a CPU (see [`placing`]), then a comma-separated row per CPU, `-`
/// where a value is null.
fn table(rows: &Value, out: &mut Layout, keys: &mut KeyLines, source: &str) -> Result<(), Error> {
    let Value::Array(rows) = rows else {
        return Err(Error::new(source, "\"cpus\" is not an array of CPU rows"));
    };
    let mut columns: Vec<String> = Vec::new();
    let mut lines = Vec::with_capacity(rows.len());
    for row in rows {
        let line = keys.cpu().unwrap_or(out.last.max(1));
        let Value::Object(row) = row else {
            return Err(Error::at_line(source, line, "a CPU row is not an object"));
        };
        if columns.is_empty() {
            columns = row.keys().filter(|k| placing(k)).cloned().collect();
        }
        let mut fields = Vec::with_capacity(columns.len());
        for c in &columns {
            let v = row.get(c).ok_or_else(|| {
                Error::at_line(
                    source,
                    line,
                    format!("this CPU row has no \"{c}\", which the first row has"),
                )
            })?;
            let text = scalar(v, &format!("column {c}"), line, source)?;
            // A comma would split the row; the reader then names the value.
            let text = text.replace(',', " ");
            fields.push(if text.is_empty() {
                String::from("-")
            } else {
                text
            });
        }
        lines.push((fields.join(","), line));
    }
    if let Some(first) = lines.first() {
        let header: Vec<String> = columns.iter().map(|c| column_name(c)).collect();
        out.push(format!("# {}", header.join(",")), first.1);
    }
    for (l, at) in lines {
        out.push(l, at);
    }
    Ok(())
}

/// Whether a table column says where a CPU is: its number, core, socket,
/// node, cluster, book, drawer, whether it is on-line, or its caches. The
/// others (frequencies, addresses, model names) may hold commas or spaces and
/// say nothing the reader uses.
fn placing(key: &str) -> bool {
    let name = column_name(key);
    matches!(
        key.to_ascii_lowercase().as_str(),
        "cpu" | "core" | "socket" | "node" | "cluster" | "book" | "drawer" | "online"
    ) || (name.contains('L') && super::scan::is_column(&name))
}

/// A JSON key as lscpu's text names the column: `l1d:l1i:l2` → `L1d:L1i:L2`
/// (cache names start with a capital L), anything else as it is (the table
/// compares other names without case).
fn column_name(key: &str) -> String {
    key.split(':')
        .map(|p| match p.strip_prefix('l') {
            Some(rest) if rest.starts_with(|c: char| c.is_ascii_digit()) => format!("L{rest}"),
            _ => p.to_string(),
        })
        .collect::<Vec<_>>()
        .join(":")
}
