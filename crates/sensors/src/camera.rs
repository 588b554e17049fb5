//! A virtual camera: a pinhole with optional lens distortion on a mount, rendered by casting
//! one ray per pixel centre into a [`world::Cast`].
//!
//! Frames and conventions (OpenCV's):
//! - The camera frame is x right, y down, z forward (the optical axis). The mount is a
//!   [`Pose`] in the vehicle's body frame (x forward, y left, z up) whose own axes follow the
//!   body convention, so a camera-frame direction (x, y, z) is the mount-frame direction
//!   (z, -x, -y): forward is the optical axis, left is -x, up is -y. An identity mount looks
//!   straight ahead, level, with image rows horizontal.
//! - Pixel (col, row) has its centre at (u, v) = (col, row); the image covers
//!   [-0.5, w - 0.5] x [-0.5, h - 0.5]. A camera made from a horizontal field of view has
//!   fx = fy = (w / 2) / tan(hfov / 2) and its principal point in the middle,
//!   (cx, cy) = ((w - 1) / 2, (h - 1) / 2), so the image's outer edges lie at ±hfov / 2.
//! - Distortion maps normalised coordinates (x, y) = (X / Z, Y / Z) to distorted ones
//!   (xd, yd), then u = fx xd + cx, v = fy yd + cy.
//!   Brown-Conrady: r² = x² + y², xd = x (1 + k1 r² + k2 r⁴ + k3 r⁶) + 2 p1 x y + p2 (r² + 2 x²),
//!   yd = y (1 + k1 r² + k2 r⁴ + k3 r⁶) + p1 (r² + 2 y²) + 2 p2 x y.
//!   Equidistant (OpenCV fisheye): θ = atan2(√(X² + Y²), Z), θd = θ (1 + k1 θ² + k2 θ⁴ + k3 θ⁶
//!   + k4 θ⁸), (xd, yd) = θd (X, Y) / √(X² + Y²).
//! - [`RayTable`] inverts the distortion once per pixel by Newton iteration; a pixel whose
//!   inverse does not converge or does not project back onto it (outside the lens's valid
//!   field) gets no ray and renders as [`NO_RAY_RGB`].
//!
//! Images (row-major, `width * row + col`): RGB is the material's colour times
//! `ambient + (1 - ambient) max(0, n · sun)` (sky colour where nothing is hit); depth is the
//! hit's z along the optical axis in metres as f32 (NaN: nothing within the range); class is
//! the hit's class (0: none); instance is the hit's object id (0: static scene or none).
//!
//! Files ([`Frame::write_pngs`], [`Frame::write_planes`]):
//! - `rgb.png` 8-bit RGB; `depth.png` 16-bit grey, depth in millimetres rounded, 0 = none
//!   (or z <= 0: a fisheye's rays beyond 90 degrees), 65535 = 65.535 m or farther; `class.png` 8-bit grey; `instance.png` 16-bit grey, object
//!   ids above 65535 written as 65535.
//! - The seed's MATLAB layout (`--planes`): `rgb.planes` holds the R plane, then the G plane,
//!   then the B plane, each `w * h` raw bytes column-major (index = col * h + row), as MATLAB
//!   stores an h x w x 3 uint8 array; `depth.f32` holds the depth as little-endian f32,
//!   column-major likewise (NaN = none). Read in MATLAB with
//!   `reshape(fread(f, w*h*3, 'uint8=>uint8'), h, w, 3)` and
//!   `reshape(fread(f, w*h, 'float32', 0, 'l'), h, w)`.
//!
//! Pixels are cast in tiles of 8 x 8 as one packet ([`world::Cast::cast_many`]), which gives
//! each pixel the hit its ray alone would get.
//!
//! Invariant: the same world, camera, pose and time give the same bytes at any thread count
//! (every pixel is computed alone; threads only share out blocks of rows).

use crate::Error;
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
use world::{Cast, Pose, Ray, V3};

