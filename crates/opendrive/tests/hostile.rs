//! Hostile files: nesting, element floods, absurd lengths and curvatures give typed errors or
//! findings in bounded time and memory, never an abort, a panic or a hang; the sample maps read
//! and check as before.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use opendrive::validate::{check, CheckOptions, Severity};
use opendrive::{Element, ErrorKind, Node};
use std::time::{Duration, Instant};

const HEAD: &str = "<?xml version=\"1.0\"?>\n<OpenDRIVE><header revMajor=\"1\" revMinor=\"6\"/>\n";

/// One road: `geometry` inside the single geometry record, `profiles` after the plan view.
fn road(length: &str, geometry: &str, profiles: &str) -> String {
    format!(
        "<road id=\"1\" length=\"{length}\" junction=\"-1\"><planView><geometry s=\"0\" x=\"0\" y=\"0\" hdg=\"0\" \
         length=\"{length}\">{geometry}</geometry></planView>{profiles}<lanes><laneSection s=\"0\"><center>\
         <lane id=\"0\" type=\"none\"/></center></laneSection></lanes></road>\n"
    )
}

fn file(body: &str) -> String {
    format!("{HEAD}{body}</OpenDRIVE>\n")
}

fn nested(depth: usize) -> String {
    file(&format!("{}<userData>{}{}</userData>", road("100", "<line/>", ""), "<a>".repeat(depth), "</a>".repeat(depth)))
}

#[test]
fn deep_nesting_is_a_typed_error_with_its_place() {
    // 20 000 levels (140 KB) overflowed the stack of every verb before.
    let text = nested(20_000);
    let err = opendrive::read(&text).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Limit(m) if m.contains("nested 257")), "{err}");
    let pos = err.position().unwrap();
    // OpenDRIVE (1) > userData (2) > 254 <a> levels fit; the 255th <a> is level 257.
    let at = text.match_indices("<a>").nth(254).unwrap().0;
    assert_eq!(pos.byte as usize, at, "{err}");
    assert_eq!(pos.line, 4, "{err}");
    assert!(err.to_string().starts_with(&format!("line 4, column {}", pos.column)), "{err}");
    // Exactly the limit reads, and keeps the tree verbatim.
    let odr = opendrive::read(&nested(opendrive::MAX_DEPTH - 2)).unwrap();
    let mut depth = 1;
    let mut e = &odr.extras.elements[0];
    while let Some(c) = e.elements().next() {
        e = c;
        depth += 1;
    }
    assert_eq!(depth, opendrive::MAX_DEPTH - 1, "userData and its <a> levels");
}

#[test]
fn a_deep_tree_built_in_memory_drops_without_recursion() {
    // Far deeper than any thread stack allows for a recursive drop.
    let mut e = Element::new("a");
    for _ in 0..1_000_000 {
        let mut parent = Element::new("a");
        parent.children.push(Node::Element(e));
        e = parent;
    }
    drop(e);
}

#[test]
fn an_element_flood_is_refused_by_the_size_of_the_file() {
    // 2 M empty elements in 10 MB took 325 MB; more than one element per 8 bytes is refused.
    let flood = file(&format!("{}<userData>{}</userData>", road("100", "<line/>", ""), "<a/>\n".repeat(300_000)));
    let err = opendrive::read(&flood).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Limit(m) if m.contains("elements in")), "{err}");
    assert!(err.position().is_some_and(|p| p.line > 3), "{err}");
    // The same count of `<a></a>` lines (8 bytes each) still reads.
    let dense = file(&format!("{}<userData>{}</userData>", road("100", "<line/>", ""), "<a></a>\n".repeat(300_000)));
    let odr = opendrive::read(&dense).unwrap();
    assert_eq!(odr.extras.elements[0].children.len(), 300_000);
}

