//! The LAS/LAZ inputs of a verb that works along a road: opened (and checked) before any
//! work, reprojected to the axis file's CRS (else the first input's) where theirs differs,
//! streamed in chunks with the reading on a thread of its own.

use crate::progress::{Note, Progress, Stage};
use anyhow::{bail, Result};
use pipeline::registration::{Overlaps, Registration, RegistrationOptions};
use scan::{CrsDef, LasReader, Points, Reprojection};
use std::path::{Path, PathBuf};

/// Opened inputs: each reader with its reprojection to the axis' CRS (if any) and the factor
/// that turns its heights into metres.
pub struct Inputs<'p> {
    /// Each with its index among the inputs as given.
    readers: Vec<(usize, LasReader, Option<Reprojection>, f64)>,
    /// Whether a point outside its file's header bounds is an error (the inputs were chosen
    /// by those bounds).
    check_bounds: bool,
    /// The passes' vertical error, taken off every point read (see [`Inputs::register`]).
    registration: Option<std::sync::Arc<Registration>>,
    /// The CRS the points end up in (the axis' geoReference, else the first input's own):
    /// its label (EPSG:NNNN or a PROJ string) and OGC WKT where known.
    pub crs: Option<(String, Option<String>)>,
    /// Where notes (noise left out) and the progress of a read go.
    progress: &'p dyn Progress,
}

impl std::fmt::Debug for Inputs<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inputs").field("files", &self.readers.len()).field("crs", &self.crs).finish_non_exhaustive()
    }
}

/// Points per chunk read (x, y, z: 3 MB; a few chunks are in flight). A consumer working a
/// chunk on every core waits for its last run at the end of each; at 65,536 points those
/// waits left a core idle for 5 % of `roadscan crg` on a 20 M point survey (262,144 were no
/// faster than this, and held 3 MB more).
const CHUNK: usize = 1 << 17;