/// Colour of a pixel whose ray leaves the lens's valid field.
pub const NO_RAY_RGB: [u8; 3] = [0, 0, 0];

/// Focal lengths and principal point in pixels, and the image size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Intrinsics {
    /// Focal length along x (columns), px.
    pub fx: f64,
    /// Focal length along y (rows), px.
    pub fy: f64,
    /// Principal point's column, px.
    pub cx: f64,
    /// Principal point's row, px.
    pub cy: f64,
    /// Columns.
    pub width: u32,
    /// Rows.
    pub height: u32,
}

impl Intrinsics {
    /// Square pixels, the principal point in the middle, and a horizontal field of view of
    /// `hfov` radians across `width` columns.
    pub fn from_hfov(hfov: f64, width: u32, height: u32) -> Intrinsics {
        let f = 0.5 * width as f64 / (0.5 * hfov).tan();
        Intrinsics { fx: f, fy: f, cx: 0.5 * (width as f64 - 1.0), cy: 0.5 * (height as f64 - 1.0), width, height }
    }
}

/// Lens distortion (OpenCV's models; see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Distortion {
    /// An ideal pinhole.
    #[default]
    None,
    /// Radial (k1, k2, k3) and tangential (p1, p2) distortion, OpenCV's default model.
    BrownConrady {
        /// r² coefficient.
        k1: f64,
        /// r⁴ coefficient.
        k2: f64,
        /// First tangential coefficient.
        p1: f64,
        /// Second tangential coefficient.
        p2: f64,
        /// r⁶ coefficient.
        k3: f64,
    },
    /// Equidistant fisheye, OpenCV's `cv::fisheye`.
    Equidistant {
        /// θ² coefficient.
        k1: f64,
        /// θ⁴ coefficient.
        k2: f64,
        /// θ⁶ coefficient.
        k3: f64,
        /// θ⁸ coefficient.
        k4: f64,
    },
}

/// A camera: intrinsics, distortion, mount and lighting.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Camera {
    /// Focal lengths, principal point, size.
    pub intrinsics: Intrinsics,
    /// Lens distortion.
    pub distortion: Distortion,
    /// Its pose in the vehicle's body frame (see the module docs for the axes).
    pub mount: Pose,
    /// Unit direction towards the sun, world frame.
    pub sun: V3,
    /// Share of the light that does not depend on the sun, 0..1.
    pub ambient: f64,
    /// Colour where a ray hits nothing.
    pub sky: [u8; 3],
    /// Farthest distance a ray is cast, m.
    pub max_range: f64,
}

/// Newton iterations at most, and the residual (normalised coordinates) that ends them.
const NEWTON_STEPS: usize = 60;
const NEWTON_TOL: f64 = 1e-14;

impl Camera {
    /// A pinhole with `intrinsics` on `mount`, the sun high in the south-east (world frame
    /// x east, y north, z up), ambient light 0.35, a pale blue sky, a 1 km range.
    pub fn new(intrinsics: Intrinsics, mount: Pose) -> Camera {
        let s: V3 = [0.45, -0.35, 0.82];
        let n = (s[0] * s[0] + s[1] * s[1] + s[2] * s[2]).sqrt();
        Camera {
            intrinsics,
            distortion: Distortion::None,
            mount,
            sun: [s[0] / n, s[1] / n, s[2] / n],
            ambient: 0.35,
            sky: [150, 190, 230],
            max_range: 1000.0,
        }
    }

