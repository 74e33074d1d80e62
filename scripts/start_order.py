#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes cmake/start_order.txt: the functions gpurent's common starts run, for the linker to place
side by side (docs/benchmarks.md, "Issue #40: the code a start runs, side by side").

Usage: scripts/start_order.py [BUILD_DIR]   (needs valgrind; run it after a large change)

On this project's machines a first touch of a code page costs 25-30 us (the kernel maps 16 pages
around it); `plan` ran about 730 KB of code spread over the 6.8 MB of the executable, 54 such
faults. GNU gold's --section-ordering-file puts the listed functions (each in its own section,
-ffunction-sections) first, so the same code sits in about 180 pages. A stale list costs only
speed: a function missing from it is placed after the listed ones, and a listed one that no
longer exists is ignored.

The script links the executable again from BUILD_DIR's objects with gold's map of input
sections, runs each command on it once under callgrind with an empty HOME (offline where the
command has the flag), and lists the code sections holding the functions that ran: the first
command's first, each command's in their present address order (neighbours stay neighbours).
A function's cold part (.text.unlikely) stays where it is: it runs on errors.
"""
import bisect
import collections
import os
import re
import subprocess
import sys
import tempfile

COMMANDS = [
    ["plan", "llama-3.1-8b", "--json", "--offline"],
    ["plan", "llama-3.1-8b", "--offline"],
    ["plan", "qwen3-32b", "--task", "serve", "--concurrency", "64", "--json", "--offline"],
    ["plan", "llama-3.1-8b", "--task", "qlora", "--json", "--offline"],
    ["plan", "llama-3.1-70b", "--task", "train", "--json", "--offline"],
    ["fits", "A100 80GB", "--task", "serve", "--json", "--offline"],
    ["cost", "--provider", "runpod", "--card", "rtx-4090", "--hours", "2", "--json"],
    ["models", "--json"],
    ["--version"],
]


def executed_functions(binary, args, home):
    """Mangled names of every function callgrind saw run (fn= and cfn= records)."""
    out = os.path.join(home, "callgrind.out")
    env = dict(os.environ, HOME=home, XDG_CONFIG_HOME=f"{home}/config", XDG_CACHE_HOME=f"{home}/cache",
               XDG_STATE_HOME=f"{home}/state", NO_COLOR="1")
    cmd = ["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={out}", binary, *args]
    run = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if run.returncode != 0:
        sys.exit(f"start_order: {' '.join(args)} exited {run.returncode}:\n{run.stderr[-2000:]}")
    names = []
    with open(out) as f:
        for line in f:
            if line.startswith(("fn=(", "cfn=(")):
                _, _, rest = line.rstrip("\n").partition(")")
                if rest.startswith(" "):
                    names.append(rest[1:])
    os.unlink(out)
    return names


def relink_with_map(build, tmp):
    """The executable linked again from the build's own objects, with gold's map of input sections."""
    ninja = subprocess.run(["ninja", "-C", build, "-t", "commands", "gpurent"], check=True, capture_output=True,
                           text=True).stdout.strip().splitlines()[-1]
    link = ninja.removeprefix(": && ").removesuffix(" && :")
    if " -o gpurent " not in link or "-fuse-ld=gold" not in link:
        sys.exit("start_order: the build must link gpurent with gold (cmake/Linker.cmake)")
    binary, mapfile = os.path.join(tmp, "gpurent"), os.path.join(tmp, "gpurent.map")
    link = link.replace(" -o gpurent ", f" -o {binary} -Wl,-Map={mapfile} ")
    link = re.sub(r" -Wl,--section-ordering-file=\S+", "", link)
    subprocess.run(link, shell=True, check=True, cwd=build)
    return binary, mapfile


def code_sections(mapfile):
    """(address, size, name) of every code input section placed in the executable, by address."""
    sections = []
    pending = None
    with open(mapfile) as f:
        for line in f:
            m = re.match(r"^ (\.text\S*)(?:\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s)?", line)
            if m:
                pending = m.group(1)
                if m.group(2) is None:
                    continue
                addr, size = int(m.group(2), 16), int(m.group(3), 16)
            elif pending and (m := re.match(r"^\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s", line)):
                addr, size = int(m.group(1), 16), int(m.group(2), 16)
            else:
                pending = None
                continue
            if addr != 0 and size != 0 and pending not in (".text", ".text.unlikely", ".text.startup", ".text.hot"):
                sections.append((addr, size, pending))
            pending = None
    sections.sort()
    if len(sections) < 1000:
        sys.exit("start_order: the objects have no section per function: configure with "
                 "-DCMAKE_CXX_FLAGS=-ffunction-sections (cmake/Linker.cmake adds it with gold)")
    return sections


def function_addresses(binary):
    """Address of each function defined in the executable, by mangled name."""
    nm = subprocess.run(["nm", "--defined-only", binary], check=True, capture_output=True, text=True).stdout
    where = {}
    for line in nm.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tTW":
            where.setdefault(parts[2], int(parts[0], 16))
    return where


def main():
    build = os.path.realpath(sys.argv[1] if len(sys.argv) > 1 else "build")
    root = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    listed, seen = [], set()
    with tempfile.TemporaryDirectory() as tmp:
        binary, mapfile = relink_with_map(build, tmp)
        sections = code_sections(mapfile)
        starts = [a for a, _, _ in sections]
        copies = collections.Counter()
        for _, size, name in sections:
            copies[name] += size
        where = function_addresses(binary)
        home = os.path.join(tmp, "home")
        os.mkdir(home)
        for args in COMMANDS:
            ran = set()
            for name in executed_functions(binary, args, home):
                addr = where.get(name)
                if addr is None:
                    continue
                i = bisect.bisect_right(starts, addr) - 1
                if i >= 0 and addr < sections[i][0] + sections[i][1]:
                    ran.add(sections[i])
            # Each command's sections in their present order: neighbours stay neighbours.
            for _, size, name in sorted(ran):
                # gold places every section of a listed name; a name that many files define as a
                # local copy (fmt's format_dragon clone, 11 KB in each of 38 files) would bring
                # all the copies into the start's pages, so it is left out.
                if copies[name] - size > 16384:
                    continue
                if name not in seen and ".text.unlikely." not in name:
                    listed.append(name)
                    seen.add(name)
    path = os.path.join(root, "cmake", "start_order.txt")
    with open(path, "w") as f:
        f.writelines(line + "\n" for line in listed)
    print(f"start_order: {len(listed)} sections -> {os.path.relpath(path, root)}")


if __name__ == "__main__":
    main()
