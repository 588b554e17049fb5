"""Reads the LAS file of `roadscan lidar --las` with laspy and checks its header, its extra
bytes (by name, through the Extra Bytes VLR that laspy parses) and their values.

usage: las_lidar_check.py OUT.las SUMMARY.json
Exits 1 with one line per failed check.
"""
import json
import sys

import laspy
import numpy as np

from checks import check, done

las_path, summary_path = sys.argv[1:3]
summary = json.load(open(summary_path))


las = laspy.read(las_path)
h = las.header
check((h.version.major, h.version.minor) == (1, 4), f"LAS {h.version}")
check(h.point_format.id == 6, f"point format {h.point_format.id}")
# Global encoding bit 0: adjusted standard GPS time (GPS seconds minus 1e9).
check(h.global_encoding.gps_time_type == laspy.header.GpsTimeType.STANDARD, "adjusted standard GPS time")
check(h.global_encoding.wkt, "WKT CRS bit")
crs = h.parse_crs()
check(crs is not None and "EOV" in crs.name, f"CRS {crs.name if crs else None}")
n = summary["returns"]
check(h.point_count == n == len(las.points), f"{h.point_count} points, {n} returns")

extra = {d.name: d for d in h.point_format.extra_dimensions}
want = {"ring": "u1", "laser": "u1", "azimuth": "u2", "object_id": "u4", "range": "f4", "reflectivity": "f4"}
types = {k: np.dtype(extra[k].dtype).str[1:] if k in extra else None for k in want}
check(types == want, f"extra dimensions {types}")
if types == want:
    raw = las.points.array
    ring, laser, az = raw["ring"], raw["laser"], raw["azimuth"]
    check(ring.min() == 0 and ring.max() == 31, f"ring in {ring.min()}..{ring.max()}")
    check(laser.max() == 31, f"laser in {laser.min()}..{laser.max()}")
    pairs = set(zip(laser.tolist(), ring.tolist()))
    check(len(pairs) == 32, f"each of 32 lasers on one ring ({len(pairs)} pairs)")
    check(az.max() <= 35999, f"azimuth (0.01 deg) in {az.min()}..{az.max()}")
    check(abs(float(np.max(np.asarray(las.azimuth))) - az.max() * 0.01) < 1e-9, "azimuth scaled to degrees by its descriptor")
    r = raw["range"]
    check(r.min() >= 1.0 and r.max() <= 100.0, f"range in {r.min():.3f}..{r.max():.3f} m")
    check(raw["reflectivity"].min() >= 0.0, "reflectivity >= 0")
    # A 10 Hz head: successive firings advance by 0.01 deg * 7.8 or so; one revolution spans 0..359.99.
    check(az.min() < 100 and az.max() > 35900, "the head turns through all azimuths")
# Intensity: the byte times 256; GPS time: 2026-01-01 (the default epoch) is GPS 1,451,260,818.
check(np.all(las.intensity % 256 == 0), "intensity = byte * 256")
t = las.gps_time
check(t.min() >= 451260818.0 and t.max() <= 451260818.0 + summary["sensor_seconds"] + 1e-3,
      f"GPS time {t.min():.6f}..{t.max():.6f}")
check(np.all(np.diff(t) >= -1e-9), "GPS time never goes back")
classes = sorted(int(c) for c in np.unique(las.classification))
check(set(classes) <= set(range(1, 128)), f"classes {classes}")
# Map coordinates: near the demo's EOV placement, the points around a sensor moving 10 m/s.
x, y = las.x, las.y
check(x.min() > 600000 and y.min() > 200000, f"EOV coordinates from ({x.min():.1f}, {y.min():.1f})")
check(x.max() - x.min() < 250 and y.max() - y.min() < 250, "within the sensor's 100 m range of its path")

print(f"las: {h.point_count} points, extra dimensions {', '.join(extra)}")
done()
