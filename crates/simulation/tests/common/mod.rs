//! Roads and grids built for the tests.
#![allow(dead_code)]

/// An OpenDRIVE file of one road: `geometry` the `<geometry>` elements, a constant grade and
/// superelevation, lanes -1 and 1 of 3.5 m, and `objects` (XML) in `<objects>`.
pub fn road_xml(length: f64, geometry: &str, grade: f64, superelevation: f64, objects: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<OpenDRIVE>
  <header revMajor="1" revMinor="6" name="test" version="1">
    <offset x="650000" y="240000" z="100" hdg="0"/>
  </header>
  <road name="t" length="{length}" id="1" junction="-1">
    <planView>{geometry}</planView>
    <elevationProfile><elevation s="0" a="0" b="{grade}" c="0" d="0"/></elevationProfile>
    <lateralProfile><superelevation s="0" a="{superelevation}" b="0" c="0" d="0"/></lateralProfile>
    <lanes>
      <laneSection s="0">
        <left><lane id="1" type="driving" level="false"><width sOffset="0" a="3.5" b="0" c="0" d="0"/></lane></left>
        <center><lane id="0" type="none" level="false"/></center>
        <right><lane id="-1" type="driving" level="false"><width sOffset="0" a="3.5" b="0" c="0" d="0"/></lane></right>
      </laneSection>
    </lanes>
    <objects>{objects}</objects>
  </road>
</OpenDRIVE>"#
    )
}

/// A straight road along x from the origin.
pub fn straight(length: f64, grade: f64, superelevation: f64, objects: &str) -> opendrive::OpenDrive {
    let g = format!(r#"<geometry s="0" x="0" y="0" hdg="0" length="{length}"><line/></geometry>"#);
    opendrive::read(&road_xml(length, &g, grade, superelevation, objects)).expect("straight road")
}

/// Line 30 m, arc of radius 60 m over 120 m (turning left by 2 rad), line 50 m.
pub fn arc_road() -> opendrive::OpenDrive {
    let k = 1.0 / 60.0;
    let (h1, x1, y1) = (2.0f64, 30.0 + 60.0 * 2.0f64.sin(), 60.0 - 60.0 * 2.0f64.cos());
    let g = format!(
        r#"<geometry s="0" x="0" y="0" hdg="0" length="30"><line/></geometry>
<geometry s="30" x="30" y="0" hdg="0" length="120"><arc curvature="{k}"/></geometry>
<geometry s="150" x="{x1}" y="{y1}" hdg="{h1}" length="50"><line/></geometry>"#
    );
    opendrive::read(&road_xml(200.0, &g, 0.0, 0.0, "")).expect("arc road")
}

/// The repository's demo road (clothoids, arc, grade, crossfall).
pub fn demo_road() -> opendrive::OpenDrive {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/opendrive/demo.xodr");
    opendrive::read_file(path).expect("demo.xodr")
}

/// A flat CRG with a flat-bottomed pothole `depth` m deep over u in [u0, u1], v in [v0, v1]
/// (grid 0..40 m by 5 cm, v -3..3 m by 5 cm).
pub fn pothole_crg(depth: f64, u: (f64, f64), v: (f64, f64)) -> opencrg::Crg {
    let (du, nu, v_right, dv, nv) = (0.05, 801, -3.0, 0.05, 121);
    let mut z = Vec::with_capacity(nu * nv);
    for iu in 0..nu {
        for iv in 0..nv {
            let (uu, vv) = (iu as f64 * du, v_right + iv as f64 * dv);
            let inside = uu >= u.0 - 1e-9 && uu <= u.1 + 1e-9 && vv >= v.0 - 1e-9 && vv <= v.1 + 1e-9;
            z.push(if inside { -depth as f32 } else { 0.0 });
        }
    }
    opencrg::Crg::new_grid(0.0, du, nu, v_right, dv, nv, (0.0, 0.0, 0.0), None, z)
}

/// The link of a CRG from s0 to s1, attached, no offsets.
pub fn link(s0: f64, s1: f64) -> world::CrgLink {
    world::CrgLink { s_start: s0, s_end: s1, same: true, on_surface: true, t_offset: 0.0, z_offset: 0.0, z_scale: 1.0 }
}
