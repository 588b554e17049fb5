//! Hostile LAZ files: the laszip VLR and the chunk table are checked against the file before
//! the `laz` crate sees them, so a count it would allocate by (chunks, a chunk's points, a
//! layer's bytes) never exceeds what the file backs. Real samples and our own LAZ, patched
//! here; a bad table is an error naming the file and the byte.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

mod common;

use common::{dir, options, points, read_all};
use scan::{write_las, LasReader, Points};
use std::path::Path;

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

/// The first error reading every point of `bytes` (written to `d/name`), or "no error" and
/// the points read and the warnings.
fn outcome(d: &Path, name: &str, bytes: &[u8]) -> String {
    let path = d.join(name);
    std::fs::write(&path, bytes).unwrap();
    let mut r = match LasReader::open(&path) {
        Err(e) => return e.to_string(),
        Ok(r) => r,
    };
    let (mut p, mut n) = (Points::default(), 0);
    loop {
        match r.read(&mut p, 1 << 16) {
            Err(e) => return e.to_string(),
            Ok(0) => return format!("no error: {n} points; warnings {:?}", r.warnings()),
            Ok(k) => n += k,
        }
    }
}

/// (offset to the points, data start of the laszip VLR, offset of the chunk table).
fn layout(b: &[u8]) -> (usize, usize, usize) {
    let header = u16::from_le_bytes([b[94], b[95]]) as usize;
    let offset = u32_at(b, 96) as usize;
    let mut at = header;
    let mut laszip = 0;
    for _ in 0..u32_at(b, 100) {
        let len = u16::from_le_bytes([b[at + 20], b[at + 21]]) as usize;
        if u16::from_le_bytes([b[at + 18], b[at + 19]]) == 22204 {
            laszip = at + 54;
        }
        at += 54 + len;
    }
    let table = i64::from_le_bytes(b[offset..offset + 8].try_into().unwrap()) as usize;
    (offset, laszip, table)
}

/// Peak resident memory of this process so far, bytes (Linux; `None` elsewhere).
fn peak_rss() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb = s.lines().find(|l| l.starts_with("VmHWM:"))?.split_whitespace().nth(1)?.parse::<u64>().ok()?;
    Some(kb * 1024)
}

/// Our own LAS 1.4 LAZ (layered, 3 chunks of 50,000 points) patched: the chunk count, a
/// chunk's layer size, the table's byte counts, variable chunks. Before the checks, the chunk
/// count 2^32-1 asked for 68 GB (the process aborted) and the layer size 4 GB resident.
#[test]
fn hostile_chunk_tables_and_layers_are_errors_naming_the_byte() {
    let d = dir("laz-hostile");
    let laz = d.join("ours.laz");
    write_las(&laz, &points(120_000), &options()).unwrap();
    let good = std::fs::read(&laz).unwrap();
    let (offset, vlr, table) = layout(&good);
    assert_eq!((u32_at(&good, table + 4), u32_at(&good, vlr + 12)), (3, 50_000));

    let e = outcome(&d, "count.laz", &{
        let mut b = good.clone();
        b[table + 4..table + 8].copy_from_slice(&u32::MAX.to_le_bytes());
        b
    });
    assert!(
        e.contains("count.laz") && e.contains(&format!("byte {}", table + 4)) && e.contains("counts 4294967295 chunks"),
        "{e}"
    );

    // The z layer of the first chunk (after its raw 30-byte point, its count and the xy layer
    // size) said to be 4 GB.
    let sizes = offset + 8 + 30 + 4;
    let e = outcome(&d, "layer.laz", &{
        let mut b = good.clone();
        b[sizes + 4..sizes + 8].copy_from_slice(&0xFFFF_FFF0u32.to_le_bytes());
        b
    });
    assert!(e.contains("layer.laz") && e.contains(&format!("byte {sizes}")) && e.contains("chunk 0"), "{e}");

    // The table rewritten: a chunk's bytes beyond the table; variable chunks whose points
    // sum to fewer than the header's (a warning, the points the table holds).
    let old = laz::laszip::ChunkTable::read(&mut std::io::Cursor::new(&good[table..]), false).unwrap();
    let bytes: Vec<u64> = old.as_ref().iter().map(|e| e.byte_count).collect();
    let with_table = |entries: &[(u64, u64)], variable: bool| -> Vec<u8> {
        let mut t = laz::laszip::ChunkTable::default();
        for &(point_count, byte_count) in entries {
            t.push(laz::laszip::ChunkTableEntry { point_count, byte_count });
        }
        let mut b = good[..table].to_vec();
        let vlr_data = laz::LazVlr::from_buffer(&good[vlr..vlr + 40]).unwrap();
        let vlr_data = if variable {
            laz::LazVlrBuilder::default().with_laz_items(vlr_data.items().clone()).with_variable_chunk_size().build()
        } else {
            vlr_data
        };
        if variable {
            b[vlr + 12..vlr + 16].copy_from_slice(&u32::MAX.to_le_bytes());
        }
        t.write_to(&mut b, &vlr_data).unwrap();
        b
    };
    let e = outcome(&d, "bytes.laz", &with_table(&[(0, bytes[0]), (0, bytes[1]), (0, bytes[2] + 1000)], false));
    assert!(e.contains("bytes.laz") && e.contains(&format!("byte {table}")) && e.contains("chunk 2"), "{e}");
    let e = outcome(&d, "same.laz", &with_table(&[(0, bytes[0]), (0, bytes[1]), (0, bytes[2])], false));
    assert!(e.starts_with("no error: 120000 points; warnings []"), "{e}");
    let e =
        outcome(&d, "variable.laz", &with_table(&[(50_000, bytes[0]), (50_000, bytes[1]), (10_000, bytes[2])], true));
    assert!(e.starts_with("no error: 110000 points") && e.contains("the LAZ chunk table holds at most 110000"), "{e}");
    // A chunk of 2^32 - 1 points (-1 as the table's 32-bit number): an error, not 128 GB.
    let e = outcome(
        &d,
        "negative.laz",
        &with_table(&[(50_000, bytes[0]), (50_000, bytes[1]), (u32::MAX as u64, bytes[2])], true),
    );
    assert!(e.contains("negative.laz") && e.contains(&format!("byte {table}: LAZ chunk table: chunk 2")), "{e}");
}

