//! `roadscan demo`: the embedded demo scene surveyed and turned into every product, by the
//! same verbs a user runs, in a temporary directory renamed into place at the end.

use crate::{exit, run_args};
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
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
    let name = a.out.file_name().context("--out must name a directory")?.to_string_lossy().into_owned();
    let parent = a.out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).with_context(|| format!("{}: cannot create the directory", parent.display()))?;
    remove_stale(parent, &name);
    let work = parent.join(format!(".{name}.tmp{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).with_context(|| format!("{}: cannot create the directory", work.display()))?;
    let result = steps(&work, a.seed, quiet);
    if let Err(e) = result {
        let _ = std::fs::remove_dir_all(&work);
        return Err(e);
    }
    replace_dir(&work, &a.out)?;
    if !quiet {
        let o = a.out.display();
        eprintln!("roadscan: demo done in {:.1} s; look at:", t0.elapsed().as_secs_f64());
        for (what, path) in [
            ("the surveyed road (OpenDRIVE 1.8; esmini, CarMaker, CARLA)", "road.xodr"),
            ("its 1 cm road surface (OpenCRG) and a picture of it", "road.crg, road.png"),
            ("the roadside voxels for a game engine", "scene.obj, scene.glb"),
            ("the depth ribbons and the street view", "ribbons/street_view.png"),
            ("the survey itself and its truth", "survey/scan.las, survey/truth/"),
        ] {
            eprintln!("  {o}/{path:<36} {what}");
        }
    }
    Ok(exit::OK)
}

/// The chain of verbs in `dir`.
fn steps(dir: &Path, seed: u64, quiet: bool) -> Result<()> {
    let p = |name: &str| dir.join(name).to_string_lossy().into_owned();
    let (survey, scan, axis, road, crg) =
        (p("survey"), p("survey/scan.las"), p("axis.xodr"), p("road.xodr"), p("road.crg"));
    let traj = p("survey/trajectory.csv");
    let (png, obj, glb, ribbons) = (p("road.png"), p("scene.obj"), p("scene.glb"), p("ribbons"));
    // The demo survey's first pass drives lane -1 at this t, its scanner this high.
    let plan = sim::survey::Survey::demo(seed);
    let offset = format!("{}", -plan.passes[0].t);
    let height = format!("{}", plan.scanner.height);
    let seed = seed.to_string();
    let chain: [(&str, Vec<&str>); 7] = [
        ("virtual survey of the demo scene", vec!["synth", "--scene", "demo", "--out", &survey, "--seed", &seed]),
        (
            "axis fitted to the trajectory",
            vec![
                "axis",
                "--trajectory",
                &traj,
                "--offset",
                &offset,
                "--sensor-height",
                &height,
                "--crs",
                "EPSG:23700",
                "--out",
                &axis,
            ],
        ),
        ("surveyed road from the points", vec!["xodr", "--axis", &axis, "--input", &scan, "--out", &road]),
        (
            "1 cm road-surface CRG",
            vec!["crg", "--axis", &road, "--input", &scan, "--out", &crg, "--z", "residual", "--preview", &png],
        ),
        (
            "potholes, manholes and the CRG link",
            vec!["xodr", "--axis", &axis, "--input", &scan, "--crg", &crg, "--out", &road],
        ),
        ("roadside voxels", vec!["voxel", "--axis", &road, "--input", &scan, "--out", &obj, "--glb", &glb]),
        ("depth ribbons and street view", vec!["ribbons", "--axis", &road, "--input", &scan, "--out", &ribbons]),
    ];
    let n = chain.len();
    for (k, (what, args)) in chain.iter().enumerate() {
        let t = Instant::now();
        let code = run_args(args).with_context(|| format!("demo step {} ({what})", k + 1))?;
        if code != exit::OK {
            bail!("demo step {} ({what}) ended with exit code {code}", k + 1);
        }
        if !quiet {
            eprintln!("roadscan: demo [{}/{n}] {what}: {:.1} s", k + 1, t.elapsed().as_secs_f64());
        }
    }
    Ok(())
}

/// Removes what interrupted runs left beside `out` (`.NAME.tmpPID`, `.NAME.oldPID`) when
/// their process is gone (where /proc tells; elsewhere nothing is removed).
fn remove_stale(parent: &Path, name: &str) {
    let Ok(entries) = std::fs::read_dir(parent) else { return };
    for e in entries.flatten() {
        let file = e.file_name().to_string_lossy().into_owned();
        let pid = [".tmp", ".old"].iter().find_map(|tag| file.strip_prefix(&format!(".{name}{tag}")));
        let Some(pid) = pid.and_then(|p| p.parse::<u32>().ok()) else { continue };
        let proc_dir = Path::new("/proc");
        if proc_dir.is_dir() && pid != std::process::id() && !proc_dir.join(pid.to_string()).exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// Puts `work` where `out` is: the old `out` (if any) is moved aside first and removed last,
/// so an interruption leaves either the old products or the new ones.
fn replace_dir(work: &Path, out: &Path) -> Result<()> {
    let old = out.with_file_name(format!(
        ".{}.old{}",
        out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        std::process::id()
    ));
    let had = out.exists();
    if had {
        std::fs::rename(out, &old).with_context(|| format!("{}: cannot move the old products aside", out.display()))?;
    }
    if let Err(e) = std::fs::rename(work, out) {
        if had {
            let _ = std::fs::rename(&old, out);
        }
        return Err(e).with_context(|| format!("{}: cannot move the products into place", out.display()));
    }
    if had {
        let _ = std::fs::remove_dir_all(&old);
    }
    Ok(())
}
