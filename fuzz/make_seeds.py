#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes seed inputs for every fuzz target, in real shapes, into OUT/<target>/.

Sources: tests/data (OOM messages, model configs, TOML configs, provider answers, agent
streams), real `tar -cf -` archives, the real doctor script run on this machine, and
hand-written shapes of each format. Optionally, with GPURENT_REFERENCE=DIR, also the response
examples of the providers' OpenAPI documents saved as DIR/api/lambda-openapi.json (Lambda Cloud
API v1.10.0, https://docs-api.lambda.ai/api/cloud) and DIR/api/runpod-openapi.json (RunPod API
0.1.0, https://docs.runpod.io/api-reference/openapi.json), and the OOM cases of
DIR/oom_public.json; files that are not there are skipped. scripts/fuzz.sh --seed fuzzes from these
as well as the committed corpus; with --update-corpus, libFuzzer's -merge=1 keeps only the inputs
that add coverage and fuzz/pack_corpus.py re-packs them into fuzz/corpus/<target>_seed_corpus.zip.

Usage: [GPURENT_REFERENCE=DIR] fuzz/make_seeds.py OUT
"""
import hashlib
import io
import json
import os
import struct
import subprocess
import sys
import tarfile
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data")
# Optional directory of saved public reference documents (see the docstring); none by default.
REFERENCE = os.environ.get("GPURENT_REFERENCE", "")


def write(out, target, name, data):
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def files_under(path, suffix=""):
    if not os.path.isdir(path):
        return []
    out = []
    for base, _, names in os.walk(path):
        for n in sorted(names):
            if n.endswith(suffix):
                out.append(os.path.join(base, n))
    return sorted(out)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def oom(out):
    sources = files_under(os.path.join(DATA, "oom"), ".json")
    ref = os.path.join(REFERENCE, "oom_public.json")
    if REFERENCE and os.path.exists(ref):
        sources.append(ref)
    n = 0
    for src in sources:
        data = json.load(open(src))
        items = data if isinstance(data, list) else data.get("reports", []) + data.get("not_reports", [])
        for item in items:
            # The first byte seeds the chunking.
            write(out, "fuzz_oom", f"{n:04d}", bytes([n % 251]) + item["message"].encode())
            n += 1


def config(out):
    for p in files_under(os.path.join(DATA, "config"), ".toml"):
        write(out, "fuzz_config", os.path.basename(p), read(p))
    write(out, "fuzz_config", "shapes.toml",
          '# c\nkey = "v\\n\\t\\u00e9\\\\"\n"quoted key" = 1_000\nf = -1.5e3\nb = true\n[a.b."c d"]\nx = \'lit\'\n')


def model_config(out):
    for p in files_under(os.path.join(DATA, "models"), ".json"):
        write(out, "fuzz_model_config", os.path.basename(p), read(p))
    write(out, "fuzz_model_config", "index.json",
          json.dumps({"metadata": {"total_size": 16060522496}, "weight_map": {"lm_head.weight": "model-00004.safetensors"}}))
    write(out, "fuzz_model_config", "index-string.json", '{"metadata": {"total_size": "16060522496"}}')


def index_for(config_text):
    """A safetensors index whose total matches the config's size roughly (bf16)."""
    return json.dumps({"metadata": {"total_size": 16060522496}, "weight_map": {"model.embed_tokens.weight": "a.safetensors"}})


def hf_hub(out):
    configs = files_under(os.path.join(DATA, "models"), ".json")
    for i, p in enumerate(configs):
        text = read(p)
        write(out, "fuzz_hf_hub", f"ok-{os.path.basename(p)}", bytes([0, 0]) + text + b"@@index@@" + index_for(text).encode())
        write(out, "fuzz_hf_hub", f"noindex-{os.path.basename(p)}", bytes([1, 6]) + text + b"@@index@@Entry not found")
    write(out, "fuzz_hf_hub", "gated", bytes([4, 0]) + b'{"error":"Access to model is restricted"}@@index@@')
    write(out, "fuzz_hf_hub", "ratelimited", bytes([7, 0]) + b"rate limited@@index@@@@retry@@120")
    write(out, "fuzz_hf_hub", "index-gated", bytes([0, 5]) + read(configs[0]) + b"@@index@@")