/// The 2.5 KB Autzen sample (LAS 1.2, point-wise chunks) patched: garbled chunk table offset,
/// chunk count, chunk size, laszip items. Before the checks the first asked for 24 GB, the
/// second for 68 GB (an abort), and the chunk size of 10^8 points made 3.3 GB resident.
#[roadscan_tests::needs_shared_data]
#[test]
fn a_garbled_autzen_laz_is_an_error_or_its_points_in_bounded_memory() {
    let data = roadscan_tests::shared_data();
    let d = dir("laz-autzen");
    let good = std::fs::read(data.join("las/lasrs_autzen.laz")).unwrap();
    let (offset, vlr, table) = layout(&good);
    assert_eq!((offset, table, u32_at(&good, table + 4)), (610, 2476, 1));

    // The low byte of the offset to the chunk table garbled: it points into the points, at a
    // "count" of 1,490,612,346 chunks.
    let e = outcome(&d, "offset.laz", &{
        let mut b = good.clone();
        b[offset] = 0;
        b
    });
    assert!(e.contains("offset.laz") && e.contains("byte 2308") && e.contains("1490612346 chunks"), "{e}");
    let e = outcome(&d, "count.laz", &{
        let mut b = good.clone();
        b[table + 4..table + 8].copy_from_slice(&u32::MAX.to_le_bytes());
        b
    });
    assert!(e.contains("count.laz") && e.contains("byte 2480") && e.contains("hold at most"), "{e}");
    // Offset to the table past the end, and negative: no table.
    let e = outcome(&d, "past.laz", &{
        let mut b = good.clone();
        b[offset..offset + 8].copy_from_slice(&(1i64 << 40).to_le_bytes());
        b
    });
    assert!(e.contains("past.laz") && e.contains("byte 610") && e.contains("outside the compressed points"), "{e}");
    // A chunk size of 10^8 points (one chunk): the 106 points, decoded sequentially.
    let e = outcome(&d, "chunk.laz", &{
        let mut b = good.clone();
        b[vlr + 12..vlr + 16].copy_from_slice(&100_000_000u32.to_le_bytes());
        b
    });
    assert!(e.starts_with("no error: 106 points; warnings []"), "{e}");
    // Items: the GPS time item said to be 9 bytes; an unknown item type; a size sum that
    // overflows 16 bits.
    for (at, value, name, expect) in [
        (vlr + 34 + 6 + 2, 9u16, "item.laz", "item 1 (type 7) of 9 bytes"),
        (vlr + 34 + 12, 99, "type.laz", "item 2 of unknown type 99"),
        (vlr + 34 + 2, 65_530, "sum.laz", "item 0 (type 6) of 65530 bytes"),
    ] {
        let mut b = good.clone();
        b[at..at + 2].copy_from_slice(&value.to_le_bytes());
        let e = outcome(&d, name, &b);
        assert!(e.contains(name) && e.contains(expect), "{e}");
    }
    let (got, _) = read_all(&data.join("las/lasrs_autzen.laz"), 7);
    assert_eq!(got.len(), 106);
}

