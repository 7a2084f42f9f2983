//! hwloc XML: nesting and distance matrices sized to exhaust time or memory
//! if the reader trusted them.

use super::*;

pub fn cases() -> Vec<(&'static str, Case)> {
    vec![
        ("xml_group_chain_200000_deep", group_chain),
        ("xml_values_beyond_nbobjs", values_beyond_nbobjs),
        ("xml_node_id_beyond_limit", node_id_beyond_limit),
    ]
}

/// One PU in a machine; `inner` is put around it inside the machine.
fn machine(inner_open: &str, inner_close: &str, after: &str) -> String {
    format!(
        "<topology version=\"2.0\">\n<object type=\"Machine\" cpuset=\"0x1\" complete_cpuset=\"0x1\">\n\
         <object type=\"NUMANode\" os_index=\"0\" cpuset=\"0x1\"/>\n<object type=\"NUMANode\" os_index=\"1\" cpuset=\"0x0\"/>\n\
         {inner_open}<object type=\"PU\" os_index=\"0\" cpuset=\"0x1\"/>\n{inner_close}</object>\n{after}</topology>\n"
    )
}

/// 200,000 nested groups around the one PU: refused on the element past the
/// depth limit, before the chain is kept or walked.
fn group_chain() -> Result<(), String> {
    let depth = 200_000;
    let open = "<object type=\"Group\" cpuset=\"0x1\">\n".repeat(depth);
    let close = "</object>\n".repeat(depth);
    let text = machine(&open, &close, "");
    let limit = readers::limits::XML_DEPTH_LIMIT;
    let r = readers::xml::read(&text, "chain.xml");
    expect_error(
        r.clone(),
        "chain.xml",
        &[&format!("nested more than {limit} deep")],
    )?;
    // topology, machine, then groups: the first one too deep is on line
    // limit + 1 (line 1 is <topology>, 2 the machine, 3-4 the nodes).
    match r.err().and_then(|e| e.line) {
        Some(l) if l == limit + 3 => Ok(()),
        other => Err(format!("error on line {other:?}, not {}", limit + 3)),
    }
}

/// A 2-node matrix whose values go on for 100 million numbers (200 MB of
/// text): refused at the fifth value instead of keeping 800 MB of them.
fn values_beyond_nbobjs() -> Result<(), String> {
    let n = 100_000_000;
    let frame = machine("", "", "@");
    let (head, tail) = frame.split_once('@').expect("placeholder");
    // Built in place: the case's memory is the text, not copies of it.
    let mut text = String::with_capacity(frame.len() + 2 * n + 512);
    text.push_str(head);
    text.push_str(
        "<distances2 type=\"NUMANode\" nbobjs=\"2\" kind=\"5\" name=\"NUMALatency\" indexing=\"os\">\n\
         <indexes length=\"3\">0 1</indexes>\n<u64values>",
    );
    for _ in 0..n {
        text.push_str("1 ");
    }
    text.push_str("</u64values>\n</distances2>\n");
    text.push_str(tail);
    expect_error(
        readers::xml::read(&text, "values.xml"),
        "values.xml",
        &["nbobjs=\"2\" but lists more than 4 values"],
    )
}

/// A node numbered past the model's node limit: one error naming it, not a
/// node that XML nodesets cannot hold.
fn node_id_beyond_limit() -> Result<(), String> {
    let max = topology::MAX_NODES;
    let text = machine("", "", "").replace("os_index=\"1\"", &format!("os_index=\"{max}\""));
    expect_error(
        readers::xml::read(&text, "node.xml"),
        "node.xml",
        &[&format!(
            "NUMA node P#{max} is beyond the supported maximum of {max} nodes"
        )],
    )
}
