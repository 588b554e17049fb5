//! Shared-memory segments any local process maps (Python's `SharedMemory(name)`, numpy's
//! `memmap`, MATLAB's `memmapfile`): a file under /dev/shm with a 128-byte little-endian
//! header and a payload, guarded by a sequence counter (a seqlock: odd while the writer writes,
//! even and unchanged across a read when the read is whole).
//!
//! The segment is written and read with positioned file I/O (`pwrite`/`pread` into the shared
//! page cache), not a mapping, so this crate needs no `unsafe`; other processes map the same
//! pages. Layout (docs/bridges.md has the full table):
//! magic `roadscan` (0..8), version u32 (8), type u32 (12), sequence u64 (16), tick u64 (24),
//! time f64 (32), element u32 (40), layout u32 (44), shape 4 x u32 (48), payload bytes u64 (64),
//! capacity u64 (72), reserved to 128, payload from 128.

use crate::Error;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// Bytes before the payload.
pub const HEADER: usize = 128;
/// The first eight bytes of every segment.
pub const MAGIC: &[u8; 8] = b"roadscan";
/// The header's version.
pub const VERSION: u32 = 1;
const SEQ: u64 = 16;

/// What a segment holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum Kind {
    /// The vehicle state (f64 values).
    State = 1,
    /// A camera image (u8, column-major planes in the seed's MATLAB layout).
    Image = 2,
    /// LiDAR words (u32 per beam).
    Lidar = 3,
    /// Controls a client writes (f64: throttle %, brake %, steering -1..1).
    Control = 4,
}

/// The element type of the payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum Element {
    /// IEEE-754 double, little-endian.
    F64 = 1,
    /// Unsigned byte.
    U8 = 2,
    /// u32, little-endian.
    U32 = 3,
    /// IEEE-754 single, little-endian.
    F32 = 4,
}

/// How a multi-dimensional payload is ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum Layout {
    /// Last index fastest (C, numpy's default).
    RowMajor = 0,
    /// First index fastest, one plane per channel (MATLAB, the seed's images).
    ColumnMajor = 1,
}

/// What one write puts in a segment besides the payload.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Meta {
    /// Tick number.
    pub tick: u64,
    /// Simulated time, s.
    pub time: f64,
    /// Element type.
    pub element: Element,
    /// Ordering.
    pub layout: Layout,
    /// Dimensions (unused ones 1), e.g. [height, width, 3, 1] for an image.
    pub shape: [u32; 4],
}

/// A whole read of a segment.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// The sequence counter it was read at (even).
    pub sequence: u64,
    /// Tick.
    pub tick: u64,
    /// Time, s.
    pub time: f64,
    /// Shape.
    pub shape: [u32; 4],
    /// The payload.
    pub payload: Vec<u8>,
}

/// A segment file.
#[derive(Debug)]
pub struct Segment {
    file: File,
    path: PathBuf,
    capacity: usize,
    sequence: u64,
}

/// Where named segments live: /dev/shm, as Python's and POSIX shared memory expect.
pub fn default_dir() -> PathBuf {
    PathBuf::from("/dev/shm")
}

/// Checks a segment name: 1-200 letters, digits, '.', '_' or '-', not starting with '.'.
pub fn check_name(name: &str) -> Result<(), Error> {
    let ok = !name.is_empty()
        && name.len() <= 200
        && name.bytes().all(|c| c.is_ascii_alphanumeric() || b"._-".contains(&c))
        && !name.starts_with('.');
    if ok {
        Ok(())
    } else {
        Err(Error::Message(format!(
            "segment name {name:?}: use 1-200 letters, digits, '.', '_' or '-', not starting with '.'"
        )))
    }
}

