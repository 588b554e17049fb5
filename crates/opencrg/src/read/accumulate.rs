//! What the blocks of the top file and its includes add up to: the `$ROAD_CRG` keys and where
//! each was set, options, modifiers, channel definitions and the decoded data; and their
//! checks into a [`Crg`] (increments, ranges, the reference line, the long sections).

use super::lex::{count, show};
use super::{Origin, MIN_INCREMENT};
use crate::error::{Error, ErrorKind, Result};
use crate::model::*;

/// What the blocks of the top file and its includes add up to.
#[derive(Default)]
pub(super) struct Accumulator {
    /// Where each `$ROAD_CRG` key was (last) set.
    pub(super) key_origin: Vec<(&'static str, Origin)>,
    /// Where the data section starts (the `$$$$` line).
    pub(super) data_origin: Option<Origin>,
    pub(super) comment: Vec<String>,
    pub(super) road: RoadParams,
    /// (file level that set them, options)
    pub(super) options: Option<(usize, Options)>,
    pub(super) modifiers: Option<(usize, Modifiers)>,
    pub(super) other_blocks: Vec<(String, Vec<String>)>,
    pub(super) format: Option<Format>,
    pub(super) u_line: Option<String>,
    /// (place, definition) in file order
    pub(super) defs: Vec<(Origin, Def)>,
    pub(super) data: Option<Data>,
    /// The rest of the file being parsed, not read yet (a long file's data section).
    pub(super) tail: Option<super::Tail>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Def {
    LongIndex(f64),
    LongAtV(f64),
    Kind(ChannelKind),
}

pub(super) struct Data {
    /// Long-section values, row-major `rows x nv`, in ascending long-section order.
    pub(super) z: Vec<f32>,
    /// The other channels: (file column, values per row).
    pub(super) other: Vec<(usize, Vec<f64>)>,
    pub(super) rows: usize,
}

fn origin_of<'a>(list: &'a [(&'static str, Origin)], key: &str) -> Option<&'a Origin> {
    list.iter().find(|(k, _)| *k == key).map(|(_, o)| o)
}

impl Accumulator {
    /// Where `$ROAD_CRG` key `key` (lower case, as in road_line) was set.
    pub(super) fn origin(&self, key: &str) -> Option<&Origin> {
        origin_of(&self.key_origin, key)
    }

    pub(super) fn finish(self) -> Result<Crg> {
        let Some(data) = self.data else { return Err(Error::new(ErrorKind::NoDataSection)) };
        let data_origin = self.data_origin.clone().unwrap_or_default();
        let key_origin = |key: &str| origin_of(&self.key_origin, key).cloned().unwrap_or_else(|| data_origin.clone());
        let nch = self.defs.len();
        // Long sections: the C-API sorts them by their number or v.
        let mut longs: Vec<(f64, usize)> = Vec::new();
        let (mut any_index, mut any_pos) = (false, false);
        for (col, (_, d)) in self.defs.iter().enumerate() {
            match d {
                Def::LongIndex(n) => {
                    any_index = true;
                    longs.push((*n, col));
                }
                Def::LongAtV(v) => {
                    any_pos = true;
                    longs.push((*v, col));
                }
                Def::Kind(_) => {}
            }
        }
        if any_index && any_pos {
            let origin = self.defs.iter().rfind(|(_, d)| matches!(d, Def::LongAtV(_))).map(|(o, _)| o);
            return Err(origin.unwrap_or(&data_origin).err(ErrorKind::Header(
                "long sections are given both by number and by 'at v =': use one kind".into(),
            )));
        }
        if longs.len() < 2 {
            return Err(data_origin.err(ErrorKind::TooFewLongSections(longs.len())));
        }
        longs.sort_by(|a, b| a.0.total_cmp(&b.0));
        let long_sections = if any_index {
            for (i, (n, col)) in longs.iter().enumerate() {
                if *n != (i + 1) as f64 {
                    return Err(self.defs[*col].0.err(ErrorKind::Header(format!(
                        "long section numbers must be 1..{} without gaps, found {n} at position {}",
                        longs.len(),
                        i + 1
                    ))));
                }
            }
            LongSections::Indexed(longs.len())
        } else {
            let v: Vec<f64> = longs.iter().map(|l| l.0).collect();
            if let Some(i) = (1..v.len()).find(|&i| v[i] - v[i - 1] < MIN_INCREMENT) {
                return Err(self.defs[longs[i].1].0.err(ErrorKind::Header(format!(
                    "long sections at v = {} and {} are closer than {} m",
                    show(v[i - 1]),
                    show(v[i]),
                    show(MIN_INCREMENT)
                ))));
            }
            LongSections::AtV(v)
        };
        let rows = data.rows;
        if rows < 2 {
            return Err(
                data_origin.err(ErrorKind::Inconsistent(format!("{rows} cross section(s); at least 2 are needed")))
            );
        }
        let r = &self.road;
        // Header values are finite and increments at least MIN_INCREMENT (checked on their
        // lines); what they span must be finite too.
        let u0 = r.start_u.unwrap_or(0.0);
        let inc = r.increment.unwrap_or(0.01);
        let last = u0 + inc * (rows - 1) as f64;
        if !last.is_finite() {
            return Err(key_origin("reference_line_increment").err(ErrorKind::HeaderValue {
                key: "REFERENCE_LINE_INCREMENT".into(),
                text: show(inc),
                problem: format!("{rows} rows from START_U = {} end at u = {}", show(u0), show(last)),
            }));
        }
        if self.format.is_some_and(Format::is_text) {
            if let Some(end_u) = r.end_u {
                // NaN-safe: anything but a match within the tolerance is an error.
                let off = (last - end_u).abs();
                if off.is_nan() || off > 1e-6 * (1.0 + end_u.abs()) + 1e-3 * inc {
                    return Err(key_origin("reference_line_end_u").err(ErrorKind::Inconsistent(format!(
                        "END_U is {} but the {rows} rows of data with START_U {} and INCREMENT {} end at {}",
                        show(end_u),
                        show(u0),
                        show(inc),
                        show(last)
                    ))));
                }
            }
        }
        if let LongSections::Indexed(nv) = long_sections {
            let right = r.v_right.unwrap_or(0.0);
            let dv = r.v_increment.unwrap_or(0.01);
            let v_last = right + dv * (nv - 1) as f64;
            let inc_origin = || {
                origin_of(&self.key_origin, "long_section_v_increment")
                    .or(origin_of(&self.key_origin, "long_section_v_left"))
                    .cloned()
                    .unwrap_or_else(|| data_origin.clone())
            };
            if !v_last.is_finite() {
                return Err(inc_origin().err(ErrorKind::HeaderValue {
                    key: "LONG_SECTION_V_INCREMENT".into(),
                    text: show(dv),
                    problem: format!("{nv} long sections from V_RIGHT = {} end at v = {}", show(right), show(v_last)),
                }));
            }
            // The header's v range may not declare more long sections than the data hold.
            if let (Some(_), Some(left)) = (r.v_right, r.v_left) {
                if left > v_last + 1e-6 * (1.0 + left.abs()) + 1e-3 * dv {
                    return Err(inc_origin().err(ErrorKind::Inconsistent(format!(
                        "LONG_SECTION_V_RIGHT = {}, V_LEFT = {} and V_INCREMENT = {} declare {} long sections, the data hold {nv} (ending at v = {})",
                        show(right),
                        show(left),
                        show(dv),
                        count(((left - right) / dv + 0.5).floor() + 1.0),
                        show(v_last)
                    ))));
                }
            }
        }
        let z = data.z;
        let mut other = data.other;
        let mut column = |kind: ChannelKind| -> Option<Vec<f64>> {
            let col = self.defs.iter().position(|(_, d)| *d == Def::Kind(kind))?;
            let k = other.iter().position(|(c, _)| *c == col)?;
            Some(std::mem::take(&mut other[k].1))
        };
        let x = column(ChannelKind::X);
        let y = column(ChannelKind::Y);
        if x.is_some() != y.is_some() {
            let origin =
                self.defs.iter().find(|(_, d)| matches!(d, Def::Kind(ChannelKind::X | ChannelKind::Y))).map(|(o, _)| o);
            return Err(origin
                .unwrap_or(&data_origin)
                .err(ErrorKind::Header("reference line x and y channels must come together".into())));
        }
        let mut order = Vec::with_capacity(nch);
        for (col, (_, d)) in self.defs.iter().enumerate() {
            order.push(match d {
                Def::Kind(k) => *k,
                _ => ChannelKind::LongSection(longs.iter().position(|l| l.1 == col).unwrap_or(0)),
            });
        }
        Ok(Crg {
            comment: self.comment,
            road: self.road,
            options: self.options.map(|o| o.1),
            modifiers: self.modifiers.map(|m| m.1),
            other_blocks: self.other_blocks,
            format: self.format.unwrap_or_default(),
            u_line: self.u_line,
            long_sections,
            nu: rows,
            z,
            phi: column(ChannelKind::Phi),
            slope: column(ChannelKind::Slope),
            banking: column(ChannelKind::Banking),
            xy: x.zip(y),
            u: column(ChannelKind::U),
            channel_order: order,
        })
    }
}
