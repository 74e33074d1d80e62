"""Extract `trl sft` (= python -m trl.scripts.sft) flags.

TRL side: read from the huggingface/trl mirror at the release tag with `ast`
(ScriptArguments, SFTConfig <- _BaseConfig <- transformers.TrainingArguments,
ModelConfig, DatasetMixtureConfig; see trl/scripts/sft.py make_parser) and turned
into argparse options with the rules of TRL's own HfArgumentParser copy
(trl/scripts/_hf_argparser.py, _parse_dataclass_field).

transformers side: TrainingArguments could not be fetched as a git mirror (the
snapshot is over the size limit), so its dataclass fields are transcribed below
(TRAINING_ARGUMENTS) from a stored copy of src/transformers/training_args.py of a
transformers 5.x release (>= 5.3: its help strings already escape '%').
"""
import dataclasses
import os
import sys
import tempfile

from common import flag, show, tag_commit, write

MIRROR = "huggingface+trl"
TAG = sys.argv[1] if len(sys.argv) > 1 else "v1.9.0"

ENUMS = {
    "IntervalStrategy": ["no", "steps", "epoch"],
    "SaveStrategy": ["no", "steps", "epoch", "best"],
    "HubStrategy": ["end", "every_save", "checkpoint", "all_checkpoints"],
    # transformers.training_args.OptimizerNames (5.x copy)
    "OptimizerNames": [
        "adamw_torch", "adamw_torch_fused", "adamw_torch_xla", "adamw_torch_npu_fused", "adafactor",
        "adamw_anyprecision", "adamw_torch_4bit", "adamw_torch_8bit", "ademamix", "sgd", "adagrad",
        "adamw_bnb_8bit", "adamw_8bit", "ademamix_8bit", "lion_8bit", "lion_32bit", "paged_adamw_32bit",
        "paged_adamw_8bit", "paged_ademamix_32bit", "paged_ademamix_8bit", "paged_lion_32bit",
        "paged_lion_8bit", "rmsprop", "rmsprop_bnb", "rmsprop_bnb_8bit", "rmsprop_bnb_32bit",
        "galore_adamw", "galore_adamw_8bit", "galore_adafactor", "galore_adamw_layerwise",
        "galore_adamw_8bit_layerwise", "galore_adafactor_layerwise", "lomo", "adalomo", "grokadamw",
        "schedule_free_radam", "schedule_free_adamw", "schedule_free_sgd", "apollo_adamw",
        "apollo_adamw_layerwise", "stable_adamw"],
    # trainer_utils.SchedulerType: an Enum (argparse choices), values not transcribed here.
    "SchedulerType": None,
}
LOG_LEVELS = ["detail", "debug", "info", "warning", "error", "critical", "passive"]

