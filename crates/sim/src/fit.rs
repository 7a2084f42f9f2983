//! The free parameters, and how each was fitted.
//!
//! Everything else in [`crate::costs`] is a constant from kernel code or a
//! specification. The fits below use closed forms of the simulator's own
//! schedule (checked against full simulations by the tests in
//! [`crate::validate`]), and only the machines named here:
//!
//! | platform | parameter | fitted on | how |
//! |---|---|---|---|
//! | x86-2010 | `online_serial` | seed 002's 12-, 16-, 32-CPU "After" logs | pooled per-CPU time between the first "Booting Node" line and "Brought up" (Σ windows / Σ CPUs), minus the code constants kick 11 ms + TSC check 20 ms and the real mask code's priced work |
//! | x86-2010 | `calibrate` | seed 002's 12-, 16-, 32-CPU "Before" and "After" logs | pooled extra per-CPU time of serial calibration: Σ(before − after windows) / Σ CPUs |
//! | powerpc | `lookup` | seed 000's 1024-CPU LPAR, 233 s (naive) and 3.7 s (scoped) | the difference between the two runs divided by the difference in device-tree property look-ups the real mask code performs for the two algorithms on that machine |
//! | powerpc | `online_serial` | the same LPAR's scoped run | what remains per CPU once the scoped run's priced mask work is taken out |
//! | x86 | `ap_start`, `online_serial` | seed 003's 128-CPU server: 700 ms serial kick (Linux 6.1) and 30 ms parallel kick without any AP calibrating (its author's figure on the v6 thread) | two equations, two unknowns, after one delay calibration and one 20 ms TSC check (code constants) are taken out: **in-sample**, seed 003 has no second machine; its 100 ms run (parallel kick, with the calibration) is left over as a check (see [`crate::validate`]) |
//! | x86, AMD | `ap_start` | the record's one AMD `fit` row (`x86-epyc7513-64-r6515`: one EPYC 7513, 64 CPUs, one package) | its per-CPU interval less the kick, seed 003's serialized online work and the priced mask work ([`crate::x86`]: the AP start-up is the CPU's and its firmware's, so it is fitted per vendor). The single-package row is the one AMD row whose interval holds no calibration or TSC check, whose AMD cost no source here times |
//! | arm64 | `online_serial` | the record's 80-core Ampere Altra log (`arm64-altra-80`) | the AP's own interval from "Detected … I-cache on CPUn" to "CPUn: Booted secondary processor" |
//! | arm64 | `ap_start` | the same log | the whole per-CPU interval between two "Booted" lines, minus that AP interval, the PSCI SMC (Trusted Firmware-A's published round trip on Neoverse N1) and the priced mask work |
//! | powerpc, per firmware | per-CPU cost, `/cpus` visit price | one machine per firmware measured under both mask codes (see [`crate::powerpc`]) | two windows, two unknowns, with Linux's walks counted for that firmware |
//! | arm64, per firmware | `ap_start`, `online_serial` | the mean over the record's `fit` rows of each firmware family that has more than one row (`sim.firmware`: the Altra's, and Trusted Firmware-A's Raspberry Pi platform on `arm64-a76-4-ra028`) | as above, on that row; the family's other rows are predicted with them ([`Arm64Firmware`]) |
//!
//! The large machines (seed 002's 4096-CPU UV, seed 000's 4096-CPU single
//! socket) and every record row marked `predict` are never used here: they
//! are what [`crate::validate`] predicts.

use std::sync::OnceLock;

use serde::Serialize;

use crate::costs::{
    direct_calibration_ns, Assumptions, FitParam, Param, Source, ARM64_KICK_NS, ARM64_ON_FINISH_NS,
    DEFAULT_HZ, PPC_KICK_NS, X86_2010_KICK_NS, X86_2010_TSC_NS, X86_KICK_NS, X86_TSC_NS,
    X86_TSC_SIBLING_NS,
};
use crate::machines::SeedMachine;
use crate::masks::{self, Ops};
use crate::strategy::{Algo, Calibrate};
use crate::x86::{converge_calibration_ns, Vendor};
use crate::SimError;

/// One x86 boot log of seed 002, reduced to the three timestamps that matter
/// (seconds): the first "Booting Node" line, "Brought up N CPUs", and "Total of N
/// processors activated".
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct X86Log {
    /// First "Booting Node" line.
    pub first_booting_s: f64,
    /// "Brought up N CPUs".
    pub brought_up_s: f64,
    /// "Total of N processors activated" (after parallel calibrations drain).
    pub total_s: f64,
}

impl X86Log {
    /// Bring-up window: first kick to the last CPU online.
    pub fn window_s(&self) -> f64 {
        self.brought_up_s - self.first_booting_s
    }
}

/// A seed 002 machine's two logs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Seed002Case {
    /// The machine.
    #[serde(skip)]
    pub machine: SeedMachine,
    /// Serial calibration (Linux 2.6.37 as is).
    pub before: X86Log,
    /// Parallel calibration (the seed's patch).
    pub after: X86Log,
}

