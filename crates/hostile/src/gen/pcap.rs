//! Capture cases: classic pcap files of Velodyne-sized UDP datagrams, cut, with bad magic
//! numbers, link types and record lengths, and seeded random damage, for `replay`.

use super::Gen;
use crate::case::{Expect, Kind, Place};

/// A pcap file: `records` datagrams of `payload` bytes to port 2368, in the byte order asked.
fn capture(records: usize, payload: usize, big_endian: bool, nanos: bool) -> Vec<u8> {
    let w32 = |v: u32| if big_endian { v.to_be_bytes() } else { v.to_le_bytes() };
    let w16 = |v: u16| if big_endian { v.to_be_bytes() } else { v.to_le_bytes() };
    let mut b = Vec::new();
    b.extend_from_slice(&w32(if nanos { 0xA1B2_3C4D } else { 0xA1B2_C3D4 }));
    b.extend_from_slice(&w16(2));
    b.extend_from_slice(&w16(4));
    b.extend_from_slice(&w32(0));
    b.extend_from_slice(&w32(0));
    b.extend_from_slice(&w32(65535));
    b.extend_from_slice(&w32(1));
    for k in 0..records {
        let mut f = vec![0xFF; 6];
        f.extend_from_slice(&[0x60, 0x76, 0x88, 0, 0, 1, 0x08, 0x00]);
        let total = (28 + payload) as u16;
        f.extend_from_slice(&[0x45, 0, (total >> 8) as u8, total as u8, 0, k as u8, 0x40, 0, 64, 17, 0, 0]);
        f.extend_from_slice(&[192, 168, 1, 201, 255, 255, 255, 255]);
        let len = (8 + payload) as u16;
        f.extend_from_slice(&[0x09, 0x40, 0x09, 0x40, (len >> 8) as u8, len as u8, 0, 0]);
        f.extend((0..payload).map(|i| (i * 7 + k) as u8));
        b.extend_from_slice(&w32(1_767_225_600 + k as u32 / 1000));
        b.extend_from_slice(&w32((k as u32 % 1000) * 553));
        b.extend_from_slice(&w32(f.len() as u32));
        b.extend_from_slice(&w32(f.len() as u32));
        b.extend_from_slice(&f);
    }
    b
}

impl Gen {
    pub(super) fn pcap(&mut self) -> Result<(), String> {
        let good = capture(20, 1206, false, false);
        let record = 16 + 42 + 1206;
        self.add(Kind::Pcap, "pcap/seed", "pcap", &good, Expect::Ok)?;
        self.add(Kind::Pcap, "pcap/big-endian", "pcap", &capture(5, 1206, true, false), Expect::Ok)?;
        self.add(Kind::Pcap, "pcap/nanoseconds", "pcap", &capture(5, 1206, false, true), Expect::Ok)?;
        self.add(Kind::Pcap, "pcap/no-records", "pcap", &good[..24], Expect::Ok)?;
        self.add(Kind::Pcap, "pcap/tiny-datagrams", "pcap", &capture(5, 1, false, false), Expect::Ok)?;
        let fail = |g: &mut Gen, name: &str, bytes: &[u8]| -> Result<(), String> {
            g.add(Kind::Pcap, &format!("pcap/{name}"), "pcap", bytes, Expect::Fail)?.place = Place::File;
            Ok(())
        };
        fail(self, "empty", &[])?;
        fail(self, "header-cut", &good[..10])?;
        fail(self, "record-header-cut", &good[..24 + 8])?;
        fail(self, "record-cut", &good[..24 + record + 100])?;
        let mut b = good.clone();
        b[..4].copy_from_slice(b"ABCD");
        fail(self, "bad-magic", &b)?;
        let mut b = good.clone();
        b[..4].copy_from_slice(&[0x0A, 0x0D, 0x0D, 0x0A]);
        fail(self, "pcapng", &b)?;
        let mut b = good.clone();
        b[20..24].copy_from_slice(&113u32.to_le_bytes());
        fail(self, "link-type-113", &b)?;
        for (name, len) in [("incl-len-huge", u32::MAX), ("incl-len-2g", 1 << 31), ("incl-len-past-end", 100_000)] {
            let mut b = good.clone();
            b[24 + 8..24 + 12].copy_from_slice(&len.to_le_bytes());
            fail(self, name, &b)?;
        }
        // A UDP length larger than the frame, an IP header length of 0: skipped, not read past.
        let mut b = good.clone();
        b[24 + 16 + 38..24 + 16 + 40].copy_from_slice(&[0xFF, 0xFF]);
        self.add(Kind::Pcap, "pcap/udp-length-huge", "pcap", &b, Expect::Ok)?;
        let mut b = good.clone();
        b[24 + 16 + 14] = 0x40;
        self.add(Kind::Pcap, "pcap/ip-header-length-0", "pcap", &b, Expect::Ok)?;
        let seed = capture(3, 1206, false, false);
        self.random(Kind::Pcap, "pcap", "pcap", &seed, 10, false)
    }
}
