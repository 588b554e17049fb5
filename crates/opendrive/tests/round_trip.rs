//! Every sample map reads, and read -> write -> read gives an equal model, for every revision
//! we write.

#![allow(clippy::panic, clippy::unwrap_used)] // tests and benches fail loudly

use opendrive::{Version, WriteOptions};

#[roadscan_tests::needs_shared_data]
#[test]
fn every_sample_map_round_trips() {
    for path in roadscan_tests::sample_maps() {
        let odr = opendrive::read_file(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(!odr.roads.is_empty(), "{}: no roads", path.display());
        for version in [Version::V1_8, Version::V1_7, Version::V1_6] {
            let text =
                opendrive::write(&odr, &WriteOptions { version }).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let back = opendrive::read(&text).unwrap_or_else(|e| panic!("{} rewritten: {e}", path.display()));
            assert_eq!(back.header.rev_minor, version.minor());
            let mut expected = odr.clone();
            expected.header.rev_minor = version.minor();
            if back != expected {
                // Find the first differing road for a readable message.
                for (a, b) in expected.roads.iter().zip(&back.roads) {
                    assert_eq!(a, b, "{}: road {} differs after round trip", path.display(), a.id);
                }
                assert_eq!(expected, back, "{}: differs after round trip", path.display());
            }
            // Writing is deterministic and idempotent.
            let again = opendrive::write(&back, &WriteOptions { version }).expect("write");
            assert_eq!(text, again, "{}: second write differs", path.display());
        }
    }
}

#[test]
fn numbers_are_written_shortest_and_exact() {
    for x in [0.1, 1.0 / 3.0, 1e-7, -2.5e-300, 123456.789, 1e16, 5e-324, f64::MAX, -0.0] {
        let s = opendrive::format_f64(x);
        assert_eq!(s.parse::<f64>().expect("parses"), x, "{s}");
        assert!(s.len() <= 24, "{s}");
    }
    assert_eq!(opendrive::format_f64(0.1), "0.1");
    assert_eq!(opendrive::format_f64(1e-7), "1e-7");
}