/// Seed 002's logs, timestamps copied from /work/shared/seeds/002_*.txt (a test
/// checks every one against the file when it is present).
pub const SEED_002: [Seed002Case; 4] = [
    Seed002Case {
        machine: SeedMachine::X86_2s12,
        before: X86Log {
            first_booting_s: 0.773336,
            brought_up_s: 1.784768,
            total_s: 1.788170,
        },
        after: X86Log {
            first_booting_s: 0.721474,
            brought_up_s: 1.082249,
            total_s: 1.144426,
        },
    },
    Seed002Case {
        machine: SeedMachine::X86_2s16,
        before: X86Log {
            first_booting_s: 0.816215,
            brought_up_s: 2.202919,
            total_s: 2.206325,
        },
        after: X86Log {
            first_booting_s: 0.760314,
            brought_up_s: 1.253240,
            total_s: 1.315378,
        },
    },
    Seed002Case {
        machine: SeedMachine::X86_2s32ht,
        before: X86Log {
            first_booting_s: 0.538499,
            brought_up_s: 4.018423,
            total_s: 4.021833,
        },
        after: X86Log {
            first_booting_s: 0.771327,
            brought_up_s: 1.790866,
            total_s: 1.852380,
        },
    },
    Seed002Case {
        machine: SeedMachine::X86Uv4096,
        before: X86Log {
            first_booting_s: 95.105108,
            brought_up_s: 411.859404,
            total_s: 411.861354,
        },
        after: X86Log {
            first_booting_s: 68.491186,
            brought_up_s: 127.969171,
            total_s: 128.030130,
        },
    },
];

/// Seed 002's text: on the 4096-CPU UV, "By specifying `lpj=<value>`, we reduced
/// that to 75 seconds" (no log is given for this run).
pub const SEED_002_UV_LPJ_S: f64 = 75.0;

/// Seed 000's 1024-CPU LPAR: "Bringing up secondary CPUs" → "Brought up 16 nodes,
/// 1024 CPUs", before (naive masks) and with the patch set (scoped masks).
pub const SEED_000_LPAR_NAIVE_S: f64 = 233.354676 - 0.354971;
/// See [`SEED_000_LPAR_NAIVE_S`].
pub const SEED_000_LPAR_SCOPED_S: f64 = 4.059859 - 0.351703;
/// Seed 000's 4096-CPU single-socket machine, "about 30 mins" before.
pub const SEED_000_4096_NAIVE_S: f64 = 30.0 * 60.0;
/// … and "6 seconds" after.
pub const SEED_000_4096_SCOPED_S: f64 = 6.0;
/// Seed 000's POWER9 LPAR: median of 100 `ppc64_cpu --smt=1`, before the series.
pub const SEED_000_SMT1_BEFORE_S: f64 = 14.71;
/// … with the series.
pub const SEED_000_SMT1_AFTER_S: f64 = 14.33;
/// Median of 100 `ppc64_cpu --smt=8`, before the series.
pub const SEED_000_SMT8_BEFORE_S: f64 = 23.71;
/// … with the series.
pub const SEED_000_SMT8_AFTER_S: f64 = 23.16;
/// Seed 003's 128-CPU server: smpboot "~700ms" with serial INIT/SIPI/SIPI
/// (Linux 6.1: the first CPU of the second package calibrates its delay loop).
pub const SEED_003_SERIAL_S: f64 = 0.700;
/// … and "100ms" with the kicks in parallel (the series' part 1; the same
/// calibration still runs, on the serialized path).
pub const SEED_003_PARALLEL_S: f64 = 0.100;
/// … and 30 ms with part 1 and the series' reuse of the timer calibration
/// (no AP calibrates): Usama Arif's reply on the v6 thread,
/// Message-ID <ced10a5a-d5d9-ef45-a454-706fff89a672@bytedance.com> ("No
/// patches: 700ms, part 1:100ms, part1+reuse timer calibration: 30ms,
/// part1+part2: 30ms"); the seed's own cover letter gives "~30ms" for
/// part 2, which takes the AP's set-up off the serialized path.
pub const SEED_003_REUSE_S: f64 = 0.030;

/// The fitted parameters.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fitted {
    /// x86-2010 `calibrate`.
    pub x86_2010_calibrate: Param,
    /// x86-2010 `online_serial`.
    pub x86_2010_online: Param,
    /// x86 (2023) `ap_start`.
    pub x86_ap_start: Param,
    /// x86 (2023) `online_serial`.
    pub x86_online: Param,
    /// x86 `ap_start` of AMD CPUs ([`crate::x86::Vendor::Amd`]), fitted on
    /// [`Fitted::x86_amd_row`].
    pub x86_amd_ap_start: Param,
    /// The record row the AMD AP start-up is fitted on.
    pub x86_amd_row: String,
    /// powerpc `online_serial`.
    pub ppc_online: Param,
    /// powerpc `lookup`.
    pub ppc_lookup: Param,
    /// arm64 `ap_start`.
    pub arm64_ap_start: Param,
    /// arm64 `online_serial`.
    pub arm64_online: Param,
    /// arm64 per firmware family: the costs fitted on each family's fit row
    /// (the default pair above is [`ARM64_FIT_ROW`]'s family).
    pub arm64_firmware: Vec<Arm64Firmware>,
    /// arm64: how much longer a CPU on a socket other than the boot CPU's
    /// takes, fitted on the record's fit rows that time both sockets.
    pub arm64_remote: RemoteFactor,
    /// arm64 `remote_hop` of the default family ([`ARM64_FIT_ROW`]'s).
    pub arm64_remote_hop: Param,
    /// The assumed costs the fit was made with.
    pub assumptions: Assumptions,
    /// The real mask code's work on the fitting machines, for the record.
    pub evidence: Vec<(String, Ops)>,
}

