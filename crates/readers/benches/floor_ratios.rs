//! Every sysfs snapshot of the corpus, and generated machines of 1024, 4096
//! and 16384 CPUs, each read many times against baselines measured in the
//! same run, pair by pair:
//!
//! - in process, [`readers::sysfs::read_path`] against the minimal-file floor
//!   (opening, reading and closing only the files whose content the model
//!   carries, each once; see `model_files` in `support/sysfs_tree.rs`), ours
//!   on one thread, each side timed by the CPU time of the thread running it
//!   (`CLOCK_THREAD_CPUTIME_ID`), so that time the shared host spends on
//!   other tasks is not counted: ratio = ours / floor, the goal being ≤ 1.5;
//!   and ours against the narrower floor of earlier runs (`minimal_files`:
//!   topology, node and cache files only), by the ratio of the medians;
//!   and ours against the ABI floor (`abi_floor`: the floor plus the
//!   directory listings and look-ups of absent files that the sysfs ABI
//!   leaves to any reader, its rules cited there), in pairs as the floor
//!   (the median pair);
//! - the reader on 2 threads against 1 (reading ahead, see
//!   `readers::sysfs::Threads`), wall clock, on the inputs of
//!   `PARALLEL_MIN_CPUS` CPUs or more;
//! - whole process, `manycore topo --sysfs DIR --format json` against
//!   `lstopo-no-graphics --if fsroot --input DIR --no-io --of xml -` and
//!   `lscpu --sysroot DIR`, each timed by `perf stat -e task-clock` (the CPU
//!   time of the whole process, every thread): ratio = theirs / ours;
//! - the system calls of one read, ours and the floor's, counted by
//!   `strace -f -c` on this program re-run for one read (start-up subtracted).
//!
//! The pairs alternate (A B A B …) so that the shared machine's drift hits
//! both sides; per input the median of the per-pair ratios and the 90th
//! percentile pair are printed, rows sorted worst first. Snapshots our reader
//! refuses (the hostile corpus entries) are listed as skipped.
//!
//! Run: `cargo build --release -p manycore && cargo bench -p readers --bench floor_ratios`
//! (`PAIRS=N` in-process pairs per input, default 31; `PROC_PAIRS=N`
//! whole-process pairs, default 5; `MANYCORE_BENCH_BIG=0` leaves out the
//! 16384-CPU tree; `BENCH_TMP=DIR` where trees are extracted and written,
//! default the system's temporary directory; `ONLY=TEXT` only inputs whose
//! name contains TEXT; `MANYCORE_BIN=PATH` the `manycore` binary of the
//! whole-process columns, default the build's `target/release/manycore`;
//! `PROCESS_ONLY=1` the whole-process comparison with lstopo alone, every
//! input, `PROC_PAIRS` pairs each). Whole-process columns need `perf`, syscall columns
//! `strace`; without them those columns print `–`.
//!
//! For a profiler: `--write-tree P C T DIR` writes a generated tree,
//! `--floor-list DIR LIST` the floor's files of DIR, and
//! `[THREADS=N] … --syscalls-of ours-loop DIR LIST` reads DIR once per line
//! of LIST (on N threads, default 1) and prints its wall time and the CPU
//! time of the reading thread and of all threads,
//! `FLOOR_LOOPS=N … --syscalls-of floor-loop DIR LIST` the floor N times
//! (printing its wall and CPU time, the reads alone, as `ours-loop` does),
//! and `--beyond-floor DIR` what one read of DIR asks beyond the floor's
//! one open, read and close per file (`strace` of the read, by path).

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use readers::sysfs::Threads;

#[path = "support/machines.rs"]
mod machines;
#[path = "support/sysfs_tree.rs"]
mod sysfs_tree;
use machines::thread_cpu;
use sysfs_tree::{
    abi_floor, extract, minimal_files, model_files, read_abi_floor, read_floor, snapshots,
    write_machine,
};

/// The corpus as the tests find it (`MANYCORE_CORPUS`, else beside the
/// repository or a parent: a worktree's checkout too).
fn corpus() -> PathBuf {
    readers::corpus::dir(env!("CARGO_MANIFEST_DIR"))
}

fn percentile(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * p).round() as usize]
}

