//! hwloc synthetic description strings. (Being written.)
use crate::Error;
use topology::Topology;

/// Parses a synthetic description such as `package:2 numa:2 core:8 pu:2`.
pub fn parse(text: &str) -> Result<Topology, Error> {
    Err(Error::new(
        format!("synthetic '{text}'"),
        "synthetic reader not implemented yet",
    ))
}

/// Describes a topology as a synthetic string, when it is regular enough.
pub fn write(topology: &Topology) -> Result<String, Error> {
    let _ = topology;
    Err(Error::new(
        "synthetic",
        "synthetic writer not implemented yet",
    ))
}
