// SPDX-License-Identifier: MIT
#pragma once
// A sized job (what runs, how) and the memory it needs per GPU.
#include <cstdint>
#include <string>

#include "common/units.hpp"
#include "sizing/model.hpp"

namespace gpurent {

enum class Task { infer, serve, train, lora, qlora };
// unsloth: LoRA/QLoRA fine-tuning with Unsloth's FastLanguageModel and TRL's SFTTrainer (one GPU,
// or DDP from release 2025.3.7; sizing/unsloth.hpp). tensorrt_llm: NVIDIA TensorRT-LLM's
// `trtllm-serve` on its PyTorch backend (serving and inference, one server).
enum class Engine { transformers, vllm, llama_cpp, ollama, torchtune, deepspeed, sglang, unsloth, tensorrt_llm };
// `layer`: inference split by layer across the GPUs (llama.cpp --split-mode layer, ollama, transformers
// device_map="auto"): one GPU works at a time, unlike tensor parallel (`tp`).
enum class Shard { none, ddp, fsdp, zero1, zero2, zero3, tp, layer };
enum class Optimizer { adamw, adamw_8bit, sgd, adafactor };

// Weight storage formats. GGUF types carry their real bits per weight (see sizing/precision.hpp).
enum class WeightFormat {
  fp32, bf16, fp16, fp8, int8, int4, nf4, awq, gptq, mxfp4, nvfp4,
  gguf_f16, gguf_q8_0, gguf_q6_k, gguf_q5_k_m, gguf_q5_k_s, gguf_q5_0, gguf_q5_1, gguf_q4_k_m, gguf_q4_k_s,
  gguf_q4_0, gguf_q4_1, gguf_q3_k_l, gguf_q3_k_m, gguf_q3_k_s, gguf_q2_k, gguf_iq4_xs, gguf_iq4_nl,
  gguf_iq3_xxs, gguf_iq2_xxs,
};

enum class KvDtype { auto_, fp32, fp16, bf16, fp8, q8_0, q4_0 };

struct JobSpec {
  ModelArch model;
  Task task = Task::infer;
  Engine engine = Engine::transformers;
  WeightFormat weights = WeightFormat::bf16;
  KvDtype kv_cache = KvDtype::auto_;
  std::uint32_t context = 4096;  // tokens per sequence
  // Sequences per GPU per step (training: the micro-batch, --micro-batch or --batch), or sequences
  // in flight.
  std::uint32_t batch = 1;
  // --task infer --requests N on a batching engine (vLLM, SGLang): an offline batch run over an
  // input file that keeps as many requests in flight as the KV pool holds (cli.md plan v4
  // `"mode": "batch"`); speed, job time and the launch line read it.
  bool offline_batch = false;
  std::uint32_t grad_accumulation = 1;  // training micro-batches per optimizer step (no memory effect)
  // Training: sequences packed to the full context (TRL --packing), so no step computes padding;
  // unpacked, each batch pads to its longest sequence (docs/speed.md "Micro-batch and packing").
  bool pack = false;
  // Training under torch.compile (TRL --torch_compile, torchtune compile=True); else eager, whose
  // step runs slower than the fused kernels the trainers' utilisation was fitted on (docs/speed.md
  // "Compiled or eager").
  bool compile = false;
  // Training: the plan chose the micro-batch (the user gave neither --micro-batch nor --batch).
  bool micro_batch_chosen = false;
  Optimizer optimizer = Optimizer::adamw;
  bool grad_checkpointing = false;
  std::uint32_t lora_rank = 16;
  std::uint32_t gpus = 1;   // GPUs per server
  // Servers (nodes) the job spans, `gpus` GPUs each (plan --nodes): FSDP/ZeRO shard over all
  // gpus x nodes GPUs; vLLM runs tensor parallel inside a server and pipeline stages across them.
  std::uint32_t nodes = 1;
  Shard shard = Shard::none;
  // vLLM pipeline-parallel stages over all the job's GPUs: gpus x nodes GPUs split into
  // `pipeline` stages of gpus x nodes / pipeline tensor-parallel ranks each (sizing/layout.hpp
  // picks it; 1 = tensor parallel only).
  std::uint32_t pipeline = 1;
  // vLLM gpu_memory_utilization (SGLang mem_fraction_static, TensorRT-LLM
  // kv_cache_free_gpu_memory_fraction: of what its profiling leaves, not of the card) x 1000
  std::uint32_t gpu_util_permille = 900;
  bool gpu_util_given = false;
  // Serving: sequences the engine schedules at once (vLLM --max-num-seqs, SGLang
  // --max-running-requests): what the KV pool holds at the planned context; 0 = `batch`.
  std::uint32_t max_seqs = 0;  // --gpu-util set it; otherwise SGLang derives its fraction from the card
  // vLLM --max-num-batched-tokens (SGLang --chunked-prefill-size): the tokens one step runs, which
  // the engine's profiling pass measures; 0 = the engine's default (sizing/engine_release.hpp).
  std::uint32_t max_batched_tokens = 0;
  // The engine's release as major x 1,000,000 + minor x 1,000 + patch (vLLM 0.10.1 -> 10001);
  // 0 = the current release gpurent follows. vLLM below 0.8 runs the V0 engine.
  std::uint32_t engine_version = 0;
  // Set from the card the job runs on (planner/card_run.hpp), like the hardware rules' fields:
  // vLLM gives cards of 70 GiB or more, except the A100, 8192 batched tokens and 1024 sequences
  // (arg_utils _set_default_args); GPUs on an NVSwitch with NVLink SHARP (Hopper and later SXM)
  // make NCCL reserve about 2 GiB per GPU for its NVLS buffers once the job spans GPUs.
  bool large_card_defaults = false;
  bool nccl_nvls = false;
  // llama.cpp / ollama: flash attention on (llama.cpp's `-fa auto` default on CUDA). Off, the
  // compute buffer holds the fp32 KQ matrix (n_head x n_ctx x n_ubatch x 4 B).
  bool flash_attention = true;
  // Offload (the recipe's last resort): inference weights kept in CPU RAM, per GPU (vLLM
  // --cpu-offload-gb, llama.cpp -ngl, transformers max_memory); training optimizer states (and,
  // outside DeepSpeed, gradients) in CPU RAM.
  std::uint64_t offload_bytes = 0;
  bool offload_optimizer = false;
  // QLoRA levers (docs/sizing.md "QLoRA levers"): the parameters bitsandbytes leaves unquantized
  // (embeddings, lm_head, norms) loaded in 16 bits (TRL --dtype bfloat16) instead of the fp32 TRL
  // loads them in by default; the checkpointed layer inputs kept in CPU RAM during the step
  // (TRL --activation_offloading, torchtune enable_activation_offloading).
  bool embeddings_16bit = false;
  bool activation_offload = false;
  // Set by the hardware rules for the card the job runs on (sizing/hardware_rules.hpp).
  bool fp16_compute = false;  // the card has no bf16: training runs fp16 mixed precision (--fp16)
  bool moe_marlin = false;    // vLLM: FP8 experts through Marlin (--moe-backend marlin), below CC 8.9
  bool kv_fp8_e5m2 = false;   // an FP8 KV cache as e5m2 (below CC 8.9 the e4m3 kernels are refused)
};

// Per GPU. peak_allocated() is what torch.cuda.max_memory_allocated() (or the engine's own
// counter) reports; total() adds the CUDA context, NCCL/non-torch memory and allocator slack.
struct MemoryEstimate {
  Bytes weights, kv_cache, activations, gradients, optimizer, adapters, overhead;
  [[nodiscard]] Bytes peak_allocated() const noexcept
  {
    return weights + kv_cache + activations + gradients + optimizer + adapters;
  }
  [[nodiscard]] Bytes total() const noexcept { return peak_allocated() + overhead; }
};

// vLLM serving on a given card: the KV pool the engine allocates at gpu_memory_utilization.
struct ServePool {
  Bytes kv_pool;
  std::uint64_t kv_pool_tokens = 0;
  double max_concurrency = 0;  // full-context sequences the pool holds
};

}  // namespace gpurent
