//! Every OpenCRG sample loads with the sizes the README states.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use std::path::PathBuf;

#[allow(dead_code)]
pub fn samples() -> Vec<PathBuf> {
    let data = roadscan_tests::shared_data();
    let mut out = Vec::new();
    for sub in ["crg-txt", "crg-bin"] {
        for e in std::fs::read_dir(data.join("opencrg").join(sub)).unwrap().flatten() {
            if e.path().extension().is_some_and(|x| x == "crg") {
                out.push(e.path());
            }
        }
    }
    out.sort();
    assert_eq!(out.len(), 18, "the 18 OpenCRG samples");
    out
}

#[roadscan_tests::needs_shared_data]
#[test]
fn every_sample_loads() {
    for p in samples() {
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if name == "testOptionBorderMode.crg" {
            // Its $ROAD_CRG_FILE names ../../../crg-txt/handmade_sloped_opt.crg, which exists
            // nowhere (note "opt"); the C-API cannot load it either.
            let e = opencrg::read_file(&p).unwrap_err().to_string();
            assert!(
                e.contains("testOptionBorderMode.crg:36: $ROAD_CRG_FILE names") && e.contains("does not exist"),
                "{e}"
            );
            continue;
        }
        let crg = opencrg::read_file(&p).unwrap_or_else(|e| panic!("{e}"));
        let (nu, nv) = match name.as_str() {
            "belgian_block.crg" => (1001, 341),
            "handmade_circle.crg" => (25, 7),
            _ => (23, 7),
        };
        assert_eq!((crg.nu, crg.nv()), (nu, nv), "{name}");
        assert_eq!(crg.z.len(), nu * nv);
        eprintln!(
            "{name}: {:?} nu {} nv {} phi {} slope {} bank {} mods {}",
            crg.format,
            crg.nu,
            crg.nv(),
            crg.phi.is_some(),
            crg.slope.is_some(),
            crg.banking.is_some(),
            crg.modifiers.is_some()
        );
    }
}
