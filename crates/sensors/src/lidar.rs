//! A rotating LiDAR on a path: every laser of every firing cast at its own time and pose.

use crate::beams::BeamTable;
use crate::reflect::{intensity, phong};
use crate::rng::{normal, uniform};
use crate::Error;
use world::{Cast, Pose, Ray, Trajectory, V3};

/// Range attenuation of the reflectivity.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Attenuation {
    /// None (the seed's model).
    #[default]
    None,
    /// R / (1 + k r).
    Inverse(f64),
    /// R min(1, (r0 / r)²).
    Square(f64),
}

impl Attenuation {
    fn apply(self, r: f64, range: f64) -> f64 {
        match self {
            Attenuation::None => r,
            Attenuation::Inverse(k) => r / (1.0 + k * range),
            Attenuation::Square(r0) => r * (r0 / range).powi(2).min(1.0),
        }
    }
}

/// A rotating LiDAR: a beam table spun at a rate on a mount.
#[derive(Debug, Clone, PartialEq)]
pub struct Lidar {
    /// Its lasers and timing.
    pub beams: BeamTable,
    /// Revolutions a second (5 to 20 on the HDL-32E).
    pub rate_hz: f64,
    /// Its pose in the vehicle's body frame (x forward, y left, z up).
    pub mount: Pose,
    /// Standard deviation of the range noise, m (0: none).
    pub range_noise: f64,
    /// Probability that a return is lost.
    pub dropout: f64,
    /// Range attenuation of the reflectivity.
    pub attenuation: Attenuation,
    /// Seed of the noise and the dropouts.
    pub seed: u64,
    /// The head's azimuth at time 0, rad.
    pub start_azimuth: f64,
}

/// One laser's return.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Return {
    /// Distance of the hit as cast, m (NaN: no hit within the maximum range).
    pub cast: f64,
    /// Distance reported (cast plus noise), m; NaN when there is no return.
    pub range: f64,
    /// Range in the table's steps (2 mm), 0 = no return.
    pub distance: u16,
    /// Reflectivity (Phong, attenuated).
    pub reflectivity: f64,
    /// Intensity byte.
    pub intensity: u8,
    /// Class of the surface hit (0: none).
    pub class: u8,
    /// Object hit (0: the static scene or none).
    pub object: u32,
    /// The measured point (sensor position plus the reported range along the beam), world frame.
    pub point: V3,
}

impl Return {
    const NONE: Return = Return {
        cast: f64::NAN,
        range: f64::NAN,
        distance: 0,
        reflectivity: 0.0,
        intensity: 0,
        class: 0,
        object: 0,
        point: [f64::NAN; 3],
    };
    /// True when the sensor reports this return.
    pub fn is_some(&self) -> bool {
        self.distance != 0
    }
}

/// One firing of all lasers.
#[derive(Debug, Clone, PartialEq)]
pub struct Firing {
    /// Its index from the start of the run.
    pub index: u64,
    /// Time its first laser fires, s.
    pub time: f64,
    /// The head's azimuth then, rad in [0, 2π).
    pub azimuth: f64,
    /// The sensor's pose then.
    pub pose: Pose,
    /// Returns by laser id.
    pub returns: Vec<Return>,
}

/// What a run did.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Summary {
    /// Firings cast.
    pub firings: u64,
    /// Data packets they fill.
    pub packets: u64,
    /// Rays cast.
    pub rays: u64,
    /// Returns reported.
    pub returns: u64,
    /// Revolutions of the head.
    pub revolutions: f64,
}

/// Packets cast between two calls of a [`Lidar::run`] sink, per thread.
const RUN: usize = 64;

/// Packets (in [`Lidar::run`]) or firings (in [`Lidar::cast_firings`]) a thread takes at a
/// time: runs small enough that two threads finish together however unevenly the scene
/// spreads the work over the sweep (a half-sweep of sky against one of facades).
const TAKE_PACKETS: usize = 2;
const TAKE_FIRINGS: usize = 16;

/// `work(lo, hi, out)` over `0..count` in runs of `take`, handed out to `threads` threads as
/// each finishes its last; the outputs in the order of the runs, so the result does not
/// depend on the thread count or the timing.
fn in_runs<T: Send>(
    count: usize,
    take: usize,
    threads: usize,
    work: impl Fn(usize, usize, &mut Vec<T>) + Sync,
) -> Vec<T> {
    let take = take.max(1);
    let runs = count.div_ceil(take);
    let threads = threads.clamp(1, 64).min(runs.max(1));
    if threads == 1 {
        let mut out = Vec::new();
        work(0, count, &mut out);
        return out;
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut done: Vec<(usize, Vec<T>)> = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                sc.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let r = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if r >= runs {
                            return mine;
                        }
                        let mut out = Vec::new();
                        work(r * take, ((r + 1) * take).min(count), &mut out);
                        mine.push((r, out));
                    }
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
    });
    done.sort_unstable_by_key(|d| d.0);
    done.into_iter().flat_map(|d| d.1).collect()
}

