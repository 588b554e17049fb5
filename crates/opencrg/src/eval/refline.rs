//! The reference line of a prepared CRG, as the C-API's loader builds it: x, y by Euler
//! integration of the heading (blended to END_X/END_Y when given), z by integration of the
//! slope, the z normalisation and the utility data (closed track, curvature limits).

use super::{Surface, PARALLEL_LIMIT};

impl Surface {
    /// crgLoaderPrepareData: reference line, its z, z normalisation, utility data.
    pub(super) fn prepare(&mut self) {
        self.calc_ref_line();
        self.calc_ref_line_z();
        let nv = self.v.len();
        for (iv, mean) in self.z_mean.iter_mut().enumerate() {
            let add = *mean as f32;
            if add != 0.0 {
                for z in self.z.iter_mut().skip(iv).step_by(nv).filter(|z| !z.is_nan()) {
                    *z += add;
                }
            }
            *mean = 0.0;
        }
        self.calc_utility();
    }

    fn calc_ref_line(&mut self) {
        let n = self.nu;
        let inc = self.u_inc;
        let Some(phi) = &self.phi else {
            let (s, c) = self.phi_first.sin_cos();
            for i in 0..n {
                self.x[i] = self.x_first + i as f64 * inc * c;
                self.y[i] = self.y_first + i as f64 * inc * s;
            }
            if !self.x_end_given {
                self.x_last = self.x[n - 1];
                self.y_last = self.y[n - 1];
            }
            return;
        };
        if self.x_end_given {
            self.x[n - 1] = self.x_last;
            self.y[n - 1] = self.y_last;
            for i in (1..n).rev() {
                self.x[i - 1] = self.x[i] - inc * phi[i].cos();
                self.y[i - 1] = self.y[i] - inc * phi[i].sin();
            }
            self.x[0] = self.x_first;
            self.y[0] = self.y_first;
            for i in 0..n - 1 {
                let f = (i + 1) as f64 / (n - 1) as f64;
                self.x[i + 1] = (1.0 - f) * (self.x[i] + inc * phi[i + 1].cos()) + f * self.x[i + 1];
                self.y[i + 1] = (1.0 - f) * (self.y[i] + inc * phi[i + 1].sin()) + f * self.y[i + 1];
            }
        } else {
            self.x[0] = self.x_first;
            self.y[0] = self.y_first;
            for i in 0..n - 1 {
                self.x[i + 1] = self.x[i] + inc * phi[i + 1].cos();
                self.y[i + 1] = self.y[i] + inc * phi[i + 1].sin();
            }
            self.x_last = self.x[n - 1];
            self.y_last = self.y[n - 1];
        }
    }

    fn calc_ref_line_z(&mut self) {
        if self.slope_first == 0.0 && self.slope.is_none() {
            return;
        }
        let n = self.nu;
        let inc = self.u_inc;
        let slope_at = |i: usize| self.slope.as_ref().map_or(self.slope_first, |s| s[i]);
        let mut z = vec![0.0; n];
        if self.z_end_given {
            z[n - 1] = self.ref_z_last;
            for i in (1..n).rev() {
                z[i - 1] = z[i] - slope_at(i) * inc;
            }
            z[0] = self.ref_z_first;
            for i in 0..n.saturating_sub(2) {
                let f = i as f64 / (n - 1) as f64;
                z[i + 1] = (1.0 - f) * (z[i] + slope_at(i + 1) * inc) + f * z[i + 1];
            }
        } else {
            z[0] = self.ref_z_first;
            for i in 0..n - 1 {
                z[i + 1] = z[i] + slope_at(i + 1) * inc;
            }
            self.ref_z_last = z[n - 1];
        }
        self.ref_z = Some(z);
    }

    /// crgCalcUtilityData: end headings, closed-track detection.
    fn calc_utility(&mut self) {
        self.phi_first_sc = self.phi_first.sin_cos();
        self.phi_last_sc = self.phi_last.sin_cos();
        self.closed = false;
        let (a1, a2) = (self.x_first, self.y_first);
        let (m2, m1) = self.phi_first_sc;
        let (b1, b2) = (self.x_last, self.y_last);
        let (n2, n1) = self.phi_last_sc;
        let divisor = m1 * n1 + m2 * n2;
        if divisor > 0.5 {
            let l = ((a2 - b2) * m2 + (a1 - b1) * m1) / divisor;
            let k = ((b2 - a2) * n2 + (b1 - a1) * n1) / divisor;
            if l > 0.0 && k < 0.0 {
                self.u_close_min = self.u_first + 0.5 * k * divisor;
                self.u_close_max = self.u_last + 0.5 * l * divisor;
                self.closed = true;
                let d = m1 * n2 - m2 * n1;
                if d.abs() > PARALLEL_LIMIT {
                    let l = (m1 * (a2 - b2) + m2 * (b1 - a1)) / d;
                    if l >= 0.0 {
                        let k = (n1 * (a2 - b2) + n2 * (b1 - a1)) / d;
                        if k <= 0.0 {
                            self.u_close_min = self.u_first + k;
                            self.u_close_max = self.u_last + l;
                        }
                    }
                }
            }
        }
    }
}
