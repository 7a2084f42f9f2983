//! `manycore`: the command-line front end. Each subcommand lives in its own module.
mod source;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "manycore",
    version,
    about = "Bring up, map and place the CPUs of machines with thousands of CPUs"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Show a machine's topology (being written).
    Topo,
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Topo => {
            println!("topo: not yet implemented");
        }
    }
    Ok(())
}
