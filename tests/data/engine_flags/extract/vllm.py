"""`vllm serve` flags, vLLM v0.30.0.

No git snapshot of vllm-project/vllm could be fetched (over the size limit), so the table below was
transcribed by hand from the argparse-generated reference page of the release
(https://docs.vllm.ai/en/stable/configuration/engine_args/ as stored by the search index; its version
selector lists v0.30.0 as the newest release, i.e. stable == v0.30.0). That page is rendered by vLLM's
mkdocs hook from EngineArgs.add_cli_args / AsyncEngineArgs.add_cli_args, so every `#### --flag, alias`
heading is an argparse option of that release and "Possible choices" its choices/metavar list.

Frontend (vllm/entrypoints/openai/cli_args.py FrontendArgs + make_arg_parser) options are NOT on that page;
they come from the stored `vllm serve` CLI reference of a slightly earlier 0.2x release (a translated copy of
docs/cli/serve.md) and were cross-checked against a stored cli_args.py (commit 789340fb, ~v0.11): see
`source` on each frontend entry.

Row format:  options | kind | choices | group
kind: V = takes a value, N = nargs '+' list, B = store_true (no value), BO = BooleanOptionalAction
(no value; the --no-X form is listed among the options), O = optional value.
"""
from common import flag, write

ENGINE = r"""
--disable-log-stats|B||EngineArgs
--aggregate-engine-logging|B||EngineArgs
--fail-on-environ-validation,--no-fail-on-environ-validation|BO||EngineArgs
--shutdown-timeout|V||EngineArgs
--gdn-prefill-backend|V|flashinfer,triton,cutedsl|EngineArgs
--kda-prefill-backend|V|auto,triton,flashkda,flashinfer,fused|EngineArgs
--kda-decode-backend|V|auto,native,flashinfer,triton|EngineArgs
--model|V||ModelConfig
--runner|V|auto,draft,generate,pooling|ModelConfig
--convert|V|auto,classify,embed,none|ModelConfig
--tokenizer|V||ModelConfig
--tokenizer-mode|V|auto,cohere,deepseek_v32,deepseek_v4,hf,inkling,kimi_k3,mistral,slow|ModelConfig
--trust-remote-code,--no-trust-remote-code|BO||ModelConfig
--dtype|V|auto,bfloat16,float,float16,float32,half|ModelConfig
--seed|V||ModelConfig
--hf-config-path|V||ModelConfig
--allowed-local-media-path|V||ModelConfig
--allowed-media-domains|N||ModelConfig
--revision|V||ModelConfig
--code-revision|V||ModelConfig
--tokenizer-revision|V||ModelConfig
--max-model-len|V||ModelConfig
--quantization,-q|V||ModelConfig
--quantization-config|V||ModelConfig
--allow-deprecated-quantization,--no-allow-deprecated-quantization|BO||ModelConfig
--enforce-eager,--no-enforce-eager|BO||ModelConfig
--enable-return-routed-experts,--no-enable-return-routed-experts|BO||ModelConfig
--return-sampling-mask,--no-return-sampling-mask|BO||ModelConfig
--max-logprobs|V||ModelConfig
--logprobs-mode|V|processed_logits,processed_logprobs,raw_logits,raw_logprobs|ModelConfig
--use-fp64-gumbel,--no-use-fp64-gumbel|BO||ModelConfig
--enable-trace-replay,--no-enable-trace-replay|BO||ModelConfig
--disable-sliding-window,--no-disable-sliding-window|BO||ModelConfig
--disable-cascade-attn,--no-disable-cascade-attn|BO||ModelConfig
--skip-tokenizer-init,--no-skip-tokenizer-init|BO||ModelConfig
--enable-prompt-embeds,--no-enable-prompt-embeds|BO||ModelConfig
--served-model-name|N||ModelConfig
--config-format|V|auto,hf,mistral|ModelConfig
--hf-token|O||ModelConfig
--hf-overrides|V||ModelConfig
--model-class-overrides|V||ModelConfig
--pooler-config|V||ModelConfig
--generation-config|V||ModelConfig
--override-generation-config|V||ModelConfig
--enable-sleep-mode,--no-enable-sleep-mode|BO||ModelConfig
--enable-cumem-allocator,--no-enable-cumem-allocator|BO||ModelConfig
--enable-nccl-comm-suspend,--no-enable-nccl-comm-suspend|BO||ModelConfig
--model-impl|V|auto,terratorch,transformers,vllm|ModelConfig
--logits-processors|N||ModelConfig
--io-processor-plugin|V||ModelConfig
--renderer-num-workers|V||ModelConfig
--load-format|V||LoadConfig
--download-dir|V||LoadConfig
--safetensors-load-strategy|V|eager,lazy,prefetch,torchao,None|LoadConfig
--safetensors-prefetch-num-threads|V||LoadConfig
--safetensors-prefetch-block-size|V||LoadConfig
--model-loader-extra-config|V||LoadConfig
--ignore-patterns|N||LoadConfig
--use-tqdm-on-load,--no-use-tqdm-on-load|BO||LoadConfig
--pt-load-map-location|V||LoadConfig
--attention-backend|V||AttentionConfig
--mamba-backend|V||MambaConfig
--mamba-ssu-algorithm|V|auto,horizontal,simple,vertical,None|MambaConfig
--enable-mamba-cache-stochastic-rounding,--no-enable-mamba-cache-stochastic-rounding|BO||MambaConfig
--mamba-cache-philox-rounds|V||MambaConfig
--reasoning-parser|V||StructuredOutputsConfig
--reasoning-parser-plugin|V||StructuredOutputsConfig
--distributed-executor-backend|V|external_launcher,mp,ray,uni|ParallelConfig
--pipeline-parallel-size,-pp|V||ParallelConfig
--master-addr|V||ParallelConfig
--master-port|V||ParallelConfig
--nnodes,-n|V||ParallelConfig
--node-rank,-r|V||ParallelConfig
--distributed-timeout-seconds|V||ParallelConfig
--cpu-distributed-timeout-seconds|V||ParallelConfig
--numa-bind,--no-numa-bind|BO||ParallelConfig
--numa-bind-nodes|N||ParallelConfig
--numa-bind-cpus|N||ParallelConfig
--device-ids|V||ParallelConfig
--tensor-parallel-size,-tp|V||ParallelConfig
--decode-context-parallel-size,-dcp|V||ParallelConfig
--dcp-comm-backend|V|a2a,ag_rs,None|ParallelConfig
--dcp-q-replicate,--no-dcp-q-replicate|BO||ParallelConfig
--dcp-kv-cache-interleave-size|V||ParallelConfig
--cp-kv-cache-interleave-size|V||ParallelConfig
--prefill-context-parallel-size,-pcp|V||ParallelConfig
--data-parallel-size,-dp|V||ParallelConfig
--data-parallel-rank,-dpn|V||ParallelConfig
--data-parallel-start-rank,-dpr|V||ParallelConfig
--data-parallel-size-local,-dpl|V||ParallelConfig
--data-parallel-address,-dpa|V||ParallelConfig
--data-parallel-rpc-port,-dpp|V||ParallelConfig
--data-parallel-backend,-dpb|V||ParallelConfig
--data-parallel-hybrid-lb,--no-data-parallel-hybrid-lb,-dph|BO||ParallelConfig
--data-parallel-external-lb,--no-data-parallel-external-lb,-dpe|BO||ParallelConfig
--data-parallel-multi-port-external-lb,-dpm|B||ParallelConfig
--enable-expert-parallel,--no-enable-expert-parallel,-ep|BO||ParallelConfig
--enable-batch-sharded-sampling,--no-enable-batch-sharded-sampling|BO||ParallelConfig
--enable-ep-weight-filter,--no-enable-ep-weight-filter|BO||ParallelConfig
--all2all-backend|V|allgather_reducescatter,deepep_high_throughput,deepep_low_latency,deepep_v2,flashinfer_all2allv,flashinfer_nvlink_one_sided,flashinfer_nvlink_two_sided,mori_high_throughput,mori_low_latency,naive,nixl_ep,pplx|ParallelConfig
--enable-dbo,--no-enable-dbo|BO||ParallelConfig
--ubatch-size|V||ParallelConfig
--enable-elastic-ep,--no-enable-elastic-ep|BO||ParallelConfig
--elastic-ep-max-dp-size|V||ParallelConfig
--dbo-decode-token-threshold|V||ParallelConfig
--dp-sync-interval|V||ParallelConfig
--dbo-prefill-token-threshold|V||ParallelConfig
--disable-nccl-for-dp-synchronization,--no-disable-nccl-for-dp-synchronization|BO||ParallelConfig
--enable-eplb,--no-enable-eplb|BO||ParallelConfig
--eplb-config|V||ParallelConfig
--expert-placement-strategy|V|linear,round_robin|ParallelConfig
--max-parallel-loading-workers|V||ParallelConfig
--ray-workers-use-nsight,--no-ray-workers-use-nsight|BO||ParallelConfig
--disable-custom-all-reduce,--no-disable-custom-all-reduce|BO||ParallelConfig
--worker-cls|V||ParallelConfig
--worker-extension-cls|V||ParallelConfig
--enable-fault-tolerance,--no-enable-fault-tolerance|BO||ParallelConfig
--fault-tolerance-config|V||ParallelConfig
--block-size|V||CacheConfig
--gpu-memory-utilization|V||CacheConfig
--kv-cache-memory-bytes|V||CacheConfig
--kv-cache-dtype|V|auto,bfloat16,float16,fp8,fp8_ds_mla,fp8_e4m3,fp8_e5m2,fp8_inc,fp8_per_token_head,int4_per_token_head,int8_per_token_head,nvfp4,nvfp4_4over6,nvfp4_ds_mla,turboquant_3bit_nc,turboquant_4bit_nc,turboquant_k3v4_nc,turboquant_k8v4|CacheConfig
--num-gpu-blocks-override|V||CacheConfig
--enable-prefix-caching,--no-enable-prefix-caching|BO||CacheConfig
--prefix-caching-hash-algo|V|sha256,sha256_cbor,xxhash,xxhash_cbor|CacheConfig
--prefix-cache-retention-interval|V||CacheConfig
--kv-cache-dtype-skip-layers|N||CacheConfig
--kv-sharing-fast-prefill,--no-kv-sharing-fast-prefill|BO||CacheConfig
--mamba-cache-dtype|V|auto,bfloat16,float16,float32|CacheConfig
--mamba-ssm-cache-dtype|V|auto,bfloat16,float16,float32|CacheConfig
--mamba-block-size|V||CacheConfig
--prefix-match-unit|V||CacheConfig
--mamba-cache-mode|V|align,all,none|CacheConfig
--enable-mamba-fine-grained-prefix-cache,--no-enable-mamba-fine-grained-prefix-cache|BO||CacheConfig
--replayssm-buffer-len|V||CacheConfig
--use-replayssm,--no-use-replayssm|BO||CacheConfig
--kv-offloading-size|V||CacheConfig
--kv-offloading-backend|V|lmcache,native|CacheConfig
--offload-backend|V|auto,prefetch,uva|OffloadConfig
--cpu-offload-gb|V||OffloadConfig
--cpu-offload-params|N||OffloadConfig
--offload-group-size|V||OffloadConfig
--offload-num-in-group|V||OffloadConfig
--offload-prefetch-step|V||OffloadConfig
--offload-params|N||OffloadConfig
--language-model-only,--no-language-model-only|BO||MultiModalConfig
--limit-mm-per-prompt|V||MultiModalConfig
--enable-mm-embeds,--no-enable-mm-embeds|BO||MultiModalConfig
--media-io-kwargs|V||MultiModalConfig
--mm-processor-kwargs|V||MultiModalConfig
--mm-processor-cache-gb|V||MultiModalConfig
--mm-processor-cache-type|V|lru,shm|MultiModalConfig
--mm-hasher-algorithm|V|blake3,sha256,sha512|MultiModalConfig
--mm-shm-cache-max-object-size-mb|V||MultiModalConfig
--mm-encoder-only,--no-mm-encoder-only|BO||MultiModalConfig
--mm-encoder-tp-mode|V|data,weights|MultiModalConfig
--mm-encoder-attn-backend|V||MultiModalConfig
--mm-encoder-attn-dtype|V|fp8,None|MultiModalConfig
--mm-encoder-fp8-scale-path|V||MultiModalConfig
--mm-encoder-fp8-scale-save-path|V||MultiModalConfig
--mm-encoder-fp8-scale-save-margin|V||MultiModalConfig
--interleave-mm-strings,--no-interleave-mm-strings|BO||MultiModalConfig
--skip-mm-profiling,--no-skip-mm-profiling|BO||MultiModalConfig
--video-pruning-rate|V||MultiModalConfig
--video-pruning-method|V|evs,vidcom2|MultiModalConfig
--mm-tensor-ipc|V|direct_rpc,torch_shm|MultiModalConfig
--mm-processor-device|V|auto,cpu|MultiModalConfig
--mm-ipc-gpu-memory-gb|V||MultiModalConfig
--mm-device-do-normalize,--no-mm-device-do-normalize|BO||MultiModalConfig
--enable-lora,--no-enable-lora|BO||LoRAConfig
--max-loras|V||LoRAConfig
--max-lora-rank|V|1,8,16,32,64,128,256,320,512|LoRAConfig
--lora-dtype|V||LoRAConfig
--enable-tower-connector-lora,--no-enable-tower-connector-lora|BO||LoRAConfig
--max-cpu-loras|V||LoRAConfig
--fully-sharded-loras,--no-fully-sharded-loras|BO||LoRAConfig
--lora-target-modules|N||LoRAConfig
--default-mm-loras|V||LoRAConfig
--specialize-active-lora,--no-specialize-active-lora|BO||LoRAConfig
--enable-mixed-moe-lora-format,--no-enable-mixed-moe-lora-format|BO||LoRAConfig
--enable-moe-shared-loras,--no-enable-moe-shared-loras|BO||LoRAConfig
--show-hidden-metrics-for-version|V||ObservabilityConfig
--otlp-traces-endpoint|V||ObservabilityConfig
--collect-detailed-traces|V|all;model;worker;None;model,worker;model,all;worker,model;worker,all;all,model;all,worker|ObservabilityConfig
--per-request-spec-decode-metrics|V|detailed,none,summary|ObservabilityConfig
--kv-cache-metrics,--no-kv-cache-metrics|BO||ObservabilityConfig
--kv-cache-metrics-sample|V||ObservabilityConfig
--cudagraph-metrics,--no-cudagraph-metrics|BO||ObservabilityConfig
--enable-layerwise-nvtx-tracing,--no-enable-layerwise-nvtx-tracing|BO||ObservabilityConfig
--enable-mfu-metrics,--no-enable-mfu-metrics|BO||ObservabilityConfig
--enable-logging-iteration-details,--no-enable-logging-iteration-details|BO||ObservabilityConfig
--jit-monitor-mode|V|error,warn|ObservabilityConfig
--jit-monitor-verbose,--no-jit-monitor-verbose|BO||ObservabilityConfig
--max-num-batched-tokens|V||SchedulerConfig
--max-num-scheduled-tokens|V||SchedulerConfig
--max-num-seqs|V||SchedulerConfig
--max-num-queued-reqs|V||SchedulerConfig
--max-num-queued-tokens|V||SchedulerConfig
--long-prefill-token-threshold|V||SchedulerConfig
--scheduling-policy|V|fcfs,priority|SchedulerConfig
--enable-chunked-prefill,--no-enable-chunked-prefill|BO||SchedulerConfig
--disable-chunked-mm-input,--no-disable-chunked-mm-input|BO||SchedulerConfig
--scheduler-cls|V||SchedulerConfig
--scheduler-reserve-full-isl,--no-scheduler-reserve-full-isl|BO||SchedulerConfig
--watermark|V||SchedulerConfig
--prefill-schedule-interval|V||SchedulerConfig
--disable-hybrid-kv-cache-manager,--no-disable-hybrid-kv-cache-manager|BO||SchedulerConfig
--async-scheduling,--no-async-scheduling|BO||SchedulerConfig
--stream-interval|V||SchedulerConfig
--cudagraph-capture-sizes|N||CompilationConfig
--max-cudagraph-capture-size|V||CompilationConfig
--ir-op-priority|V||KernelConfig
--enable-flashinfer-autotune,--no-enable-flashinfer-autotune|BO||KernelConfig
--moe-backend|V|aiter,aiter_triton_mxfp4_bf16,auto,b12x,batched_triton,cutlass,deep_gemm,deep_gemm_mega_moe,emulation,flashinfer_b12x,flashinfer_cutedsl,flashinfer_cutlass,flashinfer_moe_ep_mega_cutedsl,flashinfer_moe_ep_mega_deep_gemm,flashinfer_trtllm,flydsl,hpc,humming,marlin,rdna3,triton,triton_unfused|KernelConfig
--linear-backend|V|aiter,auto,b12x,conch,cutlass,deep_gemm,emulation,exllama,fbgemm,flashinfer_b12x,flashinfer_cudnn,flashinfer_cutedsl,flashinfer_cutlass,flashinfer_trtllm,humming,machete,marlin,torch,triton,xpu,xpu_woq|KernelConfig
--sparse-indexer-topk-backend|V|auto,cooperative,deep_select,flashinfer,per_row,persistent,torch|KernelConfig
--speculative-config,-sc|V||VllmConfig
--spec-method|V|bailing_hybrid_mtp,bailing_hybrid_v3_mtp,custom_class,deepseek_mtp,dflash,dots3_note_mtp,draft_model,dspark,eagle,eagle3,ernie_mtp,exaone4_5_mtp,exaone_moe_mtp,extract_hidden_states,gemma4_mtp,glm4_moe_lite_mtp,glm4_moe_mtp,glm5_next_mtp,glm_ocr_mtp,hy_v3_mtp,hy_v4_mtp,inkling_mtp,kimi_k3_mtp,longcat_flash_mtp,medusa,mimo_mtp,mimo_v2_mtp,minimax_m3_mtp,mlp_speculator,mtp,nemotron_h_mtp,ngram,ngram_gpu,pangu_ultra_moe_mtp,qwen3_5_mtp,qwen3_next_mtp,qwen4_exp_mtp,step3p5_mtp,suffix,None|VllmConfig
--spec-model|V||VllmConfig
--spec-tokens|V||VllmConfig
--watermark-config|V||VllmConfig
--diffusion-config,-dc|V||VllmConfig
--kv-transfer-config|V||VllmConfig
--kv-events-config|V||VllmConfig
--ec-transfer-config|V||VllmConfig
--ec-manager-config|V||VllmConfig
--compilation-config,-cc|V||VllmConfig
--attention-config,-ac|V||VllmConfig
--engram-config|V||VllmConfig
--reasoning-config|V||VllmConfig
--kernel-config|V||VllmConfig
--additional-config|V||VllmConfig
--structured-outputs-config|V||VllmConfig
--profiler-config|V||VllmConfig
--optimization-level|V||VllmConfig
--performance-mode|V|balanced,interactivity,throughput|VllmConfig
--weight-transfer-config|V||VllmConfig
--enable-log-requests,--no-enable-log-requests|BO||AsyncEngineArgs
"""

