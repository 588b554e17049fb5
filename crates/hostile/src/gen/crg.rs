//! OpenCRG cases: the shared samples (or a hand-built LRFI file) truncated and mutated, their
//! text attacked (header keys and values, bad bytes, includes: loops, chains, devices,
//! directories) and their binary data attacked (truncations, trailing bytes, a swapped format,
//! NaN and huge values, random headers).

use super::{replace_once, Gen};
use crate::case::{Expect, Kind};

impl Gen {
    pub(super) fn crg(&mut self) -> Result<(), String> {
        let Some(mini) = self.shared_file("opencrg/crg-txt/handmade_straight_minimalist.crg") else {
            return self.crg_handmade_only();
        };
        let m = String::from_utf8_lossy(&mini).to_string();
        self.crg_text_attacks("crg/mini", &m)?;
        for (label, rel, n) in [
            ("curved", "opencrg/crg-txt/handmade_curved.crg", 10),
            ("straight", "opencrg/crg-txt/handmade_straight.crg", 6),
            ("sloped-opts", "opencrg/crg-txt/handmade_sloped_opts.crg", 6),
        ] {
            if let Some(b) = self.shared_file(rel) {
                self.random(Kind::Crg, &format!("crg/{label}"), "crg", &b, n, true)?;
            }
        }
        // Binary KRBI and KDBI written by our writer from the curved sample.
        if let Ok(crg) = opencrg::read_file(self.shared.join("opencrg/crg-txt/handmade_curved.crg")) {
            for (label, format) in [("krbi", opencrg::Format::Krbi), ("kdbi", opencrg::Format::Kdbi)] {
                let mut b = Vec::new();
                opencrg::write(&crg, format, &mut b).map_err(|e| e.to_string())?;
                self.crg_binary_attacks(&format!("crg/{label}"), &b)?;
            }
        }
        if let Some(b) = self.shared_file("opencrg/crg-bin/belgian_block.crg") {
            let data = b.windows(4).position(|w| w == b"$$$$").unwrap_or(0);
            for c in [data / 2, data + 100] {
                self.add(Kind::Crg, &format!("crg/belgian/truncated-{c}"), "crg", &b[..c], Expect::Fail)?;
            }
            self.random(Kind::Crg, "crg/belgian", "crg", &b, 3, false)?;
        }
        Ok(())
    }

    /// Without the shared samples: the attacks on a CRG written here.
    fn crg_handmade_only(&mut self) -> Result<(), String> {
        self.crg_text_attacks("crg/mini", HANDMADE_CRG)
    }

