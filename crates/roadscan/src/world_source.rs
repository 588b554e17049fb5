//! A world to cast, loaded from what a build wrote: the road's OpenDRIVE surface, its CRG tiles
//! at full detail, the roadside voxels.
//!
//! The world's frame is road.xodr's file frame (map minus the header `<offset>`).
//! - Each `<surface><CRG>` record (attached or attached0) becomes a [`world::Heightfield`], its
//!   road marks painted on it.
//! - Where no CRG lies, the road.xodr surface is meshed in 0.5 m x 0.25 m cells between the
//!   outermost lane borders, and a 15 m band of ground continues it level on each side.
//! - The roadside is `scene.voxels.csv` (with `scene.json`): every exposed face of a voxel of a
//!   class above the ground (buildings, vegetation, poles, cars, people), so 1 m voxels stand
//!   where the build found points. Ground, road, marking, sidewalk and curb voxels are left out:
//!   the surfaces above cover them exactly.

use anyhow::{anyhow, bail, Context, Result};
use opendrive::{OpenDrive, RoadEval};
use std::path::{Path, PathBuf};
use world::{CrgLink, Heightfield, MaterialTable, Part, Tag, TriMesh, World, V3};

/// A designed scene (re-exported for callers that make worlds of them).
pub use sim::Scene;

/// What a loaded world holds.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct WorldStats {
    /// CRG tiles cast as heightfields.
    pub crg_tiles: usize,
    /// Their cells (two triangles each).
    pub crg_cells: usize,
    /// Their nodes without a height.
    pub crg_holes: usize,
    /// Triangles of the OpenDRIVE surface and ground where no CRG lies.
    pub surface_triangles: usize,
    /// Voxels of the roadside.
    pub voxels: usize,
    /// Triangles of their exposed faces.
    pub voxel_triangles: usize,
    /// Memory of the heightfields, bytes.
    pub heightfield_bytes: usize,
    /// Input points read for the surfels.
    pub points: u64,
    /// Surfels (two triangles each).
    pub surfels: usize,
}

/// A world and the road file it was made from.
#[derive(Debug)]
pub struct Loaded {
    /// road.xodr as read.
    pub odr: OpenDrive,
    /// The world, in road.xodr's file frame.
    pub world: World,
    /// What it holds.
    pub stats: WorldStats,
}

/// How a build's roadside is modelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Roadside {
    /// Surfels: a plane fitted to the build's input points in each 10 cm cell of at least 3
    /// points off the road surface, a square 20 % wider than the cell (no cracks between
    /// neighbours), tagged by the points' majority class.
    #[default]
    Points,
    /// The build's voxels (`scene.voxels.csv`), their exposed faces: coarse (1 m by default).
    Voxels,
    /// Nothing beside the road.
    None,
}

/// The world of the build in `dir` with its roadside from its voxels.
pub fn from_build(dir: &Path) -> Result<Loaded> {
    from_build_with(dir, Roadside::Voxels)
}

