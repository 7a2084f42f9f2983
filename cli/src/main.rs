//! `manycore`: the command-line front end. Each subcommand lives in its own module
//! and takes the same SOURCE options (see `source.rs`).

// On Linux with glibc the C library calls `main` below directly, without
// std's runtime start (see there).
#![cfg_attr(all(not(test), target_os = "linux", target_env = "gnu"), no_main)]
#![deny(unsafe_code)]

mod boot;
mod domains;
mod given;
mod hotplug;
mod irq;
mod place;
mod progress;
mod qemu;
mod source;
mod topo;
mod validate;

use std::io::Write;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "manycore",
    version,
    about = "Bring up, map and place the CPUs of machines with thousands of CPUs"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Show a machine's topology (default: this host).
    #[command(after_help = "Examples:
  manycore topo                                      this host's tree
  manycore topo --list-machines                      the built-in machines
  manycore topo --machine x86-uv-4096                folded tree of 4096 CPUs
  manycore topo --sysfs snapshot.tar.gz --format json
  manycore topo --machine arm64-d06 --format svg -o d06.svg
  manycore topo --machine arm64-d06 --format png -o d06.png")]
    Topo(topo::TopoArgs),
    /// Show the scheduler domains Linux would build on a machine.
    #[command(after_help = "Examples:
  manycore domains --machine power9-lpar-128 --kernel 5.9 --cpu 0 --format proc
  manycore domains --machine power10-shared-768 --kernel 6.8 --lpar shared --cpu 0
  manycore domains --machine power10-shared-768 --kernel 6.8 --lpar shared --cpu 0 --svg shared.svg
  manycore domains --sysfs host.tar.gz --kernel 6.12 --compare domains.tar.gz")]
    Domains(domains::DomainsArgs),
    /// Boot the bare-metal kernel (or a Linux kernel) under QEMU and report its bring-up.
    #[command(after_help = "Examples:
  manycore qemu --cpus 64 --nodes 4 --bringup parallel
  manycore qemu --cpus 300 --bringup broadcast --format json")]
    Qemu(qemu::QemuArgs),
    /// Online every CPU through the incremental topology masks (naive or scoped) and
    /// report the work and time spent.
    #[command(after_help = "Examples:
  manycore hotplug --machine power8-lpar-1024 --algo naive
  manycore hotplug --machine power-4096-1socket --algo scoped --cycles 1000 --format json")]
    Hotplug(hotplug::HotplugArgs),
    /// Show each interrupt translation unit (GICv3 ITS), its NUMA node and the
    /// node of each of its tables (seed 004), from firmware or the catalogue.
    #[command(after_help = "Examples:
  manycore irq --machine arm64-d06
  manycore irq --dtb fdt.dtb --format json
  manycore irq --acpi /sys/firmware/acpi/tables")]
    Irq(irq::IrqArgs),
    /// Simulate a machine's CPU bring-up in virtual time.
    #[command(after_help = "Examples:
  manycore boot --machine x86-uv-4096 --calibrate serial --svg uv.svg --json uv.json
  manycore boot --machine x86-2n-128 --calibrate lpj=2600000 --compare serial parallel
  manycore boot --machine x86-2n-128 --calibrate lpj=2600000 --compare serial parallel --svg seed003.svg")]
    Boot(boot::BootArgs),
    /// Simulate where Linux's fair class places a workload's tasks (virtual time).
    #[command(after_help = "Examples:
  manycore place --machine power10-shared-768 --lpar shared --workload ebizzy --threads 32 --duration 20 --compare 6.6 6.8
  manycore place --machine x86-2n-128 --kernel 6.12 --workload hackbench --threads 64 --format json --svg occ.svg
  manycore place --machine x86-2s-16 --kernel 6.12 --workload spin --threads 2 --itmt 0-6,8-14=1 --itmt 7,15=9")]
    Place(place::PlaceArgs),
    /// Print the simulator's predictions for the seeds' large machines against
    /// what the seeds measured.
    #[command(after_help = "Examples:
  manycore validate
  manycore validate --format json --quiet")]
    Validate(validate::ValidateArgs),
    /// Print a shell completion script generated from this command's definition.
    #[command(after_help = "Examples:
  manycore completions bash > /etc/bash_completion.d/manycore
  manycore completions zsh > ~/.zfunc/_manycore")]
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff) generated from this command's definition.
    #[command(after_help = "Examples:
  manycore man > manycore.1 && man ./manycore.1
  manycore man --dir man/                  one page per subcommand")]
    Man {
        /// Write manycore.1 and one manycore-SUBCOMMAND.1 per subcommand into DIR.
        #[arg(long, value_name = "DIR")]
        dir: Option<std::path::PathBuf>,
    },
}