    /// Checks the settings.
    pub fn check(&self) -> Result<(), Error> {
        let k = &self.intrinsics;
        let range = |what, value: f64, lo: f64, hi: f64, text| {
            if value.is_finite() && value >= lo && value <= hi {
                Ok(())
            } else {
                Err(Error::Range { what, value, range: text })
            }
        };
        range("width (px)", k.width as f64, 1.0, 16384.0, "1 to 16384")?;
        range("height (px)", k.height as f64, 1.0, 16384.0, "1 to 16384")?;
        range("fx (px)", k.fx, 1e-3, 1e7, "positive, up to 1e7")?;
        range("fy (px)", k.fy, 1e-3, 1e7, "positive, up to 1e7")?;
        range("cx (px)", k.cx, -1e7, 1e7, "a finite number")?;
        range("cy (px)", k.cy, -1e7, 1e7, "a finite number")?;
        range("ambient", self.ambient, 0.0, 1.0, "0 to 1")?;
        range("maximum range (m)", self.max_range, 1e-3, 1e7, "positive, up to 1e7")?;
        let coeffs: Vec<f64> = match self.distortion {
            Distortion::None => vec![],
            Distortion::BrownConrady { k1, k2, p1, p2, k3 } => vec![k1, k2, p1, p2, k3],
            Distortion::Equidistant { k1, k2, k3, k4 } => vec![k1, k2, k3, k4],
        };
        for c in coeffs {
            range("distortion coefficient", c, -1e3, 1e3, "-1000 to 1000")?;
        }
        Ok(())
    }

    /// The pixel coordinates (u, v) of a camera-frame direction (None: behind a pinhole or
    /// Brown-Conrady camera, or along the fisheye's axis' opposite).
    pub fn project(&self, d: V3) -> Option<(f64, f64)> {
        let k = &self.intrinsics;
        let (xd, yd) = match self.distortion {
            Distortion::None => {
                if d[2] <= 0.0 {
                    return None;
                }
                (d[0] / d[2], d[1] / d[2])
            }
            Distortion::BrownConrady { .. } => {
                if d[2] <= 0.0 {
                    return None;
                }
                self.distort_bc(d[0] / d[2], d[1] / d[2]).0
            }
            Distortion::Equidistant { .. } => {
                let r = d[0].hypot(d[1]);
                if r == 0.0 {
                    if d[2] > 0.0 {
                        (0.0, 0.0)
                    } else {
                        return None;
                    }
                } else {
                    let theta = r.atan2(d[2]);
                    let td = self.theta_d(theta).0;
                    (td * d[0] / r, td * d[1] / r)
                }
            }
        };
        Some((k.fx * xd + k.cx, k.fy * yd + k.cy))
    }

    /// The unit camera-frame direction seen at pixel coordinates (u, v) (None: the distortion's
    /// inverse does not converge there).
    pub fn unproject(&self, u: f64, v: f64) -> Option<V3> {
        let k = &self.intrinsics;
        let (xd, yd) = ((u - k.cx) / k.fx, (v - k.cy) / k.fy);
        let (x, y) = match self.distortion {
            Distortion::None => (xd, yd),
            Distortion::BrownConrady { .. } => self.undistort_bc(xd, yd)?,
            Distortion::Equidistant { .. } => {
                let rd = xd.hypot(yd);
                if rd == 0.0 {
                    return Some([0.0, 0.0, 1.0]);
                }
                let theta = self.undistort_theta(rd)?;
                let (s, c) = theta.sin_cos();
                return Some([s * xd / rd, s * yd / rd, c]);
            }
        };
        let n = (x * x + y * y + 1.0).sqrt();
        Some([x / n, y / n, 1.0 / n])
    }