/// The world of the build in `dir`, its roadside as `roadside` says.
pub fn from_build_with(dir: &Path, roadside: Roadside) -> Result<Loaded> {
    let xodr = dir.join("road.xodr");
    if !xodr.is_file() {
        bail!(
            "{}: no road.xodr here; --world takes the output directory of `roadscan build` or `roadscan demo`",
            dir.display()
        );
    }
    let odr = opendrive::read_file(&xodr).with_context(|| format!("reading {}", xodr.display()))?;
    if odr.roads.is_empty() {
        // The place: the root element, which holds no <road>.
        let text = std::fs::read_to_string(&xodr).unwrap_or_default();
        let line = text.lines().position(|l| l.contains("<OpenDRIVE")).map_or(1, |n| n + 1);
        bail!("{}: line {line}: <OpenDRIVE> holds no <road>; a world needs one to drive on", xodr.display());
    }
    let materials = MaterialTable::standard();
    let tag = |name: &str, class: u8| Tag { material: materials.id_or_first(name), class, object: 0 };
    let mut parts = Vec::new();
    let mut stats = WorldStats::default();
    // (road index, s0, s1, v0, v1) in road s and t, where a CRG lies.
    let mut covered: Vec<(usize, f64, f64, f64, f64)> = Vec::new();
    for (ri, road) in odr.roads.iter().enumerate() {
        let eval = RoadEval::new(road);
        for link in &road.surface.crgs {
            if link.purpose.as_deref().is_some_and(|p| p != "elevation") {
                continue;
            }
            let path = resolve(&xodr, &link.file);
            let l = CrgLink::of(link)
                .with_context(|| format!("{}: road {} <CRG file=\"{}\">", xodr.display(), road.id, link.file))?;
            let crg = opencrg::read_file(&path).with_context(|| {
                format!("{}: road {} <CRG file=\"{}\">: reading {}", xodr.display(), road.id, link.file, path.display())
            })?;
            let surf =
                opencrg::Surface::from_owned(crg, true).with_context(|| format!("preparing {}", path.display()))?;
            let mut hf = Heightfield::new(&eval, &l, &surf, tag("asphalt", 11))
                .with_context(|| format!("{}: laying it on road {}", path.display(), road.id))?;
            let lines = opendrive::eval::marks::paint_lines(road, (l.s_start, l.s_end));
            hf.paint(&eval, &l, &surf, &lines, tag("paint", 11));
            let st = hf.stats();
            stats.crg_tiles += 1;
            stats.crg_cells += st.cells;
            stats.crg_holes += st.holes;
            stats.heightfield_bytes += st.bytes;
            let (v0, v1) = surf.v_range();
            let sign = if l.same { 1.0 } else { -1.0 };
            let (t0, t1) = (sign * v0 + l.t_offset, sign * v1 + l.t_offset);
            covered.push((ri, l.s_start, l.s_end, t0.min(t1), t0.max(t1)));
            parts.push(Part::Heightfield(hf));
        }
    }
    for (ri, road) in odr.roads.iter().enumerate() {
        let mine: Vec<_> = covered.iter().filter(|c| c.0 == ri).collect();
        let mesh = surface_mesh(&RoadEval::new(road), &mine, tag("asphalt", 11), tag("gravel", 2))?;
        stats.surface_triangles += mesh.len();
        if !mesh.is_empty() {
            parts.push(Part::Mesh(mesh));
        }
    }
    match roadside {
        Roadside::Voxels => {
            if let Some(mesh) = voxel_mesh(dir, &odr, &materials, &mut stats)? {
                parts.push(Part::Mesh(mesh));
            }
        }
        Roadside::Points => {
            // The road's own surfaces first: points on them are left out of the surfels.
            let road_only = World::new(parts.clone(), materials.clone());
            if let Some(mesh) = surfel_mesh(dir, &odr, &road_only, &materials, &mut stats)? {
                parts.push(Part::Mesh(mesh));
            }
        }
        Roadside::None => {}
    }
    Ok(Loaded { world: World::new(parts, materials), odr, stats })
}

/// Material of an ASPRS or survey class.
fn class_material(class: u8) -> &'static str {
    match class {
        6 => "facade",
        3..=5 => "foliage",
        66 => "steel",
        67 => "car paint",
        69 => "cloth",
        2 => "gravel",
        _ => "concrete",
    }
}

