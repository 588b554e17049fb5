#!/usr/bin/env python3
"""CI gate: validate written OpenDRIVE files with ASAM qc-opendrive.

Standard library only (Python >= 3.9), so it can run with the python of the
virtualenv that holds the checker:

    python3 -m venv /tmp/qcvenv
    /tmp/qcvenv/bin/pip install asam-qc-opendrive asam-qc-framework

Usage:
    qc_opendrive.py --qc /tmp/qcvenv/bin/qc_opendrive [--baseline SRC.xodr] OUT.xodr [OUT2.xodr ...]
    qc_opendrive.py --qc /tmp/qcvenv/bin/qc_opendrive --pairs PAIRS.txt

PAIRS.txt: one pair per line, "OUTPUT.xodr<TAB>SOURCE.xodr". The source is optional.
Blank lines and lines starting with '#' are ignored. Relative paths are resolved
against the current working directory.

A file FAILS (exit 1) if
  (a) any issue comes from the schema checker or from a basic XML checker,
  (b) the schema checker was skipped or errored (no XSD for the version, or basic checks failed),
  (c) it has a level-1 issue whose ruleUID the source did not also have, or
  (d) the checker did not produce a result file for it.
What counts as "the source already had": the ruleUIDs of all issues the checker reports for the
source, plus (if it passes the schema) a temporary copy of the source whose header says
revMinor="8". qc-opendrive skips most rules for files that declare revMinor <= 6, so without the
bumped copy a 1.4 source would hide issues that then show up in our 1.8 output. Anything before
"<?xml" is removed from that copy, because strict XML parsers reject it, and schema-only repairs
are applied (see schema_only_repairs: userData dropped, required attributes older revisions
omit filled in; nothing a semantic rule reads is touched).

A semantic/geometry/... checker that crashes (status="error") is reported as a warning and does
not fail the run. Its issues found before the crash are still counted.

One line per issue is printed, tab-separated:
    VERDICT  FILE  CHECKER  LEVEL  RULE_UID  DESCRIPTION  LOCATION
VERDICT is FAIL (causes failure), KNOWN (level 1, the source has the same ruleUID),
WARN (level 2), INFO (level 3), CRASH (checker error, warning only), SKIP (checker skipped).
The last line is the summary:
    qc-opendrive: N files, N schema issues, N new level-1 issues, N level-2 warnings, ... -> PASS|FAIL
Exit code: 0 pass, 1 fail, 2 usage error.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

CHECKER_PREFIX = "check_asam_xodr_"
SCHEMA_CHECKER = "check_asam_xodr_xml_valid_schema"
BASIC_CHECKERS = {
    "check_asam_xodr_xml_valid_xml_document",
    "check_asam_xodr_xml_root_tag_is_opendrive",
    "check_asam_xodr_xml_fileheader_is_present",
    "check_asam_xodr_xml_version_is_defined",
}
BUMP_MINOR = "8"

CONFIG_TEMPLATE = """<?xml version="1.0" encoding="UTF-8"?>
<Config>
  <Param name="InputFile" value="{input}"/>
  <CheckerBundle application="xodrBundle">
    <Param name="resultFile" value="{result}"/>
  </CheckerBundle>
