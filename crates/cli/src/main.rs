//! `roadscan`: survey point clouds to driving-simulator inputs. This binary is only argument
//! parsing, progress, printing and exit codes; the work is in the `roadscan` library and the
//! format crates.

mod args;
mod cmd;
mod progress;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// Exit codes (also in `roadscan --help`).
pub mod exit {
    /// Success.
    pub const OK: u8 = 0;
    /// The command ran and found problems of severity error (`check`), or the fit misses its
    /// tolerance (`axis`, the file is written).
    pub const FINDINGS: u8 = 1;
    /// Bad input, bad arguments or an I/O failure: nothing was written.
    pub const FAILURE: u8 = 2;
    /// A bug in roadscan (a panic), reported as one line.
    pub const BUG: u8 = 101;
}

#[derive(Parser, Debug)]
#[command(
    name = "roadscan",
    version,
    about = "Mobile laser scans of roads to driving-simulator inputs (OpenDRIVE, OpenCRG, voxels).",
    after_help = "Exit codes: 0 success, 1 findings of severity error (check), a missed tolerance (axis, written anyway), what the survey could not find (xodr, written anyway) or a failed check in the report (build, written anyway), 2 bad input or failure (nothing written), 101 a bug in roadscan (one line: please report it).\n\n\
Examples:\n  roadscan check map.xodr\n  roadscan eval map.xodr --step 1 > samples.txt\n  roadscan convert old.xodr new.xodr --version 1.8"
)]
struct Cli {
    /// Print only errors.
    #[arg(long, short, global = true)]
    quiet: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Summarise a file and report problems. OpenDRIVE: gaps and heading jumps between geometry
    /// records, s bookkeeping, lane width sign, lane ids, dangling links. OpenCRG: header
    /// consistency and grid folding on tight curves.
    #[command(after_help = "Examples:\n  roadscan check data/opendrive/demo.xodr\n  roadscan check map.xodr --json")]
    Check {
        /// An OpenDRIVE (.xodr) or OpenCRG (.crg) file.
        file: PathBuf,
        /// Print the summary and diagnostics as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Summarise OpenCRG files (format, grid size, u/v ranges, reference line, z range) or
    /// LAS/LAZ files (header, point count, bounds, CRS and units, GPS time, classes, and every
    /// problem found: lying counts, bad VLRs, empty CRS).
    #[command(
        after_help = "Examples:\n  roadscan info road.crg\n  roadscan info scan.laz --json\n  roadscan info tiles/*.las"
    )]
    Info {
        /// OpenCRG (.crg) or LAS/LAZ (.las, .laz) files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Evaluate an OpenCRG file like the C-API's crgEval: reads lines `uv U V` or `xy X Y` on
    /// stdin, prints `x y u v z` per line (`nan` where there is no data, `err` where the
    /// border mode refuses).
    #[command(
        name = "crg-eval",
        after_help = "Examples:\n  printf 'uv 730 0\\nxy 230 80\\n' | roadscan crg-eval belgian_block.crg\n  roadscan crg-eval road.crg --mods --opt border_mode_u=0 < points.txt"
    )]
    CrgEval {
        /// An OpenCRG file (.crg).
        file: PathBuf,
        /// Apply the file's modifiers (or the C-API's defaults when it has no $ROAD_CRG_MODS block).
        #[arg(long)]
        mods: bool,
        /// Evaluation option KEY=VALUE, $ROAD_CRG_OPTS keywords (repeatable).
        #[arg(long = "opt")]
        opts: Vec<String>,
    },
    /// Sample every road: `road s x y z hdg | laneOffset | lane_id:t_outer_border ...`,
    /// every STEP metres from s = 0 and at the road's end (the oracle format).
    #[command(
        after_help = "Examples:\n  roadscan eval map.xodr --step 1\n  roadscan eval map.xodr --road 5 --step 0.1"
    )]
    Eval {
        /// An OpenDRIVE file (.xodr).
        file: PathBuf,
        /// Sampling step along s, m.
        #[arg(long, default_value_t = 1.0)]
        step: f64,
        /// Only these roads (repeatable).
        #[arg(long)]
        road: Vec<String>,
    },
    /// Virtual survey: scan a designed road scene with a profile scanner and write what a
    /// mobile-mapping system delivers (scan.las/.laz, trajectory.csv) plus the exact truth
    /// (truth/road.xodr, truth/surface.crg, truth/features.json). A file of several roads
    /// without --road is surveyed as a network: every road, one scan, each road's truth in
    /// truth/roads/ID/ and the whole map in truth/network.xodr. Same seed, same bytes.
    #[command(
        after_help = "Examples:\n  roadscan synth --scene demo --out survey --seed 1\n  roadscan synth --scene demo --out survey --laz --points-per-rev 2000\n  roadscan synth --scene curves.xodr --road 1 --s-range 100..400 --out curves-survey\n  roadscan synth --scene fabriksgatan.xodr --out network-survey\n  roadscan synth --scene velodrome.xodr --road 1 --s-range 0..300 --clutter --traj-noise 0.03,0.05 --out messy-survey\n\n--clutter adds what a real survey meets (seeded, placed from the road's own lanes): trees whose\ncrowns overhang the carriageway by 1-2 m at 3-5 m, cars parked half on the outermost lane, people\non the road, and multipath returns (0.3 % of the road returns, 0.2-1 m too long along the beam,\nso below the surface, with the class of the surface hit). --traj-noise SIGMA_XY,SIGMA_Z adds a\nsmooth random GNSS/IMU error (RMS SIGMA_XY on x and on y, SIGMA_Z on z; periods of 40-150 s) to\nthe trajectory and, through it, to every point. survey.json records both; the truth stays the\ntruth of the pavement.\n\nA network survey (a file of several roads, no --road) drives every road, connecting roads\nincluded, with the passes a survey of that road alone would make, in the file's order; each pass\nin survey.json names its road. Roads are plain: lines, curbs and sidewalks from their lanes, no\npotholes, setts, objects or facades. Where roads overlap a return is kept only where no other\nroad's surface lies above it by more than 1 cm (and a carriageway wins over a verge). --s-range\nand --clutter need --road."
    )]
    Synth(cmd::synth::SynthArgs),
    /// Road-surface CRG from LAS/LAZ points: the points near the road's surface, a robust
    /// height per node (1 cm by default) on the road's reference line (u = s, v = t), short
    /// along-track gaps filled, larger holes left NaN, coverage reported.
    #[command(
        after_help = "Examples:\n  roadscan crg --axis survey/truth/road.xodr --input survey/scan.las --out road.crg\n  roadscan crg --axis road.xodr --road 7 --input a.laz b.laz --out road.crg --s-range 100..350 --preview road.png\n  roadscan crg --axis road.xodr --input scan.laz --out attached.crg --z residual --width-left 4 --width-right 4"
    )]
    Crg(cmd::crg::CrgArgs),
    /// The roadside as voxels: a sparse grid axis-aligned in the local map frame (map minus an
    /// origin) of the points within --buffer of the road, its exposed faces as OBJ + MTL
    /// (shared vertices, colours by class, intensity, height or RGB) and optionally binary
    /// glTF, with a JSON sidecar (origin, CRS, size, counts) and a CSV of the voxels (count,
    /// mean intensity and colour, majority class, s and t of the centre).
    #[command(
        after_help = "Examples:\n  roadscan voxel --axis survey/truth/road.xodr --input survey/scan.las --out scene.obj --glb scene.glb\n  roadscan voxel --axis road.xodr --road 7 --input a.laz b.laz --out fine.obj --size 0.1 --buffer 20 --colour height"
    )]
    Voxel(cmd::voxel::VoxelArgs),
    /// Depth ribbons: for each side of the road an orthogonal image over (s, h) whose pixels
    /// hold the nearest |t| of the points on that side (16-bit PNG in mm, float TIFF in m),
    /// with intensity (and colour) images, a street view of both sides and a JSON sidecar.
    #[command(
        after_help = "Examples:\n  roadscan ribbons --axis survey/truth/road.xodr --input survey/scan.las --out ribbons\n  roadscan ribbons --axis road.xodr --input scan.laz --out ribbons --cell 0.05 --h-range 0..12 --min-depth 4"
    )]
    Ribbons(cmd::ribbons::RibbonsArgs),
    /// A virtual rotating LiDAR (Velodyne HDL-32E, VLP-16, HDL-64E or a TOML beam table) driven
    /// along a lane of a built world or a trajectory CSV: each laser cast at its own time and
    /// pose against the road at full CRG detail and the roadside voxels; Velodyne data and
    /// position packets written to a pcap file.
    #[command(
        after_help = "Examples:\n  roadscan demo --out demo && roadscan lidar --world demo --duration 10 --pcap hdl32e.pcap\n  roadscan lidar --world build --path lane:1 --speed 15 --rate 20 --range-noise 0.02 --pcap out.pcap --json\n  roadscan lidar --world demo --duration 60 --udp 127.0.0.1:2368\n  roadscan lidar --world demo --duration 2 --las hdl32e.las --mcap hdl32e.mcap\n  roadscan lidar --world out --path survey/trajectory.csv --height 0 --sensor hdl64e --las hdl64e.las\n  roadscan lidar --world demo --sensor data/sensors/hdl32e.toml --duration 1 --pcap table.pcap"
    )]
    Lidar(cmd::lidar::LidarArgs),
    /// Send the UDP datagrams of a pcap file again (Velodyne data to --udp, position packets to
    /// --position-port on the same host), paced by their capture times, faster or slower by
    /// --speed-factor, or --unpaced.
    #[command(
        after_help = "Examples:\n  roadscan replay hdl32e.pcap --udp 127.0.0.1:2368\n  roadscan replay hdl32e.pcap --udp 192.168.1.255:2368 --speed-factor 2"
    )]
    Replay(cmd::lidar::ReplayArgs),
    /// A world's contents as JSON (heightfields, surfels, triangles, memory); its triangles for
    /// other ray casters (--export-triangles) and a ray file cast against it (--cast), for the
    /// benchmark against Open3D/Embree.
    #[command(
        after_help = "Examples:\n  roadscan world --world demo\n  roadscan world --world demo --export-triangles tris.bin\n  roadscan lidar --world demo --duration 1 --rays-out rays.bin && roadscan world --world demo --cast rays.bin --hits hits.f32"
    )]
    World(cmd::world::WorldArgs),
    /// A virtual camera (pinhole from a field of view or intrinsics, Brown-Conrady or fisheye
    /// distortion from a camera file) driven along a lane of a built world or a trajectory
    /// CSV (see lidar --help for its columns): colour, depth,
    /// class and instance images as PNG, COCO boxes of objects, and the camera's record.
    #[command(
        after_help = "Examples:\n  roadscan demo --out demo && roadscan camera --world demo --duration 2 --fps 10 --out frames\n  roadscan camera --world build --path lane:1 --speed 15 --hfov 60 --width 1280 --height 720 --out frames --planes\n  roadscan camera --world demo --camera cam.toml --duration 5 --out fisheye --json\n  roadscan camera --world out --path survey/trajectory.csv --duration 3 --out frames"
    )]
    Camera(cmd::camera::CameraArgs),
    /// Closed-loop simulation on a world: an ego vehicle (regression or drag model, kinematic
    /// bicycle, wheels on the CRG surface), an AI driver on a route of lanes, actors, GPS,
    /// collisions; the ego's CSV, MCAP (Foxglove), NMEA and events written; state saved and resumed.
    #[command(after_help = cmd::sim::EXAMPLES)]
    Sim(Box<cmd::sim::SimArgs>),
    /// Fit a road's reference line to a trajectory, a polyline, an OpenStreetMap way or an
    /// existing road: lines, arcs and clothoids with continuous heading and curvature within
    /// --tolerance and with few records, the elevation as cubic records where the input has
    /// heights, one driving lane each side. Prints each record's max and RMS deviation; exits
    /// 1 (file written) when the tolerance cannot be met.
    #[command(
        after_help = "Examples:\n  roadscan axis --trajectory survey/trajectory.csv --offset 1.625 --sensor-height 2.2 --crs EPSG:23700 --out axis.xodr\n  roadscan axis --polyline centreline.csv --crs EPSG:25832 --out axis.xodr --tolerance 0.02\n  roadscan axis --osm map.osm --way 4711 --crs EPSG:25833 --out axis.xodr\n  roadscan axis --osm area.osm --crs EPSG:25833 --out network.xodr   # every way: a network with junctions\n  roadscan axis --trajectory network-survey/trajectory.csv --out network.xodr   # passes through junctions: their network\n  roadscan axis --xodr curves.xodr --road 1 --out refit.xodr --json"
    )]
    Axis(cmd::axis::AxisArgs),
    /// The surveyed road: an axis road (from `roadscan axis`) completed from LAS/LAZ points:
    /// elevation and superelevation of the road surface, curbs (height steps), marking lines
    /// (intensity contrast; solid or broken, width), lanes between them with widths as cubic
    /// records and sections where a border starts or ends; with --crg, potholes and manholes
    /// as objects and the `<surface><CRG>` link.
    #[command(
        after_help = "Examples:\n  roadscan xodr --axis axis.xodr --input survey/scan.las --out road.xodr\n  roadscan xodr --axis axis.xodr --input a.laz b.laz --crg road.crg --out road.xodr --json"
    )]
    Xodr(cmd::xodr::XodrArgs),
    /// The demo, end to end: a virtual survey of the embedded demo scene (a 150 m street with
    /// a clothoid curve, markings, curbs, a manhole, a pothole, setts, trees and facades),
    /// its axis fitted from the trajectory, the surveyed OpenDRIVE road, a 1 cm residual CRG
    /// linked into it with the pothole and the manhole as objects, the roadside as voxels
    /// (OBJ, glb) and depth ribbons with a street view. The products appear whole in --out or
    /// not at all.
    #[command(after_help = "Examples:\n  roadscan demo\n  roadscan demo --out /tmp/demo --seed 7")]
    Demo(cmd::demo::DemoArgs),
    /// Survey to simulator in one command: LAS/LAZ points and an axis (an OpenDRIVE road or a
    /// trajectory to fit) in; the points are read once and feed every product: the surveyed
    /// road (road.xodr: elevation, superelevation, lanes, marks, potholes and manholes, CRG
    /// links), 1 cm CRG tiles (crg/), roadside voxels (scene.obj, scene.glb), depth ribbons
    /// (ribbons/), report.html, report.json and manifest.json (inputs and outputs with SHA-256,
    /// parameters, timings). The products replace --out whole, or nothing changes. Exit code
    /// 1: built, but a check in the report failed.
    #[command(
        after_help = "Examples:\n  roadscan build --input survey/scan.las --trajectory survey/trajectory.csv \\\n    --offset 1.625 --sensor-height 2.2 --crs EPSG:23700 --out out\n  # the scanner's height from the points, its track the reference line:\n  roadscan build --input scan.laz --trajectory traj.csv --crs EPSG:25832 --out out\n  roadscan build --input a.laz b.laz --axis axis.xodr --road 7 --out out --tile 100\n  roadscan build --input scan.laz --osm area.osm --crs EPSG:25833 --out out   # a network from OSM ways\n  roadscan build --input scan.laz --osm area.osm --trajectory traj.csv --crs EPSG:25833 --out out   # OSM topology, surveyed lines\n  roadscan build --input network-survey/scan.las --trajectory network-survey/trajectory.csv --out out   # the network its passes drive\n  roadscan build --config survey.toml --json > report.json\n\nA config file (keys are the long option names; the command line wins):\n  input = [\"scan.laz\"]\n  trajectory = \"trajectory.csv\"\n  offset = 1.625\n  sensor-height = 2.2\n  crs = \"EPSG:23700\"\n  out = \"out\"\n  tile = 250"
    )]
    Build(cmd::build::BuildArgs),
    /// Split a build into work units for a batch engine (Slurm job arrays, Kubernetes
    /// indexed Jobs): prints one JSON line per unit ({"unit", "stage", "after", ...}) and
    /// writes the plan to OUT.work/. Run every unit with `roadscan build --unit N` and the
    /// same options: first the `points` units (in any order, at once), then `road`, then the
    /// `surface` units, then `finish`, which writes the products to --out, the same bytes as
    /// one `build`.
    #[command(after_help = PLAN_EXAMPLES)]
    Plan(cmd::build::PlanArgs),
    /// Render an OpenCRG grid as a PNG: height against a fitted plane (or the reference line)
    /// as colours, hillshaded, with colour bar, scale bar and caption.
    #[command(
        after_help = "Examples:\n  roadscan render road.crg --out road.png\n  roadscan render road.crg --out road.png --relative refline --range-mm 20"
    )]
    Render {
        /// An OpenCRG file (.crg).
        file: PathBuf,
        /// Output PNG.
        #[arg(long)]
        out: PathBuf,
        /// Colour reference: plane (fitted plane, shows texture) or refline (z as stored).
        #[arg(long, default_value = "plane")]
        relative: String,
        /// Half range of the colour scale in millimetres (default: 99th percentile).
        #[arg(long)]
        range_mm: Option<f64>,
    },
    /// Generate the connecting roads of junctions from the lanes of the roads that end at them
    /// (from every lane into the junction to each other road, no U-turns; curvature-continuous
    /// clothoids meeting both lanes' borders), replacing the file's own; written as OpenDRIVE 1.8.
    #[command(
        after_help = "Examples:\n  roadscan connect map.xodr connected.xodr\n  roadscan connect map.xodr connected.xodr --junction 4 --junction 9"
    )]
    Connect {
        /// Input OpenDRIVE file.
        input: PathBuf,
        /// Output file (written atomically; never the input).
        output: PathBuf,
        /// Only this junction (repeatable; default: every junction of default kind).
        #[arg(long)]
        junction: Vec<String>,
    },
    /// Convert OpenDRIVE between revisions (1.4-1.8 in, 1.6/1.7/1.8 out; content the target
    /// revision forbids is moved or renamed, every change reported), or OpenCRG between formats.
    #[command(
        after_help = "Examples:\n  roadscan convert Town07.xodr Town07_18.xodr\n  roadscan convert in.xodr out.xodr --version 1.7\n  roadscan convert road.crg road_text.crg --format LRFI"
    )]
    Convert {
        /// Input file (.xodr or .crg).
        input: PathBuf,
        /// Output file (written atomically: a temporary file, then a rename).
        output: PathBuf,
        /// OpenDRIVE target revision: 1.6, 1.7 or 1.8.
        #[arg(long, default_value = "1.8")]
        version: String,
        /// OpenCRG target format: KRBI (default), KDBI, LRFI, LDFI (LRBI, LDBI also written).
        #[arg(long, default_value = "KRBI")]
        format: String,
    },
}

