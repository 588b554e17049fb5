//! The simulation's inputs: scenario TOML files (`sim --scene demo FILE.toml --duration 0.5`,
//! and `sim --scene demo FILE.toml` for the file's own duration) and saved states for
//! `sim --resume FILE.json` (with the partner scenario `partners/sim.toml`, whose state the
//! seed is).
//!
//! The seed scenario drives lane -1 of the demo scene with a pedestrian crossing and a script;
//! the seed state is that scenario saved after 10 ticks (made in-process with the roadscan
//! library, so it has the state's exact shape).

use super::Gen;
use crate::case::{Expect, Kind};

/// The seed scenario: a route, a driver, a GPS, a pedestrian and a script command for it.
pub const SEED_SCENARIO: &str = "tick = 0.01\nduration = 0.5\nroute = [\"lane:-1\"]\n\n[driver]\ncruise_speed = 8.0\n\n\
[gps]\nrate = 10.0\nsigma_xy = 0.02\nseed = 7\n\n[[actors]]\nid = \"walker\"\nprefab = \"pedestrian\"\nx = 57.5\n\
y = 17.9\nheading = -1.17\nspeed = 1.2\n\n[[script]]\ntime = 0.2\ntarget = \"walker\"\nvariable = \"speed\"\nvalue = 0.5\n";

/// An actor table.
fn actor(id: &str, prefab: &str, x: &str, y: &str) -> String {
    format!("[[actors]]\nid = \"{id}\"\nprefab = \"{prefab}\"\nx = {x}\ny = {y}\n")
}

/// The seed state: the seed scenario on the demo scene after 10 ticks, as `sim --save-at 10`
/// writes it.
fn seed_state() -> Result<String, String> {
    use roadscan::simulate::{SimWorld, WorldSource, DEFAULT_SCENE_GRID};
    let scenario = toml_scenario(SEED_SCENARIO).ok_or("the seed scenario does not read")?;
    let world = SimWorld::load(&WorldSource::Scene { name: "demo".into(), seed: 1, grid: DEFAULT_SCENE_GRID }, None)
        .map_err(|e| format!("the seed state: {e:#}"))?;
    let surface = world.surface().map_err(|e| format!("the seed state: {e:#}"))?;
    let mut sim = world.simulation(&surface, scenario).map_err(|e| format!("the seed state: {e:#}"))?;
    for _ in 0..10 {
        sim.step();
    }
    sim.save().map_err(|x| format!("the seed state: {x}"))
}

