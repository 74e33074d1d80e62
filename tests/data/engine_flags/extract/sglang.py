"""`python -m sglang.launch_server` flags from python/sglang/srt/server_args.py (ServerArgs.add_cli_args).

The sglang git snapshot is over the fetch size limit, so the option table below was transcribed by hand
from one stored version of server_args.py (source-index file id 8356329; its commit is not recorded
there). Row format:  options | kind | choices | group
kind: V value, N nargs '+', S nargs '*', B store_true, O nargs '?' (optional value).
"""
from common import flag, write

LOAD_FORMAT = "auto,pt,safetensors,npcache,dummy,sharded_state,gguf,bitsandbytes,layered,remote,remote_instance"
QUANT = ("awq,fp8,gptq,marlin,gptq_marlin,awq_marlin,bitsandbytes,gguf,modelopt,modelopt_fp8,modelopt_fp4,"
         "petit_nvfp4,w8a8_int8,w8a8_fp8,moe_wna16,qoq,w4afp8,mxfp4,auto-round,compressed-tensors")
ATTN = ("triton,torch_native,flex_attention,nsa,cutlass_mla,fa3,fa4,flashinfer,flashmla,trtllm_mla,trtllm_mha,"
        "dual_chunk_flash_attn,aiter,wave,intel_amx,ascend,intel_xpu")
NSA = "flashmla_sparse,flashmla_kv,flashmla_auto,fa3,tilelang,aiter"
MOE_RUNNER = ("auto,deep_gemm,triton,triton_kernel,flashinfer_trtllm,flashinfer_cutlass,flashinfer_mxfp4,"
              "flashinfer_cutedsl,cutlass")

