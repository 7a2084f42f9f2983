//! hwloc XML the way the XML standard and hwloc's importer define it, on
//! documents generated here: where each element may stand, what character
//! references, entities and CDATA mean, which numbers an attribute may hold,
//! and how node ids are bounded. Every bad document is one error naming the
//! file and the offending line; every good variant reads exactly like the
//! plain document it is equivalent to under the XML 1.0 rules.

use readers::xml;
use topology::{Arch, CpuSpec, Topology, TopologyBuilder};

/// Two NUMA nodes of two PUs each, with a latency matrix: the plain
/// document the cases below vary. `matrix` is the `<distances2>` element.
fn doc(matrix: &str) -> String {
    let mut s = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<topology version=\"2.0\">\n\
         <object type=\"Machine\" os_index=\"0\" cpuset=\"0x0000000f\" complete_cpuset=\"0x0000000f\" gp_index=\"1\">\n",
    );
    for n in 0..2 {
        let cs = 3u32 << (2 * n);
        s += &format!(
            "<object type=\"Package\" os_index=\"{n}\" cpuset=\"0x{cs:08x}\" gp_index=\"{}\">\n",
            10 + n
        );
        s += &format!("<object type=\"NUMANode\" os_index=\"{n}\" cpuset=\"0x{cs:08x}\" gp_index=\"{}\" local_memory=\"1024\"/>\n", 20 + n);
        s += &format!("<object type=\"L2Cache\" cpuset=\"0x{cs:08x}\" gp_index=\"{}\" cache_size=\"1048576\" depth=\"2\" cache_linesize=\"64\" cache_associativity=\"16\" cache_type=\"0\">\n", 30 + n);
        for p in 0..2 {
            let id = 2 * n + p;
            s += &format!(
                "<object type=\"Core\" os_index=\"{id}\" cpuset=\"0x{:08x}\" gp_index=\"{}\">\n",
                1u32 << id,
                40 + id
            );
            s += &format!("<object type=\"PU\" os_index=\"{id}\" cpuset=\"0x{:08x}\" gp_index=\"{}\"/>\n</object>\n", 1u32 << id, 50 + id);
        }
        s += "</object>\n</object>\n";
    }
    s += "</object>\n";
    s += matrix;
    s += "</topology>\n";
    s
}

const MATRIX: &str = "<distances2 type=\"NUMANode\" nbobjs=\"2\" kind=\"5\" name=\"NUMALatency\" indexing=\"os\">\n\
<indexes length=\"3\">0 1</indexes>\n<u64values length=\"11\">10 21 21 10</u64values>\n</distances2>\n";

fn read(text: &str) -> Result<Topology, readers::Error> {
    xml::read(text, "gen.xml")
}

/// The 1-based line of the first line of `text` containing `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle:?} is not in the document"))
        + 1
}

/// `text` is refused with an error naming gen.xml, the line holding
/// `at_line`, and every word of `words`.
fn refused(text: &str, at_line: &str, words: &[&str]) {
    let e = match read(text) {
        Ok(_) => panic!("accepted; wanted an error saying {words:?}:\n{text}"),
        Err(e) => e,
    };
    assert_eq!(e.source, "gen.xml", "{e}");
    assert_eq!(e.line, Some(line_of(text, at_line)), "{e}");
    for w in words {
        assert!(e.message.contains(w), "{e} does not say {w:?}");
    }
}

#[test]
fn the_plain_document_reads() {
    let t = read(&doc(MATRIX)).unwrap();
    assert_eq!(t.cpus().len(), 4);
    assert_eq!(t.nodes().len(), 2);
    assert_eq!(t.distances(), &[10, 21, 21, 10]);
    assert_eq!(t.caches().len(), 2);
}

/// hwloc writes 0 for what it does not know of a cache: the size when Linux
/// gave no `size` file (arm64 firmware without cache sizes), the line size,
/// the associativity. Each reads as unknown, never as a cache of 0 bytes,
/// and our own XML of such a machine reads back the same.
#[test]
fn zero_cache_attributes_are_unknown() {
    let known =
        "cache_size=\"1048576\" depth=\"2\" cache_linesize=\"64\" cache_associativity=\"16\"";
    let unknown = "cache_size=\"0\" depth=\"2\" cache_linesize=\"0\" cache_associativity=\"0\"";
    let text = doc(MATRIX).replace(known, unknown);
    assert!(text.contains(unknown));
    let t = read(&text).unwrap();
    assert_eq!(t.caches().len(), 2);
    for c in t.caches() {
        assert_eq!((c.size_bytes, c.line_bytes, c.ways), (None, None, None));
    }
    let again = read(&xml::write(&t)).unwrap();
    let sizes: Vec<Option<u64>> = again.caches().iter().map(|c| c.size_bytes).collect();
    assert_eq!(sizes, [None, None]);
}

