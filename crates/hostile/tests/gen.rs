//! The corpus is a pure function of its seed and large enough.

use std::path::{Path, PathBuf};

/// A directory removed when the test ends, also when it fails.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let p = std::env::temp_dir().join(format!("hostile-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        Scratch(p)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).map(|r| r.display().to_string()).unwrap_or_default();
                out.push((rel, std::fs::read(&p).unwrap_or_default()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn gen_is_deterministic_and_makes_at_least_300_cases_of_every_kind() {
    let repo = hostile::gen::default_repo();
    let shared = hostile::gen::default_shared(&repo);
    let (a, b) = (Scratch::new("gen-a"), Scratch::new("gen-b"));
    let opts = |dir: &Path| hostile::gen::Options {
        dir: dir.to_path_buf(),
        repo: repo.clone(),
        shared: shared.clone(),
        seed: 1,
    };
    let ca = hostile::gen::generate(&opts(&a.0)).expect("gen a");
    let cb = hostile::gen::generate(&opts(&b.0)).expect("gen b");
    assert_eq!(ca, cb);
    let (fa, fb) = (files(&a.0), files(&b.0));
    assert_eq!(fa.len(), fb.len());
    for (x, y) in fa.iter().zip(&fb) {
        assert!(x == y, "{} differs between two runs", x.0);
    }
    assert!(ca.len() >= 300, "{} cases", ca.len());
    for kind in hostile::case::Kind::ALL {
        assert!(ca.iter().any(|c| c.kind == kind), "no {kind:?} case");
    }
    // The manifest lists the cases, and every file case's file is there.
    let manifest = std::fs::read_to_string(a.0.join("manifest.tsv")).expect("manifest");
    assert_eq!(hostile::case::read_manifest(&manifest).expect("parses"), ca);
    for c in &ca {
        if let Some(f) = &c.file {
            assert!(a.0.join(f).is_file(), "{f} missing");
        }
    }
    // Another seed changes the random mutants, not the named attacks.
    let c = Scratch::new("gen-c");
    let cc = hostile::gen::generate(&hostile::gen::Options { seed: 2, ..opts(&c.0) }).expect("gen c");
    assert_eq!(cc.len(), ca.len());
    assert_ne!(files(&c.0), fa);
    if std::env::var_os("CI").is_some() {
        assert!(shared.is_dir(), "CI needs the shared data at {}", shared.display());
    }
}
