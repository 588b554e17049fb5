//! The camera over worlds whose images are known: distortion inverses that round-trip, a wall
//! and a box at known distances, COCO boxes, files, and the same bytes at any thread count.

use roadscan_tests::Scratch;
use sensors::camera::{self, boxes, coco_json, render, Frame};
use sensors::{Camera, Distortion, Intrinsics};
use world::{MaterialTable, Part, Pose, Tag, TriMesh, World, V3};

/// The quads (four corners each) of an axis-aligned box.
fn box_quads(lo: V3, hi: V3) -> Vec<[V3; 4]> {
    let c = |i: usize| {
        [
            if i & 1 == 0 { lo[0] } else { hi[0] },
            if i & 2 == 0 { lo[1] } else { hi[1] },
            if i & 4 == 0 { lo[2] } else { hi[2] },
        ]
    };
    [[0, 2, 6, 4], [1, 3, 7, 5], [0, 1, 5, 4], [2, 3, 7, 6], [0, 1, 3, 2], [4, 5, 7, 6]]
        .iter()
        .map(|q| q.map(c))
        .collect()
}

/// A wall facing -x at x = 10 from z = -100 to 3 (facade, class 6), and a box with object id 7
/// (car paint, class 67) from x = 5 to 6, y = 0.5 to 2 (left), z = 1 to 2.25.
fn scene() -> World {
    let m = MaterialTable::standard();
    let wall = Tag { material: m.id_or_first("facade"), class: 6, object: 0 };
    let car = Tag { material: m.id_or_first("car paint"), class: 67, object: 7 };
    let mut quads = vec![([[10.0, -100.0, -100.0], [10.0, 100.0, -100.0], [10.0, 100.0, 3.0], [10.0, -100.0, 3.0]], 0)];
    quads.extend(box_quads([5.0, 0.5, 1.0], [6.0, 2.0, 2.25]).into_iter().map(|q| (q, 1)));
    let mut v = Vec::new();
    let mut f = Vec::new();
    let mut tag_of = Vec::new();
    for (q, t) in quads {
        let k = v.len() as u32;
        v.extend(q);
        f.extend([[k, k + 1, k + 2], [k, k + 2, k + 3]]);
        tag_of.extend([t, t]);
    }
    let mesh = TriMesh::new(&v, &f, vec![wall, car], &tag_of).expect("mesh");
    World::new(vec![Part::Mesh(mesh)], m)
}

/// 64 x 48, 90 degrees across (f = 32 px, centre (31.5, 23.5)), 1.5 m up, level, facing +x.
fn pinhole() -> Camera {
    let k = Intrinsics::from_hfov(90f64.to_radians(), 64, 48);
    Camera::new(k, Pose { position: [0.0, 0.0, 1.5], ..Pose::IDENTITY })
}

#[test]
fn field_of_view_gives_the_focal_length_and_centre() {
    let k = Intrinsics::from_hfov(90f64.to_radians(), 640, 480);
    assert!((k.fx - 320.0).abs() < 1e-9 && (k.fy - 320.0).abs() < 1e-9);
    assert_eq!((k.cx, k.cy), (319.5, 239.5));
    // The image's left edge (u = -0.5) looks 45 degrees to the side.
    let cam = Camera::new(k, Pose::IDENTITY);
    let d = cam.unproject(-0.5, 239.5).expect("ray");
    assert!((d[0].atan2(d[2]).to_degrees() + 45.0).abs() < 1e-9, "{d:?}");
}

/// Every pixel's ray projects back onto its pixel within 1e-6 px, and the distortion moves
/// rays by the amount its formula gives.
fn round_trip(cam: &Camera) {
    let k = cam.intrinsics;
    let rays = cam.rays();
    assert_eq!(rays.valid(), (k.width * k.height) as usize, "every pixel has a ray");
    let mut worst: f64 = 0.0;
    for row in 0..k.height {
        for col in 0..k.width {
            let d = rays.dirs[(row * k.width + col) as usize];
            assert!((d[0] * d[0] + d[1] * d[1] + d[2] * d[2] - 1.0).abs() < 1e-12, "unit ray");
            let (u, v) = cam.project(d).expect("projects");
            worst = worst.max((u - col as f64).hypot(v - row as f64));
        }
    }
    assert!(worst <= 1e-6, "round trip off by {worst} px");
}

