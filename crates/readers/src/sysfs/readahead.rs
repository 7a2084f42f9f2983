//! Reading ahead on several threads: while the reader walks the CPUs in
//! order, worker threads fetch the per-CPU files it is about to ask for
//! (each a few system calls: open, read, close) and hand them to the
//! [`Root`], which gives each one out once in place of asking the file
//! system.
//!
//! The work is cut in chunks of [`CHUNK`] items (CPUs) taken in order from
//! one counter: each worker takes the next chunk nobody has taken, fetches
//! it and hands it over. The reader, arriving at a chunk, uses what a worker
//! fetched for it, or, when no worker has taken it yet, takes it and
//! fetches it itself; and while a worker is still fetching it, the reader
//! fetches the next chunk nobody has taken rather than wait. So no thread
//! waits while work remains, and the fetching is shared between all the
//! threads, the reader's own included, whatever the share of the reader's
//! other work (parsing, grouping). A worker runs at most [`LEAD`] chunks
//! ahead of the reader, which bounds the memory held at once (a hex mask of
//! a 16384-CPU machine is 4.6 KB of text, and there are several per CPU).
//!
//! A read has two phases, the CPUs' files and then their caches, and a
//! worker goes on to the caches as soon as no chunk of the CPUs is left to
//! take: the reader's own work between the two (the CPUs it has left to
//! parse, the grouping, the nodes) is not time the workers sit idle.
//!
//! The workers only fetch: every decision (which file to read, what a value
//! means, what is an error) stays in the sequential reader, which consumes
//! the fetched bytes exactly as it would have read them. So the topology is
//! the same whatever the number of threads, by construction — and a file the
//! workers fetched but the reader does not ask for costs a read and nothing
//! else, while one they did not fetch is read by the reader. The plans
//! follow the reader's own shortcuts, from what they fetched, so that the
//! threads do not fetch what it skips: an SMT sibling's core mask, the
//! `cache/` listing of a CPU whose index names earlier CPUs showed, and the
//! optional cache files an index lacked. Fetches use the root's own
//! bounded, non-blocking, confined reads.

use std::fmt::{self, Write as _};
use std::num::NonZeroUsize;
use std::ops::ControlFlow;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock, PoisonError};

use cpumask::MAX_CPUS;

#[cfg(target_os = "linux")]
mod own_fds;

use super::caches::{cache_dir, has_index, OPTIONAL};
use super::vfs::{Fetched, Fetcher, Root};
use super::{numbered, ArchFiles, RawCpu, CORE_MASK_NAMES, CPU_DIR};

/// From this many CPUs on, [`Threads::Auto`] reads ahead on every core the
/// process may use: below it, a whole read takes a few milliseconds and
/// starting threads would be a noticeable share of it.
pub const PARALLEL_MIN_CPUS: usize = 256;

/// At most this many threads: past it, the kernel's path walks and the
/// sequential reader, not the fetching, bound the read.
const MAX_THREADS: usize = 16;

/// CPUs in a chunk: enough that handing a chunk over (a lock, a wake-up, a
/// hash insert per file) is small beside fetching it, few enough that the
/// threads finish together.
const CHUNK: usize = 64;

/// How many chunks a worker may fetch ahead of the reader (1024 CPUs).
const LEAD: usize = 16;

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

/// What the reader and the workers of one phase share.
struct Shared {
    /// The next chunk nobody has taken.
    next: AtomicUsize,
    state: Mutex<State>,
    changed: Condvar,
}

struct State {
    /// Each chunk's files, once a worker has fetched them.
    fetched: Vec<Option<Fetched>>,
    /// Chunks the reader is done with.
    consumed: usize,
    /// Set when the reader stops (done, or an error): workers leave.
    stop: bool,
    /// Chunks' buffers the reader is done with, for the workers to reuse.
    spare: Vec<Fetched>,
}

impl Shared {
    fn new(chunks: usize) -> Shared {
        Shared {
            next: AtomicUsize::new(0),
            state: Mutex::new(State {
                fetched: (0..chunks).map(|_| None).collect(),
                consumed: 0,
                stop: false,
                spare: Vec::new(),
            }),
            changed: Condvar::new(),
        }
    }

    /// A worker's state is only ever left consistent (each field written
    /// whole), so a poisoned lock is still usable.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wait<'g>(&self, guard: MutexGuard<'g, State>) -> MutexGuard<'g, State> {
        self.changed
            .wait(guard)
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// A worker: takes chunks in order and fetches them until none is left
    /// or the reader stops.
    fn work<T>(&self, chunks: &[&[T]], fetch: impl Fn(&[T], &mut Fetched)) {
        loop {
            let c = self.next.fetch_add(1, Ordering::AcqRel);
            if c >= chunks.len() {
                return;
            }
            let mut state = self.lock();
            while !state.stop && c >= state.consumed + LEAD {
                state = self.wait(state);
            }
            if state.stop {
                return;
            }
            let out = state.spare.pop().unwrap_or_default();
            drop(state);
            self.fetch_into(c, chunks[c], out, &fetch);
        }
    }

