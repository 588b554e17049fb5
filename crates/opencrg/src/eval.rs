//! Evaluation of a CRG as the reference C-API (OpenCRG 1.2) does it: the reference line is
//! built by Euler integration of the heading channel (blended between the start and end points
//! when END_X/END_Y are given), elevation by integration of the slope, z(u, v) by bilinear
//! interpolation on the float32 grid plus reference-line z and banking, with the C-API's border
//! modes, offsets and smoothing outside the grid, its mitred (u, v) -> (x, y) and its interval
//! walk for (x, y) -> (u, v), and modifiers applied only on request, in the C-API's order.
//!
//! Deliberate differences: the C-API's (x, y) -> (u, v) starts from a history of earlier queries;
//! we always start from its global scan (what a fresh contact point does), so results do not
//! depend on earlier calls. Reference lines given by x/y channels are built like the C-API's
//! (from START_X/Y/PHI) but its (defective) smoothing of them is not reproduced.
//!
//! # Units
//! Metres and radians; u, v in the CRG frame, x, y map, z height.

use crate::error::{Error, ErrorKind, Result};
use crate::model::*;

/// Evaluation options (the C-API's contact-point options), resolved to values.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalOptions {
    /// Outside [u_first, u_last].
    pub border_mode_u: BorderMode,
    /// Outside [v_right, v_left].
    pub border_mode_v: BorderMode,
    /// z offset added outside in u (if set).
    pub border_offset_u: Option<f64>,
    /// z offset added outside in v (if set).
    pub border_offset_v: Option<f64>,
    /// Length over which z fades to the reference line at the start, m.
    pub smooth_u_begin: Option<f64>,
    /// Length over which z fades to the reference line at the end, m.
    pub smooth_u_end: Option<f64>,
    /// Wrap u on closed tracks.
    pub close_track: bool,
    /// Curvature at the lateral position (true) or on the reference line.
    pub curvature_lateral: bool,
}

impl Default for EvalOptions {
    /// The C-API's defaults (crgOptionSetDefaultOptions).
    fn default() -> Self {
        EvalOptions {
            border_mode_u: BorderMode::Keep,
            border_mode_v: BorderMode::Keep,
            border_offset_u: None,
            border_offset_v: None,
            smooth_u_begin: None,
            smooth_u_end: None,
            close_track: false,
            curvature_lateral: true,
        }
    }
}

impl EvalOptions {
    /// Defaults overridden by a file's `$ROAD_CRG_OPTS` (a block resets to the defaults first).
    pub fn from_file(opts: Option<&Options>) -> EvalOptions {
        let mut e = EvalOptions::default();
        if let Some(o) = opts {
            if let Some(m) = o.border_mode_u {
                e.border_mode_u = m;
            }
            if let Some(m) = o.border_mode_v {
                e.border_mode_v = m;
            }
            e.border_offset_u = o.border_offset_u;
            e.border_offset_v = o.border_offset_v;
            e.smooth_u_begin = o.smooth_u_begin.filter(|&s| s != 0.0);
            e.smooth_u_end = o.smooth_u_end.filter(|&s| s != 0.0);
            if let Some(c) = o.close_track {
                e.close_track = c;
            }
            if let Some(c) = o.curvature_lateral {
                e.curvature_lateral = c;
            }
        }
        e
    }
}

/// A CRG prepared for evaluation.
#[derive(Debug, Clone)]
pub struct Surface {
    // u axis
    u_first: f64,
    u_last: f64,
    u_inc: f64,
    nu: usize,
    // v axis
    v: Vec<f64>,
    v_first: f64,
    v_last: f64,
    v_inc: f64,
    v_indexed: bool,
    // z grid, row-major z[iu * nv + iv] as f32, and the per-channel mean the C-API adds back
    z: Vec<f32>,
    z_mean: Vec<f64>,
    // reference line
    x: Vec<f64>,
    y: Vec<f64>,
    x_first: f64,
    y_first: f64,
    x_last: f64,
    y_last: f64,
    x_end_given: bool,
    phi: Option<Vec<f64>>,
    phi_first: f64,
    phi_last: f64,
    slope: Option<Vec<f64>>,
    slope_first: f64,
    ref_z: Option<Vec<f64>>,
    ref_z_first: f64,
    ref_z_last: f64,
    z_start_given: bool,
    z_end_given: bool,
    bank: Option<Vec<f64>>,
    bank_first: f64,
    has_bank: bool,
    // utility data
    phi_first_sc: (f64, f64),
    phi_last_sc: (f64, f64),
    closed: bool,
    u_close_min: f64,
    u_close_max: f64,
    /// Options in effect.
    pub options: EvalOptions,
}

