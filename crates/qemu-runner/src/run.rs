//! Building the kernel and running QEMU with a time-out.

use crate::machine::{Machine, MachineError};
use crate::parse::{parse_linux, parse_manycore, KernelResult, ManycoreOutput};
use crate::qmp::{self, QemuTruth};
use std::fmt;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What went wrong running a boot.
#[derive(Debug)]
pub enum RunError {
    /// `qemu-system-x86_64` is not installed (the message says what to install).
    QemuMissing(String),
    /// The machine description is invalid.
    Machine(MachineError),
    /// Building the kernel failed; cargo's output.
    Build(String),
    /// Could not start or talk to a process.
    Io(String),
    /// QEMU did not finish in time; what it printed so far.
    Timeout {
        /// The time-out.
        after: Duration,
        /// Console output so far.
        output: String,
    },
    /// The kernel finished without the result line (crash, panic, failure exit).
    NoResult {
        /// QEMU's exit code.
        exit_code: Option<i32>,
        /// Console output plus QEMU's stderr.
        output: String,
    },
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tail = |s: &str| {
            let lines: Vec<&str> = s.lines().collect();
            lines[lines.len().saturating_sub(25)..].join("\n")
        };
        match self {
            RunError::QemuMissing(m) => write!(f, "{m}"),
            RunError::Machine(e) => write!(f, "{e}"),
            RunError::Build(out) => write!(f, "building the kernel failed:\n{}", tail(out)),
            RunError::Io(e) => write!(f, "{e}"),
            RunError::Timeout { after, output } => {
                write!(f, "QEMU did not finish within {after:?}; last output:\n{}", tail(output))
            }
            RunError::NoResult { exit_code, output } => write!(
                f,
                "the kernel stopped (QEMU exit code {exit_code:?}) without a result; last output:\n{}",
                tail(output)
            ),
        }
    }
}

impl std::error::Error for RunError {}

impl From<MachineError> for RunError {
    fn from(e: MachineError) -> Self {
        RunError::Machine(e)
    }
}

/// Knobs for one QEMU run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Kill QEMU after this long.
    pub timeout: Duration,
    /// Extra QEMU arguments appended after the machine's.
    pub extra_qemu: Vec<String>,
    /// Firmware image for `-bios`; `None` picks one for the machine
    /// ([`default_bios_for`]), the same for both kernels.
    pub bios: Option<PathBuf>,
    /// Start QEMU paused, ask it over QMP for its vCPUs (APIC ids, nodes)
    /// and RAM layout, then let the guest run: [`Boot::qemu`].
    pub ask_qemu: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(180),
            extra_qemu: Vec::new(),
            bios: None,
            ask_qemu: false,
        }
    }
}

/// QEMU's qboot firmware, when installed: it boots `-kernel` images directly
/// and, unlike SeaBIOS, does not start every vCPU itself to count them, which
/// under TCG takes minutes at 1024 vCPUs. Both kernels see the same machine.
pub fn default_bios() -> Option<PathBuf> {
    let qboot = PathBuf::from("/usr/share/qemu/qboot.rom");
    qboot.is_file().then_some(qboot)
}

/// QEMU's SeaBIOS image, named as QEMU finds it in its firmware directories
/// (its default `-bios`, spelt out so that the printed command line says it).
pub const SEABIOS: &str = "bios-256k.bin";

/// The firmware a boot of `machine` gets when [`RunOptions::bios`] is `None`:
/// [`default_bios`] (qboot), except for machines with APIC ids above 254,
/// which get SeaBIOS: qboot leaves the local APICs in xAPIC mode, and Linux
/// then ignores every MADT x2APIC entry (see [`Machine::beyond_xapic`]);
/// SeaBIOS 1.16 enables x2APIC when the CPU has it. Starting every vCPU once
/// costs SeaBIOS wall-clock time before either kernel runs, not bring-up time.
pub fn default_bios_for(machine: &Machine) -> Option<PathBuf> {
    if machine.beyond_xapic() {
        Some(PathBuf::from(SEABIOS))
    } else {
        default_bios()
    }
}

/// `opts` with the firmware for `machine` filled in.
fn with_firmware(opts: &RunOptions, machine: &Machine) -> RunOptions {
    RunOptions {
        bios: opts.bios.clone().or_else(|| default_bios_for(machine)),
        ..opts.clone()
    }
}

