"""Decodes a roadscan pcap with velodyne-decoder (model HDL32E, the bundled angles-only
HDL-32E.yml) and checks it against the Velodyne format and against roadscan's own cast ranges.

usage: velodyne_check.py OUT.pcap RANGES.f32 SUMMARY.json
Exits 1 with one line per failed check.
"""
import json
import math
import struct
import sys

import numpy as np
import velodyne_decoder as vd

from checks import check, done

pcap_path, ranges_path, summary_path = sys.argv[1:4]
summary = json.load(open(summary_path))


# 1. The raw frames: every data packet well formed, position packets with valid $GPRMC.
raw = open(pcap_path, "rb").read()
check(raw[:4] == b"\xd4\xc3\xb2\xa1" and struct.unpack_from("<I", raw, 20)[0] == 1, "classic pcap, Ethernet")
at, data, pos, stamps, bad_blocks, bad_nmea = 24, 0, 0, [], 0, 0
while at + 16 <= len(raw):
    incl = struct.unpack_from("<I", raw, at + 8)[0]
    frame = raw[at + 16 : at + 16 + incl]
    at += 16 + incl
    port = struct.unpack_from(">H", frame, 36)[0]
    payload = frame[42:]
    if port == 2368:
        data += 1
        bad_blocks += sum(payload[b * 100 : b * 100 + 2] != b"\xff\xee" for b in range(12))
        bad_blocks += payload[1204:1206] != b"\x37\x21"
        stamps.append(struct.unpack_from("<I", payload, 1200)[0])
    elif port == 8308:
        pos += 1
        s = payload[206:].split(b"\0")[0].decode()
        body, _, tail = s[1:].partition("*")
        x = 0
        for c in body.encode():
            x ^= c
        bad_nmea += not (s.startswith("$GPRMC,") and tail[:2] == "%02X" % x and tail.endswith("\r\n"))
check(len(raw) == at, "records fill the file exactly")
check(data == summary["data_packets"] and data > 0, f"{data} data packets on port 2368 (summary {summary['data_packets']})")
check(bad_blocks == 0, f"every block starts FF EE and every packet ends 37 21 ({bad_blocks} bad)")
d = np.diff(np.array(stamps, dtype=np.int64))
check(len(d) > 0 and abs(d.mean() - 552.96) < 0.01 and d.min() >= 552 and d.max() <= 554, f"packets 552.96 us apart (mean {d.mean():.3f}, {d.min()}..{d.max()})")
rate = 1e6 / d.mean()
check(abs(rate - 1808.45) < 0.5, f"{rate:.2f} data packets a second of sensor time (1,808.45)")
check(pos > 0 and bad_nmea == 0, f"{pos} position packets on port 8308, every $GPRMC checksum valid ({bad_nmea} bad)")

# 2. Decoded by velodyne-decoder.
cfg = vd.Config(model=vd.Model.HDL32E, calibration=vd.get_bundled_calibration("HDL-32E.yml"))
clouds = [np.asarray(p) for _, p in vd.read_pcap(pcap_path, cfg)]
pts = np.concatenate(clouds)
check(len(pts) == summary["returns"], f"{len(pts)} points decoded, {summary['returns']} returns cast")
# A cloud is one revolution (0.1 s at 10 Hz, to within a packet).
spans = [float(c[:, 4].max() - c[:, 4].min()) for c in clouds[1:-1]]
check(len(spans) > 0 and all(abs(s - 0.1) < 0.0012 for s in spans), f"whole clouds span one revolution: {min(spans):.4f}..{max(spans):.4f} s")
per_rev = summary["firings"] / summary["revolutions"]
check(abs(per_rev - 2170.14) < 0.01, f"{per_rev:.2f} firings per revolution at 10 Hz (2,170.14)")
check(abs(summary["data_packets"] / summary["revolutions"] - 180.84) < 0.01, f"{summary['data_packets'] / summary['revolutions']:.2f} packets per revolution (180.84)")
# Elevations by ring: Velodyne's table (rings ranked by elevation).
table = sorted([-30.67, -29.33, -28.00, -26.67, -25.33, -24.00, -22.67, -21.33, -20.00, -18.67, -17.33, -16.00, -14.67, -13.33, -12.00, -10.67,
                -9.33, -8.00, -6.67, -5.33, -4.00, -2.67, -1.33, 0.00, 1.33, 2.67, 4.00, 5.33, 6.67, 8.00, 9.33, 10.67])
x, y, z = (pts[:, i].astype(np.float64) for i in range(3))
elev = np.degrees(np.arctan2(z, np.hypot(x, y)))
ring = pts[:, 6].astype(int)
worst = max(float(np.abs(elev[ring == r] - table[r]).max()) for r in np.unique(ring))
check(worst < 1e-3, f"elevation of every point equals its ring's table angle within 0.001 deg (worst {worst:.2e})")
# Ranges: the decoded points, in order, are roadscan's reported returns in firing order.
ours = np.fromfile(ranges_path, dtype="<f4").reshape(-1, 3)
reported = ours[~np.isnan(ours[:, 1])]
check(len(reported) == len(pts), f"{len(reported)} reported returns in the ranges file")
if len(reported) == len(pts):
    r = np.sqrt(x * x + y * y + z * z)
    err = np.abs(r - reported[:, 0].astype(np.float64))
    check(err.max() <= 0.002, f"every decoded range within 2 mm of the cast range (worst {err.max() * 1000:.3f} mm, mean {err.mean() * 1000:.3f} mm)")
done()
