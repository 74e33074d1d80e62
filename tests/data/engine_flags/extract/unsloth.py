"""Unsloth's Python API as the launch script calls it: the keyword parameters of
FastLanguageModel.from_pretrained and FastLanguageModel.get_peft_model at an Unsloth commit, and of
TRL's SFTTrainer and SFTConfig at the newest TRL release Unsloth's pyproject.toml allows.

    MIRRORS=... python3 unsloth.py 015bdef0d94a241bcd94eec7a405b1700632180d v0.24.0

Reads unslothai+unsloth and huggingface+trl; SFTConfig's TrainingArguments fields come from
transformers_trl.json (TRL v1.9.0's parser over transformers 5.x): its SFTConfig group less the
fields TRL v1.9.0 declares itself.
"""
import ast
import json
import os
import re
import sys

from common import OUT_DIR, git, show

UNSLOTH, TRL = "unslothai+unsloth", "huggingface+trl"


def method_params(source, cls, method):
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == method:
                    a = item.args
                    names = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]
                    return [n for n in names if n != "self"], a.kwarg is not None
    raise SystemExit(f"{cls}.{method} not found")


def dataclass_fields(source, cls):
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            return [i.target.id for i in node.body if isinstance(i, ast.AnnAssign) and isinstance(i.target, ast.Name)]
    raise SystemExit(f"{cls} not found")


def main():
    rev, trl_tag = sys.argv[1], sys.argv[2]
    commit = git(UNSLOTH, "rev-parse", f"{rev}^{{commit}}").strip()
    version = re.search(r'__version__ = "([^"]+)"', show(UNSLOTH, commit, "unsloth/_version.py")).group(1)
    pyproject = show(UNSLOTH, commit, "pyproject.toml")
    trl_pin = re.search(r'"(trl[^"]*)"', pyproject).group(1)
    trl_commit = git(TRL, "rev-parse", f"{trl_tag}^{{commit}}").strip()
    fp, fp_kw = method_params(show(UNSLOTH, commit, "unsloth/models/loader.py"), "FastLanguageModel", "from_pretrained")
    peft, peft_kw = method_params(show(UNSLOTH, commit, "unsloth/models/llama.py"), "FastLlamaModel", "get_peft_model")
    trainer, trainer_kw = method_params(show(TRL, trl_commit, "trl/trainer/sft_trainer.py"), "SFTTrainer", "__init__")
    own = dataclass_fields(show(TRL, trl_commit, "trl/trainer/sft_config.py"), "SFTConfig")
    v19 = set(dataclass_fields(show(TRL, "v1.9.0", "trl/trainer/sft_config.py"), "SFTConfig"))
    try:
        v19 |= set(dataclass_fields(show(TRL, "v1.9.0", "trl/trainer/base_config.py"), "_BaseConfig"))
    except Exception:
        pass
    table = json.load(open(os.path.join(OUT_DIR, "transformers_trl.json")))
    training_args = sorted(k[2:] for k, v in table["flags"].items() if v.get("group") == "SFTConfig" and k[2:] not in v19)
    out = {
        "engine": "unsloth",
        "release": version,
        "commit": commit,
        "repository": "https://github.com/unslothai/unsloth",
        "trl_release": trl_tag,
        "trl_commit": trl_commit,
        "trl_pin": trl_pin + " (unsloth pyproject.toml at the commit)",
        "sources": ["unsloth/models/loader.py FastLanguageModel.from_pretrained",
                    "unsloth/models/llama.py FastLlamaModel.get_peft_model (FastLanguageModel inherits it)",
                    f"trl {trl_tag}: trl/trainer/sft_trainer.py SFTTrainer.__init__, trl/trainer/sft_config.py SFTConfig",
                    "transformers_trl.json: TrainingArguments fields (transformers 5.x)"],
        "commands": ["python -c", "accelerate launch"],
        "flags": {},
        "calls": {
            "FastLanguageModel.from_pretrained": {"params": fp, "var_kwargs": fp_kw},
            "FastLanguageModel.get_peft_model": {"params": peft, "var_kwargs": peft_kw},
            "SFTTrainer": {"params": trainer, "var_kwargs": trainer_kw},
            "SFTConfig": {"params": sorted(set(own) | set(training_args)), "var_kwargs": False},
        },
        "choices": {"SFTConfig.optim": table["flags"]["--optim"]["choices"],
                    "use_gradient_checkpointing": ["unsloth", True, False]},
        "notes": "Keyword names only; a test checks every keyword the launch script passes is a named parameter "
                 "(never through **kwargs). SFTConfig = TRL's own fields at trl_release plus TrainingArguments'.",
    }
    with open(os.path.join(OUT_DIR, "unsloth.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