impl Segment {
    /// Creates (or replaces) segment `name` in `dir` for `kind`, with room for `capacity`
    /// payload bytes; the header is written with sequence 0 (nothing written yet).
    pub fn create(dir: &Path, name: &str, kind: Kind, capacity: usize) -> Result<Segment, Error> {
        check_name(name)?;
        let path = dir.join(name);
        // Made whole under a temporary name and renamed into place, so a client that sees the
        // name sees the header (a client writing into a file still being made lost its write).
        let tmp = dir.join(format!(".{name}.roadscan-tmp-{}", std::process::id()));
        let io = |e| Error::Io { what: format!("shared memory {}", path.display()), source: e };
        let file = OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&tmp).map_err(io)?;
        let made = (|| {
            file.set_len((HEADER + capacity) as u64)?;
            let mut h = [0u8; HEADER];
            h[..8].copy_from_slice(MAGIC);
            h[8..12].copy_from_slice(&VERSION.to_le_bytes());
            h[12..16].copy_from_slice(&(kind as u32).to_le_bytes());
            h[72..80].copy_from_slice(&(capacity as u64).to_le_bytes());
            file.write_all_at(&h, 0)?;
            std::fs::rename(&tmp, &path)
        })();
        if let Err(e) = made {
            let _ = std::fs::remove_file(&tmp);
            return Err(io(e));
        }
        Ok(Segment { file, path, capacity, sequence: 0 })
    }

    /// Opens an existing segment (e.g. one a client writes), checking its header.
    pub fn open(path: &Path) -> Result<Segment, Error> {
        let io = |e| Error::Io { what: format!("shared memory {}", path.display()), source: e };
        let file = OpenOptions::new().read(true).write(true).open(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len() as usize;
        let mut h = [0u8; HEADER];
        if len < HEADER {
            return Err(Error::Message(format!("{}: {len} bytes, shorter than the header", path.display())));
        }
        file.read_exact_at(&mut h, 0).map_err(io)?;
        if &h[..8] != MAGIC || h[8..12] != VERSION.to_le_bytes() {
            return Err(Error::Message(format!("{}: not a roadscan segment of version {VERSION}", path.display())));
        }
        let sequence = u64::from_le_bytes(h[16..24].try_into().unwrap_or([0; 8]));
        Ok(Segment { file, path: path.to_path_buf(), capacity: len - HEADER, sequence })
    }

    /// The segment's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes one frame: sequence odd, payload and header, sequence even.
    pub fn write(&mut self, meta: &Meta, payload: &[u8]) -> Result<(), Error> {
        if payload.len() > self.capacity {
            return Err(Error::Message(format!(
                "{}: {} bytes do not fit its {} payload bytes",
                self.path.display(),
                payload.len(),
                self.capacity
            )));
        }
        let io = |e| Error::Io { what: format!("writing {}", self.path.display()), source: e };
        // Odd while writing (from a segment left odd by a writer that died, the next odd one).
        self.sequence = (self.sequence + 1) | 1;
        self.file.write_all_at(&self.sequence.to_le_bytes(), SEQ).map_err(io)?;
        self.file.write_all_at(payload, HEADER as u64).map_err(io)?;
        let mut h = [0u8; 48];
        h[0..8].copy_from_slice(&meta.tick.to_le_bytes());
        h[8..16].copy_from_slice(&meta.time.to_le_bytes());
        h[16..20].copy_from_slice(&(meta.element as u32).to_le_bytes());
        h[20..24].copy_from_slice(&(meta.layout as u32).to_le_bytes());
        for (k, d) in meta.shape.iter().enumerate() {
            h[24 + 4 * k..28 + 4 * k].copy_from_slice(&d.to_le_bytes());
        }
        h[40..48].copy_from_slice(&(payload.len() as u64).to_le_bytes());
        self.file.write_all_at(&h, 24).map_err(io)?;
        self.sequence = self.sequence.wrapping_add(1);
        self.file.write_all_at(&self.sequence.to_le_bytes(), SEQ).map_err(io)
    }

    /// A whole read (retried while a writer is inside a write), or None when nothing was
    /// written yet or no whole read succeeded in `tries`.
    pub fn read(&self, tries: usize) -> Result<Option<Snapshot>, Error> {
        let io = |e| Error::Io { what: format!("reading {}", self.path.display()), source: e };
        let seq = || -> Result<u64, Error> {
            let mut b = [0u8; 8];
            self.file.read_exact_at(&mut b, SEQ).map_err(io)?;
            Ok(u64::from_le_bytes(b))
        };
        for _ in 0..tries {
            let s1 = seq()?;
            if s1 == 0 {
                return Ok(None);
            }
            if s1 & 1 == 1 {
                std::hint::spin_loop();
                continue;
            }
            let mut h = [0u8; 48];
            self.file.read_exact_at(&mut h, 24).map_err(io)?;
            let le64 = |a: usize| u64::from_le_bytes(h[a..a + 8].try_into().unwrap_or([0; 8]));
            let len = le64(40) as usize;
            if len > self.capacity {
                continue;
            }
            let mut payload = vec![0u8; len];
            self.file.read_exact_at(&mut payload, HEADER as u64).map_err(io)?;
            if seq()? == s1 {
                let shape =
                    std::array::from_fn(|k| u32::from_le_bytes(h[24 + 4 * k..28 + 4 * k].try_into().unwrap_or([0; 4])));
                return Ok(Some(Snapshot {
                    sequence: s1,
                    tick: le64(0),
                    time: f64::from_bits(le64(8)),
                    shape,
                    payload,
                }));
            }
        }
        Ok(None)
    }

    /// Removes the segment's file.
    pub fn remove(self) -> Result<(), Error> {
        std::fs::remove_file(&self.path)
            .map_err(|e| Error::Io { what: format!("removing {}", self.path.display()), source: e })
    }
}

