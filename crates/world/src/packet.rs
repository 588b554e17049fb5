//! Packets: up to [`LANES`] rays cast together through one tree (a camera's tile of pixels).
//!
//! A packet walks a tree once for all its rays: each node is fetched once and tested against
//! the rays that may still be in it (a bit mask of lanes: at an inner node, from the first lane
//! that enters it on), children are visited nearest first for the packet, and a node is tested
//! again when it is taken off the stack, against each lane's nearest hit so far. A leaf tests
//! every lane of its mask, and is cast lane by lane with the single-ray code, so every lane
//! gets the nearest hit among the same triangles as [`crate::World::cast`] would give it.
//!
//! A lane's ray in a tree's coordinates is affine in the box bounds it is tested against: the
//! distance at which it crosses the plane `q` of axis `a` is `(q - p[a]) * k[a] + c[a]`,
//! computed as the single-ray tests compute it (for world boxes `p = o`, `k = 1 / d`, `c = 0`;
//! for a heightfield chunk `p = 0` and `k`, `c` in the chunk's quantisation steps).

/// Rays a packet holds at most (one bit each in a `u64` mask).
pub const LANES: usize = 64;

/// Masks of at least this many lanes are tested all at once.
const DENSE: u32 = 24;

/// The lanes of a packet in one tree's coordinates, structure of arrays.
#[derive(Clone)]
pub(crate) struct Lanes {
    pub p: [[f64; LANES]; 3],
    pub k: [[f64; LANES]; 3],
    pub c: [[f64; LANES]; 3],
    pub t_min: [f64; LANES],
    /// Bounds of the whole packet, when its rays share their origin.
    pub frustum: Option<Frustum>,
}

/// A packet of rays from one point, bounded as a whole: along axis `a` a lane crosses the
/// plane `q` at `(q * scale[a] - origin[a]) * inv` for some `inv` in `[lo[a], hi[a]]` (where
/// the lanes' directions keep one sign on the axis; else that axis bounds nothing). A box that
/// this bound keeps every lane out of is missed by all of them, with no lane tested.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Frustum {
    pub scale: [f64; 3],
    pub origin: [f64; 3],
    pub lo: [f64; 3],
    pub hi: [f64; 3],
    /// Whether axis `a` bounds anything.
    pub bounded: [bool; 3],
    /// The lanes' least `t_min` and greatest `t_max`.
    pub t0: f64,
    pub t1: f64,
    /// The lanes' greatest `t_min`.
    pub t_min_max: f64,
}

/// What a box is to a packet (see [`Frustum::classify`]).
pub(crate) enum Seen {
    /// No lane enters it.
    Missed,
    /// Every lane seems to enter it, none before this distance.
    All(f64),
    /// Some lanes may.
    Unsure,
}

impl Frustum {
    /// What box `b` is to the packet: missed by every lane, surely entered by every lane
    /// within its `[t_min, t_max]` (with a lower bound of the entries), or unsure.
    #[inline(always)]
    pub(crate) fn classify(&self, b: &[f64; 6], best_max: f64) -> Seen {
        // Over the lanes: bounds of the entry into the box (lower and upper) and of the exit.
        let (mut near_lo, mut far_hi) = (self.t0, self.t1.min(best_max));
        let (mut near_hi, mut far_lo) = (self.t_min_max, f64::INFINITY);
        let mut all_bounded = true;
        for a in 0..3 {
            if !self.bounded[a] {
                all_bounded = false;
                continue;
            }
            let (x0, x1) = (b[a] * self.scale[a] - self.origin[a], b[a + 3] * self.scale[a] - self.origin[a]);
            // A lane's entry and exit are the lesser and greater of its two crossings; for a
            // lane with inverse lo and one with hi:
            let (l0, l1) = (x0 * self.lo[a], x1 * self.lo[a]);
            let (h0, h1) = (x0 * self.hi[a], x1 * self.hi[a]);
            let (el, xl) = if l0 < l1 { (l0, l1) } else { (l1, l0) };
            let (eh, xh) = if h0 < h1 { (h0, h1) } else { (h1, h0) };
            // Each is linear in the inverse, so its extremes over the lanes are at the ends.
            near_lo = near_lo.max(el.min(eh));
            far_hi = far_hi.min(xl.max(xh));
            near_hi = near_hi.max(el.max(eh));
            far_lo = far_lo.min(xl.min(xh));
        }
        if near_lo > far_hi {
            return Seen::Missed;
        }
        // A hint, not a promise: a lane kept by mistake is dropped by the leaf's own test.
        if all_bounded && near_hi <= far_lo {
            return Seen::All(near_lo);
        }
        Seen::Unsure
    }

