//! `roadscan sim` with the bridges chosen in the scenario's `[bridges]` table: the file's
//! `udp_out` sends the pose updates without any bridge flag, a flag replaces the file's key
//! (and only that key), and an unknown key or a bad address is one error line naming the file
//! and the key. Loopback sockets only.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use roadscan_tests::Scratch;
use std::net::UdpSocket;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn roadscan(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_roadscan")).args(args).stdin(Stdio::null()).output().expect("run roadscan")
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// A loopback socket on a free port, and its HOST:PORT.
fn listener() -> (UdpSocket, String) {
    let sock = UdpSocket::bind("127.0.0.1:0").expect("bind");
    sock.set_nonblocking(true).expect("nonblocking");
    let addr = sock.local_addr().expect("addr").to_string();
    (sock, addr)
}

/// Every datagram waiting on `sock` (the run has ended, so all have arrived).
fn datagrams(sock: &UdpSocket) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut buf = [0u8; 2048];
    while let Ok(n) = sock.recv(&mut buf) {
        out.push(buf[..n].to_vec());
    }
    out
}

/// The values of an f64le datagram.
fn f64le(d: &[u8]) -> Vec<f64> {
    assert_eq!(d.len() % 8, 0, "{} bytes is not f64 values", d.len());
    d.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect()
}

/// The speed column of the ego's CSV, one a tick from tick 0.
fn csv_speeds(csv: &Path) -> Vec<f64> {
    let text = std::fs::read_to_string(csv).expect("CSV");
    text.lines().skip(1).map(|l| l.split(',').nth(7).expect("speed").parse().expect("number")).collect()
}

/// The ego's pose updates (kind 1, id 0) of f64le datagrams: (tick, time, speed).
fn ego_updates(dgrams: &[Vec<u8>]) -> Vec<(f64, f64, f64)> {
    dgrams
        .iter()
        .map(|d| f64le(d))
        .filter(|v| v[0] == 1.0 && v[1] == 0.0)
        .map(|v| {
            assert_eq!(v.len(), 11, "{v:?}");
            (v[2], v[3], v[10])
        })
        .collect()
}

/// Checks that `dgrams` hold the ego's pose updates of ticks 1..=10 of a 0.01 s tick, their
/// speeds those of the CSV.
fn assert_ten_ticks(dgrams: &[Vec<u8>], csv: &Path) {
    let ego = ego_updates(dgrams);
    let speeds = csv_speeds(csv);
    assert_eq!(ego.len(), 10, "{ego:?}");
    assert_eq!(speeds.len(), 11);
    for (k, (tick, time, speed)) in ego.iter().enumerate() {
        assert_eq!(*tick, (k + 1) as f64);
        assert!((time - 0.01 * (k + 1) as f64).abs() < 1e-9, "{time}");
        assert!((speed - speeds[k + 1]).abs() < 1e-6, "tick {}: {speed} vs the CSV's {}", k + 1, speeds[k + 1]);
    }
    assert!(ego.iter().any(|e| e.2 > 0.0), "the ego never moved: {ego:?}");
}

/// The scenario's `[bridges] udp_out` (and its `udp_format`) sends the ego's pose update of
/// every tick, with no bridge flag given.
#[test]
fn the_scenario_s_udp_out_sends_the_pose_updates() {
    let d = Scratch::new("cli-sim-bridges-file");
    let (sock, addr) = listener();
    let sc = d.join("bridged.toml");
    std::fs::write(
        &sc,
        format!(
            "tick = 0.01\nduration = 0.1\nroute = [\"lane:-1\"]\n[ego]\nspeed = 5\n\n[bridges]\nudp_out = \"{addr}\"\nudp_format = \"f64le\"\n"
        ),
    )
    .unwrap();
    let csv = d.join("ego.csv");
    let o = roadscan(&["sim", "-q", s(&sc), "--scene", "demo", "--csv", s(&csv)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_ten_ticks(&datagrams(&sock), &csv);
}

/// `--udp-out` replaces the file's `udp_out` (only its target receives), and the file's
/// other keys (here `udp_format`) still hold.
#[test]
fn a_flag_wins_over_the_file_s_key() {
    let d = Scratch::new("cli-sim-bridges-flag");
    let (a, addr_a) = listener();
    let (b, addr_b) = listener();
    let sc = d.join("bridged.toml");
    std::fs::write(
        &sc,
        format!(
            "tick = 0.01\nduration = 0.1\nroute = [\"lane:-1\"]\n[ego]\nspeed = 5\n[bridges]\nudp_out = [\"{addr_a}\"]\nudp_format = \"f64le\"\n"
        ),
    )
    .unwrap();
    let csv = d.join("ego.csv");
    let o = roadscan(&["sim", "-q", s(&sc), "--scene", "demo", "--csv", s(&csv), "--udp-out", &addr_b]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_ten_ticks(&datagrams(&b), &csv);
    assert_eq!(datagrams(&a).len(), 0, "the file's udp_out {addr_a} received, though --udp-out replaced it");
}

/// An unknown key and a bad address in `[bridges]` are each one error line naming the file,
/// the line and the key; exit 2, nothing written, nothing sent.
#[test]
fn a_bad_bridges_table_is_one_error_line() {
    let d = Scratch::new("cli-sim-bridges-bad");
    let (sock, addr) = listener();
    let csv = d.join("ego.csv");
    let cases = [
        (
            "unknown.toml",
            format!("duration = 0.1\n[bridges]\nudp_out = \"{addr}\"\nudp_ot = \"{addr}\"\n"),
            ":4:1",
            "udp_ot",
        ),
        (
            "address.toml",
            "duration = 0.1\n[bridges]\nudp_out = \"127.0.0.1\"\n".to_string(),
            ":3:11",
            "bridges.udp_out",
        ),
        (
            "format.toml",
            format!("[bridges]\nudp_out = \"{addr}\"\nudp_format = \"f16\"\n"),
            ":3:14",
            "bridges.udp_format",
        ),
    ];
    for (name, text, line, key) in cases {
        let f = d.join(name);
        std::fs::write(&f, text).unwrap();
        let o = roadscan(&["sim", "-q", s(&f), "--scene", "demo", "--csv", s(&csv)]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        assert!(err.contains(&format!("{name}{line}")) && err.contains(key), "{name}: {err}");
        assert!(!csv.exists(), "{name} wrote the CSV");
    }
    assert_eq!(datagrams(&sock).len(), 0, "a refused scenario sent datagrams");
    // A bad flag is named by its flag, and wins over a good key (so it is refused).
    let good = d.join("good.toml");
    std::fs::write(&good, format!("duration = 0.1\n[bridges]\nudp_out = \"{addr}\"\n")).unwrap();
    let o = roadscan(&["sim", "-q", s(&good), "--scene", "demo", "--udp-out", "nowhere"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--udp-out") && err.contains("nowhere"), "{err}");
    let help = roadscan(&["sim", "--help"]);
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("[bridges]") && help.contains("udp_out"), "{help}");
}
