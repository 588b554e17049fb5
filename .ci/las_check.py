#!/usr/bin/env python3
"""CI gate for the virtual survey: read our scan.las / scan.laz with laspy and check what a user
of the data relies on. Usage: las_check.py [--classes 5,6,...] [--single] SURVEY_DIR [SURVEY_DIR ...]

Per file: LAS 1.4, point format 6, 1 mm scales; more than a million points, as many as the
header says; bounds inside the header bounds and within 2 km of EOV 650000 / 240000 (where synth
puts the road's start); the CRS a WKT VLR that pyproj reads as HD72 / EOV (EPSG:23700) with the
WKT bit set; GPS time non-decreasing within each pass (point source id) and the passes in time
order; the expected classes present (default the demo's: 5, 6, 11, 64, 65, 66, 67 and 68); LAS
and LAZ of the same survey identical (unless --single).
"""

import argparse
import sys

import laspy
import numpy as np


def check(path: str, expected: set) -> laspy.LasData:
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
    assert 648_000 < h.mins[0] < h.maxs[0] < 652_000 and 238_000 < h.mins[1] < h.maxs[1] < 242_000, f"{path}: bounds {h.mins} {h.maxs}"
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
    assert expected <= classes, f"{path}: classes {sorted(classes)}, expected {sorted(expected)}"
    print(f"ok {path}: {n} points, passes {np.unique(f.point_source_id).tolist()}, classes {sorted(classes)}, CRS {crs.name}")
    return f


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--classes", default="5,6,11,64,65,66,67,68")
    ap.add_argument("--single", action="store_true", help="one survey, no LAS/LAZ pair")
    args = ap.parse_args()
    expected = {int(c) for c in args.classes.split(",")}
    datas = []
    for d in args.dirs:
        for name in ("scan.las", "scan.laz"):
            try:
                open(f"{d}/{name}", "rb").close()
            except OSError:
                continue
            datas.append(check(f"{d}/{name}", expected))
    if args.single:
        assert datas, "no survey found"
        print("las-check: PASS")
        return 0
    assert len(datas) >= 2, "expected a LAS and a LAZ survey"
    a, b = datas[0], datas[1]
    for dim in ("X", "Y", "Z", "gps_time", "intensity", "classification", "point_source_id", "scan_angle"):
        assert np.array_equal(np.asarray(a[dim]), np.asarray(b[dim])), f"LAS and LAZ differ in {dim}"
    print("las-check: PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
