#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every launch line `gpurent plan` prints runs in a shell.

For every catalogue model and every engine/task, and for recipes on a small card: each JSON
launch line (plan's and the recipe's) is one line that `bash -n` accepts and that carries no
comment; each `python -c '…'` snippet compiles and imports only what it uses; the text view's
Launch block passes `bash -n` as pasted, and its here-document compiles as Python.
"""
import ast
import json
import os
import shlex
import subprocess
import sys
import tempfile

GPURENT = os.environ.get("GPURENT_BIN", "build/gpurent")
ENV = dict(os.environ, XDG_CONFIG_HOME="/nonexistent/gpurent-e2e", XDG_CACHE_HOME="/nonexistent/gpurent-e2e",
           NO_COLOR="1")

JOBS = [
    ["--task", "infer"],
    ["--task", "serve"],
    ["--task", "serve", "--gpus", "3"],
    ["--task", "infer", "--engine", "llama.cpp"],
    ["--task", "infer", "--engine", "ollama"],
    ["--task", "infer", "--engine", "ollama", "--weights", "Q8_0"],
    ["--task", "infer", "--requests", "1000", "--input-len", "500", "--output-len", "200"],
    ["--task", "infer", "--requests", "1000", "--input-len", "500", "--output-len", "200", "--engine", "sglang"],
    ["--task", "train"],
    ["--task", "lora"],
    ["--task", "qlora"],
    ["--task", "lora", "--engine", "torchtune"],
    ["--task", "qlora", "--engine", "unsloth"],
    ["--task", "train", "--engine", "deepspeed", "--gpus", "2"],
]
RECIPE = ["--card", "rtx-4090", "--gpus", "1"]

failures = []


def fail(what, detail):
    failures.append(f"{what}: {detail}")


def run(args):
    p = subprocess.run([GPURENT, "plan", *args], capture_output=True, text=True, env=ENV, check=False)
    if p.returncode not in (0, 3):
        fail(" ".join(args), f"exit {p.returncode}: {p.stderr.strip()}")
        return None
    return p.stdout


def bash_ok(script, what):
    p = subprocess.run(["bash", "-n"], input=script, capture_output=True, text=True, check=False)
    if p.returncode != 0:
        fail(what, f"bash -n: {p.stderr.strip()}\n{script}")


def python_ok(body, what):
    try:
        tree = ast.parse(body)
        compile(tree, what, "exec")
    except SyntaxError as e:
        fail(what, f"python: {e}\n{body}")
        return
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(a.asname or a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            imported.update(a.asname or a.name for a in node.names)
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    used |= {n.value.id for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)}
    for name in sorted(imported - used):
        fail(what, f"unused import {name}\n{body}")


def check_line(line, what, pending=None):
    if "\n" in line:
        fail(what, f"not one line: {line!r}")
    if pending is None:
        bash_ok(line + "\n", what)
    else:
        pending.append((line, what))  # checked together, one by one only if that fails
    try:
        if shlex.split(line, comments=True) != shlex.split(line, comments=False):
            fail(what, f"a comment in the command: {line}")
        words = shlex.split(line)
    except ValueError as e:
        fail(what, f"shlex: {e}: {line}")
        return
    for i, w in enumerate(words[:-1]):
        if w == "python" and words[i + 1] == "-c" and i + 2 < len(words):
            python_ok(words[i + 2], what)


def bash_batch(pending):
    if not pending:
        return
    p = subprocess.run(["bash", "-n"], input="".join(line + "\n" for line, _ in pending), capture_output=True,
                       text=True, check=False)
    if p.returncode != 0:
        for line, what in pending:
            bash_ok(line + "\n", what)


def check_text(text, what, pending=None):
    lines = text.splitlines()
    if "Launch" not in lines:
        return
    block = []
    for line in lines[lines.index("Launch") + 1:]:
        if not line.strip():
            break
        block.append(line)
    script = "\n".join(block) + "\n"
    if pending is None:
        bash_ok(script, what + " (text Launch block)")
    else:
        pending.append((script.rstrip("\n"), what + " (text Launch block)"))
    shell = script
    if "python - <<'EOF'" in script:
        body = script.split("python - <<'EOF'\n", 1)[1].split("\nEOF\n", 1)[0]
        python_ok(body, what + " (text here-document)")
        shell = script.replace(body + "\nEOF\n", "")
    # A comment swallows the continuation: the pasted command would lose its tail.
    for command in shell.replace("\\\n", " ").splitlines():
        try:
            if shlex.split(command, comments=True) != shlex.split(command, comments=False):
                fail(what, f"a comment in the text Launch block: {command}")
        except ValueError as e:
            fail(what, f"text Launch block: {e}: {command}")
    for line in block:
        if len(line) > 80 and " " in line.strip():
            fail(what, f"text line over 80 columns: {line}")


def without_gpus(args):
    out = []
    skip = False
    for a in args:
        if skip:
            skip = False
        elif a == "--gpus":
            skip = True
        else:
            out.append(a)
    return out


def main():
    models = json.loads(subprocess.run([GPURENT, "models", "--json"], capture_output=True, text=True, env=ENV,
                                       check=True).stdout)
    names = [m["name"] for m in (models["models"] if isinstance(models, dict) else models)]
    if os.environ.get("GPURENT_SANITIZED") == "ON":
        names = names[::4]  # the sanitized binary is ~15x slower; every fourth model still covers each family
    count = 0
    for i, name in enumerate(names):
        pending = []
        for job in JOBS:
            variants = [job] + ([without_gpus(job) + RECIPE] if i % 4 == 0 else [])
            for args in variants:
                what = " ".join([name, *args])
                out = run([name, *args, "--json"])
                if out is None:
                    continue
                j = json.loads(out)
                lines = list(j["launch"].values())
                if "recipe" in j:
                    lines += list(j["recipe"]["launch"].values())
                for line in lines:
                    check_line(line, what, pending)
                    count += 1
                text = run([name, *args])
                if text is not None:
                    check_text(text, what, pending)
        bash_batch(pending)
    if count < len(names) * len(JOBS) // 2:
        fail("coverage", f"only {count} launch lines checked")
    for f in failures[:40]:
        print(f, file=sys.stderr)
    print(f"{count} launch lines checked, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
