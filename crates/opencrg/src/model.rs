//! The OpenCRG data model: what a file says, before any preparation for evaluation.
//!
//! # Frames and units
//! CRG `u` along the reference line, `v` lateral (left positive), `x, y` map position of the
//! reference line, `z` heights; metres and radians.

/// The data formats of the standard (`#:` tag).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// Text, 10-character single-precision fields, 8 per 80-character line, rows start on a new line.
    Lrfi,
    /// Text, 20-character double-precision fields, 4 per line.
    Ldfi,
    /// Binary big-endian float32, rows back to back (the compact default).
    #[default]
    Krbi,
    /// Binary big-endian float64, rows back to back.
    Kdbi,
    /// Binary float32, every row padded to a multiple of 80 bytes.
    Lrbi,
    /// Binary float64, every row padded to a multiple of 80 bytes.
    Ldbi,
}

impl Format {
    /// The `#:` tag.
    pub fn tag(self) -> &'static str {
        match self {
            Format::Lrfi => "LRFI",
            Format::Ldfi => "LDFI",
            Format::Krbi => "KRBI",
            Format::Kdbi => "KDBI",
            Format::Lrbi => "LRBI",
            Format::Ldbi => "LDBI",
        }
    }
    /// Parses a tag (case-insensitive).
    pub fn from_tag(tag: &str) -> Option<Format> {
        match tag.trim().to_ascii_uppercase().as_str() {
            "LRFI" => Some(Format::Lrfi),
            "LDFI" => Some(Format::Ldfi),
            "KRBI" => Some(Format::Krbi),
            "KDBI" => Some(Format::Kdbi),
            "LRBI" => Some(Format::Lrbi),
            "LDBI" => Some(Format::Ldbi),
            _ => None,
        }
    }
    /// Text (formatted) rather than binary.
    pub fn is_text(self) -> bool {
        matches!(self, Format::Lrfi | Format::Ldfi)
    }
    /// Double rather than single precision.
    pub fn is_double(self) -> bool {
        matches!(self, Format::Ldfi | Format::Kdbi | Format::Ldbi)
    }
    /// Rows padded to whole 80-byte records.
    pub fn is_long(self) -> bool {
        !matches!(self, Format::Krbi | Format::Kdbi)
    }
    /// Width of one value in the data section, bytes.
    pub fn width(self) -> usize {
        match (self.is_text(), self.is_double()) {
            (true, false) => 10,
            (true, true) => 20,
            (false, false) => 4,
            (false, true) => 8,
        }
    }
}

/// `$ROAD_CRG` values as written; `None` where the file does not give one. Evaluation uses the
/// C-API's defaults for missing values (0, increments 0.01).
#[derive(Debug, Clone, Default, PartialEq)]
#[allow(missing_docs)]
pub struct RoadParams {
    pub start_u: Option<f64>,
    pub end_u: Option<f64>,
    pub increment: Option<f64>,
    pub v_right: Option<f64>,
    pub v_left: Option<f64>,
    pub v_increment: Option<f64>,
    pub start_x: Option<f64>,
    pub start_y: Option<f64>,
    pub start_phi: Option<f64>,
    pub end_x: Option<f64>,
    pub end_y: Option<f64>,
    pub end_phi: Option<f64>,
    pub start_z: Option<f64>,
    pub end_z: Option<f64>,
    /// Constant slope (m/m) at the start.
    pub start_slope: Option<f64>,
    pub end_slope: Option<f64>,
    /// Constant banking (m/m) at the start.
    pub start_bank: Option<f64>,
    pub end_bank: Option<f64>,
    /// `REFERENCE_LINE_OFFSET_X/Y/Z/PHI`: kept, ignored by evaluation (as by the C-API).
    pub offset: [Option<f64>; 4],
    /// Other lines of the block (e.g. WGS84 start/end), kept verbatim.
    pub other: Vec<String>,
}

/// Border behaviour outside the grid (`border_mode_u`, `border_mode_v`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BorderMode {
    /// 0: no value.
    None,
    /// 1: z = the border offset.
    Zero,
    /// 2: keep the last value (default).
    Keep,
    /// 3: repeat the grid periodically.
    Repeat,
    /// 4: mirror the grid.
    Reflect,
}

