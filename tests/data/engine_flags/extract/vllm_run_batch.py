"""`vllm run-batch` flags: run_batch.py's own options plus the engine arguments of vllm.json.

`vllm run-batch` (python -m vllm.entrypoints.openai.run_batch) builds its parser in
vllm/entrypoints/openai/run_batch.py `make_arg_parser`: its own options (transcribed below from the file as
stored by the source index at commit 0056ae7b2144abbc7b4916a43491c154567e0b76; release unknown, it imports
vllm.entrypoints.pooling, a late-2025 layout) around `AsyncEngineArgs.add_cli_args(parser)`, whose options
are the engine part of vllm.json (groups other than Frontend/serve, v0.30.0). The server's frontend options
(--host, --api-key, ...) are not part of it. Run vllm.py first.

Row format: options | kind   (V = takes a value, B = no value)
"""
import json
import os

from common import OUT_DIR, flag, write

COMMIT = "0056ae7b2144abbc7b4916a43491c154567e0b76"

OWN = r"""
--input-file,-i|V
--output-file,-o|V
--output-tmp-dir|V
--response-role|V
--max-log-len|V
--enable-metrics|B
--url|V
--port|V
--enable-prompt-tokens-details|B
--enable-force-include-usage|B
"""


def main():
    with open(os.path.join(OUT_DIR, "vllm.json")) as f:
        serve = json.load(f)
    flags = {k: v for k, v in serve["flags"].items() if v.get("group") not in ("Frontend", "serve")}
    for row in OWN.strip().splitlines():
        opts, kind = row.split("|")
        names = opts.split(",")
        assert names[0] not in flags, names[0]
        flags[names[0]] = flag(names[1:], kind == "V", None, group="run_batch")
    for must in ("--input-file", "--output-file", "--model", "--tensor-parallel-size", "--max-num-seqs"):
        assert must in flags, must
    notes = ("run_batch.py's own options at the source index's commit " + COMMIT + " (release unknown) plus the "
             "engine arguments of vllm.json (v0.30.0, groups other than Frontend/serve: "
             "AsyncEngineArgs.add_cli_args). The model is --model (no positional). -i/-o take a local path or an "
             "http(s) URL; one request per line, OpenAI batch format (custom_id, method, url, body).")
    write("vllm_run_batch", "v0.30.0 engine args; run_batch.py options at " + COMMIT[:12], None,
          "https://github.com/vllm-project/vllm",
          ["vllm/entrypoints/openai/run_batch.py @ " + COMMIT + " (as stored by the source index)"] + serve["sources"],
          ["vllm run-batch -i INPUT -o OUTPUT --model MODEL [engine args]",
           "python -m vllm.entrypoints.openai.run_batch ..."], flags, {}, notes)


if __name__ == "__main__":
    main()
