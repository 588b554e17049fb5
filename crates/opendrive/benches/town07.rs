//! Benchmark: parse Town07 and sample all roads every 1 m; 10^6 `xy_to_st` queries.
//!
//! `cargo bench -p opendrive --bench town07` (reads `$ROADSCAN_SHARED_DATA` or
//! `../shared/data`). Prints `key value` lines: medians over repeated runs. A plain
//! `roxmltree`-free baseline is the time to read the file into memory and to let quick-xml
//! tokenise it without building anything (`xml_scan_ms`), measured in the same run.

#![allow(clippy::panic, clippy::unwrap_used)] // tests and benches fail loudly

use opendrive::RoadEval;
use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn time<T>(runs: usize, mut f: impl FnMut() -> T) -> f64 {
    median(
        (0..runs)
            .map(|_| {
                let t = Instant::now();
                black_box(f());
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect(),
    )
}

fn sample_all(odr: &opendrive::OpenDrive) -> (usize, f64) {
    let mut n = 0;
    let mut sum = 0.0;
    for road in &odr.roads {
        let ev = RoadEval::new(road);
        let steps = road.length.floor() as usize;
        for i in 0..=steps + 1 {
            let s = (i as f64).min(road.length);
            let p = ev.pose(s);
            sum += p.x + p.y + p.hdg + ev.elevation(s) + ev.lane_offset(s);
            for (_, t) in ev.lane_borders(s) {
                sum += t;
            }
            n += 1;
        }
    }
    (n, sum)
}

fn main() {
    let data = std::env::var_os("ROADSCAN_SHARED_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"));
    let path = data.join("opendrive/libOpenDRIVE/Town07.xodr");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let runs = 15;

    let xml_scan_ms = time(runs, || {
        let mut r = quick_xml::Reader::from_str(&text);
        let mut n = 0usize;
        loop {
            match r.read_event() {
                Ok(quick_xml::events::Event::Eof) | Err(_) => break,
                Ok(_) => n += 1,
            }
        }
        n
    });
    let parse_ms = time(runs, || opendrive::read(&text).map(|o| o.roads.len()).unwrap_or(0));
    let odr = opendrive::read(&text).unwrap_or_else(|e| panic!("{e}"));
    let (n_samples, _) = sample_all(&odr);
    let sample_ms = time(runs, || sample_all(&odr).1);
    let both_ms = time(runs, || {
        let t = std::fs::read_to_string(&path).unwrap_or_default();
        let o = opendrive::read(&t).unwrap_or_default();
        sample_all(&o).1
    });
    println!("file {}", path.display());
    println!("roads {}", odr.roads.len());
    println!("samples {n_samples}");
    println!("xml_scan_ms {xml_scan_ms:.2}");
    println!("parse_ms {parse_ms:.2}");
    println!("sample_1m_ms {sample_ms:.2}");
    println!("read_parse_sample_ms {both_ms:.2}");

    // 10^6 (x, y) -> (s, t) queries near the roads, |t| up to 5 m, seeded.
    let evals: Vec<RoadEval> = odr.roads.iter().map(RoadEval::new).collect();
    let mut state = 12345u64;
    let mut rnd = || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let n_queries = 1_000_000;
    let queries: Vec<(usize, [f64; 3])> = (0..n_queries)
        .map(|i| {
            let k = i % evals.len();
            let ev = &evals[k];
            (k, ev.sth_to_xyz(rnd() * ev.length(), (2.0 * rnd() - 1.0) * 5.0, 0.0))
        })
        .collect();
    // Build the indexes first (once per road), then time the queries alone.
    for ev in &evals {
        black_box(ev.xy_to_st(0.0, 0.0, 1.0));
    }
    let t = Instant::now();
    let mut found = 0usize;
    for (k, q) in &queries {
        if evals[*k].xy_to_st(q[0], q[1], 10.0).is_some() {
            found += 1;
        }
    }
    let secs = t.elapsed().as_secs_f64();
    println!("xy_to_st_queries {n_queries}");
    println!("xy_to_st_found {found}");
    println!("xy_to_st_ns_per_query {:.0}", secs * 1e9 / n_queries as f64);
}