impl BorderMode {
    /// From the integer code of the standard.
    pub fn from_code(code: i64) -> Option<BorderMode> {
        Some(match code {
            0 => BorderMode::None,
            1 => BorderMode::Zero,
            2 => BorderMode::Keep,
            3 => BorderMode::Repeat,
            4 => BorderMode::Reflect,
            _ => return None,
        })
    }
    /// The integer code.
    pub fn code(self) -> i64 {
        self as i64
    }
}

/// Evaluation options (`$ROAD_CRG_OPTS`, or set by the caller). `None` = the default.
#[derive(Debug, Clone, Default, PartialEq)]
#[allow(missing_docs)]
pub struct Options {
    pub border_mode_u: Option<BorderMode>,
    pub border_mode_v: Option<BorderMode>,
    pub border_offset_u: Option<f64>,
    pub border_offset_v: Option<f64>,
    pub smooth_u_begin: Option<f64>,
    pub smooth_u_end: Option<f64>,
    /// `refline_continuation`: true = close the track (1), false = extrapolate (0).
    pub close_track: Option<bool>,
    /// `curv_mode` (API only): true = curvature at the lateral position v (default).
    pub curvature_lateral: Option<bool>,
    /// Other keys (search tuning, warnings, checks, logging), kept as written.
    pub other: Vec<(String, String)>,
}

/// `$ROAD_CRG_MODS`. `None` = not set.
#[derive(Debug, Clone, Default, PartialEq)]
#[allow(missing_docs)]
pub struct Modifiers {
    pub scale_z_grid: Option<f64>,
    pub scale_slope: Option<f64>,
    pub scale_banking: Option<f64>,
    pub scale_length: Option<f64>,
    pub scale_width: Option<f64>,
    pub scale_curvature: Option<f64>,
    /// 0 keep NaN, 1 set to the offset, 2 copy the nearest valid value in the cross section.
    pub grid_nan_mode: Option<i64>,
    pub grid_nan_offset: Option<f64>,
    pub refline_rotcenter_x: Option<f64>,
    pub refline_rotcenter_y: Option<f64>,
    pub refline_offset_phi: Option<f64>,
    pub refline_offset_x: Option<f64>,
    pub refline_offset_y: Option<f64>,
    pub refline_offset_z: Option<f64>,
    pub refpoint_u_fraction: Option<f64>,
    pub refpoint_u_offset: Option<f64>,
    pub refpoint_u: Option<f64>,
    pub refpoint_v_fraction: Option<f64>,
    pub refpoint_v_offset: Option<f64>,
    pub refpoint_v: Option<f64>,
    pub refpoint_x: Option<f64>,
    pub refpoint_y: Option<f64>,
    pub refpoint_z: Option<f64>,
    pub refpoint_phi: Option<f64>,
}

impl Modifiers {
    /// What a C-API data set carries when its file has no `$ROAD_CRG_MODS` block: NaN mode 2 and
    /// a reference point at the origin with heading 0 (crgOptionSetDefaultModifiers).
    pub fn c_api_default() -> Modifiers {
        Modifiers {
            grid_nan_mode: Some(2),
            refpoint_x: Some(0.0),
            refpoint_y: Some(0.0),
            refpoint_z: Some(0.0),
            refpoint_phi: Some(0.0),
            ..Default::default()
        }
    }

    /// The modifiers roadscan writes into grids it makes: fill holes for C-API users that apply
    /// modifiers (NaN mode 2), and nothing that moves the grid, so the placement in the file
    /// survives readers that apply modifiers (an absent block would move the grid to the origin,
    /// see the crate documentation).
    pub fn keep_placement() -> Modifiers {
        Modifiers { grid_nan_mode: Some(2), ..Default::default() }
    }

