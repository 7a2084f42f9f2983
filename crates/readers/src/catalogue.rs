//! The seeds' machines, built in. (Being written.)
use crate::Error;
use topology::Topology;

/// One catalogue entry.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    /// The name users pass to `--machine`.
    pub name: &'static str,
    /// One line describing the machine.
    pub summary: &'static str,
}

/// Every machine in the catalogue.
pub fn list() -> &'static [Entry] {
    &[]
}

/// Builds the named machine.
pub fn machine(name: &str) -> Result<Topology, Error> {
    Err(Error::new(
        format!("machine '{name}'"),
        "unknown machine; see `manycore topo --list-machines`",
    ))
}
