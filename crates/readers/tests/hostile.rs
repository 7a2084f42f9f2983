//! Hostile inputs, every one generated here (nothing copied from anywhere), each
//! run in a process of its own under a memory cap (`prlimit --as`) and a time
//! limit: a reader that aborts, allocates without bound or hangs fails its case
//! instead of taking the suite down with it.
//!
//! Each case checks the reader's answer: one error naming the file (or archive)
//! with the reason in words, or, for real kernels' quirks, the right reading.
//! Run one case by hand with `HOSTILE_CASE=name cargo test -p readers --test
//! hostile`.

mod hostile_support;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hostile_support::cases;

/// Address-space cap per case. A reader that keeps what it needs stays far
/// below; one that inflates an archive bomb, copies hard links or reads a
/// device to its end does not.
const MEMORY_CAP: u64 = 768 << 20;

/// Wall-clock limit per case, generous for a loaded 2-core machine; every
/// case takes well under a second when the reader behaves, except the
/// decompression-budget cases, which inflate up to the 1 GiB stream budget.
const TIME_LIMIT: Duration = Duration::from_secs(60);

fn main() {
    if let Ok(name) = std::env::var("HOSTILE_CASE") {
        let Some((_, case)) = cases().into_iter().find(|(n, _)| *n == name) else {
            eprintln!("no case named {name}");
            std::process::exit(2);
        };
        match case() {
            Ok(()) => std::process::exit(0),
            Err(why) => {
                eprintln!("{name}: {why}");
                std::process::exit(1);
            }
        }
    }
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let exe = std::env::current_exe().expect("own path");
    let mut failed = Vec::new();
    let mut ran = 0;
    for (name, _) in cases() {
        if !filter.is_empty() && !filter.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        ran += 1;
        let started = Instant::now();
        let outcome = run_capped(&exe, name);
        let took = started.elapsed();
        match &outcome {
            Ok(()) => println!("hostile {name} ... ok ({:.2}s)", took.as_secs_f64()),
            Err(why) => {
                println!(
                    "hostile {name} ... FAILED ({:.2}s): {why}",
                    took.as_secs_f64()
                );
                failed.push(name);
            }
        }
    }
    println!("\n{ran} hostile cases, {} failed", failed.len());
    if !failed.is_empty() {
        println!("failed: {failed:?}");
        std::process::exit(1);
    }
}

/// Runs one case in a child process under the memory cap and time limit.
fn run_capped(exe: &std::path::Path, name: &str) -> Result<(), String> {
    let mut child = Command::new("prlimit")
        .arg(format!("--as={MEMORY_CAP}"))
        .arg("--")
        .arg(exe)
        .env("HOSTILE_CASE", name)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run prlimit (util-linux): {e}"))?;
    let deadline = Instant::now() + TIME_LIMIT;
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            let mut err = String::new();
            if let Some(mut s) = child.stderr.take() {
                use std::io::Read;
                let _ = s.read_to_string(&mut err);
            }
            return if status.success() {
                Ok(())
            } else {
                Err(format!("{status}: {}", err.trim()))
            };
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("still running after {TIME_LIMIT:?}"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