/// Our reader on one thread: the in-process figures time the calling
/// thread, and the floor is one thread too.
fn sequential(dir: &Path) -> Result<topology::Topology, readers::Error> {
    readers::sysfs::read_dir_with(dir, Threads::Fixed(1))
}

/// What `n` alternating runs of `a` and `b` cost, each run timed by `clock`.
struct Pairs {
    a: f64,
    b: f64,
    /// Median and 90th percentile of the per-pair ratios a / b.
    ratio: f64,
    ratio_p90: f64,
}

fn pairs(n: usize, clock: impl Fn() -> f64, mut a: impl FnMut(), mut b: impl FnMut()) -> Pairs {
    a();
    b();
    let (mut ra, mut ta, mut tb) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..n {
        let t = clock();
        a();
        let da = clock() - t;
        let t = clock();
        b();
        let db = clock() - t;
        ra.push(da / db);
        ta.push(da);
        tb.push(db);
    }
    Pairs {
        a: percentile(&mut ta, 0.5),
        b: percentile(&mut tb, 0.5),
        ratio: percentile(&mut ra, 0.5),
        ratio_p90: percentile(&mut ra, 0.9),
    }
}

/// The CPU time of one whole command (every thread), from `perf stat`.
fn process_cpu(cmd: &[&OsStr]) -> Option<f64> {
    let out = tempfile::NamedTempFile::new().ok()?;
    let ok = Command::new("perf")
        .args(["stat", "-x,", "-e", "task-clock", "-o"])
        .arg(out.path())
        .arg("--")
        .args(cmd)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        return None;
    }
    let text = std::fs::read_to_string(out.path()).ok()?;
    let line = text.lines().find(|l| l.contains(",task-clock"))?;
    let msec: f64 = line.split(',').next()?.parse().ok()?;
    Some(msec / 1e3)
}

/// System calls of one read, by name: (calls, failed calls).
type Syscalls = BTreeMap<String, (u64, u64)>;

/// Re-runs this program under `strace -f -c` for one read (`mode` = `ours`,
/// `floor` or `none`) of `dir`, the floor's files listed in `list`.
fn strace_counts(mode: &str, dir: &Path, list: &Path) -> Option<Syscalls> {
    let out = tempfile::NamedTempFile::new().ok()?;
    let ok = Command::new("strace")
        .args(["-f", "-c", "-o"])
        .arg(out.path())
        .arg("--")
        .arg(std::env::current_exe().ok()?)
        .args(["--syscalls-of", mode])
        .arg(dir)
        .arg(list)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        return None;
    }
    let mut counts = Syscalls::new();
    for line in std::fs::read_to_string(out.path()).ok()?.lines() {
        // `% time seconds usecs/call calls [errors] syscall`
        let f: Vec<&str> = line.split_whitespace().collect();
        if !(5..=6).contains(&f.len()) || f[0].parse::<f64>().is_err() {
            continue;
        }
        let calls = f[3].parse().ok()?;
        let errors = if f.len() == 6 { f[4].parse().ok()? } else { 0 };
        counts.insert(f[f.len() - 1].to_string(), (calls, errors));
    }
    Some(counts)
}

/// One read's system calls, grouped: opens (failed), stats, directory
/// reads, reads, total.
#[derive(Default, Clone, Copy)]
struct CallCounts {
    opens: i64,
    failed: i64,
    stats: i64,
    getdents: i64,
    reads: i64,
    total: i64,
}

impl CallCounts {
    fn of(c: &Syscalls, start_up: &Syscalls) -> CallCounts {
        let get = |names: &[&str], failed: bool| -> i64 {
            names
                .iter()
                .map(|n| {
                    let pick = |m: &Syscalls| {
                        m.get(*n)
                            .map_or(0, |&(calls, errs)| if failed { errs } else { calls })
                            as i64
                    };
                    pick(c) - pick(start_up)
                })
                .sum()
        };
        let opens = ["open", "openat", "openat2"];
        let all: Vec<&str> = c
            .keys()
            .map(String::as_str)
            .filter(|&n| n != "total")
            .collect();
        CallCounts {
            opens: get(&opens, false),
            failed: get(&opens, true),
            stats: get(&["fstat", "newfstatat", "statx", "stat", "lstat"], false),
            getdents: get(&["getdents64", "getdents"], false),
            reads: get(&["read", "pread64"], false),
            total: get(&all, false),
        }
    }
}

