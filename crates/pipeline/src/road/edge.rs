//! The paved surface's edge on a side that no marking line or curb bounds: per row the last cell at
//! road level outward before the surface ends (a step, gravel, grass) or the points run out, and
//! where it was seen to end, the column where level cells turn to off in most rows around each row.

use crate::section::SectionGrid;

/// Heights in a section cell spread more than this on gravel or grass, not on asphalt (range
/// noise and texture: 2-3 mm; setts: up to 5 mm), m.
const ROUGH: f64 = 0.006;

/// The paved surface's edge on one side, found where no marking line or curb bounds it.
#[derive(Debug, Default)]
pub(super) struct PavedEdge {
    /// Samples (s, t) of the edge, one extent held along the survey.
    pub(super) samples: Vec<(f64, f64)>,
    /// Whether the surface was seen to end there (a step, or gravel or grass beyond it) in most
    /// rows, rather than the points running out.
    pub(super) seen: bool,
}

/// The paved surface's edge on one side (`side` +1 left, -1 right). Per row with a surface
/// line, the last cell at road level outward from the reference line before three cells off
/// it (a curb, a verge's gravel or grass, a wall) or 2 m without cells (far from the scanner
/// cells are sparse). At road level: heights neither rough (spread up to [`ROUGH`]) nor
/// spread, and within 3 cm (plus 5 % of the distance) of the last level cell carried on at the
/// row's crossfall, so a crown or a crossfall that changes bends the surface but a 6 cm step
/// ends it; cells whose heights spread more than `max_spread` (under a branch, a facade, a
/// curb's face) tell nothing. The side gets one extent, held along the survey: the one a
/// quarter of the rows reach (a car, people, a gap in the points or a profile that crosses the
/// rows obliquely cut rows short; a fallback cannot tell a narrowing from them). No samples
/// when most rows end before any paved cell: the pavement ends at the reference line (a
/// one-sided road).
pub(super) fn paved_edge(g: &SectionGrid, lines: &[Option<[f64; 2]>], side: f64, max_spread: f64) -> PavedEdge {
    let mut cols: Vec<usize> = (0..g.cols).filter(|&c| g.t_of(c) * side >= 0.0).collect();
    if side < 0.0 {
        cols.reverse();
    }
    /// How a row ends.
    enum End {
        /// No paved cell before the surface ended (gravel or a step from the start).
        AtStart,
        /// The edge's t, and whether the surface was seen to end there.
        Edge(f64, bool),
    }
    let gap = (2.0 / g.dt).round() as usize;
    // Per column (in the order of `cols`): cells found level, and cells found off, in the rows
    // before each row (row r's counts start at r * cols.len()).
    let nc = cols.len();
    let (mut level_at, mut off_at) = (vec![0u32; (g.rows + 1) * nc], vec![0u32; (g.rows + 1) * nc]);
    let mut per_row: Vec<Option<End>> = Vec::with_capacity(g.rows);
    for r in 0..g.rows {
        level_at.copy_within(r * nc..(r + 1) * nc, (r + 1) * nc);
        off_at.copy_within(r * nc..(r + 1) * nc, (r + 1) * nc);
        let Some(l) = lines[r] else {
            per_row.push(None);
            continue;
        };
        let (mut edge, mut empty, mut off) = (None, 0usize, 0usize);
        // The last level cell (t, h); the row's line at the reference line to start.
        let mut level = (0.0, l[0]);
        let mut end = None;
        for (i, &c) in cols.iter().enumerate() {
            let t = g.t_of(c);
            let near = |h: f64| (h - level.1 - l[1] * (t - level.0)).abs() < 0.03 + 0.05 * (t - level.0).abs();
            match (g.mean_h(r, c), g.spread_h(r, c)) {
                (Some(h), Some(sp)) if sp <= ROUGH && near(h) => {
                    edge = Some(t + 0.5 * g.dt * side);
                    level = (t, h);
                    (empty, off) = (0, 0);
                    level_at[(r + 1) * nc + i] += 1;
                }
                (Some(_), Some(sp)) if sp <= max_spread => {
                    off_at[(r + 1) * nc + i] += 1;
                    // Three cells off in a row end the surface (one is a stone, a leaf).
                    off += 1;
                    if off >= 3 {
                        end = Some(edge.map_or(End::AtStart, |e| End::Edge(e, true)));
                        break;
                    }
                }
                _ => {
                    empty += 1;
                    if empty > gap {
                        break;
                    }
                }
            }
        }
        per_row.push(end.or(edge.map(|e| End::Edge(e, false))));
    }
    let at_start = per_row.iter().flatten().filter(|e| matches!(e, End::AtStart)).count();
    let edges: Vec<(f64, bool)> = per_row
        .iter()
        .flatten()
        .filter_map(|e| match e {
            End::Edge(t, seen) => Some((t * side, *seen)),
            End::AtStart => None,
        })
        .collect();
    if at_start > edges.len() {
        return PavedEdge { samples: Vec::new(), seen: true };
    }
    let seen = 2 * edges.iter().filter(|e| e.1).count() > edges.len();
    let mut far: Vec<f64> = edges.iter().map(|e| e.0).collect();
    far.sort_by(f64::total_cmp);
    let Some(&w) = far.get((far.len() * 3 / 4).min(far.len().saturating_sub(1))) else { return PavedEdge::default() };
    // Where the pavement was seen to end, the edge is where the columns turn from level to
    // off in most of the rows that reach them (a row's own last level cell can be a gravel cell
    // that happened to lie flat, and the quarter of rows reaching farthest are those), between
    // the two columns' centres in proportion to their shares: within a cell. Over the rows of
    // [`EDGE_WINDOW`] around each row, so the edge follows a lane that narrows; a car on the
    // lane covers less than half a window's rows.
    let half = ((0.5 * EDGE_WINDOW / g.ds).round() as usize).max(1);
    let t_of = |i: usize| g.t_of(cols[i]) * side;
    let windowed = |r: usize| -> Option<f64> {
        let (a, b) = (r.saturating_sub(half), (r + half + 1).min(g.rows));
        let diff = |cum: &[u32]| -> Vec<u32> { (0..nc).map(|i| cum[b * nc + i] - cum[a * nc + i]).collect() };
        column_edge(&diff(&level_at), &diff(&off_at), t_of)
    };
    let samples = (0..g.rows)
        .filter(|&r| matches!(per_row[r], Some(End::Edge(..))))
        .map(|r| (g.s_of(r), if seen { windowed(r).unwrap_or(w) } else { w } * side))
        .collect();
    PavedEdge { samples, seen }
}