/// Little-endian bytes of f64 values (a state or control payload).
pub fn f64_bytes(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// f64 values of little-endian bytes (trailing bytes ignored).
pub fn f64_values(b: &[u8]) -> Vec<f64> {
    b.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8]))).collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;

    fn dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("bridges-shm-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_frame_reads_back_whole_with_its_header() {
        let d = dir("rt");
        let mut s = Segment::create(&d, "t.state", Kind::State, 64).unwrap();
        assert_eq!(s.read(10).unwrap(), None, "nothing written yet");
        let meta = Meta { tick: 7, time: 0.07, element: Element::F64, layout: Layout::RowMajor, shape: [3, 1, 1, 1] };
        s.write(&meta, &f64_bytes(&[1.0, 2.5, -3.0])).unwrap();
        let r = Segment::open(s.path()).unwrap();
        let got = r.read(10).unwrap().unwrap();
        assert_eq!((got.sequence, got.tick, got.time, got.shape), (2, 7, 0.07, [3, 1, 1, 1]));
        assert_eq!(f64_values(&got.payload), vec![1.0, 2.5, -3.0]);
        // The raw header as another process sees it.
        let raw = std::fs::read(s.path()).unwrap();
        assert_eq!(&raw[..8], b"roadscan");
        assert_eq!(raw.len(), HEADER + 64);
        assert_eq!(u32::from_le_bytes(raw[12..16].try_into().unwrap()), Kind::State as u32);
        assert!(s.write(&meta, &[0u8; 65]).is_err(), "over capacity");
        assert!(Segment::create(&d, "../x", Kind::State, 8).is_err());
        std::fs::write(d.join("short"), b"roadscan").unwrap();
        assert!(Segment::open(&d.join("short")).is_err());
        s.remove().unwrap();
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_reader_polling_while_the_writer_writes_never_sees_a_torn_frame() {
        let d = dir("stress");
        let mut w = Segment::create(&d, "t.image", Kind::Image, 1 << 16).unwrap();
        let path = w.path().to_path_buf();
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stop = done.clone();
        let reader = std::thread::spawn(move || {
            let r = Segment::open(&path).unwrap();
            let (mut whole, mut torn, mut last) = (0u64, 0u64, 0u64);
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                if let Some(s) = r.read(1000).unwrap() {
                    let want = (s.tick % 251) as u8;
                    if s.payload.len() != 1 << 16 || s.payload.iter().any(|&b| b != want) {
                        torn += 1;
                    }
                    assert!(s.tick >= last, "ticks go back");
                    last = s.tick;
                    whole += 1;
                }
            }
            (whole, torn)
        });
        // The writer writes back to back for 0.5 s (no pause between frames, harder on the
        // reader than a simulator's ticks).
        let mut frame = vec![0u8; 1 << 16];
        let start = std::time::Instant::now();
        let mut tick = 0u64;
        while start.elapsed() < std::time::Duration::from_millis(500) {
            tick += 1;
            frame.fill((tick % 251) as u8);
            let meta = Meta {
                tick,
                time: tick as f64 * 0.01,
                element: Element::U8,
                layout: Layout::ColumnMajor,
                shape: [256, 256, 1, 1],
            };
            w.write(&meta, &frame).unwrap();
            if tick.is_multiple_of(4) {
                std::thread::yield_now();
            }
        }
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        let (whole, torn) = reader.join().unwrap();
        eprintln!("{tick} frames written, {whole} whole reads, {torn} torn");
        assert!(whole > 10, "the reader read {whole} frames");
        assert_eq!(torn, 0);
        std::fs::remove_dir_all(&d).unwrap();
    }
}
