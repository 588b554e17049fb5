//! Fault tests of the output discipline: `build`, `crg` (one grid with its pictures, and
//! tiles), `voxel` and `ribbons` killed at every step of their commit (the test hook
//! `ROADSCAN_FAULT=STEP:N`) and at moments of their work (SIGKILL), and run out of disk space
//! (a small tmpfs in a mount namespace of its own). Afterwards the previous products are
//! intact or the new ones whole, once any later run has written beside them nothing else
//! remains, and no input changed.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use roadscan_tests::Scratch;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_roadscan")
}

fn roadscan(args: &[String], fault: Option<&str>) -> Output {
    let mut c = Command::new(bin());
    c.args(args).env_remove("RUST_BACKTRACE").env_remove("ROADSCAN_FAULT");
    if let Some(f) = fault {
        c.env("ROADSCAN_FAULT", f);
    }
    c.output().unwrap()
}

fn demo_xodr() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/opendrive/demo.xodr")
}

/// Every file below `dir` (relative name -> a hash of its bytes; none for the build's report
/// and manifest, which hold timings) and the hidden entries at any depth.
type State = (BTreeMap<String, Option<u64>>, Vec<String>);

fn state(dir: &Path) -> State {
    fn walk(root: &Path, dir: &Path, files: &mut BTreeMap<String, Option<u64>>, hidden: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().display().to_string();
            if e.file_name().to_string_lossy().starts_with('.') {
                hidden.push(rel);
            } else if p.is_dir() {
                walk(root, &p, files, hidden);
            } else {
                use std::hash::{Hash, Hasher};
                let timed = ["report.json", "report.html", "manifest.json"].iter().any(|n| rel.ends_with(n));
                let mut h = std::collections::hash_map::DefaultHasher::new();
                std::fs::read(&p).unwrap().hash(&mut h);
                files.insert(rel, (!timed).then(|| h.finish()));
            }
        }
    }
    let (mut files, mut hidden) = (BTreeMap::new(), Vec::new());
    walk(dir, dir, &mut files, &mut hidden);
    hidden.sort();
    (files, hidden)
}

fn names(s: &State) -> Vec<&String> {
    s.0.keys().collect()
}

