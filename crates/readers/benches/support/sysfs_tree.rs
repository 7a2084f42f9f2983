//! Shared by the sysfs benchmarks: extracting a corpus archive, writing a
//! generated machine's sysfs tree, and the minimal-file floor.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// Extracts an archive into a private temporary directory and returns the
/// directory holding `sys/`: the archive's top directory, or its `fsroot/`
/// (hwloc's x86+linux snapshots keep the sysfs tree there, beside their CPUID
/// dumps). `None` when the archive does not unpack or holds no `sys/`.
pub fn extract(archive: &Path, into: &Path) -> Option<PathBuf> {
    let bytes = std::fs::read(archive).ok()?;
    let decoded: Box<dyn std::io::Read> = if bytes.starts_with(&[0x1f, 0x8b]) {
        Box::new(flate2::read::GzDecoder::new(std::io::Cursor::new(bytes)))
    } else {
        Box::new(bzip2::read::BzDecoder::new(std::io::Cursor::new(bytes)))
    };
    tar::Archive::new(decoded).unpack(into).ok()?;
    std::fs::read_dir(into)
        .ok()?
        .flatten()
        .flat_map(|e| [e.path(), e.path().join("fsroot")])
        .find(|p| p.join("sys").is_dir())
}

/// Writes the sysfs tree a Linux kernel would show for a regular machine of
/// `packages` × `cores` × `threads` CPUs (threads numbered last, one NUMA node
/// per package, an L1d per core and an L3 per package), with hex maps sized for
/// the machine's CPU count as the kernel writes them. The topology the seeds
/// talk about (thousands of CPUs) exists in no corpus snapshot, so it is made.
pub fn write_machine(root: &Path, packages: usize, cores: usize, threads: usize) -> usize {
    let n = packages * cores * threads;
    let per_thread = packages * cores;
    let place = |cpu: usize| ((cpu % per_thread) / cores, cpu % per_thread % cores);
    let hex = |pred: &dyn Fn(usize) -> bool| -> String {
        let mask: cpumask::CpuMask = (0..n).filter(|&c| pred(c)).collect();
        format!("{}\n", mask.to_hex_string(n))
    };
    // Each directory is made once (before its files), not per file: the
    // 16384-CPU tree has a quarter of a million files.
    let mkdir = |path: &str| std::fs::create_dir_all(root.join(path)).unwrap();
    let write = |path: &str, text: &str| std::fs::write(root.join(path), text).unwrap();
    let cpu = "sys/devices/system/cpu";
    // The ids x86 prints per processor (arch/x86/kernel/cpu/proc.c,
    // `show_cpuinfo_core`): package, core, and an APIC id made of the
    // thread, core and package numbers, each in its own bit field.
    let bits = |count: usize| count.next_power_of_two().trailing_zeros();
    let (core_shift, package_shift) = (bits(threads), bits(threads) + bits(cores));
    let cpuinfo: String = (0..n)
        .map(|c| {
            let (p, core) = place(c);
            let apicid = (p << package_shift) | (core << core_shift) | (c / per_thread);
            format!(
                "processor\t: {c}\nvendor_id\t: GenuineIntel\nphysical id\t: {p}\n\
                 siblings\t: {}\ncore id\t\t: {core}\ncpu cores\t: {cores}\n\
                 apicid\t\t: {apicid}\ninitial apicid\t: {apicid}\nflags\t\t: fpu lm\n\n",
                cores * threads
            )
        })
        .collect();
    mkdir("proc");
    mkdir(cpu);
    write("proc/cpuinfo", &cpuinfo);
    for f in ["possible", "present", "online"] {
        write(&format!("{cpu}/{f}"), &format!("0-{}\n", n - 1));
    }
    let mut core_maps: Vec<String> = Vec::with_capacity(per_thread);
    for i in 0..per_thread {
        core_maps.push(hex(&|c| c % per_thread == i));
    }
    let package_maps: Vec<String> = (0..packages).map(|p| hex(&|c| place(c).0 == p)).collect();
    for c in 0..n {
        let (p, core) = place(c);
        let d = format!("{cpu}/cpu{c}");
        mkdir(&format!("{d}/topology"));
        write(
            &format!("{d}/topology/physical_package_id"),
            &format!("{p}\n"),
        );
        write(&format!("{d}/topology/core_id"), &format!("{core}\n"));
        write(
            &format!("{d}/topology/thread_siblings"),
            &core_maps[c % per_thread],
        );
        write(&format!("{d}/topology/core_siblings"), &package_maps[p]);
        for (index, level, ty, size, map) in [
            (0, 1, "Data", "48K", &core_maps[c % per_thread]),
            (3, 3, "Unified", "32768K", &package_maps[p]),
        ] {
            let i = format!("{d}/cache/index{index}");
            mkdir(&i);
            write(&format!("{i}/level"), &format!("{level}\n"));
            write(&format!("{i}/type"), &format!("{ty}\n"));
            write(&format!("{i}/size"), &format!("{size}\n"));
            write(&format!("{i}/coherency_line_size"), "64\n");
            write(&format!("{i}/shared_cpu_map"), map);
        }
    }
    for (p, map) in package_maps.iter().enumerate() {
        let d = format!("sys/devices/system/node/node{p}");
        mkdir(&d);
        write(&format!("{d}/cpumap"), map);
        let row: Vec<&str> = (0..packages)
            .map(|q| if q == p { "10" } else { "20" })
            .collect();
        write(&format!("{d}/distance"), &format!("{}\n", row.join(" ")));
        write(
            &format!("{d}/meminfo"),
            &format!("Node {p} MemTotal:       67108864 kB\n"),
        );
    }
    n
}

