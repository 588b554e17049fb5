//! The report as types: [`Report`] is report.json (serialised, its keys sorted) and what
//! report.html shows.

use super::Check;
use serde::Serialize;

/// What a build made, how well and how fast: report.json, and the text of report.html.
///
/// Lengths are in m unless a field's name says otherwise; shares (coverage, filled) are in
/// 0..=1. A NaN (no such value) is written as `null`.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The roadscan version that built it.
    pub roadscan: String,
    /// The inputs, as the manifest shows them (relative to the output when inside it).
    pub inputs: Vec<String>,
    /// The CRS of the products (EPSG:NNNN or a PROJ string), if known.
    pub crs: Option<String>,
    /// The CRS's name ("HD72 / EOV (EPSG:23700)"), if a CRS is known.
    pub crs_name: Option<String>,
    /// road.xodr: the surveyed road.
    pub road: RoadSummary,
    /// The axis fitted to a trajectory or the drive path (None: the axis was read).
    pub axis_fit: Option<AxisFitSummary>,
    /// The elevation and superelevation fits.
    pub profile: Profiles,
    /// The curbs found.
    pub curbs: Curbs,
    /// The marking lines found, by t.
    pub markings: Vec<Marking>,
    /// The potholes and manholes found.
    pub features: Vec<Feature>,
    /// The CRG grid and its tiles.
    pub crg: CrgSummary,
    /// The roadside voxels and their meshes.
    pub voxels: Voxels,
    /// The depth ribbons (None: none made).
    pub ribbons: Option<Ribbons>,
    /// The points read, and those near the road.
    pub points: Points,
    /// The checks of the products.
    pub checks: Vec<Check>,
    /// The passes' registration (None: not registered).
    pub registration: Option<RegistrationSummary>,
    /// Throughput and memory.
    pub performance: Performance,
    /// The build's stages and their times (up to the report).
    pub stages: Vec<StageTime>,
}

/// road.xodr as the report gives it.
#[derive(Debug, Clone, Serialize)]
pub struct RoadSummary {
    /// The file, relative to the output directory.
    pub file: String,
    /// The road's id.
    pub id: String,
    /// Its length, m.
    pub length: f64,
    /// The axis it was surveyed on (a file and road, or the trajectory fitted).
    pub axis: String,
    /// Its lane sections.
    pub lane_sections: Vec<LaneSection>,
    /// Its objects (potholes, manholes).
    pub objects: usize,
    /// The part of the axis road it is (absent: all of it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub part_of_axis: Option<AxisPart>,
}

/// A lane section: where it starts and its lanes.
#[derive(Debug, Clone, Serialize)]
pub struct LaneSection {
    /// Its start, m.
    pub s: f64,
    /// Its lanes beside the centre lane, left to right.
    pub lanes: Vec<LaneKind>,
}

/// A lane's id and type.
#[derive(Debug, Clone, Serialize)]
pub struct LaneKind {
    /// The lane's id (positive: left).
    pub id: i32,
    /// Its type (driving, border, ...), if given.
    #[serde(rename = "type")]
    pub kind: Option<String>,
}

/// The part of the axis road that road.xodr covers.
#[derive(Debug, Clone, Serialize)]
pub struct AxisPart {
    /// The axis road's id.
    pub road: String,
    /// From and to s of the axis road, m.
    pub s: [f64; 2],
    /// The margin added beyond the surveyed s, m.
    pub margin: f64,
    /// The same, in words.
    pub note: String,
}

/// How well the fitted axis fits.
#[derive(Debug, Clone, Serialize)]
pub struct AxisFitSummary {
    /// The tolerance it was fitted to, m.
    pub tolerance_m: f64,
    /// Largest distance of the vertices in plan view, m.
    pub max_m: f64,
    /// Root mean square distance in plan view, m.
    pub rms_m: f64,
    /// Each geometry record's fit.
    pub records: Vec<crate::axis::RecordSummary>,
    /// The elevation's fit, if one was fitted.
    pub elevation: Option<AxisElevation>,
}

