//! The occupancy picture, rendered by a real SVG renderer (`resvg`, through
//! `draw::check`) and read back: the cells the renderer found must rebuild,
//! sample by sample and VP by VP, the busy-thread counts the runs recorded; and
//! the picture of seed 001's before/after shows both runs.
mod support;

use place::run::{run, Report};
use place::{Kernel, Lpar, Workload};

fn traced(machine: &str, kernel: Kernel, lpar: Lpar, w: Workload) -> (Report, usize) {
    let m = support::catalogue_machine(machine, kernel, lpar);
    let cfg = support::traced_config(&m, kernel, lpar, w, 32, 3.0);
    let tpv = m.vp_cpus.iter().map(|v| v.len()).max().unwrap();
    (run(&m, &cfg).unwrap(), tpv)
}

/// `busy-<panel>-<vp>-<first>-<samples>-<threads>` ids back into one
/// samples × VPs matrix per panel.
fn rebuild(svg: &str, shapes: &[(usize, usize)]) -> Vec<Vec<Vec<u8>>> {
    let mut out: Vec<Vec<Vec<u8>>> = shapes.iter().map(|&(s, v)| vec![vec![0; v]; s]).collect();
    for id in svg.split("id=\"busy-").skip(1) {
        let id = &id[..id.find('"').unwrap()];
        let f: Vec<usize> = id.split('-').map(|x| x.parse().unwrap()).collect();
        let [panel, vp, first, n, busy] = f[..] else {
            panic!("bad id {id}")
        };
        for row in &mut out[panel][first..first + n] {
            assert_eq!(row[vp], 0, "cell drawn twice: {id}");
            row[vp] = busy as u8;
        }
    }
    out
}

#[test]
fn picture_shows_exactly_the_recorded_occupancy() {
    let p10 = "power10-shared-768";
    let (before, tpv) = traced(p10, Kernel::V6_6, Lpar::Shared, Workload::Ebizzy);
    let (after, _) = traced(p10, Kernel::V6_8, Lpar::Shared, Workload::Ebizzy);
    // Occupancy that changes from sample to sample, between different
    // non-zero counts too: message pairs waking each other.
    let pairs = Workload::Hackbench { burst_us: 100 };
    let (busy, tpv2) = traced(p10, Kernel::V6_8, Lpar::Shared, pairs);
    let svg = place::svg::occupancy_svg(&[(&before, tpv), (&after, tpv), (&busy, tpv2)]);
    let c = draw::check(&svg).expect("renders");
    assert!(c.width >= 400 && c.height >= 200, "{c:?}");
    assert!(c.inked > 1000, "nothing drawn: {c:?}");
    assert!(
        c.texts > 4,
        "no text rendered (is a font installed?): {c:?}"
    );
    let cells = svg.matches("id=\"busy-").count();
    assert_eq!(c.count("busy"), cells, "renderer dropped cells");
    let shapes: Vec<(usize, usize)> = [&before, &after, &busy]
        .iter()
        .map(|r| (r.trace.len(), r.trace[0].len()))
        .collect();
    let got = rebuild(&svg, &shapes);
    assert!(!before.trace.is_empty());
    assert_eq!(got[0], before.trace, "6.6 panel");
    assert_eq!(got[1], after.trace, "6.8 panel");
    let changes = busy.trace.windows(2).filter(|w| w[0] != w[1]).count();
    assert!(changes > 0, "the hackbench run's occupancy never changed");
    assert_eq!(got[2], busy.trace, "hackbench panel");
}