/// One finished boot.
#[derive(Clone, Debug)]
pub struct Boot {
    /// The parsed result.
    pub result: KernelResult,
    /// Everything parsed from the console (manycore only; empty for Linux).
    pub parsed: ManycoreOutput,
    /// Raw console output.
    pub output: String,
    /// Wall-clock time of the QEMU process.
    pub wall: Duration,
    /// The QEMU command line, for reproducing by hand.
    pub command: String,
    /// What QEMU said about the machine before the guest ran
    /// ([`RunOptions::ask_qemu`]).
    pub qemu: Option<QemuTruth>,
}

/// One QEMU process's run.
struct Ran {
    output: String,
    /// None if it was stopped.
    code: Option<i32>,
    wall: Duration,
    command: String,
    qemu: Option<QemuTruth>,
}

const QEMU_INSTALL_HINT: &str = "qemu-system-x86_64 was not found on PATH. Install QEMU's x86 system \
emulator (7.2 or newer; 10.x tested): on Debian/Ubuntu `sudo apt-get install qemu-system-x86` \
(Debian bookworm: `-t bookworm-backports` for QEMU 10), on Fedora `sudo dnf install qemu-system-x86`; \
or run scripts/install-deps.sh. Set QEMU=/path/to/qemu-system-x86_64 to use another binary.";

fn qemu_binary() -> String {
    std::env::var("QEMU").unwrap_or_else(|_| "qemu-system-x86_64".into())
}

/// The QEMU version line, or [`RunError::QemuMissing`] saying what to install.
pub fn qemu_version() -> Result<String, RunError> {
    match Command::new(qemu_binary()).arg("--version").output() {
        Ok(o) if o.status.success() => Ok(String::from_utf8_lossy(&o.stdout)
            .lines()
            .next()
            .unwrap_or("")
            .to_string()),
        _ => Err(RunError::QemuMissing(QEMU_INSTALL_HINT.into())),
    }
}

/// The kernel's source directory: `$MANYCORE_KERNEL_DIR`, else `kernel/` in
/// this repository.
pub fn kernel_dir() -> PathBuf {
    std::env::var_os("MANYCORE_KERNEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../kernel"))
}

