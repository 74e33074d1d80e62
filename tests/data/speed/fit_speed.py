#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A first roofline fit over measurements.json, for issue #24 (the speed model), kept so the next
step starts from numbers rather than from scratch. No gpurent code uses it yet.

Formulas (per engine family: llama.cpp/Ollama, or the batched engines vLLM/SGLang/TensorRT-LLM):
  decode  t = (active weight bytes + KV at half the context) / GPUs / (bw x bandwidth) + layers x tau
          (llama.cpp splits layers: its GPUs work one after another, so no division by GPUs)
  prefill rate = pf x dense TFLOPS x GPUs / (2 x active params + 4 x layers x width x L / 2)
  serve   C requests: step = max(memory term, compute term) + layers x tau; prefill added per request
  train   rate = mfu x GPUs x TFLOPS / (6 x params)
The constants are fitted on the half of the cases whose id hashes even, and the spread (median and
80th percentile of |predicted / measured - 1|) is reported on the other half.

    python3 tests/data/speed/fit_speed.py
"""
import hashlib
import json
import math
import os
import statistics

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
M = json.load(open(os.path.join(HERE, "measurements.json")))
CARDS = {c["id"]: c for c in json.load(open(os.path.join(ROOT, "data", "cards.json")))["cards"]}
# The measurements' card names -> gpurent card ids; a bare "H100 80GB" / "A100 80GB" / "A100"
# (no form factor given) is taken as the SXM board, as the sources' DGX/HGX systems are.
CARD = {"RTX 3090": "rtx-3090", "RTX 4090": "rtx-4090", "RTX A6000": "a6000", "RTX 6000 Ada": "rtx-6000-ada",
        "L40S": "l40s", "A100 80GB PCIe": "a100-80gb-pcie", "A100 80GB SXM": "a100-80gb-sxm", "H100 PCIe": "h100-pcie",
        "RTX PRO 6000 Blackwell Workstation Edition": "rtx-pro-6000",
        "RTX PRO 6000 Blackwell Server Edition": "rtx-pro-6000", "A10": "a10", "A10G": "a10g", "L4": "l4",
        "H100 80GB": "h100-sxm", "H100 SXM": "h100-sxm", "H200 SXM": "h200", "B200": "b200", "A100 80GB": "a100-80gb-sxm",
        "A100 40GB": "a100-40gb-sxm", "A100": "a100-80gb-sxm", "H100": "h100-sxm", "H200": "h200"}
BITS = {"Q4_K_M": 4.89, "Q4_0": 4.5, "Q8_0": 8.5, "F16": 16, "bf16": 16, "fp16": 16, None: 16, "fp8": 8, "fp4": 4.5,
        "mxfp4": 4.25, "nf4": 4.5}


def engine_of(x):
    # "other" is Ollama (llama.cpp inside) or NVIDIA NIM (TensorRT-LLM inside, the fp8 rows).
    return "ollama" if x["engine"] == "other" and x["weights"] != "fp8" else x["engine"]


def family(x):
    return "llama.cpp" if engine_of(x) in ("llama.cpp", "ollama") else "batched"


def fit_half(x):
    return int(hashlib.sha256(x["id"].encode()).hexdigest(), 16) % 2 == 0


def shape(params):
    layers = 32 if params < 10e9 else 40 if params < 20e9 else 64 if params < 40e9 else 80 if params < 100e9 else 126
    hidden = math.sqrt(params / (12 * layers))
    return layers, hidden


def inputs(x):
    total = x["params_b"] * 1e9
    active = (x["active_params_b"] or x["params_b"]) * 1e9
    layers, hidden = shape(total)
    bits = BITS.get(x["weights"], 16)
    engine = engine_of(x)
    return {"engine": engine, "active": active, "bytes": active * bits / 8, "layers": layers, "attn": hidden,
            "kv": 2 * layers * hidden / 4 * 2, "gpus": x["gpus"] or 1,
            "split": engine in ("llama.cpp", "ollama"), "bits": 8 if x["weights"] == "fp8" else 4 if x["weights"] == "fp4" else 16}


def tflops(card, bits):
    t = card["tflops"]
    v = {16: t.get("bf16") or t.get("fp16"), 8: t.get("fp8"), 4: t.get("fp4")}[bits]
    return v or (t.get("bf16") or t.get("fp16"))


def decode(i, card, k, ctx):
    div = 1 if i["split"] else i["gpus"]
    t = (i["bytes"] + i["kv"] * ctx / 2) / div / (k["bw"] * card["mem_bw_gbs"] * 1e9) + i["layers"] * k["tau"]
    return 1 / t


def flops_per_token(i, length):
    return 2 * i["active"] + 4 * i["layers"] * i["attn"] * length / 2


def prefill(i, card, k, length):
    tf = tflops(card, i["bits"])
    if not tf:
        return None
    div = 1 if i["split"] else i["gpus"]
    return k["pf"] * tf * 1e12 * div / flops_per_token(i, length)


def serve(i, card, k, c, inp, out):
    tf = tflops(card, i["bits"])
    if not tf:
        return None
    div = i["gpus"]
    mem = (i["bytes"] + c * i["kv"] * (inp + out / 2)) / div / (k["bw"] * card["mem_bw_gbs"] * 1e9)
    comp = c * 2 * i["active"] / (k["pf"] * tf * 1e12 * div)
    step = max(mem, comp) + i["layers"] * k["tau"]
    pre = c * inp * flops_per_token(i, inp) / (k["pf"] * tf * 1e12 * div)
    return c * out / (out * step + pre)


def measured(x):
    u = x["unit"]
    if x["kind"] == "decode":
        return x["value"] if u.startswith("tokens") else 1000 / x["value"]
    if x["kind"] == "prefill":
        return x["value"] if u.startswith("tokens") else (x["input_len"] or 512) / (x["value"] / 1000)
    if x["kind"] == "serve":
        if not u.startswith("tokens"):
            return None
        # output tokens per second of the whole server (per-GPU figures times the GPUs)
        return x["value"] * (x["gpus"] or 1) if "gpu" in u else x["value"]
    if x["kind"] == "train":
        return x["value"] * (x["gpus"] or 1) if "gpu" in u else x["value"]


def usable(x):
    card = CARDS.get(CARD.get(x["card"], ""))
    if not card or not card.get("mem_bw_gbs"):
        return None
    if x["kind"] == "serve" and (x["batch_or_concurrency"] is None or x["input_len"] is None):
        return None  # the load is not stated
    if x["kind"] == "train" and x["engine"] == "torchtune":
        return None  # LoRA/QLoRA/full mixed in one table without the recipe per row
    return card


def predict(x, card, k):
    i = inputs(x)
    if x["kind"] == "decode":
        return decode(i, card, k, 512)
    if x["kind"] == "prefill":
        return prefill(i, card, k, x["input_len"] or 512)
    if x["kind"] == "serve":
        return serve(i, card, k, x["batch_or_concurrency"], x["input_len"], x["output_len"])
    if x["kind"] == "train":
        tf = tflops(card, 8 if x["weights"] == "fp8" else 16)
        return k["mfu"] * (x["gpus"] or 1) * tf * 1e12 / (6 * i["active"])


def errors(kind, fam, k, half):
    out = []
    for x in M:
        card = usable(x)
        if not card or x["kind"] != kind or (kind != "train" and family(x) != fam) or fit_half(x) != half:
            continue
        p, m = predict(x, card, k), measured(x)
        if p and m:
            out.append((p / m - 1, x["id"]))
    return out


def score(errs):
    return statistics.mean(abs(math.log(1 + e)) for e, _ in errs) if errs else 9


def p80(errs):
    v = sorted(abs(e) for e, _ in errs)
    return v[max(0, math.ceil(0.8 * len(v)) - 1)] if v else None


def main():
    consts = {}
    for fam in ("llama.cpp", "batched"):
        # One grid over the three constants, scored on every fit-half case of the family (decode,
        # prefill and, for the batched engines, serving, which uses all three).
        best = None
        for bw in [x / 100 for x in range(30, 96, 5)]:
            for tau in [x / 1e6 for x in range(0, 201, 10)]:
                for pf in [x / 100 for x in range(10, 96, 5)]:
                    k = {"bw": bw, "tau": tau, "pf": pf}
                    e = errors("decode", fam, k, True) + errors("prefill", fam, k, True) + errors("serve", fam, k, True)
                    sc = score(e)
                    if best is None or sc < best[0]:
                        best = (sc, k)
        consts[fam] = best[1]
    best = None
    for mfu in [x / 100 for x in range(20, 71, 1)]:
        s = score(errors("train", None, {"mfu": mfu}, True))
        if best is None or s < best[0]:
            best = (s, mfu)
    consts["train"] = {"mfu": best[1]}
    print(json.dumps(consts, indent=1))
    for kind in ("decode", "prefill", "serve", "train"):
        both = [] if kind == "train" else errors(kind, "llama.cpp", consts["llama.cpp"], False) + errors(
            kind, "batched", consts["batched"], False)
        if both:
            print("%-8s all        check n=%-3d p80 %.0f%%" % (kind, len(both), 100 * p80(both)))
        for fam in (("llama.cpp", "batched") if kind != "train" else (None,)):
            k = consts["train"] if kind == "train" else consts[fam]
            fit, check = errors(kind, fam, k, True), errors(kind, fam, k, False)
            if not check and not fit:
                continue
            print("%-8s %-10s fit n=%-3d check n=%-3d check median %5s  p80 %5s" % (
                kind, fam or "", len(fit), len(check),
                "%.0f%%" % (100 * statistics.median(abs(e) for e, _ in check)) if check else "-",
                "%.0f%%" % (100 * p80(check)) if check else "-"))


if __name__ == "__main__":
    main()