#[test]
fn brown_conrady_round_trips_and_matches_its_formula() {
    let mut cam =
        Camera::new(Intrinsics { fx: 500.0, fy: 490.0, cx: 322.0, cy: 236.0, width: 640, height: 480 }, Pose::IDENTITY);
    let (k1, k2, p1, p2, k3) = (-0.28, 0.07, 0.001, -0.0015, 0.01);
    cam.distortion = Distortion::BrownConrady { k1, k2, p1, p2, k3 };
    round_trip(&cam);
    // By hand: (x, y) = (0.4, -0.3) -> r² = 0.25.
    let (x, y, r2): (f64, f64, f64) = (0.4, -0.3, 0.25);
    let radial = 1.0 + k1 * r2 + k2 * r2 * r2 + k3 * r2.powi(3);
    let xd = x * radial + 2.0 * p1 * x * y + p2 * (r2 + 2.0 * x * x);
    let yd = y * radial + p1 * (r2 + 2.0 * y * y) + 2.0 * p2 * x * y;
    let (u, v) = cam.project([x, y, 1.0]).expect("projects");
    assert!((u - (500.0 * xd + 322.0)).abs() < 1e-9 && (v - (490.0 * yd + 236.0)).abs() < 1e-9);
    // A corner pixel's ray is well away from the pinhole's (barrel distortion widens the view).
    let d = cam.unproject(0.0, 0.0).expect("ray");
    let pin = (d[0] / d[2] * 500.0 + 322.0, d[1] / d[2] * 490.0 + 236.0);
    assert!(pin.0 < -20.0 && pin.1 < -20.0, "{pin:?}");
}

#[test]
fn equidistant_fisheye_round_trips_and_matches_its_formula() {
    let mut cam =
        Camera::new(Intrinsics { fx: 300.0, fy: 300.0, cx: 319.5, cy: 239.5, width: 640, height: 480 }, Pose::IDENTITY);
    let (k1, k2, k3, k4) = (0.05, -0.01, 0.002, -0.0005);
    cam.distortion = Distortion::Equidistant { k1, k2, k3, k4 };
    round_trip(&cam);
    // By hand: 60 degrees off the axis, towards +x.
    let t = 60f64.to_radians();
    let td = t * (1.0 + k1 * t.powi(2) + k2 * t.powi(4) + k3 * t.powi(6) + k4 * t.powi(8));
    let (u, v) = cam.project([t.sin(), 0.0, t.cos()]).expect("projects");
    assert!((u - (300.0 * td + 319.5)).abs() < 1e-9 && (v - 239.5).abs() < 1e-12);
    // The corners see more than 60 degrees off the axis, which no pinhole of this size does.
    let d = cam.unproject(0.0, 0.0).expect("ray");
    assert!(d[2] < 0.5, "{d:?}");
}

#[test]
fn a_lens_that_folds_gives_no_ray_where_it_folds() {
    // Strong pincushion with a negative r⁴ term: r (1 + k1 r² + k2 r⁴) peaks and turns back,
    // so the image's corners have no inverse.
    let mut cam = Camera::new(Intrinsics::from_hfov(120f64.to_radians(), 64, 48), Pose::IDENTITY);
    cam.distortion = Distortion::BrownConrady { k1: 0.0, k2: -0.2, p1: 0.0, p2: 0.0, k3: 0.0 };
    let rays = cam.rays();
    assert!(rays.valid() > 0 && rays.valid() < 64 * 48, "{} of {}", rays.valid(), 64 * 48);
    assert!(rays.dirs[0][0].is_nan(), "the corner has no ray");
    assert!(rays.dirs[24 * 64 + 32][0].is_finite(), "the centre has one");
    let f = render(&scene(), &cam, &rays, &Pose::IDENTITY, 0.0, 1).expect("render");
    assert_eq!(&f.rgb[..3], &camera::NO_RAY_RGB);
    assert!(f.depth[0].is_nan());
}