    /// Fetches chunk `c` into `out` (a spare buffer) and hands it over.
    fn fetch_into<T>(
        &self,
        c: usize,
        chunk: &[T],
        mut out: Fetched,
        fetch: impl Fn(&[T], &mut Fetched),
    ) {
        out.clear();
        // A fetch that panics hands over what it fetched before (each
        // entry whole): the reader reads the rest itself.
        let _ = catch_unwind(AssertUnwindSafe(|| fetch(chunk, &mut out)));
        self.lock().fetched[c] = Some(out);
        self.changed.notify_all();
    }

    /// The reader, arriving at chunk `c`: what a worker fetched for it, or
    /// what the reader fetches itself when no worker has taken it (through
    /// the same plan, which learns from every chunk what the later ones
    /// need). While a worker is still fetching `c`, the reader does not wait
    /// idle: it fetches the next chunk nobody has taken, as a worker would.
    /// The reader's own work (parsing, grouping) is a fixed share of the
    /// read; without this the workers' share of the fetching is everything
    /// else, and the reader, arriving at each chunk while its worker is on
    /// it, waits out the difference.
    fn take<T>(&self, c: usize, chunks: &[&[T]], fetch: impl Fn(&[T], &mut Fetched)) -> Fetched {
        if self
            .next
            .compare_exchange(c, c + 1, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            let mut out = self.lock().spare.pop().unwrap_or_default();
            out.clear();
            // A fetch that panics leaves what it fetched before (each
            // entry whole): the reader reads the rest itself.
            let _ = catch_unwind(AssertUnwindSafe(|| fetch(chunks[c], &mut out)));
            return out;
        }
        let mut state = self.lock();
        loop {
            if let Some(files) = state.fetched[c].take() {
                return files;
            }
            match self.claim_ahead(c, chunks.len()) {
                Some(ahead) => {
                    let out = state.spare.pop().unwrap_or_default();
                    drop(state);
                    self.fetch_into(ahead, chunks[ahead], out, &fetch);
                    state = self.lock();
                }
                None => state = self.wait(state),
            }
        }
    }

    /// Takes the next chunk nobody has taken, for the reader at chunk
    /// `reader_at`, within the workers' own bound of [`LEAD`] chunks ahead.
    fn claim_ahead(&self, reader_at: usize, chunks: usize) -> Option<usize> {
        let limit = chunks.min(reader_at + LEAD);
        let mut next = self.next.load(Ordering::Acquire);
        while next < limit {
            match self.next.compare_exchange_weak(
                next,
                next + 1,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return Some(next),
                Err(now) => next = now,
            }
        }
        None
    }

    /// The reader goes on at chunk `first`: the chunks before it are
    /// neither fetched nor waited for, and what a worker fetched for one
    /// of them already is spare (the workers' lead of [`LEAD`] chunks
    /// bounds what is held, whatever the reader skips).
    fn skip_to(&self, first: usize) {
        self.next.fetch_max(first, Ordering::AcqRel);
        let mut state = self.lock();
        if first <= state.consumed {
            return;
        }
        let State { fetched, spare, .. } = &mut *state;
        spare.extend(fetched[..first].iter_mut().filter_map(Option::take));
        state.consumed = first;
        drop(state);
        self.changed.notify_all();
    }

    /// The reader is done with `chunks` chunks, and with `spare`.
    fn consumed(&self, chunks: usize, spare: Option<Fetched>) {
        let mut state = self.lock();
        state.consumed = chunks;
        state.spare.extend(spare);
        drop(state);
        self.changed.notify_all();
    }
}

