"""Extract `deepspeed` launcher flags (deepspeed/launcher/runner.py parse_args) from the DeepSpeed mirror."""
import sys

from common import argparse_flags, show, tag_commit, write

MIRROR = "deepspeedai+DeepSpeed"
TAG = sys.argv[1] if len(sys.argv) > 1 else "v0.19.5"


def main():
    commit = tag_commit(MIRROR, TAG)
    src = show(MIRROR, TAG, "deepspeed/launcher/runner.py")
    flags = argparse_flags(src)
    assert "--num_gpus" in flags, "runner.py layout changed"
    notes = ("`deepspeed [launcher flags] user_script.py [script args]`: launcher flags must come before the "
             "script; everything after the script is passed to it untouched (argparse REMAINDER). "
             "Flags spelled with underscores (--num_gpus/--num_nodes/--master_port...) exactly as listed; "
             "argparse allow_abbrev applies.")
    write("deepspeed", TAG, commit, "https://github.com/deepspeedai/DeepSpeed",
          ["deepspeed/launcher/runner.py"], ["deepspeed"], flags, {}, notes)


if __name__ == "__main__":
    main()