/// The hidden mode `--syscalls-of MODE DIR LIST` that [`strace_counts`] runs.
fn syscalls_mode(args: &[String]) {
    let (mode, dir, list) = (&args[2], Path::new(&args[3]), &args[4]);
    let files: Vec<PathBuf> = std::fs::read_to_string(list)
        .unwrap()
        .lines()
        .map(PathBuf::from)
        .collect();
    match mode.as_str() {
        "ours" => drop(sequential(dir).unwrap()),
        "floor" => {
            std::hint::black_box(read_floor(&files));
        }
        "ours-loop" => {
            // For a profiler: many reads in one process, on `THREADS`
            // threads (default one).
            let threads = std::env::var("THREADS").map_or(1, |v| v.parse().unwrap());
            let process_cpu = || {
                let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
                t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
            };
            let (start, main0, all0) = (Instant::now(), thread_cpu(), process_cpu());
            for _ in 0..files.len() {
                drop(readers::sysfs::read_dir_with(dir, Threads::Fixed(threads)).unwrap());
            }
            // How the work split: the reading thread's CPU time against
            // the whole process's (the workers', once they have ended).
            eprintln!(
                "{threads} thread(s): wall {:.3} s, reading thread cpu {:.3} s, all threads cpu {:.3} s",
                start.elapsed().as_secs_f64(),
                thread_cpu() - main0,
                process_cpu() - all0
            );
        }
        "floor-loop" => {
            // The floor's files read `FLOOR_LOOPS` times, for a profiler.
            let loops = std::env::var("FLOOR_LOOPS").map_or(1, |v| v.parse().unwrap());
            let (start, cpu0) = (Instant::now(), thread_cpu());
            for _ in 0..loops {
                std::hint::black_box(read_floor(&files));
            }
            // In process, as `ours-loop` prints it: the process's start and
            // the reading of the file list are left out, so the two modes'
            // lines compare the reads alone.
            eprintln!(
                "floor x {loops}: wall {:.3} s, cpu {:.3} s",
                start.elapsed().as_secs_f64(),
                thread_cpu() - cpu0
            );
        }
        _ => {}
    }
}

struct Row {
    name: String,
    cpus: usize,
    files: usize,
    /// The narrower floor's file count and median CPU time.
    narrow_floor: (usize, f64),
    /// The ABI floor's (`abi_floor`) look-ups beyond the file floor
    /// (files, failed opens and listings), and ours against it in pairs.
    abi_floor: (usize, Pairs),
    in_process: Pairs,
    threads: Option<Pairs>,
    lstopo: Option<f64>,
    lscpu: Option<f64>,
    ours_calls: Option<CallCounts>,
    floor_calls: Option<CallCounts>,
}

/// Whole-process pairs: (theirs / ours) median of `n` pairs by CPU time.
fn versus(n: usize, theirs: &[&OsStr], ours: &[&OsStr]) -> Option<f64> {
    process_cpu(theirs)?;
    process_cpu(ours)?;
    let mut ratios = Vec::new();
    for _ in 0..n {
        ratios.push(process_cpu(theirs)? / process_cpu(ours)?);
    }
    Some(percentile(&mut ratios, 0.5))
}

/// The whole-process commands compared on `dir`: `manycore topo --format
/// json` (the binary `cli`) and lstopo's XML export of the same root.
fn ours_and_lstopo<'a>(cli: &'a Path, dir: &'a Path) -> ([&'a OsStr; 6], [&'a OsStr; 9]) {
    let os = OsStr::new;
    let ours = [
        cli.as_os_str(),
        os("topo"),
        os("--format"),
        os("json"),
        os("--sysfs"),
        dir.as_os_str(),
    ];
    let lstopo = [
        os("lstopo-no-graphics"),
        os("--if"),
        os("fsroot"),
        os("--input"),
        dir.as_os_str(),
        os("--no-io"),
        os("--of"),
        os("xml"),
        os("-"),
    ];
    (ours, lstopo)
}

