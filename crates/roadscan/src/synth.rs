//! A virtual survey (`roadscan synth`): a designed road scene scanned by a profile scanner,
//! written as a mobile-mapping system delivers it, with the exact truth.
//!
//! One road (the demo, a road named by `road`, or the only road of a file) is surveyed by
//! [`sim::survey::run`]; a file of several roads without `road` is surveyed as a network by
//! [`sim::network::run`]: every road (connecting roads included) driven, one scan, the truth of
//! each road under `truth/roads/`.

use crate::config::within;
use crate::staging::Outputs;
use anyhow::{bail, Result};
use std::path::{Path, PathBuf};

/// The scanner, its mount and the trajectory error of a virtual survey. [`Default`] gives
/// the command line's defaults.
#[derive(Debug, Clone)]
pub struct ScannerConfig {
    /// Points per mirror revolution.
    pub points_per_rev: usize,
    /// Mirror revolutions per second.
    pub rate: f64,
    /// Range noise, 1 sigma, m.
    pub noise: f64,
    /// Scanner centre above the road under the vehicle, m.
    pub mount_height: f64,
    /// Scanner centre's offset from the vehicle's track towards +t of the road, m.
    pub mount_lateral: f64,
    /// Roll of the scanner head about the road direction, degrees.
    pub mount_roll_deg: f64,
    /// GNSS/IMU position error added to the trajectory and the points, m.
    pub traj_offset: [f64; 3],
    /// Drift of that error, m/s from the start of each pass.
    pub traj_drift: [f64; 3],
    /// Smooth random GNSS/IMU error: RMS on x and y, and on z, m.
    pub traj_noise: [f64; 2],
    /// Clutter: overhanging trees, parked cars, people, multipath returns.
    pub clutter: bool,
}

impl Default for ScannerConfig {
    fn default() -> ScannerConfig {
        ScannerConfig {
            points_per_rev: 1000,
            rate: 200.0,
            noise: 0.002,
            mount_height: 2.2,
            mount_lateral: 0.0,
            mount_roll_deg: 0.0,
            traj_offset: [0.0; 3],
            traj_drift: [0.0; 3],
            traj_noise: [0.0; 2],
            clutter: false,
        }
    }
}

/// A virtual survey to make.
#[derive(Debug, Clone)]
pub struct SynthConfig {
    /// `demo`, or an OpenDRIVE file whose road gets the demo's features fitted to its lanes.
    pub scene: String,
    /// Road id in the scene file (default: the whole network of a file of several roads, the
    /// road of a file of one).
    pub road: Option<String>,
    /// Part of the road to survey, m of s (default: all of it).
    pub s_range: Option<(f64, f64)>,
    /// Output directory (replaced as a whole when the survey succeeds).
    pub out: PathBuf,
    /// Seed of the scene's textures and of the noise.
    pub seed: u64,
    /// scan.laz instead of scan.las.
    pub laz: bool,
    /// The scanner and trajectory.
    pub scanner: ScannerConfig,
}

impl SynthConfig {
    /// A survey of the demo scene into `out` with the default scanner.
    pub fn demo(out: impl Into<PathBuf>, seed: u64) -> SynthConfig {
        SynthConfig {
            scene: "demo".into(),
            road: None,
            s_range: None,
            out: out.into(),
            seed,
            laz: false,
            scanner: ScannerConfig::default(),
        }
    }
}

/// What a survey scans: one road's scene, or a network of roads.
enum Target {
    /// A scene and its survey.
    Road(Box<sim::Scene>, sim::survey::Survey),
    /// Every road of a file and their survey.
    Network(Box<sim::network::Network>, sim::network::NetworkSurvey),
}