    /// (key, value) pairs in the order of the standard, for writing.
    pub fn entries(&self) -> Vec<(&'static str, f64)> {
        let mut out = Vec::new();
        let mut add = |k: &'static str, v: Option<f64>| {
            if let Some(v) = v {
                out.push((k, v));
            }
        };
        add("SCALE_Z_GRID", self.scale_z_grid);
        add("SCALE_SLOPE", self.scale_slope);
        add("SCALE_BANKING", self.scale_banking);
        add("SCALE_LENGTH", self.scale_length);
        add("SCALE_WIDTH", self.scale_width);
        add("SCALE_CURVATURE", self.scale_curvature);
        add("GRID_NAN_MODE", self.grid_nan_mode.map(|m| m as f64));
        add("GRID_NAN_OFFSET", self.grid_nan_offset);
        add("REFLINE_ROTCENTER_X", self.refline_rotcenter_x);
        add("REFLINE_ROTCENTER_Y", self.refline_rotcenter_y);
        add("REFLINE_OFFSET_PHI", self.refline_offset_phi);
        add("REFLINE_OFFSET_X", self.refline_offset_x);
        add("REFLINE_OFFSET_Y", self.refline_offset_y);
        add("REFLINE_OFFSET_Z", self.refline_offset_z);
        add("REFPOINT_U_FRACTION", self.refpoint_u_fraction);
        add("REFPOINT_U_OFFSET", self.refpoint_u_offset);
        add("REFPOINT_U", self.refpoint_u);
        add("REFPOINT_V_FRACTION", self.refpoint_v_fraction);
        add("REFPOINT_V_OFFSET", self.refpoint_v_offset);
        add("REFPOINT_V", self.refpoint_v);
        add("REFPOINT_X", self.refpoint_x);
        add("REFPOINT_Y", self.refpoint_y);
        add("REFPOINT_Z", self.refpoint_z);
        add("REFPOINT_PHI", self.refpoint_phi);
        out
    }
}

/// How the long sections' v positions are given.
#[derive(Debug, Clone, PartialEq)]
pub enum LongSections {
    /// `D:long section N,m`: v_i = V_RIGHT + i·V_INCREMENT (header values, defaults 0 and 0.01).
    Indexed(usize),
    /// `D:long section at v = X,m`: explicit positions, ascending.
    AtV(Vec<f64>),
}

impl LongSections {
    /// Number of long sections.
    pub fn len(&self) -> usize {
        match self {
            LongSections::Indexed(n) => *n,
            LongSections::AtV(v) => v.len(),
        }
    }
    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A whole CRG file.
#[derive(Debug, Clone, PartialEq)]
pub struct Crg {
    /// `$CT` lines.
    pub comment: Vec<String>,
    /// `$ROAD_CRG`.
    pub road: RoadParams,
    /// `$ROAD_CRG_OPTS`, if the file has the block.
    pub options: Option<Options>,
    /// `$ROAD_CRG_MODS`, if the file has the block (an empty block is `Some(default)`).
    pub modifiers: Option<Modifiers>,
    /// Other blocks kept verbatim (`$ROAD_CRG_MPRO`, ...): (block line, lines).
    pub other_blocks: Vec<(String, Vec<String>)>,
    /// Format the data were read in (or are to be written in by default).
    pub format: Format,
    /// The `U:` line, if any (a virtual channel for viewers).
    pub u_line: Option<String>,
    /// Long sections, in ascending v.
    pub long_sections: LongSections,
    /// Number of cross sections (rows, u positions).
    pub nu: usize,
    /// z grid, row-major: `z[iu * nv + iv]`, NaN = no data.
    pub z: Vec<f32>,
    /// Heading channel (rad), one per row; row 0 is replaced by START_PHI when evaluated.
    pub phi: Option<Vec<f64>>,
    /// Slope channel (m/m) of the interval ending at each row; row 0 unused.
    pub slope: Option<Vec<f64>>,
    /// Banking channel (m/m), per row.
    pub banking: Option<Vec<f64>>,
    /// Explicit reference line x, y channels (kept; the reference line is built from phi).
    pub xy: Option<(Vec<f64>, Vec<f64>)>,
    /// Explicit u channel (kept).
    pub u: Option<Vec<f64>>,
    /// Order of the data channels in the file (for writing back the same layout).
    pub channel_order: Vec<ChannelKind>,
}

/// One data column of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelKind {
    /// Long section number i (0-based, ascending v).
    LongSection(usize),
    /// Heading.
    Phi,
    /// Slope.
    Slope,
    /// Banking.
    Banking,
    /// Explicit x.
    X,
    /// Explicit y.
    Y,
    /// Explicit u.
    U,
}