</Config>
"""


# --------------------------------------------------------------------------- data model

@dataclass
class Issue:
    checker: str
    level: int
    rule_uid: str
    description: str
    location: str

    @property
    def is_schema(self) -> bool:
        return self.checker == SCHEMA_CHECKER or "xml.valid_schema" in self.rule_uid or "schema" in self.rule_uid.rsplit(":", 1)[-1]

    @property
    def is_basic(self) -> bool:
        return self.checker in BASIC_CHECKERS


@dataclass
class CheckerStatus:
    checker: str
    status: str
    summary: str


@dataclass
class RunResult:
    path: str                      # file that was checked
    ok: bool                       # checker produced a readable result file
    error: str = ""                # why not
    issues: List[Issue] = field(default_factory=list)
    checkers: Dict[str, CheckerStatus] = field(default_factory=dict)

    def status(self, checker_id: str) -> str:
        c = self.checkers.get(checker_id)
        return c.status if c else "missing"

    @property
    def schema_passed(self) -> bool:
        return (self.ok and self.status(SCHEMA_CHECKER) == "completed"
                and not any(i.is_schema or i.is_basic for i in self.issues))

    def rule_uids(self) -> Set[str]:
        return {i.rule_uid for i in self.issues}


# --------------------------------------------------------------------------- running the checker

def _attr_escape(s: str) -> str:
    return (s.replace("&", "&amp;").replace('"', "&quot;")
            .replace("<", "&lt;").replace(">", "&gt;"))


def short_checker(cid: str) -> str:
    return cid[len(CHECKER_PREFIX):] if cid.startswith(CHECKER_PREFIX) else cid


def run_checker(qc_bin: str, xodr: str, workroot: str, timeout: float, keep: bool) -> RunResult:
    xodr = os.path.abspath(xodr)
    if not os.path.isfile(xodr):
        return RunResult(xodr, False, "file not found")
    tmp = tempfile.mkdtemp(prefix="qc_", dir=workroot)
    result_file = os.path.join(tmp, "xodr_bundle_report.xqar")
    config = os.path.join(tmp, "config.xml")
    with open(config, "w", encoding="utf-8") as f:
        f.write(CONFIG_TEMPLATE.format(input=_attr_escape(xodr), result=_attr_escape(result_file)))
    log = os.path.join(tmp, "checker.log")
    try:
        with open(log, "wb") as lf:
            proc = subprocess.run([qc_bin, "-c", config], cwd=tmp, stdout=lf,
                                  stderr=subprocess.STDOUT, timeout=timeout)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        return RunResult(xodr, False, f"checker timed out after {timeout:.0f} s (log: {log})")
    except OSError as e:
        return RunResult(xodr, False, f"cannot run checker {qc_bin}: {e}")
    if not os.path.isfile(result_file):
        tail = ""
        try:
            with open(log, "r", encoding="utf-8", errors="replace") as lf:
                tail = " | ".join(lf.read().strip().splitlines()[-3:])
        except OSError:
            pass
        return RunResult(xodr, False, f"checker exit {rc}, no result file written: {tail}")
    res = parse_xqar(result_file, xodr)
    if not keep and res.ok:
        shutil.rmtree(tmp, ignore_errors=True)
    return res


def _location_text(issue_el: ET.Element, issue_desc: str) -> Tuple[str, str]:
    """Returns (extra message from Locations@description, location string)."""
    msgs: List[str] = []
    locs: List[str] = []
    for loc in issue_el.findall("Locations"):
        d = (loc.get("description") or "").strip()
        if d and d != issue_desc and d not in msgs:
            msgs.append(d)
        for fl in loc.findall("FileLocation"):
            parts = []
            if fl.get("row") is not None:
                parts.append(f"row {fl.get('row')}")
            if fl.get("column") not in (None, "0"):
                parts.append(f"col {fl.get('column')}")
            if fl.get("offset") is not None:
                parts.append(f"offset {fl.get('offset')}")
            if parts:
                locs.append(" ".join(parts))
        for xl in loc.findall("XMLLocation"):
            locs.append(xl.get("xpath", ""))
        for il in loc.findall("InertialLocation"):
            try:
                locs.append("xyz=({:.3f}, {:.3f}, {:.3f})".format(
                    float(il.get("x")), float(il.get("y")), float(il.get("z"))))
            except (TypeError, ValueError):
                locs.append("xyz=({}, {}, {})".format(il.get("x"), il.get("y"), il.get("z")))
    return "; ".join(msgs), "; ".join(l for l in locs if l) or "-"


def parse_xqar(result_file: str, xodr: str) -> RunResult:
    try:
        root = ET.parse(result_file).getroot()
    except (ET.ParseError, OSError) as e:
        return RunResult(xodr, False, f"cannot parse {result_file}: {e}")
    res = RunResult(xodr, True)
    for ch in root.iter("Checker"):
        cid = ch.get("checkerId", "?")
        res.checkers[cid] = CheckerStatus(cid, ch.get("status", "missing"), ch.get("summary", ""))
        for iss in ch.findall("Issue"):
            desc = (iss.get("description") or "").strip()
            extra, loc = _location_text(iss, desc)
            if extra:
                desc = f"{desc}: {extra}" if desc else extra
            try:
                level = int(iss.get("level", "0"))
            except ValueError:
                level = 0
            res.issues.append(Issue(cid, level, iss.get("ruleUID", ""), desc, loc))
    return res


# --------------------------------------------------------------------------- bumped copy of a source

_HEADER_RE = re.compile(rb"<header\b[^>]*>", re.S)
_REVMINOR_RE = re.compile(rb"""(\brevMinor\s*=\s*)(["'])\s*([^"']*)\2""")


_OBJECT_TYPES_18 = {
    "none", "obstacle", "car", "pole", "tree", "vegetation", "barrier", "building", "parkingSpace", "patch",
    "railing", "trafficIsland", "crosswalk", "streetLamp", "gantry", "soundBarrier", "van", "bus", "trailer",
    "bike", "motorbike", "tram", "train", "pedestrian", "wind", "roadMark", "roadSurface",
}


def schema_only_repairs(data: bytes) -> Tuple[bytes, List[str]]:
    """Make an old source valid against the 1.8 schema without touching anything a semantic rule
    reads (geometry, profiles, lanes, links): drop userData, give objects the zOffset and
    roadMarks the color that older revisions let them omit, map object types outside the 1.8
    enumeration to "none", drop zero-width roadMark <type> details and 1.9-only CRG attributes.
    Without this, most legacy sources fail the 1.8 schema (userData in the centre lane) and
    every semantic rule is skipped, so the baseline would be empty."""
    try:
        root = ET.fromstring(data)
    except ET.ParseError:
        return data, []
    counts: Dict[str, int] = {}

    def bump(what: str) -> None:
        counts[what] = counts.get(what, 0) + 1

    for parent in list(root.iter()):
        for child in list(parent):
            if child.tag == "userData":
                parent.remove(child)
                bump("userData removed")
            elif child.tag == "type" and parent.tag == "roadMark":
                try:
                    ok = float(child.get("width", "0")) > 0
                except ValueError:
                    ok = False
                if not ok:
                    parent.remove(child)
                    bump("zero-width roadMark type removed")
    for obj in root.iter("object"):
        if obj.get("zOffset") is None:
            obj.set("zOffset", "0")
            bump("object zOffset added")
        if obj.get("type") is not None and obj.get("type") not in _OBJECT_TYPES_18:
            obj.set("type", "none")
            bump("object type mapped")
    for rm in root.iter("roadMark"):
        if rm.get("color") is None:
            rm.set("color", "standard")
            bump("roadMark color added")
    for surface in root.iter("surface"):
        for crg in surface.iter("CRG"):
            for k in ("xOffset", "yOffset"):
                if k in crg.attrib:
                    del crg.attrib[k]
                    bump("1.9 CRG attribute removed")
            if crg.get("sStart") is not None and crg.get("orientation") is None:
                crg.set("orientation", "same")
                bump("CRG orientation added")
    if not counts:
        return data, []
    out = b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="utf-8")
    return out, [f"{n} {what}" for what, n in sorted(counts.items())]


def make_bumped_copy(src: str, dest_dir: str) -> Tuple[Optional[str], str]:
    """Copy of src with header revMinor="8" and nothing before '<?xml'.

    Returns (path or None, note). None if the copy would be identical to src or cannot be made.
    """
    try:
        with open(src, "rb") as f:
            data = f.read()
    except OSError as e:
        return None, f"cannot read: {e}"
    notes = []
    pos = data.find(b"<?xml")
    if pos > 0:
        data = data[pos:]
        notes.append(f"stripped {pos} bytes before <?xml")
    m = _HEADER_RE.search(data)
    if not m:
        return None, "no <header> element"
    tag = m.group(0)
    mm = _REVMINOR_RE.search(tag)
    if not mm:
        return None, "header has no revMinor"
    old = mm.group(3).decode("ascii", "replace")
    if old.strip() != BUMP_MINOR:
        q = mm.group(2)
        new_tag = tag[:mm.start()] + mm.group(1) + q + BUMP_MINOR.encode() + q + tag[mm.end():]
        data = data[:m.start()] + new_tag + data[m.end():]
        notes.append(f"revMinor {old} -> {BUMP_MINOR}")
    if not notes:
        return None, f"already revMinor={BUMP_MINOR}"
    data, fixes = schema_only_repairs(data)
    if fixes:
        notes.append("schema-only repairs: " + ", ".join(fixes))
    base = os.path.basename(src)
    stem = base[:-5] if base.lower().endswith(".xodr") else base
    d = tempfile.mkdtemp(prefix="bump_", dir=dest_dir)
    path = os.path.join(d, f"{stem}.rev1{BUMP_MINOR}.xodr")
    with open(path, "wb") as f:
        f.write(data)
    return path, ", ".join(notes)


# --------------------------------------------------------------------------- evaluation

@dataclass
class Totals:
    files: int = 0
    failed_files: int = 0
    schema: int = 0
    basic: int = 0
    new_l1: int = 0
    known_l1: int = 0
    l2: int = 0
    l3: int = 0
    crashes: int = 0


def out(*cols: str) -> None:
    print("\t".join(c.replace("\t", " ").replace("\n", " ") for c in cols), flush=False)


SCHEMA_ONLY = False
STRICT = False


def evaluate(output: str, source: Optional[str], results: Dict[str, RunResult],
             bumped: Dict[str, Tuple[Optional[str], str]], totals: Totals, verbose: bool) -> bool:
    """Print the lines for one output file; return True if it passes."""
    totals.files += 1
    r = results[os.path.abspath(output)]
    passed = True
    if not r.ok:
        out("FAIL", output, "-", "-", "-", f"checker run failed: {r.error}", "-")
        totals.failed_files += 1
        return False

    # Baseline from the source (original + revMinor-8 copy if that passes schema).
    baseline: Set[str] = set()
    base_note = "no source"
    if source:
        sr = results[os.path.abspath(source)]
        notes = []
        if not os.path.isfile(source):
            # A typo in PAIRS.txt must not silently turn into "no baseline".
            passed = False
            out("FAIL", output, "-", "-", "-", f"source file not found: {source}", "-")
            notes.append("source missing")
        elif sr.ok:
            baseline |= sr.rule_uids()
            notes.append(f"source: {len(sr.rule_uids())} ruleUIDs")
        else:
            notes.append(f"source check failed ({sr.error}), empty baseline")
        bpath, bnote = bumped.get(os.path.abspath(source), (None, "not made"))
        if bpath:
            br = results[bpath]
            if br.ok and br.schema_passed:
                baseline |= br.rule_uids()
                notes.append(f"bumped copy ({bnote}): {len(br.rule_uids())} ruleUIDs")
            elif br.ok:
                msg = next((i.description for i in br.issues if i.is_schema or i.is_basic),
                           br.checkers.get(SCHEMA_CHECKER, CheckerStatus("", "missing", "")).summary)
                notes.append(f"bumped copy ({bnote}) fails schema, not used: {msg[:200]}")
            else:
                notes.append(f"bumped copy check failed: {br.error}")
        else:
            notes.append(f"no bumped copy ({bnote})")
        base_note = "; ".join(notes)
    if verbose:
        out("NOTE", output, "-", "-", "-", f"baseline {sorted(baseline)} ({base_note})", "-")

    for i in r.issues:
        if i.is_schema:
            verdict = "FAIL"
            totals.schema += 1
        elif i.is_basic:
            verdict = "FAIL"
            totals.basic += 1
        elif i.level == 1:
            if i.rule_uid in baseline:
                verdict = "KNOWN"
                totals.known_l1 += 1
            elif SCHEMA_ONLY:
                # Rules differ between revisions (1.8 replaced some 1.7 junction rules): a
                # downgraded file is judged by its schema only.
                verdict = "WARN"
                totals.l2 += 1
            else:
                verdict = "FAIL"
                totals.new_l1 += 1
        elif i.level == 2:
            verdict = "WARN"
            totals.l2 += 1
        else:
            verdict = "INFO"
            totals.l3 += 1
        if STRICT and verdict in ("KNOWN", "WARN", "INFO"):
            verdict = "FAIL"
        if verdict == "FAIL":
            passed = False
        out(verdict, output, short_checker(i.checker), str(i.level), i.rule_uid, i.description, i.location)

    # Checker status problems.
    schema_status = r.status(SCHEMA_CHECKER)
    if schema_status != "completed":
        passed = False
        summ = r.checkers.get(SCHEMA_CHECKER, CheckerStatus("", "missing", "not in result")).summary
        out("FAIL", output, short_checker(SCHEMA_CHECKER), "-", "-", f"schema checker {schema_status}: {summ}", "-")
    skipped = []
    for cid, st in r.checkers.items():
        if st.status == "error":
            if cid in BASIC_CHECKERS or cid == SCHEMA_CHECKER:
                passed = False
                out("FAIL", output, short_checker(cid), "-", "-", f"checker error: {st.summary}", "-")
            else:
                totals.crashes += 1
                out("CRASH", output, short_checker(cid), "-", "-",
                    f"checker crashed (warning only, its rule is not fully checked): {st.summary}", "-")
        elif st.status == "skipped" and cid != SCHEMA_CHECKER:
            skipped.append(short_checker(cid))
    if skipped and schema_status == "completed":
        if any(i.is_schema or i.is_basic for i in r.issues):
            out("SKIP", output, "-", "-", "-",
                f"{len(skipped)} of {len(r.checkers)} checkers skipped because the schema check failed", "-")
        else:
            # Typically version-gated rules (file declares an old revMinor) or unmet preconditions.
            out("SKIP", output, "-", "-", "-",
                f"{len(skipped)} of {len(r.checkers)} checkers skipped: {', '.join(skipped)}", "-")

    if not passed:
        totals.failed_files += 1
    out("PASS" if passed else "FAILED", output, "-", "-", "-",
        f"{len(r.issues)} issues ({base_note})", "-")
    return passed


# --------------------------------------------------------------------------- main

def read_pairs(path: str) -> List[Tuple[str, Optional[str]]]:
    pairs = []
    with open(path, "r", encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\r\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            cols = line.split("\t")
            o = cols[0].strip()
            s = cols[1].strip() if len(cols) > 1 and cols[1].strip() else None
            if len(cols) > 2:
                raise ValueError(f"{path}:{n}: more than 2 tab-separated columns")
            pairs.append((o, s))
    return pairs


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--qc", default=os.environ.get("QC_OPENDRIVE_BIN") or shutil.which("qc_opendrive"),
                    help="path of the qc_opendrive executable (default: $QC_OPENDRIVE_BIN or PATH)")
    ap.add_argument("--baseline", metavar="SRC.xodr", help="source file whose issues are tolerated (single-file form)")
    ap.add_argument("--pairs", metavar="PAIRS.txt", help="batch: lines 'OUTPUT.xodr<TAB>SOURCE.xodr' (source optional)")
    ap.add_argument("files", nargs="*", metavar="FILE.xodr")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="parallel checker runs (default 2)")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per checker run (default 900)")
    ap.add_argument("--keep-temp", action="store_true", help="keep the temp dir (configs, .xqar, logs, bumped copies)")
    ap.add_argument("--no-bump", action="store_true", help="do not check a revMinor=8 copy of the sources")
    ap.add_argument("-v", "--verbose", action="store_true", help="print the baseline ruleUIDs per file")
    ap.add_argument("--schema-only", action="store_true",
                    help="fail only on schema/basic issues; new level-1 issues are warnings (for 1.6/1.7 outputs)")
    ap.add_argument("--strict", action="store_true",
                    help="fail on any issue of any level (for roads we derive ourselves, which have no source)")
    a = ap.parse_args(argv)

    if not a.qc or not os.path.isfile(a.qc) or not os.access(a.qc, os.X_OK):
        ap.error(f"qc_opendrive executable not found: {a.qc!r} (use --qc)")
    pairs: List[Tuple[str, Optional[str]]] = []
    if a.pairs:
        try:
            pairs += read_pairs(a.pairs)
        except (OSError, ValueError) as e:
            ap.error(str(e))
    pairs += [(f, a.baseline) for f in a.files]
    if not pairs:
        ap.error("no input: give FILE.xodr or --pairs")
    if a.baseline and not a.files:
        ap.error("--baseline needs FILE.xodr")

    workroot = tempfile.mkdtemp(prefix="qc_opendrive_ci_")
    try:
        # Which files to run the checker on (deduplicated by absolute path).
        bumped: Dict[str, Tuple[Optional[str], str]] = {}
        jobs: List[str] = []
        seen: Set[str] = set()

        def add(p: str) -> None:
            ap_ = os.path.abspath(p)
            if ap_ not in seen:
                seen.add(ap_)
                jobs.append(ap_)

        for o, s in pairs:
            add(o)
            if s:
                add(s)
                sa = os.path.abspath(s)
                if not a.no_bump and sa not in bumped:
                    bumped[sa] = make_bumped_copy(sa, workroot) if os.path.isfile(sa) else (None, "file not found")
                    if bumped[sa][0]:
                        add(bumped[sa][0])

        results: Dict[str, RunResult] = {}
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
            futs = {ex.submit(run_checker, a.qc, p, workroot, a.timeout, a.keep_temp): p for p in jobs}
            for fu in concurrent.futures.as_completed(futs):
                p = futs[fu]
                try:
                    results[p] = fu.result()
                except Exception as e:  # noqa: BLE001 - never lose a file silently
                    results[p] = RunResult(p, False, f"internal error: {e!r}")

        totals = Totals()
        for o, s in pairs:
            global SCHEMA_ONLY, STRICT
            SCHEMA_ONLY = a.schema_only
            STRICT = a.strict
            evaluate(o, s, results, bumped, totals, a.verbose)

        ok = totals.failed_files == 0
        print(f"qc-opendrive: {totals.files} files, {totals.schema} schema issues, "
              f"{totals.new_l1} new level-1 issues, {totals.l2} level-2 warnings, "
              f"{totals.basic} basic-xml issues, {totals.known_l1} known level-1 issues, "
              f"{totals.crashes} checker crashes, {totals.failed_files} failed files -> "
              f"{'PASS' if ok else 'FAIL'}")
        if a.keep_temp:
            print(f"qc-opendrive: temp files kept in {workroot}")
        sys.stdout.flush()
        return 0 if ok else 1
    finally:
        if not a.keep_temp:
            shutil.rmtree(workroot, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