    /// Brown-Conrady: distorted (xd, yd) of (x, y) and the Jacobian [[dxd/dx, dxd/dy],
    /// [dyd/dx, dyd/dy]].
    fn distort_bc(&self, x: f64, y: f64) -> ((f64, f64), [[f64; 2]; 2]) {
        let Distortion::BrownConrady { k1, k2, p1, p2, k3 } = self.distortion else {
            return ((x, y), [[1.0, 0.0], [0.0, 1.0]]);
        };
        let r2 = x * x + y * y;
        let radial = 1.0 + r2 * (k1 + r2 * (k2 + r2 * k3));
        // d(radial)/d(r²).
        let dr = k1 + r2 * (2.0 * k2 + 3.0 * r2 * k3);
        let xd = x * radial + 2.0 * p1 * x * y + p2 * (r2 + 2.0 * x * x);
        let yd = y * radial + p1 * (r2 + 2.0 * y * y) + 2.0 * p2 * x * y;
        let j = [
            [radial + 2.0 * x * x * dr + 2.0 * p1 * y + 6.0 * p2 * x, 2.0 * x * y * dr + 2.0 * p1 * x + 2.0 * p2 * y],
            [2.0 * x * y * dr + 2.0 * p1 * x + 2.0 * p2 * y, radial + 2.0 * y * y * dr + 6.0 * p1 * y + 2.0 * p2 * x],
        ];
        ((xd, yd), j)
    }

    /// Brown-Conrady's inverse by Newton from (xd, yd).
    fn undistort_bc(&self, xd: f64, yd: f64) -> Option<(f64, f64)> {
        let (mut x, mut y) = (xd, yd);
        for _ in 0..NEWTON_STEPS {
            let ((fx, fy), j) = self.distort_bc(x, y);
            let (ex, ey) = (fx - xd, fy - yd);
            if ex.hypot(ey) <= NEWTON_TOL * (1.0 + xd.hypot(yd)) {
                return Some((x, y));
            }
            let det = j[0][0] * j[1][1] - j[0][1] * j[1][0];
            if det.abs() < 1e-12 || !det.is_finite() {
                return None;
            }
            x -= (j[1][1] * ex - j[0][1] * ey) / det;
            y -= (-j[1][0] * ex + j[0][0] * ey) / det;
            if !(x.is_finite() && y.is_finite()) {
                return None;
            }
        }
        // Converged to rounding, if not to the tolerance: accept what round-trips well.
        let ((fx, fy), _) = self.distort_bc(x, y);
        ((fx - xd).hypot(fy - yd) <= 1e-10).then_some((x, y))
    }

    /// Equidistant: θd of θ and its derivative.
    fn theta_d(&self, theta: f64) -> (f64, f64) {
        let Distortion::Equidistant { k1, k2, k3, k4 } = self.distortion else { return (theta, 1.0) };
        let t2 = theta * theta;
        let poly = 1.0 + t2 * (k1 + t2 * (k2 + t2 * (k3 + t2 * k4)));
        let dpoly = t2 * (3.0 * k1 + t2 * (5.0 * k2 + t2 * (7.0 * k3 + t2 * 9.0 * k4)));
        (theta * poly, 1.0 + dpoly)
    }

    /// Equidistant's inverse θ of θd by Newton (θ within [0, π], the mapping increasing).
    fn undistort_theta(&self, td: f64) -> Option<f64> {
        let mut theta = td.min(std::f64::consts::PI);
        for _ in 0..NEWTON_STEPS {
            let (f, df) = self.theta_d(theta);
            let e = f - td;
            if e.abs() <= NEWTON_TOL * (1.0 + td) {
                return (0.0..=std::f64::consts::PI).contains(&theta).then_some(theta);
            }
            if df <= 1e-12 || !df.is_finite() {
                return None;
            }
            theta = (theta - e / df).clamp(0.0, std::f64::consts::PI);
        }
        let (f, df) = self.theta_d(theta);
        ((f - td).abs() <= 1e-10 && df > 0.0).then_some(theta)
    }

    /// Every pixel centre's ray (see [`RayTable`]).
    pub fn rays(&self) -> RayTable {
        let k = &self.intrinsics;
        let (w, h) = (k.width as usize, k.height as usize);
        let mut dirs = Vec::with_capacity(w * h);
        for row in 0..h {
            for col in 0..w {
                dirs.push(self.pixel_ray(col as f64, row as f64).unwrap_or([f64::NAN; 3]));
            }
        }
        RayTable { width: k.width, height: k.height, dirs }
    }

