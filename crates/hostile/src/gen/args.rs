//! Argument cases: command lines of every verb with bad options, values, paths and
//! combinations, each to be refused with a clear error (a huge voxel buffer only must not
//! crash), never a panic.

use super::Gen;
use crate::case::{Case, Expect, Kind, Place};

impl Gen {
    pub(super) fn args(&mut self) -> Result<(), String> {
        let las_verbs = |verb: &str, out: &str| -> Vec<String> {
            vec![
                verb.into(),
                "--axis".into(),
                "{AX}".into(),
                "--input".into(),
                "{LAS}".into(),
                "--out".into(),
                out.into(),
            ]
        };
        let mut list: Vec<(String, String, Vec<String>)> = Vec::new();
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<String>>();
        for (verb, out) in
            [("crg", "{O}/road.crg"), ("voxel", "{O}/scene.obj"), ("ribbons", "{O}/ribbons"), ("xodr", "{O}/road.xodr")]
        {
            for (n, flag, val) in [
                ("s-range-negative", "--s-range", "-5..10"),
                ("s-range-reversed", "--s-range", "10..5"),
                ("s-range-past-end", "--s-range", "1e9..2e9"),
            ] {
                if verb == "xodr" {
                    continue; // xodr has no --s-range
                }
                let mut a = las_verbs(verb, out);
                a.extend([flag.to_string(), val.to_string()]);
                list.push((format!("{verb}-{n}"), flag.to_string(), a));
                let mut a = las_verbs(verb, out);
                a.push(format!("{flag}={val}"));
                list.push((format!("{verb}-{n}-eq"), flag.to_string(), a));
            }
            let mut a = las_verbs(verb, out);
            a.extend(v(&["--road", "no-such-road"]));
            list.push((format!("{verb}-road-missing"), "--road".to_string(), a));
            let mut a = las_verbs(verb, out);
            a.extend(v(&["--crs", "EPSG:999999999"]));
            list.push((format!("{verb}-crs-unknown"), "--crs".to_string(), a));
            let mut a = las_verbs(verb, "{LASCOPY}");
            a[4] = "{LASCOPY}".into();
            list.push((format!("{verb}-out-is-input"), "--out".to_string(), a));
            let mut a = las_verbs(verb, out);
            a[4] = "{O}/no-such.las".into();
            list.push((format!("{verb}-input-missing"), "--input".to_string(), a));
            let mut a = las_verbs(verb, out);
            a[4] = "{DIR}".into();
            list.push((format!("{verb}-input-directory"), "--input".to_string(), a));
        }
        let mut one = |n: &str, flag: &str, a: &[&str]| list.push((n.to_string(), flag.to_string(), v(a)));
        one("eval-step-1e-6", "--step", &["eval", "{AX}", "--step", "1e-6"]);
        one("eval-step-0", "--step", &["eval", "{AX}", "--step", "0"]);
        one("eval-step-negative", "--step", &["eval", "{AX}", "--step=-1"]);
        one("eval-step-nan", "--step", &["eval", "{AX}", "--step", "nan"]);
        one("eval-step-inf", "--step", &["eval", "{AX}", "--step", "inf"]);
        one(
            "crg-tile-negative",
            "--tile",
            &["crg", "--axis", "{AX}", "--input", "{LAS}", "--out", "{O}/road.crg", "--tile=-1"],
        );
        one(
            "crg-tile-1e-9",
            "--tile",
            &["crg", "--axis", "{AX}", "--input", "{LAS}", "--out", "{O}/road.crg", "--tile", "1e-9"],
        );
        one(
            "crg-cell-0",
            "--cell",
            &["crg", "--axis", "{AX}", "--input", "{LAS}", "--out", "{O}/road.crg", "--cell", "0"],
        );
        one(
            "crg-cell-1e-6",
            "--cell",
            &["crg", "--axis", "{AX}", "--input", "{LAS}", "--out", "{O}/road.crg", "--cell", "1e-6"],
        );
        one(
            "crg-width-1e9",
            "--width-left",
            &["crg", "--axis", "{AX}", "--input", "{LAS}", "--out", "{O}/road.crg", "--width-left", "1e9"],
        );
        one(
            "crg-max-gap-nan",
            "--max-gap",
            &["crg", "--axis", "{AX}", "--input", "{LAS}", "--out", "{O}/road.crg", "--max-gap", "nan"],
        );
        one(
            "crg-max-height-negative",
            "--max-height",
            &["crg", "--axis", "{AX}", "--input", "{LAS}", "--out", "{O}/road.crg", "--max-height=-1"],
        );
        one(
            "crg-estimator-unknown",
            "--estimator",
            &["crg", "--axis", "{AX}", "--input", "{LAS}", "--out", "{O}/road.crg", "--estimator", "mean"],
        );
        one(
            "crg-z-unknown",
            "--z",
            &["crg", "--axis", "{AX}", "--input", "{LAS}", "--out", "{O}/road.crg", "--z", "relative"],
        );
        one(
            "crg-out-no-such-dir",
            "--out",
            &["crg", "--axis", "{AX}", "--input", "{LAS}", "--out", "/no/such/dir/x.crg"],
        );
        one("crg-out-proc", "--out", &["crg", "--axis", "{AX}", "--input", "{LAS}", "--out", "/proc/x.crg"]);
        one(
            "crg-preview-is-input",
            "--preview",
            &["crg", "--axis", "{AX}", "--input", "{LAS}", "--out", "{O}/road.crg", "--preview", "{AXCOPY}"],
        );
        one(
            "voxel-size-0",
            "--size",
            &["voxel", "--axis", "{AX}", "--input", "{LAS}", "--out", "{O}/scene.obj", "--size", "0"],
        );
        one(
            "voxel-size-1e-6",
            "--size",
            &["voxel", "--axis", "{AX}", "--input", "{LAS}", "--out", "{O}/scene.obj", "--size", "1e-6"],
        );
        one(
            "voxel-buffer-1e9",
            "--buffer",
            &["voxel", "--axis", "{AX}", "--input", "{LAS}", "--out", "{O}/scene.obj", "--buffer", "1e9"],
        );
        one(
            "voxel-colour-unknown",
            "--colour",
            &["voxel", "--axis", "{AX}", "--input", "{LAS}", "--out", "{O}/scene.obj", "--colour", "plaid"],
        );
        one(
            "voxel-origin-nan",
            "--origin",
            &["voxel", "--axis", "{AX}", "--input", "{LAS}", "--out", "{O}/scene.obj", "--origin", "nan,0,0"],
        );
        one(
            "ribbons-cell-1e-6",
            "--cell",
            &["ribbons", "--axis", "{AX}", "--input", "{LAS}", "--out", "{O}/ribbons", "--cell", "1e-6"],
        );
        one(
            "ribbons-h-range-empty",
            "--h-range",
            &["ribbons", "--axis", "{AX}", "--input", "{LAS}", "--out", "{O}/ribbons", "--h-range", "5..5"],
        );
        one(
            "ribbons-h-range-1e308",
            "--h-range",
            &["ribbons", "--axis", "{AX}", "--input", "{LAS}", "--out", "{O}/ribbons", "--h-range=-1e308..1e308"],
        );
        one(
            "ribbons-min-depth-negative",
            "--min-depth",
            &["ribbons", "--axis", "{AX}", "--input", "{LAS}", "--out", "{O}/ribbons", "--min-depth=-1"],
        );
        one(
            "xodr-half-width-0",
            "--half-width",
            &["xodr", "--axis", "{AX}", "--input", "{LAS}", "--out", "{O}/road.xodr", "--half-width", "0"],
        );
        one(
            "xodr-tolerance-0",
            "--tolerance",
            &["xodr", "--axis", "{AX}", "--input", "{LAS}", "--out", "{O}/road.xodr", "--tolerance", "0"],
        );
        one(
            "build-tile-0",
            "--tile",
            &["build", "--axis", "{AX}", "--input", "{LAS}", "--out", "{O}/build", "--tile", "0"],
        );
        one(
            "build-cell-1e-6",
            "--cell",
            &["build", "--axis", "{AX}", "--input", "{LAS}", "--out", "{O}/build", "--cell", "1e-6"],
        );
        one(
            "build-unit-99",
            "--unit",
            &["build", "--axis", "{AX}", "--input", "{LAS}", "--out", "{O}/build", "--unit", "99"],
        );
        one("build-out-is-input-dir", "--out", &["build", "--axis", "{AXCOPY}", "--input", "{LAS}", "--out", "{DIR}"]);
        one(
            "build-axis-and-trajectory",
            "--trajectory",
            &["build", "--axis", "{AX}", "--trajectory", "{TRAJ}", "--input", "{LAS}", "--out", "{O}/build"],
        );
        one("build-config-missing", "--config", &["build", "--config", "{O}/no-such.toml", "--out", "{O}/build"]);
        one(
            "plan-unit-tiles-0",
            "--unit-tiles",
            &["plan", "--axis", "{AX}", "--input", "{LAS}", "--out", "{O}/build", "--unit-tiles", "0"],
        );
        one(
            "axis-tolerance-0",
            "--tolerance",
            &["axis", "--trajectory", "{TRAJ}", "--out", "{O}/axis.xodr", "--tolerance", "0"],
        );
        one(
            "axis-tolerance-nan",
            "--tolerance",
            &["axis", "--trajectory", "{TRAJ}", "--out", "{O}/axis.xodr", "--tolerance", "nan"],
        );
        one(
            "axis-min-length-negative",
            "--min-length",
            &["axis", "--trajectory", "{TRAJ}", "--out", "{O}/axis.xodr", "--min-length=-1"],
        );
        one(
            "axis-lane-width-0",
            "--lane-width",
            &["axis", "--trajectory", "{TRAJ}", "--out", "{O}/axis.xodr", "--lane-width", "0"],
        );
        one(
            "axis-offset-nan",
            "--offset",
            &["axis", "--trajectory", "{TRAJ}", "--out", "{O}/axis.xodr", "--offset", "nan"],
        );
        one(
            "axis-sensor-height-inf",
            "--sensor-height",
            &["axis", "--trajectory", "{TRAJ}", "--out", "{O}/axis.xodr", "--sensor-height", "inf"],
        );
        one(
            "axis-xodr-step-1e-6",
            "--step",
            &["axis", "--xodr", "{AX}", "--road", "1", "--out", "{O}/axis.xodr", "--step", "1e-6"],
        );
        one("axis-out-is-trajectory", "--out", &["axis", "--trajectory", "{TRAJCOPY}", "--out", "{TRAJCOPY}"]);
        one(
            "axis-pass-missing",
            "--pass",
            &["axis", "--trajectory", "{TRAJ}", "--pass", "77", "--out", "{O}/axis.xodr"],
        );
        one("convert-out-is-input", "demo.xodr", &["convert", "{AXCOPY}", "{AXCOPY}"]);
        one("convert-version-9", "--version", &["convert", "{AX}", "{O}/out.xodr", "--version", "9.9"]);
        one("convert-format-unknown", "--format", &["convert", "{CRG}", "{O}/out.crg", "--format", "XYZW"]);
        one("convert-out-no-such-dir", "/no/such/dir", &["convert", "{AX}", "/no/such/dir/x.xodr"]);
        one(
            "render-relative-unknown",
            "--relative",
            &["render", "{CRG}", "--out", "{O}/out.png", "--relative", "sideways"],
        );
        one("render-range-negative", "--range-mm", &["render", "{CRG}", "--out", "{O}/out.png", "--range-mm=-1"]);
        one("render-range-nan", "--range-mm", &["render", "{CRG}", "--out", "{O}/out.png", "--range-mm", "nan"]);
        one("crg-eval-opt-unknown", "--opt", &["crg-eval", "{CRG}", "--opt", "no_such_option=1"]);
        one("crg-eval-opt-garbage", "--opt", &["crg-eval", "{CRG}", "--opt", "border_mode_u=xyz"]);
        one(
            "synth-points-per-rev-0",
            "--points-per-rev",
            &["synth", "--scene", "demo", "--out", "{O}/survey", "--points-per-rev", "0"],
        );
        one("synth-rate-0", "--rate", &["synth", "--scene", "demo", "--out", "{O}/survey", "--rate", "0"]);
        one(
            "synth-traj-offset-1e308",
            "--traj-offset",
            &["synth", "--scene", "demo", "--out", "{O}/survey", "--traj-offset", "1e308,0,0"],
        );
        one("synth-scene-missing", "--scene", &["synth", "--scene", "{O}/no-such.xodr", "--out", "{O}/survey"]);
        one(
            "synth-s-range-negative",
            "--s-range",
            &["synth", "--scene", "{AX}", "--out", "{O}/survey", "--s-range=-5..10"],
        );
        one("check-dev-zero", "/dev/zero", &["check", "/dev/zero"]);
        one("check-directory", "{DIR}", &["check", "{DIR}"]);
        one("info-missing", "no-such.las", &["info", "{O}/no-such.las"]);
        one("info-none", "FILES", &["info"]);
        one("unknown-verb", "frobnicate", &["frobnicate"]);
        one("unknown-flag", "--frobnicate", &["check", "{AX}", "--frobnicate"]);
        for (n, flag, args) in list {
            let no_dir = args.iter().any(|a| a.starts_with("/no/"));
            self.cases.push(Case {
                name: format!("args/{n}"),
                kind: Kind::Args,
                file: None,
                // A huge buffer is only slow to fill, not wrong: it must not crash.
                expect: if n == "voxel-buffer-1e9" { Expect::Any } else { Expect::Fail },
                per_verb: Vec::new(),
                place: Place::Flag(flag),
                partner: None,
                watch: if no_dir { vec!["/no".into()] } else { Vec::new() },
                args,
            });
        }
        Ok(())
    }
}
