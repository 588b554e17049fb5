//! UDP messages of the decoupled test bed: velocity or pose in from external vehicle dynamics
//! (the seed's text "1,0,0", or IEEE-754 values as Simulink's UDP blocks send them), pose
//! updates and contact reports out, in the same format. One datagram is one message.

use crate::Error;
use std::net::{SocketAddr, UdpSocket};

/// How the values of a datagram are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// Decimal numbers separated by commas (a trailing newline is allowed).
    #[default]
    Text,
    /// IEEE-754 single, little-endian.
    F32Le,
    /// IEEE-754 single, big-endian.
    F32Be,
    /// IEEE-754 double, little-endian.
    F64Le,
    /// IEEE-754 double, big-endian.
    F64Be,
}

impl Format {
    /// The format named `text`, `f32le`, `f32be`, `f64le` or `f64be`.
    pub fn parse(name: &str) -> Option<Format> {
        Some(match name {
            "text" => Format::Text,
            "f32le" => Format::F32Le,
            "f32be" => Format::F32Be,
            "f64le" => Format::F64Le,
            "f64be" => Format::F64Be,
            _ => return None,
        })
    }

    /// Writes `values` in this format.
    pub fn encode(self, values: &[f64]) -> Vec<u8> {
        match self {
            Format::Text => {
                let t: Vec<String> = values.iter().map(|v| format!("{v}")).collect();
                let mut s = t.join(",");
                s.push('\n');
                s.into_bytes()
            }
            Format::F32Le => values.iter().flat_map(|v| (*v as f32).to_le_bytes()).collect(),
            Format::F32Be => values.iter().flat_map(|v| (*v as f32).to_be_bytes()).collect(),
            Format::F64Le => values.iter().flat_map(|v| v.to_le_bytes()).collect(),
            Format::F64Be => values.iter().flat_map(|v| v.to_be_bytes()).collect(),
        }
    }

    /// Reads the values of one datagram (every one finite).
    pub fn decode(self, b: &[u8]) -> Result<Vec<f64>, Error> {
        let bad = |m: String| Err(Error::Message(m));
        let values: Vec<f64> = match self {
            Format::Text => {
                let Ok(s) = std::str::from_utf8(b) else {
                    return bad("text datagram is not UTF-8".into());
                };
                let mut v = Vec::new();
                for (i, field) in s.trim_end_matches(['\n', '\r', '\0']).split(',').enumerate() {
                    match field.trim().parse::<f64>() {
                        Ok(x) => v.push(x),
                        Err(_) => return bad(format!("field {} ({:?}) is not a number", i + 1, field.trim())),
                    }
                }
                v
            }
            Format::F32Le | Format::F32Be => {
                if !b.len().is_multiple_of(4) {
                    return bad(format!("{} bytes is not a whole number of 4-byte values", b.len()));
                }
                b.chunks_exact(4)
                    .map(|c| {
                        let a = [c[0], c[1], c[2], c[3]];
                        f64::from(if self == Format::F32Le { f32::from_le_bytes(a) } else { f32::from_be_bytes(a) })
                    })
                    .collect()
            }
            Format::F64Le | Format::F64Be => {
                if !b.len().is_multiple_of(8) {
                    return bad(format!("{} bytes is not a whole number of 8-byte values", b.len()));
                }
                b.chunks_exact(8)
                    .map(|c| {
                        let mut a = [0u8; 8];
                        a.copy_from_slice(c);
                        if self == Format::F64Le {
                            f64::from_le_bytes(a)
                        } else {
                            f64::from_be_bytes(a)
                        }
                    })
                    .collect()
            }
        };
        if let Some(i) = values.iter().position(|v| !v.is_finite()) {
            return bad(format!("value {} is not finite", i + 1));
        }
        Ok(values)
    }
}

/// What external dynamics send for their actor.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Input {
    /// Three values: velocity (vx, vy, vz) in the road file's frame, m/s.
    Velocity([f64; 3]),
    /// Six values: pose (x, y, z, m; roll, pitch, heading, rad) in the road file's frame.
    Pose([f64; 6]),
}