    /// The ray of pixel coordinates (u, v), kept only when it projects back onto them (an
    /// inverse that found another branch of a folding distortion is no ray).
    fn pixel_ray(&self, u: f64, v: f64) -> Option<V3> {
        let d = self.unproject(u, v)?;
        let (pu, pv) = self.project(d)?;
        ((pu - u).hypot(pv - v) <= 1e-6).then_some(d)
    }
}

/// Each pixel centre's undistorted unit ray in the camera frame, row-major, computed once per
/// camera (NaN: no ray, outside the lens's valid field).
#[derive(Debug, Clone, PartialEq)]
pub struct RayTable {
    /// Columns.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// Unit directions, camera frame (x right, y down, z forward).
    pub dirs: Vec<V3>,
}

impl RayTable {
    /// Pixels with a ray.
    pub fn valid(&self) -> usize {
        self.dirs.iter().filter(|d| d[0].is_finite()).count()
    }
}

/// One rendered image and its label images (row-major).
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// Columns.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// Colour, 3 bytes a pixel.
    pub rgb: Vec<u8>,
    /// z along the optical axis, m (NaN: nothing hit).
    pub depth: Vec<f32>,
    /// Class of the surface seen (0: none).
    pub class: Vec<u8>,
    /// Object seen (0: the static scene or none).
    pub instance: Vec<u32>,
}

/// Rows a thread takes at a time.
const ROWS: usize = 8;
/// Side of the square tiles of pixels cast together (a packet of at most 64 rays).
const TILE: usize = 8;

