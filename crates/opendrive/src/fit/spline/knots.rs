//! Finding the pieces: knot removal while the largest residual stays within the tolerance,
//! each remaining knot moved to where the squared residuals are least, knots merged, and
//! pieces constrained to parabolas or lines where the tolerance allows, until nothing changes.

use super::moments::{add_moments, Ends};
use super::{Piece, Samples, Spline, SLACK};

impl<'a> Samples<'a> {
    /// Fewest pieces (greedily) within `tol`, each at least `min_len` long, starting from
    /// pieces about `start` long. `None` if even the start does not fit within `tol`.
    pub fn fit(&self, tol: f64, start: f64, min_len: f64) -> Option<Spline> {
        let mut sp = self.dense(start);
        if sp.max.is_nan() || sp.max > tol {
            return None;
        }
        // Knots go while the fit stays within a tighter bound, leaving slack for the
        // constraints (lines and arcs fit as well when the knots sit at the true joints).
        let tight = SLACK * tol;
        // Rounds until nothing changes; knots moving alone get one more round to let a
        // removal or a merge use the new places, then stop (they settle by ever smaller steps).
        let mut moved_only = false;
        for _ in 0..12 {
            let removed = self.remove_knots(&mut sp, tight);
            if sp.breaks.len() > self.many {
                break;
            }
            // Merged pieces of one kind keep it.
            let constrained = self.constrain(&mut sp, tol);
            let moved = self.move_knots(&mut sp, tol, min_len);
            let merged = self.merge_knots(&mut sp, tight, min_len);
            if removed || merged || constrained {
                moved_only = false;
            } else if moved && !moved_only {
                moved_only = true;
            } else {
                break;
            }
        }
        self.drop_redundant(&mut sp, tol);
        Some(sp)
    }

    /// Removes knots where nothing changes (the third derivative continuous: two pieces of
    /// one line, or of one parabola), keeping the stricter constraint of the two.
    fn drop_redundant(&self, sp: &mut Spline, tol: f64) {
        loop {
            let scale = sp.breaks[sp.breaks.len() - 1] - sp.breaks[0];
            let Some(k) = (1..sp.breaks.len() - 1).find(|&k| {
                let jump = sp.eval_in(k, sp.breaks[k])[3] - sp.eval_in(k - 1, sp.breaks[k])[3];
                let w = sp.breaks[k + 1] - sp.breaks[k - 1];
                jump.abs() * w * w * w < 1e-6 * tol.min(1e-3 * scale)
            }) else {
                return;
            };
            let strict = |p: Piece| match p {
                Piece::Line => 2,
                Piece::Parabola => 1,
                Piece::Cubic => 0,
            };
            let mut breaks = sp.breaks.clone();
            let mut pieces = sp.pieces.clone();
            breaks.remove(k);
            let keep = if strict(pieces[k]) > strict(pieces[k - 1]) { pieces[k] } else { pieces[k - 1] };
            pieces.remove(k);
            pieces[k - 1] = keep;
            match self.solve(&breaks, &pieces) {
                Some(t) if t.max <= tol => *sp = t,
                _ => return,
            }
        }
    }

    /// The place in [lo, hi] for a knot (given by `place`, which builds the breaks and
    /// pieces for a position) with the least squared residuals, if the fit there stays
    /// within `tol`: a coarse grid, then finer grids around the best.
    fn best_place(
        &self,
        (lo, hi): (f64, f64),
        ends: (f64, f64),
        tol: f64,
        place: impl Fn(f64) -> (Vec<f64>, Vec<Piece>),
    ) -> Option<Spline> {
        self.set_ends(ends);
        let mut best: Option<(f64, f64)> = None;
        let (mut a, mut b) = (lo, hi);
        for level in 0..5 {
            let n = if level == 0 { 24 } else { 6 };
            for i in 0..=n {
                let x = a + (b - a) * i as f64 / n as f64;
                let (breaks, pieces) = place(x);
                if let Some(sse) = self.sse(&breaks, &pieces) {
                    if best.is_none_or(|(s, _)| sse < s) {
                        best = Some((sse, x));
                    }
                }
            }
            let w = (b - a) / n as f64;
            let Some((_, c)) = best else {
                *self.ends.borrow_mut() = None;
                return None;
            };
            (a, b) = ((c - w).max(lo), (c + w).min(hi));
        }
        let out = best.and_then(|(_, x)| {
            let (breaks, pieces) = place(x);
            self.solve(&breaks, &pieces)
        });
        *self.ends.borrow_mut() = None;
        out.filter(|s| s.max <= tol)
    }

