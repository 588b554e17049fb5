//! Byte encoding of partial grids: a work unit of a distributed build writes what its points
//! added (voxels, ribbon pixels, cross-section cells) and the final step adds the parts
//! together. Little-endian, no padding; the reader never panics on short or bad bytes.

/// The cells `first..end` of `total` cells of `step` metres from `s_range.0` that s in
/// `part.0 <= s < part.1` reaches (all of them without `part`): what a work unit holds of a
/// grid along s, numbered as in the whole grid.
pub fn cells_of(s_range: (f64, f64), step: f64, total: usize, part: Option<(f64, f64)>) -> (usize, usize) {
    match part {
        None => (0, total),
        Some((a, b)) => {
            let cell = |s: f64| ((s - s_range.0) / step).floor().clamp(0.0, total as f64) as usize;
            let first = cell(a.max(s_range.0));
            (first, (cell(b.min(s_range.1)) + 1).clamp(first, total))
        }
    }
}

/// Why bytes written by a [`Writer`] do not read back as the part they should be: each names the
/// byte offset (from the start of the [`Reader`]'s bytes) where reading stopped.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PartError {
    /// The bytes end before a value: `expected` more bytes were needed at `offset`.
    #[error("truncated at byte {offset} ({expected} more expected)")]
    Truncated {
        /// Where the value starts.
        offset: usize,
        /// Its size in bytes.
        expected: usize,
    },
    /// A count or index that does not fit this machine's `usize`.
    #[error("byte {offset}: a count too large")]
    CountTooLarge {
        /// Where the count starts.
        offset: usize,
    },
    /// Bytes after the last value read.
    #[error("{left} bytes left over at byte {offset}")]
    LeftOver {
        /// Where the first byte not read is.
        offset: usize,
        /// How many bytes were not read.
        left: usize,
    },
    /// A value read is not what the reader expected (see [`Reader::expect`]).
    #[error("byte {offset}: {what}")]
    Unexpected {
        /// The offset after the value.
        offset: usize,
        /// What is wrong.
        what: &'static str,
    },
    /// The part is of a grid of another geometry (cell, extent, origin) than the one it is
    /// merged into; `what` names the grid, e.g. "a left ribbon part", "cross sections".
    #[error("{what} of another geometry")]
    OtherGeometry {
        /// The grid.
        what: String,
    },
    /// The part is of a voxel grid of another lattice.
    #[error("voxels of {size} m at {origin:?}, expected {expected_size} m at {expected_origin:?}")]
    OtherLattice {
        /// The part's voxel size, m.
        size: f64,
        /// The part's origin.
        origin: [f64; 3],
        /// The grid's voxel size, m.
        expected_size: f64,
        /// The grid's origin.
        expected_origin: [f64; 3],
    },
}

/// Appends little-endian values to a byte buffer.
#[derive(Debug, Default)]
pub struct Writer {
    /// The bytes so far.
    pub bytes: Vec<u8>,
}

impl Writer {
    /// A byte.
    pub fn u8(&mut self, v: u8) {
        self.bytes.push(v);
    }
    /// 16 bits.
    pub fn u16(&mut self, v: u16) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }
    /// 32 bits.
    pub fn u32(&mut self, v: u32) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }
    /// 64 bits.
    pub fn u64(&mut self, v: u64) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }
    /// 64 bits, signed.
    pub fn i64(&mut self, v: i64) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }
    /// A float, bit for bit.
    pub fn f32(&mut self, v: f32) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }
    /// A double, bit for bit.
    pub fn f64(&mut self, v: f64) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }
}

/// Reads what a [`Writer`] wrote; every read fails cleanly past the end, naming the offset.
#[derive(Debug)]
pub struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    /// Reads `bytes` from the start.
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes, at: 0 }
    }

    /// The byte offset of the next read.
    pub fn offset(&self) -> usize {
        self.at
    }

    fn take<const N: usize>(&mut self) -> Result<[u8; N], PartError> {
        let b = self.bytes.get(self.at..self.at + N).ok_or(PartError::Truncated { offset: self.at, expected: N })?;
        self.at += N;
        let mut out = [0u8; N];
        out.copy_from_slice(b);
        Ok(out)
    }

    /// A byte.
    pub fn u8(&mut self) -> Result<u8, PartError> {
        Ok(self.take::<1>()?[0])
    }
    /// 16 bits.
    pub fn u16(&mut self) -> Result<u16, PartError> {
        Ok(u16::from_le_bytes(self.take()?))
    }
    /// 32 bits.
    pub fn u32(&mut self) -> Result<u32, PartError> {
        Ok(u32::from_le_bytes(self.take()?))
    }
    /// 64 bits.
    pub fn u64(&mut self) -> Result<u64, PartError> {
        Ok(u64::from_le_bytes(self.take()?))
    }
    /// 64 bits as a count or index (fails when it does not fit).
    pub fn usize(&mut self) -> Result<usize, PartError> {
        let at = self.at;
        usize::try_from(self.u64()?).map_err(|_| PartError::CountTooLarge { offset: at })
    }
    /// 64 bits, signed.
    pub fn i64(&mut self) -> Result<i64, PartError> {
        Ok(i64::from_le_bytes(self.take()?))
    }
    /// A float.
    pub fn f32(&mut self) -> Result<f32, PartError> {
        Ok(f32::from_le_bytes(self.take()?))
    }
    /// A double.
    pub fn f64(&mut self) -> Result<f64, PartError> {
        Ok(f64::from_le_bytes(self.take()?))
    }

    /// Fails unless every byte was read.
    pub fn end(&self) -> Result<(), PartError> {
        if self.at == self.bytes.len() {
            Ok(())
        } else {
            Err(PartError::LeftOver { offset: self.at, left: self.bytes.len() - self.at })
        }
    }

    /// Fails, naming the offset, unless `ok`.
    pub fn expect(&self, ok: bool, what: &'static str) -> Result<(), PartError> {
        if ok {
            Ok(())
        } else {
            Err(PartError::Unexpected { offset: self.at, what })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every failure is a variant a caller can match, with the offset, and the message of old.
    #[test]
    fn short_bad_and_long_bytes_are_typed_errors_naming_the_offset() {
        let mut w = Writer::default();
        w.u32(7);
        w.u64(u64::MAX);
        let mut r = Reader::new(&w.bytes);
        assert_eq!(r.u32(), Ok(7));
        let at = r.offset();
        if usize::BITS < 64 {
            assert_eq!(r.usize(), Err(PartError::CountTooLarge { offset: at }));
        } else {
            assert_eq!(r.usize(), Ok(usize::MAX));
        }
        let e = r.u16().unwrap_err();
        assert_eq!(e, PartError::Truncated { offset: 12, expected: 2 });
        assert_eq!(e.to_string(), "truncated at byte 12 (2 more expected)");

        let r = Reader::new(&w.bytes[..5]);
        assert_eq!(r.end(), Err(PartError::LeftOver { offset: 0, left: 5 }));
        assert_eq!(r.end().unwrap_err().to_string(), "5 bytes left over at byte 0");
        let e = r.expect(false, "rows outside").unwrap_err();
        assert_eq!(e, PartError::Unexpected { offset: 0, what: "rows outside" });
        assert_eq!(e.to_string(), "byte 0: rows outside");
        assert_eq!(r.expect(true, "fine"), Ok(()));
    }
}
