"""The checks of a CI script: one line each, `ok` or `FAIL`; `done()` exits 1 if any failed."""
import sys

failed = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        failed.append(what)


def done():
    sys.exit(1 if failed else 0)
