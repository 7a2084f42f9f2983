//! First pass: lscpu text → the fields it states, each with its line number.
//! Nothing is inferred here; `build` turns the fields into a topology.

use cpumask::CpuMask;

use super::format::{parse_cpulist, parse_size, SizeText};
use crate::Error;

/// A value and the 1-based line it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct At<T> {
    pub value: T,
    pub line: usize,
}

/// One CPU type's block (lscpu prints one per kind of core on hybrid machines).
#[derive(Debug, Clone, Default)]
pub struct CpuType {
    pub model_name: Option<At<String>>,
    pub threads_per_core: Option<At<u32>>,
    pub cores_per_socket: Option<At<u32>>,
    /// "Core(s) per cluster:" (arm64 machines whose firmware names no sockets).
    pub cores_per_cluster: Option<At<u32>>,
    /// `Some(None)` for "Socket(s): -".
    pub sockets: Option<At<Option<u32>>>,
    pub clusters: Option<At<u32>>,
    pub sockets_per_book: Option<At<u32>>,
    pub books_per_drawer: Option<At<u32>>,
    pub books: Option<At<u32>>,
    pub drawers: Option<At<u32>>,
}

/// One "Lnx cache:" line.
#[derive(Debug, Clone)]
pub struct CacheLine {
    pub name: String,
    pub level: u8,
    pub size: SizeText,
    pub line: usize,
}

/// The parsable (`lscpu -p`) block.
#[derive(Debug, Clone, Default)]
pub struct Csv {
    /// Line of the `# CPU,...` header.
    pub header_line: usize,
    pub rows: Vec<CsvRow>,
    /// Cache column names in order (`L1d`, `L1i`, `L2`...).
    pub cache_names: Vec<String>,
    pub has_core: bool,
    pub has_socket: bool,
    pub has_node: bool,
    pub has_cluster: bool,
}

/// One CPU's row; `None` where lscpu printed `-` or nothing.
#[derive(Debug, Clone, Default)]
pub struct CsvRow {
    pub line: usize,
    pub cpu: u32,
    pub core: Option<u32>,
    pub socket: Option<u32>,
    pub node: Option<u32>,
    pub cluster: Option<u32>,
    pub online: Option<bool>,
    /// Instance id per entry of [`Csv::cache_names`].
    pub caches: Vec<Option<u32>>,
}

/// Everything read from one lscpu output.
#[derive(Debug, Clone, Default)]
pub struct Scanned {
    pub architecture: Option<At<String>>,
    pub op_modes: Option<String>,
    pub byte_order: Option<String>,
    pub cpus: Option<At<u32>>,
    pub online: Option<At<CpuMask>>,
    pub offline: Option<At<CpuMask>>,
    pub vendor: Option<String>,
    pub isa: Option<String>,
    pub flags: Option<String>,
    pub types: Vec<CpuType>,
    pub hypervisor_vendor: Option<String>,
    pub caches: Vec<CacheLine>,
    pub node_count: Option<At<u32>>,
    pub node_lists: Vec<At<(u32, CpuMask)>>,
    pub csv: Option<Csv>,
}

fn number(value: &str, field: &str, source: &str, line: usize) -> Result<u32, Error> {
    value.trim().parse::<u32>().map_err(|_| {
        Error::at_line(
            source,
            line,
            format!(
                "{field} has value '{}', expected a whole number",
                value.trim()
            ),
        )
    })
}

/// A topology count (threads, cores, sockets, clusters, books, drawers,
/// nodes): no machine manycore can hold has more of anything than
/// [`cpumask::MAX_CPUS`] CPUs, so a larger count is refused here, naming its
/// line, rather than surfacing later as a confusing product of counts.
fn count(value: &str, field: &str, source: &str, line: usize) -> Result<u32, Error> {
    let n = number(value, field, source, line)?;
    if n as usize > cpumask::MAX_CPUS {
        return Err(Error::at_line(
            source,
            line,
            format!(
                "{field} is {n}, more than the {} CPUs a machine can have",
                cpumask::MAX_CPUS
            ),
        ));
    }
    Ok(n)
}

