//! `roadscan lidar --las --mcap` over the world a demo build makes: the LAS (point format 6,
//! extra bytes) and the MCAP (Foxglove PointCloud and FrameTransform) read back and checked
//! against each other and the run's summary.

use foxglove::messages::{FrameTransform, PointCloud};
use foxglove::Decode;
use roadscan_tests::Scratch;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_roadscan")).args(args).stdin(Stdio::null()).output().expect("run roadscan")
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

type V3 = [f64; 3];

/// A unit quaternion (x, y, z, w) applied to `v`.
fn rotate(q: [f64; 4], v: V3) -> V3 {
    let [x, y, z, w] = q;
    let m = [
        [1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - z * w), 2.0 * (x * z + y * w)],
        [2.0 * (x * y + z * w), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - x * w)],
        [2.0 * (x * z - y * w), 2.0 * (y * z + x * w), 1.0 - 2.0 * (x * x + y * y)],
    ];
    [0, 1, 2].map(|r| m[r][0] * v[0] + m[r][1] * v[1] + m[r][2] * v[2])
}

/// A transform as (translation, rotation).
type Tf = (V3, [f64; 4]);

fn tf_of(m: &FrameTransform) -> Tf {
    let t = m.translation.as_ref().expect("translation");
    let r = m.rotation.as_ref().expect("rotation");
    ([t.x, t.y, t.z], [r.x, r.y, r.z, r.w])
}

/// The transform at `t` between two stamped ones (linear in the translation, normalised linear
/// in the rotation: within 1e-7 rad over 10 ms of driving).
fn between(a: (f64, Tf), b: (f64, Tf), t: f64) -> Tf {
    let w = (t - a.0) / (b.0 - a.0);
    let p = [0, 1, 2].map(|i| a.1 .0[i] + w * (b.1 .0[i] - a.1 .0[i]));
    let q = [0, 1, 2, 3].map(|i| a.1 .1[i] + w * (b.1 .1[i] - a.1 .1[i]));
    let n = q.iter().map(|c| c * c).sum::<f64>().sqrt();
    (p, q.map(|c| c / n))
}

