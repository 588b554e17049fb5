//! Axis source cases: polyline CSVs, GeoJSON, trajectory CSVs and OSM files, each edited into
//! named bad variants, given bytes that are not UTF-8, and mutated at random.

use super::{Gen, DEMO_HDG, DEMO_START};
use crate::case::{Expect, Kind};

impl Gen {
    pub(super) fn polyline(&mut self) -> Result<(), String> {
        let good = "x,y,z\n0,0,100\n10,1,100.1\n20,3,100.2\n30,6,100.3\n40,10,100.4\n";
        let any = Expect::Any;
        let fail = Expect::Fail;
        let cases: Vec<(&str, String, Expect)> = vec![
            ("seed", good.into(), any),
            ("nan", good.replace("10,1,", "nan,1,"), fail),
            ("inf", good.replace("20,3,", "20,inf,"), fail),
            ("1e308", good.replace("20,3,", "1e308,3,"), any),
            ("one-vertex", "x,y\n0,0\n".into(), fail),
            ("no-vertex", "x,y\n".into(), fail),
            ("empty", String::new(), fail),
            ("duplicates", "x,y\n0,0\n0,0\n0,0\n0,0\n".into(), fail),
            ("duplicate-pair", "x,y\n0,0\n10,0\n10,0\n20,0\n".into(), any),
            ("no-header", "0,0\n10,1\n20,3\n30,6\n".into(), any),
            ("one-column", "x\n1\n2\n3\n".into(), fail),
            ("text-value", good.replace("30,6,", "thirty,6,"), fail),
            ("binary-junk", String::from_utf8_lossy(&[0x00, 0xFF, 0x13, 0x37, 0x0A, 0x80, 0x2C, 0x31]).into(), fail),
            ("back-and-forth", "x,y\n0,0\n10,0\n0,0\n10,0\n".into(), any),
            ("huge-jump", "x,y\n0,0\n1e15,0\n".into(), any),
            ("tiny-steps", (0..50_000).map(|i| format!("{},0\n", i as f64 * 1e-9)).collect(), any),
            ("many-vertices", (0..200_000).map(|i| format!("{},{}\n", i, (i as f64 * 0.01).sin())).collect(), any),
            ("long-line", format!("x,y\n0,0\n{}\n", "1,".repeat(5_000_000)), any),
            ("semicolon-decimal-comma", "x;y\n0,5;1,5\n10,5;2,5\n".into(), any),
        ];
        for (n, text, e) in cases {
            self.add(Kind::Polyline, &format!("polyline/{n}"), "csv", text.as_bytes(), e)?;
        }
        let mut b = good.as_bytes().to_vec();
        b[8] = 0xFF;
        self.add(Kind::Polyline, "polyline/non-utf8", "csv", &b, fail)?;
        self.random(Kind::Polyline, "polyline", "csv", good.as_bytes(), 6, true)?;
        Ok(())
    }

