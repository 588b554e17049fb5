//! The exposed faces of a voxel grid as a mesh, written as OBJ + MTL or binary glTF.
//!
//! A face is exposed when the neighbouring voxel across it is empty. Faces are quads on the
//! voxel lattice; their corners are shared between faces (OBJ), or repeated per face in glTF,
//! where each face carries its voxel's flat colour and normal. OBJ vertices are in the local
//! map frame (x east, y north, z up, metres); glTF is y-up, so there (x, y, z) -> (x, z, -y).

use crate::io::write_atomic;
use crate::{Error, Lattice, Voxel, VoxelGrid};
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

/// Corners of each face of the unit cube, counter-clockwise seen from outside, with the
/// neighbour's offset (which is also the outward normal).
const FACES: [([i32; 3], [[i32; 3]; 4]); 6] = [
    ([1, 0, 0], [[1, 0, 0], [1, 1, 0], [1, 1, 1], [1, 0, 1]]),
    ([-1, 0, 0], [[0, 0, 0], [0, 0, 1], [0, 1, 1], [0, 1, 0]]),
    ([0, 1, 0], [[0, 1, 0], [0, 1, 1], [1, 1, 1], [1, 1, 0]]),
    ([0, -1, 0], [[0, 0, 0], [1, 0, 0], [1, 0, 1], [0, 0, 1]]),
    ([0, 0, 1], [[0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]]),
    ([0, 0, -1], [[0, 0, 0], [0, 1, 0], [1, 1, 0], [1, 0, 0]]),
];

/// One exposed face.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quad {
    /// Corner vertex indices, counter-clockwise seen from outside.
    pub corners: [u32; 4],
    /// Outward normal (a unit axis).
    pub normal: [i32; 3],
    /// The voxel's position in [`Mesh::voxels`].
    pub voxel: u32,
}

/// The exposed faces of a grid.
#[derive(Debug, Clone)]
pub struct Mesh {
    /// Where the voxels are.
    pub lattice: Lattice,
    /// Voxels, sorted by index, with their mean intensity, colour and majority class.
    pub voxels: Vec<([i32; 3], VoxelSummary)>,
    /// Lattice corners (in voxel units) used by the faces, in order of first use.
    pub vertices: Vec<[i32; 3]>,
    /// Faces, by voxel then by direction (+x, -x, +y, -y, +z, -z).
    pub quads: Vec<Quad>,
    /// Whether the points had colour.
    pub has_rgb: bool,
}

/// What a mesh records of a voxel.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VoxelSummary {
    /// Points.
    pub count: u32,
    /// Mean intensity.
    pub intensity: f64,
    /// Mean colour, 16-bit.
    pub rgb: [u16; 3],
    /// Majority class.
    pub class: u8,
}

impl From<&Voxel> for VoxelSummary {
    fn from(v: &Voxel) -> Self {
        VoxelSummary { count: v.count, intensity: v.intensity(), rgb: v.rgb(), class: v.class() }
    }
}

/// Counts of a written mesh.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MeshStats {
    /// Vertices written.
    pub vertices: usize,
    /// Faces written (quads in OBJ; in glTF each is two triangles).
    pub faces: usize,
    /// Bytes written.
    pub bytes: u64,
}

