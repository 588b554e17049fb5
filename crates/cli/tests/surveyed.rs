//! End-to-end test of the surveyed road: the demo scene surveyed, its axis fitted from the
//! trajectory (`axis`), the road completed from the points (`xodr`), a residual CRG made on it
//! (`crg`) and linked and searched (`xodr --crg`); everything against the scene's truth.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use opendrive::RoadEval;
use roadscan_tests::Scratch;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn roadscan(args: &[&str]) -> Output {
    let o = Command::new(env!("CARGO_BIN_EXE_roadscan"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(o.status.success(), "roadscan {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    o
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `roadscan axis` from pass 1 of a survey's trajectory, moved `offset` to the left, the
/// scanner 2.2 m above the road.
fn axis_from(survey: &Path, offset: &str, out: &Path) {
    let traj = survey.join("trajectory.csv");
    let args = ["--offset", offset, "--sensor-height", "2.2", "--crs", "EPSG:23700", "--out", s(out), "-q"];
    roadscan(&[&["axis", "--trajectory", s(&traj)][..], &args[..]].concat());
}

fn tmp(name: &str) -> Scratch {
    Scratch::new(&format!("cli-surveyed-{name}"))
}

#[test]
fn the_demo_survey_gives_back_its_road() {
    let d = tmp("demo");
    let survey = d.join("survey");
    roadscan(&["synth", "--scene", "demo", "--out", s(&survey), "--seed", "3", "-q"]);
    let (axis, road, crg, road2) = (d.join("axis.xodr"), d.join("road.xodr"), d.join("road.crg"), d.join("road2.xodr"));
    let scan = survey.join("scan.las");
    // Pass 1 drives lane -1, 1.625 m right of the reference line, the scanner 2.2 m up.
    axis_from(&survey, "1.625", &axis);
    roadscan(&["xodr", "--axis", s(&axis), "--input", s(&scan), "--out", s(&road), "-q"]);
    roadscan(&["crg", "--axis", s(&road), "--input", s(&scan), "--out", s(&crg), "--z", "residual", "-q"]);
    let o = roadscan(&["xodr", "--axis", s(&axis), "--input", s(&scan), "--crg", s(&crg), "--out", s(&road2)]);
    let report = String::from_utf8_lossy(&o.stdout).into_owned();
    eprintln!("{report}");

    let truth_odr = opendrive::read_file(survey.join("truth/road.xodr")).unwrap();
    let odr = opendrive::read_file(&road2).unwrap();
    let dev = compare(&truth_odr, &odr, (0.5, 149.5));
    eprintln!("{dev:?}");
    assert!(dev.line <= 0.01, "reference line {} m off", dev.line);
    assert!(dev.z <= 0.01, "elevation {} m off", dev.z);
    assert!(dev.superelevation <= 0.003, "superelevation {} rad off", dev.superelevation);
    assert!(dev.border <= 0.05, "lane border {} m off", dev.border);

    let r = &odr.roads[0];
    assert_demo_lanes(r);
    assert!(report.contains("dash 3.0 m gap 6.0 m"), "{report}");

    assert_demo_features(r);

    // The CRG link: the file beside the road, its u range, attached (residual heights).
    let link = &r.surface.crgs[0];
    let grid = opencrg::read_file(&crg).unwrap();
    assert_eq!(link.file, "road.crg");
    assert_eq!((link.s_start, link.s_end, link.mode.as_str()), (grid.u_first(), grid.u_last(), "attached"));

    // CRG tiles: one link each, their s ranges the tiles' u ranges, in order.
    let tiles = d.join("tiles");
    std::fs::create_dir_all(&tiles).unwrap();
    let stem = tiles.join("road.crg");
    roadscan(&[
        "crg",
        "--axis",
        s(&road),
        "--input",
        s(&scan),
        "--out",
        s(&stem),
        "--z",
        "residual",
        "--tile",
        "50",
        "-q",
    ]);
    let names: Vec<PathBuf> = (0..3).map(|k| tiles.join(format!("road_{k:03}.crg"))).collect();
    let road3 = d.join("road3.xodr");
    let mut args = vec!["xodr", "--axis", s(&axis), "--input", s(&scan), "--out", s(&road3), "-q", "--crg"];
    args.extend(names.iter().map(|p| s(p)));
    roadscan(&args);
    let links = opendrive::read_file(&road3).unwrap().roads[0].surface.crgs.clone();
    assert_eq!(links.len(), 3);
    for (k, (link, name)) in links.iter().zip(&names).enumerate() {
        let grid = opencrg::read_file(name).unwrap();
        assert_eq!(link.file, format!("tiles/road_{k:03}.crg"));
        assert_eq!((link.s_start, link.s_end), (grid.u_first(), grid.u_last()), "tile {k}");
    }
    assert!(links.windows(2).all(|w| w[0].s_end <= w[1].s_start + 1e-9 && w[1].s_start - w[0].s_end < 0.02));
}

/// Lanes and marks of the surveyed demo road: one section, a broken centre line, solid lines
/// on lanes 1 and -1, all 12 cm wide within 3 cm.
fn assert_demo_lanes(r: &opendrive::Road) {
    assert_eq!(r.lanes.lane_sections.len(), 1, "{:?}", r.lanes.lane_sections);
    let sec = &r.lanes.lane_sections[0];
    let mark = |id: i32| sec.lanes().find(|l| l.id == id).unwrap().road_marks[0].clone();
    assert_eq!(mark(0).kind, "broken");
    assert_eq!((mark(1).kind.as_str(), mark(-1).kind.as_str()), ("solid", "solid"));
    for id in [0, 1, -1] {
        assert!((mark(id).width.unwrap() - 0.12).abs() <= 0.03, "lane {id}: {:?}", mark(id));
    }
}

/// The demo scene's manhole (s 55, t -1.6, r 0.3) and pothole (s 75, t 1.6, 5 cm) as the
/// road's objects, nothing else.
fn assert_demo_features(r: &opendrive::Road) {
    let objs = &r.objects.objects;
    assert_eq!(objs.len(), 2, "{objs:?}");
    let find = |sub: &str| objs.iter().find(|o| o.subtype.as_deref() == Some(sub)).unwrap();
    let (mh, ph) = (find("manhole"), find("pothole"));
    assert!((mh.s - 55.0).abs() < 0.1 && (mh.t + 1.6).abs() < 0.1, "{mh:?}");
    assert!((mh.radius.unwrap() - 0.3).abs() < 0.05, "{mh:?}");
    assert!((ph.s - 75.0).abs() < 0.1 && (ph.t - 1.6).abs() < 0.1, "{ph:?}");
    assert!((ph.height.unwrap() - 0.05).abs() < 0.01, "{ph:?}");
}

/// `roadscan build` from the demo survey's points and trajectory, the points read once: the
/// surveyed road as `xodr` makes it (line and elevation within 1 cm, superelevation within
/// 0.003 rad, borders within 5 cm, the lanes, marks, manhole and pothole); its CRG tile, residual
/// heights put back on the road's surface, within 1.2 mm RMS of the truth on asphalt; the
/// manifest's sizes and SHA-256 those of the files; the report's checks all passed; on one core
/// the same products, byte for byte.
#[test]
fn a_build_reads_the_points_once_and_gives_back_the_demo_road() {
    let d = tmp("build");
    let survey = d.join("survey");
    roadscan(&["synth", "--scene", "demo", "--out", s(&survey), "--seed", "3", "-q"]);
    let out = d.join("out");
    let (traj, scan) = (survey.join("trajectory.csv"), survey.join("scan.las"));
    let args = [
        "build",
        "--input",
        s(&scan),
        "--trajectory",
        s(&traj),
        "--offset",
        "1.625",
        "--sensor-height",
        "2.2",
        "--crs",
        "EPSG:23700",
        "-q",
        "--out",
    ];
    roadscan(&[&args[..], &[s(&out)]].concat());
    let truth_odr = opendrive::read_file(survey.join("truth/road.xodr")).unwrap();
    let odr = opendrive::read_file(out.join("road.xodr")).unwrap();
    let dev = compare(&truth_odr, &odr, (0.5, 149.5));
    eprintln!("{dev:?}");
    assert!(dev.line <= 0.01 && dev.z <= 0.01 && dev.superelevation <= 0.003 && dev.border <= 0.05, "{dev:?}");
    let r = &odr.roads[0];
    assert_demo_lanes(r);
    assert_demo_features(r);
    assert_eq!(r.surface.crgs.len(), 1);
    assert_eq!((r.surface.crgs[0].file.as_str(), r.surface.crgs[0].mode.as_str()), ("crg/road_000.crg", "attached"));

    // The CRG: residual + the road's surface, against the truth surface at every 0.5 m along
    // and 5 cm across, on asphalt: not on the setts (s 100..125, whose 1.5 cm joints the grid
    // of samples hits every few metres), not within 25 cm of the curbs (t ±3.25) and not at
    // the manhole and the pothole, where the road's 2 mm of lateral error put a sample on the
    // other side of a step.
    let crg = opencrg::read_file(out.join("crg/road_000.crg")).unwrap();
    let ours = opencrg::Surface::new(&crg, false).unwrap();
    let truth =
        opencrg::Surface::from_owned(opencrg::read_file(survey.join("truth/surface.crg")).unwrap(), false).unwrap();
    let (place, tplace) =
        (odr.header.offset.unwrap_or_default().placement(), truth_odr.header.offset.unwrap_or_default().placement());
    let eval = RoadEval::new(r);
    let ((u0, u1), (v0, v1)) = (ours.u_range(), ours.v_range());
    let (mut sq, mut n, mut cells) = (0.0, 0usize, 0usize);
    for i in 0..=((u1 - u0) / 0.5) as usize {
        let u = u0 + 0.5 * i as f64;
        for j in 0..=((v1 - v0) / 0.05) as usize {
            let v = v0 + 0.05 * j as f64;
            let near = |s0: f64, t0: f64| (u - s0).hypot(v - t0) < 0.7;
            if (99.5..=125.5).contains(&u) || v.abs() > 3.0 || near(55.0, -1.6) || near(75.0, 1.6) {
                continue;
            }
            cells += 1;
            let Some(z) = ours.uv_to_z(u, v) else { continue };
            if z.is_nan() {
                continue;
            }
            let (x, y) = ours.uv_to_xy(u, v);
            let abs = z + eval.elevation(u) + v * eval.planar_cross_slope(u);
            let f = tplace.to_file(place.to_map([x, y, abs]));
            let (tu, tv) = truth.xy_to_uv(f[0], f[1]);
            let Some(tz) = truth.uv_to_z(tu, tv).filter(|t| t.is_finite()) else { continue };
            sq += (f[2] - tz).powi(2);
            n += 1;
        }
    }
    let rms = (sq / n.max(1) as f64).sqrt();
    eprintln!("CRG against the truth: {n} of {cells} points, RMS {:.2} mm", rms * 1e3);
    // Seed 3: 0.79 mm (1.02 mm before the low envelope on points sorted by node and the
    // sparse blocks' planes), zero mean, the same in every band of s and t.
    assert!(n as f64 >= 0.95 * cells as f64 && rms <= 0.001, "{n} of {cells}, RMS {rms}");

    // The manifest: every output's size and hash, the input's.
    let m: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    let sha = |p: &Path| {
        use sha2::Digest;
        sha2::Sha256::digest(std::fs::read(p).unwrap()).iter().map(|b| format!("{b:02x}")).collect::<String>()
    };
    assert_eq!(m["inputs"][0]["sha256"].as_str().unwrap(), sha(&scan));
    let outputs = m["outputs"].as_array().unwrap();
    let names: Vec<&str> = outputs.iter().map(|o| o["path"].as_str().unwrap()).collect();
    for want in ["road.xodr", "crg/road_000.crg", "crg/road_000.png", "scene.obj", "scene.glb", "report.html"] {
        assert!(names.contains(&want), "{want} not in {names:?}");
    }
    for o in outputs {
        let p = out.join(o["path"].as_str().unwrap());
        assert_eq!(o["bytes"].as_u64().unwrap(), std::fs::metadata(&p).unwrap().len(), "{p:?}");
        assert_eq!(o["sha256"].as_str().unwrap(), sha(&p), "{p:?}");
    }
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    for c in report["checks"].as_array().unwrap() {
        assert_eq!(c["pass"], true, "{c}");
    }
    assert_eq!(report["features"].as_array().unwrap().len(), 2);
    // A survey of the whole road: road.xodr is the whole axis road, not a part of it.
    assert!(report["road"].get("part_of_axis").is_none() && m.get("road_part").is_none(), "{}", report["road"]);
    let fitted = opendrive::read_file(out.join("axis.xodr")).unwrap();
    assert_eq!(r.length, fitted.roads[0].length);
    // report.html: every image it shows is beside it; the features, checks and plots are in it.
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let srcs: Vec<&str> = html.split("src=\"").skip(1).filter_map(|x| x.split('"').next()).collect();
    assert_eq!(srcs, ["ribbons/street_view.png", "crg/road_000.png"]);
    for src in srcs {
        assert!(out.join(src).is_file(), "{src}");
    }
    for want in ["<td>manhole</td>", "<td>pothole</td>", "class=\"pass\"", "<polyline", "data-broken"] {
        assert!(html.contains(want), "report.html lacks {want}");
    }
    assert!(!html.contains("FAIL"));

    // One core: the same products (the report and the manifest differ in their timings).
    if std::process::Command::new("taskset").arg("--version").output().is_err() {
        assert!(std::env::var_os("CI").is_none(), "taskset is needed in CI");
        return;
    }
    let one = d.join("one");
    let o = Command::new("taskset")
        .args(["-c", "0", env!("CARGO_BIN_EXE_roadscan")])
        .args(&args[..])
        .arg(&one)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for o in outputs {
        let p = o["path"].as_str().unwrap();
        if p.starts_with("report.") {
            continue;
        }
        assert_eq!(sha(&one.join(p)), o["sha256"].as_str().unwrap(), "{p} differs on one core");
    }
}

/// Largest deviations of a surveyed road from its design over an s range, every metre.
#[derive(Debug)]
struct Deviation {
    /// The reference line, m.
    line: f64,
    /// Elevation, m.
    z: f64,
    /// Superelevation, rad.
    superelevation: f64,
    /// Outer borders of lanes 1 and -1, m.
    border: f64,
}

fn compare(truth_odr: &opendrive::OpenDrive, odr: &opendrive::OpenDrive, (s0, s1): (f64, f64)) -> Deviation {
    let truth = RoadEval::new(&truth_odr.roads[0]);
    let tplace = truth_odr.header.offset.unwrap_or_default().placement();
    let ours = RoadEval::new(&odr.roads[0]);
    let place = odr.header.offset.unwrap_or_default().placement();
    let mut d = Deviation { line: 0.0, z: 0.0, superelevation: 0.0, border: 0.0 };
    let border = |e: &RoadEval, s: f64, id: i32| e.lane_borders(s).into_iter().find(|b| b.0 == id).map(|b| b.1);
    let mut sv = s0;
    while sv <= s1 {
        let p = ours.pose(sv);
        let f = tplace.to_file(place.to_map([p.x, p.y, ours.elevation(sv)]));
        let st = truth.xy_to_st(f[0], f[1], 5.0).unwrap();
        d.line = d.line.max(st.t.abs());
        d.z = d.z.max((f[2] - truth.elevation(st.s)).abs());
        d.superelevation = d.superelevation.max((ours.superelevation(sv) - truth.superelevation(st.s)).abs());
        for id in [1, -1] {
            let (a, b) = (border(&ours, sv, id).unwrap(), border(&truth, st.s, id).unwrap());
            d.border = d.border.max((a + st.t - b).abs());
        }
        sv += 1.0;
    }
    d
}

/// esmini's curves.xodr road 1 over s 0..300 (line, clothoid, arc, clothoids), two seeds: the
/// road from the trajectory and the points within 1 cm (line, elevation), 5 cm (lane
/// borders), its lines' types right.
#[roadscan_tests::needs_shared_data]
#[test]
fn curves_road_1_surveyed_with_two_seeds() {
    let data = roadscan_tests::shared_data();
    let src = data.join("opendrive/esmini/curves.xodr");
    for seed in ["1", "2"] {
        let d = tmp(&format!("curves-{seed}"));
        let survey = d.join("survey");
        roadscan(&[
            "synth",
            "--scene",
            s(&src),
            "--road",
            "1",
            "--s-range",
            "0..300",
            "--seed",
            seed,
            "--out",
            s(&survey),
            "--points-per-rev",
            "300",
            "-q",
        ]);
        let (axis, road) = (d.join("axis.xodr"), d.join("road.xodr"));
        // Pass 1 drives lane -1 (3.07 m wide) along its centre.
        axis_from(&survey, "1.535", &axis);
        roadscan(&["xodr", "--axis", s(&axis), "--input", s(&survey.join("scan.las")), "--out", s(&road), "-q"]);
        let truth_odr = opendrive::read_file(survey.join("truth/road.xodr")).unwrap();
        let odr = opendrive::read_file(&road).unwrap();
        // The scene lays setts over s 210..230 and paints no lines on them: only the outer
        // halves of the edge lines, on the verge, are there, so the lines seen lie 3-5 cm
        // out. The borders are compared on the asphalt.
        let dev = compare(&truth_odr, &odr, (0.5, 299.5));
        let borders = [compare(&truth_odr, &odr, (0.5, 205.5)), compare(&truth_odr, &odr, (235.5, 299.5))];
        let border = borders[0].border.max(borders[1].border);
        eprintln!(
            "seed {seed}: {dev:?}, borders on asphalt {border:.4} m, {} records",
            odr.roads[0].plan_view.geometries.len()
        );
        assert!(dev.line <= 0.01 && dev.z <= 0.01 && border <= 0.05 && dev.border <= 0.07, "seed {seed}: {dev:?}");
        let sec = &odr.roads[0].lanes.lane_sections;
        assert_eq!(sec.len(), 1, "seed {seed}");
        let mark = |id: i32| sec[0].lanes().find(|l| l.id == id).unwrap().road_marks[0].kind.clone();
        assert_eq!([mark(1), mark(0), mark(-1)], ["solid", "broken", "solid"], "seed {seed}");
    }
}

/// `roadscan demo` leaves every product in --out, the surveyed road with the demo's manhole and
/// pothole. A demo killed half-way leaves them as they were; the next run clears what the
/// killed one left behind and gives the same bytes.
#[test]
fn a_killed_demo_leaves_the_previous_products_intact() {
    let d = tmp("demo-kill");
    let out = d.join("demo");
    roadscan(&["demo", "--out", s(&out), "-q"]);
    for f in [
        "road.xodr",
        "crg/road_000.crg",
        "crg/road_000.png",
        "scene.obj",
        "scene.glb",
        "ribbons/street_view.png",
        "axis.xodr",
        "report.html",
        "report.json",
        "manifest.json",
    ] {
        assert!(std::fs::metadata(out.join(f)).is_ok_and(|m| m.len() > 0), "{f}");
    }
    let odr = opendrive::read_file(out.join("road.xodr")).unwrap();
    let mut kinds: Vec<String> = odr.roads[0].objects.objects.iter().filter_map(|o| o.subtype.clone()).collect();
    kinds.sort();
    assert_eq!(kinds, ["manhole", "pothole"]);
    let before = std::fs::read(out.join("road.xodr")).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_roadscan"))
        .args(["demo", "--out", s(&out), "-q", "--seed", "2"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill it once its work directory holds part of the build's products.
    let t0 = std::time::Instant::now();
    let partial = |d: &Path| {
        std::fs::read_dir(d).unwrap().flatten().any(|e| {
            e.file_name().to_string_lossy().starts_with(".roadscan-tmp-") && e.path().join("demo/crg").exists()
        })
    };
    while !partial(&d) && t0.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(std::fs::read(out.join("road.xodr")).unwrap(), before, "the previous products changed");
    assert!(out.join("scene.glb").exists() && out.join("ribbons/street_view.png").exists());
    roadscan(&["demo", "--out", s(&out), "-q"]);
    let left: Vec<String> =
        std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(left, ["demo"], "left behind");
    assert_eq!(std::fs::read(out.join("road.xodr")).unwrap(), before, "same seed, same bytes");
}

#[test]
fn a_missing_crg_is_one_line_and_leaves_no_file() {
    let d = tmp("bad");
    let survey = d.join("survey");
    roadscan(&["synth", "--scene", "demo", "--out", s(&survey), "--points-per-rev", "8", "-q"]);
    let out = d.join("road.xodr");
    let o = Command::new(env!("CARGO_BIN_EXE_roadscan"))
        .args(["xodr", "--axis", s(&survey.join("truth/road.xodr")), "--input", s(&survey.join("scan.las"))])
        .args(["--crg", s(&d.join("none.crg")), "--out", s(&out)])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("none.crg"), "{err}");
    assert!(!out.exists());
}

/// The borders of a road at s, as t of the centre line (lane offset) and of every lane's
/// outer border, duplicates (lanes of zero width) merged.
fn borders(e: &RoadEval, s: f64) -> Vec<f64> {
    let mut b: Vec<f64> = e.lane_borders(s).into_iter().map(|x| x.1).collect();
    b.push(e.lane_offset(s));
    b.sort_by(f64::total_cmp);
    b.dedup_by(|a, c| (*a - *c).abs() < 0.05);
    b
}

/// esmini's two_plus_one.xodr road 1: a 2+1 road whose middle lane changes direction twice, the
/// centre line moving 3.5 m with the lane offset. Surveyed, its lines give back five lane
/// sections and every border (and the centre line) within 5 cm outside the transitions.
#[roadscan_tests::needs_shared_data]
#[test]
#[ignore = "issue 23, open: since the gravel verges a 20 m piece of the moving centre line at s 350..370 makes two extra sections"]
fn a_two_plus_one_road_gives_back_its_lane_sections() {
    let data = roadscan_tests::shared_data();
    let src = data.join("opendrive/esmini/two_plus_one.xodr");
    let d = tmp("2plus1");
    let survey = d.join("survey");
    roadscan(&["synth", "--scene", s(&src), "--road", "1", "--out", s(&survey), "--points-per-rev", "300", "-q"]);
    let (axis, road) = (d.join("axis.xodr"), d.join("road.xodr"));
    // Pass 1 drives the middle lane at mid-road, 1.75 m left of the reference line.
    axis_from(&survey, "-1.75", &axis);
    let o = roadscan(&["xodr", "--axis", s(&axis), "--input", s(&survey.join("scan.las")), "--out", s(&road)]);
    eprintln!("{}", String::from_utf8_lossy(&o.stdout));
    let truth_odr = opendrive::read_file(survey.join("truth/road.xodr")).unwrap();
    let truth = RoadEval::new(&truth_odr.roads[0]);
    let odr = opendrive::read_file(&road).unwrap();
    let ours = RoadEval::new(&odr.roads[0]);
    let cuts: Vec<f64> = truth_odr.roads[0].lanes.lane_sections.iter().map(|x| x.s).collect();
    let got: Vec<f64> = odr.roads[0].lanes.lane_sections.iter().map(|x| x.s).collect();
    assert_eq!(got.len(), cuts.len(), "sections at {got:?}, designed {cuts:?}");
    for (a, b) in got.iter().zip(&cuts) {
        assert!((a - b).abs() <= 6.0, "sections at {got:?}, designed {cuts:?}");
    }
    // Both axes are the same line here (the offset moves the track onto it exactly). The
    // sections of constant lane count, 10 m clear of their ends (in the 50 m transitions a lane
    // narrows to nothing without a line; ours has one lane fewer there).
    let mut worst = 0.0f64;
    let steady =
        |sv: f64| [(0.0, 125.0), (175.0, 325.0), (375.0, 500.0)].iter().any(|r| sv >= r.0 + 10.0 && sv <= r.1 - 10.0);
    for i in 0..=500 {
        let sv = i as f64;
        if !steady(sv) {
            continue;
        }
        let (a, b) = (borders(&ours, sv), borders(&truth, sv));
        assert_eq!(a.len(), b.len(), "s {sv}: borders {a:?}, designed {b:?}");
        for (x, y) in a.iter().zip(&b) {
            worst = worst.max((x - y).abs());
        }
    }
    eprintln!("borders within {worst:.4} m");
    assert!(worst <= 0.05, "a border {worst} m off");
}

/// `roadscan build --config`: a TOML file with the options (paths relative to it) gives the
/// same products as the same options as flags; flags override the file; a bad key, a missing
/// input or a wrong number is one line naming the culprit, exit 2, and the previous products
/// untouched.
#[test]
fn a_build_config_file_equals_its_flags_and_bad_ones_fail_cleanly() {
    let d = tmp("build-config");
    let survey = d.join("survey");
    let xodr = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/opendrive/demo.xodr");
    roadscan(&["synth", "--scene", s(&xodr), "--s-range", "45..65", "--out", s(&survey), "-q"]);
    let cfg = d.join("survey.toml");
    std::fs::write(
        &cfg,
        "# the demo road, s 45..65\ninput = [\"survey/scan.las\"]\naxis = \"survey/truth/road.xodr\"\nout = \"by-config\"\ntile = 10\nvoxel-size = 0.5\ns-range = \"47..63\"\n",
    )
    .unwrap();
    // Built; exit code 1 when a check fails (the edges of so short a survey leave the CRG's
    // coverage under 95 %).
    let build = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_roadscan")).args(args).output().unwrap();
        assert!(matches!(o.status.code(), Some(0 | 1)), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    };
    build(&["build", "--config", s(&cfg), "-q"]);
    let (scan, axis) = (survey.join("scan.las"), survey.join("truth/road.xodr"));
    let flags = d.join("by-flags");
    let common = ["build", "--input", s(&scan), "--axis", s(&axis), "--voxel-size", "0.5", "--s-range", "47..63", "-q"];
    build(&[&common[..], &["--tile", "10", "--out", s(&flags)]].concat());
    let by_config = d.join("by-config");
    for f in ["road.xodr", "crg/road_000.crg", "crg/road_001.crg", "scene.glb", "ribbons/left_depth.png"] {
        assert_eq!(std::fs::read(by_config.join(f)).unwrap(), std::fs::read(flags.join(f)).unwrap(), "{f}");
    }
    assert!(!by_config.join("crg/road_002.crg").exists());
    // The command line wins over the file; --json prints report.json.
    let o = Command::new(env!("CARGO_BIN_EXE_roadscan"))
        .args(["build", "--config", s(&cfg), "--tile", "5", "-q", "--json"])
        .output()
        .unwrap();
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(by_config.join("crg/road_003.crg").exists());
    let printed: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let written: serde_json::Value =
        serde_json::from_slice(&std::fs::read(by_config.join("report.json")).unwrap()).unwrap();
    assert_eq!(printed, written);
    assert_eq!(written["crg"]["tiles"].as_array().unwrap().len(), 4);
    let before = std::fs::read(by_config.join("road.xodr")).unwrap();

    let fails = |args: &[&str], want: &str| {
        let o = Command::new(env!("CARGO_BIN_EXE_roadscan")).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.lines().count() == 1 && err.contains(want), "{args:?}: {err}");
    };
    let bad = d.join("bad.toml");
    std::fs::write(
        &bad,
        "input = [\"survey/scan.las\"]\naxis = \"survey/truth/road.xodr\"\nout = \"by-config\"\ntiles = 5\n",
    )
    .unwrap();
    fails(&["build", "--config", s(&bad)], "bad.toml");
    fails(&["build", "--config", s(&bad)], "bad.toml:4:1: unknown field `tiles`");
    fails(&["build", "--config", s(&cfg), "--input", "/nonexistent.las"], "/nonexistent.las");
    fails(&["build", "--config", s(&cfg), "--cell", "0"], "--cell must be from 0.001 to 1 m, got 0");
    // Without an axis source, the axis is the drive path found in the points (`axis --points`).
    let drive = d.join("drive");
    let o = Command::new(env!("CARGO_BIN_EXE_roadscan"))
        .args(["build", "--input", s(&scan), "--out", s(&drive)])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{err}");
    assert!(err.contains("drive path from the points") && err.contains("follows pass 1 of 2"), "{err}");
    assert!(drive.join("axis.xodr").exists() && drive.join("road.xodr").exists());
    // (Points without scan angles: a_build_from_points_without_scan_angles_says_so.)
    // An axis 3.4 m off the road's centre (the wrong --offset): every product is still
    // written, and a failed check says what is wrong (exit 1).
    let traj = survey.join("trajectory.csv");
    let wrong_out = d.join("wrong");
    let wrong =
        ["build", "--input", s(&scan), "--trajectory", s(&traj), "--offset=-1.75", "-q", "--out", s(&wrong_out)];
    let o = Command::new(env!("CARGO_BIN_EXE_roadscan")).args(wrong).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("check failed: "), "{err}");
    assert!(wrong_out.join("road.xodr").exists() && wrong_out.join("crg/road_000.crg").exists());
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(wrong_out.join("report.json")).unwrap()).unwrap();
    let failed = report["checks"].as_array().unwrap().iter().filter(|c| c["pass"] == false).count();
    assert!(failed >= 1, "{report}");
    assert_eq!(std::fs::read(by_config.join("road.xodr")).unwrap(), before);
    let left: Vec<String> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// Without an axis source, points without scan angles (Jakarto's survey) cannot give a drive
/// path: `build` says so in one line, exit 2, and leaves nothing behind.
#[roadscan_tests::needs_shared_data]
#[test]
fn a_build_from_points_without_scan_angles_says_so() {
    let d = tmp("build-no-angles");
    let jakarto = roadscan_tests::shared_data().join("las/jakarto_montreal_mls_0.02s.las");
    let out = d.join("j");
    let o = Command::new(env!("CARGO_BIN_EXE_roadscan"))
        .args(["build", "--input", s(&jakarto), "--out", s(&out)])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.lines().count() == 1 && err.contains("scan angle other than 0"), "{err}");
    let left: Vec<_> = std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.iter().all(|n| n != "j" && !n.to_string_lossy().starts_with('.')), "left behind: {left:?}");
}

/// `--out` naming a directory that holds other files than our products is refused: nothing in
/// it is lost.
#[test]
fn a_build_never_replaces_a_directory_that_is_not_its_own() {
    let d = tmp("build-foreign");
    let mine = d.join("thesis");
    std::fs::create_dir_all(&mine).unwrap();
    std::fs::write(mine.join("chapter1.tex"), "precious").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_roadscan")).args(["demo", "--out", s(&mine), "-q"]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.lines().count() == 1 && err.contains("not a roadscan output"), "{err}");
    assert_eq!(std::fs::read_to_string(mine.join("chapter1.tex")).unwrap(), "precious");
    assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1, "nothing else written");
}

