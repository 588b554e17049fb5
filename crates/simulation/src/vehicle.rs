//! The vehicle: a longitudinal model (pluggable), a kinematic bicycle, four wheels on the road.
//!
//! # Longitudinal
//! The seed's regression on a Ford Fusion drive: A = 0.129 TH - 0.549 B - 0.190 km/h per
//! second (TH throttle, B brake, percent; the constant is air drag), i.e. a = A / 3.6 m/s².
//! Inputs are held over a tick, so the acceleration is constant in it and the step is exact:
//! v1 = v0 + a dt, d = v0 dt + a dt²/2, and where v would pass 0 the car stops inside the tick
//! (at t* = v0 / -a, having gone v0² / -2a) and stays at 0: the constant drag never pushes a
//! stopped car backwards. [`DragModel`] adds -k v² and is integrated exactly too (tanh, coth
//! and tan solutions of v' = A - k v²).
//!
//! # Lateral
//! A kinematic bicycle about the rear axle: curvature κ = tan(δ) / wheelbase, δ = steering ×
//! max steering angle, steering in -1..1. With δ held over the tick the rear axle runs an arc
//! of curvature κ for the tick's distance d: heading ψ1 = ψ0 + κ d, position by the arc's
//! chord (sin/cos; a straight line when κ d is tiny, by its series). Exact for any speed
//! profile within the tick.
//!
//! # Wheels
//! Contacts at the rear axle (x = 0) and the front axle (x = wheelbase), y = ±track / 2 (body
//! frame: x forward, y left), placed in plan by the heading alone. With the surface heights
//! z_fl, z_fr, z_rl, z_rr: heave z = their mean; pitch (nose up positive) =
//! atan(((z_fl + z_fr) - (z_rl + z_rr)) / 2 / wheelbase); roll (right side down positive) =
//! atan(((z_fl + z_rl) - (z_fr + z_rr)) / 2 / track). On a plane of grade g and cross slope c
//! (height change per metre to the left) that is pitch = atan g and roll = atan c; a wheel
//! over a pothole stands at the pothole's bottom (point contact, no tyre envelope).

use crate::surface::RoadSurface;
use serde::{Deserialize, Serialize};

/// km/h per second in m/s².
const KMH: f64 = 1.0 / 3.6;

/// A longitudinal model: acceleration from speed and pedals, and its exact step.
pub trait Longitudinal: std::fmt::Debug {
    /// Acceleration at speed `v` (m/s) with `throttle` and `brake` in percent (0..100), m/s²,
    /// before the stop at v = 0.
    fn acceleration(&self, v: f64, throttle: f64, brake: f64) -> f64;
    /// Speed and distance after `dt` s with the pedals held, from speed `v` (never below 0).
    fn advance(&self, v: f64, throttle: f64, brake: f64, dt: f64) -> (f64, f64);
    /// Pedals (throttle, brake, percent) for the acceleration `a` (m/s²) at speed `v`, each in
    /// 0..100 and at most one of them non-zero.
    fn pedals_for(&self, v: f64, a: f64) -> (f64, f64);
}

/// The seed's linear regression (coefficients in km/h per second per percent).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Regression {
    /// Per percent of throttle (0.129).
    pub throttle: f64,
    /// Per percent of brake (0.549).
    pub brake: f64,
    /// Constant drag (0.190).
    pub drag: f64,
}

impl Default for Regression {
    fn default() -> Self {
        Regression { throttle: 0.129, brake: 0.549, drag: 0.190 }
    }
}

fn pedal(p: f64) -> f64 {
    if p.is_nan() {
        0.0
    } else {
        p.clamp(0.0, 100.0)
    }
}

impl Regression {
    /// The pedal part of the acceleration, m/s².
    fn base(&self, throttle: f64, brake: f64) -> f64 {
        (self.throttle * pedal(throttle) - self.brake * pedal(brake) - self.drag) * KMH
    }
}

/// Exact step of a constant acceleration with the stop at 0.
pub fn constant_step(v: f64, a: f64, dt: f64) -> (f64, f64) {
    let v = v.max(0.0);
    if dt <= 0.0 || !dt.is_finite() {
        return (v, 0.0);
    }
    if v == 0.0 && a <= 0.0 {
        return (0.0, 0.0);
    }
    let v1 = v + a * dt;
    if v1 >= 0.0 {
        (v1, v * dt + 0.5 * a * dt * dt)
    } else {
        (0.0, v * v / (-2.0 * a))
    }
}

