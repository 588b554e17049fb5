//! The roadside of a road from LAS/LAZ points: voxels (OBJ, glTF, CSV) and the two depth
//! ribbons with the street view (`roadscan voxel`, `roadscan ribbons` and `build`).

use crate::inputs::Inputs;
use crate::json_str;
use crate::progress::{Note, Progress};
use anyhow::{bail, Context, Result};
use pipeline::{PointColumns, RibbonOptions, Roadside, RoadsideBuilder, RoadsideOptions, SurfaceDatum};
use std::io::Write;
use std::path::{Path, PathBuf};
use voxel::{Colouring, Mesh};

/// A road and the points along it.
#[derive(Debug, Clone)]
pub struct RoadInputs {
    /// OpenDRIVE file with the road whose reference line is the frame (s, t).
    pub axis: PathBuf,
    /// Road id in the axis file (default: its first road).
    pub road: Option<String>,
    /// CRS of inputs whose files name none; inputs in another CRS than the axis file's
    /// geoReference (without one: the first input's) are reprojected to it.
    pub crs: Option<String>,
    /// LAS/LAZ files (read in the order given).
    pub input: Vec<PathBuf>,
    /// Keep points within this distance of the reference line (|t|), m.
    pub buffer: f64,
    /// Part of the road, m of s (default: all of it).
    pub s_range: Option<(f64, f64)>,
}

impl RoadInputs {
    /// The road of `odr` these inputs name.
    pub fn road<'a>(&self, odr: &'a opendrive::OpenDrive) -> Result<&'a opendrive::Road> {
        match &self.road {
            Some(id) => odr.road(id).with_context(|| format!("{}: no road with id '{id}'", self.axis.display())),
            None => odr.roads.first().with_context(|| format!("{}: no roads", self.axis.display())),
        }
    }

    /// Every file read (never to be written over).
    pub fn files(&self) -> Vec<PathBuf> {
        std::iter::once(self.axis.clone()).chain(self.input.iter().cloned()).collect()
    }

    /// Opens the inputs against the axis file `odr` (read from `self.axis`).
    pub fn open<'p>(&self, odr: &opendrive::OpenDrive, progress: &'p dyn Progress) -> Result<Inputs<'p>> {
        Inputs::open(odr, &self.axis, self.crs.as_deref(), &self.input, progress)
    }
}

/// What `voxel` makes: an OBJ (its MTL, a JSON sidecar and a CSV of the voxels beside it),
/// and optionally binary glTF.
#[derive(Debug, Clone)]
pub struct VoxelConfig {
    /// The road and its points.
    pub road: RoadInputs,
    /// The OBJ file.
    pub out: PathBuf,
    /// The glb file, if any.
    pub glb: Option<PathBuf>,
    /// Voxel size, m.
    pub size: f64,
    /// Face colours: class, intensity, height or rgb.
    pub colour: String,
    /// Local origin of the voxels in the map frame (default: the road's start rounded down).
    pub origin: Option<[f64; 3]>,
}

/// What `voxel` wrote.
#[derive(Debug)]
pub struct VoxelDone {
    /// The voxels and their meshes.
    pub summary: VoxelSummary,
    /// Points read, and kept within the buffer.
    pub points: pipeline::RoadsidePoints,
}

/// What `ribbons` makes: a directory of depth, intensity and colour images per side, the
/// street view and a JSON sidecar.
#[derive(Debug, Clone)]
pub struct RibbonsConfig {
    /// The road and its points.
    pub road: RoadInputs,
    /// The output directory.
    pub out: PathBuf,
    /// Pixel size, m.
    pub cell: f64,
    /// Heights covered, m above the road surface.
    pub h_range: (f64, f64),
    /// Leave out points nearer than this to the reference line (|t|), m.
    pub min_depth: f64,
}

/// What `ribbons` wrote.
#[derive(Debug)]
pub struct RibbonsDone {
    /// Pixels along s and along h of each side.
    pub columns: usize,
    /// Pixels along h.
    pub rows: usize,
    /// Share of pixels filled, left and right.
    pub filled: (f64, f64),
    /// Points read, and kept within the buffer.
    pub points: pipeline::RoadsidePoints,
}

/// Reads the inputs along the road into the roadside products.
pub fn build(r: &RoadInputs, opts: RoadsideOptions, progress: &dyn Progress) -> Result<(Roadside, InputInfo)> {
    build_above(r, opts, progress, None)
}