/// Prints each warning, even with `--quiet`: they explain exit code 1 (its exit code).
fn warn<W: std::fmt::Display>(warnings: impl IntoIterator<Item = W>) -> anyhow::Result<u8> {
    let mut code = exit::OK;
    for w in warnings {
        eprintln!("roadscan: warning: {w}");
        code = exit::FINDINGS;
    }
    Ok(code)
}

/// Panic messages with their places, in order (at most a few): the panic hook keeps them
/// instead of printing, so that a panic the libraries turn into an error (the LAZ decoder on
/// corrupt data) prints nothing, and one that reaches `main` prints one line.
static PANICS: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// The panic hook: keeps the message.
fn keep_panics() {
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let msg = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic".to_string());
        let place = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        if let Ok(mut v) = PANICS.lock() {
            if v.len() < 8 {
                v.push(format!("{msg}{place}"));
            }
        }
    }));
}

/// The last kept panic that is not another thread's passed on (the original), else the last.
fn panic_message() -> String {
    let v = PANICS.lock().map(|v| v.clone()).unwrap_or_default();
    let passed_on = |m: &&String| m.starts_with("a scoped thread panicked");
    v.iter().rfind(|m| !passed_on(m)).or(v.last()).cloned().unwrap_or_else(|| "panic".to_string())
}