impl Longitudinal for Regression {
    fn acceleration(&self, _v: f64, throttle: f64, brake: f64) -> f64 {
        self.base(throttle, brake)
    }
    fn advance(&self, v: f64, throttle: f64, brake: f64, dt: f64) -> (f64, f64) {
        constant_step(v, self.base(throttle, brake), dt)
    }
    fn pedals_for(&self, _v: f64, a: f64) -> (f64, f64) {
        invert(self, a, 0.0)
    }
}

/// Pedals for `a` when the model gives `a = base(th, b) - extra`.
fn invert(r: &Regression, a: f64, extra: f64) -> (f64, f64) {
    let need = (a + extra) / KMH + r.drag; // km/h/s the pedals must give
    if need >= 0.0 {
        let th = if r.throttle > 0.0 { need / r.throttle } else { 0.0 };
        (pedal(th), 0.0)
    } else {
        let b = if r.brake > 0.0 { -need / r.brake } else { 0.0 };
        (0.0, pedal(b))
    }
}

/// The regression with a speed-dependent drag term: a = regression - k v².
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DragModel {
    /// The pedal and constant terms.
    pub regression: Regression,
    /// k, 1/m (a = ... - k v²).
    pub k: f64,
}

impl Default for DragModel {
    /// The regression and k = 0.0004 /m (about 0.16 m/s² at 20 m/s).
    fn default() -> Self {
        DragModel { regression: Regression::default(), k: 0.0004 }
    }
}

/// ln(cosh x), without overflow.
fn ln_cosh(x: f64) -> f64 {
    let a = x.abs();
    a + (-2.0 * a).exp().ln_1p() - std::f64::consts::LN_2
}

impl Longitudinal for DragModel {
    fn acceleration(&self, v: f64, throttle: f64, brake: f64) -> f64 {
        self.regression.base(throttle, brake) - self.k * v * v
    }
    fn advance(&self, v: f64, throttle: f64, brake: f64, dt: f64) -> (f64, f64) {
        let a = self.regression.base(throttle, brake);
        let k = self.k;
        let v = v.max(0.0);
        if !(k.is_finite() && k > 1e-12) {
            return constant_step(v, a, dt);
        }
        if dt <= 0.0 || !dt.is_finite() || (v == 0.0 && a <= 0.0) {
            return (v, 0.0);
        }
        if a > 0.0 {
            let (w, r) = ((a / k).sqrt(), (a * k).sqrt());
            if v < w {
                // v = w tanh(r t + c), distance = (ln cosh(r t + c) - ln cosh c) / k.
                let c = (v / w).atanh();
                let x = r * dt + c;
                (w * x.tanh(), (ln_cosh(x) - ln_cosh(c)) / k)
            } else if v > w {
                // v = w coth(r t + c), c = atanh(w / v); distance = ln(sinh(r t + c) / sinh c) / k.
                let c = (w / v).atanh();
                let x = r * dt + c;
                let ln_ratio = (x - c) + ((1.0 - (-2.0 * x).exp()) / (1.0 - (-2.0 * c).exp())).ln();
                (w / x.tanh(), ln_ratio / k)
            } else {
                (w, w * dt)
            }
        } else if a == 0.0 {
            let q = k * v * dt;
            (v / (1.0 + q), q.ln_1p() / k)
        } else {
            // v = w tan(c - r t), c = atan(v / w), zero at t* = c / r; distance =
            // ln(cos(c - r t) / cos c) / k.
            let (w, r) = ((-a / k).sqrt(), (-a * k).sqrt());
            let c = (v / w).atan();
            if r * dt >= c {
                (0.0, -c.cos().ln() / k)
            } else {
                let x = c - r * dt;
                (w * x.tan(), (x.cos() / c.cos()).ln() / k)
            }
        }
    }
    fn pedals_for(&self, v: f64, a: f64) -> (f64, f64) {
        invert(&self.regression, a, self.k * v * v)
    }
}

/// Which longitudinal model a scenario uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelKind {
    /// [`Regression`].
    #[default]
    Regression,
    /// [`DragModel`].
    Drag,
}