/// hwloc reads `<distances2>` and `<cpukind>` only as children of
/// `<topology>` after its one root object, `<indexes>`/`<u64values>` only in
/// a distance matrix: anywhere else is an error, not a panic or a silently
/// lost matrix.
#[test]
fn misplaced_elements_are_errors_naming_their_line() {
    let plain = doc(MATRIX);
    // A matrix inside an object.
    let inside = plain.replace(
        "</object>\n<distances2",
        &format!("{MATRIX}</object>\n<distances2"),
    );
    refused(
        &inside,
        "<distances2",
        &["<distances2> inside <object>", "<topology>"],
    );
    // An empty matrix inside the values of another: the values after it
    // would have no matrix to go to.
    let nested = plain.replace(
        "<u64values length=\"11\">10 21",
        "<u64values length=\"11\"><distances2 type=\"NUMANode\" nbobjs=\"2\"/>10 21",
    );
    refused(
        &nested,
        "<u64values length=\"11\"><distances2",
        &["<distances2> inside <u64values>"],
    );
    // Values outside any matrix.
    let loose = plain.replace(
        "<object type=\"PU\" os_index=\"0\"",
        "<u64values>10</u64values><object type=\"PU\" os_index=\"0\"",
    );
    refused(&loose, "<u64values>10", &["<u64values> inside <object>"]);
    // A matrix before the objects it names.
    let early = plain.replace(
        "<object type=\"Machine\"",
        &format!("{MATRIX}<object type=\"Machine\""),
    );
    refused(
        &early,
        "<distances2",
        &["<distances2> before the root <object>"],
    );
    // Two root objects.
    let two = plain.replace(
        "</object>\n<distances2",
        "</object>\n<object type=\"Machine\" cpuset=\"0x1\"/>\n<distances2",
    );
    refused(
        &two,
        "<object type=\"Machine\" cpuset=\"0x1\"/>",
        &["a second root <object>"],
    );
    // A CPU kind inside an object.
    let kind = plain.replace(
        "<object type=\"PU\" os_index=\"3\"",
        "<cpukind cpuset=\"0x8\"/><object type=\"PU\" os_index=\"3\"",
    );
    refused(&kind, "<cpukind", &["<cpukind> inside <object>"]);
}

/// Nesting is bounded: a chain of groups deeper than any machine is refused
/// on the element that crosses the bound.
#[test]
fn nesting_deeper_than_the_limit_is_refused() {
    let limit = readers::limits::XML_DEPTH_LIMIT;
    let chain = |depth: usize| {
        let open: String = (0..depth)
            .map(|i| {
                format!(
                    "<object type=\"Group\" cpuset=\"0x0000000f\" gp_index=\"{}\">\n",
                    1000 + i
                )
            })
            .collect();
        let close = "</object>\n".repeat(depth);
        doc(MATRIX).replace(
            "<object type=\"Package\" os_index=\"0\"",
            &format!("{open}{close}<object type=\"Package\" os_index=\"0\""),
        )
    };
    // topology + machine + groups: within the limit reads.
    assert!(read(&chain(limit - 3)).is_ok());
    let deep = chain(limit);
    let e = read(&deep).unwrap_err();
    assert_eq!(e.line, Some(line_of(&deep, "gp_index=\"2022\"")), "{e}");
    assert!(
        e.message
            .contains(&format!("nested more than {limit} deep")),
        "{e}"
    );
}

/// Character references, the predefined entities and CDATA are character
/// data as XML 1.0 defines it, also when they split a number: each variant
/// reads exactly like the plain document.
#[test]
fn references_and_cdata_read_as_xml_defines_them() {
    let plain = read(&doc(MATRIX)).unwrap();
    let variants = [
        // A digit as a decimal and a hex reference.
        MATRIX.replace(">10 21 21 10<", ">1&#48; 2&#x31; 21 10<"),
        // A space as a reference separates two numbers.
        MATRIX.replace(">10 21 21 10<", ">10&#32;21 21&#x20;10<"),
        // CDATA, alone and splitting a number.
        MATRIX.replace(">10 21 21 10<", "><![CDATA[10 21]]> 2<![CDATA[1 1]]>0<"),
        // Indexes in CDATA with newlines and tabs around them.
        MATRIX.replace(">0 1<", ">\n\t<![CDATA[0]]>\t1\n<"),
    ];
    for m in &variants {
        let text = doc(m);
        let t = read(&text).unwrap_or_else(|e| panic!("{e}\n{m}"));
        assert_eq!(t.distances(), plain.distances(), "{m}");
        assert_eq!(t.nodes(), plain.nodes(), "{m}");
    }
    // References in attributes.
    let text = doc(MATRIX).replace(
        "os_index=\"3\" cpuset=\"0x00000008\" gp_index=\"53\"",
        "os_index=\"&#51;\" cpuset=\"&#x30;x00000008\" gp_index=\"53\"",
    );
    assert_ne!(text, doc(MATRIX));
    let t = read(&text).unwrap();
    assert_eq!(t.cpus(), plain.cpus());
}

