"""Checks the GPS of `roadscan sim` against PROJ: every fix's latitude and longitude (the GPS
CSV) equal pyproj's conversion of its map-frame x, y from the map's geoReference within 1 cm,
and the NMEA sentences (checksums valid) carry the same positions to their resolution
(0.00001 minute, under 1 cm of latitude, rounded: 1.2 cm with the longitude).

The conversion is the one the map's geoReference names, as roadscan resolves it (the summary's
`crs_proj`, e.g. EPSG:23700 with its +towgs84 datum shift), so both sides apply the same
datum transformation; PROJ's own choice for the EPSG code is printed for information.

usage: sim_gps_check.py GPS.csv GPS.nmea ROAD.xodr SUMMARY.json
Exits 1 with one line per failed check.
"""
import csv
import json
import math
import re
import sys

from pyproj import CRS, Transformer

from checks import check, done

gps_csv, nmea_path, xodr_path, summary_path = sys.argv[1:5]
summary = json.load(open(summary_path))
geo = re.search(r"<geoReference>\s*(?:<!\[CDATA\[)?(.*?)(?:\]\]>)?\s*</geoReference>", open(xodr_path).read(), re.S)
check(geo is not None, f"{xodr_path}: a geoReference")
geo = geo.group(1).strip() if geo else ""
proj = summary.get("crs_proj")
check(bool(proj), f"the summary names the CRS roadscan used: {proj}")
crs = CRS.from_proj4(proj) if proj else CRS.from_user_input(geo)
to_wgs84 = Transformer.from_crs(crs, CRS.from_epsg(4326), always_xy=True)
by_code = Transformer.from_crs(CRS.from_user_input(geo), CRS.from_epsg(4326), always_xy=True)

rows = list(csv.DictReader(open(gps_csv)))
check(len(rows) >= 10, f"{len(rows)} GPS fixes")
worst, worst_code = 0.0, 0.0
for r in rows:
    x, y = float(r["x"]), float(r["y"])
    lon, lat = to_wgs84.transform(x, y)
    dn = (float(r["latitude"]) - lat) * 111_320.0
    de = (float(r["longitude"]) - lon) * 111_320.0 * math.cos(math.radians(lat))
    worst = max(worst, math.hypot(dn, de))
    lon2, lat2 = by_code.transform(x, y)
    worst_code = max(worst_code, math.hypot((lat2 - lat) * 111_320.0, (lon2 - lon) * 111_320.0 * math.cos(math.radians(lat))))
named = geo if geo == proj else f"{geo} as {proj}"
check(worst <= 0.01, f"latitude/longitude within 1 cm of pyproj ({named}): largest {worst * 1e6:.2f} um")
if geo != proj:
    print(f"info  PROJ's own transformation for {geo} differs from roadscan's by up to {worst_code:.3f} m")


def degrees(value, hemisphere, width):
    d = float(value[:width]) + float(value[width:]) / 60.0
    return -d if hemisphere in "SW" else d


gga = []
bad_sum = 0
for line in open(nmea_path).read().splitlines():
    body, _, given = line[1:].partition("*")
    s = 0
    for b in body.encode():
        s ^= b
    bad_sum += given != f"{s:02X}"
    f = body.split(",")
    if f[0] == "GPGGA":
        gga.append((degrees(f[2], f[3], 2), degrees(f[4], f[5], 3)))
check(bad_sum == 0, f"NMEA checksums ({bad_sum} bad)")
check(len(gga) == len(rows), f"one GGA a fix: {len(gga)} vs {len(rows)}")
worst_nmea = 0.0
for (lat, lon), r in zip(gga, rows):
    dn = (lat - float(r["latitude"])) * 111_320.0
    de = (lon - float(r["longitude"])) * 111_320.0 * math.cos(math.radians(lat))
    worst_nmea = max(worst_nmea, math.hypot(dn, de))
check(worst_nmea <= 0.012, f"GGA positions within their resolution of the CSV: largest {worst_nmea * 1000:.2f} mm")
done()