# (name, annotation, default, metadata-extras) in declaration order, transcribed from
# transformers 5.x src/transformers/training_args.py `class TrainingArguments`.
TRAINING_ARGUMENTS = [
    ("output_dir", "str | None", None, {}),
    ("per_device_train_batch_size", "int", 8, {}),
    ("num_train_epochs", "float", 3.0, {}),
    ("max_steps", "int", -1, {}),
    ("learning_rate", "float", 5e-5, {}),
    ("lr_scheduler_type", "SchedulerType | str", "linear", {}),
    ("lr_scheduler_kwargs", "dict | str | None", None, {}),
    ("warmup_steps", "float", 0, {}),
    ("optim", "OptimizerNames | str", "adamw_torch_fused", {}),
    ("optim_args", "str | None", None, {}),
    ("weight_decay", "float", 0.0, {}),
    ("adam_beta1", "float", 0.9, {}),
    ("adam_beta2", "float", 0.999, {}),
    ("adam_epsilon", "float", 1e-8, {}),
    ("optim_target_modules", "None | str | list[str]", None, {}),
    ("gradient_accumulation_steps", "int", 1, {}),
    ("average_tokens_across_devices", "bool", True, {}),
    ("max_grad_norm", "float", 1.0, {}),
    ("label_smoothing_factor", "float", 0.0, {}),
    ("bf16", "bool", False, {}),
    ("fp16", "bool", False, {}),
    ("bf16_full_eval", "bool", False, {}),
    ("fp16_full_eval", "bool", False, {}),
    ("tf32", "bool | None", None, {}),
    ("gradient_checkpointing", "bool", False, {}),
    ("gradient_checkpointing_kwargs", "dict[str, Any] | str | None", None, {}),
    ("torch_compile", "bool", False, {}),
    ("torch_compile_backend", "str | None", None, {}),
    ("torch_compile_mode", "str | None", None, {}),
    ("use_liger_kernel", "bool", False, {}),
    ("liger_kernel_config", "dict[str, bool] | None", None, {}),
    ("use_cache", "bool", False, {}),
    ("neftune_noise_alpha", "float | None", None, {}),
    ("torch_empty_cache_steps", "int | None", None, {}),
    ("auto_find_batch_size", "bool", False, {}),
    ("logging_strategy", "IntervalStrategy | str", "steps", {}),
    ("logging_steps", "float", 500, {}),
    ("logging_first_step", "bool", False, {}),
    ("log_on_each_node", "bool", True, {}),
    ("logging_nan_inf_filter", "bool", True, {}),
    ("include_num_input_tokens_seen", "str | bool", "no", {}),
    ("log_level", "str", "passive", {"choices": LOG_LEVELS}),
    ("log_level_replica", "str", "warning", {"choices": LOG_LEVELS}),
    ("disable_tqdm", "bool | None", None, {}),
    ("report_to", "None | str | list[str]", "none", {}),
    ("run_name", "str | None", None, {}),
    ("project", "str", "huggingface", {}),
    ("trackio_space_id", "str | None", None, {}),
    ("trackio_bucket_id", "str | None", None, {}),
    ("trackio_static_space_id", "str | None | Literal[False]", None, {}),
    ("eval_strategy", "IntervalStrategy | str", "no", {}),
    ("eval_steps", "float | None", None, {}),
    ("eval_delay", "float", 0, {}),
    ("per_device_eval_batch_size", "int", 8, {}),
    ("prediction_loss_only", "bool", False, {}),
    ("eval_on_start", "bool", False, {}),
    ("eval_do_concat_batches", "bool", True, {}),
    ("eval_use_gather_object", "bool", False, {}),
    ("eval_accumulation_steps", "int | None", None, {}),
    ("include_for_metrics", "list[str]", [], {}),
    ("batch_eval_metrics", "bool", False, {}),
    ("save_only_model", "bool", False, {}),
    ("save_strategy", "SaveStrategy | str", "steps", {}),
    ("save_steps", "float", 500, {}),
    ("save_on_each_node", "bool", False, {}),
    ("save_total_limit", "int | None", None, {}),
    ("enable_jit_checkpoint", "bool", False, {}),
    ("push_to_hub", "bool", False, {}),
    ("hub_token", "str | None", None, {}),
    ("hub_private_repo", "bool | None", None, {}),
    ("hub_model_id", "str | None", None, {}),
    ("hub_strategy", "HubStrategy | str", "every_save", {}),
    ("hub_always_push", "bool", False, {}),
    ("hub_revision", "str | None", None, {}),
    ("load_best_model_at_end", "bool", False, {}),
    ("metric_for_best_model", "str | None", None, {}),
    ("greater_is_better", "bool | None", None, {}),
    ("ignore_data_skip", "bool", False, {}),
    ("restore_callback_states_from_checkpoint", "bool", False, {}),
    ("full_determinism", "bool", False, {}),
    ("seed", "int", 42, {}),
    ("data_seed", "int | None", None, {}),
    ("use_cpu", "bool", False, {}),
    ("accelerator_config", "dict | str | None", None, {}),
    ("parallelism_config", "ParallelismConfig | None", None, {}),
    ("dataloader_drop_last", "bool", False, {}),
    ("dataloader_num_workers", "int", 0, {}),
    ("dataloader_pin_memory", "bool", True, {}),
    ("dataloader_persistent_workers", "bool", False, {}),
    ("dataloader_prefetch_factor", "int | None", None, {}),
    ("remove_unused_columns", "bool", True, {}),
    ("label_names", "list[str] | None", None, {}),
    ("train_sampling_strategy", "str", "random", {"choices": ["random", "sequential", "group_by_length"]}),
    ("length_column_name", "str", "length", {}),
    ("ddp_find_unused_parameters", "bool | None", None, {}),
    ("ddp_bucket_cap_mb", "int | None", None, {}),
    ("ddp_broadcast_buffers", "bool | None", None, {}),
    ("ddp_static_graph", "bool | None", None, {}),
    ("ddp_backend", "str | None", None, {"choices": ["nccl", "gloo", "mpi", "xccl", "hccl", "cncl", "mccl"]}),
    ("ddp_timeout", "int", 1800, {}),
    ("fsdp", "str | None", None, {"nargs": "?"}),
    ("fsdp_config", "dict[str, Any] | str | None", None, {}),
    ("deepspeed", "dict | str | None", None, {}),
    ("debug", "str | list[DebugOption]", "", {}),
    ("skip_memory_metrics", "bool", True, {}),
    ("do_train", "bool", False, {}),
    ("do_eval", "bool", False, {}),
    ("do_predict", "bool", False, {}),
    ("resume_from_checkpoint", "str | None", None, {}),
    ("local_rank", "int", -1, {}),
]



