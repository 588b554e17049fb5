//! The demo (`roadscan demo`): the embedded demo scene surveyed and built into every product,
//! in a staging directory that replaces the output at the end.

use crate::build::{build_into, Built};
use crate::config::{AxisSource, BuildConfig};
use crate::progress::{Note, Progress};
use crate::staging::Outputs;
use crate::synth::{survey_into, SynthConfig};
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Surveys the demo scene with `seed` into `out/survey` and builds every product from it into
/// `out` (replaced as a whole when the demo succeeds).
pub fn demo(out: &Path, seed: u64, progress: &dyn Progress) -> Result<Built> {
    let outputs = Outputs::new(Vec::<PathBuf>::new());
    let dir = outputs.dir(out, "manifest.json")?;
    let survey = dir.join("survey");
    let t = Instant::now();
    survey_into(&SynthConfig::demo(&survey, seed), &survey).context("demo: the virtual survey")?;
    progress.note(&Note::Info(format!("virtual survey of the demo scene: {:.1} s", t.elapsed().as_secs_f64())));
    // The demo survey's first pass drives lane -1 at this t, its scanner this high.
    let plan = sim::survey::Survey::demo(seed);
    let config = BuildConfig {
        input: vec![survey.join("scan.las")],
        axis: AxisSource::Trajectory {
            path: survey.join("trajectory.csv"),
            offset: sim::survey::axis_offset(&plan, &plan.passes[0]),
            sensor_height: Some(plan.scanner.height),
            pass: None,
        },
        crs: Some("EPSG:23700".into()),
        out: out.to_path_buf(),
        ..BuildConfig::default()
    };
    let built = build_into(&config, &dir, progress).context("demo: the build")?;
    outputs.commit()?;
    Ok(built)
}
