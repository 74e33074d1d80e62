"""llama.cpp `llama-server` / `llama-cli` flags from common/arg.cpp (ggml-org/llama.cpp).

The llama.cpp git snapshot is over the fetch size limit, so the option table below was
transcribed by hand from one stored version of common/arg.cpp (see README: commit
145b6280d6aa1890e22457143dad0badb3fd6820 as recorded by the source index), one row per
`add_opt(common_arg(...))`, in file order:

    args | negative args | value hint(s) ("" = no value) | set_examples (COMMON if none) | set_excludes | env

Rules of common_params_parser_init / common_params_parse_ex at that version:
- an option is offered to example EX when its examples contain EX or LLAMA_EXAMPLE_COMMON,
  and EX is not in its excludes;
- for arguments starting with "--", '_' is replaced by '-' before lookup (so --ctx_size works);
- options with a value hint take exactly one value (two for the *-scaled / --spec-replace /
  --control-vector-layer-range rows); negative args (e.g. --no-mmap) take none.
"""
from common import flag, write

MMPROJ = "MTMD,SERVER,CLI"
KV_TYPES = ["f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1"]
ON_OFF_AUTO = ["on", "off", "auto"]  # is_truthy: on/enabled/true/1, is_falsey: off/disabled/false/0, is_autoy: auto/-1

