//! The pictures, rendered by a real SVG renderer (`resvg`, through
//! `draw::check`) and checked for content against the model they draw: one box
//! per PU, core, package and NUMA node of the topology; asym packing where seed
//! 001 puts it; both runs' curves and phases in the boot comparison. And the
//! README's pictures (docs/*.svg, made by scripts/pictures.sh) are current.
mod common;

use std::path::{Path, PathBuf};

use common::manycore;
use topology::LevelKind;

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("pictures");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Runs manycore with `args` then `file`, and returns the file's content.
fn picture(args: &[&str], file: &Path) -> Vec<u8> {
    let mut all: Vec<&str> = args.to_vec();
    all.push(file.to_str().unwrap());
    let out = manycore(&all);
    assert!(
        out.status.success(),
        "{all:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read(file).unwrap()
}

fn checked(svg: &[u8], what: &str) -> draw::Checked {
    let svg = std::str::from_utf8(svg).unwrap_or_else(|e| panic!("{what}: {e}"));
    let c = draw::check(svg).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(c.width >= 100 && c.height >= 100, "{what}: {c:?}");
    assert!(c.inked > 1000, "{what}: nothing drawn: {c:?}");
    assert!(
        c.texts > 0,
        "{what}: no text rendered (is a font installed?)"
    );
    c
}

/// Unfolded pictures have exactly one box per object of the model: PUs,
/// cores, packages, NUMA nodes, and n × n distance cells.
#[test]
fn topology_pictures_have_one_box_per_object() {
    let mut cases: Vec<(String, Vec<&str>)> =
        ["x86-2s-16", "x86-2s-32ht", "arm64-d06", "power9-lpar-128"]
            .iter()
            .map(|m| (m.to_string(), vec!["--machine", m]))
            .collect();
    for s in ["package:2 numa:2 l3:2 core:4 pu:2", "numa:3 pu:5"] {
        cases.push((s.to_string(), vec!["--synthetic", s]));
    }
    for (what, source) in &cases {
        let t = match source[0] {
            "--machine" => readers::catalogue::machine(source[1]).unwrap(),
            _ => readers::synthetic::parse(source[1]).unwrap(),
        };
        let mut args = vec!["topo"];
        args.extend(source);
        args.extend(["--format", "svg", "--output"]);
        let c = checked(&picture(&args, &scratch("topo.svg")), what);
        assert_eq!(c.count("fold"), 0, "{what}: folded");
        assert_eq!(c.count("pu"), t.cpus().len(), "{what}: PUs");
        assert_eq!(c.count("core"), t.count(LevelKind::Core), "{what}: cores");
        assert_eq!(
            c.count("package"),
            t.count(LevelKind::Package),
            "{what}: packages"
        );
        assert_eq!(c.count("numanode"), t.nodes().len(), "{what}: NUMA nodes");
        let n = if t.has_distances() {
            t.nodes().len()
        } else {
            0
        };
        assert_eq!(c.count("dist"), n * n, "{what}: distance cells");
    }
}

/// 16384 PUs fold into a picture a renderer can draw and a person can read:
/// a few dozen boxes, each fold naming what it stands for.
#[test]
fn sixteen_thousand_pus_fold_into_a_readable_picture() {
    let s = "package:16 numa:4 core:128 pu:2";
    let svg = picture(
        &["topo", "--synthetic", s, "--format", "svg", "--output"],
        &scratch("topo-16384.svg"),
    );
    let c = checked(&svg, s);
    assert!(c.count("fold") > 0, "{c:?}");
    assert!(c.count("pu") <= 8, "{c:?}");
    assert!(c.width <= 4000 && c.height <= 4000, "{c:?}");
    let text = String::from_utf8(svg).unwrap();
    assert!(text.contains("16384 PUs online"), "title");
    // The packages fold: one drawn, 15 in one box naming their L# and P#.
    assert!(text.contains("+ 15 × the same"), "package fold");
    assert!(text.contains("Package L#1-15"), "package fold indices");
}

/// PNG is the same picture rasterised.
#[test]
fn png_is_the_svg_rasterised() {
    let png = picture(
        &[
            "topo",
            "--machine",
            "x86-2s-16",
            "--format",
            "png",
            "--output",
        ],
        &scratch("topo.png"),
    );
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
    let svg = picture(
        &[
            "topo",
            "--machine",
            "x86-2s-16",
            "--format",
            "svg",
            "--output",
        ],
        &scratch("topo-for-png.svg"),
    );
    let expected = draw::to_png(std::str::from_utf8(&svg).unwrap()).unwrap();
    assert_eq!(png, expected);
}

/// Seed 001: on a shared-processor POWER10 LPAR Linux 6.8 packs onto fewer big
/// cores, so the domain right above SMT (the big core) and the ones above it
/// have asym packing; a dedicated LPAR has none.
#[test]
fn domains_picture_shows_seed_001_asym_packing() {
    let count = |mode: &str| {
        let args = [
            "domains",
            "--machine",
            "power10-shared-768",
            "--kernel",
            "6.8",
            "--lpar",
            mode,
            "--cpu",
            "0",
            "--svg",
        ];
        let svg = picture(&args, &scratch(&format!("domains-{mode}.svg")));
        let c = checked(&svg, mode);
        (c, String::from_utf8(svg).unwrap())
    };
    let (shared, text) = count("shared");
    let (dedicated, _) = count("dedicated");
    assert!(text.contains("id=\"asym-1\""), "big-core domain not asym");
    assert!(text.contains("id=\"domain-0\""), "SMT domain asym");
    assert!(shared.count("asym") >= 1, "{shared:?}");
    assert_eq!(dedicated.count("asym"), 0, "{dedicated:?}");
    assert_eq!(
        shared.count("asym") + shared.count("domain"),
        dedicated.count("asym") + dedicated.count("domain"),
    );
}

/// Both runs on one axis: two curves, and each run's boot-path phases as
/// segments.
#[test]
fn boot_comparison_draws_both_runs() {
    let args = [
        "boot",
        "--machine",
        "x86-2n-128",
        "--calibrate",
        "lpj=2600000",
        "--compare",
        "serial",
        "parallel",
        "--quiet",
        "--svg",
    ];
    let c = checked(&picture(&args, &scratch("boot.svg")), "boot");
    assert_eq!(c.count("online"), 2, "{c:?}");
    assert!(c.count("phase") >= 4, "{c:?}");
}

/// The README's pictures are what scripts/pictures.sh makes from the code now.
#[test]
fn docs_pictures_are_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let script = std::fs::read_to_string(root.join("scripts/pictures.sh")).unwrap();
    let lines: Vec<&str> = script
        .lines()
        .filter_map(|l| l.strip_prefix("pic "))
        .collect();
    assert!(lines.len() >= 5, "scripts/pictures.sh has no pictures");
    for line in lines {
        let words: Vec<&str> = line.split_whitespace().collect();
        let (file, args) = words.split_first().unwrap();
        let name = Path::new(file).file_name().unwrap().to_str().unwrap();
        let fresh = picture(args, &scratch(name));
        checked(&fresh, file);
        let committed = std::fs::read(root.join(file))
            .unwrap_or_else(|e| panic!("{file}: {e}; run scripts/pictures.sh"));
        assert!(
            fresh == committed,
            "{file} is out of date: run scripts/pictures.sh and commit it"
        );
    }
}

/// One run's timeline: one bar per phase stretch, CPUs down, time across.
#[test]
fn boot_timeline_is_drawn_by_the_same_code() {
    let args = ["boot", "--machine", "x86-2s-16", "--quiet", "--svg"];
    let c = checked(&picture(&args, &scratch("timeline.svg")), "timeline");
    // 15 APs, each at least a start and a calibration stretch.
    assert!(c.count("bar") >= 30, "{c:?}");
}
