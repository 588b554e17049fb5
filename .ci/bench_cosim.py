"""Benchmark (not a test): the ZeroMQ tick round trip of `roadscan sim --zmq-bind` with a pyzmq
REQ client on loopback, against a pyzmq REP echo server in the same run as the baseline.
Usage: bench_cosim.py ROADSCAN_BINARY [TICKS]"""
import socket
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
