//! `roadscan lidar --las` and `--mcap`: the returns of a run as LAS 1.4 point records with
//! extra bytes, and as MCAP with Foxglove's schemas, each written through a temporary file
//! that becomes the target only when the run ends well.
//!
//! LAS: point format 6 in map coordinates (the world's file frame placed by road.xodr's header
//! `<offset>`) with the `geoReference` as an OGC WKT; GPS time is adjusted standard GPS time
//! (GPS seconds minus 10^9, global encoding bit 0 set) of each laser's own firing; intensity
//! is the intensity byte times 256; the class is the hit's. Extra bytes (see [`las_fields`]):
//! ring, laser, azimuth, object_id, range, reflectivity.
//!
//! MCAP: one `foxglove.PointCloud` a revolution on `/lidar` (frame `lidar`: each point in the
//! sensor's frame at its own laser's time, as a spinning sensor reports it; fields x, y, z
//! float32, time float32 s since the cloud's first firing, ring uint16, intensity uint8) and
//! `foxglove.FrameTransform`s on `/tf` at 100 Hz: `map` -> `base_link` (the vehicle in map
//! coordinates) and `base_link` -> `lidar` (the mount). Messages are protobuf with the schemas
//! of the `foxglove` crate; chunks are uncompressed (lz4 and zstd would be C code).

use crate::progress::{Note, Progress};
use anyhow::{anyhow, Context, Result};
use foxglove::messages::packed_element_field::NumericType;
use foxglove::messages::{FrameTransform, PackedElementField, PointCloud, Quaternion, Timestamp, Vector3};
use foxglove::Encode;
use opendrive::HeaderOffset;
use scan::{ExtraField, ExtraType, LasOptions, LasPoint, LasWriter};
use sensors::{Epoch, Firing, Lidar};
use std::collections::BTreeMap;
use std::path::Path;
use world::{Pose, Trajectory, V3};

/// A local engineering CRS in metres, for a world whose road.xodr has no usable `geoReference`.
pub const LOCAL_WKT: &str = r#"LOCAL_CS["roadscan map frame",LOCAL_DATUM["unknown",0],UNIT["metre",1],AXIS["Easting",EAST],AXIS["Northing",NORTH]]"#;

/// The extra bytes of each LAS point record, in order (16 bytes).
pub fn las_fields() -> Vec<ExtraField> {
    let f = |name: &str, data_type, description: &str, scale| ExtraField {
        name: name.into(),
        data_type,
        description: description.into(),
        scale,
    };
    vec![
        f("ring", ExtraType::U8, "rank by elevation, 0 lowest", None),
        f("laser", ExtraType::U8, "laser id (firing order)", None),
        f("azimuth", ExtraType::U16, "head angle, 0.01 deg", Some(0.01)),
        f("object_id", ExtraType::U32, "object hit, 0 static scene", None),
        f("range", ExtraType::F32, "reported range, m", None),
        f("reflectivity", ExtraType::F32, "Phong reflectivity", None),
    ]
}

/// The OGC WKT of a road.xodr `geoReference` (a WKT itself, an EPSG code or a PROJ string whose
/// parameters match an entry of the built-in table); None when it names no CRS we know.
pub fn wkt_of_georeference(geo: Option<&str>) -> Option<String> {
    let g = geo?.trim();
    let head = g.split('[').next().unwrap_or("").trim().to_ascii_uppercase();
    if g.contains('[')
        && ["PROJCS", "PROJCRS", "GEOGCS", "GEOGCRS", "GEODCRS", "COMPD_CS", "COMPOUNDCRS", "LOCAL_CS"]
            .contains(&head.as_str())
    {
        return Some(g.to_string());
    }
    scan::CrsDef::parse(g).ok()?.wkt().map(str::to_string)
}

/// Seconds and nanoseconds of a UTC time, or an error naming it.
pub(crate) fn timestamp(utc: f64) -> Result<Timestamp> {
    Timestamp::try_from_epoch_secs_f64(utc).map_err(|e| anyhow!("time {utc} s since 1970 cannot be stamped: {e:?}"))
}

