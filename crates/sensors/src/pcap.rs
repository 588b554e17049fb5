//! Classic libpcap files of UDP datagrams as Ethernet/IPv4/UDP frames, written and read back.
//!
//! Global header: magic `D4 C3 B2 A1` (little-endian, microseconds), version 2.4, snaplen
//! 65535, link type 1 (Ethernet). Each record: seconds, microseconds, captured and original
//! length (u32 each), then the frame: Ethernet (14 bytes), IPv4 (20, header checksum set, no
//! options), UDP (8, checksum 0 = none) and the payload.

use crate::Error;
use std::io::Write;
use std::net::Ipv4Addr;

/// Bytes of the Ethernet, IPv4 and UDP headers before a payload.
pub const HEADERS: usize = 14 + 20 + 8;

/// One side of a datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Endpoint {
    /// MAC address.
    pub mac: [u8; 6],
    /// IPv4 address.
    pub ip: Ipv4Addr,
    /// UDP port.
    pub port: u16,
}

/// Writes a pcap stream.
#[derive(Debug)]
pub struct PcapWriter<W: Write> {
    out: W,
    id: u16,
    records: u64,
}

fn io(what: &str) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io { what: what.to_string(), source }
}

impl<W: Write> PcapWriter<W> {
    /// Starts a file on `out` (writes the global header).
    pub fn new(mut out: W) -> Result<PcapWriter<W>, Error> {
        let mut h = Vec::with_capacity(24);
        h.extend_from_slice(&0xA1B2_C3D4u32.to_le_bytes());
        h.extend_from_slice(&2u16.to_le_bytes());
        h.extend_from_slice(&4u16.to_le_bytes());
        h.extend_from_slice(&0i32.to_le_bytes());
        h.extend_from_slice(&0u32.to_le_bytes());
        h.extend_from_slice(&65535u32.to_le_bytes());
        h.extend_from_slice(&1u32.to_le_bytes());
        out.write_all(&h).map_err(io("the pcap header"))?;
        Ok(PcapWriter { out, id: 0, records: 0 })
    }

    /// Appends a datagram from `src` to `dst` captured at `utc` seconds since 1970.
    pub fn udp(&mut self, utc: f64, src: &Endpoint, dst: &Endpoint, payload: &[u8]) -> Result<(), Error> {
        let frame = frame(src, dst, payload, self.id);
        self.id = self.id.wrapping_add(1);
        let secs = utc.floor().clamp(0.0, u32::MAX as f64);
        let micros = ((utc - secs) * 1e6).round().clamp(0.0, 999_999.0);
        let mut rec = Vec::with_capacity(16 + frame.len());
        rec.extend_from_slice(&(secs as u32).to_le_bytes());
        rec.extend_from_slice(&(micros as u32).to_le_bytes());
        rec.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        rec.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        rec.extend_from_slice(&frame);
        self.out.write_all(&rec).map_err(io("a pcap record"))?;
        self.records += 1;
        Ok(())
    }

    /// Records written.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// The writer, flushed.
    pub fn finish(mut self) -> Result<W, Error> {
        self.out.flush().map_err(io("the pcap file"))?;
        Ok(self.out)
    }
}

/// An Ethernet/IPv4/UDP frame of `payload`.
pub fn frame(src: &Endpoint, dst: &Endpoint, payload: &[u8], id: u16) -> Vec<u8> {
    let mut f = Vec::with_capacity(HEADERS + payload.len());
    f.extend_from_slice(&dst.mac);
    f.extend_from_slice(&src.mac);
    f.extend_from_slice(&0x0800u16.to_be_bytes());
    let total = (20 + 8 + payload.len()).min(u16::MAX as usize) as u16;
    let mut ip = [0u8; 20];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&total.to_be_bytes());
    ip[4..6].copy_from_slice(&id.to_be_bytes());
    ip[6] = 0x40; // don't fragment
    ip[8] = 64; // TTL
    ip[9] = 17; // UDP
    ip[12..16].copy_from_slice(&src.ip.octets());
    ip[16..20].copy_from_slice(&dst.ip.octets());
    let sum = checksum(&ip);
    ip[10..12].copy_from_slice(&sum.to_be_bytes());
    f.extend_from_slice(&ip);
    f.extend_from_slice(&src.port.to_be_bytes());
    f.extend_from_slice(&dst.port.to_be_bytes());
    f.extend_from_slice(&((8 + payload.len()).min(u16::MAX as usize) as u16).to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    f.extend_from_slice(payload);
    f
}

