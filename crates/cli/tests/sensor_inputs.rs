//! `roadscan lidar` and `camera` with what issue 27 lets them take besides a lane and a named
//! sensor: a trajectory CSV as the path, the HDL-64E, and beam tables from TOML.

use roadscan_tests::Scratch;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use world::{LanePath, Trajectory};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_roadscan")).args(args).stdin(Stdio::null()).output().expect("run roadscan")
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

fn ok(o: &Output) {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// The demo world, built into `d`.
fn demo(d: &Scratch) -> std::path::PathBuf {
    let world = d.join("demo");
    ok(&run(&["demo", "--out", s(&world), "-q"]));
    world
}

/// The f32 triples of a `--ranges` file: (cast, reported, class) per laser per firing.
fn ranges(p: &Path) -> Vec<[f32; 3]> {
    let b = std::fs::read(p).expect("ranges");
    b.chunks(12).map(|c| [0, 4, 8].map(|i| f32::from_le_bytes(c[i..i + 4].try_into().expect("4 bytes")))).collect()
}

/// Lane -1 of the demo world's road from s = 0 at 10 m/s, sampled every `dt` s for `secs` s
/// as a trajectory CSV in the map frame (the road's `<offset>` added).
fn lane_csv(world: &Path, secs: f64, dt: f64) -> String {
    let odr = opendrive::read_file(world.join("road.xodr")).expect("road.xodr");
    let place = odr.header.offset.unwrap_or_default();
    let road = opendrive::RoadEval::new(&odr.roads[0]);
    let lane = LanePath::new(road, -1, 0.0, 10.0, secs).expect("lane -1");
    let placement = place.placement();
    let mut csv = String::from("time,x,y,z,roll,pitch,heading\n");
    let n = (secs / dt).round() as usize;
    for k in 0..=n {
        let t = k as f64 * dt;
        let p = lane.pose(t);
        let m = placement.to_map(p.position);
        let [x, y, z] = p.axes;
        let (heading, pitch, roll) = (x[1].atan2(x[0]) + place.hdg, x[2].asin(), y[2].atan2(z[2]));
        csv.push_str(&format!(
            "{:.6},{:.9},{:.9},{:.9},{roll:.15},{pitch:.15},{heading:.15}\n",
            1e5 + t,
            m[0],
            m[1],
            m[2]
        ));
    }
    csv
}

#[test]
fn a_csv_path_sampling_a_lane_casts_what_the_lane_casts() {
    let d = Scratch::new("cli-csv-path");
    let world = demo(&d);
    let csv = d.join("lane.csv");
    std::fs::write(&csv, lane_csv(&world, 0.6, 0.001)).expect("write the CSV");
    let (a, b) = (d.join("lane.f32"), d.join("csv.f32"));
    let common = ["lidar", "--world", s(&world), "--duration", "0.5", "--roadside", "voxels", "-q"];
    ok(&run(&[&common[..], &["--path", "lane:-1", "--ranges", s(&a)]].concat()));
    let o = run(&[&common[..], &["--path", s(&csv), "--ranges", s(&b)]].concat());
    ok(&o);
    let (a, b) = (ranges(&a), ranges(&b));
    assert_eq!(a.len(), 904 * 12 * 32);
    assert_eq!(a.len(), b.len());
    let (mut hits, mut worst) = (0, 0.0f64);
    for (k, (x, y)) in a.iter().zip(&b).enumerate() {
        assert_eq!(x[0].is_nan(), y[0].is_nan(), "beam {k}: {x:?} {y:?}");
        assert_eq!(x[2], y[2], "beam {k}: the same class");
        if !x[0].is_nan() {
            hits += 1;
            worst = worst.max((x[0] as f64 - y[0] as f64).abs());
        }
    }
    assert!(hits > a.len() / 2, "{hits} hits");
    assert!(worst <= 1e-3, "ranges along the CSV within 1 mm of the lane's: worst {worst} m");

    // The same with the survey's columns (a pass column, rows of another pass ignored).
    let mut survey = lane_csv(&world, 0.6, 0.001).replace("heading\n", "heading,pass\n").replace('\n', ",1\n");
    survey = survey.replacen(",1\n", "\n", 1);
    survey.push_str("1000000,0,0,0,0,0,0,2\n");
    let (sv, c) = (d.join("trajectory.csv"), d.join("survey.f32"));
    std::fs::write(&sv, survey).expect("write");
    ok(&run(&[&common[..], &["--path", s(&sv), "--ranges", s(&c)]].concat()));
    assert_eq!(ranges(&c).len(), a.len());
}

#[test]
fn a_csv_path_shorter_than_the_duration_is_clipped_with_a_warning() {
    let d = Scratch::new("cli-csv-clip");
    let world = demo(&d);
    let csv = d.join("short.csv");
    std::fs::write(&csv, lane_csv(&world, 0.2, 0.01)).expect("write");
    let o = run(&["lidar", "--world", s(&world), "--path", s(&csv), "--duration", "5", "--roadside", "none", "--json"]);
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("warning: --duration 5") && err.contains("covers 0.200 s"), "{err}");
    let summary: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    // 0.2 s holds 361 whole packets.
    assert_eq!(summary["data_packets"], 361);
    // The camera clips too: frames at 0, 0.1, 0.2 s.
    let out = d.join("frames");
    let o = run(&[
        "camera",
        "--world",
        s(&world),
        "--path",
        s(&csv),
        "--duration",
        "5",
        "--width",
        "64",
        "--height",
        "48",
        "--out",
        s(&out),
        "--json",
    ]);
    ok(&o);
    let summary: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(summary["frames"], 3);
    let rec: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("camera.json")).expect("camera.json")).expect("JSON");
    assert!(rec["frames"][0]["station"].is_null() && rec["start"].is_null());
}

