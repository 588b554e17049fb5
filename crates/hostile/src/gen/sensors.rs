//! The virtual sensors' inputs: beam tables (`lidar --sensor FILE.toml`), camera files
//! (`camera --camera FILE.toml`), sensor trajectories (`--path FILE.csv`) over the partner
//! world, and build worlds (`--world DIR`) with one file of them hostile.
//!
//! The partner world (`partners/world/`) is small: the demo road (`road.xodr`, linking
//! `demo.crg`, a hand-built 5 x 3 LRFI grid), three roadside voxels (`scene.voxels.csv`,
//! `scene.json`) and a manifest without inputs. A world case writes the whole world into
//! `cases/NAME/world/` with one file replaced; the case's file is that one.

use super::{Gen, DEMO_HDG, DEMO_START};
use crate::case::{Expect, Kind};

/// The partner world's CRG: 5 rows of 3 long sections (u 0..4 m, v -0.5..0.5 m).
const WORLD_CRG: &str = "$CT\nhostile world CRG\n$\n$ROAD_CRG\nREFERENCE_LINE_INCREMENT = 1.0\nLONG_SECTION_V_INCREMENT = 0.50\n$\n$KD_Definition\n#:LRFI\nD:long section 1,m\nD:long section 2,m\nD:long section 3,m\n$\n$$$$\n 0.0000000 0.0000000 0.0000000\n 0.0000000 0.0111111 0.0000000\n 0.0000000 0.0000000 0.0000000\n 0.0111111 0.0000000 0.0000000\n 0.0000000 0.0000000 0.0111111\n";
const WORLD_VOXELS: &str = "i,j,k,class\n20,100,10,6\n21,100,10,6\n20,101,11,5\n";
const WORLD_SCENE: &str = "{\"origin\": [650000, 239900, 90], \"voxel_size\": 1}\n";
const WORLD_MANIFEST: &str = "{\"inputs\": []}\n";

/// A beam table like the HDL-32E's, with `lasers` lasers.
fn beams(lasers: usize) -> String {
    let mut t = String::from(
        "name = \"hostile\"\nlaser_dt = 1.152e-6\ncycle = 46.08e-6\nfirings_per_block = 1\nmin_range = 1.0\n\
         max_range = 100.0\nrange_step = 0.002\nproduct_id = 0x21\n",
    );
    for i in 0..lasers {
        t.push_str(&format!("[[lasers]]\nelevation = {}\n", -30.0 + i as f64 * 40.0 / lasers.max(1) as f64));
    }
    t
}

/// A trajectory CSV along the demo road's start, 10 m/s for `secs` s, a row every 0.1 s.
fn trajectory(secs: f64) -> String {
    let mut t = String::from("time,x,y,z,roll,pitch,heading\n");
    let (c, s) = (DEMO_HDG.cos(), DEMO_HDG.sin());
    for k in 0..=(secs * 10.0).round() as usize {
        let u = k as f64;
        t.push_str(&format!(
            "{:.1},{:.4},{:.4},{:.4},0,0.02,{DEMO_HDG}\n",
            1000.0 + 0.1 * u,
            DEMO_START[0] + u * c,
            DEMO_START[1] + u * s,
            DEMO_START[2] + 0.02 * u
        ));
    }
    t
}

impl Gen {
    pub(super) fn sensors(&mut self, demo: &str) -> Result<(), String> {
        let world: [(&str, &[u8]); 5] = [
            ("road.xodr", demo.as_bytes()),
            ("demo.crg", WORLD_CRG.as_bytes()),
            ("scene.voxels.csv", WORLD_VOXELS.as_bytes()),
            ("scene.json", WORLD_SCENE.as_bytes()),
            ("manifest.json", WORLD_MANIFEST.as_bytes()),
        ];
        for (f, b) in world {
            self.write(&format!("partners/world/{f}"), b)?;
        }
        self.beam_cases()?;
        self.camera_cases()?;
        self.path_cases()?;
        self.world_cases(&world)
    }