/// Surfels of the build's input points (the manifest's inputs), in the world's frame.
fn surfel_mesh(
    dir: &Path,
    odr: &OpenDrive,
    road: &World,
    materials: &MaterialTable,
    stats: &mut WorldStats,
) -> Result<Option<TriMesh>> {
    const CELL: f64 = 0.1;
    let manifest = dir.join("manifest.json");
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&manifest).with_context(|| format!("reading {}", manifest.display()))?)
            .with_context(|| format!("{}: not JSON", manifest.display()))?;
    let inputs: Vec<PathBuf> = m["inputs"]
        .as_array()
        .map(|a| a.iter().filter_map(|e| e["path"].as_str()).map(|p| dir.join(p)).collect())
        .unwrap_or_default();
    let place = odr.header.offset.map(|o| o.placement());
    // Per cell: count, sums of x, y, z and of their products (about the cell's corner), classes.
    #[derive(Default, Clone)]
    struct Acc {
        n: u32,
        s: [f64; 3],
        ss: [f64; 6],
        classes: std::collections::BTreeMap<u8, u32>,
    }
    let mut cells: std::collections::HashMap<(i64, i64, i64), Acc> = std::collections::HashMap::new();
    let mut pts = scan::Points::default();
    for (n, path) in inputs.iter().enumerate() {
        if !path.is_file() {
            bail!(
                "{}: inputs[{n}]: the build's input {} is gone; --roadside voxels or none work without it",
                manifest.display(),
                path.display()
            );
        }
        let what = || format!("{}: inputs[{n}]: reading {}", manifest.display(), path.display());
        let mut r = scan::LasReader::open(path).with_context(what)?;
        while r.read(&mut pts, 1 << 16).with_context(what)? > 0 {
            for i in 0..pts.len() {
                let map = [pts.x[i], pts.y[i], pts.z[i]];
                let p = match &place {
                    Some(pl) => pl.to_file(map),
                    None => map,
                };
                if !p.iter().all(|c| c.is_finite()) {
                    continue;
                }
                stats.points += 1;
                // On the road's surface (within 5 cm of it): the heightfields have it.
                let probe = world::Ray { t_max: 0.1, ..world::Ray::new([p[0], p[1], p[2] + 0.05], [0.0, 0.0, -1.0]) };
                if road.cast(&probe).is_some_and(|h| h.class == 11) {
                    continue;
                }
                let key = ((p[0] / CELL).floor() as i64, (p[1] / CELL).floor() as i64, (p[2] / CELL).floor() as i64);
                let a = cells.entry(key).or_default();
                let q = [p[0] - key.0 as f64 * CELL, p[1] - key.1 as f64 * CELL, p[2] - key.2 as f64 * CELL];
                a.n += 1;
                a.s.iter_mut().zip(q).for_each(|(s, q)| *s += q);
                for (k, (i, j)) in [(0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2)].iter().enumerate() {
                    a.ss[k] += q[*i] * q[*j];
                }
                *a.classes.entry(pts.class[i]).or_default() += 1;
            }
        }
    }
    let mut keys: Vec<_> = cells.keys().copied().filter(|k| cells[k].n >= 3).collect();
    keys.sort_unstable();
    let mut mb = MeshBuilder::default();
    for key in keys {
        let a = &cells[&key];
        let n = a.n as f64;
        let c = [a.s[0] / n, a.s[1] / n, a.s[2] / n];
        let cov = [
            [a.ss[0] / n - c[0] * c[0], a.ss[3] / n - c[0] * c[1], a.ss[4] / n - c[0] * c[2]],
            [a.ss[3] / n - c[0] * c[1], a.ss[1] / n - c[1] * c[1], a.ss[5] / n - c[1] * c[2]],
            [a.ss[4] / n - c[0] * c[2], a.ss[5] / n - c[1] * c[2], a.ss[2] / n - c[2] * c[2]],
        ];
        let normal = smallest_eigenvector(cov);
        let centre = [key.0 as f64 * CELL + c[0], key.1 as f64 * CELL + c[1], key.2 as f64 * CELL + c[2]];
        // Two directions in the plane, the square 1.2 cells wide.
        let helper = if normal[2].abs() < 0.9 { [0.0, 0.0, 1.0] } else { [1.0, 0.0, 0.0] };
        let u = unit(cross(normal, helper));
        let v = cross(normal, u);
        let h = 0.6 * CELL;
        let at = |a: f64, b: f64| {
            [
                centre[0] + h * (a * u[0] + b * v[0]),
                centre[1] + h * (a * u[1] + b * v[1]),
                centre[2] + h * (a * u[2] + b * v[2]),
            ]
        };
        let class = a.classes.iter().max_by_key(|(c, n)| (**n, std::cmp::Reverse(**c))).map_or(1, |(c, _)| *c);
        let tag = Tag { material: materials.id_or_first(class_material(class)), class, object: 0 };
        mb.quad(at(-1.0, -1.0), at(1.0, -1.0), at(1.0, 1.0), at(-1.0, 1.0), tag);
    }
    stats.surfels = mb.len() / 2;
    if mb.len() == 0 {
        return Ok(None);
    }
    Ok(Some(mb.finish()?))
}