/// Entities other than XML's five are not expanded (hwloc writes none; an
/// internal DTD's entities are how an XML bomb works): using one is an
/// error naming it, and a bad character reference is one too.
#[test]
fn undeclared_and_dtd_entities_are_errors() {
    let bomb = "<!DOCTYPE topology [\n<!ENTITY a \"1010101010\">\n<!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;\">\n]>\n";
    let with_dtd = doc(&MATRIX.replace(">10 21 21 10<", ">&b; 21 21 10<")).replacen(
        "<topology",
        &format!("{bomb}<topology"),
        1,
    );
    refused(&with_dtd, "&b;", &["&b;", "predefined"]);
    let in_attr = doc(MATRIX).replace("gp_index=\"53\"", "gp_index=\"&b;\"");
    refused(&in_attr, "gp_index=\"&b;\"", &["gp_index", "b"]);
    let bad_ref = doc(&MATRIX.replace(">10 21 21 10<", ">&#0; 21 21 10<"));
    refused(&bad_ref, "&#0;", &["&#0;"]);
    // `&amp;` is a character, and not a digit.
    let amp = doc(&MATRIX.replace(">10 21 21 10<", ">1&amp;0 21 21 10<"));
    refused(&amp, "&amp;", &["'1&0' is not a number"]);
}

/// Attribute numbers: negative, infinite, not-a-number, out-of-range values
/// are errors naming the attribute and line, never a wrapped or saturated
/// number.
#[test]
fn bad_numbers_in_attributes_are_errors() {
    let plain = doc(MATRIX);
    let pu3 = "os_index=\"3\" cpuset=\"0x00000008\"";
    for (from, to, words) in [
        (
            pu3,
            "os_index=\"-1\" cpuset=\"0x00000008\"",
            vec!["os_index=\"-1\""],
        ),
        (
            pu3,
            "os_index=\"4294967296\" cpuset=\"0x00000008\"",
            vec!["os_index=\"4294967296\""],
        ),
        (
            pu3,
            "os_index=\"3e0\" cpuset=\"0x00000008\"",
            vec!["os_index=\"3e0\""],
        ),
        (
            "cache_associativity=\"16\"",
            "cache_associativity=\"-5\"",
            vec!["cache_associativity=\"-5\""],
        ),
        (
            "cache_associativity=\"16\"",
            "cache_associativity=\"99999999999\"",
            vec!["cache_associativity=\"99999999999\""],
        ),
        (
            "cache_size=\"1048576\"",
            "cache_size=\"NaN\"",
            vec!["cache_size=\"NaN\""],
        ),
        (
            "local_memory=\"1024\"",
            "local_memory=\"-1024\"",
            vec!["local_memory=\"-1024\""],
        ),
    ] {
        let text = plain.replacen(from, to, 1);
        assert_ne!(text, plain, "{from} not found");
        refused(&text, to, &words);
    }
    for (from, to, line, words) in [
        (
            ">10 21 21 10<",
            ">10 -21 21 10<",
            "<u64values",
            vec!["'-21' is not a number"],
        ),
        (
            ">10 21 21 10<",
            ">10 inf 21 10<",
            "<u64values",
            vec!["'inf' is not a number"],
        ),
        (
            ">10 21 21 10<",
            ">10 123456789012345678901234567890 21 10<",
            "<u64values",
            vec!["is not a number"],
        ),
        (
            ">10 21 21 10<",
            ">10 1099511627776 21 10<",
            "<distances2",
            vec!["1099511627776 does not fit 32 bits"],
        ),
        (
            "nbobjs=\"2\"",
            "nbobjs=\"4294967296\"",
            "<distances2",
            vec!["covers 4294967296 NUMA nodes but the topology has 2"],
        ),
        (
            "nbobjs=\"2\"",
            "nbobjs=\"-2\"",
            "<distances2",
            vec!["nbobjs=\"-2\""],
        ),
    ] {
        let text = doc(&MATRIX.replace(from, to));
        refused(&text, line, &words);
    }
}

