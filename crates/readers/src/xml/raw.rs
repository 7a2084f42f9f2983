//! What the reader keeps of an hwloc XML file before mapping it onto the
//! model: objects with their parents, distance matrices, CPU kinds, and the
//! attribute and bitmap parsing they are read with.

use std::borrow::Cow;

use quick_xml::events::BytesStart;
use topology::{CacheKind, CompactMask, CpuMask, MAX_CPUS};

use crate::error::excerpt;

// hwloc group kinds that are helpers rather than CPU groupings.
pub(super) const GROUP_KIND_DISTANCE: u32 = 900;
pub(super) const GROUP_KIND_IO: u32 = 1000;
pub(super) const GROUP_KIND_MEMORY: u32 = 1001;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ObjType {
    Machine,
    Package,
    Die,
    Group,
    Numa,
    Cache,
    MemCache,
    Core,
    Pu,
    /// I/O and Misc objects: skipped.
    Ignored,
}

pub(super) fn obj_type(name: &str) -> Option<(ObjType, Option<(u8, CacheKind)>)> {
    let t = match name {
        "Machine" | "System" => ObjType::Machine,
        "Package" | "Socket" => ObjType::Package,
        "Die" => ObjType::Die,
        "Group" => ObjType::Group,
        "NUMANode" => ObjType::Numa,
        "Core" => ObjType::Core,
        "PU" => ObjType::Pu,
        "Cache" => ObjType::Cache,
        "MemCache" => ObjType::MemCache,
        "Misc" | "Bridge" | "PCIDev" | "OSDev" => ObjType::Ignored,
        _ => {
            // L<n>Cache, L<n>iCache
            let rest = name.strip_prefix('L')?.strip_suffix("Cache")?;
            let (digits, kind) = match rest.strip_suffix('i') {
                Some(d) => (d, CacheKind::Instruction),
                None => (rest, CacheKind::Unified),
            };
            let level: u8 = digits.parse().ok()?;
            if !(1..=5).contains(&level) {
                return None;
            }
            return Some((ObjType::Cache, Some((level, kind))));
        }
    };
    Some((t, None))
}

#[derive(Debug)]
pub(super) struct RawObj {
    pub(super) ty: ObjType,
    pub(super) os_index: Option<u32>,
    pub(super) cpuset: Option<Bits>,
    pub(super) gp_index: Option<u64>,
    pub(super) group_kind: Option<u32>,
    pub(super) cache: Option<(u8, CacheKind)>,
    pub(super) size: Option<u64>,
    pub(super) line_size: Option<u32>,
    pub(super) assoc: Option<i64>,
    pub(super) parent: Option<usize>,
    pub(super) depth: usize,
    /// Byte offset of the element, turned into a line only for errors.
    pub(super) pos: usize,
}

#[derive(Debug, Default)]
pub(super) struct Distances {
    pub(super) obj_type: String,
    pub(super) kind: u64,
    pub(super) name: String,
    pub(super) gp_indexing: bool,
    /// The `nbobjs` attribute, checked against the `<indexes>` listed.
    pub(super) nbobjs: Option<usize>,
    pub(super) indexes: Vec<u64>,
    /// The values, 32 bits each as the model keeps them: a matrix over
    /// thousands of nodes is millions of values. A value wider than that is
    /// an error only if this matrix is the one used, so the first one is
    /// kept aside (`wide`: its position and value) and stored as 0.
    pub(super) values: Vec<u32>,
    pub(super) wide: Option<(usize, u64)>,
    pub(super) pos: usize,
}

#[derive(Debug, Default)]
pub(super) struct V1Distances {
    pub(super) depth: usize,
    /// Given in the root object, where hwloc 2 reads v1 matrices from (a
    /// nested one's `relative_depth` counts from the object holding it).
    pub(super) at_root: bool,
    /// The `nbobjs` attribute: at most its square of values are kept.
    pub(super) nbobjs: Option<usize>,
    pub(super) base: f64,
    pub(super) values: Vec<f64>,
    pub(super) pos: usize,
}

#[derive(Debug, Default)]
pub(super) struct RawKind {
    pub(super) cpuset: CpuMask,
    pub(super) efficiency: Option<u32>,
    pub(super) core_type: Option<String>,
    pub(super) capacity: Option<u32>,
}

