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

    fn take<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let b = self
            .bytes
            .get(self.at..self.at + N)
            .ok_or_else(|| format!("truncated at byte {} ({} more expected)", self.at, N))?;
        self.at += N;
        let mut out = [0u8; N];
        out.copy_from_slice(b);
        Ok(out)
    }

    /// A byte.
    pub fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take::<1>()?[0])
    }
    /// 16 bits.
    pub fn u16(&mut self) -> Result<u16, String> {
        Ok(u16::from_le_bytes(self.take()?))
    }
    /// 32 bits.
    pub fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.take()?))
    }
    /// 64 bits.
    pub fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.take()?))
    }
    /// 64 bits as a count or index (fails when it does not fit).
    pub fn usize(&mut self) -> Result<usize, String> {
        let at = self.at;
        usize::try_from(self.u64()?).map_err(|_| format!("byte {at}: a count too large"))
    }
    /// 64 bits, signed.
    pub fn i64(&mut self) -> Result<i64, String> {
        Ok(i64::from_le_bytes(self.take()?))
    }
    /// A float.
    pub fn f32(&mut self) -> Result<f32, String> {
        Ok(f32::from_le_bytes(self.take()?))
    }
    /// A double.
    pub fn f64(&mut self) -> Result<f64, String> {
        Ok(f64::from_le_bytes(self.take()?))
    }

    /// Fails unless every byte was read.
    pub fn end(&self) -> Result<(), String> {
        if self.at == self.bytes.len() {
            Ok(())
        } else {
            Err(format!("{} bytes left over at byte {}", self.bytes.len() - self.at, self.at))
        }
    }

    /// Fails, naming the offset, unless `ok`.
    pub fn expect(&self, ok: bool, what: &str) -> Result<(), String> {
        if ok {
            Ok(())
        } else {
            Err(format!("byte {}: {what}", self.at))
        }
    }
}
