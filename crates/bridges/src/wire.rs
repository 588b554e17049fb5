//! The ZeroMQ message formats: instructions to the simulator, its replies and the frame of a
//! tick. One ZeroMQ frame per message; every integer and float big-endian (the seed's hex
//! examples use big-endian floats), ids two bytes and floats eight (the seed's text); the
//! byte tables and test vectors are in docs/bridges.md.

use crate::Error;

/// An instruction's first byte.
pub mod opcode {
    /// Stop the simulation.
    pub const STOP: u8 = 0x00;
    /// Run ticks (one, or the u32 count that follows).
    pub const TICK: u8 = 0x01;
    /// Spawn an instance of a prefab.
    pub const SPAWN: u8 = 0x02;
    /// Set variables of an instance.
    pub const SET: u8 = 0x0A;
    /// Save the state.
    pub const SAVE: u8 = 0x1E;
}

/// Variable ids of [`Instruction::Set`].
pub mod variable {
    /// Steering, -1 (full right) .. 1 (full left).
    pub const STEERING: u16 = 1;
    /// Acceleration demand, m/s² (negative brakes).
    pub const ACCELERATION: u16 = 2;
    /// Throttle, 0..100 %.
    pub const THROTTLE: u16 = 3;
    /// Brake, 0..100 %.
    pub const BRAKE: u16 = 4;
    /// Speed, m/s (set directly).
    pub const SPEED: u16 = 5;
}

/// A request to the simulator.
#[derive(Debug, Clone, PartialEq)]
pub enum Instruction {
    /// 0x00: stop (also the text `END`).
    Stop,
    /// 0x01: run this many ticks (also the text `Ack`, one tick).
    Tick(u32),
    /// 0x02: spawn `instance` of `prefab` at (x, y) in the road file's frame, m.
    Spawn {
        /// Prefab id (kind of object).
        prefab: u16,
        /// Instance id (unique).
        instance: u16,
        /// x, m.
        x: f64,
        /// y, m.
        y: f64,
    },
    /// 0x0A: set variables (id, value) of an instance.
    Set {
        /// Instance id.
        instance: u16,
        /// (variable id, value) pairs, at least one.
        values: Vec<(u16, f64)>,
    },
    /// 0x1E: save the state (to this path, or the simulation's configured one).
    Save(Option<String>),
}

fn be_u16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(b.get(at..at + 2)?.try_into().ok()?))
}
fn be_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}
fn be_u64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_be_bytes(b.get(at..at + 8)?.try_into().ok()?))
}
fn be_f64(b: &[u8], at: usize) -> Option<f64> {
    be_u64(b, at).map(f64::from_bits)
}

fn bad(what: impl Into<String>) -> Error {
    Error::Message(what.into())
}

