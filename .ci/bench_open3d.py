"""Open3D's voxel_down_sample on a LAS file, end to end (laspy read included), for the roadside
benchmark (crates/cli/benches/roadside.rs). Not run in CI (open3d-cpu is large).

bench_open3d.py FILE.las SIZE -> key value lines: read_s, voxel_s, total_s, voxels, peak_rss_mb
"""
import resource
import sys
import time

import laspy
import numpy as np
import open3d as o3d

t0 = time.perf_counter()
las = laspy.read(sys.argv[1])
xyz = np.column_stack((las.x, las.y, las.z)).astype(np.float64)
t1 = time.perf_counter()
pc = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(xyz))
down = pc.voxel_down_sample(float(sys.argv[2]))
t2 = time.perf_counter()
print(f"read_s {t1 - t0:.3f}")
print(f"voxel_s {t2 - t1:.3f}")
print(f"total_s {t2 - t0:.3f}")
print(f"voxels {len(down.points)}")
print(f"peak_rss_mb {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f}")
