//! `roadscan camera` over the world a demo build makes: the frames' files and sizes, the road's
//! depth where the camera's height and a ray's angle put it, and errors as one line.

use roadscan_tests::Scratch;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_roadscan")).args(args).stdin(Stdio::null()).output().expect("run roadscan")
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// (width, height, colour type, bit depth, pixels) of a PNG.
fn png(path: &Path) -> (u32, u32, png::ColorType, png::BitDepth, Vec<u8>) {
    let dec = png::Decoder::new(std::fs::File::open(path).expect("a frame PNG"));
    let mut r = dec.read_info().expect("png header");
    let mut buf = vec![0; r.output_buffer_size()];
    let info = r.next_frame(&mut buf).expect("png data");
    buf.truncate(info.buffer_size());
    (info.width, info.height, info.color_type, info.bit_depth, buf)
}

#[test]
fn frames_of_the_demo_world() {
    let d = Scratch::new("cli-camera");
    let world = d.join("demo");
    let o = run(&["demo", "--out", s(&world), "-q"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = d.join("frames");
    let o =
        run(&["camera", "--world", s(&world), "--duration", "0.2", "--fps", "10", "--out", s(&out), "--json", "-q"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON summary");
    assert_eq!((summary["frames"].as_u64(), summary["width"].as_u64()), (Some(2), Some(640)));
    use png::{BitDepth::*, ColorType::*};
    for k in 0..2 {
        for (name, colour, depth) in [
            ("rgb", Rgb, Eight),
            ("depth", Grayscale, Sixteen),
            ("class", Grayscale, Eight),
            ("instance", Grayscale, Sixteen),
        ] {
            let (w, h, c, b, _) = png(&out.join(format!("frames/{k:06}_{name}.png")));
            assert_eq!((w, h, c, b), (640, 480, colour, depth), "{k} {name}");
        }
    }
    assert!(!out.join("frames/000002_rgb.png").exists(), "0.2 s at 10 fps: frames at 0 and 0.1 s");
    let cam: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("camera.json")).expect("camera.json")).expect("JSON");
    let k = &cam["intrinsics"];
    let (fy, cy, z) =
        (k["fy"].as_f64().expect("fy"), k["cy"].as_f64().expect("cy"), cam["mount"]["z"].as_f64().expect("z"));
    assert!((fy - 320.0).abs() < 1e-9 && cy == 239.5 && z == 1.6, "90 degrees across 640 px, 1.6 m up: {fy} {cy} {z}");
    let frames = cam["frames"].as_array().expect("frames");
    assert_eq!(frames.len(), 2);
    assert!((frames[1]["time"].as_f64().expect("time") - 0.1).abs() < 1e-12);
    // 10 m/s for 0.1 s: the camera moved 1 m.
    let p = |f: &serde_json::Value| {
        f["camera"]["position"].as_array().expect("p").iter().map(|x| x.as_f64().expect("x")).collect::<Vec<_>>()
    };
    let (a, b) = (p(&frames[0]), p(&frames[1]));
    let moved = ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt();
    assert!((moved - 1.0).abs() < 0.01, "{moved}");
    // Straight ahead and down: row 300 looks atan(60.5 / 320) below the horizon, so a level
    // camera 1.6 m above the road sees it at z = 1.6 * 320 / 60.5 = 8.46 m (5 % for the road's
    // grade and crossfall and the CRG's texture).
    for k in 0..2 {
        let (_, _, _, _, depth) = png(&out.join(format!("frames/{k:06}_depth.png")));
        let (_, _, _, _, class) = png(&out.join(format!("frames/{k:06}_class.png")));
        let at = |col: usize, row: usize| {
            u16::from_be_bytes([depth[2 * (row * 640 + col)], depth[2 * (row * 640 + col) + 1]])
        };
        let want = z * fy / (300.0 - cy);
        let got = at(320, 300) as f64 / 1000.0;
        assert!((got - want).abs() < 0.05 * want, "frame {k}: road at {got} m, expected {want} m");
        assert!([11, 64].contains(&class[300 * 640 + 320]), "the road (or a marking) below the horizon");
        // Nearer rows see nearer road.
        assert!(at(320, 470) < at(320, 300) && at(320, 300) < at(320, 260));
    }
    let coco: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("coco.json")).expect("coco.json")).expect("JSON");
    assert_eq!(coco["images"].as_array().expect("images").len(), 2);
    assert_eq!(coco["images"][1]["file_name"], "frames/000001_rgb.png");
    assert!(coco["categories"].as_array().expect("categories").iter().any(|c| c["name"] == "car"));
    // The same run again replaces the directory as a whole.
    let o =
        run(&["camera", "--world", s(&world), "--duration", "0.1", "--fps", "10", "--out", s(&out), "--planes", "-q"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!out.join("frames/000001_rgb.png").exists(), "the old frames are gone");
    let planes = std::fs::read(out.join("frames/000000_rgb.planes")).expect("planes");
    let depth = std::fs::read(out.join("frames/000000_depth.f32")).expect("depth planes");
    assert_eq!((planes.len(), depth.len()), (3 * 640 * 480, 4 * 640 * 480));
}

#[test]
fn bad_arguments_are_one_line_and_write_nothing() {
    let d = Scratch::new("cli-camera-bad");
    let world = d.join("no-world");
    let out = d.join("frames");
    let cam = d.join("cam.toml");
    std::fs::write(&cam, "width = 640\nheight = 480\nhfov = 90\n[distortion]\nmodel = \"fisheye\"\n").expect("write");
    for (args, want) in [
        (vec!["--world", s(&world), "--out", s(&out)], "no road.xodr here"),
        (vec!["--world", s(&world), "--out", s(&out), "--fps", "0"], "--fps 0"),
        (vec!["--world", s(&world), "--out", s(&out), "--path", "road:3"], "expected lane:ID"),
        (vec!["--world", s(&world), "--out", s(&out), "--camera", s(&cam)], "distortion.model"),
    ] {
        let o = run(&[&["camera"][..], &args[..]].concat());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(want), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(!out.exists(), "{args:?}: nothing written");
    }
}
