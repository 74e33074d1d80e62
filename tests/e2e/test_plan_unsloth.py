#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`gpurent plan --engine unsloth` end to end (issue #42 item 3, docs/sizing.md "Unsloth").

Llama 3.3 70B QLoRA fits one L40S 48GB, as Unsloth's tables say of 70B QLoRA on 48 GB, with its
launch script (FastLanguageModel + SFTTrainer, Python that compiles); Llama 3.1 8B LoRA picks a
card of at least the 22 GB Unsloth's requirements table names and fits no 16 GB card; DDP on
several GPUs writes the script to a file for `accelerate launch`. Bad input: several GPUs on a
release without multi-GPU training, or several servers, are refused (exit 3) naming the release;
--task infer, serve and train are usage errors (exit 2).
"""
import ast
import json
import os
import subprocess
import sys

GPURENT = os.environ.get("GPURENT_BIN", "build/gpurent")
ENV = dict(os.environ, XDG_CONFIG_HOME="/nonexistent/gpurent-e2e", XDG_CACHE_HOME="/nonexistent/gpurent-e2e",
           NO_COLOR="1")
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def plan(*args, json_out=True):
    cmd = [GPURENT, "plan", *args, "--offline"] + (["--json"] if json_out else [])
    p = subprocess.run(cmd, capture_output=True, text=True, env=ENV, check=False)
    return p.returncode, p.stdout, p.stderr


def python_body(line):
    """The Python of a `python -c '…'` line (no single quote inside, as the launch lines are)."""
    prefix = "python -c '"
    assert line.startswith(prefix) and line.endswith("'"), line
    return line[len(prefix):-1]


def compiles(body, what):
    try:
        compile(ast.parse(body), what, "exec")
        return True
    except SyntaxError as e:
        failures.append(f"{what}: {e}\n{body}")
        return False


# 1. Llama 3.3 70B QLoRA on an L40S with Unsloth: fits, with its script.
rc, out, err = plan("llama-3.3-70b", "--task", "qlora", "--card", "l40s", "--engine", "unsloth")
check(rc == 0, f"70B QLoRA on L40S: exit {rc} {err}")
d = json.loads(out)
mem, choice, job = d["memory"], d["choice"], d["job"]
check(job["engine"] == "unsloth" and job["engine_version"] == "2026.8.19", f"job: {job}")
check(choice is not None and choice["card"] == "l40s" and choice["gpus"] == 1, f"choice: {choice}")
# 4.127-bit NF4 linears + 16-bit embeddings and lm_head (docs/sizing.md "Unsloth")
check(36.5 <= mem["weights_gib"] <= 37.1, f"weights {mem['weights_gib']}")
# one layer's work per token at 4096 tokens: (widest + 6 x hidden) x 2 B
check(1.5 <= mem["activations_gib"] <= 1.8, f"activations {mem['activations_gib']}")
check(40.0 <= mem["total_gib"] <= 42.3, f"total {mem['total_gib']} (the L40S fit limit is 42.30 GiB)")
check(choice["runs"]["status"] == "native", f"runs {choice['runs']}")
speed = choice["speed"]["train_tokens_per_s"]
check(300 <= speed <= 700, f"train tokens/s {speed}")
check(choice["price_per_hour"] > 0 and choice["speed"]["tokens_per_dollar"] > 0, f"price {choice}")
line = d["launch"]["unsloth"]
body = python_body(line)
if compiles(body, "70B QLoRA script"):
    for needed in ("from unsloth import FastLanguageModel", "FastLanguageModel.from_pretrained(",
                   "load_in_4bit=True", 'use_gradient_checkpointing="unsloth"', "FastLanguageModel.get_peft_model(",
                   "SFTTrainer(", "SFTConfig(", "max_seq_length=4096", "max_length=4096", "trainer.train()"):
        check(needed in body, f"70B script lacks {needed}: {body}")
rc, text, err = plan("llama-3.3-70b", "--task", "qlora", "--card", "l40s", "--engine", "unsloth", json_out=False)
check(rc == 0 and "python - <<'EOF'" in text and "fits" in text and "Unsloth 2026.8.19" in text, f"text view:\n{text}")

# 2. Llama 3.1 8B LoRA: a card of Unsloth's 22 GB or more; no 16 GB card holds it.
rc, out, err = plan("llama-3.1-8b", "--task", "lora", "--engine", "unsloth")
check(rc == 0, f"8B LoRA: exit {rc} {err}")
d = json.loads(out)
check(d["choice"]["vram_gib"] >= 22, f"8B LoRA chose {d['choice']['card']} ({d['choice']['vram_gib']} GiB)")
check(16.0 <= d["memory"]["total_gib"] <= 20.5, f"8B LoRA total {d['memory']['total_gib']}")
check("load_in_16bit=True" in d["launch"]["unsloth"], d["launch"]["unsloth"])
rc, out, err = plan("llama-3.1-8b", "--task", "lora", "--engine", "unsloth", "--card", "rtx-4080")
check(rc == 3, f"8B LoRA on a 16 GB RTX 4080: exit {rc}, expected 3 (does not fit)")

# 3. DDP from 2025.3.7: the script in a file, accelerate launch once per GPU; bash and Python accept it.
rc, out, err = plan("llama-3.1-8b", "--task", "qlora", "--engine", "unsloth", "--gpus", "2")
check(rc == 0, f"8B QLoRA on 2 GPUs: exit {rc} {err}")
d = json.loads(out)
check(d["job"]["shard"] == "ddp", f"shard {d['job']['shard']}")
line = d["launch"]["unsloth"]
check(line.endswith("> unsloth_sft.py && accelerate launch --num_processes 2 unsloth_sft.py"), line)
p = subprocess.run(["bash", "-n"], input=line, capture_output=True, text=True, check=False)
check(p.returncode == 0, f"bash -n: {p.stderr}")
start = line.index("printf '%s\\n' '") + len("printf '%s\\n' '")
end = line.rindex("' > unsloth_sft.py")
ddp = line[start:end]
check(compiles(ddp, "DDP script") and 'device_map={"": int(os.environ.get("LOCAL_RANK", "0"))}' in ddp, ddp)

# 4. Bad input.
rc, out, err = plan("llama-3.1-8b", "--task", "lora", "--engine", "unsloth", "--gpus", "4", "--engine-version",
                    "2024.11.9")
e = json.loads(out)["error"] if out.strip() else {}
check(rc == 3 and e.get("code") == "refused" and e.get("exit") == 3, f"--gpus 4 on 2024.11.9: exit {rc} {out} {err}")
check("Unsloth 2024.11.9" in e.get("message", "") and "multi GPU" in e.get("message", ""), f"message: {e}")
rc, out, err = plan("llama-3.1-8b", "--task", "lora", "--engine", "unsloth", "--gpus", "2", "--nodes", "2")
e = json.loads(out)["error"] if out.strip() else {}
check(rc == 3 and e.get("code") == "refused" and "2026.8.19" in e.get("message", ""), f"--nodes 2: {rc} {out}")
for task in ("infer", "serve", "train"):
    rc, out, err = plan("llama-3.1-8b", "--task", task, "--engine", "unsloth")
    e = json.loads(out)["error"] if out.strip() else {}
    check(rc == 2 and e.get("code") == "usage" and "unsloth" in e.get("message", ""), f"--task {task}: {rc} {out}")
p = subprocess.run([GPURENT, "fits", "l40s", "--task", "qlora", "--engine", "unsloth", "--gpus", "2", "--engine-version",
                    "2024.11.9", "--json"], capture_output=True, text=True, env=ENV, check=False)
e = json.loads(p.stdout)["error"] if p.stdout.strip() else {}
check(p.returncode == 3 and "Unsloth 2024.11.9" in e.get("message", ""), f"fits --gpus 2 on 2024.11.9: {p.returncode} {p.stdout}")
rc, out, err = plan("llama-3.1-8b", "--task", "qlora", "--engine", "unsloth", "--weights", "awq")
check(rc == 2, f"--weights awq: exit {rc}")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("ok")