/// hwloc v1 latencies are decimals: infinite, not-a-number and negative
/// ones are errors naming the line. The v1 document has the NUMA nodes as a
/// level of the tree, as hwloc 1.x wrote them, and the matrix in the root.
#[test]
fn bad_v1_latencies_are_errors() {
    let v1 = |base: &str, value: &str| {
        let mut s = String::from("<topology>\n<object type=\"Machine\" os_index=\"0\" cpuset=\"0x0000000f\" complete_cpuset=\"0x0000000f\">\n");
        for n in 0..2 {
            let cs = 3u32 << (2 * n);
            s += &format!("<object type=\"NUMANode\" os_index=\"{n}\" cpuset=\"0x{cs:08x}\" local_memory=\"1024\">\n");
            s += &format!("<object type=\"Socket\" os_index=\"{n}\" cpuset=\"0x{cs:08x}\">\n");
            for p in 0..2 {
                let id = 2 * n + p;
                s += &format!(
                    "<object type=\"PU\" os_index=\"{id}\" cpuset=\"0x{:08x}\"/>\n",
                    1u32 << id
                );
            }
            s += "</object>\n</object>\n";
        }
        s += &format!(
            "<distances nbobjs=\"2\" relative_depth=\"1\" latency_base=\"{base}\">\n\
             <latency value=\"1\"/>\n<latency value=\"{value}\"/>\n<latency value=\"2.1\"/>\n<latency value=\"1\"/>\n\
             </distances>\n</object>\n</topology>\n"
        );
        s
    };
    let good = read(&v1("10", "2.1")).unwrap();
    assert_eq!(good.distances(), &[10, 21, 21, 10]);
    for bad in ["inf", "NaN", "-2.1", "1e999", "-inf"] {
        refused(
            &v1("10", bad),
            &format!("value=\"{bad}\""),
            &[&format!("value=\"{bad}\""), "finite non-negative"],
        );
        refused(
            &v1(bad, "2.1"),
            "latency_base",
            &[&format!("latency_base=\"{bad}\""), "finite non-negative"],
        );
    }
    refused(
        &v1("1e10", "2.1"),
        "latency_base",
        &["does not fit 32 bits"],
    );
    // More latencies than nbobjs² are refused as they come.
    let extra = v1("10", "2.1").replace("</distances>", "<latency value=\"1.5\"/>\n</distances>");
    refused(&extra, "value=\"1.5\"", &["more than 4 latencies"]);
}

/// NUMA node ids: each once (also when one has no `os_index` and takes its
/// position), and below the model's node limit; beyond it the file is
/// refused on the node's line instead of the id being dropped from nodesets.
#[test]
fn node_ids_are_unique_and_bounded() {
    let plain = doc(MATRIX);
    let no_index = plain.replacen(
        "<object type=\"NUMANode\" os_index=\"0\"",
        "<object type=\"NUMANode\"",
        1,
    );
    // The first node without os_index takes id 0: still a good file.
    assert!(read(&no_index).is_ok());
    let clash = no_index.replacen(
        "<object type=\"NUMANode\" os_index=\"1\"",
        "<object type=\"NUMANode\" os_index=\"0\"",
        1,
    );
    refused(
        &clash,
        "<object type=\"NUMANode\" os_index=\"0\"",
        &["NUMA node P#0 is listed twice (first at line 5)"],
    );
    let max = topology::MAX_NODES;
    let big = plain
        .replacen(
            "<object type=\"NUMANode\" os_index=\"1\"",
            &format!("<object type=\"NUMANode\" os_index=\"{max}\""),
            1,
        )
        .replace(">0 1</indexes>", &format!(">0 {max}</indexes>"));
    refused(
        &big,
        &format!("os_index=\"{max}\""),
        &[&format!(
            "NUMA node P#{max} is beyond the supported maximum of {max} nodes"
        )],
    );
    let below = big.replace(&max.to_string(), &(max - 1).to_string());
    let t = read(&below).unwrap();
    assert_eq!(t.nodes()[1].id as usize, max - 1);
    // The node's id survives writing: it is in the nodesets hwloc reads.
    let back = read(&xml::write(&t)).unwrap();
    assert_eq!(back.nodes(), t.nodes());
    assert_eq!(back.distances(), t.distances());
}

