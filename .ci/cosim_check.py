"""The co-simulation bridges against `roadscan sim`, from Python (pyzmq, numpy) as users drive
them: the seed's REP server, a REQ client with the instruction set, UDP in and out, and the
shared-memory segments. Usage: cosim_check.py ROADSCAN_BINARY WORKDIR"""
import json
import os
import socket
import struct
import subprocess
import sys
import threading
import time

import numpy as np
import zmq

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import roadscan_bridges as rb  # noqa: E402
from checks import check, done  # noqa: E402

BIN, WORK = sys.argv[1], sys.argv[2]
os.makedirs(WORK, exist_ok=True)


def free_port(kind=socket.SOCK_STREAM):
    s = socket.socket(socket.AF_INET, kind)
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def sim(*args):
    return subprocess.Popen([BIN, "sim", "-q", "--scene", "demo", *args],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def finish(p, what, timeout=60):
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    check(p.returncode == 0, f"{what}: roadscan sim exits 0 (got {p.returncode}: {err.decode()[-300:].strip()})")


ctx = zmq.Context()

# 1. The seed's layout: a REP server saves N frames, replies "Ack", then "END".
port = free_port()
rep = ctx.socket(zmq.REP)
rep.bind(f"tcp://127.0.0.1:{port}")
rep.RCVTIMEO = 30000
p = sim("--route", "lane:-1", "--duration", "100", "--zmq-connect", f"tcp://127.0.0.1:{port}")
frames = []
N = 50
try:
    while True:
        f = rb.frame(rep.recv())
        frames.append(f)
        if len(frames) > N:
            rep.send(b"END")
            break
        rep.send(b"Ack")
except zmq.Again:
    pass
finish(p, "seed REP server")
ticks = [f["tick"] for f in frames]
check(ticks == list(range(1, N + 2)), f"seed REP server: {len(frames)} frames, ticks 1..{N + 1} in order")
dt = frames[1]["time"] - frames[0]["time"] if len(frames) > 1 else 0
check(all(abs(f["time"] - f["tick"] * dt) < 1e-9 for f in frames), f"frame times are tick x {dt} s")
x = [f["objects"][0]["position"][0] for f in frames]
y = [f["objects"][0]["position"][1] for f in frames]
check(np.hypot(x[-1] - x[0], y[-1] - y[0]) > 0.1, "the ego drives between the first and the last frame")
rep.close()

# 2. A REQ client with the instruction set (and a UDP socket for contact reports).
port = free_port()
out_port = free_port(socket.SOCK_DGRAM)
listen = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
listen.bind(("127.0.0.1", out_port))
listen.settimeout(2.0)
datagrams = []


def receive(sock, into):
    # Read while the simulation runs: thousands of pose datagrams overflow a socket's buffer.
    try:
        while True:
            into.append(rb.udp_decode(sock.recv(4096)))
    except (socket.timeout, OSError):
        pass


reader = threading.Thread(target=receive, args=(listen, datagrams), daemon=True)
reader.start()
state = os.path.join(WORK, "state.json")
if os.path.exists(state):
    os.remove(state)
p = sim("--duration", "1000", "--zmq-bind", f"tcp://127.0.0.1:{port}", "--state", state,
        "--udp-out", f"127.0.0.1:{out_port}")
req = ctx.socket(zmq.REQ)
req.RCVTIMEO = 30000
req.connect(f"tcp://127.0.0.1:{port}")


def ask(msg):
    req.send(msg)
    return rb.reply(req.recv())


status, f0 = ask(rb.tick())
ego = f0["objects"][0]
h = ego["attitude"][2]
ax, ay = ego["position"][0] + 25 * np.cos(h), ego["position"][1] + 25 * np.sin(h)
r = ask(rb.spawn(rb.CAR, 7, ax, ay))
check(r[0] == "ok" and any(o["id"] == 7 for o in r[1]["objects"]), f"spawn car 7 25 m ahead of the ego: {r[0]}")
r = ask(rb.spawn(rb.CAR, 7, ax, ay))
check(r[0] == "error", f"a duplicate instance id gets an error reply ({r[1] if r[0] == 'error' else r[0]})")
r = ask(rb.spawn(rb.CAR, 8, ax, ay)[:9])
check(r[0] == "error", f"a truncated message gets an error reply ({r[1] if r[0] == 'error' else r[0]})")
r = ask(rb.set_vars(7, {rb.STEERING: 0.7, rb.ACCELERATION: -0.2}))
check(r[0] == "ok", "set steering 0.7 and acceleration -0.2 of car 7")
r = ask(rb.set_vars(0, {rb.THROTTLE: 40.0}))
check(r[0] == "ok", "set the ego's throttle to 40 %")
replies = [ask(rb.tick()) for _ in range(100)]
check(all(s == "ok" for s, _ in replies) and [f["tick"] for _, f in replies] == list(range(2, 102)),
      "100 ticks, each answered with its frame")
r = ask(rb.save())
check(r[0] == "ok", "save the state")
last = replies[-1][1]
# On until the ego (from rest at 40 % throttle, about 1.4 m/s²) reaches the car.
more = [ask(rb.tick()) for _ in range(900)]
contacts = [c for _, f in replies + more for c in f["contacts"]]
ask(rb.stop())
finish(p, "REQ client")
try:
    saved = json.load(open(state))
    check(saved.get("tick") == last["tick"], f"the state file holds tick {saved.get('tick')} (frame {last['tick']})")
    car = [a for a in saved["actors"]["actors"] if a["id"] == "7"]
    car_frame = [o for o in last["objects"] if o["id"] == 7]
    check(len(car) == 1 and len(car_frame) == 1 and abs(car[0]["x"] - car_frame[0]["position"][0]) < 1e-9,
          "car 7 in the state file where the last frame put it")
except (OSError, ValueError, KeyError) as e:
    check(False, f"state file readable: {e}")
reader.join(timeout=10)
reports = [d for d in datagrams if d[0] == 2]
check(len(contacts) >= 1, f"the ego runs into car 7: {len(contacts)} contact(s) in the frames")
# Contacts with walls (curbs, facades) are reported too; the ego's with car 7 must arrive.
car_reports = [d for d in reports if d[1:3] in ([0, 7], [7, 0])]
check(len(car_reports) >= 1 and len(car_reports) <= len(contacts),
      f"the contact report reaches a Python UDP socket ({len(car_reports)} of {len(reports)} reports with car 7)")
listen.close()

# 3. UDP in: the seed's "1,0,0" at 100 Hz moves the ego 1 m/s along x.
in_port = free_port(socket.SOCK_DGRAM)
out_port = free_port(socket.SOCK_DGRAM)
listen = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
listen.bind(("127.0.0.1", out_port))
listen.settimeout(2.0)
p = sim("--duration", "3", "--pace", "1", "--udp-in", f"127.0.0.1:{in_port}",
        "--udp-out", f"127.0.0.1:{out_port}")
tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
poses = []
stop = threading.Event()


def send():
    while not stop.is_set():
        tx.sendto(b"1,0,0", ("127.0.0.1", in_port))
        time.sleep(0.01)


threading.Thread(target=send, daemon=True).start()
try:
    while True:
        d = rb.udp_decode(listen.recv(4096))
        if d[0] == 1 and d[1] == 0:
            poses.append(d)
except socket.timeout:
    pass
stop.set()
finish(p, "UDP in")
late = [d for d in poses if d[3] >= 1.0]
if len(late) > 10:
    t = np.array([d[3] for d in late])
    xs = np.array([d[4] for d in late])
    ys = np.array([d[5] for d in late])
    vx = np.polyfit(t, xs, 1)[0]
    check(abs(vx - 1.0) < 1e-6 and np.ptp(ys) < 1e-9, f"the ego moves {vx:.9f} m/s along x, y within {np.ptp(ys):.1e} m")
else:
    check(False, f"pose updates received: {len(poses)}")
listen.close()

# 4. Shared memory: numpy reads the state, writes the controls the ego follows; a polling
# reader finds no torn frame.
name = f"rs_ci_{os.getpid()}"
p = sim("--duration", "4", "--pace", "1", "--shm", name)
path = rb.segment_path(name + ".state")
for _ in range(200):
    if os.path.exists(path) and os.path.exists(rb.segment_path(name + ".control")):
        break
    time.sleep(0.02)
rb.write_control(rb.segment_path(name + ".control"), 50.0, 0.0, 0.3)
# numpy's memmap view of the same header.
try:
    m = np.memmap(path, dtype=np.uint8, mode="r")
    check(bytes(m[:8]) == b"roadscan" and struct.unpack("<I", bytes(m[12:16]))[0] == 1,
          "numpy maps NAME.state: magic and type")
    del m
except OSError as e:
    check(False, f"numpy maps the state segment: {e}")
whole, torn, seen = 0, 0, []
while p.poll() is None:
    try:
        got = rb.read_segment(path)
    except (OSError, TimeoutError):
        break
    if got is None:
        continue
    hdr, payload = got
    v = np.frombuffer(payload, dtype="<f8")
    whole += 1
    if len(v) != 16 or v[0] != hdr["tick"] or v[1] != hdr["time"]:
        torn += 1
    seen.append(v.copy())
finish(p, "shared memory")
check(whole > 50 and torn == 0, f"{whole} whole reads of the state segment, {torn} torn")
if seen:
    first, last = seen[0], seen[-1]
    check(last[8] > 1.0 and last[13] == 50.0 and last[12] == 0.3,
          f"the ego follows the controls: speed {last[8]:.2f} m/s, throttle {last[13]}, steering {last[12]}")
    check(abs(last[7] - first[7]) > 0.05, f"the heading turns with steering 0.3 ({first[7]:.3f} -> {last[7]:.3f} rad)")

# 5. Stress: the simulator unpaced (a state write every few microseconds), a reader polling.
name = f"rs_ci_stress_{os.getpid()}"
p = sim("--duration", "60", "--route", "lane:-1", "--shm", name)
path = rb.segment_path(name + ".state")
whole, torn, writes = 0, 0, set()
while p.poll() is None:
    try:
        got = rb.read_segment(path, tries=100000)
    except FileNotFoundError:
        continue
    except (OSError, TimeoutError):
        break
    if got is None:
        continue
    hdr, payload = got
    v = np.frombuffer(payload, dtype="<f8")
    whole += 1
    writes.add(hdr["tick"])
    if len(v) != 16 or v[0] != hdr["tick"] or abs(v[1] - hdr["time"]) > 0 or abs(v[1] - 0.01 * v[0]) > 1e-9:
        torn += 1
finish(p, "stress")
# The simulation runs about 1000x real time, so an unpaced 60 s run is over in a fraction of a
# second: a few hundred whole reads of distinct ticks already prove the seqlock under load.
check(whole > 300 and len(writes) > 20 and torn == 0,
      f"stress: {whole} whole reads of {len(writes)} distinct ticks while unpaced, {torn} torn")

# 6. The sensors' segments: numpy reads an image (column-major planes) and LiDAR words.
name = f"rs_ci_sensors_{os.getpid()}"
p = sim("--route", "lane:-1", "--duration", "1.5", "--pace", "1", "--lidar", "hdl32e", "--camera", "--shm", name)
image, words = None, None
while p.poll() is None and (image is None or words is None):
    for seg in ("image", "lidar"):
        try:
            got = rb.read_segment(rb.segment_path(f"{name}.{seg}"))
        except (OSError, TimeoutError):
            continue
        if got is None:
            continue
        if seg == "image":
            image = got
        else:
            words = got
    time.sleep(0.02)
finish(p, "sensors", timeout=300)
if image is not None:
    hdr, payload = image
    H, W, C = hdr["shape"][:3]
    check((H, W, C) == (480, 640, 3) and hdr["layout"] == 1 and len(payload) == H * W * C,
          f"NAME.image: {H} x {W} x {C}, column-major, {len(payload)} bytes")
    rgb = np.frombuffer(payload, dtype=np.uint8).reshape(C, W, H).transpose(2, 1, 0)
    top, bottom = rgb[: H // 4].mean(), rgb[3 * H // 4:].mean()
    check(abs(top - bottom) > 10, f"the image has sky above and road below (mean {top:.0f} vs {bottom:.0f})")
else:
    check(False, "NAME.image was written")
if words is not None:
    hdr, payload = words
    lasers, firings = hdr["shape"][:2]
    w = np.frombuffer(payload, dtype="<u4").reshape(firings, lasers)
    rng = (w >> 12).astype(float) * 0.002
    hit = rng > 0
    check(lasers == 32 and 2160 <= firings <= 2180 and hit.mean() > 0.3,
          f"NAME.lidar: {lasers} lasers x {firings} firings, {hit.mean():.0%} returns")
    # The lowest laser (-30.67 degrees) sees the road about 1.8 m below: 3.5 m away.
    med = [np.median(rng[hit[:, j], j]) for j in range(lasers) if hit[:, j].any()]
    check(len(med) == lasers and 3.0 < min(med) < 4.2, f"the lowest ring's median range {min(med):.2f} m")
else:
    check(False, "NAME.lidar was written")
done()