/// Nanoseconds since 1970 of a UTC time (0 before 1970).
fn nanos(utc: f64) -> u64 {
    let s = utc.max(0.0).floor();
    (s as u64).saturating_mul(1_000_000_000).saturating_add(((utc.max(0.0) - s) * 1e9).round() as u64)
}

/// The direction of laser `laser` at trajectory time `t` in the sensor's frame.
fn beam(lidar: &Lidar, laser: usize, t: f64) -> V3 {
    let l = &lidar.beams.lasers[laser];
    let (se, ce) = l.elevation.sin_cos();
    let (sp, cp) = (lidar.azimuth(t) + l.azimuth_offset).sin_cos();
    [ce * cp, -ce * sp, se]
}

/// Appends the points of firing `f`'s returns to a cloud whose first firing fired at `start`:
/// x, y, z in the sensor's frame (float32), time since `start` (float32), ring (uint16),
/// intensity (uint8), little-endian.
pub(crate) fn cloud_points(lidar: &Lidar, rings: &[u16], f: &Firing, start: f64, data: &mut Vec<u8>) {
    for (j, r) in f.returns.iter().enumerate().filter(|(_, r)| r.is_some()) {
        let t = f.time + j as f64 * lidar.beams.laser_dt;
        let d = beam(lidar, j, t);
        for c in d {
            data.extend_from_slice(&((r.range * c) as f32).to_le_bytes());
        }
        data.extend_from_slice(&((t - start) as f32).to_le_bytes());
        data.extend_from_slice(&rings.get(j).copied().unwrap_or(0).to_le_bytes());
        data.push(r.intensity);
    }
}