/// Stops the workers when the reader leaves, however it leaves.
struct StopOnDrop<'s>(&'s Shared);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.lock().stop = true;
        self.0.changed.notify_all();
    }
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

    /// Starts the workers on the read of the CPUs `ids` and runs `f` on the
    /// calling thread meanwhile, with the [`Started`] read through which it
    /// reads the CPUs' files and then their caches. The workers fetch the
    /// CPUs' files (the first phase) and, once no chunk of those is left to
    /// take, the caches (the second), so that they are not idle while the
    /// reader finishes the CPUs, groups them and reads the nodes; they stop
    /// when `f` returns.
    ///
    /// In the first phase the workers fetch the per-CPU files
    /// [`super::CpuReader`] reads: the core mask (trying the file names in
    /// the reader's order) unless an earlier CPU's lists the CPU,
    /// `core_id`, `online` when `per_cpu_online`, and the architecture's
    /// firmware files until a CPU lacks one. In the second, the files
    /// [`super::caches::read_caches`] reads of each CPU that no earlier
    /// CPU's core mask listed (first in its core): each index's sharing map
    /// (the index names from the first `cache/` listing a worker made, as
    /// the reader takes them from earlier CPUs), the rest of an index whose
    /// map it is first in (or an all-zero map, read per CPU), and the
    /// look-up of the index past the last. A map another CPU of the chunk
    /// fetched already holds this CPU: the reader counts that cache as
    /// read, and the map is not fetched.
    pub(super) fn start<R>(
        &self,
        ids: &[u32],
        per_cpu_online: bool,
        arch_files: ArchFiles,
        f: impl FnOnce(&Started<'_>) -> R,
    ) -> R {
        let chunks: Vec<&[u32]> = ids.chunks(CHUNK).collect();
        match self.fetcher {
            None => f(&Started {
                ids,
                chunks: &chunks,
                ahead: None,
            }),
            Some(fetcher) => {
                self.start_workers(fetcher, ids, &chunks, per_cpu_online, arch_files, f)
            }
        }
    }

    /// [`ReadAhead::start`] with workers. Kept out of it: what the workers
    /// share (the plans' masks, the queues, `f`'s result) takes pages of
    /// stack that a one-thread read, the usual short run, would otherwise
    /// touch below the files' reads (stack probes: each page a fault).
    #[inline(never)]
    fn start_workers<R>(
        &self,
        fetcher: Fetcher<'_>,
        ids: &[u32],
        chunks: &[&[u32]],
        per_cpu_online: bool,
        arch_files: ArchFiles,
        f: impl FnOnce(&Started<'_>) -> R,
    ) -> R {
        let learnt = Learnt::default();
        let topology = |part: &[u32], out: &mut Fetched| {
            fetch_cpus(&fetcher, part, per_cpu_online, arch_files, &learnt, out)
        };
        let caches =
            |part: &[u32], out: &mut Fetched| fetch_caches(&fetcher, part, ids, &learnt, out);
        let (cpus_shared, caches_shared) = (Shared::new(chunks.len()), Shared::new(chunks.len()));
        std::thread::scope(|s| {
            let _stop = (StopOnDrop(&cpus_shared), StopOnDrop(&caches_shared));
            for _ in 1..self.threads.min(chunks.len()) {
                let (topology, caches) = (&topology, &caches);
                let (cpus_shared, caches_shared) = (&cpus_shared, &caches_shared);
                s.spawn(move || {
                    // SAFETY: a worker opens and closes its own files and
                    // hands over their bytes only (`Fetched`); the root's
                    // descriptors it reads beneath were open before.
                    #[cfg(target_os = "linux")]
                    #[allow(unsafe_code)]
                    unsafe {
                        own_fds::own_table()
                    };
                    cpus_shared.work(chunks, topology);
                    caches_shared.work(chunks, caches);
                });
            }
            f(&Started {
                ids,
                chunks,
                ahead: Some([(&cpus_shared, &topology), (&caches_shared, &caches)]),
            })
        })
    }
}

/// What the phases' plans learn as they go, shared by every thread.
#[derive(Default)]
struct Learnt {
    /// The core-mask file pair last found (one kernel wrote every CPU's
    /// directory).
    pair: AtomicUsize,
    /// The CPUs an earlier CPU's core mask lists.
    listed: CpuBits,
    /// The CPUs found without a core mask.
    absent: CpuBits,
    /// The index names of the first `cache/` listing, and the last index's
    /// number (see `CacheScan::read_known`).
    names: OnceLock<(Vec<String>, u64)>,
    /// Once a CPU's `cache/` showed no index, whether the last CPU's
    /// showed none either: then, as the reader concludes
    /// (`CacheScan::nobody_has_caches`), no CPU has caches, and no other
    /// `cache/` is listed.
    no_caches: OnceLock<bool>,
    /// How many CPUs the first phase has fetched. A worker goes on to the
    /// caches while others still fetch the last CPUs, so `absent` is final
    /// (and the last CPU with a core mask known) only once this counts
    /// every CPU of the read.
    cpus_fetched: AtomicUsize,
}

/// The first phase's plan for the CPUs `ids` (see [`ReadAhead::start`]).
fn fetch_cpus(
    fetcher: &Fetcher,
    ids: &[u32],
    per_cpu_online: bool,
    arch_files: ArchFiles,
    learnt: &Learnt,
    out: &mut Fetched,
) {
    let Learnt {
        pair,
        listed,
        absent,
        ..
    } = learnt;
    let mut path = String::new();
    let mut fetch =
        |out: &mut Fetched, name: fmt::Arguments| out.file(fetcher, joined(&mut path, name));
    let mut first = pair.load(Ordering::Relaxed);
    // As the reader, a chunk stops asking for a firmware file once a CPU
    // lacks it (see `CpuReader::firmware_facts`).
    let (mut capacity, mut physical_id) = (arch_files.capacity, arch_files.physical_id);
    for &id in ids {
        let dir = format_args!("{CPU_DIR}/cpu{id}");
        if per_cpu_online {
            fetch(out, format_args!("{dir}/online"));
        }
        let order = std::iter::once(first)
            .chain((0..CORE_MASK_NAMES.len()).filter(|&i| i != first))
            .filter(|_| !listed.has(id));
        let mut found = listed.has(id);
        for i in order {
            let (list, map) = CORE_MASK_NAMES[i];
            if let Some(item) = fetch(out, format_args!("{dir}/topology/{map}")) {
                listed.mark_after(id, map_form(out.content(item), true));
                (first, found) = (i, true);
                break;
            }
            if fetch(out, format_args!("{dir}/topology/{list}")).is_some() {
                (first, found) = (i, true);
                break;
            }
        }
        // A CPU without a core mask is offline (the kernel takes its
        // `topology/` and `cache/` away together: both are cpuhp states
        // torn down when it goes down) or one the reader reads as offline:
        // its caches are not fetched.
        if !found {
            absent.mark(id);
        }
        // x86 siblings take their core id from cpuinfo (see
        // `CpuReader::cpuinfo_core_id`).
        if !(arch_files.cpuinfo_ids && listed.has(id)) {
            fetch(out, format_args!("{dir}/topology/core_id"));
        }
        if capacity {
            capacity = fetch(out, format_args!("{dir}/cpu_capacity")).is_some();
        }
        if physical_id {
            physical_id = fetch(out, format_args!("{dir}/physical_id")).is_some();
        }
    }
    pair.store(first, Ordering::Relaxed);
    // Publishes this chunk's `absent` marks with the count.
    learnt.cpus_fetched.fetch_add(ids.len(), Ordering::Release);
}

/// The second phase's plan for the CPUs `ids`: the caches of each CPU
/// neither listed by an earlier CPU's core mask nor found without one;
/// none once no CPU is found to have any (`all` are the read's CPUs).
fn fetch_caches(fetcher: &Fetcher, ids: &[u32], all: &[u32], learnt: &Learnt, out: &mut Fetched) {
    let mut chunk = ChunkCaches::default();
    let skip = |id: u32| learnt.listed.has(id) || learnt.absent.has(id);
    for &id in ids.iter().filter(|&&id| !skip(id)) {
        if learnt.no_caches.get() == Some(&true) {
            return;
        }
        if !fetch_cpu_caches(fetcher, id, &learnt.names, &mut chunk, out)
            && learnt.no_caches.get().is_none()
            && learnt.cpus_fetched.load(Ordering::Acquire) >= all.len()
        {
            // The reader's rule: a CPU without caches and the last CPU
            // found with a core mask, without caches too, say that nobody
            // has any (see `CacheScan::nobody_has_caches`). Decided only
            // once every CPU's first phase is in: before that the last CPU
            // not yet known absent may be an offline one without `cache/`.
            let last = all
                .iter()
                .rev()
                .find(|&&c| c != id && !learnt.absent.has(c));
            let none = !last.is_some_and(|&l| has_index(&out.list(fetcher, &cache_dir(l))));
            let _ = learnt.no_caches.set(none);
        }
    }
}

/// What fetches one chunk's files.
type FetchFn<'f> = dyn Fn(&[u32], &mut Fetched) + Sync + 'f;

/// A read whose workers have started (see [`ReadAhead::start`]): the
/// reader reads the CPUs ([`Started::topology`]), then their caches
/// ([`Started::caches`]), through what the workers fetched.
pub(super) struct Started<'p> {
    /// The CPUs read, in order, and their chunks.
    ids: &'p [u32],
    chunks: &'p [&'p [u32]],
    /// The two phases' state and plans, when workers run.
    ahead: Option<[(&'p Shared, &'p FetchFn<'p>); 2]>,
}

impl Started<'_> {
    /// Reads the CPUs with `read`, in order.
    pub(super) fn topology<E>(
        &self,
        root: &Root,
        mut read: impl FnMut(u32) -> Result<(), E>,
    ) -> Result<(), E> {
        let steps = self.ids.iter().enumerate().map(|(k, &id)| (k / CHUNK, id));
        self.consume(root, 0, steps, |id| read(id).map(|()| true))
    }

    /// Reads the caches of the CPUs from `raws[from]` on with `read`
    /// (given each CPU's index in `raws`, it says whether to go on). The
    /// CPUs of `raws` are CPUs read, in order.
    pub(super) fn caches<E>(
        &self,
        root: &Root,
        raws: &[RawCpu],
        from: usize,
        read: impl FnMut(usize) -> Result<bool, E>,
    ) -> Result<(), E> {
        let chunk_of = |id: u32| self.ids.partition_point(|&c| c < id) / CHUNK;
        let steps = (from..raws.len()).map(|i| (chunk_of(raws[i].id), i));
        self.consume(root, 1, steps, read)
    }

    /// Runs `read` on each step's item until it says stop (`Ok(false)`) or
    /// fails; the steps' chunks (in order) say which chunk of `phase` is
    /// handed to `root` when the item is read.
    fn consume<X, E>(
        &self,
        root: &Root,
        phase: usize,
        steps: impl Iterator<Item = (usize, X)>,
        mut read: impl FnMut(X) -> Result<bool, E>,
    ) -> Result<(), E> {
        let Some(ahead) = self.ahead else {
            for (_, x) in steps {
                if !read(x)? {
                    break;
                }
            }
            return Ok(());
        };
        let (shared, fetch) = ahead[phase];
        let mut at = None;
        let mut result = Ok(());
        for (c, x) in steps {
            if at != Some(c) {
                if let Some(done) = at {
                    shared.consumed(done + 1, root.unstash());
                }
                shared.skip_to(c);
                root.stash(shared.take(c, self.chunks, fetch));
                at = Some(c);
            }
            match read(x) {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        if let Some(done) = at {
            shared.consumed(done + 1, root.unstash());
        }
        result
    }
}

/// A set of CPUs the plans share, a bit per possible CPU number, set by
/// any thread: the CPUs that a core mask fetched for an earlier CPU lists
/// (SMT siblings, which the reader reads from their `core_id` alone, see
/// `CpuReader::read_sibling`, so their own mask is not fetched), and the
/// CPUs found without a core mask. A bit not yet set when a worker looks
/// costs a fetch the reader does not use, nothing else.
struct CpuBits([AtomicU64; MAX_CPUS / 64]);

impl Default for CpuBits {
    fn default() -> CpuBits {
        CpuBits(std::array::from_fn(|_| AtomicU64::new(0)))
    }
}

impl CpuBits {
    fn has(&self, cpu: u32) -> bool {
        let cpu = cpu as usize;
        self.0
            .get(cpu / 64)
            .is_some_and(|w| w.load(Ordering::Relaxed) & (1 << (cpu % 64)) != 0)
    }

    fn mark(&self, cpu: u32) {
        let cpu = cpu as usize;
        if let Some(w) = self.0.get(cpu / 64) {
            w.fetch_or(1 << (cpu % 64), Ordering::Relaxed);
        }
    }

    /// Marks the CPUs above `owner` that the hex `map` lists. Only the
    /// kernel's hex form is read: a list form marks nothing.
    fn mark_after(&self, owner: u32, map: Option<MapForm>) {
        let Some(map) = map.filter(|m| m.hex) else {
            return;
        };
        map.each_group(|group, mut bits| {
            while bits != 0 {
                let cpu = group * 32 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if cpu > owner as usize {
                    self.mark(cpu as u32);
                }
            }
            ControlFlow::Continue(())
        });
    }
}

/// What the fetching of one chunk's caches has learnt.
#[derive(Default)]
struct ChunkCaches {
    /// (index name, its map's item in the chunk's files, whether a hex
    /// map) for the maps fetched.
    maps: Vec<(String, usize, bool)>,
    /// Index name -> the optional files it lacked where first fetched: the
    /// reader does not ask the later CPUs for those (see
    /// `IndexName::lacking`), so neither do the workers, after one try per
    /// chunk.
    lacking: Vec<(String, u8)>,
    /// The path of the file being fetched (see [`joined`]).
    path: String,
}

/// `args` written into `buf`, emptied first: the workers make a path for
/// every file they fetch, and one buffer reused spares an allocation and a
/// free each (a worker's allocations contend with the reader's).
fn joined<'b>(buf: &'b mut String, args: fmt::Arguments<'_>) -> &'b str {
    buf.clear();
    // Writing to a `String` cannot fail.
    let _ = buf.write_fmt(args);
    buf
}

/// An index's files besides its sharing map that every kernel writes; the
/// optional ones are [`OPTIONAL`].
const ALWAYS: [&str; 2] = ["level", "type"];

/// One CPU's cache files, as [`ReadAhead::start`] describes; `names` are
/// the index names of the first listing (and the highest index number),
/// `chunk` what the chunk's earlier CPUs fetched. `false` when the CPU was
/// listed and showed no index.
fn fetch_cpu_caches(
    fetcher: &Fetcher,
    id: u32,
    names: &OnceLock<(Vec<String>, u64)>,
    chunk: &mut ChunkCaches,
    out: &mut Fetched,
) -> bool {
    let dir = cache_dir(id);
    let (names, last) = match names.get() {
        Some((names, last)) => (names, *last),
        None => {
            let mut listed: Vec<(u64, String)> = out
                .list(fetcher, &dir)
                .into_iter()
                .filter_map(|n| Some((numbered(&n, "index")?.ok()?, n)))
                .collect();
            // In index order, as the reader asks for them.
            listed.sort_unstable();
            let Some(&(last, _)) = listed.last() else {
                return false;
            };
            let listed = listed.into_iter().map(|(_, n)| n).collect();
            let (names, last) = names.get_or_init(|| (listed, last));
            (names, *last)
        }
    };
    let cpu = id as usize;
    for name in names {
        let covered = chunk.maps.iter().any(|(n, item, hex)| {
            n == name && map_form(out.content(*item), *hex).is_some_and(|m| m.holds(cpu))
        });
        if covered {
            continue;
        }
        let idx = format!("{dir}/{name}");
        let mut first = None;
        for (file, hex) in [("shared_cpu_map", true), ("shared_cpu_list", false)] {
            let path = joined(&mut chunk.path, format_args!("{idx}/{file}"));
            if let Some(item) = out.file(fetcher, path) {
                first = map_form(out.content(item), hex).and_then(|m| m.first());
                chunk.maps.push((name.clone(), item, hex));
                break;
            }
        }
        // Unknown (no map, or a text not in the kernel's form) or all-zero
        // maps are read per CPU.
        if first.flatten().is_none_or(|f| f == cpu) {
            fetch_index_files(fetcher, &idx, name, chunk, out);
        }
    }
    // The reader's check that the CPU has no index past those names.
    let past = last.saturating_add(1);
    out.exists(
        fetcher,
        joined(&mut chunk.path, format_args!("{dir}/index{past}")),
    );
    true
}

/// The files of index directory `idx` besides its map, leaving out the
/// optional ones its name lacked before in the chunk.
fn fetch_index_files(
    fetcher: &Fetcher,
    idx: &str,
    name: &str,
    chunk: &mut ChunkCaches,
    out: &mut Fetched,
) {
    for file in ALWAYS {
        out.file(
            fetcher,
            joined(&mut chunk.path, format_args!("{idx}/{file}")),
        );
    }
    let known = chunk.lacking.iter().find(|(n, _)| n == name).map(|l| l.1);
    let mut lacks = 0;
    for (file, bit) in OPTIONAL {
        if known.is_some_and(|k| k & bit != 0) {
            continue;
        }
        let path = joined(&mut chunk.path, format_args!("{idx}/{file}"));
        if out.file(fetcher, path).is_none() {
            lacks |= bit;
        }
    }
    if known.is_none() {
        chunk.lacking.push((name.to_string(), lacks));
    }
}

/// A sharing map's text as fetched, for the workers' guesses only: the
/// reader parses the maps it reads with its own rules.
#[derive(Clone, Copy)]
struct MapForm<'t> {
    text: &'t [u8],
    /// The kernel's hex map (`shared_cpu_map`), else a cpulist.
    hex: bool,
}

/// A fetched map file's text, without its trailing newline or padding.
fn map_form(bytes: Option<&[u8]>, hex: bool) -> Option<MapForm<'_>> {
    let bytes = bytes?;
    let end = bytes
        .iter()
        .rposition(|&b| !matches!(b, b'\n' | b'\0' | b' '))
        .map_or(0, |i| i + 1);
    Some(MapForm {
        text: &bytes[..end],
        hex,
    })
}