fn toml_scenario(text: &str) -> Option<roadscan::simulate::Scenario> {
    let dir = std::env::temp_dir().join(format!("hostile-seed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).ok()?;
    let f = dir.join("seed.toml");
    std::fs::write(&f, text).ok()?;
    let s = roadscan::simulate::scenario(Some(&f), &[]).ok();
    let _ = std::fs::remove_dir_all(&dir);
    s
}

impl Gen {
    pub(super) fn sim(&mut self) -> Result<(), String> {
        self.write("partners/sim.toml", SEED_SCENARIO.as_bytes())?;
        self.scenario_cases()?;
        self.state_cases()
    }

    fn scenario_cases(&mut self) -> Result<(), String> {
        let (ok, any, fail) = (Expect::Ok, Expect::Any, Expect::Fail);
        let seed = SEED_SCENARIO;
        let with = |extra: &str| format!("{seed}{extra}");
        let set = |key: &str, value: &str| -> String {
            // A top-level key before the first table.
            format!("{key} = {value}\n{}", seed.replacen(&format!("{key} = "), "# was ", 1))
        };
        let mut cases: Vec<(&str, String, Expect)> = vec![
            ("seed", seed.to_string(), ok),
            ("empty", String::new(), ok),
            ("comments-only", "# nothing\n\n# at all\n".into(), ok),
            ("tick-0", set("tick", "0"), fail),
            ("tick-negative", set("tick", "-0.01"), fail),
            ("tick-nan", set("tick", "nan"), fail),
            ("tick-inf", set("tick", "inf"), fail),
            ("tick-string", set("tick", "\"0.01\""), fail),
            ("tick-bool", set("tick", "true"), fail),
            ("tick-array", set("tick", "[0.01]"), fail),
            // 5e11 and 5e307 ticks for half a second: refused, never run.
            ("tick-1e-12", set("tick", "1e-12"), fail),
            ("tick-1e-308", set("tick", "1e-308"), fail),
            ("tick-subnormal", set("tick", "5e-324"), fail),
            // One tick longer than the run: no tick, or refused.
            ("tick-1e308", set("tick", "1e308"), any),
            ("duration-nan", set("duration", "nan"), fail),
            ("duration-inf", set("duration", "inf"), fail),
            ("duration-negative", set("duration", "-1"), fail),
            ("duration-1e308", set("duration", "1e308"), fail),
            ("duration-1e9-tick-1e-5", set("duration", "1e9").replacen("tick = 0.01", "tick = 1e-5", 1), fail),
            ("duration-string", set("duration", "\"20 s\""), fail),
            ("duration-0", set("duration", "0"), ok),
            ("unknown-key", with("no_such_key = 1\n"), fail),
            ("unknown-key-top", format!("durration = 5\n{seed}"), fail),
            ("unknown-key-driver", seed.replacen("cruise_speed", "cruise_sped", 1), fail),
            ("unknown-key-gps", seed.replacen("sigma_xy", "sigma_xyz", 1), fail),
            ("unknown-key-actor", seed.replacen("heading = -1.17", "headin = -1.17", 1), fail),
            ("unknown-key-script", seed.replacen("value = 0.5", "valeu = 0.5", 1), fail),
            ("unknown-table", with("[weather]\nrain = 1\n"), fail),
            ("duplicate-key", format!("tick = 0.01\n{seed}"), fail),
            ("duplicate-table", with("[driver]\ncruise_speed = 3.0\n"), fail),
            ("syntax-error", set("tick", "= 0.01"), fail),
            ("unclosed-string", seed.replacen("\"walker\"\nprefab", "\"walker\nprefab", 1), fail),
            ("route-number", set("route", "5"), fail),
            ("route-bad-leg", set("route", "[\"lane:abc\"]"), fail),
            ("route-no-lane", set("route", "[\"lane:-7\"]"), fail),
            ("route-empty-leg", set("route", "[\"\"]"), fail),
            ("route-huge-lane", set("route", "[\"lane:99999999999\"]"), fail),
            ("duplicate-actor-id", with(&actor("walker", "car", "60", "10")), fail),
            ("actor-id-ego", with(&actor("ego", "car", "60", "10")), fail),
            ("actor-id-empty", with(&actor("", "car", "60", "10")), any),
            ("unknown-prefab", with(&actor("tank", "tank", "60", "10")), fail),
            ("actor-off-road", with(&actor("far", "car", "1e6", "1e6")), fail),
            ("actor-x-nan", with(&actor("n", "car", "nan", "10")), fail),
            ("actor-x-inf", with(&actor("n", "car", "inf", "10")), fail),
            ("actor-x-1e308", with(&actor("n", "car", "1e308", "10")), fail),
            ("actor-x-string", with(&actor("n", "car", "\"60\"", "10")), fail),
            ("actor-missing-x", with("[[actors]]\nid = \"m\"\nprefab = \"car\"\ny = 10\n"), fail),
            ("actor-speed-negative", with(&format!("{}speed = -5\n", actor("n", "car", "60", "10"))), fail),
            ("actor-speed-nan", with(&format!("{}speed = nan\n", actor("n", "car", "60", "10"))), fail),
            ("actor-speed-1e308", with(&format!("{}speed = 1e308\n", actor("n", "car", "60", "10"))), any),
            ("actor-heading-inf", with(&format!("{}heading = inf\n", actor("n", "car", "60", "10"))), fail),
            ("actors-not-array", format!("actors = 5\n{}", seed.replace("[[actors]]", "[[other]]")), fail),
            ("prefab-duplicate-standard", with("[[prefabs]]\nid = \"car\"\nkind = \"car\"\nsize = [4, 2, 1.5]\n"), fail),
            ("prefab-size-0", with("[[prefabs]]\nid = \"flat\"\nkind = \"box\"\nsize = [0, 1, 1]\n"), fail),
            ("prefab-size-nan", with("[[prefabs]]\nid = \"flat\"\nkind = \"box\"\nsize = [nan, 1, 1]\n"), fail),
            ("prefab-size-short", with("[[prefabs]]\nid = \"flat\"\nkind = \"box\"\nsize = [1, 1]\n"), fail),
            ("prefab-size-huge", with("[[prefabs]]\nid = \"wall\"\nkind = \"box\"\nsize = [1e300, 1e300, 1]\n"), any),
            ("prefab-unknown-kind", with("[[prefabs]]\nid = \"t\"\nkind = \"tank\"\nsize = [1, 1, 1]\n"), fail),
            (
                "prefab-duplicate",
                with("[[prefabs]]\nid = \"b\"\nkind = \"box\"\nsize = [1, 1, 1]\n[[prefabs]]\nid = \"b\"\nkind = \"box\"\nsize = [2, 2, 2]\n"),
                fail,
            ),
            ("script-unknown-target", seed.replacen("target = \"walker\"", "target = \"ghost\"", 1), fail),
            ("script-unknown-variable", seed.replacen("variable = \"speed\"", "variable = \"warp\"", 1), fail),
            ("script-value-nan", seed.replacen("value = 0.5", "value = nan", 1), fail),
            ("script-value-inf", seed.replacen("value = 0.5", "value = inf", 1), fail),
            ("script-time-nan", seed.replacen("time = 0.2", "time = nan", 1), fail),
            ("script-time-inf", seed.replacen("time = 0.2", "time = inf", 1), fail),
            ("script-time-negative", seed.replacen("time = 0.2", "time = -5", 1), any),
            ("script-time-1e308", seed.replacen("time = 0.2", "time = 1e308", 1), ok),
            ("script-missing-value", seed.replacen("value = 0.5\n", "", 1), fail),
            ("ego-off-road", with("[ego]\nx = 1e7\ny = 1e7\n"), fail),
            ("ego-x-nan", with("[ego]\nx = nan\ny = 0\n"), fail),
            ("ego-lane-99", format!("{}[ego]\nlane = 99\n", seed.replacen("route = [\"lane:-1\"]\n", "", 1)), fail),
            ("ego-s-1e308", format!("{}[ego]\ns = 1e308\n", seed.replacen("route = [\"lane:-1\"]\n", "", 1)), fail),
            ("ego-speed-negative", with("[ego]\nspeed = -3\n"), fail),
            ("ego-speed-nan", with("[ego]\nspeed = nan\n"), fail),
            ("ego-id-walker", with("[ego]\nid = \"walker\"\n"), fail),
            ("ego-lane-string", with("[ego]\nlane = \"-1\"\n"), fail),
            ("ego-lane-i64", with("[ego]\nlane = 9999999999\n"), fail),
            ("vehicle-wheelbase-0", with("[vehicle]\nwheelbase = 0\n"), fail),
            ("vehicle-length-nan", with("[vehicle]\nlength = nan\n"), fail),
            ("vehicle-width-1e308", with("[vehicle]\nwidth = 1e308\n"), any),
            ("model-unknown-kind", with("[model]\nkind = \"warp\"\n"), fail),
            ("model-drag-nan", with("[model]\ndrag = nan\n"), fail),
            ("driver-cruise-nan", seed.replacen("cruise_speed = 8.0", "cruise_speed = nan", 1), fail),
            ("driver-cruise-negative", seed.replacen("cruise_speed = 8.0", "cruise_speed = -8", 1), fail),
            ("driver-spacing-tiny", seed.replacen("cruise_speed = 8.0", "cruise_speed = 8.0\nspacing = 1e-12", 1), fail),
            ("driver-spacing-0", seed.replacen("cruise_speed = 8.0", "cruise_speed = 8.0\nspacing = 0", 1), fail),
            ("gps-rate-0", seed.replacen("rate = 10.0", "rate = 0", 1), any),
            ("gps-rate-nan", seed.replacen("rate = 10.0", "rate = nan", 1), fail),
            ("gps-rate-huge", seed.replacen("rate = 10.0", "rate = 1e300", 1), any),
            ("gps-rate-negative", seed.replacen("rate = 10.0", "rate = -10", 1), fail),
            ("gps-sigma-negative", seed.replacen("sigma_xy = 0.02", "sigma_xy = -1", 1), fail),
            ("gps-sigma-nan", seed.replacen("sigma_xy = 0.02", "sigma_xy = nan", 1), fail),
            ("gps-sigma-huge", seed.replacen("sigma_xy = 0.02", "sigma_xy = 1e300", 1), any),
            ("gps-seed-negative", seed.replacen("seed = 7", "seed = -7", 1), fail),
            ("gps-utc-nan", seed.replacen("seed = 7", "seed = 7\nutc_start = nan", 1), fail),
            ("gps-utc-1e308", seed.replacen("seed = 7", "seed = 7\nutc_start = 1e308", 1), any),
            ("scene-objects-string", with("scene_objects = \"yes\"\n").replacen("tick = 0.01", "scene_objects = \"yes\"\ntick = 0.01", 1), fail),
            ("deep-arrays", format!("tick = {}{}\n", "[".repeat(100_000), "]".repeat(100_000)), fail),
            ("deep-inline-tables", format!("tick = {}1{}\n", "{a = ".repeat(50_000), "}".repeat(50_000)), fail),
            ("deep-dotted-key", format!("{} = 1\n", vec!["a"; 50_000].join(".")), fail),
            ("deep-table-header", format!("[{}]\nx = 1\n", vec!["ego"; 20_000].join(".")), fail),
            ("nul-bytes", format!("tick = 0.01\0\n{seed}"), fail),
        ];
        // Many actors on the road, every one a distinct id: the run's checks must stay bounded.
        let mut many = seed.to_string();
        for i in 0..20_000 {
            many.push_str(&actor(&format!("a{i}"), "box", &format!("{:.2}", 10.0 + (i % 400) as f64 * 0.5), "10"));
        }
        cases.push(("many-actors", many, any));
        // Huge: 64 MiB of comments around a valid scenario.
        let mut huge = String::with_capacity(64 << 20);
        while huge.len() < 64 << 20 {
            huge.push_str("# padding padding padding padding padding padding padding padding padding padding\n");
        }
        huge.push_str(seed);
        cases.push(("huge-comments", huge, any));
        // 16 MiB of one string value.
        cases.push(("huge-string", format!("{seed}[ego]\nid = \"{}\"\n", "x".repeat(16 << 20)), any));
        for (n, text, e) in cases {
            let c = self.add(Kind::Scenario, &format!("scenario/{n}"), "toml", text.as_bytes(), e)?;
            // `--duration 0.5` wins over the file's duration.
            if matches!(n, "duration-nan" | "duration-inf" | "duration-negative" | "duration-1e308") {
                c.per_verb.push(("sim".into(), ok));
            }
            // 50 000 ticks of 10 µs for `--duration 0.5`.
            if n == "duration-1e9-tick-1e-5" {
                c.per_verb.push(("sim".into(), ok));
            }
        }
        for (i, cut) in [7, 40, 120, seed.len() - 5].into_iter().enumerate() {
            let cut = cut.min(seed.len());
            self.add(Kind::Scenario, &format!("scenario/truncated-{i}"), "toml", &seed.as_bytes()[..cut], Expect::Any)?;
        }
        let mut b = seed.as_bytes().to_vec();
        if let Some(i) = seed.find("walker") {
            b[i + 2] = 0xFF;
        }
        self.add(Kind::Scenario, "scenario/non-utf8", "toml", &b, fail)?;
        let mut b = seed.as_bytes().to_vec();
        b[3] = 0xC3; // a lead byte without its continuation, in a key
        self.add(Kind::Scenario, "scenario/non-utf8-key", "toml", &b, fail)?;
        self.add(Kind::Scenario, "scenario/binary", "toml", &[0x00, 0x01, 0xFF, 0xFE, 0x0A], fail)?;
        self.add(Kind::Scenario, "scenario/bom", "toml", format!("\u{FEFF}{seed}").as_bytes(), any)?;
        self.random(Kind::Scenario, "scenario", "toml", seed.as_bytes(), 12, true)?;
        Ok(())
    }

    fn state_cases(&mut self) -> Result<(), String> {
        let (ok, any, fail) = (Expect::Ok, Expect::Any, Expect::Fail);
        let state = seed_state()?;
        let rep = |from: &str, to: &str| super::replace_once(&state, from, to);
        let mut cases: Vec<(&str, String, Expect)> = vec![
            ("seed", state.clone(), ok),
            ("empty", String::new(), fail),
            ("whitespace", " \n".into(), fail),
            ("null", "null".into(), fail),
            ("array", "[]".into(), fail),
            ("empty-object", "{}".into(), fail),
            ("tick-string", rep("\"tick\":10", "\"tick\":\"10\"")?, fail),
            ("tick-negative", rep("\"tick\":10", "\"tick\":-1")?, fail),
            ("tick-float", rep("\"tick\":10", "\"tick\":10.5")?, fail),
            ("tick-u64-overflow", rep("\"tick\":10", "\"tick\":18446744073709551616")?, fail),
            ("tick-u64-max", rep("\"tick\":10", "\"tick\":18446744073709551615")?, fail),
            ("tick-past-end", rep("\"tick\":10", "\"tick\":51")?, fail),
            ("tick-far-past-end", rep("\"tick\":10", "\"tick\":100000000")?, fail),
            ("tick-at-end", rep("\"tick\":10", "\"tick\":50")?, ok),
            ("tick-0", rep("\"tick\":10", "\"tick\":0")?, ok),
            ("nan-token", rep("\"tick\":10,\"ego\":{\"x\":", "\"tick\":10,\"ego\":{\"x\":NaN,\"was\":")?, fail),
            ("nan-string", rep("\"ego\":{\"x\":", "\"ego\":{\"x\":\"NaN\",\"was\":")?, fail),
            ("infinity-token", rep("\"ego\":{\"x\":", "\"ego\":{\"x\":Infinity,\"was\":")?, fail),
            ("number-1e400", rep("\"ego\":{\"x\":", "\"ego\":{\"x\":1e400,\"was\":")?, fail),
            ("ego-x-null", rep("\"ego\":{\"x\":", "\"ego\":{\"x\":null,\"was\":")?, fail),
            ("ego-x-1e308", rep("\"ego\":{\"x\":", "\"ego\":{\"x\":1e308,\"was\":")?, any),
            ("unknown-key", state.replacen('{', "{\"no_such_key\":1,", 1), any),
            ("script-next-past", rep("\"script_next\":0", "\"script_next\":5")?, fail),
            ("script-next-huge", rep("\"script_next\":0", "\"script_next\":18446744073709551615")?, fail),
            ("gps-last-short", rep("\"gps\":{\"last\":[", "\"gps\":{\"last\":[1,")?, fail),
            (
                "actors-not-array",
                rep("\"actors\":[{", "\"actors\":{\"x\":[{")?.replacen("}],\"contacts\"", "}]},\"contacts\"", 1),
                fail,
            ),
            ("deep-arrays", format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)), fail),
            ("deep-objects", format!("{}1{}", "{\"a\":".repeat(50_000), "}".repeat(50_000)), fail),
        ];
        // The walker twice, and an actor named as the ego.
        if let (Some(a), Some(b)) = (state.find("\"actors\":[{\"id\":\"walker\""), state.find("]},\"contacts\"")) {
            let list = &state[a + "\"actors\":[".len()..b];
            cases.push(("duplicate-actor-ids", format!("{}{list},{list}{}", &state[..a + 10], &state[b..]), fail));
            let ego = list.replacen("\"id\":\"walker\"", "\"id\":\"ego\"", 1);
            cases.push(("actor-id-ego", format!("{}{list},{ego}{}", &state[..a + 10], &state[b..]), fail));
            let renamed = state.replacen("\"id\":\"walker\"", "\"id\":\"stranger\"", 1);
            cases.push(("actor-unknown-to-script", renamed, any));
        }
        if let Some(i) = state.find("\"prefabs\":[") {
            let start = i + "\"prefabs\":[".len();
            if let Some(len) = state[start..].find('}') {
                let first = &state[start..=start + len];
                cases.push(("duplicate-prefab-ids", format!("{}{first},{}", &state[..start], &state[start..]), fail));
            }
        }
        // Huge: the walker 200 000 times (distinct ids) and 64 MiB of whitespace.
        if let (Some(a), Some(b)) = (state.find("\"actors\":[{\"id\":\"walker\""), state.find("]},\"contacts\"")) {
            let list = &state[a + "\"actors\":[".len()..b];
            let mut many = state[..a + 10].to_string();
            for i in 0..200_000 {
                if i > 0 {
                    many.push(',');
                }
                many.push_str(&list.replacen("\"id\":\"walker\"", &format!("\"id\":\"w{i}\""), 1));
            }
            many.push_str(&state[b..]);
            cases.push(("huge-actors", many, any));
        }
        let mut ws = " ".repeat(64 << 20);
        ws.push_str(&state);
        cases.push(("huge-whitespace", ws, ok));
        for (n, text, e) in cases {
            self.add(Kind::SimState, &format!("simstate/{n}"), "json", text.as_bytes(), e)?;
        }
        for (i, cut) in [1, 20, state.len() / 2, state.len() - 1].into_iter().enumerate() {
            self.add(Kind::SimState, &format!("simstate/truncated-{i}"), "json", &state.as_bytes()[..cut], fail)?;
        }
        let mut b = state.as_bytes().to_vec();
        if let Some(i) = state.find("walker") {
            b[i + 1] = 0xFF;
        }
        self.add(Kind::SimState, "simstate/non-utf8", "json", &b, fail)?;
        self.add(Kind::SimState, "simstate/binary", "json", &[0x00, 0x01, 0xFF, 0xFE, 0x0A], fail)?;
        self.random(Kind::SimState, "simstate", "json", state.as_bytes(), 12, true)?;
        Ok(())
    }
}
