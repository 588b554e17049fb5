//! `roadscan camera`: a virtual camera driven along a lane of a built world, its frames written
//! as PNG images (colour, depth, class, instance) with COCO boxes and the camera's record.
//!
//! The output directory holds `frames/NNNNNN_{rgb,depth,class,instance}.png` (and with
//! `planes`, `frames/NNNNNN_rgb.planes` and `frames/NNNNNN_depth.f32`, the seed's MATLAB
//! layout), `coco.json` and `camera.json` (intrinsics, distortion, mount, and each frame's time
//! and poses). It appears whole or not at all (see [`crate::staging`]).
//!
//! A camera file (TOML) has `width`, `height`, either `fx` (and optionally `fy`, `cx`, `cy`) or
//! `hfov` (degrees), an optional `[distortion]` table (`model` = "none", "brown-conrady" with
//! `k1 k2 p1 p2 k3`, or "equidistant" with `k1 k2 k3 k4`; missing coefficients are 0) and an
//! optional `[mount]` table (`x y z` in metres in the vehicle's body frame, x forward, y left,
//! z up above the lane centre on the road; `roll pitch yaw` in degrees, pitch positive up, yaw
//! positive left; the default is 1.6 m up, level, facing forward). Without a file, the camera
//! is a pinhole of `hfov` across `width` x `height` at `mount_height`, level. Image axes follow
//! OpenCV (see [`sensors::camera`]).

use crate::progress::{Progress, Stage};
use crate::sensor_path::{path_spec, PathSpec, SensorPath, Shifted};
use crate::world_source::{self, WorldStats};
use anyhow::{anyhow, bail, Context, Result};
use sensors::camera::{render, Coco};
use sensors::{Camera, Distortion, Intrinsics};
use serde_json::json;
use std::path::{Path, PathBuf};
use world::{LanePath, Pose, Trajectory};

/// What to render and where to write it.
#[derive(Debug, Clone, PartialEq)]
pub struct CameraConfig {
    /// The output directory of a build (or `roadscan demo`).
    pub world: PathBuf,
    /// The path: `lane:ID` (the centre of that lane of the road) or a trajectory CSV (see
    /// [`crate::sensor_path`]).
    pub path: String,
    /// The road (default: the first in road.xodr).
    pub road: Option<String>,
    /// Speed, m/s.
    pub speed: f64,
    /// Start station, m (default: the lane's start in its driving direction).
    pub start: Option<f64>,
    /// Seconds to drive.
    pub duration: f64,
    /// Frames a second.
    pub fps: f64,
    /// A camera file (TOML; see the module docs); not with `hfov`, `width`, `height`.
    pub camera: Option<PathBuf>,
    /// Horizontal field of view, degrees (default 90).
    pub hfov: Option<f64>,
    /// Columns (default 640).
    pub width: Option<u32>,
    /// Rows (default 480).
    pub height: Option<u32>,
    /// Height of the camera above the road surface without a camera file, m.
    pub mount_height: f64,
    /// The output directory.
    pub out: PathBuf,
    /// Also write the seed's MATLAB planes.
    pub planes: bool,
    /// Threads (0: all cores).
    pub threads: usize,
}

impl Default for CameraConfig {
    fn default() -> Self {
        CameraConfig {
            world: PathBuf::new(),
            path: "lane:-1".into(),
            road: None,
            speed: 10.0,
            start: None,
            duration: 2.0,
            fps: 10.0,
            camera: None,
            hfov: None,
            width: None,
            height: None,
            mount_height: 1.6,
            out: PathBuf::new(),
            planes: false,
            threads: 0,
        }
    }
}

/// A camera as a file or the command line gives it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CameraSpec {
    /// Focal lengths, principal point, size.
    pub intrinsics: Intrinsics,
    /// Lens distortion.
    pub distortion: Distortion,
    /// Mount position in the body frame, m.
    pub mount_xyz: [f64; 3],
    /// Mount roll, pitch, yaw, degrees.
    pub mount_rpy: [f64; 3],
}

impl CameraSpec {
    /// The mount as a pose in the body frame.
    pub fn mount(&self) -> Pose {
        let [r, p, y] = self.mount_rpy.map(f64::to_radians);
        Pose::from_ypr(self.mount_xyz, y, p, r)
    }
}