    /// The bound of lanes whose inverse directions along each axis are `inv(i, a)`, from
    /// `t0` to `t1`; axes where the signs differ or an inverse is not finite bound nothing.
    pub(crate) fn of(
        scale: [f64; 3],
        origin: [f64; 3],
        lanes: impl Iterator<Item = [f64; 3]>,
        (t0, t_min_max, t1): (f64, f64, f64),
    ) -> Frustum {
        let mut f = Frustum {
            scale,
            origin,
            lo: [f64::INFINITY; 3],
            hi: [f64::NEG_INFINITY; 3],
            bounded: [true; 3],
            t0,
            t1,
            t_min_max,
        };
        for inv in lanes {
            for (a, &x) in inv.iter().enumerate() {
                if !x.is_finite() || x == 0.0 {
                    f.bounded[a] = false;
                }
                f.lo[a] = f.lo[a].min(x);
                f.hi[a] = f.hi[a].max(x);
            }
        }
        for a in 0..3 {
            // One sign along the axis (so the crossing is monotonic in the inverse).
            if !(f.lo[a] > 0.0 || f.hi[a] < 0.0) || !(f.lo[a].is_finite() && f.hi[a].is_finite()) {
                f.bounded[a] = false;
            }
        }
        if !(t0.is_finite()
            && t1.is_finite()
            && t_min_max.is_finite()
            && scale.iter().chain(&origin).all(|x| x.is_finite()))
        {
            f.bounded = [false; 3];
        }
        f
    }
}

impl Lanes {
    pub(crate) fn new() -> Lanes {
        Lanes { p: [[0.0; LANES]; 3], k: [[0.0; LANES]; 3], c: [[0.0; LANES]; 3], t_min: [0.0; LANES], frustum: None }
    }

    /// The lanes of `mask` that enter the box `b` (lower corner, upper corner, in the lanes'
    /// coordinates) within `[t_min, best]`, and the least entry distance among them.
    ///
    /// `best_max` is at least the greatest `best` of the lanes in `mask`. With a frustum, a
    /// box it proves missed is missed by all; an inner node (`inner`) it finds entered by all
    /// keeps `mask` as it is, untested (the leaves test each lane).
    ///
    /// An inner node's mask is a bound, not the exact set: its lanes are tested in order up to
    /// the first that enters, and that lane and all after it are kept (with that lane's entry
    /// as the distance). A child's box lies within its parent's, so a lane kept by mistake
    /// enters no leaf below, and leaves test every lane (`inner` false): the leaves and lanes
    /// cast are those of an exact test, for one box test a node in the common case.
    #[inline(always)]
    pub(crate) fn enter_node(
        &self,
        b: &[f64; 6],
        best: &[f64; LANES],
        mask: u64,
        inner: bool,
        best_max: f64,
    ) -> (u64, f64) {
        if let Some(f) = &self.frustum {
            match f.classify(b, best_max) {
                Seen::Missed => return (0, f64::INFINITY),
                Seen::All(t) if inner => return (mask, t),
                _ => {}
            }
        }
        if inner {
            self.enter_first(b, best, mask)
        } else {
            self.enter(b, best, mask)
        }
    }

    /// Where lane `i` enters the box `b` before its best hit so far (None: it misses).
    #[inline(always)]
    fn lane_entry(&self, b: &[f64; 6], best: &[f64; LANES], i: usize) -> Option<f64> {
        let (mut near, mut far) = (self.t_min[i], best[i]);
        for a in 0..3 {
            let ta = (b[a] - self.p[a][i]) * self.k[a][i] + self.c[a][i];
            let tb = (b[a + 3] - self.p[a][i]) * self.k[a][i] + self.c[a][i];
            crate::bvh::clip(ta, tb, &mut near, &mut far);
        }
        (near <= far).then_some(near)
    }

    /// The lanes of `mask` from the first (lowest) that enters the box `b` on, and its entry
    /// distance; the lanes before it miss the box.
    #[inline(always)]
    fn enter_first(&self, b: &[f64; 6], best: &[f64; LANES], mask: u64) -> (u64, f64) {
        let mut m = mask;
        while m != 0 {
            if let Some(near) = self.lane_entry(b, best, m.trailing_zeros() as usize) {
                return (m, near);
            }
            m &= m - 1;
        }
        (0, f64::INFINITY)
    }

    /// The lanes of `mask` that enter the box `b`, tested one by one.
    #[inline(always)]
    pub(crate) fn enter(&self, b: &[f64; 6], best: &[f64; LANES], mask: u64) -> (u64, f64) {
        if mask.count_ones() >= DENSE {
            self.enter_all(b, best, mask)
        } else {
            self.enter_each(b, best, mask)
        }
    }

