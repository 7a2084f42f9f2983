//! Linux sysfs + procfs reader: the live host, an extracted dump directory, or a
//! `.tar.gz` / `.tar.bz2` / `.tar.xz` snapshot read in memory (the layout of util-linux's
//! `lscpu --sysroot` dumps and hwloc's `hwloc-gather-topology` tarballs).
//!
//! What is read, and why each source:
//! - `sys/devices/system/cpu/{possible,present,online}`: the three CPU sets.
//! - `cpuN/online`: per-CPU state (CPU 0 often has no such file: it is online).
//! - `cpuN/topology/`: package / die / cluster / core ids and sibling masks.
//!   Groups are formed from the ids when they agree with the kernel's sibling
//!   masks on the online CPUs, and from the masks otherwise (hwloc and lscpu both
//!   trust the masks; the ids are kept because they are the OS's names). Offline
//!   CPUs without a topology directory stay in possible/present only, and so
//!   do online ones where other CPUs have one (they went offline mid-dump).
//! - `cpuN/cache/indexM/`: one [`Cache`] per distinct (level, type, sharing set).
//! - `cpuN/cpu_capacity`: arm64 relative capacity.
//! - `sys/devices/system/node/nodeN/{cpulist|cpumap,distance,meminfo}`: NUMA
//!   nodes (sparse ids and memory-only nodes allowed), their distance matrix and
//!   memory size.
//! - `sys/devices/cpu_core/cpus`, `cpu_atom/cpus`: Intel hybrid core kinds;
//!   on Arm, core kinds from cpuinfo's `CPU implementer` / `CPU part`.
//! - `cpuN/physical_id` on POWER: the hardware thread id (PIR).
//! - `proc/cpuinfo`: architecture, model name, x86 APIC ids, RISC-V hart ids,
//!   and the package / core ids of old kernels that had no `topology/` directory.
//! - `proc/powerpc/lparcfg`, `proc/sysinfo`: POWER shared-processor mode and the
//!   hypervisor.
//!
//! Every problem is one [`Error`] naming the file (or `archive:member`) and line.

// The CPUID-dump reader decodes its archives the same way.
mod arch_signs;
pub(crate) mod archive;
mod caches;
mod clusters;
mod cpuinfo;
mod grouping;
mod nodes;
mod readahead;
mod vfs;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::rc::Rc;

use cpumask::{CompactMask, CpuMask, MAX_CPUS};
use topology::{Arch, CoreKind, CpuSpec, Topology, TopologyBuilder};

use crate::limits::open_input;
pub use crate::limits::ArchiveLimits;
use crate::Error;
use caches::read_caches;
use cpuinfo::CpuInfo;
use grouping::group_keys;
use nodes::read_nodes;
use readahead::{ReadAhead, Started};
pub use readahead::{Threads, PARALLEL_MIN_CPUS};
use vfs::Root;

const CPU_DIR: &str = "sys/devices/system/cpu";
const NODE_DIR: &str = "sys/devices/system/node";
/// Architecture, model, firmware ids (all absent when the file is).
const CPUINFO: &str = "proc/cpuinfo";

/// Reads the live host's `/sys` and `/proc`.
pub fn read_live() -> Result<Topology, Error> {
    read_root(&Root::dir(Path::new("/"), true), Threads::Auto)
}

/// Reads a sysfs/procfs root: a directory holding `sys/` (and `proc/`), or a
/// `.tar`, `.tar.gz`, `.tar.bz2` or `.tar.xz` snapshot with that layout (the archive may
/// have one top directory above `sys/`), within the default [`ArchiveLimits`].
pub fn read_path(path: &Path) -> Result<Topology, Error> {
    read_path_with(path, &ArchiveLimits::default())
}

/// [`read_path`] with an explicit archive budget.
pub fn read_path_with(path: &Path, limits: &ArchiveLimits) -> Result<Topology, Error> {
    if path.is_dir() {
        return read_dir(path);
    }
    let name = path.display().to_string();
    // The file is checked (regular, not past the input budget) before it is
    // read, and then decoded as a stream: it is never held whole.
    let file = open_input(path, limits.input_bytes, "an archive (archive too large)")?;
    read_root(
        &Root::archive(std::io::BufReader::new(file), &name, limits)?,
        Threads::Auto,
    )
}

/// Reads an extracted snapshot directory holding `sys/` (and `proc/`). Symbolic
/// links inside it are resolved within the directory, never on the host.
pub fn read_dir(path: &Path) -> Result<Topology, Error> {
    read_dir_with(path, Threads::Auto)
}

/// [`read_dir`] on a chosen number of threads (see [`Threads`]). The
/// topology is the same whatever the number: the threads only fetch files
/// ahead of the one reader that interprets them.
pub fn read_dir_with(path: &Path, threads: Threads) -> Result<Topology, Error> {
    // The root, once open, answers whether its CPU directory is there
    // (opened with it), so the path is not looked up once more for that.
    let root = Root::dir(path, path == Path::new("/"));
    if !root.exists(CPU_DIR)? {
        if let Some(part) = part_of_a_root(path) {
            return Err(Error::new(
                path.display().to_string(),
                format!(
                    "{NO_CPU_DIR}: this looks like {part} of a snapshot; \
                     name the directory that holds sys/ (an archive made here is also read)"
                ),
            ));
        }
    }
    read_root(&root, threads)
}

/// Which part of a sysfs root `dir` is when it is not a whole one: only what
/// `dir` holds is read, so a reader given `…/sys` cannot look beside it for
/// `proc/`, and says what to name instead.
fn part_of_a_root(dir: &Path) -> Option<&'static str> {
    [
        ("devices/system/cpu", "the sys/ directory"),
        ("system/cpu", "the sys/devices directory"),
        ("cpu/cpu0", "the sys/devices/system directory"),
        ("cpu0", "the sys/devices/system/cpu directory"),
    ]
    .into_iter()
    .find(|(inside, _)| dir.join(inside).is_dir())
    .map(|(_, part)| part)
}

/// Reads a snapshot archive from memory; `name` is used in error messages.
/// Members with absolute or `..` paths are rejected with an error naming them.
pub fn read_archive_bytes(bytes: &[u8], name: &str) -> Result<Topology, Error> {
    read_archive_bytes_with(bytes, name, &ArchiveLimits::default())
}

/// [`read_archive_bytes`] with an explicit archive budget.
pub fn read_archive_bytes_with(
    bytes: &[u8],
    name: &str,
    limits: &ArchiveLimits,
) -> Result<Topology, Error> {
    if bytes.len() as u64 > limits.input_bytes {
        return Err(Error::new(
            name,
            format!(
                "archive too large: {} bytes, more than {}",
                bytes.len(),
                limits.input_bytes
            ),
        ));
    }
    read_root(&Root::archive(bytes, name, limits)?, Threads::Auto)
}

/// Small typed accessors over a [`Root`] that turn every malformed file into an
/// [`Error`] naming it.
struct Files<'a> {
    root: &'a Root,
    /// When set, the sorted entry names of the one directory being read: files
    /// not listed are absent without asking the file system.
    only: Option<&'a [String]>,
}