    fn beam_cases(&mut self) -> Result<(), String> {
        let (ok, fail) = (Expect::Ok, Expect::Fail);
        let seed = beams(32);
        let head = beams(0);
        let one = "[[lasers]]\nelevation = 0\n";
        let with = |from: &str, to: &str| seed.replacen(from, to, 1);
        let mut cases: Vec<(&str, String, Expect)> = vec![
            ("seed", seed.clone(), ok),
            ("vlp16-like", beams(16).replacen("firings_per_block = 1", "firings_per_block = 2", 1), ok),
            ("empty", String::new(), fail),
            ("name-missing", with("name = \"hostile\"\n", ""), fail),
            ("name-number", with("name = \"hostile\"", "name = 7"), fail),
            ("name-empty", with("name = \"hostile\"", "name = \"\""), fail),
            ("name-control", with("name = \"hostile\"", "name = \"a\\u0007b\""), fail),
            ("lasers-missing", head.clone(), fail),
            ("lasers-empty", format!("{head}lasers = []\n"), fail),
            ("lasers-number", format!("{head}lasers = 3\n"), fail),
            ("laser-number", format!("{head}lasers = [1, 2]\n"), fail),
            ("lasers-129", beams(129), fail),
            ("lasers-100000", format!("{head}lasers = [{}]\n", vec!["{elevation = 0}"; 100_000].join(",")), fail),
            ("elevation-nan", format!("{head}[[lasers]]\nelevation = nan\n"), fail),
            ("elevation-inf", format!("{head}[[lasers]]\nelevation = -inf\n"), fail),
            ("elevation-91", format!("{head}[[lasers]]\nelevation = 91\n"), fail),
            ("elevation-string", format!("{head}[[lasers]]\nelevation = \"up\"\n"), fail),
            ("elevation-missing", format!("{head}[[lasers]]\nazimuth = 1\n"), fail),
            ("azimuth-1e9", format!("{head}[[lasers]]\nelevation = 0\nazimuth = 1e9\n"), fail),
            ("laser-unknown-key", format!("{head}[[lasers]]\nelevation = 0\nring = 3\n"), fail),
            ("unknown-key", format!("rpm = 600\n{seed}"), fail),
            ("laser-dt-0", with("laser_dt = 1.152e-6", "laser_dt = 0"), fail),
            ("laser-dt-nan", with("laser_dt = 1.152e-6", "laser_dt = nan"), fail),
            ("cycle-short", with("cycle = 46.08e-6", "cycle = 1e-6"), fail),
            ("cycle-negative", with("cycle = 46.08e-6", "cycle = -46.08e-6"), fail),
            ("cycle-huge", with("cycle = 46.08e-6", "cycle = 1e300"), fail),
            ("firings-per-block-0", with("firings_per_block = 1", "firings_per_block = 0"), fail),
            ("firings-per-block-1e9", with("firings_per_block = 1", "firings_per_block = 1000000000"), fail),
            (
                "blocks-per-firing-5",
                with("firings_per_block = 1", "firings_per_block = 1\nblocks_per_firing = 5"),
                fail,
            ),
            ("max-below-min", with("max_range = 100.0", "max_range = 0.5"), fail),
            ("max-range-inf", with("max_range = 100.0", "max_range = inf"), fail),
            ("range-step-tiny", with("range_step = 0.002", "range_step = 0.0001"), fail),
            ("product-id-256", with("product_id = 0x21", "product_id = 256"), fail),
            ("product-id-negative", with("product_id = 0x21", "product_id = -1"), fail),
            // 64 lasers a firing do not fit the 32-channel packet --pcap writes.
            ("lasers-64-pcap", beams(64), fail),
            ("syntax-error", with("cycle = 46.08e-6", "cycle = = 3"), fail),
            ("duplicate-key", format!("cycle = 1e-3\n{seed}"), fail),
            ("deep-arrays", format!("x = {}{}\n", "[".repeat(100_000), "]".repeat(100_000)), fail),
            ("one-laser-pcap", format!("{head}{one}"), fail),
        ];
        cases.push((
            "sixteen-azimuths",
            beams(16)
                .replacen("firings_per_block = 1", "firings_per_block = 2", 1)
                .replace("elevation = -30\n", "elevation = -30\nazimuth = -360\n"),
            ok,
        ));
        for (n, text, e) in cases {
            self.add(Kind::Beams, &format!("beams/{n}"), "toml", text.as_bytes(), e)?;
        }
        let mut b = seed.clone().into_bytes();
        b[3] = 0xFF;
        self.add(Kind::Beams, "beams/non-utf8", "toml", &b, fail)?;
        self.add(Kind::Beams, "beams/binary", "toml", &[0x00, 0x01, 0xFF, 0xFE, 0x0A], fail)?;
        self.random(Kind::Beams, "beams", "toml", beams(4).as_bytes(), 10, true)
    }