/// A Foxglove point cloud of points laid out by [`cloud_points`], in frame `frame`.
pub(crate) fn point_cloud(timestamp: Timestamp, frame: &str, data: Vec<u8>) -> PointCloud {
    let field =
        |name: &str, offset: u32, t: NumericType| PackedElementField { name: name.into(), offset, r#type: t as i32 };
    PointCloud {
        timestamp: Some(timestamp),
        frame_id: frame.into(),
        pose: Some(foxglove::messages::Pose {
            position: Some(Vector3 { x: 0.0, y: 0.0, z: 0.0 }),
            orientation: Some(Quaternion { x: 0.0, y: 0.0, z: 0.0, w: 1.0 }),
        }),
        point_stride: STRIDE as u32,
        fields: vec![
            field("x", 0, NumericType::Float32),
            field("y", 4, NumericType::Float32),
            field("z", 8, NumericType::Float32),
            field("time", 12, NumericType::Float32),
            field("ring", 16, NumericType::Uint16),
            field("intensity", 18, NumericType::Uint8),
        ],
        data: data.into(),
    }
}

/// Rings by laser as bytes (the tables have at most 128 lasers).
fn rings_u8(lidar: &Lidar) -> Vec<u8> {
    lidar.beams.rings().iter().map(|&r| r.min(255) as u8).collect()
}

/// The LAS and MCAP outputs `cfg` asks for, started.
pub fn open(
    cfg: &crate::lidar::LidarConfig,
    lidar: &Lidar,
    header: &opendrive::Header,
    progress: &dyn Progress,
) -> Result<(Option<LasOut>, Option<McapOut>)> {
    let offset = header.offset.unwrap_or_default();
    let las = match &cfg.las {
        Some(p) => {
            let wkt = wkt_of_georeference(header.geo_reference.as_deref()).unwrap_or_else(|| {
                progress.note(&Note::Warning(format!(
                    "--las {}: road.xodr has no geoReference of a CRS we know; the points carry a local CRS",
                    p.display()
                )));
                LOCAL_WKT.into()
            });
            Some(LasOut::create(p, lidar, offset, &wkt, cfg.epoch)?)
        }
        None => None,
    };
    let mcap = match &cfg.mcap {
        Some(p) => Some(McapOut::create(p, lidar, offset, cfg.epoch)?),
        None => None,
    };
    Ok((las, mcap))
}

/// Hands a chunk of firings to the outputs (in the run's sink, whose errors are the sensors').
pub fn add(
    las: &mut Option<LasOut>,
    mcap: &mut Option<McapOut>,
    firings: &[Firing],
    path: &dyn Trajectory,
) -> Result<(), sensors::Error> {
    if let Some(l) = las.as_mut() {
        l.add(firings).map_err(|e| sensors::Error::Sink(format!("{e:#}")))?;
    }
    if let Some(m) = mcap.as_mut() {
        m.add(firings, path).map_err(|e| sensors::Error::Sink(format!("{e:#}")))?;
    }
    Ok(())
}

/// Completes the outputs: (the LAS file and its points, the MCAP file and its messages).
#[allow(clippy::type_complexity)]
pub fn finish(
    las: Option<LasOut>,
    mcap: Option<McapOut>,
    end: f64,
    path: &dyn Trajectory,
) -> Result<((Option<String>, Option<u64>), (Option<String>, Option<McapStats>))> {
    let las = match las {
        Some(l) => {
            let target = l.target.display().to_string();
            (Some(target), Some(l.finish()?))
        }
        None => (None, None),
    };
    let mcap = match mcap {
        Some(m) => {
            let target = m.target.display().to_string();
            (Some(target), Some(m.finish(end, path)?))
        }
        None => (None, None),
    };
    Ok((las, mcap))
}

/// The returns written as LAS 1.4 point format 6 with extra bytes.
#[derive(Debug)]
pub struct LasOut {
    writer: LasWriter,
    target: std::path::PathBuf,
    place: opendrive::Placement,
    lidar: Lidar,
    rings: Vec<u8>,
    epoch: Epoch,
    points: Vec<LasPoint>,
    extra: Vec<u8>,
}

impl LasOut {
    /// Starts writing `path` (LAZ when it ends in `.laz`) for the returns of `lidar`, in the map
    /// frame of `offset` and the CRS `wkt`.
    pub fn create(path: &Path, lidar: &Lidar, offset: HeaderOffset, wkt: &str, epoch: Epoch) -> Result<LasOut> {
        let options = LasOptions {
            wkt: wkt.to_string(),
            offset: [offset.x.round(), offset.y.round(), offset.z.round()],
            scale: 0.001,
            system: format!("roadscan lidar {}", lidar.beams.name),
        };
        let writer = LasWriter::with_extra_bytes(path, &options, &las_fields())
            .with_context(|| format!("--las {}", path.display()))?;
        Ok(LasOut {
            writer,
            target: path.to_path_buf(),
            place: offset.placement(),
            lidar: lidar.clone(),
            rings: rings_u8(lidar),
            epoch,
            points: Vec::new(),
            extra: Vec::new(),
        })
    }

    /// Appends the returns of `firings`.
    pub fn add(&mut self, firings: &[Firing]) -> Result<()> {
        self.points.clear();
        self.extra.clear();
        for f in firings {
            for (j, r) in f.returns.iter().enumerate().filter(|(_, r)| r.is_some()) {
                let t = f.time + j as f64 * self.lidar.beams.laser_dt;
                let [x, y, z] = self.place.to_map(r.point);
                self.points.push(LasPoint {
                    x,
                    y,
                    z,
                    gps_time: self.epoch.adjusted_gps(t),
                    intensity: u16::from(r.intensity) * 256,
                    scan_angle_deg: 0.0,
                    source: 0,
                    class: r.class,
                });
                let azimuth = (self.lidar.azimuth(t).to_degrees() * 100.0).round() as u32 % 36_000;
                self.extra.push(self.rings.get(j).copied().unwrap_or(0));
                self.extra.push(j.min(255) as u8);
                self.extra.extend_from_slice(&(azimuth as u16).to_le_bytes());
                self.extra.extend_from_slice(&r.object.to_le_bytes());
                self.extra.extend_from_slice(&(r.range as f32).to_le_bytes());
                self.extra.extend_from_slice(&(r.reflectivity as f32).to_le_bytes());
            }
        }
        self.writer.write_extra(&self.points, &self.extra)?;
        Ok(())
    }

    /// Completes the file and moves it to its path; the points written.
    pub fn finish(self) -> Result<u64> {
        let n = self.writer.len() as u64;
        self.writer.finish()?;
        Ok(n)
    }
}

/// What went into the MCAP file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct McapStats {
    /// `foxglove.PointCloud` messages on `/lidar` (one a revolution).
    pub clouds: u64,
    /// Points in them.
    pub points: u64,
    /// `foxglove.FrameTransform` messages on `/tf`.
    pub transforms: u64,
}