/// Where the seeds' results are shown, printed under the default run's tree.
const SEEDS_HINT: &str =
    "Seeds' results: manycore validate; examples of each command: manycore COMMAND --help";

/// The default run: this host's topology tree, then where to look next.
#[inline(never)] // its locals stay out of `run`'s frame (see `run`)
fn default_run() -> anyhow::Result<()> {
    let topo = source::SourceArgs::default().load()?;
    let mut out = topo::render(&topo, topo::TopoFormat::Text)?;
    out.push_str(SEEDS_HINT);
    out.push('\n');
    write_stdout(&out)
}

/// `manycore completions SHELL`: the script on standard output.
#[inline(never)] // its locals stay out of `run`'s frame (see `run`)
fn completions(shell: clap_complete::Shell) -> anyhow::Result<()> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "manycore", &mut out);
    stream_stdout(|w| w.write_all(&out))
}

/// `manycore man`: the top-level page on standard output, or every page in DIR.
#[inline(never)] // its locals stay out of `run`'s frame (see `run`)
fn man(dir: Option<&std::path::Path>) -> anyhow::Result<()> {
    use anyhow::Context as _;
    let cmd = Cli::command();
    let Some(dir) = dir else {
        let mut out = Vec::new();
        clap_mangen::Man::new(cmd).render(&mut out)?;
        return stream_stdout(|w| w.write_all(&out));
    };
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    clap_mangen::generate_to(cmd, dir).with_context(|| format!("{}: cannot write", dir.display()))
}

/// The command line, parsed. A subcommand named first is parsed by a
/// definition holding its own arguments alone: building every
/// subcommand's arguments, and freeing them, is a large part of the
/// user-space work of a short run such as `manycore topo --sysfs DIR` on a
/// small machine (BENCHMARKS.md). Whatever that definition does not
/// accept, help and version requests included, is parsed again by the
/// whole one, so every message is the same.
fn parse_args() -> Cli {
    parse_one_subcommand(std::env::args_os()).unwrap_or_else(parse_whole)
}

/// [`parse_args`]' long way, the whole definition.
#[inline(never)] // its locals stay out of `run`'s frame (see `run`)
fn parse_whole() -> Cli {
    Cli::parse()
}

/// Adds one subcommand's own arguments to its `clap::Command`.
type AddArgs = fn(clap::Command) -> clap::Command;

/// Each subcommand that runs on a machine, with the function adding its own
/// arguments: [`parse_one_subcommand`]'s definitions. `completions` and `man`
/// are left to the whole definition (they describe it). A test holds this
/// list to [`Command`]'s subcommands and their arguments.
const SUBCOMMAND_ARGS: &[(&str, AddArgs)] = &[
    ("topo", topo::TopoArgs::augment_args),
    ("domains", domains::DomainsArgs::augment_args),
    ("qemu", qemu::QemuArgs::augment_args),
    ("hotplug", hotplug::HotplugArgs::augment_args),
    ("irq", irq::IrqArgs::augment_args),
    ("boot", boot::BootArgs::augment_args),
    ("place", place::PlaceArgs::augment_args),
    ("validate", validate::ValidateArgs::augment_args),
];

/// [`parse_args`]' short way: `None` unless `args` name a subcommand first
/// and its own arguments accept the rest.
fn parse_one_subcommand(args: impl IntoIterator<Item = std::ffi::OsString>) -> Option<Cli> {
    let args: Vec<std::ffi::OsString> = args.into_iter().collect();
    let name = args.get(1)?.to_str()?;
    let (name, augment) = SUBCOMMAND_ARGS.iter().find(|(n, _)| *n == name)?;
    let mut one = clap::Command::new("manycore").subcommand(augment(clap::Command::new(*name)));
    let matches = one.try_get_matches_from_mut(&args).ok()?;
    Cli::from_arg_matches(&matches).ok()
}

