//! Twin fidelity: the same HDL-32E drive over the designed demo scene and over the world built
//! from its virtual survey. On beams that hit in both, the ranges agree to within a median of
//! 2 cm and a 95th percentile of 10 cm.

use roadscan_tests::Scratch;
use std::path::Path;
use std::process::{Command, Stdio};

fn run(args: &[&str]) {
    let o =
        Command::new(env!("CARGO_BIN_EXE_roadscan")).args(args).stdin(Stdio::null()).output().expect("run roadscan");
    assert!(o.status.success(), "roadscan {args:?}: {}", String::from_utf8_lossy(&o.stderr));
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// (cast distance, class) per ray of a `--ranges` file.
fn rays(path: &Path) -> Vec<(f64, u8)> {
    let f: Vec<f32> = std::fs::read(path)
        .expect("ranges")
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect();
    f.chunks(3).map(|r| (r[0] as f64, r[2] as u8)).collect()
}

fn quantile(v: &mut [f64], q: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * q).round() as usize]
}

#[test]
fn the_built_world_is_a_twin_of_the_designed_scene() {
    let d = Scratch::new("cli-twin");
    let world = d.join("demo");
    run(&["demo", "--out", s(&world), "-q"]);
    let (truth, built) = (d.join("truth.f32"), d.join("built.f32"));
    // The designed scene (its surface at 1 cm, building fronts, objects) in its own frame...
    run(&["lidar", "-q", "--scene", "demo", "--duration", "0.5", "--ranges", s(&truth)]);
    // ...and the world built from its survey, driven along the same lane of the truth road.
    let truth_road = world.join("survey/truth/road.xodr");
    run(&[
        "lidar",
        "-q",
        "--world",
        s(&world),
        "--path-xodr",
        s(&truth_road),
        "--duration",
        "0.5",
        "--ranges",
        s(&built),
    ]);
    let (a, b) = (rays(&truth), rays(&built));
    assert_eq!(a.len(), b.len());
    assert_eq!(a.len(), 904 * 12 * 32, "0.5 s of an HDL-32E");
    let mut all = Vec::new();
    let mut designed = Vec::new();
    let mut road = Vec::new();
    for ((ra, ca), (rb, _)) in a.iter().zip(&b) {
        if !(ra.is_finite() && rb.is_finite()) {
            continue;
        }
        let e = (ra - rb).abs();
        all.push(e);
        // Class 2 is the ground beyond the designed surface: the survey scene makes it rough,
        // the truth world here flat, so it is no measure of the build.
        if *ca != 2 {
            designed.push(e);
        }
        if *ca == 11 {
            road.push(e);
        }
    }
    let both = all.len();
    assert!(both > a.len() / 2, "{both} of {} beams hit in both", a.len());
    let (m_all, p_all) = (quantile(&mut all, 0.5), quantile(&mut all, 0.95));
    let (m, p) = (quantile(&mut designed, 0.5), quantile(&mut designed, 0.95));
    let (m_road, p_road) = (quantile(&mut road, 0.5), quantile(&mut road, 0.95));
    eprintln!(
        "twin: {both} beams hit in both; all: median {m_all:.4} m, p95 {p_all:.4} m; designed scene: {} beams, median {m:.4} m, p95 {p:.4} m; road surface: {} beams, median {m_road:.4} m, p95 {p_road:.4} m",
        designed.len(),
        road.len()
    );
    assert!(m <= 0.02 && p <= 0.10, "designed scene: median {m} m, p95 {p} m");
    assert!(m_road <= 0.005 && p_road <= 0.03, "road surface: median {m_road} m, p95 {p_road} m");
}