impl Fitted {
    /// One fitted parameter, as a cost-table row names it.
    pub fn param(&self, which: FitParam) -> &Param {
        match which {
            FitParam::X86_2010Calibrate => &self.x86_2010_calibrate,
            FitParam::X86_2010Online => &self.x86_2010_online,
            FitParam::X86ApStart => &self.x86_ap_start,
            FitParam::X86Online => &self.x86_online,
            FitParam::PpcOnline => &self.ppc_online,
            FitParam::PpcLookup => &self.ppc_lookup,
            FitParam::Arm64ApStart => &self.arm64_ap_start,
            FitParam::Arm64Online => &self.arm64_online,
            FitParam::Arm64RemoteHop => &self.arm64_remote_hop,
        }
    }
}

/// Fits every free parameter with the assumed costs at their stated values
/// (computed once per process). A cost table is made from the result
/// ([`crate::costs::CostTable::for_platform`]); a mask-engine error is the
/// fit's error, never zero work.
pub fn fitted() -> Result<Fitted, SimError> {
    static FIT: OnceLock<Result<Fitted, SimError>> = OnceLock::new();
    FIT.get_or_init(|| fitted_with(&Assumptions::default()))
        .clone()
}

/// Fits every free parameter given the assumed costs `a`: the free parameters
/// absorb whatever the assumptions leave of each measurement, so a changed
/// assumption changes the fit (see `assumed_costs_move_only_the_rows_that_say_so`
/// in [`crate::validate`]).
pub fn fitted_with(a: &Assumptions) -> Result<Fitted, SimError> {
    let work = work()?;
    let (x86_2010_calibrate, x86_2010_online) = x86_2010(a, work);
    let (x86_ap_start, x86_online) = x86(a, work);
    let (x86_amd_row, x86_amd_ap_start) = x86_amd(a, work, &x86_online)?;
    let (ppc_lookup, ppc_online) = powerpc(a, work);
    for (name, p) in [
        ("x86-2010 calibrate", &x86_2010_calibrate),
        ("x86-2010 online_serial", &x86_2010_online),
        ("x86 ap_start", &x86_ap_start),
        ("x86 online_serial", &x86_online),
        ("x86 AMD ap_start", &x86_amd_ap_start),
        ("powerpc lookup", &ppc_lookup),
        ("powerpc online_serial", &ppc_online),
    ] {
        positive(name, p)?;
    }
    let (arm64_firmware, arm64_remote) = arm64(a, work)?;
    for f in &arm64_firmware {
        positive(&format!("arm64 {} online_serial", f.firmware), &f.online)?;
    }
    let default = arm64_firmware
        .iter()
        .find(|f| f.row.split(", ").any(|r| r == ARM64_FIT_ROW))
        .ok_or_else(|| {
            SimError::Record(crate::record::RecordError::Row {
                id: ARM64_FIT_ROW.to_string(),
                message: "the arm64 fit needs this row with role = \"fit\"".to_string(),
            })
        })?;
    let (arm64_ap_start, arm64_online) = (default.ap_start.clone(), default.online.clone());
    let arm64_remote_hop = default.remote_hop.clone();
    Ok(Fitted {
        x86_2010_calibrate,
        x86_2010_online,
        x86_ap_start,
        x86_online,
        x86_amd_ap_start,
        x86_amd_row,
        ppc_online,
        ppc_lookup,
        arm64_ap_start,
        arm64_online,
        arm64_firmware,
        arm64_remote,
        arm64_remote_hop,
        assumptions: *a,
        evidence: work.evidence(),
    })
}

/// The real mask code's work on every fitting machine: the one expensive part
/// of the fit, and independent of every cost, so it is counted once.
struct Work {
    /// Seed 002's 12/16/32-CPU boxes, scoped.
    x86_2010: Vec<(SeedMachine, Ops)>,
    /// Seed 003's server, scoped.
    x86: Ops,
    /// Seed 000's LPAR, naive (extrapolated, exact) and scoped.
    ppc_naive: Ops,
    ppc_scoped: Ops,
    /// The record's arm64 fitting machines: each row, its CPUs, scoped work.
    arm64: Result<Vec<FitRowWork>, crate::record::RecordError>,
    /// The record's x86 AMD fitting machines, likewise.
    x86_amd: Result<Vec<FitRowWork>, crate::record::RecordError>,
}

impl Work {
    fn evidence(&self) -> Vec<(String, Ops)> {
        let mut e: Vec<(String, Ops)> = self
            .x86_2010
            .iter()
            .map(|(m, o)| (format!("{} scoped", m.name()), *o))
            .collect();
        e.push((
            format!("{} scoped", SeedMachine::X86_2n128.name()),
            self.x86,
        ));
        let lpar = SeedMachine::Power8Lpar1024.name();
        e.push((format!("{lpar} naive"), self.ppc_naive));
        e.push((format!("{lpar} scoped"), self.ppc_scoped));
        for rows in [&self.arm64, &self.x86_amd].into_iter().flatten() {
            for (row, _, ops) in rows {
                e.push((format!("{} scoped", row.id), *ops));
            }
        }
        e
    }
}

fn work() -> Result<&'static Work, SimError> {
    static WORK: OnceLock<Result<Work, SimError>> = OnceLock::new();
    WORK.get_or_init(count_work).as_ref().map_err(Clone::clone)
}

