//! hwloc XML v2 reader and writer. (Being written.)
use crate::Error;
use topology::Topology;

/// Reads hwloc XML; `source` names the input in errors.
pub fn read(text: &str, source: &str) -> Result<Topology, Error> {
    let _ = text;
    Err(Error::new(source, "XML reader not implemented yet"))
}

/// Writes hwloc XML v2 that `lstopo --input` accepts.
pub fn write(topology: &Topology) -> String {
    let _ = topology;
    String::new()
}