def hf_listing(out):
    """Hub file lists (?blobs=true siblings, the tree API's array, our cached array) with the index,
    adapter config and header bytes the chosen files answer (tests/data/headers)."""
    heads = {os.path.basename(p): read(p)[1:] for p in files_under(os.path.join(DATA, "headers"), ".seed")}
    st = heads.get("gptq-llama.safetensors.seed", b"")
    gguf = heads.get("q4_k_m-llama.gguf.seed", b"")
    st_size = len(st)
    if len(st) >= 8:  # the whole file's size, as the listing gives it: header + every tensor's bytes
        n = struct.unpack("<Q", st[:8])[0]
        tensors = json.loads(st[8:8 + n])
        st_size = 8 + n + max((t["data_offsets"][1] for k, t in tensors.items() if k != "__metadata__"), default=0)

    def lfs(name, size=None):
        if size is None:  # the ?blobs=true answer without sizes (plain /api/models/<id>)
            return {"rfilename": name}
        return {"rfilename": name, "size": size,
                "lfs": {"size": size, "sha256": hashlib.sha256(name.encode()).hexdigest(), "pointerSize": 134}}

    def doc(siblings):
        return json.dumps({"id": "fuzz-org/fuzz-repo", "gated": False, "siblings": siblings}, separators=(",", ":"))

    def seed(name, opts, ranges, listing, text=b"", body=b"", total=None):
        if isinstance(listing, str):
            listing = listing.encode()
        if isinstance(text, str):
            text = text.encode()
        tail = b"" if total is None else b"@@range@@bytes 0-0/" + total
        write(out, "fuzz_hf_listing", name, bytes([opts, ranges]) + listing + b"@@text@@" + text + b"@@file@@" + body + tail)

    small = [{"rfilename": ".gitattributes", "size": 1519}, {"rfilename": "config.json", "size": 654},
             {"rfilename": "tokenizer.json", "size": 9085657}]
    shards = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
    index = json.dumps({"metadata": {"total_size": 2 * (st_size - len(st))},
                        "weight_map": {"model.embed_tokens.weight": shards[0], "lm_head.weight": shards[1]}})
    seed("sharded-index", 0, 0, doc(small + [lfs(s, st_size) for s in shards] +
                                    [{"rfilename": "model.safetensors.index.json", "size": len(index)}]), index, st)
    seed("single-ignored-range", 0, 1, doc(small + [lfs("model.safetensors", st_size)]), "", st)
    seed("shards-no-index", 0, 0, doc(small + [lfs(s, st_size) for s in shards] +
                                      [lfs("consolidated.safetensors", st_size)]), "", st)
    seed("adapter", 0, 0, doc([{"rfilename": "adapter_config.json", "size": 80}, lfs("adapter_model.safetensors", st_size)]),
         '{"r":16,"lora_alpha":32,"target_modules":["q_proj","v_proj"],"base_model_name_or_path":"org/base"}', st)
    ggufs = ["Llama-3.1-8B-Instruct-Q4_K_M.gguf", "Llama-3.1-8B-Instruct-Q8_0.gguf",
             "BF16/Llama-3.1-8B-Instruct-BF16-00001-of-00002.gguf", "BF16/Llama-3.1-8B-Instruct-BF16-00002-of-00002.gguf",
             "mmproj-F16.gguf"]
    seed("gguf-repo", 64, 0, doc(small[:1] + [lfs(g) for g in ggufs]), "", gguf, b"*")
    seed("gguf-by-type", 1 | (3 << 1), 0, doc([lfs(g) for g in ggufs] + [lfs("model.safetensors", st_size)]),
         "", gguf, b"*")
    seed("gguf-by-name", 8, 0, doc([lfs(g) for g in ggufs[1:2]]), "", gguf, b"*")
    tree = [{"type": "file", "oid": "a" * 40, "size": 654, "path": "config.json"},
            {"type": "file", "oid": "b" * 40, "size": st_size, "path": "model.safetensors",
             "lfs": {"oid": "c" * 64, "size": st_size, "pointerSize": 135}},
            {"type": "directory", "oid": "d" * 40, "size": 0, "path": "original"}]
    seed("tree-api", 0, 0, json.dumps(tree, separators=(",", ":")), "", st)
    seed("cached-array", 0, 2, json.dumps([{"path": "model.safetensors", "size": st_size}, {"path": "config.json"}]),
         "", st)
    hostile = [{"rfilename": "../escape.safetensors", "size": 1}, {"rfilename": "/etc/model.safetensors"},
               {"rfilename": "a\\b.safetensors"}, {"rfilename": "a//b.safetensors"}, {"rfilename": "./model.safetensors"},
               {"rfilename": ""}, {"rfilename": 7}, {"path": "x.safetensors", "size": -5},
               {"rfilename": "model.safetensors", "size": 1e30, "lfs": {"size": 18446744073709551615}}]
    seed("hostile-paths", 0, 0, doc(hostile), "", st)
    seed("index-escapes", 0, 0, doc([lfs("model.safetensors.index.json", 90), lfs(shards[0], len(st))]),
         json.dumps({"weight_map": {"w": "../" + shards[0]}}), st)
    seed("listing-gated", 0x30, 0, '{"error":"Access to model fuzz-org/fuzz-repo is restricted."}')
    seed("listing-404", 0x20, 0, '{"error":"Repository not found"}')
    seed("range-errors", 0, 3 | (2 << 2), doc([lfs("model.safetensors", st_size)]), "", st)
    seed("range-cap", 0, 1 | 16, doc([lfs("model.safetensors", st_size)]), "", st)
    write(out, "fuzz_hf_listing", "content-range", bytes([0, 0]) + doc([lfs("model.safetensors", st_size)]).encode() +
          b"@@text@@@@file@@" + st[:64] + b"@@range@@bytes 0-63/*")