/// Rows along s over which [`paved_edge`] finds the edge of each row, m.
const EDGE_WINDOW: f64 = 16.0;

/// The distance from the reference line where the share of level cells (`level` of the rows
/// reaching a column, against `off`) first falls below a half going outward, interpolated
/// between the centres (`t_of`, as distances) of the last column above and the first below;
/// None when no column falls below it, or it falls within 1.5 m of the first column, or the
/// columns before it are level in fewer than 80 % of their rows on average. Columns that
/// fewer than 8 rows reach are passed over.
fn column_edge(level: &[u32], off: &[u32], t_of: impl Fn(usize) -> f64) -> Option<f64> {
    let share = |i: usize| {
        let n = level[i] + off[i];
        (n >= 8).then(|| f64::from(level[i]) / f64::from(n))
    };
    let mut last: Option<(f64, f64)> = None;
    let (mut sum, mut n) = (0.0, 0usize);
    for i in 0..level.len() {
        let Some(q) = share(i) else { continue };
        let t = t_of(i);
        if q < 0.5 {
            // Pavement level in most rows up to here (asphalt, concrete); setts, a rough patch
            // or rows cut short all over say nothing of where it ends.
            // Over 1.5 m at least: a marking line over setts is level too.
            let (tl, ql) = last?;
            let wide = (tl - t_of(0)).abs() >= 1.5;
            return (wide && sum / n as f64 >= 0.8).then(|| tl + (t - tl) * (ql - 0.5) / (ql - q));
        }
        last = Some((t, q));
        (sum, n) = (sum + q, n + 1);
    }
    None
}
