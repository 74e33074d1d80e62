#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Serving on vLLM, SGLang and TensorRT-LLM side by side (issue #42 item 2).

`plan llama-3.1-8b --task serve --concurrency 64` keeps vLLM as the choice (cli.md) and plans the same
job on SGLang and TensorRT-LLM: JSON `engines` holds each engine's best option for the same 64 users,
and every flag the user gave (concurrency, lengths, card, GPU count) reaches each engine's plan.
`--engine trtllm` plans TensorRT-LLM itself: its pool, its trtllm-serve line with the batch the
concurrency asks, and its refusals (a T4, FP8 on an A100, GGUF, several servers) with its own words.
A llama.cpp build named with --engine-version reaches its prompt's speed.
"""
import json
import os
import subprocess
import sys
import tempfile

GPURENT = os.environ.get("GPURENT_BIN", "build/gpurent")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def run(*args, home, json_out=True):
    env = dict(os.environ, HOME=home, XDG_CONFIG_HOME=home + "/.config", XDG_CACHE_HOME=home + "/.cache",
               NO_COLOR="1", GPURENT_CATALOG_AUTO_REFRESH="false")
    cmd = [GPURENT, "plan", *args, "--offline"] + (["--json"] if json_out else [])
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if json_out:
        try:
            return p.returncode, json.loads(p.stdout), p.stderr
        except json.JSONDecodeError:
            return p.returncode, {}, p.stderr
    return p.returncode, p.stdout, p.stderr


def main():
    with tempfile.TemporaryDirectory() as home:
        rc, doc, err = run("llama-3.1-8b", "--task", "serve", "--concurrency", "64", "--input-len", "1000",
                           "--output-len", "500", home=home)
        check(rc == 0, f"compare: exit {rc} {err}")
        check(doc.get("job", {}).get("engine") == "vllm", "vLLM stays the plan's engine")
        engines = doc.get("engines", [])
        names = [e.get("engine") for e in engines]
        check(names == ["vllm", "sglang", "trtllm"], f"engines {names}")
        for e in engines:
            o = e.get("option")
            check(o is not None, f"{e.get('engine')}: no option ({e.get('why_none')})")
            if o is None:
                continue
            # The same workload on every engine: 64 users of 1000 + 500 tokens.
            sp = o.get("speed", {})
            check(sp.get("concurrency") == 64 and sp.get("input_len") == 1000 and sp.get("output_len") == 500,
                  f"{e['engine']}: load {sp.get('concurrency')} {sp.get('input_len')} {sp.get('output_len')}")
            serve = o.get("serve", {})
            check(serve.get("replicas", 0) * serve.get("concurrency_per_replica", 0) >= 64,
                  f"{e['engine']}: serves {serve}")
            check(serve.get("kv_pool_tokens", 0) >= serve.get("concurrency_per_replica", 0) * 1500,
                  f"{e['engine']}: pool {serve}")
            check(e.get("chosen") == (e["engine"] == "vllm"), f"{e['engine']}: chosen {e.get('chosen')}")
            check(isinstance(e.get("vs_choice"), (int, float)), f"{e['engine']}: vs_choice {e.get('vs_choice')}")
        check(engines and engines[0].get("option") == doc.get("choice"), "vLLM's entry is the choice itself")
        rc, text, _ = run("llama-3.1-8b", "--task", "serve", "--concurrency", "64", home=home, json_out=False)
        check("Engines" in text and "trtllm" in text and "sglang" in text, f"text view:\n{text}")

        # --card and --gpus reach every engine's plan.
        rc, doc, err = run("llama-3.1-8b", "--task", "serve", "--concurrency", "64", "--card", "l40s", home=home)
        for e in doc.get("engines", []):
            o = e.get("option") or {}
            check(o.get("card") == "l40s", f"--card l40s: {e.get('engine')} on {o.get('card')}")

        # --engine trtllm: its own plan, pool and launch line.
        rc, doc, err = run("llama-3.1-8b", "--task", "serve", "--engine", "trtllm", "--concurrency", "64",
                           "--card", "h100-sxm", home=home)
        check(rc == 0, f"trtllm: exit {rc} {err}")
        check("engines" not in doc, "--engine given: no comparison")
        line = doc.get("launch", {}).get("trtllm", "")
        check(line.startswith("trtllm-serve meta-llama/Llama-3.1-8B --backend pytorch --tp_size 1 "),
              f"launch {line}")
        check("--max_batch_size 64 " in line, f"the concurrency reaches --max_batch_size: {line}")
        check("--kv_cache_free_gpu_memory_fraction 0.90" in line, f"fraction: {line}")
        check(doc.get("serve", {}).get("kv_pool_tokens", 0) >= 64 * 4096, f"pool {doc.get('serve')}")

        # A batch of requests on TensorRT-LLM runs as many at once as its pool holds, never one at a time:
        # the hours, the bill and --max_batch_size read the same concurrency.
        rc, doc, err = run("llama-3.1-8b", "--task", "infer", "--engine", "trtllm", "--requests", "10000",
                           "--input-len", "500", "--output-len", "200", "--card", "h100-sxm", home=home)
        check(rc == 0 and doc.get("job", {}).get("mode") == "batch", f"trtllm batch: exit {rc} mode {doc.get('job', {}).get('mode')}")
        c = doc.get("choice") or {}
        at_once = (c.get("speed") or {}).get("concurrency", 0)
        check(at_once > 100, f"trtllm batch: {at_once} requests at once")
        check(f"--max_batch_size {at_once} " in doc.get("launch", {}).get("trtllm", ""), f"batch launch {doc.get('launch')}")
        check(0 < (c.get("hours") or 99) < 1, f"trtllm batch hours {c.get('hours')}")

        # Refusals with TensorRT-LLM's own words; exit 3.
        rc, doc, err = run("llama-3.1-8b", "--task", "serve", "--engine", "trtllm", "--card", "t4", home=home)
        check(rc == 3 and "support matrix" in err, f"T4: exit {rc} {err}")
        rc, doc, err = run("llama-3.1-8b", "--task", "serve", "--engine", "trtllm", "--card", "a100-80gb",
                           "--weights", "fp8", home=home)
        check(rc == 3 and "FP8" in err, f"FP8 on A100: exit {rc} {err}")
        rc, doc, err = run("llama-3.1-8b", "--task", "serve", "--engine", "trtllm", "--weights", "Q4_K_M", home=home)
        check(rc == 2 and "GGUF" in err, f"GGUF: exit {rc} {err}")
        rc, doc, err = run("qwen3-32b", "--task", "serve", "--engine", "trtllm", "--weights", "awq", home=home)
        check(rc == 2 and "TensorRT-LLM" in err and "awq" in err, f"AWQ: exit {rc} {err}")
        rc, doc, err = run("llama-3.1-70b", "--task", "serve", "--engine", "trtllm", "--nodes", "2", home=home)
        check(rc == 3 and "one server" in err, f"two servers: exit {rc} {err}")
        rc, doc, err = run("llama-3.1-8b", "--task", "lora", "--engine", "trtllm", home=home)
        check(rc == 2, f"training on trtllm: exit {rc} {err}")

        # llama.cpp's build (--engine-version bNNNN) reaches the prompt's speed and the job: before
        # b3216 a quantized prompt is dequantized for cuBLAS (docs/speed.md "llama.cpp's prompt path").
        args = ("llama-3-8b", "--engine", "llama.cpp", "--weights", "q4_k_m", "--card", "rtx-4090",
                "--input-len", "512")
        rc, now, err = run(*args, home=home)
        rc_old, old, err_old = run(*args, "--engine-version", "b2836", home=home)
        check(rc == 0 and rc_old == 0, f"llama.cpp builds: exit {rc} {rc_old} {err} {err_old}")
        check(now.get("job", {}).get("engine_version") == "current", f"current: {now.get('job', {}).get('engine_version')}")
        check(old.get("job", {}).get("engine_version") == "b2836", f"b2836: {old.get('job', {}).get('engine_version')}")
        p_now = ((now.get("choice") or {}).get("speed") or {}).get("prefill_tokens_per_s") or 0
        p_old = ((old.get("choice") or {}).get("speed") or {}).get("prefill_tokens_per_s") or 0
        check(0 < p_old < p_now, f"prefill b2836 {p_old} against current {p_now}")
        rc, text, err = run(*args, "--engine-version", "b2836", home=home, json_out=False)
        check("llama.cpp b2836" in text and "dequantized" in text, "the text notes the build's prompt path")
        rc, doc, err = run(*args, "--engine-version", "0.3", home=home)
        check(rc == 2 and "llama.cpp build" in err, f"a semantic version for llama.cpp: exit {rc} {err}")
    if failures:
        print("\n".join(failures))
        return 1
    print("plan engines: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