ROWS = r"""
-h,--help,--usage||||
--version||||
-cl,--cache-list||||
--completion-bash||||
--verbose-prompt||||
--display-prompt|--no-display-prompt||COMPLETION,CLI||
-co,--color||[on|off|auto]|COMPLETION,CLI,SPECULATIVE,LOOKUP||
-t,--threads||N|||LLAMA_ARG_THREADS
-tb,--threads-batch||N|||
-C,--cpu-mask||M|||
-Cr,--cpu-range||lo-hi|||
--cpu-strict||<0|1>|||
--prio||N|||
--poll||<0...100>|||
-Cb,--cpu-mask-batch||M|||
-Crb,--cpu-range-batch||lo-hi|||
--cpu-strict-batch||<0|1>|||
--prio-batch||N|||
--poll-batch||<0|1>|||
-lcs,--lookup-cache-static||FNAME|LOOKUP||
-lcd,--lookup-cache-dynamic||FNAME|LOOKUP||
-c,--ctx-size||N|||LLAMA_ARG_CTX_SIZE
-n,--predict,--n-predict||N|||LLAMA_ARG_N_PREDICT
-b,--batch-size||N|||LLAMA_ARG_BATCH
-ub,--ubatch-size||N|||LLAMA_ARG_UBATCH
--keep||N|||
--swa-full|||||LLAMA_ARG_SWA_FULL
--ctx-checkpoints,--swa-checkpoints||N|SERVER,CLI||LLAMA_ARG_CTX_CHECKPOINTS
--cache-ram,-cram||N|SERVER,CLI||LLAMA_ARG_CACHE_RAM
--kv-unified,-kvu|||||LLAMA_ARG_KV_UNIFIED
--context-shift|--no-context-shift||COMPLETION,CLI,SERVER,IMATRIX,PERPLEXITY||LLAMA_ARG_CONTEXT_SHIFT
--chunks||N|IMATRIX,PERPLEXITY,RETRIEVAL||
-fa,--flash-attn||[on|off|auto]|||LLAMA_ARG_FLASH_ATTN
-p,--prompt||PROMPT||SERVER|
-sys,--system-prompt||PROMPT|COMPLETION,CLI,DIFFUSION,MTMD||
--perf|--no-perf||||LLAMA_ARG_PERF
--show-timings|--no-show-timings||CLI||LLAMA_ARG_SHOW_TIMINGS
-f,--file||FNAME||SERVER|
-sysf,--system-prompt-file||FNAME|COMPLETION,CLI,DIFFUSION||
--in-file||FNAME|IMATRIX||
-bf,--binary-file||FNAME||SERVER|
-e,--escape|--no-escape||||
-ptc,--print-token-count||N|COMPLETION||
--prompt-cache||FNAME|COMPLETION||
--prompt-cache-all|||COMPLETION||
--prompt-cache-ro|||COMPLETION||
-r,--reverse-prompt||PROMPT|COMPLETION,CLI,SERVER||
-sp,--special|||COMPLETION,CLI,SERVER||
-cnv,--conversation|-no-cnv,--no-conversation||COMPLETION,CLI||
-st,--single-turn|||COMPLETION,CLI||
-i,--interactive|||COMPLETION||
-if,--interactive-first|||COMPLETION||
-mli,--multiline-input|||COMPLETION,CLI||
--in-prefix-bos|||COMPLETION||
--in-prefix||STRING|COMPLETION||
--in-suffix||STRING|COMPLETION||
--warmup|--no-warmup||COMPLETION,CLI,SERVER,MTMD,EMBEDDING,RETRIEVAL,PERPLEXITY||
--spm-infill|||SERVER||
--samplers||SAMPLERS|||
-s,--seed||SEED|||
--sampling-seq,--sampler-seq||SEQUENCE|||
--ignore-eos||||
--temp||N|||
--top-k||N|||LLAMA_ARG_TOP_K
--top-p||N|||
--min-p||N|||
--top-nsigma||N|||
--xtc-probability||N|||
--xtc-threshold||N|||
--typical||N|||
--repeat-last-n||N|||
--repeat-penalty||N|||
--presence-penalty||N|||
--frequency-penalty||N|||
--dry-multiplier||N|||
--dry-base||N|||
--dry-allowed-length||N|||
--dry-penalty-last-n||N|||
--dry-sequence-breaker||STRING|||
--dynatemp-range||N|||
--dynatemp-exp||N|||
--mirostat||N|||
--mirostat-lr||N|||
--mirostat-ent||N|||
-l,--logit-bias||TOKEN_ID(+/-)BIAS|||
--grammar||GRAMMAR|||
--grammar-file||FNAME|||
-j,--json-schema||SCHEMA|||
-jf,--json-schema-file||FILE|||
--pooling||{none,mean,cls,last,rank}|EMBEDDING,RETRIEVAL,SERVER||LLAMA_ARG_POOLING
--attention||{causal,non-causal}|EMBEDDING||
--rope-scaling||{none,linear,yarn}|||LLAMA_ARG_ROPE_SCALING_TYPE
--rope-scale||N|||LLAMA_ARG_ROPE_SCALE
--rope-freq-base||N|||LLAMA_ARG_ROPE_FREQ_BASE
--rope-freq-scale||N|||LLAMA_ARG_ROPE_FREQ_SCALE
--yarn-orig-ctx||N|||LLAMA_ARG_YARN_ORIG_CTX
--yarn-ext-factor||N|||LLAMA_ARG_YARN_EXT_FACTOR
--yarn-attn-factor||N|||LLAMA_ARG_YARN_ATTN_FACTOR
--yarn-beta-slow||N|||LLAMA_ARG_YARN_BETA_SLOW
--yarn-beta-fast||N|||LLAMA_ARG_YARN_BETA_FAST
-gan,--grp-attn-n||N|COMPLETION,PASSKEY||LLAMA_ARG_GRP_ATTN_N
-gaw,--grp-attn-w||N|COMPLETION||LLAMA_ARG_GRP_ATTN_W
-kvo,--kv-offload|-nkvo,--no-kv-offload||||LLAMA_ARG_KV_OFFLOAD
--repack|-nr,--no-repack||||LLAMA_ARG_REPACK
--no-host|||||LLAMA_ARG_NO_HOST
-ctk,--cache-type-k||TYPE|||LLAMA_ARG_CACHE_TYPE_K
-ctv,--cache-type-v||TYPE|||LLAMA_ARG_CACHE_TYPE_V
--hellaswag|||PERPLEXITY||
--hellaswag-tasks||N|PERPLEXITY||
--winogrande|||PERPLEXITY||
--winogrande-tasks||N|PERPLEXITY||
--multiple-choice|||PERPLEXITY||
--multiple-choice-tasks||N|PERPLEXITY||
--kl-divergence|||PERPLEXITY||
--save-all-logits,--kl-divergence-base||FNAME|PERPLEXITY||
--ppl-stride||N|PERPLEXITY||
--ppl-output-type||<0|1>|PERPLEXITY||
-dt,--defrag-thold||N|||LLAMA_ARG_DEFRAG_THOLD
-np,--parallel||N|||LLAMA_ARG_N_PARALLEL
-ns,--sequences||N|PARALLEL||
-cb,--cont-batching|-nocb,--no-cont-batching||SERVER||LLAMA_ARG_CONT_BATCHING
-mm,--mmproj||FILE|MMPROJ||LLAMA_ARG_MMPROJ
-mmu,--mmproj-url||URL|MMPROJ||LLAMA_ARG_MMPROJ_URL
--mmproj-auto|--no-mmproj,--no-mmproj-auto||MMPROJ||LLAMA_ARG_MMPROJ_AUTO
--mmproj-offload|--no-mmproj-offload||MMPROJ||LLAMA_ARG_MMPROJ_OFFLOAD
--image,--audio||FILE|MTMD,CLI||
--image-min-tokens||N|MMPROJ||LLAMA_ARG_IMAGE_MIN_TOKENS
--image-max-tokens||N|MMPROJ||LLAMA_ARG_IMAGE_MAX_TOKENS
--rpc||SERVERS|||LLAMA_ARG_RPC
--mlock|||||LLAMA_ARG_MLOCK
--mmap|--no-mmap||||LLAMA_ARG_MMAP
--numa||TYPE|||LLAMA_ARG_NUMA
-dev,--device||<dev1,dev2,..>|||LLAMA_ARG_DEVICE
--list-devices||||
--override-tensor,-ot||<tensor name pattern>=<buffer type>,...|||
--override-tensor-draft,-otd||<tensor name pattern>=<buffer type>,...|SPECULATIVE,SERVER,CLI||
--cpu-moe,-cmoe|||||LLAMA_ARG_CPU_MOE
--n-cpu-moe,-ncmoe||N|||LLAMA_ARG_N_CPU_MOE
--cpu-moe-draft,-cmoed|||SPECULATIVE,SERVER,CLI||LLAMA_ARG_CPU_MOE_DRAFT
--n-cpu-moe-draft,-ncmoed||N|SPECULATIVE,SERVER,CLI||LLAMA_ARG_N_CPU_MOE_DRAFT
-ngl,--gpu-layers,--n-gpu-layers||N|||LLAMA_ARG_N_GPU_LAYERS
-sm,--split-mode||{none,layer,row}|||LLAMA_ARG_SPLIT_MODE
-ts,--tensor-split||N0,N1,N2,...|||LLAMA_ARG_TENSOR_SPLIT
-mg,--main-gpu||INDEX|||LLAMA_ARG_MAIN_GPU
-fit,--fit||[on|off]|||LLAMA_ARG_FIT
-fitt,--fit-target||MiB|||LLAMA_ARG_FIT_TARGET
-fitc,--fit-ctx||N|||LLAMA_ARG_FIT_CTX
--check-tensors||||
--override-kv||KEY=TYPE:VALUE|||
--op-offload|--no-op-offload||||
--lora||FNAME|COMMON,EXPORT_LORA||
--lora-scaled||FNAME SCALE|COMMON,EXPORT_LORA||
--control-vector||FNAME|||
--control-vector-scaled||FNAME SCALE|||
--control-vector-layer-range||START END|||
-a,--alias||STRING|SERVER||LLAMA_ARG_ALIAS
-m,--model||FNAME|COMMON,EXPORT_LORA||LLAMA_ARG_MODEL
-mu,--model-url||MODEL_URL|||LLAMA_ARG_MODEL_URL
-dr,--docker-repo||[<repo>/]<model>[:quant]|||LLAMA_ARG_DOCKER_REPO
-hf,-hfr,--hf-repo||<user>/<model>[:quant]|||LLAMA_ARG_HF_REPO
-hfd,-hfrd,--hf-repo-draft||<user>/<model>[:quant]|||LLAMA_ARG_HFD_REPO
-hff,--hf-file||FILE|||LLAMA_ARG_HF_FILE
-hfv,-hfrv,--hf-repo-v||<user>/<model>[:quant]|||LLAMA_ARG_HF_REPO_V
-hffv,--hf-file-v||FILE|||LLAMA_ARG_HF_FILE_V
-hft,--hf-token||TOKEN|||HF_TOKEN
--context-file||FNAME|RETRIEVAL||
--chunk-size||N|RETRIEVAL||
--chunk-separator||STRING|RETRIEVAL||
--junk||N|PASSKEY,PARALLEL||
--pos||N|PASSKEY||
-o,--output,--output-file||FNAME|IMATRIX,CVECTOR_GENERATOR,EXPORT_LORA,TTS,FINETUNE||
-ofreq,--output-frequency||N|IMATRIX||
--output-format||{gguf,dat}|IMATRIX||
--save-frequency||N|IMATRIX||
--process-output|||IMATRIX||
--ppl|--no-ppl||IMATRIX||
--chunk,--from-chunk||N|IMATRIX||
--show-statistics|||IMATRIX||
--parse-special|||IMATRIX||
-pps|||BENCH,PARALLEL||
-tgs|||BENCH,PARALLEL||
-npp||n0,n1,...|BENCH||
-ntg||n0,n1,...|BENCH||
-npl||n0,n1,...|BENCH||
--embd-normalize||N|EMBEDDING||
--embd-output-format||FORMAT|EMBEDDING||
--embd-separator||STRING|EMBEDDING||
--cls-separator||STRING|EMBEDDING||
--host||HOST|SERVER||LLAMA_ARG_HOST
--port||PORT|SERVER||LLAMA_ARG_PORT
--path||PATH|SERVER||LLAMA_ARG_STATIC_PATH
--api-prefix||PREFIX|SERVER||LLAMA_ARG_API_PREFIX
--webui|--no-webui||SERVER||LLAMA_ARG_WEBUI
--embedding,--embeddings|||SERVER||LLAMA_ARG_EMBEDDINGS
--reranking,--rerank|||SERVER||LLAMA_ARG_RERANKING
--api-key||KEY|SERVER||LLAMA_API_KEY
--api-key-file||FNAME|SERVER||
--ssl-key-file||FNAME|SERVER||LLAMA_ARG_SSL_KEY_FILE
--ssl-cert-file||FNAME|SERVER||LLAMA_ARG_SSL_CERT_FILE
--chat-template-kwargs||STRING|SERVER,CLI||LLAMA_CHAT_TEMPLATE_KWARGS
-to,--timeout||N|SERVER||LLAMA_ARG_TIMEOUT
--threads-http||N|SERVER||LLAMA_ARG_THREADS_HTTP
--cache-reuse||N|SERVER||LLAMA_ARG_CACHE_REUSE
--metrics|||SERVER||LLAMA_ARG_ENDPOINT_METRICS
--props|||SERVER||LLAMA_ARG_ENDPOINT_PROPS
--slots|--no-slots||SERVER||LLAMA_ARG_ENDPOINT_SLOTS
--slot-save-path||PATH|SERVER||
--media-path||PATH|SERVER||
--models-dir||PATH|SERVER||LLAMA_ARG_MODELS_DIR
--models-preset||PATH|SERVER||LLAMA_ARG_MODELS_PRESET
--models-max||N|SERVER||LLAMA_ARG_MODELS_MAX
--models-autoload|--no-models-autoload||SERVER||LLAMA_ARG_MODELS_AUTOLOAD
--jinja|--no-jinja||SERVER,COMPLETION,CLI,MTMD||LLAMA_ARG_JINJA
--reasoning-format||FORMAT|SERVER,COMPLETION,CLI||LLAMA_ARG_THINK
--reasoning-budget||N|SERVER,COMPLETION,CLI||LLAMA_ARG_THINK_BUDGET
--chat-template||JINJA_TEMPLATE|COMPLETION,CLI,SERVER,MTMD||LLAMA_ARG_CHAT_TEMPLATE
--chat-template-file||JINJA_TEMPLATE_FILE|COMPLETION,CLI,SERVER||LLAMA_ARG_CHAT_TEMPLATE_FILE
--prefill-assistant|--no-prefill-assistant||SERVER||LLAMA_ARG_PREFILL_ASSISTANT
-sps,--slot-prompt-similarity||SIMILARITY|SERVER||
--lora-init-without-apply|||SERVER||
--simple-io|||COMPLETION,CLI||
--positive-file||FNAME|CVECTOR_GENERATOR||
--negative-file||FNAME|CVECTOR_GENERATOR||
--pca-batch||N|CVECTOR_GENERATOR||
--pca-iter||N|CVECTOR_GENERATOR||
--method||{pca, mean}|CVECTOR_GENERATOR||
--output-format||{md,jsonl}|BENCH||
--log-disable||||
--log-file||FNAME|||LLAMA_LOG_FILE
--log-colors||[on|off|auto]|||LLAMA_LOG_COLORS
-v,--verbose,--log-verbose||||
--offline|||||LLAMA_OFFLINE
-lv,--verbosity,--log-verbosity||N|||LLAMA_LOG_VERBOSITY
--log-prefix|||||LLAMA_LOG_PREFIX
--log-timestamps|||||LLAMA_LOG_TIMESTAMPS
-td,--threads-draft||N|SPECULATIVE,SERVER||
-tbd,--threads-batch-draft||N|SPECULATIVE,SERVER||
-Cd,--cpu-mask-draft||M|SPECULATIVE||
-Crd,--cpu-range-draft||lo-hi|SPECULATIVE||
--cpu-strict-draft||<0|1>|SPECULATIVE||
--prio-draft||N|SPECULATIVE||
--poll-draft||<0|1>|SPECULATIVE||
-Cbd,--cpu-mask-batch-draft||M|SPECULATIVE||
-Crbd,--cpu-range-batch-draft||lo-hi|SPECULATIVE||
--cpu-strict-batch-draft||<0|1>|SPECULATIVE||
--prio-batch-draft||N|SPECULATIVE||
--poll-batch-draft||<0|1>|SPECULATIVE||
--draft-max,--draft,--draft-n||N|SPECULATIVE,LOOKUP,SERVER,CLI||LLAMA_ARG_DRAFT_MAX
--draft-min,--draft-n-min||N|SPECULATIVE,LOOKUP,SERVER,CLI||LLAMA_ARG_DRAFT_MIN
--draft-p-split||P|SPECULATIVE||LLAMA_ARG_DRAFT_P_SPLIT
--draft-p-min||P|SPECULATIVE,SERVER,CLI||LLAMA_ARG_DRAFT_P_MIN
-cd,--ctx-size-draft||N|SPECULATIVE,SERVER,CLI||LLAMA_ARG_CTX_SIZE_DRAFT
-devd,--device-draft||<dev1,dev2,..>|SPECULATIVE,SERVER,CLI||
-ngld,--gpu-layers-draft,--n-gpu-layers-draft||N|SPECULATIVE,SERVER,CLI||LLAMA_ARG_N_GPU_LAYERS_DRAFT
-md,--model-draft||FNAME|SPECULATIVE,SERVER,CLI||LLAMA_ARG_MODEL_DRAFT
--spec-replace||TARGET DRAFT|SPECULATIVE,SERVER,CLI||
-ctkd,--cache-type-k-draft||TYPE|||LLAMA_ARG_CACHE_TYPE_K_DRAFT
-ctvd,--cache-type-v-draft||TYPE|||LLAMA_ARG_CACHE_TYPE_V_DRAFT
-mv,--model-vocoder||FNAME|TTS,SERVER||
--tts-use-guide-tokens|||TTS,SERVER||
--tts-speaker-file||FNAME|TTS||
--diffusion-steps||N|DIFFUSION||
--diffusion-visual|||DIFFUSION||
--diffusion-eps||F|DIFFUSION||
--diffusion-algorithm||N|DIFFUSION||
--diffusion-alg-temp||F|DIFFUSION||
--diffusion-block-length||N|DIFFUSION||
--diffusion-cfg-scale||F|DIFFUSION||
--diffusion-add-gumbel-noise||F|DIFFUSION||
-lr,--learning-rate||ALPHA|FINETUNE||
-lr-min,--learning-rate-min||ALPHA|FINETUNE||
-decay-epochs,--learning-rate-decay-epochs||ALPHA|FINETUNE||
-wd,--weight-decay||WD|FINETUNE||
-val-split,--val-split||FRACTION|FINETUNE||
-epochs,--epochs||N|FINETUNE||
-opt,--optimizer||sgd|adamw|FINETUNE||
--tts-oute-default|||TTS||
--embd-gemma-default|||EMBEDDING,SERVER||
--fim-qwen-1.5b-default|||SERVER||
--fim-qwen-3b-default|||SERVER||
--fim-qwen-7b-default|||SERVER||
--fim-qwen-7b-spec|||SERVER||
--fim-qwen-14b-spec|||SERVER||
--fim-qwen-30b-default|||SERVER||
--gpt-oss-20b-default|||SERVER,CLI||
--gpt-oss-120b-default|||SERVER,CLI||
--vision-gemma-4b-default|||SERVER,CLI||
--vision-gemma-12b-default|||SERVER,CLI||
"""