/// A cpuset as read: its non-zero 64-bit words. Objects are many and mostly
/// small (a PU has one bit), so they keep this instead of a 2 KiB [`CpuMask`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Bits(pub(super) Vec<(u16, u64)>);

impl Bits {
    pub(super) fn first(&self) -> Option<usize> {
        self.0
            .iter()
            .map(|&(w, v)| w as usize * 64 + v.trailing_zeros() as usize)
            .min()
    }

    pub(super) fn to_mask(&self) -> CpuMask {
        let mut m = CpuMask::new();
        for &(w, v) in &self.0 {
            set_bits(&mut m, w, v);
        }
        m
    }

    /// The set of these bits that `within` also has, kept as the words they
    /// use (a cache of a few CPUs is a word or two, not a 2 KiB mask, nor a
    /// run spanning the machine when its CPUs are half the machine apart).
    pub(super) fn to_compact_within(&self, within: &CpuMask) -> CompactMask {
        // parse_bitmap adds words from the least significant, once each.
        let entries: Vec<(usize, u64)> = self
            .0
            .iter()
            .map(|&(w, v)| (w as usize, v & within.words()[w as usize]))
            .collect();
        CompactMask::from_entries(&entries)
    }
}

/// Sets in `m` the bits of `v`, word `w` of a bitmap.
fn set_bits(m: &mut CpuMask, w: u16, mut v: u64) {
    while v != 0 {
        m.set(w as usize * 64 + v.trailing_zeros() as usize);
        v &= v - 1;
    }
}

/// Parses an hwloc bitmap: comma-separated 32-bit hex groups, most significant
/// first, each with `0x`; a leading `0xf...f` means all higher bits are set
/// (only roots' complete sets use it; the infinite part is ignored). hwloc
/// writes zero groups as nothing (`0x00000001,,0x0`).
///
/// A high CPU's cpuset is one group followed by hundreds of empty ones, so
/// most of a large file's bytes are runs of commas: the groups are read from
/// the least significant (last) one, and a run of commas is skipped eight
/// bytes at a time rather than split into empty strings one by one.
pub(super) fn parse_bitmap(text: &str) -> Result<Bits, String> {
    let mut words: Vec<(u16, u64)> = Vec::new();
    let bytes = text.as_bytes();
    // `end` is one past the current group, `index` its number from the last.
    let mut end = bytes.len();
    let mut index = 0usize;
    loop {
        let start = bytes[..end]
            .iter()
            .rposition(|&b| b == b',')
            .map_or(0, |p| p + 1);
        let g = text[start..end].trim();
        if !g.is_empty() {
            bitmap_group(text, g, start, index, &mut words)?;
        }
        if start == 0 {
            break;
        }
        // The comma before this group ends the previous one; each further
        // comma right before it ends an empty group.
        let separator = start - 1;
        let run = comma_run_before(&bytes[..separator]);
        end = separator - run;
        index += 1 + run;
    }
    Ok(Bits(words))
}

/// How many commas end `bytes`, counted eight at a time where it can.
fn comma_run_before(bytes: &[u8]) -> usize {
    const COMMAS: u64 = u64::from_ne_bytes([b','; 8]);
    let mut end = bytes.len();
    while end >= 8 {
        let chunk: [u8; 8] = bytes[end - 8..end].try_into().expect("eight bytes");
        if u64::from_ne_bytes(chunk) != COMMAS {
            break;
        }
        end -= 8;
    }
    while end > 0 && bytes[end - 1] == b',' {
        end -= 1;
    }
    bytes.len() - end
}

/// One non-empty group `g` (the `index`-th from the last, starting at byte
/// `start` of `text`) added to `words`.
fn bitmap_group(
    text: &str,
    g: &str,
    start: usize,
    index: usize,
    words: &mut Vec<(u16, u64)>,
) -> Result<(), String> {
    let hex = g.strip_prefix("0x").unwrap_or(g);
    if hex == "f...f" {
        if text[..start].trim().is_empty() {
            return Ok(());
        }
        return Err(format!(
            "bitmap '{}': 0xf...f must come first",
            excerpt(text)
        ));
    }
    let v = u32::from_str_radix(hex, 16)
        .map_err(|_| format!("bitmap '{}': invalid group '{}'", excerpt(text), excerpt(g)))?;
    if v == 0 {
        return Ok(());
    }
    let top = index * 32 + 31 - v.leading_zeros() as usize;
    if top >= MAX_CPUS {
        return Err(format!(
            "bitmap '{}' has CPU {top}, beyond the supported maximum of {MAX_CPUS} CPUs",
            excerpt(text)
        ));
    }
    let word = (index / 2) as u16;
    let value = (v as u64) << (32 * (index % 2));
    match words.last_mut() {
        Some((w, x)) if *w == word => *x |= value,
        _ => words.push((word, value)),
    }
    Ok(())
}

