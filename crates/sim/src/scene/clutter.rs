//! The clutter of a real mobile-mapping survey, placed from the scene's own lanes and seed:
//! trees (some overhanging the carriageway), parked cars and people, clear of each other and
//! inside the scene's s range, and multipath returns of the road surface.

use super::{Clutter, ObjectKind, Scene, SceneObject};

impl Scene {
    /// Adds the clutter of a real mobile-mapping survey to the scene, placed from its own lanes
    /// within its s range (seeded by the scene's seed: the same scene, the same clutter), and
    /// turns on multipath returns ([`Clutter::default`]):
    ///
    /// - trees beside the road, about 3 per 100 m (at least one), on alternate sides: the trunk
    ///   0.5 to 2.5 m beyond the road edge, the crown (radius 2.5 to 3.5 m) reaching 1 to 2 m
    ///   over the carriageway, its bottom 3 to 5 m above the road surface there;
    /// - parked cars (4.5 x 1.8 x 1.5 m), about 1.5 per 100 m (at least one), centred on the
    ///   outer edge of a side's outermost lane: half their width over the carriageway;
    /// - people (cylinders 0.5 m across, 1.8 m tall), one per 100 m (at least two), standing on
    ///   the carriageway up to 0.8 m inside its edge.
    ///
    /// Every object's footprint stays inside the s range (a crown too, where the range is long
    /// enough) and clear of the objects already there; where the road is too narrow at every
    /// station tried (a carriageway under 2.5 m, or a side without lanes for a car) an object
    /// is left out. The objects are not pavement: the surface (and so the truth CRG) does not
    /// change.
    pub fn add_clutter(&mut self) {
        let objects = self.clutter_objects();
        self.objects.extend(objects);
        self.clutter = Some(Clutter::default());
    }

    fn clutter_objects(&self) -> Vec<SceneObject> {
        let road = self.road();
        let (s0, s1) = self.s_range;
        let len = s1 - s0;
        let seed = self.seed ^ 0xc107_7e2d_0b1e_0c75;
        let u = |what: u64, i: u64, k: u64| crate::noise::uniform(seed, what, i, k);
        let first = usize::from(u(0, 0, 0) < 0.5);
        let mut placed: Vec<SceneObject> = Vec::new();
        // The footprint of an object on the ground: half its extent along and across, m.
        let half = |k: ObjectKind| match k {
            ObjectKind::Tree { trunk_radius: r, .. } | ObjectKind::Pole { radius: r, .. } => (r, r),
            ObjectKind::Person { radius: r, .. } => (r, r),
            ObjectKind::Car { length, width, .. } => (length / 2.0, width / 2.0),
        };
        let clear = |placed: &[SceneObject], s: f64, t: f64, (hs, ht): (f64, f64)| {
            self.objects.iter().chain(placed).all(|o| {
                let (os, ot) = half(o.kind);
                (o.s - s).abs() > os + hs + 0.1 || (o.t - t).abs() > ot + ht + 0.1
            })
        };
        // The i-th of n stations (attempt a): spread over the range, jittered, `margin` inside it.
        let station = |what: u64, i: usize, n: usize, a: u64, margin: f64| {
            let m = margin.min(len / 2.0);
            let s = s0 + (i as f64 + 0.5 + 0.8 * (u(what, i as u64, a) - 0.5)) * len / n as f64;
            s.clamp(s0 + m, s1 - m)
        };
        // Each side at s: its sign, its road edge and the width of its carriageway.
        let sides = |s: f64| {
            let b = self.borders(&road, s);
            let c = self.lane_offset(&road, s);
            [(-1.0, b.road_right, c - b.road_right), (1.0, b.road_left, b.road_left - c)]
        };
        let count = |per_100m: f64, min: usize| ((len * per_100m / 100.0).round() as usize).max(min);
        const ATTEMPTS: u64 = 6;

        let n = count(3.0, 1);
        for i in 0..n {
            let side = (i + first) % 2;
            let radius = 2.5 + u(1, i as u64, 0);
            let over = 1.0 + u(1, i as u64, 1);
            let bottom = 3.0 + 2.0 * u(1, i as u64, 2);
            let trunk_radius = 0.2;
            for a in 0..ATTEMPTS {
                let s = station(2, i, n, a, radius);
                let (sign, edge, _) = sides(s)[side];
                let b = self.borders(&road, s);
                if b.road_left - b.road_right < 2.5 {
                    continue;
                }
                let t = edge + sign * (radius - over);
                if !clear(&placed, s, t, (trunk_radius, trunk_radius)) {
                    continue;
                }
                // The road surface under the crown's inner edge, the ground under the trunk.
                let inner = edge - sign * over;
                let z_road = self.z(&road, s, inner).unwrap_or_else(|| self.base_z(&road, s, inner));
                let ground = crate::scanner::ground_z(self, &road, s, t);
                let crown_height = z_road - ground + bottom + radius;
                let kind =
                    ObjectKind::Tree { trunk_radius, trunk_height: crown_height, crown_radius: radius, crown_height };
                placed.push(SceneObject { s, t, kind });
                break;
            }
        }

        let car = ObjectKind::Car { length: 4.5, width: 1.8, height: 1.5, clearance: 0.25 };
        let n = count(1.5, 1);
        for i in 0..n {
            for a in 0..ATTEMPTS {
                let s = station(3, i, n, a, 2.3);
                let wide: Vec<(f64, f64, f64)> = sides(s).into_iter().filter(|x| x.2 >= 2.5).collect();
                let Some(&(_, edge, _)) = wide.get((i + first) % wide.len().max(1)) else { continue };
                if clear(&placed, s, edge, half(car)) {
                    placed.push(SceneObject { s, t: edge, kind: car });
                    break;
                }
            }
        }

        let person = ObjectKind::Person { radius: 0.25, height: 1.8 };
        let n = count(1.0, 2);
        for i in 0..n {
            for a in 0..ATTEMPTS {
                let s = station(4, i, n, a, 0.3);
                let wide: Vec<(f64, f64, f64)> = sides(s).into_iter().filter(|x| x.2 >= 1.2).collect();
                let Some(&(sign, edge, width)) = wide.get((i + first + 1) % wide.len().max(1)) else { continue };
                let t = edge - sign * (0.8f64).min(0.4 * width);
                if clear(&placed, s, t, half(person)) {
                    placed.push(SceneObject { s, t, kind: person });
                    break;
                }
            }
        }
        placed
    }
}
