#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Start-up time and page faults of short commands, measured round-robin.

Usage: startup_measure.py RUNS WARMUP NAME=COMMAND... (the first one is the baseline)

Each round runs every command once, in turn, so that drift on a shared or virtual machine
hits all of them alike. Wall time is from fork to reaped exit (os.wait4); minor page faults
come from the child's rusage. Prints a Markdown table: median and 10th/90th percentile wall
time, median minor faults, and the median relative to the baseline's median.
"""
import os
import shlex
import statistics
import sys
import time


def run_once(argv):
    devnull = os.open(os.devnull, os.O_WRONLY)
    start = time.perf_counter_ns()
    pid = os.posix_spawn(argv[0], argv, os.environ,
                         file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1), (os.POSIX_SPAWN_DUP2, devnull, 2)])
    _, status, usage = os.wait4(pid, 0)
    elapsed = time.perf_counter_ns() - start
    os.close(devnull)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"startup_measure: {' '.join(argv)} exited with {os.waitstatus_to_exitcode(status)}")
    return elapsed / 1e6, usage.ru_minflt


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main():
    runs, warmup = int(sys.argv[1]), int(sys.argv[2])
    commands = []
    for spec in sys.argv[3:]:
        name, _, command = spec.partition("=")
        commands.append((name, shlex.split(command)))
    times = {name: [] for name, _ in commands}
    faults = {name: [] for name, _ in commands}
    for round_index in range(warmup + runs):
        for name, argv in commands:
            ms, flt = run_once(argv)
            if round_index >= warmup:
                times[name].append(ms)
                faults[name].append(flt)
    base = statistics.median(times[commands[0][0]])
    print("| Command | Median [ms] | p10–p90 [ms] | Page faults | Relative |")
    print("|:---|---:|---:|---:|---:|")
    for name, _ in commands:
        t = times[name]
        median = statistics.median(t)
        print(f"| `{name}` | {median:.2f} | {percentile(t, 0.1):.2f}–{percentile(t, 0.9):.2f} | "
              f"{int(statistics.median(faults[name]))} | {median / base:.2f} |")


if __name__ == "__main__":
    main()