/// The Internet checksum of a header.
fn checksum(h: &[u8]) -> u16 {
    let mut sum: u32 = h.chunks(2).map(|c| u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]))).sum();
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}

/// A UDP datagram read from a pcap file.
#[derive(Debug, Clone, PartialEq)]
pub struct Datagram {
    /// Capture time, seconds since 1970.
    pub utc: f64,
    /// Destination port.
    pub port: u16,
    /// Payload.
    pub payload: Vec<u8>,
}

/// Reads the UDP datagrams of a classic pcap file in memory (see [`PcapReader`]).
pub fn read(path: &str, bytes: &[u8]) -> Result<Vec<Datagram>, Error> {
    PcapReader::new(path, std::io::Cursor::new(bytes), bytes.len() as u64)?.collect()
}

/// Streams the UDP datagrams of a classic pcap file (either byte order, micro- or nanosecond
/// times, Ethernet or raw IPv4 link types); records that are not IPv4/UDP are skipped. Every
/// record length is checked against the bytes the file has left: a damaged file gives one
/// error naming the byte, and nothing larger than the file is ever allocated.
#[derive(Debug)]
pub struct PcapReader<R> {
    path: String,
    input: R,
    len: u64,
    at: u64,
    le: bool,
    nanos: bool,
    link: u32,
    failed: bool,
}

impl<R: std::io::Read> PcapReader<R> {
    /// Reads the global header of `input`, a file of `len` bytes named `path`.
    pub fn new(path: &str, mut input: R, len: u64) -> Result<PcapReader<R>, Error> {
        let bad = |offset: u64, what: &str| Error::Pcap { path: path.to_string(), offset, what: what.to_string() };
        if len < 24 {
            return Err(bad(0, "shorter than a pcap header (24 bytes)"));
        }
        let mut h = [0u8; 24];
        input.read_exact(&mut h).map_err(|e| bad(0, &format!("reading the header: {e}")))?;
        let (le, nanos) = match [h[0], h[1], h[2], h[3]] {
            [0xD4, 0xC3, 0xB2, 0xA1] => (true, false),
            [0xA1, 0xB2, 0xC3, 0xD4] => (false, false),
            [0x4D, 0x3C, 0xB2, 0xA1] => (true, true),
            [0xA1, 0xB2, 0x3C, 0x4D] => (false, true),
            [0x0A, 0x0D, 0x0D, 0x0A] => {
                return Err(bad(0, "a pcapng file; write classic pcap (e.g. `editcap -F pcap`)"))
            }
            _ => return Err(bad(0, "not a pcap file (unknown magic number)")),
        };
        let link = word(&h[20..24], le);
        if link != 1 && link != 101 && link != 228 {
            return Err(bad(20, &format!("link type {link}; Ethernet (1) or raw IPv4 (101, 228) expected")));
        }
        Ok(PcapReader { path: path.to_string(), input, len, at: 24, le, nanos, link, failed: false })
    }

    fn bad(&mut self, offset: u64, what: String) -> Error {
        self.failed = true;
        Error::Pcap { path: self.path.clone(), offset, what }
    }
}

fn word(b: &[u8], le: bool) -> u32 {
    let b = [b[0], b[1], b[2], b[3]];
    if le {
        u32::from_le_bytes(b)
    } else {
        u32::from_be_bytes(b)
    }
}

