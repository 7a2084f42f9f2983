//! Readers producing the topology model: Linux sysfs/procfs (live, directory, tarball), lscpu text, hwloc synthetic and XML, built-in catalogue.
//!
//! (Being written; see the issue tracker.)
