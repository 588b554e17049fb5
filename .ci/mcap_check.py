"""Reads the MCAP file of `roadscan lidar --mcap` with the mcap library (which checks every
CRC) and the protobuf decoder of mcap-protobuf-support (which builds the message classes from
the schemas in the file), and checks what Foxglove needs to show it.

usage: mcap_check.py OUT.mcap SUMMARY.json
Exits 1 with one line per failed check.
"""
import json
import math
import struct
import sys

from mcap.reader import make_reader
from mcap_protobuf.decoder import DecoderFactory

from checks import check, done

mcap_path, summary_path = sys.argv[1:3]
summary = json.load(open(summary_path))


clouds, tfs, schemas, last = [], [], {}, 0
ordered = True
with open(mcap_path, "rb") as f:
    # validate_crcs: the data section's and every chunk's CRC-32 checked as they are read.
    reader = make_reader(f, decoder_factories=[DecoderFactory()], validate_crcs=True)
    header = reader.get_header()
    stats = reader.get_summary().statistics
    for schema, channel, message, decoded in reader.iter_decoded_messages(log_time_order=False):
        schemas[channel.topic] = (schema.name, schema.encoding, channel.message_encoding)
        ordered &= message.log_time >= last
        last = message.log_time
        if channel.topic == "/lidar":
            clouds.append(decoded)
        elif channel.topic == "/tf":
            tfs.append(decoded)

check(schemas.get("/lidar") == ("foxglove.PointCloud", "protobuf", "protobuf"), f"/lidar: {schemas.get('/lidar')}")
check(schemas.get("/tf") == ("foxglove.FrameTransform", "protobuf", "protobuf"), f"/tf: {schemas.get('/tf')}")
check(ordered, "messages in log-time order")
check(stats.message_count == len(clouds) + len(tfs), f"statistics count {stats.message_count} messages")

# One cloud a revolution (the last one partial), every point in it.
revolutions = summary["revolutions"]
check(len(clouds) == math.ceil(revolutions - 1e-9), f"{len(clouds)} clouds for {revolutions:.3f} revolutions")
points, sizes_ok, fields_ok, ranges_ok = 0, True, True, True
ring_max, t_max = 0, 0.0
want_fields = [("x", 0, 7), ("y", 4, 7), ("z", 8, 7), ("time", 12, 7), ("ring", 16, 3), ("intensity", 18, 1)]
for c in clouds:
    n = len(c.data) // c.point_stride if c.point_stride else 0
    sizes_ok &= c.point_stride * n == len(c.data)
    fields_ok &= [(f.name, f.offset, f.type) for f in c.fields] == want_fields and c.frame_id == "lidar"
    points += n
    for k in range(0, len(c.data), c.point_stride):
        x, y, z, t, ring = struct.unpack_from("<ffffH", c.data, k)
        r = math.sqrt(x * x + y * y + z * z)
        ranges_ok &= 0.99 <= r <= 100.01
        ring_max = max(ring_max, ring)
        t_max = max(t_max, t)
check(sizes_ok, "point_stride * points == len(data) in every cloud")
check(fields_ok, "fields x, y, z, time (float32), ring (uint16), intensity (uint8); frame lidar")
check(points == summary["returns"], f"{points} points in the clouds, {summary['returns']} returns")
check(ranges_ok, "every point 1 to 100 m from the sensor")
check(ring_max == 31, f"rings 0..{ring_max}")
check(0.09 < t_max < 0.1001, f"a revolution's points within {t_max:.4f} s of its start (10 Hz)")

# Transforms at 100 Hz: map -> base_link (map coordinates) and base_link -> lidar (the mount).
pairs = {}
for t in tfs:
    pairs.setdefault((t.parent_frame_id, t.child_frame_id), []).append(t)
want = math.floor(summary["sensor_seconds"] * 100 + 1e-6) + 1
body, mount = pairs.get(("map", "base_link"), []), pairs.get(("base_link", "lidar"), [])
check(len(body) == want and len(mount) == want, f"{len(body)} map->base_link, {len(mount)} base_link->lidar, {want} wanted")
unit = all(abs(math.hypot(t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w) - 1) < 1e-9 for t in tfs)
check(unit, "unit rotations")
check(all(abs(t.translation.z - 1.8) < 1e-9 for t in mount), "the sensor 1.8 m above base_link")
if len(body) > 1:
    dt = (body[-1].timestamp.ToNanoseconds() - body[0].timestamp.ToNanoseconds()) * 1e-9
    run = math.dist([body[0].translation.x, body[0].translation.y], [body[-1].translation.x, body[-1].translation.y])
    check(abs(run / dt - 10.0) < 0.05, f"the vehicle moves {run / dt:.3f} m/s in the map frame")
    check(body[0].translation.x > 1000, f"map coordinates ({body[0].translation.x:.1f}, {body[0].translation.y:.1f})")

print(f"mcap: {len(clouds)} clouds, {points} points, {len(tfs)} transforms")
done()
