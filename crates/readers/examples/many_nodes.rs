//! Reads machines with many NUMA nodes (one CPU each) from every reader and
//! prints the time each takes: `cargo run --release -p readers --example
//! many_nodes -- 16384`. The figures in BENCHMARKS.md come from this.

use std::time::Instant;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(4096);
    let t = Instant::now();
    let topo = readers::synthetic::parse(&format!("numa:{n} pu:1")).unwrap();
    println!("synthetic {n} nodes: {:.2}s", t.elapsed().as_secs_f64());

    let t = Instant::now();
    let xml = readers::xml::write(&topo);
    println!(
        "xml write: {:.2}s ({} bytes)",
        t.elapsed().as_secs_f64(),
        xml.len()
    );
    let t = Instant::now();
    readers::xml::read(&xml, "gen.xml").unwrap();
    println!("xml read: {:.2}s", t.elapsed().as_secs_f64());

    let t = Instant::now();
    let lscpu = readers::lscpu::summary(&topo);
    println!("lscpu write: {:.2}s", t.elapsed().as_secs_f64());
    let t = Instant::now();
    let r = readers::lscpu::parse(&lscpu, "gen.lscpu");
    println!(
        "lscpu read: {:.2}s ({})",
        t.elapsed().as_secs_f64(),
        r.is_ok()
    );

    let dir = std::env::temp_dir().join(format!("many-nodes-{n}"));
    let _ = std::fs::remove_dir_all(&dir);
    let cpu = dir.join("sys/devices/system/cpu");
    std::fs::create_dir_all(&cpu).unwrap();
    let all = format!("0-{}\n", n - 1);
    for f in ["possible", "present", "online"] {
        std::fs::write(cpu.join(f), &all).unwrap();
    }
    for c in 0..n {
        let topo = cpu.join(format!("cpu{c}/topology"));
        std::fs::create_dir_all(&topo).unwrap();
        std::fs::write(topo.join("physical_package_id"), format!("{c}\n")).unwrap();
        std::fs::write(topo.join("core_id"), "0\n").unwrap();
        let node = dir.join(format!("sys/devices/system/node/node{c}"));
        std::fs::create_dir_all(&node).unwrap();
        std::fs::write(node.join("cpulist"), format!("{c}\n")).unwrap();
    }
    let t = Instant::now();
    readers::sysfs::read_dir(&dir).unwrap();
    println!("sysfs read: {:.2}s", t.elapsed().as_secs_f64());
    let _ = std::fs::remove_dir_all(&dir);
}