impl Files<'_> {
    /// A text file, or `None` if absent. Non-UTF-8 content is an error.
    fn text(&self, path: &str) -> Result<Option<String>, Error> {
        if let Some(names) = self.only {
            let name = path.rsplit('/').next().unwrap_or(path);
            if names.binary_search_by(|n| n.as_str().cmp(name)).is_err() {
                return Ok(None);
            }
        }
        let Some(bytes) = self.root.read(path)? else {
            return Ok(None);
        };
        // Some kernels' mask and list files end in a NUL after the newline:
        // padding, not content (hwloc and lscpu read up to the first NUL).
        let end = bytes.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
        let mut bytes = bytes.into_owned();
        bytes.truncate(end);
        // The bytes read become the string, without a copy.
        match String::from_utf8(bytes) {
            Ok(s) => Ok(Some(s)),
            Err(e) => {
                let bytes = e.as_bytes();
                let e = e.utf8_error();
                let at = e.valid_up_to();
                let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
                Err(Error::at_line(
                    self.root.describe(path),
                    line,
                    format!("not valid UTF-8 text (bad byte at offset {at})"),
                ))
            }
        }
    }

    /// The single value of a one-line file, trimmed; empty files are an error
    /// (a truncated dump).
    fn value(&self, path: &str) -> Result<Option<String>, Error> {
        self.with_value(path, |v| Ok(v.to_string()))
    }

    /// `f` of the trimmed value of a one-line file, as [`Files::value`]
    /// reads it, without a copy of the value.
    fn with_value<T>(
        &self,
        path: &str,
        f: impl FnOnce(&str) -> Result<T, Error>,
    ) -> Result<Option<T>, Error> {
        let Some(text) = self.text(path)? else {
            return Ok(None);
        };
        let v = text.trim();
        if v.is_empty() {
            return Err(Error::at_line(
                self.root.describe(path),
                1,
                "empty file (truncated?)",
            ));
        }
        f(v).map(Some)
    }

    /// A signed integer file (`physical_package_id` may be `-1`).
    fn int(&self, path: &str) -> Result<Option<i64>, Error> {
        self.with_value(path, |v| {
            v.parse::<i64>().map_err(|_| {
                Error::at_line(
                    self.root.describe(path),
                    1,
                    format!("expected an integer, found {v:?}"),
                )
            })
        })
    }

    /// A non-negative integer file that must fit in `u32`.
    fn uint(&self, path: &str) -> Result<Option<u32>, Error> {
        self.with_value(path, |v| {
            v.parse::<u32>().map_err(|_| {
                Error::at_line(
                    self.root.describe(path),
                    1,
                    format!("expected a non-negative integer, found {v:?}"),
                )
            })
        })
    }

    /// A cpulist file (`0-3,8`).
    fn list_mask(&self, path: &str) -> Result<Option<CpuMask>, Error> {
        let Some(text) = self.text(path)? else {
            return Ok(None);
        };
        self.parse_list(path, &text).map(Some)
    }

    /// The cpulist `text` read from `path`, an error naming `path` if bad.
    fn parse_list(&self, path: &str, text: &str) -> Result<CpuMask, Error> {
        CpuMask::parse_list(text).map_err(|e| self.bad_list(path, e))
    }

    fn bad_list(&self, path: &str, e: cpumask::ParseError) -> Error {
        Error::at_line(self.root.describe(path), 1, format!("bad CPU list: {e}"))
    }

    /// The hex cpumap `text` read from `path`, an error naming `path` if
    /// bad; parsed into the compact form, as every map is kept so.
    fn parse_hex(&self, path: &str, text: &str) -> Result<CompactMask, Error> {
        CompactMask::parse_hex(text)
            .map_err(|e| Error::at_line(self.root.describe(path), 1, format!("bad CPU map: {e}")))
    }

    /// The hex map if present, else the `_list` form. The kernel writes both
    /// from the same mask; the map is preferred because it is what hwloc reads,
    /// so hand-edited test snapshots that only updated the map stay coherent.
    fn mask(
        &self,
        dir: &str,
        list_name: &str,
        map_name: &str,
    ) -> Result<Option<CompactMask>, Error> {
        Ok(self
            .mask_and_path(dir, list_name, map_name)?
            .map(|(mask, _)| mask))
    }

    /// [`Files::mask`] with the path of the file it came from. The text is
    /// parsed as soon as it is read and then dropped: a hex map of a
    /// 16384-CPU machine is 4.6 KB, so one kept per core to compare with
    /// its siblings' would be tens of megabytes.
    fn mask_and_path(
        &self,
        dir: &str,
        list_name: &str,
        map_name: &str,
    ) -> Result<Option<(CompactMask, String)>, Error> {
        for (name, hex) in [(map_name, true), (list_name, false)] {
            let path = join(dir, name);
            if let Some(text) = self.text(&path)? {
                let mask = match hex {
                    true => self.parse_hex(&path, &text)?,
                    false => CompactMask::parse_list(&text).map_err(|e| self.bad_list(&path, e))?,
                };
                return Ok(Some((mask, path)));
            }
        }
        Ok(None)
    }
}

/// `dir/name`, without `format!`'s machinery (a path is made for every
/// file asked for).
fn join(dir: &str, name: &str) -> String {
    let mut path = String::with_capacity(dir.len() + 1 + name.len());
    path.push_str(dir);
    path.push('/');
    path.push_str(name);
    path
}

/// The file pairs (cpulist form, hex form) that hold a CPU's SMT siblings,
/// newest name first: `core_cpus` since Linux 5.6, `thread_siblings` before.
const CORE_MASK_NAMES: [(&str, &str); 2] = [
    ("core_cpus_list", "core_cpus"),
    ("thread_siblings_list", "thread_siblings"),
];

/// A CPU's core (SMT sibling) mask from `topo`, trying first the pair at
/// `*first` (the one the previous CPU had) and then the others newest first,
/// and remembering which one answered. Both names hold the same mask when a
/// kernel writes both, so the order only saves failed opens.
fn read_core_mask(
    files: &Files,
    topo: &str,
    first: &mut usize,
) -> Result<Option<CompactMask>, Error> {
    let order = std::iter::once(*first).chain((0..CORE_MASK_NAMES.len()).filter(|&i| i != *first));
    for i in order {
        let (list_name, map_name) = CORE_MASK_NAMES[i];
        if let Some(m) = files.mask(topo, list_name, map_name)? {
            *first = i;
            return Ok(Some(m));
        }
    }
    Ok(None)
}

/// Whether `names`, a sorted directory listing, holds either file of the
/// core-mask pair `CORE_MASK_NAMES[i]`.
fn lists_core_mask(names: &[String], i: usize) -> bool {
    let (list, map) = CORE_MASK_NAMES[i];
    [map, list]
        .iter()
        .any(|f| names.binary_search_by(|n| n.as_str().cmp(f)).is_ok())
}