    /// [`Lanes::enter`] computed for every lane at once (no branch a lane: vector code), the
    /// lanes outside `mask` dropped after. The same numbers as lane by lane.
    #[inline(always)]
    fn enter_all(&self, b: &[f64; 6], best: &[f64; LANES], mask: u64) -> (u64, f64) {
        // Lanes up to the highest in the mask, in fours (so the loops stay vector code).
        let n = ((LANES - mask.leading_zeros() as usize).div_ceil(4) * 4).min(LANES);
        let mut near = self.t_min;
        let mut far = *best;
        for a in 0..3 {
            let (p, k, c) = (&self.p[a][..n], &self.k[a][..n], &self.c[a][..n]);
            let (qa, qb) = (b[a], b[a + 3]);
            for i in 0..n {
                let ta = (qa - p[i]) * k[i] + c[i];
                let tb = (qb - p[i]) * k[i] + c[i];
                let (lo, hi) = if ta < tb { (ta, tb) } else { (tb, ta) };
                near[i] = if lo > near[i] { lo } else { near[i] };
                far[i] = if hi < far[i] { hi } else { far[i] };
            }
        }
        let mut out = 0u64;
        let mut least = f64::INFINITY;
        for i in 0..n {
            let ok = near[i] <= far[i] && (mask >> i) & 1 != 0;
            out |= (ok as u64) << i;
            let t = if ok { near[i] } else { f64::INFINITY };
            least = if t < least { t } else { least };
        }
        (out, least)
    }

    /// [`Lanes::enter`] lane by lane, for masks of few lanes.
    #[inline(always)]
    fn enter_each(&self, b: &[f64; 6], best: &[f64; LANES], mask: u64) -> (u64, f64) {
        let mut out = 0u64;
        let mut least = f64::INFINITY;
        let mut m = mask;
        while m != 0 {
            let i = m.trailing_zeros() as usize;
            m &= m - 1;
            if let Some(near) = self.lane_entry(b, best, i) {
                out |= 1 << i;
                if near < least {
                    least = near;
                }
            }
        }
        (out, least)
    }
}

/// The stack of a packet's traversal: (node, lanes that entered it), and whether any lane has
/// hit something since the entry was pushed (else the lanes need no new test when it is
/// taken: their nearest hits are where they were when it was tested).
pub(crate) struct PacketStack {
    nodes: [u32; DEPTH],
    masks: [u64; DEPTH],
    stamps: [u32; DEPTH],
    len: usize,
    /// Hits so far.
    now: u32,
}

/// Entries a packet stack holds (one a level, as the single-ray stack).
const DEPTH: usize = crate::bvh::MAX_DEPTH + 4;

impl PacketStack {
    pub(crate) fn new() -> PacketStack {
        PacketStack { nodes: [0; DEPTH], masks: [0; DEPTH], stamps: [0; DEPTH], len: 0, now: 0 }
    }
    /// Notes that some lane's nearest hit came closer.
    #[inline(always)]
    pub(crate) fn hit(&mut self) {
        self.now = self.now.wrapping_add(1);
    }
    /// Hits noted so far (modulo 2^32).
    pub(crate) fn hits(&self) -> u32 {
        self.now
    }
    #[inline(always)]
    pub(crate) fn push(&mut self, node: u32, mask: u64) {
        if mask != 0 && self.len < DEPTH {
            self.nodes[self.len] = node;
            self.masks[self.len] = mask;
            self.stamps[self.len] = self.now;
            self.len += 1;
        }
    }
    /// The last entry: its node, its lanes, and true when no lane has hit anything since.
    #[inline(always)]
    pub(crate) fn pop(&mut self) -> Option<(u32, u64, bool)> {
        (self.len > 0).then(|| {
            self.len -= 1;
            (self.nodes[self.len], self.masks[self.len], self.stamps[self.len] == self.now)
        })
    }
    /// Of two children entered by lanes `ma` (least entry `ta`) and `mb` (`tb`): the nearer to
    /// visit now, the other pushed for later; None when no lane entered either.
    #[inline(always)]
    pub(crate) fn descend(&mut self, (a, ma, ta): (u32, u64, f64), (b, mb, tb): (u32, u64, f64)) -> Option<(u32, u64)> {
        match (ma != 0, mb != 0) {
            (true, true) => {
                let ((n, nm), (f, fm)) = if ta <= tb { ((a, ma), (b, mb)) } else { ((b, mb), (a, ma)) };
                // One entry a level: a tree no deeper than MAX_DEPTH never fills the stack.
                self.push(f, fm);
                Some((n, nm))
            }
            (true, false) => Some((a, ma)),
            (false, true) => Some((b, mb)),
            (false, false) => None,
        }
    }
}

/// The greatest `best` of the lanes in `mask`.
#[inline(always)]
pub(crate) fn best_max(best: &[f64; LANES], mask: u64) -> f64 {
    let mut m = mask;
    let mut x = f64::NEG_INFINITY;
    while m != 0 {
        let i = m.trailing_zeros() as usize;
        m &= m - 1;
        x = x.max(best[i]);
    }
    x
}