impl<'p> Inputs<'p> {
    /// Opens every input (a bad file fails before any work). `crs`: the CRS of inputs whose
    /// files name none (`--crs`).
    pub fn open(
        odr: &opendrive::OpenDrive,
        axis: &Path,
        crs: Option<&str>,
        paths: &[impl AsRef<Path>],
        progress: &'p dyn Progress,
    ) -> Result<Inputs<'p>> {
        // The axis' CRS (its geoReference) and the inputs' (theirs, else --crs).
        let axis_crs = odr.header.geo_reference.as_deref().map(str::trim).filter(|g| !g.is_empty()).and_then(|g| {
            CrsDef::parse(g)
                .map_err(|e| {
                    progress.note(&Note::Warning(format!(
                        "{}: geoReference not usable ({e}); no reprojection",
                        axis.display()
                    )))
                })
                .ok()
        });
        if let Some(c) = crs {
            CrsDef::parse(c).map_err(anyhow::Error::msg)?;
        }
        // Each file's CRS: its own, else --crs.
        let mut opened = Vec::new();
        for path in paths {
            let path = path.as_ref();
            let mut r = LasReader::open(path)?;
            // Noise classes (7, 18) and withheld points are no part of any product.
            r.set_drop_noise(true);
            for w in r.warnings() {
                progress.note(&Note::Warning(format!("{}: {w}", path.display())));
            }
            // The file's CRS (by EPSG code, or by its WKT's PROJ string), else --crs.
            let own = match r.header().crs.def() {
                Some(def) => Some(def.map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?),
                None => crs.map(CrsDef::parse).transpose().map_err(anyhow::Error::msg)?,
            };
            opened.push((path, r, own));
        }
        // The points go into the axis' CRS; without one, into the first input's that names one:
        // inputs in another CRS are reprojected to it, never mixed.
        let target = match axis_crs {
            Some(c) => Some((c, None)),
            None => opened
                .iter()
                .find_map(|(_, r, own)| own.as_ref().map(|c| (c.label.clone(), r.header().crs.wkt.clone())))
                .map(|(label, wkt)| CrsDef::parse(&label).map(|c| (c, wkt)))
                .transpose()
                .map_err(anyhow::Error::msg)?,
        };
        let mut readers = Vec::new();
        for (index, (path, r, own)) in opened.into_iter().enumerate() {
            let reprojection = match (own, &target) {
                (Some(from), Some((to, _))) if !from.same_as(to) => {
                    let to = CrsDef::parse(&to.label).map_err(anyhow::Error::msg)?;
                    progress.note(&Note::Info(format!(
                        "{}: reprojecting from {} to {}",
                        path.display(),
                        from.label,
                        to.label
                    )));
                    Some(Reprojection::new(from, to).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?)
                }
                (None, Some((to, _))) => {
                    progress.note(&Note::Warning(format!(
                        "{}: no CRS in the file and no --crs; taken to be {}",
                        path.display(),
                        to.label
                    )));
                    None
                }
                _ => None,
            };
            if reprojection.is_none() {
                check_units(&r, path)?;
            }
            // Heights in feet become metres: by their own unit where the file gives one (key
            // 4099), else that of x and y (in metres unless reprojected).
            let c = &r.header().crs;
            let z_unit = c.vertical_unit.or(c.unit).unwrap_or(1.0);
            readers.push((index, r, reprojection, z_unit));
        }
        let crs = target.map(|(c, wkt)| {
            let wkt = c.epsg.and_then(CrsDef::wkt_of).map(str::to_string).or(wkt);
            (c.label.clone(), wkt)
        });
        Ok(Inputs { readers, crs, check_bounds: false, registration: None, progress })
    }

    /// Reads every input in order, handing chunks of points (map frame of the axis' CRS,
    /// metres) to `f`; reading runs a chunk ahead on a thread of its own. The read is an
    /// unnumbered stage of the progress (`index` 0), counting the points.
    pub fn stream(self, f: impl FnMut(&Points) -> Result<()>) -> Result<()> {
        let progress = self.progress;
        let stage = Stage { index: 0, of: 0, what: "reading points", len: Some(self.total()) };
        progress.stage(&stage);
        let t = std::time::Instant::now();
        let r = self.stream_reporting(|done, _| progress.advance(done), f);
        progress.stage_end(&stage, r.is_ok().then(|| t.elapsed().as_secs_f64()));
        r.map(|_| ())
    }

    /// Reads x, y and z only (the other columns of the chunks stay empty; GPS time too when
    /// a registration needs it).
    pub fn xyz_only(&mut self) {
        if self.registration.is_none() {
            self.readers.iter_mut().for_each(|(_, r, _, _)| r.set_xyz_only(true));
        }
    }

    /// Whether any input's points carry GPS time (what a registration goes by).
    pub fn have_time(&self) -> bool {
        self.readers.iter().any(|(_, r, _, _)| r.header().has_gps_time())
    }

    /// Reads `again` (these inputs opened once more) through and registers the passes: the
    /// trajectory's vertical error as a function of GPS time where the points saw the same
    /// ground twice (`pipeline::registration`), from then on taken off every point these
    /// inputs give. Returns it; None (and nothing changes) without GPS time or overlaps.
    pub fn register(&mut self, again: Inputs<'_>, progress: impl FnMut(u64, u64)) -> Result<Option<Registration>> {
        if !self.have_time() {
            return Ok(None);
        }
        let mut overlaps = Overlaps::new(RegistrationOptions::default());
        again.stream_reporting(progress, |p| {
            overlaps.add(&p.x, &p.y, &p.z, &p.gps_time);
            Ok(())
        })?;
        let r = overlaps.solve();
        self.set_registration(r.clone());
        Ok(r)
    }

    /// Sets (or clears) the registration taken off every point (one of `register`, or read
    /// back from a work unit's plan).
    pub fn set_registration(&mut self, r: Option<Registration>) {
        if r.is_some() {
            self.readers.iter_mut().for_each(|(_, r, _, _)| r.set_xyz_only(false));
        }
        self.registration = r.map(std::sync::Arc::new);
    }

    /// Points in all the files' headers.
    pub fn total(&self) -> u64 {
        self.readers.iter().map(|(_, r, _, _)| r.header().point_count).sum()
    }

    /// Points in each file's header, by its index among the inputs.
    pub fn header_counts(&self) -> Vec<(usize, u64)> {
        self.readers.iter().map(|(i, r, _, _)| (*i, r.header().point_count)).collect()
    }

    /// The map-frame box [min x, min y, max x, max y] of the inputs' header bounds, widened by
    /// 2 m and a thousandth of its size (bounds rounded to the stored resolution); `None`
    /// where a header's bounds are not finite or an input is reprojected (its bounds are in
    /// another CRS), and the road frame then covers the whole road.
    pub fn points_box(&self) -> Option<[f64; 4]> {
        let mut b = [f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY];
        for (_, r, rp, _) in &self.readers {
            let h = r.header();
            if rp.is_some() || !h.min.iter().chain(&h.max).all(|v| v.is_finite()) {
                return None;
            }
            if h.point_count == 0 {
                continue;
            }
            b = [b[0].min(h.min[0]), b[1].min(h.min[1]), b[2].max(h.max[0]), b[3].max(h.max[1])];
        }
        if !(b[0] <= b[2] && b[1] <= b[3]) {
            return None;
        }
        let m = 2.0 + 1e-3 * (b[2] - b[0]).max(b[3] - b[1]);
        Some([b[0] - m, b[1] - m, b[2] + m, b[3] + m])
    }

    /// Drops the inputs whose header bounds miss the box `lo..hi` (map x, y): they hold no
    /// point in it. Reprojected inputs stay (their bounds are in another CRS). Reading the
    /// others, a point outside its header's bounds is an error: the choice relied on them.
    pub fn retain_reaching(&mut self, lo: [f64; 2], hi: [f64; 2]) {
        self.check_bounds = true;
        self.readers.retain(|(_, r, rp, _)| {
            let h = r.header();
            rp.is_some() || !(h.max[0] < lo[0] || h.min[0] > hi[0] || h.max[1] < lo[1] || h.min[1] > hi[1])
        });
    }

    /// Like `stream`, calling `progress(points done, points in all)` after every chunk;
    /// returns the points read from each file, by its index among the inputs.
    pub fn stream_reporting(
        self,
        mut progress: impl FnMut(u64, u64),
        mut f: impl FnMut(&Points) -> Result<()>,
    ) -> Result<Vec<(usize, u64)>> {
        let (total, check_bounds, notes) = (self.total(), self.check_bounds, self.progress);
        let registration = self.registration.clone();
        let mut readers = self.readers;
        let paths: Vec<PathBuf> = readers.iter().map(|r| r.1.path().to_path_buf()).collect();
        let mut done = 0u64;
        let mut counts: Vec<(usize, u64)> = readers.iter().map(|r| (r.0, 0)).collect();
        let counts_ref = &mut counts;
        std::thread::scope(|sc| -> Result<()> {
            let (tx, rx) = std::sync::mpsc::sync_channel::<Result<(usize, Points)>>(1);
            // Chunks handed back for reuse: no fresh memory (and page faults) per chunk.
            let (back, returned) = std::sync::mpsc::sync_channel::<Points>(2);
            sc.spawn(move || {
                for (k, (_, r, reprojection, z_unit)) in readers.iter_mut().enumerate() {
                    loop {
                        let mut p = returned.try_recv().unwrap_or_default();
                        let chunk = r.read(&mut p, CHUNK).map_err(anyhow::Error::from).and_then(|n| {
                            if check_bounds && reprojection.is_none() {
                                outside_bounds(r, &p)?;
                            }
                            if let Some(rp) = reprojection.as_ref().filter(|_| n > 0) {
                                rp.apply(&mut p.x, &mut p.y)
                                    .map_err(|e| anyhow::anyhow!("{}: {e}", r.path().display()))?;
                            }
                            if *z_unit != 1.0 {
                                p.z.iter_mut().for_each(|z| *z *= *z_unit);
                            }
                            if let Some(reg) = &registration {
                                reg.apply(&mut p.z, &p.gps_time);
                            }
                            Ok(n)
                        });
                        match chunk {
                            Ok(0) => {
                                if r.dropped() > 0 {
                                    notes.note(&Note::Info(format!(
                                        "{}: {} noise (class 7 or 18) or withheld points left out",
                                        r.path().display(),
                                        r.dropped()
                                    )));
                                }
                                break;
                            }
                            Ok(_) => {
                                if tx.send(Ok((k, p))).is_err() {
                                    return;
                                }
                            }
                            Err(e) => {
                                let _ = tx.send(Err(e));
                                return;
                            }
                        }
                    }
                }
            });
            for p in rx {
                let (k, p) = p?;
                f(&p).map_err(|e| in_file(e, &paths[k], &p))?;
                done += p.len() as u64;
                counts_ref[k].1 += p.len() as u64;
                progress(done, total);
                let _ = back.try_send(p);
            }
            Ok(())
        })?;
        Ok(counts)
    }
}

