//! Workloads as small declarative specs: what each task does between wake-ups.
//!
//! Every workload starts the same way: one parent task on a starting CPU forks
//! the tasks one after another (a shell's `&`, `pthread_create()`), which is the
//! fork balancing path (`select_task_rq_fair(SD_BALANCE_FORK)`), then blocks.
//!
//! - [`Workload::Spin`]: `while :; do :; done` — always runnable.
//! - [`Workload::Ebizzy`]: ebizzy 0.3 `-t N` (LTP `utils/benchmark/ebizzy-0.3`).
//!   Read from its source: `main()` allocates the chunks, `start_threads()`
//!   creates the N threads and then `sleep(seconds)`s; each thread spins on
//!   `while (threads_go == 0);` and then loops in `search_mem()`: pick a chunk,
//!   `malloc()` a copy, `memcpy()`, `bsearch()` a random key, `free()` — no
//!   system call that blocks once glibc's dynamic mmap threshold has risen above
//!   the chunk size after the first `free()`, no lock, no sleep. So in the model
//!   every thread is always runnable from birth to the end; only the main
//!   thread sleeps. (Seed 001's lparstat rows agree: %sys 0.00, and lbusy is
//!   exactly threads / CPUs.)
//! - [`Workload::Hackbench`]: pairs passing a message back and forth: one runs
//!   for `burst_us`, wakes its partner synchronously (`WF_SYNC`, from its own
//!   CPU) and blocks until the partner answers.
//! - [`Workload::Duty`]: each task runs `run_us` then sleeps `sleep_us` on a
//!   timer (woken on its previous CPU), with the phase of each task spread by
//!   the seed.

/// What the tasks do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    /// Always-runnable loops.
    Spin,
    /// ebizzy-like threads (always runnable after creation).
    Ebizzy,
    /// Message-passing pairs.
    Hackbench {
        /// CPU time per message, µs.
        burst_us: u32,
    },
    /// Run/sleep cycles.
    Duty {
        /// Run time per period, µs.
        run_us: u32,
        /// Sleep time per period, µs.
        sleep_us: u32,
    },
}

impl Workload {
    /// The name the CLI uses.
    pub fn name(&self) -> &'static str {
        match self {
            Workload::Spin => "spin",
            Workload::Ebizzy => "ebizzy",
            Workload::Hackbench { .. } => "hackbench",
            Workload::Duty { .. } => "duty",
        }
    }

    /// Parses `spin`, `ebizzy`, `hackbench[:BURST_US]`, `duty[:RUN_US:SLEEP_US]`.
    pub fn parse(s: &str) -> Result<Workload, &'static str> {
        let mut parts = s.split(':');
        let name = parts.next().unwrap_or("");
        let nums: Result<alloc::vec::Vec<u32>, _> = parts.map(|p| p.parse::<u32>()).collect();
        let nums = nums.map_err(|_| "workload parameters are whole microseconds")?;
        let w = match (name, nums.as_slice()) {
            ("spin", []) => Workload::Spin,
            ("ebizzy", []) => Workload::Ebizzy,
            ("hackbench", []) => Workload::Hackbench { burst_us: 50 },
            ("hackbench", [b]) => Workload::Hackbench { burst_us: *b },
            ("duty", []) => Workload::Duty {
                run_us: 5_000,
                sleep_us: 5_000,
            },
            ("duty", [r, s]) => Workload::Duty {
                run_us: *r,
                sleep_us: *s,
            },
            ("spin" | "ebizzy" | "hackbench" | "duty", _) => {
                return Err("wrong number of workload parameters (hackbench[:BURST_US], duty[:RUN_US:SLEEP_US])")
            }
            _ => return Err("unknown workload (spin, ebizzy, hackbench[:BURST_US], duty[:RUN_US:SLEEP_US])"),
        };
        if let Workload::Hackbench { burst_us: 0 }
        | Workload::Duty { run_us: 0, .. }
        | Workload::Duty { sleep_us: 0, .. } = w
        {
            return Err("workload times must be at least 1 µs");
        }
        if let Workload::Hackbench { burst_us } = w {
            if burst_us > 10_000_000 {
                return Err("hackbench burst above 10 s");
            }
        }
        if let Workload::Duty { run_us, sleep_us } = w {
            if run_us > 10_000_000 || sleep_us > 10_000_000 {
                return Err("duty-cycle times above 10 s");
            }
        }
        Ok(w)
    }

    /// Whether the tasks work on memory the parent wrote before forking them,
    /// which makes the parent's node their preferred node for NUMA balancing
    /// (ebizzy: `allocate()` and `write_pattern()` run in `main()` before
    /// `start_threads()`, and every thread copies from those chunks).
    pub fn shares_parent_memory(&self) -> bool {
        matches!(self, Workload::Ebizzy)
    }

    /// Whether the tasks ever block.
    pub fn sleeps(&self) -> bool {
        matches!(self, Workload::Hackbench { .. } | Workload::Duty { .. })
    }

    /// How long task `t` runs before it blocks (ns), given a uniform `jitter`
    /// in [0, 1).
    pub fn run_ns(&self, jitter: f64) -> u64 {
        match *self {
            Workload::Hackbench { burst_us } => us(burst_us, jitter),
            Workload::Duty { run_us, .. } => us(run_us, jitter),
            _ => u64::MAX,
        }
    }

    /// How long a task sleeps before its timer wakes it (ns); `None` when a
    /// partner wakes it instead.
    pub fn sleep_ns(&self, jitter: f64) -> Option<u64> {
        match *self {
            Workload::Duty { sleep_us, .. } => Some(us(sleep_us, jitter)),
            _ => None,
        }
    }

    /// Most events per task per virtual second, every time drawn at its
    /// shortest: a hackbench pair handles one block per burst (the partner's
    /// wake-up is part of it), a duty-cycle task one block and one timer
    /// wake-up per period; spinning tasks have none.
    pub fn max_events_per_task_s(&self) -> f64 {
        let per_s = |us: u32| 1e6 / (JITTER_LOW * us as f64);
        match *self {
            Workload::Hackbench { burst_us } => per_s(burst_us) / 2.0,
            Workload::Duty { run_us, sleep_us } => 2.0 * per_s(run_us.saturating_add(sleep_us)),
            Workload::Spin | Workload::Ebizzy => 0.0,
        }
    }

    /// The task that `t` wakes when it blocks (hackbench's partner).
    pub fn partner(&self, t: u32) -> Option<u32> {
        match self {
            Workload::Hackbench { .. } => Some(t ^ 1),
            _ => None,
        }
    }
}

/// Shortest share of a nominal time [`us`] draws: 90 %.
const JITTER_LOW: f64 = 0.9;

/// `us` microseconds ±10 % by `jitter`.
fn us(us: u32, jitter: f64) -> u64 {
    let base = us as f64 * 1000.0;
    (base * (JITTER_LOW + 0.2 * jitter)).max(1.0) as u64
}
