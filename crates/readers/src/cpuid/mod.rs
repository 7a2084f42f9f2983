//! x86 CPUID dumps as hwloc-gather-cpuid writes them: a directory (or a
//! `.tar`, `.tar.gz`, `.tar.bz2`, `.tar.xz`, `.tar.zst` of one, or
//! hwloc-gather-topology's tree or tarball, which holds one) holding `puN`, the
//! answers of the PU whose OS index is N to every CPUID leaf and sub-leaf,
//! and `hwloc-cpuid-info` (`Architecture: x86`).
//!
//! Each PU's table answers CPUID through `x86desc`, the decoder the
//! bare-metal kernel uses: the vendor, the APIC id and how it splits into
//! package, die, core and SMT fields by Linux's topology scan
//! (`x86desc::shifts::read`), the caches by Linux 6.12's rules
//! (`x86desc::cacheinfo`), and Intel hybrid core kinds from leaf 0x1A. A
//! dump says nothing of NUMA nodes (no firmware tables), so the machine has
//! one.
//!
//! Every file is read through a limit, the directory's entries and the
//! archive's members are counted against [`ArchiveLimits`], and an archive
//! goes through the sysfs reader's decoding and confinement: bad input is
//! one [`Error`] naming the file (or `archive:member`) and line.

mod table;

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::Path;

use cpumask::MAX_CPUS;
use raw_cpuid::CpuId;
use topology::{Arch, CompactMask, CoreKind, CpuSpec, HwIdKind, Topology, TopologyBuilder};
use x86desc::cacheinfo::{self, CpuCaches, Placed};
use x86desc::shifts::ApicShifts;

use crate::limits::{open_input, read_capped, ArchiveLimits};
use crate::sysfs::archive::{
    budget_error, decoder, member_path, read_error, read_to_end_of_stream,
};
use crate::tar_stream::Watched;
use crate::Error;
pub use table::Table;

/// The largest `puN` file read. hwloc-gather-cpuid writes a few KiB per PU
/// (2.2 KiB for a Sapphire Rapids thread) and at most 256 sub-leaves of any
/// leaf, some 20 KiB.
pub const PU_FILE_LIMIT: u64 = 1 << 20;

/// The summary file beside the `puN` files.
const INFO: &str = "hwloc-cpuid-info";

/// A dump's files, before they are interpreted.
#[derive(Default)]
struct Dump {
    /// PU OS index → (name for errors, bytes).
    pus: BTreeMap<u32, (String, Vec<u8>)>,
    /// `hwloc-cpuid-info`, when present.
    info: Option<(String, Vec<u8>)>,
    /// Where the `puN` files were found (an archive's directory), for errors.
    dir: Option<String>,
    /// Bytes kept so far, against [`ArchiveLimits::kept_bytes`].
    kept: u64,
}

/// What a file name is in a dump: `puN` (N the PU's OS index), the
/// summary, or something else (skipped, as hwloc skips it).
enum Member {
    Pu(u32),
    Info,
    Other,
}

/// Classifies a file name; `shown` names it in errors.
fn member_kind(name: &str, shown: &str) -> Result<Member, Error> {
    if name == INFO {
        return Ok(Member::Info);
    }
    let Some(digits) = name.strip_prefix("pu") else {
        return Ok(Member::Other);
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(Member::Other);
    }
    if digits.len() > 1 && digits.starts_with('0') {
        return Err(Error::new(
            shown,
            "a PU number with a leading zero: hwloc-gather-cpuid writes puN with N in decimal",
        ));
    }
    match digits.parse::<u32>() {
        Ok(n) if (n as usize) < MAX_CPUS => Ok(Member::Pu(n)),
        _ => Err(Error::new(
            shown,
            format!("PU number {digits} is not below the {MAX_CPUS}-CPU limit"),
        )),
    }
}

impl Dump {
    /// Keeps one file's bytes, counting them against the budget.
    fn keep(
        &mut self,
        kind: Member,
        shown: String,
        bytes: Vec<u8>,
        limits: &ArchiveLimits,
    ) -> Result<(), Error> {
        self.kept += bytes.len() as u64;
        if self.kept > limits.kept_bytes {
            return Err(Error::new(
                shown,
                format!(
                    "dump too large: more than {} bytes of puN files",
                    limits.kept_bytes
                ),
            ));
        }
        match kind {
            Member::Pu(n) => {
                if let Some((first, _)) = self.pus.get(&n) {
                    return Err(Error::new(
                        shown,
                        format!("PU {n} appears twice (also {first})"),
                    ));
                }
                self.pus.insert(n, (shown, bytes));
            }
            Member::Info => self.info = Some((shown, bytes)),
            Member::Other => {}
        }
        Ok(())
    }
}

