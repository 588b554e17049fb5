//! A bounding volume hierarchy: binary, flattened, bounds stored as f32 (widened outward so a
//! box never shrinks), traversed nearest child first with a stack of entry distances.

use crate::geom::{Aabb, V3};
use crate::packet::{best_max, Frustum, Lanes, PacketStack, LANES};

/// One node: its bounds, and either two children (`count == 0`, children at `first` and
/// `first + 1`) or a leaf (`count` items from `first`; what an item is, the owner knows).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Node {
    /// Lower corner (x, y, z), then upper corner.
    b: [f32; 6],
    pub first: u32,
    pub count: u32,
}

/// The deepest a tree may go: a traversal stack of this size never overflows.
pub(crate) const MAX_DEPTH: usize = 60;

pub(crate) fn widen_down(x: f64) -> f32 {
    (x - x.abs() * 2e-7 - 1e-7) as f32
}
pub(crate) fn widen_up(x: f64) -> f32 {
    (x + x.abs() * 2e-7 + 1e-7) as f32
}

/// A ray ready for slab tests: its origin and the inverse of its direction.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SlabRay {
    o: V3,
    inv: V3,
}

impl SlabRay {
    pub(crate) fn new(o: &V3, d: &V3) -> SlabRay {
        SlabRay { o: *o, inv: inverse(d) }
    }
}

impl Node {
    pub(crate) fn new(b: &Aabb, first: u32, count: u32) -> Node {
        Node {
            b: [
                widen_down(b.min[0]),
                widen_down(b.min[1]),
                widen_down(b.min[2]),
                widen_up(b.max[0]),
                widen_up(b.max[1]),
                widen_up(b.max[2]),
            ],
            first,
            count,
        }
    }
    /// Its bounds.
    pub(crate) fn bounds(&self) -> Aabb {
        let b = self.b.map(f64::from);
        Aabb { min: [b[0], b[1], b[2]], max: [b[3], b[4], b[5]] }
    }
    /// Entry distance of the ray within `[t0, t1]`.
    #[inline(always)]
    fn enter(&self, r: &SlabRay, t0: f64, t1: f64) -> Option<f64> {
        let (mut near, mut far) = (t0, t1);
        for a in 0..3 {
            let ta = (self.b[a] as f64 - r.o[a]) * r.inv[a];
            let tb = (self.b[a + 3] as f64 - r.o[a]) * r.inv[a];
            clip(ta, tb, &mut near, &mut far);
        }
        (near <= far).then_some(near)
    }
}

/// Narrows `[near, far]` to the slab a ray crosses between distances `ta` and `tb` (either
/// order). NaN (a zero direction on a face) compares false and leaves the range as it is.
#[inline(always)]
pub(crate) fn clip(ta: f64, tb: f64, near: &mut f64, far: &mut f64) {
    let (lo, hi) = if ta < tb { (ta, tb) } else { (tb, ta) };
    if lo > *near {
        *near = lo;
    }
    if hi < *far {
        *far = hi;
    }
}

/// A BVH over items with boxes; the leaves name ranges of its item order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Bvh {
    pub(crate) nodes: Vec<Node>,
    pub(crate) root: u32,
    /// Item indices in leaf order: a leaf holds `order[first..first + count]`.
    pub(crate) order: Vec<u32>,
}

/// Bins of the surface-area heuristic.
const BINS: usize = 16;

impl Bvh {
    /// A tree over `boxes` by the binned surface-area heuristic, at most `max_leaf` items a
    /// leaf (more only where items cannot be told apart). Empty boxes are left out.
    pub fn build(boxes: &[Aabb], max_leaf: usize) -> Bvh {
        let max_leaf = max_leaf.max(1);
        let mut order: Vec<u32> = (0..boxes.len() as u32).filter(|&i| !boxes[i as usize].is_empty()).collect();
        let centres: Vec<V3> = boxes.iter().map(Aabb::centre).collect();
        let mut nodes = vec![Node::new(&Aabb::EMPTY, 0, 0)];
        if order.is_empty() {
            return Bvh { nodes: Vec::new(), root: 0, order };
        }
        // (node, start, end, depth)
        let mut work = vec![(0usize, 0usize, order.len(), 0usize)];
        while let Some((at, start, end, depth)) = work.pop() {
            let items = &mut order[start..end];
            let mut bounds = Aabb::EMPTY;
            let mut cb = Aabb::EMPTY;
            for &i in items.iter() {
                bounds = bounds.union(&boxes[i as usize]);
                cb.grow(centres[i as usize]);
            }
            let n = items.len();
            let split = if n <= max_leaf || depth + 1 >= MAX_DEPTH {
                None
            } else {
                sah_split(items, boxes, &centres, &cb, &bounds)
            };
            let Some(mid) = split else {
                nodes[at] = Node::new(&bounds, start as u32, n as u32);
                continue;
            };
            let left = nodes.len();
            nodes.push(Node::new(&Aabb::EMPTY, 0, 0));
            nodes.push(Node::new(&Aabb::EMPTY, 0, 0));
            nodes[at] = Node::new(&bounds, left as u32, 0);
            work.push((left + 1, start + mid, end, depth + 1));
            work.push((left, start, start + mid, depth + 1));
        }
        Bvh { nodes, root: 0, order }
    }

