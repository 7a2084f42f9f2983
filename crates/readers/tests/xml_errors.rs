//! Bad hwloc XML: one clear error naming the line, never a panic; hwloc v1
//! files, which lstopo still exports, are read too.

#[path = "xml_support/truth.rs"]
mod truth;

use readers::xml;
use truth::{assert_facts, expected, facts_of, parse_xml, run_lstopo};

const GOOD: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topology SYSTEM "hwloc2.dtd">
<topology version="2.0">
  <object type="Machine" os_index="0" cpuset="0x0000000f" complete_cpuset="0x0000000f" gp_index="1">
    <object type="Package" os_index="0" cpuset="0x0000000f" gp_index="2">
      <object type="NUMANode" os_index="0" cpuset="0x0000000f" gp_index="3" local_memory="1024"/>
      <object type="Core" os_index="0" cpuset="0x00000003" gp_index="4">
        <object type="PU" os_index="0" cpuset="0x00000001" gp_index="5"/>
        <object type="PU" os_index="1" cpuset="0x00000002" gp_index="6"/>
      </object>
      <object type="Core" os_index="1" cpuset="0x0000000c" gp_index="7">
        <object type="PU" os_index="2" cpuset="0x00000004" gp_index="8"/>
        <object type="PU" os_index="3" cpuset="0x00000008" gp_index="9"/>
      </object>
    </object>
  </object>
</topology>
"#;

fn err(text: &str) -> readers::Error {
    match xml::read(text, "input.xml") {
        Ok(_) => panic!("should be rejected:\n{text}"),
        Err(e) => e,
    }
}

#[test]
fn good_input_reads() {
    let t = xml::read(GOOD, "input.xml").unwrap();
    assert_eq!(t.cpus().len(), 4);
    assert_eq!(t.count(topology::LevelKind::Core), 2);
    assert_eq!(t.nodes()[0].memory_bytes, Some(1024));
}

#[test]
fn bad_inputs_name_the_line() {
    let cases: Vec<(String, Option<usize>, &str)> = vec![
        (GOOD.replace("      </object>\n      <object type=\"Core\" os_index=\"1\"", "      </objekt>\n      <object type=\"Core\" os_index=\"1\""), Some(10), "malformed XML"),
        (GOOD[..GOOD.find("        <object type=\"PU\" os_index=\"3\"").unwrap()].to_string(), None, "unexpected end of file"),
        (GOOD.replace("version=\"2.0\"", "version=\"4.0\""), Some(3), "unsupported hwloc XML version 4.0"),
        (GOOD.replace("os_index=\"3\" cpuset=\"0x00000008\"", &format!("os_index=\"3\" cpuset=\"0x00000001{}\"", ",0x0".repeat(512))), Some(13), "beyond the supported maximum of 16384"),
        (GOOD.replace("os_index=\"3\" cpuset=\"0x00000008\"", "os_index=\"20000\""), Some(13), "PU P#20000 is beyond"),
        (GOOD.replace("os_index=\"3\" cpuset=\"0x00000008\"", "os_index=\"2\""), Some(13), "PU P#2 is listed twice (first at line 12)"),
        (GOOD.replace("<object type=\"NUMANode\" os_index=\"0\" cpuset=\"0x0000000f\" gp_index=\"3\" local_memory=\"1024\"/>",
            "<object type=\"NUMANode\" os_index=\"0\" cpuset=\"0x00000007\" gp_index=\"3\"/><object type=\"NUMANode\" os_index=\"1\" cpuset=\"0x0000000e\" gp_index=\"30\"/>"),
            Some(6), "PU P#1 is in NUMA nodes P#0 and P#1"),
        (GOOD.replace("type=\"Core\" os_index=\"1\"", "type=\"Frob\" os_index=\"1\""), Some(11), "unknown object type 'Frob'"),
        (GOOD.replace("cpuset=\"0x00000004\"", "cpuset=\"0xzz\""), Some(12), "invalid group"),
        (GOOD.replace("os_index=\"2\" cpuset", "os_index=\"two\" cpuset"), Some(12), "os_index=\"two\" is not a valid number"),
        ("<root/>".to_string(), Some(1), "expected <topology>"),
        ("".to_string(), None, "no <topology> element"),
        ("<topology version=\"2.0\"></topology>".to_string(), None, "no PU objects"),
    ];
    for (text, line, want) in cases {
        let e = err(&text);
        assert_eq!(e.source, "input.xml");
        assert!(
            e.message.contains(want),
            "error {e} does not mention {want:?}"
        );
        if line.is_some() {
            assert_eq!(e.line, line, "{e}");
        }
    }
}

/// hwloc v1 XML (`Socket`, `Cache`, NUMA nodes as tree levels, v1 distances),
/// produced by lstopo's v1 export of a corpus topology, reads like the v2 file.
#[test]
fn hwloc_v1_export_reads_like_v2() {
    let what = "1 corpus XML exported as hwloc v1 by lstopo";
    if !truth::have_corpus(what) || !truth::have_lstopo(what) {
        return;
    }
    let src = truth::corpus().join("hwloc/tests/hwloc/xml/16amd64-4distances.xml");
    let topo = xml::read(&std::fs::read_to_string(&src).unwrap(), "v3").unwrap();
    let dir = std::env::temp_dir().join(format!("manycore-v1-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let v2 = dir.join("v2.xml");
    std::fs::write(&v2, xml::write(&topo)).unwrap();
    let v1 = run_lstopo(
        v2.to_str().unwrap(),
        &["--of", "xml", "--export-xml-flags", "1"],
    );
    assert!(
        v1.contains("<topology>") && v1.contains("type=\"Socket\""),
        "not a v1 export"
    );
    let from_v1 = xml::read(&v1, "v1.xml").unwrap();
    let want = expected(&parse_xml(&run_lstopo(
        v2.to_str().unwrap(),
        &["--of", "xml"],
    )));
    assert_facts("v1 export", &facts_of(&from_v1, &want), &want);
    assert!(want.distances.is_some());
    let _ = std::fs::remove_dir_all(&dir);
}

/// hwloc 1.x's assembled topology of several machines (hwloc-assembler; a
/// minimal excerpt of the shape of hwloc's former tests/xml/8em64t-2mi2ma2c.xml:
/// a System root, Machines each numbering their PUs from 0) is one error
/// naming the second Machine's line and what to do, not a clash of PU
/// numbers. hwloc 2.9 refuses the file too.
#[test]
fn several_machines_under_a_system_are_one_error() {
    let machine = |i: u32| {
        format!(
            "    <object type=\"Machine\" os_index=\"{i}\">\n      \
             <object type=\"PU\" os_index=\"0\" cpuset=\"0x00000001\"/>\n    </object>\n"
        )
    };
    let text = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM \"hwloc.dtd\">\n\
         <topology>\n  <object type=\"System\" os_index=\"0\">\n{}{}  </object>\n</topology>\n",
        machine(0),
        machine(1)
    );
    let e = readers::xml::read(&text, "two.xml")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("two.xml:8:"), "{e}");
    assert!(e.contains("several machines"), "{e}");
    assert!(e.contains("export each machine"), "{e}");
}