fn cross(a: V3, b: V3) -> V3 {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

fn unit(a: V3) -> V3 {
    let n = (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt();
    if n > 0.0 {
        [a[0] / n, a[1] / n, a[2] / n]
    } else {
        [0.0, 0.0, 1.0]
    }
}

/// The unit eigenvector of the smallest eigenvalue of a symmetric 3 x 3 matrix (Jacobi).
fn smallest_eigenvector(mut a: [[f64; 3]; 3]) -> V3 {
    let mut v = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    for _ in 0..50 {
        let (mut p, mut q, mut big) = (0, 1, 0.0);
        for (i, j) in [(0, 1), (0, 2), (1, 2)] {
            if a[i][j].abs() > big {
                (p, q, big) = (i, j, a[i][j].abs());
            }
        }
        if big < 1e-18 {
            break;
        }
        let theta = 0.5 * (a[q][q] - a[p][p]) / a[p][q];
        let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
        let t = if theta == 0.0 { 1.0 } else { t };
        let (c, s) = (1.0 / (t * t + 1.0).sqrt(), 0.0);
        let s = s + t * c;
        for row in a.iter_mut() {
            let (akp, akq) = (row[p], row[q]);
            row[p] = c * akp - s * akq;
            row[q] = s * akp + c * akq;
        }
        let (rp, rq) = (a[p], a[q]);
        for k in 0..3 {
            a[p][k] = c * rp[k] - s * rq[k];
            a[q][k] = s * rp[k] + c * rq[k];
        }
        for row in v.iter_mut() {
            let (vp, vq) = (row[p], row[q]);
            row[p] = c * vp - s * vq;
            row[q] = s * vp + c * vq;
        }
    }
    let k = (0..3).min_by(|&i, &j| a[i][i].total_cmp(&a[j][j])).unwrap_or(2);
    unit([v[0][k], v[1][k], v[2][k]])
}

/// A file a road file names, relative to the road file's directory.
fn resolve(xodr: &Path, name: &str) -> PathBuf {
    let p = Path::new(name);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        xodr.parent().unwrap_or(Path::new(".")).join(p)
    }
}

/// The road's OpenDRIVE surface where no CRG lies, and level ground beyond its outer borders.
fn surface_mesh(road: &RoadEval, covered: &[&(usize, f64, f64, f64, f64)], paved: Tag, ground: Tag) -> Result<TriMesh> {
    const DS: f64 = 0.5;
    const DT: f64 = 0.25;
    const BAND: f64 = 15.0;
    let len = road.length();
    let n_s = ((len / DS).ceil() as usize).max(1);
    let mut v: Vec<V3> = Vec::new();
    let mut f: Vec<[u32; 3]> = Vec::new();
    let mut tag_of: Vec<u32> = Vec::new();
    let inside = |s: f64, t: f64| covered.iter().any(|c| s >= c.1 && s <= c.2 && t >= c.3 && t <= c.4);
    let mut quad = |a: V3, b: V3, c: V3, d: V3, tag: u32| {
        let k = v.len() as u32;
        v.extend([a, b, c, d]);
        f.extend([[k, k + 1, k + 2], [k, k + 2, k + 3]]);
        tag_of.extend([tag, tag]);
    };
    for i in 0..n_s {
        let (s0, s1) = (i as f64 * len / n_s as f64, (i + 1) as f64 * len / n_s as f64);
        let edges = |s: f64| {
            let b = road.lane_borders(s);
            let lo = b.iter().map(|x| x.1).fold(road.lane_offset(s), f64::min);
            let hi = b.iter().map(|x| x.1).fold(road.lane_offset(s), f64::max);
            (lo, hi)
        };
        let ((lo0, hi0), (lo1, hi1)) = (edges(s0), edges(s1));
        let (lo, hi) = (lo0.min(lo1), hi0.max(hi1));
        let n_t = (((hi - lo) / DT).ceil() as usize).clamp(1, 4000);
        for j in 0..n_t {
            let (ta, tb) = (lo + j as f64 * (hi - lo) / n_t as f64, lo + (j + 1) as f64 * (hi - lo) / n_t as f64);
            if inside(0.5 * (s0 + s1), 0.5 * (ta + tb)) {
                continue;
            }
            let p = |s, t| road.sth_to_xyz(s, t, 0.0);
            quad(p(s0, ta), p(s1, ta), p(s1, tb), p(s0, tb), 0);
        }
        // Level ground from each outer edge outward.
        for (t_edge0, t_edge1, out) in [(lo0, lo1, -1.0), (hi0, hi1, 1.0)] {
            let (e0, e1) = (road.sth_to_xyz(s0, t_edge0, 0.0), road.sth_to_xyz(s1, t_edge1, 0.0));
            let (f0, f1) = (road.frame(s0, 0.0, 0.0), road.frame(s1, 0.0, 0.0));
            let far = |e: V3, fr: &opendrive::eval::Frame| {
                let n = [-fr.e_s[1], fr.e_s[0]];
                let k = out * BAND / (n[0] * n[0] + n[1] * n[1]).sqrt();
                [e[0] + k * n[0], e[1] + k * n[1], e[2]]
            };
            quad(e0, e1, far(e1, &f1), far(e0, &f0), 1);
        }
    }
    TriMesh::new(&v, &f, vec![paved, ground], &tag_of).map_err(|e| anyhow!("the road surface mesh: {e}"))
}

/// Survey classes of the ground and the road's own surfaces (ground, road, marking, sidewalk,
/// curb): the voxels of these classes are no roadside.
pub const SURFACE_CLASSES: [u8; 5] = [2, 11, 64, 65, 68];

/// The voxels a build wrote (`scene.voxels.csv` with `scene.json`), every class.
#[derive(Debug, Clone, PartialEq)]
pub struct BuildVoxels {
    /// Edge length, m.
    pub size: f64,
    /// Map point of the corner of voxel (0, 0, 0), m: voxel (i, j, k) spans origin + [i, j, k]
    /// * size to origin + [i + 1, j + 1, k + 1] * size.
    pub origin: [f64; 3],
    /// (i, j, k) and class, in the file's order.
    pub cells: Vec<([i64; 3], u8)>,
}

/// The voxels of the build in `dir` (None when it wrote none); errors name the file and line.
pub fn read_build_voxels(dir: &Path) -> Result<Option<BuildVoxels>> {
    let (csv, json) = (dir.join("scene.voxels.csv"), dir.join("scene.json"));
    if !csv.is_file() || !json.is_file() {
        return Ok(None);
    }
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).with_context(|| format!("reading {}", json.display()))?)
            .with_context(|| format!("{}: not JSON", json.display()))?;
    let size = meta["voxel_size"]
        .as_f64()
        .filter(|s| s.is_finite() && *s > 0.0)
        .ok_or_else(|| anyhow!("{}: no positive voxel_size", json.display()))?;
    let origin: Vec<f64> =
        meta["origin"].as_array().map(|a| a.iter().filter_map(|x| x.as_f64()).collect()).unwrap_or_default();
    let [ox, oy, oz] = origin[..] else { bail!("{}: origin is not three numbers", json.display()) };
    if ![ox, oy, oz].iter().all(|v| v.is_finite()) {
        bail!("{}: origin is not three finite numbers", json.display());
    }
    let text = std::fs::read_to_string(&csv).with_context(|| format!("reading {}", csv.display()))?;
    let mut lines = text.lines().enumerate();
    let header: Vec<&str> = lines.next().map(|(_, h)| h.split(',').collect()).unwrap_or_default();
    let col = |name: &str| {
        header.iter().position(|h| *h == name).ok_or_else(|| anyhow!("{}: line 1 has no column {name}", csv.display()))
    };
    let (ci, cj, ck, cc) = (col("i")?, col("j")?, col("k")?, col("class")?);
    let mut cells = Vec::new();
    for (n, line) in lines {
        let f: Vec<&str> = line.split(',').collect();
        let num = |c: usize| -> Result<i64> {
            f.get(c)
                .and_then(|x| x.parse::<i64>().ok())
                .ok_or_else(|| anyhow!("{}: line {}: column {} is not an integer", csv.display(), n + 1, c + 1))
        };
        let (i, j, k, class) = (num(ci)?, num(cj)?, num(ck)?, num(cc)?);
        // Voxel indices past a billion are no roadside (and their neighbours' would overflow).
        if let Some((name, v)) = [("i", i), ("j", j), ("k", k)].into_iter().find(|(_, v)| v.abs() > 1_000_000_000) {
            bail!("{}: line {}: voxel index {name} = {v} is out of range (|{name}| <= 1e9)", csv.display(), n + 1);
        }
        let class = u8::try_from(class).map_err(|_| anyhow!("{}: line {}: class {class}", csv.display(), n + 1))?;
        cells.push(([i, j, k], class));
    }
    Ok(Some(BuildVoxels { size, origin: [ox, oy, oz], cells }))
}

