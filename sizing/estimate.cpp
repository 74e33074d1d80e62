// SPDX-License-Identifier: MIT
// Assembles the per-GPU estimate and vLLM's KV pool (docs/sizing.md).
#include "sizing/estimate.hpp"

#include <algorithm>
#include <cmath>

#include "sizing/estimate_detail.hpp"
#include "sizing/precision.hpp"

namespace gpurent {

bool is_training(Task t) noexcept { return t == Task::train || t == Task::lora || t == Task::qlora; }

std::uint32_t world_gpus(const JobSpec& job) noexcept
{
  const std::uint64_t w = std::uint64_t{std::max<std::uint32_t>(job.gpus, 1)} * std::max<std::uint32_t>(job.nodes, 1);
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(w, 1U << 20U));
}

bool pools_kv(Engine engine) noexcept
{
  return engine == Engine::vllm || engine == Engine::sglang || engine == Engine::tensorrt_llm;
}

bool splits_tp_pp(Engine engine) noexcept { return engine == Engine::vllm || engine == Engine::tensorrt_llm; }

std::uint32_t kv_page_tokens(Engine engine) noexcept
{
  switch (engine) {
  case Engine::vllm: return k_vllm_block_tokens;
  case Engine::tensorrt_llm: return k_trtllm_tokens_per_block;
  default: return 1;
  }
}

std::uint32_t trtllm_max_num_tokens(const JobSpec& job) noexcept
{
  return job.max_batched_tokens > 0 ? job.max_batched_tokens : k_trtllm_max_num_tokens;
}

bool splits_by_layer(Engine engine) noexcept
{
  return engine == Engine::llama_cpp || engine == Engine::ollama || engine == Engine::transformers;
}

std::uint32_t tp_degree(const JobSpec& job) noexcept
{
  const std::uint32_t g = world_gpus(job);
  if (g == 1 || (!is_training(job.task) && splits_by_layer(job.engine))) {
    return 1;
  }
  if (job.shard == Shard::tp) {
    if (!is_training(job.task) && splits_tp_pp(job.engine)) {
      const std::uint32_t pp = std::max<std::uint32_t>(job.pipeline, 1);
      return pp <= g && g % pp == 0 ? g / pp : 1;
    }
    return g;
  }
  // Serving/inference on vLLM and TensorRT-LLM splits by tensor parallel unless told otherwise; with pipeline
  // stages each stage holds gpus / stages tensor-parallel ranks.
  if (!is_training(job.task) && splits_tp_pp(job.engine) && (job.shard == Shard::none)) {
    const std::uint32_t pp = std::max<std::uint32_t>(job.pipeline, 1);
    return pp <= g && g % pp == 0 ? g / pp : 1;
  }
  return 1;
}

std::uint32_t shard_degree(const JobSpec& job) noexcept
{
  const std::uint32_t g = world_gpus(job);
  if (!is_training(job.task)) {
    return 1;
  }
  switch (job.shard) {
  case Shard::fsdp:
  case Shard::zero1:
  case Shard::zero2:
  case Shard::zero3: return g;
  default: return 1;
  }
}

std::uint64_t vllm_non_torch(const JobSpec& job, std::uint32_t gpus_per_replica) noexcept
{
  if (gpus_per_replica <= 1) {
    return k_vllm_non_torch_tp1;
  }
  return job.nccl_nvls ? k_vllm_non_torch_nvls : k_vllm_non_torch_multi;
}

namespace detail {

Ctx make_ctx(const JobSpec& job) noexcept
{
  Ctx c{job, count_params(job.model)};
  c.total_params = job.model.params > 0 ? job.model.params : c.pb.total;
  c.tp = tp_degree(job);
  c.shards = shard_degree(job);
  c.training = is_training(job.task);
  const U g = world_gpus(job);
  // Inference engines without TP split the layers across the GPUs (llama.cpp --split-mode layer,
  // transformers device_map="auto").
  if (!c.training && c.tp == 1 && g > 1) {
    c.layer_split = g;
  }
  // vLLM and TensorRT-LLM pipeline parallelism: each stage holds 1/stages of the layers.
  if (!c.training && splits_tp_pp(job.engine) && job.pipeline > 1 && c.tp * job.pipeline == g) {
    c.layer_split = job.pipeline;
  }
  c.act_bytes = job.weights == WeightFormat::fp32 ? 4 : 2;
  return c;
}

}  // namespace detail

