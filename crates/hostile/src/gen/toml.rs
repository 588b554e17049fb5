//! Build config cases: TOML files of the shape cli's build config has, with bad keys, types
//! and values.

use super::Gen;
use crate::case::{Expect, Kind, Place};

impl Gen {
    pub(super) fn toml(&mut self) -> Result<(), String> {
        let any = Expect::Any;
        let fail = Expect::Fail;
        // The runner gives --input, --axis and --out on the command line (they win), so these
        // configs are only the hostile part.
        let cases: Vec<(&str, &str, Expect)> = vec![
            ("seed", "tile = 25\nvoxel-size = 1\n", any),
            ("tile-0", "tile = 0\n", fail),
            ("tile-negative", "tile = -5\n", fail),
            ("tile-nan", "tile = nan\n", fail),
            ("tile-inf", "tile = inf\n", fail),
            ("tile-string", "tile = \"25\"\n", fail),
            ("tile-1e-9", "tile = 1e-9\n", fail),
            ("cell-1e-9", "cell = 1e-9\n", fail),
            ("cell-1e308", "cell = 1e308\n", fail),
            ("voxel-size-1e-6", "voxel-size = 1e-6\n", fail),
            ("ribbon-cell-1e-6", "ribbon-cell = 1e-6\n", fail),
            ("buffer-1e9", "buffer = 1e9\n", any),
            ("half-width-over-buffer", "half-width = 60\nbuffer = 50\n", fail),
            ("unknown-key", "no-such-key = 1\n", fail),
            ("input-number", "input = 5\n", fail),
            ("input-table", "[input]\na = 1\n", fail),
            ("s-range-reversed", "s-range = \"10..5\"\n", fail),
            ("s-range-negative", "s-range = \"-5..10\"\n", fail),
            ("s-range-garbage", "s-range = \"abc\"\n", fail),
            ("offset-string", "offset = \"left\"\n", fail),
            ("crs-garbage", "crs = \"EPSG:999999999\"\n", fail),
            ("syntax-error", "tile = = 3\n", fail),
            ("unclosed-string", "crs = \"EPSG:23700\n", fail),
            ("duplicate-key", "tile = 1\ntile = 2\n", fail),
            ("deep-arrays", "", fail),
            ("empty", "", any),
        ];
        for (n, text, e) in cases {
            let text = if n == "deep-arrays" {
                format!("x = {}{}\n", "[".repeat(100_000), "]".repeat(100_000))
            } else {
                text.to_string()
            };
            let c = self.add(Kind::Toml, &format!("toml/{n}"), "toml", text.as_bytes(), e)?;
            if matches!(
                n,
                "buffer-1e9" | "tile-1e-9" | "cell-1e-9" | "voxel-size-1e-6" | "ribbon-cell-1e-6" | "cell-1e308"
            ) {
                c.place = Place::File;
            }
        }
        let mut b = b"tile = 25\ncrs = \"EPSG:23700\"\n".to_vec();
        b[17] = 0xFF;
        self.add(Kind::Toml, "toml/non-utf8", "toml", &b, fail)?;
        self.add(Kind::Toml, "toml/binary", "toml", &[0x00, 0x01, 0xFF, 0xFE, 0x0A], fail)?;
        self.random(
            Kind::Toml,
            "toml",
            "toml",
            b"tile = 25\nvoxel-size = 1\nbuffer = 40\nhalf-width = 8\ns-range = \"0..20\"\n",
            6,
            true,
        )?;
        Ok(())
    }
}