/// CPU → index in the reader's `raws` of the earlier CPU that named it, for
/// the CPU numbers read: a table by number (a 16384-CPU machine asks it
/// once per CPU and fills it once per sibling), not a hash map.
#[derive(Default)]
struct Owners(Vec<u32>);

impl Owners {
    const NONE: u32 = u32::MAX;

    /// A table for CPU numbers below `cpus` (the CPUs read); claims of
    /// higher numbers are not kept, as no CPU read asks for them.
    fn for_cpus(cpus: usize) -> Owners {
        Owners(vec![Owners::NONE; cpus])
    }

    fn get(&self, cpu: u32) -> Option<usize> {
        match self.0.get(cpu as usize) {
            Some(&i) if i != Owners::NONE => Some(i as usize),
            _ => None,
        }
    }

    /// Records `owner` for `cpu` unless an earlier owner is recorded;
    /// whether `owner` is `cpu`'s owner now.
    fn claim(&mut self, cpu: usize, owner: usize) -> bool {
        let Some(slot) = self.0.get_mut(cpu) else {
            return false;
        };
        if *slot == Owners::NONE {
            *slot = owner as u32;
        }
        *slot == owner as u32
    }
}

/// What sysfs says about one CPU's place, before grouping.
#[derive(Debug, Default, Clone)]
struct RawCpu {
    id: u32,
    online: bool,
    /// Whether the CPU has a `topology/` directory.
    topology: bool,
    hw_id: Option<u64>,
    capacity: Option<u32>,
    /// Ids and sibling masks, outermost level first: package, die, cluster, core.
    /// The masks are shared (`Rc`): SMT siblings and every CPU of a package
    /// hold the same one; and compact, as a core's set needs a word or two
    /// where a [`CpuMask`] is 2 KiB (16 MB for 8192 cores, every page of it
    /// faulted in).
    ids: [Option<i64>; 4],
    masks: [Option<Rc<CompactMask>>; 4],
}

const PACKAGE: usize = 0;
const DIE: usize = 1;
const CLUSTER: usize = 2;
const CORE: usize = 3;
/// A level around a core: its index in [`RawCpu::ids`], its id file and
/// its mask file pairs (cpulist form, hex form), newest name first.
type OuterLevel = (usize, &'static str, &'static [(&'static str, &'static str)]);

/// The levels around a core, each with its id file and its mask file
/// pairs (cpulist form, hex form), newest name first: `package_cpus`
/// since Linux 5.6, `core_siblings` before.
const OUTER_LEVELS: [OuterLevel; 3] = [
    (
        PACKAGE,
        "physical_package_id",
        &[
            ("package_cpus_list", "package_cpus"),
            ("core_siblings_list", "core_siblings"),
        ],
    ),
    (DIE, "die_id", &[("die_cpus_list", "die_cpus")]),
    (
        CLUSTER,
        "cluster_id",
        &[("cluster_cpus_list", "cluster_cpus")],
    ),
];

/// The number in a `cpuN` / `nodeN` / `indexN` entry name: `None` for other
/// names, and an error in words for a number the kernel never writes that way
/// (a leading zero: `node01` would otherwise be looked up as `node1`, and its
/// CPUs silently left in no node) or one too large for any machine.
fn numbered(name: &str, prefix: &str) -> Option<Result<u64, String>> {
    let digits = name.strip_prefix(prefix)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if digits.len() > 1 && digits.starts_with('0') {
        return Some(Err(format!(
            "entry name {name:?} has a leading zero (the kernel writes {prefix}{})",
            digits.trim_start_matches('0').parse::<u64>().unwrap_or(0)
        )));
    }
    Some(
        digits
            .parse()
            .map_err(|_| format!("entry number in {name:?} is out of range")),
    )
}

/// [`numbered`] for an entry of `dir`, its error naming the entry.
fn entry_number(root: &Root, dir: &str, name: &str, prefix: &str) -> Result<Option<u64>, Error> {
    match numbered(name, prefix) {
        None => Ok(None),
        Some(Ok(n)) => Ok(Some(n)),
        Some(Err(why)) => Err(Error::new(root.describe(&format!("{dir}/{name}")), why)),
    }
}

/// Which architecture-specific files a kernel writes: the rest are not
/// probed, since each probe of a file a kernel never writes is a failed open
/// (per CPU for some). An unrecognised architecture probes them all.
#[derive(Debug, Clone, Copy)]
struct ArchFiles {
    /// `cpuN/cpu_capacity`: only the generic arch_topology driver (Arm,
    /// RISC-V, PA-RISC) writes it.
    capacity: bool,
    /// `cpuN/physical_id`: POWER's hardware thread id.
    physical_id: bool,
    /// sparc64's per-CPU `l1_dcache_size`-style cache files.
    sparc_caches: bool,
    /// `sys/devices/cpu_core/cpus`, `cpu_atom/cpus`: Intel hybrid PMUs.
    hybrid_pmus: bool,
    /// `proc/powerpc/lparcfg`: POWER LPARs.
    lparcfg: bool,
    /// `proc/sysinfo`: IBM Z.
    sysinfo: bool,
    /// cpuinfo's `physical id` and `core id`: x86 prints them from the
    /// fields sysfs shows as `physical_package_id` and `core_id` (see
    /// [`CpuReader::cpuinfo_core_id`]).
    cpuinfo_ids: bool,
}

impl ArchFiles {
    fn of(arch: &Arch) -> ArchFiles {
        let unknown = matches!(arch, Arch::Other(_));
        let power = unknown || arch.is_power();
        ArchFiles {
            capacity: unknown || matches!(arch, Arch::Arm64 | Arch::Arm | Arch::RiscV64),
            physical_id: arch.is_power(),
            sparc_caches: unknown || matches!(arch, Arch::Sparc64),
            hybrid_pmus: unknown || matches!(arch, Arch::X86_64 | Arch::X86),
            lparcfg: power,
            sysinfo: unknown || matches!(arch, Arch::S390x),
            cpuinfo_ids: matches!(arch, Arch::X86_64 | Arch::X86),
        }
    }
}

