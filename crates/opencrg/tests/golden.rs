//! Golden bytes of the writer: a 7 x 5 grid built here (a heading channel, one missing
//! height) written as KRBI and as LRFI must give exactly `data/golden/grid7x5.krbi.crg` and
//! `data/golden/grid7x5.lrfi.crg`.
//!
//! The test writes to a scratch directory and compares the bytes with the golden files. A
//! change in the writer's output fails here; when the change is intended, run the test with
//! `ROADSCAN_BLESS=1` to rewrite the golden files, and review their diff before committing.
//!
//! The bytes are deterministic: the writer puts no date, version or name of its own into a
//! file, only the grid's `$CT` comment (fixed by `Crg::new_grid`) and its values.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use opencrg::{Crg, Format};
use roadscan_tests::golden;

/// 7 cross sections 0.5 m apart, 5 long sections from v = -1 to 1 m, a heading turning by
/// 0.01 rad per row, heights with negative, small and large values and one missing node.
fn grid() -> Crg {
    let (nu, nv) = (7, 5);
    let z: Vec<f32> = (0..nu * nv)
        .map(|k| {
            let (iu, iv) = (k / nv, k % nv);
            if (iu, iv) == (3, 2) {
                f32::NAN
            } else {
                0.125 * iu as f32 - 0.0625 * iv as f32 + 0.001 * (k * k) as f32
            }
        })
        .collect();
    let phi = (0..nu).map(|iu| 0.25 + 0.01 * iu as f64).collect();
    Crg::new_grid(0.0, 0.5, nu, -1.0, 0.5, nv, (650_000.0, 240_000.0, 0.25), Some(phi), z)
}

#[test]
fn a_small_grid_written_as_krbi_and_lrfi_matches_the_golden_bytes() {
    let dir = roadscan_tests::Scratch::new("crg-golden");
    let src = grid();
    for (format, name) in [(Format::Krbi, "grid7x5.krbi.crg"), (Format::Lrfi, "grid7x5.lrfi.crg")] {
        let out = dir.join(name);
        opencrg::write_file(&src, &out, format).unwrap_or_else(|e| panic!("{e}"));
        golden(name, &out);
        // The golden holds the grid: read back, the same nodes, the missing one still missing,
        // heights bit-equal in binary and to the 10-character field's precision in text.
        let back = opencrg::read_file(&out).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((back.format, back.nu, back.nv()), (format, 7, 5));
        assert_eq!(back.v_positions(), src.v_positions());
        for (k, (a, b)) in src.z.iter().zip(&back.z).enumerate() {
            let ok = match format {
                Format::Krbi => a.to_bits() == b.to_bits() || a.is_nan() && b.is_nan(),
                _ => a.is_nan() && b.is_nan() || (a - b).abs() <= 1e-6 * a.abs().max(1.0),
            };
            assert!(ok, "{name}: z[{k}] {a} read back as {b}");
        }
        assert!(back.z[3 * 5 + 2].is_nan());
    }
}
