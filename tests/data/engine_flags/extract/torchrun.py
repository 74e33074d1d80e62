"""`torchrun` flags (torch.distributed.run), transcribed from one stored source file.

No git snapshot of pytorch/pytorch can be fetched (over the size limit): the table below was transcribed
by hand from `torch/distributed/run.py` `get_args_parser()` as stored by the source index at commit
010929fd3f401c3868310396e6a91ed95aa0305b (release unknown; it has --numa-binding, so 2.9 or later).
Options registered with `action=env` also read PET_<DEST> from the environment when not given
(torch/distributed/argparse_util.py `env`): `gpurent run GROUP` sets PET_NODE_RANK, PET_NNODES,
PET_MASTER_ADDR and PET_MASTER_PORT.

Row format: options | kind | choices     (kind: V = takes a value, B = no value)
"""
from common import flag, write

COMMIT = "010929fd3f401c3868310396e6a91ed95aa0305b"

TABLE = r"""
--nnodes|V|
--nproc-per-node,--nproc_per_node|V|
--rdzv-backend,--rdzv_backend|V|
--rdzv-endpoint,--rdzv_endpoint|V|
--rdzv-id,--rdzv_id|V|
--rdzv-conf,--rdzv_conf|V|
--standalone|B|
--max-restarts,--max_restarts|V|
--monitor-interval,--monitor_interval|V|
--start-method,--start_method|V|spawn,fork,forkserver
--event-log-handler,--event_log_handler|V|
--role|V|
--module,-m|B|
--no-python,--no_python|B|
--run-path,--run_path|B|
--log-dir,--log_dir|V|
--redirects,-r|V|
--tee,-t|V|
--local-ranks-filter,--local_ranks_filter|V|
--node-rank,--node_rank|V|
--master-addr,--master_addr|V|
--master-port,--master_port|V|
--local-addr,--local_addr|V|
--logs-specs,--logs_specs|V|
--numa-binding,--numa_binding|V|
--signals-to-handle,--signals_to_handle|V|
"""

# --numa-binding's choices are the values of torch.numa.binding.AffinityMode (not in the stored file).


def main():
    flags = {}
    for row in TABLE.strip().splitlines():
        opts, kind, choices = row.split("|")
        names = opts.split(",")
        flags[names[0]] = flag(names[1:], kind == "V", choices.split(",") if choices else None)
    for must in ("--nnodes", "--nproc-per-node", "--node-rank", "--master-addr", "--master-port"):
        assert must in flags, must
    notes = ("Transcribed from torch/distributed/run.py get_args_parser() at the source index's commit " + COMMIT +
             " (release unknown, >= 2.9: --numa-binding exists). The first positional is the training script; with "
             "-m/--module it is a module (`torchrun ... -m trl.scripts.sft ARGS`); everything after it goes to the "
             "script (argparse REMAINDER). Options with action=env fall back to the environment variable "
             "PET_<DEST upper-cased> (argparse_util.env), e.g. PET_NODE_RANK for --node-rank. "
             "argparse abbreviation is on (ArgumentParser default allow_abbrev=True).")
    write("torchrun", "unknown (>= 2.9)", COMMIT, "https://github.com/pytorch/pytorch",
          ["torch/distributed/run.py @ " + COMMIT + " (as stored by the source index)"],
          ["torchrun [options] (-m MODULE | SCRIPT) [args...]"], flags, {}, notes)


if __name__ == "__main__":
    main()