    fn crg_text_attacks(&mut self, p: &str, m: &str) -> Result<(), String> {
        let any = Expect::Any;
        let fail = Expect::Fail;
        let uinc = "REFERENCE_LINE_INCREMENT = 1.0";
        let vinc = "LONG_SECTION_V_INCREMENT = 0.50";
        let block = "$ROAD_CRG\n";
        let add_key = |k: &str| replace_once(m, block, &format!("{block}{k}\n"));
        let mut edits: Vec<(String, String, Expect)> = Vec::new();
        for (n, v, e) in [
            ("nan", "nan", fail),
            ("0", "0", fail),
            ("1e-300", "1e-300", fail),
            ("neg", "-1.0", any),
            ("inf", "inf", fail),
            ("1e308", "1e308", any),
        ] {
            edits.push((
                format!("u-increment-{n}"),
                replace_once(m, uinc, &format!("REFERENCE_LINE_INCREMENT = {v}"))?,
                e,
            ));
        }
        for (n, v, e) in [
            ("nan", "nan", fail),
            ("0", "0", fail),
            ("1e-300", "1e-300", fail),
            ("inf", "inf", fail),
            ("neg", "-0.5", any),
        ] {
            edits.push((
                format!("v-increment-{n}"),
                replace_once(m, vinc, &format!("LONG_SECTION_V_INCREMENT = {v}"))?,
                e,
            ));
        }
        for (n, k, e) in [
            ("start-phi-inf", "REFERENCE_LINE_START_PHI = inf", fail),
            ("start-phi-nan", "REFERENCE_LINE_START_PHI = nan", fail),
            ("start-phi-1e308", "REFERENCE_LINE_START_PHI = 1e308", any),
            ("start-x-nan", "REFERENCE_LINE_START_X = nan", fail),
            ("start-u-1e308", "REFERENCE_LINE_START_U = 1e308", any),
            ("end-u-1e12", "REFERENCE_LINE_END_U = 1e12", fail),
            ("end-u-before-start", "REFERENCE_LINE_START_U = 10\nREFERENCE_LINE_END_U = -10", fail),
            ("v-right-1e308", "LONG_SECTION_V_RIGHT = -1e308", any),
            ("unknown-key", "NO_SUCH_KEY = 1", any),
            ("key-without-value", "REFERENCE_LINE_START_X =", any),
            ("key-abc", "REFERENCE_LINE_START_Y = abc", fail),
        ] {
            edits.push((n.into(), add_key(k)?, e));
        }
        let data_at = m.find("$$$$").map_or(m.len(), |i| i + m[i..].find('\n').map_or(0, |j| j + 1));
        let (head, data) = m.split_at(data_at);
        let rows: Vec<&str> = data.lines().collect();
        let with_rows = |rows: &[String]| format!("{head}{}\n", rows.join("\n"));
        let rows_s: Vec<String> = rows.iter().map(|r| r.to_string()).collect();
        let mut r = rows_s.clone();
        if let Some(row) = r.get_mut(3) {
            *row = row.replacen(" 0.0000000", " abcdefghi", 1);
        }
        edits.push(("value-abcdefghi".into(), with_rows(&r), fail));
        let mut r = rows_s.clone();
        if let Some(row) = r.get_mut(4) {
            row.truncate(row.len().saturating_sub(10));
        }
        edits.push(("short-row".into(), with_rows(&r), fail));
        let mut r = rows_s.clone();
        if let Some(row) = r.get_mut(4) {
            row.push_str(" 0.0000000");
        }
        edits.push(("long-row".into(), with_rows(&r), fail));
        let mut r = rows_s.clone();
        r.truncate(1);
        edits.push(("one-row".into(), with_rows(&r), any));
        edits.push(("no-rows".into(), head.to_string(), any));
        let mut r = rows_s.clone();
        if let Some(row) = r.get_mut(2) {
            *row = row.replacen(" 0.0000000", "       nan", 1);
        }
        edits.push(("value-nan".into(), with_rows(&r), any));
        let mut r = rows_s.clone();
        if let Some(row) = r.get_mut(2) {
            *row = row.replacen(" 0.0000000", " 1.000e308", 1);
        }
        edits.push(("value-1e308".into(), with_rows(&r), any));
        let long_row = format!("{head}{}\n", " 0.0000000".repeat(1_000_000));
        edits.push(("row-10mb".into(), long_row, fail));
        edits.push(("no-data-marker".into(), m.replace("$$$$", "$"), fail));
        edits.push(("format-unknown".into(), replace_once(m, "#:LRFI", "#:XXXX")?, fail));
        edits.push(("format-missing".into(), replace_once(m, "#:LRFI\n", "")?, fail));
        edits.push(("format-kdbi-on-text".into(), replace_once(m, "#:LRFI", "#:KDBI")?, fail));
        edits.push(("channel-unknown".into(), replace_once(m, "D:long section 1,m", "X:long section 1,m")?, fail));
        let many = (0..100_000).map(|i| format!("D:long section {i},m\n")).collect::<String>();
        edits.push(("channels-100000".into(), replace_once(m, "#:LRFI\n", &format!("#:LRFI\n{many}"))?, fail));
        edits.push((
            "comment-10mb".into(),
            replace_once(m, "$CT\n", &format!("$CT\n{}\n", "c".repeat(10_000_000)))?,
            any,
        ));
        edits.push(("empty".into(), String::new(), fail));
        edits.push(("block-only".into(), "$ROAD_CRG\n".into(), fail));
        for (name, text, e) in edits {
            self.add(Kind::Crg, &format!("{p}/{name}"), "crg", text.as_bytes(), e)?;
        }
        let mut b = m.as_bytes().to_vec();
        if let Some(i) = m.find("CRG file example") {
            b[i] = 0xFF;
        }
        self.add(Kind::Crg, &format!("{p}/non-utf8-comment"), "crg", &b, any)?;
        let mut b = m.as_bytes().to_vec();
        b[data_at + 3] = 0xFF;
        self.add(Kind::Crg, &format!("{p}/non-utf8-data"), "crg", &b, fail)?;
        let mut b = m.as_bytes().to_vec();
        b[data_at + 3] = 0;
        self.add(Kind::Crg, &format!("{p}/nul-in-data"), "crg", &b, fail)?;
        for c in [1, 10, m.find("$ROAD_CRG").unwrap_or(20) + 5, data_at.saturating_sub(3)] {
            self.add(Kind::Crg, &format!("{p}/truncated-{c}"), "crg", &m.as_bytes()[..c], fail)?;
        }
        for c in [data_at + 5, data_at + (m.len() - data_at) / 2] {
            self.add(Kind::Crg, &format!("{p}/truncated-{c}"), "crg", &m.as_bytes()[..c], any)?;
        }
        // Includes: loops, missing files, devices, directories.
        let include = |target: &str| format!("$ROAD_CRG_FILE\n{target}\n$!\n");
        let loop_a = format!("{p}/include-loop");
        self.add(Kind::Crg, &loop_a, "crg", include("b.crg").as_bytes(), fail)?;
        self.aux(&loop_a, "b.crg", include("include-loop.crg").as_bytes())?;
        self.add(Kind::Crg, &format!("{p}/include-self"), "crg", include("include-self.crg").as_bytes(), fail)?;
        self.add(Kind::Crg, &format!("{p}/include-missing"), "crg", include("no-such-file.crg").as_bytes(), fail)?;
        self.add(Kind::Crg, &format!("{p}/include-dev-zero"), "crg", include("/dev/zero").as_bytes(), fail)?;
        self.add(Kind::Crg, &format!("{p}/include-directory"), "crg", include(".").as_bytes(), fail)?;
        self.add(Kind::Crg, &format!("{p}/include-etc-passwd"), "crg", include("/etc/passwd").as_bytes(), fail)?;
        let chain = format!("{p}/include-chain-12");
        self.add(Kind::Crg, &chain, "crg", include("c1.crg").as_bytes(), fail)?;
        for i in 1..12 {
            self.aux(&chain, &format!("c{i}.crg"), include(&format!("c{}.crg", i + 1)).as_bytes())?;
        }
        self.aux(&chain, "c12.crg", m.as_bytes())?;
        self.random(Kind::Crg, p, "crg", m.as_bytes(), 12, true)?;
        Ok(())
    }