/// The scene `scene`, `road` and `s_range` name, and its survey.
fn scene_of(scene: &str, road: Option<&str>, s_range: Option<(f64, f64)>, seed: u64) -> Result<Target> {
    if scene == "demo" {
        if road.is_some() || s_range.is_some() {
            bail!("--road and --s-range apply to an OpenDRIVE --scene, not to the demo");
        }
        return Ok(Target::Road(Box::new(sim::Scene::demo(seed)), sim::survey::Survey::demo(seed)));
    }
    let path = Path::new(scene);
    if !path.is_file() {
        bail!("--scene {scene}: neither `demo` nor an existing OpenDRIVE file");
    }
    let odr = opendrive::read_file(path)?;
    let id = match (road, odr.roads.len()) {
        (Some(id), _) => id.to_string(),
        (None, 0) => bail!("{scene}: no roads"),
        (None, 1) => odr.roads[0].id.clone(),
        (None, n) => {
            if s_range.is_some() {
                bail!("{scene}: --s-range needs --road in a file of {n} roads (without --road every road is surveyed)");
            }
            let net = sim::network::Network::new(&odr, seed).map_err(|e| anyhow::anyhow!("{scene}: {e}"))?;
            let plan = net.survey(seed).map_err(|e| anyhow::anyhow!("{scene}: {e}"))?;
            return Ok(Target::Network(Box::new(net), plan));
        }
    };
    let sc = sim::Scene::from_road(&odr, &id, s_range, seed).map_err(|e| anyhow::anyhow!("{scene}: road {id}: {e}"))?;
    let survey = sim::survey::Survey::along(&sc, seed);
    Ok(Target::Road(Box::new(sc), survey))
}

/// Surveys the scene `c` names into `c.out` (staged, put in place at the end).
pub fn survey(c: &SynthConfig) -> Result<sim::survey::Summary> {
    check(&c.scanner)?;
    let outputs = Outputs::new(Some(Path::new(&c.scene)).filter(|_| c.scene != "demo"));
    let staged = outputs.dir(&c.out, "truth/features.json")?;
    let summary = survey_into(c, &staged)?;
    outputs.commit()?;
    Ok(summary)
}

/// Surveys the scene `c` names into the directory `dir` (not staged; `c.out` is not used).
pub fn survey_into(c: &SynthConfig, dir: &Path) -> Result<sim::survey::Summary> {
    let a = &c.scanner;
    check(a)?;
    let mut target = scene_of(&c.scene, c.road.as_deref(), c.s_range, c.seed)?;
    let survey = match &mut target {
        Target::Road(sc, survey) => {
            if a.clutter {
                sc.add_clutter();
            }
            survey
        }
        Target::Network(_, plan) => {
            if a.clutter {
                bail!("{}: --clutter needs --road: a network survey has no clutter yet", c.scene);
            }
            &mut plan.survey
        }
    };
    survey.scanner.points_per_rev = a.points_per_rev;
    survey.scanner.rate = a.rate;
    survey.scanner.range_noise = a.noise;
    survey.scanner.height = a.mount_height;
    survey.scanner.lateral = a.mount_lateral;
    survey.scanner.roll = a.mount_roll_deg.to_radians();
    survey.trajectory_offset = a.traj_offset;
    survey.trajectory_drift = a.traj_drift;
    survey.trajectory_noise = a.traj_noise;
    match &target {
        Target::Road(sc, survey) => sim::survey::run(sc, survey, dir, c.laz).map_err(anyhow::Error::msg),
        Target::Network(net, plan) => sim::network::run(net, plan, dir, c.laz).map_err(anyhow::Error::msg),
    }
}

/// An error when the scanner `a` is out of bounds.
fn check(a: &ScannerConfig) -> Result<()> {
    if !(8..=100_000).contains(&a.points_per_rev) {
        bail!("--points-per-rev must be from 8 to 100000, got {}", a.points_per_rev);
    }
    within("noise", a.noise, 0.0, 1.0)?;
    if !(a.rate.is_finite() && a.rate > 0.0 && a.rate <= 10_000.0) {
        bail!("--rate must be a positive number of revolutions per second (at most 10000), got {}", a.rate);
    }
    within("mount-height", a.mount_height, 0.01, 100.0)?;
    within("mount-lateral", a.mount_lateral, -100.0, 100.0)?;
    if !(a.mount_height.is_finite()
        && a.mount_height > 0.0
        && a.mount_lateral.is_finite()
        && a.mount_roll_deg.is_finite())
    {
        bail!("--mount-height must be a positive number of metres, --mount-lateral and --mount-roll-deg numbers");
    }
    Ok(())
}
