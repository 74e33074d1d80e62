// SPDX-License-Identifier: MIT
#include "sizing/checkpoint_use.hpp"

#include "sizing/estimate_detail.hpp"

namespace gpurent {
namespace {

using detail::U;

bool sixteen(WeightFormat f) noexcept
{
  return f == WeightFormat::bf16 || f == WeightFormat::fp16 || f == WeightFormat::gguf_f16;
}

bool int4_group(WeightFormat f) noexcept
{
  return f == WeightFormat::int4 || f == WeightFormat::gptq || f == WeightFormat::awq;
}

U as_bits(const WeightGroup& g, std::uint32_t bits) noexcept { return detail::mul_div(g.params, bits, 80000); }

}  // namespace

WeightFormat weights_in_memory(const JobSpec& j) noexcept
{
  if (j.task == Task::train) {
    return j.engine == Engine::transformers || j.weights == WeightFormat::fp32 ? WeightFormat::fp32 : WeightFormat::bf16;
  }
  return j.weights;
}

bool formats_match(WeightFormat job, WeightFormat checkpoint) noexcept
{
  return job == checkpoint || (sixteen(job) && sixteen(checkpoint)) ||
         (int4_group(job) && int4_group(checkpoint) && (job == WeightFormat::int4 || checkpoint == WeightFormat::int4));
}

bool loads_as_stored(const CheckpointWeights& ck, WeightFormat in_memory) noexcept
{
  if (ck.format) {
    return formats_match(in_memory, *ck.format);
  }
  return ck.gguf;  // a GGUF type without a --weights name: the file is what llama.cpp loads
}

std::optional<CheckpointBytes> checkpoint_bytes(const JobSpec& job, WeightFormat in_memory, const WeightBits& b) noexcept
{
  if (!job.model.checkpoint) {
    return std::nullopt;
  }
  const CheckpointWeights& ck = *job.model.checkpoint;
  CheckpointBytes out;
  out.exact = loads_as_stored(ck, in_memory);
  const bool whole = b.whole_file;
  if (out.exact) {
    // Parts kept in 16 bits are stored as such; a 32-bit cast of them (peft's QLoRA preparation,
    // fp32 weights) is their parameters times 4.
    const auto part = [&](const WeightGroup& g, std::uint32_t bits) {
      return bits >= 320000 && in_memory != WeightFormat::fp32 ? as_bits(g, bits) : g.bytes;
    };
    out.embedding = part(ck.embedding, whole ? b.linear : b.embedding);
    out.experts = ck.experts.bytes;
    out.total = detail::sat_add(detail::sat_add(out.embedding, ck.linear.bytes),
                                detail::sat_add(out.experts, part(ck.other, whole ? b.linear : b.other)));
    out.exact = out.total == ck.total_bytes();
    out.host_embedding = ck.gguf && ck.output_tensor ? ck.input_embedding_bytes : 0;
  } else {
    out.embedding = as_bits(ck.embedding, whole ? b.linear : b.embedding);
    out.experts = as_bits(ck.experts, whole ? b.linear : b.experts);
    out.total = detail::sat_add(detail::sat_add(out.embedding, as_bits(ck.linear, b.linear)),
                                detail::sat_add(out.experts, as_bits(ck.other, whole ? b.linear : b.other)));
  }
  return out;
}

std::optional<std::uint64_t> checkpoint_adapter_params(const JobSpec& job) noexcept
{
  if (!job.model.adapter || job.model.adapter->rank == 0) {
    return std::nullopt;
  }
  const AdapterWeights& a = *job.model.adapter;
  return detail::mul_div(a.weights.params, job.lora_rank, a.rank);
}

std::uint64_t serving_adapter_bytes(const JobSpec& job) noexcept
{
  const bool training = job.task == Task::train || job.task == Task::lora || job.task == Task::qlora;
  return job.model.adapter && !training ? job.model.adapter->weights.bytes : 0;
}

}  // namespace gpurent
