//! Co-simulation bridges: how other processes (MATLAB/Simulink, Python, AV stacks) drive and
//! read a roadscan simulation.
//!
//! - [`wire`]: the ZeroMQ instruction set (stop, tick, spawn, set, save), replies and the
//!   frame of a tick, one consistent big-endian format with test vectors (docs/bridges.md).
//! - [`zmq`]: blocking REQ client and REP server over the pure-Rust `zeromq` crate.
//! - [`udp`]: velocity or pose in (text or IEEE-754 of either width and byte order), pose
//!   updates and contact reports out.
//! - [`shm`]: named shared-memory segments with a seqlock header.
//!
//! Invariants: no message, datagram or segment makes a function panic; a bad one is an
//! [`Error`] that names the byte or field; counts in a message are checked against its length
//! before anything is allocated.

#![warn(missing_docs)]

pub mod shm;
pub mod udp;
pub mod wire;
pub mod zmq;

/// What went wrong, with the place.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A malformed message or a refused request.
    #[error("{0}")]
    Message(String),
    /// An operating-system error.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The cause.
        source: std::io::Error,
    },
}
