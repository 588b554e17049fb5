//! Gauss-Legendre quadrature, the one numerical integrator of the crate.

/// 10-point Gauss-Legendre nodes on [-1, 1] (positive half; the rule is symmetric).
const NODES: [f64; 5] = [
    0.148_874_338_981_631_2,
    0.433_395_394_129_247_2,
    0.679_409_568_299_024_4,
    0.865_063_366_688_984_5,
    0.973_906_528_517_171_7,
];
/// The matching weights.
const WEIGHTS: [f64; 5] = [
    0.295_524_224_714_752_9,
    0.269_266_719_309_996_4,
    0.219_086_362_515_982,
    0.149_451_349_150_580_6,
    0.066_671_344_308_688_1,
];

/// Integral of `f` over `[a, b]` by one 10-point Gauss-Legendre panel (exact for polynomials
/// of degree 19). `f` returns a pair so that both components of a vector integrand share the
/// nodes.
#[inline]
pub(crate) fn gl10_pair(a: f64, b: f64, mut f: impl FnMut(f64) -> (f64, f64)) -> (f64, f64) {
    let mid = 0.5 * (a + b);
    let half = 0.5 * (b - a);
    let (mut sx, mut sy) = (0.0, 0.0);
    for i in 0..5 {
        let dx = half * NODES[i];
        let (x1, y1) = f(mid - dx);
        let (x2, y2) = f(mid + dx);
        sx += WEIGHTS[i] * (x1 + x2);
        sy += WEIGHTS[i] * (y1 + y2);
    }
    (sx * half, sy * half)
}

/// Integral of a scalar `f` over `[a, b]`, one 10-point panel.
#[inline]
pub(crate) fn gl10(a: f64, b: f64, mut f: impl FnMut(f64) -> f64) -> f64 {
    gl10_pair(a, b, |x| (f(x), 0.0)).0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_for_degree_19() {
        let got = gl10(0.0, 2.0, |x| x.powi(19));
        let want = 2f64.powi(20) / 20.0;
        assert!((got - want).abs() / want < 1e-13, "{got} vs {want}");
    }

    #[test]
    fn cosine_to_machine_precision() {
        let got = gl10(0.0, 2.0, f64::cos);
        assert!((got - 2f64.sin()).abs() < 1e-15);
    }
}
