#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""End-to-end: `gpurent plan` sizes checkpoints from their files' headers. The files are written
here in Python, from the formats' descriptions (an independent writer: safetensors' 8-byte length +
JSON, GGUF v3's typed key/value pairs and tensor infos), served by tests/e2e/hf_double.py (range
requests, the 302 to its CDN on another port) and read from local directories.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile
import time

BIN = os.environ["GPURENT_BIN"]
HERE = os.path.dirname(os.path.abspath(__file__))
TOKEN = "hf_test_token"
DTYPE_BYTES = {"F16": 2, "BF16": 2, "F32": 4, "I32": 4, "U8": 1, "F8_E4M3": 1}


def check(cond, what):
    if not cond:
        print(f"FAIL: {what}")
        sys.exit(1)


def run(args, env):
    return subprocess.run([BIN] + args, env=env, capture_output=True, text=True, timeout=60)


def write_safetensors(path, tensors):
    """tensors: [(name, dtype, shape)]; returns the bytes of tensor data."""
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, dtype, shape in tensors:
        n = DTYPE_BYTES[dtype]
        for d in shape:
            n *= d
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + n]}
        offset += n
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        f.truncate(8 + len(text) + offset)  # sparse data
    return offset


GGML = {"F32": (0, 1, 4), "F16": (1, 1, 2), "Q8_0": (8, 32, 34), "Q4_K": (12, 256, 144), "Q6_K": (14, 256, 210)}


