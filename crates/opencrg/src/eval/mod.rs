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
//!
//! The parts: this module holds the options and the prepared [`Surface`]; `refline` builds
//! its reference line and utility data, `height` evaluates z(u, v), `frame` maps between
//! (u, v) and (x, y), and `modifiers` applies the file's modifiers to the grid.

mod frame;
mod height;
mod modifiers;
mod refline;

pub use modifiers::modifier_problems;

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
    /// Number of cross sections (u nodes).
    pub fn nu(&self) -> usize {
        self.nu
    }
    /// u of the `iu`-th cross section, m.
    pub fn u_at(&self, iu: usize) -> f64 {
        self.u_first + iu as f64 * self.u_inc
    }
    /// The grid's z at node (iu, iv) as evaluated (after the NaN handling and the modifiers),
    /// without the reference line's z and banking: what `uv_to_z` interpolates between. NaN
    /// where the grid has no data (or the node is outside the grid).
    pub fn node_z(&self, iu: usize, iv: usize) -> f64 {
        let nv = self.v.len();
        match (iu < self.nu && iv < nv).then(|| self.z.get(iu * nv + iv)).flatten() {
            Some(z) => *z as f64 + self.z_mean.get(iv).copied().unwrap_or(0.0),
            None => f64::NAN,
        }
    }
}