/// Reads a CPUID dump: a directory, or an archive of one, within the
/// default [`ArchiveLimits`].
pub fn read_path(path: &Path) -> Result<Topology, Error> {
    read_path_with(path, &ArchiveLimits::default())
}

/// [`read_path`] with an explicit budget (entries, bytes kept, and for an
/// archive its compressed and decompressed size).
pub fn read_path_with(path: &Path, limits: &ArchiveLimits) -> Result<Topology, Error> {
    let name = path.display().to_string();
    build(load(path, limits)?, &name)
}

/// Reads a dump held in memory: each file's name (`pu0`, `hwloc-cpuid-info`;
/// others are skipped) with its bytes; `name` is used in errors.
pub fn read_files(
    files: impl IntoIterator<Item = (String, Vec<u8>)>,
    name: &str,
) -> Result<Topology, Error> {
    let limits = ArchiveLimits::default();
    let mut dump = Dump::default();
    for (file_name, bytes) in files {
        let shown = format!("{name}:{file_name}");
        if bytes.len() as u64 > PU_FILE_LIMIT {
            return Err(Error::new(
                shown,
                format!("more than the {PU_FILE_LIMIT}-byte limit for a CPUID dump file"),
            ));
        }
        let kind = member_kind(&file_name, &shown)?;
        dump.keep(kind, shown, bytes, &limits)?;
    }
    build(dump, name)
}

/// Each `puN` file's text of a dump (a directory or an archive, within the
/// default [`ArchiveLimits`]), by PU OS index.
pub fn pu_texts(path: &Path) -> Result<Vec<(u32, String)>, Error> {
    let dump = load(path, &ArchiveLimits::default())?;
    dump.pus
        .iter()
        .map(|(&pu, (shown, bytes))| Ok((pu, text(bytes, shown)?.to_string())))
        .collect()
}

/// Each PU's CPUID table of a dump, by PU OS index, parsed as the reader
/// parses it: for tests and tools that decode other CPUID facts than the
/// topology.
pub fn pu_tables(path: &Path) -> Result<Vec<(u32, Table)>, Error> {
    let shown = path.display().to_string();
    pu_texts(path)?
        .into_iter()
        .map(|(pu, text)| Ok((pu, Table::parse(&text, &format!("{shown}:pu{pu}"))?)))
        .collect()
}

/// Whether `path` holds a CPUID dump (a directory or archive with `puN` or
/// `hwloc-cpuid-info` files): lets a reader of another format say which
/// option reads it.
pub fn is_dump(path: &Path) -> bool {
    load(path, &ArchiveLimits::default()).is_ok_and(|d| !d.pus.is_empty() || d.info.is_some())
}

/// The dump files of a directory, or of an archive of one. A directory
/// without them may be the tree hwloc-gather-topology gathers (extracted),
/// whose dump is its `cpuid/` directory (in its archive, any one directory
/// of the archive holds the dump: see [`load_archive`]).
fn load(path: &Path, limits: &ArchiveLimits) -> Result<Dump, Error> {
    if !path.is_dir() {
        return load_archive(path, limits);
    }
    let dump = load_dir(path, limits)?;
    let gathered = path.join(GATHERED_DIR);
    let is_real_dir = std::fs::symlink_metadata(&gathered).is_ok_and(|m| m.is_dir());
    if dump.pus.is_empty() && dump.info.is_none() && is_real_dir {
        return load_dir(&gathered, limits);
    }
    Ok(dump)
}

/// Where hwloc-gather-topology puts hwloc-gather-cpuid's dump in its tree.
const GATHERED_DIR: &str = "cpuid";