/// An element's attributes: name and value (unescaped only when it has an
/// entity, which hwloc writes rarely: borrowing keeps reading allocation-light).
pub(super) type Attrs<'a> = Vec<(&'a str, Cow<'a, str>)>;

pub(super) fn attrs_of<'a>(e: &'a BytesStart<'a>) -> Result<Attrs<'a>, String> {
    match plain_attrs(e.attributes_raw()) {
        Some(attrs) => Ok(attrs),
        None => iterated_attrs(e),
    }
}

/// Any element's attributes, through quick-xml's iterator.
fn iterated_attrs<'a>(e: &'a BytesStart<'a>) -> Result<Attrs<'a>, String> {
    let mut out = Vec::with_capacity(16);
    let mut iter = e.attributes();
    iter.with_checks(false);
    for a in iter {
        let a = a.map_err(|err| format!("malformed attribute: {err}"))?;
        let v = if a.value.contains('&') {
            Cow::Owned(
                a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                    .map_err(|err| format!("attribute {}=\"{}\": {err}", a.key.0, a.value))?
                    .into_owned(),
            )
        } else {
            a.value
        };
        out.push((a.key.0, v));
    }
    Ok(out)
}

/// The attributes of an element written as hwloc writes them: `name="value"`
/// (or single quotes) apart by whitespace, with plain names and no entity in
/// any value; None for anything else, which quick-xml's iterator then reads
/// and reports. Hand-written because that iterator looks for a value's
/// closing quote one byte at a time, and the values (cpusets hundreds of
/// bytes long on large machines) are most of a large file: here the quote
/// is found by `memchr`'s vectorised search.
fn plain_attrs(raw: &str) -> Option<Attrs<'_>> {
    let plain_name = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b':' | b'.');
    let mut out = Vec::with_capacity(16);
    let mut rest = raw;
    loop {
        rest = rest.trim_start_matches([' ', '\t', '\r', '\n']);
        if rest.is_empty() {
            return Some(out);
        }
        let eq = rest.find('=')?;
        let name = &rest[..eq];
        if name.is_empty() || !name.bytes().all(plain_name) {
            return None;
        }
        let quoted = &rest[eq + 1..];
        let quote = *quoted
            .as_bytes()
            .first()
            .filter(|&&q| q == b'"' || q == b'\'')?;
        let body = &quoted[1..];
        // The closing quote, unless an entity comes first.
        let end = memchr::memchr2(quote, b'&', body.as_bytes())?;
        if body.as_bytes()[end] != quote {
            return None;
        }
        out.push((name, Cow::Borrowed(&body[..end])));
        rest = &body[end + 1..];
    }
}

