//! The first phase of reading: one pass over the XML events, keeping what
//! [`super::map`] needs ([`Raw`]) and checking the document's structure as
//! it goes: elements closed in order, one `<topology>` root holding one root
//! `<object>` first, every element this reader interprets where hwloc writes
//! it ([`PLACEMENT`]), nesting at most [`XML_DEPTH_LIMIT`] deep, and distance
//! matrices no larger than their `nbobjs` says.
//!
//! Text is read as XML defines it: character references (`&#49;`), the five
//! predefined entities and CDATA sections are character data like any other,
//! even when they split a number. Entities a DOCTYPE would declare are not
//! expanded (hwloc never writes them, and expanding them is how an XML bomb
//! works): using one is an error naming it.

use quick_xml::events::{BytesRef, BytesStart, Event};
use quick_xml::Reader;
use topology::{CacheKind, MAX_DISTANCE_NODES};

use super::line_of;
use super::raw::{
    attrs_of, get, latency, num, obj_type, parse_bitmap, Attrs, Distances, ObjType, Raw, RawKind,
    RawObj, V1Distances, GROUP_KIND_MEMORY,
};
use crate::limits::XML_DEPTH_LIMIT;
use crate::Error;

/// Where hwloc writes each element this reader interprets: the elements that
/// may hold it (hwloc's `topology-xml.c` reads them only there). Other
/// elements (`support`, `memattr`, `userdata`...) are skipped wherever they are.
const PLACEMENT: &[(&[u8], &[&[u8]])] = &[
    (b"object", &[b"topology", b"object"]),
    (b"distances2", &[b"topology"]),
    (b"distances2hetero", &[b"topology"]),
    (b"cpukind", &[b"topology"]),
    (b"indexes", &[b"distances2", b"distances2hetero"]),
    (b"u64values", &[b"distances2", b"distances2hetero"]),
    (b"info", &[b"topology", b"object", b"cpukind"]),
    // hwloc v1: a distance matrix inside an object, one `<latency>` per value.
    (b"distances", &[b"object"]),
    (b"latency", &[b"distances"]),
];

/// The longest number hwloc writes in a distance matrix (a u64 has 20
/// digits): a longer word is refused before it is kept.
const MAX_WORD: usize = 24;

/// Which text the reader is collecting.
#[derive(Clone, Copy, PartialEq, Eq)]
enum TextTarget {
    None,
    Indexes,
    Values,
}

/// The reader's state between events.
struct Parser<'t> {
    text: &'t str,
    source: &'t str,
    raw: Raw,
    /// The objects open around the current element (indexes into `raw.objects`).
    stack: Vec<usize>,
    /// Every element open (name and byte offset), to check closing tags and
    /// report truncation.
    open: Vec<(Vec<u8>, usize)>,
    seen_topology: bool,
    dist: Option<Distances>,
    v1dist: Option<V1Distances>,
    kind: Option<RawKind>,
    target: TextTarget,
    /// The word of distance text read so far: a character reference, an
    /// entity or a CDATA section may split a number between events.
    word: String,
    /// The most `<indexes>` and values the open `<distances2>` may hold.
    dist_cap: (usize, usize),
    /// The root `<object>` has been read (it comes first in `<topology>`).
    seen_root_object: bool,
    /// Under a `System` root (hwloc 1.x), the Machines met so far.
    system_machines: Option<usize>,
    /// How deep inside a skipped (I/O or Misc) object the reader is.
    ignored_depth: usize,
}