ROWS = f"""
--model-path,--model|V||Model and tokenizer
--tokenizer-path|V||Model and tokenizer
--tokenizer-mode|V|auto,slow|Model and tokenizer
--tokenizer-worker-num|V||Model and tokenizer
--skip-tokenizer-init|B||Model and tokenizer
--load-format|V|{LOAD_FORMAT}|Model and tokenizer
--model-loader-extra-config|V||Model and tokenizer
--trust-remote-code|B||Model and tokenizer
--context-length|V||Model and tokenizer
--is-embedding|B||Model and tokenizer
--enable-multimodal|B||Model and tokenizer
--revision|V||Model and tokenizer
--model-impl|V||Model and tokenizer
--host|V||HTTP server
--port|V||HTTP server
--grpc-mode|B||HTTP server
--skip-server-warmup|B||HTTP server
--warmups|V||HTTP server
--nccl-port|V||HTTP server
--checkpoint-engine-wait-weights-before-ready|B||HTTP server
--dtype|V|auto,half,float16,bfloat16,float,float32|Quantization and data type
--quantization|V|{QUANT}|Quantization and data type
--quantization-param-path|V||Quantization and data type
--kv-cache-dtype|V|auto,fp8_e5m2,fp8_e4m3,bf16,bfloat16,fp4_e2m1|Quantization and data type
--enable-fp32-lm-head|B||Quantization and data type
--modelopt-quant|V||Quantization and data type
--modelopt-checkpoint-restore-path|V||Quantization and data type
--modelopt-checkpoint-save-path|V||Quantization and data type
--modelopt-export-path|V||Quantization and data type
--quantize-and-serve|B||Quantization and data type
--mem-fraction-static|V||Memory and scheduling
--max-running-requests|V||Memory and scheduling
--max-queued-requests|V||Memory and scheduling
--max-total-tokens|V||Memory and scheduling
--chunked-prefill-size|V||Memory and scheduling
--max-prefill-tokens|V||Memory and scheduling
--schedule-policy|V|lpm,random,fcfs,dfs-weight,lof,priority|Memory and scheduling
--enable-priority-scheduling|B||Memory and scheduling
--abort-on-priority-when-disabled|B||Memory and scheduling
--schedule-low-priority-values-first|B||Memory and scheduling
--priority-scheduling-preemption-threshold|V||Memory and scheduling
--schedule-conservativeness|V||Memory and scheduling
--page-size|V||Memory and scheduling
--hybrid-kvcache-ratio|O||Memory and scheduling
--swa-full-tokens-ratio|V||Memory and scheduling
--disable-hybrid-swa-memory|B||Memory and scheduling
--radix-eviction-policy|V|lru,lfu|Memory and scheduling
--device|V||Runtime options
--tensor-parallel-size,--tp-size|V||Runtime options
--pipeline-parallel-size,--pp-size|V||Runtime options
--pp-max-micro-batch-size|V||Runtime options
--stream-interval|V||Runtime options
--stream-output|B||Runtime options
--random-seed|V||Runtime options
--constrained-json-whitespace-pattern|V||Runtime options
--constrained-json-disable-any-whitespace|B||Runtime options
--watchdog-timeout|V||Runtime options
--dist-timeout|V||Runtime options
--download-dir|V||Runtime options
--base-gpu-id|V||Runtime options
--gpu-id-step|V||Runtime options
--sleep-on-idle|B||Runtime options
--log-level|V||Logging
--log-level-http|V||Logging
--log-requests|B||Logging
--log-requests-level|V|0,1,2,3|Logging
--crash-dump-folder|V||Logging
--show-time-cost|B||Logging
--enable-metrics|B||Logging
--enable-metrics-for-all-schedulers|B||Logging
--tokenizer-metrics-custom-labels-header|V||Logging
--tokenizer-metrics-allowed-custom-labels|N||Logging
--bucket-time-to-first-token|N||Logging
--bucket-inter-token-latency|N||Logging
--bucket-e2e-request-latency|N||Logging
--collect-tokens-histogram|B||Logging
--prompt-tokens-buckets|N||Logging
--generation-tokens-buckets|N||Logging
--gc-warning-threshold-secs|V||Logging
--decode-log-interval|V||Logging
--enable-request-time-stats-logging|B||Logging
--kv-events-config|V||Logging
--enable-trace|B||Logging
--otlp-traces-endpoint|V||Logging
--api-key|V||API related
--served-model-name|V||API related
--weight-version|V||API related
--chat-template|V||API related
--completion-template|V||API related
--file-storage-path|V||API related
--enable-cache-report|B||API related
--reasoning-parser|V||API related
--tool-call-parser|V||API related
--tool-server|V||API related
--sampling-defaults|V|openai,model|API related
--data-parallel-size,--dp-size|V||Data parallelism
--load-balance-method|V|round_robin,shortest_queue,minimum_tokens|Data parallelism
--load-watch-interval|V||Data parallelism
--prefill-round-robin-balance|B||Data parallelism
--dist-init-addr,--nccl-init-addr|V||Multi-node distributed serving
--nnodes|V||Multi-node distributed serving
--node-rank|V||Multi-node distributed serving
--json-model-override-args|V||Model override args
--preferred-sampling-params|V||Model override args
--enable-lora|B||LoRA
--max-lora-rank|V||LoRA
--lora-target-modules|S||LoRA
--lora-paths|S||LoRA
--max-loras-per-batch|V||LoRA
--max-loaded-loras|V||LoRA
--lora-eviction-policy|V|lru,fifo|LoRA
--lora-backend|V|triton,csgmv|LoRA
--max-lora-chunk-size|V|16,32,64,128|LoRA
--attention-backend|V|{ATTN}|Kernel backend
--prefill-attention-backend|V|{ATTN}|Kernel backend
--decode-attention-backend|V|{ATTN}|Kernel backend
--sampling-backend|V|flashinfer,pytorch|Kernel backend
--grammar-backend|V|xgrammar,outlines,llguidance,none|Kernel backend
--mm-attention-backend|V|sdpa,fa3,triton_attn,ascend_attn,aiter_attn|Kernel backend
--nsa-prefill-backend|V|{NSA}|Kernel backend
--nsa-decode-backend|V|{NSA}|Kernel backend
--speculative-algorithm|V|EAGLE,EAGLE3,NEXTN,STANDALONE,NGRAM|Speculative decoding
--speculative-draft-model-path,--speculative-draft-model|V||Speculative decoding
--speculative-draft-model-revision|V||Speculative decoding
--speculative-draft-load-format|V|{LOAD_FORMAT}|Speculative decoding
--speculative-num-steps|V||Speculative decoding
--speculative-eagle-topk|V||Speculative decoding
--speculative-num-draft-tokens|V||Speculative decoding
--speculative-accept-threshold-single|V||Speculative decoding
--speculative-accept-threshold-acc|V||Speculative decoding
--speculative-token-map|V||Speculative decoding
--speculative-attention-mode|V|prefill,decode|Speculative decoding
--speculative-moe-runner-backend|V|{MOE_RUNNER}|Speculative decoding
--speculative-ngram-min-match-window-size|V||Speculative decoding
--speculative-ngram-max-match-window-size|V||Speculative decoding
--speculative-ngram-min-bfs-breadth|V||Speculative decoding
--speculative-ngram-max-bfs-breadth|V||Speculative decoding
--speculative-ngram-match-type|V|BFS,PROB|Speculative decoding
--speculative-ngram-branch-length|V||Speculative decoding
--speculative-ngram-capacity|V||Speculative decoding
--expert-parallel-size,--ep-size,--ep|V||Expert parallelism
--moe-a2a-backend|V|none,deepep,mooncake|Expert parallelism
--moe-runner-backend|V|{MOE_RUNNER}|Expert parallelism
--flashinfer-mxfp4-moe-precision|V|default,bf16|Expert parallelism
--enable-flashinfer-allreduce-fusion|B||Expert parallelism
--deepep-mode|V|normal,low_latency,auto|Expert parallelism
--ep-num-redundant-experts|V||Expert parallelism
--ep-dispatch-algorithm|V||Expert parallelism
--init-expert-location|V||Expert parallelism
--enable-eplb|B||Expert parallelism
--eplb-algorithm|V||Expert parallelism
--eplb-rebalance-num-iterations|V||Expert parallelism
--eplb-rebalance-layers-per-chunk|V||Expert parallelism
--eplb-min-rebalancing-utilization-threshold|V||Expert parallelism
--expert-distribution-recorder-mode|V||Expert parallelism
--expert-distribution-recorder-buffer-size|V||Expert parallelism
--enable-expert-distribution-metrics|B||Expert parallelism
--deepep-config|V||Expert parallelism
--moe-dense-tp-size|V||Expert parallelism
--elastic-ep-backend|V|none,mooncake|Expert parallelism
--mooncake-ib-device|V||Expert parallelism
--max-mamba-cache-size|V||Mamba cache
--mamba-ssm-dtype|V|float32,bfloat16|Mamba cache
--mamba-full-memory-ratio|V||Mamba cache
--enable-hierarchical-cache|B||Hierarchical cache
--hicache-ratio|V||Hierarchical cache
--hicache-size|V||Hierarchical cache
--hicache-write-policy|V|write_back,write_through,write_through_selective|Hierarchical cache
--hicache-io-backend|V|direct,kernel|Hierarchical cache
--hicache-mem-layout|V|layer_first,page_first,page_first_direct|Hierarchical cache
--hicache-storage-backend|V|file,mooncake,hf3fs,nixl,aibrix,dynamic,eic|Hierarchical cache
--hicache-storage-prefetch-policy|V|best_effort,wait_complete,timeout|Hierarchical cache
--hicache-storage-backend-extra-config|V||Hierarchical cache
--enable-lmcache|B||LMCache
--kt-amx-weight-path|V||Ktransformers
--kt-amx-method|V||Ktransformers
--kt-cpuinfer|V||Ktransformers
--kt-threadpool-count|V||Ktransformers
--kt-num-gpu-experts|V||Ktransformers
--kt-max-deferred-experts-per-token|V||Ktransformers
--enable-double-sparsity|B||Double Sparsity
--ds-channel-config-path|V||Double Sparsity
--ds-heavy-channel-num|V||Double Sparsity
--ds-heavy-token-num|V||Double Sparsity
--ds-heavy-channel-type|V||Double Sparsity
--ds-sparse-decode-threshold|V||Double Sparsity
--cpu-offload-gb|V||Offloading
--offload-group-size|V||Offloading
--offload-num-in-group|V||Offloading
--offload-prefetch-step|V||Offloading
--offload-mode|V||Offloading
--multi-item-scoring-delimiter|V||Multi-item scoring
--disable-radix-cache|B||Optimization/debug
--cuda-graph-max-bs|V||Optimization/debug
--cuda-graph-bs|N||Optimization/debug
--disable-cuda-graph|B||Optimization/debug
--disable-cuda-graph-padding|B||Optimization/debug
--enable-profile-cuda-graph|B||Optimization/debug
--enable-cudagraph-gc|B||Optimization/debug
--enable-nccl-nvls|B||Optimization/debug
--enable-symm-mem|B||Optimization/debug
--disable-flashinfer-cutlass-moe-fp4-allgather|B||Optimization/debug
--enable-tokenizer-batch-encode|B||Optimization/debug
--disable-tokenizer-batch-decode|B||Optimization/debug
--disable-outlines-disk-cache|B||Optimization/debug
--disable-custom-all-reduce|B||Optimization/debug
--enable-mscclpp|B||Optimization/debug
--enable-torch-symm-mem|B||Optimization/debug
--disable-overlap-schedule|B||Optimization/debug
--enable-mixed-chunk|B||Optimization/debug
--enable-dp-attention|B||Optimization/debug
--enable-dp-lm-head|B||Optimization/debug
--enable-two-batch-overlap|B||Optimization/debug
--enable-single-batch-overlap|B||Optimization/debug
--tbo-token-distribution-threshold|V||Optimization/debug
--enable-torch-compile|B||Optimization/debug
--enable-piecewise-cuda-graph|B||Optimization/debug
--piecewise-cuda-graph-tokens|V||Optimization/debug
--piecewise-cuda-graph-compiler|V|eager,inductor|Optimization/debug
--torch-compile-max-bs|V||Optimization/debug
--piecewise-cuda-graph-max-tokens|V||Optimization/debug
--torchao-config|V||Optimization/debug
--enable-nan-detection|B||Optimization/debug
--enable-p2p-check|B||Optimization/debug
--triton-attention-reduce-in-fp32|B||Optimization/debug
--triton-attention-num-kv-splits|V||Optimization/debug
--triton-attention-split-tile-size|V||Optimization/debug
--num-continuous-decode-steps|V||Optimization/debug
--delete-ckpt-after-loading|B||Optimization/debug
--enable-memory-saver|B||Optimization/debug
--enable-weights-cpu-backup|B||Optimization/debug
--allow-auto-truncate|B||Optimization/debug
--enable-custom-logit-processor|B||Optimization/debug
--flashinfer-mla-disable-ragged|B||Optimization/debug
--disable-shared-experts-fusion|B||Optimization/debug
--disable-chunked-prefix-cache|B||Optimization/debug
--disable-fast-image-processor|B||Optimization/debug
--keep-mm-feature-on-device|B||Optimization/debug
--enable-return-hidden-states|B||Optimization/debug
--scheduler-recv-interval|V||Optimization/debug
--numa-node|N||Optimization/debug
--enable-deterministic-inference|B||Optimization/debug
--rl-on-policy-target|V|fsdp|Optimization/debug
--enable-dynamic-batch-tokenizer|B||Dynamic batch tokenizer
--dynamic-batch-tokenizer-batch-size|V||Dynamic batch tokenizer
--dynamic-batch-tokenizer-batch-timeout|V||Dynamic batch tokenizer
--debug-tensor-dump-output-folder|V||Debug tensor dumps
--debug-tensor-dump-layers|N||Debug tensor dumps
--debug-tensor-dump-input-file|V||Debug tensor dumps
--debug-tensor-dump-inject|V||Debug tensor dumps
--disaggregation-mode|V|null,prefill,decode|PD disaggregation
--disaggregation-transfer-backend|V|mooncake,nixl,ascend,fake|PD disaggregation
--disaggregation-bootstrap-port|V||PD disaggregation
--disaggregation-decode-tp|V||PD disaggregation
--disaggregation-decode-dp|V||PD disaggregation
--disaggregation-prefill-pp|V||PD disaggregation
--disaggregation-ib-device|V||PD disaggregation
--disaggregation-decode-enable-offload-kvcache|B||PD disaggregation
--num-reserved-decode-tokens|V||PD disaggregation
--disaggregation-decode-polling-interval|V||PD disaggregation
--custom-weight-loader|S||Custom weight loader
--weight-loader-disable-mmap|B||Custom weight loader
--remote-instance-weight-loader-seed-instance-ip|V||Custom weight loader
--remote-instance-weight-loader-seed-instance-service-port|V||Custom weight loader
--remote-instance-weight-loader-send-weights-group-ports|V||Custom weight loader
--enable-pdmux|B||PD-Multiplexing
--pdmux-config-path|V||PD-Multiplexing
--sm-group-num|V||PD-Multiplexing
--config|V||Configuration file
--mm-max-concurrent-calls|V||Multi-Modal
--mm-per-request-timeout|V||Multi-Modal
--decrypted-config-file|V||Checkpoint decryption
--decrypted-draft-config-file|V||Checkpoint decryption
"""


