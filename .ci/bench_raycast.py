"""Benchmark: roadscan's ray caster against Open3D's RaycastingScene (Embree, CPU) on the same
triangles and the same rays, in one run. Not part of CI (it needs open3d-cpu and minutes).

usage: bench_raycast.py ROADSCAN WORLD_DIR [--duration S] [--roadside points|voxels|none]
Writes the world's triangles and an HDL-32E's rays (`roadscan lidar --rays-out`) into a
temporary directory, casts them with both (5 runs each, median), and prints rays/s, the ratio
and how many hit distances agree within 1 mm.
"""
import argparse
import json
import os
import subprocess
import tempfile
import time

import numpy as np
import open3d as o3d

ap = argparse.ArgumentParser()
ap.add_argument("roadscan")
ap.add_argument("world")
ap.add_argument("--duration", default="1")
ap.add_argument("--roadside", default="points")
ap.add_argument("--runs", type=int, default=5)
a = ap.parse_args()
tmp = tempfile.mkdtemp(prefix="roadscan-bench-")
tris, rays, hits = (os.path.join(tmp, n) for n in ("tris.bin", "rays.bin", "hits.f32"))
subprocess.run([a.roadscan, "lidar", "-q", "--world", a.world, "--roadside", a.roadside, "--duration", a.duration, "--rays-out", rays], check=True)
ours = []
for k in range(a.runs):
    args = [a.roadscan, "world", "--world", a.world, "--roadside", a.roadside, "--cast", rays, "--hits", hits]
    if k == 0:
        args += ["--export-triangles", tris]
    out = json.loads(subprocess.run(args, check=True, capture_output=True).stdout)
    ours.append(out["cast"]["rays_per_second"])
with open(tris, "rb") as f:
    head = f.readline().split()
    nv, nt = int(head[2]), int(head[3])
    v = np.frombuffer(f.read(nv * 12), dtype="<f4").reshape(nv, 3)
    t = np.frombuffer(f.read(nt * 12), dtype="<u4").reshape(nt, 3)
r = np.fromfile(rays, dtype="<f4").reshape(-1, 6)
scene = o3d.t.geometry.RaycastingScene(nthreads=2)
t0 = time.perf_counter()
scene.add_triangles(o3d.core.Tensor(v), o3d.core.Tensor(t))
build = time.perf_counter() - t0
rt = o3d.core.Tensor(r)
theirs = []
for _ in range(a.runs):
    t0 = time.perf_counter()
    ans = scene.cast_rays(rt, nthreads=2)
    theirs.append(len(r) / (time.perf_counter() - t0))
th = ans["t_hit"].numpy()
th[th > 100.0] = np.inf
mine = np.fromfile(hits, dtype="<f4")
both = np.isfinite(th) & np.isfinite(mine)
agree = (np.abs(th[both] - mine[both]) <= 0.001).mean() if both.any() else 0.0
med = lambda x: float(np.median(x))
print(f"triangles {nt}, vertices {nv}, rays {len(r)}, Open3D scene build {build:.2f} s")
print(f"roadscan {med(ours) / 1e6:.3f} M rays/s, Open3D/Embree {med(theirs) / 1e6:.3f} M rays/s (2 threads each, median of {a.runs})")
print(f"ratio roadscan/Open3D {med(ours) / med(theirs):.3f}")
print(f"hits: roadscan {np.isfinite(mine).sum()}, Open3D {np.isfinite(th).sum()}, both {both.sum()}, within 1 mm {agree * 100:.2f} %")
