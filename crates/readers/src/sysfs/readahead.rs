//! Reading ahead on several threads: before the reader walks a batch of CPUs
//! in order, worker threads fetch the per-CPU files it is about to ask for
//! (each a few system calls: open, stat, read, close), one contiguous range
//! of the batch each, and hand them to the [`Root`], which gives each one out
//! once in place of asking the file system.
//!
//! The workers only fetch: every decision (which file to read, what a value
//! means, what is an error) stays in the sequential reader, which consumes
//! the fetched bytes exactly as it would have read them. So the topology is
//! the same whatever the number of threads, by construction — and a file the
//! workers fetched but the reader does not ask for (a worker's guess that a
//! CPU reads a cache, wrong on an irregular machine) costs a read and nothing
//! else. Fetches use the root's own bounded, non-blocking, confined reads.
//!
//! Batches of [`BATCH`] CPUs bound the memory held at once (a hex mask of a
//! 16384-CPU machine is 4.6 KB of text, and there are several per CPU).

use std::num::NonZeroUsize;

use cpumask::CpuMask;

use super::vfs::{Fetched, Fetcher, Root};
use super::{numbered, ArchFiles, RawCpu, CORE, CORE_MASK_NAMES, CPU_DIR};

/// From this many CPUs on, [`Threads::Auto`] reads ahead on every core the
/// process may use: below it, a whole read takes a few milliseconds and
/// starting threads would be a noticeable share of it.
pub const PARALLEL_MIN_CPUS: usize = 256;

/// At most this many threads: past it, the kernel's path walks and the
/// sequential reader, not the fetching, bound the read.
const MAX_THREADS: usize = 16;

/// CPUs fetched ahead at a time.
pub(super) const BATCH: usize = 1024;

/// How many threads read a sysfs tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Threads {
    /// One per core available, on trees of [`PARALLEL_MIN_CPUS`] CPUs or
    /// more; one below.
    Auto,
    /// Exactly this many, whatever the size (1 = no reading ahead).
    Fixed(usize),
}

/// The worker threads of one read, when they are used.
pub(super) struct ReadAhead<'a> {
    fetcher: Option<Fetcher<'a>>,
    threads: usize,
}