impl Mesh {
    /// The exposed faces of `grid`.
    pub fn from_grid(grid: &VoxelGrid) -> Mesh {
        let sorted = grid.sorted();
        let keys: Vec<[i32; 3]> = sorted.iter().map(|e| e.0).collect();
        // Neighbours by merge walks: index + offset grows with the index in the sorted order,
        // so one cursor per direction only moves forward (no hash lookups, cache friendly).
        let mut cursor = [0usize; 6];
        let mut corner_index: HashMap<[i32; 3], u32> = HashMap::with_capacity(keys.len() * 2);
        let mut vertices = Vec::new();
        let mut quads = Vec::new();
        for (vi, idx) in keys.iter().enumerate() {
            for (f, (normal, corners)) in FACES.iter().enumerate() {
                let nb = [idx[0] + normal[0], idx[1] + normal[1], idx[2] + normal[2]];
                let c = &mut cursor[f];
                while *c < keys.len() && keys[*c] < nb {
                    *c += 1;
                }
                if *c < keys.len() && keys[*c] == nb {
                    continue;
                }
                let corners = corners.map(|c| {
                    let p = [idx[0] + c[0], idx[1] + c[1], idx[2] + c[2]];
                    *corner_index.entry(p).or_insert_with(|| {
                        vertices.push(p);
                        (vertices.len() - 1) as u32
                    })
                });
                quads.push(Quad { corners, normal: *normal, voxel: vi as u32 });
            }
        }
        Mesh {
            lattice: grid.lattice(),
            voxels: sorted.into_iter().map(|(i, v)| (i, VoxelSummary::from(v))).collect(),
            vertices,
            quads,
            has_rgb: grid.has_rgb(),
        }
    }
}

/// How faces are coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Colouring {
    /// By majority class (ASPRS codes; the survey's own in grey shades).
    Class,
    /// By mean intensity, 16 grey levels between the 2nd and 98th percentile of the voxels.
    Intensity,
    /// By voxel height, 16 steps of a colour ramp between the lowest and highest voxel.
    Height,
    /// By mean colour (16 levels per channel); needs points with colour.
    Rgb,
}

impl Colouring {
    /// Its name: class, intensity, height or rgb.
    pub fn name(self) -> &'static str {
        match self {
            Colouring::Class => "class",
            Colouring::Intensity => "intensity",
            Colouring::Height => "height",
            Colouring::Rgb => "rgb",
        }
    }
}

/// A material: name and diffuse colour (0..1).
#[derive(Debug, Clone, PartialEq)]
struct Material {
    name: String,
    rgb: [f64; 3],
}

/// Colour of an ASPRS class (LAS 1.4 table 17), and of roadscan's survey classes.
fn class_colour(c: u8) -> [f64; 3] {
    match c {
        2 => [0.55, 0.45, 0.33],       // ground
        3 => [0.60, 0.80, 0.40],       // low vegetation
        4 => [0.35, 0.65, 0.25],       // medium vegetation
        5 => [0.15, 0.45, 0.15],       // high vegetation
        6 => [0.80, 0.35, 0.25],       // building
        7 => [0.90, 0.10, 0.60],       // low point (noise)
        9 => [0.20, 0.40, 0.90],       // water
        10 => [0.45, 0.30, 0.20],      // rail
        11 => [0.35, 0.35, 0.38],      // road surface
        13..=16 => [0.95, 0.75, 0.10], // wires, towers
        17 => [0.60, 0.60, 0.65],      // bridge deck
        _ => {
            // Other codes: a grey shade of their own.
            let g = 0.3 + 0.6 * ((c as f64 * 0.618_034) % 1.0);
            [g, g, g]
        }
    }
}

/// Blue-green-yellow-red ramp, t in 0..1.
pub(crate) fn ramp(t: f64) -> [f64; 3] {
    const STOPS: [[f64; 3]; 5] =
        [[0.19, 0.21, 0.58], [0.13, 0.57, 0.55], [0.43, 0.81, 0.35], [0.99, 0.81, 0.15], [0.85, 0.18, 0.15]];
    let t = t.clamp(0.0, 1.0) * (STOPS.len() - 1) as f64;
    let i = (t.floor() as usize).min(STOPS.len() - 2);
    let f = t - i as f64;
    [0, 1, 2].map(|c| STOPS[i][c] + f * (STOPS[i + 1][c] - STOPS[i][c]))
}

/// The faces' colours: a material per voxel, computed once for every writer.
#[derive(Debug, Clone, PartialEq)]
pub struct Palette {
    colouring: Colouring,
    /// Material index of every voxel of the mesh.
    of: Vec<u32>,
    materials: Vec<Material>,
}

