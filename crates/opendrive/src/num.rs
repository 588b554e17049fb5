//! Small numerical helpers shared by the fit and the junction generator.

use std::f64::consts::{PI, TAU};

/// An angle in (-π, π].
pub(crate) fn wrap(a: f64) -> f64 {
    let w = a.rem_euclid(TAU);
    if w > PI {
        w - TAU
    } else {
        w
    }
}

/// The determinant of a 3 x 3 matrix.
pub(crate) fn det3(m: &[[f64; 3]; 3]) -> f64 {
    m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
        + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
}

/// Cramer's rule for `a x = b`, `d` being `det3(a)` (the caller judges it not singular).
pub(crate) fn cramer3(a: &[[f64; 3]; 3], b: &[f64; 3], d: f64) -> [f64; 3] {
    let mut out = [0.0; 3];
    for (c, o) in out.iter_mut().enumerate() {
        let mut m = *a;
        for r in 0..3 {
            m[r][c] = b[r];
        }
        *o = det3(&m) / d;
    }
    out
}
