"""Checks roadscan's roadside products with independent readers.

voxel_check.py OBJ RIBBON_DIR
- OBJ (trimesh): triangles = 2 x the sidecar's faces; vertices = trimesh's per-material count
  computed from the file; enclosed volume = voxels x size^3 (faces wound outwards).
- Ribbons (Pillow): every image as large as ribbons.json says; the 16-bit depth PNG in mm and
  the float TIFF in m agree (0 <-> NaN, else the TIFF rounded to mm, at least 1); depths within the buffer.
"""
import json
import math
import sys
from pathlib import Path

import numpy as np
import trimesh
from PIL import Image


def check_obj(obj: Path) -> None:
    side = json.loads(obj.with_suffix(".json").read_text())
    faces, vertices, voxels, size = side["obj"]["faces"], side["obj"]["vertices"], side["voxels"], side["voxel_size"]
    # trimesh splits by material: the vertices each material's faces use, summed.
    per_mat, current, v_lines = {}, None, 0
    for line in obj.read_text().splitlines():
        if line.startswith("v "):
            v_lines += 1
        elif line.startswith("usemtl "):
            current = line.split()[1]
        elif line.startswith("f "):
            per_mat.setdefault(current, set()).update(int(i) for i in line.split()[1:])
    assert v_lines == vertices, (v_lines, vertices)
    mesh = trimesh.load(obj, force="mesh", process=False, group_material=False)
    want_v = sum(len(s) for s in per_mat.values())
    assert len(mesh.faces) == 2 * faces, (len(mesh.faces), faces)
    assert len(mesh.vertices) == want_v, (len(mesh.vertices), want_v)
    vol = voxels * size**3
    assert abs(mesh.volume - vol) <= 1e-6 * vol, (mesh.volume, vol)
    print(f"{obj}: trimesh {len(mesh.vertices)} vertices, {len(mesh.faces)} triangles = 2 x {faces} faces, "
          f"volume {mesh.volume:.3f} m3 = {voxels} voxels of {size} m")


def check_ribbons(d: Path) -> None:
    side = json.loads((d / "ribbons.json").read_text())
    w, h, buffer = side["columns"], side["rows"], side["depth_range"][1]
    for f in side["files"]:
        im = Image.open(d / f)
        if f != "street_view.png":
            assert im.size == (w, h), (f, im.size, (w, h))
    for s in ("left", "right"):
        png = np.array(Image.open(d / f"{s}_depth.png")).astype(np.float64)
        tif = np.array(Image.open(d / f"{s}_depth.tif"), dtype=np.float32).astype(np.float64)
        assert tif.shape == (h, w) and png.shape == (h, w), (tif.shape, png.shape)
        empty = png == 0
        assert np.array_equal(empty, np.isnan(tif)), f"{s}: PNG zeros and TIFF NaNs differ"
        filled = ~empty
        # PNG: millimetres, at least 1 (0 means empty).
        want = np.maximum(np.minimum(np.floor(tif[filled] * 1000.0 + 0.5), 65534), 1)  # half away from 0
        err = np.abs(png[filled] - want).max() / 1000.0 if filled.any() else 0.0
        assert err <= 0.0005 + 1e-9, f"{s}: PNG mm vs TIFF m differ by {err}"
        assert filled.any() and tif[filled].max() <= buffer + 1e-6 and tif[filled].min() >= 0
        print(f"{d}/{s}: {w} x {h}, filled {filled.mean():.3f}, depth {tif[filled].min():.2f}..{tif[filled].max():.2f} m, "
              f"PNG vs TIFF within {err * 1000:.2f} mm")


if __name__ == "__main__":
    check_obj(Path(sys.argv[1]))
    check_ribbons(Path(sys.argv[2]))