impl Instruction {
    /// Reads one message; anything but an exact instruction (or `Ack` / `END`) is an error
    /// that says which byte is wrong.
    pub fn decode(b: &[u8]) -> Result<Instruction, Error> {
        match b {
            b"Ack" => return Ok(Instruction::Tick(1)),
            b"END" => return Ok(Instruction::Stop),
            _ => {}
        }
        let Some(&op) = b.first() else {
            return Err(bad("empty message (expected an instruction byte)"));
        };
        let exact = |n: usize, name: &str| -> Result<(), Error> {
            if b.len() == n {
                Ok(())
            } else {
                Err(bad(format!("{name} (0x{op:02X}) is {n} bytes, got {}", b.len())))
            }
        };
        let f = |at: usize| be_f64(b, at).ok_or_else(|| bad(format!("truncated at byte {at}")));
        match op {
            opcode::STOP => exact(1, "stop").map(|_| Instruction::Stop),
            opcode::TICK => match b.len() {
                1 => Ok(Instruction::Tick(1)),
                5 => {
                    let n = be_u32(b, 1).unwrap_or(0);
                    if n == 0 {
                        Err(bad("tick count 0 at byte 1 (expected 1 or more)"))
                    } else {
                        Ok(Instruction::Tick(n))
                    }
                }
                n => Err(bad(format!("tick (0x01) is 1 or 5 bytes, got {n}"))),
            },
            opcode::SPAWN => {
                exact(21, "spawn")?;
                let (x, y) = (f(5)?, f(13)?);
                if !(x.is_finite() && y.is_finite()) {
                    return Err(bad(format!("spawn position ({x}, {y}) is not finite (bytes 5..21)")));
                }
                Ok(Instruction::Spawn { prefab: be_u16(b, 1).unwrap_or(0), instance: be_u16(b, 3).unwrap_or(0), x, y })
            }
            opcode::SET => {
                if b.len() < 13 || !(b.len() - 3).is_multiple_of(10) {
                    return Err(bad(format!(
                        "set (0x0A) is 3 bytes and 10 per (variable, value) pair, at least one; got {}",
                        b.len()
                    )));
                }
                let instance = be_u16(b, 1).unwrap_or(0);
                let mut values = Vec::with_capacity((b.len() - 3) / 10);
                for at in (3..b.len()).step_by(10) {
                    let v = f(at + 2)?;
                    if !v.is_finite() {
                        return Err(bad(format!("value at byte {} is not finite", at + 2)));
                    }
                    values.push((be_u16(b, at).unwrap_or(0), v));
                }
                Ok(Instruction::Set { instance, values })
            }
            opcode::SAVE => {
                if b.len() == 1 {
                    return Ok(Instruction::Save(None));
                }
                std::str::from_utf8(&b[1..])
                    .map(|p| Instruction::Save(Some(p.to_string())))
                    .map_err(|e| bad(format!("save path is not UTF-8 at byte {}", 1 + e.valid_up_to())))
            }
            other => Err(bad(format!("unknown instruction 0x{other:02X} at byte 0"))),
        }
    }

    /// The message's bytes.
    pub fn encode(&self) -> Vec<u8> {
        match self {
            Instruction::Stop => vec![opcode::STOP],
            Instruction::Tick(1) => vec![opcode::TICK],
            Instruction::Tick(n) => {
                let mut b = vec![opcode::TICK];
                b.extend_from_slice(&n.to_be_bytes());
                b
            }
            Instruction::Spawn { prefab, instance, x, y } => {
                let mut b = vec![opcode::SPAWN];
                b.extend_from_slice(&prefab.to_be_bytes());
                b.extend_from_slice(&instance.to_be_bytes());
                b.extend_from_slice(&x.to_be_bytes());
                b.extend_from_slice(&y.to_be_bytes());
                b
            }
            Instruction::Set { instance, values } => {
                let mut b = vec![opcode::SET];
                b.extend_from_slice(&instance.to_be_bytes());
                for (id, v) in values {
                    b.extend_from_slice(&id.to_be_bytes());
                    b.extend_from_slice(&v.to_be_bytes());
                }
                b
            }
            Instruction::Save(path) => {
                let mut b = vec![opcode::SAVE];
                if let Some(p) = path {
                    b.extend_from_slice(p.as_bytes());
                }
                b
            }
        }
    }
}

/// The simulator's answer to an instruction.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// 0x00, then the frame of the last tick.
    Ok(Frame),
    /// 0xFF, then a UTF-8 message; the simulation goes on.
    Error(String),
}

impl Reply {
    /// The message's bytes.
    pub fn encode(&self) -> Vec<u8> {
        match self {
            Reply::Ok(f) => {
                let mut b = vec![0x00];
                f.encode_into(&mut b);
                b
            }
            Reply::Error(m) => {
                let mut b = vec![0xFF];
                b.extend_from_slice(m.as_bytes());
                b
            }
        }
    }

    /// Reads a reply.
    pub fn decode(b: &[u8]) -> Result<Reply, Error> {
        match b.first() {
            Some(0x00) => Frame::decode(&b[1..]).map(Reply::Ok),
            Some(0xFF) => Ok(Reply::Error(String::from_utf8_lossy(&b[1..]).into_owned())),
            Some(x) => Err(bad(format!("reply status 0x{x:02X} at byte 0 (expected 0x00 or 0xFF)"))),
            None => Err(bad("empty reply")),
        }
    }
}

/// One object's state in a frame (road file frame, m, rad, m/s).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ObjectState {
    /// Instance id (0 is the ego vehicle).
    pub id: u16,
    /// Prefab id.
    pub prefab: u16,
    /// x, y, z, m.
    pub position: [f64; 3],
    /// Roll, pitch, heading, rad.
    pub attitude: [f64; 3],
    /// Speed, m/s.
    pub speed: f64,
}