/// The command line's grammar: every verb takes negative numbers as values (`--offset -1.6`),
/// and prints its examples (its `after_help`) unwrapped, so their shell lines copy whole.
fn command() -> clap::Command {
    use clap::CommandFactory;
    Cli::command().mut_subcommands(|c| {
        let c = c.allow_negative_numbers(true);
        match c.get_after_help().map(|h| h.to_string()) {
            // clap wraps an `after_help` at the terminal's width (100 columns off a terminal),
            // which broke example lines; a template's own text is written as it is.
            Some(examples) => c.help_template(format!("{HELP_HEAD}{examples}")).after_help(None::<&str>),
            None => c,
        }
    })
}

/// A verb's help before its examples: clap's default layout.
const HELP_HEAD: &str = "{before-help}{about-with-newline}\n{usage-heading} {usage}\n\n{all-args}\n\n";

/// Parses the command line; help and version print as clap prints them, a usage error as one
/// line (exit 2).
fn parse_args() -> Result<Cli, u8> {
    use clap::error::ErrorKind;
    use clap::FromArgMatches;
    match command().try_get_matches().and_then(|m| Cli::from_arg_matches(&m)) {
        Ok(cli) => Ok(cli),
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            let _ = e.print();
            Err(exit::OK)
        }
        Err(e) if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            Err(exit::FAILURE)
        }
        Err(e) => {
            let text = e.render().to_string();
            let mut first = text.lines().next().unwrap_or("bad arguments").trim_start_matches("error: ").to_string();
            if first.ends_with(':') {
                // "the following required arguments were not provided:" and the list below.
                let list: Vec<&str> = text.lines().skip(1).map(str::trim).take_while(|l| !l.is_empty()).collect();
                first = format!("{first} {}", list.join(", "));
            }
            let verb = std::env::args().nth(1).filter(|v| !v.starts_with('-'));
            let help = verb.map_or("roadscan --help".to_string(), |v| format!("roadscan {v} --help"));
            eprintln!("roadscan: error: {first} (see {help})");
            Err(exit::FAILURE)
        }
    }
}

