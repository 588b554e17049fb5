//! XML text -> [`OpenDrive`] model. One function per element; unknown attributes and elements
//! go into [`Extras`]. A missing required attribute is an error, optional ones follow the
//! standard's defaults (stated where applied).
//!
//! The parts: this module holds the entry points and the context errors are placed by; `text`
//! reads a file's text (checked UTF-8 XML characters, bounded), `attrs` reads an element's
//! attributes, `document` the root, header, roads (links, types, plan view) and junctions,
//! `lanes` the lanes and `objects` the objects, signals and CRG surfaces.

mod attrs;
mod document;
mod lanes;
mod objects;
mod text;

use crate::error::{Error, ErrorKind, Position, Result};
use crate::model::*;
use crate::xml::{self, Raw};
use document::opendrive;
use std::path::Path;
use text::read_text;

/// Options for [`read_with`].
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// Accept revMajor other than 1 (the model may then be wrong).
    pub any_major_version: bool,
}

/// Parses an OpenDRIVE document (revisions 1.4 to 1.8, 1.9 read as far as it is the same).
pub fn read(text: &str) -> Result<OpenDrive> {
    read_with(text, &ReadOptions::default())
}

/// Parses an OpenDRIVE document with options.
pub fn read_with(text: &str, options: &ReadOptions) -> Result<OpenDrive> {
    let doc = xml::parse(text)?;
    let root = doc.root();
    let cx = Cx { text };
    if root.name != "OpenDRIVE" {
        return Err(cx.err(root, ErrorKind::NotOpenDrive { found: root.name.to_string() }));
    }
    opendrive(&cx, root, options)
}

/// Reads and parses a file; errors name the file.
///
/// The file is read a chunk at a time and each chunk is checked as it comes: bytes that are
/// not UTF-8 (a UTF-16 file, a Latin-1 one, binary data) and characters XML 1.0 forbids (NUL
/// and the other control characters but tab, line feed and carriage return) are errors with
/// the line, column and byte of the first one, and reading stops there. At most
/// [`MAX_FILE_BYTES`] are read: a regular file that is larger is refused by its size before
/// anything is read, and anything else (a pipe, a device such as `/dev/zero`) is read up to
/// that many bytes, then refused. Pipes stay readable (`roadscan check <(gunzip -c map.xodr.gz)`):
/// the bound, not the kind of file, is what keeps the memory finite.
pub fn read_file(path: impl AsRef<Path>) -> Result<OpenDrive> {
    let path = path.as_ref();
    let text = read_text(path, MAX_FILE_BYTES).map_err(|e| e.with_path(path))?;
    read(&text).map_err(|e| e.with_path(path))
}

/// Largest OpenDRIVE file read, bytes: 2 GiB. The largest published maps are a few hundred
/// MB; the parse tree of a file costs a multiple of its size (up to about 15 times, with at
/// most one element per 8 bytes: [`ErrorKind::Limit`]), so a larger file would not fit in
/// memory anyway, and a file that never ends (a device, an endless pipe) must stop somewhere.
pub const MAX_FILE_BYTES: u64 = 1 << 31;

/// Largest road length, geometry length or station along a road that is read, m: 10 000 km,
/// a quarter of the equator. Longer is not a road but a broken or hostile file, and every
/// consumer that tabulates a road by its length (frames, grids, checks) would be asked for
/// work and memory in proportion; refused at read time, with the file, line and column.
pub const MAX_STATION: f64 = 1e7;

const STATION_REASON: &str = "more than 1e7 m (10 000 km) along a road: no road is that long";

struct Cx<'a> {
    text: &'a str,
}

impl Cx<'_> {
    fn err(&self, el: Raw, kind: ErrorKind) -> Error {
        Error::at(kind, Position::locate(self.text, el.pos))
    }
}