fn count_work() -> Result<Work, SimError> {
    let mut x86_2010 = Vec::new();
    for c in &SEED_002[..3] {
        x86_2010.push((c.machine, ops_of(c.machine, Algo::Scoped)?));
    }
    let lpar = SeedMachine::Power8Lpar1024;
    Ok(Work {
        x86_2010,
        x86: ops_of(SeedMachine::X86_2n128, Algo::Scoped)?,
        // Counted by the cubic through smaller real runs (exact; checked
        // against the full run on this very machine by
        // `naive_extrapolation_is_exact`).
        ppc_naive: masks::naive_ops_extrapolated(&lpar.shape())?,
        ppc_scoped: ops_of(lpar, Algo::Scoped)?,
        arm64: fit_rows_work("arm64")?,
        x86_amd: fit_rows_work("x86")?,
    })
}

/// One record fit row, its secondary CPUs and its scoped mask work.
type FitRowWork = (crate::record::Row, f64, Ops);

/// The record's fitting rows of `platform` (every row with role `fit`; on
/// x86 those of a vendor other than seed 003's) and their work; a record
/// error is kept for the fit to report, a mask-engine error fails the count.
fn fit_rows_work(
    platform: &str,
) -> Result<Result<Vec<FitRowWork>, crate::record::RecordError>, SimError> {
    let rows = match crate::record::load() {
        Ok(rows) => rows,
        Err(e) => return Ok(Err(e)),
    };
    let mut work = Vec::new();
    for row in rows {
        let Some(sim) = &row.sim else { continue };
        if sim.role != crate::record::Role::Fit || sim.platform.as_str() != platform {
            continue;
        }
        let [packages, cores, threads] = sim.shape;
        let shape = if platform == "x86" {
            if row.id == "x86-128-2node-seed003" {
                continue;
            }
            topology::Shape {
                numbering: topology::Numbering::ThreadsLast,
                ..topology::Shape::simple(topology::Arch::X86_64, packages, cores, threads)
            }
        } else {
            topology::Shape::simple(topology::Arch::Arm64, packages, cores, threads)
        };
        let topo = shape
            .build()
            .map_err(|e| SimError::Masks(format!("{e:?}")))?;
        let n = (topo.present().weight() - 1) as f64;
        let ops = masks::total_ops(&topo, Algo::Scoped)?;
        work.push((row, n, ops));
    }
    Ok(Ok(work))
}

fn needs(row: &crate::record::Row, what: &str) -> crate::record::RecordError {
    let platform = row.sim.as_ref().map_or("", |s| s.platform.as_str());
    crate::record::RecordError::Row {
        id: row.id.clone(),
        message: format!("the {platform} fit needs {what}"),
    }
}

fn ops_of(machine: SeedMachine, algo: Algo) -> Result<Ops, SimError> {
    masks::total_ops(&machine.topology(), algo)
}

fn fitted_on(s: &str) -> Source {
    Source::Fitted(s.to_string())
}

/// x86-2010 (`calibrate`, `online_serial`), fitted on seed 002's small boxes.
fn x86_2010(a: &Assumptions, work: &Work) -> (Param, Param) {
    let small = &SEED_002[..3];
    let cpus: f64 = small
        .iter()
        .map(|c| (c.machine.shape().cpus() - 1) as f64)
        .sum();
    let after_sum: f64 = small.iter().map(|c| c.after.window_s()).sum();
    let before_sum: f64 = small.iter().map(|c| c.before.window_s()).sum();
    let table = partial_table(a, a.local_lookup_ns);
    let mask_ns: f64 = work
        .x86_2010
        .iter()
        .map(|(_, ops)| masks::price(ops, &table))
        .sum();
    let per_cpu_after_ns = after_sum * 1e9 / cpus;
    let online = per_cpu_after_ns - X86_2010_KICK_NS - X86_2010_TSC_NS - mask_ns / cpus;
    let calibrate = (before_sum - after_sum) * 1e9 / cpus;
    (
        Param {
            ns: calibrate,
            source: fitted_on(
                "seed 002, 12/16/32-CPU boxes: Σ(before − after bring-up windows) / Σ CPUs",
            ),
        },
        Param {
            ns: online,
            source: fitted_on(
                "seed 002, 12/16/32-CPU boxes' after-logs: Σ windows / Σ CPUs − 11 ms kick − 20 ms TSC check − mask work",
            ),
        },
    )
}

/// x86 today (`ap_start`, `online_serial`), fitted in-sample on seed 003's
/// server: its serial run (700 ms, in which the first CPU of the second
/// package calibrates and runs the TSC check) and its parallel run without
/// any calibration (30 ms, [`SEED_003_REUSE_S`]). The calibration and the
/// TSC check are code constants ([`crate::costs::direct_calibration_ns`] at
/// Kconfig's default HZ, [`X86_TSC_NS`]), so the 100 ms parallel run with the
/// calibration is left over as an in-sample check.
fn x86(a: &Assumptions, work: &Work) -> (Param, Param) {
    let shape = SeedMachine::X86_2n128.shape();
    let n = (shape.cpus() - 1) as f64;
    let further_packages = (shape.packages - 1) as f64;
    let mask_per_cpu = masks::price(&work.x86, &partial_table(a, a.local_lookup_ns)) / n;
    let k = X86_KICK_NS;
    let once = further_packages * (direct_calibration_ns(DEFAULT_HZ) + X86_TSC_NS);
    let tsc = further_packages * X86_TSC_NS;
    let serial_ns = SEED_003_SERIAL_S * 1e9 - once;
    let parallel_ns = SEED_003_REUSE_S * 1e9 - tsc;
    // Serial: n·(k + a + r) = T_s.  Parallel: max(n·k, k + a) + n·r = T_p.
    let s = serial_ns / n - k; // a + r
    let mut r = (parallel_ns - n * k) / n;
    let mut ap = s - r;
    if k + ap > n * k {
        r = (parallel_ns - k - s) / (n - 1.0);
        ap = s - r;
    }
    let source = "seed 003, 128-CPU server, 700 ms serial & 30 ms parallel without \
         calibration, less one delay calibration and one 20 ms TSC check (in-sample)";
    (
        Param {
            ns: ap,
            source: fitted_on(source),
        },
        Param {
            ns: r - mask_per_cpu,
            source: fitted_on(source),
        },
    )
}

