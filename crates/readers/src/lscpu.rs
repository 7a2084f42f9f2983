//! lscpu text reader and summary writer. (Being written.)
use crate::Error;
use topology::Topology;

/// Parses lscpu's human-readable output; `source` names the input in errors.
pub fn parse(text: &str, source: &str) -> Result<Topology, Error> {
    let _ = text;
    Err(Error::new(source, "lscpu reader not implemented yet"))
}

/// Prints lscpu's summary lines for the fields the model holds.
pub fn summary(topology: &Topology) -> String {
    format!("CPU(s): {}\n", topology.possible.weight())
}