/// The entry point and what it does in std's place, on Linux with glibc
/// (elsewhere std's own start calls the `main` below).
#[cfg(all(not(test), target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)] // the C library finds the entry point by its name
mod glibc_start {
    /// The process's entry point on Linux with glibc, called by the C
    /// library's start-up in place of std's (`lang_start`). A short run such as
    /// `manycore topo --sysfs DIR` on a small machine is mostly process
    /// start-up, and std's adds system calls this command has no use for: it
    /// reads `/proc/self/maps` to find the main thread's stack guard, maps a
    /// signal stack and installs SIGSEGV/SIGBUS handlers to print a
    /// stack-overflow message, polls the three standard descriptors, and
    /// unmaps the signal stack at exit (BENCHMARKS.md measures the saving).
    ///
    /// Kept as std does it: SIGPIPE ignored (a closed pipe is then an
    /// error the writers take as success), a panic's exit status 101, standard
    /// output flushed at exit (`std::process::exit`), and the arguments:
    /// on this target std takes them from the C library's `init_array` call,
    /// before this function runs, and a closed standard descriptor reopened
    /// on `/dev/null` ([`reopen_closed_standard_fds`]). Lost: the
    /// stack-overflow message (an overflow is a plain SIGSEGV) and the name
    /// `main` in a panic's message (`<unnamed>`).
    #[no_mangle]
    extern "C" fn main(
        _argc: std::ffi::c_int,
        _argv: *const *const std::ffi::c_char,
    ) -> std::ffi::c_int {
        reopen_closed_standard_fds();
        ignore_sigpipe();
        let code = std::panic::catch_unwind(super::run).unwrap_or(101);
        std::process::exit(code)
    }

    /// Standard input, output and error, if closed when the process starts
    /// (`cmd >&-`), reopened on `/dev/null`, as std's start-up does: otherwise
    /// the first file the command opens takes the closed descriptor's number,
    /// and a later print lands in that file. One `poll` finds them (it marks a
    /// closed descriptor `POLLNVAL`); all three open, the usual case, costs
    /// nothing more.
    fn reopen_closed_standard_fds() {
        let mut fds = [0, 1, 2].map(|fd| libc::pollfd {
            fd,
            events: 0,
            revents: 0,
        });
        loop {
            // SAFETY: `fds` is an array of three initialised `pollfd` that
            // outlives the call, and the length passed is its length; a zero
            // timeout never blocks.
            if unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 0) } >= 0 {
                break;
            }
            if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                return;
            }
        }
        // In order: each open takes the lowest free number, the closed one. Not
        // close-on-exec, as a standard descriptor; without a `/dev/null` (a
        // bare chroot) the descriptor stays closed.
        for _closed in fds.iter().filter(|p| p.revents & libc::POLLNVAL != 0) {
            // SAFETY: the path is a NUL-terminated literal; the descriptor
            // returned is owned by the process for its whole life.
            if unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) } < 0 {
                return;
            }
        }
    }

    /// SIGPIPE ignored, as std's start-up does: a write to a closed pipe then
    /// fails with `BrokenPipe` (see [`super::stream_stdout`]) instead of killing the
    /// process. Child processes get the default back (std's `Command` resets
    /// it).
    fn ignore_sigpipe() {
        // SAFETY: SIG_IGN installs no handler code, and no other thread runs
        // yet to race on the signal disposition.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        }
    }
}