impl MapForm<'_> {
    /// Calls `f` with each non-zero 32-bit group of a hex map (its number,
    /// from CPUs 0–31 up, and its bits) until `f` breaks; `None` at a text
    /// not in the kernel's form (groups of eight digits, a comma between,
    /// the first group maybe shorter). A group at a time, not a digit: the
    /// map of one CPU of 16384 is 4.6 KB of zeros and commas.
    fn each_group(&self, mut f: impl FnMut(usize, u32) -> ControlFlow<()>) -> Option<()> {
        let text = self.text;
        let mut end = text.len();
        let mut group = 0;
        while end > 0 {
            let start = end.saturating_sub(8);
            let digits = &text[start..end];
            if digits != b"00000000" {
                let bits = std::str::from_utf8(digits).ok()?;
                if !bits.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return None;
                }
                let bits = u32::from_str_radix(bits, 16).ok()?;
                if bits != 0 && f(group, bits).is_break() {
                    return Some(());
                }
            }
            if start == 0 {
                break;
            }
            if text[start - 1] != b',' {
                return None;
            }
            end = start - 1;
            group += 1;
        }
        Some(())
    }

    /// The map's first CPU: `Some(None)` for an all-zero map, `None` when
    /// the text is no map.
    fn first(&self) -> Option<Option<usize>> {
        if !self.hex {
            // A cpulist starts with its first CPU (`0-3,8`).
            let head = self.text.split(|&b| b == b',' || b == b'-').next()?;
            let n = std::str::from_utf8(head).ok()?.trim().parse().ok()?;
            return Some(Some(n));
        }
        let mut first = None;
        self.each_group(|group, bits| {
            first = Some(group * 32 + bits.trailing_zeros() as usize);
            ControlFlow::Break(())
        })?;
        Some(first)
    }

    /// Whether the map surely holds `cpu` (a hex map in the kernel's
    /// groups of eight digits).
    fn holds(&self, cpu: usize) -> bool {
        if !self.hex {
            return false;
        }
        let digit = cpu / 4;
        // Eight digits a group, a comma between groups.
        let from_end = digit + digit / 8;
        let Some(at) = self.text.len().checked_sub(from_end + 1) else {
            return false;
        };
        (self.text[at] as char)
            .to_digit(16)
            .is_some_and(|d| d & (1 << (cpu % 4)) != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use topology::Arch;

    fn hex(text: &str) -> MapForm<'_> {
        MapForm {
            text: text.as_bytes(),
            hex: true,
        }
    }

    /// The guesses agree with the kernel's hex map form: 32-bit groups of
    /// eight digits, most significant first, CPU 0 the lowest bit of the
    /// last digit (Documentation/ABI and bitmap_print_to_pagebuf).
    #[test]
    fn map_guesses_read_the_kernels_hex_form() {
        let m = hex("00000001,00000000,00000000,00000030");
        assert_eq!(m.first(), Some(Some(4)));
        for cpu in [4, 5, 96] {
            assert!(m.holds(cpu), "{cpu}");
        }
        for cpu in [0, 3, 6, 32, 95, 97, 200] {
            assert!(!m.holds(cpu), "{cpu}");
        }
        assert_eq!(hex("00000000,00000000").first(), Some(None));
        assert_eq!(hex("0000zz00").first(), None);
        let list = MapForm {
            text: b"8-11,20",
            hex: false,
        };
        assert_eq!(list.first(), Some(Some(8)));
        assert!(!list.holds(8));
    }

    /// The kernel prints the most significant group with only the digits
    /// nr_cpu_ids needs (`bitmap_print_to_pagebuf` on 36 CPUs: `3,...`);
    /// every other group has eight.
    #[test]
    fn a_short_leading_group_is_the_kernels_form() {
        assert_eq!(hex("3,00000000").first(), Some(Some(32)));
        assert_eq!(hex("00000000,3").first(), None);
        assert_eq!(hex("0,0000000000").first(), None);
    }

    /// An offline CPU (no `topology/`, no `cache/`, as the kernel leaves
    /// it) found by the first phase is left out of the second: no cache
    /// path of it is fetched, and the online CPU after it still gets its
    /// caches fetched.
    #[test]
    fn caches_of_cpus_without_a_core_mask_are_not_fetched() {
        let base = std::env::temp_dir().join(format!("readahead-offline-{}", std::process::id()));
        let cpu = |id: u32| base.join(format!("{CPU_DIR}/cpu{id}"));
        for (id, map) in [(0, "1"), (2, "4")] {
            std::fs::create_dir_all(cpu(id).join("topology")).unwrap();
            std::fs::write(cpu(id).join("topology/core_cpus"), map).unwrap();
            std::fs::create_dir_all(cpu(id).join("cache/index0")).unwrap();
            std::fs::write(cpu(id).join("cache/index0/shared_cpu_map"), map).unwrap();
        }
        std::fs::create_dir_all(cpu(1)).unwrap();
        let root = Root::dir(&base, false);
        let fetcher = root.fetcher().expect("a directory root fetches");
        let learnt = Learnt::default();
        let arch = ArchFiles::of(&Arch::X86_64);
        let mut out = Fetched::default();
        fetch_cpus(&fetcher, &[0, 1, 2], false, arch, &learnt, &mut out);
        out.clear();
        fetch_caches(&fetcher, &[1, 2], &[0, 1, 2], &learnt, &mut out);
        let paths = out.paths();
        std::fs::remove_dir_all(&base).unwrap();
        let absent = &learnt.absent;
        assert!(absent.has(1) && !absent.has(0) && !absent.has(2));
        assert!(paths.iter().all(|p| !p.contains("/cpu1/")), "{paths:?}");
        assert!(
            paths
                .iter()
                .any(|p| p.ends_with("cpu2/cache/index0/shared_cpu_map")),
            "{paths:?}"
        );
    }

    /// On a machine without caches (no CPU has a `cache/`, as ia64
    /// kernels before cacheinfo), the workers list the first CPU's and the
    /// last CPU's `cache/` and no other, as the reader asks those two
    /// (`CacheScan::nobody_has_caches`); with caches on the last CPU they
    /// go on listing.
    #[test]
    fn workers_stop_listing_caches_once_the_first_and_last_cpu_have_none() {
        let listed = |last_has_caches: bool| {
            let base = tempfile::tempdir().unwrap();
            let cpu = |id: u32| base.path().join(format!("{CPU_DIR}/cpu{id}"));
            for id in 0..5u32 {
                std::fs::create_dir_all(cpu(id).join("topology")).unwrap();
                let map = format!("{:x}", 1 << id);
                std::fs::write(cpu(id).join("topology/core_cpus"), map).unwrap();
            }
            if last_has_caches {
                std::fs::create_dir_all(cpu(4).join("cache/index0")).unwrap();
            }
            let root = Root::dir(base.path(), false);
            let fetcher = root.fetcher().expect("a directory root fetches");
            let learnt = Learnt::default();
            let arch = ArchFiles::of(&Arch::X86_64);
            let ids = [0, 1, 2, 3, 4];
            let mut out = Fetched::default();
            fetch_cpus(&fetcher, &ids, false, arch, &learnt, &mut out);
            out.clear();
            fetch_caches(&fetcher, &ids[..4], &ids, &learnt, &mut out);
            let paths: Vec<String> = out.paths().into_iter().map(str::to_string).collect();
            paths
                .into_iter()
                .filter_map(|p| p.strip_suffix("/cache").map(str::to_string))
                .collect::<Vec<String>>()
        };
        let cpu = |id: u32| format!("{CPU_DIR}/cpu{id}");
        assert_eq!(listed(false), [cpu(0), cpu(4)]);
        assert_eq!(listed(true), [cpu(0), cpu(4), cpu(1), cpu(2), cpu(3)]);
    }

    /// Whether nobody has caches waits for the first phase to finish:
    /// while the last CPU (offline: no `topology/`, no `cache/`) is not yet
    /// fetched, a CPU without `cache/` does not stop the listing of the
    /// others, which have caches.
    #[test]
    fn no_caches_waits_for_every_cpu_of_the_first_phase() {
        let base = tempfile::tempdir().unwrap();
        let cpu = |id: u32| base.path().join(format!("{CPU_DIR}/cpu{id}"));
        for id in 0..4u32 {
            std::fs::create_dir_all(cpu(id).join("topology")).unwrap();
            let map = format!("{:x}", 1 << id);
            std::fs::write(cpu(id).join("topology/core_cpus"), map).unwrap();
            if id != 1 {
                std::fs::create_dir_all(cpu(id).join("cache/index0")).unwrap();
            }
        }
        std::fs::create_dir_all(cpu(4)).unwrap();
        let root = Root::dir(base.path(), false);
        let fetcher = root.fetcher().expect("a directory root fetches");
        let learnt = Learnt::default();
        let arch = ArchFiles::of(&Arch::X86_64);
        let ids = [0, 1, 2, 3, 4];
        let mut out = Fetched::default();
        // Another worker still has CPU 4's chunk of the first phase.
        fetch_cpus(&fetcher, &ids[..4], false, arch, &learnt, &mut out);
        out.clear();
        fetch_caches(&fetcher, &ids[1..4], &ids, &learnt, &mut out);
        let listed: Vec<String> = out
            .paths()
            .into_iter()
            .filter_map(|p| p.strip_suffix("/cache").map(str::to_string))
            .collect();
        let cpu = |id: u32| format!("{CPU_DIR}/cpu{id}");
        assert_eq!(listed, [cpu(1), cpu(2)]);
        assert_eq!(learnt.no_caches.get(), None);
    }

    /// A threads-last core (CPUs 5 and 8197 of 16384) marks its second
    /// thread only; the owner and CPUs below it stay unmarked, and a list
    /// form or a broken text marks nothing.
    #[test]
    fn siblings_above_the_owner_are_marked() {
        let mut groups = vec!["00000000"; MAX_CPUS / 32];
        let n = groups.len();
        groups[n - 1] = "00000020";
        groups[n - 1 - 8197 / 32] = "00000020";
        let text = groups.join(",");
        let listed = CpuBits::default();
        listed.mark_after(5, Some(hex(&text)));
        let marked: Vec<u32> = (0..MAX_CPUS as u32).filter(|&c| listed.has(c)).collect();
        assert_eq!(marked, [8197]);
        let other = CpuBits::default();
        other.mark_after(8197, Some(hex(&text)));
        assert!((0..MAX_CPUS as u32).all(|c| !other.has(c)));
        let list = MapForm {
            text: b"5,8197",
            hex: false,
        };
        other.mark_after(5, Some(list));
        other.mark_after(5, Some(hex("0000002g,00000020")));
        assert!((0..MAX_CPUS as u32).all(|c| !other.has(c)));
    }
}