fn mask(value: &str, field: &str, source: &str, line: usize, hex: bool) -> Result<CpuMask, Error> {
    let parsed = if hex {
        CpuMask::parse_hex(value.trim().trim_start_matches("0x")).map_err(|e| e.to_string())
    } else {
        parse_cpulist(value)
    };
    parsed.map_err(|e| Error::at_line(source, line, format!("{field}: {e}")))
}

/// Sets a once-only field; a second line with a different value contradicts
/// the first.
fn set_once<T: PartialEq + std::fmt::Debug>(
    slot: &mut Option<At<T>>,
    value: T,
    line: usize,
    field: &str,
    source: &str,
) -> Result<(), Error> {
    match slot {
        Some(prev) if prev.value != value => Err(Error::at_line(
            source,
            line,
            format!(
                "{field} given again with a different value (first on line {})",
                prev.line
            ),
        )),
        Some(_) => Ok(()),
        None => {
            *slot = Some(At { value, line });
            Ok(())
        }
    }
}

/// Splits `Label: value`; labels never contain a colon, values may. The
/// colon is also the full-width one Chinese translations end labels with
/// (`每个核的线程数：`), so such a line is seen as a translated field.
fn split_label(line: &str) -> Option<(&str, &str)> {
    let at = line.find([':', '\u{ff1a}'])?;
    let colon = line[at..].chars().next()?;
    let (label, value) = (&line[..at], &line[at + colon.len_utf8()..]);
    let label = label.trim();
    if label.is_empty() || label.contains(',') {
        return None;
    }
    Some((label, value.trim()))
}

/// `L1d cache` / `L2 cache` / hierarchic `L1d` → (level, suffix).
fn cache_label(label: &str) -> Option<(u8, &str)> {
    let name = label.strip_suffix(" cache").unwrap_or(label);
    let rest = name.strip_prefix('L')?;
    let digits_end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    if digits_end == 0 || digits_end > 2 {
        return None;
    }
    let level: u8 = rest[..digits_end].parse().ok()?;
    let suffix = &rest[digits_end..];
    if !matches!(suffix, "" | "d" | "i") || level == 0 {
        return None;
    }
    Some((level, suffix))
}

/// `NUMA node3 CPU(s)` → 3.
fn node_label(label: &str) -> Option<&str> {
    label.strip_prefix("NUMA node")?.strip_suffix(" CPU(s)")
}

/// If `label` is a translation util-linux shipped of a label this reader
/// reads: its languages and the English label.
fn translation_of(label: &str) -> Option<(&'static str, &'static str)> {
    super::translated::TRANSLATIONS
        .iter()
        .find(|(_, _, t)| is_translation(label, t))
        .map(|(languages, english, _)| (*languages, *english))
}

/// Whether `label` is the translated label `t`, whose `%d` stands for a
/// node number and `%s` for a cache name.
fn is_translation(label: &str, t: &str) -> bool {
    let filled = |hole: &str, fits: fn(&str) -> bool| {
        let (before, after) = t.split_once(hole)?;
        let middle = label.strip_prefix(before)?.strip_suffix(after)?;
        Some(fits(middle))
    };
    if t.contains("%d") {
        filled("%d", |n| {
            !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
        }) == Some(true)
    } else if t.contains("%s") {
        filled("%s", |name| cache_label(name).is_some()) == Some(true)
    } else {
        label == t
    }
}

/// One `Label: value` line of the summary.
struct Field<'a> {
    label: &'a str,
    value: &'a str,
    line: usize,
    source: &'a str,
}

impl Field<'_> {
    fn count(&self) -> Result<u32, Error> {
        count(self.value, self.label, self.source, self.line)
    }

    fn mask(&self) -> Result<CpuMask, Error> {
        let hex = self.label.ends_with("mask");
        mask(self.value, self.label, self.source, self.line, hex)
    }
}