/// How well a fitted axis's elevation fits.
#[derive(Debug, Clone, Serialize)]
pub struct AxisElevation {
    /// Its records.
    pub records: usize,
    /// Largest residual, m.
    pub max_m: f64,
    /// Root mean square residual, m.
    pub rms_m: f64,
}

/// The surveyed profiles.
#[derive(Debug, Clone, Serialize)]
pub struct Profiles {
    /// Cross-section rows with a road surface, and all rows.
    pub rows: [usize; 2],
    /// The elevation fit (None: no row had road points).
    pub elevation: Option<ProfileSummary>,
    /// The superelevation fit.
    pub superelevation: Option<ProfileSummary>,
}

/// How well a profile (elevation, m, or superelevation, rad) fits.
#[derive(Debug, Clone, Serialize)]
pub struct ProfileSummary {
    /// Its records.
    pub records: usize,
    /// Largest residual.
    pub max: f64,
    /// Root mean square residual.
    pub rms: f64,
    /// Samples left out as outliers.
    pub rejected: usize,
}

/// The curbs found, left and right.
#[derive(Debug, Clone, Serialize)]
pub struct Curbs {
    /// The left curb (None: none found).
    pub left: Option<CurbSummary>,
    /// The right curb.
    pub right: Option<CurbSummary>,
}

/// A curb.
#[derive(Debug, Clone, Serialize)]
pub struct CurbSummary {
    /// Median t, m.
    pub t: f64,
    /// Median height of the step, m.
    pub height: f64,
}

/// A marking line.
#[derive(Debug, Clone, Serialize)]
pub struct Marking {
    /// Median t, m.
    pub t: f64,
    /// Where it starts and ends, m.
    pub s: [f64; 2],
    /// "solid" or "broken".
    #[serde(rename = "type")]
    pub kind: String,
    /// Median width, m.
    pub width: f64,
    /// Dash and gap of a broken line, m.
    pub dash_gap: Option<[f64; 2]>,
}

/// A pothole or manhole.
#[derive(Debug, Clone, Serialize)]
pub struct Feature {
    /// "pothole" or "manhole".
    #[serde(rename = "type")]
    pub kind: String,
    /// Its centre along the road, m.
    pub s: f64,
    /// Its centre across, m.
    pub t: f64,
    /// Its extent along s, m.
    pub length: f64,
    /// Its extent across, m.
    pub width: f64,
    /// Its deepest point below the surface, m (negative: a lid standing proud).
    pub depth: f64,
}

/// The CRG grid.
#[derive(Debug, Clone, Serialize)]
pub struct CrgSummary {
    /// Its tiles.
    pub tiles: Vec<TileSummary>,
    /// Share of the nodes between the outermost lane borders with a height.
    pub coverage: f64,
    /// Nodes estimated from points.
    pub estimated: usize,
    /// Nodes filled along track.
    pub filled: usize,
    /// The points the grid saw.
    pub points: CrgPoints,
    /// What its heights are.
    pub z: String,
}

/// The points the CRG grid saw.
#[derive(Debug, Clone, Serialize)]
pub struct CrgPoints {
    /// Offered to it.
    pub offered: u64,
    /// Near the road.
    pub near: u64,
    /// Kept (on the road surface).
    pub kept: u64,
}

/// A CRG tile.
#[derive(Debug, Clone, Serialize)]
pub struct TileSummary {
    /// The tile, relative to the output directory.
    pub file: String,
    /// Its render.
    pub png: String,
    /// Its first and last u, m.
    pub u: [f64; 2],
    /// Its first and last v, m.
    pub v: [f64; 2],
    /// Its nodes along u and across v.
    pub nodes: [usize; 2],
    /// Share of its nodes with a height.
    pub coverage: f64,
}

/// The roadside voxels.
#[derive(Debug, Clone, Serialize)]
pub struct Voxels {
    /// Voxels meshed.
    pub count: usize,
    /// The OBJ mesh.
    pub obj: ObjFile,
    /// The glb (None: not written).
    pub glb: Option<GlbFile>,
}

