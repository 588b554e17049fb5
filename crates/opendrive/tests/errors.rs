//! Bad input gives an error that names the file, the line and the column, never a panic. One
//! case per file in `data/opendrive/err/`.

#![allow(clippy::panic, clippy::unwrap_used)] // tests and benches fail loudly

use opendrive::ErrorKind;
use std::path::PathBuf;

fn err_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/opendrive/err")
}

/// (file, expected line, expected column, a piece of the message, kind check)
fn case(file: &str, line: u32, column: u32, message: &str, kind: fn(&ErrorKind) -> bool) {
    let path = err_dir().join(file);
    let err = opendrive::read_file(&path).expect_err(file);
    let text = err.to_string();
    assert!(kind(err.kind()), "{file}: unexpected kind {:?}", err.kind());
    let pos = err.position().unwrap_or_else(|| panic!("{file}: no position in {text}"));
    assert_eq!((pos.line, pos.column), (line, column), "{file}: {text}");
    assert!(text.starts_with(&format!("{}:{line}:{column}: ", path.display())), "{file}: {text}");
    assert!(text.contains(message), "{file}: '{text}' lacks '{message}'");
}

#[test]
fn malformed_xml() {
    case("malformed_xml.xodr", 8, 3, "malformed XML", |k| matches!(k, ErrorKind::Xml(_)));
}

#[test]
fn missing_required_attribute() {
    case("missing_attribute.xodr", 6, 7, "<geometry> lacks required attribute 'length'", |k| {
        matches!(k, ErrorKind::MissingAttribute { attribute: "length", .. })
    });
}

#[test]
fn nan_is_rejected() {
    case("nan_value.xodr", 6, 7, "y=\"NaN\": not a finite number", |k| matches!(k, ErrorKind::InvalidAttribute { .. }));
}

#[test]
fn negative_length_is_rejected() {
    case("negative_length.xodr", 6, 7, "length=\"-10\": must not be negative", |k| {
        matches!(k, ErrorKind::InvalidAttribute { .. })
    });
}

#[test]
fn s_going_backwards_is_rejected() {
    case("s_backwards.xodr", 7, 7, "s=0 is less than the previous record's s=10", |k| {
        matches!(k, ErrorKind::DescendingS { .. })
    });
}

#[test]
fn unknown_geometry_is_rejected() {
    case("unknown_geometry.xodr", 6, 7, "no line, arc, spiral, poly3 or paramPoly3 child (found <circle>)", |k| {
        matches!(k, ErrorKind::UnknownGeometry(_))
    });
}

#[test]
fn truncated_file() {
    let path = err_dir().join("truncated.xodr");
    let err = opendrive::read_file(&path).expect_err("truncated");
    assert!(matches!(err.kind(), ErrorKind::Xml(_)), "{err}");
    assert!(err.position().is_some() && err.to_string().contains("truncated.xodr:"), "{err}");
}

#[test]
fn wrong_root_element() {
    case("not_opendrive.xodr", 2, 1, "root element is <OpenSCENARIO>", |k| matches!(k, ErrorKind::NotOpenDrive { .. }));
}

#[test]
fn bad_number() {
    case("bad_number.xodr", 4, 3, "length=\"ten\": not a number", |k| matches!(k, ErrorKind::InvalidAttribute { .. }));
}

#[test]
fn missing_file_names_the_file() {
    let err = opendrive::read_file("/nonexistent/x.xodr").expect_err("missing");
    assert!(err.to_string().starts_with("/nonexistent/x.xodr: "), "{err}");
}

#[test]
fn every_prefix_of_a_real_file_errors_or_reads_without_panic() {
    // Cut a small valid file at every byte: each prefix must give Ok or Err, never panic.
    let text =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/opendrive/demo.xodr"))
            .expect("demo");
    for cut in (0..text.len()).filter(|&i| text.is_char_boundary(i)) {
        let _ = opendrive::read(&text[..cut]);
    }
}

#[test]
fn writing_nan_is_an_error_naming_the_place() {
    let text =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/opendrive/demo.xodr"))
            .expect("demo");
    let mut odr = opendrive::read(&text).expect("demo reads");
    odr.roads[0].plan_view.geometries[1].hdg = f64::NAN;
    let err = opendrive::write(&odr, &Default::default()).expect_err("NaN");
    let msg = err.to_string();
    assert!(
        msg.contains(&format!("road {}", odr.roads[0].id)) && msg.contains("geometry 1") && msg.contains("hdg is NaN"),
        "{msg}"
    );
}