/// Bytes a point takes in a cloud: x, y, z, time (float32), ring (uint16), intensity (uint8).
const STRIDE: usize = 19;

/// The returns as one Foxglove point cloud a revolution, and the frames, in an MCAP file.
pub struct McapOut {
    writer: mcap::Writer<atomic::TempFile>,
    target: std::path::PathBuf,
    clouds_channel: u16,
    tf_channel: u16,
    lidar: Lidar,
    rings: Vec<u16>,
    epoch: Epoch,
    offset: HeaderOffset,
    /// The cloud being filled: its first firing's time and its points.
    cloud: Option<(f64, Vec<u8>)>,
    last_azimuth: f64,
    /// The next 100 Hz transform tick.
    tick: u64,
    sequence: u32,
    stats: McapStats,
}

impl std::fmt::Debug for McapOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McapOut").field("target", &self.target).field("stats", &self.stats).finish_non_exhaustive()
    }
}

/// Transforms a second on `/tf`.
const TF_RATE: f64 = 100.0;

/// An uncompressed MCAP file being written to a temporary file beside `path` (renamed over it
/// when finished).
pub(crate) fn mcap_create(path: &Path) -> Result<mcap::Writer<atomic::TempFile>> {
    let what = || format!("--mcap {}", path.display());
    let tmp = atomic::TempFile::beside(path).with_context(what)?;
    let options = mcap::WriteOptions::new().compression(None).profile("").library("roadscan");
    options.create(tmp).with_context(what)
}

/// Writes message `m` on `channel` stamped `utc` (log and publish time), numbered by `sequence`.
pub(crate) fn mcap_message<W: std::io::Write + std::io::Seek, M: Encode>(
    writer: &mut mcap::Writer<W>,
    sequence: &mut u32,
    channel: u16,
    utc: f64,
    m: &M,
) -> Result<()> {
    let mut buf = Vec::with_capacity(m.encoded_len().unwrap_or(64));
    m.encode(&mut buf).map_err(|e| anyhow!("encoding a message: {e}"))?;
    let time = nanos(utc);
    let header =
        mcap::records::MessageHeader { channel_id: channel, sequence: *sequence, log_time: time, publish_time: time };
    *sequence = sequence.wrapping_add(1);
    Ok(writer.write_to_known_channel(&header, &buf)?)
}

/// A channel on `topic` with a Foxglove protobuf `schema`.
pub(crate) fn mcap_channel<W: std::io::Write + std::io::Seek>(
    writer: &mut mcap::Writer<W>,
    schema: Option<foxglove::Schema>,
    topic: &str,
) -> Result<u16> {
    let s = schema.ok_or_else(|| anyhow!("no Foxglove schema for {topic}"))?;
    let id = writer.add_schema(&s.name, &s.encoding, &s.data)?;
    Ok(writer.add_channel(id, topic, "protobuf", &BTreeMap::new())?)
}

impl McapOut {
    /// Starts writing `path` for the returns of `lidar`, the vehicle placed in the map frame of
    /// `offset`.
    pub fn create(path: &Path, lidar: &Lidar, offset: HeaderOffset, epoch: Epoch) -> Result<McapOut> {
        let what = || format!("--mcap {}", path.display());
        let mut writer = mcap_create(path)?;
        let mut channel = |schema, topic: &str| mcap_channel(&mut writer, schema, topic);
        let clouds_channel = channel(PointCloud::get_schema(), "/lidar").with_context(what)?;
        let tf_channel = channel(FrameTransform::get_schema(), "/tf").with_context(what)?;
        Ok(McapOut {
            writer,
            target: path.to_path_buf(),
            clouds_channel,
            tf_channel,
            lidar: lidar.clone(),
            rings: lidar.beams.rings(),
            epoch,
            offset,
            cloud: None,
            last_azimuth: f64::NEG_INFINITY,
            tick: 0,
            sequence: 0,
            stats: McapStats { clouds: 0, points: 0, transforms: 0 },
        })
    }