const PARALLEL_LIMIT: f64 = 1e-6;
const MAX_BORDER_ERROR: f64 = 1e-8;

impl Surface {
    /// Prepares `crg` for evaluation, as the C-API does after loading. With
    /// `apply_modifiers`, the file's `$ROAD_CRG_MODS` (or, without that block, the C-API's
    /// default modifiers: NaN filling and a move of the corner (u_first, v_right) to the origin)
    /// are applied afterwards, as `crgCheck` + `crgDataSetModifiersApply` do.
    pub fn new(crg: &Crg, apply_modifiers: bool) -> Result<Surface> {
        Surface::with_grid(crg, crg.z.clone(), apply_modifiers)
    }

    /// Like [`Surface::new`], taking the grid over instead of copying it (large grids).
    pub fn from_owned(mut crg: Crg, apply_modifiers: bool) -> Result<Surface> {
        let z = std::mem::take(&mut crg.z);
        Surface::with_grid(&crg, z, apply_modifiers)
    }

    fn with_grid(crg: &Crg, z: Vec<f32>, apply_modifiers: bool) -> Result<Surface> {
        if z.len() != crg.nu * crg.nv() {
            return Err(Error::new(ErrorKind::Inconsistent(format!(
                "{} z values for a {} x {} grid",
                z.len(),
                crg.nu,
                crg.nv()
            ))));
        }
        let mut s = Surface::from_crg(crg, z)?;
        s.prepare();
        if apply_modifiers {
            let mods = crg.modifiers.clone().unwrap_or_else(Modifiers::c_api_default);
            s.apply_modifiers(&mods);
        }
        Ok(s)
    }

    fn from_crg(crg: &Crg, z: Vec<f32>) -> Result<Surface> {
        let r = &crg.road;
        let nu = crg.nu;
        let nv = crg.nv();
        if nu < 2 || nv < 2 {
            return Err(Error::new(ErrorKind::Inconsistent(format!(
                "grid of {nu} x {nv} nodes; at least 2 x 2 are needed"
            ))));
        }
        let u_first = r.start_u.unwrap_or(0.0);
        let u_inc = r.increment.unwrap_or(0.01);
        if u_inc.is_nan() || u_inc <= 0.0 {
            return Err(Error::new(ErrorKind::Inconsistent(format!("REFERENCE_LINE_INCREMENT is {u_inc}"))));
        }
        let v = crg.v_positions();
        let (v_indexed, v_first, v_inc) = match &crg.long_sections {
            LongSections::Indexed(_) => (true, r.v_right.unwrap_or(0.0), r.v_increment.unwrap_or(0.01)),
            LongSections::AtV(pos) => {
                let dvs: Vec<f64> = pos.windows(2).map(|w| w[1] - w[0]).collect();
                let dmin = dvs.iter().copied().fold(f64::INFINITY, f64::min);
                let dmax = dvs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                if (dmax - dmin) / dmin < 1e-3 {
                    (false, pos[0], (pos[pos.len() - 1] - pos[0]) / (pos.len() - 1) as f64)
                } else {
                    (false, r.v_right.unwrap_or(0.0), r.v_increment.unwrap_or(0.01))
                }
            }
        };
        let v_last = r.v_left.unwrap_or(0.0);
        let phi_first = r.start_phi.unwrap_or(0.0);
        let phi = crg.phi.as_ref().map(|p| {
            let mut p = p.clone();
            if let Some(p0) = p.first_mut() {
                *p0 = phi_first;
            }
            p
        });
        let slope_first = r.start_slope.unwrap_or(0.0);
        let has_ref_z = crg.slope.is_some() || slope_first != 0.0;
        let bank_first = r.start_bank.unwrap_or(0.0);
        let has_bank = crg.banking.is_some() || bank_first != 0.0 || r.end_bank.is_some_and(|b| b != 0.0);
        Ok(Surface {
            u_first,
            u_last: u_first + u_inc * (nu - 1) as f64,
            u_inc,
            nu,
            v,
            v_first,
            v_last,
            v_inc,
            v_indexed,
            z,
            z_mean: vec![0.0; nv],
            x: vec![0.0; nu],
            y: vec![0.0; nu],
            x_first: r.start_x.unwrap_or(0.0),
            y_first: r.start_y.unwrap_or(0.0),
            x_last: r.end_x.unwrap_or(0.0),
            y_last: r.end_y.unwrap_or(0.0),
            x_end_given: r.end_x.is_some() && r.end_y.is_some(),
            phi,
            phi_first,
            phi_last: r.end_phi.unwrap_or(0.0),
            slope: crg.slope.clone(),
            slope_first,
            ref_z: if has_ref_z { Some(vec![0.0; nu]) } else { None },
            ref_z_first: r.start_z.unwrap_or(0.0),
            ref_z_last: r.end_z.unwrap_or(0.0),
            z_start_given: r.start_z.is_some(),
            z_end_given: r.end_z.is_some(),
            bank: crg.banking.clone(),
            bank_first,
            has_bank,
            phi_first_sc: (0.0, 1.0),
            phi_last_sc: (0.0, 1.0),
            closed: false,
            u_close_min: 0.0,
            u_close_max: 0.0,
            options: EvalOptions::from_file(crg.options.as_ref()),
        })
    }