impl Palette {
    /// The materials of `mesh`'s voxels under `colouring`; an error for RGB when the points
    /// had no colour.
    pub fn new(mesh: &Mesh, colouring: Colouring) -> Result<Palette, Error> {
        let (of, materials) = materials(mesh, colouring)?;
        Ok(Palette { colouring, of, materials })
    }

    /// The material of a voxel (its position in [`Mesh::voxels`]).
    fn of(&self, voxel: u32) -> &Material {
        &self.materials[self.of[voxel as usize] as usize]
    }
}

/// Material index of every voxel, and the materials.
fn materials(mesh: &Mesh, colouring: Colouring) -> Result<(Vec<u32>, Vec<Material>), Error> {
    let mut by_name: HashMap<String, u32> = HashMap::new();
    let mut mats: Vec<Material> = Vec::new();
    let mut index = Vec::with_capacity(mesh.voxels.len());
    let pct = |mut v: Vec<f64>, p: f64| -> f64 {
        if v.is_empty() {
            return 0.0;
        }
        let k = ((v.len() - 1) as f64 * p).round() as usize;
        *v.select_nth_unstable_by(k, f64::total_cmp).1
    };
    let (lo, hi) = match colouring {
        Colouring::Intensity => {
            let v: Vec<f64> = mesh.voxels.iter().map(|v| v.1.intensity).collect();
            (pct(v.clone(), 0.02), pct(v, 0.98))
        }
        Colouring::Height => {
            let z = mesh.voxels.iter().map(|v| v.0[2] as f64);
            (z.clone().fold(f64::INFINITY, f64::min), z.fold(f64::NEG_INFINITY, f64::max))
        }
        Colouring::Rgb if !mesh.has_rgb => {
            return Err(Error::Invalid("colouring by RGB: the points carry no colour".into()));
        }
        _ => (0.0, 1.0),
    };
    let level = |v: f64| -> usize {
        if hi > lo {
            (((v - lo) / (hi - lo)).clamp(0.0, 1.0) * 15.0).round() as usize
        } else {
            0
        }
    };
    for (idx, v) in &mesh.voxels {
        let (name, rgb) = match colouring {
            Colouring::Class => (format!("class_{}", v.class), class_colour(v.class)),
            Colouring::Intensity => {
                let l = level(v.intensity);
                let g = 0.1 + 0.85 * l as f64 / 15.0;
                (format!("intensity_{l:02}"), [g, g, g])
            }
            Colouring::Height => {
                let l = level(idx[2] as f64);
                (format!("height_{l:02}"), ramp(l as f64 / 15.0))
            }
            Colouring::Rgb => {
                let q = v.rgb.map(|c| (c as usize * 16 / 65_536).min(15));
                (format!("rgb_{:x}{:x}{:x}", q[0], q[1], q[2]), q.map(|c| (c as f64 + 0.5) / 16.0))
            }
        };
        let k = *by_name.entry(name.clone()).or_insert_with(|| {
            mats.push(Material { name, rgb });
            (mats.len() - 1) as u32
        });
        index.push(k);
    }
    Ok((index, mats))
}