    /// Adds the returns of `firings` (in time order, after those added before); a revolution's
    /// cloud is written when the next one starts, followed by the transforms until then.
    pub fn add(&mut self, firings: &[Firing], path: &dyn Trajectory) -> Result<()> {
        for f in firings {
            if f.azimuth < self.last_azimuth {
                self.flush_cloud(f.time, path)?;
            }
            self.last_azimuth = f.azimuth;
            let (start, data) = self.cloud.get_or_insert_with(|| (f.time, Vec::new()));
            cloud_points(&self.lidar, &self.rings, f, *start, data);
        }
        Ok(())
    }

    /// Writes the cloud being filled, then the transforms before `until`.
    fn flush_cloud(&mut self, until: f64, path: &dyn Trajectory) -> Result<()> {
        if let Some((start, data)) = self.cloud.take() {
            let utc = self.epoch.utc(start);
            let points = (data.len() / STRIDE) as u64;
            let cloud = point_cloud(timestamp(utc)?, "lidar", data);
            self.message(self.clouds_channel, utc, &cloud)?;
            self.stats.clouds += 1;
            self.stats.points += points;
        }
        while (self.tick as f64) / TF_RATE < until - 1e-9 {
            let t = self.tick as f64 / TF_RATE;
            self.transforms(t, path)?;
            self.tick += 1;
        }
        Ok(())
    }

    /// The two transforms at trajectory time `t`.
    fn transforms(&mut self, t: f64, path: &dyn Trajectory) -> Result<()> {
        let utc = self.epoch.utc(t);
        let in_map = in_map(&self.offset, &path.pose(t));
        let frames = [("map", "base_link", in_map), ("base_link", "lidar", self.lidar.mount)];
        for (parent, child, pose) in frames {
            let [x, y, z] = pose.position;
            let tf = FrameTransform {
                timestamp: Some(timestamp(utc)?),
                parent_frame_id: parent.into(),
                child_frame_id: child.into(),
                translation: Some(Vector3 { x, y, z }),
                rotation: Some(quaternion(&pose.axes)),
            };
            self.message(self.tf_channel, utc, &tf)?;
            self.stats.transforms += 1;
        }
        Ok(())
    }

    /// Writes one message stamped `utc`.
    fn message<M: Encode>(&mut self, channel: u16, utc: f64, m: &M) -> Result<()> {
        mcap_message(&mut self.writer, &mut self.sequence, channel, utc, m)
            .with_context(|| format!("--mcap {}", self.target.display()))
    }

    /// Writes the last cloud and the transforms up to `end` (trajectory time), completes the
    /// file and moves it to its path.
    pub fn finish(mut self, end: f64, path: &dyn Trajectory) -> Result<McapStats> {
        self.flush_cloud(end + 1e-6, path)?;
        let what = format!("--mcap {}", self.target.display());
        self.writer.finish().with_context(|| what.clone())?;
        let stats = self.stats;
        self.writer.into_inner().commit().with_context(|| what)?;
        Ok(stats)
    }
}

/// A pose in the world (road.xodr's file frame) as a pose in the map frame.
fn in_map(offset: &HeaderOffset, pose: &Pose) -> Pose {
    let (s, c) = offset.hdg.sin_cos();
    let turn = |v: V3| [c * v[0] - s * v[1], s * v[0] + c * v[1], v[2]];
    Pose { position: offset.placement().to_map(pose.position), axes: pose.axes.map(turn) }
}

