//! Real inputs gathered from outside the corpus, read against lstopo: set
//! `MANYCORE_REAL_INPUTS=DIR` to a directory holding `xml/*.xml` (hwloc XML,
//! v1 or v2), `sysfs/*` (sysfs/procfs roots: directories holding `sys/`, or
//! `.tar.gz`/`.tar.bz2`/`.tar.xz` of one) and `lscpu/*` (lscpu outputs of any
//! form). Without it the test says so and passes; it is how BENCHMARKS.md's
//! tally of real inputs is made again. Each input is one line: `read` (and
//! equal to lstopo's reading of the same input), `partly` (equal on every
//! fact lstopo is truth for, a named one left out), `unchecked` (read,
//! where lstopo is no truth), `refused` with the reader's error, or `WRONG` with
//! the first field that differs or the panic. The test fails on a wrong
//! reading or a panic, never on a refusal.
//!
//! lstopo is the truth for XML (its own re-export of the file) and for
//! sysfs roots (its reading of the extracted files, the x86 backend left
//! out as in `sysfs_captures.rs`); an lscpu output has no second reader, so
//! it is only read or refused.

#[path = "support/extract.rs"]
mod extract;
#[path = "xml_support/truth.rs"]
mod truth;

use std::fs;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::Command;

use readers::{lscpu, sysfs, xml};

/// How a read input compared with lstopo.
enum Read {
    /// Equal to lstopo's reading (or, for lscpu, read).
    Equal,
    /// Equal to lstopo's reading but for what the note names, where lstopo
    /// is no truth.
    EqualBut(String),
    /// Read where lstopo is no truth: the note says why.
    NoTruth(String),
}

#[derive(Default)]
struct Tally {
    tried: usize,
    read: usize,
    partly: usize,
    unchecked: usize,
    refused: usize,
    wrong: Vec<String>,
}

impl Tally {
    fn add(&mut self, what: &str, outcome: Result<Result<Read, String>, String>) {
        self.tried += 1;
        match outcome {
            Ok(Ok(Read::Equal)) => {
                self.read += 1;
                println!("read     {what}");
            }
            Ok(Ok(Read::EqualBut(why))) => {
                self.partly += 1;
                println!("partly   {what} ({why})");
            }
            Ok(Ok(Read::NoTruth(why))) => {
                self.unchecked += 1;
                println!("unchecked {what}: {why}");
            }
            Ok(Err(e)) => {
                self.refused += 1;
                println!("refused  {what}: {e}");
            }
            Err(why) => {
                println!("WRONG    {what}: {why}");
                self.wrong.push(what.to_string());
            }
        }
    }
}

fn listing(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .map(|r| r.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

/// Runs `f`, turning a failed assertion or a panic into the `Err` of a wrong
/// reading.
fn checked(f: impl FnOnce() -> Result<Read, String>) -> Result<Result<Read, String>, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| {
        p.downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "panic".into())
            .lines()
            .take(6)
            .collect::<Vec<_>>()
            .join(" | ")
    })
}

fn lstopo_xml(input: &Path, x86_off: bool) -> Option<String> {
    let mut c = Command::new(truth::lstopo());
    if x86_off {
        c.env("HWLOC_COMPONENTS", "-x86");
    }
    let out = c
        .arg("--input")
        .arg(input)
        .args(["--no-io", "--of", "xml", "-"])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

fn check_xml(path: &Path) -> Result<Read, String> {
    let topo = xml::read_path(path).map_err(|e| e.to_string())?;
    let Some(text) = lstopo_xml(path, false) else {
        return Ok(Read::NoTruth("lstopo cannot read it".into()));
    };
    let want = truth::expected(&truth::parse_xml(&text));
    truth::assert_facts("", &truth::facts_of(&topo, &want), &want);
    Ok(Read::Equal)
}

/// A sysfs root as a directory lstopo can read: the directory itself, or a
/// copy of it or of the archive's files (its top directory holding `sys/`
/// when it has one) with a `proc/` directory.
fn as_root(path: &Path) -> (PathBuf, Option<tempfile::TempDir>) {
    if path.join("proc").is_dir() {
        return (path.to_path_buf(), None);
    }
    let tmp = if path.is_dir() {
        let tmp = tempfile::tempdir().unwrap();
        let ok = Command::new("cp")
            .arg("-a")
            .arg(path)
            .arg(tmp.path())
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "copying {}", path.display());
        tmp
    } else {
        extract::extract(path)
    };
    let root = if tmp.path().join("sys").exists() {
        tmp.path().to_path_buf()
    } else {
        listing(tmp.path())
            .into_iter()
            .find(|d| d.join("sys").exists())
            .unwrap_or_else(|| tmp.path().to_path_buf())
    };
    // lstopo takes a directory for a Linux root only when it has `proc/`.
    let _ = fs::create_dir_all(root.join("proc"));
    (root, Some(tmp))
}