/// Reads every line of `text`: the CPU tables first (their lines are not
/// summary fields), then each summary field as a machine-wide field, a
/// CPU-type field, a node list or a cache.
pub fn scan(text: &str, source: &str) -> Result<Scanned, Error> {
    let mut s = Scanned::default();
    let lines: Vec<&str> = text.lines().collect();
    let mut csv_lines = vec![false; lines.len()];
    s.csv = scan_csv(&lines, &mut csv_lines, source)?;

    let mut blocks = TypeBlocks::default();
    let mut foreign = None;
    for (idx, raw) in lines.iter().enumerate() {
        if csv_lines[idx] || raw.trim_start().starts_with('#') {
            continue;
        }
        let Some((label, value)) = split_label(raw) else {
            continue;
        };
        let f = Field {
            label,
            value,
            line: idx + 1,
            source,
        };
        // Every label lscpu prints in English is ASCII.
        if label.is_ascii()
            && (machine_field(&mut s, &f)? || blocks.field(&f)? || node_or_cache_field(&mut s, &f)?)
        {
            continue;
        }
        if let Some((languages, english)) = translation_of(label) {
            return Err(Error::at_line(
                source,
                idx + 1,
                format!(
                    "'{label}' is util-linux's translation ({languages}) of '{english}': lscpu \
                     printed in another language is not read, as the lines it translates \
                     would be lost without a word; run it as `LC_ALL=C lscpu`"
                ),
            ));
        }
        // A translation util-linux's po files do not hold (see
        // `check_translated`).
        if !label.is_ascii() {
            foreign.get_or_insert((idx + 1, label));
        }
    }
    s.types = blocks.finish();
    if let Some((line, label)) = foreign {
        check_translated(&s, line, label, source)?;
    }
    Ok(s)
}

/// A summary with a translated label reads only if the counts the placement
/// needs were printed in English. util-linux 2.2x in a Spanish locale
/// translates "Virtualization" alone (`Virtualización: VT-x`), which says
/// nothing the model keeps; a fully translated summary (`LANG=ja_JP.UTF-8
/// lscpu`: "コアあたりのスレッド数:1") hides the threads and cores behind
/// labels this reader cannot know, which would read as one thread per core
/// without a word: one error names the first translated line.
fn check_translated(s: &Scanned, line: usize, label: &str, source: &str) -> Result<(), Error> {
    let counted = s.cpus.is_some()
        && !s.types.is_empty()
        && s.types.iter().all(|t| {
            t.threads_per_core.is_some()
                && (t.cores_per_socket.is_some() || t.cores_per_cluster.is_some())
        });
    if counted || s.csv.is_some() {
        return Ok(());
    }
    Err(Error::at_line(
        source,
        line,
        format!(
            "'{label}' is not an lscpu label in English and the counts of threads and cores \
             are not in English either: lscpu printed in another language cannot be read; \
             run it as `LC_ALL=C lscpu`"
        ),
    ))
}

impl Scanned {
    /// Whether the summary lists a CPU off-line (lscpu prints the list only
    /// when one is): the counts then do not describe every CPU.
    pub(super) fn any_offline(&self) -> bool {
        self.offline.as_ref().is_some_and(|o| !o.value.is_empty())
    }
}

/// Fields said once for the whole machine; false if `f` is not one.
fn machine_field(s: &mut Scanned, f: &Field) -> Result<bool, Error> {
    let (label, value, line, source) = (f.label, f.value, f.line, f.source);
    match label {
        "Architecture" => set_once(&mut s.architecture, value.to_string(), line, label, source)?,
        "CPU op-mode(s)" => s.op_modes = Some(value.to_string()),
        "Byte Order" => s.byte_order = Some(value.to_string()),
        "CPU(s)" => {
            let n = number(value, label, source, line)?;
            set_once(&mut s.cpus, n, line, label, source)?;
        }
        "On-line CPU(s) list" | "On-line CPU(s) mask" => {
            set_once(&mut s.online, f.mask()?, line, label, source)?
        }
        "Off-line CPU(s) list" | "Off-line CPU(s) mask" => {
            set_once(&mut s.offline, f.mask()?, line, label, source)?
        }
        "Vendor ID" => s.vendor = Some(value.to_string()),
        "ISA" => s.isa = Some(value.to_string()),
        "Flags" => s.flags = Some(value.to_string()),
        "Hypervisor vendor" => s.hypervisor_vendor = Some(value.to_string()),
        "NUMA node(s)" => set_once(&mut s.node_count, f.count()?, line, label, source)?,
        _ => return Ok(false),
    }
    Ok(true)
}

