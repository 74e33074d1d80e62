#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Prints what git would commit in a working tree, one path a line, sorted: `git ls-files -z
--cached --others --exclude-standard` asked in the tree and in every nested repository or
submodule below it (their .git never), files and links that exist only. The reference that
push's file set is compared with (tests/e2e/test_push_git.sh, bench/push_vs_git.sh).

Usage: git_files.py DIR"""
import os
import subprocess
import sys


def listing(top, prefix):
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         cwd=os.path.join(top, prefix) if prefix else top, check=True, capture_output=True).stdout
    for item in out.split(b"\0"):
        if not item:
            continue
        name = item.decode("utf-8", "surrogateescape").rstrip("/")
        rel = os.path.join(prefix, name) if prefix else name
        full = os.path.join(top, rel)
        if os.path.isdir(full) and not os.path.islink(full):
            if os.path.lexists(os.path.join(full, ".git")):
                yield from listing(top, rel)
        elif os.path.lexists(full):
            yield rel


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    paths = sorted(set(listing(sys.argv[1], "")), key=lambda s: s.encode("utf-8", "surrogateescape"))
    sys.stdout.write("".join(p + "\n" for p in paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