MemoryEstimate estimate(const JobSpec& job) noexcept
{
  using detail::U;
  const detail::Ctx c = detail::make_ctx(job);
  MemoryEstimate e{};
  U overhead = k_cuda_context_bytes;
  if (c.training) {
    const detail::Training t = detail::training_states(c);
    e.weights = Bytes{t.weights};
    e.gradients = Bytes{t.gradients};
    e.optimizer = Bytes{t.optimizer};
    e.adapters = Bytes{t.adapters};
    if (job.offload_optimizer) {
      // DeepSpeed offload_optimizer moves the states; FSDP/torchtune CPU offload also the gradients.
      e.optimizer = Bytes{};
      if (job.engine != Engine::deepspeed) {
        e.gradients = Bytes{};
      }
    }
    e.activations = Bytes{detail::ceil_div(detail::training_activations(c), c.tp)};
    if (world_gpus(job) > 1) {
      overhead = detail::sat_add(overhead, k_nccl_training_bytes);
    }
  } else {
    const U w = detail::weight_bytes(c);
    e.weights = Bytes{w - std::min<U>(w, job.offload_bytes)};
    e.kv_cache = kv_cache_bytes(job, job.context, std::max<std::uint32_t>(job.batch, 1));
    e.activations = Bytes{detail::inference_activations(c)};
    if (job.engine == Engine::vllm || job.engine == Engine::tensorrt_llm) {
      // TensorRT-LLM's profiler counts the same outside torch (cuBLAS, NCCL, CUDA graphs: "Memory
      // used outside torch (e.g., NCCL and CUDA graphs)", _util.py) on the same PyTorch stack.
      overhead = detail::sat_add(overhead, vllm_non_torch(job, c.tp * c.layer_split > 1 ? 2U : 1U));
    }
    if (job.engine == Engine::sglang) {
      // Activations and CUDA graphs live in SGLang's own reserve, the (1 - mem_fraction_static)
      // of the card it never gives the pool; the estimate holds what must fit inside the fraction.
      // NCCL's set-up before loading fits in the CUDA context's budget (0.40 GiB in use before the
      // weights at TP 1 on an A800 and at TP 4 on L4s) except NVLink SHARP's buffers on NVSwitch
      // Hopper and later (TP 4 on H100s: 1.8 GiB less pool than without them).
      e.activations = Bytes{};
      if (c.tp > 1 && job.nccl_nvls) {
        overhead = detail::sat_add(overhead, k_vllm_non_torch_nvls - k_vllm_non_torch_tp1);
      }
    }
  }
  // The PyTorch caching allocator holds more than it hands out (block rounding, fragmentation)
  // for what changes size during the run; vLLM and ggml preallocate.
  if (job.engine == Engine::transformers || job.engine == Engine::torchtune || job.engine == Engine::deepspeed ||
      job.engine == Engine::unsloth) {
    const U dynamic = detail::sat_add(detail::sat_add(e.activations.n, e.kv_cache.n), e.gradients.n);
    overhead = detail::sat_add(overhead, detail::mul_div(dynamic, k_allocator_slack_permille, 1000));
  }
  e.overhead = Bytes{overhead};
  return e;
}

ServePool serve_pool(const JobSpec& job, const MemoryEstimate& est, Bytes card_usable) noexcept
{
  using detail::U;
  ServePool p{};
  const U per_token = kv_bytes_per_token(job).n;
  if (job.engine == Engine::sglang) {
    // SGLang (model_runner profile_max_num_token): the pool is what is free after loading minus
    // (1 - mem_fraction_static) x what was free before loading, i.e. fraction x (total - CUDA
    // context) - weights; one token per page. ("Load weight begin. avail mem=21.63 GB" on a
    // 22.03 GiB L4 at TP 4: the context and NCCL's set-up take 0.4 GiB before the weights.)
    const U before = card_usable.n > est.overhead.n ? card_usable.n - est.overhead.n : 0;
    const U budget = detail::mul_div(before, sglang_mem_fraction_permille(job, card_usable), 1000);
    const U used = est.weights.n;
    if (budget <= used || per_token == 0) {
      return p;
    }
    p.kv_pool_tokens = (budget - used) / per_token;
    p.kv_pool = Bytes{detail::sat_mul(p.kv_pool_tokens, per_token)};
    const U one_seq = kv_cache_bytes(job, std::max<std::uint32_t>(job.context, 1), 1).n;
    p.max_concurrency = one_seq > 0 ? static_cast<double>(p.kv_pool.n) / static_cast<double>(one_seq) : 0.0;
    return p;
  }
  // The room the pool takes (--gpu-util is the engine's fraction either way). vLLM: util x usable
  // less the weights, the activation peak and what lives outside torch besides the CUDA context.
  // TensorRT-LLM (_util.py): fraction x (device total - the profiling run's whole peak: weights,
  // activations at --max_num_tokens, CUDA context, NCCL, CUDA graphs).
  U room = 0;
  if (job.engine == Engine::tensorrt_llm) {
    const U peak = (est.total() - est.kv_cache).n;
    room = card_usable.n > peak ? detail::mul_div(card_usable.n - peak, job.gpu_util_permille, 1000) : 0;
  } else {
    const U budget = detail::mul_div(card_usable.n, job.gpu_util_permille, 1000);
    const U non_torch = est.overhead.n > k_cuda_context_bytes ? est.overhead.n - k_cuda_context_bytes : 0;
    const U used = detail::sat_add(detail::sat_add(est.weights.n, est.activations.n), non_torch);
    room = budget > used ? budget - used : 0;
  }
  if (room == 0 || per_token == 0) {
    return p;
  }
  const U page = kv_page_tokens(job.engine);
  const U block = detail::sat_mul(per_token, page);
  const U blocks = room / block;
  p.kv_pool = Bytes{detail::sat_mul(blocks, block)};
  p.kv_pool_tokens = detail::sat_mul(blocks, page);
  const U one_seq = kv_cache_bytes(job, std::max<std::uint32_t>(job.context, 1), 1).n;
  p.max_concurrency = one_seq > 0 ? static_cast<double>(p.kv_pool.n) / static_cast<double>(one_seq) : 0.0;
  return p;
}