impl Lidar {
    /// The HDL-32E at 10 Hz, 1.8 m above the body's origin, level, without noise.
    pub fn hdl32e() -> Lidar {
        Lidar {
            beams: BeamTable::hdl32e(),
            rate_hz: 10.0,
            mount: Pose { position: [0.0, 0.0, 1.8], ..Pose::IDENTITY },
            range_noise: 0.0,
            dropout: 0.0,
            attenuation: Attenuation::None,
            seed: 1,
            start_azimuth: 0.0,
        }
    }

    /// Checks the settings.
    pub fn check(&self) -> Result<(), Error> {
        let range = |what, value: f64, lo: f64, hi: f64, text| {
            if value.is_finite() && value >= lo && value <= hi {
                Ok(())
            } else {
                Err(Error::Range { what, value, range: text })
            }
        };
        range("rate (Hz)", self.rate_hz, 1.0, 50.0, "1 to 50")?;
        range("range noise (m)", self.range_noise, 0.0, 1.0, "0 to 1")?;
        range("dropout", self.dropout, 0.0, 1.0, "0 to 1")?;
        range("lasers", self.beams.lasers.len() as f64, 1.0, 128.0, "1 to 128")?;
        range("laser spacing (s)", self.beams.laser_dt, 1e-9, 1e-3, "1 ns to 1 ms")?;
        range(
            "firing cycle (s)",
            self.beams.cycle,
            self.beams.laser_dt * self.beams.lasers.len() as f64,
            1.0,
            "at least the lasers' time",
        )?;
        range(
            "maximum range (m)",
            self.beams.max_range,
            self.beams.min_range.max(0.0) + 1e-3,
            1e4,
            "above the minimum, up to 10 km",
        )?;
        if let Attenuation::Inverse(k) | Attenuation::Square(k) = self.attenuation {
            range("attenuation", k, 0.0, 1e6, "0 to 1e6")?;
        }
        Ok(())
    }

    /// Laser `j`'s ray of firing `f`: the sensor's position and the unit direction (world
    /// frame), from the firing's pose (the sensor moves under half a millimetre during a
    /// firing at 10 m/s; the cast itself uses each laser's own pose).
    pub fn ray(&self, f: &Firing, j: usize) -> (V3, V3) {
        let laser =
            self.beams.lasers.get(j).copied().unwrap_or(crate::beams::Laser { elevation: 0.0, azimuth_offset: 0.0 });
        let t = f.time + j as f64 * self.beams.laser_dt;
        let phi = self.azimuth(t) + laser.azimuth_offset;
        let (se, ce) = laser.elevation.sin_cos();
        let (sp, cp) = phi.sin_cos();
        (f.pose.position, f.pose.direction([ce * cp, -ce * sp, se]))
    }

    /// The head's azimuth at time `t`, rad in [0, 2π).
    pub fn azimuth(&self, t: f64) -> f64 {
        (self.start_azimuth + std::f64::consts::TAU * self.rate_hz * t).rem_euclid(std::f64::consts::TAU)
    }

    /// Casts whole packets of firings from `span.0` for as long as fits in the span, on
    /// `threads` threads, handing them to `sink` in time order (a few thousand firings a
    /// call). The bytes are the same for any thread count.
    pub fn run(
        &self,
        world: &dyn Cast,
        path: &dyn Trajectory,
        span: (f64, f64),
        threads: usize,
        sink: &mut dyn FnMut(&[Firing]) -> Result<(), Error>,
    ) -> Result<Summary, Error> {
        self.check()?;
        let fpp = self.beams.firings_per_packet();
        let packet_time = fpp as f64 * self.beams.cycle;
        let length = span.1 - span.0;
        if !(length.is_finite() && span.0.is_finite()) || length < 0.0 {
            return Err(Error::Range { what: "duration (s)", value: length, range: "a finite span" });
        }
        let packets = (length / packet_time + 1e-9).floor() as usize;
        let threads = threads.clamp(1, 64);
        let mut summary = Summary::default();
        let per_round = RUN * threads;
        for first in (0..packets).step_by(per_round) {
            let last = (first + per_round).min(packets);
            let out = in_runs(last - first, TAKE_PACKETS, threads, |lo, hi, out| {
                for p in first + lo..first + hi {
                    self.packet(world, path, span.0, p, out);
                }
            });
            for f in &out {
                summary.firings += 1;
                summary.rays += f.returns.len() as u64;
                summary.returns += f.returns.iter().filter(|r| r.is_some()).count() as u64;
            }
            if !out.is_empty() {
                sink(&out)?;
            }
        }
        summary.packets = packets as u64;
        summary.revolutions = packets as f64 * packet_time * self.rate_hz;
        Ok(summary)
    }