#[test]
fn las_and_mcap_of_an_hdl32e_over_the_demo_world() {
    let d = Scratch::new("cli-lidar-out");
    let world = d.join("demo");
    let o = run(&["demo", "--out", s(&world), "-q"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (las_path, mcap_path) = (d.join("out.las"), d.join("out.mcap"));
    let o = run(&[
        "lidar",
        "--world",
        s(&world),
        "--duration",
        "0.3",
        "--las",
        s(&las_path),
        "--mcap",
        s(&mcap_path),
        "--json",
        "-q",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON summary");
    let returns = summary["returns"].as_u64().expect("returns");
    assert!(returns > 100_000, "{returns} returns in 0.3 s");
    assert_eq!(summary["las_points"], returns);
    // 0.3 s holds 542 whole packets: 2.997 revolutions, three clouds.
    let revolutions = summary["revolutions"].as_f64().expect("revolutions");
    assert!((revolutions - 2.997).abs() < 1e-3, "{revolutions}");

    // The LAS: 1.4, format 6 with 16 extra bytes, described; adjusted standard GPS time.
    let mut reader = las::Reader::from_path(&las_path).expect("LAS");
    let h = reader.header().clone();
    assert_eq!((h.version().major, h.version().minor), (1, 4));
    assert_eq!(h.point_format().to_u8().expect("format"), 6);
    assert_eq!(h.point_format().extra_bytes, 16);
    assert_eq!(h.number_of_points(), returns);
    assert_eq!(h.gps_time_type(), las::GpsTimeType::Standard);
    assert!(h.has_wkt_crs());
    let wkt = h.all_vlrs().find(|v| v.record_id == 2112).expect("WKT VLR");
    assert!(String::from_utf8_lossy(&wkt.data).contains("EOV"), "the demo's CRS is EOV");
    let eb = h.all_vlrs().find(|v| v.user_id == "LASF_Spec" && v.record_id == 4).expect("extra bytes VLR");
    assert_eq!(eb.data.len(), 6 * 192);
    let described: Vec<(String, u8)> = eb
        .data
        .chunks(192)
        .map(|c| (String::from_utf8_lossy(&c[4..36]).trim_end_matches('\0').to_string(), c[2]))
        .collect();
    let want = [("ring", 1), ("laser", 1), ("azimuth", 3), ("object_id", 5), ("range", 9), ("reflectivity", 9)];
    assert_eq!(described, want.map(|(n, t)| (n.to_string(), t)));
    let points: Vec<las::Point> = reader.points().map(|p| p.expect("point")).collect();
    assert_eq!(points.len() as u64, returns);

    // The MCAP: the reader checks the CRCs; schemas and topics as Foxglove names them.
    let bytes = std::fs::read(&mcap_path).expect("MCAP");
    let mut clouds = Vec::new();
    let mut tfs: BTreeMap<(String, String), Vec<(f64, Tf)>> = BTreeMap::new();
    let mut last_time = 0;
    for m in mcap::MessageStream::new(&bytes).expect("MCAP stream") {
        let m = m.expect("message");
        let schema = m.channel.schema.as_ref().expect("schema");
        assert_eq!((schema.encoding.as_str(), m.channel.message_encoding.as_str()), ("protobuf", "protobuf"));
        assert!(m.log_time >= last_time, "messages in time order");
        last_time = m.log_time;
        match (m.channel.topic.as_str(), schema.name.as_str()) {
            ("/lidar", "foxglove.PointCloud") => clouds.push(PointCloud::decode(&m.data[..]).expect("PointCloud")),
            ("/tf", "foxglove.FrameTransform") => {
                let f = FrameTransform::decode(&m.data[..]).expect("FrameTransform");
                let ts = f.timestamp.expect("stamp");
                let t = ts.sec() as f64 + ts.nsec() as f64 * 1e-9 - 1_767_225_600.0;
                tfs.entry((f.parent_frame_id.clone(), f.child_frame_id.clone())).or_default().push((t, tf_of(&f)));
            }
            other => panic!("unexpected channel {other:?}"),
        }
    }
    assert_eq!(clouds.len(), 3, "one cloud a revolution");
    assert_eq!(summary["mcap_messages"]["clouds"], 3);
    let body = &tfs[&("map".to_string(), "base_link".to_string())];
    let mount = &tfs[&("base_link".to_string(), "lidar".to_string())];
    // 100 Hz over 0.2997 s: 30 of each.
    assert_eq!((body.len(), mount.len()), (30, 30));
    assert_eq!(summary["mcap_messages"]["transforms"], 60);
    assert!((mount[0].1 .0[2] - 1.8).abs() < 1e-12, "the sensor 1.8 m above the body");

    // Point by point, the cloud and the LAS hold the same returns in the same order: the
    // cloud's point in the sensor frame, placed by /tf at its own time, is the LAS point.
    let (mut k, mut rings) = (0usize, BTreeMap::new());
    for c in &clouds {
        assert_eq!(c.frame_id, "lidar");
        assert_eq!(c.point_stride, 19);
        let names: Vec<&str> = c.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["x", "y", "z", "time", "ring", "intensity"]);
        assert_eq!(c.data.len() % 19, 0);
        let ts = c.timestamp.expect("stamp");
        let start = ts.sec() as f64 + ts.nsec() as f64 * 1e-9 - 1_767_225_600.0;
        for rec in c.data.chunks(19) {
            let f = |i: usize| f32::from_le_bytes(rec[i..i + 4].try_into().expect("4 bytes")) as f64;
            let (local, time) = ([f(0), f(4), f(8)], f(12));
            let (ring, intensity) = (u16::from_le_bytes([rec[16], rec[17]]), rec[18]);
            let p = &points[k];
            let e = &p.extra_bytes;
            let (laser, azimuth) = (e[1], u16::from_le_bytes([e[2], e[3]]));
            let range = f32::from_le_bytes(e[8..12].try_into().expect("4 bytes")) as f64;
            let reflectivity = f32::from_le_bytes(e[12..16].try_into().expect("4 bytes"));
            assert_eq!(u16::from(e[0]), ring, "point {k}");
            assert!(laser < 32 && azimuth < 36_000 && (1.0..=100.0).contains(&range), "point {k}: {e:?}");
            assert!(reflectivity >= 0.0, "point {k}");
            assert_eq!(*rings.entry(laser).or_insert(ring), ring, "laser {laser} keeps its ring");
            assert_eq!(p.intensity, u16::from(intensity) * 256, "point {k}");
            let norm = local.iter().map(|c| c * c).sum::<f64>().sqrt();
            assert!((norm - range).abs() < 1e-4, "point {k}: {norm} m in the cloud, {range} m in the LAS");
            // Adjusted standard GPS time: 2026-01-01 is 451,260,818 s after 1e9 GPS seconds.
            let t = start + time;
            assert!((p.gps_time.expect("GPS time") - (451_260_818.0 + t)).abs() < 2e-6, "point {k}");
            let i = body.partition_point(|b| b.0 <= t).clamp(1, body.len() - 1);
            let (tp, tq) = between(body[i - 1], body[i], t);
            let (mp, mq) = mount[0].1;
            let in_body = rotate(mq, local).iter().zip(mp).map(|(a, b)| a + b).collect::<Vec<_>>();
            let in_map = rotate(tq, [in_body[0], in_body[1], in_body[2]]);
            let want = [0, 1, 2].map(|j| in_map[j] + tp[j]);
            let got = [p.x, p.y, p.z];
            let err = (0..3).map(|j| (got[j] - want[j]).powi(2)).sum::<f64>().sqrt();
            assert!(err < 3e-3, "point {k}: LAS {got:?}, from the cloud and /tf {want:?} ({err} m)");
            k += 1;
        }
    }
    assert_eq!(k as u64, returns, "the clouds hold every return");
    assert_eq!(rings.len(), 32);
    let mut distinct: Vec<u16> = rings.values().copied().collect();
    distinct.sort();
    assert_eq!(distinct, (0..32).collect::<Vec<u16>>(), "32 lasers on 32 rings");
    // Laser 0 is the lowest (-30.67 degrees), laser 31 the highest (10.67 degrees).
    assert_eq!((rings[&0], rings[&31]), (0, 31));

    // A run that fails (a duration past the world's road) leaves neither file.
    let (bad_las, bad_mcap) = (d.join("bad.las"), d.join("bad.mcap"));
    let o =
        run(&["lidar", "--world", s(&world), "--duration", "100", "--las", s(&bad_las), "--mcap", s(&bad_mcap), "-q"]);
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    let left: Vec<String> = std::fs::read_dir(&*d)
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("bad"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
