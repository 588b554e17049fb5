//! Virtual sensors over a [`world::World`]: rotating multi-beam LiDARs cast firing by firing at
//! their own time and pose, with Velodyne's packets and pcap files as outputs.
//!
//! - [`BeamTable`]: lasers (elevation, azimuth offset), firing timing, range limits; the
//!   HDL-32E exactly ([`BeamTable::hdl32e`]), the VLP-16, the HDL-64E's nominal table.
//! - [`Lidar`]: a table, a spin rate and a mount on a [`world::Trajectory`]; [`Lidar::run`]
//!   casts every laser of every firing in time order and hands packets of firings to a sink.
//! - [`reflect`]: Phong reflectivity of a hit, intensity and the 32-bit range/reflectivity word.
//! - [`packet`]: the 1,206-byte data packet and the 512-byte position packet with `$GPRMC`.
//! - [`pcap`]: classic libpcap files of those packets as Ethernet/IPv4/UDP frames, and reading
//!   them back.
//! - [`camera`]: a pinhole camera with Brown-Conrady or fisheye distortion on a mount: RGB,
//!   depth, class and instance images, COCO boxes, PNG and the seed's MATLAB planes.
//! - [`words`]: the seed's 32-bit word per beam (range and reflectivity) as binary frames.
//! - [`udp`]: datagrams sent live, paced to the sensor's clock (or a factor of it) from a
//!   thread of their own.
//!
//! Frames: the sensor frame is x forward, y left, z up; a laser at azimuth φ (the head's angle,
//! growing clockwise seen from above, as Velodyne counts it) and elevation ε points along
//! (cos ε cos φ, -cos ε sin φ, sin ε). Time is seconds of the trajectory; `epoch` maps it to UTC.
//! Invariant: the same world, path and configuration give the same bytes at any thread count.

#![warn(missing_docs)]

mod beams;
pub mod camera;
mod error;
mod lidar;
pub mod packet;
pub mod pcap;
pub mod reflect;
mod rng;
mod time;
pub mod udp;
pub mod words;

pub use beams::{BeamTable, Laser};
pub use camera::{Camera, Distortion, Frame, Intrinsics, RayTable};
pub use error::Error;
pub use lidar::{Attenuation, Firing, Lidar, Return, Summary};
pub use time::Epoch;