/// Errors echo input: control characters in it (a terminal escape in an
/// object type, a newline in a file name) are shown escaped, never sent raw
/// to the terminal.
#[test]
fn control_characters_in_echoed_input_are_escaped() {
    let text = doc(MATRIX).replace(
        "type=\"Core\" os_index=\"1\"",
        "type=\"Co\u{1b}[2Jre\" os_index=\"1\"",
    );
    let e = xml::read(&text, "odd\nname\u{202e}.xml").unwrap_err();
    let shown = e.to_string();
    assert!(
        !shown.chars().any(|c| c.is_control() || c == '\u{202e}'),
        "{shown:?}"
    );
    assert!(shown.contains("Co\\u{1b}[2Jre"), "{shown}");
    assert!(shown.starts_with("odd\\nname\\u{202e}.xml:"), "{shown}");
}

/// Names are written as hwloc exports them (`HWLOC_XML_CHAR_VALID` in
/// hwloc's topology-xml.c keeps printable ASCII, tab, newline and carriage
/// return, and drops every other byte): a model name holding a terminal
/// escape, DEL, a non-ASCII letter and markup characters is written without
/// the dropped ones, reads back as hwloc would read its own export, and
/// lstopo accepts the document and shows the same name.
#[test]
fn names_are_written_as_hwloc_writes_them() {
    let base = read(&doc(MATRIX)).unwrap();
    let mut b = topology::TopologyBuilder::from_topology(&base);
    b.model_name("Xeon\u{1b}[31m <&>\"'\tGold\u{7f}\u{e9}\u{202e}\n\rv2");
    let t = b.finish().unwrap();
    // What hwloc's rule keeps, byte by byte.
    let expected = "Xeon[31m <&>\"'\tGold\n\rv2";
    let text = xml::write(&t);
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "raw control characters written:\n{text}"
    );
    assert!(text.is_ascii(), "non-ASCII written:\n{text}");
    let back = read(&text).unwrap();
    assert_eq!(back.model_name(), Some(expected));

    // lstopo reads it back and prints the same name.
    let again = through_lstopo(&text);
    assert_eq!(again.model_name(), Some(expected));
}

/// A model without NUMA nodes (a sysfs dump without `node*` directories
/// reads so) is written with one node of every CPU: lstopo refuses a root
/// whose nodeset is empty, and gives such a machine one node itself.
#[test]
fn a_model_without_nodes_is_written_with_one_node() {
    let mut b = TopologyBuilder::new(Arch::X86_64);
    for id in 0..4 {
        b.add_cpu(CpuSpec {
            id,
            online: true,
            package: id / 2,
            core: id % 2,
            ..CpuSpec::default()
        });
    }
    let t = b.finish().unwrap();
    assert!(t.nodes().is_empty());
    let again = through_lstopo(&xml::write(&t));
    assert_eq!(again.nodes().len(), 1);
    assert_eq!(
        again.nodes()[0].cpus.iter().collect::<Vec<_>>(),
        [0, 1, 2, 3]
    );
    assert_eq!(again.cpus().len(), 4);
    assert!(again.cpus().iter().all(|c| c.online && c.node == Some(0)));
}

/// `text` read by lstopo and exported again as XML, read back here.
fn through_lstopo(text: &str) -> Topology {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.xml");
    std::fs::write(&path, text).unwrap();
    let out = std::process::Command::new("lstopo-no-graphics")
        .arg("--input")
        .arg(&path)
        .args(["--of", "xml"])
        .output()
        .expect("lstopo-no-graphics (hwloc-nox, scripts/install-deps.sh)");
    assert!(
        out.status.success(),
        "lstopo refused our XML: {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    read(&String::from_utf8(out.stdout).unwrap()).unwrap()
}

/// A CPU model ending in a carriage return or padding spaces (x86 brand
/// strings are space-padded to 48 bytes) is an info value like any other:
/// hwloc keeps it byte for byte, so the reader does too. lstopo reading
/// our export of it is the truth for what it holds.
#[test]
fn model_names_keep_a_trailing_carriage_return_and_spaces() {
    for (attr, name) in [
        ("Gold 6230&#13;", "Gold 6230\r"),
        (
            "AMD EPYC 7451 24-Core Processor    ",
            "AMD EPYC 7451 24-Core Processor    ",
        ),
        (" lead&#13;&#10;", " lead\r\n"),
    ] {
        let text = doc(MATRIX).replacen(
            "gp_index=\"10\">\n",
            &format!("gp_index=\"10\">\n<info name=\"CPUModel\" value=\"{attr}\"/>\n"),
            1,
        );
        let t = read(&text).unwrap();
        assert_eq!(t.model_name(), Some(name), "{attr:?}");

        // lstopo reads our export of it (the generated document has no
        // nodesets, which lstopo requires) and keeps the same bytes.
        let again = through_lstopo(&xml::write(&t));
        assert_eq!(
            again.model_name(),
            Some(name),
            "lstopo's export of {attr:?}"
        );
    }
}