impl Input {
    /// The input one datagram holds.
    pub fn decode(format: Format, b: &[u8]) -> Result<Input, Error> {
        let v = format.decode(b)?;
        match v.len() {
            3 => Ok(Input::Velocity([v[0], v[1], v[2]])),
            6 => Ok(Input::Pose([v[0], v[1], v[2], v[3], v[4], v[5]])),
            n => Err(Error::Message(format!("{n} values (expected 3 for a velocity or 6 for a pose)"))),
        }
    }
}

/// Kind codes, the first value of every outgoing message.
pub mod kind {
    /// A pose update: kind, id, tick, time, x, y, z, roll, pitch, heading, speed.
    pub const POSE: f64 = 1.0;
    /// A contact: kind, id a, id b, tick, time, x, y, relative speed.
    pub const CONTACT: f64 = 2.0;
}

/// Values of a pose update (11).
pub fn pose_values(id: u16, tick: u64, time: f64, pose: [f64; 6], speed: f64) -> Vec<f64> {
    let mut v = vec![kind::POSE, f64::from(id), tick as f64, time];
    v.extend_from_slice(&pose);
    v.push(speed);
    v
}

/// Values of a contact report (8).
pub fn contact_values(ids: [u16; 2], tick: u64, time: f64, xy: [f64; 2], relative_speed: f64) -> Vec<f64> {
    vec![kind::CONTACT, f64::from(ids[0]), f64::from(ids[1]), tick as f64, time, xy[0], xy[1], relative_speed]
}

/// A bound socket that takes the latest input of each tick.
#[derive(Debug)]
pub struct Receiver {
    socket: UdpSocket,
    format: Format,
    /// Datagrams that were not a valid input, and the last one's reason.
    pub rejected: (u64, Option<String>),
    /// Valid inputs received.
    pub received: u64,
}

impl Receiver {
    /// Binds `addr` (non-blocking).
    pub fn bind(addr: &str, format: Format) -> Result<Receiver, Error> {
        let socket = UdpSocket::bind(addr).map_err(|e| Error::Io { what: format!("binding UDP {addr}"), source: e })?;
        socket.set_nonblocking(true).map_err(|e| Error::Io { what: format!("UDP {addr}"), source: e })?;
        Ok(Receiver { socket, format, rejected: (0, None), received: 0 })
    }

    /// The bound address.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.socket.local_addr().ok()
    }

    /// Every datagram waiting, in arrival order (invalid ones counted in `rejected`).
    pub fn drain(&mut self) -> Vec<Input> {
        let mut buf = [0u8; 2048];
        let mut out = Vec::new();
        while let Ok(n) = self.socket.recv(&mut buf) {
            match Input::decode(self.format, &buf[..n]) {
                Ok(i) => {
                    self.received += 1;
                    out.push(i);
                }
                Err(e) => {
                    self.rejected.0 += 1;
                    self.rejected.1 = Some(e.to_string());
                }
            }
        }
        out
    }
}

/// Checks that `addr` is HOST:PORT (an IPv4 address, `[IPv6]` or a host name, and a port
/// number) without resolving it, so a configuration is refused before any socket is made.
pub fn check_address(addr: &str) -> Result<(), Error> {
    if addr.parse::<SocketAddr>().is_ok() {
        return Ok(());
    }
    let ok = addr.rsplit_once(':').is_some_and(|(host, port)| {
        (host.parse::<std::net::IpAddr>().is_ok() || host_name_ok(host)) && port.parse::<u16>().is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err(Error::Message(format!("{addr:?} is not HOST:PORT (e.g. 127.0.0.1:9000)")))
    }
}

/// True for a DNS host name (`localhost`, `sim-pc.lan`): dot-separated labels of letters,
/// digits and '-', the last not all digits (that would be a malformed IPv4 address).
pub(crate) fn host_name_ok(host: &str) -> bool {
    let labels_ok = !host.is_empty()
        && host.len() <= 253
        && host.split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-')
        });
    labels_ok && !host.rsplit('.').next().is_some_and(|l| l.bytes().all(|c| c.is_ascii_digit()))
}

/// A socket that sends pose updates and contact reports to one address.
#[derive(Debug)]
pub struct Sender {
    socket: UdpSocket,
    target: SocketAddr,
    format: Format,
}

