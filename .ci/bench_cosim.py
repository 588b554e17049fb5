"""Benchmark (not a test): the ZeroMQ tick round trip of `roadscan sim --zmq-bind` with a pyzmq
REQ client on loopback, against a pyzmq REP echo server in the same run as the baseline.
Then UDP poses at 1 kHz into `roadscan sim --tick 0.001 --pace 1` for SECONDS (default 60): how
many the simulator took, and how many of its pose updates came back.
Usage: bench_cosim.py ROADSCAN_BINARY [TICKS [SECONDS]]"""
import socket
import struct
import statistics
import subprocess
import sys
import threading
import time
import os

import zmq

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import roadscan_bridges as rb  # noqa: E402

BIN = sys.argv[1]
N = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
SECONDS = float(sys.argv[3]) if len(sys.argv) > 3 else 60.0


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def round_trips(endpoint, message):
    req = zmq.Context.instance().socket(zmq.REQ)
    req.RCVTIMEO = 30000
    req.connect(endpoint)
    req.send(message)
    req.recv()  # the first exchange connects
    out = []
    for _ in range(N):
        t = time.perf_counter()
        req.send(message)
        req.recv()
        out.append(time.perf_counter() - t)
    req.close()
    return out


# Baseline: a pyzmq REP server that answers each request with a frame-sized reply.
port = free_port()
reply = b"\x00" + b"RSF1" + bytes(90)


def echo():
    rep = zmq.Context.instance().socket(zmq.REP)
    rep.bind(f"tcp://127.0.0.1:{port}")
    for _ in range(N + 1):
        rep.recv()
        rep.send(reply)
    rep.close()


t = threading.Thread(target=echo)
t.start()
base = round_trips(f"tcp://127.0.0.1:{port}", rb.tick())
t.join()

port = free_port()
p = subprocess.Popen([BIN, "sim", "-q", "--scene", "demo", "--route", "lane:-1", "--duration", "100000",
                      "--zmq-bind", f"tcp://127.0.0.1:{port}"], stdin=subprocess.DEVNULL)
ours = round_trips(f"tcp://127.0.0.1:{port}", rb.tick())
req = zmq.Context.instance().socket(zmq.REQ)
req.connect(f"tcp://127.0.0.1:{port}")
req.send(rb.stop())
req.recv()
p.wait(timeout=60)


def show(name, v):
    v = sorted(v)
    print(f"{name}: median {statistics.median(v) * 1e6:.0f} us, p95 {v[int(0.95 * len(v))] * 1e6:.0f} us over {len(v)}")


show("pyzmq REP echo (baseline)", base)
show("roadscan sim --zmq-bind, one tick each", ours)
print(f"ratio of medians: {statistics.median(ours) / statistics.median(base):.2f}")

# UDP at 1 kHz: a pose a millisecond in, a pose update a tick out.
in_port, out_port = free_port(), free_port()
listen = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
listen.bind(("127.0.0.1", out_port))
listen.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
listen.settimeout(3.0)
p = subprocess.Popen([BIN, "sim", "--scene", "demo", "--tick", "0.001", "--pace", "1", "--duration", str(SECONDS + 3),
                      "--udp-in", f"127.0.0.1:{in_port}", "--udp-out", f"127.0.0.1:{out_port}", "--udp-format", "f64le"],
                     stdin=subprocess.DEVNULL, stderr=subprocess.PIPE)
back = [0]


def count():
    try:
        while True:
            listen.recv(256)
            back[0] += 1
    except socket.timeout:
        pass


reader = threading.Thread(target=count)
reader.start()
time.sleep(1.0)  # the world loads
tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sent, start = 0, time.perf_counter()
x0 = None
while p.poll() is None and sent < SECONDS * 1000:
    due = start + sent / 1000.0
    now = time.perf_counter()
    if due > now:
        time.sleep(due - now)
    tx.sendto(struct.pack("<6d", 10.0 + 0.001 * sent, -1.75, 0, 0, 0, 0), ("127.0.0.1", in_port))
    sent += 1
err = p.communicate(timeout=SECONDS + 60)[1].decode()
reader.join()
took = [l for l in err.splitlines() if "UDP inputs taken" in l]
print(f"UDP 1 kHz for {sent / 1000:.1f} s: sent {sent}; {took[-1] if took else err[-300:]}; pose updates back {back[0]}")
