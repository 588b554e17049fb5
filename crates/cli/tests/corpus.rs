//! The corpus of surveys roadscan did not design for: every road of at least 100 m in the
//! sample maps under `shared/data/opendrive`, surveyed by `synth --scene` (over a part of the
//! road when it is longer than [`WHOLE`], so partial ranges are the rule; one-sided roads as
//! the maps have them; with clutter and trajectory noise where `synth` offers them) and built
//! with `build --axis truth/road.xodr`. Each case must exit 0 with every check passed and:
//!
//! - every lane border within 5 cm of the design, both ways: each of ours from the nearest of the
//!   design's, and both borders of each lane of the design that vehicles drive from the nearest
//!   of ours (lanes compared as lines across the road, not by id: a map may keep a lane of no
//!   width after it ended, a survey starts a section without it); on asphalt: the setts carry
//!   no lines;
//! - elevation within 5 mm and superelevation within 0.005 rad of the design;
//! - CRG coverage of the surveyed pavement of at least 95 % (the report's figure);
//! - the CRG (its residual on the road's surface) within 1.0 mm RMS of the truth surface on
//!   asphalt, less the error common to the road's width smoothed over 10 m along: the
//!   trajectory's vertical error that every pass shares (periods of 40 s and more), which no
//!   processing can see and which the elevation's 5 mm bound covers (the table gives the RMS
//!   with it too, in brackets after);
//! - the road and its lane sections within the surveyed range and a small margin.
//!
//! The table goes to stderr (and to `$ROADSCAN_CORPUS_TABLE` when set). Not every case meets
//! every tolerance yet (issue 23 is open): the test fails when a case writes no products or
//! when fewer cases than [`WITHIN`] meet them all, and lists every case out of tolerance.
//! `ROADSCAN_CORPUS_FILTER=text` runs only cases whose name holds it.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use opendrive::RoadEval;
use roadscan_tests::Scratch;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

/// Roads up to this long are surveyed whole, longer ones over [`PART`] metres of their middle.
const WHOLE: f64 = 160.0;
const PART: f64 = 120.0;
/// The trajectory error of the noisy cases (`synth --traj-noise`, RMS per axis, smooth over
/// tens of seconds): horizontal, vertical, m.
const TRAJ_NOISE: &str = "0.005,0.001";
/// Cases within every tolerance at the last change of the pipeline (of 53): the floor a change
/// must keep.
const WITHIN: usize = 43;
/// Margin the products may extend beyond the surveyed range, m.
const MARGIN: f64 = 2.0;

#[derive(Debug, Clone)]
struct Case {
    file: PathBuf,
    name: String,
    road: String,
    range: (f64, f64),
    /// Trajectory noise on (every second case).
    noisy: bool,
}

fn cases() -> Vec<Case> {
    let filter = std::env::var("ROADSCAN_CORPUS_FILTER").unwrap_or_default();
    let (mut out, mut index) = (Vec::new(), 0usize);
    for file in roadscan_tests::sample_maps() {
        let odr = opendrive::read_file(&file).unwrap_or_else(|e| panic!("{e}"));
        let map = file.file_stem().unwrap().to_string_lossy().to_string();
        for road in odr.roads.iter().filter(|r| r.length >= 100.0) {
            let l = road.length;
            let range = if l <= WHOLE {
                (0.0, (l * 10.0).floor() / 10.0)
            } else {
                let a = ((l - PART) / 2.0).floor();
                (a, a + PART)
            };
            let name = format!("{map}:{}", road.id);
            // Every second case of the whole corpus, whatever the filter keeps.
            let noisy = index % 2 == 1;
            index += 1;
            if !name.contains(&filter) {
                continue;
            }
            out.push(Case { file: file.clone(), name, road: road.id.clone(), range, noisy });
        }
    }
    out
}