def gguf_str(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def write_gguf(path, kv, tensors, file_type):
    """kv: [(key, 'u32'|'str'|'f32', value)]; tensors: [(name, type, dims)] ne0 first."""
    out = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kv) + 1)
    for key, kind, value in kv + [("general.file_type", "u32", file_type)]:
        out += gguf_str(key)
        if kind == "u32":
            out += struct.pack("<II", 4, value)
        elif kind == "f32":
            out += struct.pack("<If", 6, value)
        else:
            out += struct.pack("<I", 8) + gguf_str(value)
    offset, total = 0, 0
    infos = b""
    for name, ty, dims in tensors:
        tid, block, size = GGML[ty]
        n = 1
        for d in dims:
            n *= d
        nbytes = n // block * size
        infos += gguf_str(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
        infos += struct.pack("<IQ", tid, offset)
        offset += (nbytes + 31) // 32 * 32
        total += nbytes
        last = nbytes
    out += infos
    out += b"\0" * ((32 - len(out) % 32) % 32)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(out)
        f.truncate(len(out) + offset - ((last + 31) // 32 * 32) + last)
    return total


H, I, L, HEADS, KV, VOCAB = 512, 1536, 2, 8, 4, 1024
CONFIG = {"model_type": "llama", "hidden_size": H, "intermediate_size": I, "num_hidden_layers": L,
          "num_attention_heads": HEADS, "num_key_value_heads": KV, "max_position_embeddings": 4096,
          "vocab_size": VOCAB, "tie_word_embeddings": False, "torch_dtype": "float16"}


def linears():
    hd = H // HEADS
    for i in range(L):
        p = f"model.layers.{i}."
        yield p + "self_attn.q_proj", H, HEADS * hd
        yield p + "self_attn.k_proj", H, KV * hd
        yield p + "self_attn.v_proj", H, KV * hd
        yield p + "self_attn.o_proj", HEADS * hd, H
        yield p + "mlp.gate_proj", H, I
        yield p + "mlp.up_proj", H, I
        yield p + "mlp.down_proj", I, H


def gptq_tensors():
    ts = []
    for name, n_in, n_out in linears():
        ts += [(name + ".qweight", "I32", [n_in * 4 // 32, n_out]), (name + ".qzeros", "I32", [n_in // 128, n_out // 8]),
               (name + ".scales", "F16", [n_in // 128, n_out]), (name + ".g_idx", "I32", [n_in])]
    for i in range(L):
        ts += [(f"model.layers.{i}.input_layernorm.weight", "F16", [H]),
               (f"model.layers.{i}.post_attention_layernorm.weight", "F16", [H])]
    ts += [("model.embed_tokens.weight", "F16", [VOCAB, H]), ("model.norm.weight", "F16", [H]),
           ("lm_head.weight", "F16", [VOCAB, H])]
    return ts


PARAMS = 2 * VOCAB * H + sum(a * b for _, a, b in linears()) + (2 * L + 1) * H


def plain_tensors(dtype, cfg):
    """A dense llama checkpoint of `cfg`'s shape in one 16-bit dtype."""
    h, inter, heads, kv, vocab = (cfg["hidden_size"], cfg["intermediate_size"], cfg["num_attention_heads"],
                                  cfg["num_key_value_heads"], cfg["vocab_size"])
    hd = h // heads
    ts = []
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        for name, n_in, n_out in [("self_attn.q_proj", h, heads * hd), ("self_attn.k_proj", h, kv * hd),
                                  ("self_attn.v_proj", h, kv * hd), ("self_attn.o_proj", heads * hd, h),
                                  ("mlp.gate_proj", h, inter), ("mlp.up_proj", h, inter), ("mlp.down_proj", inter, h)]:
            ts.append((p + name + ".weight", dtype, [n_out, n_in]))
        ts += [(p + "input_layernorm.weight", dtype, [h]), (p + "post_attention_layernorm.weight", dtype, [h])]
    ts += [("model.embed_tokens.weight", dtype, [vocab, h]), ("model.norm.weight", dtype, [h]),
           ("lm_head.weight", dtype, [vocab, h])]
    return ts


BIG = dict(CONFIG, hidden_size=8192, intermediate_size=28672, num_hidden_layers=80, num_attention_heads=64,
           num_key_value_heads=8, vocab_size=128256, max_position_embeddings=131072, torch_dtype="bfloat16")


def gguf_tensors(ty):
    ts = [("token_embd.weight", ty, [H, VOCAB]), ("output_norm.weight", "F32", [H]), ("output.weight", ty, [H, VOCAB])]
    for name, n_in, n_out in linears():
        blk = name.replace("model.layers.", "blk.").replace("self_attn.q_proj", "attn_q").replace(
            "self_attn.k_proj", "attn_k").replace("self_attn.v_proj", "attn_v").replace(
            "self_attn.o_proj", "attn_output").replace("mlp.gate_proj", "ffn_gate").replace(
            "mlp.up_proj", "ffn_up").replace("mlp.down_proj", "ffn_down")
        ts.append((blk + ".weight", ty, [n_in, n_out]))
    for i in range(L):
        ts += [(f"blk.{i}.attn_norm.weight", "F32", [H]), (f"blk.{i}.ffn_norm.weight", "F32", [H])]
    return ts


GGUF_KV = [("general.architecture", "str", "llama"), ("general.name", "str", "Tiny Llama"),
           ("llama.block_count", "u32", L), ("llama.embedding_length", "u32", H),
           ("llama.feed_forward_length", "u32", I), ("llama.attention.head_count", "u32", HEADS),
           ("llama.attention.head_count_kv", "u32", KV), ("llama.context_length", "u32", 4096),
           ("llama.vocab_size", "u32", VOCAB), ("llama.rope.freq_base", "f32", 10000.0)]


def main():
    with tempfile.TemporaryDirectory() as tmp:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "NO_COLOR": "1", "HOME": tmp,
               "XDG_CACHE_HOME": os.path.join(tmp, "cache"), "XDG_CONFIG_HOME": os.path.join(tmp, "config"),
               "XDG_STATE_HOME": os.path.join(tmp, "state"), "GPURENT_CATALOG_AUTO_REFRESH": "false"}
        if "GPURENT_IO_MODULE" in os.environ:
            env["GPURENT_IO_MODULE"] = os.environ["GPURENT_IO_MODULE"]
        repos = os.path.join(tmp, "repos")
        gptq_dir = os.path.join(repos, "acme", "tiny-gptq")
        os.makedirs(gptq_dir)
        cfg = dict(CONFIG, quantization_config={"quant_method": "gptq", "bits": 4, "group_size": 128})
        with open(os.path.join(gptq_dir, "config.json"), "w") as f:
            json.dump(cfg, f)
        gptq_bytes = write_safetensors(os.path.join(gptq_dir, "model.safetensors"), gptq_tensors())
        q8_bytes = write_gguf(os.path.join(repos, "acme", "tiny-gguf", "tiny-Q8_0.gguf"), GGUF_KV,
                              gguf_tensors("Q8_0"), 7)
        write_gguf(os.path.join(repos, "acme", "tiny-gguf", "tiny-F16.gguf"), GGUF_KV, gguf_tensors("F16"), 1)
        # config.json claims FP8, the files store bf16 (a re-upload that kept the old config).
        bf16_dir = os.path.join(repos, "acme", "tiny-bf16")
        os.makedirs(bf16_dir)
        with open(os.path.join(bf16_dir, "config.json"), "w") as f:
            json.dump(dict(CONFIG, quantization_config={"quant_method": "fp8"}), f)
        write_safetensors(os.path.join(bf16_dir, "model.safetensors"), plain_tensors("BF16", CONFIG))
        # A 70B-shaped bf16 checkpoint (sparse: only its header is real) for the recipe.
        big_dir = os.path.join(repos, "acme", "big-bf16")
        os.makedirs(big_dir)
        with open(os.path.join(big_dir, "config.json"), "w") as f:
            json.dump(BIG, f)
        big_bytes = write_safetensors(os.path.join(big_dir, "model.safetensors"), plain_tensors("BF16", BIG))

        port_file = os.path.join(tmp, "port")
        log = os.path.join(tmp, "requests.log")
        hub = subprocess.Popen([sys.executable, os.path.join(HERE, "hf_double.py"), "--port-file", port_file,
                                "--log", log, "--files", repos, "--idle", "60"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(500):
                if os.path.exists(port_file):
                    break
                time.sleep(0.02)
            endpoint = f"http://127.0.0.1:{int(open(port_file).read())}"
            env_hub = dict(env, HF_ENDPOINT=endpoint, HF_TOKEN=TOKEN)

            # A GPTQ repository: served in its own format by default, the stored bytes exactly.
            r = run(["plan", "acme/tiny-gptq", "--task", "serve", "--json"], env_hub)
            check(r.returncode == 0, f"plan of a GPTQ repository exits 0 ({r.stderr})")
            doc = json.loads(r.stdout)
            ck = doc["model"].get("checkpoint")
            check(ck is not None, "the plan reports where the weights come from")
            check(ck["bytes"] == gptq_bytes, f"checkpoint bytes {ck['bytes']} == {gptq_bytes}")
            check(ck["as_stored"] and ck["stored_as"] == "gptq", f"loaded as stored: {ck}")
            check(doc["model"]["params"] == PARAMS, f"packed weights unpacked: {doc['model']['params']} == {PARAMS}")
            check(doc["job"]["weights"] == "gptq", f"weights follow the checkpoint: {doc['job']['weights']}")
            check(abs(doc["memory"]["weights_gib"] - round(gptq_bytes / 2**30, 2)) < 0.011, "weights_gib")
            check(TOKEN not in r.stdout + r.stderr, "the token is never printed")
            lines = open(log).read().splitlines()
            check(any(x.startswith("CDN GET /cdn/acme/tiny-gptq/model.safetensors auth=no range=bytes=0-")
                      for x in lines), "the header came from the CDN with a range request")
            check(not any(x.startswith("CDN") and "auth=yes" in x for x in lines), "no token to the CDN")
            check(any("resolve/main/model.safetensors auth=yes" in x for x in lines), "the token to the Hub")
            text = run(["plan", "acme/tiny-gptq", "--task", "serve"], env_hub)
            check(text.returncode == 0 and "weights: GPTQ int4 (group 128) from the safetensors header" in text.stdout,
                  f"the text says where the weights come from:\n{text.stdout}")

            # Offline: the cache answers with the same exact bytes.
            r = run(["plan", "acme/tiny-gptq", "--task", "serve", "--json", "--offline"], env)
            check(r.returncode == 0 and json.loads(r.stdout)["model"]["checkpoint"]["bytes"] == gptq_bytes,
                  f"offline from the cache ({r.stderr})")

            # A GGUF repository: llama.cpp, the chosen type's exact bytes; an absent type lists the others.
            r = run(["plan", "acme/tiny-gguf", "--weights", "Q8_0", "--json"], env_hub)
            check(r.returncode == 0, f"plan of a GGUF repository exits 0 ({r.stderr})")
            doc = json.loads(r.stdout)
            check(doc["job"]["engine"] == "llama.cpp", f"a GGUF runs under llama.cpp: {doc['job']}")
            check(doc["model"]["checkpoint"]["bytes"] == q8_bytes, f"GGUF bytes {doc['model']['checkpoint']}")
            check(doc["model"]["layers"] == L and doc["model"]["vocab"] == VOCAB, "the GGUF header's architecture")
            r = run(["plan", "acme/tiny-gguf", "--weights", "Q4_K_M", "--engine", "llama.cpp", "--json"], env_hub)
            check(r.returncode == 1 and "F16" in r.stderr and "Q8_0" in r.stderr, f"absent type ({r.stderr})")

            # --gguf: a URL, a local file; with no MODEL.
            url = f"{endpoint}/acme/tiny-gguf/resolve/main/tiny-Q8_0.gguf"
            r = run(["plan", "--gguf", url, "--json"], env_hub)
            check(r.returncode == 0 and json.loads(r.stdout)["model"]["checkpoint"]["bytes"] == q8_bytes,
                  f"--gguf URL ({r.stderr})")
            local_gguf = os.path.join(repos, "acme", "tiny-gguf", "tiny-Q8_0.gguf")
            r = run(["plan", "--gguf", local_gguf, "--json", "--offline"], env)
            check(r.returncode == 0 and json.loads(r.stdout)["job"]["weights"] == "Q8_0", f"--gguf FILE ({r.stderr})")
            r = run(["plan", "--gguf", local_gguf, "--engine", "transformers"], env)
            check(r.returncode == 2 and "--gguf" in r.stderr, "--gguf with an engine that cannot load it")

            # The headers are the truth of what is stored, and job.defaults says so.
            r = run(["plan", "acme/tiny-gptq", "--task", "serve", "--json"], env_hub)
            why = {d["key"]: d["why"] for d in json.loads(r.stdout)["job"]["defaults"]}
            check("safetensors header" in why.get("weights", ""), f"the weights' source is stated: {why}")
            r = run(["plan", "acme/tiny-bf16", "--task", "serve", "--json"], env_hub)
            check(r.returncode == 0, f"plan of a bf16 repository ({r.stderr})")
            doc = json.loads(r.stdout)
            check(doc["job"]["weights"] == "bf16", f"the headers win over quantization_config: {doc['job']}")
            check("--quantization" not in doc["launch"]["vllm"], f"no quantization flag: {doc['launch']}")
            r = run(["plan", "acme/tiny-bf16", "--task", "serve", "--weights", "fp8", "--json"], env_hub)
            doc = json.loads(r.stdout)
            check(doc["job"]["weights"] == "fp8" and "--quantization fp8" in doc["launch"]["vllm"],
                  f"--weights given wins, quantized on load: {doc['launch']}")

            # llama.cpp loads the very file that was sized; the line is valid shell.
            r = run(["plan", "acme/tiny-gguf", "--weights", "Q8_0", "--json"], env_hub)
            doc = json.loads(r.stdout)
            line = doc["launch"]["llama.cpp"]
            check(line.startswith("llama-server -hf acme/tiny-gguf --hf-file tiny-Q8_0.gguf "), f"GGUF launch: {line}")
            check(subprocess.run(["bash", "-n", "-c", line]).returncode == 0, f"bash -n: {line}")
            why = {d["key"]: d["why"] for d in doc["job"]["defaults"]}
            check("GGUF type" in why.get("engine", ""), f"the engine's reason: {why}")
            r = run(["plan", local_gguf, "--json", "--offline"], env)
            check(r.returncode == 0 and json.loads(r.stdout)["launch"]["llama.cpp"].startswith(f"llama-server -m {local_gguf} "),
                  f"a local GGUF file by its path ({r.stdout[-300:]} {r.stderr})")

            # The recipe for a checkpoint sized from its headers: the same parameters in a smaller format.
            r = run(["plan", "acme/big-bf16", "--task", "serve", "--card", "h100", "--gpus", "1", "--json"], env_hub)
            check(r.returncode == 3, f"a 70B bf16 checkpoint does not fit one H100 ({r.returncode}, {r.stderr})")
            doc = json.loads(r.stdout)
            check(doc["model"]["checkpoint"]["bytes"] == big_bytes, "the stored bytes")
            rec = doc.get("recipe")
            check(rec is not None and rec["fits"], f"a recipe fits: {rec}")
            check([c["id"] for c in rec["changes"]] == ["quantize-weights"] and rec["job"]["weights"] == "fp8",
                  f"fp8 is the least invasive change: {rec['changes']}")
            check(0.45 < rec["memory"]["weights_gib"] / (big_bytes / 2**30) < 0.55, f"fp8 halves the weights: {rec['memory']}")
            check("--quantization fp8" in rec["launch"]["vllm"] and
                  subprocess.run(["bash", "-n", "-c", rec["launch"]["vllm"]]).returncode == 0, f"recipe launch {rec}")

            # A local checkpoint directory: no network, exact bytes.
            r = run(["plan", gptq_dir, "--json", "--offline"], env)
            check(r.returncode == 0, f"plan of a local directory ({r.stderr})")
            doc = json.loads(r.stdout)
            check(doc["model"]["source"] == "file" and doc["model"]["checkpoint"]["bytes"] == gptq_bytes,
                  f"local directory: {doc['model']}")
        finally:
            hub.terminate()
            hub.wait(timeout=10)
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