def main():
    flags = {}
    for line in ROWS.strip().splitlines():
        opts, kind, choices, group = line.split("|")
        opts = opts.split(",")
        extra = {"group": group}
        if kind in ("N", "S"):
            extra["nargs"] = "+" if kind == "N" else "*"
        if kind == "O":
            extra["value_optional"] = True
        flags[opts[0]] = flag(opts[1:], kind in ("V", "N", "S"), choices.split(",") if choices else None, **extra)
    # argparse allow_abbrev (default True in prepare_server_args' ArgumentParser): unique prefixes work.
    flags["--tensor-parallel-size"]["aliases"].append("--tp")
    flags["--data-parallel-size"]["aliases"].append("--dp")
    for k, full in (("--tp", "--tp-size"), ("--dp", "--dp-size")):
        prefixed = [o for f, d in flags.items() for o in [f] + d["aliases"] if o.startswith(k) and o != k]
        assert prefixed == [full], (k, prefixed)
    notes = (
        "Release not identifiable: the stored server_args.py has no version and its commit is not recorded by the "
        "source index; features (ktransformers kt-* args, --grpc-mode, NSA backends, --multi-item-scoring-delimiter, "
        "--piecewise-cuda-graph-compiler, DeprecatedAction defined but unused) place it around sglang v0.5.4-v0.5.5 "
        "(late 2025). The stored python/sglang/version.py (another commit) says 0.5.6.post2. "
        "--tp and --dp are NOT declared options: they work only through argparse prefix abbreviation "
        "(prepare_server_args uses a plain ArgumentParser, allow_abbrev=True) because --tp-size / --dp-size are the only "
        "options starting with those prefixes; --ep IS a declared alias of --expert-parallel-size. "
        "All booleans are store_true (no --no-X forms). --reasoning-parser, --tool-call-parser and "
        "--lora-target-modules have argparse choices computed at import time (ReasoningParser.DetectorMap, "
        "FunctionCallParser.ToolCallParserEnum, SUPPORTED_LORA_TARGET_MODULES+['all']) that are not listed here. "
        "--kv-cache-dtype choices: auto, fp8_e5m2, fp8_e4m3, bf16, bfloat16, fp4_e2m1 (no plain 'fp8' "
        "as in vLLM). --quantization choices = QUANTIZATION_CHOICES (plugins may "
        "extend). --config reads a YAML file of the same options."
    )
    write("sglang", "unknown (index snapshot, ~v0.5.4-v0.5.5)", None, "https://github.com/sgl-project/sglang",
          ["python/sglang/srt/server_args.py"], ["python -m sglang.launch_server"], flags, {}, notes)


if __name__ == "__main__":
    main()
