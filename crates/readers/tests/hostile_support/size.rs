//! Size: thousands of NUMA nodes read by every reader within the case's time
//! limit (the readers compared every pair of nodes; 4096 took minutes).

use super::*;

pub fn cases() -> Vec<(&'static str, Case)> {
    vec![("size_16384_nodes_every_reader", many_nodes)]
}

fn many_nodes() -> Result<(), String> {
    let n = 16384;
    let topo = readers::synthetic::parse(&format!("numa:{n} pu:1")).map_err(|e| e.to_string())?;
    let check = |t: &topology::Topology, what: &str| -> Result<(), String> {
        if t.known().weight() != n || t.node_of(n - 1).map(|x| x.id) != Some(n as u32 - 1) {
            return Err(format!("{what}: wrong reading of {n} nodes"));
        }
        Ok(())
    };
    check(&topo, "synthetic")?;
    let xml = readers::xml::write(&topo);
    check(
        &readers::xml::read(&xml, "gen.xml").map_err(|e| e.to_string())?,
        "xml",
    )?;
    let text = readers::lscpu::summary(&topo);
    check(
        &readers::lscpu::parse(&text, "gen.lscpu").map_err(|e| e.to_string())?,
        "lscpu",
    )?;
    // In memory when the machine has /dev/shm: the case is about the reader,
    // not about how fast a loaded disk creates 50,000 files.
    let dir = tempfile::tempdir_in("/dev/shm").unwrap_or_else(|_| temp_dir());
    let mut files = BTreeMap::new();
    let all = format!("0-{}\n", n - 1).into_bytes();
    for f in ["possible", "present", "online"] {
        files.insert(format!("sys/devices/system/cpu/{f}"), all.clone());
    }
    for c in 0..n {
        let topo = format!("sys/devices/system/cpu/cpu{c}/topology");
        files.insert(
            format!("{topo}/physical_package_id"),
            format!("{c}\n").into_bytes(),
        );
        files.insert(format!("{topo}/core_id"), b"0\n".to_vec());
        let node = format!("sys/devices/system/node/node{c}/cpulist");
        files.insert(node, format!("{c}\n").into_bytes());
    }
    write_tree(dir.path(), &files);
    check(
        &readers::sysfs::read_dir(dir.path()).map_err(|e| e.to_string())?,
        "sysfs",
    )
}