fn main() -> ExitCode {
    let cli = match parse_args() {
        Ok(cli) => cli,
        Err(code) => return ExitCode::from(code),
    };
    // With RUST_BACKTRACE set, Rust's own hook prints panics and their backtraces.
    if std::env::var_os("RUST_BACKTRACE").is_none() {
        keep_panics();
    }
    // Ctrl-C and SIGTERM remove what this run staged (a commit under way ends first).
    roadscan::staging::set_hooks(roadscan::staging::Hooks {
        note: Some(|n| eprintln!("roadscan: {n}")),
        interrupted: Some(|| {
            eprintln!("roadscan: interrupted; nothing was written");
            std::process::exit(130);
        }),
    });
    let _ = ctrlc::set_handler(roadscan::staging::on_signal);
    let result = match std::panic::catch_unwind(|| dispatch(cli.command, cli.quiet)) {
        Ok(r) => r,
        Err(_) => {
            eprintln!("roadscan: internal error (a bug, please report it): {}", panic_message());
            return ExitCode::from(exit::BUG);
        }
    };
    match result {
        Ok(code) => ExitCode::from(code),
        // The reader of our output went away (`roadscan info f.laz | head`): not an error.
        Err(e) if broken_pipe(&e) => ExitCode::from(exit::OK),
        Err(e) => {
            eprintln!("roadscan: error: {e:#}");
            ExitCode::from(exit::FAILURE)
        }
    }
}