/// A small survey (20 m of the demo road) in `d/in`, made once per test.
fn survey(d: &Path) -> (PathBuf, PathBuf) {
    let s = d.join("in");
    let o = roadscan(
        &[
            "synth",
            "--scene",
            demo_xodr().to_str().unwrap(),
            "--s-range",
            "0..20",
            "--points-per-rev",
            "200",
            "--out",
            s.to_str().unwrap(),
            "-q",
        ]
        .map(String::from),
        None,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    (s.join("truth/road.xodr"), s.join("scan.las"))
}

/// A verb's two runs with different products (`v1`, `v2`), writing into `dir`.
struct Case {
    name: &'static str,
    v1: Vec<String>,
    v2: Vec<String>,
}

fn cases(axis: &Path, las: &Path, dir: &Path) -> Vec<Case> {
    let a = |v: &[&str]| -> Vec<String> {
        let mut args: Vec<String> = v.iter().map(|s| s.to_string()).collect();
        let common = ["--axis", axis.to_str().unwrap(), "--input", las.to_str().unwrap(), "-q"];
        args.splice(1..1, common.iter().map(|s| s.to_string()));
        args
    };
    let p = |f: &str| dir.join(f).display().to_string();
    vec![
        Case {
            name: "build",
            v1: a(&["build", "--out", &p("b"), "--cell", "0.02", "--voxel-size", "0.5"]),
            v2: a(&["build", "--out", &p("b")]),
        },
        Case {
            name: "crg",
            v1: a(&[
                "crg",
                "--out",
                &p("c.crg"),
                "--preview",
                &p("c.png"),
                "--coverage",
                &p("cov.png"),
                "--cell",
                "0.02",
            ]),
            v2: a(&["crg", "--out", &p("c.crg"), "--preview", &p("c.png"), "--coverage", &p("cov.png")]),
        },
        Case {
            name: "crg tiles",
            v1: a(&["crg", "--out", &p("t.crg"), "--tile", "5", "--cell", "0.02"]),
            v2: a(&["crg", "--out", &p("t.crg"), "--tile", "10"]),
        },
        Case {
            name: "voxel",
            v1: a(&["voxel", "--out", &p("scene.obj"), "--glb", &p("scene.glb"), "--size", "0.5"]),
            v2: a(&["voxel", "--out", &p("scene.obj"), "--glb", &p("scene.glb"), "--size", "0.25"]),
        },
        Case {
            name: "ribbons",
            v1: a(&["ribbons", "--out", &p("rib"), "--cell", "0.1"]),
            v2: a(&["ribbons", "--out", &p("rib"), "--cell", "0.05"]),
        },
    ]
}

fn run_ok(args: &[String]) {
    let o = roadscan(args, None);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
}

/// Any later run writing beside the products (here: a conversion into the same directory),
/// which finishes or clears what an interrupted one left; its own file is then removed.
fn later_run(dir: &Path) {
    let t = dir.join("later.xodr");
    run_ok(&["convert", demo_xodr().to_str().unwrap(), t.to_str().unwrap(), "-q"].map(String::from));
    std::fs::remove_file(t).unwrap();
}

fn killed(o: &Output) -> bool {
    use std::os::unix::process::ExitStatusExt;
    o.status.signal() == Some(6) || o.status.code() == Some(134)
}

#[test]
fn killed_at_every_commit_step_and_during_the_work_the_old_or_the_new_products_remain_whole() {
    let d = Scratch::new("faults");
    let (axis, las) = survey(&d);
    let inputs = state(&d.join("in"));
    let dir = d.join("out");
    std::fs::create_dir(&dir).unwrap();
    for case in cases(&axis, &las, &dir) {
        run_ok(&case.v1);
        let s1 = state(&dir);
        let t = Instant::now();
        run_ok(&case.v2);
        let t2 = t.elapsed();
        let s2 = state(&dir);
        assert_ne!(s1.0, s2.0, "{}: the two runs make the same products", case.name);
        assert!(s1.1.is_empty() && s2.1.is_empty(), "{}: left {:?} {:?}", case.name, s1.1, s2.1);
        run_ok(&case.v1);
        assert_eq!(state(&dir), s1, "{}: not the same bytes again", case.name);
        let mut kills = 0;
        for step in ["journal", "aside", "rename", "remove-old", "remove-staging"] {
            // The most passages of a step: crg tiles' 2 renames and 2 removals.
            for k in 1..=5 {
                let o = roadscan(&case.v2, Some(&format!("{step}:{k}")));
                if !killed(&o) {
                    // Fewer than k passages through this step: the run completed.
                    assert!(
                        o.status.code().is_some_and(|c| c <= 1),
                        "{}: {}",
                        case.name,
                        String::from_utf8_lossy(&o.stderr)
                    );
                    assert_eq!(state(&dir), s2, "{}: {step}:{k} not killed, yet not the new products", case.name);
                    run_ok(&case.v1);
                    break;
                }
                kills += 1;
                let visible = state(&dir).0;
                if step == "journal" {
                    assert!(visible == s1.0, "{}: killed at {step}:{k}, the old products changed", case.name);
                }
                later_run(&dir);
                let after = state(&dir);
                // Before the journal: the old products; after it, the commit is finished.
                let want = if step == "journal" { &s1 } else { &s2 };
                assert!(
                    after.0 == want.0,
                    "{}: killed at {step}:{k}, after a later run: {:?}, want {:?}",
                    case.name,
                    names(&after),
                    names(want)
                );
                assert!(after.1.is_empty(), "{}: killed at {step}:{k}, left {:?}", case.name, after.1);
                run_ok(&case.v1);
            }
        }
        assert!(kills >= 5, "{}: only {kills} commit steps reached", case.name);
        // SIGKILL at moments of the work (and maybe of the commit).
        for frac in [0.2, 0.5, 0.8] {
            let mut child = Command::new(bin()).args(&case.v2).env_remove("ROADSCAN_FAULT").spawn().unwrap();
            std::thread::sleep(Duration::from_secs_f64(t2.as_secs_f64() * frac));
            let _ = child.kill();
            let _ = child.wait();
            let visible = state(&dir).0;
            later_run(&dir);
            let after = state(&dir);
            assert!(
                after.0 == s1.0 || after.0 == s2.0,
                "{}: killed at {frac} of its time: {:?}",
                case.name,
                names(&after)
            );
            if visible != after.0 {
                assert_eq!(after.0, s2.0, "{}: a later run changed the old products", case.name);
            }
            assert!(after.1.is_empty(), "{}: killed at {frac} of its time, left {:?}", case.name, after.1);
            run_ok(&case.v1);
        }
    }
    assert_eq!(state(&d.join("in")), inputs, "an input changed");
}

#[test]
fn an_output_over_an_input_or_into_a_missing_directory_is_refused_and_nothing_is_written() {
    let d = Scratch::new("faults-refuse");
    let (axis, las) = survey(&d);
    // As if `in` were a build's output (the demo's holds its survey): replacing it would
    // delete the inputs.
    std::fs::write(d.join("in/manifest.json"), "{}").unwrap();
    let before = state(&d);
    let (a, l) = (axis.to_str().unwrap(), las.to_str().unwrap());
    let missing = d.join("no/such/x.crg");
    let in_dir = d.join("in");
    let runs: Vec<Vec<&str>> = vec![
        vec!["crg", "--axis", a, "--input", l, "--out", l],
        vec!["crg", "--axis", a, "--input", l, "--out", a],
        vec!["axis", "--xodr", a, "--road", "1", "--out", a],
        vec!["crg", "--axis", a, "--input", l, "--out", missing.to_str().unwrap()],
        vec!["voxel", "--axis", a, "--input", l, "--out", "x.obj", "--glb", l],
        vec!["xodr", "--axis", a, "--input", l, "--out", a],
        vec!["convert", a, a],
        vec!["build", "--axis", a, "--input", l, "--out", in_dir.to_str().unwrap()],
    ];
    for r in runs {
        let o = roadscan(&r.iter().map(|s| s.to_string()).collect::<Vec<_>>(), None);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{r:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{r:?}: {err}");
        assert!(
            err.contains("is an input of this run")
                || err.contains("no such directory")
                || err.contains("holds the input")
                || err.contains("must name a"),
            "{r:?}: {err}"
        );
        assert_eq!(state(&d), before, "{r:?} changed something");
    }
}

/// Runs `script` (bash) with a tmpfs of `mb` MB mounted at `mnt`, in a mount namespace of
/// its own (as root, or as a user mapped to root where user namespaces are allowed).
fn with_tmpfs(mnt: &Path, mb: u32, script: &str) -> Output {
    let body = format!("set -u\nmount -t tmpfs -o size={mb}m tmpfs '{}' || exit 77\n{script}", mnt.display());
    let o = Command::new("unshare").args(["--map-root-user", "--mount", "bash", "-c", &body]).output();
    let o = o.unwrap_or_else(|e| panic!("unshare (util-linux) is needed for the full-disk test: {e}"));
    assert_ne!(o.status.code(), Some(77), "cannot mount a tmpfs: {}", String::from_utf8_lossy(&o.stderr));
    o
}

#[test]
fn a_full_disk_fails_with_one_line_and_leaves_the_previous_products_and_nothing_else() {
    let d = Scratch::new("faults-disk");
    let (axis, las) = survey(&d);
    let mnt = d.join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let report = d.join("report");
    std::fs::create_dir(&report).unwrap();
    let common = format!("--axis '{}' --input '{}' -q", axis.display(), las.display());
    // Each verb: the first run fits; a filler leaves too little space for the second, which
    // must fail; the listing and the bytes before and after are compared below.
    for (name, v1, v2) in [
        ("build", format!("build {common} --out M/b --cell 0.05 --voxel-size 1"), format!("build {common} --out M/b")),
        (
            "crg",
            format!("crg {common} --out M/c.crg --preview M/c.png --cell 0.05"),
            format!("crg {common} --out M/c.crg --preview M/c.png"),
        ),
        (
            "voxel",
            format!("voxel {common} --out M/s.obj --glb M/s.glb --size 1"),
            format!("voxel {common} --out M/s.obj --glb M/s.glb --size 0.1"),
        ),
        (
            "ribbons",
            format!("ribbons {common} --out M/r --cell 0.5"),
            format!("ribbons {common} --out M/r --cell 0.02"),
        ),
    ] {
        let (v1, v2) =
            (v1.replace("M/", &format!("{}/", mnt.display())), v2.replace("M/", &format!("{}/", mnt.display())));
        let r = report.display();
        let script = format!(
            r#"R='{bin}'
$R {v1}; c=$?; [ $c -le 1 ] || {{ echo "first run failed: $c" > '{r}/err'; exit 0; }}
(cd '{m}' && find . -type f -exec sha256sum {{}} + | sort) > '{r}/before'
avail=$(df --output=avail -k '{m}' | tail -1)
fallocate -l $(( (avail - 64) * 1024 )) '{m}/.filler' 2>/dev/null || dd if=/dev/zero of='{m}/.filler' bs=1k count=$((avail - 64)) 2>/dev/null
$R {v2} 2> '{r}/stderr'; echo $? > '{r}/code'
rm -f '{m}/.filler'
(cd '{m}' && find . -type f -exec sha256sum {{}} + | sort) > '{r}/after'
ls -A '{m}' > '{r}/listing'
rm -rf '{m}'/* '{m}'/.[!.]*
"#,
            bin = bin(),
            m = mnt.display(),
        );
        let o = with_tmpfs(&mnt, 64, &script);
        assert!(o.status.success(), "{name}: {}", String::from_utf8_lossy(&o.stderr));
        assert!(!report.join("err").exists(), "{name}: {}", std::fs::read_to_string(report.join("err")).unwrap());
        let read = |f: &str| std::fs::read_to_string(report.join(f)).unwrap();
        let (code, err) = (read("code"), read("stderr"));
        assert_eq!(code.trim(), "2", "{name}: a full disk must fail with exit 2: {err}");
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        assert!(err.contains("No space left on device") && err.contains(&mnt.display().to_string()), "{name}: {err}");
        assert_eq!(read("before"), read("after"), "{name}: the previous products changed");
        let hidden: Vec<String> = read("listing").lines().filter(|l| l.starts_with('.')).map(String::from).collect();
        assert!(hidden.is_empty(), "{name}: left {hidden:?}");
    }
}