/// One block of rows' outputs.
type Block<'a> = (usize, (&'a mut [u8], (&'a mut [f32], (&'a mut [u8], &'a mut [u32]))));

/// Renders what `cam` on a vehicle at `pose` sees at `time`, on `threads` threads (blocks of
/// rows handed out in turn; the bytes do not depend on the thread count).
pub fn render(
    world: &dyn Cast,
    cam: &Camera,
    rays: &RayTable,
    pose: &Pose,
    time: f64,
    threads: usize,
) -> Result<Frame, Error> {
    cam.check()?;
    let (w, h) = (rays.width as usize, rays.height as usize);
    if (rays.width, rays.height) != (cam.intrinsics.width, cam.intrinsics.height) || rays.dirs.len() != w * h {
        return Err(Error::Range {
            what: "ray table pixels",
            value: rays.dirs.len() as f64,
            range: "the camera's width x height",
        });
    }
    let n = w * h;
    let mut frame = Frame {
        width: rays.width,
        height: rays.height,
        rgb: vec![0; 3 * n],
        depth: vec![f32::NAN; n],
        class: vec![0; n],
        instance: vec![0; n],
    };
    let eye = pose.then(&cam.mount);
    let materials = world.materials();
    // Shade factor per material colour channel, once.
    let colours: Vec<[f64; 3]> = materials.all().iter().map(|m| m.rgb.map(f64::from)).collect();
    let row_len = w.max(1);
    let blocks = frame
        .rgb
        .chunks_mut(3 * row_len * ROWS)
        .zip(
            frame
                .depth
                .chunks_mut(row_len * ROWS)
                .zip(frame.class.chunks_mut(row_len * ROWS).zip(frame.instance.chunks_mut(row_len * ROWS))),
        )
        .enumerate();
    let queue: Mutex<_> = Mutex::new(blocks);
    let rays_dirs = &rays.dirs;
    let work = |b: Block| {
        let (index, (rgb, (depth, (class, instance)))) = b;
        let first = index * ROWS * w;
        let rows = depth.len() / row_len;
        // Tiles of TILE x TILE pixels (fewer at the right and bottom edges), cast as packets.
        let mut rays = Vec::with_capacity(TILE * TILE);
        let mut pixels = Vec::with_capacity(TILE * TILE);
        let mut hits = vec![None; TILE * TILE];
        for c0 in (0..w).step_by(TILE) {
            for r0 in (0..rows).step_by(TILE) {
                rays.clear();
                pixels.clear();
                for r in r0..(r0 + TILE).min(rows) {
                    for c in c0..(c0 + TILE).min(w) {
                        let i = r * w + c;
                        let dc = rays_dirs[first + i];
                        if !dc[0].is_finite() {
                            rgb[3 * i..3 * i + 3].copy_from_slice(&NO_RAY_RGB);
                            continue;
                        }
                        // Camera (right, down, forward) to the mount's (forward, left, up).
                        let dir = eye.direction([dc[2], -dc[0], -dc[1]]);
                        rays.push(Ray { time, ..Ray::new(eye.position, dir).up_to(cam.max_range) });
                        pixels.push((i, dc[2]));
                    }
                }
                world.cast_many(&rays, &mut hits[..rays.len()]);
                for (&(i, zc), hit) in pixels.iter().zip(&hits) {
                    let Some(hit) = hit else {
                        rgb[3 * i..3 * i + 3].copy_from_slice(&cam.sky);
                        continue;
                    };
                    depth[i] = (hit.t * zc) as f32;
                    class[i] = hit.class;
                    instance[i] = hit.object;
                    let ns = hit.normal[0] * cam.sun[0] + hit.normal[1] * cam.sun[1] + hit.normal[2] * cam.sun[2];
                    let light = cam.ambient + (1.0 - cam.ambient) * ns.max(0.0);
                    let c = colours.get(hit.material.0 as usize).or(colours.first()).copied().unwrap_or([0.0; 3]);
                    for (o, ch) in rgb[3 * i..3 * i + 3].iter_mut().zip(c) {
                        *o = (ch * light).round().clamp(0.0, 255.0) as u8;
                    }
                }
            }
        }
    };
    let next = || queue.lock().ok().and_then(|mut q| q.next());
    let threads = threads.clamp(1, 256).min(h.div_ceil(ROWS).max(1));
    if threads == 1 {
        while let Some(b) = next() {
            work(b);
        }
    } else {
        std::thread::scope(|sc| {
            let handles: Vec<_> = (0..threads)
                .map(|_| {
                    sc.spawn(|| {
                        while let Some(b) = next() {
                            work(b);
                        }
                    })
                })
                .collect();
            for hd in handles {
                hd.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
            }
        });
    }
    Ok(frame)
}

/// The 2-D box of one object in a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObjectBox {
    /// The object id (never 0).
    pub object: u32,
    /// Its class: the most frequent among its pixels (the lowest code on a tie).
    pub class: u8,
    /// Left column, top row, width, height of its visible pixels, px.
    pub bbox: [u32; 4],
    /// Its visible pixels.
    pub area: u64,
}

/// The boxes of the objects (instance ids other than 0) visible in `frame`, by object id.
pub fn boxes(frame: &Frame) -> Vec<ObjectBox> {
    use std::collections::BTreeMap;
    // object -> ([col min, row min, col max, row max], pixels, pixels by class)
    type Seen = ([u32; 4], u64, BTreeMap<u8, u64>);
    let mut seen: BTreeMap<u32, Seen> = BTreeMap::new();
    let w = frame.width.max(1) as usize;
    for (i, (&id, &class)) in frame.instance.iter().zip(&frame.class).enumerate() {
        if id == 0 {
            continue;
        }
        let (c, r) = ((i % w) as u32, (i / w) as u32);
        let e = seen.entry(id).or_insert(([c, r, c, r], 0, BTreeMap::new()));
        e.0 = [e.0[0].min(c), e.0[1].min(r), e.0[2].max(c), e.0[3].max(r)];
        e.1 += 1;
        *e.2.entry(class).or_insert(0) += 1;
    }
    seen.into_iter()
        .map(|(object, (b, area, classes))| {
            let class = classes.iter().max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0))).map_or(0, |(c, _)| *c);
            ObjectBox { object, class, bbox: [b[0], b[1], b[2] - b[0] + 1, b[3] - b[1] + 1], area }
        })
        .collect()
}