/// The unit quaternion of the rotation whose columns are `axes` (Shepperd's method).
fn quaternion(axes: &[V3; 3]) -> Quaternion {
    // m[r][c] = axes[c][r].
    let m = |r: usize, c: usize| axes[c][r];
    let trace = m(0, 0) + m(1, 1) + m(2, 2);
    let (x, y, z, w) = if trace > 0.0 {
        let s = (trace + 1.0).sqrt() * 2.0;
        ((m(2, 1) - m(1, 2)) / s, (m(0, 2) - m(2, 0)) / s, (m(1, 0) - m(0, 1)) / s, 0.25 * s)
    } else if m(0, 0) > m(1, 1) && m(0, 0) > m(2, 2) {
        let s = (1.0 + m(0, 0) - m(1, 1) - m(2, 2)).sqrt() * 2.0;
        (0.25 * s, (m(0, 1) + m(1, 0)) / s, (m(0, 2) + m(2, 0)) / s, (m(2, 1) - m(1, 2)) / s)
    } else if m(1, 1) > m(2, 2) {
        let s = (1.0 + m(1, 1) - m(0, 0) - m(2, 2)).sqrt() * 2.0;
        ((m(0, 1) + m(1, 0)) / s, 0.25 * s, (m(1, 2) + m(2, 1)) / s, (m(0, 2) - m(2, 0)) / s)
    } else {
        let s = (1.0 + m(2, 2) - m(0, 0) - m(1, 1)).sqrt() * 2.0;
        ((m(0, 2) + m(2, 0)) / s, (m(1, 2) + m(2, 1)) / s, 0.25 * s, (m(1, 0) - m(0, 1)) / s)
    };
    let n = (x * x + y * y + z * z + w * w).sqrt();
    Quaternion { x: x / n, y: y / n, z: z / n, w: w / n }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Rotates `v` by the unit quaternion `q`.
    fn rotate(q: &Quaternion, v: V3) -> V3 {
        let (x, y, z, w) = (q.x, q.y, q.z, q.w);
        let m = [
            [1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - z * w), 2.0 * (x * z + y * w)],
            [2.0 * (x * y + z * w), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - x * w)],
            [2.0 * (x * z - y * w), 2.0 * (y * z + x * w), 1.0 - 2.0 * (x * x + y * y)],
        ];
        [0, 1, 2].map(|r| m[r][0] * v[0] + m[r][1] * v[1] + m[r][2] * v[2])
    }

    #[test]
    fn quaternions_turn_the_unit_axes_onto_the_pose_axes() {
        // Every branch of Shepperd's method: small and large turns about each axis and mixed.
        for (yaw, pitch, roll) in
            [(0.3, 0.1, -0.2), (3.1, 0.0, 0.0), (0.0, 3.0, 0.2), (1.0, -0.4, 3.1), (-2.5, 1.2, 2.9)]
        {
            let p = Pose::from_ypr([0.0; 3], yaw, pitch, roll);
            let q = quaternion(&p.axes);
            for (i, e) in [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]].into_iter().enumerate() {
                let r = rotate(&q, e);
                for k in 0..3 {
                    assert!(
                        (r[k] - p.axes[i][k]).abs() < 1e-12,
                        "{yaw} {pitch} {roll}: axis {i} {r:?} {:?}",
                        p.axes[i]
                    );
                }
            }
        }
    }

    #[test]
    fn a_pose_in_the_map_frame_places_body_points_where_the_header_offset_does() {
        let offset = HeaderOffset { x: 650_000.0, y: 240_000.0, z: 100.0, hdg: 0.7 };
        let pose = Pose::from_ypr([12.0, -3.0, 1.5], 0.4, 0.05, -0.02);
        let map = in_map(&offset, &pose);
        let q = quaternion(&map.axes);
        for v in [[0.0, 0.0, 0.0], [10.0, 0.0, 0.0], [0.0, 5.0, 2.0], [-3.0, 7.0, -1.0]] {
            let want = offset.placement().to_map(pose.point(v));
            let r = rotate(&q, v);
            for k in 0..3 {
                assert!((map.position[k] + r[k] - want[k]).abs() < 1e-9, "{v:?}: {k}");
            }
        }
    }

    #[test]
    fn georeferences_give_their_wkt() {
        let eov = scan::CrsDef::from_epsg(23700).unwrap().proj_string().unwrap();
        assert_eq!(wkt_of_georeference(Some(&eov)).as_deref(), scan::CrsDef::wkt_of(23700));
        assert_eq!(wkt_of_georeference(Some(" EPSG:23700 ")).as_deref(), scan::CrsDef::wkt_of(23700));
        assert_eq!(wkt_of_georeference(Some(scan::EOV_WKT)).as_deref(), Some(scan::EOV_WKT));
        assert_eq!(wkt_of_georeference(Some("somewhere")), None);
        assert_eq!(wkt_of_georeference(None), None);
        assert_eq!(nanos(1.5), 1_500_000_000);
    }
}