/// The dump files of a directory: regular files only (a link is refused, so
/// nothing outside the directory is read).
fn load_dir(dir: &Path, limits: &ArchiveLimits) -> Result<Dump, Error> {
    let shown_dir = dir.display().to_string();
    let entries =
        std::fs::read_dir(dir).map_err(|e| Error::new(&shown_dir, format!("cannot list: {e}")))?;
    let mut dump = Dump::default();
    for (count, entry) in entries.enumerate() {
        if count as u64 >= limits.members {
            return Err(Error::new(
                &shown_dir,
                format!("dump too large: more than {} entries", limits.members),
            ));
        }
        let entry = entry.map_err(|e| Error::new(&shown_dir, format!("cannot list: {e}")))?;
        let path = entry.path();
        let shown = path.display().to_string();
        let Some(file_name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        let kind = member_kind(&file_name, &shown)?;
        if matches!(kind, Member::Other) {
            continue;
        }
        let file_type = entry
            .file_type()
            .map_err(|e| Error::new(&shown, format!("cannot stat: {e}")))?;
        if file_type.is_symlink() {
            return Err(link_refused(shown, "symbolic"));
        }
        let file = open_input(&path, PU_FILE_LIMIT, "a CPUID dump file")?;
        let bytes = read_capped(file, PU_FILE_LIMIT, &shown, "a CPUID dump file")?;
        dump.keep(kind, shown, bytes, limits)?;
    }
    Ok(dump)
}

/// A `puN` or summary file that is a link: refused rather than skipped
/// (a PU would go missing) or followed (it could point outside the dump).
fn link_refused(shown: String, how: &str) -> Error {
    Error::new(
        shown,
        format!("is a {how} link: a dump is read without following links"),
    )
}

/// The dump files of an archive, decoded as the sysfs reader decodes its
/// snapshots: the stream and member count within budget, every member path
/// confined, each file read through [`PU_FILE_LIMIT`].
fn load_archive(path: &Path, limits: &ArchiveLimits) -> Result<Dump, Error> {
    let name = path.display().to_string();
    let file = open_input(path, limits.input_bytes, "an archive (archive too large)")?;
    let (inner, format) = decoder(std::io::BufReader::new(file), &name)?;
    let (stream, stop) = Watched::new(inner, limits.stream_bytes, limits.members);
    let failed = |e: std::io::Error| {
        budget_error(&name, limits, stop.get()).unwrap_or_else(|| read_error(&name, format, &e))
    };
    let mut archive = tar::Archive::new(stream);
    let mut dump = Dump::default();
    for entry in archive.entries().map_err(failed)? {
        let entry = entry.map_err(failed)?;
        let raw = entry.path_bytes().into_owned();
        let member = String::from_utf8_lossy(&raw).into_owned();
        let shown = format!("{name}:{member}");
        let member = member_path(&member).map_err(|why| Error::new(&shown, why))?;
        let (dir, file_name) = member.rsplit_once('/').unwrap_or(("", &member));
        let kind = member_kind(file_name, &shown)?;
        if matches!(kind, Member::Other) {
            continue;
        }
        let entry_type = entry.header().entry_type();
        if entry_type.is_symlink() || entry_type.is_hard_link() {
            let how = if entry_type.is_symlink() {
                "symbolic"
            } else {
                "hard"
            };
            return Err(link_refused(shown, how));
        }
        if !entry_type.is_file() {
            return Err(Error::new(
                shown,
                format!("is not a regular file (tar entry type {:?})", entry_type),
            ));
        }
        match &dump.dir {
            Some(first) if first != dir => {
                return Err(Error::new(
                    shown,
                    format!(
                        "CPUID dump files in two directories ({:?} and {dir:?}): \
                         an archive holds one dump",
                        first
                    ),
                ))
            }
            _ => dump.dir = Some(dir.to_string()),
        }
        let bytes = read_member(entry, &shown).map_err(|e| match stop.get() {
            crate::tar_stream::Stop::None => e,
            _ => budget_error(&name, limits, stop.get()).unwrap_or(e),
        })?;
        dump.keep(kind, shown, bytes, limits)?;
    }
    read_to_end_of_stream(archive.into_inner()).map_err(failed)?;
    Ok(dump)
}

/// One member's bytes through the file limit, whatever its header says.
fn read_member(entry: impl Read, shown: &str) -> Result<Vec<u8>, Error> {
    read_capped(entry, PU_FILE_LIMIT, shown, "a CPUID dump file")
}

/// UTF-8 text of a dump file, or an error naming its line.
fn text<'a>(bytes: &'a [u8], shown: &str) -> Result<&'a str, Error> {
    std::str::from_utf8(bytes).map_err(|e| {
        let at = e.valid_up_to();
        let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        Error::at_line(
            shown,
            line,
            format!("not valid UTF-8 text (bad byte at offset {at})"),
        )
    })
}