def backup_agent(out):
    for p in files_under(os.path.join(DATA, "agent")):
        write(out, "fuzz_backup_agent", os.path.basename(p), read(p))


def tar_archives():
    """Real archives: GNU tar's own output, and Python's GNU, ustar and pax formats."""
    archives = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "t")
        os.makedirs(os.path.join(root, "dir", "sub"))
        with open(os.path.join(root, "a"), "wb") as f:
            f.write(b"hello")
        with open(os.path.join(root, "dir", "sub", "b.bin"), "wb") as f:
            f.write(bytes(range(256)) * 3)
        long = "x" * 120
        with open(os.path.join(root, "dir", long), "wb") as f:
            f.write(b"long name")
        open(os.path.join(root, "empty"), "wb").close()
        os.symlink("a", os.path.join(root, "link"))
        try:
            archives["gnutar.tar"] = subprocess.run(["tar", "-C", root, "-cf", "-", "."], check=True,
                                                    capture_output=True).stdout
            archives["gnutar-posix.tar"] = subprocess.run(["tar", "--format=posix", "-C", root, "-cf", "-", "a", "dir"],
                                                          check=True, capture_output=True).stdout
        except (OSError, subprocess.CalledProcessError):
            pass
        # A sparse member (GNU's old format and pax 1.0) and a hard link: libarchive hands the
        # holes to gpurent as offsets, which the reader turns into zeros; a hard link has no data.
        with open(os.path.join(root, "holey"), "wb") as f:
            f.write(b"head")
            f.seek(64 * 1024)
            f.write(b"tail")
        os.link(os.path.join(root, "a"), os.path.join(root, "hard"))
        for name, fmt in (("gnutar-sparse.tar", "gnu"), ("gnutar-posix-sparse.tar", "posix")):
            try:
                archives[name] = subprocess.run(["tar", "--format=" + fmt, "--sparse", "-C", root, "-cf", "-",
                                                 "holey", "a", "hard"], check=True, capture_output=True).stdout
            except (OSError, subprocess.CalledProcessError):
                pass
        for name, fmt in (("py-gnu.tar", tarfile.GNU_FORMAT), ("py-ustar.tar", tarfile.USTAR_FORMAT),
                          ("py-pax.tar", tarfile.PAX_FORMAT)):
            buf = io.BytesIO()
            with tarfile.open(fileobj=buf, mode="w", format=fmt) as t:
                for rel in ("a", "empty", "dir/sub/b.bin", "link"):
                    t.add(os.path.join(root, rel), arcname=rel, recursive=False)
                if fmt != tarfile.USTAR_FORMAT:
                    t.add(os.path.join(root, "dir", long), arcname="dir/" + long)
            archives[name] = buf.getvalue()
    return archives


def tar(out):
    for i, (name, data) in enumerate(sorted(tar_archives().items())):
        # The first byte seeds the chunking; the tail is what the agent prints after tar.
        write(out, "fuzz_tar", name, bytes([i * 37 % 256]) + data + b"gpurent-sums\x000\x00none\x00")