# `vllm serve` entry options + FrontendArgs. "both" = in the stored ~v0.11 cli_args.py AND in the
# stored serve reference of a later 0.2x release; "0.2x" = only in the latter.
FRONTEND = r"""
--headless|B||serve|both
--api-server-count,-asc|V||serve|both
--config|V||serve|both
--grpc|B||serve|0.2x
--lora-modules|N||Frontend|both
--chat-template|V||Frontend|both
--chat-template-content-format|V|auto,openai,string|Frontend|both
--trust-request-chat-template,--no-trust-request-chat-template|BO||Frontend|both
--default-chat-template-kwargs|V||Frontend|0.2x
--response-role|V||Frontend|both
--return-tokens-as-token-ids,--no-return-tokens-as-token-ids|BO||Frontend|both
--enable-auto-tool-choice,--no-enable-auto-tool-choice|BO||Frontend|both
--exclude-tools-when-tool-choice-none,--no-exclude-tools-when-tool-choice-none|BO||Frontend|both
--tool-call-parser|V||Frontend|both
--tool-parser-plugin|V||Frontend|both
--tool-server|V||Frontend|both
--log-config-file|V||Frontend|both
--max-log-len|V||Frontend|both
--enable-prompt-tokens-details,--no-enable-prompt-tokens-details|BO||Frontend|both
--enable-server-load-tracking,--no-enable-server-load-tracking|BO||Frontend|both
--enable-force-include-usage,--no-enable-force-include-usage|BO||Frontend|both
--enable-tokenizer-info-endpoint,--no-enable-tokenizer-info-endpoint|BO||Frontend|both
--enable-log-outputs,--no-enable-log-outputs|BO||Frontend|both
--enable-log-deltas,--no-enable-log-deltas|BO||Frontend|0.2x
--log-error-stack,--no-log-error-stack|BO||Frontend|both
--tokens-only,--no-tokens-only|BO||Frontend|both
--fingerprint-mode|V|custom,full,hash,none|Frontend|0.2x
--fingerprint-value|V||Frontend|0.2x
--host|V||Frontend|both
--port|V||Frontend|both
--data-parallel-supervisor-port|V||Frontend|0.2x
--dp-supervisor-probe-interval-s|V||Frontend|0.2x
--dp-supervisor-probe-timeout-s|V||Frontend|0.2x
--dp-supervisor-probe-failure-threshold|V||Frontend|0.2x
--uds|V||Frontend|both
--uvicorn-log-level|V|critical,debug,error,info,trace,warning|Frontend|both
--disable-uvicorn-access-log,--no-disable-uvicorn-access-log|BO||Frontend|both
--disable-access-log-for-endpoints|V||Frontend|0.2x
--allow-credentials,--no-allow-credentials|BO||Frontend|both
--allowed-origins|V||Frontend|both
--allowed-methods|V||Frontend|both
--allowed-headers|V||Frontend|both
--api-key|N||Frontend|both
--ssl-keyfile|V||Frontend|both
--ssl-certfile|V||Frontend|both
--ssl-ca-certs|V||Frontend|both
--enable-ssl-refresh,--no-enable-ssl-refresh|BO||Frontend|both
--ssl-cert-reqs|V||Frontend|both
--ssl-ciphers|V||Frontend|0.2x
--root-path|V||Frontend|both
--middleware|V||Frontend|both
--enable-request-id-headers,--no-enable-request-id-headers|BO||Frontend|both
--disable-fastapi-docs,--no-disable-fastapi-docs|BO||Frontend|both
--h11-max-incomplete-event-size|V||Frontend|both
--h11-max-header-count|V||Frontend|both
--enable-offline-docs,--no-enable-offline-docs|BO||Frontend|0.2x
--enable-flash-late-interaction,--no-enable-flash-late-interaction|BO||Frontend|0.2x
"""

