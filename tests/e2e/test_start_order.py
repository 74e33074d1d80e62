#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The code common starts run sits side by side in the executable (issue #40's start-up;
docs/benchmarks.md, "Issue #40: the code a start runs, side by side").

cmake/start_order.txt lists the code sections `plan`, `fits`, `cost`, `models` and `--version` ran
when it was made (scripts/start_order.py); gold places them first, in that order. Two faults
would lose the gain without changing any answer, and this test catches both:
- the linker ignores the list (a flag lost, another linker): the listed functions spread over
  the whole executable again;
- the list goes stale (functions renamed or gone): fewer than 80% of its entries name a function
  the executable still has. Run scripts/start_order.py again.
Skipped (77) for an executable not linked by gold (the clang sanitizer build uses lld) and for any
sanitizer build (the list is made from the release build's functions).
"""
import os
import subprocess
import sys

GPURENT = os.environ.get("GPURENT_BIN", "build/gpurent")
SOURCE = os.environ.get("GPURENT_SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PREFIXES = (".text.startup.", ".text.hot.", ".text.")


def main():
    if os.environ.get("GPURENT_SANITIZED", "OFF").upper() in ("ON", "1", "TRUE"):
        print("skipped: a sanitizer build (the list is made from, and checked on, the release build)")
        return 77
    sections = subprocess.run(["readelf", "-SW", GPURENT], check=True, capture_output=True, text=True).stdout
    if ".note.gnu.gold-version" not in sections:
        print("skipped: not linked by gold")
        return 77
    listed = []
    with open(os.path.join(SOURCE, "cmake", "start_order.txt")) as f:
        for line in f:
            line = line.strip()
            listed.append(next(line[len(p):] for p in PREFIXES if line.startswith(p)))
    nm = subprocess.run(["nm", "-S", "--defined-only", GPURENT], check=True, capture_output=True, text=True).stdout
    where, copies = {}, {}
    for line in nm.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tTW":
            where.setdefault(parts[3], (int(parts[0], 16), int(parts[1], 16)))
            copies[parts[3]] = copies.get(parts[3], 0) + 1
    # A name several files define locally (an inlined clone, a static helper) has copies the list
    # does not mean; the span is measured on names defined once.
    found = {where[name] for name in listed if copies.get(name) == 1}
    failures = []
    share = len({n for n in listed if n in where}) / len(listed)
    if share < 0.8:
        failures.append(f"only {share:.0%} of cmake/start_order.txt names a function of {GPURENT}: "
                        "run scripts/start_order.py BUILD_DIR")
    if found:
        span = max(a + s for a, s in found) - min(a for a, _ in found)
        size = sum(s for _, s in found)
        # Side by side: the listed code spans at most 1.25 times its own size (alignment padding,
        # and the few entries gold cannot place), where spread out it spans about 8 times (measured: 1.20 and 8.0).
        if span > 1.25 * size:
            failures.append(f"the {len(found)} listed functions ({size} bytes) span {span} bytes of {GPURENT}: "
                            "the linker did not follow cmake/start_order.txt")
        print(f"{share:.0%} of {len(listed)} listed functions found; the {len(found)} defined once: {size} bytes "
              f"spanning {span}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