/// The fewest files any sysfs reader must open to learn `t` from `dir`, if it
/// trusted every sibling set completely: per core, one SMT-sibling mask and the
/// core id (of its first CPU); per package, its id and mask; per NUMA node, its
/// CPU map and distances; per distinct cache, the level, type, size and sharing
/// map of one CPU's `indexN`; and the `online` list. Only files present in the
/// dump are kept. Timed with one open, one read and one close each (no parsing),
/// this is a floor under any reader of the same input, ours or hwloc's.
pub fn minimal_files(dir: &Path, t: &topology::Topology) -> Vec<PathBuf> {
    let cpu = dir.join("sys/devices/system/cpu");
    let first_existing = |candidates: &[PathBuf]| candidates.iter().find(|p| p.is_file()).cloned();
    let mut files: Vec<PathBuf> = Vec::new();
    let mut push = |candidates: &[PathBuf]| {
        if let Some(p) = first_existing(candidates) {
            files.push(p);
        }
    };
    push(&[cpu.join("online")]);
    for level in t.levels() {
        for group in &level.groups {
            let Some(first) = group.cpus.first() else {
                continue;
            };
            let topo = cpu.join(format!("cpu{first}/topology"));
            match level.kind {
                topology::LevelKind::Core => {
                    push(&[topo.join("core_cpus"), topo.join("thread_siblings")]);
                    push(&[topo.join("core_id")]);
                }
                topology::LevelKind::Package => {
                    push(&[topo.join("package_cpus"), topo.join("core_siblings")]);
                    push(&[topo.join("physical_package_id")]);
                }
                _ => {}
            }
        }
    }
    for node in t.nodes() {
        let d = dir.join(format!("sys/devices/system/node/node{}", node.id));
        push(&[d.join("cpumap"), d.join("cpulist")]);
        push(&[d.join("distance")]);
    }
    for cache in t.caches() {
        let Some(first) = cache.cpus.first() else {
            continue;
        };
        let cache_dir = cpu.join(format!("cpu{first}/cache"));
        let Ok(entries) = std::fs::read_dir(&cache_dir) else {
            continue;
        };
        // The index of the cache's level and type: a CPU's L1d and L1i are
        // two indices of one level, each read once.
        let kind = match cache.kind {
            topology::CacheKind::Data => "Data",
            topology::CacheKind::Instruction => "Instruction",
            topology::CacheKind::Unified => "Unified",
        };
        for index in entries.flatten().map(|e| e.path()) {
            let text = |f: &str| std::fs::read_to_string(index.join(f)).unwrap_or_default();
            if text("level").trim() == cache.level.to_string() && text("type").trim() == kind {
                for f in ["level", "type", "size", "shared_cpu_map"] {
                    push(&[index.join(f)]);
                }
                break;
            }
        }
    }
    files
}