/// The exposed faces of the roadside voxels of the build in `dir` (None when it wrote none).
fn voxel_mesh(
    dir: &Path,
    odr: &OpenDrive,
    materials: &MaterialTable,
    stats: &mut WorldStats,
) -> Result<Option<TriMesh>> {
    let Some(vox) = read_build_voxels(dir)? else { return Ok(None) };
    let csv = dir.join("scene.voxels.csv");
    let (size, [ox, oy, oz]) = (vox.size, vox.origin);
    let place = odr.header.offset.map(|o| o.placement());
    let to_file = |p: V3| match &place {
        Some(pl) => pl.to_file(p),
        None => p,
    };
    let mut cells = std::collections::HashMap::new();
    for ([i, j, k], class) in vox.cells {
        if !SURFACE_CLASSES.contains(&class) {
            cells.insert((i, j, k), class);
        }
    }
    stats.voxels = cells.len();
    let material = |class: u8| match class {
        6 => "facade",
        3..=5 => "foliage",
        66 => "steel",
        67 => "car paint",
        69 => "cloth",
        _ => "concrete",
    };
    let mut tags: Vec<Tag> = Vec::new();
    let mut tag_index = std::collections::BTreeMap::new();
    let mut v: Vec<V3> = Vec::new();
    let mut f: Vec<[u32; 3]> = Vec::new();
    let mut tag_of: Vec<u32> = Vec::new();
    let mut keys: Vec<_> = cells.iter().map(|(k, c)| (*k, *c)).collect();
    keys.sort_unstable();
    // The six faces: the neighbour's offset and the face's corners in unit-cube coordinates.
    const FACES: [([i64; 3], [[f64; 3]; 4]); 6] = [
        ([1, 0, 0], [[1., 0., 0.], [1., 1., 0.], [1., 1., 1.], [1., 0., 1.]]),
        ([-1, 0, 0], [[0., 0., 0.], [0., 0., 1.], [0., 1., 1.], [0., 1., 0.]]),
        ([0, 1, 0], [[0., 1., 0.], [0., 1., 1.], [1., 1., 1.], [1., 1., 0.]]),
        ([0, -1, 0], [[0., 0., 0.], [1., 0., 0.], [1., 0., 1.], [0., 0., 1.]]),
        ([0, 0, 1], [[0., 0., 1.], [1., 0., 1.], [1., 1., 1.], [0., 1., 1.]]),
        ([0, 0, -1], [[0., 0., 0.], [0., 1., 0.], [1., 1., 0.], [1., 0., 0.]]),
    ];
    for ((i, j, k), class) in keys {
        let t = *tag_index.entry(class).or_insert_with(|| {
            tags.push(Tag { material: materials.id_or_first(material(class)), class, object: 0 });
            tags.len() as u32 - 1
        });
        for (d, corners) in FACES {
            if cells.contains_key(&(i + d[0], j + d[1], k + d[2])) {
                continue;
            }
            let at = v.len() as u32;
            for c in corners {
                v.push(to_file([
                    ox + (i as f64 + c[0]) * size,
                    oy + (j as f64 + c[1]) * size,
                    oz + (k as f64 + c[2]) * size,
                ]));
            }
            f.extend([[at, at + 1, at + 2], [at, at + 2, at + 3]]);
            tag_of.extend([t, t]);
        }
    }
    stats.voxel_triangles = f.len();
    if f.is_empty() {
        return Ok(None);
    }
    Ok(Some(TriMesh::new(&v, &f, tags, &tag_of).map_err(|e| anyhow!("{}: {e}", csv.display()))?))
}

