//! roadscan: mobile laser scans of roads into driving-simulator inputs.
//!
//! This library runs every verb of the `roadscan` tool; the tool only turns flags into the
//! configurations here, shows [`Progress`] and prints. A build reads LAS/LAZ points along an
//! axis once and writes the surveyed OpenDRIVE road, its 1 cm OpenCRG tiles, the roadside as
//! voxels and depth ribbons, a report (JSON and HTML) and a manifest:
//!
//! ```no_run
//! use roadscan::config::{AxisSource, BuildConfig};
//! use roadscan::synth::SynthConfig;
//!
//! # fn main() -> anyhow::Result<()> {
//! // A virtual survey of the demo scene, then a build from its points and trajectory.
//! roadscan::synth::survey(&SynthConfig::demo("survey", 1))?;
//! let config = BuildConfig {
//!     input: vec!["survey/scan.las".into()],
//!     axis: AxisSource::Trajectory {
//!         path: "survey/trajectory.csv".into(),
//!         offset: 0.0,
//!         sensor_height: None,
//!         pass: None,
//!     },
//!     crs: Some("EPSG:23700".into()),
//!     out: "out".into(),
//!     ..BuildConfig::default()
//! };
//! let built = roadscan::build(&config, None, &roadscan::Silent)?;
//! assert!(built.failed.is_empty());
//! # Ok(())
//! # }
//! ```
//!
//! Modules: [`config`] (a build's options), [`build`] (the build), [`units`] (a build as work
//! units for batch engines), [`inputs`] (LAS/LAZ inputs opened, reprojected, streamed),
//! [`axis`] (axis fitting), [`crg`], [`xodr`] and [`roadside`] (the single-product verbs),
//! [`synth`] and [`demo`] (virtual surveys), [`report`] and [`manifest`] (what a build
//! says about itself), [`staging`] (outputs whole or not at all), [`progress`].

#![warn(missing_docs)]

pub mod axis;
pub mod build;
pub mod config;
pub mod crg;
pub mod demo;
pub mod inputs;
pub mod manifest;
pub mod progress;
pub mod report;
pub mod roadside;
pub mod staging;
pub mod synth;
pub mod units;
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