/// An error of the work on a chunk of the points of `path`: a point named by its index in the
/// file, or else the file named.
fn in_file(e: anyhow::Error, path: &Path, p: &Points) -> anyhow::Error {
    match e.downcast_ref::<pipeline::Error>() {
        Some(pipeline::Error::Point { index, error }) => {
            anyhow::anyhow!("{}: point {}: {error}", path.display(), p.file_index(*index))
        }
        _ => e.context(path.display().to_string()),
    }
}

/// An error when a chunk of `r`'s points (not reprojected) lies outside its header's bounds
/// (by more than a scale step).
fn outside_bounds(r: &LasReader, p: &Points) -> Result<()> {
    let h = r.header();
    for (k, col) in [&p.x, &p.y].into_iter().enumerate() {
        let (lo, hi) = col.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
        let tol = h.scale[k].abs();
        if lo < h.min[k] - tol || hi > h.max[k] + tol {
            bail!(
                "{}: {} of the points reaches {lo}..{hi}, outside the header's bounds {}..{}; work units choose their inputs by these bounds: repair the header (e.g. `lasinfo -repair_bb`) and plan again",
                r.path().display(),
                ["x", "y"][k],
                h.min[k],
                h.max[k]
            );
        }
    }
    Ok(())
}

/// Points in feet cannot go on a metre axis without a reprojection (which needs the CRS of the
/// points and of the axis).
fn check_units(r: &LasReader, path: &Path) -> Result<()> {
    if let Some(u) = r.header().crs.unit {
        if (u - 1.0).abs() > 1e-12 {
            bail!(
                "{}: coordinates in units of {u} m (feet) and no reprojection: the file or --crs must give its EPSG code and the axis a geoReference",
                path.display()
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A roadside error about one point names it by its index in the file; others name the file.
    #[test]
    fn a_point_error_names_the_point_in_its_file() {
        let bad = voxel::Error::Invalid("too far".into());
        let e = anyhow::Error::from(pipeline::Error::Point { index: 3, error: bad });
        assert_eq!(in_file(e, Path::new("a.las"), &Points::default()).to_string(), "a.las: point 3: too far");
        let e = in_file(anyhow::Error::from(pipeline::Error::Usage("bad")), Path::new("a.las"), &Points::default());
        assert_eq!(format!("{e:#}"), "a.las: bad");
    }
}