/// A contact that started in this tick.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContactState {
    /// The two instance ids.
    pub ids: [u16; 2],
    /// Where (x, y), m.
    pub position: [f64; 2],
    /// Relative speed, m/s.
    pub relative_speed: f64,
}

/// The frame of a tick: what the simulator sends after each tick.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Frame {
    /// Tick number (the first tick run is 1).
    pub tick: u64,
    /// Simulated time, s.
    pub time: f64,
    /// Every object, ego first.
    pub objects: Vec<ObjectState>,
    /// Contacts that started in this tick.
    pub contacts: Vec<ContactState>,
    /// A sensor payload (e.g. a camera frame in the seed's planar layout), may be empty.
    pub payload: Vec<u8>,
}

/// A frame's first four bytes.
pub const FRAME_MAGIC: &[u8; 4] = b"RSF1";
const OBJECT_BYTES: usize = 4 + 7 * 8;
const CONTACT_BYTES: usize = 4 + 3 * 8;

impl Frame {
    /// Appends the frame's bytes.
    pub fn encode_into(&self, b: &mut Vec<u8>) {
        b.extend_from_slice(FRAME_MAGIC);
        b.extend_from_slice(&self.tick.to_be_bytes());
        b.extend_from_slice(&self.time.to_be_bytes());
        b.extend_from_slice(&(self.objects.len().min(u16::MAX as usize) as u16).to_be_bytes());
        for o in self.objects.iter().take(u16::MAX as usize) {
            b.extend_from_slice(&o.id.to_be_bytes());
            b.extend_from_slice(&o.prefab.to_be_bytes());
            for v in o.position.iter().chain(&o.attitude).chain([&o.speed]) {
                b.extend_from_slice(&v.to_be_bytes());
            }
        }
        b.extend_from_slice(&(self.contacts.len().min(u16::MAX as usize) as u16).to_be_bytes());
        for c in self.contacts.iter().take(u16::MAX as usize) {
            b.extend_from_slice(&c.ids[0].to_be_bytes());
            b.extend_from_slice(&c.ids[1].to_be_bytes());
            for v in c.position.iter().chain([&c.relative_speed]) {
                b.extend_from_slice(&v.to_be_bytes());
            }
        }
        b.extend_from_slice(&(self.payload.len().min(u32::MAX as usize) as u32).to_be_bytes());
        b.extend_from_slice(&self.payload[..self.payload.len().min(u32::MAX as usize)]);
    }