/// The longitudinal model of a scenario: its kind and coefficients (the seed's by default).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelConfig {
    /// `regression` or `drag`.
    pub kind: ModelKind,
    /// km/h/s per percent of throttle.
    pub throttle: f64,
    /// km/h/s per percent of brake.
    pub brake: f64,
    /// Constant drag, km/h/s.
    pub drag: f64,
    /// k of the drag model, 1/m.
    pub k: f64,
}

impl Default for ModelConfig {
    fn default() -> Self {
        let r = Regression::default();
        ModelConfig {
            kind: ModelKind::Regression,
            throttle: r.throttle,
            brake: r.brake,
            drag: r.drag,
            k: DragModel::default().k,
        }
    }
}

impl ModelConfig {
    /// The model.
    pub fn build(&self) -> Box<dyn Longitudinal> {
        let regression = Regression { throttle: self.throttle, brake: self.brake, drag: self.drag };
        match self.kind {
            ModelKind::Regression => Box::new(regression),
            ModelKind::Drag => Box::new(DragModel { regression, k: self.k }),
        }
    }
}

/// Sizes and limits of a vehicle.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct VehicleParams {
    /// Axle to axle, m.
    pub wheelbase: f64,
    /// Wheel to wheel across, m.
    pub track: f64,
    /// Largest road wheel angle, rad.
    pub max_steering: f64,
    /// Body length, m.
    pub length: f64,
    /// Body width, m.
    pub width: f64,
    /// Body height, m.
    pub height: f64,
    /// Rear bumper to rear axle, m.
    pub rear_overhang: f64,
}

impl Default for VehicleParams {
    /// A mid-size saloon (the seed's Ford Fusion: 2.85 m wheelbase, 4.87 x 1.85 x 1.48 m).
    fn default() -> Self {
        VehicleParams {
            wheelbase: 2.85,
            track: 1.58,
            max_steering: 0.6,
            length: 4.87,
            width: 1.85,
            height: 1.48,
            rear_overhang: 1.0,
        }
    }
}

impl VehicleParams {
    /// Every size positive and finite, the steering limit in (0, π/2).
    pub fn check(&self) -> Result<(), crate::Error> {
        for (what, v) in [
            ("wheelbase", self.wheelbase),
            ("track", self.track),
            ("length", self.length),
            ("width", self.width),
            ("height", self.height),
        ] {
            crate::positive(what, v)?;
        }
        if !(self.max_steering > 0.0 && self.max_steering < 1.5) {
            return Err(crate::Error::Range {
                what: "max_steering".into(),
                value: self.max_steering,
                range: "0 to 1.5 rad",
            });
        }
        if !self.rear_overhang.is_finite() {
            return Err(crate::Error::Range {
                what: "rear_overhang".into(),
                value: self.rear_overhang,
                range: "finite",
            });
        }
        Ok(())
    }

    /// Body centre ahead of the rear axle, m.
    pub fn centre_ahead(&self) -> f64 {
        0.5 * self.length - self.rear_overhang
    }
}

/// The vehicle's state: pose on the road, speed and the inputs held.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct VehicleState {
    /// Rear axle centre, plan, file frame, m.
    pub x: f64,
    /// Rear axle centre, plan, file frame, m.
    pub y: f64,
    /// Heading, rad counter-clockwise from x.
    pub heading: f64,
    /// m/s, never below 0.
    pub speed: f64,
    /// Steering input, -1..1 (left positive).
    pub steering: f64,
    /// Throttle, percent.
    pub throttle: f64,
    /// Brake, percent.
    pub brake: f64,
    /// Heave: the mean of the wheels' contact heights, m.
    pub z: f64,
    /// Nose up positive, rad.
    pub pitch: f64,
    /// Right side down positive, rad.
    pub roll: f64,
    /// Contact heights: front left, front right, rear left, rear right, m.
    pub wheels: [f64; 4],
    /// Distance driven, m.
    pub odometer: f64,
    /// Motion imposed by external dynamics (a co-simulation bridge); while set, the model,
    /// the pedals, the steering and the driver are not used.
    pub external: Option<External>,
    /// The road's planar (s, t) under each wheel after the last tick (order of `wheels`), where the
    /// next tick's searches start (see `RoadSurface::planar_st_from`).
    pub wheel_st: [Option<[f64; 2]>; 4],
}