/// `PROCESS_ONLY=1`: whole process alone, `lstopo` against `manycore topo
/// --format json --sysfs DIR`, `n` pairs by CPU time: the median of the
/// per-pair ratios theirs / ours, its lowest pair, and each side's median
/// CPU time (s). `None` when either command fails on the input.
fn process_row(dir: &Path, n: usize, cli: &Path) -> Option<(f64, f64, f64, f64)> {
    let (ours, lstopo) = ours_and_lstopo(cli, dir);
    process_cpu(&lstopo)?;
    process_cpu(&ours)?;
    let (mut ratios, mut theirs, mut mine) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..n {
        let (t, o) = (process_cpu(&lstopo)?, process_cpu(&ours)?);
        ratios.push(t / o);
        theirs.push(t);
        mine.push(o);
    }
    Some((
        percentile(&mut ratios, 0.5),
        percentile(&mut ratios, 0.0),
        percentile(&mut theirs, 0.5),
        percentile(&mut mine, 0.5),
    ))
}

fn measure(name: &str, dir: &Path, n: usize, proc_n: usize, cli: Option<&Path>) -> Option<Row> {
    let t = readers::sysfs::read_path(dir).ok()?;
    let floor = model_files(dir, &t);
    let in_process = pairs(
        n,
        thread_cpu,
        || drop(sequential(dir).unwrap()),
        || {
            std::hint::black_box(read_floor(&floor));
        },
    );
    // The narrower floor of earlier runs (topology masks and ids, nodes'
    // maps and distances, caches' level, type, size and map), for comparison.
    let narrow = minimal_files(dir, &t);
    let mut narrow_times: Vec<f64> = (0..n)
        .map(|_| {
            let t0 = thread_cpu();
            std::hint::black_box(read_floor(&narrow));
            thread_cpu() - t0
        })
        .collect();
    let narrow_floor = (narrow.len(), percentile(&mut narrow_times, 0.5));
    // The floor with the look-ups the sysfs ABI leaves to any reader,
    // in pairs with ours as the file floor is.
    let abi = abi_floor(dir, &t, &floor);
    let abi_floor = (
        abi.files.len() - floor.len() + abi.absent.len() + abi.listed.len(),
        pairs(
            n,
            thread_cpu,
            || drop(sequential(dir).unwrap()),
            || {
                std::hint::black_box(read_abi_floor(&abi));
            },
        ),
    );
    let threads = (t.cpus().len() >= readers::sysfs::PARALLEL_MIN_CPUS).then(|| {
        let wall = {
            let start = Instant::now();
            move || start.elapsed().as_secs_f64()
        };
        let on = |n| readers::sysfs::read_dir_with(dir, Threads::Fixed(n)).unwrap();
        pairs(n.min(15), wall, || drop(on(2)), || drop(on(1)))
    });
    let (lstopo, lscpu) = match cli {
        Some(bin) => {
            let (ours, lstopo) = ours_and_lstopo(bin, dir);
            let lscpu = [
                OsStr::new("lscpu"),
                OsStr::new("--sysroot"),
                dir.as_os_str(),
            ];
            (
                versus(proc_n, &lstopo, &ours),
                versus(proc_n, &lscpu, &ours),
            )
        }
        None => (None, None),
    };
    let list = tempfile::NamedTempFile::new().ok()?;
    let text: Vec<String> = floor.iter().map(|p| p.display().to_string()).collect();
    std::fs::write(list.path(), text.join("\n")).ok()?;
    let start_up = strace_counts("none", dir, list.path());
    let calls = |mode| {
        Some(CallCounts::of(
            &strace_counts(mode, dir, list.path())?,
            start_up.as_ref()?,
        ))
    };
    Some(Row {
        name: name.to_string(),
        cpus: t.cpus().len(),
        files: floor.len(),
        narrow_floor,
        abi_floor,
        in_process,
        threads,
        lstopo,
        lscpu,
        ours_calls: calls("ours"),
        floor_calls: calls("floor"),
    })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list") {
        return;
    }
    if args.get(1).map(String::as_str) == Some("--syscalls-of") {
        return syscalls_mode(&args);
    }
    if args.get(1).map(String::as_str) == Some("--floor-list") {
        // `--floor-list DIR OUT`: the floor's files of DIR, one a line, for
        // `--syscalls-of floor-loop DIR OUT` under a profiler.
        let dir = Path::new(&args[2]);
        let t = readers::sysfs::read_path(dir).unwrap();
        let text: Vec<String> = model_files(dir, &t)
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        std::fs::write(&args[3], text.join("\n")).unwrap();
        return;
    }
    if args.get(1).map(String::as_str) == Some("--beyond-floor") {
        return beyond_floor(Path::new(&args[2]));
    }
    if args.get(1).map(String::as_str) == Some("--write-tree") {
        // `--write-tree P C T DIR`: a generated tree, for a profiler.
        let n = |i: usize| args[i].parse().unwrap();
        write_machine(Path::new(&args[5]), n(2), n(3), n(4));
        return;
    }
    let env = |k: &str, d: usize| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let only = std::env::var("ONLY").unwrap_or_default();
    let (n, proc_n) = (env("PAIRS", 31), env("PROC_PAIRS", 5));
    let exe = std::env::current_exe().unwrap();
    let cli = match std::env::var_os("MANYCORE_BIN") {
        Some(bin) => Some(PathBuf::from(bin)),
        None => exe
            .parent()
            .and_then(Path::parent)
            .map(|d| d.join("manycore")),
    };
    let cli = cli.filter(|p| p.is_file());
    let tmp = match std::env::var_os("BENCH_TMP") {
        Some(d) => tempfile::tempdir_in(d).unwrap(),
        None => tempfile::tempdir().unwrap(),
    };
    if env("PROCESS_ONLY", 0) == 1 {
        return process_only(&only, tmp.path(), proc_n, &cli.expect("no manycore binary"));
    }
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    for (i, archive) in snapshots(&corpus()).iter().enumerate() {
        let name = archive.file_name().unwrap().to_string_lossy().to_string();
        if !name.contains(&only) {
            continue;
        }
        let into = tmp.path().join(format!("s{i}"));
        let Some(dir) = extract(archive, &into) else {
            skipped.push(name);
            continue;
        };
        match measure(&name, &dir, n, proc_n, cli.as_deref()) {
            Some(r) => rows.push(r),
            None => skipped.push(name),
        }
    }
    let mut shapes = vec![(4, 128, 2), (4, 512, 2)];
    if env("MANYCORE_BENCH_BIG", 1) == 1 {
        shapes.push((8, 1024, 2));
    }
    for (p, c, th) in shapes {
        let name = format!("generated {p}p×{c}c×{th}t ({} CPUs)", p * c * th);
        if !name.contains(&only) {
            continue;
        }
        let dir = tmp.path().join(format!("gen-{p}-{c}-{th}"));
        write_machine(&dir, p, c, th);
        let pairs = if p * c * th > 8192 {
            n.min(7)
        } else {
            n.min(15)
        };
        if let Some(r) = measure(&name, &dir, pairs, proc_n.min(3), cli.as_deref()) {
            rows.push(r);
        }
        std::fs::remove_dir_all(&dir).ok();
    }
    rows.sort_by(|a, b| b.in_process.ratio.total_cmp(&a.in_process.ratio));
    print_rows(&rows, n, proc_n);
    println!(
        "\nskipped (our reader refuses them): {}",
        skipped.join(", ")
    );
}