/// Files under `dir`, relative, sorted.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_build_split_into_units_gives_the_products_of_one_build() {
    let d = tmp("units");
    let xodr = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/opendrive/demo.xodr");
    // Two overlapping surveys of the demo road, one LAS and one LAZ.
    let (a, b) = (d.join("a"), d.join("b"));
    roadscan(&["synth", "--scene", s(&xodr), "--s-range", "0..80", "--out", s(&a), "--seed", "3", "-q"]);
    roadscan(&["synth", "--scene", s(&xodr), "--s-range", "70..150", "--out", s(&b), "--seed", "4", "--laz", "-q"]);
    let (las, laz, axis) = (a.join("scan.las"), b.join("scan.laz"), a.join("truth/road.xodr"));
    let opts =
        ["--input", s(&las), s(&laz), "--axis", s(&axis), "--tile", "25", "--buffer", "12", "--voxel-size", "0.5"];
    // Exit code 0, or 1 when a report check fails: the same either way.
    let run = |extra: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_roadscan"))
            .args([&["build"][..], &opts[..], extra, &["-q"][..]].concat())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
    };
    let (one, dist) = (d.join("one"), d.join("dist"));
    let (code, err) = run(&["--out", s(&one)]);
    assert!(matches!(code, Some(0 | 1)), "{err}");

    // The plan: 6 ranges of one 25 m tile, 14 units in four stages.
    let o = roadscan(&[&["plan"][..], &opts[..], &["--out", s(&dist), "--unit-tiles", "1", "-q"]].concat());
    let lines: Vec<serde_json::Value> =
        String::from_utf8(o.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 14);
    let stage_units = |stage: &str| -> Vec<String> {
        lines.iter().filter(|l| l["stage"] == stage).map(|l| l["unit"].to_string()).collect()
    };
    let (points, road, surface, finish) =
        (stage_units("points"), stage_units("road"), stage_units("surface"), stage_units("finish"));
    assert_eq!((points.len(), road.len(), surface.len(), finish.len()), (6, 1, 6, 1));
    assert_eq!(lines[0]["s_range"], serde_json::json!([0.0, 25.0]));
    let work = d.join("dist.work");

    // A unit whose stage before has not run, and a unit with other options, fail cleanly.
    let (code, err) = run(&["--out", s(&dist), "--unit", &road[0]]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("has not run") && err.lines().count() == 1, "{err}");
    let (code, err) = run(&["--out", s(&dist), "--unit", "0", "--cell", "0.02"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("other options"), "{err}");

    // Each unit in its own process, in reverse order within a stage.
    for stage in [&points, &road, &surface] {
        for u in stage.iter().rev() {
            let (code, err) = run(&["--out", s(&dist), "--unit", u]);
            assert_eq!(code, Some(0), "unit {u}: {err}");
        }
    }
    // The first range's unit read only the LAS file, the last only the LAZ file: a unit
    // reads the inputs that reach its range.
    let read = |i: usize| {
        let v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(work.join(format!("points/{i:04}.json"))).unwrap()).unwrap();
        v["points_read"].as_array().unwrap().iter().map(|e| e[0].as_u64().unwrap()).collect::<Vec<_>>()
    };
    assert_eq!((read(0), read(5)), (vec![0], vec![1]));
    let (code, err) = run(&["--out", s(&dist), "--unit", &finish[0]]);
    assert!(matches!(code, Some(0 | 1)), "{err}");
    assert!(!work.exists(), "the work directory is removed");

    // Every product has the bytes of the one build's; the report differs in its timings only.
    assert_eq!(files(&one), files(&dist));
    let timed = ["report.json", "report.html", "manifest.json"];
    for f in files(&one) {
        if !timed.contains(&f.to_str().unwrap()) {
            assert!(std::fs::read(one.join(&f)).unwrap() == std::fs::read(dist.join(&f)).unwrap(), "{}", f.display());
        }
    }
    let json = |p: &Path| -> serde_json::Value { serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap() };
    let (mut r1, mut r2) = (json(&one.join("report.json")), json(&dist.join("report.json")));
    // The units' report times every unit (not only `finish`): their seconds added up, at
    // least the reading they did, and it says how many units ran.
    let units = points.len() + road.len() + surface.len() + finish.len();
    assert_eq!(
        (r1["performance"]["work_units"].as_u64(), r2["performance"]["work_units"].as_u64()),
        (Some(0), Some(units as u64))
    );
    let (secs, reading) =
        (r2["performance"]["seconds"].as_f64().unwrap(), r2["performance"]["reading_seconds"].as_f64().unwrap());
    assert!(secs >= reading && reading > 0.0, "{secs} s in all, {reading} s reading");
    let rate = r2["performance"]["points_per_second"].as_f64().unwrap();
    assert!(
        (rate * secs - r2["performance"]["points_read"].as_f64().unwrap()).abs() < 1.0,
        "{rate} points/s over {secs} s"
    );
    for r in [&mut r1, &mut r2] {
        let m = r.as_object_mut().unwrap();
        m.remove("performance");
        m.remove("stages");
    }
    assert_eq!(r1, r2);
    let (m1, m2) = (json(&one.join("manifest.json")), json(&dist.join("manifest.json")));
    assert_eq!((&m1["inputs"], &m1["parameters"]), (&m2["inputs"], &m2["parameters"]));
    let _ = std::fs::remove_dir_all(&d);
}