/// x86 `ap_start` of AMD CPUs, fitted on the record's one x86 `fit` row
/// that names vendor amd: its per-CPU interval less the kick (code), the
/// serialized online work fitted on seed 003 (kernel work, the same on either
/// vendor), the priced mask work, its console if it states one, the 2 ms
/// TSC check of every AP whose package has a CPU online (AMD CPUs have no
/// TSC_ADJUST) and the per-package costs its kernel runs (one 20 ms TSC
/// check and, where the row says the first CPU of a further package
/// calibrates, one `calibrate_delay_converge()` per further package), which
/// on a single-package row are none.
fn x86_amd(a: &Assumptions, work: &Work, online: &Param) -> Result<(String, Param), SimError> {
    let rows = work
        .x86_amd
        .as_ref()
        .map_err(|e| SimError::Record(e.clone()))?;
    let amd: Vec<&FitRowWork> = rows
        .iter()
        .filter(|(r, _, _)| r.sim.as_ref().and_then(|s| s.vendor().ok()) == Some(Vendor::Amd))
        .collect();
    let &[(row, n, ops)] = amd.as_slice() else {
        return Err(SimError::Fit(format!(
            "x86 AMD ap_start needs one x86 record row with role = \"fit\" and vendor = \"amd\", \
             found {}",
            amd.len()
        )));
    };
    let spec = row.sim.as_ref().ok_or_else(|| needs(row, "a sim spec"))?;
    let per_cpu = row.per_cpu_s.ok_or_else(|| needs(row, "per_cpu_s"))? * 1e9;
    let mask_per_cpu = masks::price(ops, &partial_table(a, a.local_lookup_ns)) / n;
    let hz = spec.hz.unwrap_or(DEFAULT_HZ);
    let calibrations = match spec.calibrate().map_err(|m| needs(row, &m))? {
        Some(Calibrate::OncePerPackage) => 1.0,
        Some(Calibrate::Skip) | None => 0.0,
        Some(other) => {
            return Err(SimError::Record(needs(
                row,
                &format!("calibrate once-per-package or skip, not {other}"),
            )))
        }
    };
    let further_packages = (spec.shape[0] - 1) as f64;
    let per_package =
        X86_TSC_NS + calibrations * converge_calibration_ns(hz, crate::costs::X86_NOMINAL_MHZ);
    // Without TSC_ADJUST every other AP runs the short check
    // (crate::costs::CostTable::for_vendor).
    let siblings_tsc = (n - further_packages) * X86_TSC_SIBLING_NS;
    let console = match (spec.console_baud, spec.console_chars_per_cpu) {
        (Some(baud), Some(chars)) => chars * crate::costs::UART_FRAME_BITS * 1e9 / baud as f64,
        _ => 0.0,
    };
    let ap_start = per_cpu
        - X86_KICK_NS
        - online.ns
        - mask_per_cpu
        - console
        - (further_packages * per_package + siblings_tsc) / n;
    let text = format!(
        "record {}: per-CPU interval {:.3} ms − the {:.0} us kick − seed 003's {:.3} ms of \
         serialized online work − mask work − the {:.0} ms TSC check every AP of a package \
         with a CPU online runs without TSC_ADJUST{}; the AP's answer to INIT/SIPI/SIPI is its CPU's \
         and firmware's ('350us to 3.5ms depending on vendor and CPU type, BIOS microcode \
         size', Thomas Gleixner, [patch V2 00/38] cpu/hotplug, x86: Reworked parallel CPU \
         bringup), so it is fitted per vendor",
        row.id,
        per_cpu / 1e6,
        X86_KICK_NS / 1e3,
        online.ns / 1e6,
        X86_TSC_SIBLING_NS / 1e6,
        if further_packages > 0.0 {
            " − the further packages' TSC checks and calibrations"
        } else {
            ""
        },
    );
    Ok((
        row.id.clone(),
        Param {
            ns: ap_start,
            source: fitted_on(&text),
        },
    ))
}

/// powerpc (`lookup`, `online_serial`), fitted on seed 000's 1024-CPU LPAR only.
fn powerpc(a: &Assumptions, work: &Work) -> (Param, Param) {
    let n = (SeedMachine::Power8Lpar1024.shape().cpus() - 1) as f64;
    let (naive, scoped) = (&work.ppc_naive, &work.ppc_scoped);
    let other = |o: &Ops| masks::price_without_lookups(o, a.scan_ns, a.bit_op_ns);
    let dl = naive.property_lookups as f64 - scoped.property_lookups as f64;
    let t_n = SEED_000_LPAR_NAIVE_S * 1e9;
    let t_s = SEED_000_LPAR_SCOPED_S * 1e9;
    // With no difference in look-ups the quotient is infinite or NaN, which
    // `positive` reports as the fit's error.
    let lookup = (t_n - t_s - (other(naive) - other(scoped))) / dl;
    let online = (t_s - lookup * scoped.property_lookups as f64 - other(scoped)) / n - PPC_KICK_NS;
    (
        Param {
            ns: lookup,
            source: fitted_on(
                "seed 000, 1024-CPU LPAR: (233.0 s − 3.71 s) / (naive − scoped property look-ups)",
            ),
        },
        Param {
            ns: online,
            source: fitted_on(
                "seed 000, 1024-CPU LPAR, scoped run 3.71 s, minus its priced mask work",
            ),
        },
    )
}