fn check_sysfs(path: &Path) -> Result<Read, String> {
    let topo = sysfs::read_path(path).map_err(|e| e.to_string())?;
    let (root, _keep) = as_root(path);
    // Without the mask files hwloc looks for it reads no CPU from sysfs
    // and shows the host's PUs instead.
    if !has_cpu_topology(&root) {
        return Ok(Read::NoTruth(
            "no cpuN/topology/ mask file hwloc reads: lstopo shows the host's PUs".into(),
        ));
    }
    let Some(text) = lstopo_xml(&root, true) else {
        return Ok(Read::NoTruth("lstopo cannot read it".into()));
    };
    let mut want = truth::expected(&truth::parse_xml(&text));
    if !root.join("sys/devices/system/node").exists() {
        want.nodes.clear();
        want.distances = None;
    }
    // hwloc's PUs, packages, cores and caches hold only online CPUs.
    let online: truth::Set = topo.online().iter().collect();
    let on = |v: &[truth::Set]| -> Vec<truth::Set> {
        let mut v: Vec<truth::Set> = v
            .iter()
            .map(|s| s.intersection(&online).copied().collect::<truth::Set>())
            .filter(|s| !s.is_empty())
            .collect();
        v.sort();
        v
    };
    let mut got = truth::facts_of(&topo, &want);
    got.pus = got.pus.intersection(&online).copied().collect();
    got.packages = on(&got.packages);
    got.dies = on(&got.dies);
    got.clusters = on(&got.clusters);
    got.cores = on(&got.cores);
    let unmasked = without_package_mask(&root, &online);
    if unmasked.is_some() {
        // Not compared: lstopo is no truth for packages here.
        want.packages.clear();
        got.packages.clear();
    }
    truth::assert_facts("", &got, &want);
    Ok(match unmasked {
        Some(cpu) => Read::EqualBut(format!(
            "packages unchecked: cpu{cpu} has no package mask hwloc reads"
        )),
        None => Read::Equal,
    })
}

/// An online CPU whose `topology/` holds neither `package_cpus` nor
/// `core_siblings`, the masks hwloc makes packages from (it never reads
/// the `_list` files): hwloc then puts that CPU in no package, so lstopo is
/// no truth for packages.
fn without_package_mask(root: &Path, online: &truth::Set) -> Option<usize> {
    let cpus = root.join("sys/devices/system/cpu");
    online.iter().copied().find(|cpu| {
        let topo = cpus.join(format!("cpu{cpu}/topology"));
        !["package_cpus", "core_siblings"]
            .iter()
            .any(|m| topo.join(m).is_file())
    })
}

/// Whether some `cpuN/topology/` of the root holds a mask file hwloc looks
/// for before it reads sysfs (`check_sysfs_cpu_path` in topology-linux.c:
/// `package_cpus`, `core_cpus`, `core_siblings` or `thread_siblings`);
/// without one it reads no CPU from sysfs.
fn has_cpu_topology(root: &Path) -> bool {
    let masks = [
        "package_cpus",
        "core_cpus",
        "core_siblings",
        "thread_siblings",
    ];
    listing(&root.join("sys/devices/system/cpu"))
        .iter()
        .any(|d| masks.iter().any(|m| d.join("topology").join(m).is_file()))
}

/// One kind of input's check: `Ok` read (and equal to lstopo's reading),
/// `Err` refused with the reader's error.
type Check = fn(&Path) -> Result<Read, String>;

/// An lscpu summary is its own truth for what lscpu counted from sysfs: the
/// reading, counted again the way lscpu counts, must give the same CPUs,
/// sockets, cores per socket and threads per core (the most any core has,
/// as 2.37 and later print it, or on-line CPUs over cores rounded down, as
/// earlier versions did). Checked where the summary has one CPU-type block
/// and no CPU off-line (else where off-line CPUs sit is unknown); the
/// summary's lines are read here, not by the reader.
fn check_lscpu(path: &Path) -> Result<Read, String> {
    let t = lscpu::read_path(path).map_err(|e| e.to_string())?;
    let text = fs::read_to_string(path).unwrap_or_default();
    let Some(said) = summary_counts(&text) else {
        return Ok(Read::NoTruth(
            "not one CPU-type block of numeric counts, all CPUs on-line".into(),
        ));
    };
    let c = lscpu::counts(&t);
    let floor = c.online.weight().checked_div(c.cores).unwrap_or(0);
    let got = [
        c.online.weight(),
        c.sockets,
        c.cores_per_socket,
        if said[3] == floor {
            floor
        } else {
            c.threads_per_core
        },
    ];
    assert_eq!(
        got, said,
        "on-line CPUs, sockets, cores per socket, threads per core"
    );
    Ok(Read::Equal)
}

/// CPU(s), Socket(s), Core(s) per socket and Thread(s) per core as the
/// summary prints them, when each is printed once as a number and no CPU is
/// off-line.
fn summary_counts(text: &str) -> Option<[usize; 4]> {
    let field = |label: &str| -> Option<usize> {
        let mut found = text.lines().filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == label).then(|| v.trim())
        });
        let v = found.next()?;
        if found.next().is_some() {
            return None;
        }
        v.parse().ok()
    };
    if text
        .lines()
        .any(|l| l.trim_start().starts_with("Off-line CPU(s)"))
    {
        return None;
    }
    Some([
        field("CPU(s)")?,
        field("Socket(s)")?,
        field("Core(s) per socket")?,
        field("Thread(s) per core")?,
    ])
}

#[test]
fn real_inputs_read_as_lstopo_reads_them() {
    let Some(dir) = std::env::var_os("MANYCORE_REAL_INPUTS") else {
        eprintln!("SKIPPED real_inputs: MANYCORE_REAL_INPUTS is not set");
        return;
    };
    let dir = PathBuf::from(dir);
    let kinds: [(&str, Check); 3] = [
        ("xml", check_xml),
        ("sysfs", check_sysfs),
        ("lscpu", check_lscpu),
    ];
    let mut all = Vec::new();
    for (kind, check) in kinds {
        let mut t = Tally::default();
        for p in listing(&dir.join(kind)) {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            t.add(&format!("{kind}/{name}"), checked(|| check(&p)));
        }
        println!(
            "TALLY {kind}: {} tried, {} read, {} partly, {} unchecked, {} refused, {} wrong",
            t.tried,
            t.read,
            t.partly,
            t.unchecked,
            t.refused,
            t.wrong.len()
        );
        all.extend(t.wrong);
    }
    assert!(all.is_empty(), "read wrong: {all:?}");
}