Bytes fit_limit_for(const JobSpec& job, Bytes card_usable) noexcept
{
  const detail::U margin = detail::mul_div(card_usable.n, 95, 100);
  if (job.engine == Engine::vllm && !is_training(job.task)) {
    const detail::U util = detail::sat_add(detail::mul_div(card_usable.n, job.gpu_util_permille, 1000), k_cuda_context_bytes);
    return Bytes{std::min(margin, util)};
  }
  if (job.engine == Engine::sglang && !is_training(job.task)) {
    return Bytes{std::min(margin, detail::mul_div(card_usable.n, sglang_mem_fraction_permille(job, card_usable), 1000))};
  }
  if (job.engine == Engine::tensorrt_llm && !is_training(job.task)) {
    // The KV cache must fit in fraction x (usable - peak): the whole job within peak + that,
    // i.e. fraction x usable + (1 - fraction) x peak.
    const MemoryEstimate e = estimate(job);
    const detail::U peak = (e.total() - e.kv_cache).n;
    const detail::U f = std::min<detail::U>(job.gpu_util_permille, 1000);
    const detail::U limit = detail::sat_add(detail::mul_div(card_usable.n, f, 1000), detail::mul_div(peak, 1000 - f, 1000));
    return Bytes{std::min(margin, limit)};
  }
  return Bytes{margin};
}

std::uint32_t memory_error_pct(const JobSpec& job) noexcept
{
  if (job.engine == Engine::unsloth) {
    return 10;  // Unsloth's context-length tables: -9.5% at 8 GB, within 6% elsewhere (docs/sizing.md "Unsloth")
  }
  if (is_training(job.task)) {
    return 16;
  }
  switch (job.engine) {
  case Engine::vllm:
  case Engine::sglang:
  case Engine::tensorrt_llm: return 4;
  case Engine::llama_cpp:
  case Engine::ollama: return 2;
  default: return 13;
  }
}

std::uint32_t sglang_mem_fraction_permille(const JobSpec& job, Bytes card_usable) noexcept
{
  if (job.gpu_util_given) {
    return job.gpu_util_permille;
  }
  const double mib = static_cast<double>(card_usable.n) / static_cast<double>(k_mib);
  if (mib <= 0) {
    return 880;  // SGLang's value when it cannot read the card's memory
  }
  const std::uint32_t tp = std::max<std::uint32_t>(tp_degree(job), 1);
  const std::uint32_t pp = std::max<std::uint32_t>(job.pipeline, 1);
  double chunk = 8192;
  double graphs = tp < 4 ? 256 : 512;
  if (mib < 20 * 1024) {
    chunk = 2048;
    graphs = 8;
  } else if (mib < 35 * 1024) {
    chunk = 2048;
    graphs = tp < 4 ? 24 : 80;
  } else if (mib < 60 * 1024) {
    chunk = 4096;
    graphs = tp < 4 ? 32 : 160;
  } else if (mib >= 160 * 1024) {
    chunk = 16384;
    graphs = 512;
  }
  double reserved = 512 + std::max(chunk, 2048.0) * 1.5 + graphs * 2 + static_cast<double>(tp * pp) / 8 * 1024;
  if (mib > 60 * 1024) {
    reserved = std::max(reserved, 10.0 * 1024);
  }
  const double f = (mib - reserved) / mib;
  return f <= 0 ? 0 : static_cast<std::uint32_t>(f * 1000 + 0.5);
}

}  // namespace gpurent
