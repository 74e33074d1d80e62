#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""End-to-end: `gpurent models` from the real binary, and MODEL resolution through the Hub
test double (tests/e2e/hf_double.py on 127.0.0.1) with a temporary HOME and XDG cache.

The Hub part runs `gpurent plan <id>`; while `plan` resolves only catalogue names it is reported
as skipped (the resolver itself is covered by tests/providers/test_hf_hub.cpp with real curl).
"""
import json
import os
import subprocess
import sys
import tempfile
import time

BIN = os.environ["GPURENT_BIN"]
HERE = os.path.dirname(os.path.abspath(__file__))


def run(args, env):
    return subprocess.run([BIN] + args, env=env, capture_output=True, text=True, timeout=60)


def check(cond, what):
    if not cond:
        print(f"FAIL: {what}")
        sys.exit(1)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "NO_COLOR": "1", "HOME": tmp,
               "XDG_CACHE_HOME": os.path.join(tmp, "cache"), "XDG_CONFIG_HOME": os.path.join(tmp, "config"),
               "XDG_STATE_HOME": os.path.join(tmp, "state"), "GPURENT_CATALOG_AUTO_REFRESH": "false"}
        if "GPURENT_IO_MODULE" in os.environ:
            env["GPURENT_IO_MODULE"] = os.environ["GPURENT_IO_MODULE"]

        r = run(["models", "--json"], env)
        check(r.returncode == 0, f"models --json exits 0 (got {r.returncode}: {r.stderr})")
        doc = json.loads(r.stdout)
        models = doc["models"]
        check(len(models) >= 45, f"at least 45 models (got {len(models)})")
        names = {m["name"] for m in models}
        for n in ["llama-3.1-8b", "qwen2.5-72b", "mixtral-8x7b", "gpt-oss-120b", "deepseek-v3", "gemma-3-27b", "phi-4"]:
            check(n in names, f"{n} in the catalogue")
        l8 = next(m for m in models if m["name"] == "llama-3.1-8b")
        check(l8["params"] == 8030261248 and l8["kv_heads"] == 8 and l8["attention"] == "full", "llama-3.1-8b fields")
        check(next(m for m in models if m["name"] == "deepseek-v3")["attention"] == "mla", "deepseek-v3 is MLA")

        r = run(["models"], env)
        check(r.returncode == 0, "models exits 0")
        check(all(len(line) <= 80 for line in r.stdout.splitlines()), "models table fits 80 columns")
        check("qwen3-235b-a22b" in r.stdout, "table lists qwen3-235b-a22b")

        # The Hub double.
        port_file = os.path.join(tmp, "port")
        hub = subprocess.Popen([sys.executable, os.path.join(HERE, "hf_double.py"), "--port-file", port_file,
                                "--idle", "60"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(500):
                if os.path.exists(port_file):
                    break
                time.sleep(0.02)
            port = int(open(port_file).read())
            env_hub = dict(env, HF_ENDPOINT=f"http://127.0.0.1:{port}")
            r = run(["plan", "acme/tiny-llama", "--json"], env_hub)
            check(r.returncode == 0, f"plan of a Hub model exits 0 ({r.stderr})")
            cached = os.path.join(tmp, "cache", "gpurent", "hf", "acme", "tiny-llama", "config.json")
            check(os.path.exists(cached), "the config is cached under XDG_CACHE_HOME")
            r = run(["plan", "acme/tiny-llama", "--json", "--offline"], env)
            check(r.returncode == 0, f"the cached model works offline ({r.stderr})")
            r = run(["plan", "acme/other", "--json", "--offline"], env_hub)
            check(r.returncode == 1 and "--offline" in r.stderr, "offline + not cached is an error naming --offline")
            r = run(["plan", "acme/gated-model", "--json"], env_hub)
            check(r.returncode == 1 and "HF_TOKEN" in r.stderr, "a gated model names HF_TOKEN")
            check("hf_test_token" not in r.stderr, "no token printed")
            r = run(["plan", "acme/gated-model", "--json"], dict(env_hub, HF_TOKEN="hf_test_token"))
            check(r.returncode == 0, f"the token opens the gated model ({r.stderr})")
            check("hf_test_token" not in r.stdout + r.stderr, "the token is never printed")
            r = run(["plan", "acme/missing", "--json"], env_hub)
            check(r.returncode == 1 and "not found" in r.stderr, "404 is not found")
        finally:
            hub.terminate()
            hub.wait(timeout=10)
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
