//! The record read as plain TOML, for the tests that recompute its figures
//! from its own quoted text rather than through `sim::record`'s parser.
use sim::record::RECORD_TOML;
use toml::{Table, Value};

/// Every `[[row]]` of the record, as a table.
pub fn rows() -> Vec<Table> {
    let file: Table = toml::from_str(RECORD_TOML).unwrap();
    let Some(Value::Array(rows)) = file.get("row") else {
        panic!("no [[row]] in the record");
    };
    rows.iter()
        .map(|r| r.as_table().expect("a row is a table").clone())
        .collect()
}

/// A number the record writes as a float or an integer.
pub fn float(v: &Value) -> f64 {
    v.as_float()
        .or_else(|| v.as_integer().map(|i| i as f64))
        .unwrap_or_else(|| panic!("{v:?} is not a number"))
}

/// The list of numbers under `key`, empty when the row has none.
pub fn floats(row: &Table, key: &str) -> Vec<f64> {
    row.get(key)
        .map(|v| v.as_array().unwrap().iter().map(float).collect())
        .unwrap_or_default()
}