#[test]
fn absurd_lengths_are_read_errors_naming_the_attribute() {
    for (len, bad) in [("1e308", true), ("1e9", true), ("10000001", true), ("1e7", false)] {
        let r = opendrive::read(&file(&road(len, "<line/>", "")));
        match (r, bad) {
            (Err(e), true) => {
                assert!(
                    matches!(e.kind(), ErrorKind::InvalidAttribute { attribute, .. } if attribute == "length"),
                    "{len}: {e}"
                );
                assert_eq!(e.position().map(|p| p.line), Some(3), "{len}: {e}");
            }
            (Ok(_), false) => {}
            (r, _) => panic!("{len}: {r:?}"),
        }
    }
    let station = file(&road(
        "100",
        "<line/>",
        "<elevationProfile><elevation s=\"-2e7\" a=\"0\" b=\"0\" c=\"0\" d=\"0\"/></elevationProfile>",
    ));
    assert!(opendrive::read(&station).is_err());
}

#[test]
fn an_absurd_spiral_evaluates_in_bounded_time_and_is_an_error_in_check() {
    for curv_end in ["1e300", "1e12", "5e3", "-1e300"] {
        let text = file(&road("100", &format!("<spiral curvStart=\"0\" curvEnd=\"{curv_end}\"/>"), ""));
        let odr = opendrive::read(&text).unwrap();
        let t = Instant::now();
        let ev = opendrive::RoadEval::new(&odr.roads[0]);
        for i in 0..=100 {
            let p = ev.pose(i as f64);
            assert!(p.x.is_finite() && p.y.is_finite(), "{curv_end}: {p:?}");
            // The curve never leaves the disc its length reaches.
            assert!(p.x.hypot(p.y) <= i as f64 + 1e-9, "{curv_end}: {p:?}");
        }
        let d = check(&odr, &CheckOptions::default());
        // Before: hours for a curvEnd of 1e12, never for 1e300.
        assert!(t.elapsed() < Duration::from_secs(5), "{curv_end}: {:?}", t.elapsed());
        assert!(
            d.iter().any(|d| d.severity == Severity::Error && d.implausible && d.message.contains("curvature")),
            "{curv_end}: {d:?}"
        );
    }
}

#[test]
fn implausible_profiles_and_widths_are_findings() {
    let profiles = "<elevationProfile><elevation s=\"0\" a=\"0\" b=\"0.4\" c=\"0\" d=\"0\"/></elevationProfile>\
        <lateralProfile><superelevation s=\"0\" a=\"-0.9075712\" b=\"0\" c=\"0\" d=\"0\"/>\
        <superelevation s=\"50\" a=\"1.6\" b=\"0\" c=\"0\" d=\"0\"/></lateralProfile>";
    let mut text = file(&road("100", "<line/>", profiles));
    text = text.replace(
        "<center>",
        "<right><lane id=\"-1\" type=\"driving\"><width sOffset=\"0\" a=\"3\" b=\"0.05\" c=\"0\" d=\"0\"/></lane></right><center>",
    );
    let odr = opendrive::read(&text).unwrap();
    let d = check(&odr, &CheckOptions::default());
    let find =
        |sev: Severity, what: &str| d.iter().any(|x| x.severity == sev && x.implausible && x.message.contains(what));
    // -52°: a warning (banked tracks exist); 1.6 rad: the surface is on edge, an error.
    assert!(find(Severity::Warning, "superelevation -0.9076"), "{d:#?}");
    assert!(find(Severity::Error, "superelevation 1.6000"), "{d:#?}");
    assert!(find(Severity::Warning, "grade 40.0 %"), "{d:#?}");
    // 3 m + 0.05·s reaches 6 m at s = 60 and 8 m at the end.
    assert!(find(Severity::Warning, "lane -1 is 8.000 m wide"), "{d:#?}");
}

#[roadscan_tests::needs_shared_data]
#[test]
fn sample_maps_read_and_get_no_implausibility_errors() {
    let maps = roadscan_tests::sample_maps();
    for path in &maps {
        let odr = opendrive::read_file(path).unwrap_or_else(|e| panic!("{e}"));
        let d = check(&odr, &CheckOptions::default());
        let new_errors: Vec<_> = d.iter().filter(|x| x.implausible && x.severity == Severity::Error).collect();
        assert!(new_errors.is_empty(), "{}: {new_errors:#?}", path.display());
    }
}
