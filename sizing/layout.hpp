// SPDX-License-Identifier: MIT
#pragma once
// Which multi-GPU layouts an engine can really run (docs/sizing.md "Layouts"). vLLM splits the
// attention heads over tensor-parallel ranks: the degree must divide the query heads, and
// divide the KV heads or be a multiple of them (vLLM QKVParallelLinear); group-quantized
// weights (AWQ/GPTQ, group 128) need every row-parallel input slice to be whole groups, and a
// block-quantized FP8 checkpoint (weight_block_size [n, k]) every column-parallel output slice a
// multiple of n and every row-parallel input slice a multiple of k (vLLM's block-FP8 check).
// Where a GPU count has no such degree, vLLM runs pipeline stages (--pipeline-parallel-size).
#include <cstdint>
#include <optional>
#include <string>

#include "sizing/job.hpp"

namespace gpurent {

// vLLM can shard the model's attention (and quantized MLP) over `tp` ranks.
// The block constraint applies when the job runs fp8 weights and the model carries its
// checkpoint's block (ModelArch::quant_block_n/k); online FP8 of a 16-bit checkpoint (vLLM
// --quantization fp8, per-tensor scales) has none.
[[nodiscard]] bool tensor_parallel_ok(const ModelArch& model, std::uint32_t tp, WeightFormat weights) noexcept;

// Why vLLM refuses tensor parallel `tp` ("" when it does not): the heads it must divide, or the
// first weight slice that is not whole groups or FP8 blocks, with its arithmetic
// ("moe_intermediate_size (experts' gate/up): 768 / 4 = 192 per rank is not a multiple of …").
[[nodiscard]] std::string tensor_parallel_refusal(const ModelArch& model, std::uint32_t tp, WeightFormat weights);

// vLLM's layout on `gpus` GPUs: the largest tensor-parallel degree that divides `gpus` and
// tensor_parallel_ok, the rest as pipeline stages (at most one layer per stage). nullopt when
// even pure pipeline parallelism cannot use that many GPUs.
struct Layout {
  std::uint32_t tp = 1;
  std::uint32_t pp = 1;
};
[[nodiscard]] std::optional<Layout> vllm_layout(const ModelArch& model, std::uint32_t gpus, WeightFormat weights) noexcept;

// SGLang serves across at most this many servers: the largest its DeepSeek guide runs (4 x 8
// A100 in BF16, 4 x 8 L40S in INT8; docs.sglang.io "DeepSeek V3/V3.1/R1 Usage").
inline constexpr std::uint32_t k_sglang_max_nodes = 4;

// `job` as it can run on job.gpus GPUs of each of job.nodes servers: vLLM gets its pipeline
// stages (one set per server: tensor parallel stays inside a server), SGLang one tensor-parallel
// group over every GPU of 2..k_sglang_max_nodes servers; nullopt when the job's engine cannot use
// that many GPUs with that model (training with --shard tp on heads the degree does not divide;
// more GPUs than layers to split; SGLang's heads not split over all the GPUs) or that many
// servers (only vLLM and SGLang inference and sharded or data-parallel training span servers).
[[nodiscard]] std::optional<JobSpec> feasible_layout(const JobSpec& job) noexcept;

// Why the job's engine cannot span `nodes` servers at all ("" when it can, as far as servers go).
[[nodiscard]] std::string servers_refusal(const JobSpec& job, std::uint32_t nodes);

// What feasible_layout sets, without a copy of the job: its vLLM pipeline stages and servers, for
// the job on `gpus` GPUs of each of `nodes` servers sharded by `shard` (the job's other fields as
// they are). nullopt where feasible_layout gives none.
struct JobLayout {
  std::uint32_t pipeline = 1;
  std::uint32_t nodes = 1;
};
[[nodiscard]] std::optional<JobLayout> layout_on(const JobSpec& job, std::uint32_t gpus, std::uint32_t nodes,
                                                 Shard shard) noexcept;

}  // namespace gpurent