/// The `PROCESS_ONLY=1` run: every snapshot and generated tree, whole
/// process against lstopo, rows worst first.
fn process_only(only: &str, tmp: &Path, n: usize, cli: &Path) {
    let mut inputs: Vec<(String, PathBuf)> = Vec::new();
    for (i, archive) in snapshots(&corpus()).iter().enumerate() {
        let name = archive.file_name().unwrap().to_string_lossy().to_string();
        if name.contains(only) {
            if let Some(dir) = extract(archive, &tmp.join(format!("s{i}"))) {
                inputs.push((name, dir));
            }
        }
    }
    for (p, c, th) in [(4, 128, 2), (4, 512, 2), (8, 1024, 2)] {
        let name = format!("generated {p}p×{c}c×{th}t ({} CPUs)", p * c * th);
        if name.contains(only) {
            let dir = tmp.join(format!("gen-{p}-{c}-{th}"));
            write_machine(&dir, p, c, th);
            inputs.push((name, dir));
        }
    }
    let mut rows = Vec::new();
    let mut failed = Vec::new();
    for (name, dir) in inputs {
        match process_row(&dir, n, cli) {
            Some(r) => rows.push((name, r)),
            None => failed.push(name),
        }
    }
    rows.sort_by(|a, b| a.1 .0.total_cmp(&b.1 .0));
    let met = rows.iter().filter(|r| r.1 .0 >= 2.0).count();
    println!(
        "{} inputs, lstopo / ours >= 2 on {met}; whole process, {n} pairs each by CPU time (perf stat task-clock), {}",
        rows.len(),
        cli.display()
    );
    println!("| input | lstopo ms | ours ms | lstopo / ours (median pair) | lowest pair |");
    println!("|---|---:|---:|---:|---:|");
    for (name, (ratio, low, theirs, ours)) in &rows {
        println!(
            "| {name} | {:.3} | {:.3} | {ratio:.2}× | {low:.2}× |",
            theirs * 1e3,
            ours * 1e3
        );
    }
    println!(
        "\nnot compared (lstopo or ours fails): {}",
        failed.join(", ")
    );
}