/// The class codes (the survey's: ASPRS and sim's own 64-69) and their names, the COCO
/// categories.
pub const CLASS_NAMES: [(u8, &str); 10] = [
    (2, "ground"),
    (5, "vegetation"),
    (6, "building"),
    (11, "road"),
    (64, "marking"),
    (65, "sidewalk"),
    (66, "pole"),
    (67, "car"),
    (68, "curb"),
    (69, "person"),
];

/// A JSON string literal (quotes, backslashes and control characters escaped).
fn json_str(s: &str) -> String {
    serde_json::Value::from(s).to_string()
}

/// COCO boxes gathered frame by frame (so frames need not be kept), then written as JSON.
#[derive(Debug, Clone, Default)]
pub struct Coco {
    images: Vec<String>,
    annotations: Vec<String>,
    classes: std::collections::BTreeSet<u8>,
}

impl Coco {
    /// No frames yet.
    pub fn new() -> Coco {
        Coco { classes: CLASS_NAMES.iter().map(|c| c.0).collect(), ..Coco::default() }
    }

    /// Adds `frame` as the image `file_name`; returns its boxes.
    pub fn add(&mut self, file_name: &str, frame: &Frame) -> Vec<ObjectBox> {
        let image = self.images.len() + 1;
        self.images.push(format!(
            "{{\"id\": {image}, \"file_name\": {}, \"width\": {}, \"height\": {}}}",
            json_str(file_name),
            frame.width,
            frame.height
        ));
        let found = boxes(frame);
        for b in &found {
            self.classes.insert(b.class);
            self.annotations.push(format!(
                "{{\"id\": {}, \"image_id\": {image}, \"category_id\": {}, \"bbox\": [{}, {}, {}, {}], \"area\": {}, \"iscrowd\": 0, \"instance\": {}}}",
                self.annotations.len() + 1,
                b.class,
                b.bbox[0],
                b.bbox[1],
                b.bbox[2],
                b.bbox[3],
                b.area,
                b.object
            ));
        }
        found
    }

    /// Annotations so far.
    pub fn annotations(&self) -> usize {
        self.annotations.len()
    }

    /// The JSON (see [`coco_json`]).
    pub fn json(&self) -> String {
        let categories: Vec<String> = self
            .classes
            .iter()
            .map(|c| {
                let name = CLASS_NAMES.iter().find(|n| n.0 == *c).map_or(format!("class {c}"), |n| n.1.to_string());
                format!("{{\"id\": {c}, \"name\": {}, \"supercategory\": \"scene\"}}", json_str(&name))
            })
            .collect();
        let list = |v: &[String]| {
            if v.is_empty() {
                "[]".to_string()
            } else {
                format!("[\n    {}\n  ]", v.join(",\n    "))
            }
        };
        format!(
            "{{\n  \"images\": {},\n  \"annotations\": {},\n  \"categories\": {}\n}}\n",
            list(&self.images),
            list(&self.annotations),
            list(&categories)
        )
    }
}

/// COCO JSON of `frames` (file name, frame): `images` (ids from 1), `annotations` (one per
/// object a frame shows: `bbox` [x, y, w, h] of its visible pixels, `area` their count,
/// `category_id` its class, `iscrowd` 0, and `instance` its object id; ids from 1) and
/// `categories` (the classes of [`CLASS_NAMES`], and any other class seen as "class N").
pub fn coco_json(frames: &[(&str, &Frame)]) -> String {
    let mut c = Coco::new();
    for (name, f) in frames {
        c.add(name, f);
    }
    c.json()
}