    /// The bounds of the whole tree (empty for an empty tree).
    pub fn bounds(&self) -> Aabb {
        self.nodes.get(self.root as usize).map_or(Aabb::EMPTY, Node::bounds)
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }
    /// True for a tree over nothing.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Visits the leaves the ray `r` enters within
    /// `[t_min, *best]`, nearest first; `leaf(first, count, best)` lowers `*best` when it hits.
    #[inline]
    pub(crate) fn traverse(&self, r: &SlabRay, t_min: f64, best: &mut f64, mut leaf: impl FnMut(u32, u32, &mut f64)) {
        let Some(root) = self.nodes.get(self.root as usize) else { return };
        let Some(t) = root.enter(r, t_min, *best) else { return };
        let mut stack = Stack::new(self.root, t);
        while let Some(mut at) = stack.pop(*best) {
            loop {
                let n = &self.nodes[at as usize];
                if n.count > 0 {
                    leaf(n.first, n.count, best);
                    break;
                }
                let (a, b) = (n.first, n.first + 1);
                let ta = self.nodes[a as usize].enter(r, t_min, *best);
                let tb = self.nodes[b as usize].enter(r, t_min, *best);
                match stack.descend((a, ta), (b, tb)) {
                    Some(next) => at = next,
                    None => break,
                }
            }
        }
    }
}

impl Bvh {
    /// The lanes of a packet of rays (origins `o`, directions `d`, from `t_min`) in a world
    /// tree's coordinates.
    pub(crate) fn lanes(rays: &[crate::geom::Ray]) -> Lanes {
        let mut l = Lanes::new();
        for (i, r) in rays.iter().take(LANES).enumerate() {
            for (a, (&o, x)) in r.origin.iter().zip(inverse(&r.dir)).enumerate() {
                l.p[a][i] = o;
                l.k[a][i] = x;
                l.c[a][i] = 0.0;
            }
            l.t_min[i] = r.t_min;
        }
        let rays = &rays[..rays.len().min(LANES)];
        if let Some(first) = rays.first() {
            if rays.iter().all(|r| r.origin == first.origin) {
                let t0 = rays.iter().map(|r| r.t_min).fold(f64::INFINITY, f64::min);
                let t_min_max = rays.iter().map(|r| r.t_min).fold(f64::NEG_INFINITY, f64::max);
                let t1 = rays.iter().map(|r| r.t_max).fold(f64::NEG_INFINITY, f64::max);
                let inv = rays.iter().map(|r| inverse(&r.dir));
                l.frustum = Some(Frustum::of([1.0; 3], first.origin, inv, (t0, t_min_max, t1)));
            }
        }
        l
    }

    /// Visits the leaves that lanes `mask` of a packet enter within `[t_min, best]`, nearest
    /// first for the packet; `leaf(first, count, lanes, best)` casts those lanes there, lowers
    /// their `best` when they hit, and says whether any did.
    #[inline]
    pub(crate) fn traverse_packet(
        &self,
        lanes: &Lanes,
        best: &mut [f64; LANES],
        mask: u64,
        mut leaf: impl FnMut(u32, u32, u64, &mut [f64; LANES]) -> bool,
    ) {
        let Some(root) = self.nodes.get(self.root as usize) else { return };
        let mut stack = PacketStack::new();
        stack.push(self.root, lanes.enter_node(&root.b.map(f64::from), best, mask, root.count == 0, f64::INFINITY).0);
        while let Some((at, m, fresh)) = stack.pop() {
            let bm = best_max(best, m);
            let n = &self.nodes[at as usize];
            // Tested again when taken if a lane has hit something since: it may be nearer now.
            let mut m = if fresh { m } else { lanes.enter_node(&n.b.map(f64::from), best, m, n.count == 0, bm).0 };
            let mut at = at;
            while m != 0 {
                let n = &self.nodes[at as usize];
                if n.count > 0 {
                    if leaf(n.first, n.count, m, best) {
                        stack.hit();
                    }
                    break;
                }
                let (a, b) = (n.first, n.first + 1);
                let (na, nb) = (&self.nodes[a as usize], &self.nodes[b as usize]);
                let (ma, ta) = lanes.enter_node(&na.b.map(f64::from), best, m, na.count == 0, bm);
                let (mb, tb) = lanes.enter_node(&nb.b.map(f64::from), best, m, nb.count == 0, bm);
                match stack.descend((a, ma, ta), (b, mb, tb)) {
                    Some((next, nm)) => (at, m) = (next, nm),
                    None => break,
                }
            }
        }
    }
}