fn print_rows(rows: &[Row], n: usize, proc_n: usize) {
    let ms = |s: f64| format!("{:.3}", s * 1e3);
    let x = |r: Option<f64>| r.map_or("–".to_string(), |v| format!("{v:.2}×"));
    let within = rows.iter().filter(|r| r.in_process.ratio <= 1.5).count();
    let abi_ratio = |r: &Row| r.abi_floor.1.ratio;
    let within_abi = rows.iter().filter(|r| abi_ratio(r) <= 1.5).count();
    let mut by_abi: Vec<&Row> = rows.iter().collect();
    by_abi.sort_by(|a, b| abi_ratio(b).total_cmp(&abi_ratio(a)));
    println!(
        "{} inputs, {within} within 1.5× of the floor, {within_abi} within 1.5× of the ABI floor \
         (worst {}: {:.2}×); in process up to {n} pairs each by thread CPU time \
         (ours / floor: median pair, 90th percentile pair); whole process {proc_n} pairs by CPU time \
         (theirs / ours, median)",
        rows.len(),
        by_abi.first().map_or("–", |r| r.name.as_str()),
        by_abi.first().map_or(0.0, |r| abi_ratio(r)),
    );
    println!(
        "| input | CPUs | floor files | floor ms | ours ms | ours / floor | p90 pair | \
         narrow floor files | ours / narrow floor | ABI look-ups | ABI floor ms | ours / ABI floor | \
         lstopo / ours | lscpu / ours |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for r in rows {
        let p = &r.in_process;
        let (narrow_files, narrow_time) = r.narrow_floor;
        println!(
            "| {} | {} | {} | {} | {} | {:.2}× | {:.2}× | {} | {:.2}× | {} | {} | {:.2}× | {} | {} |",
            r.name,
            r.cpus,
            r.files,
            ms(p.b),
            ms(p.a),
            p.ratio,
            p.ratio_p90,
            narrow_files,
            p.a / narrow_time,
            r.abi_floor.0,
            ms(r.abi_floor.1.b),
            abi_ratio(r),
            x(r.lstopo),
            x(r.lscpu)
        );
    }
    println!("\nSystem calls of one read (start-up subtracted): opens (failed) / fstat / getdents / read / all");
    println!("| input | ours | floor | ours / floor (all) |");
    println!("|---|---|---|---:|");
    let c = |k: &Option<CallCounts>| {
        k.map_or("–".to_string(), |k| {
            format!(
                "{} ({}) / {} / {} / {} / {}",
                k.opens, k.failed, k.stats, k.getdents, k.reads, k.total
            )
        })
    };
    for r in rows {
        let ratio = match (r.ours_calls, r.floor_calls) {
            (Some(o), Some(f)) if f.total > 0 => format!("{:.2}", o.total as f64 / f.total as f64),
            _ => "–".into(),
        };
        println!(
            "| {} | {} | {} | {ratio} |",
            r.name,
            c(&r.ours_calls),
            c(&r.floor_calls)
        );
    }
    let threaded: Vec<&Row> = rows.iter().filter(|r| r.threads.is_some()).collect();
    if !threaded.is_empty() {
        println!("\nParallel reading, wall clock, 2 threads against 1 (median pair, 90th percentile pair)");
        println!("| input | CPUs | 1 thread ms | 2 threads ms | 2 / 1 | p90 pair |");
        println!("|---|---:|---:|---:|---:|---:|");
        for r in threaded {
            let p = r.threads.as_ref().unwrap();
            println!(
                "| {} | {} | {} | {} | {:.2}× | {:.2}× |",
                r.name,
                r.cpus,
                ms(p.b),
                ms(p.a),
                p.ratio,
                p.ratio_p90
            );
        }
    }
}

