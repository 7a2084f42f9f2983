//! `manycore`: the command-line front end. Each subcommand lives in its own module
//! and takes the same SOURCE options (see `source.rs`).
mod boot;
mod domains;
mod hotplug;
mod irq;
mod place;
mod qemu;
mod source;
mod topo;
mod validate;

use std::io::Write;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "manycore",
    version,
    about = "Bring up, map and place the CPUs of machines with thousands of CPUs"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Show a machine's topology (default: this host).
    Topo(topo::TopoArgs),
    /// Show the scheduler domains Linux would build on a machine.
    Domains(domains::DomainsArgs),
    /// Boot the bare-metal kernel (or a Linux kernel) under QEMU and report its bring-up.
    Qemu(qemu::QemuArgs),
    /// Online every CPU through the incremental topology masks (naive or scoped) and
    /// report the work and time spent.
    Hotplug(hotplug::HotplugArgs),
    /// Show each interrupt translation unit (GICv3 ITS), its NUMA node and the
    /// node of each of its tables (seed 004), from firmware or the catalogue.
    Irq(irq::IrqArgs),
    /// Simulate a machine's CPU bring-up in virtual time.
    Boot(boot::BootArgs),
    /// Simulate where Linux's fair class places a workload's tasks (virtual time).
    Place(place::PlaceArgs),
    /// Print the simulator's predictions for the seeds' large machines against
    /// what the seeds measured.
    Validate(validate::ValidateArgs),
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Topo(args)) => topo::run(&args).map(|()| 0),
        Some(Command::Domains(args)) => domains::run(&args),
        Some(Command::Qemu(args)) => qemu::run(&args),
        Some(Command::Hotplug(args)) => hotplug::run(&args).map(|()| 0),
        Some(Command::Irq(args)) => irq::run(&args).map(|()| 0),
        Some(Command::Boot(args)) => boot::run(&args).map(|()| 0),
        Some(Command::Place(args)) => place::run(&args).map(|()| 0),
        Some(Command::Validate(args)) => validate::run(&args).map(|()| 0),
        None => topo::run(&topo::TopoArgs {
            source: source::SourceArgs::default(),
            format: topo::TopoFormat::Text,
            list_machines: false,
            output: None,
        })
        .map(|()| 0),
    };
    match result {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("manycore: error: {e:#}");
            std::process::exit(2);
        }
    }
}

/// Writes a subcommand's whole rendered output to standard output. A reader that
/// went away (`manycore topo | head`) is success, not the panic of `print!`:
/// nothing more is wanted.
pub(crate) fn write_stdout(text: &str) -> anyhow::Result<()> {
    stream_stdout(|out| out.write_all(text.as_bytes()))
}

/// Like [`write_stdout`] for bytes (PNG pictures).
pub(crate) fn write_stdout_bytes(bytes: &[u8]) -> anyhow::Result<()> {
    stream_stdout(|out| out.write_all(bytes))
}

/// Like [`write_stdout`] for output produced piece by piece by `write`.
pub(crate) fn stream_stdout(
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match write(&mut out).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

/// Writes a picture to `path`: the SVG text, or rasterised to PNG when the
/// file name ends in `.png`.
pub(crate) fn write_picture(path: &std::path::Path, svg: &str) -> anyhow::Result<()> {
    use anyhow::Context as _;
    let png = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("png"));
    let bytes = if png {
        draw::to_png(svg).with_context(|| format!("{}: cannot render", path.display()))?
    } else {
        svg.as_bytes().to_vec()
    };
    std::fs::write(path, bytes).with_context(|| format!("{}: cannot write", path.display()))
}

/// "1 PU", "2 PUs".
pub(crate) fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}