/// liblzma's CRC-64 (the check `xz` writes by default), defined in the
/// binary. Linked statically, liblzma's own `lzma_crc64` comes with a C
/// constructor that runs `cpuid` twice to pick a CLMUL version, in every run,
/// though most runs never read a `.tar.xz`; each `cpuid` is a VM exit on a
/// guest (about 7 µs here: BENCHMARKS.md). With the symbol defined here the
/// linker takes no member of the archive for it, so neither the constructor
/// nor its `cpuid` is in the binary. Linked dynamically, liblzma keeps its
/// own. The pure-Rust xz decoders were measured instead and are 2.8–6.5×
/// slower on the repository's `.tar.xz` files (BENCHMARKS.md).
#[allow(unsafe_code)] // the C ABI: liblzma calls it with a pointer and a length
mod lzma_crc64 {
    /// CRC-64/XZ (ECMA-182 polynomial, reflected): slicing by 16 bytes,
    /// its 32 KiB of tables computed at build time.
    const XZ: crc::Crc<u64, crc::Table<16>> = crc::Crc::<u64, crc::Table<16>>::new(&crc::CRC_64_XZ);

    /// `crc` (a finished CRC-64/XZ, 0 to start) continued over `bytes`.
    pub(crate) fn continued(crc: u64, bytes: &[u8]) -> u64 {
        // The finished value is the register inverted; the crate takes an
        // initial value in the unreflected order.
        let mut digest = XZ.digest_with_initial((!crc).reverse_bits());
        digest.update(bytes);
        digest.finalize()
    }

    /// liblzma's `uint64_t lzma_crc64(const uint8_t *buf, size_t size, uint64_t crc)`.
    ///
    /// # Safety
    ///
    /// `buf` points to `size` readable bytes (or `size` is 0), as liblzma's
    /// API requires of its callers.
    #[no_mangle]
    pub unsafe extern "C" fn lzma_crc64(buf: *const u8, size: usize, crc: u64) -> u64 {
        let bytes = if size == 0 {
            &[][..]
        } else {
            // SAFETY: the caller passes `size` readable bytes at `buf`.
            unsafe { std::slice::from_raw_parts(buf, size) }
        };
        continued(crc, bytes)
    }
}

#[cfg(not(all(not(test), target_os = "linux", target_env = "gnu")))]
fn main() {
    std::process::exit(run())
}

