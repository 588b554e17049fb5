//! `roadscan replay`: the UDP datagrams of a pcap file sent again, paced by their capture
//! times (real time, faster or slower by a factor, or at once).

use crate::lidar::LiveRun;
use crate::progress::{Progress, Stage};
use anyhow::{Context, Result};
use sensors::pcap::PcapReader;
use sensors::udp::{Outgoing, Pace, Sender};
use std::net::SocketAddr;
use std::path::PathBuf;

/// What to replay and where.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayConfig {
    /// A classic pcap file.
    pub pcap: PathBuf,
    /// Where datagrams captured for port 2368 (Velodyne data) go; datagrams for other ports go
    /// to this host at their own port, except position packets (port 8308), which go to
    /// `position_port`.
    pub udp: SocketAddr,
    /// Port of the position packets.
    pub position_port: u16,
    /// Pace.
    pub pace: Pace,
}

/// Replays the file.
pub fn run(cfg: &ReplayConfig, progress: &dyn Progress) -> Result<LiveRun> {
    let path = cfg.pcap.display().to_string();
    let file = std::fs::File::open(&cfg.pcap).with_context(|| format!("opening {path}"))?;
    let len = file.metadata().with_context(|| format!("reading {path}"))?.len();
    let reader = PcapReader::new(&path, std::io::BufReader::new(file), len)?;
    let bind: SocketAddr =
        if cfg.udp.is_ipv4() { ([0, 0, 0, 0], 0).into() } else { (std::net::Ipv6Addr::UNSPECIFIED, 0).into() };
    let sender = Sender::new(bind, cfg.pace).with_context(|| format!("--udp {}", cfg.udp))?;
    let stage = Stage { index: 1, of: 1, what: "replaying", len: Some(len) };
    progress.stage(&stage);
    let started = std::time::Instant::now();
    let mut sent_bytes = 24u64;
    for d in reader {
        let d = d?;
        sent_bytes += 16 + 42 + d.payload.len() as u64;
        let to = match d.port {
            2368 => cfg.udp,
            8308 => SocketAddr::new(cfg.udp.ip(), cfg.position_port),
            p => SocketAddr::new(cfg.udp.ip(), p),
        };
        sender.send(Outgoing { time: d.utc, to, payload: d.payload })?;
        progress.advance(sent_bytes.min(len));
    }
    let sent = sender.finish()?;
    progress.stage_end(&stage, Some(started.elapsed().as_secs_f64()));
    Ok(LiveRun::of(&sent))
}