# vllm/model_executor/layers/quantization/__init__.py QuantizationMethods, stored version commit
# 05d909563e1d1ada39a13b67e7b9a4cbca1d6a8e (OLDER than v0.30.0; --quantization has no argparse choices).
QUANTIZATION_METHODS = ["awq", "fp8", "ptpc_fp8", "fbgemm_fp8", "fp_quant", "modelopt", "modelopt_fp4", "bitblas",
                        "gguf", "gptq_marlin_24", "gptq_marlin", "gptq_bitblas", "awq_marlin", "gptq",
                        "compressed-tensors", "bitsandbytes", "experts_int8", "ipex", "quark", "moe_wna16",
                        "torchao", "inc", "mxfp4", "mxfp8", "petit_nvfp4", "cpu_awq"]
DEPRECATED_QUANTIZATION = ["tpu_int8", "ptpc_fp8", "fbgemm_fp8", "fp_quant", "bitblas", "gptq_marlin_24",
                           "gptq_bitblas", "experts_int8", "ipex", "petit_nvfp4"]


def parse(block, with_source):
    flags = {}
    for line in block.strip().splitlines():
        parts = line.split("|")
        opts, kind, choices, group = parts[:4]
        opts = opts.split(",")
        canon, aliases = opts[0], opts[1:]
        if "," in choices and ";" not in choices:
            choices = choices.split(",")
        elif choices:
            choices = choices.split(";")
        else:
            choices = None
        extra = {"group": group}
        if kind == "N":
            extra["nargs"] = "+"
        if kind == "O":
            extra["value_optional"] = True
        if kind == "BO":
            extra["boolean_optional"] = True
        if with_source:
            extra["source"] = ("cli_args.py ~v0.11 + serve reference 0.2x" if parts[4] == "both"
                               else "serve reference 0.2x only")
        flags[canon] = flag(aliases, kind in ("V", "N"), choices, **extra)
    return flags