/// A fitted cost must be a positive, finite time: anything else means the
/// assumptions or the mask work leave nothing (or less than nothing) of the
/// measurement, and is the fit's error rather than a cost of zero.
fn positive(name: &str, p: &Param) -> Result<(), SimError> {
    if p.ns.is_finite() && p.ns > 0.0 {
        Ok(())
    } else {
        Err(SimError::Fit(format!(
            "{name} comes out at {} ns ({}): not a positive cost",
            p.ns, p.source
        )))
    }
}

/// The record row the arm64 fit uses.
pub const ARM64_FIT_ROW: &str = "arm64-altra-80";

/// One arm64 firmware family's fitted costs. The firmware that answers
/// PSCI CPU_ON is what the arm64 logs differ in most (see
/// [`crate::validate`]'s arm64 reason), so a fitted cost carries only to
/// boards whose record rows name the same `sim.firmware`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Arm64Firmware {
    /// The family, as the rows' `sim.firmware` names it.
    pub firmware: String,
    /// The record rows fitted on, joined by ", ".
    pub row: String,
    /// `ap_start` for the family's boards.
    pub ap_start: Param,
    /// `online_serial` for the family's boards.
    pub online: Param,
    /// `remote_hop` for the family's boards: [`Fitted::arm64_remote`]'s
    /// factor applied to the family's own interval.
    pub remote_hop: Param,
}

/// The factor by which a CPU on a socket other than the boot CPU's takes
/// longer to bring up than one on the boot CPU's socket, as the record's
/// fit rows with `package_stamps` time it in one log.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RemoteFactor {
    /// Remote over local per-CPU interval (mean over the fit rows).
    pub factor: f64,
    /// The record rows fitted on, joined by ", ".
    pub row: String,
}

impl Fitted {
    /// The fitted costs of the arm64 firmware family `firmware`, if one of
    /// its rows is a fit row.
    pub fn arm64_for(&self, firmware: &str) -> Option<&Arm64Firmware> {
        self.arm64_firmware.iter().find(|f| f.firmware == firmware)
    }
}

/// What TF-A's Raspberry Pi platform does for CPU_ON, for the fitted
/// source of a family whose rows name it.
const RPI_CPU_ON: &str = "Trusted Firmware-A's Raspberry Pi platform answers CPU_ON by \
     releasing a core it holds in a wait loop (plat/rpi/common/rpi3_pm.c \
     rpi3_pwr_domain_on(): a mailbox write, dsb, sev; plat/rpi/rpi5 builds it), so no \
     firmware power-up lies in this gap: it is the kernel's own per-CPU work, the previous \
     CPU's online states after its 'Booted' line, the control CPU's prepare states for the \
     next (kthreads, workqueue workers) and the next CPU's entry up to \
     secondary_start_kernel";

/// arm64 (`ap_start`, `online_serial`) per firmware family, each the mean
/// over its family's `fit` rows of the public record; [`ARM64_FIT_ROW`]'s
/// family gives the platform's default. Every other arm64 row is predicted.
/// Phases: each row's intervals ([`arm64_member`]), grouped by family; the
/// remote-socket factor over the rows that time a second socket
/// ([`arm64_remote`]); then each family's mean ([`arm64_family`]).
fn arm64(a: &Assumptions, work: &Work) -> Result<(Vec<Arm64Firmware>, RemoteFactor), SimError> {
    let rows = work
        .arm64
        .as_ref()
        .map_err(|e| SimError::Record(e.clone()))?;
    let mut families: Vec<(String, Vec<Arm64Member>)> = Vec::new();
    let mut remote_factors: Vec<RemoteRow> = Vec::new();
    for (row, n, ops) in rows {
        let (firmware, member, remote) = arm64_member(a, row, *n, ops)?;
        remote_factors.extend(remote);
        match families.iter_mut().find(|(f, _)| *f == firmware) {
            Some((_, members)) => members.push(member),
            None => families.push((firmware, vec![member])),
        }
    }
    let (remote, remote_text) = arm64_remote(&remote_factors)?;
    let fits = families
        .into_iter()
        .map(|(firmware, members)| arm64_family(firmware, &members, &remote, &remote_text))
        .collect();
    Ok((fits, remote))
}

/// One arm64 fit row: the row, the per-CPU interval fitted on, `ap_start`
/// and the AP side (ns).
type Arm64Member<'a> = (&'a crate::record::Row, f64, f64, f64);

/// A fit row that times each socket apart: its id, remote over local
/// interval, the local interval and each remote one (s).
type RemoteRow<'a> = (&'a str, f64, f64, Vec<f64>);