/// Every hostile file above and the Autzen ones again, in this process: its peak resident
/// memory stays far below what the bad counts asked for (3.3 GB and 4 GB before the checks).
#[test]
fn hostile_laz_files_are_read_in_bounded_memory() {
    let d = dir("laz-memory");
    let laz = d.join("ours.laz");
    write_las(&laz, &points(120_000), &options()).unwrap();
    let good = std::fs::read(&laz).unwrap();
    let (offset, vlr, _) = layout(&good);
    let mut layer = good.clone();
    layer[offset + 8 + 38..offset + 8 + 42].copy_from_slice(&0xFFFF_FFF0u32.to_le_bytes());
    outcome(&d, "layer.laz", &layer);
    let mut chunk = good.clone();
    chunk[vlr + 12..vlr + 16].copy_from_slice(&100_000_000u32.to_le_bytes());
    let e = outcome(&d, "chunk.laz", &chunk);
    assert!(e.starts_with("no error: 120000 points") || e.contains("chunk.laz"), "{e}");
    if let Some(peak) = peak_rss() {
        assert!(peak < 1 << 30, "peak resident memory {} MB", peak >> 20);
    }
}

/// A file whose point format says LAZ but whose VLR walk finds no laszip VLR: the error says
/// where the VLRs were searched and what is inconsistent, with byte offsets (it named no
/// place). Our LAZ with the header size, the first VLR's length or the offset to the points
/// broken, and our LAS with the compression bit set.
#[test]
fn no_laszip_vlr_names_where_the_vlrs_were_searched_and_what_is_off() {
    let d = dir("laz-no-vlr");
    let laz = d.join("ours.laz");
    write_las(&laz, &points(1_000), &options()).unwrap();
    let good = std::fs::read(&laz).unwrap();
    let (offset, vlr_data, _) = layout(&good);
    let vlr = vlr_data - 54;
    let header = u16::from_le_bytes([good[94], good[95]]) as usize;
    let patch = |at: usize, v: &[u8]| {
        let mut b = good.clone();
        b[at..at + v.len()].copy_from_slice(v);
        b
    };
    // The laszip VLR must be the last one for the offset case: it is in our files.
    assert_eq!(vlr + 54 + u16::from_le_bytes([good[vlr + 20], good[vlr + 21]]) as usize, offset);

    let e = outcome(&d, "header-plus1.laz", &patch(94, &(header as u16 + 1).to_le_bytes()));
    assert!(e.contains(&format!("the VLR walk from byte {} (from the header size, byte 94", header + 1)), "{e}");
    assert!(e.contains("laszip VLR header (record 22204, ") && e.contains(&format!("stands at byte {vlr}, ")), "{e}");
    assert!(e.contains(&format!("the header size {} (byte 94) is off by 1", header + 1)), "{e}");
    assert!(e.contains(&format!(": byte {vlr}: ")), "the error's byte is the laszip VLR's: {e}");

    let e = outcome(&d, "offset-minus1.laz", &patch(96, &(offset as u32 - 1).to_le_bytes()));
    assert!(e.contains(&format!("runs past the point data at byte {}", offset - 1)), "{e}");
    assert!(
        e.contains(&format!("its data would end at byte {offset}, past the offset to the points {}", offset - 1)),
        "{e}"
    );

    // The first VLR's length: the largest, and one more than it is.
    let first_len = u16::from_le_bytes([good[header + 20], good[header + 21]]);
    assert_eq!(header + 54 + first_len as usize, vlr, "the laszip VLR is the second one");
    let e = outcome(&d, "vlr-length-max.laz", &patch(header + 20, &u16::MAX.to_le_bytes()));
    assert!(e.contains(&format!("VLR 0 at byte {header} (65535 bytes) runs past the point data")), "{e}");
    let fix = format!(
        "would follow the VLR at byte {header} if that one's length (bytes {}..{}) were",
        header + 20,
        header + 22
    );
    assert!(e.contains(&format!("{fix} {first_len}, not 65535")), "{e}");
    let e = outcome(&d, "vlr-length-plus1.laz", &patch(header + 20, &(first_len + 1).to_le_bytes()));
    assert!(e.contains(&format!("the 1 VLR(s) at bytes {header}..{}", vlr + 1)), "{e}");
    assert!(e.contains(&format!("{fix} {first_len}, not {}", first_len + 1)), "{e}");

    // An uncompressed LAS file with the compression bit set.
    let las = d.join("ours.las");
    write_las(&las, &points(1_000), &options()).unwrap();
    let mut b = std::fs::read(&las).unwrap();
    assert_eq!(b[104] & 0xC0, 0);
    b[104] |= 0x80;
    let e = outcome(&d, "bit-flipped.las", &b);
    assert!(e.contains(&format!("point format byte is 0x{:02X} (byte 104)", b[104])), "{e}");
    assert!(e.contains("no \"laszip encoded\" VLR header in bytes 227.."), "{e}");
    assert!(e.contains("an uncompressed LAS file with the compression bit"), "{e}");
    assert!(e.contains(": byte 104: "), "{e}");
}