/// Builds the kernel (release) with cargo in `kernel/`, where its
/// `.cargo/config.toml` supplies the freestanding flags, and returns the ELF.
///
/// `$MANYCORE_KERNEL_ELF`, when set, names a prebuilt kernel to use instead
/// (benchmarks pin one so that edits to `kernel/` cannot change a running series).
pub fn build_kernel() -> Result<PathBuf, RunError> {
    if let Some(elf) = std::env::var_os("MANYCORE_KERNEL_ELF") {
        let elf = PathBuf::from(elf);
        return if elf.is_file() {
            Ok(elf)
        } else {
            Err(RunError::Build(format!(
                "MANYCORE_KERNEL_ELF={} is not a file",
                elf.display()
            )))
        };
    }
    let dir = kernel_dir();
    let target_dir = dir.join("target");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(&dir)
        .args([
            "build",
            "--release",
            "--quiet",
            "--target",
            "x86_64-unknown-linux-gnu",
            "--target-dir",
        ])
        .arg(&target_dir)
        // Flags from an outer cargo (e.g. `cargo test` with RUSTFLAGS) must not
        // reach the kernel: it has its own.
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_BUILD_TARGET")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_RUSTFLAGS")
        .output()
        .map_err(|e| RunError::Build(format!("cannot run cargo in {}: {e}", dir.display())))?;
    if !out.status.success() {
        return Err(RunError::Build(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    let elf = target_dir.join("x86_64-unknown-linux-gnu/release/kernel");
    if elf.is_file() {
        Ok(elf)
    } else {
        Err(RunError::Build(format!(
            "cargo succeeded but {} is missing",
            elf.display()
        )))
    }
}

/// QEMU's exit code when the kernel writes `EXIT_SUCCESS` (0x10) to isa-debug-exit.
const KERNEL_SUCCESS: i32 = (0x10 << 1) | 1;

fn common_args(m: &Machine) -> Vec<String> {
    let mut a = m.qemu_args();
    a.extend(console_args());
    a
}

/// The console and exit device every boot gets, whatever the machine.
fn console_args() -> Vec<String> {
    let mut a = Vec::new();
    for s in [
        "-nodefaults",
        "-no-user-config",
        "-display",
        "none",
        "-serial",
        "stdio",
        "-no-reboot",
        "-device",
        "isa-debug-exit,iobase=0xf4,iosize=4",
    ] {
        a.push(s.into());
    }
    a
}

/// A QMP socket path of its own for each QEMU this process starts.
fn qmp_socket() -> PathBuf {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    std::env::temp_dir().join(format!(
        "manycore-qmp-{}-{}.sock",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ))
}

/// Runs QEMU; stops early when `done(output)` says so.
///
/// Phases: the whole argument list ([`full_args`]); QEMU started with its
/// pipes ([`spawn_qemu`]); when asked, QEMU's own word on the guest over QMP
/// before the guest runs ([`ask_then_continue`]); the console read until
/// `done`, its end or the time-out ([`read_console`]); then the exit status
/// and stderr.
fn run_qemu(
    args: &[String],
    opts: &RunOptions,
    done: impl Fn(&str) -> bool,
) -> Result<Ran, RunError> {
    qemu_version()?;
    let socket = opts.ask_qemu.then(qmp_socket);
    let args = full_args(args, opts, socket.as_deref());
    let command = shown_command(&args);
    let start = Instant::now();
    let (mut child, stdout, err_thread) = spawn_qemu(&args)?;
    let qemu = match &socket {
        None => None,
        Some(s) => Some(ask_then_continue(&mut child, s, opts.timeout)?),
    };
    let lines = console_lines(stdout);
    let (mut output, stopped_early) = match read_console(&lines, start + opts.timeout, done) {
        Ok(read) => read,
        Err(output) => {
            stop(&mut child);
            return Err(RunError::Timeout {
                after: opts.timeout,
                output,
            });
        }
    };
    if stopped_early {
        let _ = child.kill();
    }
    let status = child
        .wait()
        .map_err(|e| RunError::Io(format!("waiting for QEMU: {e}")))?;
    let wall = start.elapsed();
    let stderr = err_thread.join().unwrap_or_default();
    if !stderr.trim().is_empty() && !stopped_early {
        output.push_str("\n[qemu stderr]\n");
        output.push_str(&stderr);
    }
    let code = if stopped_early { None } else { status.code() };
    Ok(Ran {
        output,
        code,
        wall,
        command,
        qemu,
    })
}

/// `args` and what `opts` adds to them: a paused start and the QMP socket
/// when QEMU is to be asked first, the firmware, the caller's extra arguments.
fn full_args(args: &[String], opts: &RunOptions, socket: Option<&Path>) -> Vec<String> {
    let mut args = args.to_vec();
    if let Some(s) = socket {
        args.push("-S".into());
        args.push("-qmp".into());
        args.push(format!("unix:{},server=on,wait=off", s.display()));
    }
    if let Some(bios) = opts.bios.clone().or_else(default_bios) {
        args.push("-bios".into());
        args.push(bios.display().to_string());
    }
    args.extend(opts.extra_qemu.iter().cloned());
    args
}

/// The command line as the reports show it: an empty argument, or one with
/// white space, in single quotes.
fn shown_command(args: &[String]) -> String {
    let quoted: Vec<String> = args
        .iter()
        .map(|a| {
            if a.is_empty() || a.contains(char::is_whitespace) {
                format!("'{a}'")
            } else {
                a.clone()
            }
        })
        .collect();
    format!("{} {}", qemu_binary(), quoted.join(" "))
}

/// QEMU started on `args`, its stdout, and a thread that collects its stderr
/// (read apart so that a full stderr pipe cannot stall the guest).
fn spawn_qemu(args: &[String]) -> Result<(Child, ChildStdout, JoinHandle<String>), RunError> {
    let mut child = Command::new(qemu_binary())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| RunError::Io(format!("cannot start {}: {e}", qemu_binary())))?;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| RunError::Io("no stdout pipe".into()))?;
    let mut stderr = child
        .stderr
        .take()
        .ok_or_else(|| RunError::Io("no stderr pipe".into()))?;
    let err_thread = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    Ok((child, stdout, err_thread))
}

/// Asks the paused QEMU behind `socket` for its vCPUs and RAM layout, then
/// lets the guest run; QEMU is stopped when that fails.
fn ask_then_continue(
    child: &mut Child,
    socket: &Path,
    patience: Duration,
) -> Result<QemuTruth, RunError> {
    let asked = qmp::ask_and_continue(socket, patience);
    let _ = std::fs::remove_file(socket);
    asked.map_err(|e| {
        stop(child);
        RunError::Io(e)
    })
}

/// `stdout`'s lines on a channel, read on a thread of their own so that the
/// console can be waited on with a deadline.
fn console_lines(stdout: ChildStdout) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel::<String>();
    std::thread::spawn(move || {
        let mut r = BufReader::new(stdout);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match r.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if tx.send(String::from_utf8_lossy(&buf).into_owned()).is_err() {
                        break;
                    }
                }
            }
        }
    });
    rx
}

