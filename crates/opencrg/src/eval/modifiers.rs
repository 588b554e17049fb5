//! The file's modifiers, applied to a prepared surface in the C-API's order
//! (crgDataSetModifiersApply): NaN handling, scaling, grid and reference-line transformations;
//! and the problems the C-API's crgCheckMods would refuse, as diagnostics.

use super::{EvalOptions, Surface};
use crate::model::*;

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
    /// Applies modifiers in the C-API's order (crgDataSetModifiersApply).
    pub(super) fn apply_modifiers(&mut self, m: &Modifiers) {
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

fn rotate(x: &mut f64, y: &mut f64, center: [f64; 2], angle: f64) {
    let (dx, dy) = (*x - center[0], *y - center[1]);
    let a = dy.atan2(dx) + angle;
    let d = (dx * dx + dy * dy).sqrt();
    *x = center[0] + d * a.cos();
    *y = center[1] + d * a.sin();
}
