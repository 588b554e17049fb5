//! Converting a sample map to 1.8, 1.7 or 1.6 changes only what the revision forbids: every road
//! evaluates the same before and after (reference line, elevation, superelevation, lane
//! borders, every 0.5 m, bit for bit), and the written file reads back to the upgraded model.

#![allow(clippy::panic, clippy::unwrap_used)] // tests and benches fail loudly

use opendrive::{RoadEval, Version, WriteOptions};

#[roadscan_tests::needs_shared_data]
#[test]
fn conversion_keeps_every_road_identical() {
    let maps = roadscan_tests::sample_maps();
    if maps.is_empty() {
        return;
    }
    for (path, version) in maps.iter().flat_map(|p| [Version::V1_8, Version::V1_7, Version::V1_6].map(|v| (p, v))) {
        let original = opendrive::read_file(path).unwrap_or_else(|e| panic!("{e}"));
        let mut upgraded = original.clone();
        let notes = opendrive::convert::upgrade(&mut upgraded, version);
        let text = opendrive::write(&upgraded, &WriteOptions { version }).expect("write");
        let back = opendrive::read(&text).expect("read back");
        upgraded.header.rev_minor = version.minor();
        assert_eq!(back, upgraded, "{}", path.display());
        assert_eq!(original.roads.len(), back.roads.len());
        for (a, b) in original.roads.iter().zip(&back.roads) {
            let (ea, eb) = (RoadEval::new(a), RoadEval::new(b));
            let n = (a.length / 0.5).ceil() as usize;
            for i in 0..=n {
                let s = (i as f64 * 0.5).min(a.length);
                assert_eq!(ea.pose(s), eb.pose(s), "{} road {} s {s}", path.display(), a.id);
                assert_eq!(ea.sth_to_xyz(s, 1.5, 0.2), eb.sth_to_xyz(s, 1.5, 0.2));
                assert_eq!(
                    ea.lane_borders(s),
                    eb.lane_borders(s),
                    "{} road {} s {s}; notes {notes:?}",
                    path.display(),
                    a.id
                );
            }
        }
    }
}
