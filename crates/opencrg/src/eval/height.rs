//! z(u, v) as the C-API's crgEvaluv2z computes it: bilinear interpolation on the float32 grid
//! plus reference-line z and banking, with its border modes (repeat, reflect, keep, NaN),
//! offsets and smoothing outside the grid, and u wrapped onto a closed track when asked.

use super::{EvalOptions, Surface, MAX_BORDER_ERROR};
use crate::model::*;

impl Surface {
    /// u wrapped onto a closed track, if the option asks for it (crgEvalu2uvalid).
    pub(super) fn u_valid(&self, u: f64, options: &EvalOptions) -> f64 {
        if !self.closed || !options.close_track || (u >= self.u_close_min && u <= self.u_close_max) {
            return u;
        }
        let w = (u - self.u_close_min) % (self.u_close_max - self.u_close_min);
        if w > 0.0 {
            w + self.u_close_min
        } else {
            w + self.u_close_max
        }
    }

    /// z at (u, v) with the surface's options; `None` where the C-API returns an error (border
    /// mode "none" outside the grid). NaN where the grid has no data.
    pub fn uv_to_z(&self, u: f64, v: f64) -> Option<f64> {
        self.uv_to_z_with(u, v, &self.options)
    }

    /// z at (u, v) with explicit options.
    pub fn uv_to_z_with(&self, mut u: f64, mut v: f64, o: &EvalOptions) -> Option<f64> {
        let mut index_u = 0usize;
        let mut index_v = 0usize;
        let mut calc_index = true;
        let mut in_core_u = true;
        let mut in_core_v = true;
        let mut calc_value = true;
        let mut calc_bank = true;
        let mut calc_smooth_base = 0u8;
        let mut calc_smooth = false;
        let mut z = 0.0f64;
        let mut z_offset = 0.0;
        let mut smooth_scale = 1.0;
        let mut smooth_base = 0.0;
        let mut border_u = BorderMode::None;
        let mut border_v = BorderMode::Keep;

        if self.closed {
            u = self.u_valid(u, o);
        }
        let mut frac_u = (u - self.u_first) / self.u_inc;
        if u < self.u_first || u > self.u_last {
            in_core_u = false;
            border_u = o.border_mode_u;
            match border_u {
                BorderMode::None => return None,
                BorderMode::Keep => {
                    if frac_u < 0.0 {
                        frac_u = 0.0;
                        calc_index = false;
                        calc_smooth_base = 1;
                    } else {
                        calc_smooth_base = 2;
                    }
                }
                BorderMode::Zero => {
                    calc_value = false;
                    calc_bank = false;
                    calc_smooth_base = if frac_u < 0.0 { 1 } else { 2 };
                }
                BorderMode::Repeat | BorderMode::Reflect => {
                    (frac_u, u) = wrap(border_u, u, self.u_first, self.u_last, self.u_inc);
                    in_core_u = true;
                }
            }
            z_offset += o.border_offset_u.unwrap_or(0.0);
        }
        if calc_index {
            if frac_u < 0.0 {
                frac_u = 0.0;
            }
            // A NaN fraction (a zero-sized range in repeat/reflect mode) converts to a huge
            // index on the C-API's platforms; it ends at the last interval.
            index_u = if frac_u.is_nan() { usize::MAX } else { frac_u as usize };
            if index_u >= self.nu - 1 {
                index_u = self.nu - 2;
                frac_u = 1.0;
            } else {
                frac_u -= index_u as f64;
            }
        }
        let nv = self.v.len();
        let mut frac_v;
        if self.v_indexed {
            calc_index = true;
            frac_v = (v - self.v_first) / self.v_inc;
            if v < self.v_first || v > self.v_last {
                in_core_v = false;
                border_v = o.border_mode_v;
                match border_v {
                    BorderMode::None => return None,
                    BorderMode::Keep => {
                        if frac_v < 0.0 {
                            frac_v = 0.0;
                            calc_index = false;
                        }
                    }
                    BorderMode::Zero => calc_value = false,
                    BorderMode::Repeat | BorderMode::Reflect => {
                        (frac_v, v) = wrap(border_v, v, self.v_first, self.v_last, self.v_inc);
                        in_core_v = true;
                    }
                }
                z_offset += o.border_offset_v.unwrap_or(0.0);
            }
            if calc_index {
                if frac_v < 0.0 {
                    frac_v = 0.0;
                }
                index_v = if frac_v.is_nan() { usize::MAX } else { frac_v as usize };
                if index_v >= nv - 1 {
                    index_v = nv - 2;
                    frac_v = 1.0;
                } else {
                    frac_v -= index_v as f64;
                }
            }
        } else {
            let mut v_pos = v;
            if v_pos < self.v_first || v_pos > self.v_last {
                in_core_v = false;
                border_v = BorderMode::Keep;
                if (v_pos - self.v_first).abs() < MAX_BORDER_ERROR {
                    v_pos = self.v_first;
                } else if (v_pos - self.v_last).abs() < MAX_BORDER_ERROR {
                    v_pos = self.v_last;
                } else {
                    border_v = o.border_mode_v;
                    match border_v {
                        BorderMode::None => return None,
                        BorderMode::Zero => calc_value = false,
                        _ => {}
                    }
                }
                let range = self.v_last - self.v_first;
                match border_v {
                    BorderMode::Repeat => {
                        if v_pos > self.v_last {
                            v_pos = self.v_first + (v_pos - self.v_last) % range;
                        } else if v_pos < self.v_first {
                            v_pos = self.v_last + (v_pos - self.v_first) % range;
                        }
                        in_core_v = true;
                        if (v_pos - self.v_first).abs() < MAX_BORDER_ERROR {
                            v_pos = self.v_first;
                        } else if (v_pos - self.v_last).abs() < MAX_BORDER_ERROR {
                            v_pos = self.v_last;
                        }
                    }
                    BorderMode::Reflect => {
                        if v_pos > self.v_last {
                            let rem = (v_pos - self.v_last) % range;
                            let rep = ((v_pos - self.v_last) / range).abs().floor();
                            v_pos = if rep % 2.0 == 0.0 { self.v_last - rem } else { self.v_first + rem };
                        } else if v_pos < self.v_first {
                            let rem = (v_pos - self.v_first) % range;
                            let rep = ((v_pos - self.v_first) / range).abs().floor();
                            v_pos = if rep % 2.0 != 0.0 { self.v_last + rem } else { self.v_first - rem };
                        }
                        in_core_v = true;
                    }
                    _ => {}
                }
                z_offset += o.border_offset_v.unwrap_or(0.0);
            }
            // Binary search: the largest index with v[index] <= v_pos, at most nv - 2.
            let mut lo = 0usize;
            let mut hi = nv - 1;
            loop {
                let mid = (hi + lo) / 2;
                if mid <= lo {
                    break;
                }
                if v_pos < self.v[mid] {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            index_v = lo;
            frac_v = (v_pos - self.v[index_v]) / (self.v[index_v + 1] - self.v[index_v]);
            frac_v = frac_v.clamp(0.0, 1.0);
        }
        if calc_value {
            let r0 = index_u * nv + index_v;
            let r1 = r0 + nv;
            let z00 = self.z[r0] as f64;
            let z10 = self.z[r1] as f64 - z00;
            let mut z01 = self.z[r0 + 1] as f64;
            let z11 = self.z[r1 + 1] as f64 - (z10 + z01);
            z01 -= z00;
            z = (z11 * frac_v + z10) * frac_u + z01 * frac_v + z00;
            z += self.z_mean[index_v];
        }
        if o.smooth_u_begin.is_some() || o.smooth_u_end.is_some() {
            if in_core_u || calc_smooth_base != 0 {
                if let Some(zone) = o.smooth_u_begin {
                    if u - self.u_first <= zone {
                        smooth_scale = if u < self.u_first { 0.0 } else { (u - self.u_first) / zone };
                        calc_smooth_base = 1;
                        calc_smooth = true;
                    }
                }
                if let Some(zone) = o.smooth_u_end {
                    if self.u_last - u <= zone {
                        smooth_scale = if u > self.u_last { 0.0 } else { (self.u_last - u) / zone };
                        calc_smooth_base = 2;
                        calc_smooth = true;
                    }
                }
            }
            match calc_smooth_base {
                1 => smooth_base += self.ref_z.as_ref().map_or(self.ref_z_first, |r| r[0]),
                2 => smooth_base += self.ref_z.as_ref().map_or(self.ref_z_last, |r| r[r.len() - 1]),
                _ => {}
            }
        }
        frac_u = frac_u.clamp(0.0, 1.0);
        match &self.ref_z {
            Some(r) => z += r[index_u] + frac_u * (r[index_u + 1] - r[index_u]),
            None => z += self.ref_z_first,
        }
        if self.has_bank && calc_bank {
            let bank = match &self.bank {
                Some(b) => b[index_u] + frac_u * (b[index_u + 1] - b[index_u]),
                None => self.bank_first,
            };
            let vb = if v < self.v_first {
                self.v_first
            } else if v > self.v_last {
                self.v_last
            } else {
                v
            };
            z += bank * vb;
        }
        if !in_core_u {
            match border_u {
                BorderMode::Zero => z = z_offset,
                BorderMode::Keep => z += z_offset,
                _ => {}
            }
        } else if !in_core_v {
            match border_v {
                BorderMode::Zero => z = z_offset,
                BorderMode::Keep => z += z_offset,
                _ => {}
            }
        }
        if calc_smooth {
            z = smooth_base + (z - smooth_base) * smooth_scale;
        }
        Some(z)
    }
}

/// Repeat or reflect a position outside a uniform axis back into it, as the C-API does for
/// u and for uniformly spaced v; returns (fraction in increments from `first`, position).
fn wrap(mode: BorderMode, x: f64, first: f64, last: f64, inc: f64) -> (f64, f64) {
    let size = last - first;
    let max_frac = size / inc;
    let mut frac = (x - first) / inc;
    if mode == BorderMode::Repeat {
        frac %= max_frac;
        if frac < 0.0 {
            frac += max_frac;
        }
    } else {
        // Repetitions counted in double precision, as pycrg's C-API does.
        let rep = ((x - first) / size).abs().floor();
        frac = frac.abs() - rep * max_frac;
        if rep % 2.0 != 0.0 {
            frac = max_frac - frac;
        }
    }
    (frac, first + frac * inc)
}