/// One arm64 fit row's firmware family and intervals: the per-CPU interval
/// (on the boot CPU's socket when the row times each socket apart, which
/// then also gives a remote factor) less the AP side, the kick, the mask
/// work and a pre-5.7 kernel's kthread waits is `ap_start`.
fn arm64_member<'a>(
    a: &Assumptions,
    row: &'a crate::record::Row,
    n: f64,
    ops: &Ops,
) -> Result<(String, Arm64Member<'a>, Option<RemoteRow<'a>>), SimError> {
    let sim = row.sim.as_ref();
    let firmware = sim
        .and_then(|s| s.firmware.clone())
        .ok_or_else(|| needs(row, "sim.firmware on its fit row"))?;
    let kernel = crate::arm64::Kernel::parse(sim.and_then(|s| s.linux.as_deref()))
        .map_err(|m| SimError::Record(needs(row, &m)))?;
    let waits = crate::arm64::prepare(kernel, sim.and_then(|s| s.hz)).map_or(0.0, |p| p.ns);
    // A row timing each socket apart fits the family on the boot CPU's
    // socket and the remote factor on the others.
    let packages = crate::record::package_per_cpu_s(row);
    let mut remote_row = None;
    let per_cpu = match packages.split_first() {
        Some((&local, remote)) => {
            let k = remote.iter().map(|r| r / local).sum::<f64>() / remote.len() as f64;
            remote_row = Some((row.id.as_str(), k, local, remote.to_vec()));
            local * 1e9
        }
        None => row.per_cpu_s.ok_or_else(|| needs(row, "per_cpu_s"))? * 1e9,
    };
    let ap_side = row.ap_side_s.ok_or_else(|| needs(row, "ap_side_s"))? * 1e9;
    let mask_per_cpu = masks::price(ops, &partial_table(a, a.local_lookup_ns)) / n;
    let ap_start = per_cpu - ap_side - ARM64_KICK_NS - mask_per_cpu - waits;
    if ap_start <= ARM64_ON_FINISH_NS {
        return Err(SimError::Record(needs(
            row,
            "a per-CPU interval longer than its AP side, the kick and the firmware's own part",
        )));
    }
    Ok((firmware, (row, per_cpu, ap_start, ap_side), remote_row))
}

/// The remote-socket factor, the mean over the rows that time a second
/// socket, and each such row's figures in words.
fn arm64_remote(remote_factors: &[RemoteRow]) -> Result<(RemoteFactor, Vec<String>), SimError> {
    if remote_factors.is_empty() {
        return Err(SimError::Record(crate::record::RecordError::Row {
            id: ARM64_FIT_ROW.to_string(),
            message: "the arm64 fit needs a fit row whose package_stamps time a second socket"
                .to_string(),
        }));
    }
    let remote = RemoteFactor {
        factor: remote_factors.iter().map(|f| f.1).sum::<f64>() / remote_factors.len() as f64,
        row: remote_factors
            .iter()
            .map(|f| f.0)
            .collect::<Vec<_>>()
            .join(", "),
    };
    let remote_text: Vec<String> = remote_factors
        .iter()
        .map(|(id, k, local, others)| {
            let others: Vec<String> = others.iter().map(|o| format!("{:.2}", o * 1e3)).collect();
            format!(
                "{id}: {:.2} ms a CPU on the boot CPU's socket, {} ms on the other, {k:.3}x",
                local * 1e3,
                others.join(", ")
            )
        })
        .collect();
    Ok((remote, remote_text))
}

/// One firmware family's fitted costs: the means of its rows' `ap_start`
/// and AP side, and the remote hop the remote factor gives on them.
fn arm64_family(
    firmware: String,
    members: &[Arm64Member],
    remote: &RemoteFactor,
    remote_text: &[String],
) -> Arm64Firmware {
    let k = members.len() as f64;
    let ap_start = members.iter().map(|m| m.2).sum::<f64>() / k;
    let ap_side = members.iter().map(|m| m.3).sum::<f64>() / k;
    let ids: Vec<&str> = members.iter().map(|m| m.0.id.as_str()).collect();
    let intervals: Vec<String> = members
        .iter()
        .map(|(_, per_cpu, _, side)| {
            format!("{:.1} us − AP side {:.1} us", per_cpu / 1e3, side / 1e3)
        })
        .collect();
    let what = if firmware == RPI_FIRMWARE {
        RPI_CPU_ON.to_string()
    } else {
        format!(
            "of it, {:.1} us is TF-A's own power-on path on the AP (its 'on finisher', \
             12.4-13.2 us on Neoverse N1, docs/perf/psci-performance-n1sdp.rst), the rest \
             the power controller, the kernel's entry up to secondary_start_kernel and the \
             boot CPU's cpuhp preparation",
            ARM64_ON_FINISH_NS / 1e3
        )
    };
    let mean = if members.len() > 1 { "mean of " } else { "" };
    let text = format!(
        "record {}: {mean}per-CPU 'Booted' interval ({}) − the SMC − mask work; {what}",
        ids.join(", "),
        intervals.join("; "),
    );
    let row = ids.join(", ");
    let remote_hop = (remote.factor - 1.0) * (ARM64_KICK_NS + ap_start + ap_side);
    Arm64Firmware {
        firmware,
        row: row.clone(),
        ap_start: Param {
            ns: ap_start,
            source: fitted_on(&text),
        },
        online: Param {
            ns: ap_side,
            source: fitted_on(&format!(
                "record {row}: {mean}AP's 'Detected … I-cache' → 'Booted' interval"
            )),
        },
        remote_hop: Param {
            ns: remote_hop,
            source: fitted_on(&format!(
                "record {}: a CPU on a socket other than the boot CPU's takes {:.3}x the \
                 local per-CPU interval ({}); charged per remote hop (10 SLIT units) as \
                 (factor - 1) x (kick + ap_start + online_serial) of this family ({row})",
                remote.row,
                remote.factor,
                remote_text.join("; ")
            )),
        },
    }
}