#[test]
fn depth_class_instance_and_colour_of_a_wall_and_a_box() {
    let world = scene();
    let mut cam = pinhole();
    let s = 0.5f64.sqrt();
    cam.sun = [-s, 0.0, s];
    let rays = cam.rays();
    let f = render(&world, &cam, &rays, &Pose::IDENTITY, 0.0, 2).expect("render");
    let m = world.materials.all();
    let shade = |rgb: [u8; 3], cos: f64| rgb.map(|c| (c as f64 * (0.35 + 0.65 * cos.max(0.0))).round() as u8);
    let facade = shade(m[world.materials.id_or_first("facade").0 as usize].rgb, s);
    let paint = shade(m[world.materials.id_or_first("car paint").0 as usize].rgb, s);
    let (mut wall, mut car, mut sky) = (0, 0, 0);
    for row in 0..48usize {
        for col in 0..64usize {
            let i = row * 64 + col;
            let inside = (19..=28).contains(&col) && (19..=26).contains(&row);
            let rgb = [f.rgb[3 * i], f.rgb[3 * i + 1], f.rgb[3 * i + 2]];
            if inside {
                car += 1;
                assert!((f.depth[i] as f64 - 5.0).abs() < 1e-6, "({col}, {row}): {}", f.depth[i]);
                assert_eq!((f.class[i], f.instance[i], rgb), (67, 7, paint), "({col}, {row})");
            } else if row >= 19 {
                // The wall's top (z = 3) is 1.5 m above the camera at 10 m: v = 23.5 - 4.8.
                wall += 1;
                assert!((f.depth[i] as f64 - 10.0).abs() < 1e-6, "({col}, {row}): {}", f.depth[i]);
                assert_eq!((f.class[i], f.instance[i], rgb), (6, 0, facade), "({col}, {row})");
            } else {
                sky += 1;
                assert!(f.depth[i].is_nan(), "({col}, {row}): {}", f.depth[i]);
                assert_eq!((f.class[i], f.instance[i], rgb), (0, 0, cam.sky), "({col}, {row})");
            }
        }
    }
    assert_eq!((car, wall, sky), (80, 29 * 64 - 80, 19 * 64));
    let b = boxes(&f);
    assert_eq!(b.len(), 1);
    assert_eq!((b[0].object, b[0].class, b[0].bbox, b[0].area), (7, 67, [19, 19, 10, 8], 80));
}

#[test]
fn depth_is_along_the_optical_axis_for_a_turned_vehicle_and_mount() {
    // The vehicle stands at (20, 3, 0) heading north (+y); the camera, 0.5 m ahead on its
    // mount, is turned 90 degrees left, so it looks west (-x) at the wall's back, 10 m away.
    let world = scene();
    let cam = Camera::new(
        Intrinsics::from_hfov(60f64.to_radians(), 33, 25),
        Pose::from_ypr([0.5, 0.0, 1.5], 90f64.to_radians(), 0.0, 0.0),
    );
    let vehicle = Pose::from_ypr([20.0, 3.0, 0.0], 90f64.to_radians(), 0.0, 0.0);
    let f = render(&world, &cam, &cam.rays(), &vehicle, 0.0, 1).expect("render");
    // f = 16.5 / tan 30° = 28.58 px: row 9 looks 1.05 m up at 10 m, below the wall's top.
    for row in [9usize, 12, 24] {
        for col in [0usize, 16, 32] {
            let i = row * 33 + col;
            assert!((f.depth[i] as f64 - 10.0).abs() < 1e-6, "({col}, {row}): {}", f.depth[i]);
        }
    }
    let eye = vehicle.then(&cam.mount);
    assert!((eye.position[0] - 20.0).abs() < 1e-12 && (eye.position[1] - 3.5).abs() < 1e-12);
    assert!((eye.axes[0][0] + 1.0).abs() < 1e-12, "looks along -x: {:?}", eye.axes[0]);
}

#[test]
fn the_same_bytes_at_any_thread_count() {
    let world = scene();
    let mut cam = Camera::new(
        Intrinsics { fx: 90.0, fy: 92.0, cx: 80.3, cy: 59.1, width: 161, height: 121 },
        Pose::from_ypr([0.2, -0.1, 1.4], 0.05, -0.03, 0.01),
    );
    cam.distortion = Distortion::BrownConrady { k1: -0.2, k2: 0.05, p1: 0.001, p2: 0.0005, k3: 0.0 };
    let rays = cam.rays();
    let pose = Pose::from_ypr([0.3, 0.2, 0.0], 0.1, 0.0, 0.0);
    let bytes = |f: &Frame| {
        let mut b = f.rgb.clone();
        b.extend(f.depth.iter().flat_map(|d| d.to_bits().to_le_bytes()));
        b.extend(&f.class);
        b.extend(f.instance.iter().flat_map(|d| d.to_le_bytes()));
        b
    };
    let one = render(&world, &cam, &rays, &pose, 0.0, 1).expect("render");
    assert!(one.instance.contains(&7) && one.depth.iter().any(|d| d.is_nan()), "sees the box and the sky");
    for threads in [2, 3, 8] {
        let many = render(&world, &cam, &rays, &pose, 0.0, threads).expect("render");
        assert!(bytes(&one) == bytes(&many), "{threads} threads");
    }
}