pub(super) fn parse_raw(text: &str, source: &str) -> Result<Raw, Error> {
    let mut reader = Reader::from_str(text);
    // Whitespace is kept: between a number and a character reference it
    // separates two numbers.
    reader.config_mut().trim_text(false);
    let mut p = Parser {
        text,
        source,
        raw: Raw::default(),
        stack: Vec::new(),
        open: Vec::new(),
        seen_topology: false,
        dist: None,
        v1dist: None,
        kind: None,
        target: TextTarget::None,
        word: String::new(),
        dist_cap: (0, 0),
        seen_root_object: false,
        system_machines: None,
        ignored_depth: 0,
    };
    loop {
        let start = reader.buffer_position() as usize;
        let event = match reader.read_event() {
            Ok(e) => e,
            Err(err) => {
                let line = line_of(text, reader.error_position() as usize);
                return Err(Error::at_line(
                    source,
                    line,
                    format!("malformed XML: {err}"),
                ));
            }
        };
        // The element starts after any whitespace skipped before it.
        let skip = text.as_bytes()[start.min(text.len())..]
            .iter()
            .take_while(|b| b.is_ascii_whitespace())
            .count();
        let pos = start + skip;
        match event {
            Event::Start(ref e) => p.start(e, false, pos)?,
            Event::Empty(ref e) => p.start(e, true, pos)?,
            Event::End(ref e) => p.end(e.name().as_ref().as_bytes(), pos)?,
            Event::Text(ref t) => p.text_words(&t.xml10_content(), pos)?,
            Event::CData(ref t) => p.text_words(&t.xml10_content(), pos)?,
            Event::GeneralRef(ref r) => p.reference(r, pos)?,
            Event::Eof => return p.finish(),
            _ => {}
        }
    }
}