/// The floor of a reader that fills the whole model: [`minimal_files`], and
/// every other file whose content the model of `t` carries, once each — the
/// CPU sets (`possible`, `present`), `proc/cpuinfo` (architecture, model
/// name, x86 APIC ids, and the ids of kernels without `topology/`), each
/// CPU's `online` when there is no `cpu/online`, its firmware id
/// (`physical_id`) and capacity where the model has them, sparc64's per-CPU
/// cache files, the die and cluster ids and masks, each node's `meminfo`,
/// each distinct cache's line size and associativity, the hybrid core-kind
/// lists and the hypervisor's files. Only files present in the dump are
/// kept. Not counted: directory listings and probes of files a dump lacks
/// (the floor knows every name), and parsing.
pub fn model_files(dir: &Path, t: &topology::Topology) -> Vec<PathBuf> {
    let cpu = dir.join("sys/devices/system/cpu");
    let mut files = minimal_files(dir, t);
    let mut seen: std::collections::HashSet<PathBuf> = files.iter().cloned().collect();
    let mut extra = Vec::new();
    let mut push = |p: PathBuf| {
        if p.is_file() && seen.insert(p.clone()) {
            extra.push(p);
        }
    };
    for name in ["possible", "present"] {
        push(cpu.join(name));
    }
    push(dir.join("proc/cpuinfo"));
    let per_cpu_online = !cpu.join("online").is_file();
    for c in t.cpus() {
        let d = cpu.join(format!("cpu{}", c.id));
        if per_cpu_online {
            push(d.join("online"));
        }
        if c.hw_id.is_some() {
            push(d.join("physical_id"));
        }
        if c.capacity.is_some() {
            push(d.join("cpu_capacity"));
        }
        // sparc64's caches: per-CPU size and line files, no `cache/`.
        if !t.caches().is_empty() && !d.join("cache").is_dir() {
            for stem in ["l1_dcache", "l1_icache", "l2_cache"] {
                push(d.join(format!("{stem}_size")));
                push(d.join(format!("{stem}_line_size")));
            }
        }
    }
    for level in t.levels() {
        let names = match level.kind {
            topology::LevelKind::Die => ["die_cpus", "die_cpus_list", "die_id"],
            topology::LevelKind::Cluster => ["cluster_cpus", "cluster_cpus_list", "cluster_id"],
            _ => continue,
        };
        for group in &level.groups {
            let Some(first) = group.cpus.first() else {
                continue;
            };
            let topo = cpu.join(format!("cpu{first}/topology"));
            let mask = topo.join(names[0]);
            push(if mask.is_file() {
                mask
            } else {
                topo.join(names[1])
            });
            push(topo.join(names[2]));
        }
    }
    for node in t.nodes().iter().filter(|n| n.memory_bytes.is_some()) {
        push(dir.join(format!("sys/devices/system/node/node{}/meminfo", node.id)));
    }
    let indices: Vec<PathBuf> = minimal_files(dir, t)
        .iter()
        .filter(|p| p.ends_with("level") && p.to_string_lossy().contains("/cache/index"))
        .filter_map(|p| p.parent().map(Path::to_path_buf))
        .collect();
    for index in indices {
        push(index.join("coherency_line_size"));
        push(index.join("ways_of_associativity"));
    }
    if !t.core_kinds().is_empty() {
        push(dir.join("sys/devices/cpu_core/cpus"));
        push(dir.join("sys/devices/cpu_atom/cpus"));
    }
    if t.hypervisor().is_some() {
        push(dir.join("proc/powerpc/lparcfg"));
        push(dir.join("proc/sysinfo"));
    }
    files.extend(extra);
    files
}