/// A 64-bit POWER's byte order, which cpuinfo does not state: on a live root
/// the running kernel's (user space runs in the kernel's byte order); in a
/// dump the `uname -m` that Linux (6.1 and later) writes to
/// `proc/sys/kernel/arch` or hwloc-gather-topology to
/// `proc/hwloc-nofile-info`; else the one cpuinfo's processor (`cpu`)
/// implies. The files are only looked at: unreadable text in them leaves
/// the guess; the second is not looked for when the first answers. A
/// little-endian answer for a processor Linux builds no little-endian
/// kernel for is an error naming the file.
fn power_byte_order(root: &Root, arch: Arch, cpu: Option<&str>) -> Result<Arch, Error> {
    if !matches!(arch, Arch::PowerPc64 | Arch::PowerPc64Be) {
        return Ok(arch);
    }
    if root.is_live() {
        let own = Arch::of_build();
        return Ok(if own.is_power() { own } else { arch });
    }
    let text = |path| -> Result<Option<String>, Error> {
        Ok(root
            .read(path)?
            .and_then(|b| std::str::from_utf8(&b).ok().map(str::to_string)))
    };
    const KERNEL: &str = "proc/sys/kernel/arch";
    const HWLOC: &str = "proc/hwloc-nofile-info";
    let (file, said) = match text(KERNEL)?
        .as_deref()
        .and_then(crate::power::power64_of_uname)
    {
        Some(said) => (KERNEL, Some(said)),
        None => {
            let hwloc = text(HWLOC)?;
            let said = hwloc
                .as_deref()
                .and_then(|t| t.lines().find_map(|l| l.strip_prefix("Architecture: ")))
                .and_then(crate::power::power64_of_uname);
            (HWLOC, said)
        }
    };
    let never_le = cpu.filter(|c| crate::power::power64_never_little_endian(c));
    match (said, never_le) {
        // Both come from the one kernel: a little-endian one on such a
        // processor means the dump joins two machines' files (or was
        // edited), and neither can be believed over the other.
        (Some(Arch::PowerPc64), Some(cpu)) => Err(Error::new(
            root.describe(file),
            format!(
                "says a little-endian kernel (ppc64le) ran, but proc/cpuinfo's cpu line \
                 names '{}', a processor Linux builds no little-endian kernel for: the \
                 dump is inconsistent",
                cpu.trim()
            ),
        )),
        (Some(said), _) => Ok(said),
        (None, Some(_)) => Ok(Arch::PowerPc64Be),
        (None, None) => Ok(arch),
    }
}

/// cpuinfo's records by CPU number, if they are numbered as this root's
/// CPUs. Linux's /proc/cpuinfo holds one record per on-line CPU under its
/// own number (x86's and powerpc's `c_start` walk `cpu_online_mask`,
/// arm64's `c_show` each online CPU); lxcfs shows a container the records
/// of its cpuset renumbered from 0 (`proc_cpuinfo_read`), which matched by
/// number would give CPUs other CPUs' firmware ids and core kinds. Records
/// naming a CPU that is not on-line while an on-line CPU has none are such:
/// none is matched to a CPU.
fn numbered_as_sysfs<'b, 't>(
    records: BTreeMap<u32, &'b cpuinfo::Block<'t>>,
    online: Option<&CpuMask>,
) -> BTreeMap<u32, &'b cpuinfo::Block<'t>> {
    let Some(online) = online else {
        return records;
    };
    let unrecorded = online.iter().any(|c| !records.contains_key(&(c as u32)));
    let stray = records.keys().any(|&c| !online.contains(c as usize));
    if unrecorded && stray {
        BTreeMap::new()
    } else {
        records
    }
}

/// The phases of reading a sysfs root, in order: the CPU sets, the CPU
/// directories, cpuinfo, every CPU's place ([`CpuReader`]), the sets
/// reconciled, then the model assembled with core kinds, nodes and caches.
/// How the reader's error for a path that holds no sysfs root starts.
pub(crate) const NO_CPU_DIR: &str = "no sys/devices/system/cpu directory";

/// Whether `e` says the path read holds no sysfs root at all (no
/// `sys/devices/system/cpu`, in a directory or an archive), rather than
/// naming a file of one.
pub fn found_no_root(e: &Error) -> bool {
    e.message.starts_with(NO_CPU_DIR)
}

fn read_root(root: &Root, threads: Threads) -> Result<Topology, Error> {
    let files = Files { root, only: None };
    if !root.exists(CPU_DIR)? {
        return Err(Error::new(
            root.describe_root(),
            format!("{NO_CPU_DIR}: not a sysfs root"),
        ));
    }
    // The CPU directory's one listing names the CPUs and answers whether
    // each of the three set files exists (old kernels wrote none of them).
    let cpu_entries = root.list(CPU_DIR)?;
    let cpu_ids = cpu_numbers(root, &cpu_entries)?;
    let sets = read_cpu_sets(&Files {
        root,
        only: Some(&cpu_entries),
    })?;
    let cpuinfo_text = files.text(CPUINFO)?;
    let cpuinfo = match &cpuinfo_text {
        Some(t) => CpuInfo::parse(t, &root.describe(CPUINFO))?,
        None => CpuInfo::default(),
    };
    let arch = match cpuinfo.arch() {
        Some(arch) => arch,
        None if root.is_live() => Arch::of_build(),
        None => arch_signs::arch_of_sysfs(root, &cpu_entries)?,
    };
    let arch = power_byte_order(root, arch, cpuinfo.first("cpu"))?;
    let arch_files = ArchFiles::of(&arch);
    let by_processor = numbered_as_sysfs(cpuinfo.by_processor(), sets.online.as_ref());
    let ahead = ReadAhead::new(root, threads, cpu_ids.len());
    // The workers fetch the CPUs' files, then their caches: what the reader
    // does between the two (the sets, the grouping, the nodes) is done
    // while they fetch.
    let per_cpu_online = sets.online.is_none();
    let builder = ahead.start(&cpu_ids, per_cpu_online, arch_files, |ahead| {
        let (raws, vanished) =
            CpuReader::new(&files, &arch, &sets, &by_processor).read_all(&cpu_ids, ahead)?;
        let (mut possible, present, online_known) = reconcile_sets(&sets, &cpu_ids, &raws);
        let mut builder = TopologyBuilder::new(arch.clone());
        builder.source(root.describe_root());
        if let Some(m) = cpuinfo.model_name() {
            builder.model_name(m);
        }
        read_virtualization(&files, arch_files, &mut builder)?;
        let kind_of = core_kinds(&files, &arch, &raws, &by_processor, &mut builder)?;
        let mut keys = group_keys(&raws, &online_known).map_err(|(cpu, why)| {
            Error::new(root.describe(&format!("{CPU_DIR}/cpu{cpu}/topology")), why)
        })?;
        read_nodes(&files, &online_known, &mut possible, &mut builder)?;
        builder.possible(possible);
        builder.present(present);
        // A CPU that went offline mid-dump left the caches' sharing maps,
        // as the kernel takes an offline CPU out of them; a map read before
        // it went still names it.
        let caches = read_caches(
            &files,
            &raws,
            &possible.and_not(&vanished),
            arch_files.sparc_caches,
            ahead,
        )?;
        clusters::drop_clusters_of_one_core_or_cache(
            &arch,
            &raws,
            &mut keys,
            &caches,
            &online_known,
        );
        add_cpus(&raws, &keys, &kind_of, &mut builder);
        builder.add_caches(caches);
        Ok::<_, Error>(builder)
    })?;
    builder
        .finish()
        .map_err(|e| Error::new(root.describe_root(), e.to_string()))
}

/// `cpu/{possible,present,online}`, each if present.
struct CpuSets {
    possible: Option<CpuMask>,
    present: Option<CpuMask>,
    online: Option<CpuMask>,
}

