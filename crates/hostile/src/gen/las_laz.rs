//! LAS and LAZ cases: the real files' headers, VLRs, EVLRs and LAZ chunk tables attacked field
//! by field (zero, NaN, huge counts, truncations), junk files, hand-built LAS 1.4 files on the
//! demo road, and the axes through each real file's points that cases are paired with.

use super::{demo_points, Gen};
use crate::case::{Expect, Kind};
use crate::las::{self, at};

impl Gen {
    pub(super) fn las(&mut self) -> Result<(), String> {
        let pts = demo_points();
        let hand12 = las::las12(&pts, [650_000.0, 240_000.0, 100.0]);
        self.las_attacks("hand12", "las", &hand12, None, true)?;
        for ext in ["las", "laz"] {
            let b = self.las14(&pts, ext)?;
            self.las_attacks(&format!("hand14{ext}"), ext, &b, None, true)?;
        }
        for (label, rel) in [
            ("warsaw", "las/pdal_warsaw_small.las"),
            ("jakarto", "las/jakarto_montreal_mls_0.02s.las"),
            ("autzenlaz", "las/lasrs_autzen.laz"),
            ("extrabytes", "las/lasrs_extrabytes.laz"),
            ("lasrs32", "las/lasrs_32-1-472-150-76.laz"),
        ] {
            let Some(b) = self.shared_file(rel) else { continue };
            let ext = if rel.ends_with(".laz") { "laz" } else { "las" };
            let partner = self.axis_through(label, &b)?;
            let first = self.cases.len();
            self.las_attacks(label, ext, &b, Some(partner), label == "warsaw" || label == "extrabytes")?;
            if label == "autzenlaz" {
                // Heights in US feet and no EPSG code: the verbs along a road refuse the seed
                // itself by design (no reprojection), so only `info` says anything of the attacks.
                for c in &mut self.cases[first..] {
                    for v in ["crg", "voxel", "ribbons", "xodr", "build"] {
                        c.per_verb.push((v.into(), Expect::Skip));
                    }
                }
            }
        }
        for (label, rel) in [
            ("bad-vlr-count", "las/broken/bad_vlr_count.las"),
            ("garbage-nvlr", "las/broken/garbage_nVariableLength.las"),
        ] {
            if let Some(b) = self.shared_file(rel) {
                self.add(Kind::Las, &format!("las/broken/{label}"), "las", &b, Expect::Any)?;
            }
        }
        // Not LAS at all.
        self.add(Kind::Las, "las/junk/empty", "las", b"", Expect::Fail)?;
        self.add(Kind::Las, "las/junk/signature-only", "las", b"LASF", Expect::Fail)?;
        let junk: Vec<u8> = (0..4096).map(|_| self.rng.next_u64() as u8).collect();
        self.add(Kind::Las, "las/junk/random-bytes", "las", &junk, Expect::Fail)?;
        self.add(Kind::Las, "las/junk/text", "laz", b"x,y,z\n1,2,3\n", Expect::Fail)?;
        Ok(())
    }

