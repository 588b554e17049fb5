//! `roadscan demo`: the embedded demo scene surveyed and built into every product, in a
//! staging directory that replaces `--out` at the end.

use crate::build::{build_into, print_where, Axis, Settings};
use crate::exit;
use crate::outdir::Outputs;
use anyhow::{Context, Result};
use std::path::PathBuf;
use std::time::Instant;

/// The arguments of `demo`.
#[derive(clap::Args, Debug)]
pub struct DemoArgs {
    /// Output directory (replaced as a whole when the demo succeeds).
    #[arg(long, default_value = "roadscan-demo")]
    pub out: PathBuf,
    /// Seed of the scene's textures and of the range noise.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

pub fn run(a: &DemoArgs, quiet: bool) -> Result<u8> {
    let t0 = Instant::now();
    let outputs = Outputs::new(Vec::<PathBuf>::new());
    let dir = outputs.dir(&a.out, "manifest.json")?;
    let survey = dir.join("survey");
    let t = Instant::now();
    let code = crate::run_args(&[
        "synth",
        "--scene",
        "demo",
        "--out",
        &survey.to_string_lossy(),
        "--seed",
        &a.seed.to_string(),
    ])
    .context("demo: the virtual survey")?;
    if code != exit::OK {
        anyhow::bail!("demo: the virtual survey ended with exit code {code}");
    }
    if !quiet {
        eprintln!("roadscan: virtual survey of the demo scene: {:.1} s", t.elapsed().as_secs_f64());
    }
    // The demo survey's first pass drives lane -1 at this t, its scanner this high.
    let plan = sim::survey::Survey::demo(a.seed);
    let settings = Settings {
        input: vec![survey.join("scan.las")],
        axis: Axis::Trajectory {
            path: survey.join("trajectory.csv"),
            offset: sim::survey::axis_offset(&plan, &plan.passes[0]),
            sensor_height: Some(plan.scanner.height),
            pass: None,
        },
        crs: Some("EPSG:23700".into()),
        out: a.out.clone(),
        ..Settings::default()
    };
    let built = build_into(&settings, &dir, quiet).context("demo: the build")?;
    outputs.commit()?;
    if !quiet {
        print_where(&a.out, t0);
        eprintln!("  {}/{:<26} the survey itself and its truth", a.out.display(), "survey/");
    }
    for w in &built.failed {
        eprintln!("roadscan: warning: {w}");
    }
    Ok(exit::OK)
}