/// Reads the three CPU sets. The kernel always lists at least the boot CPU in
/// each of these files, and never an online CPU that is not possible:
/// anything else is a damaged dump, which would otherwise read as "CPU 0
/// offline" or as phantom CPUs.
#[inline(never)] // its masks stay out of `read_root`'s frame, below the files' reads
fn read_cpu_sets(files: &Files) -> Result<CpuSets, Error> {
    let root = files.root;
    let sets = CpuSets {
        possible: files.list_mask(&format!("{CPU_DIR}/possible"))?,
        present: files.list_mask(&format!("{CPU_DIR}/present"))?,
        online: files.list_mask(&format!("{CPU_DIR}/online"))?,
    };
    for (name, mask) in [
        ("possible", &sets.possible),
        ("present", &sets.present),
        ("online", &sets.online),
    ] {
        if mask.is_some_and(|m| m.is_empty()) {
            return Err(Error::at_line(
                root.describe(&format!("{CPU_DIR}/{name}")),
                1,
                "empty CPU list (the kernel always lists at least the boot CPU)",
            ));
        }
    }
    if let (Some(online), Some(possible)) = (&sets.online, &sets.possible) {
        if let Some(cpu) = online.and_not(possible).first() {
            return Err(Error::at_line(
                root.describe(&format!("{CPU_DIR}/online")),
                1,
                format!("CPU {cpu} is online but not in {CPU_DIR}/possible"),
            ));
        }
    }
    Ok(sets)
}

/// The numbers of the `cpuN` directories among `entries` (the CPU
/// directory's), sorted.
fn cpu_numbers(root: &Root, entries: &[String]) -> Result<Vec<u32>, Error> {
    let mut cpu_ids: Vec<u32> = Vec::new();
    for name in entries {
        if let Some(n) = entry_number(root, CPU_DIR, name, "cpu")? {
            if n >= MAX_CPUS as u64 {
                return Err(Error::new(
                    root.describe(&format!("{CPU_DIR}/{name}")),
                    format!("CPU number {n} is beyond the supported maximum of {MAX_CPUS} CPUs"),
                ));
            }
            cpu_ids.push(n as u32);
        }
    }
    cpu_ids.sort_unstable();
    Ok(cpu_ids)
}

/// possible ⊇ present ⊇ online, whichever files exist: (possible, present,
/// the online CPUs read).
fn reconcile_sets(sets: &CpuSets, cpu_ids: &[u32], raws: &[RawCpu]) -> (CpuMask, CpuMask, CpuMask) {
    let mut known = CpuMask::new();
    let mut online_known = CpuMask::new();
    for r in raws {
        known.set(r.id as usize);
        if r.online {
            online_known.set(r.id as usize);
        }
    }
    let dir_mask = || cpu_ids.iter().map(|&c| c as usize).collect::<CpuMask>();
    let mut possible = sets.possible.or(sets.present).unwrap_or_else(dir_mask);
    let mut present = sets.present.unwrap_or(possible);
    present.or_assign(&online_known);
    possible.or_assign(&present);
    possible.or_assign(&known);
    (possible, present, online_known)
}

/// Core kinds by CPU: Intel hybrid ones (the PMU devices list their CPUs),
/// else on Arm one per distinct MIDR part.
fn core_kinds(
    files: &Files,
    arch: &Arch,
    raws: &[RawCpu],
    by_processor: &BTreeMap<u32, &cpuinfo::Block<'_>>,
    builder: &mut TopologyBuilder,
) -> Result<HashMap<u32, u16>, Error> {
    let mut kind_of: HashMap<u32, u16> = HashMap::new();
    // Every Intel hybrid part has big cores, and perf registers a PMU for
    // each core type of the part whichever CPUs are online: without
    // `cpu_core` there is no `cpu_atom` to ask for.
    let core = match ArchFiles::of(arch).hybrid_pmus {
        true => files.list_mask("sys/devices/cpu_core/cpus")?,
        false => None,
    };
    let atom = match core {
        Some(_) => files.list_mask("sys/devices/cpu_atom/cpus")?,
        None => None,
    };
    for (mask, kind) in [
        (atom, CoreKind::intel_atom()),
        (core, CoreKind::intel_core()),
    ] {
        if let Some(mask) = mask {
            let idx = builder.add_core_kind(kind);
            for cpu in mask.iter() {
                kind_of.insert(cpu as u32, idx);
            }
        }
    }
    if kind_of.is_empty() && matches!(arch, Arch::Arm64 | Arch::Arm) {
        arm_core_kinds(raws, by_processor, builder, &mut kind_of);
    }
    Ok(kind_of)
}

/// Every CPU read, grouped by `keys` ([`group_keys`]), into the builder.
fn add_cpus(
    raws: &[RawCpu],
    keys: &[[Option<u32>; 4]],
    kind_of: &HashMap<u32, u16>,
    builder: &mut TopologyBuilder,
) {
    for (r, k) in raws.iter().zip(keys) {
        builder.add_cpu(CpuSpec {
            id: r.id,
            hw_id: r.hw_id,
            online: r.online,
            package: k[PACKAGE].unwrap_or(0),
            die: k[DIE],
            cluster: k[CLUSTER],
            big_core: None,
            core: k[CORE].unwrap_or(r.id),
            node: None,
            kind: kind_of.get(&r.id).copied(),
            capacity: r.capacity,
            os_ids: Some(os_ids(r)),
        });
    }
}

/// Reads every CPU's place, in CPU order, sharing what one CPU's files say
/// with the CPUs they name (its SMT siblings, its package) so that each fact
/// is read once.
struct CpuReader<'a> {
    files: &'a Files<'a>,
    arch: &'a Arch,
    online_file: Option<CpuMask>,
    by_processor: &'a BTreeMap<u32, &'a cpuinfo::Block<'a>>,
    raws: Vec<RawCpu>,
    /// CPU → index in `raws` of an earlier CPU whose core mask lists it.
    core_owner: Owners,
    /// Whether the previous CPU had a `topology/` directory: after one that
    /// had none, the directory is looked up before its mask files are tried
    /// (one failed open instead of four).
    last_had_topology: bool,
    /// Per outer level (package, die, cluster): CPU → index in `raws` of
    /// the earlier CPU whose mask of the level lists it.
    outer_owner: [Owners; 3],
    /// Which of the core-mask file pairs the previous CPU had (one kernel
    /// wrote them all): tried first, it saves two failed opens per CPU on
    /// kernels older than 5.6 that lack `core_cpus`.
    core_names_first: usize,
    /// The listing of the last CPU read in full, with the core-mask file
    /// pair it had.
    topo_names: Option<(usize, Vec<String>)>,
    arch_files: ArchFiles,
}

impl<'a> CpuReader<'a> {
    fn new(
        files: &'a Files<'a>,
        arch: &'a Arch,
        sets: &CpuSets,
        by_processor: &'a BTreeMap<u32, &'a cpuinfo::Block<'a>>,
    ) -> Self {
        CpuReader {
            files,
            arch,
            online_file: sets.online,
            by_processor,
            raws: Vec::new(),
            core_owner: Owners::default(),
            last_had_topology: true,
            outer_owner: Default::default(),
            core_names_first: 0,
            topo_names: None,
            arch_files: ArchFiles::of(arch),
        }
    }