/// Motion imposed on a body by external dynamics, held until replaced or cleared.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum External {
    /// Velocity (vx, vy, vz), file frame, m/s: each tick the body moves by it in plan, its
    /// heading along it (kept while the plan speed is 0); z follows the surface.
    Velocity([f64; 3]),
    /// The body's pose (x, y, z, m; roll, pitch, heading, rad), file frame: the body's centre is
    /// placed at (x, y) with that heading; on the road its height, pitch and roll come from the
    /// surface under its wheels, off it from the pose.
    Pose([f64; 6]),
}

impl External {
    /// Checks that every value is finite.
    pub fn checked(self) -> Result<External, crate::Error> {
        let v: &[f64] = match &self {
            External::Velocity(v) => v,
            External::Pose(p) => p,
        };
        match v.iter().find(|x| !x.is_finite()) {
            Some(&x) => Err(crate::Error::Range { what: "external motion".into(), value: x, range: "finite" }),
            None => Ok(self),
        }
    }

    /// Where a body at plan `at` with `heading` goes in `dt` (its new plan position of the same
    /// point, heading, and plan speed), `centre_ahead` being how far the point the pose names
    /// lies ahead of `at`.
    pub fn advance(self, at: [f64; 2], heading: f64, centre_ahead: f64, dt: f64) -> ([f64; 2], f64, f64) {
        match self {
            External::Velocity([vx, vy, _]) => {
                let v = vx.hypot(vy);
                let h = if v > 0.0 { vy.atan2(vx) } else { heading };
                ([at[0] + vx * dt, at[1] + vy * dt], h, v)
            }
            External::Pose([x, y, _, _, _, h]) => {
                let (sn, cs) = h.sin_cos();
                let to = [x - centre_ahead * cs, y - centre_ahead * sn];
                let v = if dt > 0.0 { (to[0] - at[0]).hypot(to[1] - at[1]) / dt } else { 0.0 };
                (to, h, v)
            }
        }
    }
}

/// The plan positions of the four contacts (front left, front right, rear left, rear right).
pub fn wheel_positions(p: &VehicleParams, x: f64, y: f64, heading: f64) -> [[f64; 2]; 4] {
    let (sn, cs) = heading.sin_cos();
    let at = |ax: f64, ay: f64| [x + ax * cs - ay * sn, y + ax * sn + ay * cs];
    let h = 0.5 * p.track;
    [at(p.wheelbase, h), at(p.wheelbase, -h), at(0.0, h), at(0.0, -h)]
}

/// Heave, pitch and roll from the contact heights (see the module).
pub fn attitude(p: &VehicleParams, z: [f64; 4]) -> (f64, f64, f64) {
    let [fl, fr, rl, rr] = z;
    let heave = 0.25 * (fl + fr + rl + rr);
    let pitch = (0.5 * ((fl + fr) - (rl + rr)) / p.wheelbase).atan();
    let roll = (0.5 * ((fl + rl) - (fr + rr)) / p.track).atan();
    (heave, pitch, roll)
}

/// The rear axle's plan motion over distance `d` at curvature `kappa` from heading `h`:
/// (dx, dy, new heading).
pub fn arc(h: f64, kappa: f64, d: f64) -> (f64, f64, f64) {
    arc_sc(h, kappa, d, &mut SinCos::default())
}

/// [`arc`], the heading's `sin_cos` taken from `trig`.
pub(crate) fn arc_sc(h: f64, kappa: f64, d: f64, trig: &mut SinCos) -> (f64, f64, f64) {
    let turn = kappa * d;
    let h1 = h + turn;
    if turn.abs() < 1e-6 {
        // sin(h + θ) - sin h over κ, by the series in θ to θ³ (error below 1e-25 d).
        let (s, c) = trig.of(h);
        let dx = d * (c - 0.5 * turn * s - turn * turn / 6.0 * c);
        let dy = d * (s + 0.5 * turn * c - turn * turn / 6.0 * s);
        (dx, dy, h1)
    } else {
        ((h1.sin() - h.sin()) / kappa, (h.cos() - h1.cos()) / kappa, h1)
    }
}

/// The last angle's `sin_cos`, kept: an actor going straight keeps its heading tick after
/// tick, and its motion and its body ask for the same sine and cosine. The same bits as
/// `sin_cos` (it is what is kept).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SinCos {
    angle: Option<u64>,
    value: (f64, f64),
}

