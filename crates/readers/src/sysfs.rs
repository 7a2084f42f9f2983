//! Linux sysfs + procfs reader. (Being written.)
use crate::Error;
use std::path::Path;
use topology::Topology;

/// Reads the live host's `/sys` and `/proc`.
pub fn read_live() -> Result<Topology, Error> {
    read_path(Path::new("/"))
}

/// Reads a sysfs/procfs root: a directory holding `sys/` (and `proc/`), or a
/// `.tar.gz` / `.tar.bz2` snapshot with that layout.
pub fn read_path(path: &Path) -> Result<Topology, Error> {
    Err(Error::new(
        path.display().to_string(),
        "sysfs reader not implemented yet",
    ))
}