impl<'a> ReadAhead<'a> {
    pub(super) fn new(root: &'a Root, threads: Threads, cpus: usize) -> ReadAhead<'a> {
        let threads = match threads {
            Threads::Fixed(n) => n.clamp(1, MAX_THREADS),
            Threads::Auto if cpus >= PARALLEL_MIN_CPUS => std::thread::available_parallelism()
                .map_or(1, NonZeroUsize::get)
                .min(MAX_THREADS),
            Threads::Auto => 1,
        };
        ReadAhead {
            fetcher: root.fetcher().filter(|_| threads > 1),
            threads,
        }
    }

    /// Fetches what `plan` names for `items`, split in contiguous ranges
    /// over the threads (the calling thread takes the first), into `root`.
    fn run<T: Sync>(
        &self,
        root: &Root,
        items: &[T],
        plan: impl Fn(&Fetcher, &[T], &mut Vec<(String, Fetched)>) + Sync,
    ) {
        let Some(fetcher) = self.fetcher else {
            return;
        };
        root.clear_stash();
        let per = items.len().div_ceil(self.threads).max(1);
        let mut parts = items.chunks(per);
        let first = parts.next().unwrap_or(&[]);
        let fetched: Vec<Vec<(String, Fetched)>> = std::thread::scope(|s| {
            let workers: Vec<_> = parts
                .map(|part| {
                    let plan = &plan;
                    s.spawn(move || {
                        let mut out = Vec::new();
                        plan(&fetcher, part, &mut out);
                        out
                    })
                })
                .collect();
            let mut mine = Vec::new();
            plan(&fetcher, first, &mut mine);
            let mut all = vec![mine];
            // A worker that panicked fetched nothing usable: the reader
            // then reads those files itself.
            all.extend(workers.into_iter().filter_map(|w| w.join().ok()));
            all
        });
        for part in fetched {
            root.stash(part);
        }
    }

    /// The per-CPU files [`super::CpuReader`] reads for each of `ids`: the
    /// core mask (trying the file names in the reader's order), `core_id`,
    /// `online` when `per_cpu_online`, and the architecture's firmware files.
    pub(super) fn topology(
        &self,
        root: &Root,
        ids: &[u32],
        per_cpu_online: bool,
        arch_files: ArchFiles,
    ) {
        self.run(root, ids, |fetcher, ids, out| {
            let mut fetch = |path: String| {
                let got = fetcher.file(&path);
                let found = matches!(got, Fetched::File(Ok(Some(_))));
                out.push((path, got));
                found
            };
            let mut first = 0;
            for &id in ids {
                let dir = format!("{CPU_DIR}/cpu{id}");
                if per_cpu_online {
                    fetch(format!("{dir}/online"));
                }
                let order = std::iter::once(first)
                    .chain((0..CORE_MASK_NAMES.len()).filter(|&i| i != first));
                for i in order {
                    let (list, map) = CORE_MASK_NAMES[i];
                    if fetch(format!("{dir}/topology/{map}"))
                        || fetch(format!("{dir}/topology/{list}"))
                    {
                        first = i;
                        break;
                    }
                }
                fetch(format!("{dir}/topology/core_id"));
                if arch_files.capacity {
                    fetch(format!("{dir}/cpu_capacity"));
                }
                if arch_files.physical_id {
                    fetch(format!("{dir}/physical_id"));
                }
            }
        });
    }

    /// The cache files [`super::caches::read_caches`] reads for `raws`: for
    /// a CPU first in its core, its `cache/` listing and each index's sharing
    /// map, and the rest of an index whose map it is first in (or an
    /// all-zero map, read per CPU): the CPUs that read a cache first.
    pub(super) fn caches(&self, root: &Root, raws: &[RawCpu]) {
        if self.fetcher.is_none() {
            return;
        }
        let first_of_core: Vec<u32> = raws
            .iter()
            .filter(|r| {
                r.masks[CORE]
                    .as_deref()
                    .is_none_or(|m| m.first().is_none_or(|f| f == r.id as usize))
            })
            .map(|r| r.id)
            .collect();
        self.run(root, &first_of_core, |fetcher, ids, out| {
            for &id in ids {
                fetch_cpu_caches(fetcher, id, out);
            }
        });
    }
}

/// One CPU's cache files, as [`ReadAhead::caches`] describes.
fn fetch_cpu_caches(fetcher: &Fetcher, id: u32, out: &mut Vec<(String, Fetched)>) {
    let dir = format!("{CPU_DIR}/cpu{id}/cache");
    let listing = fetcher.list(&dir);
    let names: Vec<String> = match &listing {
        Fetched::List(Ok(names)) => names
            .iter()
            .filter(|n| matches!(numbered(n, "index"), Some(Ok(_))))
            .cloned()
            .collect(),
        _ => Vec::new(),
    };
    out.push((dir.clone(), listing));
    for name in names {
        let idx = format!("{dir}/{name}");
        let mut mask = None;
        for (file, hex) in [("shared_cpu_map", true), ("shared_cpu_list", false)] {
            let path = format!("{idx}/{file}");
            let got = fetcher.file(&path);
            if let Fetched::File(Ok(Some(bytes))) = &got {
                let text = std::str::from_utf8(bytes).unwrap_or("");
                let text = text.trim_end_matches('\0');
                mask = Some(match hex {
                    true => CpuMask::parse_hex(text),
                    false => CpuMask::parse_list(text),
                });
            }
            out.push((path, got));
            if mask.is_some() {
                break;
            }
        }
        let reads_it = match mask {
            Some(Ok(m)) => m.first().is_none_or(|f| f == id as usize),
            _ => true,
        };
        if reads_it {
            for file in [
                "level",
                "type",
                "size",
                "coherency_line_size",
                "ways_of_associativity",
            ] {
                let path = format!("{idx}/{file}");
                let got = fetcher.file(&path);
                out.push((path, got));
            }
        }
    }
}
