#!/usr/bin/env python3
"""OpenCRG reference C-API oracle for roadscan CI and benchmarks.

Runs with a Python that has `pycrg` (bindings of the ASAM OpenCRG C-API) and
numpy installed, for example a venv outside the repository:

    python3 -m venv /tmp/crgvenv && /tmp/crgvenv/bin/pip install pycrg numpy
    /tmp/crgvenv/bin/python .ci/crg_oracle.py eval FILE.crg --points PTS.txt [--mods]

Subcommands (all output goes to stdout; OpenCRG's own warnings go to stderr):

  eval FILE --points PTS [--mods] [--cwd DIR] [--opt KEY=VALUE]... [--fresh-cp]
      PTS has lines "uv U V" or "xy X Y" (blank lines and lines starting with
      '#' are skipped). One output line per point: "x y u v z".
        uv line: (x, y) = crgEvaluv2xy(u, v), z = crgEvaluv2z(u, v)
        xy line: (u, v) = crgEvalxy2uv(x, y), z = crgEvaluv2z(u, v); x y echo
                 the input.
      Numbers use %.12g, NaN prints as "nan", -0 prints as "0", and a field
      whose C-API call returned an error code prints as "err" (all fields that
      depend on it, i.e. for a failed xy->uv also z).
      --mods    apply the modifiers after loading (crgDataSetModifiersApply).
                A file WITHOUT a $ROAD_CRG_MODS block then gets OpenCRG's default
                modifiers: NaN cells are filled (grid_nan_mode 2, keep last) and
                the data are re-positioned so that the reference point goes to
                x = y = z = 0, heading 0. With pycrg's library the reference
                point is (u_start, v = 0), i.e. the refline start; OpenCRG 1.2.0
                used (u_start, v_min), see --legacy-refpoint. An EMPTY
                $ROAD_CRG_MODS block disables all of this.
                Without --mods, modifiers are NOT applied (raw file placement).
      --cwd DIR chdir to DIR before loading ($ROAD_CRG_FILE names are resolved
                against the current directory by the C-API). FILE and PTS are
                taken relative to the original directory if they exist there,
                else relative to DIR.
      --opt     set a contact point option, keyword as in $ROAD_CRG_OPTS, e.g.
                --opt border_mode_u=0 (0 none/error, 1 ex_zero, 2 ex_keep
                (default), 3 repeat, 4 reflect). Applied on top of the file's
                $ROAD_CRG_OPTS.
      --fresh-cp  use a new contact point per line (no xy->uv search history
                carried from one point to the next).
      --legacy-refpoint  with --mods: when the modifiers re-position "by
                refpoint" without refpoint_v/refpoint_v_fraction (e.g. the
                defaults of a file without $ROAD_CRG_MODS), use
                refpoint_v_fraction = 0 (the v_min border, as OpenCRG 1.2.0 and
                specs/opencrg.md section 3) instead of pycrg's refpoint_v = 0
                (the reference line, newer upstream OpenCRG).

  info FILE [--mods [--legacy-refpoint]] [--cwd DIR] [--opt KEY=VALUE]...
      "key value" lines: data format and $ROAD_CRG_MODS/$ROAD_CRG_OPTS presence
      of FILE itself (not of included files), u/v ranges, increments, grid
      size, refline start/end x y phi (uv->xy and uv->pk at v = 0), z at the
      four corners, closed track data.

  bench [--file F] [--loads 20] [--queries 1000000] [--seed 12345]
        [--no-big] [--big-dir /tmp] [--keep-big] [--no-pycrg-writer]
      "key value" lines with timings (see the keys' names; *_ns_per_query are
      per single uv->z query).
        a_*  crgLoaderReadFile of --file (median/min of --loads), and
             crgDataSetModifiersApply separately.
        b_*  --queries uv->z at seeded uniform random (u, v) in the u/v range,
             no modifiers: b_batch_* = one uv_to_z_many call (C loop, what the
             C-API costs); b_pyloop_cp_* = Python loop over ContactPoint.uv_to_z
             (mostly interpreter overhead); b_pyloop_native_* = loop over the
             private native call; b_pyloop_empty_* = loop baseline.
        c_*  1 km x 8 m at 1 cm (100001 x 801 nodes, straight refline): written
             by this script's own KRBI writer (spec 1.9 plus a "$" after $CT, see
             write_krbi) and by pycrg.write, each then loaded --big-loads times
             in a fresh process (time, RSS, peak RSS) and checked at 4 nodes.
             Files go to --big-dir and are removed unless --keep-big. Needs
             ~650 MB disk and ~2.1 GB RAM (pycrg.write works in float64).

  selftest [--data-dir DIR]
      check the published C-API values of specs/opencrg.md section 3 (exit 1 on
      a mismatch).

Exit status: 0 ok, 1 selftest failure, 2 usage/load errors.
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import statistics
import subprocess
import sys
import time

import numpy as np
import pycrg
from pycrg import _native  # private, used only for the grid shape and raw-call bench

DEFAULT_DATA_DIR = os.path.join(
    os.environ.get("ROADSCAN_SHARED_DATA")
    or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data"),
    "opencrg",
)
DEFAULT_BENCH_FILE = DEFAULT_DATA_DIR + "/crg-bin/belgian_block.crg"

# $ROAD_CRG_OPTS keyword -> (CP_OPTION id, integer typed?)
OPTIONS = {
    "border_mode_u": (pycrg.CP_OPTION_BORDER_MODE_U, True),
    "border_mode_v": (pycrg.CP_OPTION_BORDER_MODE_V, True),
    "border_offset_u": (pycrg.CP_OPTION_BORDER_OFFSET_U, False),
    "border_offset_v": (pycrg.CP_OPTION_BORDER_OFFSET_V, False),
    "border_smooth_ubeg": (pycrg.CP_OPTION_SMOOTH_U_BEGIN, False),
    "border_smooth_uend": (pycrg.CP_OPTION_SMOOTH_U_END, False),
    "curv_mode": (pycrg.CP_OPTION_CURV_MODE, True),
    "refline_continuation": (pycrg.CP_OPTION_REF_LINE_CONTINUE, True),
    "refline_search_far": (pycrg.CP_OPTION_REF_LINE_FAR, False),
    "refline_search_close": (pycrg.CP_OPTION_REF_LINE_CLOSE, False),
    "refline_search_u": (pycrg.CP_OPTION_REF_LINE_SEARCH_U, False),
    "refline_search_ufrac": (pycrg.CP_OPTION_REF_LINE_SEARCH_U_FRAC, False),
    "warn_msgs": (pycrg.CP_OPTION_WARN_MSGS, True),
    "warn_curv_local": (pycrg.CP_OPTION_WARN_CURV_LOCAL, True),
    "warn_curv_global": (pycrg.CP_OPTION_WARN_CURV_GLOBAL, True),
    "check_eps": (pycrg.CP_OPTION_CHECK_EPS, False),
    "check_inc": (pycrg.CP_OPTION_CHECK_INC, False),
    "check_tol": (pycrg.CP_OPTION_CHECK_TOL, False),
}

ERR = "err"


class UsageError(Exception):
    pass


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def fmt(value: float | None) -> str:
    """%.12g, 'nan' for NaN, '0' for -0, 'err' for None (C-API error code)."""
    if value is None:
        return ERR
    value = float(value)
    if math.isnan(value):
        return "nan"
    if value == 0.0:
        return "0"
    return "%.12g" % value


def kv(key: str, value: object) -> None:
    if isinstance(value, float):
        value = fmt(value)
    elif value is None:
        value = ERR
    print(f"{key} {value}")


def resolve(path: str, cwd: str | None) -> str:
    """Absolute path: relative to the original directory if it exists there, else to cwd."""
    if os.path.isabs(path):
        return path
    if cwd is None or os.path.exists(path):
        return os.path.abspath(path)
    return os.path.abspath(os.path.join(cwd, path))


def parse_opts(items: list[str]) -> list[tuple[str, int, bool, float]]:
    out = []
    for item in items or []:
        if "=" not in item:
            raise UsageError(f"--opt expects KEY=VALUE, got {item!r}")
        key, value = item.split("=", 1)
        key = key.strip().lower()
        if key not in OPTIONS:
            raise UsageError(f"unknown option {key!r}; known: {', '.join(sorted(OPTIONS))}")
        option_id, is_int = OPTIONS[key]
        number = float(value)
        # the C-API accepts any int here and only crgCheckOpts (not run per contact point) rejects it
        if key.startswith("border_mode") and number not in (0, 1, 2, 3, 4):
            raise UsageError(f"{key} must be 0..4, got {value}")
        out.append((key, option_id, is_int, number))
    return out


REFPOINT_MODS = (pycrg.MOD_REF_POINT_U, pycrg.MOD_REF_POINT_U_FRAC, pycrg.MOD_REF_POINT_V,
                 pycrg.MOD_REF_POINT_V_FRAC, pycrg.MOD_REF_POINT_X, pycrg.MOD_REF_POINT_Y,
                 pycrg.MOD_REF_POINT_Z, pycrg.MOD_REF_POINT_PHI)


def load(path: str, mods: bool, cwd: str | None, legacy_refpoint: bool = False) -> pycrg.DataSet:
    """crgLoaderReadFile (+ crgDataSetModifiersApply if mods), optionally after chdir.

    legacy_refpoint: pycrg's bundled OpenCRG (2.0.1 + upstream fixes) completes a
    "by refpoint" modifier set without refpoint_v / refpoint_v_fraction with
    refpoint_v = 0 (the reference line). OpenCRG 1.2.0 / commit 6eeb2cd (the
    version in /work/shared/specs/opencrg.md) used refpoint_v_fraction = 0 (the
    right border, v_min). With this flag that older default is set explicitly
    before crgDataSetModifiersApply, reproducing the older results.
    """
    path = resolve(path, cwd)
    if cwd is not None:
        os.chdir(cwd)
    try:
        dataset = pycrg.DataSet.open(path, apply_modifiers=False, check=False)
        if mods:
            if legacy_refpoint:
                by_ref = any(dataset.modifier_get_double(m) is not None for m in REFPOINT_MODS)
                if (by_ref and dataset.modifier_get_double(pycrg.MOD_REF_POINT_V) is None
                        and dataset.modifier_get_double(pycrg.MOD_REF_POINT_V_FRAC) is None):
                    dataset.modifier_set_double(pycrg.MOD_REF_POINT_V_FRAC, 0.0)
            try:
                dataset.modifiers_apply()
            except BaseException:
                dataset.close()
                raise
        return dataset
    except (pycrg.OpenCRGError, OSError) as exc:
        details = ""
        for _level, text in getattr(exc, "messages", ()):
            details += "\n  " + text.rstrip()
        raise UsageError(f"cannot load {path}: {exc}{details}") from exc


def new_cp(dataset: pycrg.DataSet, opts) -> pycrg.ContactPoint:
    cp = dataset.create_contact_point()
    for key, option_id, is_int, value in opts:
        ok = cp.option_set_int(option_id, int(value)) if is_int else cp.option_set_double(option_id, value)
        if not ok:
            raise UsageError(f"C-API refused option {key}={value}")
    return cp


def try_call(function, a: float, b: float):
    try:
        return function(a, b)
    except pycrg.OpenCRGEvaluationError:
        return None


# ---------------------------------------------------------------------------
# eval
# ---------------------------------------------------------------------------


def read_points(path: str) -> list[tuple[str, float, float]]:
    points = []
    with open(path, encoding="utf-8") as stream:
        for number, line in enumerate(stream, 1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            parts = text.split()
            if len(parts) != 3 or parts[0].lower() not in ("uv", "xy"):
                raise UsageError(f"{path}:{number}: expected 'uv U V' or 'xy X Y', got {text!r}")
            try:
                points.append((parts[0].lower(), float(parts[1]), float(parts[2])))
            except ValueError as exc:
                raise UsageError(f"{path}:{number}: {exc}") from exc
    return points


def eval_point(cp: pycrg.ContactPoint, kind: str, a: float, b: float) -> str:
    if kind == "uv":
        u, v = a, b
        xy = try_call(cp.uv_to_xy, u, v)
        x, y = (None, None) if xy is None else xy
        z = try_call(cp.uv_to_z, u, v)
    else:
        x, y = a, b
        uv = try_call(cp.xy_to_uv, x, y)
        if uv is None:
            u = v = z = None
        else:
            u, v = uv
            z = try_call(cp.uv_to_z, u, v)
    return " ".join(fmt(value) for value in (x, y, u, v, z))


def cmd_eval(args) -> int:
    opts = parse_opts(args.opt)
    points = read_points(resolve(args.points, args.cwd))
    dataset = load(args.file, args.mods, args.cwd, args.legacy_refpoint)
    with dataset:
        cp = None if args.fresh_cp else new_cp(dataset, opts)
        for kind, a, b in points:
            if args.fresh_cp:
                with new_cp(dataset, opts) as fresh:
                    print(eval_point(fresh, kind, a, b))
            else:
                print(eval_point(cp, kind, a, b))
    return 0


# ---------------------------------------------------------------------------
# info
# ---------------------------------------------------------------------------


def cmd_info(args) -> int:
    opts = parse_opts(args.opt)
    dataset = load(args.file, args.mods, args.cwd, args.legacy_refpoint)
    with dataset:
        cp = new_cp(dataset, opts)
        u0, u1 = dataset.u_range()
        v0, v1 = dataset.v_range()
        du, dv = dataset.increments()
        kv("mods_applied", int(bool(args.mods)))
        try:
            header = pycrg.read_header(dataset.path)  # pycrg's Python parser of FILE's own header
            kv("data_format", header.data_format or "none")
            kv("file_reference", int(header.file_reference is not None))
            kv("mods_block", "none" if header.modifiers is None else ("empty" if not header.modifiers else "set"))
            kv("opts_block", "none" if header.options is None else ("empty" if not header.options else "set"))
        except Exception as exc:  # informative only
            print(f"crg_oracle: read_header failed: {exc}", file=sys.stderr)
        kv("u_min", u0)
        kv("u_max", u1)
        kv("v_min", v0)
        kv("v_max", v1)
        kv("u_inc", du)
        kv("v_inc", dv)  # 0: long sections at explicit (non-uniform) v positions
        nu, nv = _native.dataset_grid_shape(dataset.dataset_id)
        kv("n_rows", nu)  # cross sections
        kv("n_long_sections", nv)
        for tag, u in (("start", u0), ("end", u1)):
            xy = try_call(cp.uv_to_xy, u, 0.0)
            pk = try_call(cp.uv_to_pk, u, 0.0)
            kv(f"refline_{tag}_x", None if xy is None else xy[0])
            kv(f"refline_{tag}_y", None if xy is None else xy[1])
            kv(f"refline_{tag}_phi", None if pk is None else pk[0])
            kv(f"refline_{tag}_curv", None if pk is None else pk[1])
        for name, u, v in (("ustart_vmin", u0, v0), ("ustart_vmax", u0, v1),
                           ("uend_vmin", u1, v0), ("uend_vmax", u1, v1)):
            kv(f"z_{name}", try_call(cp.uv_to_z, u, v))
        _ok, is_closed, cu0, cu1 = dataset.closed_track_data()
        kv("closed_track", is_closed)
        if is_closed:
            kv("closed_track_u_min", cu0)
            kv("closed_track_u_max", cu1)
    return 0


# ---------------------------------------------------------------------------
# bench
# ---------------------------------------------------------------------------


def ms(seconds: float) -> str:
    return "%.3f" % (seconds * 1e3)


def ns(seconds: float, count: int) -> str:
    return "%.1f" % (seconds * 1e9 / count)


def proc_status_kb(key: str) -> int:
    with open("/proc/self/status") as stream:
        for line in stream:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return -1


def cmd_loadtime(args) -> int:
    """Hidden helper: load FILE --repeat times in a fresh process, report time and memory."""
    rss0 = proc_status_kb("VmRSS")
    times = []
    rss_loaded = -1
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        dataset = pycrg.DataSet.open(args.file, apply_modifiers=False)
        times.append(time.perf_counter() - t0)
        rss_loaded = max(rss_loaded, proc_status_kb("VmRSS"))
        if args.verify:
            nu, nv = _native.dataset_grid_shape(dataset.dataset_id)
            u0, u1 = dataset.u_range()
            v0, v1 = dataset.v_range()
            print(f"grid {nu} {nv} {fmt(u0)} {fmt(u1)} {fmt(v0)} {fmt(v1)}")
            cp = dataset.create_contact_point()
            for iu, iv in ((0, 0), (nu // 2, nv // 3), (nu - 1, nv - 1), (12345, 678)):
                u = u0 + iu * (u1 - u0) / (nu - 1)
                v = v0 + iv * (v1 - v0) / (nv - 1)
                xy = cp.uv_to_xy(u, v)
                print(f"node {iu} {iv} {fmt(cp.uv_to_z(u, v))} {fmt(xy[0])} {fmt(xy[1])}")
            args.verify = False
        dataset.close()
    print("load_ms " + " ".join(ms(t) for t in times))
    print(f"rss_before_kb {rss0}")
    print(f"rss_loaded_kb {rss_loaded}")
    print(f"hwm_kb {proc_status_kb('VmHWM')}")
    return 0


def big_grid(nu: int, nv: int, du: float, dv: float, v_right: float) -> np.ndarray:
    """Deterministic float32 test surface (waves + seeded noise), shape (nu, nv)."""
    rng = np.random.default_rng(2024)
    z = np.empty((nu, nv), dtype=np.float32)
    v = (v_right + dv * np.arange(nv)).astype(np.float64)
    chunk = 10000
    for start in range(0, nu, chunk):
        stop = min(nu, start + chunk)
        u = du * np.arange(start, stop, dtype=np.float64)[:, None]
        block = 0.05 * np.sin(u * (2 * np.pi / 37.0)) + 0.01 * np.cos(v[None, :] * (2 * np.pi / 3.1)) \
            + 0.002 * rng.standard_normal((stop - start, nv))
        z[start:stop] = block
    z[0, 0] = 0.0  # first data byte must not be CR/LF (the loader skips line breaks after $$$$)
    return z


def write_krbi(path: str, z: np.ndarray, du: float, dv: float, v_right: float,
               x0: float, y0: float, phi0: float) -> None:
    """KRBI writer following /work/shared/specs/opencrg.md section 1.9.

    Straight refline, only long-section channels, big-endian float32 row after
    row, NaN padding to a multiple of 80 bytes, empty $ROAD_CRG_MODS block (so
    modifiers, if applied, keep the placement).

    Two loader rules the spec 1.9 template does not show (both verified):
    - every block must be closed by a "$" line before the next block keyword;
      "$CT / text / $ROAD_CRG" (as in the template) makes the loader ignore the
      whole $ROAD_CRG block, and the file then fails to load;
    - getLineFromData skips ALL CR/LF bytes after the "$$$$" line, so the
      first binary value must not start with byte 0x0A or 0x0D (tiny positive
      floats ~6e-33 or ~4e-31); otherwise the whole grid is read shifted.
    """
    nu, nv = z.shape
    header = [
        "$CT",
        "roadscan crg_oracle.py bench grid (straight refline, 1 cm grid)",
        "$",  # NOT optional: the loader only opens a block from "no block" (setSection);
              # "$ROAD_CRG" directly after the $CT text is ignored (spec 1.9 template lacks this)
        "$ROAD_CRG",
        "REFERENCE_LINE_START_U = 0.0",
        f"REFERENCE_LINE_END_U   = {(nu - 1) * du!r}",
        f"REFERENCE_LINE_INCREMENT = {du!r}",
        f"REFERENCE_LINE_START_X = {x0!r}",
        f"REFERENCE_LINE_START_Y = {y0!r}",
        f"REFERENCE_LINE_START_PHI = {phi0!r}",
        f"LONG_SECTION_V_RIGHT = {v_right!r}",
        f"LONG_SECTION_V_LEFT  = {v_right + (nv - 1) * dv!r}",
        f"LONG_SECTION_V_INCREMENT = {dv!r}",
        "$",
        "$ROAD_CRG_MODS",
        "$",
        "$KD_Definition",
        "#:KRBI",
        *[f"D:long section {i},m" for i in range(1, nv + 1)],
        "$",
        "$" * 72,
    ]
    with open(path, "wb") as stream:
        stream.write(("\n".join(header) + "\n").encode("ascii"))
        chunk = 5000
        for start in range(0, nu, chunk):
            stream.write(z[start:start + chunk].astype(">f4").tobytes())
        total = nu * nv * 4
        pad = (-total) % 80
        stream.write(np.full(pad // 4, np.nan, dtype=">f4").tobytes())


def run_loadtime(path: str, repeat: int, verify: bool) -> dict[str, list[str]]:
    command = [sys.executable, os.path.abspath(__file__), "_loadtime", path, "--repeat", str(repeat)]
    if verify:
        command.append("--verify")
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    out: dict[str, list[str]] = {}
    for line in result.stdout.splitlines():
        key, *rest = line.split()
        out.setdefault(key, []).append(" ".join(rest))
    return out


def cmd_bench(args) -> int:
    kv("pycrg_version", pycrg.__version__)
    kv("opencrg_release", pycrg.get_release_info().replace(" ", "_"))
    kv("numpy_version", np.__version__)
    kv("cpu_count", os.cpu_count())

    # (a) loading
    path = args.file
    kv("a_file", path)
    kv("a_file_bytes", os.path.getsize(path))
    pycrg.DataSet.open(path, apply_modifiers=False).close()  # warm the page cache
    load_times, mods_times = [], []
    for _ in range(args.loads):
        t0 = time.perf_counter()
        dataset = pycrg.DataSet.open(path, apply_modifiers=False)
        t1 = time.perf_counter()
        dataset.modifiers_apply()
        t2 = time.perf_counter()
        dataset.close()
        load_times.append(t1 - t0)
        mods_times.append(t2 - t1)
    kv("a_loads", args.loads)
    kv("a_load_median_ms", ms(statistics.median(load_times)))
    kv("a_load_min_ms", ms(min(load_times)))
    kv("a_modifiers_apply_median_ms", ms(statistics.median(mods_times)))

    # (b) uv -> z queries, raw file placement (no modifiers)
    with pycrg.DataSet.open(path, apply_modifiers=False) as dataset:
        cp = dataset.create_contact_point()
        u0, u1 = dataset.u_range()
        v0, v1 = dataset.v_range()
        rng = np.random.default_rng(args.seed)
        n = args.queries
        us = rng.uniform(u0, u1, n)
        vs = rng.uniform(v0, v1, n)
        kv("b_queries", n)
        kv("b_seed", args.seed)

        # batch: ContactPoint.uv_to_z_many -> one C loop over crgEvaluv2z
        batch_times = []
        for _ in range(5):
            t0 = time.perf_counter()
            z_batch = cp.uv_to_z_many(us, vs)
            batch_times.append(time.perf_counter() - t0)
        kv("b_batch_uv_to_z_many_ns_per_query", ns(statistics.median(batch_times), n))
        kv("b_batch_repeats", len(batch_times))

        # Python loop over the public single call (mostly interpreter overhead)
        ul, vl = us.tolist(), vs.tolist()
        f = cp.uv_to_z
        z_loop = [0.0] * n
        t0 = time.perf_counter()
        for i in range(n):
            try:
                z_loop[i] = f(ul[i], vl[i])
            except pycrg.OpenCRGEvaluationError:
                z_loop[i] = math.nan
        t_loop = time.perf_counter() - t0
        kv("b_pyloop_cp_uv_to_z_ns_per_query", ns(t_loop, n))

        # Python loop over the private native call (less wrapper overhead)
        g = _native.eval_uv_to_z
        cid = cp.cp_id
        t0 = time.perf_counter()
        for i in range(n):
            g(cid, ul[i], vl[i])
        t_raw = time.perf_counter() - t0
        kv("b_pyloop_native_eval_uv_to_z_ns_per_query", ns(t_raw, n))

        # Python loop with no call at all (loop overhead baseline)
        t0 = time.perf_counter()
        for i in range(n):
            ul[i], vl[i]
        kv("b_pyloop_empty_ns_per_iteration", ns(time.perf_counter() - t0, n))

        za = np.asarray(z_loop)
        same_nan = np.isnan(za) == np.isnan(z_batch)
        kv("b_nan_fraction", "%.6f" % float(np.isnan(z_batch).mean()))
        kv("b_loop_vs_batch_nan_mismatch", int((~same_nan).sum()))
        finite = ~np.isnan(za) & ~np.isnan(z_batch)
        kv("b_loop_vs_batch_max_abs_diff", float(np.max(np.abs(za[finite] - z_batch[finite]))))

    # (c) 1 km x 8 m grid at 1 cm
    if args.no_big:
        return 0
    nu, nv, du, dv, v_right = 100_001, 801, 0.01, 0.01, -4.0
    x0, y0, phi0 = 1000.0, 2000.0, 0.5
    kv("c_grid_nu", nu)
    kv("c_grid_nv", nv)
    t0 = time.perf_counter()
    z = big_grid(nu, nv, du, dv, v_right)
    kv("c_generate_grid_s", "%.3f" % (time.perf_counter() - t0))

    own = os.path.join(args.big_dir, "roadscan_crg_oracle_1km_own.crg")
    t0 = time.perf_counter()
    write_krbi(own, z, du, dv, v_right, x0, y0, phi0)
    kv("c_own_write_s", "%.3f" % (time.perf_counter() - t0))
    kv("c_own_file_bytes", os.path.getsize(own))
    files = [("own", own)]

    if not args.no_pycrg_writer:
        pw = os.path.join(args.big_dir, "roadscan_crg_oracle_1km_pycrg.crg")
        v = v_right + dv * np.arange(nv)
        t0 = time.perf_counter()
        pycrg.write(pw, z, du, v, phi0, x0=x0, y0=y0, fmt="KRBI", mods={})
        kv("c_pycrg_write_s", "%.3f" % (time.perf_counter() - t0))
        kv("c_pycrg_file_bytes", os.path.getsize(pw))
        files.append(("pycrg", pw))

    # expected values at the nodes verified by the child process
    for iu, iv in ((0, 0), (nu // 2, nv // 3), (nu - 1, nv - 1), (12345, 678)):
        kv(f"c_expected_node_{iu}_{iv}_z", float(z[iu, iv]))
    del z

    for tag, file in files:
        # each load in a fresh process: clean memory numbers (file is in the page cache)
        result = run_loadtime(file, args.big_loads, verify=True)
        times = [float(t) for t in result["load_ms"][0].split()]
        kv(f"c_{tag}_load_median_ms", "%.1f" % statistics.median(times))
        kv(f"c_{tag}_load_min_ms", "%.1f" % min(times))
        kv(f"c_{tag}_loads", len(times))
        kv(f"c_{tag}_rss_before_load_mb", "%.1f" % (int(result["rss_before_kb"][0]) / 1024))
        kv(f"c_{tag}_rss_loaded_mb", "%.1f" % (int(result["rss_loaded_kb"][0]) / 1024))
        kv(f"c_{tag}_peak_rss_mb", "%.1f" % (int(result["hwm_kb"][0]) / 1024))
        kv(f"c_{tag}_grid", result["grid"][0].replace(" ", ","))
        for line in result.get("node", []):
            iu, iv, zval, x, y = line.split()
            kv(f"c_{tag}_node_{iu}_{iv}_z_x_y", f"{zval},{x},{y}")
        if not args.keep_big:
            os.remove(file)
    return 0


# ---------------------------------------------------------------------------
# selftest: published C-API values (specs/opencrg.md section 3)
# ---------------------------------------------------------------------------

# (file, mods, legacy_refpoint, query, args, expected values, absolute tolerance)
# tolerance = half a unit of the last published digit (+ float slack)
PUBLISHED = [
    ("crg-bin/belgian_block.crg", False, False, "uv2z", (730.0, 0.0), (2.13159323,), 6e-9),
    ("crg-bin/belgian_block.crg", False, False, "uv2z", (735.3, 0.2), (2.1127429,), 6e-8),
    ("crg-bin/belgian_block.crg", False, False, "uv2z", (740.0, -1.7), (math.nan,), 0.0),
    ("crg-bin/belgian_block.crg", False, False, "xy2uv", (230.0, 80.0), (734.577980, 0.258372), 6e-7),
    ("crg-bin/belgian_block.crg", False, False, "xy2uv2z", (230.0, 80.0), (2.12130756,), 6e-9),
    ("crg-bin/belgian_block.crg", False, False, "uv2xy", ("u0", 0.0), (233.995743, 77.718214), 6e-7),
    ("crg-bin/belgian_block.crg", False, False, "uv2pk_phi", ("u0", 0.0), (2.652797461,), 6e-10),
    ("crg-bin/belgian_block.crg", False, False, "uv2xy", ("u1", 0.0), (226.198666, 83.897903), 6e-7),
    ("crg-bin/belgian_block.crg", False, False, "uv2pk_phi", ("u1", 0.0), (2.305324554,), 6e-10),
    ("crg-txt/handmade_straight.crg", False, False, "uv2xy", ("u1", 0.0), (22.0, 0.0), 1e-12),
    ("crg-txt/handmade_curved_banked_sloped.crg", True, False, "uv2z", (5.3, 0.2), (0.142182216,), 6e-10),
    # the refline end published for mods applied needs the OpenCRG 1.2.0 default refpoint (v_min)
    ("crg-txt/handmade_curved_banked_sloped.crg", True, True, "uv2xy", ("u1", 0.0), (21.953446, 2.708659), 6e-7),
    ("crg-txt/handmade_straight.crg", True, True, "uv2xy", ("u0", 0.0), (0.0, 1.5), 1e-12),
]


def cmd_selftest(args) -> int:
    failures = 0
    for rel, mods, legacy, query, qargs, expected, tol in PUBLISHED:
        dataset = load(os.path.join(args.data_dir, rel), mods, None, legacy)
        with dataset:
            cp = dataset.create_contact_point()
            u0, u1 = dataset.u_range()
            a, b = ({"u0": u0, "u1": u1}.get(q, q) if isinstance(q, str) else q for q in qargs)
            if query == "uv2z":
                got = (try_call(cp.uv_to_z, a, b),)
            elif query == "uv2xy":
                got = try_call(cp.uv_to_xy, a, b) or (None, None)
            elif query == "uv2pk_phi":
                pk = try_call(cp.uv_to_pk, a, b)
                got = (None if pk is None else pk[0],)
            elif query == "xy2uv":
                got = try_call(cp.xy_to_uv, a, b) or (None, None)
            else:  # xy2uv2z
                uv = try_call(cp.xy_to_uv, a, b)
                got = (None if uv is None else try_call(cp.uv_to_z, *uv),)
        ok = all(g is not None and ((math.isnan(e) and math.isnan(g)) or abs(g - e) <= tol)
                 for g, e in zip(got, expected))
        failures += not ok
        label = f"{rel}{' mods' if mods else ''}{' legacy_refpoint' if legacy else ''} {query}({fmt(a)},{fmt(b)})"
        print(f"{'ok' if ok else 'FAIL'} {label} got {' '.join(fmt(g) for g in got)}"
              f" expected {' '.join(fmt(e) for e in expected)}")
    print(f"selftest {'passed' if not failures else f'FAILED {failures}'}")
    return 1 if failures else 0


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("eval", help="evaluate points (x y u v z per line)")
    p.add_argument("file")
    p.add_argument("--points", required=True)
    p.add_argument("--mods", action="store_true", help="apply modifiers after loading")
    p.add_argument("--cwd", help="chdir here before loading")
    p.add_argument("--opt", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--fresh-cp", action="store_true", help="new contact point per point")
    p.add_argument("--legacy-refpoint", action="store_true",
                   help="with --mods: default refpoint at v_min (OpenCRG 1.2.0) instead of v=0")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("info", help="ranges, refline ends, corner z")
    p.add_argument("file")
    p.add_argument("--mods", action="store_true")
    p.add_argument("--legacy-refpoint", action="store_true")
    p.add_argument("--cwd")
    p.add_argument("--opt", action="append", default=[], metavar="KEY=VALUE")
    p.set_defaults(func=cmd_info)

    p = sub.add_parser("bench", help="timings")
    p.add_argument("--file", default=DEFAULT_BENCH_FILE)
    p.add_argument("--loads", type=int, default=20)
    p.add_argument("--queries", type=int, default=1_000_000)
    p.add_argument("--seed", type=int, default=12345)
    p.add_argument("--no-big", action="store_true", help="skip the 1 km x 8 m grid")
    p.add_argument("--big-dir", default="/tmp")
    p.add_argument("--big-loads", type=int, default=3)
    p.add_argument("--keep-big", action="store_true")
    p.add_argument("--no-pycrg-writer", action="store_true")
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser("_loadtime")  # internal helper of bench
    p.add_argument("file")
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--verify", action="store_true")
    p.set_defaults(func=cmd_loadtime)

    p = sub.add_parser("selftest", help="check the published values of specs/opencrg.md section 3")
    p.add_argument("--data-dir", default=DEFAULT_DATA_DIR)
    p.set_defaults(func=cmd_selftest)

    args = parser.parse_args(argv)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet when piped into head
    try:
        return args.func(args)
    except UsageError as exc:
        print(f"crg_oracle: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