    fn camera_cases(&mut self) -> Result<(), String> {
        let (ok, fail) = (Expect::Ok, Expect::Fail);
        let seed = "width = 32\nheight = 24\nhfov = 90\n[distortion]\nmodel = \"brown-conrady\"\nk1 = -0.1\n[mount]\nz = 1.5\npitch = -5\n";
        let with = |from: &str, to: &str| seed.replacen(from, to, 1);
        let cases: Vec<(&str, String, Expect)> = vec![
            ("seed", seed.to_string(), ok),
            ("fisheye", with("brown-conrady\"\nk1 = -0.1", "equidistant\"\nk4 = 0.01"), ok),
            ("intrinsics", with("hfov = 90", "fx = 20\nfy = 21\ncx = 15.5\ncy = 11.5"), ok),
            ("empty", String::new(), fail),
            ("width-0", with("width = 32", "width = 0"), fail),
            ("width-16385", with("width = 32", "width = 16385"), fail),
            ("width-negative", with("width = 32", "width = -32"), fail),
            ("width-float", with("width = 32", "width = 32.5"), fail),
            ("width-missing", with("width = 32\n", ""), fail),
            ("fx-and-hfov", with("hfov = 90", "hfov = 90\nfx = 20"), fail),
            ("no-focal", with("hfov = 90\n", ""), fail),
            ("fx-nan", with("hfov = 90", "fx = nan"), fail),
            ("fx-0", with("hfov = 90", "fx = 0"), fail),
            ("hfov-180", with("hfov = 90", "hfov = 180"), fail),
            ("cx-inf", with("hfov = 90", "hfov = 90\ncx = inf"), fail),
            ("model-unknown", with("brown-conrady", "kannala"), fail),
            ("model-missing", with("model = \"brown-conrady\"\n", ""), fail),
            ("distortion-number", "width = 32\nheight = 24\nhfov = 90\ndistortion = 3\n".into(), fail),
            ("k1-1e9", with("k1 = -0.1", "k1 = -1e9"), fail),
            ("mount-z-1e9", with("z = 1.5", "z = 1e9"), fail),
            ("mount-pitch-nan", with("pitch = -5", "pitch = nan"), fail),
            ("mount-unknown-key", with("z = 1.5", "z = 1.5\nheight = 3"), fail),
            ("unknown-key", format!("sensor = \"cmos\"\n{seed}"), fail),
            ("syntax-error", with("hfov = 90", "hfov = = 90"), fail),
            ("deep-arrays", format!("x = {}{}\n", "[".repeat(100_000), "]".repeat(100_000)), fail),
        ];
        for (n, text, e) in cases {
            self.add(Kind::Camera, &format!("camera/{n}"), "toml", text.as_bytes(), e)?;
        }
        let mut b = seed.as_bytes().to_vec();
        b[2] = 0xFF;
        self.add(Kind::Camera, "camera/non-utf8", "toml", &b, fail)?;
        self.add(Kind::Camera, "camera/binary", "toml", &[0x00, 0x01, 0xFF, 0xFE, 0x0A], fail)?;
        self.random(Kind::Camera, "camera", "toml", seed.as_bytes(), 8, true)
    }