impl Crg {
    /// Number of long sections.
    pub fn nv(&self) -> usize {
        self.long_sections.len()
    }
    /// z at grid node (iu, iv).
    pub fn z_at(&self, iu: usize, iv: usize) -> f32 {
        self.z[iu * self.nv() + iv]
    }
    /// u increment (header, default 0.01), m.
    pub fn du(&self) -> f64 {
        self.road.increment.unwrap_or(0.01)
    }
    /// u of the first cross section, m.
    pub fn u_first(&self) -> f64 {
        self.road.start_u.unwrap_or(0.0)
    }
    /// u of the last cross section, m.
    pub fn u_last(&self) -> f64 {
        self.u_first() + self.du() * (self.nu.max(1) - 1) as f64
    }
    /// v positions of the long sections as the C-API computes them, m.
    pub fn v_positions(&self) -> Vec<f64> {
        match &self.long_sections {
            LongSections::Indexed(n) => {
                let right = self.road.v_right.unwrap_or(0.0);
                let inc = self.road.v_increment.unwrap_or(0.01);
                (0..*n).map(|i| right + i as f64 * inc).collect()
            }
            LongSections::AtV(v) => v.clone(),
        }
    }

    /// A new grid with a straight or phi-defined reference line, long sections at uniform v,
    /// NaN-free metadata defaults, written with explicit placement (see [`Modifiers::keep_placement`]).
    ///
    /// `z` is row-major `nu x nv`; `phi` (if given) has one heading per row (row i = heading of
    /// the interval from row i-1 to i; row 0 ignored).
    #[allow(clippy::too_many_arguments)]
    pub fn new_grid(
        u_first: f64,
        du: f64,
        nu: usize,
        v_right: f64,
        dv: f64,
        nv: usize,
        start: (f64, f64, f64),
        phi: Option<Vec<f64>>,
        z: Vec<f32>,
    ) -> Crg {
        let (x0, y0, phi0) = start;
        let road = RoadParams {
            start_u: Some(u_first),
            end_u: Some(u_first + du * (nu.max(1) - 1) as f64),
            increment: Some(du),
            v_right: Some(v_right),
            v_left: Some(v_right + dv * (nv.max(1) - 1) as f64),
            v_increment: Some(dv),
            start_x: Some(x0),
            start_y: Some(y0),
            start_phi: Some(phi0),
            ..Default::default()
        };
        let mut channel_order = Vec::new();
        if phi.is_some() {
            channel_order.push(ChannelKind::Phi);
        }
        channel_order.extend((0..nv).map(ChannelKind::LongSection));
        let mut crg = Crg {
            comment: vec!["roadscan road surface grid".into()],
            road,
            options: None,
            modifiers: Some(Modifiers::keep_placement()),
            other_blocks: Vec::new(),
            format: Format::Krbi,
            u_line: None,
            long_sections: LongSections::Indexed(nv),
            nu,
            z,
            phi,
            slope: None,
            banking: None,
            xy: None,
            u: None,
            channel_order,
        };
        crg.set_end_pose();
        crg
    }

    /// Sets END_X, END_Y, END_PHI from the reference line the C-API integrates (Euler steps of
    /// du along each row's heading), so the C-API's backward/forward blending changes nothing.
    pub fn set_end_pose(&mut self) {
        let x0 = self.road.start_x.unwrap_or(0.0);
        let y0 = self.road.start_y.unwrap_or(0.0);
        let phi0 = self.road.start_phi.unwrap_or(0.0);
        let du = self.du();
        let (mut x, mut y, mut last_phi) = (x0, y0, phi0);
        match &self.phi {
            Some(phi) => {
                for &p in phi.iter().skip(1) {
                    x += du * p.cos();
                    y += du * p.sin();
                    last_phi = p;
                }
            }
            None => {
                let n = (self.nu.max(1) - 1) as f64;
                x = x0 + n * du * phi0.cos();
                y = y0 + n * du * phi0.sin();
            }
        }
        self.road.end_x = Some(x);
        self.road.end_y = Some(y);
        self.road.end_phi = Some(last_phi);
    }
}
