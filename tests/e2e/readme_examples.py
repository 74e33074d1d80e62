# SPDX-License-Identifier: MIT
# The README's examples (run by test_readme_examples.sh, which starts the loopback sshd): every
# `gpurent …` command in README.md's code blocks is classified below, either run against the
# built binary or skipped with the reason. A command that is not classified, or a classified
# one the README no longer has, fails the test: the README cannot grow an example nobody ran.
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

SRC = os.environ["GPURENT_SOURCE_DIR"]
BIN = os.environ["GPURENT_BIN"]
DATA = os.environ.get("GPURENT_TEST_DATA", os.path.join(SRC, "tests", "data"))

RENTS = "rents a server through a provider's API (network, money)"
LIVE = "needs a live tracked server (train1/big/box) reached over SSH; the e2e tests run these commands on a loopback sshd"
NETWORK = "reaches the network (a provider's API or the Hugging Face Hub)"

# command as written in the README (shlex-joined) -> ("run", expected exit, setup) or ("skip", why)
# setup: None, "config.json" (a model config in the working directory), "train.log"/"error.txt"
# (an out-of-memory log), "key-stdin" (a key on standard input), "sshd" (--host is the loopback sshd, with its key and known_hosts).
EXAMPLES = {
    "gpurent completion bash": ("run", 0, None),
    "gpurent completion zsh": ("run", 0, None),
    "gpurent completion fish": ("run", 0, None),
    "gpurent man": ("run", 0, None),
    "gpurent plan llama-3.1-8b": ("run", 0, None),
    "gpurent plan qwen2.5-72b --task serve --context 32768 --batch 8": ("run", 0, None),
    "gpurent plan llama-3.1-8b --task lora --card 'RTX 4090'": ("run", 0, None),
    "gpurent plan meta-llama/Llama-3.1-70B --task qlora --hours 12 --provider lambda":
        ("skip", NETWORK + ": a Hub id; tests/e2e/test_hf_hub.py runs Hub ids against the Hub double"),
    "gpurent plan ./config.json --task train --grad-checkpointing --gpus 8 --shard zero3": ("run", 0, "config.json"),
    "gpurent plan --params 7B --weights int4": ("run", 0, None),
    # The README says so: it does not fit on one RTX 4090, and the recipe is printed (exit 3).
    "gpurent plan gemma-2-27b --task lora --card 'RTX 4090' --gpus 1": ("run", 3, None),
    "gpurent plan llama-3.1-8b --task lora --tokens 50M --epochs 2": ("run", 0, None),
    "gpurent plan qwen3-32b --task serve --requests 20000 --input-len 1000 --output-len 300 --deadline 6h": ("run", 0, None),
    "gpurent plan qwen3-32b --task serve --concurrency 200 --input-len 2000 --output-len 400 --max-ttft 1": ("run", 0, None),
    "gpurent fits 'RTX 4090' --task infer": ("run", 0, None),
    "gpurent fits a100-80gb --gpus 2 --task lora --json": ("run", 0, None),
    "gpurent fits rtx-4090 --task serve --context 8192": ("run", 0, None),
    "gpurent models": ("run", 0, None),
    "gpurent cards": ("run", 0, None),
    "gpurent offers --provider runpod --min-vram 40": ("run", 0, None),
    "gpurent offers --refresh": ("skip", NETWORK),
    "gpurent cost --provider runpod --card h100 --hours 10 --spot": ("run", 0, None),
    "gpurent cost --provider gpucloud --card rtx-pro-6000 --gpus 2 --hours 10 --stopped-hours 48 --price 3.78": ("run", 0, None),
    "gpurent cost --provider cloudgpu --card rtx-4090 --hours 1.25 --price 0.69 --json": ("run", 0, None),
    "gpurent up --provider lambda --card h100 --name train1 --wait": ("skip", RENTS),
    "gpurent up --from-plan llama-3.1-70b --task qlora --name ft1": ("skip", RENTS),
    "gpurent attach --provider gpucloud --card rtx-pro-6000 --gpus 2 --price 3.78 --host root@1.2.3.4:22 --name box":
        ("run", 0, "sshd"),
    "gpurent status --refresh": ("skip", NETWORK + ": asks each provider with a key about its servers"),
    "gpurent down train1 --destroy": ("skip", LIVE + ", and destroys it through the provider"),
    "gpurent up --provider runpod --card h100 --name train1 --autostop 30m:stop": ("skip", RENTS),
    "gpurent autostop train1 --idle 20m --then stop --release-after 24h --backup-to me@203.0.113.9:ckpt": ("skip", LIVE),
    "gpurent autostop box --idle 1h --on-idle 'curl -fsS -d idle https://ntfy.sh/my-topic'": ("skip", LIVE),
    "gpurent autostop train1": ("skip", LIVE),
    "gpurent autostop train1 --pause 2h": ("skip", LIVE),
    "gpurent backup train1 /workspace/checkpoints --to ./ckpt": ("skip", LIVE),
    "gpurent backup --host root@1.2.3.4:2222 /workspace --exclude '*.tmp' --json": ("skip", LIVE),
    "gpurent backup train1 /workspace/ckpt-70b --streams 4": ("skip", LIVE),
    "gpurent ssh train1 -- nvidia-smi": ("skip", LIVE + " with a GPU"),
    "gpurent doctor train1": ("skip", LIVE + " with a GPU"),
    "gpurent status": ("run", 0, None),
    "gpurent push train1": ("skip", LIVE),
    "gpurent push train1 --allow-secret config/dev.env": ("skip", LIVE),
    "gpurent push train1 --delete": ("skip", LIVE),
    "gpurent run train1 -- python train.py": ("skip", LIVE),
    "gpurent run train1 --then backup:checkpoints --then down:destroy -- python train.py": ("skip", LIVE),
    "gpurent run train1 -d --env WANDB_MODE=offline -- 'python prep.py && python train.py'": ("skip", LIVE),
    "gpurent logs train1 -f": ("skip", LIVE),
    "gpurent logs train1 3fa9 --tail 100": ("skip", LIVE),
    "gpurent jobs train1 --json": ("skip", LIVE),
    "gpurent jobs train1 --kill 2": ("skip", LIVE),
    "gpurent up --provider lambda --card h100 --gpus 8 --nodes 2 --group big": ("skip", RENTS),
    "gpurent attach --provider vast --card h100-sxm --price 2.10 --host root@1.2.3.4 --name n0 --group mine": ("run", 0, "sshd"),
    "gpurent run big -- torchrun --nproc_per_node 8 train.py": ("skip", LIVE),
    "gpurent logs big --node 1 -f": ("skip", LIVE),
    "gpurent backup big --node 0 ckpt": ("skip", LIVE),
    "gpurent down big --destroy": ("skip", LIVE + ", and destroys them through the provider"),
    # `< ~/runpod.key` in the README: here a made-up key on standard input.
    "gpurent config set runpod_api_key -": ("run", 0, "key-stdin"),
    "gpurent config set hf_token": ("skip", "asks on the terminal; tests/e2e/test_config_prompt_pty.py runs it on a pty"),
    "gpurent oom train.log": ("run", 0, "train.log"),
    "gpurent oom - --card a100-80gb": ("run", 0, "error.txt"),
}