/// One open, one read, one close per file: the least any reader can do. A
/// file longer than the buffer (`proc/cpuinfo` of a big machine) is read on
/// until a read comes back short, as a reader must to have all of it.
pub fn read_floor(files: &[PathBuf]) -> usize {
    use std::io::Read;
    let mut buf = vec![0u8; 64 << 10];
    let mut total = 0;
    for p in files {
        let mut f = std::fs::File::open(p).unwrap();
        loop {
            let n = f.read(&mut buf).unwrap();
            total += n;
            if n < buf.len() {
                break;
            }
        }
    }
    total
}

/// Every sysfs snapshot archive in the corpus (hwloc's linux tests and
/// history, util-linux's lscpu dumps and history).
pub fn snapshots(corpus: &Path) -> Vec<PathBuf> {
    readers::corpus::sysfs_snapshots(corpus, |dir| {
        dir.ends_with("/linux")
            || dir.contains("/linux/")
            || dir.contains("x86+linux")
            || dir.contains("lscpu/dumps")
            || dir.starts_with("hwloc/history")
    })
}

/// The floor plus the look-ups the sysfs ABI leaves to any reader: what the
/// file floor ([`model_files`]) skips because it is told every name. The
/// rules come from the kernel's documentation and hwloc's Linux backend
/// (`look_sysfscpu` and friends in hwloc/topology-linux.c, hwloc commit
/// 3b37b024), not from any reader's trace:
///
/// 1. One listing of `cpu/`: the CPUs are its `cpuN` entries (hwloc opens
///    the directory and reads every entry; `possible` and `present` are
///    ranges that say nothing of which directories a dump holds).
/// 2. One listing of `node/` when it exists: the node numbers may be
///    sparse (Documentation/ABI/stable/sysfs-devices-node lists `nodeX`
///    per node; hwloc reads `node/online` for the same purpose). When it
///    does not, one failed open of it (hwloc's `list_sysfsnode` opens the
///    directory when `node/online` is absent: a machine without NUMA
///    support is found out so).
/// 3. Without `cpu/online`, every `cpuN`'s own `online`: read where it
///    exists (offline CPUs' too: they say 0), one failed open where it does
///    not (Documentation/ABI/testing/sysfs-devices-system-cpu: `cpuX/online`
///    exists only for CPUs that can be taken offline; hwloc reads it per
///    CPU when `cpu/online` is missing).
/// 4. Every `cpuN` without `topology/`: one failed look-up of it (the
///    kernel removes an offline CPU's topology directory, and kernels
///    before 2.6.16 wrote none; hwloc checks `cpuN/topology` with
///    `access()` before placing a CPU).
/// 5. One listing of the first CPU's `topology/`: which names this kernel
///    writes (`core_cpus` since 5.6, `thread_siblings` before; `die_*`,
///    `cluster_*` only on some kernels), where the floor knows them.
/// 6. Caches: with caches in the model, one listing of the first CPU's
///    `cache/` (the `indexN` names, which hwloc probes from 0 upward);
///    without, one failed look-up of it.
/// 7. Each node of the model without `cpumap`, `distance` or `meminfo`:
///    one failed open each (Documentation/ABI/stable/sysfs-devices-node
///    lists the three per node; hwloc reads `nodeN/cpumap` and
///    `nodeN/distance` for every node). But `distance` and `meminfo`
///    the kernel writes for every node or for none (drivers/base/node.c,
///    `register_node`: every node device gets `node_dev_groups`): when
///    the first node and the last both lack one, it is two failed opens in
///    all (one with a single node), not one per node.
/// 8. x86 without hybrid kinds: one failed open of `cpu_core/cpus` (hwloc's
///    `look_sysfscpukinds_by_pmu_sets` reads the Intel PMUs' CPU lists;
///    every hybrid part has a `cpu_core` PMU).
/// 9. IBM Z without `proc/sysinfo`: one failed open of it (the model
///    carries the hypervisor as lscpu reports it, and util-linux's
///    `lscpu_read_virtualization`, sys-utils/lscpu-virt.c @01258182, takes
///    an IBM machine's hypervisor from `sysinfo`'s `Control Program` line).
#[derive(Default)]
pub struct AbiFloor {
    /// Files read as the floor reads them: [`model_files`], then the
    /// `online` files of rule 3 that the model does not carry.
    pub files: Vec<PathBuf>,
    /// Paths opened and found absent.
    pub absent: Vec<PathBuf>,
    /// Directories listed.
    pub listed: Vec<PathBuf>,
}

