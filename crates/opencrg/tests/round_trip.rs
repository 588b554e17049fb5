//! read -> write(format) -> read gives equal grids for every sample and every format:
//! bit-equal z in the binary formats (z is float32 in every reader), bit-equal channels where
//! the target is at least as wide as the source, text within the precision of its fields.
//! Writing is deterministic.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

mod samples;

use opencrg::{Crg, Format};

fn close(a: f64, b: f64, format: Format) -> bool {
    if a.is_nan() || b.is_nan() {
        return a.is_nan() && b.is_nan();
    }
    match format {
        Format::Lrfi => (a - b).abs() <= 5e-4 * a.abs().max(1e-4),
        Format::Ldfi => (a - b).abs() <= 1e-12 * a.abs().max(1.0),
        _ => {
            a.to_bits() == b.to_bits()
                || (format == Format::Krbi || format == Format::Lrbi) && (a as f32).to_bits() == (b as f32).to_bits()
        }
    }
}

fn compare(src: &Crg, back: &Crg, format: Format, name: &str) {
    assert_eq!((src.nu, src.nv()), (back.nu, back.nv()), "{name} {format:?}");
    assert_eq!(src.v_positions(), back.v_positions(), "{name} {format:?}");
    assert_eq!(src.channel_order, back.channel_order);
    for (i, (a, b)) in src.z.iter().zip(&back.z).enumerate() {
        let ok = if format.is_text() {
            close(*a as f64, *b as f64, format)
        } else {
            a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
        };
        assert!(ok, "{name} {format:?}: z[{i}] {a} -> {b}");
    }
    for (ch, a, b) in
        [("phi", &src.phi, &back.phi), ("slope", &src.slope, &back.slope), ("banking", &src.banking, &back.banking)]
    {
        assert_eq!(a.is_some(), b.is_some(), "{name} {ch}");
        if let (Some(a), Some(b)) = (a, b) {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                assert!(close(*x, *y, format), "{name} {format:?}: {ch}[{i}] {x} -> {y}");
            }
        }
    }
    assert_eq!(src.modifiers, back.modifiers, "{name}");
    assert_eq!(src.options, back.options, "{name}");
    assert_eq!(src.road.start_x, back.road.start_x);
    assert_eq!(src.road.start_phi, back.road.start_phi);
}

#[roadscan_tests::needs_shared_data]
#[test]
fn every_sample_round_trips_in_every_format() {
    let dir = roadscan_tests::Scratch::new("crg-rt");
    for path in samples::samples() {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let Ok(src) = opencrg::read_file(&path) else { continue };
        for format in [Format::Krbi, Format::Kdbi, Format::Lrfi, Format::Ldfi, Format::Lrbi, Format::Ldbi] {
            let out = dir.join(format!("{name}.{}.crg", format.tag()));
            opencrg::write_file(&src, &out, format).unwrap();
            let back = opencrg::read_file(&out).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(back.format, format);
            compare(&src, &back, format, &name);
            // Deterministic, and idempotent once the values are in the target precision.
            let again = dir.join(format!("{name}.{}.again.crg", format.tag()));
            opencrg::write_file(&back, &again, format).unwrap();
            if !format.is_text() || format == Format::Ldfi {
                let again2 = dir.join(format!("{name}.{}.again2.crg", format.tag()));
                let back2 = opencrg::read_file(&again).unwrap();
                opencrg::write_file(&back2, &again2, format).unwrap();
                assert!(
                    std::fs::read(&again).unwrap() == std::fs::read(&again2).unwrap(),
                    "{name} {format:?}: not deterministic"
                );
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn rows_from_a_callback_give_the_same_bytes_and_errors_leave_nothing() {
    let z: Vec<f32> = (0..40 * 7).map(|i| (i as f32 * 0.37).sin() * 0.01).collect();
    let crg = Crg::new_grid(12.5, 0.1, 40, -0.3, 0.1, 7, (1.0, 2.0, 0.3), Some(vec![0.3; 40]), z.clone());
    let mut empty = crg.clone();
    empty.z.clear();
    for format in [Format::Krbi, Format::Kdbi, Format::Lrfi, Format::Ldfi] {
        let mut a = Vec::new();
        opencrg::write(&crg, format, &mut a).unwrap();
        let mut b = Vec::new();
        opencrg::write_rows(&empty, format, &mut b, |iu, row| {
            row.copy_from_slice(&z[iu * 7..(iu + 1) * 7]);
            Ok(())
        })
        .unwrap();
        assert!(a == b, "{format:?}");
        // Heights missing from the model: an error, not a panic.
        let e = opencrg::write(&empty, format, &mut Vec::new()).unwrap_err().to_string();
        assert!(e.contains("40 x 7 nodes need 280"), "{e}");
    }
    let dir = roadscan_tests::Scratch::new("crg-rows");
    let path = dir.join("rows.crg");
    let failed = opencrg::write_file_rows(&empty, &path, Format::Krbi, |iu, _| {
        if iu == 20 {
            Err(opencrg::Error::new(opencrg::ErrorKind::Write("row 20 failed".into())))
        } else {
            Ok(())
        }
    });
    assert!(failed.unwrap_err().to_string().contains("row 20 failed"));
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "nothing left behind");
    let _ = std::fs::remove_dir_all(&dir);
}