#[test]
fn a_bad_csv_path_is_one_line_naming_the_file_and_row_and_nothing_is_written() {
    let d = Scratch::new("cli-csv-bad");
    let world = demo(&d);
    let h = "time,x,y,z,roll,pitch,heading\n";
    let cases = [
        (format!("{h}0,650000,240000,100,0,0,0\n1,650010,240000,nan,0,0,0\n"), "bad.csv:3: z: NaN"),
        (format!("{h}0,650000,240000,100,0,0,0\n0,650010,240000,100,0,0,0\n"), "bad.csv:3: time 0 does not increase"),
        (format!("{h}0,650000,240000,100,0,0,0\n"), "bad.csv:2: the file ends after 1 row(s)"),
        ("time,x,y\n0,1,2\n".to_string(), "bad.csv:1: the header names no column z"),
    ];
    for (text, want) in cases {
        let csv = d.join("bad.csv");
        std::fs::write(&csv, &text).expect("write");
        let (pcap, out) = (d.join("out.pcap"), d.join("frames"));
        let o = run(&["lidar", "--world", s(&world), "--path", s(&csv), "--duration", "0.1", "--pcap", s(&pcap), "-q"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(want) && err.trim_end().lines().count() == 1, "{text:?}: {err}");
        assert!(!pcap.exists());
        let o = run(&["camera", "--world", s(&world), "--path", s(&csv), "--out", s(&out), "-q"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(want) && err.trim_end().lines().count() == 1, "{text:?}: {err}");
        assert!(!out.exists());
    }
}

#[test]
fn an_hdl64e_has_64_rings_at_its_elevations_and_writes_no_packets() {
    let d = Scratch::new("cli-hdl64e");
    let world = demo(&d);
    let mcap_path = d.join("64.mcap");
    let o = run(&[
        "lidar",
        "--world",
        s(&world),
        "--sensor",
        "hdl64e",
        "--roadside",
        "voxels",
        "--duration",
        "0.2",
        "--mcap",
        s(&mcap_path),
        "--json",
        "-q",
    ]);
    ok(&o);
    let summary: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(summary["sensor"], "hdl64e");
    // 6 firings of 64 lasers a packet, a firing every 48 us: 0.2 s holds 694 packets.
    assert_eq!(summary["data_packets"], 694);
    assert_eq!(summary["firings"], 694 * 6);
    assert_eq!(summary["rays"], 694 * 6 * 64);
    // The table: upper block +2 to -8.33 degrees by 1/3, lower -8.83 to -24.33 by 1/2; ring 0
    // the lowest.
    let mut table: Vec<f64> =
        (0..64).map(|i| if i < 32 { 2.0 - i as f64 / 3.0 } else { -8.83 - 0.5 * (i - 32) as f64 }).collect();
    table.sort_by(f64::total_cmp);
    let bytes = std::fs::read(&mcap_path).expect("MCAP");
    let mut by_ring: BTreeMap<u16, (f64, f64)> = BTreeMap::new();
    for m in mcap::MessageStream::new(&bytes).expect("MCAP stream") {
        let m = m.expect("message");
        if m.channel.topic != "/lidar" {
            continue;
        }
        use foxglove::Decode;
        let c = foxglove::messages::PointCloud::decode(&m.data[..]).expect("PointCloud");
        for rec in c.data.chunks(c.point_stride as usize) {
            let f = |i: usize| f32::from_le_bytes(rec[i..i + 4].try_into().expect("4 bytes")) as f64;
            let (x, y, z) = (f(0), f(4), f(8));
            let ring = u16::from_le_bytes([rec[16], rec[17]]);
            let elevation = z.atan2(x.hypot(y)).to_degrees();
            let e = by_ring.entry(ring).or_insert((elevation, elevation));
            *e = (e.0.min(elevation), e.1.max(elevation));
        }
    }
    assert_eq!(by_ring.len(), 64, "64 rings return: {:?}", by_ring.keys().collect::<Vec<_>>());
    for (ring, (lo, hi)) in by_ring {
        let want = table[ring as usize];
        assert!((lo - want).abs() < 1e-3 && (hi - want).abs() < 1e-3, "ring {ring}: {lo}..{hi}, table {want}");
    }

    // Its packets are not written: refused before anything is.
    let pcap = d.join("64.pcap");
    let o = run(&["lidar", "--world", s(&world), "--sensor", "hdl64e", "--duration", "0.1", "--pcap", s(&pcap), "-q"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--sensor hdl64e") && err.contains("not written") && err.trim_end().lines().count() == 1,
        "{err}"
    );
    assert!(!pcap.exists());
}

#[test]
fn a_toml_table_equal_to_the_hdl32e_gives_the_same_bytes() {
    let d = Scratch::new("cli-beam-toml");
    let world = demo(&d);
    let table = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/sensors/hdl32e.toml");
    let mut outs = Vec::new();
    for (k, sensor) in ["hdl32e", s(&table)].iter().enumerate() {
        let (pcap, r, w) = (d.join(format!("{k}.pcap")), d.join(format!("{k}.f32")), d.join(format!("{k}.words")));
        ok(&run(&[
            "lidar",
            "--world",
            s(&world),
            "--sensor",
            sensor,
            "--duration",
            "0.3",
            "--roadside",
            "voxels",
            "--pcap",
            s(&pcap),
            "--ranges",
            s(&r),
            "--words",
            s(&w),
            "-q",
        ]));
        outs.push([pcap, r, w].map(|p| std::fs::read(p).expect("output")));
    }
    assert!(outs[0][0].len() > 500 * 1206, "a pcap of packets");
    assert!(outs[0] == outs[1], "the TOML table's pcap, ranges and words equal the hdl32e's byte for byte");

    // A bad table: one line naming the file and the key, nothing written.
    let bad = d.join("bad.toml");
    let text = std::fs::read_to_string(&table).expect("table").replace("cycle = 46.08e-6", "cycle = -1");
    std::fs::write(&bad, text).expect("write");
    let pcap = d.join("bad.pcap");
    let o = run(&["lidar", "--world", s(&world), "--sensor", s(&bad), "--duration", "0.1", "--pcap", s(&pcap), "-q"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("bad.toml: cycle: -1 is out of range") && err.trim_end().lines().count() == 1, "{err}");
    assert!(!pcap.exists());
}

#[test]
fn a_world_whose_voxel_index_is_huge_is_refused_not_a_panic() {
    let d = Scratch::new("cli-world-voxels");
    let world = d.join("world");
    std::fs::create_dir_all(&world).expect("mkdir");
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/opendrive/demo.xodr");
    std::fs::copy(demo, world.join("road.xodr")).expect("road.xodr");
    let crg = "$CT\nsmall\n$\n$ROAD_CRG\nREFERENCE_LINE_INCREMENT = 1.0\nLONG_SECTION_V_INCREMENT = 0.50\n$\n\
               $KD_Definition\n#:LRFI\nD:long section 1,m\nD:long section 2,m\nD:long section 3,m\n$\n$$$$\n \
               0.0000000 0.0000000 0.0000000\n 0.0000000 0.0000000 0.0000000\n 0.0000000 0.0000000 0.0000000\n";
    std::fs::write(world.join("demo.crg"), crg).expect("crg");
    std::fs::write(world.join("scene.json"), "{\"origin\": [650000, 239900, 90], \"voxel_size\": 1}\n").expect("json");
    let out = d.join("frames");
    let camera = |voxels: &str| {
        std::fs::write(world.join("scene.voxels.csv"), voxels).expect("voxels");
        run(&[
            "camera",
            "--world",
            s(&world),
            "--duration",
            "0.1",
            "--width",
            "16",
            "--height",
            "12",
            "--out",
            s(&out),
            "-q",
        ])
    };
    ok(&camera("i,j,k,class\n20,100,10,6\n"));
    std::fs::remove_dir_all(&out).expect("clean");
    // Its neighbour's index overflowed i64 (a panic, exit 101) before the bound.
    let o = camera("i,j,k,class\n9223372036854775807,100,10,6\n");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("scene.voxels.csv: line 2: voxel index i = 9223372036854775807 is out of range"), "{err}");
    assert!(!out.exists());
}
