//! Links the `manycore` binary statically and not position-independent
//! (on Linux with glibc, building for the host, when the static archives are
//! installed).
//!
//! Why: a short run, `manycore topo --sysfs DIR` of a small machine, is
//! mostly the process's own start-up, and dynamic loading is the largest
//! part of it that a link can remove: `ld.so` mapping four libraries and
//! applying some 16 thousand relative relocations of a position-independent
//! binary (BENCHMARKS.md measures it against lstopo). Cargo gives rustc
//! `-C target-feature=+crt-static` only through rustflags, which reach the
//! proc-macro crates too (rustc refuses those with it), so this package's
//! links are changed here instead (the binary and its own tests; the other
//! crates link as before):
//!
//! - `-static -no-pie` to the C compiler that rustc links with: crt1.o
//!   without a dynamic loader, and addresses fixed at link time;
//! - a search directory holding under each name
//!   rustc asks for (`-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc`, and
//!   `-llzma` of lzma-sys when it found the system's liblzma) that library's
//!   static archive. Cargo lists this package's search directories
//!   before its dependencies' (lzma-sys names the system's library
//!   directory), and the linker looks in each directory in turn for
//!   `libNAME.so`, then `libNAME.a`, so these archives are taken before the
//!   shared libraries; libgcc_s's unwinder is `libgcc_eh.a` with `libgcc.a`, as
//!   rustc's own `+crt-static` link takes it;
//! - for the binary, the order of its hot functions (`order_hot_functions`).
//!
//! No name service is used (getaddrinfo and the like are linked by std but
//! not called), so glibc's static-link caveat does not apply. Where an
//! archive is missing (libc6-dev without its static parts, another C
//! library, a cross build) the binary is linked dynamically as before, only
//! not position-independent (the relocations are still applied at link
//! time).
use std::path::{Path, PathBuf};
use std::process::Command;

/// The libraries rustc names for a dynamically linked binary of this
/// workspace, each with the static archive that stands in for it.
const STAND_INS: &[(&str, &str)] = &[
    ("c", "libc.a"),
    ("m", "libm.a"),
    ("rt", "librt.a"),
    ("pthread", "libpthread.a"),
    ("dl", "libdl.a"),
    ("util", "libutil.a"),
    ("lzma", "liblzma.a"),
];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let env = |k: &str| std::env::var(k).unwrap_or_default();
    let for_host = env("TARGET") == env("HOST");
    if !(for_host && env("CARGO_CFG_TARGET_OS") == "linux" && env("CARGO_CFG_TARGET_ENV") == "gnu")
    {
        println!("cargo:rustc-env=MANYCORE_LINK=dynamic: not a host build for Linux with glibc");
        return;
    }
    let out = PathBuf::from(env("OUT_DIR")).join("static-libs");
    // The decision, for tests/static_link.rs: "static", or the archive the C
    // compiler did not find.
    let link = match stand_ins(&out) {
        Ok(()) => {
            println!("cargo:rustc-link-search=native={}", out.display());
            println!("cargo:rustc-link-arg=-static");
            "static".to_string()
        }
        Err(missing) => format!("dynamic: no {missing}"),
    };
    println!("cargo:rustc-env=MANYCORE_LINK={link}");
    println!("cargo:rustc-link-arg=-no-pie");
    order_hot_functions();
}

/// Asks the linker to place the functions of `hot-functions.txt` (written
/// by scripts/hot-functions.sh from the runs of a short `manycore topo`)
/// together at the start of the binary's code: such a run then faults in
/// far fewer 64-KiB windows of code (BENCHMARKS.md). Only where the linker
/// takes the option (lld does; GNU ld before 2.43 has none): a probe link
/// with the flags Cargo gives this package says so.
fn order_hot_functions() {
    let list = Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default())
        .join("hot-functions.txt");
    println!("cargo:rerun-if-changed={}", list.display());
    let args = [
        format!("-Wl,--symbol-ordering-file={}", list.display()),
        // Names this build lacks (another compiler or dependency version).
        "-Wl,--no-warn-symbol-ordering".to_string(),
    ];
    if list.is_file() && links_with(&args) {
        for a in args {
            println!("cargo:rustc-link-arg-bins={a}");
        }
    }
}

/// Whether rustc, run as Cargo runs it for this package (its target,
/// rustflags and linker), links an empty program with the linker
/// arguments `args`.
fn links_with(args: &[String]) -> bool {
    let env = |k: &str| std::env::var(k).unwrap_or_default();
    let dir = PathBuf::from(env("OUT_DIR"));
    let source = dir.join("probe.rs");
    if std::fs::write(&source, "fn main() {}\n").is_err() {
        return false;
    }
    let mut rustc = Command::new(env("RUSTC"));
    rustc
        .arg(&source)
        .arg("-o")
        .arg(dir.join("probe"))
        .args(["--target", &env("TARGET")]);
    let flags = env("CARGO_ENCODED_RUSTFLAGS");
    rustc.args(flags.split('\x1f').filter(|f| !f.is_empty()));
    if let Ok(linker) = std::env::var("RUSTC_LINKER") {
        rustc.arg(format!("-Clinker={linker}"));
    }
    rustc.args(args.iter().map(|a| format!("-Clink-arg={a}")));
    rustc
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Fills `dir` with the stand-ins, or names the first static archive the C
/// compiler does not know (then nothing is linked from `dir`).
fn stand_ins(dir: &Path) -> Result<(), String> {
    let io = |e: std::io::Error| format!("{}: {e}", dir.display());
    std::fs::create_dir_all(dir).map_err(io)?;
    for (name, archive) in STAND_INS {
        let found = archive_path(archive).ok_or(*archive)?;
        let link = dir.join(format!("lib{name}.a"));
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(found, link).map_err(io)?;
    }
    archive_path("libgcc_eh.a").ok_or("libgcc_eh.a")?;
    // A linker script under the shared unwinder's name: both GNU ld and lld
    // read a library file that is neither an archive nor ELF as one.
    std::fs::write(dir.join("libgcc_s.a"), "INPUT(-lgcc_eh -lgcc)\n").map_err(io)
}

/// Where the C compiler finds `archive` (it prints the bare name when it
/// finds none).
fn archive_path(archive: &str) -> Option<PathBuf> {
    let out = Command::new("cc")
        .arg(format!("-print-file-name={archive}"))
        .output()
        .ok()?;
    let path = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    (out.status.success() && path.is_absolute() && path.is_file()).then_some(path)
}
