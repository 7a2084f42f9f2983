//! What QEMU itself says about the machine it built, asked over QMP before
//! the guest runs: each vCPU's APIC id and NUMA node, and where each memory
//! backend sits in guest-physical memory. This is the truth the boot tests
//! hold the kernel's self-report to; it comes from QEMU, not from the
//! kernel's reading of its firmware tables nor from [`crate::Machine`]'s own
//! arithmetic.
//!
//! The conversation itself is the `qapi` crate's synchronous QMP client,
//! with its command and reply types generated from QEMU's own QAPI schema
//! (9.1's in `qapi-qmp` 0.15: the three commands asked here answer QEMU 10
//! in the same shape); this module only says what to ask and reads the
//! answers.

use qapi::qmp::{self, CpuInfoFast};
use qapi::{Qmp, Stream};
use std::io::{BufRead, BufReader};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

/// One vCPU as QEMU made it (`query-cpus-fast` and its QOM `apic-id`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QemuCpu {
    /// QEMU's CPU index (the MADT's order).
    pub index: u32,
    /// The APIC id QEMU gave the vCPU (QOM property `apic-id`).
    pub apic_id: u32,
    /// Its NUMA node (`props.node-id`), if the machine has nodes.
    pub node: Option<u32>,
    /// Socket, core and thread ids (`props`).
    pub socket_core_thread: (u32, u32, u32),
}

/// One RAM range of the guest's physical address space as QEMU maps it
/// (`info mtree -f`, the system address space).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RamRange {
    /// First byte.
    pub start: u64,
    /// One past the last byte.
    pub end: u64,
    /// The memory region behind it: a `-object memory-backend-*` id, or
    /// `pc.ram` without NUMA backends.
    pub region: String,
}

/// What QEMU reported about the machine before the guest ran.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QemuTruth {
    /// Every vCPU, by index.
    pub cpus: Vec<QemuCpu>,
    /// Every RAM range, by address.
    pub ram: Vec<RamRange>,
}

/// A QMP conversation on a Unix socket.
type Conversation<'a> = Qmp<Stream<BufReader<&'a UnixStream>, &'a UnixStream>>;