/// The ABI floor of `dir`, read as `t`, whose [`model_files`] are `floor`.
pub fn abi_floor(dir: &Path, t: &topology::Topology, floor: &[PathBuf]) -> AbiFloor {
    let cpu = dir.join("sys/devices/system/cpu");
    let node = dir.join("sys/devices/system/node");
    let mut f = AbiFloor {
        files: floor.to_vec(),
        ..AbiFloor::default()
    };
    let mut seen: std::collections::HashSet<PathBuf> = f.files.iter().cloned().collect();
    f.listed.push(cpu.clone());
    match node.is_dir() {
        true => f.listed.push(node.clone()),
        false => f.absent.push(node.clone()),
    }
    let cpu_dirs: Vec<u32> = std::fs::read_dir(&cpu)
        .map(|d| {
            d.flatten()
                .filter_map(|e| {
                    let name = e.file_name().into_string().ok()?;
                    name.strip_prefix("cpu")?.parse().ok()
                })
                .collect()
        })
        .unwrap_or_default();
    let per_cpu_online = !cpu.join("online").is_file();
    for &n in &cpu_dirs {
        let d = cpu.join(format!("cpu{n}"));
        if per_cpu_online {
            let online = d.join("online");
            if !online.is_file() {
                f.absent.push(online);
            } else if seen.insert(online.clone()) {
                f.files.push(online);
            }
        }
        if !d.join("topology").is_dir() {
            f.absent.push(d.join("topology"));
        }
    }
    if let Some(first) = t.cpus().first() {
        let d = cpu.join(format!("cpu{}", first.id));
        if d.join("topology").is_dir() {
            f.listed.push(d.join("topology"));
        }
        match d.join("cache").is_dir() && !t.caches().is_empty() {
            true => f.listed.push(d.join("cache")),
            false => f.absent.push(d.join("cache")),
        }
    }
    let nodes = t.nodes();
    let node_file = |i: usize, name: &str| node.join(format!("node{}/{name}", nodes[i].id));
    for name in ["cpumap", "distance", "meminfo"] {
        let lacking = |i: usize| !node_file(i, name).is_file();
        let every_node_or_none = name != "cpumap";
        let none = !nodes.is_empty() && lacking(0) && lacking(nodes.len() - 1);
        let mut asked: Vec<usize> = match every_node_or_none && none {
            true => vec![0, nodes.len() - 1],
            false => (0..nodes.len()).collect(),
        };
        asked.dedup();
        f.absent.extend(
            asked
                .into_iter()
                .filter(|&i| lacking(i))
                .map(|i| node_file(i, name)),
        );
    }
    let x86 = matches!(t.arch(), topology::Arch::X86_64 | topology::Arch::X86);
    let core_pmu = dir.join("sys/devices/cpu_core/cpus");
    if x86 && !core_pmu.is_file() {
        f.absent.push(core_pmu);
    }
    let sysinfo = dir.join("proc/sysinfo");
    if matches!(t.arch(), topology::Arch::S390x) && !sysinfo.is_file() {
        f.absent.push(sysinfo);
    }
    f
}

/// [`read_floor`] of the ABI floor's files, then its failed opens and its
/// listings (every entry read), each once.
pub fn read_abi_floor(f: &AbiFloor) -> usize {
    let mut total = read_floor(&f.files);
    for p in &f.absent {
        total += usize::from(std::fs::File::open(p).is_err());
    }
    for d in &f.listed {
        total += std::fs::read_dir(d).map_or(0, |e| e.count());
    }
    total
}
