"""Counts the Velodyne data packets a roadscan command sends to a local UDP port.

usage: udp_check.py PORT EXPECTED_RATE TOLERANCE -- COMMAND...
Starts COMMAND, counts the 1,206-byte datagrams arriving on 127.0.0.1:PORT, and checks their
rate over the whole stream (first to last arrival) against EXPECTED_RATE within TOLERANCE (a
fraction). Also reports the wall time of the stream. Exits 1 on failure.
"""
import socket
import subprocess
import sys
import time

port, want, tol = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
cmd = sys.argv[sys.argv.index("--") + 1 :]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
s.bind(("127.0.0.1", port))
s.settimeout(1.0)
proc = subprocess.Popen(cmd)
times, sizes = [], {}
idle = 0.0
while True:
    try:
        data = s.recv(2048)
    except socket.timeout:
        if proc.poll() is not None:
            break
        continue
    now = time.monotonic()
    sizes[len(data)] = sizes.get(len(data), 0) + 1
    if len(data) == 1206:
        times.append(now)
rc = proc.wait()
n = len(times)
span = times[-1] - times[0] if n > 1 else 0.0
rate = (n - 1) / span if span > 0 else 0.0
ok = rc == 0 and n > 100 and abs(rate - want) <= tol * want
print(f"{'ok  ' if ok else 'FAIL'}  {n} data packets over {span:.3f} s: {rate:.1f} a second (want {want} +- {tol * 100:.1f} %); sizes {sizes}; exit {rc}")
sys.exit(0 if ok else 1)