def main():
    flags = parse(ENGINE, False)
    for k, v in parse(FRONTEND, True).items():
        assert k not in flags, k
        flags[k] = v
    flags["--quantization"]["validated_values"] = QUANTIZATION_METHODS
    flags["--quantization"]["deprecated_values"] = DEPRECATED_QUANTIZATION
    assert "--moe-backend" in flags and "--enforce-eager" in flags
    notes = (
        "Release v0.30.0 (newest release in the stored page's version selector, i.e. stable == v0.30.0); "
        "commit unknown: the vLLM git snapshot could not be fetched. "
        "--moe-backend EXISTS at v0.30.0, spelled `--moe-backend`: it is KernelConfig.moe_backend exposed as a top-level "
        "EngineArgs field (the KernelConfig section of the page), default auto, choices in flags['--moe-backend']; "
        "it can also be given as --kernel-config '{\"moe_backend\": \"triton\"}' or --kernel-config.moe_backend triton. "
        "A KernelConfig validator (seen in the v0.18.0 source) lower-cases the value and maps '-' to '_'. "
        "History: absent from a stored ~v0.11 arg_utils.py (KernelConfig then only had enable_flashinfer_autotune); "
        "present in the v0.18.0 docs. "
        "Booleans: BooleanOptionalAction flags also accept --no-<flag> (listed as aliases, boolean_optional=true); "
        "--disable-log-stats, --aggregate-engine-logging, --headless, --grpc and -dpm are plain store_true. "
        "vLLM's FlexibleArgumentParser also accepts underscores (--max_model_len) and `--flag=value`; JSON-typed "
        "options accept dotted sub-keys (--compilation-config.mode 3, -cc.mode=3). "
        "--max-model-len / --max-num-batched-tokens / --kv-cache-memory-bytes accept human-readable ints "
        "(32k, 1M; max-model-len also -1/auto). "
        "--quantization/-q has no argparse choices at v0.30.0 (type is str); the engine validates against "
        "QUANTIZATION_METHODS: validated_values lists them from an OLDER stored source (commit 05d90956), "
        "fp8/awq/gptq/bitsandbytes/gguf/compressed-tensors/awq_marlin/gptq_marlin/modelopt/mxfp4 are long-standing; "
        "deprecated_values need --allow-deprecated-quantization. "
        "Choice lists for fields typed Literal|str (e.g. --tokenizer-mode, --mamba-backend none) are what argparse "
        "shows; values registered by plugins are also accepted there. "
        "--gpu-memory-utilization default is 0.92 at v0.30.0 (was 0.9). "
        "Frontend flags (group Frontend/serve) are from a ~0.2x serve reference and a ~v0.11 cli_args.py, "
        "not from v0.30.0 itself: `source` says which; --disable-frontend-multiprocessing (v0.11) is gone in 0.2x."
    )
    write("vllm", "v0.30.0", None, "https://github.com/vllm-project/vllm",
          ["https://docs.vllm.ai/en/stable/configuration/engine_args/ (== v0.30.0, generated from "
           "vllm/engine/arg_utils.py EngineArgs/AsyncEngineArgs.add_cli_args)",
           "docs/cli/serve.md of a 0.2x release (translated copy) for FrontendArgs",
           "vllm/entrypoints/openai/cli_args.py @ 789340fbad95a900ca3c467c9cee33b3d905fd61 (~v0.11)",
           "vllm/model_executor/layers/quantization/__init__.py @ 05d909563e1d1ada39a13b67e7b9a4cbca1d6a8e"],
          ["vllm serve [model_tag]"], flags, {}, notes,
          positional=["model_tag (optional; same as --model)"])


if __name__ == "__main__":
    main()
