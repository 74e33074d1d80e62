// SPDX-License-Identifier: MIT
// Weights at the real bits of each format (docs/sizing.md §1), and LoRA adapter sizes.
#include <algorithm>

#include "sizing/checkpoint_use.hpp"
#include "sizing/estimate_detail.hpp"
#include "sizing/precision.hpp"

namespace gpurent {
namespace detail {
namespace {

constexpr U k_bits_scale = 80000;  // WeightBits are bits x 1e4; / 8 bits per byte

struct Parts {
  U linear = 0, experts = 0, embedding = 0, other = 0;
};

Parts parts_of(const Ctx& c) noexcept
{
  Parts p;
  U expert_linear = 0;
  for (const auto& l : c.pb.linears) {
    if (l.expert) {
      expert_linear = sat_add(expert_linear, l.weights());
    }
  }
  p.embedding = sat_add(c.pb.embedding, c.pb.lm_head);
  p.experts = c.pb.experts;
  p.linear = c.pb.linear_weights > expert_linear ? c.pb.linear_weights - expert_linear : 0;
  const U counted = sat_add(sat_add(p.embedding, p.experts), p.linear);
  if (c.job.model.layers == 0) {
    // A bare parameter count (--params): no architecture to tell the parts apart, so the whole
    // count is quantizable linear weights (seed 000: 7B = 14 / 7 / 3.5 GB at 16 / 8 / 4 bits).
    p.linear = c.total_params;
    return p;
  }
  if (c.total_params >= counted) {
    p.other = c.total_params - counted;
  } else if (c.total_params > p.embedding + p.experts) {
    p.linear = c.total_params - p.embedding - p.experts;  // the given count is smaller: trust it
  }
  return p;
}

// The bits per weight of that format, by part.
WeightBits bits_for(const Ctx& c) noexcept
{
  const JobSpec& j = c.job;
  if (j.task == Task::train) {
    // Full fine-tuning trains 16/32-bit weights: transformers keeps fp32 master weights (AMP),
    // torchtune and DeepSpeed hold 16-bit parameters (ZeRO keeps the fp32 copy in the optimizer).
    return weight_bits(weights_in_memory(j), j.engine);
  }
  WeightBits b = weight_bits(j.weights, j.engine);
  if (j.task == Task::qlora && j.weights == WeightFormat::nf4) {
    // QLoRA's recipe quantizes the base to NF4 with double quantization (the scales themselves
    // in 8 bits): 4 + 8/64 + 32/(64*256) = 4.127 bits (QLoRA paper §3; bnb_4bit_use_double_quant).
    b.linear = b.experts = 41270;
  }
  if (j.task == Task::qlora && (j.engine == Engine::transformers || j.engine == Engine::deepspeed) && !b.whole_file) {
    // peft prepare_model_for_kbit_training casts every non-quantized fp16/bf16 parameter
    // (embeddings, lm_head, norms) to fp32.
    b.embedding = 320000;
    b.other = 320000;
    if (b.linear >= 160000) {
      b.linear = 320000;
    }
  }
  return b;
}

}  // namespace

U weight_bytes(const Ctx& c) noexcept
{
  const WeightBits b = bits_for(c);
  U bytes = 0;
  if (const auto ck = checkpoint_bytes(c.job, weights_in_memory(c.job), b)) {
    bytes = ck->total;  // the checkpoint's own files (sizing/checkpoint_use.hpp)
  } else if (b.whole_file) {
    bytes = mul_div(c.total_params, b.linear, k_bits_scale);
  } else {
    const Parts p = parts_of(c);
    bytes = sat_add(sat_add(mul_div(p.linear, b.linear, k_bits_scale), mul_div(p.experts, b.experts, k_bits_scale)),
                    sat_add(mul_div(p.embedding, b.embedding, k_bits_scale), mul_div(p.other, b.other, k_bits_scale)));
  }
  return ceil_div(sat_add(bytes, serving_adapter_bytes(c.job)), c.tp * c.layer_split);
}

U per_layer_params(const Ctx& c) noexcept
{
  const U layers = c.job.model.layers;
  if (layers == 0) {
    return 0;
  }
  const U body = c.pb.total > c.pb.embedding + c.pb.lm_head ? c.pb.total - c.pb.embedding - c.pb.lm_head : 0;
  return body / layers;
}

}  // namespace detail

WeightSplit weight_split(const JobSpec& job, const ParamBreakdown& /*pb*/) noexcept
{
  const detail::Ctx c = detail::make_ctx(job);
  WeightSplit s;
  s.total = Bytes{detail::weight_bytes(c)};
  const WeightBits b = weight_bits(job.weights, job.engine);
  const detail::U expert_bits = b.whole_file ? b.linear : b.experts;
  s.experts = Bytes{detail::ceil_div(detail::mul_div(c.pb.experts, expert_bits, 80000), c.tp * c.layer_split)};
  if (s.experts > s.total) {
    s.experts = s.total;
  }
  const detail::U layers = job.model.layers;
  // Layer-granular share: everything but the embedding/lm_head spread over the layers.
  detail::U emb = detail::mul_div(c.pb.embedding + c.pb.lm_head, b.whole_file ? b.linear : b.embedding, 80000);
  if (const auto ck = checkpoint_bytes(job, job.weights, b)) {
    s.experts = Bytes{std::min(detail::ceil_div(ck->experts, c.tp * c.layer_split), s.total.n)};
    emb = ck->embedding;
  }
  const detail::U body = s.total.n > emb ? s.total.n - emb : s.total.n;
  s.per_layer = Bytes{layers > 0 ? detail::ceil_div(body, layers) : 0};
  return s;
}

std::uint64_t lora_params(const ParamBreakdown& pb, std::uint32_t rank) noexcept
{
  detail::U total = 0;
  for (const auto& l : pb.linears) {
    total = detail::sat_add(total, detail::sat_mul(detail::sat_mul(rank, l.in_features + l.out_features), l.count));
  }
  return total;
}

}  // namespace gpurent