OPERATORS = set("();<>|&")


def readme_commands(path):
    """(line number, command) for every `gpurent …` in the README's fenced code blocks."""
    found = []
    inside = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if line.startswith("```"):
                inside = not inside
                continue
            if not inside:
                continue
            lex = shlex.shlex(line, posix=True, punctuation_chars=True)
            lex.whitespace_split = True
            lex.commenters = "#"
            words, segments = [], []
            for tok in list(lex) + [";"]:
                if tok and all(c in OPERATORS for c in tok):
                    if words:
                        segments.append(words)
                    words = []
                else:
                    words.append(tok)
            for seg in segments:
                if seg[0] == "gpurent":
                    found.append((number, seg))
    return found


def main():
    found = readme_commands(os.path.join(SRC, "README.md"))
    texts = [shlex.join(seg) for _, seg in found]
    problems = []
    for (number, seg), text in zip(found, texts):
        if text not in EXAMPLES:
            problems.append(f"README.md:{number}: `{text}` is not classified in tests/e2e/readme_examples.py")
    for text in EXAMPLES:
        if text not in texts:
            problems.append(f"`{text}` is classified but no longer in README.md: remove it from EXAMPLES")
    tmp = tempfile.mkdtemp(prefix="gpurent-readme-")
    env = dict(os.environ)
    env.update({"HOME": tmp + "/home", "XDG_STATE_HOME": tmp + "/state", "XDG_CONFIG_HOME": tmp + "/config",
                "GPURENT_STATE_DIR": tmp + "/state/gpurent", "NO_COLOR": "1"})
    for k in list(env):
        if k.startswith("GPURENT_") and k.endswith("_API_KEY") or k in ("SSH_AUTH_SOCK", "HF_TOKEN"):
            env.pop(k)
    os.makedirs(env["HOME"])
    work = os.path.join(tmp, "work")
    os.makedirs(work)
    shutil.copy(os.path.join(DATA, "models", "llama-3.1-8b.json"), os.path.join(work, "config.json"))
    shutil.copy(os.path.join(DATA, "run", "pytorch_oom.log"), os.path.join(work, "train.log"))
    shutil.copy(os.path.join(DATA, "run", "pytorch_oom.log"), os.path.join(work, "error.txt"))
    ran = 0
    try:
        for (number, seg), text in zip(found, texts):
            kind = EXAMPLES.get(text)
            if kind is None or kind[0] == "skip":
                continue
            _, expected, setup = kind
            argv = [BIN] + seg[1:]
            stdin = subprocess.DEVNULL
            if setup == "sshd":
                at = argv.index("--host")
                argv[at + 1] = os.environ["SSHD_TARGET"]
                argv += ["--identity", os.environ["SSHD_KEY"], "--known-hosts", os.environ["SSHD_KNOWN_HOSTS"]]
            if setup == "error.txt":
                stdin = open(os.path.join(work, "error.txt"), "rb")
            if setup == "key-stdin":
                with open(os.path.join(work, "runpod.key"), "w") as f:
                    f.write("rp-readme-example-key\n")
                stdin = open(os.path.join(work, "runpod.key"), "rb")
            r = subprocess.run(argv, cwd=work, env=env, stdin=stdin, capture_output=True, timeout=300)
            ran += 1
            if r.returncode != expected or not r.stdout.strip() and setup != "sshd":
                problems.append(f"README.md:{number}: `{text}` exited {r.returncode} (expected {expected}), "
                                f"{len(r.stdout)} bytes out; stderr: {r.stderr.decode(errors='replace')[-600:]}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for p in problems:
        print("FAIL:", p, file=sys.stderr)
    if problems:
        return 1
    print(f"OK: ran {ran} README examples, skipped {sum(1 for t in texts if EXAMPLES.get(t, ('run',))[0] == 'skip')} "
          f"(each with its reason)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