CHOICES = {
    "--flash-attn": ON_OFF_AUTO, "--color": ON_OFF_AUTO, "--log-colors": ON_OFF_AUTO,
    "--fit": ["on", "off"],
    "--cache-type-k": KV_TYPES, "--cache-type-v": KV_TYPES,
    "--cache-type-k-draft": KV_TYPES, "--cache-type-v-draft": KV_TYPES,
    "--split-mode": ["none", "layer", "row"], "--pooling": ["none", "mean", "cls", "last", "rank"],
    "--attention": ["causal", "non-causal"], "--rope-scaling": ["none", "linear", "yarn"],
    "--numa": ["distribute", "isolate", "numactl"], "--method": ["pca", "mean"],
    "--optimizer": ["sgd", "adamw"], "--reasoning-budget": ["-1", "0"],
    "--cpu-strict": ["0", "1"], "--ppl-output-type": ["0", "1"],
}


def split_row(line):
    # the value hint itself may contain '|' ("<0|1>", "[on|off|auto]", "sgd|adamw"): rebuild it
    parts = line.split("|")
    args, neg = parts[0], parts[1]
    env = parts[-1]
    excl = parts[-2]
    examples = parts[-3]
    hint = "|".join(parts[2:-3])
    return args, neg, hint, examples, excl, env