STUB_HEADER = """
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Literal


class ExplicitEnum(str, Enum):
    pass


def _enum(name, values):
    return ExplicitEnum(name, {v.upper(): v for v in values})


IntervalStrategy = _enum("IntervalStrategy", %(IntervalStrategy)r)
SaveStrategy = _enum("SaveStrategy", %(SaveStrategy)r)
HubStrategy = _enum("HubStrategy", %(HubStrategy)r)
OptimizerNames = _enum("OptimizerNames", %(OptimizerNames)r)
SchedulerType = _enum("SchedulerType", ["linear"])  # real values not transcribed
DebugOption = _enum("DebugOption", ["underflow_overflow", "tpu_metrics_debug"])


class ParallelismConfig:
    pass


@dataclass
class TrainingArguments:
    _VALID_DICT_FIELDS = ["accelerator_config", "fsdp_config", "deepspeed", "gradient_checkpointing_kwargs",
                          "lr_scheduler_kwargs"]
"""


def stub_transformers():
    """Source of a stand-in `transformers` module whose TrainingArguments has the transcribed fields."""
    lines = [STUB_HEADER % ENUMS]
    for name, ann, default, meta in TRAINING_ARGUMENTS:
        md = {"help": ""}
        md.update(meta)
        if isinstance(default, list):
            lines.append(f"    {name}: {ann} = field(default_factory=list, metadata={md!r})")
        else:
            lines.append(f"    {name}: {ann} = field(default={default!r}, metadata={md!r})")
    return "\n".join(lines) + "\n"