/// What a run did.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CameraRun {
    /// Frames rendered.
    pub frames: usize,
    /// Columns.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// Objects boxed over all frames (COCO annotations).
    pub annotations: usize,
    /// Wall seconds loading the world.
    pub load_seconds: f64,
    /// Wall seconds rendering (casting and shading, not writing).
    pub render_seconds: f64,
    /// Wall seconds writing the files.
    pub write_seconds: f64,
    /// Frames rendered a wall second.
    pub frames_per_second: f64,
    /// The world.
    pub world: WorldStats,
    /// The output directory.
    pub out: String,
}

/// A TOML value as a number.
fn number(v: &toml::Value) -> Option<f64> {
    match v {
        toml::Value::Float(f) => Some(*f),
        toml::Value::Integer(i) => Some(*i as f64),
        _ => None,
    }
}

/// Reads the camera file `path` (see the module docs).
pub fn read_camera_file(path: &Path) -> Result<CameraSpec> {
    let bytes = std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
    let text = String::from_utf8(bytes)
        .map_err(|e| anyhow!("{}: byte {}: not UTF-8 text", path.display(), e.utf8_error().valid_up_to()))?;
    let table: toml::Table = toml::from_str(&text).map_err(|e| {
        let at = e.span().map_or(String::new(), |r| {
            let before = &text.as_bytes()[..r.start.min(text.len())];
            let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
            let column = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
            format!(":{line}:{column}")
        });
        anyhow!("{}{at}: {}", path.display(), e.message().trim_end().replace('\n', " "))
    })?;
    let file = path.display().to_string();
    let bad = |key: &str, what: &str| anyhow!("{file}: {key}: {what}");
    let check_keys = |t: &toml::Table, prefix: &str, known: &[&str]| -> Result<()> {
        for k in t.keys() {
            if !known.contains(&k.as_str()) {
                bail!("{file}: {prefix}{k}: unknown key (known here: {})", known.join(", "));
            }
        }
        Ok(())
    };
    // A number under `key` of `t` within [lo, hi] (None when absent).
    let num = |t: &toml::Table, key: &str, name: &str, lo: f64, hi: f64| -> Result<Option<f64>> {
        let Some(v) = t.get(key) else { return Ok(None) };
        let x = number(v).ok_or_else(|| bad(name, &format!("expected a number, got {v}")))?;
        if !(x.is_finite() && x >= lo && x <= hi) {
            return Err(bad(name, &format!("{x} is out of range ({lo} to {hi})")));
        }
        Ok(Some(x))
    };
    check_keys(&table, "", &["width", "height", "fx", "fy", "cx", "cy", "hfov", "distortion", "mount"])?;
    let size = |key: &str| -> Result<u32> {
        let v = table.get(key).ok_or_else(|| bad(key, "missing (image size in pixels)"))?;
        match v {
            toml::Value::Integer(i) if (1..=16384).contains(i) => Ok(*i as u32),
            _ => Err(bad(key, &format!("expected a whole number of pixels from 1 to 16384, got {v}"))),
        }
    };
    let (width, height) = (size("width")?, size("height")?);
    let fx = num(&table, "fx", "fx", 1e-3, 1e7)?;
    let hfov = num(&table, "hfov", "hfov", 1e-3, 179.0)?;
    let mut k = match (fx, hfov) {
        (Some(_), Some(_)) => return Err(bad("hfov", "give fx or hfov, not both")),
        (None, None) => return Err(bad("fx", "missing: give fx (pixels) or hfov (degrees)")),
        (None, Some(h)) => Intrinsics::from_hfov(h.to_radians(), width, height),
        (Some(f), None) => Intrinsics { fx: f, fy: f, ..Intrinsics::from_hfov(1.0, width, height) },
    };
    if let Some(fy) = num(&table, "fy", "fy", 1e-3, 1e7)? {
        k.fy = fy;
    }
    if let Some(cx) = num(&table, "cx", "cx", -1e6, 1e6)? {
        k.cx = cx;
    }
    if let Some(cy) = num(&table, "cy", "cy", -1e6, 1e6)? {
        k.cy = cy;
    }
    let section = |key: &str| -> Result<Option<&toml::Table>> {
        match table.get(key) {
            None => Ok(None),
            Some(toml::Value::Table(t)) => Ok(Some(t)),
            Some(v) => Err(bad(key, &format!("expected a table [{key}], got {v}"))),
        }
    };
    let distortion = match section("distortion")? {
        None => Distortion::None,
        Some(t) => {
            let model = match t.get("model") {
                Some(toml::Value::String(s)) => s.as_str(),
                Some(v) => return Err(bad("distortion.model", &format!("expected a string, got {v}"))),
                None => return Err(bad("distortion.model", "missing (none, brown-conrady or equidistant)")),
            };
            let c =
                |key: &str| -> Result<f64> { Ok(num(t, key, &format!("distortion.{key}"), -1e3, 1e3)?.unwrap_or(0.0)) };
            match model {
                "none" => {
                    check_keys(t, "distortion.", &["model"])?;
                    Distortion::None
                }
                "brown-conrady" => {
                    check_keys(t, "distortion.", &["model", "k1", "k2", "p1", "p2", "k3"])?;
                    Distortion::BrownConrady { k1: c("k1")?, k2: c("k2")?, p1: c("p1")?, p2: c("p2")?, k3: c("k3")? }
                }
                "equidistant" => {
                    check_keys(t, "distortion.", &["model", "k1", "k2", "k3", "k4"])?;
                    Distortion::Equidistant { k1: c("k1")?, k2: c("k2")?, k3: c("k3")?, k4: c("k4")? }
                }
                other => {
                    return Err(bad(
                        "distortion.model",
                        &format!("{other:?} is not a model (none, brown-conrady or equidistant)"),
                    ))
                }
            }
        }
    };
    let (mut xyz, mut rpy) = ([0.0, 0.0, 1.6], [0.0; 3]);
    if let Some(t) = section("mount")? {
        check_keys(t, "mount.", &["x", "y", "z", "roll", "pitch", "yaw"])?;
        for (i, key) in ["x", "y", "z"].iter().enumerate() {
            if let Some(v) = num(t, key, &format!("mount.{key}"), -100.0, 100.0)? {
                xyz[i] = v;
            }
        }
        for (i, key) in ["roll", "pitch", "yaw"].iter().enumerate() {
            if let Some(v) = num(t, key, &format!("mount.{key}"), -360.0, 360.0)? {
                rpy[i] = v;
            }
        }
    }
    let spec = CameraSpec { intrinsics: k, distortion, mount_xyz: xyz, mount_rpy: rpy };
    let cam = Camera { distortion, ..Camera::new(k, spec.mount()) };
    cam.check().map_err(|e| anyhow!("{file}: {e}"))?;
    Ok(spec)
}