/// The designed scene `scene` as a world in its road's file frame: the designed surface at 1 cm
/// (the survey's truth CRG, heights at the nodes exact, laid `attached0` on the scene's road,
/// the road's marks painted), level ground beyond it, the building fronts as walls in 0.5 m
/// panels, and every object (trees, poles, cars, people) as a fine mesh with its own object id
/// (cylinders of 64 sides and spheres of 48 x 96 facets: within 0.6 mm and 1.3 mm of the true
/// shapes at the demo's sizes).
pub fn from_scene(scene: &sim::Scene) -> Result<Loaded> {
    use sim::ObjectKind;
    let materials = MaterialTable::standard();
    let tag = |name: &str, class: u8, object: u32| Tag { material: materials.id_or_first(name), class, object };
    let road = scene.road();
    let (s0, s1) = scene.s_range;
    let (v_right, v_left) = scene.v_range_within(sim::survey::TRUTH_VERGE);
    let (v_right, v_left) = ((v_right / 0.01).floor() * 0.01, (v_left / 0.01).ceil() * 0.01);
    let crg = sim::truth::surface_crg(scene, 0.01, 0.01, v_right, v_left);
    let surf = opencrg::Surface::from_owned(crg, false).context("the scene's truth surface")?;
    let link =
        CrgLink { s_start: s0, s_end: s1, same: true, on_surface: false, t_offset: 0.0, z_offset: 0.0, z_scale: 1.0 };
    let mut hf = Heightfield::new(&road, &link, &surf, tag("asphalt", 11, 0)).context("the scene's truth surface")?;
    hf.paint(&road, &link, &surf, &opendrive::eval::marks::paint_lines(road.road(), (s0, s1)), tag("paint", 11, 0));
    let st = hf.stats();
    let mut stats = WorldStats {
        crg_tiles: 1,
        crg_cells: st.cells,
        crg_holes: st.holes,
        heightfield_bytes: st.bytes,
        ..WorldStats::default()
    };
    let mut parts = vec![Part::Heightfield(hf)];
    // Level ground beyond the truth surface's edges, and the building fronts.
    let mut m = MeshBuilder::default();
    let n_s = (((s1 - s0) / 0.5).ceil() as usize).max(1);
    let ground = |s: f64, t: f64| sim::scanner::ground_z(scene, &road, s, t);
    for i in 0..n_s {
        let (sa, sb) = (s0 + i as f64 * (s1 - s0) / n_s as f64, s0 + (i + 1) as f64 * (s1 - s0) / n_s as f64);
        let plan = |s: f64, t: f64| {
            let p = road.pose(s);
            let (sn, cs) = p.hdg.sin_cos();
            [p.x - t * sn, p.y + t * cs]
        };
        for (edge, far) in [(v_left, scene.facades.left), (v_right, scene.facades.right)] {
            let (za, zb) = (ground(sa, edge), ground(sb, edge));
            let (ea, eb, fa, fb) = (plan(sa, edge), plan(sb, edge), plan(sa, far), plan(sb, far));
            m.quad([ea[0], ea[1], za], [eb[0], eb[1], zb], [fb[0], fb[1], zb], [fa[0], fa[1], za], tag("gravel", 2, 0));
            let (ga, gb) = (ground(sa, far), ground(sb, far));
            let h = scene.facades.height;
            m.quad(
                [fa[0], fa[1], ga],
                [fb[0], fb[1], gb],
                [fb[0], fb[1], gb + h],
                [fa[0], fa[1], ga + h],
                tag("facade", 6, 0),
            );
        }
    }
    stats.surface_triangles = m.len();
    for (i, o) in scene.objects.iter().enumerate() {
        let id = i as u32 + 1;
        let g = ground(o.s, o.t);
        let p = road.pose(o.s);
        let (sn, cs) = p.hdg.sin_cos();
        let c = [p.x - o.t * sn, p.y + o.t * cs];
        match o.kind {
            ObjectKind::Tree { trunk_radius, trunk_height, crown_radius, crown_height } => {
                m.cylinder(c, trunk_radius, (g, g + trunk_height), tag("foliage", 5, id));
                m.sphere([c[0], c[1], g + crown_height], crown_radius, tag("foliage", 5, id));
            }
            ObjectKind::Pole { radius, height } => m.cylinder(c, radius, (g, g + height), tag("steel", 66, id)),
            ObjectKind::Person { radius, height } => m.cylinder(c, radius, (g, g + height), tag("cloth", 69, id)),
            ObjectKind::Car { length, width, height, clearance } => {
                let (u, v) = ([cs, sn], [-sn, cs]);
                let corner = |a: f64, b: f64, z: f64| [c[0] + a * u[0] + b * v[0], c[1] + a * u[1] + b * v[1], z];
                let (l, w, z0, z1) = (length / 2.0, width / 2.0, g + clearance, g + height);
                let box8 = [
                    corner(-l, -w, z0),
                    corner(l, -w, z0),
                    corner(l, w, z0),
                    corner(-l, w, z0),
                    corner(-l, -w, z1),
                    corner(l, -w, z1),
                    corner(l, w, z1),
                    corner(-l, w, z1),
                ];
                let t = tag("car paint", 67, id);
                for [a, b, cc, d] in
                    [[0, 1, 2, 3], [4, 5, 6, 7], [0, 1, 5, 4], [1, 2, 6, 5], [2, 3, 7, 6], [3, 0, 4, 7]]
                {
                    m.quad(box8[a], box8[b], box8[cc], box8[d], t);
                }
            }
        }
    }
    stats.voxel_triangles = m.len() - stats.surface_triangles;
    parts.push(Part::Mesh(m.finish()?));
    Ok(Loaded { world: World::new(parts, materials), odr: scene.odr.clone(), stats })
}