/// [`build`], with heights measured above `datum` (the road surface found in the points)
/// instead of the axis' elevation profile.
fn build_above(
    r: &RoadInputs,
    opts: RoadsideOptions,
    progress: &dyn Progress,
    datum: Option<SurfaceDatum>,
) -> Result<(Roadside, InputInfo)> {
    let odr = opendrive::read_file(&r.axis)?;
    let road = r.road(&odr)?;
    let inputs = r.open(&odr, progress)?;
    let info = InputInfo { crs: inputs.crs.clone(), road: road.id.clone() };
    let opts = RoadsideOptions { points_box: inputs.points_box(), ..opts };
    let mut b = RoadsideBuilder::new(road, odr.header.offset, &opts)
        .map_err(|e| anyhow::anyhow!("{}: road {}: {e}", r.axis.display(), road.id))?;
    if let Some(d) = datum {
        b = b.with_datum(d);
    }
    inputs.stream(|p| {
        let rgb = (!p.rgb.is_empty()).then_some(p.rgb.as_slice());
        let cols = PointColumns { x: &p.x, y: &p.y, z: &p.z, intensity: &p.intensity, class: &p.class, rgb };
        b.add(cols).map_err(anyhow::Error::from)
    })?;
    Ok((b.finish().map_err(anyhow::Error::msg)?, info))
}

/// What the verbs report of the inputs.
#[derive(Debug, Clone)]
pub struct InputInfo {
    /// The CRS of the points: its label (EPSG:NNNN or a PROJ string) and OGC WKT where known.
    pub crs: Option<(String, Option<String>)>,
    /// The road's id.
    pub road: String,
}

/// Makes the voxels `c` asks for; every file is staged and put in place at the end (an error
/// leaves none of them).
pub fn voxel(c: &VoxelConfig, progress: &dyn Progress) -> Result<VoxelDone> {
    let size = crate::config::within("size", c.size, 0.01, 100.0)?;
    crate::config::within("buffer", c.road.buffer, 0.1, 1000.0)?;
    let all = [Colouring::Class, Colouring::Intensity, Colouring::Height, Colouring::Rgb];
    let Some(colouring) = all.into_iter().find(|k| k.name() == c.colour) else {
        bail!("--colour must be class, intensity, height or rgb, got {}", c.colour)
    };
    if c.out.extension().and_then(|e| e.to_str()) != Some("obj") {
        bail!("--out must name an .obj file, got {}", c.out.display());
    }
    let outputs = crate::staging::Outputs::new(c.road.files());
    let obj_out = outputs.file(&c.out)?;
    outputs.file(&c.out.with_extension("mtl"))?;
    outputs.file(&c.out.with_extension("json"))?;
    outputs.file(&sibling(&c.out, ".voxels.csv"))?;
    let glb_out = c
        .glb
        .as_deref()
        .map(|p| crate::staging::with_extension("--glb", p, &["glb"]).and_then(|p| outputs.file(p)))
        .transpose()?;
    let opts = RoadsideOptions {
        buffer: c.road.buffer,
        s_range: c.road.s_range,
        voxel_size: Some(size),
        origin: c.origin,
        ribbons: None,
        sections: None,
        part: None,
        points_box: None,

        clip_to_points: false,
    };
    let (side, info) = build(&c.road, opts, progress)?;
    let out = VoxelOut { obj: &obj_out, glb: glb_out.as_deref(), colouring, axis: &c.road.axis };
    let summary = write_voxels(&side, &info, &out, c.road.buffer)?;
    outputs.commit()?;
    Ok(VoxelDone { summary, points: side.points })
}

/// Where and how `write_voxels` writes.
#[derive(Debug)]
pub struct VoxelOut<'a> {
    /// The OBJ file (its MTL, JSON sidecar and CSV beside it).
    pub obj: &'a Path,
    /// The glb file, if any.
    pub glb: Option<&'a Path>,
    /// The faces' colours.
    pub colouring: Colouring,
    /// The axis file, for the sidecar.
    pub axis: &'a Path,
}

