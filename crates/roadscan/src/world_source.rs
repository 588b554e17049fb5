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

/// The world of the build in `dir`.
pub fn from_build(dir: &Path) -> Result<Loaded> {
    let xodr = dir.join("road.xodr");
    if !xodr.is_file() {
        bail!(
            "{}: no road.xodr here; --world takes the output directory of `roadscan build` or `roadscan demo`",
            dir.display()
        );
    }
    let odr = opendrive::read_file(&xodr).with_context(|| format!("reading {}", xodr.display()))?;
    if odr.roads.is_empty() {
        bail!("{}: the file has no road", xodr.display());
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
            let crg = opencrg::read_file(&path).with_context(|| format!("reading {}", path.display()))?;
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
    if let Some(mesh) = voxel_mesh(dir, &odr, &materials, &mut stats)? {
        parts.push(Part::Mesh(mesh));
    }
    Ok(Loaded { world: World::new(parts, materials), odr, stats })
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

/// The exposed faces of the roadside voxels of the build in `dir` (None when it wrote none).
fn voxel_mesh(
    dir: &Path,
    odr: &OpenDrive,
    materials: &MaterialTable,
    stats: &mut WorldStats,
) -> Result<Option<TriMesh>> {
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
    let place = odr.header.offset.map(|o| o.placement());
    let to_file = |p: V3| match &place {
        Some(pl) => pl.to_file(p),
        None => p,
    };
    let text = std::fs::read_to_string(&csv).with_context(|| format!("reading {}", csv.display()))?;
    let mut lines = text.lines().enumerate();
    let header: Vec<&str> = lines.next().map(|(_, h)| h.split(',').collect()).unwrap_or_default();
    let col = |name: &str| {
        header.iter().position(|h| *h == name).ok_or_else(|| anyhow!("{}: line 1 has no column {name}", csv.display()))
    };
    let (ci, cj, ck, cc) = (col("i")?, col("j")?, col("k")?, col("class")?);
    let mut cells = std::collections::HashMap::new();
    for (n, line) in lines {
        let f: Vec<&str> = line.split(',').collect();
        let num = |c: usize| -> Result<i64> {
            f.get(c)
                .and_then(|x| x.parse::<i64>().ok())
                .ok_or_else(|| anyhow!("{}: line {}: column {} is not an integer", csv.display(), n + 1, c + 1))
        };
        let (i, j, k, class) = (num(ci)?, num(cj)?, num(ck)?, num(cc)?);
        let class = u8::try_from(class).map_err(|_| anyhow!("{}: line {}: class {class}", csv.display(), n + 1))?;
        if [2, 11, 64, 65, 68].contains(&class) {
            continue;
        }
        cells.insert((i, j, k), class);
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