/// Triangles with their tags, gathered into one mesh.
#[derive(Default)]
struct MeshBuilder {
    v: Vec<V3>,
    f: Vec<[u32; 3]>,
    tags: Vec<Tag>,
    tag_of: Vec<u32>,
}

impl MeshBuilder {
    fn len(&self) -> usize {
        self.f.len()
    }
    fn tag(&mut self, t: Tag) -> u32 {
        match self.tags.iter().position(|x| *x == t) {
            Some(i) => i as u32,
            None => {
                self.tags.push(t);
                self.tags.len() as u32 - 1
            }
        }
    }
    fn tri(&mut self, a: V3, b: V3, c: V3, t: Tag) {
        let k = self.v.len() as u32;
        let ti = self.tag(t);
        self.v.extend([a, b, c]);
        self.f.push([k, k + 1, k + 2]);
        self.tag_of.push(ti);
    }
    fn quad(&mut self, a: V3, b: V3, c: V3, d: V3, t: Tag) {
        self.tri(a, b, c, t);
        self.tri(a, c, d, t);
    }
    /// A vertical cylinder (sides and top), 64 sides.
    fn cylinder(&mut self, c: [f64; 2], r: f64, (z0, z1): (f64, f64), t: Tag) {
        const N: usize = 64;
        let p = |k: usize, z: f64| {
            let a = std::f64::consts::TAU * k as f64 / N as f64;
            [c[0] + r * a.cos(), c[1] + r * a.sin(), z]
        };
        for k in 0..N {
            self.quad(p(k, z0), p(k + 1, z0), p(k + 1, z1), p(k, z1), t);
            self.tri([c[0], c[1], z1], p(k, z1), p(k + 1, z1), t);
        }
    }
    /// A sphere of 48 x 96 facets.
    fn sphere(&mut self, c: V3, r: f64, t: Tag) {
        const LAT: usize = 48;
        const LON: usize = 96;
        let p = |i: usize, j: usize| {
            let (th, ph) =
                (std::f64::consts::PI * i as f64 / LAT as f64, std::f64::consts::TAU * j as f64 / LON as f64);
            [c[0] + r * th.sin() * ph.cos(), c[1] + r * th.sin() * ph.sin(), c[2] + r * th.cos()]
        };
        for i in 0..LAT {
            for j in 0..LON {
                self.quad(p(i, j), p(i + 1, j), p(i + 1, j + 1), p(i, j + 1), t);
            }
        }
    }
    fn finish(self) -> Result<TriMesh> {
        TriMesh::new(&self.v, &self.f, self.tags, &self.tag_of).map_err(|e| anyhow!("the scene's meshes: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_smallest_eigenvector_is_the_plane_normal() {
        // Points spread in a tilted plane with normal n: the covariance has n as its null direction.
        let n = unit([0.3, -0.2, 0.9]);
        let u = unit(cross(n, [1.0, 0.0, 0.0]));
        let v = cross(n, u);
        let mut cov = [[0.0; 3]; 3];
        for (a, b) in [(1.0, 0.0), (-1.0, 0.0), (0.0, 2.0), (0.0, -2.0), (0.7, 0.7)] {
            let p = [a * u[0] + b * v[0], a * u[1] + b * v[1], a * u[2] + b * v[2]];
            for i in 0..3 {
                for j in 0..3 {
                    cov[i][j] += p[i] * p[j];
                }
            }
        }
        let e = smallest_eigenvector(cov);
        let dot = (e[0] * n[0] + e[1] * n[1] + e[2] * n[2]).abs();
        assert!((dot - 1.0).abs() < 1e-9, "{e:?} vs {n:?}");
        // Already diagonal: the axis of the smallest entry.
        assert_eq!(smallest_eigenvector([[3.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 2.0]]), [0.0, 1.0, 0.0]);
    }
}