def build_parser(tmp):
    """Materialise the TRL modules of the tag plus the stub transformers in tmp and build `trl sft`'s parser."""
    files = {
        "trl/scripts/_hf_argparser.py": None, "trl/scripts/utils.py": None,
        "trl/trainer/model_config.py": None, "trl/trainer/base_config.py": None,
        "trl/trainer/sft_config.py": None,
    }
    for path in files:
        full = os.path.join(tmp, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(show(MIRROR, TAG, path))
    for pkg in ("trl", "trl/scripts", "trl/trainer"):
        open(os.path.join(tmp, pkg, "__init__.py"), "a").close()
    os.makedirs(os.path.join(tmp, "transformers"), exist_ok=True)
    with open(os.path.join(tmp, "transformers", "__init__.py"), "w") as f:
        f.write(stub_transformers())
    sys.path.insert(0, tmp)
    from trl.scripts.utils import DatasetMixtureConfig, ScriptArguments, TrlParser
    from trl.trainer.model_config import ModelConfig
    from trl.trainer.sft_config import SFTConfig
    # same tuple and order as trl/scripts/sft.py make_parser()
    dataclass_types = (ScriptArguments, SFTConfig, ModelConfig, DatasetMixtureConfig)
    groups = {}
    for dc in dataclass_types:
        for f in dataclasses.fields(dc):
            groups.setdefault(f.name, dc.__name__)
    return TrlParser(dataclass_types, prog="trl sft"), groups


def flags_from_parser(parser, groups):
    flags = {}
    for act in parser._actions:
        if not act.option_strings or act.dest == "help":
            continue
        canon, *aliases = act.option_strings
        extra = {}
        if act.nargs == 0:
            takes_value = False
        elif act.nargs == "?":
            takes_value = False
            extra["value_optional"] = True
        else:
            takes_value = True
            if act.nargs is not None:
                extra["nargs"] = act.nargs
        choices = None
        if act.choices is not None:
            choices = [getattr(c, "value", c) for c in act.choices]
            choices = [str(c) if not isinstance(c, str) else c for c in choices]
        if act.dest == "lr_scheduler_type":
            choices = None
            extra["choices_note"] = "argparse choices = values of transformers' SchedulerType enum (not transcribed)"
        if act.nargs == "?" and act.type is not None and getattr(act.type, "__name__", "") == "string_to_bool":
            extra["value_choices"] = ["yes", "no", "true", "false", "t", "f", "y", "n", "1", "0"]
        extra["group"] = groups.get(act.dest, "?")
        flags[canon] = flag(aliases, takes_value, choices, **extra)
    return flags


def main():
    commit = tag_commit(MIRROR, TAG)
    with tempfile.TemporaryDirectory() as tmp:
        parser, groups = build_parser(tmp)
        flags = flags_from_parser(parser, groups)
    flags["--config"] = flag([], True, None, group="TrlParser",
                             note="YAML config file, handled by TrlParser.parse_args_and_config")
    # sanity checks the brief asked about
    assert "--dtype" in flags and "--torch_dtype" not in flags
    assert "--max_length" in flags and "--max_seq_length" not in flags
    notes = (
        f"TRL {TAG}: `trl sft` = trl/scripts/sft.py make_parser with dataclasses (ScriptArguments, SFTConfig, "
        "ModelConfig, DatasetMixtureConfig) parsed by TRL's vendored HfArgumentParser (trl/scripts/_hf_argparser.py). "
        "Every field gives --field_name AND --field-name (underscores->dashes alias). Bool fields take an OPTIONAL "
        "value (nargs='?', const=True, yes/no/true/false/t/f/y/n/1/0); bool fields whose default is True also get "
        "--no_field / --no-field (e.g. --no_gradient_checkpointing, since TRL defaults gradient_checkpointing=True). "
        "EXCEPTION: `bool | None = None` fields REQUIRE a value (no nargs='?'): --bf16 (TRL _BaseConfig makes "
        "bf16 Optional, default None -> True unless --fp16), --tf32, --disable_tqdm, --hub_private_repo, "
        "--greater_is_better, --ddp_* bools, --eval_packing, --completion_only_loss: write `--bf16 true`, a bare "
        "`--bf16` is an argparse error ('expected one argument'). argparse allow_abbrev is on (unique prefixes "
        "are accepted). "
        "`T | None` non-str fields accept 'none'/'null'. Unknown CLI args: `python -m trl.scripts.sft` raises "
        "(parse_args_into_dataclasses without return_remaining_strings); `trl sft` passes them on as "
        "`accelerate launch` options, where they fail. "
        "dtype flag: --dtype (choices auto,bfloat16,float16,float32; default float32) since TRL v0.23.0; "
        "--torch_dtype up to v0.22.x (removed, NOT accepted at this release). "
        "Length flag: --max_length (SFTConfig, default 1024); --max_seq_length existed up to v0.18.x (both from "
        "v0.16 to v0.18), NOT accepted at this release. "
        "TrainingArguments part transcribed from a transformers 5.x (>=5.3) copy: compared with 4.x, 5.x has no "
        "--warmup_ratio (use --warmup_steps with a float <1), no --overwrite_output_dir, no --logging_dir, "
        "no --group_by_length (use --train_sampling_strategy group_by_length), report_to defaults to 'none'. "
        "TRL v1.9.0 still allows transformers>=4.56.2, where those 4.x flags exist; the list here is for 5.x. "
        "--offload_optimizer_device is NOT a TrainingArguments/TRL flag: it is an `accelerate launch` DeepSpeed option "
        "(see accelerate.json), valid only before `-m trl.scripts.sft`. "
        "--fsdp takes an optional value, e.g. --fsdp 'full_shard auto_wrap'. "
        "--lr_scheduler_type choices come from transformers' SchedulerType enum (not transcribed: choices null)."
    )
    write("transformers_trl", TAG, commit, "https://github.com/huggingface/trl",
          ["trl/scripts/sft.py", "trl/scripts/utils.py", "trl/scripts/_hf_argparser.py",
           "trl/trainer/sft_config.py", "trl/trainer/base_config.py", "trl/trainer/model_config.py",
           "transformers (5.x, >=5.3): src/transformers/training_args.py TrainingArguments (transcribed)"],
          ["trl sft", "python -m trl.scripts.sft", "accelerate launch -m trl.scripts.sft",
           "torchrun -m trl.scripts.sft"],
          flags, {}, notes,
          transformers_release="5.x (>= 5.3; exact tag not identifiable from the stored copy)")


if __name__ == "__main__":
    main()