/// Writes `mesh` as OBJ at `path` with its MTL beside it (same stem, `.mtl`), faces grouped by
/// material, vertices in the local frame; both files atomically.
pub fn write_obj(mesh: &Mesh, palette: &Palette, path: &Path) -> Result<MeshStats, Error> {
    let (mat_of, mats, colouring) = (&palette.of, &palette.materials, palette.colouring);
    let mtl_path = path.with_extension("mtl");
    let mtl_name = mtl_path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    write_atomic(&mtl_path, |w| {
        writeln!(w, "# roadscan voxel materials ({colouring:?})")?;
        for m in mats {
            writeln!(
                w,
                "newmtl {}\nKd {:.4} {:.4} {:.4}\nKa 0 0 0\nd 1\nillum 1\n",
                m.name, m.rgb[0], m.rgb[1], m.rgb[2]
            )?;
        }
        Ok(())
    })?;
    // Faces by material (stable: by voxel, then direction, within one).
    let mut order: Vec<usize> = (0..mesh.quads.len()).collect();
    order.sort_by_key(|&q| mat_of[mesh.quads[q].voxel as usize]);
    let mut bytes = 0u64;
    write_atomic(path, |w| {
        let mut w = Counting { inner: w, n: 0 };
        writeln!(
            w,
            "# roadscan voxels: {} voxels of {} m, {} vertices, {} faces\n# local frame: map minus origin {:.3} {:.3} {:.3} (see the .json sidecar)",
            mesh.voxels.len(),
            mesh.lattice.size(),
            mesh.vertices.len(),
            mesh.quads.len(),
            mesh.lattice.origin()[0],
            mesh.lattice.origin()[1],
            mesh.lattice.origin()[2]
        )?;
        writeln!(w, "mtllib {mtl_name}")?;
        let mut num = fixed::Buffer::default();
        for v in &mesh.vertices {
            let p = mesh.lattice.local(*v);
            w.write_all(b"v")?;
            for c in p {
                w.write_all(b" ")?;
                w.write_all(num.format(c, 4).as_bytes())?;
            }
            w.write_all(b"\n")?;
        }
        let mut current = u32::MAX;
        for &q in &order {
            let quad = &mesh.quads[q];
            let m = mat_of[quad.voxel as usize];
            if m != current {
                writeln!(w, "usemtl {}", mats[m as usize].name)?;
                current = m;
            }
            let c = quad.corners.map(|c| c + 1);
            writeln!(w, "f {} {} {} {}", c[0], c[1], c[2], c[3])?;
        }
        bytes = w.n;
        Ok(())
    })?;
    Ok(MeshStats { vertices: mesh.vertices.len(), faces: mesh.quads.len(), bytes })
}

/// Writes the voxels of `mesh` as CSV at `path`, atomically: index, centre (map frame),
/// point count, mean intensity and colour, majority class, and the station s and offset t
/// of the centre from `stations` (one per voxel, empty where None).
pub fn write_csv(mesh: &Mesh, stations: &[Option<(f64, f64)>], path: &Path) -> Result<(), Error> {
    if stations.len() != mesh.voxels.len() {
        return Err(Error::Invalid(format!("{} stations for {} voxels", stations.len(), mesh.voxels.len())));
    }
    let mut num = fixed::Buffer::default();
    write_atomic(path, |w| {
        writeln!(w, "i,j,k,x,y,z,count,intensity,r,g,b,class,s,t")?;
        for ((idx, v), st) in mesh.voxels.iter().zip(stations) {
            write!(w, "{},{},{}", idx[0], idx[1], idx[2])?;
            for c in mesh.lattice.centre(*idx) {
                w.write_all(b",")?;
                w.write_all(num.format(c, 3).as_bytes())?;
            }
            write!(w, ",{},", v.count)?;
            w.write_all(num.format(v.intensity, 1).as_bytes())?;
            write!(w, ",{},{},{},{},", v.rgb[0], v.rgb[1], v.rgb[2], v.class)?;
            if let Some((s, t)) = st {
                w.write_all(num.format(*s, 3).as_bytes())?;
                w.write_all(b",")?;
                w.write_all(num.format(*t, 3).as_bytes())?;
            } else {
                w.write_all(b",")?;
            }
            w.write_all(b"\n")?;
        }
        Ok(())
    })
}

/// Short decimal text of numbers: rounded to a number of decimals, no trailing zeros (fixed point on
/// integers: the float formatter's exact path is slow for millions of vertices).
mod fixed {
    #[derive(Debug, Default)]
    pub struct Buffer(String);

