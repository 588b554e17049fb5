//! Datagrams sent live: paced to the sensor's own clock (real time, faster or slower by a
//! factor, or as fast as they come), from a thread of their own so that casting runs ahead.

use crate::Error;
use std::net::{SocketAddr, UdpSocket};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::time::{Duration, Instant};

/// When to send.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pace {
    /// At the sensor's time divided by the factor (1 = real time, 2 = twice as fast).
    Factor(f64),
    /// At once.
    Unpaced,
}

/// One datagram to send at sensor time `time` (s) to `to`.
#[derive(Debug, Clone, PartialEq)]
pub struct Outgoing {
    /// Sensor time it belongs to, s.
    pub time: f64,
    /// Destination.
    pub to: SocketAddr,
    /// Payload.
    pub payload: Vec<u8>,
}

/// What a sender did.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Sent {
    /// Datagrams sent.
    pub datagrams: u64,
    /// Wall seconds from the first to the last.
    pub seconds: f64,
    /// The most any datagram went out after its time, s.
    pub worst_lateness: f64,
}

/// A queue of datagrams and the thread that sends them on time.
#[derive(Debug)]
pub struct Sender {
    tx: Option<SyncSender<Outgoing>>,
    thread: Option<std::thread::JoinHandle<Result<Sent, Error>>>,
}

/// Datagrams the queue holds before the caster waits (about 1.1 s of HDL-32E data).
const QUEUE: usize = 2048;

impl Sender {
    /// A sender on a socket bound to an ephemeral port of `bind` (e.g. `0.0.0.0:0`).
    pub fn new(bind: SocketAddr, pace: Pace) -> Result<Sender, Error> {
        let socket = UdpSocket::bind(bind)
            .map_err(|source| Error::Io { what: format!("binding a UDP socket on {bind}"), source })?;
        socket.set_broadcast(true).map_err(|source| Error::Io { what: "allowing broadcast".into(), source })?;
        let (tx, rx) = sync_channel(QUEUE);
        let thread = std::thread::spawn(move || send_loop(socket, rx, pace));
        Ok(Sender { tx: Some(tx), thread: Some(thread) })
    }

    /// Queues a datagram (waits while the queue is full).
    pub fn send(&self, d: Outgoing) -> Result<(), Error> {
        let tx = self.tx.as_ref().ok_or_else(|| Error::Sink("the sender is closed".into()))?;
        tx.send(d).map_err(|_| Error::Sink("the UDP sender stopped".into()))
    }

    /// Sends what is queued and stops.
    pub fn finish(mut self) -> Result<Sent, Error> {
        self.tx.take();
        match self.thread.take().map(|t| t.join()) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(Error::Sink("the UDP sender thread failed".into())),
            None => Ok(Sent::default()),
        }
    }
}

impl Drop for Sender {
    fn drop(&mut self) {
        self.tx.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn send_loop(socket: UdpSocket, rx: Receiver<Outgoing>, pace: Pace) -> Result<Sent, Error> {
    let mut sent = Sent::default();
    let mut start: Option<(Instant, f64)> = None;
    let mut last = Instant::now();
    for d in rx {
        let (t0, s0) = *start.get_or_insert((Instant::now(), d.time));
        if let Pace::Factor(f) = pace {
            let due = t0 + Duration::from_secs_f64(((d.time - s0) / f).max(0.0));
            wait_until(due);
            sent.worst_lateness = sent.worst_lateness.max(Instant::now().saturating_duration_since(due).as_secs_f64());
        }
        socket
            .send_to(&d.payload, d.to)
            .map_err(|source| Error::Io { what: format!("sending to {}", d.to), source })?;
        sent.datagrams += 1;
        last = Instant::now();
    }
    sent.seconds = start.map_or(0.0, |(t0, _)| last.duration_since(t0).as_secs_f64());
    Ok(sent)
}

/// Sleeps until shortly before `due`, then yields until it.
fn wait_until(due: Instant) {
    loop {
        let now = Instant::now();
        if now >= due {
            return;
        }
        let left = due - now;
        if left > Duration::from_micros(1500) {
            std::thread::sleep(left - Duration::from_micros(1000));
        } else {
            std::thread::yield_now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paced_datagrams_arrive_on_time() {
        let rx = UdpSocket::bind("127.0.0.1:0").expect("bind");
        rx.set_read_timeout(Some(Duration::from_secs(5))).expect("timeout");
        let to = rx.local_addr().expect("addr");
        let s = Sender::new("127.0.0.1:0".parse().expect("addr"), Pace::Factor(2.0)).expect("sender");
        let t = Instant::now();
        for k in 0..50 {
            s.send(Outgoing { time: k as f64 * 0.01, to, payload: vec![k as u8; 10] }).expect("queue");
        }
        let mut buf = [0u8; 64];
        for k in 0..50u8 {
            let n = rx.recv(&mut buf).expect("datagram");
            assert_eq!((n, buf[0]), (10, k));
        }
        let done = s.finish().expect("finish");
        // 0.49 s of sensor time at twice real time: 0.245 s.
        let wall = t.elapsed().as_secs_f64();
        assert!((0.24..0.6).contains(&wall), "took {wall} s");
        assert_eq!(done.datagrams, 50);
        assert!((done.seconds - 0.245).abs() < 0.05, "{}", done.seconds);
    }
}