def doctor(out):
    gpus = ("0, NVIDIA H100 80GB HBM3, 81559, 20480, 61079, 550.54.15, 97\n"
            "1, NVIDIA A100-SXM4-80GB, 81920, [N/A], 81000, 535.1, [Not Supported]\n")
    apps = "4242, python3, 20000\n4343, /usr/bin/python3 -m vllm.entrypoints, [N/A]\n"
    ps = ("    PID    PPID STAT  ELAPSED COMMAND\n      1       0 Ss       100 /sbin/init\n"
          "   4242       1 Sl      3600 python3 train.py --epochs 3\n"
          "   4343     100 Zl       360 python -m ipykernel_launcher -f kernel.json\n")
    torch = "2.5.1+cu124 12.4 True\n"
    nvcc = "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 12.4, V12.4.131\n"

    def section(name, status, text):
        return f"@@gpurent:begin {name}\n{text}\n@@gpurent:end {status}\n"

    write(out, "fuzz_doctor", "gpu-server", section("gpus", 0, gpus) + section("apps", 0, apps) + section("ps", 0, ps) +
          section("torch", 0, torch) + section("nvcc", 0, nvcc))
    write(out, "fuzz_doctor", "no-driver", section("gpus", 127, "sh: nvidia-smi: not found") + section("apps", 127, "") +
          section("ps", 0, ps) + section("torch", 1, "ModuleNotFoundError: No module named 'torch'") +
          section("nvcc", 127, "nvcc: command not found"))
    write(out, "fuzz_doctor", "old-6-fields", section("gpus", 0, "0, Tesla T4, 15360, 3, 15357, 470.82.01") +
          section("apps", 0, "No running processes found") + section("torch", 0, "2.1.0 None False"))
    try:
        real = subprocess.run(["sh", "-c", doctor_script()], capture_output=True, timeout=60).stdout
        write(out, "fuzz_doctor", "this-machine", real)
    except (OSError, subprocess.SubprocessError):
        pass


def doctor_script():
    # The same commands as doctor_script() in sync/doctor_parse.cpp.
    def section(name, cmd):
        return (f"printf '@@gpurent:begin %s\\n' {name}; {{ {cmd}; }} 2>&1; printf '\\n@@gpurent:end %s\\n' $?\n")
    return (section("gpus", "nvidia-smi --query-gpu=index,name,memory.total,memory.used,memory.free,driver_version,"
                    "utilization.gpu --format=csv,noheader,nounits") +
            section("apps", "nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader,nounits") +
            section("ps", "ps -eo pid,ppid,stat,etimes,args | head -40") +
            section("torch", "python3 -c \"import torch; print(torch.__version__, torch.version.cuda, "
                    "torch.cuda.is_available())\"") +
            section("nvcc", "nvcc --version"))


def openapi_examples(path):
    """Response examples of an OpenAPI document (JSON bodies)."""
    if not REFERENCE or not os.path.exists(path):
        return []
    doc = json.load(open(path))
    found = []

    def walk(x):
        if isinstance(x, dict):
            for k, v in x.items():
                if k == "example" and isinstance(v, (dict, list)):
                    found.append(v)
                elif k == "examples" and isinstance(v, dict):
                    for e in v.values():
                        if isinstance(e, dict) and isinstance(e.get("value"), (dict, list)):
                            found.append(e["value"])
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    for p in doc.get("paths", {}).values():
        walk(p)
    return found


def providers(out):
    for provider in ("lambda", "runpod", "vast"):
        target = f"fuzz_{provider}_api"
        for p in files_under(os.path.join(DATA, provider), ".json"):
            write(out, target, os.path.basename(p), read(p))
        for i, ex in enumerate(openapi_examples(os.path.join(REFERENCE, "api", f"{provider}-openapi.json"))):
            body = json.dumps(ex)
            if len(body) < 16384:
                write(out, target, f"openapi-{i:03d}.json", body)
    write(out, "fuzz_runpod_api", "error.json", '{"error": "pod not found", "status": 404}')
    write(out, "fuzz_vast_api", "error.json", '{"success": false, "error": "invalid_args", "msg": "bad id"}')


def entries_listing(entries):
    out = b""
    for kind, size, mtime, mode, path, link in entries:
        for field in (kind, str(size), mtime, mode, path, link):
            out += (field.encode() if isinstance(field, str) else field) + b"\0"
    return out