/// Writes a PNG.
fn write_png(
    path: &Path,
    w: u32,
    h: u32,
    colour: png::ColorType,
    depth: png::BitDepth,
    data: &[u8],
) -> Result<(), Error> {
    let io = |e: std::io::Error| Error::Io { what: path.display().to_string(), source: e };
    let file = std::fs::File::create(path).map_err(io)?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), w, h);
    enc.set_color(colour);
    enc.set_depth(depth);
    enc.set_compression(png::Compression::Fast);
    let png_err =
        |e: png::EncodingError| Error::Io { what: path.display().to_string(), source: std::io::Error::other(e) };
    let mut wr = enc.write_header().map_err(png_err)?;
    wr.write_image_data(data).map_err(png_err)?;
    wr.finish().map_err(png_err)
}

impl Frame {
    /// Depth in millimetres as a 16-bit value (0: none, or not ahead of the camera's plane;
    /// 65535: that far or farther).
    pub fn depth_mm(d: f32) -> u16 {
        if d.is_finite() && d > 0.0 {
            (f64::from(d) * 1000.0).round().clamp(1.0, 65535.0) as u16
        } else {
            0
        }
    }

    /// Writes `{stem}_rgb.png`, `{stem}_depth.png`, `{stem}_class.png` and
    /// `{stem}_instance.png` into `dir` (layouts in the module docs).
    pub fn write_pngs(&self, dir: &Path, stem: &str) -> Result<(), Error> {
        use png::{BitDepth, ColorType};
        let (w, h) = (self.width, self.height);
        write_png(&dir.join(format!("{stem}_rgb.png")), w, h, ColorType::Rgb, BitDepth::Eight, &self.rgb)?;
        let depth: Vec<u8> = self.depth.iter().flat_map(|&d| Frame::depth_mm(d).to_be_bytes()).collect();
        write_png(&dir.join(format!("{stem}_depth.png")), w, h, ColorType::Grayscale, BitDepth::Sixteen, &depth)?;
        write_png(&dir.join(format!("{stem}_class.png")), w, h, ColorType::Grayscale, BitDepth::Eight, &self.class)?;
        let inst: Vec<u8> = self.instance.iter().flat_map(|&i| (i.min(65535) as u16).to_be_bytes()).collect();
        write_png(&dir.join(format!("{stem}_instance.png")), w, h, ColorType::Grayscale, BitDepth::Sixteen, &inst)
    }

    /// The colour as the seed's MATLAB planes: R, G, B planes, each column-major.
    pub fn rgb_planes(&self) -> Vec<u8> {
        let (w, h) = (self.width as usize, self.height as usize);
        let mut out = vec![0u8; 3 * w * h];
        for ch in 0..3 {
            for col in 0..w {
                for row in 0..h {
                    out[ch * w * h + col * h + row] = self.rgb[3 * (row * w + col) + ch];
                }
            }
        }
        out
    }

    /// The depth column-major as little-endian f32.
    pub fn depth_planes(&self) -> Vec<u8> {
        let (w, h) = (self.width as usize, self.height as usize);
        let mut out = Vec::with_capacity(4 * w * h);
        for col in 0..w {
            for row in 0..h {
                out.extend_from_slice(&self.depth[row * w + col].to_le_bytes());
            }
        }
        out
    }

    /// Writes `{stem}_rgb.planes` and `{stem}_depth.f32` into `dir` (the seed's MATLAB layout,
    /// see the module docs).
    pub fn write_planes(&self, dir: &Path, stem: &str) -> Result<(), Error> {
        for (name, bytes) in
            [(format!("{stem}_rgb.planes"), self.rgb_planes()), (format!("{stem}_depth.f32"), self.depth_planes())]
        {
            let path = dir.join(name);
            let io = |e: std::io::Error| Error::Io { what: path.display().to_string(), source: e };
            let mut f = std::fs::File::create(&path).map_err(io)?;
            f.write_all(&bytes).map_err(io)?;
        }
        Ok(())
    }
}