/// The console output until `done` says so (`true`) or QEMU ends it
/// (`false`); `Err` with the output so far when `deadline` comes first.
fn read_console(
    lines: &mpsc::Receiver<String>,
    deadline: Instant,
    done: impl Fn(&str) -> bool,
) -> Result<(String, bool), String> {
    let mut output = String::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) => {
                output.push_str(&line);
                if done(&output) {
                    return Ok((output, true));
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => return Ok((output, false)),
            Err(mpsc::RecvTimeoutError::Timeout) => return Err(output),
        }
    }
}

/// Kills QEMU and reaps it.
fn stop(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// Boots the manycore kernel at `kernel` on `machine` with kernel command line
/// `cmdline` and returns its parsed result.
pub fn run_manycore(
    kernel: &Path,
    machine: &Machine,
    cmdline: &str,
    opts: &RunOptions,
) -> Result<Boot, RunError> {
    machine.validate()?;
    run_manycore_with_args(
        kernel,
        &machine.qemu_args(),
        cmdline,
        &with_firmware(opts, machine),
    )
}

/// Boots the manycore kernel at `kernel` on a machine given as raw QEMU
/// arguments (`-smp`, `-m`, `-numa`, `-cpu`, `-machine`, `-accel`...) instead of
/// a [`Machine`]: for example the exact command line a Linux guest was captured
/// on (crates/domains/tests/data/*.README), so that both kernels see the same
/// CPUID and firmware tables.
pub fn run_manycore_with_args(
    kernel: &Path,
    machine_args: &[String],
    cmdline: &str,
    opts: &RunOptions,
) -> Result<Boot, RunError> {
    let mut args = machine_args.to_vec();
    args.extend(console_args());
    args.push("-kernel".into());
    args.push(kernel.display().to_string());
    args.push("-append".into());
    args.push(cmdline.to_string());
    let ran = run_qemu(&args, opts, |_| false)?;
    let parsed = parse_manycore(&ran.output);
    match (&parsed.result, ran.code) {
        (Some(r), Some(KERNEL_SUCCESS)) => Ok(Boot {
            result: r.clone(),
            parsed,
            output: ran.output,
            wall: ran.wall,
            command: ran.command,
            qemu: ran.qemu,
        }),
        _ => Err(RunError::NoResult {
            exit_code: ran.code,
            output: ran.output,
        }),
    }
}

/// Boots a Linux kernel image on the same machine and reports its bring-up
/// from the "smp: Brought up" line; QEMU is stopped as soon as that line
/// appears (no root file system is needed to get there).
pub fn run_linux(
    vmlinuz: &Path,
    initrd: Option<&Path>,
    machine: &Machine,
    cmdline: &str,
    opts: &RunOptions,
) -> Result<Boot, RunError> {
    machine.validate()?;
    let mut args = common_args(machine);
    args.push("-kernel".into());
    args.push(vmlinuz.display().to_string());
    if let Some(rd) = initrd {
        args.push("-initrd".into());
        args.push(rd.display().to_string());
    }
    args.push("-append".into());
    args.push(format!("console=ttyS0 panic=-1 {cmdline}"));
    let opts = &with_firmware(opts, machine);
    let ran = run_qemu(&args, opts, |out| {
        out.lines()
            .last()
            .is_some_and(|l| l.contains("smp: Brought up"))
    })?;
    match parse_linux(&ran.output) {
        Some(result) => Ok(Boot {
            result,
            parsed: ManycoreOutput::default(),
            output: ran.output,
            wall: ran.wall,
            command: ran.command,
            qemu: ran.qemu,
        }),
        None => Err(RunError::NoResult {
            exit_code: ran.code,
            output: ran.output,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn firmware_is_seabios_only_beyond_apic_id_254() {
        let pick = |m: &Machine, bios: Option<&str>| {
            let opts = RunOptions {
                bios: bios.map(PathBuf::from),
                ..RunOptions::default()
            };
            with_firmware(&opts, m).bios
        };
        assert_eq!(pick(&Machine::new(255), None), default_bios());
        assert_eq!(
            pick(&Machine::new(1024), None),
            Some(PathBuf::from(SEABIOS))
        );
        // An explicit firmware is kept, whatever the machine.
        assert_eq!(
            pick(&Machine::new(1024), Some("/x/qboot.rom")),
            Some(PathBuf::from("/x/qboot.rom"))
        );
    }
}