    /// Every CPU of `cpu_ids` with topology information or online, and the
    /// CPUs left out as [`CpuReader::without_vanished`] says.
    fn read_all(
        mut self,
        cpu_ids: &[u32],
        ahead: &Started,
    ) -> Result<(Vec<RawCpu>, CpuMask), Error> {
        self.raws.reserve(cpu_ids.len());
        let cpus = cpu_ids.last().map_or(0, |&c| c as usize + 1);
        self.core_owner = Owners::for_cpus(cpus);
        self.outer_owner = [PACKAGE, DIE, CLUSTER].map(|_| Owners::for_cpus(cpus));
        ahead.topology(self.files.root, |id| {
            if let Some(raw) = self.read_cpu(id)? {
                self.raws.push(raw);
            }
            Ok(())
        })?;
        if self.raws.is_empty() {
            return Err(Error::new(
                self.files.root.describe(CPU_DIR),
                "no CPU with topology information (no cpuN/topology directory and none online)",
            ));
        }
        Ok(self.without_vanished())
    }

    /// The CPUs read, less the online ones without a `topology/` directory
    /// where other CPUs have one. The kernel removes a CPU's `topology/`
    /// when the CPU dies (the teardown of `CPUHP_TOPOLOGY_PREPARE` in
    /// drivers/base/topology.c), so such a CPU went offline while the dump
    /// was taken (phones hotplug CPUs by the second) and nothing places it:
    /// it is read as offline, as hwloc leaves it out of its PUs. A kernel
    /// that wrote no `topology/` at all (before 2.6.16) keeps every CPU.
    /// Also returns the CPUs left out.
    fn without_vanished(self) -> (Vec<RawCpu>, CpuMask) {
        let mut raws = self.raws;
        let mut vanished = CpuMask::new();
        if raws.iter().all(|r| r.topology) || !raws.iter().any(|r| r.topology) {
            return (raws, vanished);
        }
        raws.retain(|r| {
            if !r.topology {
                vanished.set(r.id as usize);
            }
            r.topology
        });
        (raws, vanished)
    }

    /// One CPU, `None` when it is offline without a topology directory.
    fn read_cpu(&mut self, id: u32) -> Result<Option<RawCpu>, Error> {
        let files = self.files;
        let dir = format!("{CPU_DIR}/cpu{id}");
        let online = self.cpu_online(&dir, id)?;
        let topo = join(&dir, "topology");
        if let Some(raw) = self.read_sibling(id, online, &dir, &topo)? {
            return Ok(Some(raw));
        }
        // Not an online sibling of an online CPU read before (an offline
        // CPU, or one whose core's first CPU is offline): its core mask is
        // read first, and when it is the mask of an earlier CPU that lists
        // it, that CPU's outer ids and masks are taken, as the kernel builds
        // them from one sibling's data; a differing mask is read in full.
        let just_listed = self.topo_names.is_none();
        let dir_exists = match (self.last_had_topology, &self.topo_names) {
            // Until one CPU's `topology/` is listed, it is listed before its
            // files are asked for: the listing is read anyway for the first
            // CPU read in full, and it answers which core-mask names exist
            // (one system call, not five, when the directory is absent).
            (_, None) => Some(self.list_topology(&topo)?),
            (true, Some(_)) => None,
            (false, Some(_)) => Some(files.root.exists(&topo)?),
        };
        let core_mask = match dir_exists {
            Some(false) => None,
            _ if self.listed_without_core_mask() => None,
            _ => {
                // The CPU just listed asks its listing, not the file system.
                let only = self.topo_names.as_ref().filter(|_| just_listed);
                let files = Files {
                    root: files.root,
                    only: only.map(|(_, names)| names.as_slice()),
                };
                read_core_mask(&files, &topo, &mut self.core_names_first)?
            }
        };
        let core_mask = core_mask.map(|m| self.core_mask(id, m));
        let has_topology = match (&core_mask, dir_exists) {
            (Some(_), _) => true,
            (None, Some(exists)) => exists,
            (None, None) => files.root.exists(&topo)?,
        };
        self.last_had_topology = has_topology;
        if !has_topology && !online {
            return Ok(None);
        }
        let mut raw = RawCpu {
            id,
            online,
            topology: has_topology,
            ..RawCpu::default()
        };
        let donor = self
            .core_owner
            .get(id)
            .map(|i| &self.raws[i])
            .filter(|d: &&RawCpu| d.masks[CORE].as_deref() == core_mask.as_deref());
        let block = self.by_processor.get(&id).copied();
        if let (true, Some(d)) = (has_topology, donor) {
            raw.ids = d.ids;
            raw.masks = d.masks.clone();
            raw.ids[CORE] = files.int(&join(&topo, "core_id"))?;
        } else if has_topology {
            self.read_topology(&topo, &mut raw, core_mask)?;
        } else if let Some(b) = block {
            // Kernels before 2.6.16 had no topology directory; their cpuinfo
            // carries the same ids on x86.
            [raw.ids[PACKAGE], raw.ids[CORE]] = x86_cpuinfo_ids(b);
        }
        if has_topology {
            self.check_cpuinfo_ids(block, &raw);
        }
        self.firmware_facts(&dir, block, &mut raw)?;
        Ok(Some(raw))
    }

    /// An online CPU that an earlier online CPU's core mask lists (its SMT
    /// sibling), read from its `core_id` alone: the kernel builds the
    /// sibling masks of online CPUs in pairs (x86's `link_mask`, arm64's
    /// `update_siblings_masks`, powerpc's `set_cpus_related` set both
    /// CPUs' bits), so this CPU's mask is the earlier one's and its outer
    /// ids and masks are that CPU's too, as [`CpuReader::read_cpu`] takes
    /// them from a donor whose mask it read equal. The core id is read:
    /// siblings may have different ones (AMD with TOPOEXT, VMware guests).
    /// `None` when the CPU is not such a sibling, or has no `core_id`
    /// where the first CPU listed had one (then it is read in full).
    fn read_sibling(
        &mut self,
        id: u32,
        online: bool,
        dir: &str,
        topo: &str,
    ) -> Result<Option<RawCpu>, Error> {
        let Some(d) = self.core_owner.get(id) else {
            return Ok(None);
        };
        let donor = &self.raws[d];
        if !online || !donor.online || donor.masks[CORE].is_none() {
            return Ok(None);
        }
        let (ids, masks) = (donor.ids, donor.masks.clone());
        let block = self.by_processor.get(&id).copied();
        let core_id = match self.cpuinfo_core_id(block, ids[PACKAGE]) {
            Some(core_id) => Some(core_id),
            None => {
                let files = Files {
                    root: self.files.root,
                    only: self.topo_names.as_ref().map(|(_, names)| names.as_slice()),
                };
                let core_id = files.int(&join(topo, "core_id"))?;
                let none_written = files.only.is_some_and(|names| {
                    names
                        .binary_search_by(|n| n.as_str().cmp("core_id"))
                        .is_err()
                });
                if core_id.is_none() && !none_written {
                    return Ok(None);
                }
                core_id
            }
        };
        let mut raw = RawCpu {
            id,
            online,
            topology: true,
            ids,
            masks,
            ..RawCpu::default()
        };
        raw.ids[CORE] = core_id;
        self.last_had_topology = true;
        self.firmware_facts(dir, block, &mut raw)?;
        Ok(Some(raw))
    }