    /// Casts firings `first .. first + count` of the sensor's clock (firing `i` at time
    /// `i * cycle`), each laser posed by interpolating between the trajectory's poses at the
    /// firing's start and one cycle later, on `threads` threads (contiguous runs of firings, so
    /// the result does not depend on the thread count). For a trajectory known one piece at a
    /// time (a closed-loop simulation's ticks): casting the firings of each piece in turn gives
    /// the same firings (indices, times, azimuths, noise) as one run over the whole.
    pub fn cast_firings(
        &self,
        world: &dyn Cast,
        path: &dyn Trajectory,
        first: u64,
        count: usize,
        threads: usize,
    ) -> Result<Vec<Firing>, Error> {
        self.check()?;
        Ok(in_runs(count, TAKE_FIRINGS, threads, |lo, hi, out| {
            out.extend((lo..hi).map(|i| self.firing(world, path, first + i as u64)));
        }))
    }

    /// Firing `index` of the sensor's clock (see [`Lidar::cast_firings`]).
    fn firing(&self, world: &dyn Cast, path: &dyn Trajectory, index: u64) -> Firing {
        let b = &self.beams;
        let tf = index as f64 * b.cycle;
        let (pa, pb) = (path.pose(tf).then(&self.mount), path.pose(tf + b.cycle).then(&self.mount));
        let returns = self.lasers(world, index, tf, |t| between(&pa, &pb, tf, b.cycle, t));
        Firing { index, time: tf, azimuth: self.azimuth(tf), pose: pa, returns }
    }

    /// Casts packet `p` (its firings appended to `out`).
    fn packet(&self, world: &dyn Cast, path: &dyn Trajectory, t0: f64, p: usize, out: &mut Vec<Firing>) {
        let b = &self.beams;
        let fpp = b.firings_per_packet();
        let packet_time = fpp as f64 * b.cycle;
        let ta = t0 + p as f64 * packet_time;
        // The body's pose at the packet's ends, interpolated between: over 0.55 ms a vehicle
        // turns by well under a milliradian, so the error is below a micrometre.
        let (pa, pb) = (path.pose(ta).then(&self.mount), path.pose(ta + packet_time).then(&self.mount));
        for f in 0..fpp {
            let index = (p * fpp + f) as u64;
            let tf = ta + f as f64 * b.cycle;
            let at = |t: f64| between(&pa, &pb, ta, packet_time, t);
            let returns = self.lasers(world, index, tf, at);
            out.push(Firing { index, time: tf, azimuth: self.azimuth(tf), pose: at(tf), returns });
        }
    }

    /// The returns of firing `index` at `tf`: each laser cast at its own time, azimuth and the
    /// pose `pose_at` gives for that time.
    fn lasers(&self, world: &dyn Cast, index: u64, tf: f64, pose_at: impl Fn(f64) -> Pose) -> Vec<Return> {
        let b = &self.beams;
        let mut returns = Vec::with_capacity(b.lasers.len());
        for (j, laser) in b.lasers.iter().enumerate() {
            let t = tf + j as f64 * b.laser_dt;
            let pose_j = pose_at(t);
            let phi = self.azimuth(t) + laser.azimuth_offset;
            let (se, ce) = laser.elevation.sin_cos();
            let (sp, cp) = phi.sin_cos();
            let dir = pose_j.direction([ce * cp, -ce * sp, se]);
            let ray = Ray { time: t, ..Ray::new(pose_j.position, dir).up_to(b.max_range) };
            returns.push(self.measure(world, &ray, index, j as u32));
        }
        returns
    }

    /// The return of one ray.
    fn measure(&self, world: &dyn Cast, ray: &Ray, firing: u64, laser: u32) -> Return {
        let b = &self.beams;
        let Some(hit) = world.cast(ray) else { return Return::NONE };
        if self.dropout > 0.0 && uniform(self.seed, firing, laser, 3) < self.dropout {
            return Return { cast: hit.t, ..Return::NONE };
        }
        let range =
            if self.range_noise > 0.0 { hit.t + self.range_noise * normal(self.seed, firing, laser) } else { hit.t };
        if !(range >= b.min_range && range <= b.max_range) {
            return Return { cast: hit.t, ..Return::NONE };
        }
        let steps = (range / b.range_step).round();
        let distance = steps.clamp(1.0, u16::MAX as f64) as u16;
        let m = world.materials().get(hit.material);
        let reflectivity = self.attenuation.apply(phong(m, hit.cos_incidence(ray)), range);
        Return {
            cast: hit.t,
            range,
            distance,
            reflectivity,
            intensity: intensity(reflectivity),
            class: hit.class,
            object: hit.object,
            point: ray.at(range),
        }
    }
}

/// The pose at `t` on the straight blend from `pa` (at `t0`) to `pb` (at `t0 + span`), `t`
/// clamped to that interval.
fn between(pa: &Pose, pb: &Pose, t0: f64, span: f64, t: f64) -> Pose {
    let w = ((t - t0) / span).clamp(0.0, 1.0);
    let mix = |a: V3, c: V3| [a[0] + w * (c[0] - a[0]), a[1] + w * (c[1] - a[1]), a[2] + w * (c[2] - a[2])];
    Pose { position: mix(pa.position, pb.position), axes: [0, 1, 2].map(|i| mix(pa.axes[i], pb.axes[i])) }
}