/// The stack of a nearest-first traversal: (node, entry distance), at most one entry a level.
/// Nodes and distances are kept in two plain arrays, which start zeroed by a few wide stores
/// (an array of pairs with padding took a store per field).
pub(crate) struct Stack {
    nodes: [u32; STACK],
    ts: [f64; STACK],
    len: usize,
}

/// Entries a stack holds.
const STACK: usize = MAX_DEPTH + 4;

impl Stack {
    /// A stack holding the root `root`, entered at `t`.
    #[inline(always)]
    pub(crate) fn new(root: u32, t: f64) -> Stack {
        let mut s = Stack { nodes: [0; STACK], ts: [0.0; STACK], len: 1 };
        s.nodes[0] = root;
        s.ts[0] = t;
        s
    }

    /// Empties the stack and puts `root`, entered at `t`, on it (a stack used for many trees
    /// is zeroed once).
    #[inline(always)]
    pub(crate) fn reset(&mut self, root: u32, t: f64) {
        self.nodes[0] = root;
        self.ts[0] = t;
        self.len = 1;
    }

    /// The next node to visit, skipping those entered beyond `best`.
    #[inline(always)]
    pub(crate) fn pop(&mut self, best: f64) -> Option<u32> {
        while self.len > 0 {
            self.len -= 1;
            if self.ts[self.len] <= best {
                return Some(self.nodes[self.len]);
            }
        }
        None
    }

    /// The child to descend into of two with entry distances `ta`, `tb` (None: missed): the
    /// nearer one, the other kept for later; None when the ray misses both.
    #[inline(always)]
    pub(crate) fn descend(&mut self, (a, ta): (u32, Option<f64>), (b, tb): (u32, Option<f64>)) -> Option<u32> {
        match (ta, tb) {
            (Some(x), Some(y)) => {
                let ((near, _), (far, tf)) = if x <= y { ((a, x), (b, y)) } else { ((b, y), (a, x)) };
                if self.len < STACK {
                    self.nodes[self.len] = far;
                    self.ts[self.len] = tf;
                    self.len += 1;
                }
                Some(near)
            }
            (Some(_), None) => Some(a),
            (None, Some(_)) => Some(b),
            (None, None) => None,
        }
    }
}

/// The inverse of a direction, per axis (infinite for a zero component).
pub(crate) fn inverse(d: &V3) -> V3 {
    [1.0 / d[0], 1.0 / d[1], 1.0 / d[2]]
}

/// Splits `items` in place by the cheapest binned SAH plane; the count on the left, or None
/// when a leaf is cheaper or no plane separates them.
fn sah_split(items: &mut [u32], boxes: &[Aabb], centres: &[V3], cb: &Aabb, bounds: &Aabb) -> Option<usize> {
    let n = items.len();
    let ext: Vec<f64> = (0..3).map(|a| cb.max[a] - cb.min[a]).collect();
    let axis = (0..3).fold(0, |best, a| if ext[a] > ext[best] { a } else { best });
    if ext[axis].partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
        // All centres at one point: halve the list (a leaf this big would be slow).
        return (n > 32).then_some(n / 2);
    }
    let k = BINS as f64 / ext[axis];
    let bin_of = |i: u32| (((centres[i as usize][axis] - cb.min[axis]) * k) as usize).min(BINS - 1);
    let mut bin_box = [Aabb::EMPTY; BINS];
    let mut bin_n = [0usize; BINS];
    for &i in items.iter() {
        let b = bin_of(i);
        bin_box[b] = bin_box[b].union(&boxes[i as usize]);
        bin_n[b] += 1;
    }
    // Sweep from the right, then from the left.
    let mut right_area = [0.0; BINS];
    let mut acc = Aabb::EMPTY;
    let mut cnt = 0;
    let mut right_n = [0usize; BINS];
    for b in (1..BINS).rev() {
        acc = acc.union(&bin_box[b]);
        cnt += bin_n[b];
        right_area[b] = acc.half_area();
        right_n[b] = cnt;
    }
    let mut acc = Aabb::EMPTY;
    let mut cnt = 0;
    let mut best = (f64::INFINITY, 0usize);
    for b in 0..BINS - 1 {
        acc = acc.union(&bin_box[b]);
        cnt += bin_n[b];
        if cnt == 0 || right_n[b + 1] == 0 {
            continue;
        }
        let cost = acc.half_area() * cnt as f64 + right_area[b + 1] * right_n[b + 1] as f64;
        if cost < best.0 {
            best = (cost, b);
        }
    }
    let area = bounds.half_area().max(f64::MIN_POSITIVE);
    let split_cost = 1.0 + best.0 / area;
    if !best.0.is_finite() || (split_cost >= n as f64 && n <= 16) {
        return None;
    }
    let mut left = 0;
    for j in 0..n {
        if bin_of(items[j]) <= best.1 {
            items.swap(left, j);
            left += 1;
        }
    }
    (left > 0 && left < n).then_some(left)
}