/// What one PU's CPUID says about where it is.
struct PuFacts {
    apic: u32,
    shifts: ApicShifts,
    caches: CpuCaches,
    /// Leaf 0x1A's core type, on hybrid parts.
    core_type: Option<u8>,
    model_name: Option<String>,
    long_mode: bool,
}

impl PuFacts {
    fn of(t: &Table) -> PuFacts {
        let topology = x86desc::shifts::read(t);
        let cpuid = CpuId::with_cpuid_reader(t);
        let caches = cacheinfo::read(&cpuid, topology.apic_id, &topology);
        let model_name = cpuid
            .get_processor_brand_string()
            .map(|b| b.as_str().trim().to_string())
            .filter(|s| !s.is_empty());
        let long_mode = cpuid
            .get_extended_processor_and_feature_identifiers()
            .is_some_and(|f| f.has_64bit_mode());
        PuFacts {
            apic: topology.apic_id,
            shifts: topology.shifts,
            caches,
            core_type: x86desc::hybrid_core_type(&t),
            model_name,
            long_mode,
        }
    }
}

/// Intel's leaf 0x1A core types as the kinds Linux lists.
fn core_kind(core_type: u8) -> CoreKind {
    match core_type {
        0x20 => CoreKind::intel_atom(),
        0x40 => CoreKind::intel_core(),
        other => CoreKind {
            name: format!("core_type_{other:#x}"),
            efficiency: None,
        },
    }
}

/// The topology of a loaded dump.
fn build(dump: Dump, name: &str) -> Result<Topology, Error> {
    if let Some((shown, bytes)) = &dump.info {
        let first = text(bytes, shown)?.lines().next().unwrap_or("");
        if !first.starts_with("Architecture: x86") {
            return Err(Error::at_line(
                shown,
                1,
                format!(
                    "expected \"Architecture: x86\", found {:?}: not an x86 CPUID dump",
                    first.chars().take(80).collect::<String>()
                ),
            ));
        }
    }
    if dump.pus.is_empty() {
        return Err(Error::new(
            name,
            "no puN files: not a CPUID dump (hwloc-gather-cpuid writes one per PU)",
        ));
    }
    let mut facts = Vec::with_capacity(dump.pus.len());
    let mut by_apic: HashMap<u32, &str> = HashMap::new();
    for (&pu, (shown, bytes)) in &dump.pus {
        let table = Table::parse(text(bytes, shown)?, shown)?;
        let f = PuFacts::of(&table);
        if let Some(other) = by_apic.insert(f.apic, shown) {
            return Err(Error::new(
                shown,
                format!(
                    "APIC id {:#x} is also {other}'s: every PU of a machine has its own",
                    f.apic
                ),
            ));
        }
        facts.push((pu, f));
    }
    let long_mode = facts.first().is_some_and(|(_, f)| f.long_mode);
    let mut b = TopologyBuilder::new(if long_mode { Arch::X86_64 } else { Arch::X86 });
    b.source(format!("cpuid:{name}"))
        .hw_id_kind(HwIdKind::ApicId);
    if let Some(model) = facts.iter().find_map(|(_, f)| f.model_name.clone()) {
        b.model_name(model);
    }
    let mut kinds: BTreeMap<u8, u16> = BTreeMap::new();
    for &t in facts.iter().filter_map(|(_, f)| f.core_type.as_ref()) {
        kinds.entry(t).or_insert(0);
    }
    for (&t, idx) in kinds.iter_mut() {
        *idx = b.add_core_kind(core_kind(t));
    }
    for (pu, f) in &facts {
        let ids = f.shifts.ids(f.apic);
        b.add_cpu(CpuSpec {
            id: *pu,
            hw_id: Some(u64::from(f.apic)),
            online: true,
            package: ids.package,
            die: ids.die,
            core: ids.core,
            kind: f.core_type.and_then(|t| kinds.get(&t).copied()),
            node: Some(0),
            ..CpuSpec::default()
        });
    }
    // hwloc's x86 backend gives the machine one NUMA node of every PU, its
    // memory unknown; so does this reader.
    let all: CompactMask = facts.iter().map(|(pu, _)| *pu as usize).collect();
    b.add_node(0, all, None);
    let placed = facts.iter().map(|(pu, f)| Placed {
        cpu: *pu,
        node: 0,
        caches: f.caches,
    });
    b.add_caches(cacheinfo::shared_instances(placed, 1));
    b.finish().map_err(|e| Error::new(name, e.to_string()))
}
