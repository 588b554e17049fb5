//! LAS and LAZ written by `write_las` read back (with the las crate) to the same points, with
//! the WKT VLR and 1 mm quantisation; nothing is left behind on error.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

mod common;

use common::{dir, options, points};
use scan::write_las;

#[test]
fn las_and_laz_round_trip() {
    let dir = dir("round-trip");
    let opts = options();
    let pts = points(1000);
    for name in ["a.las", "a.laz"] {
        let path = dir.join(name);
        write_las(&path, &pts, &opts).unwrap();
        let mut r = las::Reader::from_path(&path).unwrap();
        let h = r.header().clone();
        assert_eq!(h.number_of_points(), pts.len() as u64);
        assert_eq!(h.point_format().to_u8().unwrap(), 6);
        assert!(h.all_vlrs().any(|v| v.record_id == 2112 && v.data.starts_with(scan::EOV_WKT.as_bytes())));
        for (p, q) in pts.iter().zip(r.points()) {
            let q = q.unwrap();
            assert!((p.x - q.x).abs() <= 0.0005 && (p.y - q.y).abs() <= 0.0005 && (p.z - q.z).abs() <= 0.0005);
            assert_eq!((q.intensity, q.point_source_id, u8::from(q.classification)), (p.intensity, p.source, p.class));
            assert_eq!(q.gps_time, Some(p.gps_time));
            assert!((q.scan_angle - p.scan_angle_deg).abs() < 0.01);
        }
    }
    // A coordinate the scaled 32-bit integers cannot hold: an error naming the point, no file left.
    let mut bad = pts.clone();
    bad[7].x = 1e12;
    let path = dir.join("bad.las");
    let e = write_las(&path, &bad, &opts).unwrap_err().to_string();
    assert!(e.contains("point 7"), "{e}");
    assert!(!path.exists());
    assert_eq!(
        std::fs::read_dir(&dir)
            .unwrap()
            .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().starts_with('.'))
            .count(),
        0
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn chunked_writes_equal_one_write_and_unfinished_files_vanish() {
    let dir = dir("chunks");
    let opts = options();
    let pts = points(1000);
    for name in ["c.las", "c.laz"] {
        let (one, chunked) = (dir.join(format!("one-{name}")), dir.join(name));
        write_las(&one, &pts, &opts).unwrap();
        let mut w = scan::LasWriter::create(&chunked, &opts).unwrap();
        for chunk in pts.chunks(333) {
            w.write(chunk).unwrap();
        }
        assert_eq!(w.len(), pts.len());
        assert!(!chunked.exists(), "the file appears only when finished");
        w.finish().unwrap();
        assert!(std::fs::read(&one).unwrap() == std::fs::read(&chunked).unwrap(), "{name}: chunked bytes differ");
    }
    // A bad point in the second chunk: the error gives its index in the file; dropping the
    // writer leaves neither the file nor its temporary.
    let path = dir.join("dropped.laz");
    let mut w = scan::LasWriter::create(&path, &opts).unwrap();
    w.write(&pts[..400]).unwrap();
    let mut bad = pts[400..].to_vec();
    bad[5].z = f64::NAN;
    let e = w.write(&bad).unwrap_err().to_string();
    assert!(e.contains("point 405"), "{e}");
    drop(w);
    assert!(!path.exists());
    let hidden =
        std::fs::read_dir(&dir).unwrap().filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().starts_with('.'));
    assert_eq!(hidden.count(), 0);
    let _ = std::fs::remove_dir_all(&dir);
}