/// The CPU-type blocks: hybrid machines repeat "Model name:" ...
/// "Socket(s):" once per kind of core, so a field already set in the
/// current block starts the next one.
#[derive(Default)]
struct TypeBlocks {
    done: Vec<CpuType>,
    current: CpuType,
    started: bool,
}

impl TypeBlocks {
    fn put<T>(&mut self, slot: fn(&mut CpuType) -> &mut Option<At<T>>, value: T, line: usize) {
        if slot(&mut self.current).is_some() {
            self.done.push(std::mem::take(&mut self.current));
        }
        *slot(&mut self.current) = Some(At { value, line });
        self.started = true;
    }

    /// Takes `f` if it is a CPU-type field; false if it is not one.
    fn field(&mut self, f: &Field) -> Result<bool, Error> {
        let line = f.line;
        match f.label {
            "Model name" => self.put(|t| &mut t.model_name, f.value.to_string(), line),
            // 0 is what util-linux up to 2.36 prints when fewer CPUs are
            // on-line than it counted cores (on-line CPUs / cores, rounded
            // down): kept, and placed as one thread per core.
            "Thread(s) per core" => self.put(|t| &mut t.threads_per_core, f.count()?, line),
            "Core(s) per socket" => self.put(|t| &mut t.cores_per_socket, f.count()?, line),
            "Core(s) per cluster" => self.put(|t| &mut t.cores_per_cluster, f.count()?, line),
            // util-linux up to 2.19 printed "CPU socket(s)".
            "Socket(s)" | "CPU socket(s)" => {
                let v = if f.value == "-" {
                    None
                } else {
                    Some(f.count()?)
                };
                self.put(|t| &mut t.sockets, v, line)
            }
            "Cluster(s)" => self.put(|t| &mut t.clusters, f.count()?, line),
            "Socket(s) per book" => self.put(|t| &mut t.sockets_per_book, f.count()?, line),
            "Book(s) per drawer" => self.put(|t| &mut t.books_per_drawer, f.count()?, line),
            "Book(s)" => self.put(|t| &mut t.books, f.count()?, line),
            "Drawer(s)" => self.put(|t| &mut t.drawers, f.count()?, line),
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn finish(mut self) -> Vec<CpuType> {
        if self.started {
            self.done.push(self.current);
        }
        self.done
    }
}

/// A `NUMA nodeN CPU(s)` list or an `Lx cache` line; false for anything
/// else, a field the model has no place for.
fn node_or_cache_field(s: &mut Scanned, f: &Field) -> Result<bool, Error> {
    let (label, line, source) = (f.label, f.line, f.source);
    if let Some(id) = node_label(label) {
        let id = number(id, "NUMA node number", source, line)?;
        let m = f.mask()?;
        // lscpu prints each node once; a repeat (even with the same list)
        // means two outputs were pasted together.
        if let Some(prev) = s.node_lists.iter().find(|n| n.value.0 == id) {
            return Err(Error::at_line(
                source,
                line,
                format!("{label} given twice (first on line {})", prev.line),
            ));
        }
        s.node_lists.push(At {
            value: (id, m),
            line,
        });
        return Ok(true);
    }
    let Some((level, suffix)) = cache_label(label) else {
        return Ok(false);
    };
    // lscpu 2.24 to 2.30 print "unknown size" for a cache whose size the
    // kernel does not give (QEMU's PowerPC 750): the line says nothing the
    // model keeps.
    if f.value.is_empty() || f.value.trim() == "unknown size" {
        return Ok(true); // also a hierarchic section header
    }
    let size =
        parse_size(f.value).map_err(|e| Error::at_line(source, line, format!("{label}: {e}")))?;
    let name = format!("L{level}{suffix}");
    match s.caches.iter().find(|c| c.name == name) {
        Some(prev) if prev.size != size => Err(Error::at_line(
            source,
            line,
            format!(
                "{label} given again with a different size (first on line {})",
                prev.line
            ),
        )),
        Some(_) => Ok(true),
        None => {
            s.caches.push(CacheLine {
                name,
                level,
                size,
                line,
            });
            Ok(true)
        }
    }
}

/// The columns `lscpu -p[=LIST]` and `lscpu -e[=LIST]` can print (util-linux
/// `lscpu.c`'s `coldescs_cpu`), compared without case: `-p` prints them in
/// mixed case (`Socket`), `-e` in capitals (`SOCKET`).
const LSCPU_COLUMNS: &[&str] = &[
    "cpu",
    "core",
    "socket",
    "node",
    "book",
    "drawer",
    "cluster",
    "cache",
    "polarization",
    "address",
    "configured",
    "online",
    "mhz",
    "scalmhz%",
    "maxmhz",
    "minmhz",
];

/// A column `lscpu -p`/`-e` prints: a known name, caches joined by `:`
/// (`L1d:L1i:L2`), or the empty column the default `-p` puts before its
/// caches.
pub(super) fn is_column(name: &str) -> bool {
    name.is_empty()
        || LSCPU_COLUMNS.contains(&name.to_ascii_lowercase().as_str())
        || name.split(':').all(|p| cache_label(p).is_some())
}

/// How the rows of a CPU table separate their fields.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Table {
    /// `lscpu -p`: a `# ` header and comma-separated rows.
    Parsable,
    /// `lscpu -e`: a header of names and columns aligned with spaces.
    Extended,
}

/// The columns of a CPU table's header line, in any order, if `line` is one:
/// `# CPU,Core,...` (also `# Socket,CPU,...`), or `-e`'s `CPU NODE SOCKET ...`.
/// It must name the CPU column and nothing lscpu does not print.
fn table_header(line: &str) -> Option<(Vec<&str>, Table)> {
    let (columns, table): (Vec<&str>, Table) = match line.strip_prefix('#') {
        Some(h) => (h.split(',').map(str::trim).collect(), Table::Parsable),
        None => (line.split_whitespace().collect(), Table::Extended),
    };
    let names_cpu = columns.iter().any(|c| c.eq_ignore_ascii_case("cpu"));
    (names_cpu && columns.iter().all(|c| is_column(c))).then_some((columns, table))
}

/// Splits a table row into its fields.
fn table_fields(row: &str, table: Table) -> Vec<&str> {
    match table {
        Table::Parsable => row.split(',').map(str::trim).collect(),
        Table::Extended => row.split_whitespace().collect(),
    }
}

/// Finds the first CPU table (`lscpu -p` or `-e`, columns in any order) and
/// reads its rows; marks every line of every table so the summary pass
/// skips them.
fn scan_csv(lines: &[&str], consumed: &mut [bool], source: &str) -> Result<Option<Csv>, Error> {
    let mut result: Option<Csv> = None;
    let mut idx = 0;
    while idx < lines.len() {
        let Some((columns, table)) = table_header(lines[idx].trim()) else {
            idx += 1;
            continue;
        };
        consumed[idx] = true;
        let header_line = idx + 1;
        let mut block = Csv {
            header_line,
            ..Csv::default()
        };
        // Cache columns: every `Lx` name, whether separate or joined by ':'.
        let mut cache_slots: Vec<(usize, Option<usize>)> = Vec::new();
        for (ci, col) in columns.iter().enumerate() {
            match col.to_ascii_lowercase().as_str() {
                "core" => block.has_core = true,
                "socket" => block.has_socket = true,
                "node" => block.has_node = true,
                "cluster" => block.has_cluster = true,
                _ if col.is_empty() => {}
                _ => {
                    let parts: Vec<&str> = col.split(':').collect();
                    if parts.iter().all(|p| cache_label(p).is_some()) {
                        for (pi, p) in parts.iter().enumerate() {
                            block.cache_names.push(p.to_string());
                            cache_slots.push((ci, (parts.len() > 1).then_some(pi)));
                        }
                    }
                }
            }
        }
        idx += 1;
        let mut rows: Vec<(usize, Vec<&str>)> = Vec::new();
        while idx < lines.len() {
            let row = lines[idx].trim();
            if row.is_empty() || row.starts_with('#') {
                break;
            }
            consumed[idx] = true;
            let line = idx + 1;
            let fields = realigned(table_fields(row, table), columns.len(), &cache_slots);
            if fields.len() != columns.len() {
                return Err(Error::at_line(
                    source,
                    line,
                    format!(
                        "parsable row has {} fields but the header on line {header_line} names {}",
                        fields.len(),
                        columns.len()
                    ),
                ));
            }
            rows.push((line, fields));
            idx += 1;
        }
        // lscpu 2.38 on RISC-V printed a table of empty rows (`,,,` per CPU):
        // such a table says nothing, and the summary is read without it.
        let blank = !rows.is_empty()
            && rows
                .iter()
                .all(|(_, fields)| fields.iter().all(|f| f.is_empty()));
        if result.is_none() && !blank {
            for (line, fields) in &rows {
                block
                    .rows
                    .push(csv_row(&columns, fields, &cache_slots, *line, source)?);
            }
        }
        if result.is_none() && !blank {
            if block.rows.is_empty() {
                return Err(Error::at_line(
                    source,
                    header_line,
                    "parsable header is not followed by any CPU rows",
                ));
            }
            result = Some(block);
        }
    }
    Ok(result)
}

/// A `-p` row whose cache fields are fewer than the header's cache names,
/// padded back to the header's width; any other row as it is. lscpu (2.37
/// and later) prints a CPU's cache ids only for the caches that list it, one
/// field each, and a single empty field for none: a CPU whose cache
/// directories the kernel did not write (or a capture lost) gets a short
/// row. Which caches its ids name is then unknown, so they are dropped: the
/// CPU is left in no cache rather than in the wrong ones. Only a table whose
/// separate cache columns are its last (lscpu's default `-p`) is padded: with
/// columns after the caches, a short row could as well be a row cut short,
/// and where its fields belong is unknown, so it stays short and is refused.
fn realigned<'r>(
    fields: Vec<&'r str>,
    width: usize,
    cache_slots: &[(usize, Option<usize>)],
) -> Vec<&'r str> {
    let separate: Vec<usize> = cache_slots
        .iter()
        .filter(|(_, part)| part.is_none())
        .map(|(ci, _)| *ci)
        .collect();
    let (Some(&first), Some(&last)) = (separate.first(), separate.last()) else {
        return fields;
    };
    let caches = last - first + 1;
    let short = width.saturating_sub(fields.len());
    let caches_last = last + 1 == width;
    if short == 0
        || short >= caches
        || separate.len() != caches
        || !caches_last
        || fields.len() <= first
    {
        return fields;
    }
    let mut padded = fields[..first].to_vec();
    padded.resize(width, "");
    padded
}

