//! `roadscan lidar` over the world a demo build makes: Velodyne packets in a pcap, the
//! distances they carry equal to the cast ones, errors as one line with nothing written.

use roadscan_tests::Scratch;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_roadscan")).args(args).stdin(Stdio::null()).output().expect("run roadscan")
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// (destination port, payload) of each record of a pcap written by roadscan (Ethernet, IPv4
/// without options, UDP).
fn datagrams(bytes: &[u8]) -> Vec<(u16, Vec<u8>)> {
    assert_eq!(&bytes[..4], &[0xD4, 0xC3, 0xB2, 0xA1], "classic little-endian pcap");
    let mut out = Vec::new();
    let mut at = 24;
    while at + 16 <= bytes.len() {
        let incl = u32::from_le_bytes(bytes[at + 8..at + 12].try_into().expect("4 bytes")) as usize;
        let f = &bytes[at + 16..at + 16 + incl];
        out.push((u16::from_be_bytes([f[36], f[37]]), f[42..].to_vec()));
        at += 16 + incl;
    }
    assert_eq!(at, bytes.len(), "records fill the file");
    out
}

#[test]
fn an_hdl32e_over_the_demo_world() {
    let d = Scratch::new("cli-lidar");
    let world = d.join("demo");
    let o = run(&["demo", "--out", s(&world), "-q"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (pcap, ranges) = (d.join("out.pcap"), d.join("ranges.f32"));
    let o = run(&[
        "lidar",
        "--world",
        s(&world),
        "--duration",
        "0.5",
        "--pcap",
        s(&pcap),
        "--ranges",
        s(&ranges),
        "--json",
        "-q",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON summary");
    // 0.5 s holds 904 whole packets of 12 firings (552.96 us each).
    assert_eq!(summary["data_packets"], 904);
    assert_eq!(summary["firings"], 904 * 12);
    let packets = datagrams(&std::fs::read(&pcap).expect("pcap"));
    let data: Vec<&Vec<u8>> = packets.iter().filter(|p| p.0 == 2368).map(|p| &p.1).collect();
    let position = packets.iter().filter(|p| p.0 == 8308).count();
    assert_eq!(data.len(), 904);
    assert_eq!(position, 904usize.div_ceil(14), "one position packet per 14 data packets");
    // Every distance in the packets is the cast distance to within the 2 mm step's half.
    let cast: Vec<f32> = std::fs::read(&ranges)
        .expect("ranges")
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect();
    assert_eq!(cast.len(), 904 * 12 * 32 * 3);
    let (mut returns, mut near_road) = (0, 0);
    for (k, p) in data.iter().enumerate() {
        assert_eq!(p.len(), 1206);
        assert_eq!((p[1204], p[1205]), (0x37, 0x21));
        for b in 0..12 {
            assert_eq!(&p[b * 100..b * 100 + 2], &[0xFF, 0xEE]);
            for laser in 0..32 {
                let c = b * 100 + 4 + 3 * laser;
                let dist = u16::from_le_bytes([p[c], p[c + 1]]) as f64 * 0.002;
                let at = ((k * 12 + b) * 32 + laser) * 3;
                let (cast, reported) = (cast[at] as f64, cast[at + 1] as f64);
                if dist == 0.0 {
                    assert!(reported.is_nan(), "packet {k} block {b} laser {laser}: no return but {reported} reported");
                    continue;
                }
                returns += 1;
                assert!(
                    (dist - cast).abs() <= 0.001 + 1e-5,
                    "packet {k} block {b} laser {laser}: {dist} m in the packet, {cast} m cast"
                );
                // Laser 0 looks 30.67 degrees down from 1.8 m: the road is 3.53 m away, the
                // sidewalk 15 cm higher (3.24 m) to the right; crossfall and grade add centimetres.
                if laser == 0 {
                    assert!((3.1..3.7).contains(&dist), "laser 0 at {dist} m");
                    near_road += 1;
                }
            }
        }
    }
    assert_eq!(summary["returns"], returns);
    // Looking back from the road's start some firings see nothing; most see the road.
    assert!(near_road > 8_000, "{near_road} of 10,848 laser-0 firings returned");

    // Replayed at twice real time to a local socket: every data packet arrives, bytes unchanged.
    let rx = std::net::UdpSocket::bind("127.0.0.1:0").expect("bind");
    rx.set_read_timeout(Some(std::time::Duration::from_secs(10))).expect("timeout");
    let to = rx.local_addr().expect("address").to_string();
    let child = std::thread::spawn({
        let pcap = pcap.clone();
        move || run(&["replay", s(&pcap), "--udp", &to, "--position-port", "9", "--speed-factor", "2", "-q"])
    });
    let mut buf = vec![0u8; 2048];
    for (k, want) in data.iter().enumerate() {
        let n = rx.recv(&mut buf).expect("a replayed packet");
        assert!(buf[..n] == want[..], "replayed packet {k} differs from the pcap's (packets lost?)");
    }
    assert!(child.join().expect("replay thread").status.success());

    // A lane the road lacks, a world that is not one: one line, exit 2, no file.
    let bad = d.join("bad.pcap");
    for (args, needle) in [
        (vec!["--world", s(&world), "--path", "lane:-7"], "no lane -7"),
        (vec!["--world", s(&d), "--path", "lane:-1"], "no road.xodr"),
        (vec!["--world", s(&world), "--duration", "100"], "out of range"),
    ] {
        let o = run(&[&["lidar", "-q", "--pcap", s(&bad)][..], &args[..]].concat());
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!bad.exists(), "{args:?} left a file");
    }
}