/// The OBJ mesh of the voxels.
#[derive(Debug, Clone, Serialize)]
pub struct ObjFile {
    /// The file, relative to the output directory.
    pub file: String,
    /// Vertices written.
    pub vertices: usize,
    /// Faces written.
    pub faces: usize,
    /// Bytes written.
    pub bytes: u64,
}

/// The glb of the voxels.
#[derive(Debug, Clone, Serialize)]
pub struct GlbFile {
    /// The file, relative to the output directory.
    pub file: String,
    /// Bytes written.
    pub bytes: u64,
}

/// The depth ribbons.
#[derive(Debug, Clone, Serialize)]
pub struct Ribbons {
    /// Pixel size, m.
    pub cell: f64,
    /// Columns (along s).
    pub columns: usize,
    /// Rows (up).
    pub rows: usize,
    /// Share of the pixels with a depth, left and right.
    pub filled: Sides,
    /// The street view, relative to the output directory.
    pub street_view: String,
}

impl Ribbons {
    /// The summary of the roadside's ribbons, while it holds them.
    pub fn of(side: &pipeline::Roadside) -> Option<Ribbons> {
        side.ribbons.as_ref().map(|[l, r]| Ribbons {
            cell: l.cell,
            columns: l.ns,
            rows: l.nh,
            filled: Sides { left: l.filled(), right: r.filled() },
            street_view: "ribbons/street_view.png".into(),
        })
    }
}

/// A value left and right.
#[derive(Debug, Clone, Serialize)]
pub struct Sides {
    /// Left.
    pub left: f64,
    /// Right.
    pub right: f64,
}

/// The points of the roadside.
#[derive(Debug, Clone, Serialize)]
pub struct Points {
    /// Points read.
    pub read: u64,
    /// Points near the road (within the buffer and the s range).
    pub near_road: u64,
}

/// The passes' registration: the trajectory's vertical error taken off every point.
#[derive(Debug, Clone, Serialize)]
pub struct RegistrationSummary {
    /// What was done, in words.
    pub what: String,
    /// Places where passes saw the same ground.
    pub observations: usize,
    /// Of them, kept.
    pub kept: usize,
    /// RMS disagreement of the passes before, m.
    pub rms_disagreement_before_m: f64,
    /// RMS disagreement after, m.
    pub rms_disagreement_after_m: f64,
    /// Largest correction, m.
    pub max_correction_m: f64,
    /// Knot spacing of the correction, s (GPS time).
    pub knot_spacing_s: f64,
}

/// Throughput and memory of the build (run-dependent).
#[derive(Debug, Clone, Serialize)]
pub struct Performance {
    /// Points read.
    pub points_read: u64,
    /// The build's time up to the report, s; for a build in work units, every unit's time
    /// added up (as if run one after another).
    pub seconds: f64,
    /// Work units the build ran as (0: one build).
    pub work_units: usize,
    /// Time reading the points, s (summed over the units).
    pub reading_seconds: f64,
    /// Points read per second of the whole build.
    pub points_per_second: f64,
    /// Peak resident memory, MB (None: not known on this system).
    pub peak_rss_mb: Option<f64>,
    /// Threads available.
    pub threads: usize,
}

/// A stage of the build and its time.
#[derive(Debug, Clone, Serialize)]
pub struct StageTime {
    /// What the stage did.
    pub stage: String,
    /// Its time, s.
    pub seconds: f64,
}

impl Report {
    /// report.json's text: the report as JSON (keys sorted), pretty-printed, with a final
    /// newline.
    pub fn json(&self) -> serde_json::Result<Vec<u8>> {
        // Through a Value: its maps sort their keys, as report.json always had them.
        let mut text = serde_json::to_vec_pretty(&serde_json::to_value(self)?)?;
        text.push(b'\n');
        Ok(text)
    }

    /// The checks that failed.
    pub fn failed(&self) -> impl Iterator<Item = &Check> {
        self.checks.iter().filter(|c| !c.pass)
    }
}