def remote_listing(out):
    listing = entries_listing([
        ("d", 4096, "1700000000.0000000000", "755", "dir", ""),
        ("f", 5, "1700000000.5000000000", "644", "dir/a", ""),
        ("l", 1, "1700000001.2500000000", "777", "dir/link", "a"),
        ("l", 1, "1700000001.2500000000", "777", "up", "../../etc/passwd"),
        ("f", 0, "-1.5000000000", "600", "weird\nname", ""),
        ("p", 0, "1700000000.0000000000", "644", "fifo", ""),
    ])
    write(out, "fuzz_remote_listing", "find.bin", listing)
    h1, h2 = hashlib.sha256(b"a").hexdigest(), hashlib.sha256(b"b").hexdigest()
    write(out, "fuzz_remote_listing", "openssl.bin", f"openssl\0{h1} *a\n\\{h2} *d\\ne\n{h1} *-dash\n")
    write(out, "fuzz_remote_listing", "sha256sum.bin", f"sha256sum\0{h1}  a\0{h2}  b/c\0")
    write(out, "fuzz_remote_listing", "shasum.bin", f"shasum\0{h1}  a\n{h2} *b/c\n\\{h1}  back\\\\slash\n")
    write(out, "fuzz_remote_listing", "none.bin", "none\0")


def manifest(out):
    m = {"version": 1, "host": "root@1.2.3.4:22", "finished_unix": 1700000000, "files": [
        {"path": "dir", "type": "dir", "size": 4096, "mtime_ns": 1700000000000000000, "mode": 493},
        {"path": "dir/a", "type": "file", "size": 5, "mtime_ns": 1700000000500000000, "mode": 420,
         "sha256": hashlib.sha256(b"hello").hexdigest()},
        {"path": "dir/link", "type": "symlink", "size": 1, "mtime_ns": 1, "mode": 511, "link": "a"},
        {"path_hex": "ff00", "type": "other", "size": 0, "mtime_ns": -5, "mode": 0},
    ]}
    write(out, "fuzz_manifest", "manifest.json", json.dumps(m, indent=1) + "\n")
    write(out, "fuzz_manifest", "empty.json", '{"version": 1, "files": []}\n')


def offer_cache(out):
    c = {"version": 1, "providers": {
        "runpod": {"fetched_at": 1764500000, "offers": [
            {"card": "rtx-4090", "gpus": 1, "price_micro": 690000, "spot_price_micro": 340000, "region": ""},
            {"card": "h100-80gb", "gpus": 8, "price_micro": 21520000, "region": "US"}]},
        "vast": {"fetched_at": 1764500100, "offers": []}}}
    write(out, "fuzz_offer_cache", "offers.json", json.dumps(c, indent=1))


def state_rows(out):
    rule = {"available": True, "unavailable_reason": "", "bills_full_rate": False, "fixed_per_hour": 5000,
            "keeps": "the volume", "loses": "the GPU", "allowed_on_spot": True, "spot_reason": "", "storage_note": ""}
    terms = json.dumps({"stopped": rule, "hibernated": dict(rule, available=False), "destroy_loses": "everything",
                        "workspace_dir": "/workspace"})
    gpus = json.dumps([{"index": 0, "used_mib": 10, "total_mib": 24000, "util_pct": 0},
                       {"index": 1, "used_mib": 20000, "total_mib": 81559, "util_pct": None}])
    ints = struct.pack("<8q", 1800000000, 1800000000, 1800000100, 22, 1, 1800000200, 1800000300, 2)
    for status in ("running", "stopped", "destroyed", "creating"):
        write(out, "fuzz_state_rows", status, "\x1e".join([terms, status, gpus, status]).encode() + b"\x1e" + ints)
    write(out, "fuzz_state_rows", "old", b"{}\x1erunning\x1e[]\x1erecorded\x1e")


def values(out):
    write(out, "fuzz_values", "plan-serve", b"\x00llama-3.1-8b\nserve\nvllm\nbf16\nfp8\n32k\n8\nadamw\n16\n2\ntp\n0.9\n"
          b"rtx-4090\nrunpod\n1.5\n$2.50\n\n")
    write(out, "fuzz_values", "plan-params", b"\x03\ninfer\n\nQ4_K_M\nauto\n8192\n1\n\n\n1\n\n\nh100\n\n36\n2.5\n7B\n")
    write(out, "fuzz_values", "plan-train", b"\x01qwen2.5-7b\nqlora\n\nnf4\n\n4096\n4\nadamw-8bit\n64\n4\nzero3\n\n\n\n"
          b"0.25\n100000\n")
    write(out, "fuzz_values", "numbers", b"\x00-1.5e-3\n18446744073709551615\n 42 \n0.5\n1e309\n4.9e-324\n120\n"
          b"running\nhibernated\n1700000000\n8.03B\n1.5T\n350M\n70e9\n128K\n0.000001\n")


