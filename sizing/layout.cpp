// SPDX-License-Identifier: MIT
#include "sizing/layout.hpp"

#include <algorithm>

#include "sizing/estimate.hpp"

namespace gpurent {
namespace {

constexpr std::uint32_t k_quant_group = 128;  // AWQ/GPTQ/int4 group size

bool group_quantized(WeightFormat w) noexcept
{
  return w == WeightFormat::awq || w == WeightFormat::gptq || w == WeightFormat::int4;
}

}  // namespace

bool tensor_parallel_ok(const ModelArch& m, std::uint32_t tp, WeightFormat weights) noexcept
{
  if (tp <= 1 || m.heads == 0) {
    return true;  // one rank, or no architecture to judge (--params)
  }
  if (m.heads % tp != 0) {
    return false;
  }
  if (m.attention() != AttentionKind::mla) {
    const std::uint32_t kv = m.kv_heads > 0 ? m.kv_heads : m.heads;
    if (kv % tp != 0 && tp % kv != 0) {
      return false;
    }
  }
  if (group_quantized(weights)) {
    // Row-parallel layers (o_proj, down_proj) get input slices of width / tp.
    const std::uint64_t head_dim = m.head_dim > 0 ? m.head_dim : (m.heads > 0 ? m.hidden / m.heads : 0);
    const std::uint64_t o_in = std::uint64_t{m.heads} * (m.attention() == AttentionKind::mla ? m.v_head_dim : head_dim);
    const std::uint64_t mlp = m.is_moe() && m.moe_intermediate > 0 ? m.moe_intermediate : m.intermediate;
    for (const std::uint64_t width : {o_in, mlp}) {
      if (width > 0 && (width % tp != 0 || (width / tp) % k_quant_group != 0)) {
        return false;
      }
    }
  }
  return true;
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

std::optional<JobSpec> feasible_layout(const JobSpec& job) noexcept
{
  JobSpec j = job;
  j.pipeline = 1;
  const std::uint32_t g = std::max<std::uint32_t>(job.gpus, 1);
  if (g == 1) {
    return j;
  }
  const bool vllm_split = !is_training(job.task) && job.engine == Engine::vllm &&
                          (job.shard == Shard::none || job.shard == Shard::tp);
  if (vllm_split) {
    const auto layout = vllm_layout(job.model, g, job.weights);
    if (!layout) {
      return std::nullopt;
    }
    j.pipeline = layout->pp;
    return j;
  }
  if (is_training(job.task) && job.shard == Shard::tp && !tensor_parallel_ok(job.model, g, WeightFormat::bf16)) {
    return std::nullopt;
  }
  if (!is_training(job.task) && job.model.layers > 0 && g > job.model.layers) {
    return std::nullopt;  // layer split: at least one layer per GPU
  }
  return j;
}

}  // namespace gpurent
