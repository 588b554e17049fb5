//! The corpus: malformed inputs of every format roadscan reads, and bad arguments, with what
//! each verb must do with them. Seeds are the real files in the shared data (read here, never
//! written), the repo's demo road and hand-built files; every mutation is either a named attack
//! (a header field set to 0, NaN or a huge count, a truncation, an include loop, ...) or a
//! seeded random one. Same seed, same bytes.
//!
//! Layout of DIR: `manifest.tsv` (see [`crate::case`]), `cases/NAME/...` (a case's files),
//! `partners/` (good files cases are paired with: the demo road and an axis through each real
//! LAS file's points).
//!
//! The cases of each input live in a module of their own: `las_laz` (LAS/LAZ headers, VLRs,
//! points and chunk tables), `xodr` (OpenDRIVE), `crg` (OpenCRG text and binary), `axis`
//! (polylines, GeoJSON, trajectories, OSM), `toml` (build configs), `pcap` (captures to replay), `sensors` (the virtual sensors' inputs),
//! `sim` (scenarios and saved states of `sim`) and `args`
//! (bad command lines); this module holds the generator's state and what they share.

mod args;
mod axis;
mod crg;
mod las_laz;
mod pcap;
mod sensors;
mod sim;
mod toml;
mod xodr;

use crate::case::{Case, Expect, Kind};
use crate::mutate;
use crate::rng::Rng;
use std::path::{Path, PathBuf};

/// Where the seeds are and where the corpus goes.
#[derive(Debug, Clone)]
pub struct Options {
    /// The output directory (created; files of an earlier corpus are overwritten).
    pub dir: PathBuf,
    /// The repository (for data/opendrive/demo.xodr).
    pub repo: PathBuf,
    /// The shared reference data ($ROADSCAN_SHARED_DATA); missing files are left out.
    pub shared: PathBuf,
    /// Seed of the random mutations.
    pub seed: u64,
}

/// Writes the corpus and its manifest; returns the cases.
pub fn generate(o: &Options) -> Result<Vec<Case>, String> {
    let demo_path = o.repo.join("data/opendrive/demo.xodr");
    let demo = std::fs::read_to_string(&demo_path).map_err(|e| format!("{}: {e}", demo_path.display()))?;
    let mut g = Gen { dir: o.dir.clone(), shared: o.shared.clone(), cases: Vec::new(), rng: Rng::new(o.seed) };
    g.write("partners/demo.xodr", demo.as_bytes())?;
    g.las()?;
    g.xodr(&demo)?;
    g.crg()?;
    g.polyline()?;
    g.geojson()?;
    g.trajectory()?;
    g.osm()?;
    g.toml()?;
    g.pcap()?;
    g.sensors(&demo)?;
    g.sim()?;
    g.args()?;
    let mut manifest =
        String::from("# hostile corpus: name, kind, file, expectation, place, partner, watched paths, arguments\n");
    for c in &g.cases {
        manifest.push_str(&c.to_string());
        manifest.push('\n');
    }
    g.write("manifest.tsv", manifest.as_bytes())?;
    Ok(g.cases)
}

struct Gen {
    dir: PathBuf,
    shared: PathBuf,
    cases: Vec<Case>,
    rng: Rng,
}

/// The demo road's start in the map frame (EPSG:23700: its `<offset>` plus the first record's
/// x, y), its heading and grade: where hand-built points lie on the road surface.
const DEMO_START: [f64; 3] = [650_012.5, 239_996.0, 100.0];
const DEMO_HDG: f64 = 0.35;

/// Points on the first 20 m of the demo road's surface, |t| <= 3 m.
fn demo_points() -> Vec<[f64; 3]> {
    let (c, s) = (DEMO_HDG.cos(), DEMO_HDG.sin());
    let mut p = Vec::new();
    for i in 0..=40 {
        let u = i as f64 * 0.5;
        for j in -6..=6 {
            let v = j as f64 * 0.5;
            p.push([DEMO_START[0] + u * c - v * s, DEMO_START[1] + u * s + v * c, DEMO_START[2] + 0.02 * u]);
        }
    }
    p
}

fn replace_once(text: &str, from: &str, to: &str) -> Result<String, String> {
    match text.find(from) {
        Some(i) => Ok(format!("{}{to}{}", &text[..i], &text[i + from.len()..])),
        None => Err(format!("seed lacks '{from}'")),
    }
}

impl Gen {
    fn write(&self, rel: &str, bytes: &[u8]) -> Result<(), String> {
        let path = self.dir.join(rel);
        if let Some(p) = path.parent() {
            std::fs::create_dir_all(p).map_err(|e| format!("{}: {e}", p.display()))?;
        }
        std::fs::write(&path, bytes).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Adds a file case `name` whose file is `cases/NAME/LEAF.EXT`.
    fn add(&mut self, kind: Kind, name: &str, ext: &str, bytes: &[u8], expect: Expect) -> Result<&mut Case, String> {
        if self.cases.iter().any(|c| c.name == name) {
            return Err(format!("duplicate case name {name}"));
        }
        let leaf = name.rsplit('/').next().unwrap_or(name);
        let rel = format!("cases/{name}/{leaf}.{ext}");
        self.write(&rel, bytes)?;
        self.cases.push(Case::file(name, kind, rel, expect));
        let n = self.cases.len() - 1;
        Ok(&mut self.cases[n])
    }

    /// Another file in the directory of case `name`.
    fn aux(&self, name: &str, file: &str, bytes: &[u8]) -> Result<(), String> {
        self.write(&format!("cases/{name}/{file}"), bytes)
    }

    fn shared_file(&self, rel: &str) -> Option<Vec<u8>> {
        std::fs::read(self.shared.join(rel)).ok()
    }

    /// `n` seeded random mutations of `seed` (token-level for text), as `any` cases.
    fn random(&mut self, kind: Kind, prefix: &str, ext: &str, seed: &[u8], n: usize, text: bool) -> Result<(), String> {
        for i in 0..n {
            let mut d = seed.to_vec();
            for _ in 0..1 + self.rng.below(3) {
                if text {
                    mutate::mutate_text(&mut self.rng, &mut d, seed);
                } else {
                    mutate::mutate_bytes(&mut self.rng, &mut d, seed);
                }
            }
            self.add(kind, &format!("{prefix}/random-{i:02}"), ext, &d, Expect::Any)?;
        }
        Ok(())
    }
}

/// The repository root this crate was built in (for `gen`'s default `--repo`).
pub fn default_repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `$ROADSCAN_SHARED_DATA`, else `REPO/../shared/data`.
pub fn default_shared(repo: &Path) -> PathBuf {
    std::env::var_os("ROADSCAN_SHARED_DATA").map_or_else(|| repo.join("../shared/data"), PathBuf::from)
}
