//! End-to-end tests of the `roadscan` binary: output, exit codes, one-line errors, no partial
//! output files.

#![allow(clippy::panic, clippy::unwrap_used)] // tests and benches fail loudly

mod common;

use roadscan_tests::Scratch;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs the binary as a user would: without RUST_BACKTRACE, which turns panics the LAZ
/// decoder makes on corrupt data (and the reader reports as errors) into printed backtraces.
fn roadscan(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_roadscan")).args(args).env_remove("RUST_BACKTRACE").output().expect("run roadscan")
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn tmp_dir(name: &str) -> Scratch {
    Scratch::new(&format!("cli-{name}"))
}

#[test]
fn check_demo_is_clean() {
    let o = roadscan(&["check", repo().join("data/opendrive/demo.xodr").to_str().expect("utf8")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("OpenDRIVE 1.8") && out.contains("1 roads") && out.contains("0 errors, 0 warnings"), "{out}");
}

#[test]
fn check_reports_errors_with_exit_code_1() {
    let d = tmp_dir("check");
    let text = std::fs::read_to_string(repo().join("data/opendrive/demo.xodr")).expect("demo");
    // A lane whose width turns negative, and a gap between records.
    let bad = text.replacen(
        r#"<width sOffset="0" a="2" b="0" c="0" d="0"/>"#,
        r#"<width sOffset="0" a="2" b="-0.1" c="0" d="0"/>"#,
        1,
    );
    let bad = bad.replacen(r#"x="12.5""#, r#"x="12.0""#, 1);
    let f = d.join("bad.xodr");
    std::fs::write(&f, bad).expect("write");
    let o = roadscan(&["check", f.to_str().expect("utf8")]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let out = stdout(&o);
    assert!(out.contains("error: road 1 s=0.000000: lane 2 width becomes negative"), "{out}");
    let o = roadscan(&["check", "--json", f.to_str().expect("utf8")]);
    assert!(stdout(&o).contains("\"severity\": \"error\""), "{}", stdout(&o));
}

#[test]
fn bad_input_is_one_line_and_exit_code_2() {
    let f = repo().join("data/opendrive/err/missing_attribute.xodr");
    let o = roadscan(&["check", f.to_str().expect("utf8")]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("roadscan: error: ")
            && err.contains("missing_attribute.xodr:6:7: <geometry> lacks required attribute 'length'"),
        "{err}"
    );
}

#[test]
fn convert_writes_nothing_on_error() {
    let d = tmp_dir("convert-err");
    let out = d.join("out.xodr");
    let o = roadscan(&[
        "convert",
        repo().join("data/opendrive/err/nan_value.xodr").to_str().expect("utf8"),
        out.to_str().expect("utf8"),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!out.exists());
    assert_eq!(std::fs::read_dir(&d).expect("dir").count(), 0, "no temporary files left");
}

#[test]
fn convert_to_each_version_reads_back() {
    let d = tmp_dir("convert");
    for v in ["1.6", "1.7", "1.8"] {
        let out = d.join(format!("demo{v}.xodr"));
        let o = roadscan(&[
            "convert",
            "-q",
            repo().join("data/opendrive/demo.xodr").to_str().expect("utf8"),
            out.to_str().expect("utf8"),
            "--version",
            v,
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let back = opendrive_header(&out);
        assert!(back.contains(&format!("revMinor=\"{}\"", &v[2..])), "{back}");
    }
    let o = roadscan(&["convert", "a.xodr", "b.xodr", "--version", "2.0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--version must be 1.6, 1.7 or 1.8"));
}

/// `roadscan connect` regenerates fabriksgatan's junction: the written map has the same
/// roads outside the junction, every connecting road of the junction new and linked, and a
/// junction it does not have, or the input as the output, is one error line and no file.
#[roadscan_tests::needs_shared_data]
#[test]
fn connect_regenerates_a_junction_and_refuses_what_it_cannot_do() {
    let d = tmp_dir("connect");
    let map = roadscan_tests::shared_data().join("opendrive/esmini/fabriksgatan.xodr");
    let out = d.join("connected.xodr");
    let o = roadscan(&["connect", map.to_str().expect("utf8"), out.to_str().expect("utf8")]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("junction 4: 12 connecting roads replaced by 12"), "{}", stderr(&o));
    let before = opendrive::read_file(&map).unwrap();
    let after = opendrive::read_file(&out).unwrap();
    let outside = |m: &opendrive::OpenDrive| -> Vec<String> {
        m.roads.iter().filter(|r| r.junction == "-1").map(|r| r.id.clone()).collect()
    };
    assert_eq!(outside(&before), outside(&after));
    let junction = &after.junctions[0];
    assert_eq!(junction.connections.len(), 12);
    for c in &junction.connections {
        let road = after.road(c.connecting_road.as_deref().unwrap()).unwrap();
        assert_eq!(road.junction, junction.id);
        assert!(before.road(&road.id).is_none(), "road {} is not new", road.id);
    }
    for (args, says) in [
        (
            vec!["connect", map.to_str().unwrap(), d.join("x.xodr").to_str().unwrap(), "--junction", "99"],
            "no junction 99",
        ),
        (vec!["connect", map.to_str().unwrap(), map.to_str().unwrap()], "input"),
    ] {
        let o = roadscan(&args);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
        assert!(stderr(&o).contains(says), "{}", stderr(&o));
    }
    assert!(!d.join("x.xodr").exists());
}

fn opendrive_header(p: &Path) -> String {
    let text = std::fs::read_to_string(p).expect("read");
    text.lines().find(|l| l.contains("<header")).unwrap_or_default().to_string()
}

/// `roadscan eval` prints the oracle's format and agrees with libOpenDRIVE's samples on a map
/// of lines, arcs and spirals (1e-6 m; the numbers are printed with 9 decimals).
#[roadscan_tests::needs_shared_data]
#[test]
fn eval_matches_oracle_format_and_values() {
    let data = roadscan_tests::shared_data();
    let map = data.join("opendrive/esmini/curves.xodr");
    let o = roadscan(&["eval", map.to_str().expect("utf8"), "--step", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let ours = stdout(&o);
    let oracle = std::fs::read_to_string(data.join("opendrive/oracle/esmini_curves.txt")).expect("oracle");
    let samples = |t: &str| -> Vec<Vec<f64>> {
        t.lines()
            .filter(|l| !l.starts_with('#') && !l.starts_with("ROAD") && !l.starts_with("GEOM"))
            .map(|l| {
                l.split(|c: char| c.is_whitespace() || c == '|' || c == ':')
                    .filter(|x| !x.is_empty())
                    .map(|x| x.parse::<f64>().expect("number"))
                    .collect()
            })
            .collect()
    };
    let (a, b) = (samples(&ours), samples(&oracle));
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.len(), y.len());
        for (u, v) in x.iter().zip(y) {
            assert!((u - v).abs() <= 1.5e-6, "{x:?} vs {y:?}");
        }
    }
    assert!(ours.contains("ROAD 1 length 1154.399475 junction -1 geometries 13 lanesections 1"), "{}", &ours[..300]);
}

#[test]
fn help_has_examples() {
    for args in [
        vec!["--help"],
        vec!["check", "--help"],
        vec!["eval", "--help"],
        vec!["convert", "--help"],
        vec!["connect", "--help"],
        vec!["crg", "--help"],
        vec!["info", "--help"],
    ] {
        let o = roadscan(&args);
        assert!(o.status.success());
        assert!(stdout(&o).contains("Examples:"), "{args:?}");
    }
}

/// `plan --help`'s shell lines are copied and run as they are (`.ci/slurm_check.sh` runs its
/// sbatch lines on Slurm): they must not be wrapped at the terminal's width, however narrow.
#[test]
fn plan_help_keeps_its_shell_lines_whole_on_a_narrow_terminal() {
    for columns in ["60", "100"] {
        let o = Command::new(env!("CARGO_BIN_EXE_roadscan"))
            .args(["plan", "--help"])
            .env("COLUMNS", columns)
            .output()
            .expect("run roadscan");
        assert!(o.status.success(), "{}", stderr(&o));
        let help = stdout(&o);
        // The options are still wrapped to the width.
        assert!(help.contains("--unit-tiles"), "{help}");
        let slurm: Vec<&str> =
            help.lines().skip_while(|l| !l.starts_with("On Slurm")).skip(1).take_while(|l| !l.is_empty()).collect();
        assert_eq!(slurm.len(), 4, "{help}");
        for (l, start) in slurm.iter().zip(["  a=$(sbatch ", "  b=$(sbatch ", "  c=$(sbatch ", "  sbatch "]) {
            assert!(l.starts_with(start) && l.contains("--wrap") && l.contains("--unit $"), "{l}");
            assert!(l.ends_with("_ID')") || l.ends_with("$N\")") || l.ends_with("))\""), "{l}");
        }
        let xargs = help.lines().find(|l| l.contains("xargs")).unwrap_or_default();
        assert!(xargs.ends_with("break; }"), "{xargs}");
    }
}

/// Every verb's examples print as written, whatever the width: the long lines of `axis`,
/// `synth` and `world` whole (clap once wrapped them at 100 columns).
#[test]
fn every_verbs_examples_print_unwrapped() {
    for (verb, line) in [
        ("axis", "  roadscan axis --trajectory survey/trajectory.csv --offset 1.625 --sensor-height 2.2 --crs EPSG:23700 --out axis.xodr"),
        ("synth", "--clutter --traj-noise 0.03,0.05 --out messy-survey"),
        ("world", "--cast rays.bin --hits hits.f32"),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_roadscan"))
            .args([verb, "--help"])
            .env("COLUMNS", "60")
            .output()
            .expect("run roadscan");
        assert!(o.status.success(), "{}", stderr(&o));
        let help = stdout(&o);
        let at = help.find("Examples:").unwrap_or_else(|| panic!("{verb}: no examples"));
        let example = help[at..].lines().find(|l| l.contains(line.trim())).unwrap_or_default();
        assert!(example.len() > 100, "{verb}: {line:?} wrapped:\n{help}");
    }
}

#[test]
fn synth_writes_the_survey_and_its_truth() {
    let d = tmp_dir("synth");
    let out = d.join("survey");
    let o = roadscan(&[
        "synth",
        "--scene",
        "demo",
        "--out",
        out.to_str().unwrap(),
        "--seed",
        "3",
        "--points-per-rev",
        "64",
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    for f in ["scan.las", "trajectory.csv", "truth/road.xodr", "truth/surface.crg", "truth/features.json"] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    // The truth road is our demo road, and it reads back.
    let road = opendrive::read_file(out.join("truth/road.xodr")).unwrap();
    assert_eq!(road.roads.len(), 1);
    let traj = std::fs::read_to_string(out.join("trajectory.csv")).unwrap();
    assert_eq!(traj.lines().next(), Some("time,x,y,z,roll,pitch,heading,pass"));
    // 2 passes x 3001 profiles.
    assert_eq!(traj.lines().count(), 1 + 2 * 3001);
    let o = roadscan(&["synth", "--scene", "moon", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("neither `demo` nor an existing OpenDRIVE file"), "{}", stderr(&o));
    let o = roadscan(&["synth", "--scene", "demo", "--road", "1", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--road and --s-range apply to an OpenDRIVE --scene"), "{}", stderr(&o));
}

#[test]
fn synth_scans_a_road_of_an_opendrive_file() {
    let d = tmp_dir("synth-file");
    let out = d.join("survey");
    let xodr = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/opendrive/demo.xodr");
    let xodr = xodr.to_str().unwrap();
    let args = ["synth", "--scene", xodr, "--road", "1", "--s-range", "20..50", "--points-per-rev", "64", "-q"];
    let o = roadscan(&[&args[..], &["--out", out.to_str().unwrap()]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let features = std::fs::read_to_string(out.join("truth/features.json")).unwrap();
    assert!(features.contains("\"s_range\": [20, 50]"), "{features}");
    // Two passes over 30 m at 10 m/s and 200 profiles per second.
    let traj = std::fs::read_to_string(out.join("trajectory.csv")).unwrap();
    assert_eq!(traj.lines().count(), 1 + 2 * 601);
    let crg = opencrg::read_file(out.join("truth/surface.crg")).unwrap();
    assert!((crg.u_first() - 20.0).abs() < 1e-9 && crg.nu == 3001, "u from {} over {} rows", crg.u_first(), crg.nu);
    for (road, range, want) in [("7", "20..50", "no road with id '7'"), ("1", "140..160", "must lie within the road's")]
    {
        let o = roadscan(&[&args[..3], &["--road", road, "--s-range", range, "--out", out.to_str().unwrap()]].concat());
        assert_eq!(o.status.code(), Some(2));
        assert!(stderr(&o).contains(want), "{}", stderr(&o));
    }
}

/// `--clutter` and `--traj-noise` (issue 23): recorded in survey.json, the clutter's objects in
/// features.json, the truth CRG that of the pavement alone; without them none of their keys.
#[test]
fn synth_clutter_and_trajectory_noise() {
    let d = tmp_dir("synth-clutter");
    let xodr = repo().join("data/opendrive/demo.xodr");
    let run = |name: &str, extra: &[&str]| {
        let out = d.join(name);
        let args = ["synth", "--scene", xodr.to_str().unwrap(), "--s-range", "60..90", "--points-per-rev", "64", "-q"];
        let o = roadscan(&[&args[..], &["--out", out.to_str().unwrap()], extra].concat());
        (out, o)
    };
    let (clean, o) = run("clean", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (messy, o) = run("messy", &["--clutter", "--traj-noise", "0.03,0.05"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = |dir: &Path, f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    let json = text(&messy, "survey.json");
    assert!(json.contains("\"noise_rms_m\": {\"xy\": 0.03, \"z\": 0.05"), "{json}");
    assert!(json.contains("\"clutter\": {\"multipath_fraction\""), "{json}");
    let features = text(&messy, "truth/features.json");
    assert!(features.contains("\"type\": \"person\"") && features.contains("\"clutter\""), "{features}");
    let json = text(&clean, "survey.json");
    assert!(!json.contains("noise_rms_m") && !json.contains("clutter"), "{json}");
    assert!(!text(&clean, "truth/features.json").contains("person"));
    let bytes = |dir: &Path, f: &str| std::fs::read(dir.join(f)).unwrap();
    assert!(bytes(&clean, "truth/surface.crg") == bytes(&messy, "truth/surface.crg"), "clutter in the truth CRG");
    assert!(bytes(&clean, "scan.las") != bytes(&messy, "scan.las"));
    // The trajectory moves by centimetres, not metres.
    let rows = |dir: &Path| -> Vec<Vec<f64>> {
        text(dir, "trajectory.csv")
            .lines()
            .skip(1)
            .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
            .collect()
    };
    let moved =
        rows(&clean).iter().zip(&rows(&messy)).map(|(a, b)| (b[1] - a[1]).hypot(b[2] - a[2])).fold(0.0, f64::max);
    assert!(moved > 0.001 && moved < 0.3, "the trajectory moved up to {moved} m");
    for bad in ["0.03", "0.03,-1", "a,b"] {
        let (_, o) = run("bad", &["--traj-noise", bad]);
        assert_eq!(o.status.code(), Some(2));
        assert!(stderr(&o).contains("SIGMA_XY,SIGMA_Z"), "{}", stderr(&o));
    }
    let o = roadscan(&["synth", "--help"]);
    let help = stdout(&o);
    assert!(
        help.contains("--clutter") && help.contains("--traj-noise 0.03,0.05") && help.contains("multipath"),
        "{help}"
    );
}

/// A virtual survey of part of the demo road from its file: (test dir, survey dir).
fn demo_survey(name: &str, s_range: &str, points_per_rev: &str) -> (Scratch, PathBuf) {
    let d = tmp_dir(name);
    let survey = d.join("survey");
    let xodr = repo().join("data/opendrive/demo.xodr");
    let o = roadscan(&[
        "synth",
        "--scene",
        xodr.to_str().unwrap(),
        "--s-range",
        s_range,
        "--points-per-rev",
        points_per_rev,
        "--out",
        survey.to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    (d, survey)
}

#[test]
fn crg_grids_a_virtual_survey_and_fails_cleanly() {
    let (d, survey) = demo_survey("crg", "50..60", "2000");
    let axis = survey.join("truth/road.xodr");
    let las = survey.join("scan.las");
    let out = d.join("road.crg");
    let png = d.join("road.png");
    let (axis_s, las_s, out_s) = (axis.to_str().unwrap(), las.to_str().unwrap(), out.to_str().unwrap());
    let o = roadscan(&[
        "crg",
        "--axis",
        axis_s,
        "--input",
        las_s,
        "--out",
        out_s,
        "--width-left",
        "3",
        "--width-right",
        "3",
        "--preview",
        png.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("coverage"), "{}", stderr(&o));
    assert!(png.is_file());
    // The grid covers the surveyed s range and agrees with the truth where both have nodes.
    let got = opencrg::read_file(&out).unwrap();
    let truth = opencrg::read_file(survey.join("truth/surface.crg")).unwrap();
    // The grid covers the s extent of the surface points, the survey's 50..60 to within 0.1 m
    // (two profiles, 5 cm apart), at both ends: not a part of it.
    let u_last = got.u_first() + (got.nu - 1) as f64 * got.du();
    assert!((49.9..=50.1).contains(&got.u_first()) && (59.9..=60.1).contains(&u_last), "u {}..{u_last}", got.u_first());
    let (tu0, tv0) = (truth.u_first(), truth.road.v_right.unwrap());
    let (gu0, gv0) = (got.u_first(), got.road.v_right.unwrap());
    let (mut sq, mut n) = (0.0, 0);
    for iu in 0..got.nu {
        for iv in 0..got.nv() {
            let (u, v) = (gu0 + iu as f64 * 0.01, gv0 + iv as f64 * 0.01);
            let (ju, jv) = (((u - tu0) / 0.01).round(), ((v - tv0) / 0.01).round());
            if ju < 0.0 || jv < 0.0 || ju as usize >= truth.nu || jv as usize >= truth.nv() {
                continue;
            }
            let (ju, jv) = (ju as usize, jv as usize);
            // Heights above each file's REFERENCE_LINE_START_Z.
            let z = |c: &opencrg::Crg, iu, iv| c.road.start_z.unwrap_or(0.0) + c.z_at(iu, iv) as f64;
            let (a, b) = (z(&got, iu, iv), z(&truth, ju, jv));
            if a.is_finite() && b.is_finite() {
                sq += (a - b) * (a - b);
                n += 1;
            }
        }
    }
    let rms = (sq / n as f64).sqrt();
    // Sparse (profiles 5 cm apart) and with 1.7 m of setts in the range: 2.4 mm.
    assert!(n > 100_000 && rms < 0.003, "{n} nodes, RMS {rms}");
    // Tiles of 4 m: road_000.crg .. road_002.crg, sharing boundary rows, in a directory of
    // their own (which crg does not make: a mistyped directory is an error).
    let d = d.join("tiles");
    let tiles = d.join("tiled.crg");
    let o =
        roadscan(&["crg", "--axis", axis_s, "--input", las_s, "--out", tiles.to_str().unwrap(), "--tile", "4", "-q"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("tiles: no such directory"), "{}", stderr(&o));
    std::fs::create_dir(&d).unwrap();
    let o =
        roadscan(&["crg", "--axis", axis_s, "--input", las_s, "--out", tiles.to_str().unwrap(), "--tile", "4", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let names: Vec<String> = (0..3).map(|k| format!("tiled_{k:03}.crg")).collect();
    for n in &names {
        let t = opencrg::read_file(d.join(n)).unwrap();
        assert!(t.nu <= 401, "{n}: {} rows", t.nu);
    }
    assert!(!d.join("tiled_003.crg").exists() && !tiles.exists());
    // Errors: one line, exit 2, no output.
    let bad = d.join("bad.crg");
    for (args, want) in [
        (vec!["--input", "/nonexistent.las"], "/nonexistent.las"),
        (vec!["--input", las_s, "--road", "9"], "no road with id '9'"),
        (vec!["--input", las_s, "--z", "relative"], "--z must be absolute or residual"),
        (vec!["--input", las_s, "--width-left", "3"], "give both --width-left and --width-right"),
        (vec!["--input", axis_s], "not a LAS file"),
    ] {
        let o = roadscan(&[&["crg", "--axis", axis_s, "--out", bad.to_str().unwrap()], &args[..]].concat());
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(want) && stderr(&o).lines().count() == 1, "{args:?}: {}", stderr(&o));
        assert!(!bad.exists());
    }
}

#[test]
fn crg_reprojects_points_in_another_crs_to_the_axis() {
    let (d, survey) = demo_survey("crg-utm", "80..90", "1500");
    // The same points in UTM 34N (EPSG:32634).
    let utm = d.join("utm.las");
    write_reprojected(&survey.join("scan.las"), &utm, 32634, 1.0);
    let axis = survey.join("truth/road.xodr");
    let part = ["--width-left", "3", "--width-right", "3", "--s-range", "81..89"];
    let run = |input: &Path, out: &Path| crg_on(&axis, &[input], out, &part);
    let (a, b) = (d.join("eov.crg"), d.join("utm.crg"));
    let o = run(&survey.join("scan.las"), &a);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&utm, &b);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("reprojecting from EPSG:32634 to EPSG:23700"), "{}", stderr(&o));
    // Same grid within the millimetre rounding of the UTM coordinates.
    let (n, _, rms) = grid_difference(&a, &b);
    assert!(n > 100_000 && rms < 3e-4, "{n} nodes, RMS {rms}");
    // An axis without a geoReference: the points go into the first input's CRS (EOV), and the
    // UTM file is reprojected to it, not mixed in unchanged (its points would then lie 300 km
    // off the road and be dropped: the same points used as from the EOV file alone).
    let text = std::fs::read_to_string(&axis).unwrap();
    let plain = d.join("plain.xodr");
    let start = text.find("<geoReference>").unwrap();
    let end = text.find("</geoReference>").unwrap() + "</geoReference>".len();
    std::fs::write(&plain, format!("{}{}", &text[..start], &text[end..])).unwrap();
    let used = |o: &Output| -> u64 {
        let out = format!("{}{}", stdout(o), stderr(o));
        let (_, tail) = out.rsplit_once(" near the surface, ").unwrap_or_else(|| panic!("{out}"));
        tail.split(' ').next().unwrap().parse().unwrap()
    };
    let both = d.join("both.crg");
    let o = crg_on(&plain, &[&survey.join("scan.las"), &utm], &both, &part);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("reprojecting from EPSG:32634 to EPSG:23700"), "{}", stderr(&o));
    let single = run(&survey.join("scan.las"), &d.join("single.crg"));
    let (u1, u2) = (used(&single), used(&o));
    assert!(u2.abs_diff(2 * u1) <= u1 / 100, "used {u1} points from one file, {u2} from both");
    // A file without a CRS gets one with --crs; a bad one is an error.
    let o = roadscan(&[
        "crg",
        "--axis",
        axis.to_str().unwrap(),
        "--input",
        utm.to_str().unwrap(),
        "--out",
        d.join("x.crg").to_str().unwrap(),
        "--crs",
        "WGS84",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("expected EPSG:NNNN or a PROJ string"), "{}", stderr(&o));
    assert!(!d.join("x.crg").exists());
}

/// Width, height and bit depth of a PNG (from its IHDR).
fn png_size(p: &Path) -> (u32, u32, u8) {
    let b = std::fs::read(p).unwrap();
    assert_eq!(&b[..8], b"\x89PNG\r\n\x1a\n", "{}", p.display());
    let be = |k: usize| u32::from_be_bytes(b[k..k + 4].try_into().unwrap());
    (be(16), be(20), b[24])
}

/// A number of a flat JSON document: the first `"key": value`.
fn json_number(doc: &str, key: &str) -> f64 {
    let at = doc.find(&format!("\"{key}\": ")).unwrap_or_else(|| panic!("no {key} in {doc}")) + key.len() + 4;
    doc[at..].split([',', '}', '\n']).next().unwrap().trim().parse().unwrap()
}

#[test]
fn voxel_and_ribbons_of_a_virtual_survey() {
    let (d, survey) = demo_survey("roadside", "40..60", "1000");
    let axis = survey.join("truth/road.xodr");
    let las = survey.join("scan.las");
    let (axis_s, las_s) = (axis.to_str().unwrap(), las.to_str().unwrap());
    let obj = d.join("scene.obj");
    let glb = d.join("scene.glb");
    let args =
        ["voxel", "--axis", axis_s, "--input", las_s, "--out", obj.to_str().unwrap(), "--glb", glb.to_str().unwrap()];
    let o = roadscan(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let side = std::fs::read_to_string(d.join("scene.json")).unwrap();
    let text = std::fs::read_to_string(&obj).unwrap();
    // The OBJ holds what the sidecar says; every face's corners exist; the MTL defines every
    // material used.
    let v = text.lines().filter(|l| l.starts_with("v ")).count();
    let f: Vec<&str> = text.lines().filter(|l| l.starts_with("f ")).collect();
    assert_eq!(v as f64, json_number(&side, "vertices"));
    assert_eq!(f.len() as f64, json_number(&side, "faces"));
    assert!(f
        .iter()
        .flat_map(|l| l.split_whitespace().skip(1))
        .all(|i| (1..=v).contains(&i.parse::<usize>().unwrap())));
    let mtl = std::fs::read_to_string(d.join("scene.mtl")).unwrap();
    for m in text.lines().filter_map(|l| l.strip_prefix("usemtl ")) {
        assert!(mtl.contains(&format!("newmtl {m}\n")), "material {m}");
    }
    // The voxels CSV: one row per voxel; the glb's header and length.
    let csv = std::fs::read_to_string(d.join("scene.voxels.csv")).unwrap();
    assert_eq!((csv.lines().count() - 1) as f64, json_number(&side, "voxels"));
    let g = std::fs::read(&glb).unwrap();
    assert_eq!(&g[..4], b"glTF");
    assert_eq!(u32::from_le_bytes(g[8..12].try_into().unwrap()) as usize, g.len());
    // Same input, same bytes.
    std::fs::create_dir_all(d.join("again")).unwrap();
    let again = d.join("again/scene.obj");
    let o = roadscan(&["voxel", "--axis", axis_s, "--input", las_s, "--out", again.to_str().unwrap(), "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read(&again).unwrap() == text.as_bytes(), "a second run differs");

    // Ribbons: image sizes and units as the sidecar says.
    let rib = d.join("ribbons");
    let o = roadscan(&[
        "ribbons",
        "--axis",
        axis_s,
        "--input",
        las_s,
        "--out",
        rib.to_str().unwrap(),
        "--s-range",
        "40..60",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let side = std::fs::read_to_string(rib.join("ribbons.json")).unwrap();
    let (cols, rows) = (json_number(&side, "columns") as u32, json_number(&side, "rows") as u32);
    assert_eq!((cols, rows), (200, 220), "20 m by 22 m at 0.1 m");
    for s in ["left", "right"] {
        assert_eq!(png_size(&rib.join(format!("{s}_depth.png"))), (cols, rows, 16));
        assert_eq!(png_size(&rib.join(format!("{s}_intensity.png"))), (cols, rows, 8));
        let t = std::fs::read(rib.join(format!("{s}_depth.tif"))).unwrap();
        assert_eq!(t.len(), 8 + 2 + 120 + 4 + (cols * rows * 4) as usize);
    }
    assert!(png_size(&rib.join("street_view.png")).0 >= cols);

    // Bad input: one line, exit 2, nothing written.
    let none = d.join("none.obj");
    for bad in [
        vec!["voxel", "--axis", axis_s, "--input", "missing.las", "--out", none.to_str().unwrap()],
        vec!["voxel", "--axis", axis_s, "--input", las_s, "--out", none.to_str().unwrap(), "--size=-1"],
        vec!["voxel", "--axis", axis_s, "--input", las_s, "--out", d.join("x.txt").to_str().unwrap()],
        vec!["ribbons", "--axis", axis_s, "--input", las_s, "--out", d.join("r2").to_str().unwrap(), "--cell", "0"],
    ] {
        let o = roadscan(&bad);
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
        assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
    }
    assert!(!none.exists() && !d.join("none.mtl").exists() && !d.join("r2").exists());
    let _ = std::fs::remove_dir_all(&d);
}

/// A ribbon's depth TIFF (as `write_depth_tiff` lays it out): width, height and the depths.
fn depth_tiff(p: &Path) -> (usize, usize, Vec<f32>) {
    let b = std::fs::read(p).unwrap();
    let le = |k: usize| u32::from_le_bytes(b[k..k + 4].try_into().unwrap()) as usize;
    // ImageWidth and ImageLength are the first two entries of the IFD at 8.
    let (w, h) = (le(10 + 8), le(10 + 12 + 8));
    let px = b[134..].chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect::<Vec<_>>();
    assert_eq!(px.len(), w * h, "{}", p.display());
    (w, h, px)
}

/// How far the depth images `a` and `b` of the same size differ: the largest gap (in rows)
/// between the columns' mean filled rows, over the columns with 20 or more filled pixels in
/// both; the share of `a`'s filled pixels with a depth of `b` within 5 cm one row or less
/// away; and the two shares filled.
fn ribbon_gap(a: &(usize, usize, Vec<f32>), b: &(usize, usize, Vec<f32>)) -> (f64, f64, f64, f64) {
    let (w, h) = (a.0, a.1);
    assert_eq!((w, h), (b.0, b.1));
    let at = |img: &[f32], c: usize, r: usize| img[r * w + c];
    let mut gap = 0.0f64;
    for c in 0..w {
        let rows = |img: &[f32]| (0..h).filter(|&r| !at(img, c, r).is_nan()).collect::<Vec<_>>();
        let (ra, rb) = (rows(&a.2), rows(&b.2));
        if ra.len() >= 20 && rb.len() >= 20 {
            let mean = |v: &[usize]| v.iter().sum::<usize>() as f64 / v.len() as f64;
            gap = gap.max((mean(&ra) - mean(&rb)).abs());
        }
    }
    let (mut filled, mut matched) = (0usize, 0usize);
    for r in 0..h {
        for c in 0..w {
            let d = at(&a.2, c, r);
            if d.is_nan() {
                continue;
            }
            filled += 1;
            let near = (r.saturating_sub(1)..(r + 2).min(h)).any(|rr| (at(&b.2, c, rr) - d).abs() < 0.05);
            matched += usize::from(near);
        }
    }
    let share = |img: &[f32]| img.iter().filter(|d| !d.is_nan()).count() as f64 / img.len() as f64;
    (gap, matched as f64 / filled.max(1) as f64, share(&a.2), share(&b.2))
}

#[test]
fn ribbons_find_the_road_surface_where_the_axis_elevation_is_missing_or_off() {
    // Issue 23: an axis without elevation (or in another height datum) gave blank ribbons
    // and exit 0.
    let (d, survey) = demo_survey("ribbons-datum", "40..70", "1000");
    let truth = std::fs::read_to_string(survey.join("truth/road.xodr")).unwrap();
    let las = survey.join("scan.las");
    let (start, end) = (truth.find("<elevationProfile>").unwrap(), truth.find("</elevationProfile>").unwrap());
    let profile = &truth[start..end];
    let shifted = |dz: f64| {
        // Every elevation record's constant term moved by dz.
        let mut p = String::new();
        let mut rest = profile;
        while let Some(k) = rest.find(" a=\"") {
            let v0 = k + 4;
            let v1 = v0 + rest[v0..].find('"').unwrap();
            let a: f64 = rest[v0..v1].parse().unwrap();
            p.push_str(&rest[..v0]);
            p.push_str(&format!("{}", a + dz));
            rest = &rest[v1..];
        }
        p.push_str(rest);
        format!("{}{p}{}", &truth[..start], &truth[end..])
    };
    let run = |name: &str, xodr: &str, extra: &[&str]| {
        let axis = d.join(format!("{name}.xodr"));
        std::fs::write(&axis, xodr).unwrap();
        let out = d.join(name);
        let mut args = vec!["ribbons", "--axis", axis.to_str().unwrap(), "--input", las.to_str().unwrap()];
        args.extend(["--out", out.to_str().unwrap(), "--s-range", "40..70"]);
        args.extend(extra);
        (roadscan(&args), out)
    };
    let (o, truth_out) = run("truth", &truth, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("road surface"), "the true axis' elevation is the road's: {}", stderr(&o));
    let json = std::fs::read_to_string(truth_out.join("ribbons.json")).unwrap();
    assert!(json.contains("\"surface_found\": null"), "{json}");
    let tiff = |out: &Path, side: &str| depth_tiff(&out.join(format!("{side}_depth.tif")));
    let without = format!("{}{}", &truth[..start], &truth[end + "</elevationProfile>".len()..]);
    assert!(!without.contains("<elevation "));
    for (name, xodr) in [("flat", without), ("up3", shifted(3.0)), ("down40", shifted(-40.0))] {
        let (o, out) = run(name, &xodr, &[]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        assert!(stderr(&o).contains("road surface in the points"), "{name}: {}", stderr(&o));
        let json = std::fs::read_to_string(out.join("ribbons.json")).unwrap();
        assert!(json.contains("\"surface_found\": {\"slabs\": "), "{name}: {json}");
        for side in ["left", "right"] {
            let (want, got) = (tiff(&truth_out, side), tiff(&out, side));
            let (gap, matched, f0, f1) = ribbon_gap(&want, &got);
            assert!(gap <= 1.0, "{name} {side}: the columns' mean rows differ by {gap:.2} rows");
            assert!(matched >= 0.95, "{name} {side}: {:.1} % of the pixels match", 100.0 * matched);
            assert!((f0 - f1).abs() <= 0.02 && f0 > 0.05, "{name} {side}: filled {f0:.3} and {f1:.3}");
        }
    }
    // Hostile: an axis 1 km away from the points, and heights above all of the points: an
    // error naming the output and what to check, nothing written.
    let far = truth.replacen(" x=\"", " x=\"1000", 1);
    assert_ne!(far, truth);
    for (name, xodr, extra) in
        [("far", far.as_str(), &[][..]), ("high", truth.as_str(), &["--h-range", "200..220"][..])]
    {
        let (o, out) = run(name, xodr, extra);
        assert_eq!(o.status.code(), Some(2), "{name}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(e.contains(out.to_str().unwrap()) && e.contains("check the axis"), "{name}: {e}");
        assert_eq!(e.trim().lines().count(), 1, "{e}");
        assert!(!out.exists(), "{name}: nothing is written");
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_closed_pipe_is_not_an_error() {
    // `roadscan eval ... | head -1`: far more output than a pipe holds, read one line, close.
    use std::io::BufRead;
    let mut child = Command::new(env!("CARGO_BIN_EXE_roadscan"))
        .args(["eval", repo().join("data/opendrive/demo.xodr").to_str().unwrap(), "--step", "0.001"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    assert!(!first.is_empty());
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "exit {:?}: {}", out.status.code(), stderr(&out));
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
}

#[test]
fn crg_leaves_all_its_files_or_none() {
    let (d, survey) = demo_survey("crg-staged", "50..60", "1000");
    let axis = survey.join("truth/road.xodr");
    let las = survey.join("scan.las");
    let crg = |out: &Path, extra: &[&str]| crg_on(&axis, &[&las], out, &[extra, &["-q"]].concat());
    let names = |dir: &Path| -> Vec<String> {
        let mut v: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    };
    // A preview that cannot be put in place (a directory of that name): no CRG either, and no
    // staged file.
    let out = d.join("one");
    std::fs::create_dir_all(out.join("p.png")).unwrap();
    let o = crg(&out.join("road.crg"), &["--preview", out.join("p.png").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).lines().count() == 1 && stderr(&o).contains("p.png: is a directory"), "{}", stderr(&o));
    assert_eq!(names(&out), ["p.png"]);
    // Tiles of 2 m, then of 3 m: the second run's tiles only, the first's past them removed.
    let tiles = d.join("tiles");
    std::fs::create_dir(&tiles).unwrap();
    let o = crg(&tiles.join("t.crg"), &["--tile", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let first = names(&tiles);
    assert!(first.len() >= 3, "{first:?}");
    let o = crg(&tiles.join("t.crg"), &["--tile", "3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let second = names(&tiles);
    assert!(second.len() < first.len() && second.iter().all(|n| first.contains(n)), "{first:?} then {second:?}");
    for (k, n) in second.iter().enumerate() {
        assert_eq!(*n, format!("t_{k:03}.crg"));
    }
}

#[test]
fn crg_takes_an_axis_with_approximate_elevation_given_max_height() {
    let (d, survey) = demo_survey("crg-max-height", "50..60", "1000");
    let las = survey.join("scan.las");
    // The same axis 1 m lower in the map (header offset z + 1 m): its surface lies 1 m above
    // the points.
    let text = std::fs::read_to_string(survey.join("truth/road.xodr")).unwrap();
    let (a, b) = (text.find("<offset ").unwrap(), text.find("hdg=\"0\"/>").unwrap());
    assert!(text[a..b].contains(" z=\"100\" "), "{}", &text[a..b]);
    let low = d.join("low.xodr");
    std::fs::write(&low, format!("{}{}{}", &text[..a], text[a..b].replace(" z=\"100\" ", " z=\"101\" "), &text[b..]))
        .unwrap();
    let run = |axis: &Path, out: &Path, extra: &[&str]| {
        crg_on(axis, &[&las], out, &[&["--s-range", "51..59", "-q"], extra].concat())
    };
    // Taking the axis' elevation as it is (--search-height 0), the few points within 0.3 m of
    // that surface (on cars, kerbs) give a grid of a few nodes: an error, nothing written.
    let o = run(&low, &d.join("few.crg"), &["--search-height", "0"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("nearly empty") && !d.join("few.crg").exists(), "{}", stderr(&o));
    // By default the road surface is found in the points, 1 m below the axis' surface.
    let o = run(&low, &d.join("low.crg"), &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&survey.join("truth/road.xodr"), &d.join("true.crg"), &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    // On the carriageway (|v| <= 3 m), heights 1 m lower in the low axis' frame: at least 90 %
    // of the nodes within 1 mm of the true axis' grid.
    let z = |c: &opencrg::Crg, k: usize| c.road.start_z.unwrap_or(0.0) + c.z[k] as f64;
    let (lo, tr) = (opencrg::read_file(d.join("low.crg")).unwrap(), opencrg::read_file(d.join("true.crg")).unwrap());
    assert_eq!((lo.nu, lo.nv()), (tr.nu, tr.nv()));
    let v0 = tr.road.v_right.unwrap();
    let (mut sq, mut n, mut both, mut close) = (0.0, 0usize, 0usize, 0usize);
    for k in (0..tr.z.len()).filter(|k| (v0 + (k % tr.nv()) as f64 * 0.01).abs() <= 3.0) {
        let (a, b) = (z(&lo, k), z(&tr, k));
        both += usize::from(a.is_finite() != b.is_finite());
        if a.is_finite() && b.is_finite() {
            sq += (a + 1.0 - b).powi(2);
            n += 1;
            close += usize::from((a + 1.0 - b).abs() < 1e-3);
        }
    }
    let rms = (sq / n as f64).sqrt();
    println!("{n} nodes, RMS {rms}, {both} covered in one only, {close} within 1 mm");
    assert!(n > 300_000 && close * 10 >= n * 9, "{n} nodes, {close} within 1 mm (RMS {rms})");
}

/// `roadscan crg` of the road in `axis` over the points of `inputs`, into `out`, with `more`
/// arguments.
fn crg_on(axis: &Path, inputs: &[&Path], out: &Path, more: &[&str]) -> Output {
    let mut args = vec!["crg", "--axis", axis.to_str().unwrap(), "--out", out.to_str().unwrap(), "--input"];
    args.extend(inputs.iter().map(|p| p.to_str().unwrap()));
    roadscan(&[&args[..], more].concat())
}

/// Nodes with heights in both CRG files (of the same grid), and the mean and RMS of their
/// height differences (above each file's REFERENCE_LINE_START_Z), m.
fn grid_difference(a: &Path, b: &Path) -> (usize, f64, f64) {
    let (a, b) = (opencrg::read_file(a).unwrap(), opencrg::read_file(b).unwrap());
    assert_eq!((a.nu, a.nv()), (b.nu, b.nv()));
    let (za, zb) = (a.road.start_z.unwrap_or(0.0), b.road.start_z.unwrap_or(0.0));
    let d: Vec<f64> =
        a.z.iter()
            .zip(&b.z)
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .map(|(x, y)| za + *x as f64 - zb - *y as f64)
            .collect();
    let n = d.len().max(1) as f64;
    (d.len(), d.iter().sum::<f64>() / n, (d.iter().map(|v| v * v).sum::<f64>() / n).sqrt())
}

/// `src`'s points reprojected to EPSG `epsg` (WKT of the code), heights divided by `unit`
/// (metres per unit of the CRS), written to `dst` with offsets at the first point.
fn write_reprojected(src: &Path, dst: &Path, epsg: u32, unit: f64) {
    let mut r = scan::LasReader::open(src).unwrap();
    let to = scan::Reprojection::new(scan::CrsDef::from_epsg(23700).unwrap(), scan::CrsDef::from_epsg(epsg).unwrap())
        .unwrap();
    let mut w: Option<scan::LasWriter> = None;
    let mut p = scan::Points::default();
    while r.read(&mut p, 100_000).unwrap() > 0 {
        to.apply(&mut p.x, &mut p.y).unwrap();
        let w = w.get_or_insert_with(|| {
            let opts = scan::LasOptions {
                wkt: scan::CrsDef::wkt_of(epsg).unwrap().into(),
                offset: [p.x[0].round(), p.y[0].round(), 0.0],
                scale: 0.001,
                system: "test".into(),
            };
            scan::LasWriter::create(dst, &opts).unwrap()
        });
        p.z.iter_mut().for_each(|z| *z /= unit);
        w.write(&common::las_points(&p)).unwrap();
    }
    w.unwrap().finish().unwrap();
}

#[test]
fn crg_takes_points_in_feet_to_a_metre_axis() {
    let (d, survey) = demo_survey("crg-feet", "80..90", "1000");
    let axis = survey.join("truth/road.xodr");
    // The survey in NAD83(HARN) / Oregon GIC Lambert (international feet, x, y and z).
    let feet = d.join("feet.las");
    write_reprojected(&survey.join("scan.las"), &feet, 2994, 0.3048);
    assert_eq!(scan::LasReader::open(&feet).unwrap().header().crs.unit, Some(0.3048));
    let run = |input: &Path, out: &Path| crg_on(&axis, &[input], out, &["--s-range", "81..89"]);
    let (a, b) = (d.join("metres.crg"), d.join("feet.crg"));
    let o = run(&survey.join("scan.las"), &a);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&feet, &b);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("reprojecting from EPSG:2994 to EPSG:23700"), "{}", stderr(&o));
    // Heights in metres again: no offset between the grids (heights left in feet would be 3.3
    // times as high), and the same surface within 1.5 mm RMS: the millifoot rounding, and the
    // round trip through a projection centred 9,000 km away moves points by 0.4 mm, which moves
    // sett edges.
    let (n, mean, rms) = grid_difference(&a, &b);
    assert!(n > 100_000 && mean.abs() < 1e-4 && rms < 1.5e-3, "{n} nodes, mean {mean}, RMS {rms}");
}

#[test]
fn crg_writes_a_coverage_map() {
    let (d, survey) = demo_survey("crg-coverage", "50..60", "1000");
    let (out, map) = (d.join("road.crg"), d.join("maps/coverage.png"));
    std::fs::create_dir(d.join("maps")).unwrap();
    let o = crg_on(
        &survey.join("truth/road.xodr"),
        &[&survey.join("scan.las")],
        &out,
        &["--coverage", map.to_str().unwrap(), "-q"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // A pixel per 10 x 10 nodes: along s, and across.
    let c = opencrg::read_file(&out).unwrap();
    let (w, h, depth) = png_size(&map);
    assert_eq!((w as usize, h as usize, depth), (c.nu.div_ceil(10), c.nv().div_ceil(10), 8));
}
