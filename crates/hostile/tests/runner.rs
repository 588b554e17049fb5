//! The runner's classification, on fake binaries (shell scripts) that panic, abort, hang,
//! over-allocate, print two lines, leave files behind or behave.

use hostile::case::{Case, Expect, Kind, Place};
use hostile::run::{classify, execute, listing, Failure, Judge, Observed};
use std::path::{Path, PathBuf};
use std::time::Duration;

struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let p = std::env::temp_dir().join(format!("hostile-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(p.join("out")).expect("scratch");
        Scratch(p)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs the shell script `body` as the fake roadscan on the case file `bad.xodr` and returns
/// the failures found.
fn failures_of(name: &str, body: &str, expect: Expect) -> (Vec<Failure>, Observed) {
    let s = Scratch::new(name);
    let script = s.0.join("fake-roadscan");
    std::fs::write(&script, format!("#!/bin/sh\n{body}\n")).expect("script");
    let status = std::process::Command::new("chmod").arg("+x").arg(&script).status().expect("chmod");
    assert!(status.success());
    let input = s.0.join("bad.xodr");
    std::fs::write(&input, "<OpenDRIVE>").expect("input");
    let out = s.0.join("out");
    let case = Case::file("xodr/fake", Kind::Xodr, "bad.xodr".into(), expect);
    let inputs_before = listing(&s.0.join("in"));
    let mut in_before = inputs_before.clone();
    in_before.insert("bad.xodr".into(), (false, 11, 0));
    let out_before = listing(&out);
    let args = vec![input.display().to_string(), out.display().to_string()];
    let o = execute(&script, &args, &out, None, Duration::from_millis(1500), 100 << 20).expect("runs");
    let mut in_after = listing(&s.0.join("in"));
    let size = std::fs::metadata(&input).map(|m| m.len()).unwrap_or(0);
    in_after.insert("bad.xodr".into(), (false, size, 0));
    let judge = Judge {
        case: &case,
        expect,
        file_name: Some("bad.xodr".into()),
        flag: None,
        out_before,
        out_after: listing(&out),
        inputs_before: in_before,
        inputs_after: in_after,
        appeared: Vec::new(),
    };
    let mut f: Vec<Failure> = classify(&judge, &o).into_iter().map(|(f, _)| f).collect();
    f.sort();
    (f, o)
}

#[test]
fn a_clear_one_line_error_with_exit_2_and_nothing_left_passes() {
    let (f, o) = failures_of("clear", r#"echo "roadscan: error: $1:3:7: bad attribute" >&2; exit 2"#, Expect::Fail);
    assert_eq!(f, vec![], "{o:?}");
}

#[test]
fn a_panic_is_a_panic() {
    let (f, _) = failures_of(
        "panic",
        r#"echo "roadscan: internal error (a bug, please report it): x" >&2; exit 101"#,
        Expect::Fail,
    );
    assert_eq!(f, vec![Failure::Panic]);
}

#[test]
fn a_signal_is_an_abort() {
    let (f, _) = failures_of("abort", "kill -ABRT $$", Expect::Fail);
    assert_eq!(f, vec![Failure::Abort]);
    let (f, _) = failures_of("exit134", "exit 134", Expect::Fail);
    assert_eq!(f, vec![Failure::Abort]);
}

#[test]
fn a_hang_is_killed_with_its_children() {
    let t = std::time::Instant::now();
    let (f, o) = failures_of("hang", "sleep 30 & sleep 30; exit 2", Expect::Fail);
    assert_eq!(f, vec![Failure::Hang]);
    assert!(o.timed_out && t.elapsed() < Duration::from_secs(10), "{o:?}");
}

#[test]
fn memory_over_the_limit_is_an_over_allocation() {
    // awk doubles a string until it is killed: its resident set passes 100 MiB in a blink.
    let (f, o) = failures_of("rss", r#"exec awk 'BEGIN { s = "xxxxxxxxxxxxxxxx"; for (;;) s = s s }'"#, Expect::Fail);
    assert_eq!(f, vec![Failure::OverAllocation], "{o:?}");
    assert!(o.peak_rss > 100 << 20);
}

#[test]
fn two_lines_or_no_place_or_no_file_are_unclear() {
    let (f, _) =
        failures_of("two", r#"echo "warning: x" >&2; echo "roadscan: error: $1:3:7: bad" >&2; exit 2"#, Expect::Fail);
    assert_eq!(f, vec![Failure::UnclearError]);
    let (f, _) = failures_of("noplace", r#"echo "roadscan: error: $1: bad" >&2; exit 2"#, Expect::Fail);
    assert_eq!(f, vec![Failure::UnclearError]);
    let (f, _) = failures_of("nofile", r#"echo "roadscan: error: line 3: bad" >&2; exit 2"#, Expect::Fail);
    assert_eq!(f, vec![Failure::UnclearError]);
    // An `any` case may fail for a reason that is not its file.
    let (f, _) = failures_of("any", r#"echo "roadscan: error: no points near the road" >&2; exit 2"#, Expect::Any);
    assert_eq!(f, vec![]);
}

#[test]
fn wrong_exit_codes_partial_and_lost_outputs() {
    let (f, _) = failures_of("exit0", "exit 0", Expect::Fail);
    assert_eq!(f, vec![Failure::WrongExit]);
    let (f, _) = failures_of("finding", "exit 1", Expect::Finding);
    assert_eq!(f, vec![]);
    let (f, _) = failures_of(
        "partial",
        r#"mkdir "$2/.road.tmp1"; echo x > "$2/.road.tmp1/a"; echo "roadscan: error: $1:1:1: bad" >&2; exit 2"#,
        Expect::Fail,
    );
    assert_eq!(f, vec![Failure::PartialOutput]);
    let (f, _) = failures_of("lost", r#"echo > "$1"; echo "roadscan: error: $1:1:1: bad" >&2; exit 2"#, Expect::Fail);
    assert_eq!(f, vec![Failure::LostOutput]);
}

#[test]
fn argument_cases_must_name_the_flag_or_its_value() {
    let case = Case {
        name: "args/eval-step".into(),
        kind: Kind::Args,
        file: None,
        expect: Expect::Fail,
        per_verb: vec![],
        place: Place::Flag("--step".into()),
        partner: None,
        watch: vec![],
        args: vec![],
    };
    let judge = |flag: &str| Judge {
        case: &case,
        expect: Expect::Fail,
        file_name: None,
        flag: Some((flag.into(), Some("1e-6".into()))),
        out_before: Default::default(),
        out_after: Default::default(),
        inputs_before: Default::default(),
        inputs_after: Default::default(),
        appeared: vec![],
    };
    let obs = |line: &str| Observed { code: Some(2), stderr: format!("{line}\n"), ..Observed::default() };
    assert!(classify(&judge("--step"), &obs("roadscan: error: --step must be at least 1e-3 m")).is_empty());
    assert!(classify(&judge("--step"), &obs("roadscan: error: step 1e-6 is too small")).is_empty());
    assert!(classify(&judge("--s-range"), &obs("roadscan: error: a.xodr: s range 1e9..2e9 beyond the road")).is_empty());
    let f = classify(&judge("--step"), &obs("roadscan: error: too many samples"));
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].0, Failure::UnclearError);
    let _ = Path::new("");
}