    pub(super) fn geojson(&mut self) -> Result<(), String> {
        let line = |coords: &str| {
            format!(
                r#"{{"type":"Feature","geometry":{{"type":"LineString","coordinates":{coords}}},"properties":{{}}}}"#
            )
        };
        let good = line("[[19.05,47.50],[19.0505,47.5003],[19.051,47.5007],[19.0515,47.5012]]");
        let any = Expect::Any;
        let fail = Expect::Fail;
        let cases: Vec<(&str, String, Expect)> = vec![
            ("seed", good.clone(), any),
            ("nan", good.replace("19.0505", "NaN"), fail),
            ("lat-1e308", good.replace("47.5003", "1e308"), fail),
            ("lat-91", good.replace("47.5003", "91"), fail),
            ("one-vertex", line("[[19.05,47.5]]"), fail),
            ("empty-coordinates", line("[]"), fail),
            ("coordinate-strings", line(r#"[["a","b"],["c","d"]]"#), fail),
            ("coordinate-one-number", line("[[19.05],[19.06]]"), fail),
            ("point-not-line", r#"{"type":"Point","coordinates":[19,47]}"#.into(), fail),
            ("empty", String::new(), fail),
            ("not-json", "this is not json".into(), fail),
            ("truncated", good[..good.len() / 2].to_string(), fail),
            ("deep-nesting-100000", format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)), fail),
            ("deep-coordinates", line(&format!("{}[19.05,47.5]{}", "[".repeat(50_000), "]".repeat(50_000))), fail),
            ("big-number", good.replace("19.0505", &"9".repeat(400)), fail),
            (
                "many-vertices",
                line(&format!(
                    "[{}]",
                    (0..100_000)
                        .map(|i| format!("[{},{}]", 19.0 + i as f64 * 1e-6, 47.5))
                        .collect::<Vec<_>>()
                        .join(",")
                )),
                any,
            ),
            ("feature-collection-empty", r#"{"type":"FeatureCollection","features":[]}"#.into(), fail),
        ];
        for (n, text, e) in cases {
            self.add(Kind::Geojson, &format!("geojson/{n}"), "geojson", text.as_bytes(), e)?;
        }
        self.random(Kind::Geojson, "geojson", "geojson", good.as_bytes(), 6, true)?;
        Ok(())
    }

    pub(super) fn trajectory(&mut self) -> Result<(), String> {
        let mut good = String::from("time,x,y,z,pass\n");
        let (c, s) = (DEMO_HDG.cos(), DEMO_HDG.sin());
        for i in 0..=40 {
            let u = i as f64 * 0.5;
            good.push_str(&format!(
                "{},{:.4},{:.4},{:.4},1\n",
                i as f64 * 0.05,
                DEMO_START[0] + u * c,
                DEMO_START[1] + u * s,
                DEMO_START[2] + 2.2 + 0.02 * u
            ));
        }
        let any = Expect::Any;
        let fail = Expect::Fail;
        let rows: Vec<&str> = good.lines().collect();
        let cases: Vec<(&str, String, Expect)> = vec![
            ("seed", good.clone(), any),
            ("no-header", rows[1..].join("\n"), fail),
            ("header-only", "time,x,y,z,pass\n".into(), fail),
            ("one-row", format!("{}\n{}\n", rows[0], rows[1]), fail),
            ("nan", good.replacen(",1\n", ",1\nnan,nan,nan,nan,1\n", 1), fail),
            ("inf", good.replacen(",1\n", ",1\n0,inf,0,0,1\n", 1), fail),
            ("short-row", good.replacen(",1\n", ",1\n0,1\n", 1), fail),
            ("duplicates", format!("{}\n{}", rows[0], format!("{}\n", rows[1]).repeat(40)), fail),
            ("wrong-columns", good.replacen("time,x,y,z,pass", "a,b,c,d,e", 1), fail),
            ("pass-missing", good.replace(",1\n", ",2\n"), any),
            ("binary-junk", String::from_utf8_lossy(&[0x00, 0xFF, 0x0A, 0x80, 0x2C, 0x31, 0x0A]).into(), fail),
            ("empty", String::new(), fail),
            ("far-jump", good.replacen(",1\n", ",1\n0.01,1e12,1e12,0,1\n", 1), any),
        ];
        for (n, text, e) in cases {
            self.add(Kind::Trajectory, &format!("trajectory/{n}"), "csv", text.as_bytes(), e)?;
        }
        self.random(Kind::Trajectory, "trajectory", "csv", good.as_bytes(), 6, true)?;
        Ok(())
    }

    pub(super) fn osm(&mut self) -> Result<(), String> {
        let node = |id: u32, lat: &str, lon: &str| format!(r#"  <node id="{id}" lat="{lat}" lon="{lon}"/>"#);
        let way = |refs: &[u32]| {
            let nd: String = refs.iter().map(|r| format!(r#"<nd ref="{r}"/>"#)).collect();
            format!(r#"  <way id="1">{nd}<tag k="highway" v="residential"/></way>"#)
        };
        let doc =
            |body: &str| format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<osm version=\"0.6\">\n{body}\n</osm>\n");
        let nodes =
            [node(1, "47.5000", "19.0500"), node(2, "47.5003", "19.0505"), node(3, "47.5007", "19.0510")].join("\n");
        let good = doc(&format!("{nodes}\n{}", way(&[1, 2, 3])));
        let any = Expect::Any;
        let fail = Expect::Fail;
        let cases: Vec<(&str, String, Expect)> = vec![
            ("seed", good.clone(), any),
            ("missing-node", doc(&format!("{nodes}\n{}", way(&[1, 2, 99]))), fail),
            ("no-way", doc(&nodes), fail),
            ("lat-nan", good.replace("47.5003", "nan"), fail),
            ("lat-1e308", good.replace("47.5003", "1e308"), fail),
            ("lon-abc", good.replace("19.0505", "abc"), fail),
            ("one-node-way", doc(&format!("{nodes}\n{}", way(&[1]))), fail),
            ("same-node-twice", doc(&format!("{nodes}\n{}", way(&[1, 1]))), fail),
            ("truncated", good[..good.len() / 2].to_string(), fail),
            ("empty", String::new(), fail),
            ("not-xml", "node 1 47 19".into(), fail),
            ("deep-nesting-100000", doc(&format!("{}{}", "<a>".repeat(100_000), "</a>".repeat(100_000))), any),
            (
                "nodes-1000000",
                doc(&(0..1_000_000).map(|i| format!("<node id=\"{i}\" lat=\"47\" lon=\"19\"/>")).collect::<String>()),
                fail,
            ),
            (
                "billion-laughs",
                {
                    let mut s = String::from("<?xml version=\"1.0\"?>\n<!DOCTYPE osm [\n <!ENTITY a \"aaaaaaaaaa\">\n");
                    for i in 1..=9 {
                        let prev = if i == 1 { "a".to_string() } else { format!("a{}", i - 1) };
                        s.push_str(&format!(" <!ENTITY a{i} \"{}\">\n", format!("&{prev};").repeat(10)));
                    }
                    s.push_str("]>\n");
                    s + &good[good.find("<osm").unwrap_or(0)..].replacen("residential", "&a9;", 1)
                },
                any,
            ),
        ];
        for (n, text, e) in cases {
            self.add(Kind::Osm, &format!("osm/{n}"), "osm", text.as_bytes(), e)?;
        }
        let mut b = good.as_bytes().to_vec();
        if let Some(i) = good.find("residential") {
            b[i] = 0xFF;
        }
        self.add(Kind::Osm, "osm/non-utf8", "osm", &b, any)?;
        self.random(Kind::Osm, "osm", "osm", good.as_bytes(), 6, true)?;
        Ok(())
    }
}