/// The `sim.firmware` name of Trusted Firmware-A's Raspberry Pi platform.
pub const RPI_FIRMWARE: &str = "tf-a-rpi";

/// The non-fitted per-operation prices, for pricing mask work during the fit.
fn partial_table(a: &Assumptions, lookup_ns: f64) -> crate::costs::CostTable {
    let p = |ns| Param {
        ns,
        source: Source::Assumed("fit-time price"),
    };
    crate::costs::CostTable {
        platform: crate::Platform::X86,
        kick_bsp: p(0.0),
        vm_exit: p(0.0),
        x2apic_visit: p(0.0),
        ap_start: p(0.0),
        microcode: p(0.0),
        remote_hop: p(0.0),
        percpu_area: p(0.0),
        prepare: p(0.0),
        tsc_sync: p(0.0),
        tsc_skip_clustered: false,
        tsc_sibling: p(0.0),
        calibrate: p(0.0),
        online_serial: p(0.0),
        console: p(0.0),
        lookup: p(lookup_ns),
        scan: p(a.scan_ns),
        bit_op: p(a.bit_op_ns),
        cpu_mhz: 0.0,
        jitter: 0.0,
        guest: false,
        primary_threads_first: false,
        microcode_before_alive: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The seed mail whose file name starts with `prefix`, from `shared/seeds`
    /// beside the repository. A missing seed fails the test: these tests are
    /// the only link between the fitted constants and the seeds' text.
    fn seed_text(prefix: &str) -> String {
        readers::corpus::seed_text(env!("CARGO_MANIFEST_DIR"), prefix)
    }

    /// Every timestamp in [`SEED_002`] appears in the seed's mail, on a line of the
    /// kind the field says.
    #[test]
    fn seed_002_constants_match_the_mail() {
        let text = seed_text("002_");
        let stamp = |s: f64| format!("[{:12.6}]", s);
        let has = |s: f64, what: &str| {
            text.lines()
                .any(|l| l.trim_start().starts_with(&stamp(s)) && l.contains(what))
        };
        for c in SEED_002 {
            for log in [c.before, c.after] {
                assert!(has(log.first_booting_s, "Booting Node   0"), "{log:?}");
                assert!(has(log.brought_up_s, "Brought up"), "{log:?}");
                assert!(has(log.total_s, "processors activated"), "{log:?}");
            }
        }
    }

    #[test]
    fn seed_000_constants_match_the_mail() {
        let text = seed_text("000_");
        for s in ["233.354676", "0.354971", "4.059859", "0.351703"] {
            assert!(text.contains(s), "{s}");
        }
        assert!(text.contains("30 mins to 6 seconds"));
        // The SMT-switch medians: the Median column of each table's rows.
        let median = |table: &str, row: &str| -> f64 {
            let head = format!("ppc64_cpu --{table} kernel N Min Max Median Avg Stddev");
            let rest = &text[text.find(&head).unwrap_or_else(|| panic!("{head}"))..];
            let at = rest
                .find(&format!("{row} 100 "))
                .unwrap_or_else(|| panic!("{row}"));
            rest[at..]
                .split_whitespace()
                .nth(4)
                .unwrap()
                .parse()
                .unwrap()
        };
        assert_eq!(median("smt=1", "powerpc/next"), SEED_000_SMT1_BEFORE_S);
        assert_eq!(median("smt=1", "+patchset"), SEED_000_SMT1_AFTER_S);
        assert_eq!(median("smt=8", "powerpc/next"), SEED_000_SMT8_BEFORE_S);
        assert_eq!(median("smt=8", "+patchset"), SEED_000_SMT8_AFTER_S);
        let text_002 = seed_text("002_");
        assert!(text_002.contains("we reduced that to 75 seconds"));
    }

    /// The fitted values are physically sensible: positive, and the calibration
    /// close to the ~62 ms the after-logs show between "Brought up" and "Total of"
    /// (an independent reading of the same quantity, not used by the fit).
    #[test]
    fn fitted_values_are_plausible() {
        let f = fitted().unwrap();
        for p in [
            &f.x86_2010_calibrate,
            &f.x86_2010_online,
            &f.x86_ap_start,
            &f.x86_online,
            &f.ppc_online,
            &f.arm64_ap_start,
            &f.arm64_online,
        ] {
            assert!(p.ns > 0.0, "{p:?}");
        }
        let tail_ms: Vec<f64> = SEED_002[..3]
            .iter()
            .map(|c| (c.after.total_s - c.after.brought_up_s) * 1e3)
            .collect();
        let cal_ms = f.x86_2010_calibrate.ns / 1e6;
        for t in tail_ms {
            assert!(
                (cal_ms / t - 1.0).abs() < 0.25,
                "calibrate {cal_ms} ms vs tail {t} ms"
            );
        }
    }

    /// An assumed price so high that the mask work alone exceeds a measured
    /// window leaves a negative remainder: the fit reports it, naming the
    /// parameter, instead of clamping it to a cost of zero.
    #[test]
    fn a_fit_that_leaves_nothing_is_an_error() {
        let absurd = Assumptions::default().scaled("bit_op", 1e9).unwrap();
        let e = fitted_with(&absurd).unwrap_err();
        assert!(
            matches!(&e, SimError::Fit(m) if m.contains("online_serial")),
            "{e}"
        );
    }
}