impl<R: std::io::Read> Iterator for PcapReader<R> {
    type Item = Result<Datagram, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.failed || self.at >= self.len {
                return None;
            }
            let at = self.at;
            if self.len - at < 16 {
                return Some(Err(self.bad(at, "a record header cut short".into())));
            }
            let mut h = [0u8; 16];
            if let Err(e) = self.input.read_exact(&mut h) {
                return Some(Err(self.bad(at, format!("reading a record header: {e}"))));
            }
            let (sec, frac, incl) = (word(&h[0..4], self.le), word(&h[4..8], self.le), word(&h[8..12], self.le) as u64);
            let left = self.len - at - 16;
            if incl > left {
                return Some(Err(self.bad(at + 8, format!("a record of {incl} bytes where {left} remain"))));
            }
            let mut frame = vec![0u8; incl as usize];
            if let Err(e) = self.input.read_exact(&mut frame) {
                return Some(Err(self.bad(at + 16, format!("reading a record: {e}"))));
            }
            self.at = at + 16 + incl;
            let utc = sec as f64 + frac as f64 * if self.nanos { 1e-9 } else { 1e-6 };
            let ip = if self.link == 1 { udp_in_ethernet(&frame) } else { Some(&frame[..]) };
            if let Some((port, payload)) = ip.and_then(udp_in_ipv4) {
                return Some(Ok(Datagram { utc, port, payload: payload.to_vec() }));
            }
        }
    }
}

/// The IPv4 packet of an Ethernet frame (one VLAN tag allowed).
fn udp_in_ethernet(f: &[u8]) -> Option<&[u8]> {
    let mut at = 12;
    let mut kind = u16::from_be_bytes([*f.get(at)?, *f.get(at + 1)?]);
    if kind == 0x8100 {
        at += 4;
        kind = u16::from_be_bytes([*f.get(at)?, *f.get(at + 1)?]);
    }
    (kind == 0x0800).then(|| f.get(at + 2..)).flatten()
}

/// (destination port, payload) of a UDP datagram in an IPv4 packet.
fn udp_in_ipv4(p: &[u8]) -> Option<(u16, &[u8])> {
    let (v, ihl) = (p.first()? >> 4, (p.first()? & 0x0F) as usize * 4);
    if v != 4 || ihl < 20 || *p.get(9)? != 17 {
        return None;
    }
    let udp = p.get(ihl..)?;
    let port = u16::from_be_bytes([*udp.get(2)?, *udp.get(3)?]);
    let len = u16::from_be_bytes([*udp.get(4)?, *udp.get(5)?]) as usize;
    udp.get(8..len.max(8)).map(|payload| (port, payload))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ends() -> (Endpoint, Endpoint) {
        let src = Endpoint { mac: [0x60, 0x76, 0x88, 0, 0, 1], ip: Ipv4Addr::new(192, 168, 1, 201), port: 2368 };
        let dst = Endpoint { mac: [0xFF; 6], ip: Ipv4Addr::BROADCAST, port: 2368 };
        (src, dst)
    }

    #[test]
    fn round_trip_and_checksum() {
        let (src, dst) = ends();
        let mut w = PcapWriter::new(Vec::new()).expect("header");
        w.udp(1_767_225_600.000_553, &src, &dst, &[7u8; 1206]).expect("record");
        w.udp(1_767_225_601.5, &src, &Endpoint { port: 8308, ..dst }, &[1u8; 512]).expect("record");
        let bytes = w.finish().expect("finish");
        assert_eq!(bytes.len(), 24 + 16 + 1248 + 16 + 554);
        let d = read("mem", &bytes).expect("read");
        assert_eq!(d.len(), 2);
        assert_eq!((d[0].port, d[0].payload.len(), d[1].port, d[1].payload.len()), (2368, 1206, 8308, 512));
        assert!((d[0].utc - 1_767_225_600.000_553).abs() < 1e-6);
        // A header with its checksum in place sums to zero.
        let ip = &bytes[24 + 16 + 14..24 + 16 + 34];
        assert_eq!(checksum(ip), 0);
    }

    #[test]
    fn damaged_files_are_errors() {
        let (src, dst) = ends();
        let mut w = PcapWriter::new(Vec::new()).expect("header");
        w.udp(0.0, &src, &dst, &[0u8; 100]).expect("record");
        let bytes = w.finish().expect("finish");
        for cut in [0, 10, 30, bytes.len() - 1] {
            assert!(read("x.pcap", &bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut huge = bytes.clone();
        huge[32..36].copy_from_slice(&u32::MAX.to_le_bytes());
        let e = read("x.pcap", &huge).expect_err("huge record");
        assert!(e.to_string().starts_with("x.pcap: byte 32:"), "{e}");
        assert!(read("x.pcap", b"\x0a\x0d\x0d\x0a and more bytes than a header needs").is_err());
    }
}
