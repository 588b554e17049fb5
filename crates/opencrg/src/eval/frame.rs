//! Between the CRG frame and the map: (u, v) -> (x, y) with mitred normals between
//! reference-line points (straight beyond the ends), (u, v) -> (phi, curvature), and the
//! C-API's interval walk for (x, y) -> (u, v), always from its global scan.

use super::{EvalOptions, Surface};
use crate::model::BorderMode;

impl Surface {
    /// (x, y) of (u, v): mitred normals between reference-line points, straight extrapolation
    /// along START_PHI / END_PHI beyond the ends (crgEvaluv2xy).
    pub fn uv_to_xy(&self, u: f64, v: f64) -> (f64, f64) {
        self.uv_to_xy_with(u, v, &self.options)
    }

    pub(super) fn uv_to_xy_with(&self, u: f64, v: f64, o: &EvalOptions) -> (f64, f64) {
        let n = self.x.len();
        let u = self.u_valid(u, o);
        let mut frac = (u - self.u_first) / self.u_inc;
        let index = if frac < 0.0 { 0 } else { (frac as usize).min(n - 2) };
        frac -= index as f64;
        if frac < 0.0 {
            let du = frac * self.u_inc;
            let (s, c) = self.phi_first_sc;
            return (self.x_first + du * c - v * s, self.y_first + du * s + v * c);
        }
        if frac > 1.0 {
            let du = (frac - 1.0) * self.u_inc;
            let (s, c) = self.phi_last_sc;
            return (self.x_last + du * c - v * s, self.y_last + du * s + v * c);
        }
        let p1 = [self.x[index], self.y[index]];
        let p2 = [self.x[index + 1], self.y[index + 1]];
        let n12 = normalize([-(p2[1] - p1[1]), p2[0] - p1[0]]);
        let mut n1 = n12;
        if index > 0 {
            let p0 = [self.x[index - 1], self.y[index - 1]];
            n1 = normalize([-(p2[1] - p0[1]), p2[0] - p0[0]]);
        }
        let dot = n1[0] * n12[0] + n1[1] * n12[1];
        if dot.abs() > 1e-10 {
            n1 = [n1[0] / dot, n1[1] / dot];
        }
        let a = [p1[0] + v * n1[0], p1[1] + v * n1[1]];
        let mut n2 = n12;
        if index < n - 2 {
            let p3 = [self.x[index + 2], self.y[index + 2]];
            n2 = normalize([-(p3[1] - p1[1]), p3[0] - p1[0]]);
        }
        let dot = n2[0] * n12[0] + n2[1] * n12[1];
        if dot.abs() > 1e-10 {
            n2 = [n2[0] / dot, n2[1] / dot];
        }
        let b = [p2[0] + v * n2[0], p2[1] + v * n2[1]];
        (a[0] + frac * (b[0] - a[0]), a[1] + frac * (b[1] - a[1]))
    }

    /// Heading (rad) and curvature (1/m) at (u, v) (crgEvaluv2pk): heading of the stored
    /// segment, curvature from points 0.5 m apart, at the lateral position v if the option says so.
    pub fn uv_to_pk(&self, u: f64, v: f64) -> (f64, f64) {
        self.uv_to_pk_with(u, v, &self.options)
    }

    pub(super) fn uv_to_pk_with(&self, u: f64, v: f64, o: &EvalOptions) -> (f64, f64) {
        let u = if self.closed { self.u_valid(u, o) } else { u };
        let frac = (u - self.u_first) / self.u_inc;
        let index = if frac < 0.0 { 0 } else { (frac as usize).min(self.nu - 2) };
        let nu_half = ((0.5 / self.u_inc) as usize).max(1);
        let phi_len = self.phi.as_ref().map_or(0, Vec::len);
        if nu_half > index {
            (self.phi_first, 0.0)
        } else if index + nu_half >= phi_len {
            (self.phi_last, 0.0)
        } else {
            let hd = 1.0 / (self.u_inc * nu_half as f64).powi(3);
            let dx0 = self.x[index] - self.x[index - nu_half];
            let dx1 = self.x[index + nu_half] - self.x[index];
            let dy0 = self.y[index] - self.y[index - nu_half];
            let dy1 = self.y[index + nu_half] - self.y[index];
            let mut curv = (dx0 * dy1 - dy0 * dx1) * hd;
            if o.curvature_lateral && curv.abs() > 1e-10 {
                let radius = 1.0 / curv - v;
                curv = if radius.abs() < 1e-6 { 1e6 } else { 1.0 / radius };
            }
            let phi = self.phi.as_ref().map_or(self.phi_first, |p| p[index]);
            (phi, curv)
        }
    }