def headers(out):
    """The safetensors and GGUF headers of tests/data/headers (first byte: the target's options)."""
    for p in files_under(os.path.join(DATA, "headers"), ".seed"):
        name = os.path.basename(p)
        target = "fuzz_gguf_header" if ".gguf." in name else "fuzz_safetensors_header"
        write(out, target, name, read(p))


def push_job(out):
    """The job agent's and push agent's output, a git index, .gitignore text (first byte: the reader)."""
    for p in files_under(os.path.join(DATA, "run")):
        if os.path.basename(p).startswith("seed_"):
            write(out, "fuzz_push_job", os.path.basename(p), read(p))


def autostop(out):
    """The watchdog's log, config and state listing (first byte: the reader)."""
    log = b""
    for p in files_under(os.path.join(DATA, "autostop")):
        log = read(p)
        write(out, "fuzz_autostop_log", "log-" + os.path.basename(p), bytes([0]) + log)
    config = (b"AS_IDLE='1800'\nAS_THEN='stop'\nAS_RELEASE='86400'\nAS_UTIL='5'\nAS_INTERVAL='60'\nAS_API='runpod'\n"
              b"AS_API_URL='https://rest.runpod.io/v1'\nAS_INSTANCE='abc123'\nAS_CRED='instance'\nAS_ON_IDLE='curl -d x'\n"
              b"AS_BACKUP_TO='me@203.0.113.9:ckpt'\nAS_BACKUP_DIR=''\nAS_NO_BACKUP='0'\nAS_NVIDIA_SMI='nvidia-smi'\n"
              b"AS_ARMED_AT='1796151150'\n")
    write(out, "fuzz_autostop_log", "config", bytes([1]) + config)
    state = b"\0".join([b"gpurent-autostop-state-1", b"config", config, b"alive", b"yes", b"pause", b"1796154770\n",
                        b"now", b"1796151200", b"log", log or b"start t=1 pid=2 launcher=sh"])
    write(out, "fuzz_autostop_log", "state", bytes([2]) + state)
    write(out, "fuzz_autostop_log", "state-none", bytes([2]) + b"gpurent-autostop-state-1\0none\0")


def vast_lists(out):
    """Vast's list answers: pages of GET /api/v1/instances/ and GET /ssh/."""
    for name in ("instances_v1_page1.json", "instances_v1_page2.json", "instances.json", "ssh_keys.json"):
        p = os.path.join(DATA, "vast", name)
        if os.path.exists(p):
            write(out, "fuzz_vast_lists", name, read(p))
    write(out, "fuzz_vast_lists", "page-token.json", '{"instances": [], "next_token": "a b&c#d"}')
    write(out, "fuzz_vast_lists", "keys-wrapped.json",
          '{"ssh_keys": [{"id": 1, "key": "ssh-ed25519 AAAA a", "deleted_at": null},'
          ' {"id": 2, "public_key": "ssh-rsa AAAA b", "deleted_at": "2024-01-01"}]}')
    write(out, "fuzz_vast_lists", "not-found.json", '{"success": false, "error": "not_found", "msg": "No SSH keys found"}')


def autostop_arm(out):
    """What arming the watchdog prints: armed, or an error."""
    write(out, "fuzz_autostop_arm", "armed", b"gpurent-autostop\0armed\0setsid\04242\0yes\0no\0")
    write(out, "fuzz_autostop_arm", "armed-nohup", b"gpurent-autostop\0armed\0nohup\0\0no\0yes\0")
    write(out, "fuzz_autostop_arm", "error-backup", b"gpurent-autostop\0error\0backup-unreachable\0")
    write(out, "fuzz_autostop_arm", "error-credential", b"gpurent-autostop\0error\0credential\0")
    write(out, "fuzz_autostop_arm", "error-mkdir", b"gpurent-autostop\0error\0mkdir\0")
    write(out, "fuzz_autostop_arm", "shell-noise", b"Welcome!\n\x1b[31mmotd\x1b[0m\ngpurent-autostop\0armed\0sh\0")


def main():
    if len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[1]
    for make in (oom, config, model_config, hf_hub, hf_listing, backup_agent, tar, doctor, providers, remote_listing, manifest,
                 offer_cache, state_rows, values, headers, push_job, autostop, vast_lists, autostop_arm):
        make(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