/// Runs one verb.
fn dispatch(command: Command, quiet: bool) -> anyhow::Result<u8> {
    let bars = progress::Bars::new(quiet);
    match command {
        Command::Check { file, json } => cmd::check::run(&file, json),
        Command::Info { files, json } => cmd::info::run(&files, json),
        Command::Synth(args) => cmd::synth::run(&args, &bars),
        Command::Render { file, out, relative, range_mm } => cmd::render::run(&file, &out, &relative, range_mm, quiet),
        Command::Crg(args) => cmd::crg::run(&args, &bars),
        Command::Axis(args) => cmd::axis::run(&args, &bars),
        Command::Xodr(args) => cmd::xodr::run(&args, &bars),
        Command::Voxel(args) => cmd::voxel::run(&args, &bars),
        Command::Ribbons(args) => cmd::ribbons::run(&args, &bars),
        Command::Lidar(args) => cmd::lidar::run(&args, &bars),
        Command::Replay(args) => cmd::lidar::replay(&args, &bars),
        Command::World(args) => cmd::world::run(&args, &bars),
        Command::Camera(args) => cmd::camera::run(&args, &bars),
        Command::Sim(args) => cmd::sim::run(&args, &bars),
        Command::CrgEval { file, mods, opts } => cmd::crg_eval::run(&file, mods, &opts),
        Command::Eval { file, step, road } => cmd::eval::run(&file, step, &road),
        Command::Connect { input, output, junction } => cmd::convert::connect(&input, &output, &junction, quiet),
        Command::Convert { input, output, version, format } => {
            cmd::convert::run(&input, &output, &version, &format, quiet)
        }

        Command::Demo(args) => cmd::demo::run(&args, &bars),
        Command::Build(args) => cmd::build::run(&args, &bars),
        Command::Plan(args) => cmd::build::plan(&args, &bars),
    }
}