    impl Buffer {
        /// `v` rounded to `decimals` (at most 6), trailing zeros dropped.
        pub fn format(&mut self, v: f64, decimals: u32) -> &str {
            use std::fmt::Write;
            self.0.clear();
            let unit = 10u64.pow(decimals.min(6));
            let q = (v * unit as f64).round() as i64;
            if q < 0 {
                self.0.push('-');
            }
            let (int, mut frac) = (q.unsigned_abs() / unit, q.unsigned_abs() % unit);
            let _ = write!(self.0, "{int}");
            if frac != 0 {
                let mut digits = decimals.min(6) as usize;
                while frac % 10 == 0 {
                    frac /= 10;
                    digits -= 1;
                }
                let _ = write!(self.0, ".{frac:0digits$}");
            }
            &self.0
        }
    }
}

struct Counting<'w, W: Write> {
    inner: &'w mut W,
    n: u64,
}

impl<W: Write> Write for Counting<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let k = self.inner.write(buf)?;
        self.n += k as u64;
        Ok(k)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Writes `mesh` as binary glTF 2.0 (.glb) at `path`, atomically: one mesh of triangles with
/// positions (local frame, y up), flat normals and vertex colours (RGBA, 8-bit) per face;
/// the origin, CRS (`crs_json`: JSON text, e.g. a string literal) and voxel size in the
/// asset's `extras`.
pub fn write_glb(mesh: &Mesh, palette: &Palette, path: &Path, crs_json: Option<&str>) -> Result<MeshStats, Error> {
    let nq = mesh.quads.len();
    if nq == 0 {
        return Err(Error::Invalid("no voxels: nothing to write".into()));
    }
    let nv = nq * 4;
    if nv > u32::MAX as usize {
        return Err(Error::Invalid(format!("{nq} faces: too many for one glTF mesh")));
    }
    let yup = |p: [f64; 3]| [p[0] as f32, p[2] as f32, -p[1] as f32];
    // Bounds first; the buffer is then streamed part by part (no copy of it in memory).
    let (mut lo, mut hi) = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
    for q in &mesh.quads {
        for corner in q.corners {
            let p = yup(mesh.lattice.local(mesh.vertices[corner as usize]));
            for a in 0..3 {
                lo[a] = lo[a].min(p[a]);
                hi[a] = hi[a].max(p[a]);
            }
        }
    }
    let (pos_len, nrm_len, col_len, idx_len) = (nv * 12, nv * 12, nv * 4, nq * 6 * 4);
    // One buffer: positions, normals, colours, indices (each a multiple of 4 bytes).
    let (o_pos, o_nrm, o_col, o_idx) = (0, pos_len, pos_len + nrm_len, pos_len + nrm_len + col_len);
    let total = o_idx + idx_len;
    let f = |v: f32| if v == 0.0 { "0".to_string() } else { format!("{v}") };
    let crs = crs_json.unwrap_or("null");
    let json = format!(
        concat!(
            r#"{{"asset":{{"version":"2.0","generator":"roadscan voxel","extras":{{"origin":[{},{},{}],"crs":{},"voxel_size":{},"frame":"local map frame, y up: glTF (x, y, z) = (east, up, -north) minus origin"}}}},"#,
            r#""scene":0,"scenes":[{{"nodes":[0]}}],"nodes":[{{"mesh":0,"name":"voxels"}}],"#,
            r#""meshes":[{{"name":"voxels","primitives":[{{"attributes":{{"POSITION":0,"NORMAL":1,"COLOR_0":2}},"indices":3,"mode":4,"material":0}}]}}],"#,
            r#""materials":[{{"name":"vertex colour","pbrMetallicRoughness":{{"baseColorFactor":[1,1,1,1],"metallicFactor":0,"roughnessFactor":1}}}}],"#,
            r#""buffers":[{{"byteLength":{}}}],"#,
            r#""bufferViews":[{{"buffer":0,"byteOffset":{},"byteLength":{},"byteStride":12,"target":34962}},{{"buffer":0,"byteOffset":{},"byteLength":{},"byteStride":12,"target":34962}},{{"buffer":0,"byteOffset":{},"byteLength":{},"byteStride":4,"target":34962}},{{"buffer":0,"byteOffset":{},"byteLength":{},"target":34963}}],"#,
            r#""accessors":[{{"bufferView":0,"componentType":5126,"count":{},"type":"VEC3","min":[{},{},{}],"max":[{},{},{}]}},{{"bufferView":1,"componentType":5126,"count":{},"type":"VEC3"}},{{"bufferView":2,"componentType":5121,"normalized":true,"count":{},"type":"VEC4"}},{{"bufferView":3,"componentType":5125,"count":{},"type":"SCALAR"}}]}}"#
        ),
        mesh.lattice.origin()[0],
        mesh.lattice.origin()[1],
        mesh.lattice.origin()[2],
        crs,
        mesh.lattice.size(),
        total,
        o_pos,
        pos_len,
        o_nrm,
        nrm_len,
        o_col,
        col_len,
        o_idx,
        idx_len,
        nv,
        f(lo[0]),
        f(lo[1]),
        f(lo[2]),
        f(hi[0]),
        f(hi[1]),
        f(hi[2]),
        nv,
        nv,
        nq * 6,
    );
    let mut json = json.into_bytes();
    while json.len() % 4 != 0 {
        json.push(b' ');
    }
    let len = 12 + 8 + json.len() + 8 + total;
    let len32 = u32::try_from(len).map_err(|_| Error::Invalid(format!("{len} bytes: too large for a .glb")))?;
    write_atomic(path, |w| {
        w.write_all(b"glTF")?;
        w.write_all(&2u32.to_le_bytes())?;
        w.write_all(&len32.to_le_bytes())?;
        w.write_all(&(json.len() as u32).to_le_bytes())?;
        w.write_all(b"JSON")?;
        w.write_all(&json)?;
        w.write_all(&(total as u32).to_le_bytes())?;
        w.write_all(b"BIN\0")?;
        // Positions, normals, colours (per face, four corners each), indices.
        for q in &mesh.quads {
            for corner in q.corners {
                for v in yup(mesh.lattice.local(mesh.vertices[corner as usize])) {
                    w.write_all(&v.to_le_bytes())?;
                }
            }
        }
        for q in &mesh.quads {
            let n = yup(q.normal.map(f64::from));
            for _ in 0..4 {
                for v in n {
                    w.write_all(&v.to_le_bytes())?;
                }
            }
        }
        for q in &mesh.quads {
            let c = palette.of(q.voxel).rgb.map(|v| (v * 255.0).round() as u8);
            for _ in 0..4 {
                w.write_all(&[c[0], c[1], c[2], 255])?;
            }
        }
        for k in 0..nq {
            let b = (k * 4) as u32;
            for i in [b, b + 1, b + 2, b, b + 2, b + 3] {
                w.write_all(&i.to_le_bytes())?;
            }
        }
        Ok(())
    })?;
    Ok(MeshStats { vertices: nv, faces: nq, bytes: len as u64 })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn grid(cells: &[[f64; 3]]) -> VoxelGrid {
        let mut g = VoxelGrid::new(1.0, [0.0; 3]).unwrap();
        let n = cells.len();
        let (x, y, z): (Vec<f64>, Vec<f64>, Vec<f64>) = (
            cells.iter().map(|c| c[0]).collect(),
            cells.iter().map(|c| c[1]).collect(),
            cells.iter().map(|c| c[2]).collect(),
        );
        g.add(&x, &y, &z, &vec![100; n], &vec![6; n], None, 2).unwrap();
        g
    }

    /// Signed volume of the closed surface (divergence theorem over the quads' two triangles).
    fn volume(m: &Mesh) -> f64 {
        let mut v = 0.0;
        for q in &m.quads {
            let p = q.corners.map(|c| m.lattice.local(m.vertices[c as usize]));
            for (a, b, c) in [(p[0], p[1], p[2]), (p[0], p[2], p[3])] {
                v += a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0])
                    + a[2] * (b[0] * c[1] - b[1] * c[0]);
            }
        }
        v / 6.0
    }

    #[test]
    fn one_voxel_is_a_closed_outward_cube() {
        let m = Mesh::from_grid(&grid(&[[0.5, 0.5, 0.5]]));
        assert_eq!((m.vertices.len(), m.quads.len()), (8, 6));
        assert!((volume(&m) - 1.0).abs() < 1e-12, "volume {}", volume(&m));
    }

    #[test]
    fn shared_faces_are_hidden_and_corners_shared() {
        // Two voxels side by side: 10 faces, 12 corners; an L of three: 14 faces, 16 corners
        // (the inner corner column is shared); a 2x2x2 block: 24 faces, 26 corners.
        let m = Mesh::from_grid(&grid(&[[0.5, 0.5, 0.5], [1.5, 0.5, 0.5]]));
        assert_eq!((m.vertices.len(), m.quads.len()), (12, 10));
        assert!((volume(&m) - 2.0).abs() < 1e-12);
        let m = Mesh::from_grid(&grid(&[[0.5, 0.5, 0.5], [1.5, 0.5, 0.5], [0.5, 1.5, 0.5]]));
        assert_eq!((m.vertices.len(), m.quads.len()), (16, 14));
        let cube: Vec<[f64; 3]> =
            (0..8).map(|i| [(i & 1) as f64 + 0.5, ((i >> 1) & 1) as f64 + 0.5, ((i >> 2) & 1) as f64 + 0.5]).collect();
        let m = Mesh::from_grid(&grid(&cube));
        assert_eq!((m.vertices.len(), m.quads.len()), (26, 24));
        assert!((volume(&m) - 8.0).abs() < 1e-12);
    }

    #[test]
    fn numbers_are_short() {
        let mut b = fixed::Buffer::default();
        assert_eq!(b.format(3.0, 4), "3");
        assert_eq!(b.format(-0.00001, 4), "0");
        assert_eq!(b.format(0.25, 4), "0.25");
        assert_eq!(b.format(-12.5, 4), "-12.5");
        assert_eq!(b.format(650009.5, 3), "650009.5");
        assert_eq!(b.format(0.0625, 3), "0.063");
        assert_eq!(b.format(-0.0404, 3), "-0.04");
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod colour_tests {
    use super::*;

    #[test]
    fn colours_average_per_voxel_and_become_materials() {
        let mut g = VoxelGrid::new(1.0, [0.0; 3]).unwrap();
        // Two voxels: a red pair and a blue one; classes 6, 6, 2.
        let (x, y, z) = ([0.2, 0.7, 3.5], [0.5, 0.5, 0.5], [0.5, 0.5, 0.5]);
        let rgb = [[65_535, 0, 0], [32_768, 0, 0], [0, 0, 65_535]];
        g.add(&x, &y, &z, &[10, 20, 30], &[6, 6, 2], Some(&rgb), 2).unwrap();
        let v = g.get([0, 0, 0]).unwrap();
        assert_eq!((v.count, v.rgb(), v.intensity(), v.class()), (2, [49_152, 0, 0], 15.0, 6));
        let m = Mesh::from_grid(&g);
        let (of, mats) = materials(&m, Colouring::Rgb).unwrap();
        assert_eq!(mats.len(), 2);
        assert!(mats[of[0] as usize].rgb[0] > 0.7 && mats[of[1] as usize].rgb[2] > 0.9, "{mats:?}");
        // Without colour in the points, colouring by RGB is an error.
        let mut plain = VoxelGrid::new(1.0, [0.0; 3]).unwrap();
        plain.add(&x, &y, &z, &[1, 1, 1], &[1, 1, 1], None, 1).unwrap();
        assert!(materials(&Mesh::from_grid(&plain), Colouring::Rgb).is_err());
        // Class and height colourings name every voxel's material.
        for c in [Colouring::Class, Colouring::Height, Colouring::Intensity] {
            let (of, mats) = materials(&m, c).unwrap();
            assert_eq!(of.len(), 2);
            assert!(of.iter().all(|&k| (k as usize) < mats.len()));
        }
    }
}