impl Parser<'_> {
    fn err_at(&self, pos: usize, message: String) -> Error {
        Error::at_line(self.source, line_of(self.text, pos), message)
    }

    /// An opening (or empty) element.
    fn start(&mut self, e: &BytesStart<'_>, is_empty: bool, pos: usize) -> Result<(), Error> {
        let name = e.name().as_ref().as_bytes().to_vec();
        if self.open.len() >= XML_DEPTH_LIMIT {
            return Err(self.err_at(
                pos,
                format!("elements nested more than {XML_DEPTH_LIMIT} deep"),
            ));
        }
        let attrs = attrs_of(e).map_err(|m| self.err_at(pos, m))?;
        if !self.seen_topology {
            self.root(&name, &attrs, pos)?;
        } else if self.open.is_empty() {
            return Err(self.err_at(pos, "content after the closing </topology>".into()));
        } else if self.ignored_depth > 0 {
            if !is_empty {
                self.ignored_depth += 1;
            }
        } else {
            self.check_placement(&name, pos)?;
            self.element(&name, &attrs, is_empty, pos)?;
        }
        if !is_empty {
            self.open.push((name, pos));
        }
        Ok(())
    }

    /// The root element: `<topology>` of a version this reader knows.
    fn root(&mut self, name: &[u8], attrs: &Attrs<'_>, pos: usize) -> Result<(), Error> {
        if name != b"topology" {
            return Err(self.err_at(
                pos,
                format!(
                    "expected <topology> as the root element, found <{}>",
                    String::from_utf8_lossy(name)
                ),
            ));
        }
        self.seen_topology = true;
        if let Some(v) = get(attrs, "version") {
            let major = v.split('.').next().unwrap_or("");
            if !matches!(major, "1" | "2" | "3") {
                return Err(self.err_at(
                    pos,
                    format!("unsupported hwloc XML version {v} (supported: 1.x, 2.x, 3.x)"),
                ));
            }
        }
        Ok(())
    }

    /// An element this reader interprets must be where hwloc writes it; and
    /// in `<topology>`, the one root `<object>` comes first, since the
    /// distances and CPU kinds after it refer to its objects.
    fn check_placement(&self, name: &[u8], pos: usize) -> Result<(), Error> {
        let parent = self.open.last().map_or(&[][..], |(n, _)| n.as_slice());
        let shown = |n: &[u8]| String::from_utf8_lossy(n).into_owned();
        if let Some((_, parents)) = PLACEMENT.iter().find(|(n, _)| *n == name) {
            if !parents.contains(&parent) {
                let want: Vec<String> = parents.iter().map(|p| format!("<{}>", shown(p))).collect();
                return Err(self.err_at(
                    pos,
                    format!(
                        "<{}> inside <{}>: hwloc writes it only in {}",
                        shown(name),
                        shown(parent),
                        want.join(" or ")
                    ),
                ));
            }
        }
        if parent == b"topology" {
            match (name == b"object", self.seen_root_object) {
                (true, true) => {
                    return Err(self.err_at(pos, "a second root <object> in <topology>".into()))
                }
                (false, false) => {
                    return Err(
                        self.err_at(pos, format!("<{}> before the root <object>", shown(name)))
                    )
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// An element inside `<topology>`, by name.
    fn element(
        &mut self,
        name: &[u8],
        attrs: &Attrs<'_>,
        is_empty: bool,
        pos: usize,
    ) -> Result<(), Error> {
        let (source, text) = (self.source, self.text);
        let err = move |m: String| Error::at_line(source, line_of(text, pos), m);
        match name {
            b"object" => {
                self.seen_root_object = true;
                self.object(attrs, is_empty, pos)?
            }
            b"info" => self.info(attrs),
            b"distances2" => self.distances2(attrs, is_empty, pos)?,
            b"indexes" | b"u64values" if self.dist.is_some() && !is_empty => {
                self.target = if name == b"indexes" {
                    TextTarget::Indexes
                } else {
                    TextTarget::Values
                };
            }
            b"distances" => {
                // hwloc v1: latencies between the objects at one depth.
                self.v1dist = Some(V1Distances {
                    depth: num(attrs, "relative_depth").map_err(err)?.unwrap_or(0),
                    at_root: self.stack.len() == 1,
                    nbobjs: num(attrs, "nbobjs").map_err(err)?,
                    base: latency(attrs, "latency_base").map_err(err)?.unwrap_or(1.0),
                    values: Vec::new(),
                    pos,
                });
                if is_empty {
                    self.raw.v1_distances.extend(self.v1dist.take());
                }
            }
            b"latency" if self.v1dist.is_some() => {
                let v = latency(attrs, "value").map_err(err)?.unwrap_or(0.0);
                if let Some(d) = self.v1dist.as_mut() {
                    let max = d.nbobjs.map_or(usize::MAX, |k| k.saturating_mul(k));
                    if d.values.len() >= max {
                        return Err(err(format!(
                            "distances lists more than {max} latencies for its nbobjs"
                        )));
                    }
                    // Only a matrix with `nbobjs` can be the NUMA one (hwloc
                    // reads no other), and one over more objects than the
                    // model keeps distances for is refused if it is chosen:
                    // neither needs its values held.
                    if d.nbobjs.is_some_and(|k| k <= MAX_DISTANCE_NODES) {
                        d.values.push(v);
                    }
                }
            }
            b"cpukind" => {
                let cpuset = parse_bitmap(get(attrs, "cpuset").unwrap_or("0x0"))
                    .map_err(err)?
                    .to_mask();
                let k = RawKind {
                    cpuset,
                    efficiency: num(attrs, "forced_efficiency").map_err(err)?,
                    ..Default::default()
                };
                if is_empty {
                    self.raw.kinds.push(k);
                } else {
                    self.kind = Some(k);
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// A `<distances2>` over NUMA nodes, kept with the most indexes and values
    /// its `nbobjs` allows; matrices over other objects are not used and are
    /// skipped unread.
    fn distances2(&mut self, attrs: &Attrs<'_>, is_empty: bool, pos: usize) -> Result<(), Error> {
        let (source, text) = (self.source, self.text);
        let err = move |m: String| Error::at_line(source, line_of(text, pos), m);
        if get(attrs, "type") != Some("NUMANode") {
            return Ok(());
        }
        let nbobjs: Option<usize> = num(attrs, "nbobjs").map_err(err)?;
        let nodes = self
            .raw
            .objects
            .iter()
            .filter(|o| o.ty == ObjType::Numa)
            .count();
        if let Some(k) = nbobjs.filter(|&k| k > nodes) {
            return Err(err(format!(
                "distances2 covers {k} NUMA nodes but the topology has {nodes}"
            )));
        }
        let mut d = Distances {
            obj_type: "NUMANode".into(),
            kind: num(attrs, "kind").map_err(err)?.unwrap_or(0),
            name: get(attrs, "name").unwrap_or("").to_string(),
            gp_indexing: get(attrs, "indexing") == Some("gp"),
            nbobjs,
            pos,
            ..Default::default()
        };
        let k = nbobjs.unwrap_or(nodes);
        if k > MAX_DISTANCE_NODES {
            return Err(err(format!(
                "distances2 over {k} NUMA nodes: distances are kept for at most \
                 {MAX_DISTANCE_NODES} nodes"
            )));
        }
        self.dist_cap = (k, k.saturating_mul(k));
        // Room for every value up front, so that millions of them are not
        // copied as the list doubles; each takes at least two bytes of the
        // text left, which bounds the room by the input's size.
        if is_empty {
            self.raw.distances.push(d);
        } else {
            d.values
                .reserve_exact(self.dist_cap.1.min((text.len() - pos) / 2 + 1));
            self.dist = Some(d);
        }
        Ok(())
    }

    /// An `<object>`: kept with its parent and depth, or skipped with its
    /// children when it is an I/O or Misc object.
    fn object(&mut self, attrs: &Attrs<'_>, is_empty: bool, pos: usize) -> Result<(), Error> {
        let (source, text) = (self.source, self.text);
        let err = move |m: String| Error::at_line(source, line_of(text, pos), m);
        let ty_name =
            get(attrs, "type").ok_or_else(|| err("<object> without a type attribute".into()))?;
        let (mut ty, mut cache) =
            obj_type(ty_name).ok_or_else(|| err(format!("unknown object type '{ty_name}'")))?;
        if ty == ObjType::Ignored {
            if !is_empty {
                self.ignored_depth = 1;
            }
            return Ok(());
        }
        if ty == ObjType::Cache {
            cache = Some(cache_level(attrs, cache).map_err(err)?);
        }
        let mut cpuset = match get(attrs, "cpuset") {
            Some(c) => Some(parse_bitmap(c).map_err(err)?),
            None => None,
        };
        let mut size =
            num::<u64>(attrs, "cache_size")
                .map_err(err)?
                .or(num::<u64>(attrs, "local_memory").map_err(err)?);
        let mut os_index = num(attrs, "os_index").map_err(err)?;
        let mut fields = (
            num(attrs, "gp_index").map_err(err)?,
            num(attrs, "kind").map_err(err)?,
            num(attrs, "cache_linesize").map_err(err)?,
            associativity(attrs).map_err(err)?,
        );
        if ty == ObjType::Machine && self.stack.is_empty() {
            self.system_machines = (ty_name == "System").then_some(0);
            // The root: its complete set gives the offline CPUs.
            if let Some(c) = get(attrs, "complete_cpuset") {
                cpuset = Some(parse_bitmap(c).map_err(err)?);
                self.raw
                    .root_infos
                    .push(("__complete".into(), String::new()));
                (os_index, size, fields) = (None, None, (None, None, None, None));
            }
        } else if ty == ObjType::Machine {
            // hwloc 1.x's assembled topologies (hwloc-assembler) put several
            // machines under a System root; each numbers its own PUs from 0,
            // so they are one error here rather than a clash of PU numbers.
            if let Some(machines) = self.system_machines.as_mut() {
                *machines += 1;
            }
            if self.system_machines > Some(1) {
                return Err(err(
                    "a second Machine inside a System: a topology of several machines, \
                     assembled by hwloc 1.x (hwloc 2 reads none either); manycore reads \
                     one machine: export each machine on its own"
                        .into(),
                ));
            }
            ty = ObjType::Group;
        }
        let (gp_index, mut group_kind, line_size, assoc) = fields;
        if ty == ObjType::Numa && !in_own_nodeset(attrs, os_index).map_err(err)? {
            // hwloc 1.x exported a NUMA node the exporting process may not
            // allocate from (outside its cgroup's mems) with an empty
            // nodeset; hwloc 2.9 imports it as no node, leaving its CPUs in
            // none. It stays in the tree as what hwloc 2 makes of a v1 node
            // object: a memory group, which groups no CPUs.
            ty = ObjType::Group;
            group_kind = Some(GROUP_KIND_MEMORY);
            size = None;
        }
        self.raw.objects.push(RawObj {
            ty,
            os_index,
            cpuset,
            gp_index,
            group_kind,
            cache,
            size,
            line_size,
            assoc,
            parent: self.stack.last().copied(),
            depth: self.stack.len(),
            pos,
        });
        if !is_empty {
            self.stack.push(self.raw.objects.len() - 1);
        }
        Ok(())
    }

    /// An `<info name= value=>`: the root's infos, a package's CPU model, or
    /// a CPU kind's core type and capacity.
    fn info(&mut self, attrs: &Attrs<'_>) {
        let (Some(n), Some(v)) = (get(attrs, "name"), get(attrs, "value")) else {
            return;
        };
        if let Some(k) = self.kind.as_mut() {
            match n {
                "CoreType" => k.core_type = Some(v.to_string()),
                "LinuxCapacity" => k.capacity = v.trim().parse().ok(),
                _ => {}
            }
            return;
        }
        let owner = self.stack.last().map(|&i| self.raw.objects[i].ty);
        match (owner, n) {
            (Some(ObjType::Package), "CPUModel") => self.raw.package_models.push(v.to_string()),
            (None | Some(ObjType::Machine), _) => {
                self.raw.root_infos.push((n.to_string(), v.to_string()))
            }
            _ => {}
        }
    }

    /// A closing element: it must close the element opened last.
    fn end(&mut self, name: &[u8], pos: usize) -> Result<(), Error> {
        match self.open.pop() {
            Some((n, _)) if n == name => {}
            Some((n, l)) => {
                return Err(self.err_at(
                    pos,
                    format!(
                        "</{}> closes <{}> opened at line {}",
                        String::from_utf8_lossy(name),
                        String::from_utf8_lossy(&n),
                        line_of(self.text, l)
                    ),
                ))
            }
            None => {
                return Err(self.err_at(
                    pos,
                    format!("unexpected </{}>", String::from_utf8_lossy(name)),
                ))
            }
        }
        if self.ignored_depth > 0 {
            self.ignored_depth -= 1;
            return Ok(());
        }
        match name {
            b"object" => {
                self.stack.pop();
            }
            b"distances2" => self.raw.distances.extend(self.dist.take()),
            b"indexes" | b"u64values" => {
                self.end_word(pos)?;
                self.target = TextTarget::None;
            }
            b"distances" => self.raw.v1_distances.extend(self.v1dist.take()),
            b"cpukind" => self.raw.kinds.extend(self.kind.take()),
            _ => {}
        }
        Ok(())
    }

    /// Character data: the numbers of a NUMA `<distances2>`'s `<indexes>` or
    /// `<u64values>`, whitespace-separated; a number may continue in the
    /// next event. A matrix over thousands of nodes is millions of numbers,
    /// so a number that lies whole in this text is parsed where it lies;
    /// only one split across events is gathered in `word`.
    fn text_words(&mut self, s: &str, pos: usize) -> Result<(), Error> {
        if self.target == TextTarget::None || self.ignored_depth > 0 {
            return Ok(());
        }
        let mut start = 0;
        for (i, b) in s.bytes().enumerate() {
            if !b.is_ascii_whitespace() {
                continue;
            }
            if self.word.is_empty() {
                self.number(&s[start..i], pos)?;
            } else {
                self.push_word(&s[start..i], pos)?;
                self.end_word(pos)?;
            }
            start = i + 1;
        }
        self.push_word(&s[start..], pos)
    }

    /// A reference in character data: `&#49;`, `&#x31;` or one of XML's five
    /// predefined entities is its character; any other entity is an error
    /// (this reader expands no DOCTYPE's entities).
    fn reference(&mut self, r: &BytesRef<'_>, pos: usize) -> Result<(), Error> {
        let name: &str = r;
        let resolved = match r.resolve_char_ref() {
            Ok(Some(c)) => c.to_string(),
            Ok(None) => quick_xml::escape::resolve_predefined_entity(name)
                .ok_or_else(|| {
                    self.err_at(
                        pos,
                        format!("entity &{name}; is not one of XML's predefined entities"),
                    )
                })?
                .to_string(),
            Err(e) => {
                return Err(self.err_at(pos, format!("bad character reference &{name};: {e}")))
            }
        };
        self.text_words(&resolved, pos)
    }

    /// Adds `part` to the word being read; a word longer than any number
    /// hwloc writes is refused at once.
    fn push_word(&mut self, part: &str, pos: usize) -> Result<(), Error> {
        self.word.push_str(part);
        if self.word.len() > MAX_WORD {
            return Err(self.not_a_number(&self.word, pos));
        }
        Ok(())
    }

    /// Ends the word being read (keeping its buffer for the next one).
    fn end_word(&mut self, pos: usize) -> Result<(), Error> {
        let word = std::mem::take(&mut self.word);
        let done = self.number(&word, pos);
        self.word = word;
        self.word.clear();
        done
    }

    fn not_a_number(&self, word: &str, pos: usize) -> Error {
        if word.len() > MAX_WORD {
            let shown: String = word.chars().take(MAX_WORD).collect();
            return self.err_at(pos, format!("distance value '{shown}...' is not a number"));
        }
        self.err_at(pos, format!("distance value '{word}' is not a number"))
    }

    /// One whole word (nothing if empty): a number for the open matrix,
    /// within the counts its `nbobjs` allows.
    fn number(&mut self, word: &str, pos: usize) -> Result<(), Error> {
        if word.is_empty() {
            return Ok(());
        }
        let v: u64 = match word.parse() {
            Ok(v) if word.len() <= MAX_WORD => v,
            _ => return Err(self.not_a_number(word, pos)),
        };
        let (max_indexes, max_values) = self.dist_cap;
        let Some(d) = self.dist.as_mut() else {
            return Ok(());
        };
        let (len, max, what) = match self.target {
            TextTarget::Indexes => (d.indexes.len(), max_indexes, "indexes"),
            TextTarget::Values => (d.values.len(), max_values, "values"),
            TextTarget::None => return Ok(()),
        };
        if len < max {
            if self.target == TextTarget::Indexes {
                d.indexes.push(v);
            } else {
                let narrow = u32::try_from(v).unwrap_or_else(|_| {
                    d.wide.get_or_insert((len, v));
                    0
                });
                d.values.push(narrow);
            }
            return Ok(());
        }
        let message = match d.nbobjs {
            Some(k) => format!("distances2 has nbobjs=\"{k}\" but lists more than {max} {what}"),
            None => format!(
                "distances2 lists more than {max} {what} but the topology has {max_indexes} NUMA nodes"
            ),
        };
        let at = d.pos;
        Err(self.err_at(at, message))
    }

    /// The end of the input: every element closed, and there was a topology.
    fn finish(self) -> Result<Raw, Error> {
        if let Some((n, l)) = self.open.last() {
            return Err(Error::at_line(
                self.source,
                line_of(self.text, self.text.len()),
                format!(
                    "unexpected end of file: <{}> opened at line {} is not closed",
                    String::from_utf8_lossy(n),
                    line_of(self.text, *l)
                ),
            ));
        }
        if !self.seen_topology {
            return Err(Error::new(
                self.source,
                "no <topology> element: not hwloc XML",
            ));
        }
        Ok(self.raw)
    }
}

/// A cache object's level and kind: from its type name (`L2Cache`) or, in v1
/// files, its `depth`; `cache_type` overrides the kind.
fn cache_level(
    attrs: &Attrs<'_>,
    from_name: Option<(u8, CacheKind)>,
) -> Result<(u8, CacheKind), String> {
    let depth: Option<u8> = num(attrs, "depth")?;
    let ctype: Option<u8> = num(attrs, "cache_type")?;
    let (level, kind) = match (from_name, depth) {
        (Some((l, k)), _) => (l, k),
        (None, Some(d)) => (d, CacheKind::Unified),
        (None, None) => return Err("cache without a depth attribute".into()),
    };
    if !(1..=5).contains(&level) {
        return Err(format!("cache depth {level} out of 1..5"));
    }
    let kind = match ctype {
        Some(1) => CacheKind::Data,
        Some(2) => CacheKind::Instruction,
        Some(0) => CacheKind::Unified,
        Some(other) => return Err(format!("unknown cache_type {other}")),
        None => kind,
    };
    Ok((level, kind))
}

/// `cache_associativity`: hwloc writes the ways, 0 when unknown and -1 when
/// fully associative; any other negative number cannot be a cache.
/// Whether a NUMA node object's `nodeset` holds its own `os_index` (true
/// when either is missing: v2 files always hold it).
fn in_own_nodeset(attrs: &Attrs<'_>, os_index: Option<u32>) -> Result<bool, String> {
    let (Some(text), Some(id)) = (get(attrs, "nodeset"), os_index) else {
        return Ok(true);
    };
    let id = id as usize;
    let word = u16::try_from(id / 64).ok();
    Ok(parse_bitmap(text)?
        .0
        .iter()
        .any(|&(w, v)| Some(w) == word && v & (1 << (id % 64)) != 0))
}

fn associativity(attrs: &Attrs<'_>) -> Result<Option<i64>, String> {
    let ways: Option<i64> = num(attrs, "cache_associativity")?;
    match ways {
        Some(w) if w < -1 || w > u32::MAX as i64 => Err(format!(
            "attribute cache_associativity=\"{w}\" is neither -1 (fully associative) nor a count of ways"
        )),
        _ => Ok(ways),
    }
}
