//! Where the surface candidates wait to be gridded: by 2 m slab along s ([`SLAB`]), in memory and,
//! past a limit, spilled to files in a directory of their own, appended to on a thread of their own
//! ([`Keeper`]) while the next points are projected; a slab is taken out ([`Taken`]) and read back,
//! in the order its candidates came, on whichever thread grids it.

use crate::Error;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};

/// One surface candidate: s (m), t and height above the OpenDRIVE surface (m).
#[derive(Debug, Clone, Copy)]
pub(super) struct Candidate {
    pub(super) s: f64,
    pub(super) t: f32,
    pub(super) h: f32,
}

/// A candidate as its slab holds it: s from the slab's start, t and height above the
/// OpenDRIVE surface (m). Single precision holds s within 2^-24 of the slab and its margins
/// (0.2 um at the default radius).
#[derive(Debug, Clone, Copy)]
pub(super) struct SlabPoint {
    pub(super) ds: f32,
    pub(super) t: f32,
    pub(super) h: f32,
}

/// Slab length along s, m (short, so a slab of dense points stays small): candidates are held (in memory, or spilled to disk) per slab and
/// gridded a slab at a time, so memory does not grow with the road's length or the points.
pub(crate) const SLAB: f64 = 2.0;

/// Candidates by slab; spilled to files in `dir` when more than `limit` are held.
#[derive(Debug)]
pub(super) struct Slabs {
    /// The runs of candidates each slab holds in memory, in order (kept as they came: no
    /// copying as a slab grows).
    mem: BTreeMap<i64, Vec<Vec<SlabPoint>>>,
    held: usize,
    limit: usize,
    dir: PathBuf,
    on_disk: BTreeSet<i64>,
    created: bool,
}

impl Slabs {
    pub(super) fn new(dir: PathBuf, limit: usize) -> Slabs {
        Slabs { mem: BTreeMap::new(), held: 0, limit, dir, on_disk: BTreeSet::new(), created: false }
    }

    fn file(&self, k: i64) -> PathBuf {
        self.dir.join(format!("slab_{k}.bin"))
    }

    /// Adds candidates to slab `k`, after those it holds.
    fn append(&mut self, k: i64, c: Vec<SlabPoint>) -> Result<(), Error> {
        self.held += c.len();
        self.mem.entry(k).or_default().push(c);
        if self.held > self.limit {
            self.spill()?;
        }
        Ok(())
    }

    /// Appends every slab held in memory to its file.
    fn spill(&mut self) -> Result<(), Error> {
        let io = |error: std::io::Error, p: &Path| Error::Spill { path: p.to_path_buf(), error };
        if !self.created {
            std::fs::create_dir_all(&self.dir).map_err(|e| io(e, &self.dir))?;
            self.created = true;
        }
        // Through a small buffer: no second copy of the slabs in memory.
        let mut bytes = vec![0u8; SPILL_RUN * CANDIDATE_BYTES];
        for (k, runs) in std::mem::take(&mut self.mem) {
            let path = self.file(k);
            let mut f = std::fs::OpenOptions::new().create(true).append(true).open(&path).map_err(|e| io(e, &path))?;
            for run in &runs {
                for piece in run.chunks(SPILL_RUN) {
                    let out = &mut bytes[..piece.len() * CANDIDATE_BYTES];
                    for (b, c) in out.chunks_exact_mut(CANDIDATE_BYTES).zip(piece) {
                        b[0..4].copy_from_slice(&c.ds.to_le_bytes());
                        b[4..8].copy_from_slice(&c.t.to_le_bytes());
                        b[8..12].copy_from_slice(&c.h.to_le_bytes());
                    }
                    f.write_all(out).map_err(|e| io(e, &path))?;
                }
            }
            self.on_disk.insert(k);
        }
        self.held = 0;
        Ok(())
    }

    /// Removes slab `k`: its candidates held in memory and its spill file, to be read by
    /// [`Taken::load`] (on whichever thread grids it).
    pub(super) fn take(&mut self, k: i64) -> Taken {
        let held = self.mem.remove(&k).unwrap_or_default();
        self.held -= held.iter().map(Vec::len).sum::<usize>();
        Taken { file: self.on_disk.remove(&k).then(|| self.file(k)), held }
    }
}

/// Bytes of a spilled candidate: ds, t and h, little-endian.
const CANDIDATE_BYTES: usize = 12;

/// Candidates written (or read back) at a time.
const SPILL_RUN: usize = 4096;

