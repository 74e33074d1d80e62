#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""SGLang across servers (issue #42 item 4): one tensor-parallel group over every GPU of 2 to 4
servers, as SGLang's multi-node guide runs DeepSeek-V3 (2 x 8 H100 in FP8, 4 x 8 A100 in BF16).

The plan spreads DeepSeek-V3 over two 8 x H100 servers by itself (one server cannot hold it),
sizes each GPU for a sixteenth of the weights, prints one launch line that each server runs with
its own rank, and that line, run by a shell with the group's environment (what `gpurent run GROUP`
gives each member), starts SGLang with rank 0's address and the member's rank. Five servers, or an
engine that runs on one server, are refused with the reason.
"""
import json
import os
import stat
import subprocess
import sys
import tempfile

GPURENT = os.environ.get("GPURENT_BIN", "build/gpurent")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def plan(*args, home):
    env = dict(os.environ, HOME=home, XDG_CONFIG_HOME=home + "/.config", XDG_CACHE_HOME=home + "/.cache",
               NO_COLOR="1", GPURENT_CATALOG_AUTO_REFRESH="false")
    p = subprocess.run([GPURENT, "plan", *args, "--offline", "--json"], capture_output=True, text=True, env=env,
                       check=False)
    return p.returncode, json.loads(p.stdout)


def main():
    with tempfile.TemporaryDirectory() as home:
        rc, doc = plan("deepseek-v3", "--engine", "sglang", "--task", "serve", "--card", "h100-sxm", home=home)
        check(rc == 0, f"auto spread: exit {rc}")
        c = doc.get("choice") or {}
        check(c.get("nodes") == 2 and c.get("gpus") == 8, f"auto spread: choice {c.get('nodes')} x {c.get('gpus')}")
        job = doc["job"]
        check(job["nodes"] == 2 and job["gpus"] == 8 and job["shard"] == "tp", f"job {job}")
        # 671 B parameters in FP8 over 16 GPUs: about 39 GiB each (one 8-GPU server would need 78 GiB).
        w = doc["memory"]["weights_gib"]
        check(37 <= w <= 41, f"weights per GPU {w} GiB")
        check(doc["memory"]["total_gib"] < c.get("vram_gib", 0), "the total fits the card")
        check(c.get("speed", {}).get("decode_tokens_per_s", 0) > 0, f"speed {c.get('speed')}")
        line = doc["launch"].get("sglang", "")
        check(line.startswith("bash -c 'python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp 16 "),
              f"launch {line}")
        for part in ("--nnodes 2", '--node-rank "$GPURENT_NODE_RANK"', '--dist-init-addr "$MASTER_ADDR:$MASTER_PORT"'):
            check(part in line, f"launch lacks {part}: {line}")
        env = dict(os.environ, HOME=home, NO_COLOR="1", GPURENT_CATALOG_AUTO_REFRESH="false")
        text = subprocess.run([GPURENT, "plan", "deepseek-v3", "--engine", "sglang", "--task", "serve", "--card",
                               "h100-sxm", "--offline"], capture_output=True, text=True, env=env, check=False).stdout
        check("SGLang across 2 servers" in " ".join(text.split()), f"the text's note:\n{text}")

        # The line as member 1 of the group runs it: a stub python prints the arguments it gets.
        stub_dir = os.path.join(home, "bin")
        os.makedirs(stub_dir)
        stub = os.path.join(stub_dir, "python")
        with open(stub, "w") as f:
            f.write('#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done\n')
        os.chmod(stub, os.stat(stub).st_mode | stat.S_IXUSR)
        env = dict(os.environ, PATH=stub_dir + ":" + os.environ["PATH"], GPURENT_NODE_RANK="1",
                   MASTER_ADDR="10.0.0.1", MASTER_PORT="29500")
        p = subprocess.run(["bash", "-c", line], capture_output=True, text=True, env=env, check=False)
        args = p.stdout.split("\n")
        check(p.returncode == 0, f"the line did not run: {p.stderr}")
        for flag, value in (("--dist-init-addr", "10.0.0.1:29500"), ("--node-rank", "1"), ("--nnodes", "2"),
                            ("--tp", "16")):
            check(flag in args and args[args.index(flag) + 1] == value, f"{flag} {value} not passed: {args}")

        # Asked for: 4 x 8 A100 in BF16, the largest SGLang's guide runs.
        rc, doc = plan("deepseek-v3", "--engine", "sglang", "--task", "serve", "--card", "a100-80gb-sxm", "--weights",
                       "bf16", "--nodes", "4", home=home)
        check(rc == 0 and (doc.get("choice") or {}).get("nodes") == 4, f"4 x A100: exit {rc}")
        check("--tp 32" in doc["launch"].get("sglang", ""), f"4 x A100 launch {doc['launch']}")

        rc, doc = plan("deepseek-v3", "--engine", "sglang", "--task", "serve", "--card", "a100-80gb-sxm", "--weights",
                       "bf16", "--nodes", "5", home=home)
        msg = doc.get("error", {}).get("message", "")
        check(rc == 3 and "at most 4 servers" in msg, f"5 servers: exit {rc}, {msg}")
        rc, doc = plan("deepseek-v3", "--engine", "sglang", "--task", "serve", "--card", "h100-sxm", "--nodes", "3",
                       home=home)
        msg = doc.get("error", {}).get("message", "")
        check(rc == 3 and "on 3 servers (the heads or layers do not split" in msg, f"3 servers: exit {rc}, {msg}")
        rc, doc = plan("llama-3.1-70b", "--engine", "llama.cpp", "--nodes", "2", home=home)
        msg = doc.get("error", {}).get("message", "")
        check(rc == 3 and "runs on one server" in msg, f"llama.cpp on 2 servers: exit {rc}, {msg}")
    for f in failures:
        print("FAIL:", f)
    print(f"sglang across servers: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