def main():
    flags = {}
    for line in ROWS.strip().splitlines():
        args, neg, hint, examples, excl, env = split_row(line)
        args = args.split(",")
        neg = [n for n in neg.split(",") if n]
        examples = (examples.replace("MMPROJ", MMPROJ) or "COMMON").split(",")
        excl = [e for e in excl.split(",") if e]
        longs = [a for a in args if a.startswith("--")]
        canon = longs[0] if longs else args[0]
        n_values = 0 if not hint else (2 if hint in ("FNAME SCALE", "START END", "TARGET DRAFT") else 1)

        def offered(ex):
            return ("COMMON" in examples or ex in examples) and ex not in excl

        extra = {
            "examples": sorted(examples),
            "llama-server": offered("SERVER"),
            "llama-cli": offered("CLI"),
            "llama-completion": offered("COMPLETION"),
        }
        if excl:
            extra["excludes"] = excl
        if hint:
            extra["value_hint"] = hint
        if n_values == 2:
            extra["n_values"] = 2
        if env:
            extra["env"] = env
        d = flag([a for a in args if a != canon] + neg, n_values > 0, CHOICES.get(canon), **extra)
        if neg:
            d["negative_forms"] = neg
        if canon in flags:  # --output-format is defined twice (imatrix {gguf,dat} and batched-bench {md,jsonl})
            prev = flags[canon]
            prev.setdefault("variants", [dict(prev)]).append(d)
            prev["examples"] = sorted(set(prev["examples"]) | set(d["examples"]))
            for k in ("llama-server", "llama-cli", "llama-completion"):
                prev[k] = prev[k] or d[k]
            prev["choices"] = None
            continue
        flags[canon] = d
    assert flags["--flash-attn"]["takes_value"] and flags["--flash-attn"]["llama-server"]
    notes = (
        "Snapshot of common/arg.cpp from the source index (commit 145b6280d6aa1890e22457143dad0badb3fd6820 as "
        "recorded there); the build tag (bNNNN) could not be determined without the git history. Features date "
        "it to ~Dec 2025 (new llama-cli = LLAMA_EXAMPLE_CLI, llama-completion = the old CLI, router server "
        "--models-dir/--models-preset, -fit). "
        "-fa/--flash-attn TAKES A VALUE: on|off|auto (also enabled/true/1, disabled/false/0, -1; default auto) "
        "since b6325-ish (Aug 2025, PR #15434); before that -fa was a bare switch and `-fa on` fails. "
        "-ctk/-ctv allowed values: " + ", ".join(KV_TYPES) + " (a quantized V cache needs flash attention). "
        "For any arg starting with '--', '_' is replaced by '-' before lookup. Negative forms (--no-mmap, "
        "-nkvo, --no-warmup, ...) take no value. Options marked llama-server:false are rejected by llama-server "
        "('invalid argument'), e.g. -p/--prompt and -f/--file are excluded from the server, -sys/--system-prompt, "
        "-cnv and -i are not server options. llama-server does not require -m (router mode) but llama-cli does. "
        "--rpc exists only in builds with the RPC backend. Every option may also be set through its env var "
        "(flags.<f>.env; for boolean pairs LLAMA_ARG_NO_<X> too)."
    )
    write("llama_cpp", "unknown build (index snapshot, ~Dec 2025)", "145b6280d6aa1890e22457143dad0badb3fd6820",
          "https://github.com/ggml-org/llama.cpp", ["common/arg.cpp"], ["llama-server", "llama-cli", "llama-completion"],
          flags, {}, notes, kv_cache_types=KV_TYPES)


if __name__ == "__main__":
    main()
