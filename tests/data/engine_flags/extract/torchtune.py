"""Extract `tune run <recipe> --config <config> key=value...` data from the pytorch/torchtune mirror.

- recipes + their configs + supports_distributed: torchtune/_recipe_registry.py (ast)
- `tune run` options: torchtune/_cli/run.py copies ALL torchrun options (torch.distributed.run
  get_args_parser) and requires `--config` among the recipe args; recipe args must be key=value
  (config/_parse.py TuneRecipeArgumentParser rejects other --flags); `~key` deletes a key.
- override keys: flattened keys of every YAML config of the recipe + top-level keys the recipe
  source reads from cfg (cfg.<key>, cfg.get("<key>")).
- dtype values: torchtune/training/precision.py PRECISION_STR_TO_DTYPE, minus fp16 where the
  recipe raises on it.
"""
import ast
import re
import sys

import yaml

from common import argparse_flags, flag, git, show, tag_commit, write

MIRROR = "pytorch+torchtune"
TAG = sys.argv[1] if len(sys.argv) > 1 else "v0.6.1"


def registry():
    tree = ast.parse(show(MIRROR, TAG, "torchtune/_recipe_registry.py"))
    recipes = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Recipe":
            kw = {k.arg: k.value for k in node.keywords}
            configs = []
            for c in kw["configs"].elts:
                ckw = {k.arg: ast.literal_eval(k.value) for k in c.keywords}
                configs.append((ckw["name"], ckw["file_path"]))
            recipes[ast.literal_eval(kw["name"])] = {
                "file_path": ast.literal_eval(kw["file_path"]),
                "supports_distributed": ast.literal_eval(kw["supports_distributed"]),
                "configs": configs,
            }
    return recipes


def flatten(d, prefix=""):
    keys = []
    for k, v in d.items():
        key = f"{prefix}{k}"
        keys.append(key)
        if isinstance(v, dict):
            keys += flatten(v, key + ".")
    return keys


def main():
    commit = tag_commit(MIRROR, TAG)
    precision = show(MIRROR, TAG, "torchtune/training/precision.py")
    m = re.search(r"PRECISION_STR_TO_DTYPE[^=]*=\s*\{(.*?)\}", precision, re.S)
    dtypes = re.findall(r'"(\w+)"\s*:', m.group(1))
    recipes = {}
    for name, r in sorted(registry().items()):
        src = show(MIRROR, TAG, "recipes/" + r["file_path"])
        read = sorted(set(re.findall(r"\bcfg\.get\(\s*[\"'](\w+)[\"']", src))
                      | set(k for k in re.findall(r"\bcfg\.(\w+)\b", src) if k not in ("get", "keys", "items")))
        cfg_keys, configs = set(), []
        for cname, cpath in r["configs"]:
            configs.append(cname)
            try:
                data = yaml.safe_load(show(MIRROR, TAG, "recipes/configs/" + cpath)) or {}
            except Exception:  # noqa: BLE001 - a config that does not parse stays listed, without keys
                continue
            cfg_keys |= set(flatten(data))
        no_fp16 = bool(re.search(r"fp16.{0,80}not supported", src, re.S))
        recipes[name] = {
            "file": "recipes/" + r["file_path"],
            "supports_distributed": r["supports_distributed"],
            "configs": configs,
            "dtype_values": [d for d in dtypes if not (no_fp16 and d == "fp16")],
            "cfg_keys_read_by_recipe": read,
            "override_keys_from_configs": sorted(cfg_keys),
        }
    flags = {
        "--config": flag([], True, None, command="tune run",
                         note="required among the recipe args: a built-in config name (see recipes.*.configs) "
                              "or a path to a YAML file"),
    }
    # torchrun options copied into `tune run` (torch.distributed.run.get_args_parser); these belong to
    # the installed torch, not to torchtune's source: only the long-standing ones are listed.
    for opt in ("nnodes", "nproc_per_node", "node_rank", "master_addr", "master_port", "rdzv_backend",
                "rdzv_endpoint", "rdzv_id", "max_restarts"):
        flags["--" + opt] = flag(["--" + opt.replace("_", "-")], True, None, command="tune run",
                                 source="torchrun (torch.distributed.run), placed BEFORE the recipe name")
    flags["--standalone"] = flag([], False, None, command="tune run",
                                 source="torchrun (torch.distributed.run), placed BEFORE the recipe name")
    for opt, d in argparse_flags(show(MIRROR, TAG, "torchtune/_cli/download.py")).items():
        d["command"] = "tune download"
        flags[opt] = d
    notes = (
        "Syntax: tune run [TORCHRUN-OPTIONS] <recipe> --config <config> [key=value ...]. "
        "Any torchrun option given before the recipe makes tune run go through torchrun (distributed); "
        "recipes with supports_distributed=false then fail: 'Recipe X does not support distributed training.' "
        "(so `tune run --nproc_per_node N lora_finetune_single_device ...` is an error). "
        "Recipe args other than --config must be key=value overrides (dotted, e.g. model.lora_rank=16, "
        "tokenizer.max_seq_len=4096, optimizer.lr=2e-5); any other --flag is rejected ('Additional flag arguments "
        "not supported'). `~key` removes a key. A key=value for a key absent from the config is merged in (OmegaConf) "
        "but only has an effect if the recipe or the instantiated component reads it: see "
        "recipes.<name>.override_keys_from_configs and cfg_keys_read_by_recipe. "
        "model.* keys are keyword arguments of the model builder named by model._component_: lora builders "
        "(e.g. lora_llama3_1_8b) take lora_rank, lora_alpha, lora_dropout, lora_attn_modules, apply_lora_to_mlp, "
        "apply_lora_to_output, quantize_base; QLoRA configs use qlora_* builders (= lora builder with "
        "quantize_base=True), so model.quantize_base=True on a LoRA config also works. "
        f"dtype values: {', '.join(dtypes)} (training.get_dtype); the four finetune recipes reject fp16. "
        "torchtune's last release is v0.6.1 (2025-04); torchtune is no longer developed (the mirror's main "
        "branch continues past the tag but has no later release)."
    )
    write("torchtune", TAG, commit, "https://github.com/pytorch/torchtune",
          ["torchtune/_recipe_registry.py", "torchtune/_cli/run.py", "torchtune/_cli/download.py",
           "torchtune/config/_parse.py", "torchtune/config/_utils.py", "torchtune/training/precision.py",
           "recipes/*.py", "recipes/configs/**/*.yaml"],
          ["tune run <recipe> --config <config> [key=value ...]", "tune download <repo_id>"],
          flags, {}, notes, recipes=recipes, override_syntax=["key=value", "a.b.c=value", "~key"],
          override_values={"dtype": dtypes})


if __name__ == "__main__":
    main()