/// The camera the config asks for.
pub fn camera_spec(cfg: &CameraConfig) -> Result<CameraSpec> {
    if let Some(file) = &cfg.camera {
        if cfg.hfov.is_some() || cfg.width.is_some() || cfg.height.is_some() {
            bail!(
                "--camera {}: give the size and field of view in the file, not with --hfov/--width/--height",
                file.display()
            );
        }
        return read_camera_file(file);
    }
    let hfov = cfg.hfov.unwrap_or(90.0);
    if !(hfov.is_finite() && (1.0..=179.0).contains(&hfov)) {
        bail!("--hfov {hfov}: must lie in 1..179 degrees (a pinhole sees less than 180)");
    }
    let (w, h) = (cfg.width.unwrap_or(640), cfg.height.unwrap_or(480));
    for (name, v) in [("--width", w), ("--height", h)] {
        if !(1..=16384).contains(&v) {
            bail!("{name} {v}: must lie in 1..16384 pixels");
        }
    }
    if !(cfg.mount_height.is_finite() && (-100.0..=100.0).contains(&cfg.mount_height)) {
        bail!("--mount-height {}: must lie in -100..100 m", cfg.mount_height);
    }
    Ok(CameraSpec {
        intrinsics: Intrinsics::from_hfov(hfov.to_radians(), w, h),
        distortion: Distortion::None,
        mount_xyz: [0.0, 0.0, cfg.mount_height],
        mount_rpy: [0.0; 3],
    })
}

/// The distortion as JSON.
fn distortion_json(d: &Distortion) -> serde_json::Value {
    match *d {
        Distortion::None => json!({"model": "none"}),
        Distortion::BrownConrady { k1, k2, p1, p2, k3 } => {
            json!({"model": "brown-conrady", "k1": k1, "k2": k2, "p1": p1, "p2": p2, "k3": k3})
        }
        Distortion::Equidistant { k1, k2, k3, k4 } => {
            json!({"model": "equidistant", "k1": k1, "k2": k2, "k3": k3, "k4": k4})
        }
    }
}

/// A pose as JSON: position and the body axes (forward, left, up) in the world.
fn pose_json(p: &Pose) -> serde_json::Value {
    json!({"position": p.position, "forward": p.axes[0], "left": p.axes[1], "up": p.axes[2]})
}