fn csv_row(
    columns: &[&str],
    fields: &[&str],
    cache_slots: &[(usize, Option<usize>)],
    line: usize,
    source: &str,
) -> Result<CsvRow, Error> {
    let id = |col: &str, v: &str| -> Result<Option<u32>, Error> {
        if v.is_empty() || v == "-" {
            return Ok(None);
        }
        v.parse::<u32>().map(Some).map_err(|_| {
            Error::at_line(
                source,
                line,
                format!("parsable column {col} has value '{v}', expected a number or '-'"),
            )
        })
    };
    let mut row = CsvRow {
        line,
        ..CsvRow::default()
    };
    let mut cpu = None;
    for (col, v) in columns.iter().zip(fields) {
        match col.to_ascii_lowercase().as_str() {
            "cpu" => cpu = id(col, v)?,
            "core" => row.core = id(col, v)?,
            "socket" => row.socket = id(col, v)?,
            "node" => row.node = id(col, v)?,
            "cluster" => row.cluster = id(col, v)?,
            "online" => {
                row.online = match *v {
                    "Y" | "yes" => Some(true),
                    "N" | "no" => Some(false),
                    _ => None,
                }
            }
            _ => {}
        }
    }
    row.cpu = cpu.ok_or_else(|| Error::at_line(source, line, "parsable row has no CPU number"))?;
    for (ci, part) in cache_slots {
        let field = fields[*ci];
        let v = match part {
            None => field,
            // `-e` joins a CPU's cache ids with ':' and, like `-p` (see
            // [`realigned`]), leaves out the caches that do not list the
            // CPU: a cell of fewer ids than the header names cannot say
            // which caches they are.
            Some(p) if field.split(':').count() == columns[*ci].split(':').count() => {
                field.split(':').nth(*p).unwrap_or("")
            }
            Some(_) => "",
        };
        row.caches.push(id(columns[*ci], v)?);
    }
    Ok(row)
}