/// The command line's command, run; its exit status. Its frame is below
/// every subcommand's, and each page of a frame is touched (stack probes)
/// and costs a page fault in a short run: the rare paths (the whole
/// definition's parse, `man`, `completions`, the default run) keep their
/// locals in frames of their own.
fn run() -> i32 {
    let cli = parse_args();
    let result = match cli.command {
        Some(Command::Topo(args)) => topo::run(&args).map(|()| 0),
        Some(Command::Domains(args)) => domains::run(&args),
        Some(Command::Qemu(args)) => qemu::run(&args),
        Some(Command::Hotplug(args)) => hotplug::run(&args).map(|()| 0),
        Some(Command::Irq(args)) => irq::run(&args).map(|()| 0),
        Some(Command::Boot(args)) => boot::run(&args).map(|()| 0),
        Some(Command::Place(args)) => place::run(&args).map(|()| 0),
        Some(Command::Validate(args)) => validate::run(&args).map(|()| 0),
        Some(Command::Completions { shell }) => completions(shell).map(|()| 0),
        Some(Command::Man { dir }) => man(dir.as_deref()).map(|()| 0),
        None => default_run().map(|()| 0),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            // Errors echo input (names, file contents): never raw control
            // characters on the terminal.
            let shown = format!("{e:#}");
            eprintln!(
                "manycore: error: {}",
                readers::error::escape_controls(&shown)
            );
            2
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The argument lines of every example in the subcommands' help (the
    /// `Examples:` of `after_help`), without their comments and redirections.
    fn examples() -> Vec<Vec<String>> {
        let mut lines = Vec::new();
        for sub in Cli::command().get_subcommands() {
            let Some(help) = sub.get_after_help() else {
                continue;
            };
            for line in help.to_string().lines() {
                let Some(rest) = line.trim_start().strip_prefix("manycore ") else {
                    continue;
                };
                // What follows two spaces is the example's comment.
                let rest = rest.split("  ").next().unwrap_or(rest);
                let mut args = vec!["manycore".to_string()];
                let mut word = String::new();
                let mut quoted = false;
                for c in rest.chars() {
                    match c {
                        '"' => quoted = !quoted,
                        ' ' if !quoted => {
                            args.extend((!word.is_empty()).then(|| word.split_off(0)))
                        }
                        _ => word.push(c),
                    }
                }
                args.extend((!word.is_empty()).then_some(word));
                if let Some(at) = args.iter().position(|a| a == ">" || a == "&&" || a == "|") {
                    args.truncate(at);
                }
                lines.push(args);
            }
        }
        lines
    }

    #[test]
    fn one_subcommand_parses_every_example_as_the_whole_definition_does() {
        let lines = examples();
        assert!(lines.len() >= 20, "{lines:?}");
        let mut short = 0;
        for args in &lines {
            let whole = Cli::try_parse_from(args).unwrap_or_else(|e| panic!("{args:?}: {e}"));
            if matches!(
                whole.command,
                Some(Command::Completions { .. } | Command::Man { .. })
            ) {
                continue;
            }
            let one = parse_one_subcommand(args.iter().map(Into::into))
                .unwrap_or_else(|| panic!("{args:?}: not parsed by its subcommand alone"));
            assert_eq!(format!("{one:?}"), format!("{whole:?}"), "{args:?}");
            short += 1;
        }
        assert!(short >= 15, "{short}");
    }

    /// A subcommand added to [`Command`] without a short way, or whose
    /// variant gains arguments of its own, fails here.
    #[test]
    fn every_subcommand_but_completions_and_man_has_its_own_arguments_alone() {
        let whole = Cli::command();
        let mut named = Vec::new();
        for sub in whole.get_subcommands() {
            let name = sub.get_name();
            if matches!(name, "completions" | "man") {
                continue;
            }
            named.push(name);
            let (listed, augment) = SUBCOMMAND_ARGS
                .iter()
                .find(|(n, _)| *n == name)
                .unwrap_or_else(|| panic!("{name}: no entry in SUBCOMMAND_ARGS"));
            let ids = |c: &clap::Command| {
                let mut v: Vec<String> =
                    c.get_arguments().map(|a| a.get_id().to_string()).collect();
                v.sort();
                v
            };
            let alone = augment(clap::Command::new(*listed));
            assert_eq!(ids(&alone), ids(sub), "{name}: arguments differ");
        }
        let mut listed: Vec<&str> = SUBCOMMAND_ARGS.iter().map(|(n, _)| *n).collect();
        listed.sort_unstable();
        named.sort_unstable();
        assert_eq!(listed, named);
    }

    /// CRC-64/XZ's check value, the CRC of "123456789" as Greg Cook's
    /// catalogue of parametrised CRC algorithms gives it; and a CRC continued
    /// in pieces, as liblzma calls it block by block, equal to the CRC of the
    /// whole.
    #[test]
    #[allow(unsafe_code)] // the C entry point itself
    fn lzma_crc64_is_crc64_xz_and_continues() {
        assert_eq!(
            lzma_crc64::continued(0, b"123456789"),
            0x995d_c9bb_df19_39fa
        );
        assert_eq!(lzma_crc64::continued(0, b""), 0);
        let whole: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
        let mut crc = 0;
        for piece in whole.chunks(37) {
            crc = lzma_crc64::continued(crc, piece);
        }
        assert_eq!(crc, lzma_crc64::continued(0, &whole));
        // SAFETY: a valid slice's pointer and length, and a null pointer with
        // no bytes.
        unsafe {
            assert_eq!(lzma_crc64::lzma_crc64(whole.as_ptr(), whole.len(), 0), crc);
            assert_eq!(lzma_crc64::lzma_crc64(std::ptr::null(), 0, crc), crc);
        }
    }

    #[test]
    fn help_version_and_errors_go_to_the_whole_definition() {
        for args in [
            &["manycore", "topo", "--help"][..],
            &["manycore", "topo", "-h"],
            &["manycore", "topo", "--version"],
            &["manycore", "topo", "--no-such-option"],
            &["manycore", "topo", "--format", "nonsense"],
            &["manycore", "--help"],
            &["manycore", "help", "topo"],
            &["manycore"],
        ] {
            assert!(
                parse_one_subcommand(args.iter().map(Into::into)).is_none(),
                "{args:?}"
            );
        }
    }
}