    /// crgLoaderPrepareData: reference line, its z, z normalisation, utility data.
    fn prepare(&mut self) {
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

    /// u range of the grid, m.
    pub fn u_range(&self) -> (f64, f64) {
        (self.u_first, self.u_last)
    }
    /// v range as the C-API reports it (V_RIGHT .. V_LEFT of the header), m.
    pub fn v_range(&self) -> (f64, f64) {
        (self.v_first, self.v_last)
    }
    /// v positions of the long sections, m.
    pub fn v_positions(&self) -> &[f64] {
        &self.v
    }
    /// Reference line points (x, y) at every u node.
    pub fn reference_line(&self) -> (&[f64], &[f64]) {
        (&self.x, &self.y)
    }
    /// True when the C-API would treat the reference line as a closed track.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// u wrapped onto a closed track, if the option asks for it (crgEvalu2uvalid).
    fn u_valid(&self, u: f64, options: &EvalOptions) -> f64 {
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

/// Problems the C-API's crgCheckMods would refuse (it is not called by loaders, so they are
/// diagnostics, not errors).
pub fn modifier_problems(m: &Modifiers) -> Vec<String> {
    let mut out = Vec::new();
    if m.scale_length.is_some_and(|s| s <= 0.0) {
        out.push("SCALE_LENGTH must be > 0".into());
    }
    if m.scale_width.is_some_and(|s| s <= 0.0) {
        out.push("SCALE_WIDTH must be > 0".into());
    }
    if let Some(mode) = m.grid_nan_mode {
        if !(0..=2).contains(&mode) {
            out.push(format!("GRID_NAN_MODE = {mode} (0, 1 or 2)"));
        }
    }
    if m.grid_nan_offset.is_some() && m.grid_nan_mode == Some(0) {
        out.push("GRID_NAN_OFFSET with GRID_NAN_MODE = 0 (keep NaN) has no effect".into());
    }
    let by_offset = m.refline_offset_phi.is_some()
        || m.refline_offset_x.is_some()
        || m.refline_offset_y.is_some()
        || m.refline_offset_z.is_some();
    let by_ref = m.refpoint_u_fraction.is_some()
        || m.refpoint_u.is_some()
        || m.refpoint_v_fraction.is_some()
        || m.refpoint_v.is_some()
        || m.refpoint_x.is_some()
        || m.refpoint_y.is_some()
        || m.refpoint_z.is_some()
        || m.refpoint_phi.is_some();
    if by_ref && by_offset {
        out.push("both REFLINE_OFFSET_* and REFPOINT_* given: the reference point wins".into());
    }
    if m.refpoint_u_fraction.is_some() && m.refpoint_u.is_some() {
        out.push("REFPOINT_U and REFPOINT_U_FRACTION together: the fraction wins".into());
    }
    if m.refpoint_v_fraction.is_some() && m.refpoint_v.is_some() {
        out.push("REFPOINT_V and REFPOINT_V_FRACTION together: the fraction wins".into());
    }
    out
}

impl Surface {
    /// (x, y) of (u, v): mitred normals between reference-line points, straight extrapolation
    /// along START_PHI / END_PHI beyond the ends (crgEvaluv2xy).
    pub fn uv_to_xy(&self, u: f64, v: f64) -> (f64, f64) {
        self.uv_to_xy_with(u, v, &self.options)
    }

    fn uv_to_xy_with(&self, u: f64, v: f64, o: &EvalOptions) -> (f64, f64) {
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

    fn uv_to_pk_with(&self, u: f64, v: f64, o: &EvalOptions) -> (f64, f64) {
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

    /// Applies modifiers in the C-API's order (crgDataSetModifiersApply).
    fn apply_modifiers(&mut self, m: &Modifiers) {
        let mut need_prepare = false;
        if let Some(f) = m.scale_z_grid {
            need_prepare = true;
            let f32f = f as f32;
            for z in self.z.iter_mut().filter(|z| !z.is_nan()) {
                *z *= f32f;
            }
            for mean in &mut self.z_mean {
                *mean *= f;
            }
        }
        if let Some(f) = m.scale_slope {
            need_prepare = true;
            if let Some(s) = &mut self.slope {
                for x in s.iter_mut().filter(|x| !x.is_nan()) {
                    *x *= f;
                }
            }
            self.slope_first *= f;
            self.z_end_given = false;
        }
        if let Some(f) = m.scale_banking {
            if let Some(b) = &mut self.bank {
                for x in b.iter_mut().filter(|x| !x.is_nan()) {
                    *x *= f;
                }
            }
            self.bank_first *= f;
        }
        if let Some(f) = m.scale_length {
            need_prepare = true;
            let range = self.u_last - self.u_first;
            self.u_last = self.u_first + f * range;
            self.u_inc *= f;
            self.x_end_given = false;
            self.z_end_given = false;
        }
        if let Some(f) = m.scale_width {
            need_prepare = true;
            for v in &mut self.v {
                *v *= f;
            }
            self.v_first *= f;
            self.v_last *= f;
            self.v_inc *= f;
        }
        if let Some(f) = m.scale_curvature {
            need_prepare = true;
            if let Some(p) = &mut self.phi {
                let first = self.phi_first;
                for x in p.iter_mut().skip(1) {
                    *x = first + f * (*x - first);
                }
                self.phi_last = p.last().copied().unwrap_or(self.phi_first);
            } else {
                self.phi_last = self.phi_first;
            }
            self.phi_last_sc = self.phi_last.sin_cos();
            self.x_end_given = false;
        }
        if let Some(mode) = m.grid_nan_mode {
            need_prepare = true;
            let offset = if mode != 0 { m.grid_nan_offset.unwrap_or(0.0) } else { 0.0 };
            self.handle_nans(mode, offset);
        }
        if need_prepare {
            self.prepare();
        }
        self.apply_transformations(m);
    }

    /// crgLoaderHandleNaNs: per cross section, copy the nearest valid value outward (mode 2)
    /// or set the offset (mode 1); the offset is added once per side and cross section... as
    /// the C-API does it.
    fn handle_nans(&mut self, mode: i64, offset: f64) {
        let nv = self.v.len();
        let mut offset_applied = false;
        for row in self.z.chunks_mut(nv) {
            for v in 1..nv {
                if row[v].is_nan() {
                    match mode {
                        1 => row[v] = offset as f32,
                        2 => {
                            row[v] = row[v - 1];
                            if !row[v].is_nan() && !offset_applied {
                                row[v] += offset as f32;
                                offset_applied = true;
                            }
                        }
                        _ => {}
                    }
                }
            }
            offset_applied = false;
            for v in (1..nv).rev() {
                if row[v - 1].is_nan() && !row[v].is_nan() {
                    match mode {
                        1 => row[v - 1] = offset as f32,
                        2 => {
                            row[v - 1] = row[v];
                            if !row[v - 1].is_nan() && !offset_applied {
                                row[v - 1] += offset as f32;
                                offset_applied = true;
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
    }

    /// crgDataApplyTransformations: move by a reference point or by offsets.
    fn apply_transformations(&mut self, m: &Modifiers) {
        let mut from = [0.0f64; 3];
        let mut to = [0.0f64; 3];
        let mut rot_angle = 0.0;
        let rot_center;
        let mut apply = false;
        let mut u_pos = self.u_first;
        let mut v_pos = 0.0;
        if let Some(x) = m.refpoint_x {
            to[0] = x;
            apply = true;
        }
        if let Some(y) = m.refpoint_y {
            to[1] = y;
            apply = true;
        }
        if let Some(z) = m.refpoint_z {
            to[2] = z;
            apply = true;
        }
        if let Some(p) = m.refpoint_phi {
            rot_angle = p;
            apply = true;
        }
        if let Some(u) = m.refpoint_u {
            u_pos = u;
            apply = true;
        }
        if let Some(f) = m.refpoint_u_fraction {
            u_pos = self.u_first + f * (self.u_last - self.u_first) + m.refpoint_u_offset.unwrap_or(0.0);
            apply = true;
        }
        if let Some(v) = m.refpoint_v {
            v_pos = v;
            apply = true;
        }
        if let Some(f) = m.refpoint_v_fraction {
            v_pos = self.v_first + f * (self.v_last - self.v_first) + m.refpoint_v_offset.unwrap_or(0.0);
            apply = true;
        }
        let options = self.options.clone();
        if apply {
            let (fx, fy) = self.uv_to_xy_with(u_pos, v_pos, &options);
            // The C-API leaves the z of the "from" point at 0 when the evaluation fails.
            let fz = self.uv_to_z_with(u_pos, v_pos, &options).unwrap_or(0.0);
            let (from_phi, _) = self.uv_to_pk_with(u_pos, v_pos, &options);
            from = [fx, fy, fz];
            rot_angle -= from_phi;
            rot_center = [fx, fy];
        } else {
            from[0] = self.x_first;
            from[1] = self.y_first;
            rot_center = [m.refline_rotcenter_x.unwrap_or(from[0]), m.refline_rotcenter_y.unwrap_or(from[1])];
            let mut transform = false;
            if let Some(x) = m.refline_offset_x {
                to[0] = x;
                transform = true;
            }
            if let Some(y) = m.refline_offset_y {
                to[1] = y;
                transform = true;
            }
            if let Some(z) = m.refline_offset_z {
                to[2] = z;
                transform = true;
            }
            if let Some(p) = m.refline_offset_phi {
                rot_angle = p;
                transform = true;
            }
            // Evaluated without options: outside the grid this fails and z stays 0.
            let no_options = EvalOptions {
                border_mode_u: BorderMode::None,
                border_mode_v: BorderMode::None,
                border_offset_u: None,
                border_offset_v: None,
                smooth_u_begin: None,
                smooth_u_end: None,
                ..options
            };
            from[2] = self.uv_to_z_with(0.0, 0.0, &no_options).unwrap_or(0.0);
            to[0] += from[0];
            to[1] += from[1];
            to[2] += from[2];
            apply = transform;
        }
        if !apply {
            return;
        }
        if let Some(p) = &mut self.phi {
            for x in p.iter_mut() {
                *x += rot_angle;
            }
        }
        self.phi_first += rot_angle;
        self.phi_last += rot_angle;
        self.phi_first_sc = self.phi_first.sin_cos();
        self.phi_last_sc = self.phi_last.sin_cos();
        rotate(&mut self.x_first, &mut self.y_first, rot_center, rot_angle);
        rotate(&mut self.x_last, &mut self.y_last, rot_center, rot_angle);
        for i in 0..self.x.len() {
            let (mut px, mut py) = (self.x[i], self.y[i]);
            rotate(&mut px, &mut py, rot_center, rot_angle);
            self.x[i] = px;
            self.y[i] = py;
        }
        let (dx, dy, dz) = (to[0] - from[0], to[1] - from[1], to[2] - from[2]);
        for x in &mut self.x {
            *x += dx;
        }
        for y in &mut self.y {
            *y += dy;
        }
        self.x_first += dx;
        self.x_last += dx;
        self.y_first += dy;
        self.y_last += dy;
        if let Some(r) = &mut self.ref_z {
            for z in r.iter_mut() {
                *z += dz;
            }
            self.ref_z_first += dz;
            self.ref_z_last += dz;
        } else if self.z_start_given {
            self.ref_z_first += dz;
            self.ref_z_last += dz;
        } else {
            for mean in &mut self.z_mean {
                *mean += dz;
            }
        }
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

fn rotate(x: &mut f64, y: &mut f64, center: [f64; 2], angle: f64) {
    let (dx, dy) = (*x - center[0], *y - center[1]);
    let a = dy.atan2(dx) + angle;
    let d = (dx * dx + dy * dy).sqrt();
    *x = center[0] + d * a.cos();
    *y = center[1] + d * a.sin();
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