#[test]
fn coco_json_names_the_box_and_the_categories() {
    let world = scene();
    let cam = pinhole();
    let f = render(&world, &cam, &cam.rays(), &Pose::IDENTITY, 0.0, 1).expect("render");
    // The second frame from 4 m further back: the box is smaller and still whole.
    let back = render(&world, &cam, &cam.rays(), &Pose { position: [-4.0, 0.0, 0.0], ..Pose::IDENTITY }, 0.0, 1)
        .expect("render");
    let text = coco_json(&[("frames/000000_rgb.png", &f), ("frames/000001_rgb.png", &back)]);
    let j: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(j["images"].as_array().expect("images").len(), 2);
    assert_eq!(j["images"][0]["file_name"], "frames/000000_rgb.png");
    assert_eq!((j["images"][1]["id"].as_u64(), j["images"][1]["width"].as_u64()), (Some(2), Some(64)));
    let a = j["annotations"].as_array().expect("annotations");
    assert_eq!(a.len(), 2);
    assert_eq!(a[0]["bbox"], serde_json::json!([19, 19, 10, 8]));
    assert_eq!(
        (a[0]["area"].as_u64(), a[0]["category_id"].as_u64(), a[0]["instance"].as_u64()),
        (Some(80), Some(67), Some(7))
    );
    assert_eq!((a[1]["image_id"].as_u64(), a[1]["id"].as_u64()), (Some(2), Some(2)));
    // From 9 m: y 0.5..2 -> cols 31.5 - 32 y / 9 (24.4..29.7 -> 25..29); z - 1.5 in
    // -0.5..0.75 -> rows 23.5 - 32 (z - 1.5) / 9 (20.8..25.3 -> 21..25).
    assert_eq!(a[1]["bbox"], serde_json::json!([25, 21, 5, 5]));
    let cats = j["categories"].as_array().expect("categories");
    let name = |id: u64| cats.iter().find(|c| c["id"].as_u64() == Some(id)).map(|c| c["name"].clone());
    assert_eq!(name(67), Some("car".into()));
    assert_eq!(name(11), Some("road".into()));
    assert_eq!(cats.len(), 10);
}

#[test]
fn pngs_and_planes_hold_the_images() {
    let world = scene();
    let cam = pinhole();
    let f = render(&world, &cam, &cam.rays(), &Pose::IDENTITY, 0.0, 1).expect("render");
    let d = Scratch::new("sensors-camera-files");
    f.write_pngs(&d, "000000").expect("pngs");
    f.write_planes(&d, "000000").expect("planes");
    let read = |name: &str| {
        let dec = png::Decoder::new(std::fs::File::open(d.join(name)).expect("open"));
        let mut r = dec.read_info().expect("png");
        let mut buf = vec![0; r.output_buffer_size()];
        let info = r.next_frame(&mut buf).expect("frame");
        buf.truncate(info.buffer_size());
        (info.width, info.height, info.color_type, info.bit_depth, buf)
    };
    let (w, h, c, b, rgb) = read("000000_rgb.png");
    assert_eq!((w, h, c, b), (64, 48, png::ColorType::Rgb, png::BitDepth::Eight));
    assert_eq!(rgb, f.rgb);
    let (_, _, c, b, depth) = read("000000_depth.png");
    assert_eq!((c, b), (png::ColorType::Grayscale, png::BitDepth::Sixteen));
    let mm =
        |col: usize, row: usize| u16::from_be_bytes([depth[2 * (row * 64 + col)], depth[2 * (row * 64 + col) + 1]]);
    assert_eq!((mm(0, 0), mm(20, 20), mm(0, 40)), (0, 5000, 10000));
    let (_, _, _, b, class) = read("000000_class.png");
    assert_eq!((b, class[20 * 64 + 20]), (png::BitDepth::Eight, 67));
    let (_, _, _, b, inst) = read("000000_instance.png");
    assert_eq!((b, inst[2 * (20 * 64 + 20)], inst[2 * (20 * 64 + 20) + 1]), (png::BitDepth::Sixteen, 0, 7));
    // Planes: R plane, G plane, B plane, each column-major (index = col * h + row).
    let planes = std::fs::read(d.join("000000_rgb.planes")).expect("planes");
    assert_eq!(planes.len(), 3 * 64 * 48);
    for (col, row) in [(0usize, 0usize), (20, 20), (63, 47), (5, 40)] {
        for ch in 0..3 {
            assert_eq!(planes[ch * 64 * 48 + col * 48 + row], f.rgb[3 * (row * 64 + col) + ch], "({col}, {row}) {ch}");
        }
    }
    let dp = std::fs::read(d.join("000000_depth.f32")).expect("depth planes");
    let at = |col: usize, row: usize| {
        f32::from_le_bytes(dp[4 * (col * 48 + row)..4 * (col * 48 + row) + 4].try_into().expect("4"))
    };
    assert_eq!((at(20, 20), at(0, 40)), (5.0, 10.0));
    assert!(at(0, 0).is_nan());
}