    fn path_cases(&mut self) -> Result<(), String> {
        let (ok, fail, any) = (Expect::Ok, Expect::Fail, Expect::Any);
        let seed = trajectory(1.0);
        let h = "time,x,y,z,roll,pitch,heading\n";
        let rows: Vec<&str> = seed.lines().skip(1).collect();
        let with_row = |k: usize, row: &str| {
            let mut r = rows.clone();
            r[k] = row;
            format!("{h}{}\n", r.join("\n"))
        };
        let r0 = rows[0];
        let cases: Vec<(&str, String, Expect)> = vec![
            ("seed", seed.clone(), ok),
            (
                "survey-columns",
                seed.replacen("heading\n", "heading,pass\n", 1).replace('\n', ",1\n").replacen(",1\n", "\n", 1),
                ok,
            ),
            (
                "columns-reordered",
                format!(
                    "heading,time,x,y,z,roll,pitch,extra\n{DEMO_HDG},0,{},{},{},0,0,a\n{DEMO_HDG},1,{},{},{},0,0,b\n",
                    DEMO_START[0],
                    DEMO_START[1],
                    DEMO_START[2],
                    DEMO_START[0] + 9.4,
                    DEMO_START[1] + 3.4,
                    DEMO_START[2]
                ),
                ok,
            ),
            ("far-away", trajectory(1.0).replace("650", "950"), any),
            ("empty", String::new(), fail),
            ("header-only", h.into(), fail),
            ("one-row", format!("{h}{r0}\n"), fail),
            ("no-heading-column", seed.replacen("heading", "yaw", 1), fail),
            ("no-header", format!("{}\n", rows.join("\n")), fail),
            ("time-backwards", with_row(5, rows[2]), fail),
            ("time-repeated", with_row(1, r0), fail),
            ("x-nan", with_row(3, "1000.3,nan,239996,100,0,0,0.35"), fail),
            ("z-inf", with_row(3, "1000.3,650012,239996,inf,0,0,0.35"), fail),
            ("x-text", with_row(3, "1000.3,east,239996,100,0,0,0.35"), fail),
            ("time-empty", with_row(3, ",650012,239996,100,0,0,0.35"), fail),
            ("fields-few", with_row(3, "1000.3,650012,239996"), fail),
            ("fields-many", with_row(3, "1000.3,650012,239996,100,0,0,0.35,1,2"), fail),
            ("pitch-vertical", with_row(3, "1000.3,650012,239996,100,0,1.6,0.35"), fail),
            ("roll-degrees", with_row(3, "1000.3,650012,239996,100,20,0,0.35"), fail),
            ("heading-1e300", with_row(3, "1000.3,650012,239996,100,0,0,1e300"), fail),
            ("time-1e300", with_row(3, "1e300,650012,239996,100,0,0,0.35"), any),
            ("header-257-columns", format!("{}\n", vec!["time"; 300].join(",")), fail),
        ];
        for (n, text, e) in cases {
            self.add(Kind::SensorPath, &format!("sensorpath/{n}"), "csv", text.as_bytes(), e)?;
        }
        let mut b = seed.clone().into_bytes();
        b[40] = 0xFF;
        self.add(Kind::SensorPath, "sensorpath/non-utf8", "csv", &b, fail)?;
        self.add(Kind::SensorPath, "sensorpath/binary", "csv", &[0x00, 0x01, 0xFF, 0xFE, 0x0A], fail)?;
        self.random(Kind::SensorPath, "sensorpath", "csv", seed.as_bytes(), 10, true)
    }

