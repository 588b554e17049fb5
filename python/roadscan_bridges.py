"""Clients for roadscan's co-simulation bridges (docs/bridges.md): ZeroMQ instructions and
frames, UDP messages and shared-memory segments. Standard library only; pyzmq and numpy are
used when given, never imported here.

    import zmq, roadscan_bridges as rb
    sock = zmq.Context().socket(zmq.REQ); sock.connect("tcp://127.0.0.1:5555")
    sock.send(rb.spawn(prefab=1, instance=7, x=125.6, y=33.82)); print(rb.reply(sock.recv()))
"""

import os
import struct
import time

STOP, TICK, SPAWN, SET, SAVE = 0x00, 0x01, 0x02, 0x0A, 0x1E
STEERING, ACCELERATION, THROTTLE, BRAKE, SPEED = 1, 2, 3, 4, 5
CAR, PEDESTRIAN, BOX = 1, 2, 3


# ZeroMQ messages (big-endian, u16 ids, f64 values)

def stop():
    return bytes([STOP])


def tick(count=1):
    return bytes([TICK]) if count == 1 else struct.pack(">BI", TICK, count)


def spawn(prefab, instance, x, y):
    return struct.pack(">BHHdd", SPAWN, prefab, instance, x, y)


def set_vars(instance, values):
    """values: {variable id: value} or a list of pairs."""
    pairs = values.items() if isinstance(values, dict) else values
    return struct.pack(">BH", SET, instance) + b"".join(struct.pack(">Hd", k, v) for k, v in pairs)


def save(path=None):
    return bytes([SAVE]) + (path.encode() if path else b"")


def frame(b):
    """A frame's fields as a dict (objects and contacts as lists of dicts)."""
    if b[:4] != b"RSF1":
        raise ValueError("not a frame (no RSF1)")
    tick_, time_, n = struct.unpack_from(">QdH", b, 4)
    at, objects = 22, []
    for _ in range(n):
        i, prefab, x, y, z, roll, pitch, heading, speed = struct.unpack_from(">HH7d", b, at)
        objects.append(dict(id=i, prefab=prefab, position=(x, y, z), attitude=(roll, pitch, heading), speed=speed))
        at += 60
    (m,) = struct.unpack_from(">H", b, at)
    at, contacts = at + 2, []
    for _ in range(m):
        a, c, x, y, rel = struct.unpack_from(">HH3d", b, at)
        contacts.append(dict(ids=(a, c), position=(x, y), relative_speed=rel))
        at += 28
    (p,) = struct.unpack_from(">I", b, at)
    payload = b[at + 4:at + 4 + p]
    if len(payload) != p or at + 4 + p != len(b):
        raise ValueError("frame length does not match its payload length")
    return dict(tick=tick_, time=time_, objects=objects, contacts=contacts, payload=payload)


def reply(b):
    """('ok', frame) or ('error', message)."""
    if b[:1] == b"\x00":
        return "ok", frame(b[1:])
    if b[:1] == b"\xff":
        return "error", b[1:].decode("utf-8", "replace")
    raise ValueError("not a reply")


# UDP

_FORMATS = {"f32le": "<f", "f32be": ">f", "f64le": "<d", "f64be": ">d"}


def udp_encode(values, fmt="text"):
    if fmt == "text":
        return ",".join(repr(float(v)) for v in values).encode()
    c = _FORMATS[fmt]
    return struct.pack(c[0] + c[1] * len(values), *values)


def udp_decode(b, fmt="text"):
    if fmt == "text":
        return [float(v) for v in b.decode().strip().split(",")]
    c = _FORMATS[fmt]
    w = struct.calcsize(c)
    return list(struct.unpack(c[0] + c[1] * (len(b) // w), b[: len(b) // w * w]))


# Shared memory (little-endian, 128-byte header, seqlock)

HEADER = 128
_ELEMENT = {1: "d", 2: "B", 3: "I", 4: "f"}


def segment_path(name, directory="/dev/shm"):
    return os.path.join(directory, name)


def read_segment(path, tries=10000):
    """(header dict, payload bytes) of a whole read, or None before the first write."""
    # Unbuffered: a buffered reader serves a seek back into its buffer from memory (stale).
    with open(path, "rb", buffering=0) as f:
        for _ in range(tries):
            f.seek(16)
            (s1,) = struct.unpack("<Q", f.read(8))
            if s1 == 0:
                return None
            if s1 & 1:
                continue
            f.seek(0)
            h = f.read(HEADER)
            n = struct.unpack_from("<Q", h, 64)[0]
            payload = f.read(n)
            f.seek(16)
            (s2,) = struct.unpack("<Q", f.read(8))
            if s1 == s2:
                return _header(h), payload
    raise TimeoutError(f"{path}: no whole read in {tries} tries")


def _header(h):
    if h[:8] != b"roadscan":
        raise ValueError("not a roadscan segment")
    version, kind, seq, tick_, time_, element, layout = struct.unpack_from("<IIQQdII", h, 8)
    shape = struct.unpack_from("<4I", h, 48)
    return dict(version=version, type=kind, sequence=seq, tick=tick_, time=time_,
                element=_ELEMENT.get(element, "B"), layout=layout, shape=shape)


def write_control(path, throttle, brake, steering):
    """Writes the control segment (throttle %, brake %, steering -1..1) as a whole frame."""
    with open(path, "r+b", buffering=0) as f:
        f.seek(16)
        (seq,) = struct.unpack("<Q", f.read(8))
        seq = (seq + 1) | 1
        f.seek(16); f.write(struct.pack("<Q", seq)); f.flush()
        f.seek(HEADER); f.write(struct.pack("<3d", throttle, brake, steering))
        f.seek(24); f.write(struct.pack("<QdII4IQ", 0, time.time(), 1, 0, 3, 1, 1, 1, 24)); f.flush()
        f.seek(16); f.write(struct.pack("<Q", seq + 1)); f.flush()
