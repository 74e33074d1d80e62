// SPDX-License-Identifier: MIT
// Fixes that move memory elsewhere: CPU offload, MoE expert offload, more GPUs.
#include <fmt/format.h>

#include <algorithm>

#include "sizing/estimate.hpp"
#include "sizing/layout.hpp"
#include "planner/fixes_detail.hpp"
#include "sizing/precision.hpp"

namespace gpurent::fixes_detail {
namespace {

constexpr std::uint32_t k_max_gpus = 8;

std::uint64_t ceil_gib(std::uint64_t bytes) { return (bytes + k_gib - 1) / k_gib; }

}  // namespace

Shard multi_gpu_shard(const JobSpec& job) noexcept
{
  if (!is_training(job.task)) {
    return splits_tp_pp(job.engine) ? Shard::tp : Shard::none;
  }
  switch (job.shard) {
  case Shard::fsdp:
  case Shard::zero1:
  case Shard::zero2:
  case Shard::zero3:
  case Shard::tp: return job.shard;
  default: return job.engine == Engine::deepspeed ? Shard::zero3 : job.engine == Engine::unsloth ? Shard::ddp : Shard::fsdp;
  }
}

void multi_gpu_flags(Fix& f, const JobSpec& m)
{
  if (is_training(m.task)) {
    f.flags["transformers"] = fmt::format("torchrun --nproc_per_node {} --fsdp \"full_shard auto_wrap\"", m.gpus);
    f.flags["deepspeed"] = fmt::format("accelerate launch --num_processes {} --use_deepspeed --zero_stage {}", m.gpus,
                                       m.shard == Shard::zero1 ? 1 : (m.shard == Shard::zero2 ? 2 : 3));
    f.flags["torchtune"] = fmt::format("tune run --nproc_per_node {} (a *_distributed recipe)", m.gpus);
    f.flags["unsloth"] = fmt::format("accelerate launch --num_processes {} (DDP: a whole copy per GPU)", m.gpus);
    return;
  }
  const std::uint32_t tp = tp_degree(m);
  f.flags["vllm"] = m.pipeline > 1 ? fmt::format("--tensor-parallel-size {} --pipeline-parallel-size {}", tp, m.pipeline)
                                   : fmt::format("--tensor-parallel-size {}", tp);
  f.flags["trtllm"] = m.pipeline > 1 ? fmt::format("--tp_size {} --pp_size {}", tp, m.pipeline)
                                     : fmt::format("--tp_size {}", tp);
  f.flags["llama.cpp"] = fmt::format("--split-mode layer (with {} GPUs visible)", m.gpus);
  f.flags["ollama"] = "OLLAMA_SCHED_SPREAD=1";
  f.flags["transformers"] = "device_map=\"auto\"";
}

std::optional<Fix> fix_cpu_offload(const JobSpec& job, Bytes limit)
{
  if (job.engine == Engine::tensorrt_llm) {
    return std::nullopt;  // trtllm-serve has no CPU offload of weights
  }
  const MemoryEstimate e = estimate(job);
  const Bytes over = e.total() - limit;
  Fix f;
  f.id = "cpu-offload";
  f.modified = job;
  if (is_training(job.task) && job.engine == Engine::unsloth) {
    return std::nullopt;  // Unsloth's script keeps the optimizer on the GPU (no FSDP or ZeRO offload)
  }
  if (is_training(job.task)) {
    // Optimizer states (and for FSDP/torchtune also params and grads) live in CPU RAM.
    Bytes moved = e.optimizer;
    if (job.engine == Engine::deepspeed) {
      f.flags["deepspeed"] = "\"offload_optimizer\": {\"device\": \"cpu\"}";
    } else {
      moved = moved + e.gradients;
      f.flags["transformers"] = "fsdp=\"full_shard offload auto_wrap\"";
      f.flags["torchtune"] = "fsdp_cpu_offload=True";
    }
    if (moved.n == 0) {
      return std::nullopt;
    }
    f.saves = moved;
    f.fits_alone = e.total() - moved <= limit;
    f.description = fmt::format("optimizer states{} in CPU RAM: {} off each GPU (slower steps)",
                                job.engine == Engine::deepspeed ? "" : " and gradients", gib(moved));
    return f;
  }
  // Inference: move just enough weights (whole layers for GGUF engines) to the CPU.
  const WeightSplit w = weight_split(job, ParamBreakdown{});
  if (w.total.n == 0) {
    return std::nullopt;
  }
  const std::uint32_t layers = job.model.layers;
  if ((job.engine == Engine::llama_cpp || job.engine == Engine::ollama) && layers > 0 && w.per_layer.n > 0) {
    std::uint64_t off = (over.n + w.per_layer.n - 1) / w.per_layer.n;
    off = std::min<std::uint64_t>(off, layers);
    const std::uint64_t on_gpu = layers - off;
    f.saves = Bytes{off * w.per_layer.n};
    f.flags["llama.cpp"] = fmt::format("-ngl {}", on_gpu);
    f.flags["ollama"] = fmt::format("PARAMETER num_gpu {}", on_gpu);
    f.description = fmt::format("{} of {} layers on the GPU, {} in CPU RAM ({} moved, slower)", on_gpu, layers, off,
                                gib(f.saves));
  } else {
    const std::uint64_t gb = std::min(ceil_gib(over.n), ceil_gib(w.total.n));
    f.saves = Bytes{std::min(gb * k_gib, w.total.n)};
    f.flags["vllm"] = fmt::format("--cpu-offload-gb {}", gb);
    f.flags["transformers"] = fmt::format("device_map=\"auto\", max_memory={{0: \"{}GiB\", \"cpu\": \"{}GiB\"}}",
                                          limit.n / k_gib, gb + 1);
    f.description = fmt::format("{} GiB of weights in CPU RAM (slower: streamed over PCIe)", gb);
  }
  f.fits_alone = e.total() - f.saves <= limit;
  return f;
}

std::optional<Fix> fix_moe_expert_offload(const JobSpec& job, Bytes limit)
{
  if (!job.model.is_moe() || is_training(job.task) || job.engine != Engine::llama_cpp) {
    return std::nullopt;
  }
  const MemoryEstimate e = estimate(job);
  const Bytes over = e.total() - limit;
  const WeightSplit w = weight_split(job, ParamBreakdown{});
  const std::uint32_t moe_layers = job.model.layers > job.model.dense_layers ? job.model.layers - job.model.dense_layers : 0;
  if (w.experts.n == 0 || moe_layers == 0) {
    return std::nullopt;
  }
  const std::uint64_t per_layer = (w.experts.n + moe_layers - 1) / moe_layers;
  const std::uint64_t n = std::min<std::uint64_t>((over.n + per_layer - 1) / per_layer, moe_layers);
  Fix f;
  f.id = "moe-expert-offload";
  f.modified = job;
  f.saves = Bytes{std::min(n * per_layer, w.experts.n)};
  f.fits_alone = e.total() - f.saves <= limit;
  f.description = fmt::format("expert weights of {} of {} MoE layers in CPU RAM ({}), attention and shared weights stay on the GPU",
                              n, moe_layers, gib(f.saves));
  f.flags["llama.cpp"] = n >= moe_layers ? std::string("--cpu-moe") : fmt::format("--n-cpu-moe {}", n);
  return f;
}

std::optional<Fix> fix_more_gpus(const JobSpec& job, Bytes limit, std::span<const std::uint32_t> counts)
{
  if (job.engine == Engine::unsloth && is_training(job.task)) {
    return std::nullopt;  // DDP puts a whole copy on every GPU: more of them hold no less each
  }
  const std::uint32_t now = std::max<std::uint32_t>(job.gpus, 1);
  std::optional<JobSpec> best;
  std::optional<JobSpec> largest;
  for (std::uint32_t g = now + 1; g <= k_max_gpus; ++g) {
    if (!counts.empty() && std::find(counts.begin(), counts.end(), g) == counts.end()) {
      continue;
    }
    JobSpec t = job;
    t.gpus = g;
    t.shard = multi_gpu_shard(job);
    const auto laid = feasible_layout(t);
    if (!laid) {
      continue;
    }
    largest = *laid;
    if (fits(*laid, limit)) {
      best = *laid;
      break;
    }
  }
  if (!best && !largest) {
    return std::nullopt;
  }
  const JobSpec m = best ? *best : *largest;
  std::string how = m.shard == Shard::none ? std::string("layers split across them")
                                           : fmt::format("sharded with {}", to_string(m.shard));
  if (m.pipeline > 1) {
    how = fmt::format("tensor parallel {} x pipeline {} (the heads do not split {} ways)", tp_degree(m), m.pipeline,
                      m.gpus);
  }
  Fix f = make_fix(job, m, limit, "more-gpus", fmt::format("{} GPUs (was {}), {}", m.gpus, job.gpus, how));
  multi_gpu_flags(f, m);
  return f;
}

}  // namespace gpurent::fixes_detail