    fn crg_binary_attacks(&mut self, p: &str, b: &[u8]) -> Result<(), String> {
        let marker = b.windows(4).position(|w| w == b"$$$$").unwrap_or(0);
        let data = marker + b[marker..].iter().position(|&c| c == b'\n').map_or(0, |i| i + 1);
        let head = String::from_utf8_lossy(&b[..data]).to_string();
        let tail = &b[data..];
        let seed = self.add(Kind::Crg, &format!("{p}/seed"), "crg", b, Expect::Ok)?;
        // xodr surveys the 10 m partner survey with this CRG linked: what the survey cannot
        // find there (a side without marking lines) is a finding, exit 1, the road written.
        seed.per_verb.push(("xodr".into(), Expect::Any));
        for c in [data / 2, data, data + 1, data + tail.len() / 2] {
            self.add(Kind::Crg, &format!("{p}/truncated-{c}"), "crg", &b[..c], Expect::Fail)?;
        }
        // The data are padded to 80-byte records: the last byte may be padding.
        self.add(Kind::Crg, &format!("{p}/truncated-{}", b.len() - 1), "crg", &b[..b.len() - 1], Expect::Any)?;
        let mut extra = b.to_vec();
        extra.extend_from_slice(&[0u8; 7]);
        self.add(Kind::Crg, &format!("{p}/trailing-bytes"), "crg", &extra, Expect::Any)?;
        let swapped = if head.contains("KRBI") { head.replace("KRBI", "KDBI") } else { head.replace("KDBI", "KRBI") };
        let mut d = swapped.into_bytes();
        d.extend_from_slice(tail);
        self.add(Kind::Crg, &format!("{p}/format-swapped"), "crg", &d, Expect::Fail)?;
        for (n, key, v, e) in [
            ("u-increment-nan", "reference_line_increment", "nan", Expect::Fail),
            ("u-increment-1e-300", "reference_line_increment", "1e-300", Expect::Fail),
            ("end-u-1e12", "reference_line_end_u", "1e12", Expect::Fail),
            ("start-phi-inf", "reference_line_start_phi", "inf", Expect::Fail),
        ] {
            let lower = head.to_ascii_lowercase();
            if let Some(i) = lower.find(key) {
                let eol = i + head[i..].find('\n').unwrap_or(0);
                let mut d = format!("{}{} = {v}{}", &head[..i], &head[i..i + key.len()], &head[eol..]).into_bytes();
                d.extend_from_slice(tail);
                self.add(Kind::Crg, &format!("{p}/{n}"), "crg", &d, e)?;
            }
        }
        let mut d = b.to_vec();
        for x in d.iter_mut().skip(data) {
            *x = 0xFF; // NaN in either precision
        }
        self.add(Kind::Crg, &format!("{p}/all-nan"), "crg", &d, Expect::Any)?;
        let mut d = b.to_vec();
        for (i, x) in d.iter_mut().skip(data).enumerate() {
            *x = if i % 4 == 0 { 0x7F } else { 0x7F - (i % 2) as u8 }; // huge finite values
        }
        self.add(Kind::Crg, &format!("{p}/huge-values"), "crg", &d, Expect::Any)?;
        for i in 0..4 {
            let mut d = b.to_vec();
            let at = self.rng.below(data.max(1));
            d[at] = self.rng.next_u64() as u8;
            self.add(Kind::Crg, &format!("{p}/random-header-{i}"), "crg", &d, Expect::Any)?;
        }
        self.random(Kind::Crg, p, "crg", b, 6, false)?;
        Ok(())
    }
}

/// A minimal LRFI file, the seed of the text attacks when the shared samples are missing.
const HANDMADE_CRG: &str = "$CT\nhostile hand-built CRG file example\n$\n$ROAD_CRG\nREFERENCE_LINE_INCREMENT = 1.0\nLONG_SECTION_V_INCREMENT = 0.50\n$\n$KD_Definition\n#:LRFI\nD:long section 1,m\nD:long section 2,m\nD:long section 3,m\n$\n$$$$\n 0.0000000 0.0000000 0.0000000\n 0.0000000 0.0111111 0.0000000\n 0.0000000 0.0000000 0.0000000\n 0.0111111 0.0000000 0.0000000\n 0.0000000 0.0000000 0.0111111\n";