    /// A LAS 1.4 / LAZ file of point format 6 with a WKT CRS, written by `scan`'s writer (the
    /// creation date fixed, so the bytes do not depend on the day).
    fn las14(&self, pts: &[[f64; 3]], ext: &str) -> Result<Vec<u8>, String> {
        let tmp = self.dir.join(format!(".seed.{ext}"));
        let points: Vec<scan::LasPoint> = pts
            .iter()
            .enumerate()
            .map(|(i, p)| scan::LasPoint {
                x: p[0],
                y: p[1],
                z: p[2],
                gps_time: i as f64 * 0.001,
                intensity: 100 + (i % 900) as u16,
                scan_angle_deg: 0.0,
                source: 1,
                class: if i % 10 == 0 { 6 } else { 2 },
            })
            .collect();
        let options = scan::LasOptions {
            wkt: scan::CrsDef::wkt_of(23700).unwrap_or_default().to_string(),
            offset: [650_000.0, 240_000.0, 100.0],
            scale: 0.001,
            system: "hostile".into(),
        };
        scan::write_las(&tmp, &points, &options).map_err(|e| e.to_string())?;
        let mut b = std::fs::read(&tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
        std::fs::remove_file(&tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
        las::put(&mut b, at::DAY, &1u16.to_le_bytes());
        las::put(&mut b, at::YEAR, &2024u16.to_le_bytes());
        Ok(b)
    }

    /// An axis for a real LAS file: a 20 m line through the middle of its header bounds,
    /// along the longer side, at the lowest height (no geoReference: the points' CRS).
    fn axis_through(&self, label: &str, b: &[u8]) -> Result<String, String> {
        let [x0, y0, z0, x1, y1, _] = las::bounds(b);
        let (cx, cy) = ((x0 + x1) / 2.0, (y0 + y1) / 2.0);
        let (x, y, hdg) =
            if x1 - x0 >= y1 - y0 { (cx - 10.0, cy, 0.0) } else { (cx, cy - 10.0, std::f64::consts::FRAC_PI_2) };
        let xodr = format!(
            r#"<?xml version="1.0" encoding="UTF-8"?>
<OpenDRIVE>
  <header revMajor="1" revMinor="8" name="axis through {label}" version="1"/>
  <road name="axis" length="20" id="1" junction="-1">
    <planView>
      <geometry s="0" x="{x}" y="{y}" hdg="{hdg}" length="20"><line/></geometry>
    </planView>
    <elevationProfile><elevation s="0" a="{z0}" b="0" c="0" d="0"/></elevationProfile>
    <lanes>
      <laneSection s="0">
        <left><lane id="1" type="driving" level="false"><width sOffset="0" a="3.5" b="0" c="0" d="0"/></lane></left>
        <center><lane id="0" type="none" level="false"/></center>
        <right><lane id="-1" type="driving" level="false"><width sOffset="0" a="3.5" b="0" c="0" d="0"/></lane></right>
      </laneSection>
    </lanes>
  </road>
</OpenDRIVE>
"#
        );
        let rel = format!("partners/{label}.xodr");
        self.write(&rel, xodr.as_bytes())?;
        Ok(rel)
    }

    /// The attacks on one LAS/LAZ seed; `full` adds the long tail (more values per field).
    fn las_attacks(
        &mut self,
        label: &str,
        ext: &str,
        b: &[u8],
        partner: Option<String>,
        full: bool,
    ) -> Result<(), String> {
        let first = self.cases.len();
        let p = format!("las/{label}");
        let laz = b.get(at::POINT_FORMAT).is_some_and(|f| f & 0x80 != 0);
        let v14 = b.get(at::VERSION_MINOR) == Some(&4);
        let len = b.len();
        let points_at = las::u32_at(b, at::OFFSET_TO_POINTS) as usize;
        let header_size = las::u16_at(b, at::HEADER_SIZE) as usize;
        let rec = las::u16_at(b, at::RECORD_LENGTH) as usize;
        let set = |at: usize, v: &[u8]| {
            let mut d = b.to_vec();
            las::put(&mut d, at, v);
            d
        };

        // The seed itself reads.
        self.add(Kind::Las, &format!("{p}/seed"), ext, b, Expect::Any)?;
        // Truncations: in the header and VLRs nothing can be read (fail); in the points the
        // reader may keep what it can read, with a warning.
        let mut cuts =
            vec![0, 3, 4, 100, 226, header_size.saturating_sub(1), header_size + 10, points_at.saturating_sub(1)];
        let mut tail = vec![points_at + rec / 2, points_at + rec * 3 + 1, (points_at + len) / 2, len - 1];
        if laz {
            tail.extend([points_at + 4, points_at + 8, len.saturating_sub(8)]);
        }
        cuts.retain(|&c| c < len.min(points_at));
        cuts.sort_unstable();
        cuts.dedup();
        tail.retain(|&c| c < len && c > points_at);
        tail.sort_unstable();
        tail.dedup();
        for c in cuts {
            self.add(Kind::Las, &format!("{p}/truncated-{c}"), ext, &b[..c], Expect::Fail)?;
        }
        for c in tail {
            self.add(Kind::Las, &format!("{p}/truncated-{c}"), ext, &b[..c], Expect::Any)?;
        }

        // Header fields.
        let f64s: &[(&str, f64, Expect)] = if full {
            &[
                ("0", 0.0, Expect::Fail),
                ("nan", f64::NAN, Expect::Fail),
                ("inf", f64::INFINITY, Expect::Fail),
                ("neg", -0.001, Expect::Any),
                ("1e308", 1e308, Expect::Any),
                ("1e-300", 1e-300, Expect::Any),
            ]
        } else {
            &[("0", 0.0, Expect::Fail), ("nan", f64::NAN, Expect::Fail), ("1e308", 1e308, Expect::Any)]
        };
        for (axis, k) in [("x", 0), ("y", 1), ("z", 2)] {
            for (n, v, e) in f64s {
                self.add(Kind::Las, &format!("{p}/scale-{axis}-{n}"), ext, &set(at::SCALE[k], &v.to_le_bytes()), *e)?;
            }
        }
        for (n, v, e) in [
            ("nan", f64::NAN, Expect::Fail),
            ("inf", f64::INFINITY, Expect::Fail),
            ("1e308", 1e308, Expect::Any),
            ("neg-1e308", -1e308, Expect::Any),
        ] {
            self.add(Kind::Las, &format!("{p}/offset-x-{n}"), ext, &set(at::OFFSET[0], &v.to_le_bytes()), e)?;
        }
        for (n, v) in [("nan", f64::NAN), ("inf", f64::INFINITY), ("1e308", 1e308), ("1e-300", 1e-300)] {
            let mut d = b.to_vec();
            for a in at::BOUNDS {
                las::put(&mut d, a, &v.to_le_bytes());
            }
            self.add(Kind::Las, &format!("{p}/bounds-{n}"), ext, &d, Expect::Any)?;
        }
        {
            // min > max
            let mut d = b.to_vec();
            let bx = las::bounds(b);
            las::put(&mut d, at::BOUNDS[0], &bx[0].to_le_bytes());
            las::put(&mut d, at::BOUNDS[1], &bx[3].to_le_bytes());
            self.add(Kind::Las, &format!("{p}/bounds-swapped"), ext, &d, Expect::Any)?;
        }
        for (n, v, e) in [
            ("minor-9", (at::VERSION_MINOR, 9u8), Expect::Any),
            ("major-2", (at::VERSION_MAJOR, 2u8), Expect::Any),
            ("major-0", (at::VERSION_MAJOR, 0u8), Expect::Any),
        ] {
            self.add(Kind::Las, &format!("{p}/version-{n}"), ext, &set(v.0, &[v.1]), e)?;
        }
        for (n, v, e) in [
            ("0", 0u16, Expect::Fail),
            ("226", 226, Expect::Any),
            ("max", u16::MAX, Expect::Fail),
            ("plus1", header_size as u16 + 1, Expect::Any),
        ] {
            self.add(Kind::Las, &format!("{p}/header-size-{n}"), ext, &set(at::HEADER_SIZE, &v.to_le_bytes()), e)?;
        }
        for (n, v, e) in [
            ("0", 0u32, Expect::Fail),
            ("inside-header", 100, Expect::Fail),
            ("past-eof", len as u32 + 1000, Expect::Fail),
            ("max", u32::MAX, Expect::Fail),
            ("plus1", points_at as u32 + 1, Expect::Any),
            ("minus1", points_at as u32 - 1, Expect::Any),
        ] {
            self.add(
                Kind::Las,
                &format!("{p}/offset-to-points-{n}"),
                ext,
                &set(at::OFFSET_TO_POINTS, &v.to_le_bytes()),
                e,
            )?;
        }
        for (n, v) in [("max", u32::MAX), ("1000", 1000), ("plus1", las::u32_at(b, at::VLR_COUNT) + 1)] {
            self.add(
                Kind::Las,
                &format!("{p}/vlr-count-{n}"),
                ext,
                &set(at::VLR_COUNT, &v.to_le_bytes()),
                Expect::Any,
            )?;
        }
        let fmt = b.get(at::POINT_FORMAT).copied().unwrap_or(0);
        for (n, v, e) in [
            ("99", 99u8 | (fmt & 0x80), Expect::Fail),
            ("11", 11 | (fmt & 0x80), Expect::Fail),
            // A LAS file marked compressed has no decoder to go with it (fail); a LAZ file
            // unmarked has its compressed bytes read as points (a warning at best).
            ("laz-bit-flipped", fmt ^ 0x80, if laz { Expect::Any } else { Expect::Fail }),
            ("0", fmt & 0x80, Expect::Any),
        ] {
            if v != fmt {
                self.add(Kind::Las, &format!("{p}/point-format-{n}"), ext, &set(at::POINT_FORMAT, &[v]), e)?;
            }
        }
        for (n, v, e) in [
            ("0", 0u16, Expect::Fail),
            ("minus1", rec as u16 - 1, Expect::Fail),
            ("plus1", rec as u16 + 1, Expect::Any),
            ("max", u16::MAX, Expect::Any),
        ] {
            self.add(Kind::Las, &format!("{p}/record-length-{n}"), ext, &set(at::RECORD_LENGTH, &v.to_le_bytes()), e)?;
        }
        for (n, v) in [("0", 0u32), ("max", u32::MAX), ("plus1", las::u32_at(b, at::LEGACY_COUNT) + 1)] {
            self.add(
                Kind::Las,
                &format!("{p}/legacy-count-{n}"),
                ext,
                &set(at::LEGACY_COUNT, &v.to_le_bytes()),
                Expect::Any,
            )?;
        }
        if v14 {
            for (n, v) in
                [("max", u64::MAX), ("2e40", 1u64 << 40), ("0", 0), ("plus1", las::u64_at(b, at::POINT_COUNT) + 1)]
            {
                self.add(
                    Kind::Las,
                    &format!("{p}/point-count-{n}"),
                    ext,
                    &set(at::POINT_COUNT, &v.to_le_bytes()),
                    Expect::Any,
                )?;
            }
            for (n, v) in [("max", u32::MAX), ("1", 1)] {
                let mut d = set(at::EVLR_COUNT, &v.to_le_bytes());
                if las::u64_at(b, at::EVLR_START) == 0 {
                    las::put(&mut d, at::EVLR_START, &(len as u64).to_le_bytes());
                }
                self.add(Kind::Las, &format!("{p}/evlr-count-{n}"), ext, &d, Expect::Any)?;
            }
            for (n, v) in [("past-eof", len as u64 + 1000), ("max", u64::MAX), ("in-header", 100)] {
                let mut d = set(at::EVLR_START, &v.to_le_bytes());
                las::put(&mut d, at::EVLR_COUNT, &1u32.to_le_bytes());
                self.add(Kind::Las, &format!("{p}/evlr-start-{n}"), ext, &d, Expect::Any)?;
            }
        }
        // VLRs: a record length past the end of the file, and one past the points.
        if let Some(&(vat, _, _, _)) = las::vlrs(b).first() {
            for (n, v) in [("max", u16::MAX), ("plus1", las::u16_at(b, vat + 20) + 1)] {
                self.add(
                    Kind::Las,
                    &format!("{p}/vlr-length-{n}"),
                    ext,
                    &set(vat + 20, &v.to_le_bytes()),
                    Expect::Any,
                )?;
            }
        }
        if laz {
            self.laz_attacks(&p, b)?;
        }
        // Random byte mutations of the header and VLRs (what the reader parses itself).
        let n = if full { 8 } else { 3 };
        for i in 0..n {
            let mut d = b.to_vec();
            let head = points_at.min(len);
            for _ in 0..1 + self.rng.below(4) {
                let at = self.rng.below(head.max(1));
                let v = self.rng.next_u64() as u8;
                if let Some(x) = d.get_mut(at) {
                    *x = v;
                }
            }
            self.add(Kind::Las, &format!("{p}/random-header-{i}"), ext, &d, Expect::Any)?;
        }
        if let Some(partner) = partner {
            for c in &mut self.cases[first..] {
                c.partner = Some(partner.clone());
            }
        }
        Ok(())
    }

    /// LAZ: the chunk table offset and count, the laszip VLR, garbled chunks.
    fn laz_attacks(&mut self, p: &str, b: &[u8]) -> Result<(), String> {
        let len = b.len();
        let points_at = las::u32_at(b, at::OFFSET_TO_POINTS) as usize;
        let set = |at: usize, v: &[u8]| {
            let mut d = b.to_vec();
            las::put(&mut d, at, v);
            d
        };
        for (n, v) in
            [("minus1", u64::MAX), ("0", 0), ("past-eof", len as u64 + 100), ("in-header", 8), ("huge", 1 << 62)]
        {
            self.add(
                Kind::Las,
                &format!("{p}/chunk-table-offset-{n}"),
                "laz",
                &set(points_at, &v.to_le_bytes()),
                Expect::Any,
            )?;
        }
        let table = las::u64_at(b, points_at) as usize;
        if table > points_at && table + 8 <= len {
            for (n, v) in [("max", u32::MAX), ("0", 0), ("plus1", las::u32_at(b, table + 4) + 1)] {
                self.add(
                    Kind::Las,
                    &format!("{p}/chunk-count-{n}"),
                    "laz",
                    &set(table + 4, &v.to_le_bytes()),
                    Expect::Any,
                )?;
            }
            self.add(
                Kind::Las,
                &format!("{p}/chunk-table-version-9"),
                "laz",
                &set(table, &9u32.to_le_bytes()),
                Expect::Any,
            )?;
            let mut d = b.to_vec();
            for x in d.iter_mut().skip(table + 8) {
                *x = 0xFF;
            }
            self.add(Kind::Las, &format!("{p}/chunk-table-garbled"), "laz", &d, Expect::Any)?;
        }
        // Garbled compressed bytes at several places of the first chunk and mid-file.
        let data_end = if table > points_at { table.min(len) } else { len };
        for (i, frac) in [0.0, 0.1, 0.5, 0.9].into_iter().enumerate() {
            let start = points_at + 8 + ((data_end.saturating_sub(points_at + 8)) as f64 * frac) as usize;
            let mut d = b.to_vec();
            for k in 0..64 {
                if start + k < data_end {
                    d[start + k] = self.rng.next_u64() as u8;
                }
            }
            self.add(Kind::Las, &format!("{p}/garbled-chunk-{i}"), "laz", &d, Expect::Any)?;
        }
        if let Some(&(vat, _, _, vlen)) = las::vlrs(b).iter().find(|v| v.1 == "laszip encoder") {
            let d0 = vat + 54;
            let fields: &[(&str, usize, &[u8])] = &[
                ("compressor-99", 0, &99u16.to_le_bytes()),
                ("coder-7", 2, &7u16.to_le_bytes()),
                ("chunk-size-0", 12, &0u32.to_le_bytes()),
                ("chunk-size-max", 12, &u32::MAX.to_le_bytes()),
                ("items-max", 32, &u16::MAX.to_le_bytes()),
                ("items-0", 32, &0u16.to_le_bytes()),
                ("item-size-0", 36, &0u16.to_le_bytes()),
                ("item-type-99", 34, &99u16.to_le_bytes()),
            ];
            for (n, off, v) in fields {
                if off + v.len() <= vlen {
                    self.add(Kind::Las, &format!("{p}/laszip-{n}"), "laz", &set(d0 + off, v), Expect::Any)?;
                }
            }
            // The laszip VLR renamed: compressed points without a decoder description.
            let mut d = b.to_vec();
            las::put(&mut d, vat + 2, b"not laszip     ");
            self.add(Kind::Las, &format!("{p}/laszip-vlr-missing"), "laz", &d, Expect::Fail)?;
        }
        Ok(())
    }
}