    /// Running moments from `left` and `right` (two breaks) for [`Ends`].
    fn set_ends(&self, (left, right): (f64, f64)) {
        let ns = self.s.len();
        let last = self.s[ns - 1];
        let i0 = if left <= self.s[0] { 0 } else { self.s.partition_point(|&x| x < left) };
        let i1 = if right >= last { ns } else { self.s.partition_point(|&x| x < right) }.max(i0);
        let mut forward = Vec::with_capacity(i1 - i0 + 1);
        let mut m = [0.0; 11];
        forward.push(m);
        for i in i0..i1 {
            add_moments(&mut m, self.s[i] - left, self.y[i]);
            forward.push(m);
        }
        let mut backward = vec![[0.0; 11]; i1 - i0 + 1];
        let mut m = [0.0; 11];
        for i in (i0..i1).rev() {
            add_moments(&mut m, right - self.s[i], self.y[i]);
            backward[i - i0] = m;
        }
        *self.ends.borrow_mut() = Some(Ends { left, right, i0, i1, forward, backward });
    }

    /// Replaces two neighbouring knots by one at the best place between their neighbours,
    /// shortest pieces first, while the fit stays within `tol`. True if any merged.
    fn merge_knots(&self, sp: &mut Spline, tol: f64, min_len: f64) -> bool {
        let mut any = false;
        loop {
            let mut order: Vec<(f64, usize)> =
                (1..sp.breaks.len().saturating_sub(2)).map(|k| (sp.breaks[k + 1] - sp.breaks[k], k)).collect();
            order.sort_by(|x, y| x.0.total_cmp(&y.0));
            let mut merged = false;
            for (_, k) in order {
                let (lo, hi) = (sp.breaks[k - 1] + min_len, sp.breaks[k + 2] - min_len);
                if hi <= lo {
                    continue;
                }
                let place = |x: f64| {
                    let mut breaks = sp.breaks.clone();
                    breaks[k] = x;
                    breaks.remove(k + 1);
                    let mut pieces = sp.pieces.clone();
                    pieces.remove(k);
                    (breaks, pieces)
                };
                if let Some(t) = self.best_place((lo, hi), (sp.breaks[k - 1], sp.breaks[k + 2]), tol, place) {
                    *sp = t;
                    merged = true;
                    any = true;
                    break;
                }
            }
            if !merged {
                return any;
            }
        }
    }

    /// Knots in the order their removal should cost least.
    fn removal_order(sp: &Spline) -> Vec<usize> {
        let mut score: Vec<(f64, usize)> = (1..sp.breaks.len() - 1)
            .map(|k| {
                let jump = sp.eval_in(k, sp.breaks[k])[3] - sp.eval_in(k - 1, sp.breaks[k])[3];
                let w = 0.5 * (sp.breaks[k + 1] - sp.breaks[k - 1]);
                (jump.abs() * w * w * w, k)
            })
            .collect();
        score.sort_by(|x, y| x.0.total_cmp(&y.0));
        score.into_iter().map(|(_, k)| k).collect()
    }

    /// Breaks and pieces without the knots in `drop` (sorted); merged pieces keep a common
    /// constraint, else become cubics.
    fn without(sp: &Spline, drop: &[usize]) -> (Vec<f64>, Vec<Piece>) {
        let mut breaks = vec![sp.breaks[0]];
        let mut pieces = vec![sp.pieces[0]];
        for k in 1..sp.breaks.len() - 1 {
            if drop.binary_search(&k).is_ok() {
                let last = pieces.len() - 1;
                if pieces[last] != sp.pieces[k] {
                    pieces[last] = Piece::Cubic;
                }
            } else {
                breaks.push(sp.breaks[k]);
                pieces.push(sp.pieces[k]);
            }
        }
        breaks.push(sp.breaks[sp.breaks.len() - 1]);
        (breaks, pieces)
    }