#[roadscan_tests::needs_shared_data]
#[test]
fn a_sparse_survey_makes_no_lane_of_noise() {
    // 200 points a revolution instead of 1000: markings come and go, and a border found next
    // to another made lanes of width about zero, negative in places (9 errors in `check`).
    let data = roadscan_tests::shared_data();
    let d = tmp("sparse");
    let scene = data.join("opendrive/esmini/straight_500_superelevation_elevation_curve.xodr");
    let survey = d.join("survey");
    let args = ["--s-range", "40..240", "--points-per-rev", "200", "--out", s(&survey), "-q"];
    roadscan(&[&["synth", "--scene", s(&scene)][..], &args[..]].concat());
    let out = d.join("road.xodr");
    let (axis, scan) = (survey.join("truth/road.xodr"), survey.join("scan.las"));
    roadscan(&["xodr", "--axis", s(&axis), "--input", s(&scan), "--out", s(&out), "-q"]);
    // `check` exits 0: no lane width below zero anywhere, no border inside another. Its
    // warnings are the design's own (superelevation up to 0.5 rad, beyond check's 0.15 rad)
    // and, since the verges are gravel, a lane taken to the pavement's edge where this sparse
    // survey misses the edge line there (at most 6.5 m: a lane, not noise; issue 23 is open).
    let o = roadscan(&["check", s(&out)]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success() && text.contains(" 0 errors"), "{text}");
    for w in text.lines().filter(|l| l.trim_start().starts_with("warning:")) {
        let wide = w.split(" is ").nth(1).and_then(|x| x.split(" m wide").next()).and_then(|x| x.parse::<f64>().ok());
        assert!(
            (w.contains("superelevation") && w.contains("beyond 0.15 rad")) || wide.is_some_and(|x| x < 6.5),
            "{w}"
        );
    }
    // Every lane is at least 0.3 m wide at its section's start and middle.
    let odr = opendrive::read_file(&out).unwrap();
    let road = &odr.roads[0];
    let ends: Vec<f64> = road.lanes.lane_sections.iter().map(|l| l.s).chain([road.length]).collect();
    for (sec, w) in road.lanes.lane_sections.iter().zip(ends.windows(2)) {
        for side in [&sec.left, &sec.right].into_iter().flatten() {
            for lane in &side.lanes {
                for ds in [0.0, 0.5 * (w[1] - w[0])] {
                    let width = opendrive::eval::profile_value(&lane.widths, ds);
                    assert!(width >= 0.3, "lane {} at s {}: {width} m", lane.id, w[0] + ds);
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// Issue 23: a survey of s 300..420 of esmini's curves.xodr road 1 (1,154 m) built on the
/// truth's axis gives a road.xodr of the surveyed part (+-2 m), starting at s 0: its reference
/// line is the truth's over s 298..422, its lanes start at 0, its CRG lies within it and
/// matches the truth surface, the roadside products are in its s; and the units of a plan give
/// the same products.
#[roadscan_tests::needs_shared_data]
#[test]
fn a_partial_survey_gives_the_products_of_the_surveyed_part() {
    let data = roadscan_tests::shared_data();
    let d = tmp("partial");
    let survey = d.join("survey");
    let src = data.join("opendrive/esmini/curves.xodr");
    let args = ["--road", "1", "--s-range", "300..420", "--seed", "1", "-q"];
    roadscan(&[&["synth", "--scene", s(&src), "--out", s(&survey)][..], &args[..]].concat());
    let (scan, axis) = (survey.join("scan.las"), survey.join("truth/road.xodr"));
    let opts = ["--input", s(&scan), "--axis", s(&axis), "--tile", "50"];
    // Exit code 0, or 1 when a report check fails (300 points a revolution leave the CRG's
    // coverage under 95 %).
    let run = |extra: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_roadscan"))
            .args([&["build"][..], &opts[..], extra, &["-q"][..]].concat())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(matches!(o.status.code(), Some(0 | 1)), "build {extra:?}: {err}");
    };
    let out = d.join("out");
    run(&["--out", s(&out)]);
    let json = |p: &Path| -> serde_json::Value { serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap() };
    let truth_odr = opendrive::read_file(&axis).unwrap();
    let odr = opendrive::read_file(out.join("road.xodr")).unwrap();
    let r = &odr.roads[0];
    assert!((r.length - 120.0).abs() <= 4.5, "road.xodr is {} m long", r.length);
    let report = json(&out.join("report.json"));
    let part = &report["road"]["part_of_axis"];
    let (a, b) = (part["s"][0].as_f64().unwrap(), part["s"][1].as_f64().unwrap());
    // The surveyed 300..420 and 2 m, no more (points a few millimetres beyond 300 or 420 do
    // not widen it by a cell).
    assert!((a - 298.0).abs() < 1e-6 && (b - 422.0).abs() < 1e-6 && (b - a - r.length).abs() < 1e-9, "{part}");
    assert_eq!(json(&out.join("manifest.json"))["road_part"], *part);
    // The reference line: the truth's, s - a on ours.
    let (truth, ours) = (RoadEval::new(&truth_odr.roads[0]), RoadEval::new(r));
    assert_eq!(odr.header.offset, truth_odr.header.offset);
    for k in 0..=124 {
        let st = 298.0 + k as f64;
        let (p, q) = (truth.pose(st), ours.pose(st - a));
        assert!((p.x - q.x).hypot(p.y - q.y) <= 0.001, "s {st}: {p:?} vs {q:?}");
    }
    assert_eq!(r.lanes.lane_sections[0].s, 0.0);
    assert!(r.lanes.lane_sections.iter().all(|sec| sec.s >= 0.0 && sec.s < r.length));
    assert!(r.objects.objects.iter().all(|o| (0.0..=r.length).contains(&o.s)));

    // The CRG tiles: within the road, linked over their u range; against the truth surface.
    let (place, tplace) =
        (odr.header.offset.unwrap_or_default().placement(), truth_odr.header.offset.unwrap_or_default().placement());
    let truth_crg =
        opencrg::Surface::from_owned(opencrg::read_file(survey.join("truth/surface.crg")).unwrap(), false).unwrap();
    assert!(r.surface.crgs.len() >= 2, "{:?}", r.surface.crgs);
    let (mut sq, mut n, mut cells) = (0.0, 0usize, 0usize);
    for link in &r.surface.crgs {
        let crg = opencrg::read_file(out.join(&link.file)).unwrap();
        let ours = opencrg::Surface::new(&crg, false).unwrap();
        let ((u0, u1), (v0, v1)) = (ours.u_range(), ours.v_range());
        assert!(u0 >= 0.0 && u1 <= r.length, "{}: u {u0}..{u1}, road {} m", link.file, r.length);
        assert!((link.s_start - u0).abs() < 1e-9 && (link.s_end - u1).abs() < 1e-9, "{link:?}: u {u0}..{u1}");
        let eval = RoadEval::new(r);
        for i in 0..=((u1 - u0) / 0.5) as usize {
            let u = u0 + 0.5 * i as f64;
            for j in 0..=((v1 - v0) / 0.05) as usize {
                let v = v0 + 0.05 * j as f64;
                // On asphalt (features.json): not on the setts (axis s 384..404), not within
                // 25 cm of the curbs, not at the manhole (336, 1.535), the pothole (354,
                // -1.535) or under the car (374.4, -2.07; 4.5 x 1.8 m).
                let st = u + a;
                let near = |s0: f64, t0: f64| (st - s0).hypot(v - t0) < 0.7;
                let car = (st - 374.4).abs() < 3.0 && (v + 2.07).abs() < 1.6;
                if (383.5..=404.5).contains(&st) || v.abs() > 2.8 || near(336.0, 1.535) || near(354.0, -1.535) || car {
                    continue;
                }
                cells += 1;
                let Some(z) = ours.uv_to_z(u, v).filter(|z| z.is_finite()) else { continue };
                let (x, y) = ours.uv_to_xy(u, v);
                let abs = z + eval.elevation(u) + v * eval.planar_cross_slope(u);
                let f = tplace.to_file(place.to_map([x, y, abs]));
                let (tu, tv) = truth_crg.xy_to_uv(f[0], f[1]);
                let Some(tz) = truth_crg.uv_to_z(tu, tv).filter(|t| t.is_finite()) else { continue };
                sq += (f[2] - tz).powi(2);
                n += 1;
            }
        }
    }
    let rms = (sq / n.max(1) as f64).sqrt();
    eprintln!(
        "partial survey: road {:.2} m (axis s {a}..{b}), CRG RMS {:.2} mm over {n} of {cells}",
        r.length,
        rms * 1e3
    );
    assert!(n as f64 >= 0.8 * cells as f64 && rms <= 0.001, "{n} of {cells}, RMS {rms}");

    // The roadside in the road's s.
    let ribbons = json(&out.join("ribbons/ribbons.json"));
    let (s0, cols, cell) =
        (ribbons["s0"].as_f64().unwrap(), ribbons["columns"].as_f64().unwrap(), ribbons["cell"].as_f64().unwrap());
    assert!(s0 > -cell && s0 <= 0.0 && s0 + cols * cell >= r.length && s0 + cols * cell < r.length + cell, "{ribbons}");
    let voxels = json(&out.join("scene.json"));
    let s1 = voxels["s_range"][1].as_f64().unwrap();
    assert!(voxels["s_range"][0] == 0.0 && (s1 - r.length).abs() < 1e-9, "{}", voxels["s_range"]);
    let csv = std::fs::read_to_string(out.join("scene.voxels.csv")).unwrap();
    let s_of: Vec<f64> = csv.lines().skip(1).filter_map(|l| l.split(',').nth(12)?.parse().ok()).collect();
    assert!(s_of.len() > 1000 && s_of.iter().all(|s| (0.0..=r.length).contains(s)), "{} voxels with s", s_of.len());

    // `xodr` alone writes the same part of the road (its reference line the axis road's from
    // s 298); with --crg (in the axis road's s) it keeps the whole road.
    let part_xodr = d.join("part.xodr");
    roadscan(&["xodr", "--axis", s(&axis), "--input", s(&scan), "--out", s(&part_xodr), "-q"]);
    // (Its range comes from the cross sections' 0.5 m rows alone: within a row of build's.)
    let x = opendrive::read_file(&part_xodr).unwrap();
    let xr = RoadEval::new(&x.roads[0]);
    assert!((xr.length() - r.length).abs() <= 1.0, "xodr: {} m, build: {} m", xr.length(), r.length);
    let start = xr.pose(0.0);
    let st = truth.xy_to_st(start.x, start.y, 1.0).unwrap();
    assert!(st.t.abs() < 0.001 && (st.s - a).abs() <= 1.0, "xodr's s 0 at the axis road's {st:?}, build's at {a}");

    // `ribbons` alone: the columns where the points are and 2 m, in the axis road's s.
    let rib = d.join("ribbons-alone");
    roadscan(&["ribbons", "--axis", s(&axis), "--input", s(&scan), "--out", s(&rib), "-q"]);
    let rj = json(&rib.join("ribbons.json"));
    let (rs0, rlen) = (rj["s0"].as_f64().unwrap(), rj["columns"].as_f64().unwrap() * rj["cell"].as_f64().unwrap());
    assert!((rs0 - 298.0).abs() <= 0.5 && (rlen - 124.0).abs() <= 1.0, "{rj}");

    // The units of a plan: the same products.
    let dist = d.join("dist");
    let o = roadscan(&[&["plan"][..], &opts[..], &["--out", s(&dist), "--unit-tiles", "1", "-q"]].concat());
    let units = String::from_utf8(o.stdout).unwrap().lines().count();
    for u in 0..units {
        run(&["--out", s(&dist), "--unit", &u.to_string()]);
    }
    assert_eq!(files(&out), files(&dist));
    for f in files(&out) {
        if !["report.json", "report.html", "manifest.json"].contains(&f.to_str().unwrap()) {
            assert!(std::fs::read(out.join(&f)).unwrap() == std::fs::read(dist.join(&f)).unwrap(), "{}", f.display());
        }
    }
    assert_eq!(json(&dist.join("report.json"))["road"], report["road"]);
    let _ = std::fs::remove_dir_all(&d);
}

/// Two passes whose trajectories carry different smooth vertical errors (`--traj-noise`, 4 mm
/// RMS on z): `build` registers them (the report says by how much; what is left is the
/// points' own noise and texture, about 1 mm per compared cell), and the CRG's heights agree
/// better with the truth surface than without (`--no-register`). A survey without trajectory
/// error is left alone (corrections under 0.3 mm).
#[test]
fn passes_with_different_trajectory_errors_are_registered() {
    let d = tmp("register");
    let run_build = |survey: &Path, out: &Path, extra: &[&str]| -> serde_json::Value {
        let scan = survey.join("scan.las");
        let axis = survey.join("truth/road.xodr");
        let o = Command::new(env!("CARGO_BIN_EXE_roadscan"))
            .args([&["build", "--input", s(&scan), "--axis", s(&axis), "--out", s(out), "-q"][..], extra].concat())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(matches!(o.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap()
    };
    let synth = |name: &str, noise: Option<&str>| -> PathBuf {
        let survey = d.join(name);
        let mut args =
            vec!["synth", "--scene", "demo", "--points-per-rev", "500", "--seed", "3", "--out", s(&survey), "-q"];
        if let Some(n) = noise {
            args.extend(["--traj-noise", n]);
        }
        roadscan(&args);
        survey
    };
    let noisy = synth("noisy", Some("0.0,0.004"));
    let with = run_build(&noisy, &d.join("with"), &[]);
    let r = &with["registration"];
    let (before, after) =
        (r["rms_disagreement_before_m"].as_f64().unwrap(), r["rms_disagreement_after_m"].as_f64().unwrap());
    assert!(r["kept"].as_u64().unwrap() > 200 && after < 0.5 * before && after < 0.0015, "{r}");
    let max = r["max_correction_m"].as_f64().unwrap();
    assert!(max > 0.001 && max < 0.02, "{r}");
    let without = run_build(&noisy, &d.join("without"), &["--no-register"]);
    assert!(without["registration"].is_null());
    // The CRG (a residual on the built road's surface) against the truth surface (absolute
    // heights in the same file frame): the registered one is closer.
    let truth =
        opencrg::Surface::from_owned(opencrg::read_file(noisy.join("truth/surface.crg")).unwrap(), false).unwrap();
    let truth_odr = opendrive::read_file(noisy.join("truth/road.xodr")).unwrap();
    let rms = |out: &Path| -> f64 {
        let odr = opendrive::read_file(out.join("road.xodr")).unwrap();
        assert_eq!(odr.header.offset, truth_odr.header.offset);
        let road = RoadEval::new(&odr.roads[0]);
        let crg = opencrg::read_file(out.join("crg/road_000.crg")).unwrap();
        let ours = opencrg::Surface::new(&crg, false).unwrap();
        let ((u0, u1), (v0, v1)) = (ours.u_range(), ours.v_range());
        let (mut sq, mut n) = (0.0, 0usize);
        for i in 0..((u1 - u0) / 0.25) as usize {
            for j in 0..((v1 - v0) / 0.05) as usize {
                let (u, v) = (u0 + 0.25 * i as f64, v0 + 0.05 * j as f64);
                let (x, y) = ours.uv_to_xy(u, v);
                let (tu, tv) = truth.xy_to_uv(x, y);
                if let (Some(z), Some(tz)) = (ours.uv_to_z(u, v), truth.uv_to_z(tu, tv)) {
                    let z = z + road.elevation(u) + v * road.planar_cross_slope(u);
                    // Potholes, manholes and edges aside (2 cm).
                    if z.is_finite() && tz.is_finite() && (z - tz).abs() < 0.02 {
                        sq += (z - tz).powi(2);
                        n += 1;
                    }
                }
            }
        }
        assert!(n > 1000, "{n} samples");
        (sq / n as f64).sqrt()
    };
    let (rms_with, rms_without) = (rms(&d.join("with")), rms(&d.join("without")));
    eprintln!("registration {r}; CRG against the truth: {rms_with} registered, {rms_without} not");
    assert!(rms_with < rms_without - 0.0002, "CRG against the truth: {rms_with} registered, {rms_without} not");
    let clean = synth("clean", None);
    let r = &run_build(&clean, &d.join("clean-out"), &[])["registration"];
    assert!(r.is_null() || r["max_correction_m"].as_f64().unwrap() < 0.0003, "{r}");
}

/// `build --trajectory` without the mount and without the survey's survey.json beside the
/// trajectory: the scanner's height comes from the points under its track (the survey's 2.2 m
/// within 3 cm), the track is the reference line, and the road's elevation is the truth's
/// within 2 cm.
#[test]
fn a_trajectory_without_its_mount_gets_the_height_from_the_points() {
    let d = tmp("mount");
    let survey = d.join("survey");
    roadscan(&["synth", "--scene", "demo", "--points-per-rev", "500", "--seed", "2", "--out", s(&survey), "-q"]);
    let traj = d.join("trajectory.csv");
    std::fs::copy(survey.join("trajectory.csv"), &traj).unwrap();
    let out = d.join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_roadscan"))
        .args(["build", "--input", s(&survey.join("scan.las")), "--trajectory", s(&traj), "--crs", "EPSG:23700"])
        .args(["--out", s(&out)])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(matches!(o.status.code(), Some(0 | 1)), "{err}");
    let at = err.find("the scanner is ").unwrap_or_else(|| panic!("{err}")) + "the scanner is ".len();
    let h: f64 = err[at..].split(' ').next().unwrap().parse().unwrap();
    assert!((h - 2.2).abs() < 0.03, "{h}");
    assert!(err.contains("the reference line is the vehicle's track"), "{err}");
    let truth = opendrive::read_file(survey.join("truth/road.xodr")).unwrap();
    let odr = opendrive::read_file(out.join("road.xodr")).unwrap();
    let (te, ours) = (RoadEval::new(&truth.roads[0]), RoadEval::new(&odr.roads[0]));
    let (tp, op) =
        (truth.header.offset.unwrap_or_default().placement(), odr.header.offset.unwrap_or_default().placement());
    for k in 1..20 {
        let sv = ours.length() * k as f64 / 20.0;
        let p = ours.pose(sv);
        let q = tp.to_file(op.to_map([p.x, p.y, ours.elevation(sv)]));
        let st = te.xy_to_st(q[0], q[1], 5.0).unwrap();
        // The track of pass 1 runs 1.625 m right of the design's reference line.
        assert!((st.t + 1.625).abs() < 0.05, "track at t {}", st.t);
        assert!((q[2] - te.elevation(st.s) - st.t * te.planar_cross_slope(st.s)).abs() < 0.02, "elevation at s {sv}");
    }
}