/// What one case measured.
#[derive(Debug, Default)]
struct Figures {
    exit: i32,
    failed_checks: Vec<String>,
    /// Largest lane-border error, m: of our borders from the design's nearest, and of the
    /// borders of the design's driven lanes from our nearest (at most 1 m).
    border: f64,
    /// Driven lanes of the design with a border more than 0.5 m from any of ours.
    missing: Vec<i32>,
    /// Largest elevation error, m.
    z: f64,
    /// Largest superelevation error, rad.
    superelevation: f64,
    coverage: f64,
    /// CRG against the truth on asphalt, m.
    crg_rms: f64,
    /// The same less the error common to the width, smoothed over 10 m along (the
    /// trajectory's error that every pass shares), m.
    crg_rel: f64,
    /// The written road's s range in the design's s, m.
    extent: (f64, f64),
    secs: f64,
}

impl Figures {
    fn problems(&self, c: &Case) -> Vec<String> {
        let mut p = Vec::new();
        if self.exit != 0 {
            p.push(format!("exit {}", self.exit));
        }
        p.extend(self.failed_checks.iter().map(|c| format!("check failed: {c}")));
        if !self.missing.is_empty() {
            p.push(format!("lanes {:?} of the design missing", self.missing));
        }
        if self.border.is_nan() || self.border > 0.05 {
            p.push(format!("lane border {:.1} mm off", self.border * 1e3));
        }
        if self.z.is_nan() || self.z > 0.005 {
            p.push(format!("elevation {:.1} mm off", self.z * 1e3));
        }
        if self.superelevation.is_nan() || self.superelevation > 0.005 {
            p.push(format!("superelevation {:.4} rad off", self.superelevation));
        }
        if self.coverage.is_nan() || self.coverage < 0.95 {
            p.push(format!("coverage {:.1} %", self.coverage * 100.0));
        }
        if self.crg_rel.is_nan() || self.crg_rel > 0.001 {
            p.push(format!(
                "CRG RMS {:.2} mm ({:.2} mm with the shared trajectory error)",
                self.crg_rel * 1e3,
                self.crg_rms * 1e3
            ));
        }
        let (a, b) = self.extent;
        if a < c.range.0 - MARGIN - 0.01 || b > c.range.1 + MARGIN + 0.01 || a.is_nan() || b.is_nan() {
            p.push(format!("road covers s {a:.3}..{b:.3}, surveyed {:.1}..{:.1}", c.range.0, c.range.1));
        }
        p
    }
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn run(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_roadscan"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

/// Whether `synth` offers a flag (the corpus uses clutter and trajectory noise when it does).
fn synth_has(flag: &str) -> bool {
    String::from_utf8_lossy(&run(&["synth", "--help"]).stdout).contains(flag)
}

fn survey_and_build(c: &Case, dir: &Path, clutter: bool, traj_noise: bool) -> Result<Figures, String> {
    let t0 = std::time::Instant::now();
    let survey = dir.join("survey");
    let range = format!("{}..{}", c.range.0, c.range.1);
    let mut args =
        vec!["synth", "--scene", s(&c.file), "--road", &c.road, "--s-range", &range, "--out", s(&survey), "-q"];
    if clutter {
        args.push("--clutter");
    }
    let noise = std::env::var("ROADSCAN_CORPUS_TRAJ_NOISE").unwrap_or_else(|_| TRAJ_NOISE.to_string());
    if traj_noise && c.noisy {
        args.extend(["--traj-noise", &noise]);
    }
    let o = run(&args);
    if !o.status.success() {
        return Err(format!("synth: {}", String::from_utf8_lossy(&o.stderr).trim()));
    }
    let out = dir.join("out");
    let truth_path = survey.join("truth/road.xodr");
    let o = run(&["build", "--input", s(&survey.join("scan.las")), "--axis", s(&truth_path), "--out", s(&out), "-q"]);
    let mut f = Figures { exit: o.status.code().unwrap_or(-1), ..Default::default() };
    if !out.join("road.xodr").is_file() {
        return Err(format!("build exit {}: {}", f.exit, String::from_utf8_lossy(&o.stderr).trim()));
    }
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    for ch in report["checks"].as_array().unwrap() {
        if ch["pass"] != true {
            f.failed_checks.push(format!(
                "{}: {}",
                ch["name"].as_str().unwrap_or("?"),
                ch["detail"].as_str().unwrap_or("")
            ));
        }
    }
    f.coverage = report["crg"]["coverage"].as_f64().unwrap_or(f64::NAN);
    let truth_odr = opendrive::read_file(&truth_path).unwrap();
    let odr = opendrive::read_file(out.join("road.xodr")).unwrap();
    let features: serde_json::Value =
        serde_json::from_slice(&std::fs::read(survey.join("truth/features.json")).unwrap()).unwrap();
    compare(c, &truth_odr, &odr, &features, &mut f);
    (f.crg_rms, f.crg_rel) = crg_rms(&survey, &out, &truth_odr, &odr, &features);
    f.secs = t0.elapsed().as_secs_f64();
    Ok(f)
}

/// The setts' s range of the scene, if any.
fn setts(features: &serde_json::Value) -> Option<(f64, f64)> {
    let c = &features["cobbles"];
    Some((c["s0"].as_f64()?, c["s1"].as_f64()?))
}

/// Lane borders, elevation and superelevation of `odr` against the design, every metre of the
/// surveyed range (1 m in from its ends), found by mapping our reference line's points to the
/// design's (s, t). The written road's extent, in the design's s.
fn compare(
    c: &Case,
    truth_odr: &opendrive::OpenDrive,
    odr: &opendrive::OpenDrive,
    features: &serde_json::Value,
    f: &mut Figures,
) {
    let truth = RoadEval::new(&truth_odr.roads[0]);
    let tplace = truth_odr.header.offset.unwrap_or_default().placement();
    let ours = RoadEval::new(&odr.roads[0]);
    let place = odr.header.offset.unwrap_or_default().placement();
    let to_truth = |sv: f64| {
        let p = ours.pose(sv);
        let q = tplace.to_file(place.to_map([p.x, p.y, ours.elevation(sv)]));
        truth.xy_to_st(q[0], q[1], 5.0).map(|st| (st, q[2]))
    };
    // The written road's ends in the design's s.
    let ends = [0.0, ours.length()].map(|sv| to_truth(sv).map_or(f64::NAN, |(st, _)| st.s));
    f.extent = (ends[0].min(ends[1]), ends[0].max(ends[1]));
    let cobbles = setts(features);
    let n = (c.range.1 - c.range.0 - 2.0).max(0.0) as usize;
    for k in 0..=n {
        let ts = c.range.0 + 1.0 + k as f64;
        // Our s for the design's s: ours is the design's reference line over a part of it.
        let p = truth.pose(ts);
        let q = place.to_file(tplace.to_map([p.x, p.y, 0.0]));
        let Some(sv) = ours.xy_to_st(q[0], q[1], 5.0).map(|st| st.s) else {
            f.border = f64::NAN;
            continue;
        };
        let Some((st, z)) = to_truth(sv) else { continue };
        f.z = f.z.max((z - truth.elevation(st.s)).abs());
        f.superelevation = f.superelevation.max((ours.superelevation(sv) - truth.superelevation(st.s)).abs());
        if cobbles.is_some_and(|(a, b)| st.s > a - 3.0 && st.s < b + 3.0) {
            continue;
        }
        // Borders compared as lines across the road, not by lane id: a map may keep a lane of
        // no width where one ended (ids then differ by one), a survey starts a new section.
        // Every border of ours must lie on one of the design's (any lane's, the centre's), and
        // both borders of every lane of the design that vehicles drive, where it is 0.5 m wide
        // or more, on one of ours.
        let mut ours_t: Vec<f64> = ours.lane_borders(sv).iter().map(|b| b.1 + st.t).collect();
        let design: Vec<(i32, f64)> = truth.lane_borders(st.s);
        let centre = truth.lane_offset(st.s);
        let design_t: Vec<f64> = design.iter().map(|b| b.1).chain([centre]).collect();
        for &t in &ours_t {
            f.border = f.border.max(design_t.iter().map(|tb| (t - tb).abs()).fold(f64::INFINITY, f64::min));
        }
        ours_t.push(ours.lane_offset(sv) + st.t);
        let nearest = |t: f64| ours_t.iter().map(|o| (o - t).abs()).fold(f64::INFINITY, f64::min);
        if let Some(sec) = truth.lane_section(st.s) {
            let at = |id: i32| if id == 0 { Some(centre) } else { design.iter().find(|b| b.0 == id).map(|b| b.1) };
            for l in sec.lanes().filter(|l| l.id != 0 && l.kind.as_deref().is_some_and(drivable)) {
                let (Some(outer), Some(inner)) = (at(l.id), at(l.id - l.id.signum())) else { continue };
                if (outer - inner).abs() < 0.5 {
                    continue;
                }
                let off = nearest(outer).max(nearest(inner));
                f.border = f.border.max(off.min(1.0));
                if off > 0.5 && !f.missing.contains(&l.id) {
                    f.missing.push(l.id);
                }
            }
        }
    }
}

/// Lane types vehicles drive (a build must find each such lane of the design).
fn drivable(kind: &str) -> bool {
    matches!(kind, "driving" | "entry" | "exit" | "onRamp" | "offRamp" | "connectingRamp" | "bidirectional")
}

/// The CRG (residual + our road's surface) against the truth surface, every 0.5 m along and
/// 5 cm across, on asphalt: away from the setts, potholes, manholes, objects on the road and
/// within 25 cm of the road's outer lane borders.
fn crg_rms(
    survey: &Path,
    out: &Path,
    truth_odr: &opendrive::OpenDrive,
    odr: &opendrive::OpenDrive,
    features: &serde_json::Value,
) -> (f64, f64) {
    let truth =
        opencrg::Surface::from_owned(opencrg::read_file(survey.join("truth/surface.crg")).unwrap(), false).unwrap();
    let (place, tplace) =
        (odr.header.offset.unwrap_or_default().placement(), truth_odr.header.offset.unwrap_or_default().placement());
    let r = &odr.roads[0];
    let eval = RoadEval::new(r);
    let truth_road = RoadEval::new(&truth_odr.roads[0]);
    let mut keep_out: Vec<(f64, f64, f64)> = Vec::new(); // design s, t, radius
    for p in features["potholes"].as_array().into_iter().flatten() {
        let rad = p["radius_s"].as_f64().unwrap_or(1.0).max(p["radius_t"].as_f64().unwrap_or(1.0));
        keep_out.push((p["s"].as_f64().unwrap(), p["t"].as_f64().unwrap(), rad + 0.7));
    }
    for m in features["manholes"].as_array().into_iter().flatten() {
        keep_out.push((m["s"].as_f64().unwrap(), m["t"].as_f64().unwrap(), m["radius"].as_f64().unwrap_or(0.5) + 0.4));
    }
    for o in features["objects"].as_array().into_iter().flatten() {
        let size =
            ["length", "width", "radius", "crown_radius"].iter().filter_map(|k| o[*k].as_f64()).fold(0.5, f64::max);
        keep_out.push((o["s"].as_f64().unwrap(), o["t"].as_f64().unwrap(), size + 0.7));
    }
    let cobbles = setts(features);
    let (mut sq, mut n) = (0.0, 0usize);
    // Each cross-section's errors (every 0.5 m along, in order).
    let mut sections: Vec<Vec<f64>> = Vec::new();
    // Error by metre of v (printed with ROADSCAN_CORPUS_BANDS): mean, RMS.
    let mut bands: std::collections::BTreeMap<i64, (f64, f64, usize)> = Default::default();
    for link in &r.surface.crgs {
        let crg = opencrg::read_file(out.join(&link.file)).unwrap();
        let ours = opencrg::Surface::new(&crg, false).unwrap();
        let ((u0, u1), (v0, v1)) = (ours.u_range(), ours.v_range());
        for i in 0..=((u1 - u0) / 0.5) as usize {
            let u = u0 + 0.5 * i as f64;
            let borders = eval.lane_borders(u);
            let (lo, hi) = borders.iter().fold((0.0f64, 0.0f64), |(a, b), x| (a.min(x.1), b.max(x.1)));
            let mut section = Vec::new();
            for j in 0..=((v1 - v0) / 0.05) as usize {
                let v = v0 + 0.05 * j as f64;
                if v < lo + 0.25 || v > hi - 0.25 {
                    continue;
                }
                let Some(z) = ours.uv_to_z(u, v).filter(|z| z.is_finite()) else { continue };
                let (x, y) = ours.uv_to_xy(u, v);
                let abs = z + eval.elevation(u) + v * eval.planar_cross_slope(u);
                let q = tplace.to_file(place.to_map([x, y, abs]));
                let Some(st) = truth_road.xy_to_st(q[0], q[1], 20.0) else { continue };
                let near = keep_out.iter().any(|&(ks, kt, kr)| (st.s - ks).hypot(st.t - kt) < kr);
                if near || cobbles.is_some_and(|(a, b)| st.s > a - 0.5 && st.s < b + 0.5) {
                    continue;
                }
                let (tu, tv) = truth.xy_to_uv(q[0], q[1]);
                let Some(tz) = truth.uv_to_z(tu, tv).filter(|t| t.is_finite()) else { continue };
                sq += (q[2] - tz).powi(2);
                n += 1;
                section.push(q[2] - tz);
                if std::env::var_os("ROADSCAN_CORPUS_BANDS").is_some() && (q[2] - tz).abs() > 0.006 {
                    eprintln!(
                        "  big error {:+.1} mm at u {u:.1} v {v:.2} (design s {:.2} t {:.2})",
                        (q[2] - tz) * 1e3,
                        st.s,
                        st.t
                    );
                }
                let band = bands.entry((v.floor()) as i64).or_insert((0.0, 0.0, 0usize));
                *band = (band.0 + (q[2] - tz), band.1 + (q[2] - tz).powi(2), band.2 + 1);
            }
            sections.push(section);
        }
    }
    if std::env::var_os("ROADSCAN_CORPUS_BANDS").is_some() {
        for (v, (m, q, k)) in &bands {
            let k = *k as f64;
            eprintln!(
                "  v {v:>3}..{:<3} mean {:+.2} mm  RMS {:.2} mm  ({k} samples)",
                v + 1,
                m / k * 1e3,
                (q / k).sqrt() * 1e3
            );
        }
    }
    if n < 100 {
        return (f64::NAN, f64::NAN);
    }
    // The error common to the whole width, smoothed over 10 m along: the trajectory's vertical
    // error that every pass shares (periods of 40 s and more), which no processing can see.
    let medians: Vec<Option<f64>> = sections
        .iter()
        .map(|e| {
            let mut e = e.clone();
            e.sort_by(f64::total_cmp);
            e.get(e.len() / 2).copied()
        })
        .collect();
    let mut sq_rel = 0.0;
    for (k, e) in sections.iter().enumerate() {
        let near: Vec<f64> =
            medians[k.saturating_sub(10)..(k + 11).min(medians.len())].iter().flatten().copied().collect();
        let common = near.iter().sum::<f64>() / near.len().max(1) as f64;
        sq_rel += e.iter().map(|v| (v - common).powi(2)).sum::<f64>();
    }
    ((sq / n as f64).sqrt(), (sq_rel / n as f64).sqrt())
}

#[roadscan_tests::needs_shared_data]
#[test]
fn every_sample_road_surveyed_with_clutter_and_noise_builds_within_tolerance() {
    let cases = cases();
    if cases.is_empty() {
        // Only a filter can leave no case (sample_maps fails without the shared data).
        assert!(std::env::var("ROADSCAN_CORPUS_FILTER").is_ok(), "no sample road to survey");
        return;
    }
    let (clutter, traj_noise) = (synth_has("--clutter"), synth_has("--traj-noise"));
    eprintln!("{} cases; clutter {clutter}, trajectory noise {traj_noise}", cases.len());
    let next = Mutex::new(0usize);
    let rows: Mutex<Vec<(usize, String, Vec<String>)>> = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).min(4);
    std::thread::scope(|sc| {
        for _ in 0..workers {
            sc.spawn(|| loop {
                let i = {
                    let mut g = next.lock().unwrap();
                    let i = *g;
                    *g += 1;
                    i
                };
                let Some(c) = cases.get(i) else { break };
                let dir = Scratch::new(&format!("corpus-{i}"));
                let (line, problems) = match survey_and_build(c, &dir, clutter, traj_noise) {
                    Ok(f) => {
                        let p = f.problems(c);
                        let line = format!(
                            "{}\t{:.0}..{:.0}\t{}\texit {}\tborder {:.1} mm\tz {:.2} mm\tsuperel. {:.4} rad\tcoverage {:.1} %\tCRG {:.2} mm ({:.2})\troad {:.1}..{:.1}\t{:.1} s",
                            c.name,
                            c.range.0,
                            c.range.1,
                            if c.noisy && traj_noise { "noise" } else { "-" },
                            f.exit,
                            f.border * 1e3,
                            f.z * 1e3,
                            f.superelevation,
                            f.coverage * 100.0,
                            f.crg_rel * 1e3,
                            f.crg_rms * 1e3,
                            f.extent.0,
                            f.extent.1,
                            f.secs
                        );
                        (line, p)
                    }
                    Err(e) => (format!("{}\t{e}", c.name), vec![e]),
                };
                eprintln!("{}\t{line}", if problems.is_empty() { "ok" } else { "FAIL" });
                rows.lock().unwrap().push((i, line, problems));
            });
        }
    });
    let mut rows = rows.into_inner().unwrap();
    rows.sort_by_key(|r| r.0);
    let table: String = rows
        .iter()
        .map(|(_, line, p)| format!("{}\t{line}\t{}\n", if p.is_empty() { "ok" } else { "FAIL" }, p.join("; ")))
        .collect();
    if let Some(path) = std::env::var_os("ROADSCAN_CORPUS_TABLE") {
        std::fs::write(path, &table).unwrap();
    }
    let failed: Vec<&(usize, String, Vec<String>)> = rows.iter().filter(|r| !r.2.is_empty()).collect();
    let within = rows.len() - failed.len();
    eprintln!("{within} of {} cases within tolerance", rows.len());
    let listing =
        failed.iter().map(|r| format!("{}: {}", cases[r.0].name, r.2.join("; "))).collect::<Vec<_>>().join("\n");
    // Every case writes its products (a failed check is exit 1, never exit 2 or nothing).
    let unbuilt: Vec<&String> = rows
        .iter()
        .filter(|r| r.2.iter().any(|p| p.starts_with("exit 2") || p.contains("build exit") || p.starts_with("synth:")))
        .map(|r| &r.1)
        .collect();
    assert!(unbuilt.is_empty(), "cases without products:\n{unbuilt:#?}");
    // Issue 23 asks for every case within tolerance; this many are (the closing note's table
    // lists the rest): fewer is a regression. Only a run of every case counts.
    if std::env::var("ROADSCAN_CORPUS_FILTER").is_err() {
        assert!(within >= WITHIN, "{within} of {} cases within tolerance, {WITHIN} before:\n{listing}", rows.len());
    }
}