/// A slab taken from [`Slabs`]: the candidates held in memory, and the file of those spilled
/// before them.
pub(super) struct Taken {
    file: Option<PathBuf>,
    held: Vec<Vec<SlabPoint>>,
}

impl Taken {
    /// Removes the slab's spill file without reading it.
    pub(super) fn discard(self) {
        if let Some(path) = &self.file {
            let _ = std::fs::remove_file(path);
        }
    }

    /// The slab's candidates in the order they came (the spilled ones, appended at each spill,
    /// then those held); removes the file.
    pub(super) fn load(mut self) -> Result<Vec<SlabPoint>, Error> {
        let held = self.held.iter().map(Vec::len).sum::<usize>();
        if self.file.is_none() && self.held.len() <= 1 {
            return Ok(self.held.pop().unwrap_or_default());
        }
        let mut v = Vec::new();
        if let Some(path) = &self.file {
            // In pieces through a small buffer: no second copy of the slab in memory.
            let io = |error: std::io::Error| Error::Spill { path: path.clone(), error };
            let mut f = std::fs::File::open(path).map_err(io)?;
            let len = f.metadata().map_err(io)?.len() as usize;
            v.reserve_exact(len / CANDIDATE_BYTES + held);
            let mut buf = vec![0u8; SPILL_RUN * CANDIDATE_BYTES];
            let mut filled = 0;
            loop {
                let n = match std::io::Read::read(&mut f, &mut buf[filled..]) {
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(io(e)),
                };
                filled += n;
                let whole = filled / CANDIDATE_BYTES * CANDIDATE_BYTES;
                v.extend(buf[..whole].chunks_exact(CANDIDATE_BYTES).map(|r| {
                    let f4 = |b: &[u8]| f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                    SlabPoint { ds: f4(&r[0..4]), t: f4(&r[4..8]), h: f4(&r[8..12]) }
                }));
                buf.copy_within(whole..filled, 0);
                filled -= whole;
                if n == 0 {
                    break;
                }
            }
            let _ = std::fs::remove_file(path);
        } else {
            v.reserve_exact(held);
        }
        v.extend(self.held.into_iter().flatten());
        Ok(v)
    }
}

/// Candidates by slab of runs of points, in order.
type SlabRuns = Vec<Vec<(i64, Vec<SlabPoint>)>>;

/// Slabs appended to (and spilled) on a thread of their own, so that the projection of the next
/// points goes on meanwhile; started with the first points.
pub(super) struct Keeper {
    slabs: Option<Slabs>,
    tx: Option<std::sync::mpsc::SyncSender<SlabRuns>>,
    thread: Option<std::thread::JoinHandle<Result<Slabs, Error>>>,
}

impl Keeper {
    pub(super) fn new(slabs: Slabs) -> Keeper {
        Keeper { slabs: Some(slabs), tx: None, thread: None }
    }

    /// Appends runs of candidates by slab (in order); an error when spilling failed.
    pub(super) fn append(&mut self, runs: SlabRuns) -> Result<(), Error> {
        if let Some(mut slabs) = self.slabs.take() {
            let (tx, rx) = std::sync::mpsc::sync_channel::<SlabRuns>(2);
            let spawned = std::thread::Builder::new().name("roadscan-slabs".into()).spawn(move || {
                for (k, c) in rx.into_iter().flatten().flatten() {
                    slabs.append(k, c)?;
                }
                Ok(slabs)
            });
            self.thread = Some(spawned.map_err(|error| Error::ThreadStart { which: "the slab thread", error })?);
            self.tx = Some(tx);
        }
        match &self.tx {
            Some(tx) if tx.send(runs).is_ok() => Ok(()),
            // The thread stopped: its error.
            _ => self.take_slabs().map(|_| ()).and(Err(Error::ThreadStopped { which: "the slab thread" })),
        }
    }

    /// The slabs, once all appended.
    pub(super) fn take_slabs(&mut self) -> Result<Slabs, Error> {
        self.tx = None;
        match (self.slabs.take(), self.thread.take()) {
            (Some(s), _) => Ok(s),
            (None, Some(t)) => t.join().map_err(|_| Error::Thread { which: "the slab thread" })?,
            (None, None) => Err(Error::Usage("the slabs were taken")),
        }
    }
}

impl Drop for Keeper {
    fn drop(&mut self) {
        // Waits for the thread, so that its slabs (and their spill files) go too.
        let _ = self.take_slabs();
    }
}

impl Drop for Slabs {
    fn drop(&mut self) {
        if self.created {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}