/// `plan --help`'s examples (`.ci/slurm_check.sh` runs the sbatch lines as they are here).
const PLAN_EXAMPLES: &str = r#"Examples:
  roadscan plan --config survey.toml > units.jsonl
  roadscan plan --config survey.toml --unit-tiles 2

Run the units on this machine, two at a time, a stage after the one before:
  roadscan plan --config survey.toml > units.jsonl
  for stage in points road surface finish; do
    sed -n "/\"stage\":\"$stage\"/s/.*\"unit\":\([0-9]*\).*/\1/p" units.jsonl |
      xargs -P 2 -I{} roadscan build --config survey.toml --unit {} -q || { echo "stage $stage failed" >&2; break; }
  done

On Slurm, with N units a stage (the plan has 2N+2), one job array a stage:
  a=$(sbatch --parsable --array=0-$((N-1)) --wrap 'roadscan build --config survey.toml --unit $SLURM_ARRAY_TASK_ID')
  b=$(sbatch --parsable -d afterok:$a --wrap "roadscan build --config survey.toml --unit $N")
  c=$(sbatch --parsable -d afterok:$b --array=$((N+1))-$((2*N)) --wrap 'roadscan build --config survey.toml --unit $SLURM_ARRAY_TASK_ID')
  sbatch -d afterok:$c --wrap "roadscan build --config survey.toml --unit $((2*N+1))"
"#;

/// Whether an error comes from writing to a closed pipe.
fn broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::panic)]

    #[test]
    fn a_panic_in_a_thread_is_kept_with_its_place_and_not_the_one_passing_it_on() {
        super::keep_panics();
        let r = std::panic::catch_unwind(|| {
            std::thread::scope(|s| {
                s.spawn(|| panic!("the original {}", 42));
            })
        });
        assert!(r.is_err());
        let m = super::panic_message();
        assert!(m.starts_with("the original 42 at crates/cli/src/main.rs:"), "{m}");
    }
}