/// Renders the frames along the path and writes what the module docs list.
pub fn run(cfg: &CameraConfig, progress: &dyn Progress) -> Result<CameraRun> {
    let spec = camera_spec(cfg)?;
    if !(cfg.fps.is_finite() && (0.01..=1000.0).contains(&cfg.fps)) {
        bail!("--fps {}: must lie in 0.01..1000", cfg.fps);
    }
    if !(cfg.duration.is_finite() && cfg.duration >= 0.0) {
        bail!("--duration {}: must be a number of seconds, 0 or more", cfg.duration);
    }
    let mut frames = (cfg.duration * cfg.fps + 1e-9).floor() as usize;
    if frames == 0 {
        bail!(
            "--duration {} at --fps {} holds no frame (frames at 0, 1/fps, ... before the end)",
            cfg.duration,
            cfg.fps
        );
    }
    if frames > 1_000_000 {
        bail!("--duration {} at --fps {} asks for {frames} frames (at most 1,000,000)", cfg.duration, cfg.fps);
    }
    let path_spec = path_spec(&cfg.path)?;
    if matches!(path_spec, PathSpec::Csv(..)) && cfg.start.is_some() {
        bail!("--path {}: --start applies to a lane:ID path, not a trajectory file", cfg.path);
    }
    let mut inputs = vec![cfg.world.join("road.xodr")];
    inputs.extend(cfg.camera.iter().cloned());
    if let PathSpec::Csv(f, _) = &path_spec {
        inputs.push(f.clone());
    }
    let outputs = crate::staging::Outputs::new(&inputs);
    let staged = outputs.dir(&cfg.out, "camera.json")?;
    let frames_dir = staged.join("frames");
    std::fs::create_dir(&frames_dir).with_context(|| format!("{}: cannot create", frames_dir.display()))?;

    let started = std::time::Instant::now();
    let stage = Stage { index: 1, of: 2, what: "loading the world", len: None };
    progress.stage(&stage);
    let loaded = world_source::from_build(&cfg.world)?;
    progress.stage_end(&stage, Some(started.elapsed().as_secs_f64()));
    let load_seconds = started.elapsed().as_secs_f64();
    let road = match &cfg.road {
        Some(id) => loaded
            .odr
            .roads
            .iter()
            .find(|r| &r.id == id)
            .ok_or_else(|| anyhow!("{}: no road {id} in road.xodr", cfg.world.display()))?,
        None => loaded.odr.roads.first().ok_or_else(|| anyhow!("{}: no road in road.xodr", cfg.world.display()))?,
    };
    let (path, start) = match path_spec {
        PathSpec::Csv(file, csv) => {
            let csv = csv.placed(loaded.odr.header.offset.unwrap_or_default());
            let duration = crate::lidar::clip_duration(cfg.duration, &csv, &file, progress);
            frames = frames.min((duration * cfg.fps + 1e-9).floor() as usize + 1);
            (SensorPath::Csv(csv), None)
        }
        PathSpec::Lane(lane) => {
            let eval = opendrive::RoadEval::new(road);
            let start = cfg.start.unwrap_or(if lane < 0 { 0.0 } else { eval.length() });
            let lane_path = LanePath::new(eval, lane, start, cfg.speed, cfg.duration)
                .with_context(|| format!("--path {}", cfg.path))?;
            (SensorPath::Lane(Shifted { inner: lane_path, by: [0.0; 3] }), Some(start))
        }
    };
    let cam = Camera { distortion: spec.distortion, ..Camera::new(spec.intrinsics, spec.mount()) };
    cam.check().context("the camera's settings")?;
    let rays = cam.rays();
    let threads =
        if cfg.threads == 0 { std::thread::available_parallelism().map_or(1, |n| n.get()) } else { cfg.threads };

    let stage = Stage { index: 2, of: 2, what: "rendering", len: Some(frames as u64) };
    progress.stage(&stage);
    let (mut render_seconds, mut write_seconds) = (0.0, 0.0);
    let mut coco = Coco::new();
    let mut records = Vec::with_capacity(frames);
    for k in 0..frames {
        let time = k as f64 / cfg.fps;
        let vehicle = path.pose(time);
        let t0 = std::time::Instant::now();
        let frame = render(&loaded.world, &cam, &rays, &vehicle, time, threads)?;
        render_seconds += t0.elapsed().as_secs_f64();
        let t1 = std::time::Instant::now();
        let stem = format!("{k:06}");
        frame.write_pngs(&frames_dir, &stem)?;
        if cfg.planes {
            frame.write_planes(&frames_dir, &stem)?;
        }
        let boxes = coco.add(&format!("frames/{stem}_rgb.png"), &frame);
        write_seconds += t1.elapsed().as_secs_f64();
        records.push(json!({
            "index": k,
            "time": time,
            "station": path.station(time),
            "files": format!("frames/{stem}_{{rgb,depth,class,instance}}.png"),
            "objects": boxes.len(),
            "vehicle": pose_json(&vehicle),
            "camera": pose_json(&vehicle.then(&cam.mount)),
        }));
        progress.advance(k as u64 + 1);
    }
    let t1 = std::time::Instant::now();
    let coco_path = staged.join("coco.json");
    std::fs::write(&coco_path, coco.json()).with_context(|| format!("{}: cannot write", coco_path.display()))?;
    let k = &spec.intrinsics;
    let record = json!({
        "frame": "camera x right, y down, z forward (OpenCV); pixel (col, row) centred at (u, v) = (col, row); \
                  mount in the vehicle's body frame (x forward, y left, z up), camera (x, y, z) = mount (-y, -z, x)",
        "intrinsics": {"fx": k.fx, "fy": k.fy, "cx": k.cx, "cy": k.cy, "width": k.width, "height": k.height},
        "distortion": distortion_json(&spec.distortion),
        "mount": {
            "x": spec.mount_xyz[0], "y": spec.mount_xyz[1], "z": spec.mount_xyz[2],
            "roll_deg": spec.mount_rpy[0], "pitch_deg": spec.mount_rpy[1], "yaw_deg": spec.mount_rpy[2],
        },
        "sun": cam.sun,
        "ambient": cam.ambient,
        "sky": cam.sky,
        "max_range": cam.max_range,
        "images": {
            "rgb": "8-bit sRGB: material colour x (ambient + (1 - ambient) max(0, n . sun))",
            "depth": "16-bit, z along the optical axis in mm, 0 = nothing hit, 65535 = 65.535 m or farther",
            "class": "8-bit class code (2 ground, 5 vegetation, 6 building, 11 road, 64 marking, 65 sidewalk, 66 pole, 67 car, 68 curb, 69 person; 0 none)",
            "instance": "16-bit object id (0 = static scene or nothing)",
            "planes": cfg.planes.then_some("NNNNNN_rgb.planes: R, G, B planes of u8, each column-major (col * height + row); NNNNNN_depth.f32: little-endian f32 m, column-major, NaN = none"),
        },
        "world": cfg.world.display().to_string(),
        "road": road.id,
        "path": cfg.path,
        "speed": cfg.speed,
        "start": start,
        "fps": cfg.fps,
        "frames": records,
    });
    let json_path = staged.join("camera.json");
    std::fs::write(&json_path, serde_json::to_vec_pretty(&record)?)
        .with_context(|| format!("{}: cannot write", json_path.display()))?;
    outputs.commit()?;
    write_seconds += t1.elapsed().as_secs_f64();
    progress.stage_end(&stage, Some(render_seconds + write_seconds));
    Ok(CameraRun {
        frames,
        width: k.width,
        height: k.height,
        annotations: coco.annotations(),
        load_seconds,
        render_seconds,
        write_seconds,
        frames_per_second: if render_seconds > 0.0 { frames as f64 / render_seconds } else { 0.0 },
        world: loaded.stats,
        out: cfg.out.display().to_string(),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    /// The camera file `text` read from a scratch file, or its error's text.
    fn read(name: &str, text: &str) -> Result<CameraSpec, String> {
        let dir = std::env::temp_dir().join(format!("roadscan-camera-toml-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("cam.toml");
        std::fs::write(&path, text).unwrap();
        let r = read_camera_file(&path).map_err(|e| format!("{e:#}"));
        std::fs::remove_dir_all(&dir).unwrap();
        r
    }

    #[test]
    fn a_camera_file_with_intrinsics_distortion_and_mount() {
        let s = read(
            "full",
            "width = 1280\nheight = 720\nfx = 900.5\nfy = 901\ncx = 640.2\ncy = 359.8\n\
             [distortion]\nmodel = \"brown-conrady\"\nk1 = -0.1\np2 = 0.001\n\
             [mount]\nx = 1.2\nz = 1.45\npitch = -5\n",
        )
        .unwrap();
        let k = s.intrinsics;
        assert_eq!((k.width, k.height, k.fx, k.fy, k.cx, k.cy), (1280, 720, 900.5, 901.0, 640.2, 359.8));
        assert_eq!(s.distortion, Distortion::BrownConrady { k1: -0.1, k2: 0.0, p1: 0.0, p2: 0.001, k3: 0.0 });
        assert_eq!((s.mount_xyz, s.mount_rpy), ([1.2, 0.0, 1.45], [0.0, -5.0, 0.0]));
        // Pitched 5 degrees down: the optical axis (body forward) points below the horizon.
        let m = s.mount();
        assert!((m.axes[0][2] + 5f64.to_radians().sin()).abs() < 1e-12, "{:?}", m.axes[0]);
    }

    #[test]
    fn a_field_of_view_and_a_fisheye() {
        let s = read("fov", "width = 640\nheight = 480\nhfov = 90\n[distortion]\nmodel = \"equidistant\"\nk4 = 0.01\n")
            .unwrap();
        assert!((s.intrinsics.fx - 320.0).abs() < 1e-9 && s.intrinsics.cx == 319.5);
        assert_eq!(s.distortion, Distortion::Equidistant { k1: 0.0, k2: 0.0, k3: 0.0, k4: 0.01 });
        assert_eq!(s.mount_xyz, [0.0, 0.0, 1.6]);
    }

    #[test]
    fn bad_values_name_the_file_and_the_key() {
        let cases = [
            ("width = 640\nheight = 480\nfx = -3\n", "fx: -3 is out of range"),
            ("width = 640\nheight = 480\n", "fx: missing"),
            ("width = 640\nheight = 480\nfx = 500\nhfov = 90\n", "hfov: give fx or hfov, not both"),
            ("width = 0\nheight = 480\nhfov = 90\n", "width: expected a whole number"),
            ("width = 640\nheight = 480.5\nhfov = 90\n", "height: expected a whole number"),
            ("width = 640\nheight = 480\nhfov = \"wide\"\n", "hfov: expected a number"),
            ("width = 640\nheight = 480\nhfov = 90\nfocal = 3\n", "focal: unknown key"),
            (
                "width = 640\nheight = 480\nhfov = 90\n[distortion]\nmodel = \"fisheye\"\n",
                "distortion.model: \"fisheye\" is not a model",
            ),
            (
                "width = 640\nheight = 480\nhfov = 90\n[distortion]\nmodel = \"equidistant\"\np1 = 0.1\n",
                "distortion.p1: unknown key",
            ),
            ("width = 640\nheight = 480\nhfov = 90\n[distortion]\nk1 = 0.1\n", "distortion.model: missing"),
            ("width = 640\nheight = 480\nhfov = 90\n[mount]\nz = nan\n", "mount.z: NaN is out of range"),
            ("width = 640\nheight = 480\nhfov = 90\nmount = 3\n", "mount: expected a table"),
            ("width = 640\nheight = 480\nhfov = 90\n[mount\n", "cam.toml:4:"),
        ];
        for (k, (text, want)) in cases.iter().enumerate() {
            let e = read(&format!("bad{k}"), text).expect_err(text);
            assert!(e.contains("cam.toml") && e.contains(want), "{text:?}: {e}");
            assert!(!e.contains('\n'), "one line: {e}");
        }
    }

    #[test]
    fn the_command_line_camera_and_its_limits() {
        let cfg = CameraConfig { hfov: Some(60.0), width: Some(320), height: Some(200), ..CameraConfig::default() };
        let s = camera_spec(&cfg).unwrap();
        assert!((s.intrinsics.fx - 160.0 / 30f64.to_radians().tan()).abs() < 1e-9);
        assert_eq!(s.mount_xyz, [0.0, 0.0, 1.6]);
        let both = CameraConfig { camera: Some("cam.toml".into()), hfov: Some(60.0), ..CameraConfig::default() };
        assert!(format!("{:#}", camera_spec(&both).unwrap_err()).contains("not with --hfov"));
        let wide = CameraConfig { hfov: Some(180.0), ..CameraConfig::default() };
        assert!(format!("{:#}", camera_spec(&wide).unwrap_err()).contains("--hfov 180"));
        let cfg = CameraConfig { duration: 0.05, fps: 10.0, ..CameraConfig::default() };
        assert!(format!("{:#}", run(&cfg, &crate::Silent).unwrap_err()).contains("holds no frame"));
    }
}
