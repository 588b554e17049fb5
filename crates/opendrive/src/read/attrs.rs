//! An element's attributes: required and optional values parsed with the standard's defaults,
//! stations and lengths bounded by [`MAX_STATION`], the attributes used remembered so the rest
//! go into [`Extras`]; and the check that records come in ascending s.

use super::{Cx, MAX_STATION, STATION_REASON};
use crate::error::{Error, ErrorKind, Result};
use crate::model::*;
use crate::xml::Raw;

/// Reads the attributes of one element and remembers which ones were used.
pub(super) struct Attrs<'c, 'e> {
    cx: &'c Cx<'c>,
    el: Raw<'e>,
    /// Bit i: attribute i was read. Lookups see only the first 64 attributes; any further
    /// ones (no element of the standard has that many) are kept as extras.
    used: u64,
}

impl<'c, 'e> Attrs<'c, 'e> {
    pub(super) fn new(cx: &'c Cx<'c>, el: Raw<'e>) -> Self {
        Attrs { cx, el, used: 0 }
    }
    pub(super) fn raw(&mut self, name: &str) -> Option<&'e str> {
        let i = self.el.attributes.iter().take(64).position(|(k, _)| *k == name)?;
        self.used |= 1 << i;
        Some(&self.el.attributes[i].1)
    }
    fn missing(&self, attribute: &'static str) -> Error {
        self.cx.err(self.el, ErrorKind::MissingAttribute { element: self.el.name.to_string(), attribute })
    }
    pub(super) fn invalid(&self, attribute: &str, value: &str, reason: &str) -> Error {
        self.cx.err(
            self.el,
            ErrorKind::InvalidAttribute {
                element: self.el.name.to_string(),
                attribute: attribute.to_string(),
                value: value.to_string(),
                reason: reason.to_string(),
            },
        )
    }
    pub(super) fn string(&mut self, name: &'static str) -> Result<String> {
        self.raw(name).map(str::to_string).ok_or_else(|| self.missing(name))
    }
    pub(super) fn opt_string(&mut self, name: &str) -> Option<String> {
        self.raw(name).map(str::to_string)
    }
    fn parse_f64(&self, name: &str, v: &str) -> Result<f64> {
        match v.trim().parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(x),
            Ok(_) => Err(self.invalid(name, v, "not a finite number")),
            Err(_) => Err(self.invalid(name, v, "not a number")),
        }
    }
    pub(super) fn f64(&mut self, name: &'static str) -> Result<f64> {
        let v = self.raw(name).ok_or_else(|| self.missing(name))?;
        self.parse_f64(name, v)
    }
    /// An optional number; `default` is the standard's default when absent.
    pub(super) fn f64_or(&mut self, name: &str, default: f64) -> Result<f64> {
        Ok(self.opt_f64(name)?.unwrap_or(default))
    }
    pub(super) fn opt_f64(&mut self, name: &str) -> Result<Option<f64>> {
        match self.raw(name) {
            Some(v) => self.parse_f64(name, v).map(Some),
            None => Ok(None),
        }
    }
    fn non_negative(&mut self, name: &'static str) -> Result<f64> {
        let x = self.f64(name)?;
        if x < 0.0 {
            let v = self.raw(name).unwrap_or_default();
            return Err(self.invalid(name, v, "must not be negative"));
        }
        Ok(x)
    }
    /// A station or length along a road, m: finite and within [`MAX_STATION`].
    pub(super) fn station(&mut self, name: &'static str) -> Result<f64> {
        let x = self.f64(name)?;
        if x.abs() > MAX_STATION {
            let v = self.raw(name).unwrap_or_default();
            return Err(self.invalid(name, v, STATION_REASON));
        }
        Ok(x)
    }
    /// A length along a road or a station from its start, m: in [0, [`MAX_STATION`]].
    pub(super) fn length(&mut self, name: &'static str) -> Result<f64> {
        let x = self.non_negative(name)?;
        if x > MAX_STATION {
            let v = self.raw(name).unwrap_or_default();
            return Err(self.invalid(name, v, STATION_REASON));
        }
        Ok(x)
    }
    pub(super) fn i32(&mut self, name: &'static str) -> Result<i32> {
        let v = self.raw(name).ok_or_else(|| self.missing(name))?;
        v.trim().parse::<i32>().map_err(|_| self.invalid(name, v, "not an integer"))
    }
    pub(super) fn u32(&mut self, name: &'static str) -> Result<u32> {
        let v = self.raw(name).ok_or_else(|| self.missing(name))?;
        v.trim().parse::<u32>().map_err(|_| self.invalid(name, v, "not a non-negative integer"))
    }
    pub(super) fn opt_bool(&mut self, name: &str) -> Result<Option<bool>> {
        match self.raw(name) {
            None => Ok(None),
            Some(v) => match v.trim() {
                "true" | "1" => Ok(Some(true)),
                "false" | "0" => Ok(Some(false)),
                _ => Err(self.invalid(name, v, "not a boolean (true or false)")),
            },
        }
    }
    /// The attributes that were not read, for [`Extras`].
    fn rest(self) -> Vec<(String, String)> {
        self.el
            .attributes
            .iter()
            .enumerate()
            .filter(|(i, _)| *i >= 64 || self.used & (1 << i) == 0)
            .map(|(_, (k, v))| (k.to_string(), v.to_string()))
            .collect()
    }
}

pub(super) fn extras(attrs: Attrs<'_, '_>) -> Extras {
    Extras { attributes: attrs.rest(), elements: Vec::new() }
}

pub(super) fn check_ascending(cx: &Cx, el: Raw, s: f64, previous: Option<f64>) -> Result<()> {
    if let Some(p) = previous {
        if s < p {
            return Err(cx.err(el, ErrorKind::DescendingS { element: el.name.to_string(), s, previous: p }));
        }
    }
    Ok(())
}

pub(super) fn all_extras_attrs(el: Raw) -> Extras {
    Extras { attributes: el.owned_attributes(), elements: Vec::new() }
}

pub(super) fn poly3(cx: &Cx, el: Raw, s_name: &'static str) -> Result<Poly3> {
    let mut a = Attrs::new(cx, el);
    Ok(Poly3 { s: a.station(s_name)?, a: a.f64("a")?, b: a.f64("b")?, c: a.f64("c")?, d: a.f64("d")? })
}
