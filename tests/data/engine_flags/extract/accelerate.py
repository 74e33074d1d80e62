"""Extract `accelerate launch` flags (src/accelerate/commands/launch.py launch_command_parser)
from the huggingface/accelerate mirror; gpurent wraps `-m trl.scripts.sft` in it for DeepSpeed."""
import sys

from common import argparse_flags, show, tag_commit, write

MIRROR = "huggingface+accelerate"
TAG = sys.argv[1] if len(sys.argv) > 1 else "v1.14.0"


def main():
    commit = tag_commit(MIRROR, TAG)
    flags = argparse_flags(show(MIRROR, TAG, "src/accelerate/commands/launch.py"))
    for f in ("--num_processes", "--use_deepspeed", "--zero_stage", "--offload_optimizer_device"):
        assert f in flags, f
    notes = ("`accelerate launch [launch flags] {script.py | -m module} [script args]`: launch flags must precede "
             "the script/-m; the rest goes to the script. Only `--flag` spellings as listed (argparse allow_abbrev "
             "applies). DeepSpeed flags (--zero_stage, --offload_optimizer_device, ...) only take effect with "
             "--use_deepspeed.")
    write("accelerate", TAG, commit, "https://github.com/huggingface/accelerate",
          ["src/accelerate/commands/launch.py"], ["accelerate launch"], flags, {}, notes)


if __name__ == "__main__":
    main()
