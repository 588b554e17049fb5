//! Data in the page: base64, and small palette PNGs (stored, uncompressed deflate) for rasters
//! drawn as `data:` URIs.

/// Standard base64 with padding.
pub(crate) fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n =
            (u32::from(c[0]) << 16) | (u32::from(*c.get(1).unwrap_or(&0)) << 8) | u32::from(*c.get(2).unwrap_or(&0));
        for k in 0..4 {
            if k <= c.len() {
                out.push(A[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The little-endian bytes of `xs` as single-precision floats.
pub(crate) fn f32_bytes(xs: impl IntoIterator<Item = f64>) -> Vec<u8> {
    xs.into_iter().flat_map(|x| (x as f32).to_le_bytes()).collect()
}

fn crc32(data: &[u8]) -> u32 {
    let mut c = 0xffff_ffffu32;
    for &b in data {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 != 0 { 0xedb8_8320 ^ (c >> 1) } else { c >> 1 };
        }
    }
    !c
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let crc = crc32(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

/// A PNG of `width` x `height` palette indices (rows top down), with the palette's RGBA
/// colours (alpha through tRNS). None for an empty image or indices beyond the palette.
pub(crate) fn palette_png(width: usize, height: usize, index: &[u8], palette: &[[u8; 4]]) -> Option<Vec<u8>> {
    if width == 0 || height == 0 || index.len() != width * height || palette.is_empty() || palette.len() > 256 {
        return None;
    }
    if index.iter().any(|&i| usize::from(i) >= palette.len()) {
        return None;
    }
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&u32::try_from(width).ok()?.to_be_bytes());
    ihdr.extend_from_slice(&u32::try_from(height).ok()?.to_be_bytes());
    ihdr.extend_from_slice(&[8, 3, 0, 0, 0]);
    chunk(&mut png, b"IHDR", &ihdr);
    chunk(&mut png, b"PLTE", &palette.iter().flat_map(|c| [c[0], c[1], c[2]]).collect::<Vec<_>>());
    chunk(&mut png, b"tRNS", &palette.iter().map(|c| c[3]).collect::<Vec<_>>());
    // Scanlines with filter 0, in stored deflate blocks of at most 65,535 bytes.
    let mut raw = Vec::with_capacity((width + 1) * height);
    for row in index.chunks(width) {
        raw.push(0);
        raw.extend_from_slice(row);
    }
    let mut z = vec![0x78, 0x01];
    let blocks: Vec<&[u8]> = raw.chunks(65_535).collect();
    for (k, b) in blocks.iter().enumerate() {
        z.push(u8::from(k + 1 == blocks.len()));
        let n = b.len() as u16;
        z.extend_from_slice(&n.to_le_bytes());
        z.extend_from_slice(&(!n).to_le_bytes());
        z.extend_from_slice(b);
    }
    let (mut a, mut b) = (1u32, 0u32);
    for &x in &raw {
        a = (a + u32::from(x)) % 65_521;
        b = (b + a) % 65_521;
    }
    z.extend_from_slice(&((b << 16) | a).to_be_bytes());
    chunk(&mut png, b"IDAT", &z);
    chunk(&mut png, b"IEND", &[]);
    Some(png)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn base64_of_known_strings() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn crc_of_known_string() {
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
    }

    #[test]
    fn palette_png_has_its_chunks_and_rejects_bad_indices() {
        let png = palette_png(3, 2, &[0, 1, 0, 1, 0, 1], &[[0, 0, 0, 0], [255, 0, 0, 255]]).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        assert_eq!(&png[12..16], b"IHDR");
        assert!(png.windows(4).any(|w| w == b"tRNS") && png.ends_with(&[0xae, 0x42, 0x60, 0x82]));
        assert!(palette_png(3, 2, &[0, 1, 2, 1, 0, 1], &[[0; 4], [255; 4]]).is_none());
        assert!(palette_png(0, 2, &[], &[[0; 4]]).is_none());
    }
}