pub(super) fn get<'a>(attrs: &'a [(&str, Cow<'_, str>)], key: &str) -> Option<&'a str> {
    attrs
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v.as_ref())
}

pub(super) fn num<T: std::str::FromStr>(
    attrs: &[(&str, Cow<'_, str>)],
    key: &str,
) -> Result<Option<T>, String> {
    match get(attrs, key) {
        None => Ok(None),
        Some(v) => v
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| format!("attribute {key}=\"{v}\" is not a valid number")),
    }
}

/// A non-negative finite number (`inf`, `NaN`, `-1` and `1e999` are errors):
/// hwloc v1 writes latencies and their base as decimals.
pub(super) fn latency(attrs: &[(&str, Cow<'_, str>)], key: &str) -> Result<Option<f64>, String> {
    let v: Option<f64> = num(attrs, key)?;
    match v {
        Some(x) if !x.is_finite() || x < 0.0 => Err(format!(
            "attribute {key}=\"{}\" is not a finite non-negative number",
            get(attrs, key).unwrap_or_default()
        )),
        _ => Ok(v),
    }
}

/// Everything read from the file before mapping.
#[derive(Default)]
pub(super) struct Raw {
    pub(super) objects: Vec<RawObj>,
    pub(super) root_infos: Vec<(String, String)>,
    pub(super) package_models: Vec<String>,
    pub(super) distances: Vec<Distances>,
    pub(super) v1_distances: Vec<V1Distances>,
    pub(super) kinds: Vec<RawKind>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// hwloc's bitmap rule written the plain way, one group at a time from
    /// the last: the truth the comma-skipping parser must agree with.
    fn plain(text: &str) -> Result<Vec<usize>, String> {
        let groups: Vec<&str> = text.trim().split(',').collect();
        let mut cpus = Vec::new();
        for (index, g) in groups.iter().rev().enumerate() {
            let g = g.trim();
            if g.is_empty() {
                continue;
            }
            let hex = g.strip_prefix("0x").unwrap_or(g);
            if hex == "f...f" {
                if index + 1 != groups.len() {
                    return Err(format!(
                        "bitmap '{}': 0xf...f must come first",
                        excerpt(text)
                    ));
                }
                continue;
            }
            let v = u32::from_str_radix(hex, 16).map_err(|_| {
                format!("bitmap '{}': invalid group '{}'", excerpt(text), excerpt(g))
            })?;
            for bit in (0..32).filter(|b| v >> b & 1 == 1) {
                let cpu = index * 32 + bit;
                if cpu >= MAX_CPUS {
                    let top = index * 32 + 31 - v.leading_zeros() as usize;
                    return Err(format!(
                        "bitmap '{}' has CPU {top}, beyond the supported maximum of {MAX_CPUS} CPUs",
                        excerpt(text)
                    ));
                }
                cpus.push(cpu);
            }
        }
        cpus.sort_unstable();
        Ok(cpus)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn bitmap_matches_the_plain_rule(
            text in "( ?(0x[0-9a-f]{1,8}|0xf\\.\\.\\.f|[0-9a-fx. ]{0,3})? ?,{0,40}){0,8}"
        ) {
            let fast = parse_bitmap(&text).map(|b| b.to_mask().iter().collect::<Vec<_>>());
            prop_assert_eq!(fast, plain(&text));
        }
    }

    /// Elements with attributes hwloc writes and some it never does.
    fn element() -> impl Strategy<Value = String> {
        let value = "[a-z0-9 ,x<>&;#'.\"-]{0,12}";
        let attr = (
            "[ \t\n]{0,2}",
            "(cpuset|os_index|a:b|x y|_k|)",
            "[ =]{0,2}",
            "[\"']",
            value,
            "[\"']",
        )
            .prop_map(|(sp, k, eq, q1, v, q2)| format!("{sp}{k}{eq}{q1}{v}{q2}"));
        prop::collection::vec(attr, 0..5).prop_map(|a| format!("<e {}/>", a.concat()))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Where the quick split accepts an element, it finds exactly what
        /// quick-xml's attribute iterator finds.
        #[test]
        fn plain_attributes_match_quick_xml(text in element()) {
            let mut reader = quick_xml::Reader::from_str(&text);
            if let Ok(quick_xml::events::Event::Empty(e)) = reader.read_event() {
                if let Some(quick) = plain_attrs(e.attributes_raw()) {
                    prop_assert_eq!(Ok(quick), iterated_attrs(&e));
                }
            }
        }
    }

    #[test]
    fn hwloc_attributes_take_the_quick_split() {
        let raw = r#" type="PU" os_index='7' cpuset="0x00000080,,," "#;
        let attrs = plain_attrs(raw).expect("hwloc's form");
        assert_eq!(attrs.len(), 3);
        assert_eq!(get(&attrs, "cpuset"), Some("0x00000080,,,"));
        assert!(plain_attrs(r#" a = "1""#).is_none());
        assert!(plain_attrs(r#" a="&lt;""#).is_none());
        assert!(plain_attrs(r#" a="1"#).is_none());
    }

    #[test]
    fn long_comma_runs_place_the_group() {
        for cpu in [0, 31, 32, 63, 64, 1000, 8191, 16383] {
            let mut text = format!("0x{:08x}", 1u32 << (cpu % 32));
            text.push_str(&",".repeat(cpu / 32));
            let bits = parse_bitmap(&text).unwrap();
            assert_eq!(bits.to_mask().iter().collect::<Vec<_>>(), vec![cpu]);
        }
    }
}
