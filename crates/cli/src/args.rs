//! Arguments several verbs share.

use roadscan::roadside::RoadInputs;
use std::path::PathBuf;

/// The arguments naming a road and the points along it.
#[derive(clap::Args, Debug, Clone)]
pub struct AxisInputs {
    /// OpenDRIVE file with the road whose reference line is the frame (s, t; a CRG's u = s,
    /// v = t).
    #[arg(long)]
    pub axis: PathBuf,
    /// Road id in the axis file (default: its first road).
    #[arg(long)]
    pub road: Option<String>,
    /// CRS of inputs whose files name none (EPSG:NNNN or a PROJ string); inputs in another CRS
    /// than the axis file's geoReference (without one: the first input's CRS) are reprojected
    /// to it.
    #[arg(long)]
    pub crs: Option<String>,
    /// LAS/LAZ files (any number; read in the order given).
    #[arg(long, num_args = 1.., required = true)]
    pub input: Vec<PathBuf>,
}

impl AxisInputs {
    /// The road and points these arguments name, with `buffer` and `s_range`.
    pub fn road_inputs(&self, buffer: f64, s_range: Option<(f64, f64)>) -> RoadInputs {
        RoadInputs {
            axis: self.axis.clone(),
            road: self.road.clone(),
            crs: self.crs.clone(),
            input: self.input.clone(),
            buffer,
            s_range,
        }
    }
}

/// Arguments shared by the roadside verbs.
#[derive(clap::Args, Debug)]
pub struct RoadArgs {
    #[command(flatten)]
    pub src: AxisInputs,
    /// Keep points within this distance of the reference line (|t|), m.
    #[arg(long, default_value_t = 50.0)]
    pub buffer: f64,
    /// Part of the road, A..B in metres of s (default: all of it).
    #[arg(long, value_parser = roadscan::config::parse_range, allow_hyphen_values = true)]
    pub s_range: Option<(f64, f64)>,
}

impl RoadArgs {
    /// The road and points these arguments name.
    pub fn inputs(&self) -> RoadInputs {
        self.src.road_inputs(self.buffer, self.s_range)
    }
}

/// Where a virtual sensor drives (`lidar`, `camera`).
#[derive(clap::Args, Debug, Clone)]
pub struct DriveArgs {
    /// The path: lane:ID, the centre of that lane (negative ids drive with s, positive against
    /// it; --speed, --start), or a trajectory FILE.csv: a header naming time,x,y,z,roll,pitch,heading
    /// (other columns ignored; with a pass column only the first row's pass), as a plain file or
    /// a virtual survey's trajectory.csv. time in s, strictly increasing, time 0 = the first
    /// row; x y z in the MAP frame (the world's road.xodr <offset> is taken off), the vehicle's
    /// origin on which the sensor is mounted (a survey's rows are the scanner centre: --height
    /// 0); roll, pitch, heading in radians (heading counter-clockwise from east, pitch nose up,
    /// roll right side down). Poses are interpolated between rows (positions linearly, angles by
    /// the shortest arc); --duration is clipped to the rows' span with a warning.
    #[arg(long, default_value = "lane:-1", allow_hyphen_values = true)]
    pub path: String,
    /// The road of road.xodr to drive (default: the first).
    #[arg(long)]
    pub road: Option<String>,
    /// Speed, m/s.
    #[arg(long, default_value_t = 10.0)]
    pub speed: f64,
    /// Start station, m (default: the lane's start in its driving direction).
    #[arg(long)]
    pub start: Option<f64>,
}
