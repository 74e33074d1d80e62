// SPDX-License-Identifier: MIT
// Fixes that change what an inference server holds: context, weight format, KV dtype, slots.
#include <fmt/format.h>

#include "sizing/estimate.hpp"
#include "planner/fixes_detail.hpp"
#include "sizing/precision.hpp"

namespace gpurent::fixes_detail {
namespace {

constexpr std::uint32_t k_context_step = 256;

void context_flags(Fix& f, const JobSpec& job, std::uint32_t ctx)
{
  if (is_training(job.task)) {
    f.flags["transformers"] = fmt::format("--max_length {}", ctx);
    f.flags["deepspeed"] = fmt::format("--max_length {}", ctx);
    f.flags["torchtune"] = fmt::format("tokenizer.max_seq_len={}", ctx);
    f.flags["unsloth"] = fmt::format("max_seq_length={0} (from_pretrained), max_length={0} (SFTConfig)", ctx);
    return;
  }
  const std::uint32_t slots = std::max<std::uint32_t>(job.batch, 1);
  f.flags["vllm"] = fmt::format("--max-model-len {}", ctx);
  f.flags["trtllm"] = fmt::format("--max_seq_len {}", ctx);
  f.flags["llama.cpp"] = slots > 1 ? fmt::format("-c {} -np {}", std::uint64_t{ctx} * slots, slots) : fmt::format("-c {}", ctx);
  f.flags["ollama"] = fmt::format("OLLAMA_CONTEXT_LENGTH={}", ctx);
  f.flags["transformers"] = fmt::format("max_length={}", ctx);
}

// Weight formats to try, largest first, for the job's engine (only those smaller than now).
std::vector<WeightFormat> smaller_formats(const JobSpec& job)
{
  std::vector<WeightFormat> c;
  if (!requantizable(job)) {
    return c;
  }
  switch (job.engine) {
  case Engine::vllm: c = {WeightFormat::fp8, WeightFormat::nf4}; break;  // both quantized on load
  case Engine::tensorrt_llm: return c;  // quantizes nothing on load (a ModelOpt checkpoint is another model)
  case Engine::llama_cpp:
  case Engine::ollama:
    for (WeightFormat f : gguf_by_size()) {
      c.push_back(f);
    }
    break;
  default: c = {WeightFormat::int8, WeightFormat::nf4}; break;
  }
  std::vector<WeightFormat> out;
  const JobSpec now = job;
  const Bytes current = estimate(now).weights;
  for (WeightFormat f : c) {
    JobSpec t = job;
    t.weights = f;
    if (estimate(t).weights < current) {
      out.push_back(f);
    }
  }
  return out;
}

std::string quant_flag_transformers(WeightFormat f)
{
  if (f == WeightFormat::int8) {
    return "quantization_config=BitsAndBytesConfig(load_in_8bit=True)";
  }
  return "quantization_config=BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type=\"nf4\")";
}

}  // namespace

std::optional<Fix> fix_reduce_context(const JobSpec& job, Bytes limit)
{
  if (job.context <= k_context_step) {
    return std::nullopt;
  }
  const std::uint32_t steps = (job.context - 1) / k_context_step;  // candidates 256 .. < context
  const std::uint32_t best = largest_fitting(1, steps, [&](std::uint32_t s) {
    JobSpec t = job;
    t.context = s * k_context_step;
    return fits(t, limit);
  });
  JobSpec m = job;
  m.context = best * k_context_step;
  Fix f = make_fix(job, m, limit, "reduce-context",
                   fmt::format("context {} tokens (was {})", m.context, job.context));
  context_flags(f, job, m.context);
  return f;
}

std::optional<Fix> fix_quantize_weights(const JobSpec& job, Bytes limit)
{
  if (!is_inference(job)) {
    return std::nullopt;
  }
  const std::vector<WeightFormat> cands = smaller_formats(job);
  if (cands.empty()) {
    return std::nullopt;
  }
  WeightFormat pick = cands.back();
  for (WeightFormat c : cands) {
    JobSpec t = job;
    t.weights = c;
    if (fits(t, limit)) {
      pick = c;
      break;
    }
  }
  JobSpec m = job;
  m.weights = pick;
  Fix f = make_fix(job, m, limit, "quantize-weights",
                   fmt::format("weights in {} instead of {}", to_string(pick), to_string(job.weights)));
  if (job.engine == Engine::vllm) {
    f.flags["vllm"] = pick == WeightFormat::fp8 ? "--quantization fp8" : "--quantization bitsandbytes";
  } else if (job.engine == Engine::llama_cpp || job.engine == Engine::ollama) {
    f.flags["llama.cpp"] = fmt::format("-m <model>.{}.gguf", to_string(pick));
    f.flags["ollama"] = fmt::format("ollama run <model>:{}", to_string(pick));
  } else {
    f.flags["transformers"] = quant_flag_transformers(pick);
  }
  return f;
}

std::optional<Fix> fix_kv_cache(const JobSpec& job, Bytes limit)
{
  if (!is_inference(job)) {
    return std::nullopt;
  }
  const KvDtype now = resolve_kv_dtype(job);
  JobSpec m = job;
  Fix f;
  if (job.engine == Engine::vllm || job.engine == Engine::tensorrt_llm) {
    if (kv_bytes_per_32(now) <= kv_bytes_per_32(KvDtype::fp8)) {
      return std::nullopt;
    }
    m.kv_cache = KvDtype::fp8;
    f = make_fix(job, m, limit, "kv-cache-fp8", fmt::format("KV cache in fp8 (was {})", to_string(now)));
    f.flags["vllm"] = "--kv-cache-dtype fp8";
    f.flags["trtllm"] = "--kv_cache_dtype fp8";
  } else if (job.engine == Engine::llama_cpp || job.engine == Engine::ollama) {
    if (kv_bytes_per_32(now) <= kv_bytes_per_32(KvDtype::q8_0)) {
      return std::nullopt;
    }
    m.kv_cache = KvDtype::q8_0;
    m.flash_attention = true;  // a quantized V cache needs flash attention
    f = make_fix(job, m, limit, "kv-cache-q8_0", fmt::format("KV cache in q8_0 (was {})", to_string(now)));
    f.flags["llama.cpp"] = "-fa on --cache-type-k q8_0 --cache-type-v q8_0";
    f.flags["ollama"] = "OLLAMA_FLASH_ATTENTION=1 OLLAMA_KV_CACHE_TYPE=q8_0";
  } else {
    return std::nullopt;
  }
  return f;
}

std::optional<Fix> fix_fewer_sequences(const JobSpec& job, Bytes limit)
{
  if (!is_inference(job) || job.batch <= 1) {
    return std::nullopt;
  }
  JobSpec m = job;
  m.batch = largest_fitting(1, job.batch - 1, [&](std::uint32_t b) {
    JobSpec t = job;
    t.batch = b;
    return fits(t, limit);
  });
  Fix f = make_fix(job, m, limit, "fewer-sequences",
                   fmt::format("{} sequences in parallel (was {})", m.batch, job.batch));
  f.flags["vllm"] = fmt::format("--max-num-seqs {}", m.batch);
  f.flags["trtllm"] = fmt::format("--max_batch_size {}", m.batch);
  f.flags["llama.cpp"] = fmt::format("-np {} -c {}", m.batch, std::uint64_t{job.context} * m.batch);
  f.flags["ollama"] = fmt::format("OLLAMA_NUM_PARALLEL={}", m.batch);
  f.flags["transformers"] = fmt::format("batch_size={}", m.batch);
  return f;
}

}  // namespace gpurent::fixes_detail