/// What `write_voxels` wrote.
#[derive(Debug)]
pub struct VoxelSummary {
    /// Voxels meshed.
    pub voxels: usize,
    /// The OBJ's vertices, faces and bytes.
    pub obj: voxel::MeshStats,
    /// The glb's, if written.
    pub glb: Option<voxel::MeshStats>,
    /// Meshing and writing, s.
    pub secs: f64,
}

/// The voxels of `side` as OBJ + MTL (and glb), with the JSON sidecar and the CSV of voxels.
pub fn write_voxels(side: &Roadside, info: &InputInfo, o: &VoxelOut<'_>, buffer: f64) -> Result<VoxelSummary> {
    let t_mesh = std::time::Instant::now();
    let Some(grid) = &side.grid else { bail!("no voxel grid was built") };
    if grid.is_empty() {
        bail!("no points within {} m of road {} (check the axis, the road id and the CRS)", buffer, info.road);
    }
    let mesh = Mesh::from_grid(grid);
    let palette = voxel::Palette::new(&mesh, o.colouring)?;
    let obj = voxel::write_obj(&mesh, &palette, o.obj)?;
    let glb = match &o.glb {
        Some(p) => {
            let crs = info.crs.as_ref().map(|c| json_str(&c.0));
            Some(voxel::write_glb(&mesh, &palette, p, crs.as_deref())?)
        }
        None => None,
    };
    // The voxels as CSV: index, centre (map), count, intensity, colour, class, s, t.
    let csv = sibling(o.obj, ".voxels.csv");
    let stations = side.stations(mesh.voxels.iter().map(|(idx, _)| mesh.lattice.centre(*idx)));
    voxel::write_csv(&mesh, &stations, &csv)?;
    let origin = mesh.lattice.origin();
    let (crs, wkt) = info
        .crs
        .clone()
        .map_or(("null".into(), "null".into()), |(l, w)| (json_str(&l), w.map_or("null".into(), |w| json_str(&w))));
    let name = |p: &Path| json_str(&p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default());
    let json = format!(
        "{{\n  \"origin\": [{}, {}, {}],\n  \"crs\": {crs},\n  \"crs_wkt\": {wkt},\n  \"voxel_size\": {},\n  \"frame\": \"local map frame: x east, y north, z up, metres, map minus origin; voxel (i, j, k) spans origin + [i, j, k] * size to origin + [i+1, j+1, k+1] * size\",\n  \"axis\": {},\n  \"road\": {},\n  \"buffer\": {},\n  \"s_range\": [{}, {}],\n  \"colouring\": \"{}\",\n  \"points\": {{\"read\": {}, \"kept\": {}}},\n  \"voxels\": {},\n  \"obj\": {{\"file\": {}, \"vertices\": {}, \"faces\": {}, \"bytes\": {}}},\n  \"glb\": {},\n  \"csv\": {}\n}}\n",
        origin[0],
        origin[1],
        origin[2],
        mesh.lattice.size(),
        json_str(&o.axis.display().to_string()),
        json_str(&info.road),
        buffer,
        side.s_range.0,
        side.s_range.1,
        o.colouring.name(),
        side.points.offered,
        side.points.kept,
        mesh.voxels.len(),
        name(o.obj),
        obj.vertices,
        obj.faces,
        obj.bytes,
        match (&o.glb, &glb) {
            (Some(p), Some(g)) => format!(
                "{{\"file\": {}, \"vertices\": {}, \"triangles\": {}, \"bytes\": {}}}",
                name(p),
                g.vertices,
                2 * g.faces,
                g.bytes
            ),
            _ => "null".into(),
        },
        name(&csv)
    );
    voxel::write_atomic(&o.obj.with_extension("json"), |w| w.write_all(json.as_bytes()))?;
    Ok(VoxelSummary { voxels: mesh.voxels.len(), obj, glb, secs: t_mesh.elapsed().as_secs_f64() })
}

/// `path` with its extension replaced by `suffix` (which starts with a dot).
fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!("{stem}{suffix}"))
}