impl Sender {
    /// A sender to `target` (HOST:PORT).
    pub fn to(target: &str, format: Format) -> Result<Sender, Error> {
        use std::net::ToSocketAddrs;
        let io = |e| Error::Io { what: format!("UDP target {target}"), source: e };
        let target = target
            .to_socket_addrs()
            .map_err(io)?
            .next()
            .ok_or_else(|| Error::Message(format!("UDP target {target} resolves to no address")))?;
        let any = if target.is_ipv4() { "0.0.0.0:0" } else { "[::]:0" };
        let socket = UdpSocket::bind(any).map_err(|e| Error::Io { what: "UDP socket".into(), source: e })?;
        Ok(Sender { socket, target, format })
    }

    /// Sends one message of `values`.
    pub fn send(&self, values: &[f64]) -> Result<(), Error> {
        self.socket
            .send_to(&self.format.encode(values), self.target)
            .map(|_| ())
            .map_err(|e| Error::Io { what: format!("sending to {}", self.target), source: e })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;

    #[test]
    fn addresses_are_checked_without_resolving() {
        for good in ["127.0.0.1:9000", "[::1]:9000", "::1:9000", "localhost:0", "sim-pc.lan:65535"] {
            assert!(check_address(good).is_ok(), "{good}");
        }
        for bad in ["127.0.0.1", "127.0.0.1:70000", "300.1.1.1:80", ":9000", "a b:1", "host:", "x.-y:1", ""] {
            let e = check_address(bad).unwrap_err().to_string();
            assert!(e.contains("HOST:PORT"), "{bad}: {e}");
        }
    }

    #[test]
    fn the_seeds_text_and_simulinks_binary_read_the_same() {
        assert_eq!(Input::decode(Format::Text, b"1,0,0").unwrap(), Input::Velocity([1.0, 0.0, 0.0]));
        assert_eq!(Input::decode(Format::Text, b" 1.5, -2 ,3e-1\r\n").unwrap(), Input::Velocity([1.5, -2.0, 0.3]));
        let pose = [10.0, -5.0, 0.25, 0.0, 0.01, 1.5];
        for f in [Format::F64Le, Format::F64Be, Format::Text] {
            assert_eq!(Input::decode(f, &f.encode(&pose)).unwrap(), Input::Pose(pose), "{f:?}");
        }
        for f in [Format::F32Le, Format::F32Be] {
            let Input::Pose(p) = Input::decode(f, &f.encode(&pose)).unwrap() else { panic!() };
            assert!(p.iter().zip(&pose).all(|(a, b)| (a - b).abs() < 1e-6), "{f:?}");
        }
        // Python's struct.pack('<3f', 1, 0, 0) and struct.pack('>3d', 1, 0, 0).
        assert_eq!(Format::F32Le.encode(&[1.0, 0.0, 0.0])[..4], [0x00, 0x00, 0x80, 0x3F]);
        assert_eq!(Format::F64Be.encode(&[1.0])[..], [0x3F, 0xF0, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn bad_datagrams_are_errors() {
        for (f, b, says) in [
            (Format::Text, &b"1,x,0"[..], "field 2"),
            (Format::Text, b"1,0", "2 values"),
            (Format::Text, b"nan,0,0", "not finite"),
            (Format::F32Le, &[0u8; 13][..], "4-byte"),
            (Format::F64Be, &[0u8; 16][..], "2 values"),
            (Format::Text, &[0xFFu8, 0xFE][..], "UTF-8"),
        ] {
            let e = Input::decode(f, b).unwrap_err().to_string();
            assert!(e.contains(says), "{f:?} {b:?}: {e}");
        }
    }

    #[test]
    fn a_receiver_takes_what_a_sender_sends_over_loopback() {
        let mut rx = Receiver::bind("127.0.0.1:0", Format::F64Le).unwrap();
        let addr = rx.local_addr().unwrap().to_string();
        let tx = Sender::to(&addr, Format::F64Le).unwrap();
        tx.send(&[1.0, 2.0, 3.0]).unwrap();
        tx.send(&[1.0]).unwrap();
        tx.send(&[4.0, 5.0, 6.0, 0.0, 0.0, 0.5]).unwrap();
        let mut got = Vec::new();
        for _ in 0..200 {
            got.extend(rx.drain());
            if got.len() == 2 && rx.rejected.0 == 1 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(got, vec![Input::Velocity([1.0, 2.0, 3.0]), Input::Pose([4.0, 5.0, 6.0, 0.0, 0.0, 0.5])]);
        assert_eq!(rx.rejected.0, 1);
    }
}