    /// An x86 CPU's core id from its cpuinfo block, when cpuinfo is known
    /// to say what sysfs says: x86 prints `core id` and `physical id` from
    /// the CPU's `cpuinfo_x86` topology fields (`topo.core_id` and
    /// `topo.pkg_id`, `cpu_core_id` and `phys_proc_id` before Linux 6.7,
    /// arch/x86/kernel/cpu/proc.c), the very fields `topology/core_id` and
    /// `physical_package_id` show (arch/x86/include/asm/topology.h), so
    /// the file need not be read (three system calls per SMT sibling).
    /// Asked only while every CPU whose ids were read from sysfs had the
    /// same ones in cpuinfo (hwloc's test dumps pair some sysfs trees with
    /// another machine's cpuinfo), and only when this CPU's `physical id`
    /// is the package id it takes from its core's first CPU.
    fn cpuinfo_core_id(&self, block: Option<&cpuinfo::Block>, package: Option<i64>) -> Option<i64> {
        if !self.arch_files.cpuinfo_ids {
            return None;
        }
        match x86_cpuinfo_ids(block?) {
            [Some(p), Some(core)] if Some(p) == package => Some(core),
            _ => None,
        }
    }

    /// Stops taking core ids from cpuinfo once a CPU whose ids were read
    /// from sysfs has other ones there (see [`CpuReader::cpuinfo_core_id`]).
    /// An offline CPU has no cpuinfo block, and says nothing.
    fn check_cpuinfo_ids(&mut self, block: Option<&cpuinfo::Block>, raw: &RawCpu) {
        if let Some(b) = block.filter(|_| self.arch_files.cpuinfo_ids) {
            self.arch_files.cpuinfo_ids = x86_cpuinfo_ids(b) == [raw.ids[PACKAGE], raw.ids[CORE]];
        }
    }

    /// Lists `topo` as the CPUs' `topology/` listing when it is a
    /// directory; whether anything is there.
    fn list_topology(&mut self, topo: &str) -> Result<bool, Error> {
        let Some(names) = self.files.root.list_dir(topo)? else {
            return Ok(false);
        };
        // The pair of core-mask names the listing holds, as
        // [`read_core_mask`] would find it.
        let pair = std::iter::once(self.core_names_first)
            .chain(0..CORE_MASK_NAMES.len())
            .find(|&i| lists_core_mask(&names, i))
            .unwrap_or(self.core_names_first);
        self.topo_names = Some((pair, names));
        Ok(true)
    }

    /// Whether the last `topology/` listed had none of the core-mask files
    /// (kernels before 2.6.16 wrote an empty directory, some dumps keep
    /// only the ids). One kernel wrote every CPU's directory, as
    /// [`CpuReader::read_topology`] assumes for the other names, so the
    /// next CPUs are not probed for them: four failed opens per CPU saved.
    fn listed_without_core_mask(&self) -> bool {
        self.topo_names.as_ref().is_some_and(|(_, names)| {
            !(0..CORE_MASK_NAMES.len()).any(|i| lists_core_mask(names, i))
        })
    }

    /// The core mask of CPU `id`, `parsed` from its file: its core owner's,
    /// shared, when the two are the same set (comparing the parsed masks,
    /// as a cpulist and a hex map of one set are different texts).
    fn core_mask(&self, id: u32, parsed: CompactMask) -> Rc<CompactMask> {
        self.core_owner
            .get(id)
            .and_then(|d| self.raws[d].masks[CORE].clone())
            .filter(|m| **m == parsed)
            .unwrap_or_else(|| Rc::new(parsed))
    }

    /// Whether the CPU is online. The kernel writes `cpu/online` and every
    /// `cpuN/online` from the same mask (all 50 corpus dumps holding both
    /// agree), so with the former the latter is not read: one open per CPU
    /// saved. Without it, an empty `cpuN/online` is what
    /// hwloc-gather-topology leaves for a file it could not read (CPU 0's is
    /// often root-only): treat it as absent.
    fn cpu_online(&self, dir: &str, id: u32) -> Result<bool, Error> {
        if let Some(m) = &self.online_file {
            return Ok(m.contains(id as usize));
        }
        let path = join(dir, "online");
        let text = self.files.text(&path)?;
        match text.as_deref().map(str::trim).filter(|v| !v.is_empty()) {
            Some("1") | None => Ok(true),
            Some("0") => Ok(false),
            Some(other) => Err(Error::at_line(
                self.files.root.describe(&path),
                1,
                format!("expected 0 or 1, found {other:?}"),
            )),
        }
    }

    /// A CPU's `topology/` read in full: ids and sibling masks, the package
    /// taken from an earlier CPU whose package mask lists this one.
    fn read_topology(
        &mut self,
        topo: &str,
        raw: &mut RawCpu,
        core_mask: Option<Rc<CompactMask>>,
    ) -> Result<(), Error> {
        let id = raw.id;
        // One listing (about four system calls) instead of a failed open
        // per absent file: older kernels lack up to ten of these names.
        // One kernel wrote every CPU's directory, so the first listing
        // serves them all (a name missing from a later CPU is just a
        // failed open, as without the listing). A CPU whose core mask came
        // from another file pair than the listed CPU's was written
        // differently: it is listed itself.
        if self
            .topo_names
            .as_ref()
            .is_none_or(|(pair, _)| *pair != self.core_names_first)
        {
            self.topo_names = Some((self.core_names_first, self.files.root.list(topo)?));
        }
        let files = &Files {
            root: self.files.root,
            only: self.topo_names.as_ref().map(|(_, names)| names.as_slice()),
        };
        for outer in OUTER_LEVELS {
            let owners = &mut self.outer_owner[outer.0];
            read_outer(files, topo, raw, outer, owners, &self.raws)?;
        }
        raw.ids[CORE] = files.int(&join(topo, "core_id"))?;
        if let Some(m) = core_mask.as_deref() {
            for sibling in m.iter().filter(|&c| c != id as usize) {
                self.core_owner.claim(sibling, self.raws.len());
            }
        }
        raw.masks[CORE] = core_mask;
        Ok(())
    }