/// Connects to `socket` (QEMU creates it shortly after it starts), waiting
/// at most `patience` for it and for each answer.
fn connect(socket: &Path, patience: Duration) -> Result<UnixStream, String> {
    let start = Instant::now();
    let stream = loop {
        match UnixStream::connect(socket) {
            Ok(s) => break s,
            Err(e) if start.elapsed() > patience => {
                return Err(format!("QMP socket {}: {e}", socket.display()))
            }
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    stream
        .set_read_timeout(Some(patience))
        .map_err(|e| format!("QMP socket {}: {e}", socket.display()))?;
    Ok(stream)
}

/// Reads QEMU's greeting and negotiates capabilities. A socket closed before
/// the greeting is an error here: `qapi`'s handshake would panic on it.
fn handshake(qmp: &mut Conversation<'_>) -> Result<(), String> {
    let waiting = qmp
        .inner_mut()
        .fill_buf()
        .map_err(|e| format!("QMP greeting: {e}"))?;
    if waiting.is_empty() {
        return Err("QMP: QEMU closed the socket before its greeting".into());
    }
    qmp.handshake()
        .map(drop)
        .map_err(|e| format!("QMP greeting: {e}"))
}

/// Asks the paused QEMU behind `socket` for its vCPUs and RAM layout, then
/// lets the guest run (`cont`).
pub(crate) fn ask_and_continue(socket: &Path, patience: Duration) -> Result<QemuTruth, String> {
    let stream = connect(socket, patience)?;
    let mut qmp = Qmp::from_stream(&stream);
    handshake(&mut qmp)?;
    let cpus = query_cpus(&mut qmp)?;
    let mtree = qmp
        .execute(&qmp::human_monitor_command {
            command_line: "info mtree -f".into(),
            cpu_index: None,
        })
        .map_err(|e| format!("QMP human-monitor-command info mtree -f: {e}"))?;
    let ram = system_ram(&mtree);
    qmp.execute(&qmp::cont {})
        .map_err(|e| format!("QMP cont: {e}"))?;
    Ok(QemuTruth { cpus, ram })
}

fn query_cpus(qmp: &mut Conversation<'_>) -> Result<Vec<QemuCpu>, String> {
    let list = qmp
        .execute(&qmp::query_cpus_fast {})
        .map_err(|e| format!("QMP query-cpus-fast: {e}"))?;
    let mut cpus = Vec::with_capacity(list.len());
    for c in &list {
        let CpuInfoFast::x86_64(c) = c else {
            return Err(format!("QMP query-cpus-fast: a {:?} CPU", c.target()));
        };
        let path = &c.qom_path;
        let apic = qmp
            .execute(&qmp::qom_get {
                path: path.clone(),
                property: "apic-id".into(),
            })
            .map_err(|e| format!("QMP qom-get {path} apic-id: {e}"))?;
        let id = |v: Option<i64>, what: &str| {
            u32::try_from(v.unwrap_or(0)).map_err(|_| format!("{path}: {what} {v:?}"))
        };
        let props = c.props.clone().unwrap_or_default();
        cpus.push(QemuCpu {
            index: id(Some(c.cpu_index), "cpu-index")?,
            apic_id: apic
                .as_u64()
                .and_then(|a| u32::try_from(a).ok())
                .ok_or_else(|| format!("{path}: apic-id {apic}"))?,
            node: props.node_id.map(|n| id(Some(n), "node-id")).transpose()?,
            socket_core_thread: (
                id(props.socket_id, "socket-id")?,
                id(props.core_id, "core-id")?,
                id(props.thread_id, "thread-id")?,
            ),
        });
    }
    cpus.sort_by_key(|c| c.index);
    Ok(cpus)
}

/// The RAM ranges of the flat view of the system address space (the one
/// `AS "memory"` names) in `info mtree -f` text: lines like
/// `  0000000000100000-00000000100fffff (prio 0, ram): m0 @0000000000100000`.
pub fn system_ram(mtree: &str) -> Vec<RamRange> {
    let mut out = Vec::new();
    let mut in_system = false;
    for line in mtree.lines() {
        let t = line.trim();
        if t.starts_with("FlatView #") {
            in_system = false;
        } else if t.starts_with("AS \"memory\"") {
            in_system = true;
        } else if in_system {
            if let Some(r) = ram_line(t) {
                out.push(r);
            }
        }
    }
    out.sort_by_key(|r| r.start);
    out
}

fn ram_line(t: &str) -> Option<RamRange> {
    let (range, rest) = t.split_once(' ')?;
    let (kind, name) = rest.split_once("): ")?;
    if !kind.ends_with(", ram") {
        return None;
    }
    let (a, b) = range.split_once('-')?;
    let start = u64::from_str_radix(a, 16).ok()?;
    let last = u64::from_str_radix(b, 16).ok()?;
    let region = name.split_whitespace().next()?.to_string();
    Some(RamRange {
        start,
        end: last.checked_add(1)?,
        region,
    })
}

impl QemuTruth {
    /// The vCPU QEMU gave `apic_id`.
    pub fn cpu_by_apic(&self, apic_id: u32) -> Option<&QemuCpu> {
        self.cpus.iter().find(|c| c.apic_id == apic_id)
    }

    /// The RAM ranges backed by memory region `region`.
    pub fn ram_of(&self, region: &str) -> Vec<(u64, u64)> {
        self.ram
            .iter()
            .filter(|r| r.region == region)
            .map(|r| (r.start, r.end))
            .collect()
    }
}

/// The memory backend of each NUMA node on a QEMU command line: the
/// `memdev=` of each `-numa node,nodeid=N,...` argument.
pub fn node_memdevs(args: &[String]) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    for w in args.windows(2) {
        if w[0] != "-numa" {
            continue;
        }
        let Some(opts) = w[1].strip_prefix("node,") else {
            continue;
        };
        let field = |k: &str| {
            opts.split(',')
                .find_map(|kv| kv.strip_prefix(k)?.strip_prefix('='))
        };
        if let (Some(id), Some(dev)) = (
            field("nodeid").and_then(|n| n.parse().ok()),
            field("memdev"),
        ) {
            out.push((id, dev.to_string()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An excerpt of QEMU 10.0's `info mtree -f` for q35 with two 257 MiB
    /// `-numa` nodes: only the system address space's RAM counts.
    #[test]
    fn system_ram_reads_the_memory_flat_view() {
        let text = "FlatView #1\r\n AS \"cpu-smm-1\", root: memory\r\n Root memory region: memory\r\n  0000000000000000-00000000000bffff (prio 0, ram): m0\r\n  0000000000100000-00000000100fffff (prio 0, ram): m0 @0000000000100000\r\n\r\nFlatView #3\r\n AS \"memory\", root: system\r\n AS \"cpu-memory-0\", root: system\r\n Root memory region: system\r\n  0000000000000000-00000000000bffff (prio 0, ram): m0\r\n  00000000000c0000-00000000000dffff (prio 1, rom): pc.rom\r\n  0000000000100000-00000000100fffff (prio 0, ram): m0 @0000000000100000\r\n  0000000010100000-00000000201fffff (prio 0, ram): m1\r\n  00000000fec00000-00000000fec00fff (prio 0, i/o): ioapic\r\n\r\nFlatView #4\r\n AS \"I/O\", root: io\r\n  0000000000000000-0000000000000007 (prio 0, i/o): dma-chan\r\n";
        let t = QemuTruth {
            cpus: Vec::new(),
            ram: system_ram(text),
        };
        assert_eq!(t.ram.len(), 3);
        assert_eq!(t.ram_of("m0"), [(0, 0xc_0000), (0x10_0000, 0x1010_0000)]);
        assert_eq!(t.ram_of("m1"), [(0x1010_0000, 0x2020_0000)]);
        assert!(t.ram_of("pc.rom").is_empty());
    }

    /// QEMU gone before it greets (it exited on a bad argument, or was
    /// killed) is one error, not a panic inside `qapi`'s handshake.
    #[test]
    fn a_socket_closed_before_the_greeting_is_an_error() {
        let (ours, theirs) = UnixStream::pair().expect("socket pair");
        drop(theirs);
        let e = handshake(&mut Qmp::from_stream(&ours)).expect_err("no greeting");
        assert!(e.contains("closed the socket"), "{e}");
    }

    #[test]
    fn a_greeting_that_is_not_qmp_is_an_error() {
        use std::io::Write;
        let (ours, mut theirs) = UnixStream::pair().expect("socket pair");
        theirs.write_all(b"SSH-2.0-OpenSSH\n").expect("write");
        drop(theirs);
        let e = handshake(&mut Qmp::from_stream(&ours)).expect_err("not QMP");
        assert!(e.starts_with("QMP greeting:"), "{e}");
    }

    #[test]
    fn node_memdevs_come_from_the_numa_arguments() {
        let args: Vec<String> = [
            "-smp",
            "4",
            "-numa",
            "node,nodeid=1,cpus=2-3,memdev=b",
            "-numa",
            "dist,src=0,dst=1,val=15",
            "-numa",
            "node,nodeid=0,cpus=0-1,memdev=a",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            node_memdevs(&args),
            [(1, "b".to_string()), (0, "a".to_string())]
        );
    }
}