    /// The frame's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::new();
        self.encode_into(&mut b);
        b
    }

    /// Reads a frame; counts are checked against the message's length before anything is
    /// allocated.
    pub fn decode(b: &[u8]) -> Result<Frame, Error> {
        if b.get(..4) != Some(FRAME_MAGIC) {
            return Err(bad("frame does not start with RSF1"));
        }
        let short = |at: usize| bad(format!("frame truncated at byte {at} of {}", b.len()));
        let tick = be_u64(b, 4).ok_or_else(|| short(4))?;
        let time = be_f64(b, 12).ok_or_else(|| short(12))?;
        let n = be_u16(b, 20).ok_or_else(|| short(20))? as usize;
        let mut at = 22;
        if b.len() < at + n * OBJECT_BYTES {
            return Err(short(b.len()));
        }
        let mut objects = Vec::with_capacity(n);
        for _ in 0..n {
            let v = |k: usize| be_f64(b, at + 4 + 8 * k).unwrap_or(f64::NAN);
            objects.push(ObjectState {
                id: be_u16(b, at).unwrap_or(0),
                prefab: be_u16(b, at + 2).unwrap_or(0),
                position: [v(0), v(1), v(2)],
                attitude: [v(3), v(4), v(5)],
                speed: v(6),
            });
            at += OBJECT_BYTES;
        }
        let m = be_u16(b, at).ok_or_else(|| short(at))? as usize;
        at += 2;
        if b.len() < at + m * CONTACT_BYTES {
            return Err(short(b.len()));
        }
        let mut contacts = Vec::with_capacity(m);
        for _ in 0..m {
            let v = |k: usize| be_f64(b, at + 4 + 8 * k).unwrap_or(f64::NAN);
            contacts.push(ContactState {
                ids: [be_u16(b, at).unwrap_or(0), be_u16(b, at + 2).unwrap_or(0)],
                position: [v(0), v(1)],
                relative_speed: v(2),
            });
            at += CONTACT_BYTES;
        }
        let len = be_u32(b, at).ok_or_else(|| short(at))? as usize;
        at += 4;
        if b.len() != at + len {
            return Err(bad(format!("frame payload of {len} bytes at byte {at}, message is {} bytes", b.len())));
        }
        Ok(Frame { tick, time, objects, contacts, payload: b[at..].to_vec() })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    #[test]
    fn the_documented_test_vectors_round_trip() {
        // The seed's messages in this format (docs/bridges.md lists the same bytes).
        let cases = [
            ("00", Instruction::Stop),
            ("01", Instruction::Tick(1)),
            ("01 00000064", Instruction::Tick(100)),
            (
                "02 0001 0007 405F666666666666 4040E8F5C28F5C29",
                Instruction::Spawn { prefab: 1, instance: 7, x: 125.6, y: 33.82 },
            ),
            (
                "0A 0007 0001 3FE6666666666666 0002 BFC999999999999A",
                Instruction::Set { instance: 7, values: vec![(1, 0.7), (2, -0.2)] },
            ),
            ("1E", Instruction::Save(None)),
            ("1E 732E6A736F6E", Instruction::Save(Some("s.json".into()))),
        ];
        for (h, want) in cases {
            let b = hex(h);
            assert_eq!(Instruction::decode(&b).unwrap(), want, "{h}");
            assert_eq!(want.encode(), b, "{h}");
        }
        assert_eq!(Instruction::decode(b"Ack").unwrap(), Instruction::Tick(1));
        assert_eq!(Instruction::decode(b"END").unwrap(), Instruction::Stop);
    }

    #[test]
    fn malformed_messages_are_errors_that_name_the_byte() {
        for (h, says) in [
            ("", "empty"),
            ("02 0001 0007 405F6666", "21 bytes"),
            ("0A 0007", "at least one"),
            ("0A 0007 0001 3FE6666666666666 00", "10 per"),
            ("01 00000000", "count 0"),
            ("00 00", "1 bytes"),
            ("7F", "0x7F"),
            ("02 0001 0007 7FF8000000000000 4040E8F5C28F5C29", "not finite"),
            ("1E FF", "UTF-8 at byte 1"),
        ] {
            let e = Instruction::decode(&hex(h)).unwrap_err().to_string();
            assert!(e.contains(says), "{h}: {e}");
        }
    }

    #[test]
    fn a_frame_round_trips_and_truncations_are_errors() {
        let f = Frame {
            tick: 42,
            time: 0.42,
            objects: vec![
                ObjectState { id: 0, prefab: 1, position: [1.0, 2.0, 3.0], attitude: [0.01, -0.02, 1.5], speed: 9.5 },
                ObjectState { id: 7, prefab: 1, position: [5.0, 6.0, 7.0], attitude: [0.0; 3], speed: 0.0 },
            ],
            contacts: vec![ContactState { ids: [0, 7], position: [4.0, 5.0], relative_speed: 3.25 }],
            payload: vec![1, 2, 3],
        };
        let b = Reply::Ok(f.clone()).encode();
        assert_eq!(b.len(), 1 + 22 + 2 * 60 + 2 + 28 + 4 + 3);
        assert_eq!(Reply::decode(&b).unwrap(), Reply::Ok(f));
        for cut in 1..b.len() {
            assert!(Reply::decode(&b[..cut]).is_err(), "cut at {cut}");
        }
        // A count that claims more objects than the message holds allocates nothing.
        let mut lie = b.clone();
        lie[21..23].copy_from_slice(&u16::MAX.to_be_bytes());
        assert!(Reply::decode(&lie).is_err());
    }

    #[test]
    fn random_bytes_never_panic() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 40) as usize;
            let b: Vec<u8> = (0..len).map(|i| (x >> (i % 8 * 8)) as u8 ^ i as u8).collect();
            let _ = Instruction::decode(&b);
            let _ = Reply::decode(&b);
        }
    }
}