    /// (u, v) of a map point (crgEvalxy2uv started from its global scan: every 10th
    /// reference-line point and the last, then an interval walk and a mitred interpolation).
    pub fn xy_to_uv(&self, x: f64, y: f64) -> (f64, f64) {
        let o = &self.options;
        let n = self.x.len();
        let (xs, ys) = (&self.x, &self.y);
        let mut index_min = 0usize;
        let mut dist2_min = 0.0;
        let mut i = 0usize;
        loop {
            let (dx, dy) = (x - xs[i], y - ys[i]);
            let d2 = dx * dx + dy * dy;
            if d2 < dist2_min || i == 0 {
                index_min = i;
                dist2_min = d2;
            }
            if i + 10 < n {
                i += 10;
            } else if i < n - 1 {
                i = n - 1;
            } else {
                break;
            }
        }
        if index_min < 1 {
            index_min = 1;
        }
        let mut t_dprod = 0.0;
        // The C-API's walks can cycle on a closed track (back to the start once per lap); two
        // laps bound them, so no query loops forever.
        let max_steps = 2 * n + 8;
        let mut steps = 0;
        loop {
            steps += 1;
            if steps > max_steps {
                break;
            }
            let ip1 = if index_min + 1 < n { index_min + 1 } else { n - 1 };
            let dprod = (x - xs[index_min]) * (xs[ip1] - xs[index_min - 1])
                + (y - ys[index_min]) * (ys[ip1] - ys[index_min - 1]);
            if dprod > 0.0 {
                if index_min < n - 1 {
                    index_min += 1;
                } else if self.closed {
                    t_dprod = (x - xs[0]) * (xs[1] - xs[0]) + (y - ys[0]) * (ys[1] - ys[0]);
                    if t_dprod <= 0.0 {
                        break;
                    }
                    index_min = 1;
                } else {
                    break;
                }
            } else {
                break;
            }
        }
        let (mut x0, mut x1, mut x2, mut y0, mut y1, mut y2);
        let mut dprod;
        let mut steps = 0;
        loop {
            steps += 1;
            let im2 = if index_min > 1 { index_min - 2 } else { 0 };
            x0 = xs[im2];
            x1 = xs[index_min - 1];
            x2 = xs[index_min];
            y0 = ys[im2];
            y1 = ys[index_min - 1];
            y2 = ys[index_min];
            dprod = (x - x1) * (x2 - x0) + (y - y1) * (y2 - y0);
            if dprod < 0.0 && steps <= max_steps {
                if index_min > 1 {
                    index_min -= 1;
                } else if self.closed {
                    if t_dprod != 0.0 {
                        break;
                    }
                    let last = n - 1;
                    t_dprod = (x - xs[last]) * (xs[last] - xs[last - 1]) + (y - ys[last]) * (ys[last] - ys[last - 1]);
                    if t_dprod >= 0.0 {
                        break;
                    }
                    index_min = last;
                } else {
                    break;
                }
            } else {
                break;
            }
        }
        let (xxx1, yyy1) = (x - x1, y - y1);
        let (x2x1, y2y1) = (x2 - x1, y2 - y1);
        let (x2x0, y2y0) = (x2 - x0, y2 - y0);
        let mut v = (x2x1 * yyy1 - y2y1 * xxx1) / (x2x1 * x2x1 + y2y1 * y2y1).sqrt();
        let ip1 = (index_min + 1).min(n - 1);
        let (x3, y3) = (xs[ip1], ys[ip1]);
        let (x3x1, y3y1) = (x3 - x1, y3 - y1);
        let (x2xx, y2yy) = (x2 - x, y2 - y);
        let ta = dprod / (x2x0 * x2x1 + y2y0 * y2y1);
        let tb = (x3x1 * x2xx + y3y1 * y2yy) / (x3x1 * x2x1 + y3y1 * y2y1);
        let du = ta / (ta + tb) * self.u_inc;
        let mut u = (index_min - 1) as f64 * self.u_inc + du + self.u_first;
        let before = |u: &mut f64, v: &mut f64| {
            let (dx, dy) = (x - self.x_first, y - self.y_first);
            let (s, c) = self.phi_first_sc;
            *u = self.u_first + dx * c + dy * s;
            *v = dy * c - dx * s;
        };
        let after = |u: &mut f64, v: &mut f64| {
            let (dx, dy) = (x - self.x_last, y - self.y_last);
            let (s, c) = self.phi_last_sc;
            *u = self.u_last + dx * c + dy * s;
            *v = dy * c - dx * s;
        };
        // The C-API tests option id 1 (border_mode_u) for the value 1 here where it means
        // refline_continuation = close track; reproduced, so a closed track wraps (x, y) -> (u, v)
        // exactly when border_mode_u is 1 (zero).
        if o.border_mode_u == BorderMode::Zero && self.closed {
            if u > self.u_close_max {
                before(&mut u, &mut v);
            } else if u < self.u_close_min {
                after(&mut u, &mut v);
            }
        } else if u < self.u_first {
            before(&mut u, &mut v);
        } else if u > self.u_last {
            after(&mut u, &mut v);
        }
        (u, v)
    }
}

fn normalize(v: [f64; 2]) -> [f64; 2] {
    let l = (v[0] * v[0] + v[1] * v[1]).sqrt();
    if l < 1e-10 {
        v
    } else {
        [v[0] / l, v[1] / l]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Crg;

    #[test]
    fn xy_to_uv_terminates_on_closed_tracks_everywhere() {
        // A full circle of radius 10 m: start and end meet, the C-API treats it as closed.
        let nu = 629;
        let du = 0.1;
        let phi: Vec<f64> = (0..nu).map(|i| i as f64 * du / 10.0).collect();
        let crg = Crg::new_grid(0.0, du, nu, -1.0, 1.0, 3, (0.0, -10.0, 0.0), Some(phi), vec![0.0; nu * 3]);
        let s = Surface::new(&crg, false).expect("surface");
        assert!(s.is_closed());
        // Points everywhere, including the centre and far away: every query returns.
        for i in 0..400 {
            let a = i as f64 * 0.1;
            let r = (i % 40) as f64 * 0.7;
            let (u, v) = s.xy_to_uv(r * a.cos(), r * a.sin());
            assert!(u.is_finite() && v.is_finite());
        }
    }
}