impl SinCos {
    /// `angle.sin_cos()`.
    pub(crate) fn of(&mut self, angle: f64) -> (f64, f64) {
        if self.angle != Some(angle.to_bits()) {
            self.value = angle.sin_cos();
            self.angle = Some(angle.to_bits());
        }
        self.value
    }
}

impl VehicleState {
    /// A vehicle with its rear axle at (x, y), heading `heading`, at rest on `surface`.
    pub fn at(p: &VehicleParams, surface: &RoadSurface, x: f64, y: f64, heading: f64, speed: f64) -> VehicleState {
        let mut v = VehicleState { x, y, heading, speed: speed.max(0.0), ..VehicleState::default() };
        v.settle(p, surface);
        v
    }

    /// Road wheel angle, rad.
    pub fn wheel_angle(&self, p: &VehicleParams) -> f64 {
        let s = if self.steering.is_nan() { 0.0 } else { self.steering.clamp(-1.0, 1.0) };
        s * p.max_steering
    }

    /// One tick of `dt` s with the inputs held: speed by `model`, plan motion by the bicycle,
    /// then the wheels set on `surface`.
    pub fn step(&mut self, p: &VehicleParams, model: &dyn Longitudinal, surface: &RoadSurface, dt: f64) {
        if let Some(ext) = self.external {
            let ([x, y], h, v) = ext.advance([self.x, self.y], self.heading, p.centre_ahead(), dt);
            self.odometer += (x - self.x).hypot(y - self.y);
            (self.x, self.y, self.heading, self.speed) = (x, y, h, v);
            let on_road = wheel_positions(p, x, y, h).iter().any(|w| surface.height(w[0], w[1]).is_some());
            if on_road {
                self.settle(p, surface);
            } else {
                match ext {
                    External::Pose([_, _, z, roll, pitch, _]) => (self.z, self.roll, self.pitch) = (z, roll, pitch),
                    External::Velocity([_, _, vz]) => self.z += vz * dt,
                }
            }
            return;
        }
        let (v1, d) = model.advance(self.speed, self.throttle, self.brake, dt);
        let kappa = self.wheel_angle(p).tan() / p.wheelbase;
        let (dx, dy, h1) = arc(self.heading, kappa, d);
        self.x += dx;
        self.y += dy;
        self.heading = h1;
        self.speed = v1;
        self.odometer += d;
        self.settle(p, surface);
    }

    /// Sets the wheels on the surface: contact heights, heave, pitch and roll. A wheel off the
    /// road takes the mean of those on it; with none on it the attitude is kept.
    pub fn settle(&mut self, p: &VehicleParams, surface: &RoadSurface) {
        let pos = wheel_positions(p, self.x, self.y, self.heading);
        let mut z = [None; 4];
        for (k, w) in pos.iter().enumerate() {
            let c = surface.contact_from(w[0], w[1], self.wheel_st[k]);
            self.wheel_st[k] = RoadSurface::hint_of(c.as_ref());
            z[k] = c.map(|c| c.z);
        }
        let on: Vec<f64> = z.iter().flatten().copied().collect();
        if on.is_empty() {
            return;
        }
        let mean = on.iter().sum::<f64>() / on.len() as f64;
        let mut w = [mean; 4];
        for (k, zk) in z.iter().enumerate() {
            if let (Some(zk), Some(slot)) = (zk, w.get_mut(k)) {
                *slot = *zk;
            }
        }
        let (heave, pitch, roll) = attitude(p, w);
        self.wheels = w;
        self.z = heave;
        self.pitch = pitch;
        self.roll = roll;
    }

    /// Body centre in plan, m.
    pub fn centre(&self, p: &VehicleParams) -> [f64; 2] {
        let (sn, cs) = self.heading.sin_cos();
        let a = p.centre_ahead();
        [self.x + a * cs, self.y + a * sn]
    }

    /// The body's pose (centre between the axles at the heave height; yaw, pitch, roll).
    pub fn pose(&self, p: &VehicleParams) -> world::Pose {
        let (sn, cs) = self.heading.sin_cos();
        let a = 0.5 * p.wheelbase;
        world::Pose::from_ypr([self.x + a * cs, self.y + a * sn, self.z], self.heading, self.pitch, self.roll)
    }
}
