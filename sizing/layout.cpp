// SPDX-License-Identifier: MIT
#include "sizing/layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <utility>

#include "sizing/estimate.hpp"
#include "sizing/precision.hpp"

namespace gpurent {
namespace {

constexpr std::uint32_t k_quant_group = 128;  // AWQ/GPTQ/int4 group size

bool group_quantized(WeightFormat w) noexcept
{
  return w == WeightFormat::awq || w == WeightFormat::gptq || w == WeightFormat::int4;
}

// One weight width vLLM slices over the tensor-parallel ranks: column-parallel layers split their
// output rows (q/k/v, gate/up), row-parallel layers their input columns (o_proj, down_proj).
struct Sliced {
  const char* what;
  std::uint64_t width;   // the whole width
  std::uint64_t per_rank;
  bool row;              // row-parallel: the input side is split
};

// Every width a tensor-parallel degree `tp` slices (heads already checked to divide): attention
// q and o (MLA: q heads x (nope + rope), kv_b heads x (nope + v), o heads x v_head_dim), the
// KV heads of GQA (one per rank when replicated), the dense MLP where one runs, the routed
// experts and the shared experts (DeepSeek/Qwen2-MoE: moe_intermediate x shared_experts).
std::size_t sliced_widths(const ModelArch& m, std::uint32_t tp, std::array<Sliced, 10>& out) noexcept
{
  std::size_t n = 0;
  const auto add = [&](const char* what, std::uint64_t width, std::uint64_t per_rank, bool row) {
    if (width > 0) {
      out[n++] = Sliced{what, width, per_rank, row};
    }
  };
  const auto split = [tp](std::uint64_t width) { return width % tp == 0 ? width / tp : 0; };
  if (m.attention() == AttentionKind::mla) {
    const std::uint64_t qk = std::uint64_t{m.qk_nope_head_dim} + m.qk_rope_head_dim;
    add("q_proj (heads x qk_head_dim)", std::uint64_t{m.heads} * qk, split(std::uint64_t{m.heads} * qk), false);
    const std::uint64_t kv_b = std::uint64_t{m.heads} * (std::uint64_t{m.qk_nope_head_dim} + m.v_head_dim);
    add("kv_b_proj (heads x (qk_nope_head_dim + v_head_dim))", kv_b, split(kv_b), false);
    const std::uint64_t o = std::uint64_t{m.heads} * m.v_head_dim;
    add("o_proj (heads x v_head_dim)", o, split(o), true);
  } else {
    const std::uint64_t head_dim = m.head_dim > 0 ? m.head_dim : m.hidden / m.heads;
    const std::uint64_t q = std::uint64_t{m.heads} * head_dim;
    add("q_proj (heads x head_dim)", q, split(q), false);
    const std::uint32_t kv = m.kv_heads > 0 ? m.kv_heads : m.heads;
    add("k_proj/v_proj (KV heads x head_dim)", std::uint64_t{kv} * head_dim,
        (kv >= tp ? kv / tp : 1) * head_dim, false);
    add("o_proj (heads x head_dim)", q, split(q), true);
  }
  if (!m.is_moe() || m.dense_layers > 0) {
    add("intermediate_size (gate/up)", m.intermediate, split(m.intermediate), false);
    add("intermediate_size (down_proj)", m.intermediate, split(m.intermediate), true);
  }
  if (m.is_moe()) {
    add("moe_intermediate_size (experts' gate/up)", m.moe_intermediate, split(m.moe_intermediate), false);
    add("moe_intermediate_size (experts' down_proj)", m.moe_intermediate, split(m.moe_intermediate), true);
    const std::uint64_t shared = std::uint64_t{m.moe_intermediate} * m.shared_experts;
    add("shared experts' width (gate/up)", shared, split(shared), false);
    add("shared experts' width (down_proj)", shared, split(shared), true);
  }
  return n;
}

// The first sliced width whose per-rank slice is not whole quantization units: groups of 128
// on the input side (AWQ/GPTQ), or FP8 blocks (block_n on the output side, block_k on the
// input side) for a block-quantized FP8 checkpoint run as stored.
std::optional<std::pair<Sliced, std::uint32_t>> first_misfit(const ModelArch& m, std::uint32_t tp,
                                                             WeightFormat weights) noexcept
{
  const bool groups = group_quantized(weights);
  const bool blocks = weights == WeightFormat::fp8 && m.quant_block_n > 0 && m.quant_block_k > 0;
  if (!groups && !blocks) {
    return std::nullopt;
  }
  std::array<Sliced, 10> widths{};
  const std::size_t n = sliced_widths(m, tp, widths);
  for (std::size_t i = 0; i < n; ++i) {
    const Sliced& w = widths[i];
    const std::uint32_t unit = blocks ? (w.row ? m.quant_block_k : m.quant_block_n) : w.row ? k_quant_group : 0;
    if (unit > 0 && (w.per_rank == 0 || w.per_rank % unit != 0)) {
      return std::pair{w, unit};
    }
  }
  return std::nullopt;
}

bool heads_divide(const ModelArch& m, std::uint32_t tp) noexcept
{
  if (m.heads % tp != 0) {
    return false;
  }
  if (m.attention() != AttentionKind::mla) {
    const std::uint32_t kv = m.kv_heads > 0 ? m.kv_heads : m.heads;
    if (kv % tp != 0 && tp % kv != 0) {
      return false;
    }
  }
  return true;
}

}  // namespace

bool tensor_parallel_ok(const ModelArch& m, std::uint32_t tp, WeightFormat weights) noexcept
{
  if (tp <= 1 || m.heads == 0) {
    return true;  // one rank, or no architecture to judge (--params)
  }
  return heads_divide(m, tp) && !first_misfit(m, tp, weights);
}

std::string tensor_parallel_refusal(const ModelArch& m, std::uint32_t tp, WeightFormat weights)
{
  if (tp <= 1 || m.heads == 0) {
    return {};
  }
  if (!heads_divide(m, tp)) {
    return fmt::format("tensor parallel {} must divide the {} attention heads (and divide or be a multiple of the "
                       "{} KV heads)",
                       tp, m.heads, m.kv_heads > 0 ? m.kv_heads : m.heads);
  }
  const auto misfit = first_misfit(m, tp, weights);
  if (!misfit) {
    return {};
  }
  const auto& [w, unit] = *misfit;
  const bool blocks = weights == WeightFormat::fp8;
  const std::string slice = w.per_rank > 0 ? fmt::format("{} / {} = {}", w.width, tp, w.per_rank)
                                           : fmt::format("{} does not split into {}", w.width, tp);
  return fmt::format("{}: {} per rank is not a multiple of the {} {} ({})", w.what, slice,
                     blocks ? "FP8 weight block" : "quantization group", unit,
                     blocks ? (w.row ? "block_k" : "block_n") : "group_size");
}

std::optional<Layout> vllm_layout(const ModelArch& m, std::uint32_t gpus, WeightFormat weights) noexcept
{
  if (gpus == 0) {
    return std::nullopt;
  }
  for (std::uint32_t tp = gpus; tp >= 1; --tp) {
    if (gpus % tp != 0 || !tensor_parallel_ok(m, tp, weights)) {
      continue;
    }
    const std::uint32_t pp = gpus / tp;
    if (pp > 1 && (m.layers == 0 || pp > m.layers)) {
      continue;
    }
    return Layout{tp, pp};
  }
  return std::nullopt;
}

std::string servers_refusal(const JobSpec& job, std::uint32_t nodes)
{
  if (nodes <= 1) {
    return {};
  }
  if (is_training(job.task)) {
    return job.shard == Shard::tp ? "tensor-parallel training stays inside one server (shard with fsdp or zero3 across servers)"
                                  : "";
  }
  if (job.engine == Engine::sglang) {
    if (job.offline_batch) {
      return "SGLang's offline batch runs on one server";
    }
    if (nodes > k_sglang_max_nodes) {
      return fmt::format("SGLang serves across at most {} servers (the largest its DeepSeek guide runs: 4 x 8 A100)",
                         k_sglang_max_nodes);
    }
    return {};
  }
  if (job.engine == Engine::tensorrt_llm) {
    return "gpurent launches trtllm-serve on one server (across servers it runs under mpirun or Slurm); across "
           "servers plan runs vLLM (pipeline stages) or SGLang (one tensor-parallel group)";
  }
  if (job.engine != Engine::vllm) {
    return fmt::format("{} runs on one server; across servers plan runs vLLM (pipeline stages) or SGLang (one "
                       "tensor-parallel group)",
                       to_string(job.engine));
  }
  return {};
}

std::optional<JobLayout> layout_on(const JobSpec& job, std::uint32_t gpus, std::uint32_t nodes, Shard shard) noexcept
{
  JobLayout l;
  l.nodes = std::max<std::uint32_t>(nodes, 1);
  const std::uint32_t g = std::max<std::uint32_t>(gpus, 1);
  if (g == 1 && l.nodes == 1) {
    return l;
  }
  const bool vllm_split =
      !is_training(job.task) && splits_tp_pp(job.engine) && (shard == Shard::none || shard == Shard::tp);
  if (vllm_split && job.engine == Engine::tensorrt_llm && l.nodes > 1) {
    return std::nullopt;  // trtllm-serve as gpurent launches it: one server
  }
  if (vllm_split) {
    // Tensor parallel inside a server, pipeline stages inside it where the heads do not split, and
    // one more set of stages per server (vLLM's multi-node layout: --tensor-parallel-size = GPUs
    // per node, --pipeline-parallel-size = nodes).
    const auto layout = vllm_layout(job.model, g, job.weights);
    if (!layout) {
      return std::nullopt;
    }
    l.pipeline = layout->pp * l.nodes;
    if (l.pipeline > 1 && (job.model.layers == 0 || l.pipeline > job.model.layers)) {
      return std::nullopt;
    }
    return l;
  }
  const bool sglang_split =
      !is_training(job.task) && job.engine == Engine::sglang && (shard == Shard::none || shard == Shard::tp);
  if (sglang_split && l.nodes > 1 && !job.offline_batch) {
    // SGLang across servers: one tensor-parallel group over every GPU of every server (--tp 16
    // --nnodes 2: docs.sglang.io "Multi-Node Deployment"), on at most k_sglang_max_nodes servers.
    if (l.nodes > k_sglang_max_nodes || !tensor_parallel_ok(job.model, g * l.nodes, job.weights)) {
      return std::nullopt;
    }
    return l;
  }
  if (l.nodes > 1 && (!is_training(job.task) || shard == Shard::tp)) {
    return std::nullopt;  // across servers: trainers shard (FSDP/ZeRO/DDP), inference runs on vLLM or SGLang
  }
  if (is_training(job.task) && shard == Shard::tp && !tensor_parallel_ok(job.model, g, WeightFormat::bf16)) {
    return std::nullopt;
  }
  if (!is_training(job.task) && job.model.layers > 0 && g > job.model.layers) {
    return std::nullopt;  // layer split: at least one layer per GPU
  }
  return l;
}

std::optional<JobSpec> feasible_layout(const JobSpec& job) noexcept
{
  const auto l = layout_on(job, job.gpus, job.nodes, job.shard);
  if (!l) {
    return std::nullopt;
  }
  JobSpec j = job;
  j.pipeline = l->pipeline;
  j.nodes = l->nodes;
  return j;
}

}  // namespace gpurent