    /// Removes knots while the fit stays within `tol`: batches of non-adjacent cheap knots,
    /// halved on failure, down to single knots tried in order. True if any went.
    fn remove_knots(&self, sp: &mut Spline, tol: f64) -> bool {
        let mut any = false;
        let mut batch = (sp.breaks.len() / 4).max(1);
        loop {
            let order = Self::removal_order(sp);
            if order.is_empty() {
                return any;
            }
            let mut done = false;
            while !done {
                // The cheapest `batch` knots, no two adjacent.
                let mut pick: Vec<usize> = Vec::new();
                for &k in &order {
                    if pick.len() >= batch {
                        break;
                    }
                    if !pick.iter().any(|&p| p.abs_diff(k) <= 1) {
                        pick.push(k);
                    }
                }
                let tries: Vec<Vec<usize>> =
                    if batch == 1 { order.iter().take(12).map(|&k| vec![k]).collect() } else { vec![pick] };
                for mut drop in tries {
                    drop.sort_unstable();
                    let (breaks, pieces) = Self::without(sp, &drop);
                    if let Some(t) = self.solve(&breaks, &pieces) {
                        if t.max <= tol {
                            *sp = t;
                            any = true;
                            done = true;
                            break;
                        }
                    }
                }
                if !done {
                    if batch == 1 {
                        return any;
                    }
                    batch /= 2;
                }
            }
        }
    }

    /// Moves every interior knot, one at a time, to the place between its neighbours with the
    /// least squared residuals within `tol`. True if any moved by more than 1 mm.
    fn move_knots(&self, sp: &mut Spline, tol: f64, min_len: f64) -> bool {
        let mut any = false;
        for k in 1..sp.breaks.len() - 1 {
            let (lo, hi) = (sp.breaks[k - 1] + min_len, sp.breaks[k + 1] - min_len);
            if hi <= lo {
                continue;
            }
            let place = |x: f64| {
                let mut breaks = sp.breaks.clone();
                breaks[k] = x;
                (breaks, sp.pieces.clone())
            };
            if let Some(t) = self.best_place((lo, hi), (sp.breaks[k - 1], sp.breaks[k + 1]), tol, place) {
                if t.sse < sp.sse * (1.0 - 1e-6) && (t.breaks[k] - sp.breaks[k]).abs() > 1e-3 {
                    *sp = t;
                    any = true;
                }
            }
        }
        any
    }

