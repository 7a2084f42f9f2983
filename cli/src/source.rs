//! The SOURCE options every subcommand takes: where the topology comes from.
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use topology::Topology;

/// Where to read a machine's topology from; with none of these, the live host.
#[derive(Args, Debug, Clone, Default)]
pub struct SourceArgs {
    /// A sysfs/procfs root: a directory or a .tar snapshot (plain, or
    /// compressed with gzip, bzip2, xz or zstd), hwloc-gather-topology's too.
    #[arg(long, value_name = "PATH", group = "source")]
    pub sysfs: Option<PathBuf>,
    /// An x86 CPUID dump (hwloc-gather-cpuid's puN files): a directory, a
    /// .tar of one (plain, or compressed with gzip, bzip2, xz or zstd), or
    /// an hwloc-gather-topology tree or tarball (its cpuid/ directory).
    #[arg(long, value_name = "PATH", group = "source")]
    pub cpuid: Option<PathBuf>,
    /// lscpu's text output, saved to a file.
    #[arg(long, value_name = "FILE", group = "source")]
    pub lscpu: Option<PathBuf>,
    /// An hwloc synthetic description, e.g. "package:2 numa:2 core:8 pu:2".
    #[arg(long, value_name = "STR", group = "source")]
    pub synthetic: Option<String>,
    /// An hwloc XML v2 file.
    #[arg(long, value_name = "FILE", group = "source")]
    pub xml: Option<PathBuf>,
    /// A machine from the built-in catalogue (see `manycore topo --list-machines`).
    #[arg(long, value_name = "NAME", group = "source")]
    pub machine: Option<String>,
}

impl SourceArgs {
    /// Reads the topology the options name.
    pub fn load(&self) -> Result<Topology> {
        if let Some(path) = &self.sysfs {
            // Asked only once the sysfs reader found no sysfs root there: a
            // CPUID dump is none, and the user is told which option reads
            // it. Any other error names the file at fault, dump or not (an
            // hwloc-gather-topology tree holds both).
            return readers::sysfs::read_path(path).map_err(|e| {
                if readers::sysfs::found_no_root(&e) && readers::cpuid::is_dump(path) {
                    readers::Error::new(
                        path.display().to_string(),
                        "an x86 CPUID dump (hwloc-gather-cpuid's puN files), not a sysfs \
                         snapshot: read it with --cpuid",
                    )
                    .into()
                } else {
                    e.into()
                }
            });
        }
        if let Some(path) = &self.cpuid {
            return Ok(readers::cpuid::read_path(path)?);
        }
        if let Some(path) = &self.lscpu {
            return Ok(readers::lscpu::read_path(path)?);
        }
        if let Some(s) = &self.synthetic {
            return Ok(readers::synthetic::parse(s)?);
        }
        if let Some(path) = &self.xml {
            return Ok(readers::xml::read_path(path)?);
        }
        if let Some(name) = &self.machine {
            return Ok(readers::catalogue::machine(name)?);
        }
        Ok(readers::sysfs::read_live()?)
    }
}