/// `--beyond-floor DIR`: the system calls of one read of `dir` (ours, one
/// thread, under `strace`) beyond the floor's one open, read and close per
/// file, by kind: each open named by its path (resolved through the
/// directory it was opened from), `cpuN`, `nodeN` and `indexM` numbers
/// folded, and whether it was there. A floor file opened the first time is
/// the floor's own; every other open is beyond it.
fn beyond_floor(dir: &Path) {
    let t = readers::sysfs::read_path(dir).unwrap();
    let floor: std::collections::HashSet<String> = model_files(dir, &t)
        .iter()
        .filter_map(|p| Some(p.strip_prefix(dir).ok()?.display().to_string()))
        .collect();
    let list = tempfile::NamedTempFile::new().unwrap();
    let out = tempfile::NamedTempFile::new().unwrap();
    let ok = Command::new("strace")
        .arg("-o")
        .arg(out.path())
        .arg("--")
        .arg(std::env::current_exe().unwrap())
        .args(["--syscalls-of", "ours"])
        .arg(dir)
        .arg(list.path())
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "strace of one read failed");
    let text = std::fs::read_to_string(out.path()).unwrap();
    let mut calls: BTreeMap<String, usize> = BTreeMap::new();
    let mut opened_from: BTreeMap<String, String> = BTreeMap::new();
    let mut floor_opened = std::collections::HashSet::new();
    let (mut started, mut others) = (false, [0usize; 4]);
    for line in text.lines() {
        let result = line.rsplit(" = ").next().unwrap_or("");
        let fd = result.split_whitespace().next().unwrap_or("").to_string();
        if !started {
            // The read starts where it opens the root.
            started = line.starts_with(&format!("open(\"{}\"", dir.display()));
            if started {
                opened_from.insert(fd, String::new());
            }
            continue;
        }
        let Some(args) = line.strip_prefix("openat2(") else {
            let kind = ["getdents64(", "pread64(", "close(", "read("]
                .iter()
                .position(|k| line.starts_with(k));
            if let Some(k) = kind {
                others[k] += 1;
            }
            continue;
        };
        let (base, rest) = args.split_once(", \"").unwrap();
        let (path, flags) = rest.split_once('"').unwrap();
        let full = format!(
            "{}{path}",
            opened_from.get(base).map_or("?/", String::as_str)
        );
        let present = !result.starts_with('-');
        let kind = match (flags.contains("O_DIRECTORY"), flags.contains("O_PATH")) {
            (true, _) => "directory",
            (false, true) => "look-up",
            _ => "file",
        };
        if present && kind == "directory" {
            opened_from.insert(fd, format!("{full}/"));
        }
        if present && kind == "file" && floor.contains(&full) && floor_opened.insert(full.clone()) {
            continue;
        }
        let state = if present { "there" } else { "absent" };
        *calls
            .entry(format!("open {} ({kind}, {state})", fold_numbers(&full)))
            .or_default() += 1;
    }
    assert!(
        started,
        "strace shows no open of {} where the read starts",
        dir.display()
    );
    let n = floor_opened.len();
    calls.insert("getdents64".into(), others[0]);
    // pread64 and read alike: a file read through std (cpuinfo) uses read.
    let reads = others[1] + others[3];
    calls.insert(
        "reads beyond one per floor file".into(),
        reads.saturating_sub(n),
    );
    calls.insert(
        "closes beyond one per floor file".into(),
        others[2].saturating_sub(n),
    );
    let mut rows: Vec<(String, usize)> = calls.into_iter().filter(|c| c.1 > 0).collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let beyond: usize = rows.iter().map(|r| r.1).sum();
    println!(
        "{}: floor {} files ({} calls), {n} of them opened by ours; {beyond} calls beyond:",
        dir.display(),
        floor.len(),
        3 * floor.len()
    );
    for (what, count) in rows {
        println!("{count:6}  {what}");
    }
}

/// `path` with the number of every `cpuN`, `nodeN` and `indexN` component
/// replaced by `N`.
fn fold_numbers(path: &str) -> String {
    let fold = |c: &str| {
        for prefix in ["cpu", "node", "index"] {
            if let Some(n) = c.strip_prefix(prefix) {
                if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) {
                    return format!("{prefix}N");
                }
            }
        }
        c.to_string()
    };
    path.split('/').map(fold).collect::<Vec<_>>().join("/")
}