    /// Lines, then parabolas, where the fit stays within `tol`: pieces tried in the order of
    /// how little the constraint changes them. True if any was constrained.
    fn constrain(&self, sp: &mut Spline, tol: f64) -> bool {
        let mut any = false;
        for target in [Piece::Line, Piece::Parabola] {
            // A continued spline starting on a curve cannot start with a line.
            let curved = self.start.is_some_and(|(_, d)| d[2] != 0.0);
            let mut order: Vec<(f64, usize)> = (0..sp.pieces.len())
                .filter(|&k| sp.pieces[k] != Piece::Line && sp.pieces[k] != target)
                .filter(|&k| !(k == 0 && curved && target == Piece::Line))
                .map(|k| {
                    let h = sp.breaks[k + 1] - sp.breaks[k];
                    let (a, b) = (sp.eval_in(k, sp.breaks[k]), sp.eval_in(k, sp.breaks[k + 1]));
                    let cost = match target {
                        Piece::Line => a[2].abs().max(b[2].abs()) * h * h,
                        _ => a[3].abs() * h * h * h,
                    };
                    (cost, k)
                })
                .collect();
            order.sort_by(|x, y| x.0.total_cmp(&y.0));
            for (_, k) in order {
                let mut pieces = sp.pieces.clone();
                pieces[k] = target;
                if let Some(t) = self.solve(&sp.breaks, &pieces) {
                    if t.max <= tol {
                        *sp = t;
                        any = true;
                    }
                }
            }
        }
        any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_piecewise_cubic_is_found_with_its_pieces() {
        // A line, a cubic and a parabola joined with C2 continuity, sampled every 0.5 m.
        let a3 = 1e-4;
        let f = |x: f64| -> f64 {
            if x < 40.0 {
                0.1 * x
            } else if x < 60.0 {
                0.1 * x + a3 * (x - 40.0).powi(3)
            } else {
                0.1 * x + a3 * 8000.0 + 3.0 * a3 * 400.0 * (x - 60.0) + 0.006 * (x - 60.0).powi(2)
            }
        };
        let s: Vec<f64> = (0..=200).map(|i| i as f64 * 0.5).collect();
        let y: Vec<f64> = s.iter().map(|&x| f(x)).collect();
        let sp = Samples::new(&s, &y).fit(1e-4, 2.0, 0.5).expect("fits");
        assert!(sp.max <= 1e-4);
        assert_eq!(sp.pieces, [Piece::Line, Piece::Cubic, Piece::Parabola], "{:?}", sp.breaks);
        assert!((sp.breaks[1] - 40.0).abs() < 0.5 && (sp.breaks[2] - 60.0).abs() < 0.5, "{:?}", sp.breaks);
        let p = sp.poly(0);
        assert!((p[2]).abs() < 1e-9 && (p[1] - 0.1).abs() < 1e-6, "{p:?}");
    }

    #[test]
    fn solves_that_reuse_pieces_match_fresh_ones() {
        // A wavy profile with a little deterministic noise, every 0.25 m over 300 m.
        let s: Vec<f64> = (0..=1200).map(|i| i as f64 * 0.25).collect();
        let y: Vec<f64> = s
            .iter()
            .enumerate()
            .map(|(i, &x)| 40.0 + 0.3 * x + 5.0 * (x / 37.0).sin() + 0.003 * ((i * 7919) % 13) as f64)
            .collect();
        let shared = Samples::new(&s, &y);
        let mut breaks: Vec<f64> = (0..=15).map(|i| i as f64 * 20.0).collect();
        let mut pieces = vec![Piece::Cubic; 15];
        pieces[3] = Piece::Parabola;
        pieces[9] = Piece::Line;
        // A knot moved by best_place (running moments from its neighbours), then other
        // changes: each solve must equal one on samples that never saw another.
        let first = shared.solve(&breaks, &pieces).expect("solves");
        let placed = shared.best_place((101.0, 119.0), (100.0, 120.0), f64::INFINITY, |x| {
            let mut b = breaks.clone();
            b[5] = x;
            (b, pieces.clone())
        });
        let placed = placed.expect("a place");
        breaks = placed.breaks.clone();
        let moved = Samples::new(&s, &y).solve(&breaks, &pieces).expect("solves");
        breaks.remove(11);
        pieces.remove(11);
        let removed = shared.solve(&breaks, &pieces).expect("solves");
        let fresh = Samples::new(&s, &y).solve(&breaks, &pieces).expect("solves");
        for (a, b) in [(&placed, &moved), (&removed, &fresh)] {
            assert!((a.sse - b.sse).abs() <= 1e-9 * b.sse, "sse {} vs {}", a.sse, b.sse);
            assert!((a.max - b.max).abs() <= 1e-9, "max {} vs {}", a.max, b.max);
            for x in [0.0, 33.3, 101.7, 150.0, 299.0] {
                assert!((a.eval(x)[0] - b.eval(x)[0]).abs() < 1e-9, "at {x}");
            }
        }
        // The residuals as the B-splines give them (de Boor) agree with the solve's.
        let sse: f64 = s.iter().zip(&y).map(|(&x, &v)| (fresh.eval(x)[0] - v).powi(2)).sum();
        assert!((sse - fresh.sse).abs() <= 1e-6 * fresh.sse, "sse {sse} vs {}", fresh.sse);
        assert!(first.sse > 0.0);
    }
}