    fn world_cases(&mut self, world: &[(&str, &[u8]); 5]) -> Result<(), String> {
        let (ok, fail) = (Expect::Ok, Expect::Fail);
        let xodr = String::from_utf8_lossy(world[0].1).to_string();
        let crg = WORLD_CRG;
        let mut cases: Vec<(&str, &str, Vec<u8>, Expect)> = vec![
            ("seed", "road.xodr", xodr.clone().into_bytes(), ok),
            ("xodr-empty", "road.xodr", Vec::new(), fail),
            ("xodr-truncated", "road.xodr", xodr.as_bytes()[..xodr.len() / 2].to_vec(), fail),
            ("xodr-binary", "road.xodr", vec![0x00, 0xFF, 0x13, 0x37], fail),
            ("xodr-no-road", "road.xodr", strip_roads(&xodr).into_bytes(), fail),
            (
                "xodr-crg-missing",
                "road.xodr",
                xodr.replacen("file=\"demo.crg\"", "file=\"gone.crg\"", 1).into_bytes(),
                fail,
            ),
            ("crg-empty", "demo.crg", Vec::new(), fail),
            ("crg-truncated-header", "demo.crg", crg.as_bytes()[..60].to_vec(), fail),
            ("crg-truncated-data", "demo.crg", crg.as_bytes()[..crg.len() - 20].to_vec(), fail),
            (
                "crg-increment-nan",
                "demo.crg",
                crg.replacen("REFERENCE_LINE_INCREMENT = 1.0", "REFERENCE_LINE_INCREMENT = nan", 1).into_bytes(),
                fail,
            ),
            ("crg-binary", "demo.crg", vec![0x00, 0xFF, 0x13, 0x37, 0x24], fail),
            ("voxels-not-integer", "scene.voxels.csv", b"i,j,k,class\n20,100,ten,6\n".to_vec(), fail),
            ("voxels-no-class", "scene.voxels.csv", b"i,j,k\n20,100,10\n".to_vec(), fail),
            ("voxels-class-300", "scene.voxels.csv", b"i,j,k,class\n20,100,10,300\n".to_vec(), fail),
            ("voxels-empty", "scene.voxels.csv", Vec::new(), fail),
            ("voxels-few-fields", "scene.voxels.csv", b"i,j,k,class\n20,100\n".to_vec(), fail),
            (
                "voxels-huge-index",
                "scene.voxels.csv",
                b"i,j,k,class\n9223372036854775807,100,10,6\n".to_vec(),
                Expect::Any,
            ),
            ("scene-json-broken", "scene.json", b"{\"origin\": [650000,".to_vec(), fail),
            (
                "scene-json-size-0",
                "scene.json",
                b"{\"origin\": [650000, 239900, 90], \"voxel_size\": 0}\n".to_vec(),
                fail,
            ),
            ("scene-json-no-origin", "scene.json", b"{\"voxel_size\": 1}\n".to_vec(), fail),
            ("manifest-broken", "manifest.json", b"{\"inputs\": [".to_vec(), fail),
            (
                "manifest-input-gone",
                "manifest.json",
                b"{\"inputs\": [{\"path\": \"survey/scan.las\"}]}\n".to_vec(),
                fail,
            ),
            ("manifest-input-not-las", "manifest.json", b"{\"inputs\": [{\"path\": \"demo.crg\"}]}\n".to_vec(), fail),
        ];
        cases.push(("manifest-inputs-number", "manifest.json", b"{\"inputs\": 3}\n".to_vec(), ok));
        for (name, file, bytes, e) in cases {
            let name = format!("world/{name}");
            for (f, b) in world.iter() {
                if *f != file {
                    self.aux(&name, &format!("world/{f}"), b)?;
                }
            }
            let rel = format!("cases/{name}/world/{file}");
            self.write(&rel, &bytes)?;
            let mut c = crate::case::Case::file(&name, Kind::World, rel, e);
            // The camera casts the voxels but not the points: the manifest is the lidar's.
            if file == "manifest.json" {
                c.per_verb.push(("camera".into(), ok));
            }
            // The lidar's default roadside is the points (the manifest's inputs), not the voxels.
            if file == "scene.voxels.csv" || file == "scene.json" {
                c.per_verb.push(("lidar".into(), ok));
            }
            if self.cases.iter().any(|k| k.name == c.name) {
                return Err(format!("duplicate case name {}", c.name));
            }
            self.cases.push(c);
        }
        Ok(())
    }
}

/// The file with its `<road>` elements taken out.
fn strip_roads(xodr: &str) -> String {
    let mut out = String::new();
    let mut rest = xodr;
    while let Some(i) = rest.find("<road ") {
        out.push_str(&rest[..i]);
        match rest[i..].find("</road>") {
            Some(j) => rest = &rest[i + j + "</road>".len()..],
            None => return out,
        }
    }
    out.push_str(rest);
    out
}