    /// Capacity (arm64), and the firmware id: POWER's `physical_id`, x86's
    /// APIC id or RISC-V's hart from cpuinfo.
    fn firmware_facts(
        &mut self,
        dir: &str,
        block: Option<&cpuinfo::Block<'a>>,
        raw: &mut RawCpu,
    ) -> Result<(), Error> {
        let files = self.files;
        // Both files are written for every online CPU or for none (the
        // arch_topology driver adds `cpu_capacity` to each possible CPU, or
        // to each CPU as it comes online; powerpc adds `physical_id` to
        // each CPU it registers): an online CPU without one says the kernel
        // writes none, and later CPUs are not asked.
        if self.arch_files.capacity {
            raw.capacity = files.uint(&join(dir, "cpu_capacity"))?;
            self.arch_files.capacity = raw.capacity.is_some() || !raw.online;
        }
        if self.arch_files.physical_id {
            // POWER's `physical_id` is the hardware thread id (the PIR /
            // interrupt server number) that bring-up targets.
            let id = files.int(&join(dir, "physical_id"))?;
            self.arch_files.physical_id = id.is_some() || !raw.online;
            raw.hw_id = id.and_then(|v| u64::try_from(v).ok());
        }
        if let Some(b) = block {
            let hw = match self.arch {
                // x86 prints `physical id` and `core id` from the values
                // sysfs shows; a record whose ids differ is another CPU's
                // (lxcfs's renumbered records under its CPU view), and so
                // is its apicid.
                Arch::X86_64 | Arch::X86 => {
                    let ids = x86_cpuinfo_ids(b);
                    let own = ids == [None, None] || ids == [raw.ids[PACKAGE], raw.ids[CORE]];
                    own.then(|| b.get("apicid").or(b.get("initial apicid")))
                        .flatten()
                }
                Arch::RiscV64 => b.get("hart"),
                _ => None,
            };
            if let Some(hw) = hw.and_then(|v| v.parse::<u64>().ok()) {
                raw.hw_id = Some(hw);
            }
        }
        Ok(())
    }
}

/// One outer level of a CPU read in full: its id from `id_name` and its
/// mask from the first of `pairs` present. A CPU listed in an earlier
/// CPU's mask of the level takes that CPU's id and mask, as hwloc does
/// (it reads each package, die and cluster from its first CPU only):
/// the kernel sets both CPUs' bits when their ids match (x86's
/// `match_die`, `match_l2c`; arm64's and RISC-V's
/// `update_siblings_masks` compare `cluster_id` and `package_id`), so
/// the CPUs a mask lists have its owner's id and mask.
/// `owners` is the level's table, `raws` the CPUs read before.
fn read_outer(
    files: &Files,
    topo: &str,
    raw: &mut RawCpu,
    (level, id_name, pairs): OuterLevel,
    owners: &mut Owners,
    raws: &[RawCpu],
) -> Result<(), Error> {
    if let Some(i) = owners.get(raw.id) {
        raw.ids[level] = raws[i].ids[level];
        raw.masks[level] = raws[i].masks[level].clone();
        return Ok(());
    }
    raw.ids[level] = files.int(&join(topo, id_name))?;
    let mut mask = None;
    for (list_name, map_name) in pairs {
        mask = files.mask(topo, list_name, map_name)?;
        if mask.is_some() {
            break;
        }
    }
    if let Some(m) = &mask {
        for other in m.iter().filter(|&c| c > raw.id as usize) {
            owners.claim(other, raws.len());
        }
    }
    // A die or cluster that is the whole package (x86 since 5.3 writes
    // `die_cpus` on single-die parts) shares the package's mask, so that
    // the grouping's equality and nesting tests see one set, not two equal
    // ones to compare.
    let package = raw.masks[PACKAGE].as_ref().filter(|_| level != PACKAGE);
    raw.masks[level] = mask.map(|m| match package {
        Some(p) if **p == m => p.clone(),
        _ => Rc::new(m),
    });
    Ok(())
}

/// x86's package and core ids as cpuinfo prints them (`physical id`,
/// `core id`), each if present and a number.
fn x86_cpuinfo_ids(b: &cpuinfo::Block) -> [Option<i64>; 2] {
    ["physical id", "core id"].map(|key| b.get(key).and_then(|v| v.parse::<i64>().ok()))
}

/// The kernel's own ids for `r`'s groups, indexed like `LevelKind::ALL`
/// (negative ids are none): the builder gives a group the id all its CPUs
/// report, and none when they differ.
///
/// Groups are keyed by whatever partitions the CPUs correctly (the kernel ids
/// when they agree with the sibling masks, else the masks' first CPU), so the
/// grouping key may be synthetic; the kernel's id is what `lscpu -p` and hwloc
/// print as the physical id, so that is what a group keeps. (VMware guests
/// give two SMT siblings different `core_id`s; s390 gives different cores the
/// same one: those groups get `None`.)
fn os_ids(r: &RawCpu) -> [Option<u32>; 5] {
    let id = |slot: usize| r.ids[slot].and_then(|v| u32::try_from(v).ok());
    [id(CORE), None, id(CLUSTER), id(DIE), id(PACKAGE)]
}

/// Arm big.LITTLE / DynamIQ core kinds: one per distinct `CPU implementer` +
/// `CPU part` (the MIDR fields cpuinfo prints per processor) when there are
/// several, ranked by the `cpu_capacity` of their CPUs when known (hwloc's
/// convention: higher efficiency = bigger core).
fn arm_core_kinds(
    raws: &[RawCpu],
    by_processor: &BTreeMap<u32, &cpuinfo::Block<'_>>,
    builder: &mut TopologyBuilder,
    kind_of: &mut HashMap<u32, u16>,
) {
    let mut parts: BTreeMap<String, (Vec<u32>, Option<u32>)> = BTreeMap::new();
    for r in raws {
        let Some(block) = by_processor.get(&r.id) else {
            return; // Without a part for every CPU, kinds would be guesses.
        };
        let (Some(implementer), Some(part)) = (block.get("CPU implementer"), block.get("CPU part"))
        else {
            return;
        };
        let entry = parts.entry(format!("{implementer}:{part}")).or_default();
        entry.0.push(r.id);
        entry.1 = entry.1.max(r.capacity);
    }
    if parts.len() < 2 {
        return;
    }
    for (name, (cpus, capacity)) in parts {
        let idx = builder.add_core_kind(CoreKind {
            name,
            efficiency: capacity,
        });
        for cpu in cpus {
            kind_of.insert(cpu, idx);
        }
    }
}

/// POWER LPAR configuration and s390 `sysinfo`: the hypervisor and whether
/// processors are shared (SPLPAR).
fn read_virtualization(
    files: &Files,
    arch_files: ArchFiles,
    builder: &mut TopologyBuilder,
) -> Result<(), Error> {
    let text = |wanted: bool, path: &str| match wanted {
        true => files.text(path),
        false => Ok(None),
    };
    if let Some(lparcfg) = text(arch_files.lparcfg, "proc/powerpc/lparcfg")? {
        builder.hypervisor("pHyp");
        let shared = lparcfg
            .lines()
            .any(|l| l.trim().replace(' ', "") == "shared_processor_mode=1");
        builder.shared_processor(shared);
    }
    if let Some(sysinfo) = text(arch_files.sysinfo, "proc/sysinfo")? {
        let control = sysinfo.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .ends_with("Control Program")
                .then(|| v.trim().to_string())
        });
        match control {
            Some(cp) if cp.contains("z/VM") => {
                builder.hypervisor("z/VM");
            }
            Some(cp) if cp.contains("KVM") => {
                builder.hypervisor("KVM");
            }
            Some(cp) if !cp.is_empty() => {
                builder.hypervisor(cp);
            }
            _ if sysinfo.contains("LPAR Number") => {
                builder.hypervisor("PR/SM");
            }
            _ => {}
        }
    }
    Ok(())
}
