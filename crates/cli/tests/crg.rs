//! End-to-end tests of the OpenCRG verbs: info, check, crg-eval, convert, render.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use roadscan_tests::Scratch;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn roadscan(args: &[&str], stdin: Option<&str>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_roadscan"));
    c.args(args)
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    if let Some(s) = stdin {
        use std::io::Write;
        child.stdin.take().unwrap().write_all(s.as_bytes()).unwrap();
    }
    child.wait_with_output().unwrap()
}

fn belgian() -> PathBuf {
    roadscan_tests::shared_data().join("opencrg/crg-bin/belgian_block.crg")
}

fn tmp(name: &str) -> Scratch {
    Scratch::new(&format!("cli-crg-{name}"))
}

/// The C-API values of the spec notes (specs/opencrg.md section 3), through the CLI.
#[roadscan_tests::needs_shared_data]
#[test]
fn crg_eval_reproduces_published_c_api_values() {
    let f = belgian();
    let o = roadscan(&["crg-eval", f.to_str().unwrap()], Some("uv 730 0\nuv 735.3 0.2\nuv 740 -1.7\nxy 230 80\n"));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    let rows: Vec<Vec<String>> = out.lines().map(|l| l.split_whitespace().map(str::to_string).collect()).collect();
    let num = |s: &str| s.parse::<f64>().unwrap();
    assert!((num(&rows[0][4]) - 2.13159323).abs() < 1e-6, "{out}");
    assert!((num(&rows[1][4]) - 2.1127429).abs() < 1e-6, "{out}");
    assert_eq!(rows[2][4], "nan");
    assert!((num(&rows[3][2]) - 734.577980).abs() < 1e-6 && (num(&rows[3][3]) - 0.258372).abs() < 1e-6, "{out}");
    assert!((num(&rows[3][4]) - 2.12130756).abs() < 1e-6, "{out}");
    // Border mode 0 refuses outside the grid.
    let o = roadscan(&["crg-eval", f.to_str().unwrap(), "--opt", "border_mode_u=0"], Some("uv 700 0\n"));
    assert!(String::from_utf8(o.stdout).unwrap().trim_end().ends_with(" err"));
    // Bad stdin is one clear line.
    let o = roadscan(&["crg-eval", f.to_str().unwrap()], Some("uv 1\n"));
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("stdin line 1: expected 'uv U V' or 'xy X Y'"));
}

#[roadscan_tests::needs_shared_data]
#[test]
fn info_check_convert_render() {
    let f = belgian();
    let f = f.to_str().unwrap();
    let o = roadscan(&["info", f], None);
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(out.contains("KRBI grid, 1001 x 341 nodes") && out.contains("u 730 .. 740"), "{out}");
    let o = roadscan(&["check", f], None);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8(o.stdout).unwrap().contains("0 errors"));
    let d = tmp("conv");
    let out_crg = d.join("b.crg");
    let o = roadscan(&["convert", "-q", f, out_crg.to_str().unwrap(), "--format", "LDFI"], None);
    assert!(o.status.success());
    let o = roadscan(&["info", out_crg.to_str().unwrap()], None);
    assert!(String::from_utf8(o.stdout).unwrap().contains("LDFI grid, 1001 x 341"));
    let png = d.join("b.png");
    let o = roadscan(&["render", f, "--out", png.to_str().unwrap()], None);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[1..4], b"PNG");
    // Bad format: exit 2, nothing written.
    let bad = d.join("c.crg");
    let o = roadscan(&["convert", f, bad.to_str().unwrap(), "--format", "XYZ"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(!bad.exists());
}

#[roadscan_tests::needs_shared_data]
#[test]
fn truncated_input_is_one_line_and_leaves_no_output() {
    let f = belgian();
    let d = tmp("trunc");
    let bytes = std::fs::read(&f).unwrap();
    let cut = d.join("cut.crg");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let out = d.join("out.crg");
    let o = roadscan(&["convert", cut.to_str().unwrap(), out.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("cut.crg (byte ") && err.contains("truncated"), "{err}");
    assert!(!out.exists());
    assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1, "only the input is left");
}
