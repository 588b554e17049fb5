//! roadscan: mobile laser scans of roads into driving-simulator inputs.
//!
//! This library runs every verb of the `roadscan` tool; the tool only turns flags into the
//! configurations here, shows [`Progress`] and prints. A build reads LAS/LAZ points along an
//! axis once and writes the surveyed OpenDRIVE road, its 1 cm OpenCRG tiles, the roadside as
//! voxels and depth ribbons, a report (JSON and HTML) and a manifest:
//!
//! ```
//! use roadscan::config::{AxisSource, BuildConfig};
//! use roadscan::synth::SynthConfig;
//!
//! # fn main() -> anyhow::Result<()> {
//! let dir = std::env::temp_dir().join(format!("roadscan-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! // A virtual survey of the demo scene (sparse, to be quick)...
//! let mut survey = SynthConfig::demo(dir.join("survey"), 1);
//! survey.scanner.points_per_rev = 100;
//! roadscan::synth::survey(&survey)?;
//! // ...then a build from its points and its trajectory, the axis fitted to the trajectory.
//! let config = BuildConfig {
//!     input: vec![dir.join("survey/scan.las")],
//!     axis: AxisSource::Trajectory {
//!         path: dir.join("survey/trajectory.csv"),
//!         offset: 0.0,
//!         sensor_height: None,
//!         pass: None,
//!     },
//!     crs: Some("EPSG:23700".into()),
//!     out: dir.join("out"),
//!     ..BuildConfig::default()
//! };
//! let built = roadscan::build(&config, &roadscan::Silent)?;
//! let report: serde_json::Value = serde_json::from_slice(&built.report_json)?;
//! let checks = &built.report.checks;
//! assert!(!checks.is_empty() && report["checks"].as_array().is_some_and(|c| c.len() == checks.len()));
//! assert!(dir.join("out/road.xodr").is_file() && dir.join("out/crg/road_000.crg").is_file());
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok(())
//! # }
//! ```
//!
//! Modules: [`config`] (a build's options), [`mod@build`] (the build), [`units`] (a build as work
//! units for batch engines), [`inputs`] (LAS/LAZ inputs opened, reprojected, streamed),
//! [`axis`] (axis fitting), [`crg`], [`xodr`] and [`roadside`] (the single-product verbs),
//! [`synth`] and [`demo`] (virtual surveys), [`world_source`], [`world_tools`] and [`lidar`] (a virtual
//! LiDAR over a built world), [`sensor_path`] (where a sensor drives), [`camera`] (a virtual camera over it), [`replay`] (a pcap sent
//! again), [`report`] and [`manifest`] (what a build says about itself), [`staging`] (outputs
//! whole or not at all), [`progress`]; for the file verbs [`info`], [`check`], [`eval`],
//! [`verbs`] (axis, convert, render) and [`files`]; and [`messages`] (what the product verbs
//! say they did).

#![warn(missing_docs)]

pub mod axis;
pub mod build;
pub mod camera;
pub mod check;
pub mod config;
/// The co-simulation wire formats (re-exported for the CLI's flags).
pub use bridges;
pub mod cosim;
pub mod crg;
pub mod demo;
pub mod eval;
pub mod files;
pub mod info;
pub mod inputs;
pub mod lidar;
pub mod lidar_out;
pub mod manifest;
pub mod messages;
pub mod network;
pub mod progress;
pub mod replay;
pub mod report;
pub mod roadside;
pub mod sensor_path;
pub mod sim_sensors;
pub mod sim_walls;
pub mod simulate;
pub mod staging;
pub mod synth;
pub mod units;
pub mod verbs;
pub mod world_source;
pub mod world_tools;
pub mod xodr;

pub use build::{build, Built};
pub use config::{AxisSource, BuildConfig, ConfigFile};
pub use progress::{Note, Progress, Silent, Stage};

/// `s` as a JSON string literal (quotes, backslashes and control characters escaped).
pub fn json_str(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04x}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}