/// Makes the ribbons `a` asks for into its directory (staged, put in place at the end).
pub fn ribbons(a: &RibbonsConfig, progress: &dyn Progress) -> Result<RibbonsDone> {
    let cell = crate::config::within("cell", a.cell, 0.005, 10.0)?;
    crate::config::within("buffer", a.road.buffer, 0.1, 1000.0)?;
    let (h0, h1) = a.h_range;
    if !(h0 >= -1000.0 && h1 <= 1000.0) {
        bail!("--h-range must lie within -1000..1000 m, got {h0}..{h1}");
    }
    if !(a.min_depth.is_finite() && a.min_depth >= 0.0 && a.min_depth < a.road.buffer) {
        bail!("--min-depth must be between 0 and --buffer, got {}", a.min_depth);
    }
    let ropts = RibbonOptions { cell, h_range: a.h_range, min_depth: a.min_depth };
    let opts = RoadsideOptions {
        buffer: a.road.buffer,
        s_range: a.road.s_range,
        voxel_size: None,
        origin: None,
        ribbons: Some(ropts),
        sections: None,
        part: None,
        points_box: None,

        clip_to_points: false,
    };
    let outputs = crate::staging::Outputs::new(a.road.files());
    let staged = outputs.dir(&a.out, "ribbons.json")?;
    // Heights are above the axis' elevation where it is the road surface the points show
    // (within half a cell, at least 0.1 m); where it is missing or off, the points are read
    // again with heights above the surface found (issue 23: an OSM way, a 2-D polyline or an
    // axis in another height datum gave empty images).
    let zero = (cell / 2.0).max(0.1);
    let (mut side, mut info) = build(&a.road, opts.clone(), progress)?;
    let mut datum = None;
    if let Some(found) = side.surface_found(zero).filter(|d| !d.is_zero()) {
        let (lo, hi) = found.range();
        progress.note(&Note::Info(format!(
            "the road surface in the points near the reference line lies {} above the axis' elevation ({} slabs of 2 m): the heights of the ribbons are measured above that surface (reading the points again)",
            if (hi - lo) < 0.01 { format!("{lo:.2} m") } else { format!("{lo:.2}..{hi:.2} m") },
            found.slabs()
        )));
        (side, info) = build_above(&a.road, opts, progress, Some(found.clone()))?;
        datum = Some(found);
    }
    check_filled(&side, a)?;
    // Without --s-range, the columns where the points are and 2 m (as build's part; in the
    // axis road's s): a survey of part of a long road gives no street view squeezed into the
    // road's whole length.
    if let (None, Some((lo, hi)), Some(ribbons)) = (a.road.s_range, side.s_seen(), side.ribbons.as_mut()) {
        let range = (lo - crate::build::PART_MARGIN, hi + crate::build::PART_MARGIN);
        for r in ribbons.iter_mut() {
            *r = r.cropped(range, 0.0);
        }
    }
    let Some([left, right]) = &side.ribbons else { bail!("no ribbons were built") };
    write_ribbons_above(&side, &info, &staged, cell, &a.road.axis, datum.as_ref())?;
    outputs.commit()?;
    Ok(RibbonsDone { columns: left.ns, rows: left.nh, filled: (left.filled(), right.filled()), points: side.points })
}

/// Share of a ribbon's pixels over the points' s range, and of the points kept landing in
/// it, below both of which it is an error: nothing of the roadside landed in its heights.
const MIN_FILLED: f64 = 0.05;

/// An error when a ribbon came out (nearly) empty over the s range of the points: the points
/// lie beside the ribbons' heights or away from the axis, which an exit 0 with blank images
/// hid.
fn check_filled(side: &Roadside, a: &RibbonsConfig) -> Result<()> {
    let Some([left, right]) = &side.ribbons else { bail!("no ribbons were built") };
    let hint = "check the axis (its position and its elevation: --h-range is in m above the road surface), the road id and the CRS";
    let Some(seen) = side.s_seen() else {
        bail!(
            "{}: no ribbons: none of the {} points lies within --buffer {} m of the reference line: {hint}",
            a.out.display(),
            side.points.offered,
            a.road.buffer
        );
    };
    for rib in [left, right] {
        // A flat open roadside fills few pixels with many points (the ground, edge on): empty
        // is few pixels and few of the points kept.
        let filled = rib.filled_within(seen);
        if filled < MIN_FILLED && (rib.points() as f64) < MIN_FILLED * side.points.kept as f64 {
            bail!(
                "{}: the {} ribbon is nearly empty ({:.1} % of its pixels over s {:.1}..{:.1} m, where the points are, filled; {} of the {} points kept fell within --h-range {}..{} m): {hint}",
                a.out.display(),
                rib.side.name(),
                100.0 * filled,
                seen.0,
                seen.1,
                rib.points(),
                side.points.kept,
                a.h_range.0,
                a.h_range.1
            );
        }
    }
    Ok(())
}

