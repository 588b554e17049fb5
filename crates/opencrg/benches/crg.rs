//! Benchmark: load belgian_block.crg, 10^6 uv -> z queries, write + read a 1 km x 8 m grid at
//! 1 cm (100,001 x 801 nodes, KRBI). `cargo bench -p opencrg --bench crg`. Prints `key value`
//! lines; compare with `.ci/crg_oracle.py bench` (pycrg's C-API) run on the same machine.

#![allow(clippy::panic, clippy::unwrap_used)] // benches fail loudly

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let data = std::env::var_os("ROADSCAN_SHARED_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"));
    let path = data.join("opencrg/crg-bin/belgian_block.crg");
    let loads: Vec<f64> = (0..20)
        .map(|_| {
            let t = Instant::now();
            let c = opencrg::read_file(&path).unwrap();
            let s = opencrg::Surface::new(&c, false).unwrap();
            black_box(s.u_range());
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    println!("a_load_median_ms {:.3}", median(loads));
    let crg = opencrg::read_file(&path).unwrap();
    let s = opencrg::Surface::new(&crg, false).unwrap();
    let (u0, u1) = s.u_range();
    let (v0, v1) = s.v_range();
    let mut state = 12345u64;
    let mut rnd = || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let n = 1_000_000;
    let pts: Vec<(f64, f64)> = (0..n).map(|_| (u0 + rnd() * (u1 - u0), v0 + rnd() * (v1 - v0))).collect();
    let t = Instant::now();
    let mut acc = 0.0;
    for &(u, v) in &pts {
        acc += s.uv_to_z(u, v).unwrap_or(0.0).max(-1e9);
    }
    black_box(acc);
    println!("b_uv_to_z_ns_per_query {:.1}", t.elapsed().as_secs_f64() * 1e9 / n as f64);

    // 1 km x 8 m at 1 cm.
    let (nu, nv) = (100_001usize, 801usize);
    let z: Vec<f32> = (0..nu * nv).map(|i| ((i % 977) as f32 * 0.001).sin() * 0.01).collect();
    let phi: Vec<f64> = (0..nu).map(|i| 0.3 + 1e-5 * i as f64).collect();
    let big = opencrg::Crg::new_grid(0.0, 0.01, nu, -4.0, 0.01, nv, (650_000.0, 240_000.0, 0.3), Some(phi), z);
    let out = std::env::temp_dir().join(format!("roadscan-bench-{}.crg", std::process::id()));
    let t = Instant::now();
    opencrg::write_file(&big, &out, opencrg::Format::Krbi).unwrap();
    println!("c_write_1km_krbi_s {:.3}", t.elapsed().as_secs_f64());
    println!("c_file_mb {:.1}", std::fs::metadata(&out).unwrap().len() as f64 / 1e6);
    drop(big);
    let t = Instant::now();
    let back = opencrg::read_file(&out).unwrap();
    let s = opencrg::Surface::from_owned(back, false).unwrap();
    black_box(s.uv_to_z(500.0, 0.0));
    println!("c_read_1km_krbi_s {:.3}", t.elapsed().as_secs_f64());
    let _ = std::fs::remove_file(&out);
}
