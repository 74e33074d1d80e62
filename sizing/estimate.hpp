// SPDX-License-Identifier: MIT
#pragma once
// The memory a job needs per GPU, term by term (docs/sizing.md gives every formula and source).
// Pure and total: every function here is noexcept and defined for every JobSpec (zero-sized
// models give zeros, huge ones saturate instead of overflowing).
#include <cstdint>

#include "common/units.hpp"
#include "sizing/job.hpp"
#include "sizing/param_count.hpp"

namespace gpurent {

// Fixed overheads (docs/sizing.md §5).
inline constexpr std::uint64_t k_cuda_context_bytes = 512 * k_mib;         // per GPU process (lazy loading)
inline constexpr std::uint64_t k_vllm_non_torch_tp1 = 256 * k_mib;         // cuBLAS, misc (llm-d v0.19: 0.25 GiB)
inline constexpr std::uint64_t k_vllm_non_torch_nvls = 2150 * k_mib;       // TP>=2 on NVSwitch Hopper+: NCCL NVLS buffers (llm-d v0.19: 2.07, 2.13 GiB)
inline constexpr std::uint64_t k_vllm_non_torch_multi = 768 * k_mib;       // TP>=2 elsewhere: NCCL + custom all-reduce (start-up logs, §7)
inline constexpr std::uint64_t k_vllm_v1_sampler_bytes = 12;               // per logit of the profiling sampler run (V1)
inline constexpr std::uint64_t k_vllm_v0_sampler_bytes = 36;               // per logit, V0 (logprobs, sort, indices)
inline constexpr std::uint64_t k_nccl_training_bytes = 256 * k_mib;        // NCCL buffers of a distributed trainer
inline constexpr std::uint32_t k_vllm_block_tokens = 16;
// TensorRT-LLM (PyTorch backend): KvCacheConfig.tokens_per_block (llm_args.py) and trtllm-serve's
// --max_num_tokens, the tokens its memory profiling run forwards (tests/data/trtllm/memory.md).
inline constexpr std::uint32_t k_trtllm_tokens_per_block = 32;
inline constexpr std::uint32_t k_trtllm_max_num_tokens = 8192;
inline constexpr std::uint32_t k_llama_cpp_ubatch = 512;                   // n_ubatch default
inline constexpr std::uint32_t k_allocator_slack_permille = 50;           // torch caching allocator, training

// Per GPU, every term of cli.md's `memory` object. For task serve (vLLM) `kv_cache` is the KV
// the requested context x batch needs (the requirement); serve_pool() says what vLLM grabs.
[[nodiscard]] MemoryEstimate estimate(const JobSpec& job) noexcept;

// The KV pool vLLM allocates on a card whose CUDA-reported memory is `card_usable` per GPU:
// util x usable - (weights + activation peak + non-torch), in whole 16-token blocks.
[[nodiscard]] ServePool serve_pool(const JobSpec& job, const MemoryEstimate& est, Bytes card_usable) noexcept;

// ---- Building blocks (also used by fixes, fits and tests) ----
// Engines that take a KV pool at start and hand it out in pages (vLLM, SGLang, TensorRT-LLM):
// serving is sized by what the pool holds.
[[nodiscard]] bool pools_kv(Engine engine) noexcept;
// Serving engines that split a model by tensor parallel inside a server, with pipeline stages
// where the heads do not split (vLLM --pipeline-parallel-size, TensorRT-LLM --pp_size).
[[nodiscard]] bool splits_tp_pp(Engine engine) noexcept;
// The KV pool's page: vLLM's 16-token blocks, TensorRT-LLM's 32, SGLang's one token.
[[nodiscard]] std::uint32_t kv_page_tokens(Engine engine) noexcept;
// TensorRT-LLM's --max_num_tokens: JobSpec::max_batched_tokens, else k_trtllm_max_num_tokens.
[[nodiscard]] std::uint32_t trtllm_max_num_tokens(const JobSpec& job) noexcept;
// vLLM's memory outside PyTorch per GPU (cuBLAS, NCCL, custom all-reduce) for a replica spanning
// `gpus_per_replica` GPUs (tensor x pipeline): 256 MiB alone; 768 MiB across GPUs, 2150 MiB where
// NCCL sets up NVLink SHARP (job.nccl_nvls).
[[nodiscard]] std::uint64_t vllm_non_torch(const JobSpec& job, std::uint32_t gpus_per_replica) noexcept;
// Every GPU of the job: gpus per server x nodes.
[[nodiscard]] std::uint32_t world_gpus(const JobSpec& job) noexcept;
// Tensor-parallel degree and data-parallel (sharding) degree of the job.
[[nodiscard]] std::uint32_t tp_degree(const JobSpec& job) noexcept;
// Inference engines that split a model across GPUs by layer, never by tensor (Shard::layer):
// llama.cpp (--split-mode layer), ollama, transformers (device_map="auto").
[[nodiscard]] bool splits_by_layer(Engine engine) noexcept;
[[nodiscard]] std::uint32_t shard_degree(const JobSpec& job) noexcept;
[[nodiscard]] bool is_training(Task t) noexcept;

// Weights resident per GPU at the job's format (before sharding by FSDP/ZeRO, after TP/splitting).
struct WeightSplit {
  Bytes total;    // all weights on one GPU
  Bytes experts;  // of which routed-expert weights (MoE expert offload moves these)
  Bytes per_layer;  // one decoder layer's weights (offload granularity)
};
[[nodiscard]] WeightSplit weight_split(const JobSpec& job, const ParamBreakdown& pb) noexcept;

// KV bytes per token per GPU over every attention layer (no sliding-window cap): what vLLM's
// page size counts. MLA: one latent of kv_lora_rank + qk_rope_head_dim per layer.
[[nodiscard]] Bytes kv_bytes_per_token(const JobSpec& job) noexcept;
// KV bytes per GPU for `seqs` sequences of `tokens` each, sliding-window layers capped at the window.
[[nodiscard]] Bytes kv_cache_bytes(const JobSpec& job, std::uint64_t tokens, std::uint64_t seqs) noexcept;

// LoRA adapter parameters r x (d_in + d_out) over q,k,v,o,gate,up,down (and their MLA/expert
// counterparts): every decoder linear layer.
[[nodiscard]] std::uint64_t lora_params(const ParamBreakdown& pb, std::uint32_t rank) noexcept;

// The per-GPU limit a job must stay under on a card that reports `card_usable` (cli.md: usable
// minus a 5% margin). vLLM refuses to start unless its requirement fits util x usable, so for
// engine vllm the limit is the smaller of the two.
[[nodiscard]] Bytes fit_limit_for(const JobSpec& job, Bytes card_usable) noexcept;
// The memory estimate's own measured error for the job type, in per cent: the largest |error| of
// docs/sizing.md §7's measured cases for that kind of peak (training peaks 16: +15.9% torchtune
// QLoRA; transformers inference 13: -12.9% GPTQ generate; vLLM/SGLang 4: the pool +3.69%;
// llama.cpp/Ollama 2: weights and context +1.17%). A total closer than this to the limit is tight.
[[nodiscard]] std::uint32_t memory_error_pct(const JobSpec& job) noexcept;
// SGLang's mem_fraction_static x 1000 on a card: --gpu-util when given, else its own default
// (server_args.py _handle_gpu_memory_settings, sglang PR #10975): reserve 512 MiB + 1.5 x
// max(chunked_prefill_size, 2048) MiB + 2 x cuda_graph_max_bs MiB + tp x pp / 8 GiB (at least 10
// GiB above 60 GiB cards), chunk and graph sizes by card memory; (card MiB - reserve) / card MiB.
[[nodiscard]] std::uint32_t sglang_mem_fraction_permille(const JobSpec& job, Bytes card_usable) noexcept;

}  // namespace gpurent