/// The ribbons of `side` into the directory `out` (created): depth and intensity images per
/// side, the street view and the JSON sidecar.
pub fn write_ribbons(side: &Roadside, info: &InputInfo, out: &Path, cell: f64, axis: &Path) -> Result<()> {
    write_ribbons_above(side, info, out, cell, axis, None)
}

/// [`write_ribbons`] of ribbons whose heights are above `datum`, the road surface found in the
/// points, where the sidecar says so.
fn write_ribbons_above(
    side: &Roadside,
    info: &InputInfo,
    out: &Path,
    cell: f64,
    axis: &Path,
    datum: Option<&SurfaceDatum>,
) -> Result<()> {
    let Some([left, right]) = &side.ribbons else { bail!("no ribbons were built") };
    std::fs::create_dir_all(out).with_context(|| format!("{}: cannot create the directory", out.display()))?;
    let mut files = Vec::new();
    for rib in [left, right] {
        let n = rib.side.name();
        let p = |f: &str| out.join(format!("{n}_{f}"));
        rib.write_depth_png(&p("depth.png"))?;
        rib.write_depth_tiff(&p("depth.tif"))?;
        rib.write_intensity_png(&p("intensity.png"))?;
        files.extend([format!("{n}_depth.png"), format!("{n}_depth.tif"), format!("{n}_intensity.png")]);
        if rib.has_rgb() {
            rib.write_rgb_png(&p("rgb.png"))?;
            files.push(format!("{n}_rgb.png"));
        }
    }
    let caption = format!("road {} s {:.0}..{:.0} m, {} m cells", info.road, side.s_range.0, side.s_range.1, cell);
    voxel::ribbon::write_street_view(left, right, &out.join("street_view.png"), &caption)?;
    files.push("street_view.png".into());
    let crs = info.crs.as_ref().map_or("null".into(), |c| json_str(&c.0));
    let height_datum = match datum {
        None => "\"h = z in the axis file's frame minus the road's elevation profile at s (superelevation not applied)\",\n  \"surface_found\": null".to_string(),
        Some(d) => {
            let (lo, hi) = d.range();
            format!(
                "\"h = z in the axis file's frame minus the road surface found in the points within 2 m of the reference line (each 2 m slab's lowest dense layer of heights, a Theil-Sen line through five slabs', linear between slab middles), since the axis' elevation profile is missing or off\",\n  \"surface_found\": {{\"slabs\": {}, \"above_elevation_m\": [{lo}, {hi}]}}",
                d.slabs()
            )
        }
    };
    let json = format!(
        "{{\n  \"axis\": {},\n  \"road\": {},\n  \"crs\": {crs},\n  \"s0\": {},\n  \"cell\": {cell},\n  \"columns\": {},\n  \"rows\": {},\n  \"h_top\": {},\n  \"h_bottom\": {},\n  \"height_datum\": {height_datum},\n  \"layout\": \"row 0 = highest h (h_top - cell/2 at its centre), column 0 = s0 (s0 + cell/2 at its centre), s growing to the right on both sides\",\n  \"depth\": \"|t|, distance from the reference line on that side (left t > 0, right t < 0), of the nearest point in the pixel; PNG: uint16 millimetres, 0 = empty; TIFF: float32 metres, NaN = empty\",\n  \"depth_range\": [{}, {}],\n  \"points\": {{\"read\": {}, \"kept\": {}, \"left\": {}, \"right\": {}}},\n  \"filled\": {{\"left\": {:.4}, \"right\": {:.4}}},\n  \"files\": [{}]\n}}\n",
        json_str(&axis.display().to_string()),
        json_str(&info.road),
        left.s0,
        left.ns,
        left.nh,
        left.h_top(),
        left.h0,
        left.depth_range.0,
        left.depth_range.1,
        side.points.offered,
        side.points.kept,
        left.points(),
        right.points(),
        left.filled(),
        right.filled(),
        files.iter().map(|f| json_str(f)).collect::<Vec<_>>().join(", ")
    );
    voxel::write_atomic(&out.join("ribbons.json"), |w| w.write_all(json.as_bytes()))?;
    Ok(())
}
